"""No library message names a command-line flag.

The library (triehh/) names its own arguments in what it says to its caller
(``data_path``, ``dataset=file``, ``output_dir``); the drivers say them as
the flags that set them (experiments.flags.said_as_flags). Read statically
with `ast`: every string in the code of a module under triehh/ (its
docstrings aside, which may show a command line) holding ``--name``.
triehh/engines/tff/worker.py is a command of its own, with its own flags.
"""

from __future__ import annotations

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Modules that are commands of their own (their own flags).
COMMANDS = ("triehh/engines/tff/worker.py",)
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z_]+")


def _docstrings(tree: ast.AST) -> set[int]:
  """The ids of the docstring nodes of ``tree``."""
  found = set()
  for node in ast.walk(tree):
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                         ast.AsyncFunctionDef)) and node.body:
      first = node.body[0]
      if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
          and isinstance(first.value.value, str)):
        found.add(id(first.value))
  return found


def flags_named(source: str) -> list[tuple[int, str]]:
  """``(line, flag)`` of each flag a string of ``source``'s code names."""
  tree = ast.parse(source)
  docstrings = _docstrings(tree)
  out = []
  for node in ast.walk(tree):
    if (isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings):
      out += [(node.lineno, m.group()) for m in FLAG.finditer(node.value)]
  return sorted(out)


def test_the_check_sees_a_flag_in_a_message_and_not_in_a_docstring():
  source = ('"""Run it: ``python -m x --port=8000``."""\n'
            'def f(path):\n'
            '  """Reads ``--data_path``."""\n'
            '  raise ValueError(f"{path}: give --data_format (one of csv)")\n'
            'HINT = "read it with dataset=file, data_path given"\n')
  assert flags_named(source) == [(4, "--data_format")]


def test_no_library_module_names_a_flag_in_a_message():
  named = {}
  for path in sorted((ROOT / "triehh").rglob("*.py")):
    relative = path.relative_to(ROOT).as_posix()
    if relative in COMMANDS:
      continue
    found = flags_named(path.read_text(encoding="utf-8"))
    if found:
      named[relative] = found
  assert named == {}
