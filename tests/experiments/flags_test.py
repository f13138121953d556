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
  """The names a module passes to ``flags.DEFINE_*`` and to the shared
  ``DEFINE_values`` and ``DEFINE_count`` (``experiments.flags``)."""
  names = []
  for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
    if not isinstance(node, ast.Call):
      continue
    called = (node.func.attr if isinstance(node.func, ast.Attribute) else
              getattr(node.func, "id", ""))
    if (called.startswith("DEFINE_") and node.args
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
  # One name per idea: each old name is gone, and its new name is a flag.
  assert shared_flags.RENAMED == {"users": "num_users", "runs": "num_runs",
                                  "num_seeds": "num_runs",
                                  "ps_seeds": "ps_runs"}
  for old, new in shared_flags.RENAMED.items():
    assert old not in FLAGS and new in FLAGS, (old, new)
  audit = importlib.import_module("experiments.audit_privacy")
  own = {f.name for f in FLAGS.get_key_flags_for_module(audit)}
  assert "runs_per_side" in own and "num_runs" not in own


@pytest.mark.parametrize("driver, args, refused", [
    ("experiments.theory_tables", ["--dataset=file"], "dataset"),
    ("experiments.audit_privacy", ["--num_runs", "5"], "num_runs"),
    ("experiments.run_sfp", ["--theta=3"], "theta"),
    ("experiments.run_triehh", ["--top_ts=3"], "top_ts"),
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


# ---- list flags and user counts: parsed into values, checked when parsed ----


@pytest.mark.parametrize("args, message", [
    (["--epsilons=4,4.0,4e0"], "flag --epsilons=4,4.0,4e0: lists 4.0 twice "
     "(4 and 4.0 are the same value)"),
    (["--epsilons=1,nan"], "flag --epsilons=1,nan: 'nan' is not a positive "
     "finite number"),
    (["--ks=10,10"], "flag --ks=10,10: lists 10 twice"),
    (["--top_ts=20,2e1"], "lists 2e1 twice (20 and 2e1 are the same value)"),
    (["--settings=oov,oov"], "flag --settings=oov,oov: lists oov twice"),
    (["--variants=correct,correct"], "lists correct twice"),
    (["--variants=bogus"], "unknown value 'bogus': use correct, theta_one"),
    (["--parts="], "flag --parts=: is empty"),
    (["--pass_counts=0"], "flag --pass_counts=0: '0' is not a whole number "
     ">= 1"),
    (["--fractions=0.5,1.5"], "'1.5' is not a number in (0, 1]"),
    (["--iblt_epsilons=inf"], "'inf' is not a positive finite number"),
    (["--total_epsilon=nan"], "--total_epsilon must be a positive finite"),
    (["--runs_per_side=1"], "--runs_per_side must be 0 or at least 2"),
    (["--populations=1e4,10000"], "(1e4 and 10000 are the same value)"),
    (["--populations=2e12"], "'2e12' is not a whole number from 1 to "
     "1,000,000,000,000"),
    (["--frequencies=0"], "'0' is not a number in (0, 1]"),
    (["--sfp_epsilons=4,4"], "flag --sfp_epsilons=4,4: lists 4 twice"),
    (["--poisson_table_ns=1e4,1e4"], "lists 1e4 twice"),
    (["--algorithms=sfp,sfp"], "lists sfp twice"),
    (["--deltas=1e-6,0.000001"], "(1e-6 and 0.000001 are the same value)"),
    (["--k_anonymities=theta,theta"], "lists theta twice"),
    (["--k_anonymities=1e30"], "'1e30' is not a whole number from 1 to "
     "2,147,483,647"),
    (["--results=a,,b"], "an empty path"),
])
def test_flags_are_refused_when_parsed_naming_the_value(modules, args,
                                                        message):
  del modules  # every driver's flags defined
  with flagsaver.flagsaver(), pytest.raises(flags.Error) as caught:
    FLAGS(["driver", *args])
  assert message in str(caught.value)


def test_list_flags_are_parsed_into_values(modules):
  del modules
  with flagsaver.flagsaver():
    FLAGS(["driver", "--epsilons=0.5, 4e0", "--ks=10,1e2",
           "--populations=1e4", "--k_anonymities=theta,5", "--results="])
    assert FLAGS.epsilons == [0.5, 4.0]
    assert FLAGS.ks == [10, 100] and shared_flags.ks() == [10, 100]
    assert FLAGS.populations == [10_000]
    assert FLAGS.k_anonymities == ["theta", 5]
    assert FLAGS.results == []
  assert FLAGS.variants == ["correct"] and FLAGS.pass_counts == [1, 2, 3, 4]


def test_every_list_flag_of_the_drivers_uses_the_shared_parser(modules):
  del modules
  lists = [flag.name for module, defined in FLAGS.flags_by_module_dict().items()
           if module.startswith("experiments.") for flag in defined
           if isinstance(flag.parser, (flags.ListParser, flags.BaseListParser,
                                       shared_flags.ValuesParser))]
  assert {"ks", "epsilons", "settings", "variants", "parts", "populations",
          "algorithms", "sfp_epsilons", "tff_workers"} <= set(lists)
  assert [name for name in lists
          if not isinstance(FLAGS[name].parser, shared_flags.ValuesParser)
          ] == []


@pytest.mark.parametrize("name", [
    "num_users", "oov_num_users", "batch_size", "single_num_users",
    "multi_num_users", "default_users", "iblt_default_users"])
def test_every_user_count_takes_scientific_notation(modules, name):
  del modules
  with flagsaver.flagsaver():
    FLAGS(["driver", f"--{name}=1e5"])
    assert FLAGS[name].value == 100_000
    assert isinstance(FLAGS[name].value, int)
    FLAGS(["driver", f"--{name}=2.5e3"])
    assert FLAGS[name].value == 2500
  for bad in ("2.5", "1e-3", "inf", "x"):
    with flagsaver.flagsaver(), pytest.raises(flags.Error,
                                              match="not a whole number"):
      FLAGS(["driver", f"--{name}={bad}"])


def test_no_default_or_help_example_writes_into_docs(modules):
  assert FLAGS["report_dir"].default is None
  for name, module in modules.items():
    for line in (module.__doc__ or "").splitlines():
      if "python -m" in line or line.strip().startswith("triehh-"):
        assert "docs/" not in line, (name, line)
  with flagsaver.flagsaver():
    assert modules["experiments.beyond"].report_dir() == "results/beyond"
  with flagsaver.flagsaver(output_dir="out"):
    assert modules["experiments.beyond"].report_dir() == "out"
    assert modules["experiments.reproduce_paper"].report_dir() == "out"


def test_a_drivers_own_reading_is_declared_for_one_flag_at_a_time():
  with pytest.raises(ValueError, match="one flag at a time"):
    shared_flags.declare("experiments.some_driver", "epsilon", "delta",
                         default=1.0)
  with pytest.raises(KeyError, match="no flag --bogus"):
    shared_flags.refuse("experiments.some_driver", ["bogus"], "why")


def test_shared_flags_help_names_no_driver(modules):
  # How a driver reads a shared flag differently is the driver's
  # declaration, shown by its own --help only.
  del modules
  for module, defined in FLAGS.flags_by_module_dict().items():
    if module != "experiments.flags":
      continue
    for flag in defined:
      for driver in ("run_triehh", "run_sfp", "sweep", "audit_privacy",
                     "theory_tables", "reproduce_paper", "beyond", "field",
                     "summarize"):
        assert f"{driver}:" not in flag.help, (flag.name, driver)


@pytest.mark.parametrize("library, said", [
    # A library message names its arguments; a driver says them as flags.
    ("data_path=x.csv given without dataset: say how to read it: "
     "dataset=sentiment140 (the Sentiment140 layout), dataset=file",
     "--data_path=x.csv given without --dataset: say how to read it: "
     "--dataset=sentiment140 (the Sentiment140 layout), --dataset=file"),
    ("oov_num_users applies to settings=oov only",
     "--oov_num_users applies to --settings=oov only"),
    ("give data_format (one of csv, tsv, jsonl, parquet)",
     "give --data_format (one of csv, tsv, jsonl, parquet)"),
    ("output_dir=out: out/results.jsonl is not a regular file (a "
     "directory?); move it away or choose another output_dir",
     "--output_dir=out: out/results.jsonl is not a regular file (a "
     "directory?); move it away or choose another --output_dir"),
    ("give the results to summarise: results=FILE[,FILE] or "
     "output_dir=DIR[,DIR]", "give the results to summarise: "
     "--results=FILE[,FILE] or --output_dir=DIR[,DIR]"),
    ("TrieHH needs at least 2; use a larger data set or num_users",
     "TrieHH needs at least 2; use a larger data set or --num_users"),
    ("give split_bytes, or smaller files (users_sharded reads each whole)",
     "give --split_bytes, or smaller files (--users_sharded reads each "
     "whole)"),
    # Said already, a value stated after its flag, a path, a placeholder, a
    # quoted Python value and a word that holds the name: left as they are.
    ("--data_path=x: needs --dataset", "--data_path=x: needs --dataset"),
    ("flag --num_users=2e5: num_users=200,000 users drawn one by one",
     "flag --num_users=2e5: num_users=200,000 users drawn one by one"),
    ("/tmp/data_path/x.csv and data_path.csv: Not a directory",
     "/tmp/data_path/x.csv and data_path.csv: Not a directory"),
    ("its runs are in <output_dir>/results.jsonl",
     "its runs are in <output_dir>/results.jsonl"),
    ("DataSpec(setting='single', dataset=\"file\")",
     "DataSpec(setting='single', dataset=\"file\")"),
    ("the dataset's setting and my_data_path", "the dataset's setting and "
     "my_data_path"),
])
def test_the_librarys_argument_names_are_said_as_flags(library, said):
  assert shared_flags.said_as_flags(library) == said
  assert shared_flags.said_as_flags(said) == said  # said once


def test_a_driver_says_a_library_error_in_flag_terms():
  from experiments import cli  # pylint: disable=g-import-not-at-top
  assert cli.error_line(ValueError("dataset=file needs data_path")) == (
      "error: --dataset=file needs --data_path")
  # The system's reason for a path is left as it is.
  assert cli.error_line(FileNotFoundError(2, "No such file or directory",
                                          "data_path")) == (
      "error: data_path: No such file or directory")


@pytest.mark.parametrize("released, said", [
    (0, "no word released, so no set precision"),
    (3, "set precision=0.667 (share of the 3 words released"),
])
def test_an_unranked_set_states_its_precision_only_when_it_has_words(
    capsys, released, said):
  with flagsaver.flagsaver(ks=[10]):
    shared_flags.print_metrics({"precision": 2 / 3 if released else 0.0,
                                "recall@10": 0.0}, ranked=False,
                               released=released)
  out = capsys.readouterr().out
  assert said in out
  assert "precision=0.000" not in out
  assert "K=10    recall=0.000" in out
