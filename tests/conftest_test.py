"""Tests of tests/conftest.py: how a pytest-xdist worker ends, and its
lists of slow tests."""

import ast
import collections
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parent.parent

# A test that leaves garbage whose collection takes 6 s, longer than the 5 s
# execnet gives a worker to end once it has reported that it has finished
# (then it sends the worker SIGINT): as a worker that imported TensorFlow
# and ran hundreds of tests takes under load.
# At exit, it also checks that gc.get_objects() sees a module's objects
# again (the TFF runtime's close_all looks for objects there).
_SLOW_GARBAGE = """
import atexit
import gc
import sys
import time

KEPT = []
atexit.register(lambda: print(
    "kept object " + ("seen" if any(o is KEPT for o in gc.get_objects())
                      else "lost") + " at exit", file=sys.stderr))


class SlowToCollect:

  def __del__(self):
    time.sleep(6)


def test_leaves_slow_garbage():
  gc.disable()  # collected at the end of the session only
  cycle = SlowToCollect()
  cycle.itself = cycle
"""


def test_a_worker_slow_to_collect_its_garbage_ends_without_a_traceback(
    tmp_path):
  (tmp_path / "slow_garbage_test.py").write_text(_SLOW_GARBAGE)
  env = {k: v for k, v in os.environ.items()
         if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
  done = subprocess.run(
      [sys.executable, "-m", "pytest", "-q", "-n", "1", "-p",
       "no:cacheprovider", "-p", "tests.conftest",
       str(tmp_path / "slow_garbage_test.py")], cwd=ROOT, env=env,
      capture_output=True, text=True, timeout=300, check=False)
  output = done.stdout + done.stderr
  assert done.returncode == 0 and "1 passed" in done.stdout, output
  assert "Traceback" not in output and "KeyboardInterrupt" not in output, (
      output)
  assert "kept object seen at exit" in done.stderr, output


def _slow_tests_keys() -> list[str]:
  tree = ast.parse((ROOT / "tests" / "conftest.py").read_text())
  (node,) = [n for n in tree.body if isinstance(n, ast.Assign)
             and getattr(n.targets[0], "id", None) == "_SLOW_TESTS"]
  return [k.value for k in node.value.keys]


def test_each_module_is_listed_once_among_the_slow_tests():
  # A module listed twice in the dict literal keeps only its last list: the
  # tests of the first would run in the fast lane unnoticed.
  keys = _slow_tests_keys()
  twice = [k for k, c in collections.Counter(keys).items() if c > 1]
  assert not twice, f"listed more than once in _SLOW_TESTS: {twice}"
  missing = [k for k in keys if not (ROOT / k).is_file()]
  assert not missing, f"_SLOW_TESTS names modules that are gone: {missing}"
