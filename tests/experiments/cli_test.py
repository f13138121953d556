"""Tests of the drivers' shared start-up (experiments.cli)."""

import os
import subprocess
import sys
import textwrap

import pytest

from absl.testing import absltest
from absl.testing import parameterized

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# A driver whose main prints what quiet_libraries decided.
_DRIVER = textwrap.dedent("""
    import os, sys
    from absl import logging
    from experiments import cli

    def main(argv):
      del argv
      print(os.environ["TF_CPP_MIN_LOG_LEVEL"], os.environ["GRPC_VERBOSITY"],
            logging.get_verbosity())

    cli.run(main, sys.modules[__name__])
""")


class QuietLibrariesTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("default", [], "3 ERROR"),
      ("verbosity_zero", ["--verbosity=0"], "0 INFO"),
      ("short_flag", ["-v", "1"], "0 INFO"),
      ("verbosity_negative", ["--verbosity=-1"], "3 ERROR"))
  def test_tensorflow_logs_follow_the_command_line(self, args, want):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "GRPC_VERBOSITY")}
    env["PYTHONPATH"] = _ROOT + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _DRIVER, *args],
                          capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    self.assertEqual(done.returncode, 0, done.stderr)
    levels = done.stdout.split()
    self.assertEqual(" ".join(levels[:2]), want)
    # absl's own level: WARNING (-1) when quiet, the flag's value otherwise.
    self.assertEqual(int(levels[2]) < 0, want.startswith("3"))


class FlagFileTest(absltest.TestCase):

  def test_a_missing_flag_file_is_named_in_one_line(self):
    missing = os.path.join(_ROOT, "no-such-dir", "absent.flags")
    proc = subprocess.run(
        [sys.executable, "-m", "experiments.theory_tables",
         f"--flagfile={missing}"], cwd=_ROOT, capture_output=True, text=True,
        check=False)
    self.assertEqual(proc.returncode, 1)
    self.assertEqual(proc.stderr.strip(),
                     f"error: --flagfile={missing}: the flag file cannot be "
                     "read (no such file or directory)")


if __name__ == "__main__":
  absltest.main()


def test_command_line_quotes_the_arguments_as_a_shell_needs(monkeypatch):
  from experiments import cli  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(sys, "argv", ["field.py", "--num_users=1e4",
                                    "--report_dir=my reports"])
  assert cli.command_line("experiments.field") == (
      "python -m experiments.field --num_users=1e4 '--report_dir=my reports'")
  monkeypatch.setattr(sys, "argv", ["field.py"])
  assert cli.command_line("experiments.field") == (
      "python -m experiments.field")


@pytest.mark.parametrize("kind, message", [
    ("binary", "the flag file is not UTF-8 text (byte 0xe4 at offset 6)"),
    ("fifo", "the flag file is a named pipe, not a file"),
    ("directory", "the flag file is a directory, not a file"),
    ("device", "the flag file is a device or socket, not a file"),
    ("huge", "2,097,152 bytes, more than a flag file holds (1,048,576)"),
    ("nested", "the flag file is not UTF-8 text (byte 0xe4 at offset 6)"),
])
def test_a_flag_file_absl_cannot_read_is_named(tmp_path, kind, message):
  # absl read /dev/zero until memory ended (22 GB), waited on a pipe, and
  # raised UnicodeDecodeError on other bytes.
  from absl import flags  # pylint: disable=g-import-not-at-top
  from experiments import cli  # pylint: disable=g-import-not-at-top
  binary = tmp_path / "binary.flags"
  binary.write_bytes(b"--seed\xe4=1\n")
  paths = {"binary": binary, "directory": tmp_path, "device": "/dev/zero"}
  if kind == "fifo":
    paths["fifo"] = tmp_path / "fifo"
    os.mkfifo(paths["fifo"])
  elif kind == "huge":
    paths["huge"] = tmp_path / "huge.flags"
    paths["huge"].write_text("-" * (2 << 20))
  elif kind == "nested":
    paths["nested"] = tmp_path / "nested.flags"
    paths["nested"].write_text(f"--flagfile={binary}\n")
  with pytest.raises(flags.Error) as refused:
    cli.check_flag_files(["--num_users=10", f"--flagfile={paths[kind]}"])
  where = binary if kind == "nested" else paths[kind]
  assert str(refused.value) == f"--flagfile={where}: {message}"


def test_readable_flag_files_pass(tmp_path):
  from experiments import cli  # pylint: disable=g-import-not-at-top
  good = tmp_path / "good.flags"
  good.write_text("--num_users=1000\n--epsilon=2\n")
  cli.check_flag_files(["--flagfile", str(good)])


# ---- each driver's help: its flags, with its defaults, help and values ------

# Per driver: text its --help holds (a flag's line, its default, its values),
# and flags and values it must not show (another driver's).
_HELPS = {
    "run_triehh": (
        ["  --epsilon: Target central epsilon.\n    (default: '4.0')",
         "  --adjacency: <ADD_OR_REMOVE_ONE|REPLACE_ONE|REPLACE_SPECIAL>: ",
         "  --population_size:", "  --words_out:", "  --num_runs:",
         "'ingested' reads the folder --data_path",
         "  --mechanism: <triehh|noisy_trie|partition_selection|sfp|iblt|"
         "two_servers>: ",
         # Each other mechanism's flags, under its heading.
         "--mechanism=noisy_trie:", "  --false_positive_rate:",
         "--mechanism=sfp:", "  --top_t:", "  --cms_m:", "  --sfp_length:",
         "--mechanism=partition_selection:", "  --partition_strategy:",
         "--mechanism=iblt:", "  --k_anonymity:"],
        ["  --runs_per_side:", "replace|add", "  --users:", "  --epsilons:",
         "  --runs:", "one_word|several_words"]),
    "run_sfp": (
        ["  --epsilon: Target central epsilon.\n    (default: '4.0')",
         "  --top_t:", "  --words_out:"],
        ["  --adjacency:", "  --theta:", "  --population_size:"]),
    "run_partition_selection": (
        ["  --population_size:", "  --words_out:",
         "  --partition_strategy:"],
        ["  --max_length:", "  --theta:", "  --adjacency:"]),
    "sweep": (
        ["  --population_size:", "  --partition_strategy:",
         "  --epsilons: Target central epsilons (default: --epsilon).",
         "  --adjacency: <ADD_OR_REMOVE_ONE|REPLACE_ONE|REPLACE_SPECIAL>: "],
        ["  --show:", "  --words_out:", "replace|add"]),
    "audit_privacy": (
        ["  --adjacency: <replace|add>: The audited family",
         "(default: 'replace')",
         "  --num_users: n, users in the base population D, e.g. 1e4 "
         "(default\n    10,000)"],
        ["REPLACE_ONE", "  --dataset:", "  --words_out:", "  --num_runs:",
         "(default: '1000000')", "(default: '4.0')"]),
    "theory_tables": (
        ["  --epsilon: Target central epsilon of Table 1.\n"
         "    (default: '2.0')",
         "  --epsilons: Target central epsilons of the minimum-population "
         "table.\n    (default: '1.0,2.0,4.0,8.0')"],
        ["  --num_runs:", "  --dataset:", "(default: '4.0')"]),
    "beyond": (
        ["  --num_runs: Seeded runs per point of (b) and (c), and TrieHH's "
         "runs per\n    point of (a).\n    (default: '10')",
         "  --output_dir: Where results.jsonl is kept and resumed from.\n"
         "    (default: 'results/beyond')"],
        ["  --runs:", "  --epsilon:", "  --dataset:"]),
    "field": (
        ["  --num_users: n of the English population (every mechanism), a "
         "list.\n    (default: '10000,100000,1000000')\n"
         "    (a comma separated list)",
         "  --num_runs: Seeded runs per cell of TrieHH and the noisy trie.\n"
         "    (default: '5')", "  --ps_runs:",
         "  --epsilons: Target central epsilons of the English populations."
         "\n    (default: '0.5,1.0,2.0,4.0,8.0')"],
        ["  --users:", "  --num_seeds:", "  --ps_seeds:", "  --dataset:"]),
    "reproduce_paper": (
        ["(default: '9')", "  --workers: Processes running cells.\n"
         "    (default: '2')", "  --settings: The settings to run"],
        ["  --num_runs:", "  --dataset:", "  --epsilon:"]),
    "summarize": (
        ["  --dataset:", "  --output_dir: Directories of results to read"],
        ["  --epsilon:", "  --num_runs:", "  --seed:", "  --ks:"]),
    "ingest": (
        ["  --output_dir: The folder the population is written to "
         "(required); the\n    drivers read it with --dataset=ingested",
         "  --user_column: Column naming the user (--layout=file)."],
        ["  --dataset:", "  --epsilon:", "--dataset=file"]),
}
# Driver names a flag's help once named to say how another driver reads it.
_OTHER_DRIVERS = ("run_triehh", "run_sfp", "sweep:", "audit_privacy",
                  "theory_tables", "reproduce_paper", "beyond:", "field:")


@pytest.mark.parametrize("driver", sorted(_HELPS))
def test_each_drivers_help_shows_its_own_flags_defaults_and_values(driver):
  import importlib  # pylint: disable=g-import-not-at-top
  from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
  module = importlib.import_module(f"experiments.{driver}")
  code, out, err = drivers.run_in_process(module, "--help")
  assert (code, err) == (0, ""), err
  # The flags, below the header naming the module, lines unwrapped.
  flags_help = " ".join(
      out.split("\nFlags:\n", 1)[1].split(":\n", 1)[1].split())
  present, absent = _HELPS[driver]
  for text in present:
    assert " ".join(text.split()) in flags_help, (driver, text)
  for text in absent:
    assert " ".join(text.split()) not in flags_help, (driver, text)
  for name in _OTHER_DRIVERS:
    assert name not in flags_help, (driver, name)


def test_the_help_of_a_driver_run_as_a_module_lists_its_shared_flags():
  # python -m files the module's key flags under sys.argv[0], not
  # __main__: the shared flags it declares are listed, with its defaults.
  proc = subprocess.run(
      [sys.executable, "-m", "experiments.theory_tables", "--help"],
      cwd=_ROOT, capture_output=True, text=True, timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr
  assert ("  --epsilon: Target central epsilon of Table 1.\n"
          "    (default: '2.0')") in proc.stdout
  assert "  --max_length: " in proc.stdout


@pytest.mark.parametrize("driver, want", [
    ("theory_tables", {"epsilon": 2.0, "epsilons": [1.0, 2.0, 4.0, 8.0]}),
    ("field", {"num_users": [10_000, 100_000, 1_000_000], "num_runs": 5,
               "output_dir": "results/field"}),
    ("beyond", {"num_runs": 10, "output_dir": "results/beyond"}),
    ("reproduce_paper", {"max_length": 9, "workers": 2,
                         "settings": ["single", "oov", "multi"]}),
    ("audit_privacy", {"adjacency": "replace", "num_users": None,
                       "epsilon": None}),
    ("run_triehh", {"epsilon": 4.0, "num_runs": 1, "num_users": 1_000_000,
                    "adjacency": None}),
])
def test_the_defaults_a_help_shows_are_the_values_the_driver_reads(driver,
                                                                    want):
  import importlib  # pylint: disable=g-import-not-at-top
  from absl import flags  # pylint: disable=g-import-not-at-top
  from absl.testing import flagsaver  # pylint: disable=g-import-not-at-top
  from experiments import cli  # pylint: disable=g-import-not-at-top
  module = importlib.import_module(f"experiments.{driver}")
  with flagsaver.flagsaver():
    cli.parse_flags([driver], module)
    got = {name: flags.FLAGS[name].value for name in want}
    assert not any(flags.FLAGS[name].present for name in want)
  assert got == want
  # Another driver's way of reading a flag is undone (flagsaver): the
  # process's flags are the definitions again.
  assert flags.FLAGS["num_users"].default == 1_000_000
  assert flags.FLAGS["epsilon"].default == 4.0


@pytest.mark.parametrize("driver, args, said", [
    ("field", ["--users=1e4"], "error: --users is now --num_users"),
    ("field", ["--num_seeds=3"], "error: --num_seeds is now --num_runs"),
    ("field", ["--ps_seeds", "3"], "error: --ps_seeds is now --ps_runs"),
    ("beyond", ["--runs=2"], "error: --runs is now --num_runs"),
    ("run_triehh", ["--epsilon=1", "--runs=2"],
     "error: --runs is now --num_runs"),
])
def test_an_old_flag_name_is_refused_naming_the_new_one(driver, args, said):
  import importlib  # pylint: disable=g-import-not-at-top
  from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
  module = importlib.import_module(f"experiments.{driver}")
  code, out, err = drivers.run_in_process(module, *args)
  assert (code, out) == (1, "")
  assert err == said + "\n"


@pytest.mark.parametrize("driver, args, said", [
    ("run_partition_selection", ["--max_length=5"], "error: --max_length is "
     "not a flag of this command: partition selection releases whole words, "
     "with no length cap"),
    ("sweep", ["--words_out=w.csv"], "error: --words_out is not a flag of "
     "this command: a sweep prints and writes no words (its runs are in "
     "<output_dir>/results.jsonl)"),
    ("audit_privacy", ["--dataset=file"], "error: --dataset is not a flag of "
     "this command (--help lists its flags)"),
    ("run_triehh", ["--runs_per_side=0"], "error: --runs_per_side is not a "
     "flag of this command (--help lists its flags)"),
])
def test_a_flag_of_another_driver_is_refused_with_the_drivers_reason(
    driver, args, said):
  import importlib  # pylint: disable=g-import-not-at-top
  from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
  module = importlib.import_module(f"experiments.{driver}")
  code, out, err = drivers.run_in_process(module, *args)
  assert (code, out, err) == (1, "", said + "\n")
