"""Every ```python block of README.md and docs/*.md runs as written.

A file's blocks run in order in one namespace (a later block may use an
earlier one's names), from the repository's root, so an API the docs show
and the library no longer has fails here with the file and block. Where a
bare expression's comment starts with a number (``x.epsilon  # 3.9984``),
the value is checked against it to the digits the comment gives, so the
printed numbers cannot drift from the code either. A file whose blocks
run TensorFlow Federated is in the ``tff`` lane. A block that is a sketch
(a signature, a fragment of a loop) says so on the line above it,
``<!-- sketch: why -->``, and is not run.
"""

import ast
import math
import pathlib
import re

import pytest

# What the blocks import, imported here too, so the test's target depends
# on them (tests/BUILD).
import checks.audit  # pylint: disable=unused-import
import triehh  # pylint: disable=unused-import

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^(<!-- sketch[^\n]*-->\n)?```python\n(.*?)^```",
                    re.S | re.M)
_TFF = ("tensorflow_federated", '"tff"', "engines.tff")
# A number at the start of a comment: what the expression before it shows.
_SHOWN = re.compile(r"#\s*([-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.])")


def _blocks(path: pathlib.Path) -> list[str]:
  """The file's python blocks to run: all but those right under a
  ``<!-- sketch: ... -->`` line (a signature or a fragment, said so)."""
  return [code for sketch, code in
          _BLOCK.findall(path.read_text(encoding="utf-8")) if not sketch]


def _params():
  for path in _FILES:
    blocks = _blocks(path)
    if not blocks:
      continue
    marks = ([pytest.mark.tff, pytest.mark.slow]
             if any(any(t in b for t in _TFF) for b in blocks) else [])
    yield pytest.param(path, id=str(path.relative_to(ROOT)), marks=marks)


def shown_values(block: str) -> list[tuple[int, str, str]]:
  """``(line, expression, number)`` of each bare expression whose comment
  starts with a number."""
  found = []
  tree = ast.parse(block)
  lines = block.splitlines()
  for node in tree.body:
    if not isinstance(node, ast.Expr) or node.end_lineno != node.lineno:
      continue
    line = lines[node.lineno - 1]
    match = _SHOWN.search(line[node.end_col_offset:])
    if match:
      found.append((node.lineno, ast.get_source_segment(block, node),
                    match.group(1)))
  return found


def matches_shown(value, shown: str) -> bool:
  """Whether ``value`` is the number ``shown``, to its digits (a shown
  ``3.9984`` holds for 3.99843; ``243,345`` for 243345)."""
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    return False
  text = shown.replace(",", "")
  digits = text.lower().split("e")[0]
  decimals = len(digits.split(".")[1]) if "." in digits else 0
  target = float(text)
  if "e" in text.lower():
    exponent = int(text.lower().split("e")[1])
    step = 10.0 ** (exponent - decimals)
  else:
    step = 10.0 ** -decimals
  return math.isclose(value, target, abs_tol=step / 2 + 1e-12,
                      rel_tol=1e-9)


def test_the_number_check_can_fail():
  assert matches_shown(3.99843, "3.9984")
  assert matches_shown(243_345, "243,345")
  assert matches_shown(1e-08, "1e-08")
  assert not matches_shown(3.9995, "3.9984")
  assert not matches_shown(243_363, "243,345")
  assert not matches_shown("3.9984", "3.9984")
  assert shown_values("x = 1\nx  # 1.5, the value\nx  # not a number\n") == [
      (2, "x", "1.5")]


def test_every_doc_with_code_is_checked():
  names = {p.name for p in _FILES if _blocks(p)}
  assert {"README.md", "mechanisms.md", "privacy.md", "sfp.md"} <= names


@pytest.mark.parametrize("path", list(_params()))
def test_the_blocks_run_and_show_what_they_print(path, monkeypatch):
  monkeypatch.chdir(ROOT)
  namespace = {"__name__": "__doc_block__"}
  for index, block in enumerate(_blocks(path)):
    where = f"{path.name} block {index + 1}"
    exec(compile(block, where, "exec"), namespace)  # pylint: disable=exec-used
    for line, expression, shown in shown_values(block):
      value = eval(expression, namespace)  # pylint: disable=eval-used
      if isinstance(value, bool) or not isinstance(value, (int, float)):
        continue  # a comment on a value that is no number ("# 95% ...")
      assert matches_shown(value, shown), (
          f"{where}, line {line}: {expression} is {value!r}, its comment "
          f"says {shown}")


def test_a_block_said_to_be_a_sketch_is_not_run(tmp_path):
  page = tmp_path / "page.md"
  page.write_text("<!-- sketch: a signature -->\n```python\nf(a, *, b)\n```\n"
                  "\n```python\nx = 1\n```\n", encoding="utf-8")
  assert _blocks(page) == ["x = 1\n"]
