"""Tests of triehh.data.datasets: data sets by their options, loaded once."""

import pytest

from triehh.data import datasets
from triehh.data import synthetic

DATA = {"dataset": "default", "setting": "single", "max_length": 10,
        "num_users": 20000}


def test_load_data_describes_the_default_population():
  data = datasets.load_data(DATA)
  assert data.population.num_users == 20000
  assert (data.name, data.setting) == ("default", "single")
  assert data.truth == synthetic.english_population(
      20000, seed=0).ground_truth()
  assert data.report is None and data.cache_path is None


def test_load_data_names_a_synthetic_population_by_its_table_and_law():
  data = datasets.load_data({"dataset": "synthetic", "setting": "single",
                             "max_length": 10, "num_users": 5000,
                             "zipf_exponent": 1.1})
  assert (data.name, data.setting) == ("synthetic:english:zipf1.1", "single")
  assert data.population.num_users == 5000


def test_an_unknown_dataset_is_named():
  with pytest.raises(ValueError, match="unknown dataset 'nope'"):
    datasets.load_data(dict(DATA, dataset="nope"))


def test_the_cache_loads_each_data_set_once_whatever_the_key_order():
  cache = datasets.DataCache()
  first = cache.get(DATA)
  again = cache.get(dict(reversed(list(DATA.items()))))
  assert again is first and cache.loads == 1
  assert cache.get(dict(DATA, num_users=10000)) is not first
  assert cache.loads == 2
