"""Every module imports on its own, in a fresh interpreter.

An import cycle, or a module that works only when another was imported
first, fails here. Modules under ``triehh/engines/tff`` are skipped when
TensorFlow Federated is not installed.
"""

import importlib.util
import json
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


# Run in a fresh interpreter: it imports the third-party libraries the
# project uses (the slow part of every import) but no project module, then
# forks one child per project module. Each child starts with no project
# module loaded, so the import is as isolated as in a new interpreter.
_FORK_IMPORTER = r"""
import json, os, sys, traceback
import numpy, pandas, scipy.optimize, scipy.special, scipy.stats, absl.flags
try:
  import pyarrow, pyarrow.csv, pyarrow.parquet
except ImportError:
  pass
assert not [m for m in sys.modules if m.split(".")[0] in
            ("triehh", "experiments", "benchmarks")]
results = {}
for name in sys.argv[1:]:
  read, write = os.pipe()
  pid = os.fork()
  if pid == 0:
    os.close(read)
    try:
      __import__(name)
      message = ""
    except BaseException:
      message = traceback.format_exc()[-3000:] or "failed"
    os.write(write, message.encode())
    os._exit(0)
  os.close(write)
  with os.fdopen(read, "rb") as pipe:
    message = pipe.read().decode()
  _, status = os.waitpid(pid, 0)
  results[name] = message or ("" if status == 0 else f"exit status {status}")
print(json.dumps(results))
"""


@pytest.fixture(name="imports", scope="module")
def imports_fixture() -> dict[str, str]:
  """Each module's import error ("" when it imports alone)."""
  names = [n for n in module_names() if HAS_TFF or not needs_tff(n)]
  proc = subprocess.run([sys.executable, "-c", _FORK_IMPORTER, *names],
                        cwd=ROOT, capture_output=True, text=True, timeout=1200,
                        check=True)
  return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", module_names())
def test_module_imports_alone(name, imports):
  if needs_tff(name) and not HAS_TFF:
    pytest.skip("tensorflow_federated is not installed")
  assert imports[name] == "", imports[name]


def test_a_module_that_needs_another_imported_first_is_caught(tmp_path):
  (tmp_path / "first.py").write_text("import sys\nsys.flag = 1\n")
  (tmp_path / "second.py").write_text("import sys\nassert sys.flag\n")
  proc = subprocess.run(
      [sys.executable, "-c", _FORK_IMPORTER, "first", "second"],
      cwd=tmp_path, capture_output=True, text=True, timeout=600, check=True)
  got = json.loads(proc.stdout.splitlines()[-1])
  assert got["first"] == ""
  assert "AttributeError" in got["second"]
