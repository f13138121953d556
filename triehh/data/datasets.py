"""Data sets by their options: loading one, and keeping it once loaded.

A data set is described by its options (the records' ``config["data"]``):
:func:`load_data` builds the population they describe, with its ground
truth; :class:`DataCache` loads each one once per process and encodes its
population once (file data sets are also cached on disk across processes
by :mod:`triehh.data.loader`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

from triehh.core import population as population_lib
from triehh.data import loader
from triehh.data import paper_populations
from triehh.data import report as report_lib
from triehh.data import settings
from triehh.data import synthetic
from triehh.data import tokenize


@dataclasses.dataclass
class Dataset:
  """A population with its ground truth and a description.

  ``report`` (rows read and skipped) and ``info`` (setting facts) are set
  for data read from a file; ``cache_path`` when it came from the cache.
  """

  population: population_lib.Population
  truth: dict[str, float]
  name: str
  setting: str
  report: report_lib.LoadReport | None = None
  info: dict = dataclasses.field(default_factory=dict)
  cache_path: str | None = None


def load_data(options: Mapping[str, Any], cache_dir: str | None = None
              ) -> Dataset:
  """The data set ``options`` describe (a record's ``config["data"]``).

  ``options`` holds ``dataset`` (default, synthetic, sentiment140 or file),
  ``setting`` and ``max_length``, and the options of that data set as
  ``experiments.common.data_options`` writes them; ``cache_dir`` caches
  populations built from files (None: no cache).
  """
  dataset = options["dataset"]
  max_length = options["max_length"]
  if dataset == "default":
    pop = synthetic.english_population(options["num_users"], seed=0,
                                       max_length=max_length)
    return Dataset(pop, pop.ground_truth(), "default", "single")
  if dataset == "synthetic":
    path = options.get("data_path")
    exponent = options.get("zipf_exponent")
    pop = synthetic.scale_population(
        options["num_users"], table_path=path, zipf_exponent=exponent,
        seed=options.get("data_seed", 0), max_length=max_length)
    source = os.path.basename(path) if path else "english"
    law = f"zipf{exponent:g}" if exponent else "weights"
    return Dataset(pop, pop.ground_truth(), f"synthetic:{source}:{law}",
                   "single")
  if dataset == "paper":
    paper = paper_populations.from_options(options, cache_dir)
    return Dataset(paper.population, paper.truth, paper.name, paper.setting,
                   info=paper.info)
  if dataset in loader.DATASETS:
    spec = loader.DataSpec(
        options["data_path"], dataset=dataset, setting=options["setting"],
        file_format=options.get("data_format", "auto"),
        user_column=options.get("user_column", "user"),
        text_column=options.get("text_column", "text"),
        encoding=options.get("data_encoding"),
        tokenizer=options.get("tokenizer", settings.DEFAULT_TOKENIZER),
        min_length=options.get("min_word_length",
                               tokenize.DEFAULT_MIN_LENGTH),
        max_length=max_length,
        dictionary_path=options.get("dictionary_path"),
        oov_num_users=options.get("oov_num_users",
                                  settings.DEFAULT_OOV_NUM_USERS),
        seed=options.get("data_seed", 0))
    loaded = loader.load(spec, cache_dir=cache_dir)
    return Dataset(loaded.population, loaded.truth, loaded.name,
                   loaded.setting, report=loaded.report, info=loaded.info,
                   cache_path=loaded.cache_path if loaded.from_cache
                   else None)
  raise ValueError(f"unknown dataset {dataset!r}")


def _canonical(value: Any) -> str:
  return json.dumps(value, sort_keys=True, separators=(",", ":"))


class DataCache:
  """Loads each data set once and encodes its population once."""

  def __init__(self, cache_dir: str | None = None):
    self.cache_dir = cache_dir
    self._loaded: dict[str, Dataset] = {}
    self.loads = 0

  def get(self, options: Mapping[str, Any]) -> Dataset:
    name = _canonical(options)
    if name not in self._loaded:
      dataset = load_data(options, self.cache_dir)
      dataset.population.encode()
      self._loaded[name] = dataset
      self.loads += 1
    return self._loaded[name]
