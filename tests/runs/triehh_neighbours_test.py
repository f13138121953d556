"""Tests of a TrieHH cell's adjacency and declared population size
(triehh.runs.algorithms.triehh): config keys, runs, records, checks."""

import pytest

from triehh.data import datasets
from triehh.runs import grid
from triehh.runs import records
from triehh.runs.algorithms import triehh as triehh_algorithm
from triehh.theory import mechanism

DATA = {"dataset": "default", "setting": "single", "num_users": 30000,
        "max_length": 10}

# config_key of triehh_config(DATA, **options) as computed before configs
# could hold adjacency and population_size: results.jsonl files written then
# must still resume. (The options are now the keyword values of a cell,
# ADAPTER.config's.)
KEYS_BEFORE = [
    ({"epsilon": 4.0}, "92d6b4f4abb69e58"),
    ({"epsilon": 4.0, "sampling": "poisson"}, "980a766b3c80d008"),
    ({"epsilon": 1.0, "delta": 1e-9, "sampling": "poisson", "counts": True},
     "46eae4891b7399bd"),
    ({"theta": 3, "batch_size": 100, "sampling": "fixed"},
     "f9b34c694d46ebdc"),
]


@pytest.mark.parametrize("options, key", KEYS_BEFORE)
def test_a_config_asking_for_neither_keeps_its_key(options, key):
  config = triehh_algorithm.ADAPTER.config(DATA, **options)
  assert records.config_key(config) == key
  assert records.config_key(triehh_algorithm.ADAPTER.config(
      DATA, adjacency=None, population_size=None, **options)) == key
  # ADD_OR_REMOVE_ONE: counts refuse REPLACE_ONE (their Gaussian is proven
  # for adding or removing a user).
  given = triehh_algorithm.ADAPTER.config(
      DATA, adjacency="add_or_remove_one", population_size=40000, **options)
  assert (given["adjacency"], given["population_size"]) == (
      "ADD_OR_REMOVE_ONE", 40000)
  assert records.config_key(given) != key


def test_sweep_cells_with_the_defaults_keep_their_keys():
  (cell,) = grid.expand(data=(DATA,), epsilons=(4.0,),
                        triehh_options={"sampling": "poisson"})
  assert cell.key == "980a766b3c80d008"
  (cell,) = grid.expand(data=(DATA,), epsilons=(4.0,),
                        triehh_options={"sampling": "poisson",
                                        "population_size": 30000})
  assert cell.config["population_size"] == 30000
  assert "declared n=30000" in cell.label


@pytest.mark.parametrize("options, error", [
    ({"adjacency": "NEIGHBOURS"}, "adjacency must be one of"),
    ({"population_size": 0}, "population_size"),
])
def test_bad_options_are_refused_naming_them(options, error):
  with pytest.raises(ValueError, match=error):
    triehh_algorithm.triehh_config(
        DATA, mechanism.Target(4.0, sampling="fixed", **options))


def _dataset(num_users: int = 3000) -> datasets.Dataset:
  data = dict(DATA, num_users=num_users, max_length=4)
  return datasets.load_data(data, None)


def test_a_run_passes_them_on_and_its_record_holds_them():
  data = _dataset()
  config = triehh_algorithm.triehh_config(
      dict(DATA, num_users=3000, max_length=4), mechanism.Target(
          4.0, sampling="poisson", adjacency="ADD_OR_REMOVE_ONE",
          population_size=3000))
  adapter = triehh_algorithm.ADAPTER
  result = adapter.call(data.population, config, seed=1)
  record = adapter.record(result, data, run=0, seed=1, config=config)
  assert record.adjacency == "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL"
  assert (record.n_source, record.population_size) == ("declared", 3000)
  assert records.RunRecord.from_json(record.to_json()) == record
  plain = triehh_algorithm.triehh_config(
      dict(DATA, num_users=3000, max_length=4),
      mechanism.Target(4.0, sampling="poisson"))
  record = adapter.record(adapter.call(data.population, plain, seed=1), data,
                          run=0, seed=1, config=plain)
  assert (record.adjacency, record.n_source, record.population_size) == (
      "REPLACE_SPECIAL", "data", None)


def test_the_check_refuses_an_uncovered_relation_before_any_run():
  data = _dataset()
  small = dict(DATA, num_users=3000, max_length=4)
  (cell,) = grid.expand(data=(small,), epsilons=(4.0,), triehh_options={
      "sampling": "poisson", "adjacency": "ADD_OR_REMOVE_ONE"})
  with pytest.raises(ValueError, match="population_size"):
    triehh_algorithm.ADAPTER.check(cell, data.population)
  # Counting splits the total delta = 1/n^2 of the declared n.
  (cell,) = grid.expand(data=(small,), epsilons=(4.0,), triehh_options={
      "sampling": "poisson", "counts": True, "population_size": 4000})
  triehh_algorithm.ADAPTER.check(cell, data.population)
  result = triehh_algorithm.ADAPTER.call(data.population, cell.config, 0)
  assert result.counts.delta == pytest.approx(1 / 4000**2)
