"""docs/tutorial.ipynb runs top to bottom, as a reader runs it.

The code cells run in order in one fresh namespace, as a kernel runs them,
from the repository root (a reader's working directory), with matplotlib
drawing off screen; an exception or a failed ``assert`` in any cell fails
the test. They run in the test's process, as a kernel is one process: the
drivers the notebook starts are still child processes (the notebook starts
them), and TensorFlow Federated and its local worker, which the notebook's
last cell uses, are loaded once for the TFF tests of the process. The
notebook is kept in git without outputs.
"""

import json
import os
import re

from experiments import summarize
from experiments import sweep
import triehh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
NOTEBOOK = os.path.join(ROOT, "docs", "tutorial.ipynb")

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


def test_the_notebook_runs_top_to_bottom(monkeypatch):
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")  # off screen, as MPLBACKEND=Agg would
  from matplotlib import pyplot  # pylint: disable=g-import-not-at-top
  monkeypatch.chdir(ROOT)
  monkeypatch.setenv("MPLBACKEND", "Agg")
  namespace = {"__name__": "__main__"}
  ran = 0
  try:
    for number, cell in enumerate(_cells()):
      if cell["cell_type"] == "code":
        source = "".join(cell["source"])
        code = compile(source, f"<cell {number}>", "exec")
        exec(code, namespace)  # pylint: disable=exec-used
        ran += 1
  finally:
    pyplot.close("all")
  assert ran == sum(c["cell_type"] == "code" for c in _cells()) >= 6
