"""Tests of the pytest runner used by the Bazel py_test targets."""

import os
import pathlib

import pytest

from tools import pytest_main

_ENV = "TRIEHH_SENTIMENT140"


def test_test_files_follow_the_fixed_options():
  args = pytest_main.pytest_args(["tests/a_test.py", "tests/b_test.py"], {})
  assert args == ["-p", "no:cacheprovider", "-rfEs",
                  "tests/a_test.py", "tests/b_test.py"]


def test_bazel_filter_and_xml_report_are_mapped():
  args = pytest_main.pytest_args(
      ["tests/a_test.py"],
      {"XML_OUTPUT_FILE": "/out/test.xml",
       "TESTBRIDGE_TEST_ONLY": "worked_example"})
  assert "--junitxml=/out/test.xml" in args
  assert args[args.index("-k") + 1] == "worked_example"
  assert args[-1] == "tests/a_test.py"


def test_no_test_file_is_an_error():
  with pytest.raises(SystemExit, match="usage"):
    pytest_main.pytest_args([], {})


def _unset_env(monkeypatch: pytest.MonkeyPatch) -> None:
  """No sample variable for this test, and none left behind by what it
  sets: ``delenv`` alone records nothing when the variable is absent, so
  a value the code under test writes would outlive the test."""
  monkeypatch.setenv(_ENV, "")
  monkeypatch.delenv(_ENV)


def _fake_checkout(tmp_path: pathlib.Path, with_sample: bool,
                   monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
  root = tmp_path / "repo"
  root.mkdir()
  sample = tmp_path / "shared" / "data" / "sentiment140_sample.csv.gz"
  if with_sample:
    sample.parent.mkdir(parents=True)
    sample.write_bytes(b"not read")
  monkeypatch.setattr(pytest_main, "_source_root", lambda: root)
  return sample


def test_sample_next_to_the_checkout_is_passed_on(tmp_path, monkeypatch):
  _unset_env(monkeypatch)
  sample = _fake_checkout(tmp_path, True, monkeypatch)
  pytest_main._set_default_sentiment140()
  assert pathlib.Path(os.environ[_ENV]) == sample.resolve()


def test_missing_sample_leaves_the_variable_unset(tmp_path, monkeypatch):
  _unset_env(monkeypatch)
  _fake_checkout(tmp_path, False, monkeypatch)
  pytest_main._set_default_sentiment140()
  assert _ENV not in os.environ


def test_explicit_sample_path_wins(tmp_path, monkeypatch):
  monkeypatch.setenv(_ENV, "/elsewhere/sample.csv.gz")
  _fake_checkout(tmp_path, True, monkeypatch)
  pytest_main._set_default_sentiment140()
  assert os.environ[_ENV] == "/elsewhere/sample.csv.gz"
