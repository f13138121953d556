"""TrieHH in a sweep: its cells, config, checks, run, record and labels.

A TrieHH cell is one engine ("fast" or "tff") at one privacy target: an
(epsilon, delta) calibrated by Theorem 1, or theta, gamma and the batch size
given directly (then its cells do not vary with epsilons and deltas). Its
run is :func:`triehh.discovery.discover.discover`, as ``experiments.run_triehh``
calls it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from triehh.core import choices
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets
from triehh.discovery import discover as discover_lib
from triehh.runs import records as records_lib
from triehh.theory import policy

NAME = "triehh"
ENGINES = ("fast", "tff")
# Options of a TrieHH cell other than its engine, data and privacy, with the
# defaults of experiments.run_triehh.
TRIEHH_DEFAULTS = {"num_sub_rounds": 1, "max_num_prefixes": None,
                   "allow_no_guarantee": False, "sampling": "fixed",
                   "sampling_rate": None}


def triehh_config(data: Mapping[str, Any], *, engine: str = "fast",
                  epsilon: float | None = None, delta: float | None = None,
                  theta: int | None = None, gamma: float | None = None,
                  batch_size: int | None = None, num_sub_rounds: int = 1,
                  max_num_prefixes: int | None = None,
                  allow_no_guarantee: bool = False,
                  tff_secure_sum: bool | None = None,
                  tff_max_user_contribution: int | None = None,
                  sampling: str = "fixed",
                  sampling_rate: float | None = None,
                  word_choice: str = choices.PER_ROUND) -> dict:
  """A TrieHH run's ``config``: everything but the seed that changes it.

  ``tff_secure_sum`` is None for the fast engine (as run_triehh records it).
  ``sampling`` and ``sampling_rate`` are keys of Poisson configs only, so a
  fixed-size config (and its ``config_key``) is the one written before
  Poisson sampling existed; ``word_choice`` is a key only when not
  ``"per_round"``, for the same reason.
  """
  config = {"algorithm": NAME, "engine": engine, "data": dict(data),
            "epsilon": epsilon, "delta": delta, "theta": theta,
            "gamma": gamma, "batch_size": batch_size,
            "num_sub_rounds": num_sub_rounds,
            "max_num_prefixes": max_num_prefixes,
            "allow_no_guarantee": allow_no_guarantee,
            "tff_secure_sum": tff_secure_sum,
            "tff_max_user_contribution": tff_max_user_contribution}
  choices.check_sampling(sampling)
  if sampling != choices.FIXED:
    config.update(sampling=sampling, sampling_rate=sampling_rate)
  elif sampling_rate is not None:
    raise ValueError("sampling_rate is for sampling='poisson'")
  choices.check_word_choice(word_choice)
  if word_choice != choices.PER_ROUND:  # a key only when not the default
    config["word_choice"] = word_choice
  return config


def sampling_of(config: Mapping) -> dict:
  """``discover``'s sampling (and word-choice) arguments for a TrieHH
  ``config``."""
  return {"sampling": config.get("sampling", choices.FIXED),
          "sampling_rate": config.get("sampling_rate"),
          "word_choice": config.get("word_choice", choices.PER_ROUND)}


def check_triehh_population(n: int) -> None:
  """Refuses populations too small for TrieHH, in the user's terms."""
  if n < 2:
    raise ValueError(
        f"the population has {n} user{'s' if n != 1 else ''}: TrieHH needs "
        "at least 2 (and Theorem 1 many more; see experiments.theory_tables)"
        "; use a larger data set or --num_users")


def call_triehh(population: population_lib.Population, config: Mapping,
                seed: int, engine_options: Mapping | None = None):
  """One TrieHH run of ``config`` on ``population`` at ``seed``.

  A cell's run is always one run on a built population with its sampling
  named, so it goes straight to :func:`triehh.discovery.discover.run_once`
  (what ``triehh.discover`` ends with). ``engine_options`` are the engine's
  keyword arguments (TFF: secure_sum, workers, timeouts,
  max_user_contribution).
  """
  privacy = {name: config[name] for name in
             ("epsilon", "delta", "theta", "gamma", "batch_size")}
  population = population_lib.as_population(population,
                                            config["data"]["max_length"])
  return discover_lib.run_once(
      population, max_length=config["data"]["max_length"], seed=seed,
      engine=config["engine"], num_sub_rounds=config["num_sub_rounds"],
      max_num_prefixes=config["max_num_prefixes"],
      allow_no_guarantee=config["allow_no_guarantee"], **privacy,
      **sampling_of(config), **dict(engine_options or {}))


def triehh_record(result, data: datasets.Dataset, run: int, seed: int,
                  values: Mapping[str, float], config: Mapping,
                  engine_options: Mapping | None = None
                  ) -> records_lib.RunRecord:
  """The results.jsonl record of one TrieHH run."""
  options = engine_options or {}
  p = result.params
  return records_lib.RunRecord(
      algorithm=NAME, engine=result.engine, dataset=data.name,
      setting=data.setting, n_users=p.n, run=run, seed=seed,
      epsilon=p.epsilon, delta=p.delta, has_guarantee=p.has_guarantee,
      target_epsilon=p.target_epsilon, target_delta=p.target_delta,
      theta=p.theta, gamma=p.gamma, batch_size=p.batch_size,
      max_length=p.max_length, levels=p.levels,
      num_sub_rounds=p.num_sub_rounds, max_num_prefixes=p.max_num_prefixes,
      word_choice=p.word_choice, accounting=p.accounting, covers=p.covers,
      sampling=p.sampling, sampling_rate=p.sampling_rate,
      tff_secure_sum=options.get("secure_sum"),
      tff_max_user_contribution=options.get("max_user_contribution"),
      tff_workers=len(options.get("workers", [])) or None,
      rounds=result.rounds, votes_per_round=result.votes_per_round,
      num_participants=result.num_participants,
      discovered=list(result.heavy_hitters),
      counts=list(result.heavy_hitters.values()), metrics=dict(values),
      seconds=result.seconds, config=dict(config))


class TrieHH:
  """The TrieHH adapter (:class:`triehh.runs.algorithms.Algorithm`)."""

  name = NAME
  # engines: TrieHH's engines; theta: {"theta", "gamma", "batch_size"} for
  # cells given theta directly instead of calibrated from (epsilon, delta);
  # triehh_options: num_sub_rounds, max_num_prefixes, allow_no_guarantee,
  # sampling ("fixed" by default here; the drivers default to "poisson"),
  # sampling_rate; tff_options: the TFF engine's keyword arguments
  # (secure_sum, workers, connect_timeout, rpc_timeout,
  # max_user_contribution).
  grid_options = {"engines": ("fast",), "theta": None,
                  "triehh_options": None, "tff_options": None}

  def grid_values(self, grid: Mapping[str, Any]) -> list[tuple[dict, dict]]:
    for engine in grid["engines"]:
      if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose from "
                         f"{', '.join(ENGINES)}")
    options = dict(TRIEHH_DEFAULTS, **(grid["triehh_options"] or {}))
    tff = dict(grid["tff_options"] or {})
    theta = grid["theta"]
    privacy = ([dict(theta)] if theta else
               [{"epsilon": e, "delta": d}
                for e, d in itertools.product(grid["epsilons"],
                                              grid["deltas"])])
    out = []
    for engine, target in itertools.product(grid["engines"], privacy):
      engine_options = tff if engine == "tff" else {}
      values = dict(engine=engine, **target, **options,
                    tff_secure_sum=engine_options.get("secure_sum"),
                    tff_max_user_contribution=engine_options.get(
                        "max_user_contribution"))
      out.append((values, engine_options))
    return out

  def config(self, data: Mapping[str, Any], **values: Any) -> dict:
    return triehh_config(data, **values)

  def uses_tensorflow(self, config: Mapping[str, Any]) -> bool:
    return config.get("engine") == "tff"

  def check(self, cell, population: population_lib.Population,
            seeds: Sequence[int] = (0,)) -> None:
    """The population's size and Theorem 1's range or calibration
    (:func:`triehh.theory.policy.resolve_params`, as ``discover`` resolves
    them)."""
    del seeds  # the parameters do not depend on the seed
    c = cell.config
    check_triehh_population(population.num_users)
    policy.resolve_params(
        population.num_users, c["data"]["max_length"], epsilon=c["epsilon"],
        delta=c["delta"], theta=c["theta"], gamma=c["gamma"],
        batch_size=c["batch_size"], num_sub_rounds=c["num_sub_rounds"],
        max_num_prefixes=c["max_num_prefixes"],
        allow_no_guarantee=c["allow_no_guarantee"],
        single_word=population.is_single_word, **sampling_of(c))

  def call(self, population: population_lib.Population,
           config: Mapping[str, Any], seed: int,
           engine_options: Mapping[str, Any] | None = None):
    """:func:`call_triehh`, on a population TrieHH can run on."""
    check_triehh_population(population.num_users)
    return call_triehh(population, config, seed, engine_options)

  def record(self, result, dataset: datasets.Dataset, run: int, seed: int,
             config: Mapping[str, Any],
             engine_options: Mapping[str, Any] | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS
             ) -> records_lib.RunRecord:
    values = metrics.precision_recall_f1(result.heavy_hitters,
                                         dataset.truth, ks)
    return triehh_record(result, dataset, run, seed, values, config,
                         engine_options)

  def cell_label_parts(self, config: Mapping[str, Any]) -> list[str]:
    parts = []
    if config.get("epsilon") is not None:
      parts.append(f"eps={config['epsilon']:g}")
    if config.get("delta") is not None:
      parts.append(f"delta={config['delta']:g}")
    if config.get("theta") is not None:
      parts.append(f"theta={config['theta']}")
    if config.get("sampling") == choices.POISSON:
      rate = config.get("sampling_rate")
      parts.append("poisson" + (f" q={rate:g}" if rate is not None else ""))
    return parts

  def label(self, values: Mapping[str, Any]) -> str:
    parts = [NAME]
    if values.get("engine") is not None:
      parts[0] += f" ({values['engine']} engine)"
    parts.append(f"{values['dataset']} {values['setting']}")
    parts.append(f"n={values['n_users']:,}")
    eps = values.get("epsilon")
    parts.append(f"epsilon={eps:g}" if eps is not None else "epsilon=?")
    if values.get("delta") is not None:
      parts.append(f"delta={values['delta']:.3g}")
    theta, m = values.get("theta"), values.get("batch_size")
    if theta is not None:
      if values.get("sampling") == choices.POISSON:
        parts.append(f"theta={theta}, poisson q="
                     f"{values.get('sampling_rate'):.4g} (m~{m})")
      else:
        parts.append(f"theta={theta}, m={m}")
    return ", ".join(parts)


ADAPTER = TrieHH()
