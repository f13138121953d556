"""Partition selection in a sweep: its cells, config, checks, run, record and
labels.

A partition-selection cell (algorithm ``"partition_selection"``) is one
central (epsilon, delta), one pipeline_dp strategy and one
``max_partitions_contributed``; its run is
:func:`triehh.baselines.partition_selection.select_words`. Its record
carries the guarantee as TrieHH's does: (epsilon, delta), ``adjacency``
(``ADD_OR_REMOVE_ONE``), ``covers`` (both directions) and ``privacy``
(central). The noise is python-dp's, not seeded: a run's seed only fixes
the words several-word users contribute.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from triehh.baselines import partition_selection as ps_lib
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets
from triehh.runs import records as records_lib
from triehh.runs.algorithms import labels

NAME = "partition_selection"
# Options of a cell other than its data, privacy and strategy.
PARTITION_SELECTION_DEFAULTS = {"max_partitions_contributed": 1}


def partition_selection_config(
    data: Mapping[str, Any], *, epsilon: float, delta: float | None = None,
    strategy: str = ps_lib.DEFAULT_STRATEGY,
    max_partitions_contributed: int = 1,
    population_size: int | None = None,
    allow_delta_above_1_over_n: bool = False) -> dict:
  """A partition-selection run's ``config``: everything but the seed that
  changes it (delta None: ``1/n^2``, of the declared public
  ``population_size`` if given, else of the population's own n).
  ``population_size`` is a key only when given, so a config that declares
  none keeps the key it had before it could; so is
  ``allow_delta_above_1_over_n``, only when True."""
  config = {"algorithm": NAME, "data": dict(data), "epsilon": epsilon,
            "delta": delta, "strategy": strategy,
            "max_partitions_contributed": max_partitions_contributed}
  if population_size is not None:
    config["population_size"] = population_size
  if allow_delta_above_1_over_n:
    config["allow_delta_above_1_over_n"] = True
  return config


def partition_selection_target(config: Mapping
                               ) -> ps_lib.PartitionSelectionTarget:
  """The :class:`~triehh.baselines.partition_selection.
  PartitionSelectionTarget` of a cell's ``config``."""
  return ps_lib.PartitionSelectionTarget(
      config["epsilon"], config["delta"], strategy=config["strategy"],
      max_partitions_contributed=config["max_partitions_contributed"],
      population_size=config.get("population_size"),
      allow_delta_above_1_over_n=config.get("allow_delta_above_1_over_n",
                                            False))


def call_partition_selection(population: population_lib.Population,
                             config: Mapping, seed: int
                             ) -> ps_lib.PartitionSelectionResult:
  """``select_words`` on ``population`` as ``config`` says."""
  return ps_lib.select_words(population, partition_selection_target(config),
                             seed=seed)


def partition_selection_record(result: ps_lib.PartitionSelectionResult,
                               data: datasets.Dataset, run: int, seed: int,
                               values: Mapping[str, float], config: Mapping,
                               config_key: str = ""
                               ) -> records_lib.RunRecord:
  """The results.jsonl record of one partition-selection run: its
  guarantee, and its strategy and input as its params
  (:class:`~triehh.runs.schema.PartitionSelectionParams`); ``values``
  without precision@K and F1@K (:func:`triehh.core.metrics.set_metrics`)."""
  p = result.params
  return records_lib.RunRecord(
      algorithm=NAME, dataset=data.name, setting=data.setting, n_users=p.n,
      run=run, seed=seed, epsilon=p.epsilon, delta=p.delta,
      target_epsilon=config["epsilon"], target_delta=p.delta,
      accounting=p.accounting, covers=p.covers, adjacency=p.adjacency,
      n_source=p.n_source, discovered=list(result.words), reported_counts=[],
      metrics=metrics.set_metrics(values), seconds=result.seconds,
      config=dict(config),
      config_key=config_key, params=records_lib.PartitionSelectionParams(
          privacy=p.privacy, strategy=p.strategy,
          max_partitions_contributed=p.max_partitions_contributed,
          num_rows=p.num_rows, num_candidates=p.num_candidates))


def score(result: ps_lib.PartitionSelectionResult,
          truth: Mapping[str, float],
          ks: Sequence[int] = metrics.DEFAULT_KS) -> dict[str, float]:
  """The metrics of a run's set (:func:`triehh.core.metrics.set_metrics`:
  no top-K precision of its alphabetical order)."""
  return metrics.set_metrics(
      metrics.precision_recall_f1(list(result.words), truth, ks))


class PartitionSelection:
  """The adapter (:class:`triehh.runs.algorithms.Algorithm`)."""

  name = NAME
  # partition_strategies: pipeline_dp strategies (names of
  # triehh.baselines.partition_selection.STRATEGIES); partition_options:
  # max_partitions_contributed (PARTITION_SELECTION_DEFAULTS).
  grid_options = {"partition_strategies": (ps_lib.DEFAULT_STRATEGY,),
                  "partition_options": None}

  def grid_values(self, grid: Mapping[str, Any]) -> list[tuple[dict, dict]]:
    options = dict(PARTITION_SELECTION_DEFAULTS,
                   **(grid["partition_options"] or {}))
    return [(dict(epsilon=epsilon, delta=delta, strategy=strategy,
                  **options), {})
            for epsilon, delta, strategy in itertools.product(
                grid["epsilons"], grid["deltas"],
                grid["partition_strategies"])]

  def config(self, data: Mapping[str, Any], **values: Any) -> dict:
    return partition_selection_config(data, **values)

  def uses_tensorflow(self, config: Mapping[str, Any]) -> bool:
    return False

  def check(self, cell, population: population_lib.Population,
            seeds: Sequence[int] = (0,)) -> None:
    """Its options, as ``select_words`` checks them."""
    del seeds  # the options do not depend on the seed
    ps_lib.check(population, partition_selection_target(cell.config))

  def call(self, population: population_lib.Population,
           config: Mapping[str, Any], seed: int,
           engine_options: Mapping[str, Any] | None = None
           ) -> ps_lib.PartitionSelectionResult:
    del engine_options  # no engine
    return call_partition_selection(population, config, seed)

  def record(self, result, dataset: datasets.Dataset, run: int, seed: int,
             config: Mapping[str, Any],
             engine_options: Mapping[str, Any] | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS, *, config_key: str = ""
             ) -> records_lib.RunRecord:
    del engine_options  # no engine
    return partition_selection_record(
        result, dataset, run, seed, score(result, dataset.truth, ks), config,
        config_key)

  def cell_label_parts(self, config: Mapping[str, Any]) -> list[str]:
    declared = ([f"declared n={config['population_size']}"]
                if config.get("population_size") is not None else [])
    return labels.privacy_parts(config) + [
        config["strategy"],
        f"k={config['max_partitions_contributed']}"] + declared

  def label(self, values: Mapping[str, Any]) -> str:
    parts = [NAME, f"{values['dataset']} {values['setting']}",
             f"n={values['n_users']:,}"]
    eps = values.get("epsilon")
    parts.append(f"epsilon={eps:g}" if eps is not None else "epsilon=?")
    if values.get("delta") is not None:
      parts.append(f"delta={values['delta']:.3g}")
    k = values.get("max_partitions_contributed")
    parts.append(f"{values.get('strategy')}, at most {k} "
                 f"word{'' if k == 1 else 's'} per user")
    if values.get("adjacency"):
      parts.append(values["adjacency"])
    return ", ".join(parts)


ADAPTER = PartitionSelection()
