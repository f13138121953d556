"""Tests of triehh.data.datasets: the registry of data sets, their options
and checks, loading them once, and finding the Sentiment140 sample."""

import os
import re

import numpy as np
import pytest

from triehh.data import datasets
from triehh.data import loader
from triehh.data import paper_populations
from triehh.data import settings
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


def test_the_default_population_is_cached_and_read_back_identical(
    tmp_path, monkeypatch):
  cache = str(tmp_path)
  built = datasets.load_data(DATA, cache)
  assert built.cache_path is None  # built and stored
  assert [n for n in os.listdir(cache) if n.startswith("population-")]
  monkeypatch.setattr(synthetic, "english_population", None)  # not drawn
  read = datasets.load_data(DATA, cache)
  assert read.cache_path and os.path.dirname(read.cache_path) == cache
  for name in ("codes", "word_lengths", "user_word"):
    np.testing.assert_array_equal(getattr(read.population, name),
                                  getattr(built.population, name))
  assert list(read.population.vocabulary) == list(built.population.vocabulary)
  assert dict(read.truth) == dict(built.truth)
  assert list(read.truth) == list(built.truth)


def test_the_default_population_cache_key_holds_options_and_code(
    tmp_path, monkeypatch):
  cache = str(tmp_path)
  datasets.load_data(DATA, cache)
  datasets.load_data(dict(DATA, num_users=10_000), cache)
  datasets.load_data(dict(DATA, max_length=9), cache)
  monkeypatch.setattr(synthetic, "word_list_version", lambda: "0.0")
  datasets.load_data(DATA, cache)
  assert len([n for n in os.listdir(cache)
              if n.startswith("population-")]) == 4
  # Above the size limit, nothing is stored.
  monkeypatch.setattr(datasets, "MAX_CACHED_DEFAULT_USERS", 15_000)
  assert datasets.load_data(DATA, cache).cache_path is None
  datasets.load_data(dict(DATA, max_length=8), cache)
  assert len([n for n in os.listdir(cache)
              if n.startswith("population-")]) == 4


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


def test_the_registry_says_what_each_data_set_reads_and_holds():
  assert list(datasets.DATASETS) == ["default", "sentiment140", "file",
                                     "synthetic", "paper", "ingested"]
  # The data sets whose options a loader.DataSpec reads.
  assert [n for n, k in datasets.DATASETS.items()
          if k.load is datasets.DATASETS["file"].load] == list(
              loader.FILE_DATASETS)
  assert [n for n, k in datasets.DATASETS.items() if k.needs_file] == [
      "sentiment140", "file", "ingested"]
  # An ingested folder holds every setting, with no option but its path:
  # the others were the ingestion's.
  assert datasets.DATASETS["ingested"].settings == settings.SETTINGS
  assert not any(datasets.DATASETS["ingested"].takes(option, "oov")
                 for option in datasets.OPTIONS if option != "data_path")
  assert not datasets.DATASETS["default"].file
  assert datasets.DATASETS["synthetic"].settings == ("single",)
  assert datasets.DATASETS["paper"].settings == settings.SETTINGS
  assert datasets.DATASETS["file"].takes("dictionary_path", "oov")
  assert not datasets.DATASETS["file"].takes("dictionary_path", "single")
  assert not datasets.DATASETS["paper"].takes("oov_num_users", "oov")


def test_options_are_the_records_config_data():
  values = {"max_length": 10, "num_users": None, "data_path": "t.tsv",
            "zipf_exponent": 1.1, "data_seed": 3}
  assert datasets.options("default", "single", values) == {
      "dataset": "default", "setting": "single", "max_length": 10,
      "num_users": synthetic.DEFAULT_NUM_USERS}
  synth = datasets.options("synthetic", "single", values)
  assert list(synth) == ["dataset", "setting", "max_length", "data_path",
                         "num_users", "zipf_exponent", "data_seed"]
  assert synth["data_path"] == os.path.abspath("t.tsv")
  oov = datasets.options("sentiment140", "oov", dict(values, data_path="s"))
  assert list(oov) == ["dataset", "setting", "max_length", "data_path",
                       "data_format", "data_encoding", "min_word_length",
                       "tokenizer", "dictionary_path", "oov_num_users",
                       "data_seed"]
  assert (oov["tokenizer"], oov["data_seed"]) == ("paper", 3)
  file = datasets.options("file", "single", {"max_length": 9,
                                             "data_path": "u.csv"})
  assert (file["user_column"], file["text_column"]) == ("user", "text")
  assert "tokenizer" not in file and "data_seed" not in file
  # paper: n is the setting's own unless given.
  assert datasets.options("paper", "oov", {"max_length": 9}) == (
      paper_populations.data_options("oov"))
  assert datasets.options("paper", "multi", {
      "max_length": 9, "num_users": 50, "data_path": "s", "data_seed": 4}) == (
          paper_populations.data_options("multi", num_users=50,
                                         data_path="s", seed=4))


@pytest.mark.parametrize("names, given, message", [
    (("default", "single"), {"data_path": "x.csv"}, "data_path=x.csv "
     "given without dataset: say how to read it: dataset=sentiment140 "
     "(the Sentiment140 layout), dataset=file"),
    (("sentiment140", "single"), {}, "dataset=sentiment140 needs "
     "data_path"),
    (("default", "multi"), {}, "setting=multi needs a text data set "
     "(dataset=sentiment140, file, paper or ingested)"),
    (("default", "single"), {"user_column": "u"}, "user_column applies to "
     "dataset=file only, not dataset=default"),
    (("default", "single"), {"num_users": 5, "oov_num_users": 5},
     "oov_num_users applies to setting=oov only"),
    (("paper", "oov"), {"oov_num_users": 5}, "oov_num_users applies to "
     "dataset=sentiment140 or file only, not dataset=paper"),
    (("file", "single"), {"data_path": "u.csv", "data_seed": 1},
     "data_seed applies to dataset=synthetic or paper and "
     "setting=oov only"),
])
def test_one_data_set_and_setting_are_checked_against_the_options(
    names, given, message):
  chosen = names[0] != "default" or "data_path" not in given
  with pytest.raises(ValueError, match=re.escape(message)):
    datasets.check_options([names[0]], [names[1]], given, chosen=chosen)


def test_a_default_data_set_named_with_a_file_is_refused():
  with pytest.raises(ValueError, match=re.escape(
      "dataset=default reads no file; drop data_path or choose "
      "dataset=sentiment140, file, synthetic, paper or ingested")):
    datasets.check_options(["default"], ["single"], {"data_path": "x"})


def test_lists_of_data_sets_and_settings_give_their_pairs():
  given = {"data_path": "u.csv", "data_seed": 2, "zipf_exponent": 1.5}
  assert datasets.check_options(
      ["synthetic", "file"], ["single", "oov"], given, plural=True) == [
          ("synthetic", "single"), ("file", "single"), ("file", "oov")]
  assert datasets.check_options(["paper"], ["oov"], {"num_users": 9}) == [
      ("paper", "oov")]
  with pytest.raises(ValueError, match=re.escape(
      "settings=oov applies to no data set of datasets=default (oov and "
      "multi need text data)")):
    datasets.check_options(["default"], ["single", "oov"], {}, plural=True)
  with pytest.raises(ValueError, match=re.escape(
      "zipf_exponent applies to datasets=synthetic only, not "
      "datasets=default,file")):
    datasets.check_options(["default", "file"], ["single"],
                           {"data_path": "u", "zipf_exponent": 1.1},
                           plural=True)
  with pytest.raises(ValueError, match="unknown dataset 'csv'"):
    datasets.check_options(["csv"], ["single"], {})


def test_the_sentiment140_sample_is_explicit_then_the_environment(
    tmp_path, monkeypatch):
  here, there = tmp_path / "here.csv", tmp_path / "there.csv"
  here.write_text("")
  there.write_text("")
  monkeypatch.setenv(datasets.SENTIMENT140_ENV, str(there))
  assert datasets.sentiment140_sample(str(here)) == str(here)
  assert datasets.sentiment140_sample() == str(there)
  assert datasets.sentiment140_sample(str(tmp_path / "missing")) is None
  monkeypatch.setenv(datasets.SENTIMENT140_ENV, str(tmp_path / "gone"))
  assert datasets.sentiment140_sample() is None
  monkeypatch.delenv(datasets.SENTIMENT140_ENV)
  assert datasets.sentiment140_sample() == (
      datasets.SENTIMENT140_SAMPLE
      if os.path.exists(datasets.SENTIMENT140_SAMPLE) else None)
