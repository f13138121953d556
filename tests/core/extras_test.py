"""Tests of the core installed alone, without the extras' modules.

A child process installs an import blocker (a ``sys.meta_path`` finder that
refuses TensorFlow, TensorFlow Federated, Apache Beam and JAX, as an
environment without them would), then runs the core; asking for a feature
of an extra there is the one-line error naming it.
"""

import ast
import importlib.metadata
import json
import pathlib
import re
import subprocess
import sys
import textwrap
import tomllib

import pytest

from triehh.core import extras

_ROOT = pathlib.Path(__file__).parent.parent.parent

# Installed first in the child: an environment without the extras' modules.
_BLOCKER = textwrap.dedent("""\
    import importlib.abc, json, sys

    BLOCKED = ("tensorflow", "tensorflow_federated", "tensorflow_privacy",
               "apache_beam", "jax", "jaxlib")
    ASKED = []

    class Blocker(importlib.abc.MetaPathFinder):
      def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in BLOCKED or top.startswith(("tensorflow", "jax")):
          ASKED.append(name)
          raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

    sys.meta_path.insert(0, Blocker())

    def report(**more):
      loaded = sorted(m for m in sys.modules if m.partition(".")[0] in
                      BLOCKED or m.startswith(("tensorflow", "jax")))
      print("REPORT " + json.dumps(dict(loaded=loaded, asked=sorted(set(ASKED)),
                                        modules=sorted(sys.modules), **more)))
    """)

_CORE = textwrap.dedent("""\
    import triehh
    from triehh.theory import dp_events

    users = ["sun"] * 300 + ["moon"] * 200 + [f"w{i}" for i in range(500)]
    found = triehh.discover(users, triehh.Target(8.0, population_size=1000))
    population = triehh.Population.from_user_words(
        users, alphabet="abcdefghijklmnopqrstuvwxyz0123456789", max_length=4)
    noisy = triehh.discover(population, triehh.NoisyTarget(epsilon=8.0),
                            max_length=4)
    selected = triehh.discover(users, triehh.PartitionSelectionTarget(8.0))
    accountant = dp_events.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(dp_events.release_event(found))
    epsilon = accountant.get_epsilon(found.params.delta)

    from experiments import run_triehh
    sys.argv = ["triehh-run", "--help"]
    try:
      run_triehh.run()
    except SystemExit as end:
      status = end.code
    report(words=[list(found.words), list(noisy.words), list(selected.words)],
           epsilon=epsilon, asked_epsilon=found.params.epsilon,
           help_status=status)
    """)

_ASK_FOR_EXTRAS = textwrap.dedent("""\
    import triehh

    users = ["sun"] * 300 + ["moon"] * 200 + [f"w{i}" for i in range(500)]
    errors = {}
    asks = {
        "tff": lambda: triehh.discover(users, triehh.Target(8.0),
                                       engine="tff"),
        "beam": lambda: triehh.discover(
            users, triehh.PartitionSelectionTarget(8.0), engine="beam"),
        "tff_name": lambda: __import__(
            "triehh.engines.tff", fromlist=["x"]).build_triehh_process,
    }
    for name, ask in asks.items():
      try:
        ask()
      except ImportError as err:
        errors[name] = [type(err).__name__, str(err),
                        isinstance(err, ValueError), getattr(err, "extra", None)]
    report(errors=errors)
    """)


def _run_blocked(body: str) -> dict:
  """Runs ``body`` after the blocker in a child process; its report."""
  done = subprocess.run([sys.executable, "-c", _BLOCKER + body],
                        capture_output=True, text=True, timeout=300,
                        cwd=_ROOT, check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  (line,) = [l for l in done.stdout.splitlines() if l.startswith("REPORT ")]
  return json.loads(line[len("REPORT "):])


def _name(requirement: str) -> str:
  """The normalised distribution name of a requirement string."""
  found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
  return re.sub(r"[-_.]+", "-", found.group(0)).lower()


def _project() -> dict:
  with open(_ROOT / "pyproject.toml", "rb") as f:
    return tomllib.load(f)["project"]


_PROJECT = {"triehh", "experiments", "reports", "checks"}


def _imported(path: pathlib.Path) -> set[str]:
  """The top-level names of the modules ``path`` imports, anywhere in it
  (by name too: ``importlib.import_module("x")``)."""
  found = set()
  for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
    if isinstance(node, ast.Import):
      found |= {alias.name.partition(".")[0] for alias in node.names}
    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
      found.add(node.module.partition(".")[0])
    elif (isinstance(node, ast.Call) and node.args
          and isinstance(node.args[0], ast.Constant)
          and isinstance(node.args[0].value, str)
          and getattr(node.func, "attr", None) in ("quietly",
                                                    "import_module")):
      found.add(node.args[0].value.partition(".")[0])  # by name
  return found


def _closure(names: set[str]) -> set[str]:
  """``names`` and every distribution they require, as installed here
  (requirements under a marker, such as an extra's, left out)."""
  seen, todo = set(), list(names)
  while todo:
    name = todo.pop()
    if name in seen:
      continue
    seen.add(name)
    try:
      requires = importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:
      continue
    todo.extend(_name(r) for r in requires if ";" not in r)
  return seen


def test_the_core_runs_without_tensorflow_beam_or_jax():
  got = _run_blocked(_CORE)
  assert got["loaded"] == []
  # The blocker was in force: pipeline_dp tries Apache Beam at import.
  assert "apache_beam" in got["asked"]
  found, noisy, selected = got["words"]
  assert sorted(found) == sorted(noisy) == ["moon", "sun"]  # seeded runs
  # Partition selection's noise is python-dp's, unseeded: a word of one
  # user is kept with a chance of about delta.
  assert {"moon", "sun"} <= set(selected)
  assert all(word in ("moon", "sun") or word.startswith("w")
             for word in selected)
  assert got["epsilon"] == pytest.approx(got["asked_epsilon"], rel=1e-3)
  assert got["help_status"] == 0
  # What the project's modules that ran imported comes with the core's
  # dependencies (the modules other libraries try for, such as scipy's
  # optional Cython, are theirs to declare).
  loaded = {module.partition(".")[0] for module in got["modules"]}
  imported = set()
  for module in got["modules"]:
    path = _ROOT / (module.replace(".", "/") + ".py")
    if module.partition(".")[0] in _PROJECT and path.is_file():
      imported |= _imported(path)
  third_party = (imported & loaded) - _PROJECT - set(sys.stdlib_module_names)
  assert {"numpy", "dp_accounting", "pipeline_dp"} <= third_party
  providers = importlib.metadata.packages_distributions()
  used = {_name(dist) for top in third_party for dist in providers[top]}
  core = _closure({_name(r) for r in _project()["dependencies"]})
  assert used - core == set()


def test_asking_for_an_extra_names_it_in_one_line():
  got = _run_blocked(_ASK_FOR_EXTRAS)
  assert got["loaded"] == []
  tff = ("engine 'tff' needs TensorFlow Federated, which is not installed "
         "(no module 'tensorflow_federated'): pip install 'triehh[tff]'")
  beam = ("the partition_selection mechanism on engine 'beam' needs Apache "
          "Beam, which is not installed (no module 'apache_beam'): pip "
          "install 'triehh[beam]'")
  errors = got["errors"]
  assert errors["tff"][:1] == ["MissingExtra"]
  assert errors["tff"][1].startswith(tff)
  assert errors["tff"][2:] == [True, "tff"]
  assert errors["beam"] == ["MissingExtra", beam, True, "beam"]
  assert errors["tff_name"][1].startswith(
      "triehh.engines.tff.build_triehh_process needs TensorFlow Federated")
  for error in errors.values():
    assert "\n" not in error[1]


def test_the_extras_are_declared_and_the_core_needs_none_of_them():
  project = _project()
  core = {_name(r) for r in project["dependencies"]}
  optional = {extra: {_name(r) for r in requirements}
              for extra, requirements in
              project["optional-dependencies"].items()}
  heavy = {"tensorflow", "tensorflow-federated", "tensorflow-privacy",
           "apache-beam", "jax", "jaxlib", "nbclient", "ipykernel"}
  assert core & heavy == set()
  assert {"tensorflow", "tensorflow-federated"} <= optional["tff"]
  assert "apache-beam" in optional["beam"]
  assert {"triehh", "nbclient", "nbformat", "ipykernel"} <= optional["notebook"]
  assert "triehh[tff]" in project["optional-dependencies"]["notebook"]
  assert set(extras.EXTRAS) <= set(optional)
  # The core's own needs: the accountants, partition selection, data files.
  assert {"dp-accounting", "pipeline-dp", "pyarrow", "attrs"} <= core


def test_the_requirements_pin_every_declared_dependency():
  pinned = {_name(line) for line in (_ROOT / "requirements.txt").read_text()
            .splitlines() if line.strip() and not line.startswith("#")}
  project = _project()
  declared = {_name(r) for r in project["dependencies"]}
  for extra in ("tff", "beam", "notebook", "test"):
    declared |= {_name(r) for r in project["optional-dependencies"][extra]}
  assert declared - {"triehh"} - pinned == set()


def test_a_module_of_no_extra_is_left_as_it_was():
  err = ModuleNotFoundError("No module named 'nothing_here'",
                            name="nothing_here")
  assert extras.missing("a feature", err) is err
  assert extras.extra_of("tensorflow_federated.python.core") == "tff"
  assert extras.extra_of("apache_beam") == "beam"
  assert extras.extra_of("numpy") is None and extras.extra_of(None) is None


def test_import_module_names_the_extra_of_the_missing_module(monkeypatch):
  # A module that no environment has, as if the beam extra installed it.
  monkeypatch.setitem(extras.EXTRAS, "beam",
                      ("Apache Beam", ("apache_beam", "no_such_module")))
  with pytest.raises(extras.MissingExtra) as caught:
    extras.import_module("no_such_module.inner", "the feature")
  assert str(caught.value) == (
      "the feature needs Apache Beam, which is not installed (no module "
      "'no_such_module'): pip install 'triehh[beam]'")
  assert isinstance(caught.value, ValueError)
  assert caught.value.extra == "beam"
  assert extras.import_module("json", "anything").dumps([]) == "[]"
