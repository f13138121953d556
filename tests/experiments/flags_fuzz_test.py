"""Generated flag sets for the drivers, and writers killed mid-sweep.

Every generated flag set either runs (exit 0) or ends with exit 1 and one
line starting ``error:``, never a traceback. run_triehh, run_sfp,
summarize and theory_tables run in this process (their ``main`` under the
entry point's flag parsing).
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from experiments import flags as shared_flags
from experiments import run_sfp
from experiments import run_triehh
from experiments import summarize
from experiments import theory_tables
from tests.experiments import drivers
from triehh.runs import records

FLAGS = shared_flags.FLAGS
FUZZ = settings(derandomize=True, deadline=None, database=None,
                max_examples=40)

NUMBERS = st.sampled_from(
    ["0", "-1", "1", "2", "3", "0.5", "1e-300", "1e6", "inf", "nan", "x", "",
     "10", "1e400", "7", "99999999999999999999999"])
FLOATS = st.one_of(NUMBERS, st.floats(allow_nan=True).map(repr))
LISTS = st.lists(NUMBERS, max_size=3).map(",".join)


def flag_sets(choices: dict) -> st.SearchStrategy:
  """Subsets of ``choices`` (name -> strategy of values) as flag strings."""
  return st.dictionaries(st.sampled_from(sorted(choices)), st.just(None),
                         max_size=4).flatmap(
      lambda picked: st.fixed_dictionaries(
          {name: choices[name] for name in picked})).map(
      lambda values: [f"--{k}={v}" for k, v in sorted(values.items())])


SHARED = {
    "epsilon": FLOATS, "delta": FLOATS, "num_runs": st.sampled_from(
        ["0", "1", "2", "-3", "x"]),
    "seed": NUMBERS, "max_length": NUMBERS, "ks": LISTS,
    "dataset": st.sampled_from(["default", "file", "synthetic", "csv"]),
    "data_path": st.sampled_from(["", "missing.csv", "/", "/dev/null"]),
    "setting": st.sampled_from(["single", "oov", "multi", "x"]),
    "data_seed": NUMBERS, "zipf_exponent": FLOATS,
}
TRIEHH = dict(SHARED, **{
    "engine": st.sampled_from(["fast", "tff", "x", ""]),
    "theta": NUMBERS, "gamma": FLOATS, "batch_size": NUMBERS,
    "num_sub_rounds": NUMBERS, "max_num_prefixes": NUMBERS,
    "allow_no_guarantee": st.sampled_from(["true", "false", "x"]),
    "tff_workers": st.sampled_from(["", "h:1", "h", ":80", "h:0"]),
    "tff_rpc_timeout": FLOATS,
})
SFP = dict(SHARED, **{
    "top_t": NUMBERS, "cms_k": NUMBERS,
    "cms_m": st.sampled_from(["1024", "1000", "0", "2", "x"]),
    "sfp_length": NUMBERS, "word_budget": FLOATS,
    "fragment_alphabet": st.sampled_from(["", "data", "ab", "$"]),
})
SUMMARIZE = {
    "confidence": FLOATS, "num_bins": NUMBERS, "table_k": NUMBERS,
    "truth_from_dataset": st.sampled_from(["true", "false"]),
    "num_users": st.sampled_from(["2000", "0", "x"]),
    "csv_out": st.sampled_from(["", "/", "/nonexistent/s.csv"]),
    "epsilon": FLOATS, "dataset": st.sampled_from(["default", "file"]),
}
THEORY = {
    "epsilon": FLOATS, "max_length": NUMBERS, "populations": LISTS,
    "frequencies": LISTS, "epsilons": LISTS, "probability": FLOATS,
}
COUNTS = {}


@pytest.fixture(autouse=True)
def parsed_flags():
  if not FLAGS.is_parsed():
    FLAGS.mark_as_parsed()


def check_outcome(code, err, flags):
  assert "Traceback" not in err, (flags, err)
  if code == 0:
    return "ran"
  lines = err.strip().splitlines()
  assert code == 1 and len(lines) >= 1, (flags, code, err)
  assert lines[-1].startswith("error: "), (flags, err)
  # Nothing but warnings before the one error line.
  assert all(line.startswith("warning: ") for line in lines[:-1]), (flags,
                                                                    err)
  return "error"


def count(driver, outcome):
  COUNTS.setdefault(driver, {}).setdefault(outcome, 0)
  COUNTS[driver][outcome] += 1


@FUZZ
@given(flag_sets(TRIEHH))
def test_run_triehh_flags(flags):
  # A small population always, so that the runs that do start are quick.
  code, _, err = drivers.run_in_process(
      run_triehh, "--show=0", "--cache_dir=", *flags,
      *([] if any(f.startswith("--dataset=") for f in flags)
        else ["--num_users=3000"]))
  count("run_triehh", check_outcome(code, err, flags))


@FUZZ
@given(flag_sets(SFP))
def test_run_sfp_flags(flags):
  code, _, err = drivers.run_in_process(
      run_sfp, "--show=0", "--cache_dir=", "--cms_k=16", *flags,
      *([] if any(f.startswith("--dataset=") for f in flags)
        else ["--num_users=3000"]))
  count("run_sfp", check_outcome(code, err, flags))


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
  out = tmp_path_factory.mktemp("fuzz_results")
  code, _, err = drivers.run_in_process(
      run_triehh, "--num_users=3000", "--epsilon=8", "--sampling=fixed",
      "--num_runs=2", "--show=0", "--cache_dir=", f"--output_dir={out}")
  assert code == 0, err
  return str(out / "results.jsonl")


@FUZZ
@given(flags=flag_sets(SUMMARIZE))
def test_summarize_flags(results_file, flags):
  code, _, err = drivers.run_in_process(
      summarize, f"--results={results_file}", "--cache_dir=", *flags)
  count("summarize", check_outcome(code, err, flags))


@settings(derandomize=True, deadline=None, database=None, max_examples=8)
@given(flag_sets(THEORY))
def test_theory_tables_flags(flags):
  code, _, err = drivers.run_in_process(theory_tables, *flags)
  count("theory_tables", check_outcome(code, err, flags))


def test_report_case_counts():
  """Prints how many generated cases ran and how many were refused."""
  print("\nflag fuzz cases:", json.dumps(COUNTS, sort_keys=True))


def test_sigkill_keeps_results_readable_and_the_next_run_repairs(tmp_path):
  rng = random.Random(20240607)
  # Fixed-size batches: calibrated at once (Theorem 1), where the Poisson
  # accountant takes about a second in every process started.
  command = [sys.executable, "-m", "experiments.run_triehh",
             "--num_users=20000", "--epsilon=8", "--sampling=fixed",
             "--num_runs=100000", "--show=0", f"--output_dir={tmp_path}"]
  env = dict(os.environ, PYTHONUNBUFFERED="1")
  path = tmp_path / "results.jsonl"
  # Each process's seeds start SPAN apart: a process may finish thousands of
  # runs before its kill (a run takes well under a millisecond here).
  span = 10**7
  for kill in range(2):
    proc = subprocess.Popen(command + [f"--seed={span * kill}"],
                            cwd=drivers.ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    before = path.read_text().count("\n") if path.exists() else 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
        not path.exists() or path.read_text().count("\n") <= before):
      time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 1.5))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    got, bad = records.read(str(path))
    assert bad == [] and path.read_text().endswith("\n")
    seeds = [r.seed for r in got if r.seed >= span * kill
             and r.seed < span * (kill + 1)]
    # Every finished run is there, in order, none twice.
    assert seeds == list(range(span * kill, span * kill + len(seeds)))
    assert seeds
    # A kill in the middle of a write (not atomic in other writers) leaves
    # half a line; the next run must set it aside, not glue onto it.
    with open(path, "ab") as f:
      f.write(got[-1].to_json().encode()[:rng.randrange(1, 80)])
  # The run that repairs the file is not killed: it runs in this process.
  code, _, err = drivers.run_in_process(
      run_triehh, *command[3:-3], "--num_runs=1", "--seed=5000",
      f"--output_dir={tmp_path}")
  assert code == 0, err
  assert "moved it to" in err
  got, bad = records.read(str(path))
  assert bad == [] and got[-1].seed == 5000
  # Each injected half line was set aside by the run that followed it.
  side = [p for p in os.listdir(tmp_path) if ".partial-" in p]
  assert len(side) == 2
  for name in side:
    text = (tmp_path / name).read_text()
    assert text.startswith("{") and "\n" not in text
