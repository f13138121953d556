"""docs/tutorial.ipynb runs top to bottom, as a reader runs it.

The code cells run in order in one namespace, in a child process started
from the repository root (a reader's working directory), with matplotlib
drawing off screen; an exception or a failed ``assert`` in any cell fails
the test. The notebook is kept in git without outputs.
"""

import json
import os
import re
import subprocess
import sys

from experiments import summarize
from experiments import sweep
import triehh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
NOTEBOOK = os.path.join(ROOT, "docs", "tutorial.ipynb")

# Runs each code cell of the notebook named by argv[1], in order.
_RUNNER = """
import json, sys
cells = json.load(open(sys.argv[1], encoding="utf-8"))["cells"]
namespace = {"__name__": "__main__"}
for number, cell in enumerate(cells):
  if cell["cell_type"] == "code":
    source = "".join(cell["source"])
    exec(compile(source, f"<cell {number}>", "exec"), namespace)
print("ran", sum(c["cell_type"] == "code" for c in cells), "code cells")
"""


def _cells() -> list[dict]:
  with open(NOTEBOOK, encoding="utf-8") as f:
    return json.load(f)["cells"]


def test_the_notebook_is_stored_without_outputs():
  code = [c for c in _cells() if c["cell_type"] == "code"]
  assert len(code) >= 6
  for cell in code:
    assert cell["outputs"] == [] and cell["execution_count"] is None


def test_the_notebook_uses_the_public_names_and_drivers_it_shows():
  # What the notebook calls exists, so an API rename fails here first, in
  # the fast lane, with the name.
  source = "".join("".join(c["source"]) for c in _cells()
                   if c["cell_type"] == "code")
  for name in set(re.findall(r"triehh\.([A-Za-z_]+)", source)):
    assert hasattr(triehh, name), name
  drivers = set(re.findall(r'"experiments\.([a-z_]+)"', source))
  assert drivers == {"sweep", "summarize"}
  for module in (sweep, summarize):
    assert callable(module.main)


def test_the_notebook_runs_top_to_bottom():
  env = dict(os.environ, MPLBACKEND="Agg")
  done = subprocess.run([sys.executable, "-c", _RUNNER, NOTEBOOK], cwd=ROOT,
                        capture_output=True, text=True, timeout=300, env=env)
  assert done.returncode == 0, done.stderr[-3000:]
  assert "ran" in done.stdout
