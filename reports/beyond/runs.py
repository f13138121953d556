"""The runs beyond the paper: their plan, and running the ones not recorded.

A report's runs are planned as :class:`Point` objects, one per row (or
figure point) of ``BEYOND.md``: a run ``config`` (the records' ``config``,
whose :func:`~triehh.runs.records.config_key` names it) and its seeds.
:func:`plan` makes them from :class:`Settings` and the data;
:func:`run` runs each (config, seed) not yet in ``<output_dir>/results.jsonl``
and appends its record there (:class:`triehh.runs.records.ResultsWriter`)
as soon as it ends, so a second invocation with the same settings runs
nothing and an interrupted one loses only the run in progress.

The parts and their records (every record scored at the top ``KS``, or
``F1_KS`` in (a)):

(a) ``"iblt"``, per data set and epsilon: TFF's IBLT heavy hitters (an
    ``"iblt"`` record per seed, from :mod:`triehh.runs.algorithms.iblt`: one
    round on TrieHH's first-round users, k-anonymity TrieHH's theta, the
    sketch sized for the most distinct strings of those rounds over the
    IBLT seeds), TrieHH's fast engine (``"triehh"`` records, which also hold
    ``vote_bytes_per_round``) and its TFF engine (one ``"triehh"`` record,
    timed after an unrecorded warm-up run that compiles).
(b) ``"passes"``: :func:`triehh.discovery.passes.discover_passes` at a total
    epsilon; a ``"triehh"`` record per run whose config adds ``num_passes``
    and ``composition``, whose (epsilon, delta) are the composed totals and
    whose theta and batch size are each pass's.
(c) ``"availability"``: :func:`triehh.discovery.availability.discover_online`;
    a ``"triehh"`` record per run whose config adds ``availability`` (the
    fraction online) and ``calibrate_to``, with ``online_per_round`` and
    ``nominal_epsilon``.
(d) ``"counts"``: :mod:`reports.beyond.counts`, TrieHH with its
    protected counts next to SFP's and IBLT's counts (``"triehh"``,
    ``"sfp"`` and ``"iblt"`` records holding the count metrics).

A refused point (an IBLT round that would not fit in memory; passes whose
per-pass share Theorem 1 cannot give) has no records: it is refused before
any run, again on each invocation, and :class:`Outcome` says why.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from triehh.baselines import iblt as iblt_lib
from triehh.baselines import iblt_rounds
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib
from triehh.data import synthetic
from triehh.discovery import availability as availability_lib
from triehh.discovery import passes as passes_lib
from triehh.engines import registry
from triehh.runs import records as records_lib
from triehh.runs.algorithms import iblt as iblt_algorithm
from triehh.runs.algorithms import triehh as triehh_algorithm
from triehh.theory import mechanism

PARTS = IBLT, PASSES, AVAILABILITY, COUNTS = (
    "iblt", "passes", "availability", "counts")
# What the runs of a point of (a) are: IBLT, TrieHH's fast engine, its TFF
# engine (timed).
ROLES = IBLT_RUNS, TRIEHH_RUNS, TFF_RUNS = ("iblt", "triehh", "tff")
KS = (10, 50, 100)
F1_KS = (5, 10, 20, 30, 50, 75, 100, 150, 200)


@dataclasses.dataclass(frozen=True)
class CountSettings:
  """What (d) runs (:mod:`reports.beyond.counts`; the defaults are
  the published report's).

  Attributes:
    runs: TrieHH's seeded runs per point.
    sfp_runs: SFP's runs per epsilon (the first seeds).
    iblt_runs: IBLT's runs at the total epsilon (the first seeds); 0: none.
    epsilons: total epsilons, at the default budget split.
    shares: the budget splits, at ``Settings.total_epsilon``.
  """

  runs: int = 100
  sfp_runs: int = 2
  iblt_runs: int = 1
  epsilons: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
  shares: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5)


@dataclasses.dataclass(frozen=True)
class Settings:
  """What to run (the defaults are the published report's).

  Attributes:
    parts: among ``PARTS``; run in the order of ``PARTS``.
    runs: seeded runs per point of (b) and (c), and TrieHH's per point of
      (a); seeds ``seed``, ``seed + 1``, ...
    iblt_runs: IBLT's runs per point of (a) (the first seeds); 0 skips (a).
    seed: the first seed.
    default_users: users of the default data in (b) and (c).
    iblt_default_users: users of the default data in (a).
    iblt_epsilons: TrieHH's epsilons in (a) (IBLT takes m and theta there).
    pass_counts: passes in (b).
    total_epsilon: the total epsilon of (b), the target of (c).
    fractions: fractions of users online in (c).
    sample_path: the Sentiment140 sample; None: its rows are left out.
    max_length: L of every population.
    counts: what (d) runs.
  """

  parts: tuple[str, ...] = PARTS
  runs: int = 10
  iblt_runs: int = 1
  seed: int = 0
  default_users: int = synthetic.DEFAULT_NUM_USERS
  iblt_default_users: int = 100_000
  iblt_epsilons: tuple[float, ...] = (1.0, 4.0)
  pass_counts: tuple[int, ...] = (1, 2, 3, 4)
  total_epsilon: float = 4.0
  fractions: tuple[float, ...] = (1.0, 0.5, 0.2, 0.05)
  sample_path: str | None = None
  max_length: int = population_lib.DEFAULT_MAX_LENGTH
  counts: CountSettings = CountSettings()

  def __post_init__(self):
    for part in self.parts:
      if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; use {', '.join(PARTS)}")

  @property
  def seeds(self) -> tuple[int, ...]:
    return tuple(range(self.seed, self.seed + self.runs))

  @property
  def iblt_seeds(self) -> tuple[int, ...]:
    return self.seeds[:self.iblt_runs]


@dataclasses.dataclass(frozen=True)
class Point:
  """The runs of one config at its seeds: a row (or point) of the report.

  Attributes:
    part: its part, one of ``PARTS``.
    role: in (a), one of ``ROLES``; else its part.
    data: the name of its data in the report.
    n_users: the users of its data.
    config: its runs' config (``config["data"]``: the data set's options).
    seeds: its runs' seeds.
    group: in (a), ``(data, epsilon)``: the IBLT, TrieHH and TFF points
      shown together (none if the IBLT is refused).
  """

  part: str
  role: str
  data: str
  n_users: int
  config: Mapping[str, Any]
  seeds: tuple[int, ...]
  group: tuple = ()

  @property
  def key(self) -> str:
    return records_lib.config_key(self.config)

  @property
  def label(self) -> str:
    c = self.config
    if self.part == PASSES:
      count = c["num_passes"]
      detail = f"{count} pass{'es' if count != 1 else ''}"
    elif self.part == AVAILABILITY:
      detail = (f"{c['availability']:g} of users online, calibrated to "
                f"{c['calibrate_to']}")
    else:
      detail = f"eps={c['epsilon']:g}"
      if c.get("count_share") is not None:
        detail += f", count share {c['count_share']:g}"
    return f"({self.role}) {self.data}, {detail}"


@dataclasses.dataclass
class Part:
  """A part's points, and the notes its section prints before its table."""

  name: str
  points: list[Point]
  notes: list[str] = dataclasses.field(default_factory=list)
  # Data name -> the truth its records are scored against, for parts that
  # score records read back from results.jsonl (``counts``).
  truths: dict[str, Mapping] = dataclasses.field(default_factory=dict)


def default_data(num_users: int, max_length: int) -> dict:
  """The options of the default data (:func:`synthetic.english_population`)."""
  return {"dataset": "default", "setting": "single", "num_users": num_users,
          "max_length": max_length}


def sample_data(path: str, setting: str, max_length: int) -> dict:
  """The options of the Sentiment140 file ``path`` in ``setting``."""
  return {"dataset": "sentiment140", "setting": setting,
          "data_path": os.path.abspath(path), "max_length": max_length}


def plan(settings: Settings, datasets: datasets_lib.DataCache) -> list[Part]:
  """The parts of ``settings.parts``, in the order of ``PARTS``; (a) only
  with ``iblt_runs``. Loads their data (once, through ``datasets``)."""
  makers = {IBLT: iblt_part, PASSES: passes_part,
            AVAILABILITY: availability_part, **_REGISTERED}
  for name in settings.parts:
    if name not in makers:  # (d) builds on this module: it registers
      raise ValueError(f"part {name!r} is planned by "
                       f"reports.beyond.{name}: import it first")
  return [makers[name](settings, datasets) for name in PARTS
          if name in settings.parts
          and (name != IBLT or settings.iblt_runs)]


# A part planned and run by a module that builds on this one (d): part ->
# its plan; and its roles' runs, as _RUNS.
_REGISTERED: dict[str, Callable[..., Part]] = {}


def register_part(name: str, maker: Callable[..., Part],
                  role_runs: Mapping[str, tuple]) -> None:
  """Lets :func:`plan` and :func:`run` plan and run part ``name``: its
  ``maker(settings, datasets)`` and the runs of its roles (role -> (run,
  refusal), as ``_RUNS``)."""
  _REGISTERED[name] = maker
  _RUNS.update(role_runs)


def first_round_capacity(pop: population_lib.Population, batch_size: int,
                         seeds, string_max_bytes: int) -> int:
  """The most distinct cut strings of TrieHH's first-round users (as IBLT
  draws them, :func:`triehh.baselines.iblt_rounds.draw_rounds`) over
  ``seeds``: the capacity that fits every seed's round."""
  most = 1
  for seed in seeds:
    for _, words in iblt_rounds.draw_rounds(pop, batch_size, "sampled", 1,
                                            seed):
      most = max(most, len({iblt_lib.cut(str(w), string_max_bytes)
                            for w in pop.vocabulary[np.unique(words)]}))
  return most


def vote_bytes(trie) -> list[int]:
  """A TrieHH client's vote vector in bytes, per round: int32 counts for
  every extension of each prefix on the trie, padded to a power of two."""
  a1 = trie.alphabet.num_extensions
  frontier = [1] + [lv.prefixes.shape[0] for lv in trie.levels[:-1]]
  return [4 * a1 * (1 << (k - 1).bit_length()) for k in frontier]


def iblt_part(settings: Settings, datasets: datasets_lib.DataCache) -> Part:
  """(a): per data set and epsilon, IBLT, TrieHH and TrieHH's TFF engine."""
  part = Part(IBLT, [])
  data = []
  if settings.sample_path is None:
    part.notes.append("Sentiment140 sample absent: its rows are skipped.")
  else:
    data.append(("Sentiment140 sample (default tokenizer), one word per "
                 "user",
                 sample_data(settings.sample_path, "single",
                             settings.max_length)))
  data.append((f"default data, {settings.iblt_default_users:,} users",
               default_data(settings.iblt_default_users, settings.max_length)))
  for name, options in data:
    pop = datasets.get(options).population
    for epsilon in settings.iblt_epsilons:
      config = iblt_algorithm.iblt_config(options, epsilon=epsilon)
      m = iblt_algorithm.matched_triehh_params(pop, config).batch_size
      config["capacity"] = first_round_capacity(
          pop, m, settings.iblt_seeds, config["string_max_bytes"])
      group = (name, epsilon)
      point = dict(part=IBLT, data=name, n_users=pop.num_users, group=group)
      part.points += [
          Point(role=IBLT_RUNS, config=config, seeds=settings.iblt_seeds,
                **point),
          Point(role=TRIEHH_RUNS, seeds=settings.seeds, **point,
                config=triehh_algorithm.triehh_config(
                    options, mechanism.Target(epsilon, sampling="fixed"))),
          Point(role=TFF_RUNS, seeds=settings.iblt_seeds[:1], **point,
                config=triehh_algorithm.triehh_config(
                    options, mechanism.Target(epsilon, sampling="fixed"),
                    engine=registry.TFF))]
  return part


def passes_part(settings: Settings, datasets: datasets_lib.DataCache
                ) -> Part:
  """(b): per data set and number of passes, at the total epsilon."""
  part = Part(PASSES, [])
  options = default_data(settings.default_users, settings.max_length)
  n = datasets.get(options).population.num_users
  data = [(f"default data (n = {n:,})", options, n)]
  if settings.sample_path is None:
    part.notes.append("The Sentiment140 sample is absent: its rows are "
                      "skipped (pass --sentiment140_path).")
  else:
    options = sample_data(settings.sample_path, "multi", settings.max_length)
    n = datasets.get(options).population.num_users
    data.append((f"Sentiment140 sample (default tokenizer), several words "
                 f"per user (n = {n:,})", options, n))
  for name, options, n in data:
    for count in settings.pass_counts:
      config = dict(triehh_algorithm.triehh_config(
          options, mechanism.Target(settings.total_epsilon,
                                    sampling="fixed")),
                    num_passes=count, composition=passes_lib.BEST)
      part.points.append(Point(PASSES, PASSES, name, n, config,
                               settings.seeds))
  return part


def availability_part(settings: Settings,
                      datasets: datasets_lib.DataCache) -> Part:
  """(c): per calibration and fraction online, on the default data."""
  part = Part(AVAILABILITY, [])
  options = default_data(settings.default_users, settings.max_length)
  n = datasets.get(options).population.num_users
  for calibrate_to in availability_lib.CALIBRATIONS:
    for fraction in settings.fractions:
      config = dict(triehh_algorithm.triehh_config(
          options, mechanism.Target(settings.total_epsilon, sampling="fixed",
                                    allow_no_guarantee=True)),
                    availability=fraction, calibrate_to=calibrate_to)
      part.points.append(Point(AVAILABILITY, AVAILABILITY, "default data", n,
                               config, settings.seeds))
  return part


# ---- running -----------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
  """What :func:`run` did.

  Attributes:
    written: runs run and recorded.
    refused: a refused point's key -> why (its runs are not recorded).
    missing: a part that could not run -> the ImportError (TensorFlow
      Federated absent, for (a)).
    seconds: wall time of each part's runs.
  """

  written: int = 0
  refused: dict[str, str] = dataclasses.field(default_factory=dict)
  missing: dict[str, BaseException] = dataclasses.field(default_factory=dict)
  seconds: dict[str, float] = dataclasses.field(default_factory=dict)


def runs_left(parts: list[Part], output_dir: str) -> int:
  """The runs of ``parts`` not recorded in ``output_dir`` (refused ones
  included)."""
  done = records_lib.completed(records_lib.results_path(output_dir))
  return sum((p.key, s) not in done for part in parts for p in part.points
             for s in p.seeds)


def run(settings: Settings, parts: list[Part], output_dir: str,
        datasets: datasets_lib.DataCache, *,
        log: Callable[[str], None] = lambda text: None) -> Outcome:
  """Runs and records the runs of ``parts`` not recorded in ``output_dir``.

  ``log`` is told each point's runs as they end. Only (a) may be missing
  (an ImportError: TensorFlow Federated absent); elsewhere it is raised.
  """
  writer = records_lib.ResultsWriter(output_dir)
  done = records_lib.completed(writer.path)
  outcome = Outcome()
  for part in parts:
    start = time.perf_counter()
    refused_groups = set()
    try:
      for point in part.points:
        if point.group and point.group in refused_groups:
          continue
        if not _run_point(settings, point, datasets, writer, done, outcome,
                          log):
          refused_groups.add(point.group)
    except ImportError as err:
      if part.name != IBLT:
        raise
      outcome.missing[part.name] = err
    outcome.seconds[part.name] = time.perf_counter() - start
  outcome.written = writer.written
  return outcome


def _run_point(settings: Settings, point: Point,
               datasets: datasets_lib.DataCache,
               writer: records_lib.ResultsWriter, done: set, outcome: Outcome,
               log: Callable[[str], None]) -> bool:
  """Runs the point's seeds not in ``done``; False if it is refused."""
  seeds = [s for s in point.seeds if (point.key, s) not in done]
  if not seeds:
    return True
  dataset = datasets.get(point.config["data"])
  if point.role == TFF_RUNS:  # a first run compiles: time a warm one
    triehh_algorithm.ADAPTER.call(dataset.population, point.config, seeds[0])
  maker, refusal = _RUNS[point.role]
  for seed in seeds:
    try:
      record = maker(point.config, dataset, seed, seed - settings.seed)
    except refusal as err:
      outcome.refused[point.key] = str(err)
      log(f"  {point.label}: refused: {err}")
      return False
    writer.write(record)
  log(f"  {point.label}: {len(seeds)} run{'s' if len(seeds) != 1 else ''}")
  return True


def _iblt_run(config, dataset, seed: int, run_index: int):
  adapter = iblt_algorithm.ADAPTER
  result = adapter.call(dataset.population, config, seed)
  return adapter.record(result, dataset, run_index, seed, config, None,
                        F1_KS)


def _triehh_run(config, dataset, seed: int, run_index: int):
  """A TrieHH run of (a), with its vote vectors' bytes on the fast engine."""
  adapter = triehh_algorithm.ADAPTER
  result = adapter.call(dataset.population, config, seed)
  record = adapter.record(result, dataset, run_index, seed, config, None,
                          F1_KS)
  if config["engine"] == registry.FAST:
    record.params.vote_bytes_per_round = vote_bytes(result.trie)
  return record


def _passes_run(config, dataset, seed: int, run_index: int):
  result = passes_lib.discover_passes(
      dataset.population, triehh_algorithm.privacy_of(config),
      passes_lib.Passes(config["num_passes"], config["composition"]),
      seed=seed, max_length=config["data"]["max_length"])
  values = metrics.precision_recall_f1(result.words, dataset.truth, KS)
  return passes_record(result, dataset, run_index, seed, values, config)


def passes_record(result: passes_lib.PassesResult,
                  dataset: datasets_lib.Dataset, run_index: int, seed: int,
                  values: Mapping[str, float], config: Mapping
                  ) -> records_lib.RunRecord:
  """The record of a passes run: the composed totals, each pass's theta and
  m, the union of the passes' words (with the votes of the pass that found
  each) and the rounds, votes and participants of all the passes."""
  p = result.params
  first = result.passes[0]
  votes = result.heavy_hitters
  return records_lib.RunRecord(
      algorithm=triehh_algorithm.NAME, engine=first.engine,
      dataset=dataset.name, setting=dataset.setting, n_users=first.params.n,
      run=run_index, seed=seed, epsilon=p.epsilon, delta=p.delta,
      target_epsilon=p.target_epsilon, target_delta=p.target_delta,
      accounting=(f"{p.composition} composition of {p.num_passes} "
                  f"pass{'es' if p.num_passes != 1 else ''}, each by "
                  f"{first.params.accounting}"),
      covers=p.covers, rounds=sum(r.rounds for r in result.passes),
      num_participants=sum(r.num_participants for r in result.passes),
      discovered=list(result.words),
      reported_counts=[votes[w] for w in result.words],
      metrics=dict(values), seconds=result.seconds, config=dict(config),
      params=records_lib.TrieHHParams(
          theta=first.params.theta, gamma=first.params.gamma,
          batch_size=first.params.batch_size,
          max_length=first.params.max_length, levels=first.params.levels,
          num_sub_rounds=first.params.num_sub_rounds,
          max_num_prefixes=first.params.max_num_prefixes,
          word_choice=first.params.word_choice,
          sampling=first.params.sampling,
          sampling_rate=first.params.sampling_rate,
          votes_per_round=[v for r in result.passes
                           for v in r.votes_per_round]))


def _availability_run(config, dataset, seed: int, run_index: int):
  """A run with users offline: the TrieHH record, with the online counts
  and the epsilon at n."""
  result = availability_lib.discover_online(
      dataset.population, triehh_algorithm.privacy_of(config),
      availability_lib.OnlineUsers(config["availability"],
                                   config["calibrate_to"]),
      seed=seed, max_length=config["data"]["max_length"])
  values = metrics.precision_recall_f1(result.heavy_hitters, dataset.truth,
                                       KS)
  record = triehh_algorithm.triehh_record(result, dataset, run_index, seed,
                                          values, config)
  info = result.availability
  record.params.online_per_round = list(info.online_per_round)
  record.params.nominal_epsilon = info.nominal_epsilon
  return record


# role -> (its run's record, the error that refuses the point before it runs)
_RUNS = {IBLT_RUNS: (_iblt_run, MemoryError),
         TRIEHH_RUNS: (_triehh_run, ()),
         TFF_RUNS: (_triehh_run, ()),
         PASSES: (_passes_run, ValueError),
         AVAILABILITY: (_availability_run, ())}
