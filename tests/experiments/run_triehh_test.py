"""End-to-end test of the run_triehh driver."""

import json
import math

import pytest

import triehh
from tests.experiments import drivers
from triehh import synthetic


def run_driver(*flags):
  return drivers.run_module("experiments.run_triehh", *flags)


def test_default_data_writes_one_line_per_run(tmp_path):
  proc = run_driver("--num_users=30000", "--num_runs=2", "--epsilon=4",
                    f"--output_dir={tmp_path}")
  assert proc.returncode == 0, proc.stderr
  assert "privacy: (" in proc.stdout and "K=50" in proc.stdout
  lines = (tmp_path / "results.jsonl").read_text().splitlines()
  assert len(lines) == 2
  first, second = (json.loads(l) for l in lines)
  for key in ("algorithm", "engine", "setting", "epsilon", "delta", "n_users",
              "theta", "gamma", "batch_size", "run", "seed", "rounds",
              "discovered", "metrics", "seconds"):
    assert key in first
  assert first["algorithm"] == "triehh" and first["engine"] == "fast"
  assert (first["run"], second["run"]) == (0, 1)
  assert (first["seed"], second["seed"]) == (0, 1)
  assert first["n_users"] == 30000
  # theta and the batch size are Corollary 1's for the target.
  cal = triehh.calibrate(30000, 11, 4.0, 30000**-2)
  assert (first["theta"], first["batch_size"]) == (cal.theta, cal.batch_size)
  assert first["gamma"] == pytest.approx(cal.batch_size / math.sqrt(30000))
  assert first["epsilon"] == pytest.approx(cal.epsilon)
  assert first["has_guarantee"] and first["levels"] == 11
  # One word per user: Theorem 1 itself, covering the words, not the votes.
  assert first["word_choice"] == "per_round"
  assert first["accounting"] == "Theorem 1"
  assert "not their vote counts" in first["covers"]
  assert first["config_key"] == second["config_key"]
  # The recorded metrics are those of the recorded words against the truth.
  truth = synthetic.english_population(30000, seed=0).ground_truth()
  for record in (first, second):
    assert record["metrics"] == pytest.approx(triehh.precision_recall_f1(
        dict(zip(record["discovered"], record["counts"])), truth))
    assert all(truth.get(w, 0) > 0 for w in record["discovered"])
    assert len(record["votes_per_round"]) == record["rounds"]
  assert "the" in first["discovered"]


def test_parameters_outside_the_theorem_fail_clearly(tmp_path):
  proc = run_driver("--num_users=2000", "--epsilon=0.5",
                    f"--output_dir={tmp_path}")
  assert proc.returncode != 0
  assert "at least n =" in proc.stderr


def test_theta_and_batch_size_given_directly(tmp_path):
  refused = run_driver("--num_users=20000", "--theta=2", "--batch_size=2000")
  assert refused.returncode == 1
  assert "--allow_no_guarantee" in refused.stderr
  proc = run_driver("--num_users=20000", "--theta=2", "--batch_size=2000",
                    "--allow_no_guarantee", f"--output_dir={tmp_path}")
  assert proc.returncode == 0, proc.stderr
  assert "privacy: NONE" in proc.stdout
  record = json.loads((tmp_path / "results.jsonl").read_text())
  assert (record["theta"], record["batch_size"]) == (2, 2000)
  assert record["epsilon"] is None and record["has_guarantee"] is False
  both = run_driver("--num_users=20000", "--theta=12", "--gamma=2",
                    "--epsilon=3")
  assert both.returncode == 1 and "not both" in both.stderr
