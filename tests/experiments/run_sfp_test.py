"""End-to-end test of the run_sfp driver."""

import json
import subprocess

import pytest

import triehh
from tests.experiments import drivers
from triehh.data import synthetic


def run_driver(*flags):
  """The driver run in this process, as its entry point would run it."""
  from experiments import run_sfp  # pylint: disable=g-import-not-at-top
  status, out, err = drivers.run_in_process(run_sfp, *flags)
  return subprocess.CompletedProcess(flags, status, out, err)


def test_default_data_writes_one_line_per_run(tmp_path):
  proc = run_driver("--num_users=30000", "--num_runs=2", "--epsilon=4",
                    "--cms_k=64", "--top_t=30", f"--output_dir={tmp_path}")
  assert proc.returncode == 0, proc.stderr
  assert "local epsilon" in proc.stdout and "K=50" in proc.stdout
  lines = (tmp_path / "results.jsonl").read_text().splitlines()
  assert len(lines) == 2
  first, second = (json.loads(l) for l in lines)
  for key in ("algorithm", "dataset", "setting", "epsilon", "delta",
              "n_users", "run", "seed", "discovered", "reported_counts",
              "metrics", "seconds", "accounting", "adjacency"):
    assert key in first
  for key in ("epsilon_local", "top_t", "k", "m", "reports_per_position"):
    assert key in first["params"]  # SFP's own
  assert first["algorithm"] == "sfp"
  assert (first["run"], second["run"]) == (0, 1)
  assert (first["seed"], second["seed"]) == (None, None)  # fresh entropy
  assert (first["randomness"], second["randomness"]) == ("fresh", "fresh")
  assert first["n_users"] == 30000 and first["params"]["top_t"] == 30
  assert first["epsilon"] == 4.0 and first["delta"] == 30000**-2
  assert first["params"]["epsilon_local"] == pytest.approx(
      triehh.sfp_local_epsilon(4.0, 30000**-2, 30000))
  truth = synthetic.english_population(30000, seed=0).ground_truth()
  for record in (first, second):
    assert record["metrics"] == pytest.approx(triehh.precision_recall_f1(
        dict(zip(record["discovered"], record["reported_counts"])), truth))
    assert len(record["params"]["reports_per_position"]) == 5
    assert sum(record["params"]["reports_per_position"]) == 30000
  assert "the" in first["discovered"]


def test_bad_sketch_width_fails_clearly(tmp_path):
  proc = run_driver("--num_users=2000", "--cms_m=1000",
                    f"--output_dir={tmp_path}")
  assert proc.returncode != 0
  assert "power of two" in proc.stderr
