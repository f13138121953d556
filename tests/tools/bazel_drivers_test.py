"""Tests of the Bazel driver binaries: every experiment driver has one, and
the launcher runs it from the directory ``bazel run`` was called in."""

import ast
import os
import pathlib
import sys

import pytest

from tools import run_driver

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def _build_drivers() -> set[str]:
  """The DRIVERS list of experiments/BUILD (Starlark list syntax is Python)."""
  tree = ast.parse((ROOT / "experiments" / "BUILD").read_text())
  for node in tree.body:
    if (isinstance(node, ast.Assign)
        and getattr(node.targets[0], "id", None) == "DRIVERS"):
      return set(ast.literal_eval(node.value))
  raise AssertionError("experiments/BUILD has no DRIVERS list")


def _modules_with_main_guard() -> set[str]:
  """Modules of experiments/ that run as a program (``__main__`` guard)."""
  found = set()
  for path in (ROOT / "experiments").glob("*.py"):
    tree = ast.parse(path.read_text())
    for node in tree.body:
      if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
          and getattr(node.test.left, "id", None) == "__name__"):
        found.add(path.stem)
  return found


def test_every_driver_has_a_bazel_binary_and_nothing_else_does():
  assert _build_drivers() == _modules_with_main_guard()


def test_launcher_runs_the_module_from_the_callers_directory(
    tmp_path, monkeypatch):
  package = tmp_path / "pkg"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "where.py").write_text(
      "import os, sys\n"
      "if __name__ == '__main__':\n"
      "  open(sys.argv[1], 'w').write(os.getcwd() + ' ' + sys.argv[0])\n")
  caller = tmp_path / "caller"
  caller.mkdir()
  monkeypatch.syspath_prepend(str(tmp_path))
  monkeypatch.setenv("BUILD_WORKING_DIRECTORY", str(caller))
  monkeypatch.chdir(tmp_path)
  monkeypatch.setattr(sys, "argv", ["run_driver.py", "pkg.where", "out.txt"])
  run_driver.main()
  cwd, argv0 = (caller / "out.txt").read_text().split(" ")
  assert cwd == str(caller)
  assert argv0.endswith(os.path.join("pkg", "where.py"))


def test_launcher_without_a_module_prints_its_usage(monkeypatch):
  monkeypatch.setattr(sys, "argv", ["run_driver.py"])
  with pytest.raises(SystemExit, match="usage"):
    run_driver.main()
