"""TrieHH in a sweep: its cells, config, checks, run, record and labels.

A TrieHH cell is one engine (a name of :mod:`triehh.engines.registry`,
"fast" by default) at one privacy target: an
(epsilon, delta) calibrated by Theorem 1, or theta, gamma and the batch size
given directly (then its cells do not vary with epsilons and deltas). Its
run is :func:`triehh.discovery.discover.discover`, as ``experiments.run_triehh``
calls it. With ``counts`` a cell also counts the discovered words
(``docs/counts.md``): its (epsilon, delta) is the total of both phases, and
its cells vary with ``count_shares``. A cell may ask for a neighbouring
relation (``adjacency``) and declare a public number of users
(``population_size``), as ``run_once`` takes them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from triehh.core import choices
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets
from triehh.discovery import counts as counts_lib
from triehh.discovery import discover as discover_lib
from triehh.engines import registry
from triehh.runs import count_metrics
from triehh.runs import records as records_lib
from triehh.runs.algorithms import labels
from triehh.theory import mechanism
from triehh.theory import policy

NAME = "triehh"
# Options of a TrieHH cell other than its engine, data and privacy, with the
# defaults of experiments.run_triehh.
TRIEHH_DEFAULTS = {"num_sub_rounds": 1, "max_num_prefixes": None,
                   "allow_no_guarantee": False, "sampling": "fixed",
                   "sampling_rate": None, "counts": False,
                   "count_share": None, "count_sample_rate": None,
                   "adjacency": None, "population_size": None}


def _check_cell_privacy(privacy) -> None:
  """Refuses a privacy a cell's config cannot hold: another type, an
  unnamed sampling, a schedule."""
  if not isinstance(privacy, (mechanism.Target, mechanism.Mechanism)):
    raise TypeError("privacy must be a triehh.Target or a triehh.Mechanism, "
                    f"got {privacy!r:.80}")
  if privacy.sampling is None:
    raise ValueError("name the cell's sampling: sampling='fixed' or "
                     "'poisson' (its config says which)")
  if privacy.schedule is not None:
    raise ValueError("a sweep cell's config cannot hold a schedule")


def triehh_config(data: Mapping[str, Any],
                  privacy: mechanism.Target | mechanism.Mechanism, *,
                  engine: str = registry.FAST,
                  counting: counts_lib.Counting | None = None,
                  tff_secure_sum: bool | None = None,
                  tff_max_user_contribution: int | None = None) -> dict:
  """A TrieHH run's ``config``: everything but the seed that changes it.

  ``privacy`` is the cell's :class:`~triehh.theory.mechanism.Target` or
  :class:`~triehh.theory.mechanism.Mechanism`, its sampling named (a
  schedule is refused: a config holds no arrays); ``counting``, if given,
  the protected counts of the words found within its (then total) target.
  ``tff_secure_sum`` is None for an engine without TFF options (as
  run_triehh records it).

  The keys are those of the configs written before the privacy was typed,
  so that results files resume: ``sampling`` and ``sampling_rate`` are
  keys of Poisson configs only, so a fixed-size config (and its
  ``config_key``) is the one written before Poisson sampling existed;
  ``word_choice`` is a key only when not ``"per_round"``, for the same
  reason; ``counts``, ``count_share`` and ``count_sample_rate`` only with
  ``counting``; ``adjacency`` (its name,
  :class:`~triehh.theory.adjacency.Adjacency`) and ``population_size``
  only when given, so a config that asks for neither keeps the key it had
  before they existed. :func:`privacy_of` reads the privacy back.
  """
  _check_cell_privacy(privacy)
  given = isinstance(privacy, mechanism.Mechanism)
  config = {"algorithm": NAME, "engine": engine, "data": dict(data),
            "epsilon": None if given else privacy.epsilon,
            "delta": privacy.delta, "theta": privacy.theta,
            "gamma": privacy.gamma if given else None,
            "batch_size": privacy.batch_size if given else None,
            "num_sub_rounds": privacy.num_sub_rounds,
            "max_num_prefixes": privacy.max_num_prefixes,
            "allow_no_guarantee": privacy.allow_no_guarantee,
            "tff_secure_sum": tff_secure_sum,
            "tff_max_user_contribution": tff_max_user_contribution}
  if privacy.sampling != choices.FIXED:
    config.update(sampling=privacy.sampling,
                  sampling_rate=privacy.sampling_rate if given else None)
  if privacy.word_choice != choices.PER_ROUND:  # a key only when not default
    config["word_choice"] = privacy.word_choice
  if counting is not None:
    discover_lib.check_counting(
        True, counting.share, counting.sample_rate,
        epsilon=None if given else privacy.epsilon,
        allow_no_guarantee=privacy.allow_no_guarantee,
        adjacency=privacy.adjacency)
    config.update(counts=True, count_share=counting.share,
                  count_sample_rate=counting.sample_rate)
  if privacy.adjacency is not None:
    config["adjacency"] = privacy.adjacency.value
  if privacy.population_size is not None:
    config["population_size"] = privacy.population_size
  if privacy.allow_delta_above_1_over_n:  # a key only when opted in
    config["allow_delta_above_1_over_n"] = True
  return config


# The keywords of a cell's values (grid_values, a driver's flags) that
# make its privacy (mechanism.from_options), and the config's other keys.
_PRIVACY_OPTIONS = frozenset({
    "epsilon", "delta", "theta", "gamma", "batch_size", "sampling_rate",
    "sampling", "adjacency", "population_size", "num_sub_rounds",
    "max_num_prefixes", "word_choice", "allow_no_guarantee",
    "allow_delta_above_1_over_n"})
_COUNTING_OPTIONS = ("counts", "count_share", "count_sample_rate")
_TFF_OPTIONS = ("tff_secure_sum", "tff_max_user_contribution")


def config_of_values(data: Mapping[str, Any], values: Mapping[str, Any]
                     ) -> dict:
  """:func:`triehh_config` of keyword-style values (a cell's
  :meth:`TrieHH.grid_values`, a driver's flags): the engine, the
  privacy's options (:func:`triehh.theory.mechanism.from_options`;
  sampling ``"fixed"`` when not named, as a config without the key),
  ``counts``, ``count_share`` and ``count_sample_rate`` (checked as
  ``discover`` checks them), and the TFF options recorded.

  Raises:
    TypeError: for a key that is none of those.
  """
  unknown = (set(values) - _PRIVACY_OPTIONS - set(_COUNTING_OPTIONS)
             - set(_TFF_OPTIONS) - {"engine"})
  if unknown:
    raise TypeError(f"a TrieHH config takes no {', '.join(sorted(unknown))}")
  options = {name: values[name] for name in _PRIVACY_OPTIONS
             if name in values}
  options.setdefault("sampling", choices.FIXED)
  counts, share, rate = (values.get(name) for name in _COUNTING_OPTIONS)
  request = discover_lib.check_counting(
      False if counts is None else counts, share, rate,
      epsilon=options.get("epsilon"),
      allow_no_guarantee=options.get("allow_no_guarantee") or False,
      adjacency=options.get("adjacency"))
  return triehh_config(
      data, mechanism.from_options(options),
      engine=values.get("engine", registry.FAST),
      counting=None if request is None else counts_lib.Counting(*request),
      **{name: values.get(name) for name in _TFF_OPTIONS})


def check_triehh_population(n: int) -> None:
  """Refuses populations too small for TrieHH, in the user's terms."""
  if n < 2:
    raise ValueError(
        f"the population has {n} user{'s' if n != 1 else ''}: TrieHH needs "
        "at least 2 (and Theorem 1 many more; see experiments.theory_tables)"
        "; use a larger data set or num_users")


def call_triehh(population: population_lib.Population, config: Mapping,
                seed: int, engine_options: Mapping | None = None):
  """One TrieHH run of ``config`` on ``population`` at ``seed``.

  A cell's run is always one run on a built population with its sampling
  named: its privacy (:func:`privacy_of`) goes straight to
  :func:`triehh.discovery.discover.run_once` (what ``triehh.discover``
  ends with, resolving it with :func:`triehh.theory.policy.resolve`), or
  to :func:`~triehh.discovery.discover.run_with_counts` when the cell
  counts its words (:func:`counting_of`); the run's ``max_length`` is the
  population's, built from ``config["data"]``. ``engine_options`` are the
  engine's keyword arguments (TFF: secure_sum, workers, timeouts,
  max_user_contribution).
  """
  privacy = privacy_of(config)
  options = dict(seed=seed, engine=config["engine"],
                 **dict(engine_options or {}))
  counting = counting_of(config)
  if counting is not None:  # the budget split, the run, then the counts
    return discover_lib.run_with_counts(population, privacy,
                                        counting=counting, **options)
  return discover_lib.run_once(population, privacy, **options)


def privacy_of(config: Mapping) -> mechanism.Target | mechanism.Mechanism:
  """The typed privacy of a TrieHH ``config`` (its sampling named: a
  config without the key is fixed-size), as :func:`triehh_config` wrote
  it."""
  return mechanism.from_options({
      **{name: config.get(name) for name in _PRIVACY_OPTIONS},
      "sampling": config.get("sampling", choices.FIXED)})


def counting_of(config: Mapping) -> counts_lib.Counting | None:
  """The protected counts a TrieHH ``config`` asks for, or None."""
  if not config.get("counts"):
    return None
  return counts_lib.Counting(config["count_share"],
                             config["count_sample_rate"])


def triehh_record(result, data: datasets.Dataset, run: int, seed: int,
                  values: Mapping[str, float], config: Mapping,
                  engine_options: Mapping | None = None, config_key: str = ""
                  ) -> records_lib.RunRecord:
  """The results.jsonl record of one TrieHH run (with its protected counts,
  their metrics and the total guarantee when it counted): its guarantee
  and results, and TrieHH's own fields as its params
  (:class:`~triehh.runs.schema.TrieHHParams`)."""
  options = engine_options or {}
  p = result.params
  values = dict(values)
  guarantee = dict(epsilon=p.epsilon, delta=p.delta,
                   target_epsilon=p.target_epsilon,
                   target_delta=p.target_delta)
  params = records_lib.TrieHHParams(
      theta=p.theta, gamma=p.gamma, batch_size=p.batch_size,
      max_length=p.max_length, levels=p.levels,
      num_sub_rounds=p.num_sub_rounds, max_num_prefixes=p.max_num_prefixes,
      word_choice=p.word_choice, population_size=p.population_size,
      sampling=p.sampling, sampling_rate=p.sampling_rate,
      tff_secure_sum=options.get("secure_sum"),
      tff_max_user_contribution=options.get("max_user_contribution"),
      tff_workers=len(options.get("workers", [])) or None,
      votes_per_round=result.votes_per_round)
  if result.counts is not None:
    values.update(count_metrics.protected_count_metrics(
        result.counts, data.truth, count_metrics.ks_of(values)))
    guarantee = counted(result, config, params)
  return records_lib.RunRecord(
      algorithm=NAME, engine=result.engine, dataset=data.name,
      setting=data.setting, n_users=p.n, run=run, seed=seed,
      has_guarantee=p.has_guarantee, **guarantee, accounting=p.accounting,
      covers=p.covers, adjacency=p.adjacency, n_source=p.n_source or None,
      rounds=result.rounds, num_participants=result.num_participants,
      discovered=list(result.heavy_hitters),
      reported_counts=list(result.heavy_hitters.values()),
      metrics=values, seconds=result.seconds, config=dict(config),
      config_key=config_key, params=params)


def counted(result, config: Mapping,
            params: records_lib.TrieHHParams) -> dict:
  """A run with protected counts: its record's guarantee, the total
  (epsilon, delta) in place of discovery's; each phase, the counts and
  their options put in ``params``."""
  c, p = result.counts, result.params
  params.discovery_epsilon, params.discovery_delta = p.epsilon, p.delta
  params.count_epsilon = c.counting_epsilon
  params.count_delta = c.counting_delta
  params.count_accounting = c.accounting
  params.count_share = config["count_share"]
  params.count_sample_rate = c.sample_rate
  params.count_noise_std = c.noise_std
  params.count_confidence = c.confidence
  params.protected_counts = {w: [e, lo, up] for w, e, lo, up in zip(
      c.words, c.estimate, c.lower, c.upper)}
  return dict(
      epsilon=c.epsilon, delta=c.delta, target_epsilon=config["epsilon"],
      target_delta=c.delta if config["delta"] is None else config["delta"])


class TrieHH:
  """The TrieHH adapter (:class:`triehh.runs.algorithms.Algorithm`)."""

  name = NAME
  # engines: TrieHH's engines (registry names); theta: {"theta", "gamma",
  # "batch_size"} for cells given theta directly instead of calibrated from
  # (epsilon, delta);
  # triehh_options: num_sub_rounds, max_num_prefixes, allow_no_guarantee,
  # sampling ("fixed" by default here; the drivers default to "poisson"),
  # sampling_rate; tff_options: the TFF engine's keyword arguments
  # (secure_sum, workers, connect_timeout, rpc_timeout,
  # max_user_contribution), each given to the engines that take it
  # (registry.options); count_shares: cells per share of the budget
  # spent on counting (triehh_options' counts=True; default its
  # count_share).
  grid_options = {"engines": (registry.FAST,), "theta": None,
                  "triehh_options": None, "tff_options": None,
                  "count_shares": None}

  def grid_values(self, grid: Mapping[str, Any]) -> list[tuple[dict, dict]]:
    for engine in grid["engines"]:
      if engine not in registry.names():
        raise ValueError(f"unknown engine {engine!r}; choose from "
                         f"{', '.join(registry.names())}")
    options = dict(TRIEHH_DEFAULTS, **(grid["triehh_options"] or {}))
    tff = dict(grid["tff_options"] or {})
    theta = grid["theta"]
    privacy = ([dict(theta)] if theta else
               [{"epsilon": e, "delta": d}
                for e, d in itertools.product(grid["epsilons"],
                                              grid["deltas"])])
    shares = grid["count_shares"]
    if shares and not options["counts"]:
      raise ValueError("count_shares is for counts (triehh_options' "
                       "counts=True)")
    by_share = [{"count_share": s} for s in shares] if shares else [{}]
    out = []
    for engine, target, share in itertools.product(grid["engines"], privacy,
                                                   by_share):
      takes = registry.options(engine)
      engine_options = {k: v for k, v in tff.items() if k in takes}
      values = dict(engine=engine, **target, **{**options, **share},
                    tff_secure_sum=engine_options.get("secure_sum"),
                    tff_max_user_contribution=engine_options.get(
                        "max_user_contribution"))
      out.append((values, engine_options))
    return out

  def config(self, data: Mapping[str, Any], **values: Any) -> dict:
    return config_of_values(data, values)

  def uses_tensorflow(self, config: Mapping[str, Any]) -> bool:
    return registry.uses_tensorflow(config["engine"])

  def check(self, cell, population: population_lib.Population,
            seeds: Sequence[int] = (0,)) -> None:
    """The population's size and Theorem 1's range or calibration
    (:func:`triehh.theory.policy.resolve`, as the run resolves them)."""
    del seeds  # the parameters do not depend on the seed
    c = cell.config
    n = population.num_users
    check_triehh_population(n)
    privacy, delta_from_n = privacy_of(c), False
    counting = counting_of(c)
    if counting is not None:  # discovery runs at its share of the total
      privacy, delta_from_n = discover_lib.discovery_share(
          privacy, counting, n)
    policy.resolve(n, c["data"]["max_length"], privacy,
                   single_word=population.is_single_word,
                   delta_from_n=delta_from_n)

  def call(self, population: population_lib.Population,
           config: Mapping[str, Any], seed: int,
           engine_options: Mapping[str, Any] | None = None):
    """:func:`call_triehh`, on a population TrieHH can run on."""
    check_triehh_population(population.num_users)
    return call_triehh(population, config, seed, engine_options)

  def record(self, result, dataset: datasets.Dataset, run: int, seed: int,
             config: Mapping[str, Any],
             engine_options: Mapping[str, Any] | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS, *, config_key: str = ""
             ) -> records_lib.RunRecord:
    values = metrics.precision_recall_f1(result.heavy_hitters,
                                         dataset.truth, ks)
    return triehh_record(result, dataset, run, seed, values, config,
                         engine_options, config_key)

  def cell_label_parts(self, config: Mapping[str, Any]) -> list[str]:
    parts = labels.privacy_parts(config)
    if config.get("theta") is not None:
      parts.append(f"theta={config['theta']}")
    if config.get("sampling") == choices.POISSON:
      rate = config.get("sampling_rate")
      parts.append("poisson" + (f" q={rate:g}" if rate is not None else ""))
    if config.get("counts"):
      parts.append(f"counts share={config['count_share']:g} "
                   f"q_c={config['count_sample_rate']:g}")
    if config.get("adjacency") is not None:
      parts.append(config["adjacency"])
    if config.get("population_size") is not None:
      parts.append(f"declared n={config['population_size']}")
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
    if values.get("count_share") is not None:
      parts.append(f"counts (share {values['count_share']:g}, sample rate "
                   f"{values.get('count_sample_rate'):g})")
    return ", ".join(parts)


ADAPTER = TrieHH()
