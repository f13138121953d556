"""docs/tutorial.ipynb runs top to bottom, as a reader runs it.

The notebook runs in a Jupyter kernel (ipykernel) driven by nbclient, the
library behind ``jupyter execute``, from the notebook's folder as a Jupyter
front end runs it: an exception or a failed ``assert`` in any cell fails the
test with the cell's traceback. The kernel is the pinned environment's own
Python, and Jupyter's runtime, data and configuration folders are the
test's, so no kernel the user installed is picked instead and nothing is
written to the user's home. The notebook is kept in git without outputs.
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


def test_the_notebook_runs_top_to_bottom(monkeypatch, tmp_path):
  import nbclient  # pylint: disable=g-import-not-at-top
  import nbformat  # pylint: disable=g-import-not-at-top
  for variable in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR",
                   "JUPYTER_CONFIG_DIR", "IPYTHONDIR"):
    monkeypatch.setenv(variable, str(tmp_path / variable.lower()))
  monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # no migration warning
  monkeypatch.delenv("JUPYTER_PATH", raising=False)
  notebook = nbformat.read(NOTEBOOK, as_version=4)
  client = nbclient.NotebookClient(
      notebook, kernel_name="python3", timeout=600, startup_timeout=120,
      resources={"metadata": {"path": os.path.dirname(NOTEBOOK)}})
  client.execute()
  code = [c for c in notebook.cells if c.cell_type == "code"]
  assert len(code) == len([c for c in _cells() if c["cell_type"] == "code"])
  assert len(code) >= 6
  # Every code cell ran, in order, and none wrote an error.
  assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
  errors = [o for c in code for o in c.outputs if o.output_type == "error"]
  assert not errors, errors
  # The figure cell drew its figure.
  assert any("image/png" in o.get("data", {})
             for c in code for o in c.outputs)
