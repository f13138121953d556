"""No long function without its reason written where it is.

The rule, read statically with `ast` over every .py file under FOLDERS: a
function or method (nested ones too) has at most MAX_FUNCTION_LINES lines,
from its `def` to its last line, docstring included, unless the comment
lines right above it (above its decorators, if any; no blank line between)
include one that starts with "# Long function:" and says why.

Files have no line cap: a cap made modules stop just under it, trimmed to
fit rather than split where their concepts part (six sat at 496-500 lines).
Modules are split by concept instead (docs/architecture.md); a module
docstring may still say why a file is long ("Long file:").

Prefer splitting where a split is natural; the reason is for what stays
long. The test reports every violation at once.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = ("triehh", "reports", "checks", "experiments", "benchmarks")
MAX_FUNCTION_LINES = 60
FUNCTION_REASON = "# Long function:"


@dataclasses.dataclass(frozen=True, order=True)
class Violation:
  path: str
  line: int
  what: str

  def __str__(self) -> str:
    return f"{self.path}:{self.line}: {self.what}"


def _has_function_reason(node: ast.AST, lines: list[str]) -> bool:
  """Whether the comment block right above the def (or its first decorator)
  holds a line starting with FUNCTION_REASON."""
  first = min([node.lineno] + [d.lineno for d in node.decorator_list])
  index = first - 2  # the line above, 0-based
  while index >= 0 and lines[index].strip().startswith("#"):
    if lines[index].strip().startswith(FUNCTION_REASON):
      return True
    index -= 1
  return False


def violations(source: str, path: str) -> list[Violation]:
  """The rule's violations in one file's source, sorted by line."""
  lines = source.splitlines()
  tree = ast.parse(source, filename=path)
  found = []
  for node in ast.walk(tree):
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    length = node.end_lineno - node.lineno + 1
    if length > MAX_FUNCTION_LINES and not _has_function_reason(node, lines):
      found.append(Violation(
          path, node.lineno, f"function {node.name} of {length} lines "
          f"(> {MAX_FUNCTION_LINES}) with no '{FUNCTION_REASON}' comment "
          "right above it"))
  return sorted(found)


def project_files(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
  files = []
  for folder in FOLDERS:
    for path in sorted((root / folder).rglob("*.py")):
      relative = path.relative_to(root)
      if "__pycache__" in relative.parts or any(
          part.startswith(".") for part in relative.parts):
        continue
      files.append(path)
  return files


def project_violations(root: pathlib.Path = ROOT) -> list[Violation]:
  found = []
  for path in project_files(root):
    found += violations(path.read_text(encoding="utf-8"),
                        str(path.relative_to(root)))
  return found


def test_every_function_is_short_or_says_why():
  found = project_violations()
  assert not found, (
      f"{len(found)} file(s) or function(s) too long without a reason "
      "(split them, or write the reason; see tests/layout_test.py):\n"
      + "\n".join(map(str, found)))


def test_the_project_has_files_to_check():
  files = {str(p.relative_to(ROOT)) for p in project_files()}
  assert "triehh/core/population.py" in files
  assert "reports/summary.py" in files
  assert any(f.startswith("experiments/") for f in files)
  assert any(f.startswith("benchmarks/") for f in files)


# ---- the checker on synthetic sources ---------------------------------------


def _function(name: str, num_lines: int, indent: str = "") -> str:
  """A function of exactly ``num_lines`` lines (def included)."""
  body = [f"{indent}def {name}():"]
  body += [f"{indent}  x = {i}" for i in range(num_lines - 2)]
  body.append(f"{indent}  return x")
  return "\n".join(body) + "\n"


def test_a_long_file_of_short_functions_passes():
  source = "\n".join(_function(f"f{i}", MAX_FUNCTION_LINES)
                     for i in range(20))
  assert len(source.splitlines()) > 1000
  assert not violations(source, "a.py")


def test_a_function_at_the_limit_passes_and_one_more_line_fails():
  assert not violations(_function("f", MAX_FUNCTION_LINES), "a.py")
  found = violations("import os\n\n" +
                     _function("f", MAX_FUNCTION_LINES + 1), "a.py")
  assert [str(v) for v in found] == [
      f"a.py:3: function f of {MAX_FUNCTION_LINES + 1} lines "
      f"(> {MAX_FUNCTION_LINES}) with no '# Long function:' comment right "
      "above it"]


def test_the_docstring_counts_in_a_functions_length():
  source = ('def f():\n  """Doc.\n\n' + "  more\n" * (MAX_FUNCTION_LINES - 4)
            + '  """\n  return 1\n')
  assert len(source.splitlines()) == MAX_FUNCTION_LINES + 1
  assert len(violations(source, "a.py")) == 1


@pytest.mark.parametrize("above", [
    "# Long function: one TF graph.\n",
    "# What it does.\n# Long function: one TF graph.\n",
    "# Long function: one TF graph.\n@functools.cache\n",
    "# Long function: one TF graph.\n@a\n@b(1)\n",
])
def test_a_reason_right_above_the_def_or_its_decorators_passes(above):
  source = above + _function("f", MAX_FUNCTION_LINES + 20)
  assert not violations(source, "a.py")


@pytest.mark.parametrize("above", [
    "# Long function: why\n\n",  # a blank line between
    "# why it is long\n",  # not the marker
    "x = 1  # Long function: why\n",  # not a comment line
    "@a\n# Long function: why\n@b\n",  # between decorators, not above them
])
def test_a_reason_not_right_above_does_not_count(above):
  source = above + _function("f", MAX_FUNCTION_LINES + 1)
  assert len(violations(source, "a.py")) == 1


def test_methods_nested_and_async_functions_are_checked_and_all_reported():
  long = MAX_FUNCTION_LINES + 1
  source = ("class C:\n" + _function("method", long, "  ")
            + "\n" + _function("outer", 3).replace(
                "  return x\n", "  return x\n" + _function("inner", long,
                                                           "  "))
            + "\nasync " + _function("coroutine", long))
  found = violations(source, "a.py")
  # outer holds inner, so it is long too.
  assert [v.what.split(" of ")[0] for v in found] == [
      "function method", "function outer", "function inner",
      "function coroutine"]
