"""Sweeps: the cells of an experiment grid, the runs left, and running them.

A *cell* is one configuration (algorithm, engine, data set and setting,
privacy target, SFP's T, IBLT's k-anonymity and every other option): its
``config`` is the ``config`` of the :class:`triehh.runs.records.RunRecord` its
runs write, and its ``key`` the record's ``config_key``. A *run* is a
(cell, seed) pair; a sweep of ``num_runs`` runs from ``seed`` gives run
``i`` the seed ``seed + i``, as ``experiments.run_triehh`` and
``experiments.run_sfp`` do, and writes the same record they would
(``seconds`` aside).

IBLT cells (algorithm ``"iblt"``) run TFF's IBLT heavy hitters
(:func:`triehh.baselines.iblt.iblt_discover`) on the users TrieHH samples
for the same seed: their rounds hold TrieHH's batch size m at the cell's
(epsilon, delta) (Corollary 1, as TrieHH calibrates it on the same data),
and their ``k_anonymity`` is TrieHH's theta there unless given. That
(epsilon, delta) only matches the users: an IBLT run is k-anonymous, not
differentially private, and its record says so (``privacy``,
``matched_epsilon``; ``epsilon`` and ``delta`` null).

Resuming. :func:`plan` leaves out the (key, seed) pairs already recorded in
``results.jsonl`` (:func:`triehh.runs.records.completed`). Records are appended
by :class:`triehh.runs.records.ResultsWriter`, one whole line per finished run,
so a sweep killed at any moment loses only the run in progress.

Two sweeps on one directory. Before running a cell, :func:`run_cell` takes
a non-blocking ``fcntl.flock`` on ``<output_dir>/.sweep-locks/<key>.lock``
and, holding it, reads again which of the cell's seeds are recorded (the
other sweep may have run them since the plan was made). A cell locked by
another process is put off: :func:`run_plan` runs every other cell first,
then comes back to it and waits for the lock, by which time the other sweep
has usually finished it. So two sweeps never run the same cell at the same
time and never write a run twice. Lock files are left in place (removing
them would race with a sweep opening them).

Data. A data set is described by its options (the records'
``config["data"]``); :class:`DataCache` loads each one once per process and
encodes its population once (file data sets are also cached on disk across
processes by :mod:`triehh.data`).

Processes. ``run_plan(..., workers=N)`` runs cells in ``N`` processes
(``concurrent.futures.ProcessPoolExecutor``; 'fork' for the fast engine,
'spawn' when a cell uses TensorFlow: TFF-engine and IBLT cells), each
writing through its own
``ResultsWriter``; progress comes back as :class:`Event` objects.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import errno
import fcntl
import itertools
import json
import math
import multiprocessing
import os
import queue
import signal
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from triehh import data as data_lib
from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import iblt as iblt_lib
from triehh.baselines import sfp as sfp_lib
from triehh.core import choices
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import paper_populations
from triehh.data import synthetic
from triehh.discovery import discover as discover_lib
from triehh.runs import records as records_lib
from triehh.theory import policy

LOCK_DIR = ".sweep-locks"
ENGINES = ("fast", "tff")
# Options of a TrieHH cell other than its engine, data and privacy, with the
# defaults of experiments.run_triehh.
TRIEHH_DEFAULTS = {"num_sub_rounds": 1, "max_num_prefixes": None,
                   "allow_no_guarantee": False, "sampling": "fixed",
                   "sampling_rate": None}
# Options of an SFP cell other than its data, privacy and T.
SFP_DEFAULTS = {"k": cms_lib.DEFAULT_K, "m": cms_lib.DEFAULT_M,
                "length": sfp_lib.DEFAULT_LENGTH, "fragment_alphabet": None,
                "word_budget": 0.0, "simulation": "sketch",
                "check_puzzle_hash": False}
# Options of an IBLT cell other than its data, matched (epsilon, delta) and
# k-anonymity (string_max_bytes None: the data's max_length).
IBLT_DEFAULTS = {"capacity": None, "string_max_bytes": None,
                 "num_rounds": None, "rounds": "sampled",
                 "secure_sum_bitwidth": None,
                 "repetitions": iblt_lib.DEFAULT_REPETITIONS}
DEFAULT_DATA = {"dataset": "default", "setting": "single",
                "max_length": population_lib.DEFAULT_MAX_LENGTH,
                "num_users": synthetic.DEFAULT_NUM_USERS}


# ---- data -------------------------------------------------------------------


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
  report: data_lib.LoadReport | None = None
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
  if dataset in data_lib.DATASETS:
    spec = data_lib.DataSpec(
        options["data_path"], dataset=dataset, setting=options["setting"],
        file_format=options.get("data_format", "auto"),
        user_column=options.get("user_column", "user"),
        text_column=options.get("text_column", "text"),
        encoding=options.get("data_encoding"),
        tokenizer=options.get("tokenizer", data_lib.DEFAULT_TOKENIZER),
        min_length=options.get("min_word_length",
                               data_lib.DEFAULT_MIN_LENGTH),
        max_length=max_length,
        dictionary_path=options.get("dictionary_path"),
        oov_num_users=options.get("oov_num_users",
                                  data_lib.DEFAULT_OOV_NUM_USERS),
        seed=options.get("data_seed", 0))
    loaded = data_lib.load(spec, cache_dir=cache_dir)
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


# ---- one run ----------------------------------------------------------------


def triehh_config(data: Mapping[str, Any], *, engine: str = "fast",
                  epsilon: float | None = None, delta: float | None = None,
                  theta: int | None = None, gamma: float | None = None,
                  batch_size: int | None = None, num_sub_rounds: int = 1,
                  max_num_prefixes: int | None = None,
                  allow_no_guarantee: bool = False,
                  tff_secure_sum: bool | None = None,
                  tff_max_user_contribution: int | None = None,
                  sampling: str = "fixed",
                  sampling_rate: float | None = None) -> dict:
  """A TrieHH run's ``config``: everything but the seed that changes it.

  ``tff_secure_sum`` is None for the fast engine (as run_triehh records it).
  ``sampling`` and ``sampling_rate`` are keys of Poisson configs only, so a
  fixed-size config (and its ``config_key``) is the one written before
  Poisson sampling existed.
  """
  config = {"algorithm": "triehh", "engine": engine, "data": dict(data),
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
  return config


def sampling_of(config: Mapping) -> dict:
  """``discover``'s sampling arguments for a TrieHH ``config``."""
  return {"sampling": config.get("sampling", choices.FIXED),
          "sampling_rate": config.get("sampling_rate")}


def sfp_config(data: Mapping[str, Any], *, epsilon: float,
               delta: float | None = None, top_t: int = sfp_lib.DEFAULT_TOP_T,
               k: int = SFP_DEFAULTS["k"], m: int = SFP_DEFAULTS["m"],
               length: int = SFP_DEFAULTS["length"],
               fragment_alphabet: str | None = None, word_budget: float = 0.0,
               simulation: str = "sketch",
               check_puzzle_hash: bool = False) -> dict:
  """An SFP run's ``config``: everything but the seed that changes it."""
  return {"algorithm": "sfp", "data": dict(data), "epsilon": epsilon,
          "delta": delta, "top_t": top_t, "k": k, "m": m, "length": length,
          "fragment_alphabet": fragment_alphabet, "word_budget": word_budget,
          "simulation": simulation, "check_puzzle_hash": check_puzzle_hash}


def iblt_config(data: Mapping[str, Any], *, epsilon: float,
                delta: float | None = None, k_anonymity: int | None = None,
                capacity: int | None = None,
                string_max_bytes: int | None = None,
                num_rounds: int | None = None, rounds: str = "sampled",
                secure_sum_bitwidth: int | None = None,
                repetitions: int = iblt_lib.DEFAULT_REPETITIONS) -> dict:
  """An IBLT run's ``config``: everything but the seed that changes it.

  ``epsilon`` and ``delta`` are the TrieHH target whose batch size (and
  theta, for ``k_anonymity`` None) the run uses; ``capacity`` None: each
  round's distinct strings; ``string_max_bytes`` None: the data's
  ``max_length``.
  """
  if string_max_bytes is None:
    string_max_bytes = data["max_length"]
  return {"algorithm": "iblt", "data": dict(data), "epsilon": epsilon,
          "delta": delta, "k_anonymity": k_anonymity, "capacity": capacity,
          "string_max_bytes": string_max_bytes, "num_rounds": num_rounds,
          "rounds": rounds, "secure_sum_bitwidth": secure_sum_bitwidth,
          "repetitions": repetitions}


def check_triehh_population(n: int) -> None:
  """Refuses populations too small for TrieHH, in the user's terms."""
  if n < 2:
    raise ValueError(
        f"the population has {n} user{'s' if n != 1 else ''}: TrieHH needs "
        "at least 2 (and Theorem 1 many more; see experiments.theory_tables)"
        "; use a larger data set or --num_users")


def call_triehh(population: population_lib.Population, config: Mapping,
                seed: int, engine_options: Mapping | None = None):
  """``triehh.discover`` on ``population`` as ``config`` says, at ``seed``.

  ``engine_options`` are the engine's keyword arguments (TFF: secure_sum,
  workers, timeouts, max_user_contribution).
  """
  privacy = {name: config[name] for name in
             ("epsilon", "delta", "theta", "gamma", "batch_size")}
  return discover_lib.discover(
      population, max_length=config["data"]["max_length"], seed=seed,
      engine=config["engine"], num_sub_rounds=config["num_sub_rounds"],
      max_num_prefixes=config["max_num_prefixes"],
      allow_no_guarantee=config["allow_no_guarantee"], **privacy,
      **sampling_of(config), **dict(engine_options or {}))


def call_sfp(population: population_lib.Population, config: Mapping,
             seed: int) -> sfp_lib.SFPResult:
  """``triehh.sfp_discover`` on ``population`` as ``config`` says."""
  return sfp_lib.sfp_discover(
      population, epsilon=config["epsilon"], delta=config["delta"],
      top_t=config["top_t"], seed=seed, k=config["k"], m=config["m"],
      length=config["length"], fragment_alphabet=config["fragment_alphabet"],
      word_budget=config["word_budget"], simulation=config["simulation"],
      check_puzzle_hash=config["check_puzzle_hash"],
      stitching=config.get("stitching", sfp_lib.DEFAULT_STITCHING))


def matched_triehh_params(population: population_lib.Population,
                          config: Mapping):
  """TrieHH's calibration at an IBLT cell's (epsilon, delta) on ``population``
  (:func:`triehh.theory.policy.resolve_params`, as ``discover`` resolves it)."""
  return policy.resolve_params(
      population.num_users, config["data"]["max_length"],
      epsilon=config["epsilon"], delta=config["delta"],
      single_word=population.is_single_word)


def iblt_arguments(population: population_lib.Population,
                   config: Mapping) -> dict:
  """``iblt_discover``'s keyword arguments for an IBLT cell, but the seed.

  The batch size and (for ``k_anonymity`` None) the threshold are TrieHH's
  at the cell's (epsilon, delta) on ``population``.

  Raises:
    ValueError: if TrieHH's calibration cannot be met on ``population``.
  """
  params = matched_triehh_params(population, config)
  k_anonymity = config["k_anonymity"]
  return dict(
      k_anonymity=params.theta if k_anonymity is None else k_anonymity,
      batch_size=params.batch_size, capacity=config["capacity"],
      string_max_bytes=config["string_max_bytes"],
      secure_sum_bitwidth=config["secure_sum_bitwidth"],
      num_rounds=config["num_rounds"], rounds=config["rounds"],
      max_length=config["data"]["max_length"],
      repetitions=config["repetitions"])


def call_iblt(population: population_lib.Population, config: Mapping,
              seed: int) -> iblt_lib.IBLTResult:
  """``triehh.iblt_discover`` on ``population`` as ``config`` says."""
  return iblt_lib.iblt_discover(population, seed=seed,
                                **iblt_arguments(population, config))


def triehh_record(result, data: Dataset, run: int, seed: int,
                  values: Mapping[str, float], config: Mapping,
                  engine_options: Mapping | None = None
                  ) -> records_lib.RunRecord:
  """The results.jsonl record of one TrieHH run."""
  options = engine_options or {}
  p = result.params
  return records_lib.RunRecord(
      algorithm="triehh", engine=result.engine, dataset=data.name,
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


def sfp_record(result, data: Dataset, run: int, seed: int,
               values: Mapping[str, float], config: Mapping
               ) -> records_lib.RunRecord:
  """The results.jsonl record of one SFP run."""
  p = result.params
  return records_lib.RunRecord(
      algorithm="sfp", dataset=data.name, setting=data.setting, n_users=p.n,
      run=run, seed=seed, epsilon=p.epsilon, delta=p.delta,
      has_guarantee=math.isfinite(p.epsilon),
      target_epsilon=config["epsilon"], target_delta=p.delta,
      epsilon_local=p.epsilon_local, epsilon_fragment=p.epsilon_fragment,
      epsilon_word=p.epsilon_word, top_t=p.top_t, k=p.k, m=p.m,
      length=p.length, num_buckets=p.num_buckets,
      fragment_alphabet=p.fragment_alphabet, word_budget=p.word_budget,
      simulation=p.simulation, check_puzzle_hash=p.check_puzzle_hash,
      hash_seed=p.hash_seed,
      reports_per_position=list(result.reports_per_position),
      num_stitched=result.num_stitched,
      discovered=list(result.heavy_hitters),
      counts=list(result.heavy_hitters.values()), metrics=dict(values),
      seconds=result.seconds, client_seconds=result.client_seconds,
      server_seconds=result.server_seconds, config=dict(config))


def iblt_record(result: iblt_lib.IBLTResult, data: Dataset, run: int,
                seed: int, values: Mapping[str, float], config: Mapping
                ) -> records_lib.RunRecord:
  """The results.jsonl record of one IBLT run: no (epsilon, delta)."""
  p = result.params
  matched = matched_triehh_params(data.population, config)
  return records_lib.RunRecord(
      algorithm="iblt", dataset=data.name, setting=data.setting, n_users=p.n,
      run=run, seed=seed, epsilon=None, delta=None, has_guarantee=False,
      target_epsilon=None, target_delta=None, accounting=policy.NO_GUARANTEE,
      privacy=p.privacy, matched_epsilon=matched.target_epsilon,
      matched_delta=matched.target_delta, k_anonymity=p.k_anonymity,
      capacity=p.capacity, string_max_bytes=p.string_max_bytes,
      secure_sum_bitwidth=p.secure_sum_bitwidth, round_draw=p.rounds,
      repetitions=p.repetitions, sketch_shape=list(p.sketch_shape),
      bytes_per_client=p.bytes_per_client,
      memory_estimate_bytes=p.memory_estimate_bytes,
      batch_size=p.batch_size, max_length=p.max_length, rounds=p.num_rounds,
      num_participants=p.users_sampled, distinct_users=p.distinct_users,
      num_not_decoded=p.num_not_decoded, num_truncated=p.num_truncated,
      truncated=list(p.truncated), discovered=list(result.heavy_hitters),
      counts=list(result.heavy_hitters.values()), metrics=dict(values),
      seconds=result.seconds, seconds_per_client=result.seconds_per_client,
      round_seconds=list(result.round_seconds), config=dict(config))


# ---- cells ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cell:
  """One configuration of a sweep.

  ``config`` is the records' ``config``; ``engine_options`` are the TFF
  engine's options that do not change the result (workers, timeouts), as
  ``triehh.discover`` takes them.
  """

  config: Mapping[str, Any]
  engine_options: Mapping[str, Any] = dataclasses.field(
      default_factory=dict)

  @property
  def key(self) -> str:
    return records_lib.config_key(self.config)

  @property
  def algorithm(self) -> str:
    return self.config["algorithm"]

  @property
  def uses_tensorflow(self) -> bool:
    return self.config.get("engine") == "tff" or self.algorithm == "iblt"

  @property
  def label(self) -> str:
    """A short description: algorithm, engine, data, epsilon, delta, T, k."""
    c = self.config
    data = c["data"]
    source = data["dataset"]
    if data.get("data_path"):
      source += f":{os.path.basename(data['data_path'])}"
    parts = [c["algorithm"] + (f"/{c['engine']}" if "engine" in c else ""),
             f"{source}/{data['setting']}"]
    if c["algorithm"] == "iblt":  # its epsilon only sizes the rounds
      k = c["k_anonymity"]
      parts.append(f"k={'theta' if k is None else k}")
      parts.append(f"m at eps={c['epsilon']:g}")
    elif c.get("epsilon") is not None:
      parts.append(f"eps={c['epsilon']:g}")
    if c.get("delta") is not None:
      parts.append(f"delta={c['delta']:g}")
    if c.get("theta") is not None:
      parts.append(f"theta={c['theta']}")
    if c.get("sampling") == "poisson":
      rate = c.get("sampling_rate")
      parts.append("poisson" + (f" q={rate:g}" if rate is not None else ""))
    if c["algorithm"] == "sfp":
      parts.append(f"T={c['top_t']}")
    return " ".join(parts)


def expand(*, algorithms: Sequence[str] = ("triehh",),
           data: Sequence[Mapping[str, Any]] = (DEFAULT_DATA,),
           engines: Sequence[str] = ("fast",),
           epsilons: Sequence[float] = (4.0,),
           deltas: Sequence[float | None] = (None,),
           top_ts: Sequence[int] = (sfp_lib.DEFAULT_TOP_T,),
           k_anonymities: Sequence[int | None] = (None,),
           triehh_options: Mapping[str, Any] | None = None,
           theta: Mapping[str, Any] | None = None,
           tff_options: Mapping[str, Any] | None = None,
           sfp_options: Mapping[str, Any] | None = None,
           iblt_options: Mapping[str, Any] | None = None) -> list[Cell]:
  """The cells of a grid, data set by data set.

  Args:
    algorithms: "triehh", "sfp" and/or "iblt".
    data: data-set options, one per data set and setting.
    engines: TrieHH's engines ("fast", "tff").
    epsilons, deltas: central privacy targets (delta None: 1/n^2).
    top_ts: SFP's T values.
    k_anonymities: IBLT's k-anonymity thresholds (None: TrieHH's theta at
      the cell's epsilon and delta).
    triehh_options: num_sub_rounds, max_num_prefixes, allow_no_guarantee,
      sampling ("fixed" by default here; the drivers default to
      "poisson"), sampling_rate.
    theta: {"theta", "gamma", "batch_size"} for TrieHH cells given theta
      directly instead of calibrated from (epsilon, delta); then TrieHH cells
      do not vary with epsilons and deltas.
    tff_options: the TFF engine's keyword arguments (secure_sum, workers,
      connect_timeout, rpc_timeout, max_user_contribution).
    sfp_options: k, m, length, fragment_alphabet, word_budget, simulation,
      check_puzzle_hash.
    iblt_options: capacity, string_max_bytes, num_rounds, rounds,
      secure_sum_bitwidth, repetitions (:data:`IBLT_DEFAULTS`). IBLT cells
      vary with epsilons and deltas (TrieHH's batch size there) even when
      TrieHH cells are given ``theta``.

  Raises:
    ValueError: for an unknown algorithm or engine, or an empty grid.
  """
  for algorithm in algorithms:
    if algorithm not in records_lib.ALGORITHMS:
      raise ValueError(f"unknown algorithm {algorithm!r}; choose from "
                       f"{', '.join(records_lib.ALGORITHMS)}")
  for engine in engines:
    if engine not in ENGINES:
      raise ValueError(f"unknown engine {engine!r}; choose from "
                       f"{', '.join(ENGINES)}")
  triehh_opts = dict(TRIEHH_DEFAULTS, **(triehh_options or {}))
  sfp_opts = dict(SFP_DEFAULTS, **(sfp_options or {}))
  iblt_opts = dict(IBLT_DEFAULTS, **(iblt_options or {}))
  tff = dict(tff_options or {})
  cells = []
  for options in data:
    for algorithm in algorithms:
      if algorithm == "triehh":
        privacy = ([dict(theta)] if theta else
                   [{"epsilon": e, "delta": d}
                    for e, d in itertools.product(epsilons, deltas)])
        for engine, target in itertools.product(engines, privacy):
          engine_options = tff if engine == "tff" else {}
          config = triehh_config(
              options, engine=engine, **target, **triehh_opts,
              tff_secure_sum=engine_options.get("secure_sum"),
              tff_max_user_contribution=engine_options.get(
                  "max_user_contribution"))
          cells.append(Cell(config, engine_options))
      elif algorithm == "iblt":
        for epsilon, delta, k in itertools.product(epsilons, deltas,
                                                   k_anonymities):
          cells.append(Cell(iblt_config(options, epsilon=epsilon, delta=delta,
                                        k_anonymity=k, **iblt_opts)))
      else:
        for epsilon, delta, t in itertools.product(epsilons, deltas, top_ts):
          cells.append(Cell(sfp_config(options, epsilon=epsilon, delta=delta,
                                       top_t=t, **sfp_opts)))
  if not cells:
    raise ValueError("the sweep has no cells")
  return cells


def check_cell(cell: Cell, population: population_lib.Population,
               seeds: Sequence[int] = (0,)) -> None:
  """Checks ``cell``'s parameters on its population without running it.

  TrieHH: the population size and Theorem 1's range or calibration
  (:func:`triehh.theory.policy.resolve_params`, as ``discover`` resolves them);
  SFP: its options and the privacy calibration, as ``sfp_discover`` checks
  them; IBLT: TrieHH's calibration it takes m (and theta) from, then its
  options (k-anonymity, capacity, string_max_bytes, rounds, secure-sum bit
  width) and, for each of ``seeds``, that the capacity covers every round
  and that the largest round fits in memory
  (:func:`triehh.baselines.iblt.plan_run`, which imports TensorFlow).

  Raises:
    ValueError, TypeError: what ``discover``, ``sfp_discover`` or
      ``iblt_discover`` would raise on a bad option.
    MemoryError: an IBLT round that would not fit in memory.
  """
  c = cell.config
  if cell.algorithm == "iblt":
    arguments = iblt_arguments(population, c)
    for seed in seeds:
      try:
        iblt_lib.plan_run(population, seed=seed, **arguments)
      except MemoryError as err:
        raise MemoryError(
            f"{err} (here the batch size is TrieHH's at epsilon="
            f"{c['epsilon']:g}: a smaller epsilon or population gives fewer "
            "users per round)") from err
  elif cell.algorithm == "triehh":
    check_triehh_population(population.num_users)
    policy.resolve_params(
        population.num_users, c["data"]["max_length"], epsilon=c["epsilon"],
        delta=c["delta"], theta=c["theta"], gamma=c["gamma"],
        batch_size=c["batch_size"], num_sub_rounds=c["num_sub_rounds"],
        max_num_prefixes=c["max_num_prefixes"],
        allow_no_guarantee=c["allow_no_guarantee"],
        single_word=population.is_single_word, **sampling_of(c))
  else:
    options = sfp_lib._check_options(  # pylint: disable=protected-access
        population, top_t=c["top_t"], length=c["length"],
        num_buckets=sfp_lib.DEFAULT_NUM_BUCKETS,
        fragment_alphabet=c["fragment_alphabet"],
        word_budget=c["word_budget"], simulation=c["simulation"],
        chunk_size=1, num_threads=1, check_puzzle_hash=c["check_puzzle_hash"],
        max_candidates=1, stitching=c.get("stitching",
                                          sfp_lib.DEFAULT_STITCHING))
    sfp_lib._privacy(  # pylint: disable=protected-access
        population.num_users, c["epsilon"], c["delta"], None,
        options.word_budget, False)


def check_cells(cells: Iterable[Cell], datasets: DataCache,
                seeds: Sequence[int] = (0,)) -> None:
  """Checks every cell on its data set before any cell runs.

  Each data set is loaded once (through ``datasets``, which keeps it for the
  runs); IBLT cells are checked at each of ``seeds`` (their rounds, and so
  the capacity and memory they need, depend on the seed).

  Raises:
    ValueError: ``cell [<label>]: <problem>`` for the first bad cell.
  """
  for cell in cells:
    population = datasets.get(cell.config["data"]).population
    try:
      check_cell(cell, population, seeds)
    except (ValueError, TypeError, MemoryError) as err:
      raise ValueError(f"cell [{cell.label}]: {err}") from err


# ---- planning ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Task:
  """A cell and the seeds of its runs; ``first_seed`` is run 0's seed."""

  cell: Cell
  seeds: tuple[int, ...]
  first_seed: int


def seeds_of(seed: int, num_runs: int) -> tuple[int, ...]:
  """The seeds of ``num_runs`` runs from ``seed`` (run i has seed + i)."""
  return tuple(range(seed, seed + num_runs))


def plan(cells: Iterable[Cell], seed: int, num_runs: int,
         done: set[tuple[str, int]] = frozenset()) -> list[Task]:
  """The runs left: one task per cell with seeds not in ``done``.

  ``done`` holds recorded ``(config_key, seed)`` pairs
  (:func:`triehh.runs.records.completed`); fully recorded cells are left out.
  """
  tasks = []
  for cell in cells:
    key = cell.key
    left = tuple(s for s in seeds_of(seed, num_runs) if (key, s) not in done)
    if left:
      tasks.append(Task(cell, left, seed))
  return tasks


# ---- running ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Event:
  """Progress of a sweep.

  ``kind``: "start" (a cell begins; ``runs`` = its runs left), "run" (one
  run written; ``seed``, ``seconds``), "done" (the cell's runs are
  recorded; ``runs`` = how many this process wrote), "locked" (another
  process holds the cell; it is put off) or "wait" (waiting for that lock).
  """

  kind: str
  key: str
  label: str
  runs: int = 0
  seed: int | None = None
  seconds: float = 0.0
  pid: int = 0


def lock_path(output_dir: str, key: str) -> str:
  return os.path.join(output_dir, LOCK_DIR, f"{key}.lock")


def _lock(output_dir: str, key: str, blocking: bool) -> int | None:
  """An fd holding the cell's lock, or None if another process holds it."""
  os.makedirs(os.path.join(output_dir, LOCK_DIR), exist_ok=True)
  fd = os.open(lock_path(output_dir, key), os.O_RDWR | os.O_CREAT, 0o644)
  try:
    fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
  except OSError as err:
    os.close(fd)
    if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
      return None
    raise
  return fd


def run_cell(task: Task, output_dir: str, *, datasets: DataCache,
             ks: Sequence[int] = metrics.DEFAULT_KS, blocking: bool = False,
             on_event: Callable[[Event], None] = lambda event: None
             ) -> bool:
  """Runs the task's seeds not yet recorded, under the cell's lock.

  Returns False, having run nothing, when ``blocking`` is false and another
  process holds the cell's lock; True once every seed is recorded.
  """
  cell = task.cell
  key, label = cell.key, cell.label
  fd = _lock(output_dir, key, blocking=False)
  if fd is None:
    on_event(Event("locked", key, label, pid=os.getpid()))
    if not blocking:
      return False
    on_event(Event("wait", key, label, pid=os.getpid()))
    fd = _lock(output_dir, key, blocking=True)
  try:
    done = records_lib.completed(records_lib.results_path(output_dir))
    seeds = [s for s in task.seeds if (key, s) not in done]
    on_event(Event("start", key, label, runs=len(seeds), pid=os.getpid()))
    writer = records_lib.ResultsWriter(output_dir)
    dataset = None
    if seeds:
      dataset = datasets.get(cell.config["data"])
      if cell.algorithm == "triehh":
        check_triehh_population(dataset.population.num_users)
    for seed in seeds:
      record = run_one(cell, dataset, seed, seed - task.first_seed, ks)
      writer.write(record)
      on_event(Event("run", key, label, seed=seed, seconds=record.seconds,
                     pid=os.getpid()))
    on_event(Event("done", key, label, runs=writer.written, pid=os.getpid()))
  finally:
    os.close(fd)
  return True


def run_one(cell: Cell, dataset: Dataset, seed: int, run: int,
            ks: Sequence[int] = metrics.DEFAULT_KS) -> records_lib.RunRecord:
  """The record of one run of ``cell`` on ``dataset`` at ``seed``."""
  pop = dataset.population
  if cell.algorithm == "iblt":
    result = call_iblt(pop, cell.config, seed)
    # Truncated outputs are scored as false positives.
    values = metrics.precision_recall_f1(result.scored(), dataset.truth, ks)
    return iblt_record(result, dataset, run, seed, values, cell.config)
  if cell.algorithm == "triehh":
    result = call_triehh(pop, cell.config, seed, cell.engine_options)
    values = metrics.precision_recall_f1(result.heavy_hitters,
                                         dataset.truth, ks)
    return triehh_record(result, dataset, run, seed, values, cell.config,
                         cell.engine_options)
  result = call_sfp(pop, cell.config, seed)
  values = metrics.precision_recall_f1(result.heavy_hitters, dataset.truth,
                                       ks)
  return sfp_record(result, dataset, run, seed, values, cell.config)


# Per-process state of a worker of run_plan.
_WORKER: dict[str, Any] = {}


def _init_worker(events, cache_dir: str | None) -> None:
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the sweep
  _WORKER.update(events=events, datasets=DataCache(cache_dir))


def _worker_task(task: Task, output_dir: str, ks: Sequence[int],
                 blocking: bool) -> bool:
  return run_cell(task, output_dir, datasets=_WORKER["datasets"], ks=ks,
                  blocking=blocking, on_event=_WORKER["events"].put)


def run_plan(tasks: Sequence[Task], output_dir: str, *, workers: int = 1,
             cache_dir: str | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS,
             on_event: Callable[[Event], None] = lambda event: None,
             datasets: DataCache | None = None) -> None:
  """Runs ``tasks``, cells locked by another sweep last (see module doc).

  With ``workers`` > 1, cells run in that many processes and their events
  are passed to ``on_event`` in this one.
  """
  if workers < 1:
    raise ValueError(f"workers must be >= 1, got {workers}")
  if workers == 1 or len(tasks) <= 1:
    datasets = datasets or DataCache(cache_dir)
    put_off = [t for t in tasks
               if not run_cell(t, output_dir, datasets=datasets, ks=ks,
                               on_event=on_event)]
    for task in put_off:
      run_cell(task, output_dir, datasets=datasets, ks=ks, blocking=True,
               on_event=on_event)
    return
  _run_in_processes(tasks, output_dir, workers, cache_dir, ks, on_event)


def _run_in_processes(tasks, output_dir, workers, cache_dir, ks, on_event):
  tensorflow = any(t.cell.uses_tensorflow for t in tasks)
  context = multiprocessing.get_context("spawn" if tensorflow else "fork")
  with context.Manager() as manager:
    events = manager.Queue()
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)), mp_context=context,
        initializer=_init_worker, initargs=(events, cache_dir))
    try:
      pending = {pool.submit(_worker_task, t, output_dir, ks, False): t
                 for t in tasks}
      while pending:
        finished, _ = concurrent.futures.wait(
            pending, timeout=0.2,
            return_when=concurrent.futures.FIRST_COMPLETED)
        _drain(events, on_event)
        for future in finished:
          task = pending.pop(future)
          if not future.result():  # locked elsewhere: come back to it
            pending[pool.submit(_worker_task, task, output_dir, ks,
                                True)] = task
      _drain(events, on_event)
      pool.shutdown()
    except BaseException:
      for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()
      pool.shutdown(wait=False, cancel_futures=True)
      raise


def _drain(events, on_event) -> None:
  while True:
    try:
      event = events.get_nowait()
    except queue.Empty:
      return
    on_event(event)
