"""A mechanism written in its own module (tests/mechanisms/toy_mechanism.py)
and registered with one line runs through everything the built-in ones
do: triehh.discover, a sweep (triehh.runs), its records, a summary
(experiments.summarize on reports.summary) and a plot (reports.plots)."""

import json
import math

import pandas as pd
import pytest

import triehh
from experiments import summarize
from reports import summary
from tests.experiments import drivers
from tests.mechanisms import toy_mechanism
from triehh.data import datasets
from triehh.mechanisms import registry
from triehh.runs import algorithms
from triehh.runs import grid
from triehh.runs import records
from triehh.runs import runner
from triehh.runs.algorithms import mechanism as mechanism_adapter

NAME = toy_mechanism.NAME
DATA = {"dataset": "default", "setting": "single", "max_length": 10,
        "num_users": 20000}
EPSILONS = (0.5, 4.0)
SEEDS = 2


@pytest.fixture
def toy():
  registry.register(toy_mechanism.MECHANISM)
  try:
    yield toy_mechanism
  finally:
    registry.unregister(NAME)


def test_discover_runs_the_toy_and_returns_its_release(toy):
  users = ["the"] * 300 + ["of"] * 200 + ["zebra"] * 40 + ["and"] * 2
  result = triehh.discover(users, toy.ToyTarget(2.0, delta=1e-6), seed=3)
  assert isinstance(result, triehh.core.release.Release)
  assert result.mechanism == NAME
  assert result.words[:2] == ("the", "of")  # the most counted first
  assert "zebra" not in result.words  # not a public word
  assert "and" not in result.words  # 2 users, far below 3 sigma
  assert result.guarantee.epsilon == 2.0 and result.guarantee.delta == 1e-6
  assert registry.get(NAME).dp_event(result.params).noise_multiplier == (
      result.params.sigma)
  again = triehh.discover(users, toy.ToyTarget(2.0, delta=1e-6), seed=3)
  assert again.unprotected == result.unprotected  # the seed draws the noise
  other = triehh.discover(users, toy.ToyTarget(2.0, delta=1e-6), seed=4)
  assert other.unprotected != result.unprotected


def test_the_toy_is_an_algorithm_only_while_registered(toy):
  assert NAME in algorithms.names()
  assert isinstance(algorithms.get(NAME), mechanism_adapter.Mechanism)
  assert NAME in records.algorithms()
  registry.unregister(NAME)
  assert NAME not in algorithms.names()
  with pytest.raises(ValueError, match=f"unknown algorithm '{NAME}'"):
    algorithms.get(NAME)
  registry.register(toy.MECHANISM)


def test_a_cell_is_the_privacy_object_field_by_field(toy):
  cells = grid.expand(algorithms=(NAME,), data=(DATA,), epsilons=EPSILONS,
                      deltas=(1e-7,), mechanism_options={
                          NAME: {"threshold_sigmas": 2.5}})
  assert [c.config["epsilon"] for c in cells] == list(EPSILONS)
  first = cells[0]
  assert first.config == {
      "algorithm": NAME, "engine": "fast", "data": DATA, "epsilon": 0.5,
      "delta": 1e-7, "words": toy.WORDS, "threshold_sigmas": 2.5}
  adapter = algorithms.get(NAME)
  rebuilt = adapter.privacy(json.loads(json.dumps(first.config)))
  assert rebuilt == toy.ToyTarget(0.5, 1e-7, threshold_sigmas=2.5)
  assert first.label == (f"{NAME}/fast default/single eps=0.5 delta=1e-07 "
                         "threshold_sigmas=2.5")
  with pytest.raises(ValueError, match="sigmas is no field of ToyTarget"):
    grid.expand(algorithms=(NAME,), data=(DATA,),
                mechanism_options={NAME: {"sigmas": 2}})
  with pytest.raises(ValueError, match="epsilon must be a finite number"):
    grid.expand(algorithms=(NAME,), data=(DATA,), epsilons=(-1.0,))


def test_the_toy_sweeps_records_summarizes_and_plots(toy, tmp_path):
  out, plot_dir = tmp_path / "out", tmp_path / "plots"
  cells = grid.expand(algorithms=(NAME,), data=(DATA,), epsilons=EPSILONS)
  cache = datasets.DataCache()
  grid.check_cells(cells, cache)
  tasks = runner.plan(cells, seed=0, num_runs=SEEDS)
  runner.run_plan(tasks, str(out), datasets=cache)

  got, bad = records.read(str(out / records.RESULTS_FILE))
  assert bad == [] and len(got) == len(EPSILONS) * SEEDS
  assert {(r.config_key, r.seed) for r in got} == {
      (c.key, s) for c in cells for s in range(SEEDS)}
  n = cache.get(DATA).population.num_users
  for record in got:
    assert record.algorithm == NAME and record.engine == "fast"
    assert record.schema_version == records.SCHEMA_VERSION
    assert record.epsilon == record.config["epsilon"]
    assert record.delta == pytest.approx(1 / n**2)  # 1/n^2 of the data
    assert record.adjacency == "REPLACE_SPECIAL" and record.n_source == "data"
    assert record.rounds == 1
    # Its params: the release's parameters, as JSON.
    assert set(record.params) == {"epsilon", "delta", "sigma", "threshold",
                                  "words", "n_source"}
    assert record.params["words"] == list(toy.WORDS)
    assert record.get("sigma") == record.params["sigma"] > 0
    assert set(record.discovered) <= set(toy.WORDS)
    assert 0 <= record.metrics["recall@10"] <= 1
  # More epsilon, less noise: a larger sigma at 0.5 than at 4.
  sigma = {r.config["epsilon"]: r.params["sigma"] for r in got}
  assert sigma[0.5] > 4 * sigma[4.0]
  # A second sweep resumes: nothing left to run.
  done = records.completed(str(out / records.RESULTS_FILE))
  assert runner.plan(cells, seed=0, num_runs=SEEDS, done=done) == []

  csv = tmp_path / "summary.csv"
  code, stdout, err = drivers.run_in_process(
      summarize, f"--output_dir={out}", f"--plot_dir={plot_dir}",
      f"--csv_out={csv}")
  assert code == 0, err
  assert f"{NAME} (fast engine)" in stdout
  table = pd.read_csv(csv)
  recall = table[(table["metric"] == "recall") & (table["k"] == 10)]
  assert sorted(recall["epsilon"]) == list(EPSILONS)
  assert set(recall["runs"]) == {SEEDS}
  for epsilon in EPSILONS:
    values = [r.metrics["recall@10"] for r in got
              if r.config["epsilon"] == epsilon]
    row = recall[recall["epsilon"] == epsilon].iloc[0]
    assert row["mean"] == pytest.approx(sum(values) / len(values))
  groups = summary.group_runs(got)
  assert [g.get("algorithm") for g in groups] == [NAME, NAME]
  png = plot_dir / "recall_vs_epsilon.png"
  assert png.is_file() and png.stat().st_size > 0
  drawn = pd.read_csv(plot_dir / "recall_vs_epsilon.csv")
  assert set(drawn["algorithm"]) == {NAME}
  assert sorted(set(drawn["epsilon"])) == list(EPSILONS)
  assert not drawn["mean"].map(math.isnan).any()
  # A record may name a mechanism only while it is registered.
  registry.unregister(NAME)
  try:
    left, bad = records.read(str(out / records.RESULTS_FILE))
    assert left == [] and {b.kind for b in bad} == {records.schema.FOREIGN}
  finally:
    registry.register(toy.MECHANISM)
