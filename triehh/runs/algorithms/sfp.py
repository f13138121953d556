"""SFP in a sweep: its cells, config, checks, run, record and labels.

An SFP cell is one central (epsilon, delta) and one T (``top_t``), with the
sketch and fragment options of ``experiments.run_sfp``. Its run is
:func:`triehh.baselines.sfp.sfp_discover`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import sfp as sfp_lib
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets
from triehh.runs import records as records_lib
from triehh.runs.algorithms import labels
from triehh.runs.algorithms import mechanism as mechanism_adapter

NAME = "sfp"
# Options of an SFP cell other than its data, privacy and T.
SFP_DEFAULTS = {"k": cms_lib.DEFAULT_K, "m": cms_lib.DEFAULT_M,
                "length": sfp_lib.DEFAULT_LENGTH, "fragment_alphabet": None,
                "word_budget": 0.0, "simulation": "sketch",
                "check_puzzle_hash": False}


def sfp_config(data: Mapping[str, Any], *, epsilon: float,
               delta: float | None = None, top_t: int = sfp_lib.DEFAULT_TOP_T,
               k: int = SFP_DEFAULTS["k"], m: int = SFP_DEFAULTS["m"],
               length: int = SFP_DEFAULTS["length"],
               fragment_alphabet: str | None = None, word_budget: float = 0.0,
               simulation: str = "sketch",
               check_puzzle_hash: bool = False,
               allow_delta_above_1_over_n: bool = False) -> dict:
  """An SFP run's ``config``: everything but the seed that changes it
  (``allow_delta_above_1_over_n`` a key only when True, so a config
  without it keeps its key)."""
  config = {"algorithm": NAME, "data": dict(data), "epsilon": epsilon,
            "delta": delta, "top_t": top_t, "k": k, "m": m,
            "length": length, "fragment_alphabet": fragment_alphabet,
            "word_budget": word_budget, "simulation": simulation,
            "check_puzzle_hash": check_puzzle_hash}
  if allow_delta_above_1_over_n:
    config["allow_delta_above_1_over_n"] = True
  return config


def sfp_target(config: Mapping) -> sfp_lib.SFPTarget:
  """The :class:`~triehh.baselines.sfp.SFPTarget` of a cell's ``config``
  (its ``simulation`` is a run option)."""
  return sfp_lib.SFPTarget(
      config["epsilon"], config["delta"], top_t=config["top_t"],
      k=config["k"], m=config["m"], length=config["length"],
      fragment_alphabet=config["fragment_alphabet"],
      word_budget=config["word_budget"],
      check_puzzle_hash=config["check_puzzle_hash"],
      stitching=config.get("stitching", sfp_lib.DEFAULT_STITCHING),
      allow_delta_above_1_over_n=config.get("allow_delta_above_1_over_n",
                                            False))


def call_sfp(population: population_lib.Population, config: Mapping,
             seed: int) -> sfp_lib.SFPResult:
  """``triehh.sfp_discover`` on ``population`` as ``config`` says."""
  return sfp_lib.sfp_discover(population, sfp_target(config), seed=seed,
                              simulation=config["simulation"])


def sfp_record(result, data: datasets.Dataset, run: int, seed: int,
               values: Mapping[str, float], config: Mapping,
               config_key: str = "") -> records_lib.RunRecord:
  """The results.jsonl record of one SFP run: the shuffled reports'
  guarantee, and SFP's own fields as its params."""
  p = result.params
  return records_lib.RunRecord(
      algorithm=NAME, dataset=data.name, setting=data.setting, n_users=p.n,
      run=run, seed=seed, epsilon=p.epsilon, delta=p.delta,
      has_guarantee=math.isfinite(p.epsilon),
      target_epsilon=config["epsilon"], target_delta=p.delta,
      **mechanism_adapter.guarantee_fields(result.guarantee),
      discovered=list(result.heavy_hitters),
      reported_counts=list(result.heavy_hitters.values()),
      metrics=dict(values), seconds=result.seconds, config=dict(config),
      config_key=config_key, params=records_lib.SFPParams(
          epsilon_local=p.epsilon_local, epsilon_fragment=p.epsilon_fragment,
          epsilon_word=p.epsilon_word, top_t=p.top_t, k=p.k, m=p.m,
          length=p.length, num_buckets=p.num_buckets,
          fragment_alphabet=p.fragment_alphabet, word_budget=p.word_budget,
          simulation=p.simulation, check_puzzle_hash=p.check_puzzle_hash,
          hash_seed=p.hash_seed,
          reports_per_position=list(result.reports_per_position),
          num_stitched=result.num_stitched,
          client_seconds=result.client_seconds,
          server_seconds=result.server_seconds))


class SFP:
  """The SFP adapter (:class:`triehh.runs.algorithms.Algorithm`)."""

  name = NAME
  # top_ts: SFP's T values; sfp_options: k, m, length, fragment_alphabet,
  # word_budget, simulation, check_puzzle_hash (SFP_DEFAULTS).
  grid_options = {"top_ts": (sfp_lib.DEFAULT_TOP_T,), "sfp_options": None}

  def grid_values(self, grid: Mapping[str, Any]) -> list[tuple[dict, dict]]:
    options = dict(SFP_DEFAULTS, **(grid["sfp_options"] or {}))
    return [(dict(epsilon=epsilon, delta=delta, top_t=t, **options), {})
            for epsilon, delta, t in itertools.product(
                grid["epsilons"], grid["deltas"], grid["top_ts"])]

  def config(self, data: Mapping[str, Any], **values: Any) -> dict:
    return sfp_config(data, **values)

  def uses_tensorflow(self, config: Mapping[str, Any]) -> bool:
    return False

  def check(self, cell, population: population_lib.Population,
            seeds: Sequence[int] = (0,)) -> None:
    """Its target, options, privacy calibration and sketches, as
    ``sfp_discover`` checks them (:func:`triehh.baselines.sfp.check`)."""
    del seeds  # the options do not depend on the seed
    sfp_lib.check(population, sfp_target(cell.config),
                  simulation=cell.config["simulation"])

  def call(self, population: population_lib.Population,
           config: Mapping[str, Any], seed: int,
           engine_options: Mapping[str, Any] | None = None
           ) -> sfp_lib.SFPResult:
    del engine_options  # SFP has no engine
    return call_sfp(population, config, seed)

  def record(self, result, dataset: datasets.Dataset, run: int, seed: int,
             config: Mapping[str, Any],
             engine_options: Mapping[str, Any] | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS, *, config_key: str = ""
             ) -> records_lib.RunRecord:
    del engine_options  # SFP has no engine
    values = metrics.precision_recall_f1(result.heavy_hitters, dataset.truth,
                                         ks)
    return sfp_record(result, dataset, run, seed, values, config, config_key)

  def cell_label_parts(self, config: Mapping[str, Any]) -> list[str]:
    return labels.privacy_parts(config) + [f"T={config['top_t']}"]

  def label(self, values: Mapping[str, Any]) -> str:
    parts = [NAME, f"{values['dataset']} {values['setting']}",
             f"n={values['n_users']:,}"]
    eps = values.get("epsilon")
    parts.append(f"epsilon={eps:g}" if eps is not None else "epsilon=?")
    if values.get("delta") is not None:
      parts.append(f"delta={values['delta']:.3g}")
    if values.get("top_t") is not None:
      parts.append(f"T={values['top_t']}")
    local = records_lib.as_number(values.get("epsilon_local"))
    if local is not None:
      parts.append(f"local epsilon={local:.3f}")
    return ", ".join(parts)


ADAPTER = SFP()
