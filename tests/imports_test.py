"""Every module imports on its own, in a fresh interpreter.

An import cycle, or a module that works only when another was imported
first, fails here. Modules under ``triehh/engines/tff`` are skipped when
TensorFlow Federated is not installed.
"""

import concurrent.futures
import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("triehh", "experiments", "benchmarks")


def module_names() -> list[str]:
  names = []
  for package in PACKAGES:
    for path in sorted((ROOT / package).rglob("*.py")):
      parts = path.relative_to(ROOT).with_suffix("").parts
      if parts[-1] == "__init__":
        parts = parts[:-1]
      names.append(".".join(parts))
  return names


def needs_tff(name: str) -> bool:
  return name.startswith("triehh.engines.tff.")


HAS_TFF = importlib.util.find_spec("tensorflow_federated") is not None


def test_the_tree_is_found():
  names = module_names()
  assert {"triehh", "triehh.api", "triehh.engines.registry",
          "triehh.engines.tff.engine"} <= set(names)


def import_alone(name: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT,
                        capture_output=True, text=True, timeout=600,
                        check=False)


@pytest.fixture(name="imports", scope="module")
def imports_fixture() -> dict[str, subprocess.CompletedProcess]:
  """Each module imported in its own interpreter, several at a time (most
  of the time is spent waiting on imports from disk)."""
  names = [n for n in module_names() if HAS_TFF or not needs_tff(n)]
  with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
    return dict(zip(names, pool.map(import_alone, names)))


@pytest.mark.parametrize("name", module_names())
def test_module_imports_alone(name, imports):
  if needs_tff(name) and not HAS_TFF:
    pytest.skip("tensorflow_federated is not installed")
  proc = imports[name]
  assert proc.returncode == 0, proc.stderr[-3000:]
