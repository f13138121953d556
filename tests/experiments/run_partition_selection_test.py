"""End-to-end tests of run_partition_selection and its sweep cells."""

import json

import pytest

import triehh
from experiments import run_partition_selection
from experiments import summarize
from experiments import sweep
from tests.experiments import drivers
from triehh.data import synthetic

N = 2000
COMMON = (f"--num_users={N}", "--epsilon=4", "--cache_dir=")


def read(path) -> list[dict]:
  return [json.loads(line) for line in
          (path / "results.jsonl").read_text().splitlines()]


def test_a_selection_that_releases_nothing_says_why():
  # 100 users, epsilon 0.1, delta 1e-12: a word needs about 1 + ln(1/(2
  # delta)) / epsilon = 270 holders; a word of 10 is kept with probability
  # about delta e^(10 epsilon) / (e^epsilon - 1), 3e-11.
  status, out, err = drivers.run_in_process(
      run_partition_selection, "--num_users=100", "--epsilon=0.1",
      "--delta=1e-12", "--cache_dir=", "--seed=1")
  assert status == 0, err
  assert ("\n  note: no word found: truncated_geometric selection keeps a "
          "word with probability 1/2 at about 1 + ln(k/(2 delta)) k/epsilon "
          "= 270 holders (epsilon=0.1, delta=1e-12, k=1) among the n=100 "
          "users: more than there are users") in out


def test_each_run_writes_a_record_with_its_guarantee(tmp_path):
  status, out, err = drivers.run_in_process(
      run_partition_selection, *COMMON, "--num_runs=2",
      "--partition_strategy=gaussian_thresholding", "--show=5",
      f"--output_dir={tmp_path}")
  assert status == 0, err
  assert "REPLACE_SPECIAL" in out and "central" in out
  assert "words released" in out and "K=50" in out
  first, second = read(tmp_path)
  assert (first["run"], second["run"]) == (0, 1)
  assert first["algorithm"] == "partition_selection"
  assert (first["epsilon"], first["delta"]) == (4.0, N**-2)
  assert first["adjacency"] == "REPLACE_SPECIAL"  # delta from |D|
  assert first["n_source"] == "data"
  assert first["params"]["strategy"] == "gaussian_thresholding"
  assert first["params"]["max_partitions_contributed"] == 1
  assert first["reported_counts"] == []
  truth = synthetic.english_population(N, seed=0).ground_truth()
  for record in (first, second):
    assert set(record["discovered"]) <= set(truth)
    assert record["discovered"] == sorted(record["discovered"])
    assert "the" in record["discovered"]  # held by a few hundred users
    # A set: recall@K and its precision, no top-K precision (nor F1@K) of
    # an alphabetical cut.
    scores = triehh.precision_recall_f1(record["discovered"], truth)
    assert record["metrics"] == pytest.approx(
        {name: value for name, value in scores.items()
         if not name.startswith(("precision@", "f1@"))})
    assert "recall@10" in record["metrics"] and "precision" in record[
        "metrics"] and "precision@10" not in record["metrics"]


def test_sweep_cells_per_strategy_and_a_summary(tmp_path):
  status, _, err = drivers.run_in_process(
      sweep, "--algorithms=partition_selection", *COMMON[:1], "--epsilons=4",
      "--partition_strategies=truncated_geometric,laplace_thresholding",
      "--max_partitions_contributed=2", "--num_runs=1", "--noprogress",
      "--cache_dir=", f"--output_dir={tmp_path}")
  assert status == 0, err
  swept = read(tmp_path)
  assert [r["params"]["strategy"] for r in swept] == ["truncated_geometric",
                                            "laplace_thresholding"]
  assert {r["params"]["max_partitions_contributed"] for r in swept} == {2}
  assert all(r["config"]["delta"] is None for r in swept)
  status, out, err = drivers.run_in_process(summarize,
                                            f"--results={tmp_path}")
  assert status == 0, err
  assert "partition_selection (laplace_thresholding)" in out
  assert "at most 2 words per user" in out


@pytest.mark.parametrize("flags, needle", [
    (("--partition_strategy=policy_gaussian",), "--partition_strategy"),
    (("--max_partitions_contributed=0",), "--max_partitions_contributed"),
    (("--max_length=1",), "error: --max_length is not a flag of this "
     "command: partition selection releases whole words, with no length "
     "cap"),
])
def test_bad_flags_are_named(flags, needle):
  status, _, err = drivers.run_in_process(run_partition_selection, *flags)
  assert status == 1 and needle in err, err


def test_a_sweep_refuses_partition_flags_without_its_cells(tmp_path):
  status, _, err = drivers.run_in_process(
      sweep, "--partition_strategies=gaussian_thresholding",
      f"--output_dir={tmp_path}")
  assert status == 1
  assert "add partition_selection to --algorithms" in err


def test_a_declared_population_size_reaches_the_library(tmp_path,
                                                         monkeypatch):
  from triehh.baselines import partition_selection as ps_lib  # pylint: disable=g-import-not-at-top
  targets = []
  select_words = ps_lib.select_words

  def spy(population, target, **kwargs):
    targets.append(target)
    return select_words(population, target, **kwargs)

  monkeypatch.setattr(ps_lib, "select_words", spy)
  status, out, err = drivers.run_in_process(
      run_partition_selection, *COMMON, "--population_size=3e3", "--show=0",
      f"--output_dir={tmp_path}")
  assert status == 0, err
  (target,) = targets
  assert (target.population_size, target.delta) == (3000, None)
  (record,) = read(tmp_path)
  # delta = 1/N^2 of the declared N, which covers add/remove neighbours.
  assert record["delta"] == pytest.approx(3000**-2)
  assert record["n_source"] == "declared"
  assert record["adjacency"] == "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL"
  assert record["config"]["population_size"] == 3000
  assert "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL" in out
  # Without the flag the config has no such key (earlier records' keys).
  status, _, err = drivers.run_in_process(
      run_partition_selection, *COMMON, "--show=0",
      f"--output_dir={tmp_path / 'without'}")
  assert status == 0, err
  (record,) = read(tmp_path / "without")
  assert "population_size" not in record["config"]
  assert record["n_source"] == "data"


def test_a_population_size_too_small_for_the_default_delta_is_named():
  status, out, err = drivers.run_in_process(
      run_partition_selection, *COMMON, "--population_size=1")
  assert (status, out) == (1, "")
  assert err.startswith("error: --population_size=1 is too few users for "
                        "the default --delta")
  assert len(err.splitlines()) == 1


def test_sweep_cells_declare_the_population_size_too(tmp_path):
  status, _, err = drivers.run_in_process(
      sweep, "--algorithms=partition_selection", *COMMON[:1], "--epsilons=4",
      "--population_size=4000", "--noprogress", "--cache_dir=",
      f"--output_dir={tmp_path}")
  assert status == 0, err
  (record,) = read(tmp_path)
  assert record["config"]["population_size"] == 4000
  assert record["delta"] == pytest.approx(4000**-2)
  assert record["n_source"] == "declared"
  status, _, err = drivers.run_in_process(
      sweep, "--algorithms=sfp", "--population_size=4000",
      f"--output_dir={tmp_path / 'sfp'}")
  assert status == 1
  assert ("--population_size applies to TrieHH and partition-selection "
          "cells only") in err


def test_an_unranked_set_prints_set_precision_and_recall_not_top_k():
  status, out, err = drivers.run_in_process(run_partition_selection,
                                            *COMMON, "--show=0")
  assert status == 0, err
  assert "precision=0.000" not in out
  assert "K=10    precision" not in out
  (said,) = [line for line in out.splitlines() if "unranked" in line]
  assert said.startswith("  unranked: no top-K precision; set precision=")
  assert "K=10    recall=" in out


@pytest.mark.parametrize("flags, needle", [
    (("--delta=0.5",), "error: --delta=0.5 is above 1/n = 1/2,000"),
    (("--delta=1e-320",), "error: --delta must be at least"),
])
def test_a_delta_too_large_or_subnormal_is_refused_naming_the_flag(flags,
                                                                   needle):
  status, out, err = drivers.run_in_process(run_partition_selection,
                                            *COMMON, *flags)
  assert status == 1
  assert err.startswith(needle), err
  assert "words released" not in out


def test_opted_in_the_delta_above_1_over_n_runs_and_says_so():
  status, out, err = drivers.run_in_process(
      run_partition_selection, *COMMON, "--delta=0.5",
      "--allow_delta_above_1_over_n", "--show=0")
  assert status == 0, err
  assert "  WEAK: delta=0.5 exceeds 1/n = 1/2,000" in out
