"""End-to-end test of the run_triehh driver."""

import json
import math
import subprocess

import pytest

from triehh.theory import poisson
from triehh.theory import poisson_calibration
import triehh
from tests.experiments import drivers
from triehh.data import synthetic


def run_driver(*flags):
  """The driver run in this process, as its entry point would run it."""
  from experiments import run_triehh  # pylint: disable=g-import-not-at-top
  status, out, err = drivers.run_in_process(run_triehh, *flags)
  return subprocess.CompletedProcess(flags, status, out, err)


def test_default_data_writes_one_line_per_run(tmp_path):
  proc = run_driver("--num_users=30000", "--num_runs=2", "--epsilon=4",
                    f"--output_dir={tmp_path}")
  assert proc.returncode == 0, proc.stderr
  assert "privacy: (" in proc.stdout and "K=50" in proc.stdout
  lines = (tmp_path / "results.jsonl").read_text().splitlines()
  assert len(lines) == 2
  first, second = (json.loads(l) for l in lines)
  for key in ("algorithm", "engine", "setting", "epsilon", "delta", "n_users",
              "run", "seed", "rounds", "discovered", "metrics", "seconds"):
    assert key in first
  for key in ("theta", "gamma", "batch_size", "levels", "votes_per_round"):
    assert key in first["params"]  # TrieHH's own
  assert first["algorithm"] == "triehh" and first["engine"] == "fast"
  assert (first["run"], second["run"]) == (0, 1)
  # No --seed: each run draws fresh entropy, which no record keeps.
  assert (first["seed"], second["seed"]) == (None, None)
  assert (first["randomness"], second["randomness"]) == ("fresh", "fresh")
  assert "run 1 (fresh entropy, fast engine): " in proc.stdout
  assert first["n_users"] == 30000
  # By default: Poisson sampling, theta and the rate of the two-sided
  # accountant for the target.
  cal = poisson_calibration.calibrate(30000, 11, 4.0, 30000**-2)
  assert (first["params"]["theta"], first["params"]["sampling_rate"]) == (
      cal.theta, cal.rate)
  assert first["params"]["sampling"] == "poisson"
  assert first["params"]["batch_size"] == round(cal.expected_batch_size)
  assert first["epsilon"] == pytest.approx(cal.epsilon)
  assert first["has_guarantee"] and first["params"]["levels"] == 11
  assert "both directions" in proc.stdout
  # Covering the words, not the votes, in both directions.
  assert first["params"]["word_choice"] == "per_round"
  assert first["accounting"] == "Poisson accountant (two-sided)"
  assert "not their vote counts" in first["covers"]
  assert "in both directions" in first["covers"]
  assert first["config_key"] == second["config_key"]
  # The recorded metrics are those of the recorded words against the truth.
  truth = synthetic.english_population(30000, seed=0).ground_truth()
  for record in (first, second):
    assert record["metrics"] == pytest.approx(triehh.precision_recall_f1(
        dict(zip(record["discovered"], record["reported_counts"])), truth))
    assert all(truth.get(w, 0) > 0 for w in record["discovered"])
    assert len(record["params"]["votes_per_round"]) == record["rounds"]
  assert "the" in first["discovered"]
  # The default data set is stored in the cache; the same seeded runs (a
  # simulation) read it back and record the same runs.
  again = run_driver("--num_users=30000", "--num_runs=2", "--epsilon=4",
                     "--seed=0", f"--output_dir={tmp_path / 'again'}",
                     f"--cache_dir={tmp_path / 'cache'}")
  assert "built and encoded" in again.stdout
  again = run_driver("--num_users=30000", "--num_runs=2", "--epsilon=4",
                     "--seed=0", f"--output_dir={tmp_path / 'again'}",
                     f"--cache_dir={tmp_path / 'cache'}")
  assert "read from the cache" in again.stdout, again.stdout
  runs = [json.loads(l) for l in
          (tmp_path / "again" / "results.jsonl").read_text().splitlines()]
  assert [r["seed"] for r in runs] == [0, 1, 0, 1]
  keep = ("params", "discovered", "reported_counts", "metrics")
  assert [{k: r[k] for k in keep} for r in runs[2:]] == [
      {k: r[k] for k in keep} for r in runs[:2]]


def test_fixed_size_sampling_is_labelled_one_sided(tmp_path):
  proc = run_driver("--num_users=30000", "--epsilon=4", "--sampling=fixed",
                    f"--output_dir={tmp_path}")
  assert proc.returncode == 0, proc.stderr
  assert "one direction: Theorem 1's proof" in proc.stdout
  record = json.loads((tmp_path / "results.jsonl").read_text())
  cal = triehh.calibrate(30000, 11, 4.0, 30000**-2)
  own = record["params"]
  assert (own["theta"], own["batch_size"]) == (cal.theta, cal.batch_size)
  assert own["gamma"] == pytest.approx(cal.batch_size / math.sqrt(30000))
  assert record["epsilon"] == pytest.approx(cal.epsilon)
  assert (own["sampling"], own["sampling_rate"]) == ("fixed", None)
  assert record["accounting"] == "Theorem 1 (one direction)"
  assert "in one direction only" in record["covers"]


def test_parameters_outside_the_theorem_fail_clearly(tmp_path):
  proc = run_driver("--num_users=2000", "--epsilon=0.5", "--sampling=fixed",
                    f"--output_dir={tmp_path}")
  assert proc.returncode != 0
  assert "at least n =" in proc.stderr
  proc = run_driver("--num_users=100", "--epsilon=0.01")
  assert proc.returncode == 1
  assert "too few for Poisson sampling" in proc.stderr
  proc = run_driver("--num_users=100", "--sampling_rate=0.1")
  assert proc.returncode == 1
  assert "--sampling_rate needs --theta" in proc.stderr
  # --sampling was not given (Poisson by default): the conflict is between
  # the rate and the batch.
  proc = run_driver("--num_users=100", "--theta=10", "--sampling_rate=0.3",
                    "--batch_size=100")
  assert proc.returncode == 1
  assert ("give one of --sampling_rate and --batch_size" in proc.stderr
          and "--sampling=poisson" not in proc.stderr)


def test_theta_and_batch_size_given_directly(tmp_path):
  refused = run_driver("--num_users=20000", "--theta=2", "--batch_size=2000")
  assert refused.returncode == 1
  assert "--allow_no_guarantee" in refused.stderr
  proc = run_driver("--num_users=20000", "--theta=2", "--batch_size=2000",
                    "--allow_no_guarantee", f"--output_dir={tmp_path}")
  assert proc.returncode == 0, proc.stderr
  assert "privacy: NONE" in proc.stdout
  record = json.loads((tmp_path / "results.jsonl").read_text())
  assert (record["params"]["theta"],
          record["params"]["batch_size"]) == (2, 2000)
  assert record["epsilon"] is None and record["has_guarantee"] is False
  both = run_driver("--num_users=20000", "--theta=12", "--gamma=2",
                    "--epsilon=3")
  assert both.returncode == 1 and "not both" in both.stderr


def test_an_uncalibratable_length_is_refused_in_flag_terms():
  proc = run_driver("--num_users=10000", "--max_length=1000")
  assert proc.returncode == 1
  assert "--max_length <= 62" in proc.stderr
  assert "--sampling=fixed" in proc.stderr


def test_help_loads_neither_scipy_nor_the_discovery():
  # --help needs the flags alone: the baselines' privacy (scipy), the
  # discovery and the sweep's grid are imported when a run starts (the
  # start-up time: benchmarks/startup_benchmark.py).
  import sys  # pylint: disable=g-import-not-at-top
  code = ("import sys; from experiments import run_triehh; "
          "print(sorted(m for m in ('scipy', 'triehh.discovery.discover', "
          "'triehh.baselines.iblt', 'triehh.runs.grid')"
          " if m in sys.modules))")
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                        text=True, check=True)
  assert proc.stdout.strip() == "[]", proc.stdout


def test_a_delta_above_1_over_n_is_refused_naming_the_flags():
  result = run_driver("--num_users=1000", "--delta=0.5", "--cache_dir=")
  assert result.returncode == 1
  (line,) = result.stderr.strip().splitlines()
  assert line.startswith("error: --delta=0.5 is above 1/n = 1/1,000 = "
                         "0.001, which protects nobody")
  assert line.endswith("give --delta at most 1/n (1/n^2 is the default), "
                       "or pass --allow_delta_above_1_over_n to run it "
                       "anyway")
  assert "heavy hitters" not in result.stdout


def test_the_delta_of_theta_and_batch_size_given_is_refused_naming_them():
  result = run_driver("--dataset=file", "--data_path=data/example_users.csv",
                      "--setting=multi", "--theta=4", "--batch_size=60",
                      "--cache_dir=")
  assert result.returncode == 1
  assert result.stderr.startswith(
      "error: --theta=4 and its sampling as given give a guarantee whose "
      "delta, 0.917, is above 1/n = 1/398")
  assert "--allow_delta_above_1_over_n to run them anyway" in result.stderr


def test_opted_in_the_privacy_lines_say_the_delta_protects_nobody():
  result = run_driver("--num_users=1000", "--delta=0.5",
                      "--allow_delta_above_1_over_n", "--cache_dir=",
                      "--seed=0")
  assert result.returncode == 0, result.stderr
  assert ("  WEAK: delta=0.5 exceeds 1/n = 1/1,000 = 0.001: it protects "
          "nobody" in result.stdout)


def test_a_run_that_finds_no_word_prints_why():
  result = run_driver("--num_users=100", "--cache_dir=", "--seed=0")
  assert result.returncode == 0, result.stderr
  assert "0 heavy hitters" in result.stdout
  note = [line for line in result.stdout.splitlines()
          if line.startswith("  note: ")]
  assert len(note) == 1
  assert "no word found: a word needs theta=" in note[0]
  assert "holders among the n=100 users" in note[0]
