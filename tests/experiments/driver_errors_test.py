"""Bad flags, bad paths and interruptions: one ``error:`` line and exit 1
before any work, a real --help per console command, 130 on Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time
import tomllib

import pytest

from experiments import flags as shared_flags
from experiments import run_sfp
from experiments import run_triehh
from experiments import summarize
from tests.experiments import drivers

FLAGS = shared_flags.FLAGS


@pytest.fixture(autouse=True)
def parsed_flags():
  if not FLAGS.is_parsed():
    FLAGS.mark_as_parsed()


@pytest.fixture
def no_data(monkeypatch):
  """Fails the test if a driver starts loading data."""
  def refuse():
    raise AssertionError("data was loaded before the flags were checked")
  monkeypatch.setattr(shared_flags, "load_dataset", refuse)


def assert_one_error_line(code, err, *needles):
  assert code == 1, err
  lines = err.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error: "), err
  for needle in needles:
    assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize("flag, needle", [
    ("--populations=0", "--populations"),
    ("--frequencies=x", "--frequencies"),
    ("--probability=2", "--probability"),
])
def test_theory_tables_errors_are_one_line(flag, needle):
  proc = drivers.run_module("experiments.theory_tables", flag, timeout=120)
  assert "Traceback" not in proc.stderr
  assert_one_error_line(proc.returncode, proc.stderr, needle)


def test_unusable_output_dirs_are_refused_before_any_work(tmp_path, no_data):
  a_file = tmp_path / "file"
  a_file.write_text("")
  (tmp_path / "d" / "results.jsonl").mkdir(parents=True)
  for module in (run_triehh, run_sfp):
    code, _, err = drivers.run_in_process(module, f"--output_dir={a_file}")
    assert_one_error_line(code, err, f"--output_dir={a_file}: Not a "
                          "directory")
    code, _, err = drivers.run_in_process(
        module, f"--output_dir={tmp_path / 'd'}")
    assert_one_error_line(code, err, "not a regular file")


def test_summarize_csv_out_is_checked_before_printing(tmp_path):
  results = tmp_path / "results.jsonl"
  results.write_text("{}\n")
  for csv_out, needle in ((tmp_path, "Is a directory"),
                          (tmp_path / "no" / "s.csv",
                           "no: No such file or directory")):
    code, out, err = drivers.run_in_process(
        summarize, f"--results={results}", f"--csv_out={csv_out}")
    assert_one_error_line(code, err, "--csv_out", needle)
    assert out == ""


@pytest.mark.parametrize("flags, needles", [
    (("--data_path=my.csv",), ("--data_path", "without --dataset")),
    (("--ks=10,0",), ("--ks",)),
    (("--ks=ten",), ("--ks",)),
    (("--engine=tf",), ("--engine",)),
    (("--engine=tff", "--tff_workers=localhost"), ("--tff_workers",
                                                   "host:port")),
    (("--engine=tff", "--tff_workers=h:99999"), ("--tff_workers",)),
    (("--seed=-1",), ("--seed",)),
    (("--num_runs=0",), ("--num_runs",)),
    (("--epsilon=inf",), ("--epsilon", "positive finite")),
    (("--delta=1",), ("--delta", "(0, 1)")),
    (("--gamma=2",), ("--gamma", "--theta")),
    (("--tff_secure_sum",), ("--tff_secure_sum", "--engine=tff")),
    (("--user_column=u",), ("--user_column", "--dataset=file")),
    (("--dataset=file",), ("needs --data_path",)),
    (("--oov_num_users=5",), ("--oov_num_users", "--setting=oov")),
    (("stray",), ("unexpected arguments",)),
])
def test_bad_flags_are_named_before_any_work(flags, needles, no_data):
  code, _, err = drivers.run_in_process(run_triehh, *flags)
  assert_one_error_line(code, err, *needles)


@pytest.mark.parametrize("flags, needles", [
    (("--sfp_length=3",), ("--sfp_length=3", "even")),
    (("--fragment_alphabet=$ab",), ("--fragment_alphabet", "padding")),
    (("--cms_m=1000",), ("--cms_m",)),
    (("--epsilon=0",), ("--epsilon", "triehh-run's --theta")),
])
def test_bad_sfp_flags_are_named_before_any_work(flags, needles, no_data):
  code, _, err = drivers.run_in_process(run_sfp, *flags)
  assert_one_error_line(code, err, *needles)


def test_tiny_population_says_so_in_the_users_terms(tmp_path):
  path = tmp_path / "one.csv"
  path.write_text("user,text\nu1,hello world\n")
  code, _, err = drivers.run_in_process(
      run_triehh, "--dataset=file", f"--data_path={path}", "--cache_dir=")
  assert_one_error_line(code, err, "the population has 1 user", "TrieHH")
  assert "delta" not in err


def test_every_console_command_has_a_real_help():
  with open(os.path.join(drivers.ROOT, "pyproject.toml"), "rb") as f:
    scripts = tomllib.load(f)["project"]["scripts"]
  # Every driver module of experiments/ is a console command.
  drivers_dir = os.path.join(drivers.ROOT, "experiments")
  modules = set()
  for name in os.listdir(drivers_dir):
    if name.endswith(".py"):
      with open(os.path.join(drivers_dir, name), encoding="utf-8") as f:
        if 'if __name__ == "__main__":' in f.read():
          modules.add(f"experiments.{name[:-3]}")
  assert {entry.split(":")[0] for entry in scripts.values()} == modules
  assert set(scripts) == {"triehh-run", "triehh-sfp", "triehh-summarize",
                          "triehh-theory-tables", "triehh-reproduce",
                          "triehh-sweep", "triehh-audit", "triehh-beyond",
                          "triehh-partition-selection", "triehh-field",
                          "triehh-ingest"}
  shared = ("--epsilon", "--dataset", "--data_path", "--num_runs",
            "--output_dir", "--num_users")
  own = {"triehh-run": ("--engine", "--theta") + shared,
         "triehh-sfp": ("--top_t", "--cms_k") + shared,
         "triehh-partition-selection": ("--partition_strategy",
                                        "--max_partitions_contributed")
                                       + shared,
         "triehh-summarize": ("--results", "--csv_out", "--dataset",
                              "--data_path", "--num_users"),
         "triehh-theory-tables": ("--populations", "--frequencies",
                                  "--probability"),
         "triehh-reproduce": ("--output_dir", "--report_dir",
                              "--triehh_runs", "--sfp_runs"),
         "triehh-sweep": ("--algorithms", "--epsilons", "--engines",
                          "--datasets", "--settings", "--top_ts",
                          "--workers", "--progress") + shared,
         "triehh-audit": ("--num_users", "--epsilon", "--theta",
                          "--variants", "--runs_per_side", "--confidence"),
         "triehh-beyond": ("--report_dir", "--num_runs", "--parts",
                           "--sentiment140_path"),
         "triehh-field": ("--report_dir", "--output_dir", "--num_runs",
                          "--ps_runs", "--num_users", "--epsilons",
                          "--sentiment140_path"),
         "triehh-ingest": ("--input", "--runner", "--users_sharded",
                           "--setting", "--output_dir")}
  helps = _helps(scripts)
  assert set(helps) == set(scripts)
  for name, (status, stdout, stderr) in helps.items():
    assert status == 0, (name, stderr)
    for flag in own[name]:
      assert f"  {flag}" in stdout or f"[no]{flag[2:]}" in stdout, (
          name, flag)
    assert name in stdout  # the docstring's usage line


# Runs `<command> --help` for every (name, "module:function") of argv[1] (a
# JSON object) as the installed script runs it (argv[0] the command's name,
# the entry function called), each in its own process: a fork of this one,
# made before any project module is imported, so the libraries every driver
# imports (numpy, pandas, scipy, absl, matplotlib) are loaded once, not once
# per command. Prints {name: [exit status, stdout, stderr]} as JSON.
_HELP_RUNNER = """
import json, os, sys, tempfile
import absl.app, absl.flags, matplotlib, numpy, pandas, scipy.stats
results = {}
for name, entry in json.loads(sys.argv[1]).items():
  module, function = entry.split(":")
  out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
  sys.stdout.flush(); sys.stderr.flush()
  pid = os.fork()
  if pid == 0:
    os.dup2(out.fileno(), 1); os.dup2(err.fileno(), 2)
    status = 1
    try:
      sys.argv = [name, "--help"]
      getattr(__import__(module, fromlist=[function]), function)()
      status = 0
    except SystemExit as done:
      status = (done.code if isinstance(done.code, int)
                else int(done.code is not None))
    except BaseException:
      import traceback
      traceback.print_exc()
    finally:
      sys.stdout.flush(); sys.stderr.flush()
      os._exit(status)
  _, wait_status = os.waitpid(pid, 0)
  out.seek(0); err.seek(0)
  results[name] = [os.waitstatus_to_exitcode(wait_status),
                   out.read().decode(), err.read().decode()]
print(json.dumps(results))
"""


def _helps(scripts: dict[str, str]) -> dict[str, tuple[int, str, str]]:
  """{command: (exit status, stdout, stderr)} of `command --help`."""
  proc = subprocess.run(
      [sys.executable, "-c", _HELP_RUNNER, json.dumps(scripts)],
      cwd=drivers.ROOT, capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr
  return {name: tuple(result)
          for name, result in json.loads(proc.stdout).items()}


def test_ctrl_c_exits_130_and_keeps_finished_runs(tmp_path):
  proc = subprocess.Popen(
      drivers.interruptible(
          "experiments.run_triehh", "--num_users=20000", "--epsilon=8",
          # fixed-size batches: calibrated at once, unlike Poisson sampling
          "--sampling=fixed", "--num_runs=100000", "--show=0", "--seed=0",
          f"--output_dir={tmp_path}"),
      cwd=drivers.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
  results = tmp_path / "results.jsonl"
  # Start-up (imports, the population) can take minutes on a loaded machine.
  deadline = time.monotonic() + 600
  while time.monotonic() < deadline and (
      not results.exists() or results.read_text().count("\n") < 3):
    time.sleep(0.1)
  proc.send_signal(signal.SIGINT)
  _, err = proc.communicate(timeout=60)
  assert proc.returncode == 130, err
  assert "Traceback" not in err and "Task was destroyed" not in err
  assert err.strip().startswith("interrupted: ")
  lines = results.read_text().splitlines()
  assert f"{len(lines)} finished runs kept" in err
  seeds = [json.loads(line)["seed"] for line in lines]
  assert seeds == list(range(len(seeds))) and len(seeds) >= 3
