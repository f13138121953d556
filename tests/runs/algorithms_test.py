"""Tests of triehh.runs.algorithms: the table and each algorithm's adapter."""

import dataclasses
import inspect
import math

import pytest

from triehh.baselines import iblt_rounds
from triehh.data import datasets
from triehh.runs import algorithms
from triehh.runs import grid
from triehh.runs import records
from triehh.runs.algorithms import iblt as iblt_algorithm
from triehh.runs.algorithms import sfp as sfp_algorithm
from triehh.runs.algorithms import triehh as triehh_algorithm
import triehh

DATA = {"dataset": "default", "setting": "single", "max_length": 10,
        "num_users": 20000}
MEMBERS = [name for name, _ in inspect.getmembers(algorithms.Algorithm)
           if not name.startswith("_")] + ["name", "grid_options"]


def test_the_table_holds_every_algorithm_a_record_may_name_in_order():
  assert tuple(algorithms.ALGORITHMS) == records.ALGORITHMS
  for name, adapter in algorithms.ALGORITHMS.items():
    assert adapter.name == name and algorithms.get(name) is adapter


@pytest.mark.parametrize("name", list(algorithms.ALGORITHMS))
def test_every_adapter_has_every_member_of_the_protocol(name):
  adapter = algorithms.get(name)
  assert {"config", "check", "call", "record", "label"} <= set(MEMBERS)
  for member in MEMBERS:
    assert hasattr(adapter, member), member


def test_an_unknown_algorithm_is_named():
  with pytest.raises(ValueError, match="unknown algorithm 'x'; choose from "
                     "triehh, sfp, iblt"):
    algorithms.get("x")


@pytest.mark.parametrize("name", list(algorithms.ALGORITHMS))
def test_a_config_is_the_adapters_config_of_its_grid_values(name):
  adapter = algorithms.get(name)
  cells = grid.expand(algorithms=(name,), data=(DATA,), epsilons=(1.0, 2.0))
  values = adapter.grid_values(
      dict({k: v for a in algorithms.ALGORITHMS.values()
            for k, v in a.grid_options.items()},
           epsilons=(1.0, 2.0), deltas=(None,)))
  assert [c.config for c in cells] == [adapter.config(DATA, **v)
                                       for v, _ in values]
  assert all(c.config["algorithm"] == name for c in cells)


def test_a_triehh_run_refuses_a_population_of_one_user():
  (cell,) = grid.expand(data=(DATA,))
  one = triehh.Population.from_user_words(["word"])
  with pytest.raises(ValueError, match="the population has 1 user: TrieHH "
                     "needs at least 2"):
    triehh_algorithm.ADAPTER.call(one, cell.config, 0)


def test_triehh_and_sfp_runs_are_recorded_and_scored():
  small = dict(DATA, num_users=2000)
  cells = grid.expand(algorithms=("triehh", "sfp"), data=(small,),
                      epsilons=(4.0,), sfp_options={
                          "k": 16, "m": 1024, "fragment_alphabet": "etaoin"})
  dataset = datasets.DataCache().get(small)
  for cell in cells:
    adapter = cell.adapter
    result = adapter.call(dataset.population, cell.config, 5)
    record = adapter.record(result, dataset, 2, 5, cell.config, ks=(10,))
    assert (record.algorithm, record.run, record.seed) == (
        cell.algorithm, 2, 5)
    assert record.config_key == cell.key
    assert record.discovered == list(result.heavy_hitters)
    assert set(record.metrics) >= {"precision@10", "recall@10"}


_USERS = (["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000
          + [f"w{i}" for i in range(4000)])


def test_triehh_cells_with_counts_differ_by_share_and_record_the_total():
  cells = grid.expand(data=(DATA,), epsilons=(4.0,), triehh_options={
      "sampling": "poisson", "counts": True, "count_sample_rate": 0.5},
                      count_shares=(0.1, 0.3))
  assert [c.config["count_share"] for c in cells] == [0.1, 0.3]
  assert all(c.config["counts"] and c.config["count_sample_rate"] == 0.5
             for c in cells)
  (plain,) = grid.expand(data=(DATA,), epsilons=(4.0,),
                         triehh_options={"sampling": "poisson"})
  assert not {"counts", "count_share"} & set(plain.config)
  assert len({c.key for c in cells + [plain]}) == 3
  pop = triehh.Population.from_user_words(_USERS)
  dataset = datasets.Dataset(pop, pop.ground_truth(), "toy", "single")
  cell = cells[1]
  cell.adapter.check(cell, pop)
  result = cell.adapter.call(pop, cell.config, 3)
  direct = triehh.discover(_USERS, triehh.Target(4.0), seed=3,
                           counts=triehh.Counting(share=0.3, sample_rate=0.5))
  assert result.counts == direct.counts
  # The cell runs what discover(counts=True) runs.
  assert dataclasses.replace(result, trie=None, seconds=0) == (
      dataclasses.replace(direct, trie=None, seconds=0))
  assert result.heavy_hitters == direct.heavy_hitters
  record = cell.adapter.record(result, dataset, 0, 3, cell.config,
                               ks=(3, 10))
  c = result.counts
  assert (record.epsilon, record.delta) == (c.epsilon, c.delta)
  assert record.epsilon <= 4.0 and record.delta == 1e-8
  assert (record.discovery_epsilon, record.discovery_delta) == (
      result.params.epsilon, result.params.delta)
  assert (record.count_epsilon, record.count_delta) == (
      c.counting_epsilon, c.counting_delta)
  assert (record.target_epsilon, record.target_delta) == (4.0, 1e-8)
  assert (record.count_share, record.count_sample_rate,
          record.count_noise_std, record.count_confidence) == (
              0.3, 0.5, c.noise_std, c.confidence)
  assert record.protected_counts == {
      w: [e, lo, up] for w, e, lo, up in zip(c.words, c.estimate, c.lower,
                                             c.upper)}
  assert record.reported_counts == list(result.heavy_hitters.values())
  assert set(record.metrics) >= {"count_error@3", "count_coverage@3",
                                 "count_error@10"}
  assert records.RunRecord.from_json(record.to_json()) == record


@pytest.mark.parametrize("options, match", [
    ({"count_share": 0.2}, "count_share=0.2 is for counts"),
    ({"count_sample_rate": 0.2}, "count_sample_rate=0.2 is for counts"),
    ({"counts": True, "count_share": 1.0}, "count_share=1.0"),
    ({"counts": True, "count_sample_rate": 0.0}, "count_sample_rate=0.0"),
    ({"counts": True, "allow_no_guarantee": True}, "allow_no_guarantee"),
])
def test_triehh_counts_options_are_checked(options, match):
  with pytest.raises(ValueError, match=match):
    grid.expand(data=(DATA,), triehh_options=options)


def test_count_shares_need_counts():
  with pytest.raises(ValueError, match="count_shares is for counts"):
    grid.expand(data=(DATA,), count_shares=(0.1,))


def test_iblt_arguments_are_triehh_batch_size_and_theta():
  (cell,) = grid.expand(algorithms=("iblt",), data=(DATA,), epsilons=(2.0,))
  pop = datasets.load_data(DATA).population
  params = triehh.discover(pop, triehh.Target(2.0, sampling="fixed"), seed=0).params
  arguments = iblt_algorithm.iblt_arguments(pop, cell.config)
  target = arguments["target"]
  assert target.batch == triehh.Target(2.0, sampling="fixed")
  batch_size, n_source = iblt_rounds.round_size(
      pop, arguments["max_length"], target.batch)
  assert (batch_size, target.k_anonymity, n_source) == (
      params.batch_size, params.theta, params.n_source)
  (given,) = grid.expand(algorithms=("iblt",), data=(DATA,),
                         epsilons=(2.0,), k_anonymities=(3,))
  assert iblt_algorithm.iblt_target(pop, given.config).k_anonymity == 3


SUMMARY = {"dataset": "d", "setting": "single", "n_users": 12345,
           "epsilon": 2.0, "delta": None}


@pytest.mark.parametrize("adapter, values, label", [
    (triehh_algorithm.ADAPTER,
     dict(SUMMARY, engine="fast", theta=12, batch_size=900),
     "triehh (fast engine), d single, n=12,345, epsilon=2, theta=12, m=900"),
    (triehh_algorithm.ADAPTER,
     dict(SUMMARY, engine="tff", delta=1e-9, theta=12, batch_size=900,
          sampling="poisson", sampling_rate=0.0123456),
     "triehh (tff engine), d single, n=12,345, epsilon=2, delta=1e-09, "
     "theta=12, poisson q=0.01235 (m~900)"),
    (triehh_algorithm.ADAPTER,
     dict(SUMMARY, engine="fast", epsilon=None, theta=None),
     "triehh (fast engine), d single, n=12,345, epsilon=?"),
    (triehh_algorithm.ADAPTER,
     dict(SUMMARY, engine="fast", epsilon=math.inf, theta=3, batch_size=10),
     "triehh (fast engine), d single, n=12,345, epsilon=inf, theta=3, m=10"),
    (triehh_algorithm.ADAPTER,
     dict(SUMMARY, engine="fast", theta=12, batch_size=900, count_share=0.25,
          count_sample_rate=1.0),
     "triehh (fast engine), d single, n=12,345, epsilon=2, theta=12, m=900, "
     "counts (share 0.25, sample rate 1)"),
    (sfp_algorithm.ADAPTER,
     dict(SUMMARY, engine=None, top_t=80, epsilon_local=7.12345),
     "sfp, d single, n=12,345, epsilon=2, T=80, local epsilon=7.123"),
    (iblt_algorithm.ADAPTER,
     dict(SUMMARY, epsilon=None, k_anonymity=7, batch_size=4321,
          matched_epsilon=2.0, matched_delta=1e-8),
     "iblt (7-anonymity, not DP), d single, n=12,345, m=4,321 (TrieHH's at "
     "epsilon=2, delta=1e-08)"),
    (iblt_algorithm.ADAPTER,
     dict(SUMMARY, k_anonymity=7, batch_size=4321, matched_epsilon=None),
     "iblt (7-anonymity, not DP), d single, n=12,345, m=4,321 (TrieHH's)"),
])
def test_summary_labels(adapter, values, label):
  assert adapter.label(values) == label


@pytest.mark.parametrize("adapter, config, parts", [
    (triehh_algorithm.ADAPTER, {"epsilon": 2.0, "delta": 1e-9, "theta": None},
     ["eps=2", "delta=1e-09"]),
    (triehh_algorithm.ADAPTER, {"epsilon": None, "delta": None, "theta": 7},
     ["theta=7"]),
    (sfp_algorithm.ADAPTER, {"epsilon": 4.0, "delta": None, "top_t": 80},
     ["eps=4", "T=80"]),
    (sfp_algorithm.ADAPTER, {"epsilon": 0.5, "delta": 2e-6, "top_t": 5},
     ["eps=0.5", "delta=2e-06", "T=5"]),
])
def test_cell_labels_name_the_privacy_given(adapter, config, parts):
  assert adapter.cell_label_parts(config) == parts
