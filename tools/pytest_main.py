"""Runs pytest-style test modules as Bazel `py_test` targets.

Usage (as the `main` of a py_test): pytest_main.py <test file> [...]

Bazel runs each test with the runfiles tree as the working directory, so the
test file paths given on the command line are relative to the workspace root,
as with `pytest tests/<file>` from a checkout. The runner maps Bazel's test
protocol onto pytest: `--test_filter` becomes `-k`, the JUnit XML report goes
to XML_OUTPUT_FILE, and pytest/Hypothesis state goes under TEST_TMPDIR instead
of the runfiles tree.
"""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

_SENTIMENT140_ENV = "TRIEHH_SENTIMENT140"
# Default location of the Sentiment140 sample, relative to the repository root.
_SENTIMENT140_DEFAULT = pathlib.Path(
    "..", "shared", "data", "sentiment140_sample.csv.gz")


def _source_root() -> pathlib.Path:
  """Returns the checkout this runner comes from (runfiles are symlinks)."""
  return pathlib.Path(__file__).resolve().parent.parent


def _set_default_sentiment140() -> None:
  """Points tests at the sample next to the checkout, as under plain pytest.

  Under Bazel a test sees the runfiles tree, not the checkout, so a path
  relative to the repository root would not find the sample.
  """
  if os.environ.get(_SENTIMENT140_ENV):
    return
  candidate = _source_root() / _SENTIMENT140_DEFAULT
  if candidate.is_file():
    os.environ[_SENTIMENT140_ENV] = str(candidate.resolve())


def pytest_args(argv: list[str], environ: dict[str, str]) -> list[str]:
  """Returns the pytest arguments for Bazel's command line and environment."""
  if not argv:
    raise SystemExit("usage: pytest_main.py <test file> [<test file> ...]")
  args = ["-p", "no:cacheprovider", "-rfEs"]
  xml_output = environ.get("XML_OUTPUT_FILE")
  if xml_output:
    args.append(f"--junitxml={xml_output}")
  test_filter = environ.get("TESTBRIDGE_TEST_ONLY")
  if test_filter:
    args.extend(["-k", test_filter])
  return args + list(argv)


def main() -> int:
  sys.dont_write_bytecode = True
  tmpdir = os.environ.get("TEST_TMPDIR")
  if tmpdir:
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                          os.path.join(tmpdir, ".hypothesis"))
  _set_default_sentiment140()
  return int(pytest.main(pytest_args(sys.argv[1:], dict(os.environ))))


if __name__ == "__main__":
  sys.exit(main())
