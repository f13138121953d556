"""Every flag is defined once: all drivers import into one process, each
flag name belongs to one module, and a driver refuses the flags it does not
read (experiments.flags, experiments.cli)."""

import ast
import collections
import importlib
import pathlib

from absl import flags
from absl.testing import flagsaver
import pytest

from experiments import cli
from experiments import flags as shared_flags

FLAGS = flags.FLAGS
EXPERIMENTS = pathlib.Path(__file__).resolve().parents[2] / "experiments"


def _drivers() -> list[str]:
  """The driver modules: those of experiments/ that run as a program."""
  found = []
  for path in sorted(EXPERIMENTS.glob("*.py")):
    if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8"):
      found.append(f"experiments.{path.stem}")
  return found


DRIVERS = _drivers()


@pytest.fixture(scope="module")
def modules():
  """Every driver, imported into this one process."""
  return {name: importlib.import_module(name) for name in DRIVERS}


@pytest.fixture(autouse=True)
def parsed_flags():
  if not FLAGS.is_parsed():
    FLAGS.mark_as_parsed()


def test_the_drivers_are_found():
  assert len(DRIVERS) >= 8
  assert "experiments.run_triehh" in DRIVERS
  assert "experiments.flags" not in DRIVERS


def test_all_drivers_import_together_and_each_flag_has_one_module(modules):
  assert set(modules) == set(DRIVERS)
  owners = collections.defaultdict(list)
  for module, defined in FLAGS.flags_by_module_dict().items():
    if module.startswith("experiments."):
      for flag in defined:
        owners[flag.name].append(module)
  twice = {name: where for name, where in owners.items() if len(where) > 1}
  assert not twice
  for name in ("dataset", "epsilon", "max_length", "seed", "output_dir",
               "report_dir", "confidence", "top_t", "top_ts", "cms_k"):
    assert owners[name] == ["experiments.flags"], name


def _defined_names(path: pathlib.Path) -> list[str]:
  """The names a module passes to ``flags.DEFINE_*``."""
  names = []
  for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr.startswith("DEFINE_") and node.args
        and isinstance(node.args[0], ast.Constant)):
      names.append(node.args[0].value)
  return names


def test_each_flag_name_is_defined_in_one_file():
  files = collections.defaultdict(list)
  for path in EXPERIMENTS.glob("*.py"):
    for name in _defined_names(path):
      files[name].append(path.name)
  assert {n: f for n, f in files.items() if len(f) > 1} == {}
  assert "num_users" in files and files["num_users"] == ["flags.py"]


def test_the_renamed_flags_are_gone(modules):
  del modules
  for name in ("thresholds", "sfp_k", "sfp_show"):
    assert name not in FLAGS, name
  audit = importlib.import_module("experiments.audit_privacy")
  own = {f.name for f in FLAGS.get_key_flags_for_module(audit)}
  assert "runs_per_side" in own and "num_runs" not in own


@pytest.mark.parametrize("driver, args, refused", [
    ("experiments.theory_tables", ["--dataset=file"], "dataset"),
    ("experiments.audit_privacy", ["--num_runs", "5"], "num_runs"),
    ("experiments.run_sfp", ["--theta=3"], "theta"),
    ("experiments.run_triehh", ["--top_t=3"], "top_t"),
    ("experiments.summarize", ["--nosfp_show_missing", "--workers=2"],
     "workers"),
])
def test_a_driver_refuses_the_flags_it_does_not_read(modules, driver, args,
                                                      refused):
  with pytest.raises(flags.Error, match=f"--{refused} is not a flag of this "
                     "command"):
    cli.check_own_flags([driver, *args], modules[driver])


@pytest.mark.parametrize("driver, args", [
    ("experiments.theory_tables", ["--epsilon=3", "--epsilons=1,2"]),
    ("experiments.audit_privacy", ["--num_users=100", "--runs_per_side=0"]),
    ("experiments.sweep", ["--top_t=3", "--theta", "3", "--noprogress",
                           "--top_ts=2,3", "--", "--bogus"]),
    ("experiments.reproduce_paper", ["--cms_k=16", "--max_length=9"]),
    ("experiments.run_sfp", ["--show=0", "--verbosity=1", "-v", "0"]),
])
def test_a_driver_takes_its_own_and_its_shared_flags(modules, driver, args):
  cli.check_own_flags([driver, *args], modules[driver])


def test_value_or_is_the_drivers_default_unless_the_flag_is_given():
  with flagsaver.flagsaver():
    assert not shared_flags.given("max_length")
    assert shared_flags.value_or("max_length", 9) == 9
  with flagsaver.flagsaver(max_length=10):
    assert shared_flags.given("max_length")
    assert shared_flags.value_or("max_length", 9) == 10
