"""The run record's schema: :class:`RunRecord`, one per line of
``results.jsonl``, and its one validation (:meth:`RunRecord.from_dict`).

A record is the fields every run has, whatever its algorithm (the identity
of the run, its guarantee, its words, metrics and time, its config), and
``params``: the algorithm's own fields, one typed params record per
algorithm (:class:`TrieHHParams`, :class:`SFPParams`, :class:`IBLTParams`,
:class:`PartitionSelectionParams`) and, for any other mechanism registered
in :mod:`triehh.mechanisms`, the JSON object of its release's parameters
(``dataclasses.asdict(result.params)``, written by
:mod:`triehh.runs.algorithms.mechanism`). Each field is documented where it
is declared. Files are read and written by :mod:`triehh.runs.records`;
this module knows JSON objects, not files.

Versions. 3 (this one) nests the algorithm's own fields under ``params``;
records of versions 1 and 2 (every field at the top) are read and upgraded
(:func:`upgrade`), their ``config`` and ``config_key`` unchanged, so that a
sweep resumes over them and a summary pools them with new ones.

Long file: one declaration per field of the record and of each params
record, each with the comment that documents it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import math
import operator
from collections.abc import Mapping
from typing import Any, Union

import orjson

from triehh.theory import adjacency as adjacency_lib

# 3: each algorithm's own fields nested under "params" (TrieHHParams, ...;
# a registered mechanism's parameters), the fields every algorithm has at
# the top. 2: TrieHH's votes, SFP's and IBLT's counts renamed from "counts"
# to "reported_counts", and TrieHH's protected counts added. Records of
# versions 1 and 2 are read and upgraded (:func:`upgrade`).
SCHEMA_VERSION = 3
READ_VERSIONS = (1, 2, 3)
# The algorithms with a params record of their own, in the order summaries
# list them; a record may also name any other registered mechanism
# (:func:`algorithms`).
ALGORITHMS = ("triehh", "sfp", "iblt", "partition_selection")
TRIEHH, SFP, IBLT, PARTITION_SELECTION = ALGORITHMS

# A record's randomness: a seeded run (a simulation), or fresh entropy
# (its seed null).
SEEDED, FRESH = "seed", "fresh"
# Why a JSON value is not a run record, in kinds shared by many lines
# (``experiments.summarize`` counts skipped lines by kind). A record of
# another schema version has its own kind: the text of schema_problem().
NOT_JSON = "not JSON"
FOREIGN = "not a run_triehh/run_sfp record"
BAD_FIELDS = "run record with missing or bad fields"
# A metric that is no result: not finite, or outside its range.
OUT_OF_RANGE = "metric not finite or out of range"

# The numbers a record of each algorithm must hold (besides the common
# fields, which every record holds), at the top or in its params.
_NUMBERS = {TRIEHH: ("n_users", "theta", "batch_size", "levels",
                     "max_length"),
            SFP: ("n_users", "top_t"),
            IBLT: ("n_users", "k_anonymity", "batch_size"),
            PARTITION_SELECTION: ("n_users", "max_partitions_contributed")}
# Fields that are a number or null; ints among them are read as floats.
_FLOATS = ("epsilon", "delta", "target_epsilon", "target_delta",
           "epsilon_local", "epsilon_fragment", "epsilon_word",
           "matched_epsilon", "matched_delta", "nominal_epsilon",
           "discovery_epsilon", "discovery_delta", "count_epsilon",
           "count_delta", "count_share", "count_sample_rate",
           "count_noise_std", "count_confidence")
# The least value of numbers that are counts or sizes (when not null), and
# those of them that are whole numbers.
_AT_LEAST = {"n_users": 1, "theta": 1, "batch_size": 1, "levels": 1,
             "rounds": 0, "seconds": 0}
_WHOLE = ("theta",)
# The deepest nesting of objects and arrays a field may hold (a run's
# config has two levels: its options and, under "data", the data set's).
MAX_NESTING = 32
_ARRAYS = frozenset((list, tuple))
_NESTED = _ARRAYS | {dict}
# Metrics that are proportions in [0, 1], by their name before "@"
# (:mod:`triehh.core.metrics`, :mod:`triehh.runs.count_metrics`); the
# count num_discovered is in [0, inf).
_PROPORTIONS = frozenset(("precision", "recall", "f1", "f1_paper",
                          "count_error", "count_coverage"))


class RecordError(ValueError):
  """Why a JSON value is not a run record.

  Attributes:
    kind: ``NOT_JSON``, ``FOREIGN``, ``BAD_FIELDS`` or the text of
      :func:`schema_problem`.
  """

  def __init__(self, kind: str, message: str):
    super().__init__(message)
    self.kind = kind


def algorithms() -> tuple[str, ...]:
  """The algorithms a record may name: :data:`ALGORITHMS`, then every
  other mechanism registered now (:func:`triehh.mechanisms.registry.names`;
  imported here, when a record names another, so that reading the built-in
  algorithms' records imports no mechanism)."""
  from triehh.mechanisms import registry  # pylint: disable=g-import-not-at-top
  return ALGORITHMS + tuple(name for name in registry.names()
                            if name not in ALGORITHMS)


def is_algorithm(name: Any) -> bool:
  """Whether a record may name ``name`` (:func:`algorithms`)."""
  return isinstance(name, str) and (name in ALGORITHMS
                                    or name in algorithms())


def _when_set():
  """A params field left out of the JSON while None: written only by the
  runs that set it."""
  return dataclasses.field(default=None, metadata={"when_set": True})


# ---- Each algorithm's own fields: its params record --------------------------


@dataclasses.dataclass(kw_only=True)
class TrieHHParams:
  """A TrieHH record's ``params``: its parameters and its rounds' votes."""

  # Votes a prefix needs in a round to be kept.
  theta: int | None = None
  # batch_size / sqrt(n_users).
  gamma: float | None = None
  # L + 1: L characters and the end symbol.
  levels: int | None = None
  num_sub_rounds: int | None = None
  max_num_prefixes: int | None = None  # null: no cap
  # Users sampled per round, m (Poisson: the expected batch).
  batch_size: int | None = None
  # L, in characters.
  max_length: int | None = None
  # "per_round" (Algorithm 3, several-word users redraw every round) or
  # "per_run".
  word_choice: str | None = None
  # The declared public n, or null (null too in records written before it
  # existed: those runs declared none).
  population_size: int | None = None
  # "poisson" (each user takes part in a round with probability
  # sampling_rate; batch_size is then the expected batch) or "fixed" (the
  # paper's m users per round). Records written before the field existed
  # are fixed-size runs.
  sampling: str | None = None
  # q of a Poisson run; null otherwise.
  sampling_rate: float | None = None
  # Options of the TFF engine, null for the fast engine: its secure sum
  # (bool), its max user contribution (int) and the number of remote
  # workers (int).
  tff_secure_sum: bool | None = None
  tff_max_user_contribution: int | None = None
  tff_workers: int | None = None
  # The votes of each round's kept prefixes, summed. NOT covered by the
  # run's guarantee (docs/privacy.md): simulation studies only.
  votes_per_round: list[int] | None = None
  # (set by reports.beyond's runs with users offline) Theorem 1's epsilon
  # at the nominal n for the run's theta and batch size: the label that
  # ignores who is online; null outside Theorem 1 at n. Users online in
  # each round (the guarantee is Theorem 1's at the fewest).
  nominal_epsilon: float | None = _when_set()
  online_per_round: list[int] | None = _when_set()
  # (set by reports.beyond's fast-engine runs next to IBLT) Bytes of a
  # client's vote vector in each round, as the TFF engine sends it: int32
  # counts for every extension of each prefix on the trie, padded to a
  # power of two.
  vote_bytes_per_round: list[int] | None = _when_set()
  # (set by runs with protected counts) Discovery's own guarantee (at its
  # 1 - count_share of the budget); the counting phase's, both directions,
  # at count_delta = delta - discovery_delta (it may exceed count_share *
  # epsilon: the total is composed, not added); how the total (epsilon,
  # delta) was obtained, in which direction(s). The record's epsilon and
  # delta are then the TOTAL of both phases (PLD composition,
  # docs/counts.md).
  discovery_epsilon: float | None = _when_set()
  discovery_delta: float | None = _when_set()
  count_epsilon: float | None = _when_set()
  count_delta: float | None = _when_set()
  count_accounting: str | None = _when_set()
  # (set by runs with protected counts) The share of epsilon and delta
  # given to counting (discovery ran at the rest), the probability that a
  # user joins the counting sample, the Gaussian noise's standard deviation
  # on each count and the intervals' nominal coverage.
  count_share: float | None = _when_set()
  count_sample_rate: float | None = _when_set()
  count_noise_std: float | None = _when_set()
  count_confidence: float | None = _when_set()
  # (set by runs with protected counts) word -> [estimate, lower, upper]:
  # the counting phase's estimated users (or population frequency for
  # several words per user) of each discovered word and its interval at
  # count_confidence, covered by the total (epsilon, delta).
  protected_counts: dict[str, list[float]] | None = _when_set()


@dataclasses.dataclass(kw_only=True)
class SFPParams:
  """An SFP record's ``params``: its local budget, sketch and fragments."""

  # The local epsilon of a user's message, and its shares for the fragment
  # and the (optional) whole-word sketch.
  epsilon_local: float | None = None
  epsilon_fragment: float | None = None
  epsilon_word: float | None = None
  # T, tuples kept per fragment position.
  top_t: int | None = None
  # Count Mean Sketch hash functions and width.
  k: int | None = None
  m: int | None = None
  # Padded string length in characters.
  length: int | None = None
  # Range of the puzzle hash.
  num_buckets: int | None = None
  # Omega, the characters of candidate fragments.
  fragment_alphabet: str | None = None
  # Share of epsilon_local spent on the whole-word sketch.
  word_budget: float | None = None
  # "sketch" or "reports" (how the server's sums were simulated).
  simulation: str | None = None
  # Whether stitched strings had to hash to their bucket.
  check_puzzle_hash: bool | None = None
  # Seed of the hash family and puzzle hash.
  hash_seed: int | None = None
  reports_per_position: list[int] | None = None
  num_stitched: int | None = None
  # The parts of the record's seconds spent by the clients and the server.
  client_seconds: float | None = None
  server_seconds: float | None = None


@dataclasses.dataclass(kw_only=True)
class IBLTParams:
  """An IBLT record's ``params``: its k-anonymity, sketch and rounds."""

  # What an IBLT run gives, plainly: k-anonymity (every string sent by at
  # least k_anonymity clients of a round is released with its exact
  # count), which is NOT (epsilon, delta)-differential privacy: the
  # record's epsilon and delta are null, has_guarantee false and
  # accounting "none".
  privacy: str | None = None
  # The TrieHH target (epsilon, delta) whose Corollary 1 batch size (and
  # theta, when k_anonymity was not given) the run used, so that it samples
  # TrieHH's users for the same seed; NOT a guarantee of the IBLT run.
  matched_epsilon: float | None = None
  matched_delta: float | None = None
  # Strings sent by fewer clients of a round are not released.
  k_anonymity: int | None = None
  # Distinct strings the sketch was sized for (with config["capacity"]
  # null, the most distinct strings of a round of this run, so it varies
  # with the seed).
  capacity: int | None = None
  # Strings are cut to this many UTF-8 bytes.
  string_max_bytes: int | None = None
  # Bit width of TFF's secure sum, null for the plain sum.
  secure_sum_bitwidth: int | None = None
  # "sampled" (each round a fresh TrieHH-style sample; the first is
  # TrieHH's first round for the seed) or "disjoint".
  round_draw: str | None = None
  repetitions: int | None = None  # hash repetitions
  sketch_shape: list[int] | None = None  # a client's sketch
  # Bytes of the tensors a client sends per round.
  bytes_per_client: int | None = None
  # Worker memory the largest round needs (the estimate the run was
  # checked against).
  memory_estimate_bytes: int | None = None
  # Users sampled per round, m, and L in characters.
  batch_size: int | None = None
  max_length: int | None = None
  # Distinct users that took part.
  distinct_users: int | None = None
  # The record's seconds per participating client, and each round's TFF
  # call in seconds.
  seconds_per_client: float | None = None
  round_seconds: list[float] | None = None
  # Strings the server could not decode.
  num_not_decoded: int | None = None
  # Released strings cut at string_max_bytes (some sender held a longer
  # word), and those strings; counted as false positives.
  num_truncated: int | None = None
  truncated: list[str] | None = None


@dataclasses.dataclass(kw_only=True)
class PartitionSelectionParams:
  """A partition-selection record's ``params``: its strategy and input."""

  # Who sees what: "central: the server sees raw strings".
  privacy: str | None = None
  # pipeline_dp's strategy ("truncated_geometric", "laplace_thresholding"
  # or "gaussian_thresholding") and the words a user counts towards, at
  # most.
  strategy: str | None = None
  max_partitions_contributed: int | None = None
  # (user, word) rows selected from, and their distinct words.
  num_rows: int | None = None
  num_candidates: int | None = None


# Each algorithm's params record; a record of any other (registered)
# mechanism holds its parameters as a JSON object (a dict).
PARAMS: dict[str, type] = {TRIEHH: TrieHHParams, SFP: SFPParams,
                           IBLT: IBLTParams,
                           PARTITION_SELECTION: PartitionSelectionParams}
Params = Union[TrieHHParams, SFPParams, IBLTParams,
               PartitionSelectionParams, dict]
# Each algorithm's params fields, each with whether it is written only when
# set; their names; and every name a params record of any of them holds.
_PARAMS_FIELDS = {
    algorithm: tuple((f.name, bool(f.metadata.get("when_set")))
                     for f in dataclasses.fields(kind))
    for algorithm, kind in PARAMS.items()}
_PARAMS_NAMES = {algorithm: frozenset(name for name, _ in fields)
                 for algorithm, fields in _PARAMS_FIELDS.items()}
_ALL_PARAMS_NAMES = frozenset().union(*_PARAMS_NAMES.values())


# ---- The record --------------------------------------------------------------


@dataclasses.dataclass(kw_only=True, init=False)
class RunRecord:
  """One finished run: a line of ``results.jsonl``.

  ``experiments.run_triehh``, ``experiments.run_sfp`` and
  ``experiments.run_partition_selection``, the sweeps
  (:mod:`triehh.runs.runner`, any registered mechanism) and the reports'
  runs write one per run; ``experiments.summarize`` and
  :mod:`reports.summary` read them back. As JSON (:meth:`to_json`) a record
  is one object on one line, keys sorted: the fields below, and under
  ``"params"`` its algorithm's own (:class:`TrieHHParams`, ...; a
  registered mechanism's parameters), those declared ``_when_set`` only
  when set.

  Built with ``params=`` its algorithm's params record (or, for another
  mechanism, a dict); the fields of the algorithm's params record may be
  given as keywords instead, and are put in it. On the record, a params
  field is read as an attribute and by :meth:`get` (None for a field of
  another algorithm's params, as the flat records of versions 1 and 2 had
  it) and set as an attribute (into ``params``).

  A line is read back by :meth:`from_dict`, which refuses it unless it
  holds every field without a default, ``config`` and ``params``, the
  numbers its algorithm needs (``_NUMBERS``), a number or null where a
  float is declared, counts and sizes in range (``_AT_LEAST``), a bool
  has_guarantee and with it an epsilon >= 0 and a delta in [0, 1) (0:
  pure DP), a
  string engine, an adjacency of relation names, a non-empty ``metrics``
  of numbers (proportions in [0, 1], num_discovered >= 0), a
  ``discovered`` of distinct strings, and no field nested more than
  ``MAX_NESTING`` levels deep.
  """

  # ---- Identity of the run --------------------------------------------------
  # 3 (SCHEMA_VERSION); records of versions 1 and 2 are read and upgraded,
  # one without it is of an earlier layout and is not read
  # (:func:`schema_problem`).
  schema_version: int = SCHEMA_VERSION
  # "triehh", "sfp", "iblt" (TFF's IBLT heavy hitters,
  # :mod:`triehh.baselines.iblt`, run by a sweep), "partition_selection"
  # (pipeline_dp's central DP partition selection,
  # :mod:`triehh.baselines.partition_selection`), or the name of another
  # mechanism registered in :mod:`triehh.mechanisms` (the noisy trie, one
  # of yours).
  algorithm: str
  # The engine that ran it (:mod:`triehh.engines.registry`; TrieHH's
  # "fast" or "tff", a mechanism's), null for the algorithms run without
  # one (SFP, IBLT, partition selection).
  engine: str | None = None
  # The data set's name ("default", a file's base name,
  # "synthetic:<table>:<law>").
  dataset: str
  # "single", "oov" or "multi".
  setting: str
  # Users in the population.
  n_users: int
  # Index of the run within its invocation (0, 1, ...).
  run: int
  # Seed of the run (``--seed`` + ``run``), a simulation's; null for a
  # run that drew fresh entropy (recorded nowhere: randomness "fresh").
  seed: int | None
  # How the run drew its randomness: "seed" (the seed above: a simulation,
  # whoever knows it can undo the noise) or "fresh" (fresh entropy, seed
  # null); set from the seed when not given. Records written before it
  # existed lack it, and were all seeded.
  randomness: str | None = None
  # Everything given that changes the result except the seed: the
  # algorithm's options as asked for (target epsilon and delta, theta, batch
  # size, T, sketch size, ...; null where not given; a registered
  # mechanism's privacy object, field by field) and, under "data", the
  # data-set options (dataset, absolute data_path, setting, num_users,
  # max_length, ...).
  config: dict = dataclasses.field(default_factory=dict)
  # 16 hex digits, a SHA-256 of ``config`` as canonical JSON
  # (:func:`config_key`; computed from ``config`` when not given). Two runs
  # with the same config_key and seed are the same run (a rerun or a
  # duplicate line); a sweep skips the cells whose key and seed are already
  # recorded.
  config_key: str = ""

  # ---- Privacy ---------------------------------------------------------------
  # The central guarantee the run achieved ((epsilon, delta)-DP; for TrieHH
  # Theorem 1 or its accountant at the run's parameters, for SFP the
  # shuffle bound, for a mechanism its release's guarantee). For a TrieHH
  # run with protected counts (count_share set) it is the TOTAL of both
  # phases (params' discovery_epsilon and count_epsilon). Null exactly when
  # has_guarantee is false (a non-finite epsilon makes it so).
  epsilon: float | None
  delta: float | None
  # False for runs outside Theorem 1 (``--theta`` with
  # ``--allow_no_guarantee``) or without DP: no privacy guarantee at all.
  # Always false for iblt (k-anonymity, not DP).
  has_guarantee: bool = True
  # What was asked for (null when theta and the batch size were given
  # directly; always null for iblt, which is not calibrated to any epsilon).
  target_epsilon: float | None
  target_delta: float | None
  # The proof the (epsilon, delta) comes from ("Theorem 1", "per-round
  # composition (L*delta)", "Poisson accountant (two-sided)", SFP's
  # shuffling bound, "none" for iblt, "pipeline_dp partition selection
  # (pipeline-dp <version>)", a mechanism's); null where not recorded
  # (SFP's records of versions 1 and 2).
  accounting: str | None = None
  # Which outputs the guarantee covers, and in which direction(s)
  # (docs/privacy.md); null where not recorded.
  covers: str | None = None
  # The neighbouring relations the guarantee covers, as dp_accounting's
  # NeighboringRelation names, comma-separated ("ADD_OR_REMOVE_ONE,
  # REPLACE_SPECIAL"; :mod:`triehh.theory.adjacency`); "" without
  # guarantee. Where the n the parameters were derived from comes from:
  # "declared" (public), "data" (|D|, so only neighbours of the same size
  # are covered) or "unused". Null where not recorded (records written
  # before they existed; IBLT's, which has no guarantee).
  adjacency: str | None = None
  n_source: str | None = None

  # ---- Results ---------------------------------------------------------------
  # The heavy hitters, most counted first. iblt: every string the IBLT
  # released, truncated ones included. partition_selection: the released
  # words, alphabetically (a set, without counts). A mechanism: its
  # release's words, in its order.
  discovered: list[str]
  # What each algorithm reports with its words, in the same order (named
  # "counts" before schema version 2):
  # * triehh: the words' VOTES in the run's trie. NOT covered by the run's
  #   (epsilon, delta), which covers only the set of discovered words (and
  #   protected_counts): simulation studies only (docs/privacy.md).
  # * sfp: count-mean-sketch estimates of the users per word, outputs of
  #   its local-DP reports, covered by its guarantee.
  # * iblt: exact counts summed over the rounds that released them
  #   (k-anonymity only, no DP).
  # * partition_selection and a mechanism's release: nothing (an empty
  #   list).
  reported_counts: list[float]
  # precision@K, recall@K, f1@K per K, precision and num_discovered
  # (:mod:`triehh.core.metrics`), and for runs with protected counts
  # count_error@K and count_coverage@K (:mod:`triehh.runs.count_metrics`);
  # proportions in [0, 1] except num_discovered. For iblt, truncated
  # outputs count as false positives (TrieHH never reports a truncated word).
  # For partition_selection, whose words have no ranking, precision@K and
  # f1@K take the first K words alphabetically: compare its recall@K,
  # f1_paper@K and precision.
  metrics: dict[str, float]
  # Wall time of the run in seconds, data loading excluded (iblt: of its
  # TFF rounds, sampling excluded).
  seconds: float
  # Rounds run (triehh: trie levels; iblt: IBLT rounds; a mechanism: its
  # release's per_round), null where not recorded (SFP, partition
  # selection).
  rounds: int | None = None
  # User-rounds sampled, null where not recorded.
  num_participants: int | None = None

  # ---- The algorithm's own fields --------------------------------------------
  # Its params record (PARAMS), or a registered mechanism's parameters as a
  # JSON object.
  params: Params = None

  def __init__(self, *, params: Params | Mapping | None = None,
               **fields: Any):
    own = {name: fields.pop(name) for name in list(fields)
           if name not in _COMMON_NAMES}
    for field in _COMMON_FIELDS:
      if field.name in fields:
        value = fields[field.name]
      elif field.default is not dataclasses.MISSING:
        value = field.default
      elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
      else:
        raise TypeError(f"RunRecord() missing keyword argument "
                        f"{field.name!r}")
      object.__setattr__(self, field.name, value)
    object.__setattr__(self, "params",
                       _params_of(self.algorithm, params, own))
    self.__post_init__()

  def __post_init__(self):
    if not is_algorithm(self.algorithm):
      raise ValueError(f"algorithm must be one of {algorithms()}, got "
                       f"{self.algorithm!r}")
    if self.algorithm == IBLT:  # k-anonymity: no (epsilon, delta)
      self.has_guarantee = False
    if self.epsilon is not None and not math.isfinite(self.epsilon):
      self.epsilon, self.delta, self.has_guarantee = None, None, False
    if not self.has_guarantee:
      self.epsilon, self.delta = None, None
    if not self.config_key:
      self.config_key = config_key(self.config)
    if self.randomness is None:
      self.randomness = FRESH if self.seed is None else SEEDED

  def __getattr__(self, name: str):
    # Only for names that are not the record's own: a params field.
    if name.startswith("__") or name == "params":
      raise AttributeError(name)
    params = self.__dict__.get("params")
    if isinstance(params, dict) and name in params:
      return params[name]
    if name in _ALL_PARAMS_NAMES:
      return getattr(params, name, None)
    raise AttributeError(f"a run record has no field {name!r}")

  def __setattr__(self, name: str, value: Any) -> None:
    if name in _COMMON_NAMES:
      object.__setattr__(self, name, value)
    elif name in _PARAMS_NAMES.get(self.algorithm, ()):
      setattr(self.params, name, value)
    else:
      raise AttributeError(f"a {self.algorithm} record has no field "
                           f"{name!r}")

  def get(self, name: str, default=None):
    """The field ``name``, at the top or in ``params``; None for a params
    field of another algorithm; ``default`` if there is no such field (for
    code that goes by field name, as a dict's ``get``)."""
    if name in _COMMON_NAMES:
      return getattr(self, name)
    if isinstance(self.params, dict):
      return self.params.get(name, default)
    if name in _ALL_PARAMS_NAMES:
      return getattr(self.params, name, None)
    return default

  def params_dict(self) -> dict[str, Any]:
    """``params`` as its JSON object (a params record's fields, those
    written only when set left out while None)."""
    params = self.params
    if isinstance(params, dict):
      return _jsonable(params)
    out = {}
    for name, when_set in _PARAMS_FIELDS[self.algorithm]:
      value = getattr(params, name)
      if not (when_set and value is None):
        out[name] = _jsonable(value)
    return out

  def to_dict(self) -> dict[str, Any]:
    """The JSON object: the common fields and ``params``."""
    out = {name: _jsonable(getattr(self, name)) for name in _COMMON_JSON}
    out["params"] = self.params_dict()
    return out

  def flat(self) -> dict[str, Any]:
    """The JSON object with the params' fields beside the common ones (the
    layout of versions 1 and 2), for code that goes by field name; a
    common field wins over a mechanism's parameter of the same name."""
    out = self.to_dict()
    return {**out.pop("params"), **out}

  def to_json(self) -> str:
    """One line of ``results.jsonl`` (no newline), keys sorted.

    orjson writes the fields as they are (nan and inf as null, numpy
    scalars as numbers), about ten times faster than the standard library:
    a sweep writes a line per run. A record holding what orjson refuses (a
    key that is not a string, an int beyond 64 bits, a lone surrogate, a
    Mapping that is not a dict) is written as :meth:`to_dict` by the
    standard library's encoder instead; both lines read back the same.
    """
    fields = dict(zip(_COMMON_JSON, _COMMON_READER(self)))
    params = self.params
    if isinstance(params, dict):
      fields["params"] = params
    else:
      names, read, when_set = _params_reader(self.algorithm)
      own = dict(zip(names, read(params)))
      for name in when_set:
        if own[name] is None:
          del own[name]
      fields["params"] = own
    try:
      return orjson.dumps(fields, option=_ORJSON_OPTIONS).decode("utf-8")
    except orjson.JSONEncodeError:
      return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False)

  @classmethod
  def from_dict(cls, raw: Any) -> RunRecord:
    """A record from its JSON object, validated. Unknown keys are ignored.

    Raises:
      RecordError: if ``raw`` is not a run record of a version read
        (:func:`schema_problem`; versions 1 and 2 are upgraded,
        :func:`upgrade`), or a field is missing or has the wrong type; the
        message names the field (``params.<name>`` for a params field).
    """
    raw = upgrade(raw)
    check(raw)
    data = {k: v for k, v in raw.items() if k in _COMMON_JSON_NAMES}
    for name in _FLOATS:
      if data.get(name) is not None:
        data[name] = float(data[name])
    data["params"] = _read_params(raw["algorithm"], raw["params"])
    try:
      return cls(**data)
    except RecursionError:  # config_key of a deeply nested config
      raise RecordError(BAD_FIELDS, "config: nested too deeply to be read "
                        "as a run's config") from None

  @classmethod
  def from_json(cls, line: str | bytes) -> RunRecord:
    """A record from one line of ``results.jsonl``.

    Raises:
      RecordError: if the line is not JSON or not a run record.
    """
    try:
      raw = json.loads(line.decode("utf-8") if isinstance(line, bytes)
                       else line)
    except ValueError as err:  # UnicodeDecodeError too
      raise RecordError(NOT_JSON, f"not JSON ({err})") from None
    except RecursionError:
      raise RecordError(NOT_JSON, "not JSON that can be read (nested too "
                        "deeply)") from None
    return cls.from_dict(raw)


_COMMON_FIELDS = tuple(f for f in dataclasses.fields(RunRecord)
                       if f.name != "params")
_COMMON_NAMES = frozenset(f.name for f in dataclasses.fields(RunRecord))
# The common fields as written, in declaration order, and one getter of
# all their values.
_COMMON_JSON = tuple(f.name for f in _COMMON_FIELDS)
_COMMON_JSON_NAMES = frozenset(_COMMON_JSON)
_COMMON_READER = operator.attrgetter(*_COMMON_JSON)
assert not _COMMON_NAMES & _ALL_PARAMS_NAMES, "a field is at two places"


def _params_of(algorithm: str, params: Any, own: Mapping[str, Any]
               ) -> Params:
  """The params of a record of ``algorithm``: ``params`` (its params
  record, or a mapping of its fields; a dict for another mechanism) with
  the params fields given as keywords (``own``) put in.

  Raises:
    TypeError: for a field the algorithm's params record has not (but a
      field of another algorithm's given None: absent), or a params of
      another type.
  """
  kind = PARAMS.get(algorithm)
  if kind is None:  # another mechanism: its parameters as a JSON object
    if own:
      raise TypeError(f"a {algorithm} record takes its parameters as "
                      f"params=, not as keywords ({', '.join(own)})")
    if params is None:
      return {}
    if not isinstance(params, Mapping):
      raise TypeError(f"a {algorithm} record's params is a mapping (its "
                      f"parameters as JSON), got {type(params).__name__}")
    return dict(params)
  if params is None:
    params = kind()
  elif isinstance(params, Mapping):
    params = kind(**params)
  elif not isinstance(params, kind):
    raise TypeError(f"a {algorithm} record's params is a "
                    f"{kind.__name__}, got {type(params).__name__}")
  # A field of another algorithm's params given None is absent, as the
  # flat records of versions 1 and 2 held it.
  own = {name: value for name, value in own.items()
         if name in _PARAMS_NAMES[algorithm]
         or not (name in _ALL_PARAMS_NAMES and value is None)}
  unknown = [name for name in own if name not in _PARAMS_NAMES[algorithm]]
  if unknown:
    raise TypeError(f"RunRecord() got keyword argument(s) "
                    f"{', '.join(map(repr, unknown))} that a {algorithm} "
                    f"record does not hold")
  for name, value in own.items():
    setattr(params, name, value)
  return params


def _read_params(algorithm: str, raw: Mapping[str, Any]) -> Params:
  """The params of a checked record's JSON object (unknown keys of a
  params record ignored; ints read as floats where floats are declared)."""
  kind = PARAMS.get(algorithm)
  if kind is None:
    return dict(raw)
  names = _PARAMS_NAMES[algorithm]
  values = {k: v for k, v in raw.items() if k in names}
  for name in _FLOATS:
    if values.get(name) is not None:
      values[name] = float(values[name])
  return kind(**values)


@functools.lru_cache(maxsize=None)
def _params_reader(algorithm: str) -> tuple[tuple[str, ...],
                                            operator.attrgetter,
                                            tuple[str, ...]]:
  """An algorithm's params fields as the names, one getter of all their
  values (a tuple, in that order) and the names written only when set."""
  fields = _PARAMS_FIELDS[algorithm]
  names = tuple(name for name, _ in fields)
  return (names, operator.attrgetter(*names),
          tuple(name for name, when_set in fields if when_set))


_REQUIRED = tuple(f.name for f in _COMMON_FIELDS
                  if f.default is dataclasses.MISSING
                  and f.default_factory is dataclasses.MISSING)


def _names_of(algorithm: str) -> frozenset[str]:
  """The fields a record of ``algorithm`` holds, at the top or in its
  params record (the top only, for another mechanism's)."""
  return _COMMON_NAMES | _PARAMS_NAMES.get(algorithm, frozenset())


def _located(raw: Mapping[str, Any], name: str) -> tuple[str, bool, Any]:
  """Where field ``name`` is in the JSON object ``raw`` (``name``, or
  ``params.<name>``), whether it is there, and its value (None if not)."""
  where = raw if name in _COMMON_NAMES else raw["params"]
  label = name if name in _COMMON_NAMES else f"params.{name}"
  return label, name in where, where.get(name)


def check(raw: Any) -> None:
  """Raises :class:`RecordError` if ``raw`` is not a run record of this
  version; its message names the field at fault."""
  if not isinstance(raw, Mapping):
    raise RecordError(FOREIGN, f"a run record is a JSON object, not a "
                      f"{type(raw).__name__}")
  if not is_algorithm(raw.get("algorithm")):
    raise RecordError(FOREIGN, f"algorithm: must be one of "
                      f"{', '.join(algorithms())}, got "
                      f"{raw.get('algorithm')!r}")
  problem = schema_problem(raw)
  if problem:
    raise RecordError(problem, problem)
  missing = [name for name in _REQUIRED + ("config", "params")
             if name not in raw]
  if missing:
    raise RecordError(BAD_FIELDS, f"run record without {', '.join(missing)}")
  if not isinstance(raw["params"], Mapping):
    _bad("params", "a JSON object", raw["params"])
  _check_numbers(raw)
  value = raw["run"]  # what a sweep keys and counts runs by, with the seed
  if isinstance(value, bool) or not isinstance(value, int) or value < 0:
    _bad("run", "a whole number >= 0", value)
  _check_seed(raw)
  key = raw.get("config_key")  # null or "": computed from the config
  if key is not None and not isinstance(key, str):
    _bad("config_key", "a string", key)
  if not isinstance(raw["config"], Mapping):
    _bad("config", "a JSON object", raw["config"])
  _check_nesting(raw)
  _check_guarantee(raw)
  _check_labels(raw)
  _check_metrics(raw["metrics"])
  _check_discovered(raw["discovered"])


def _check_seed(raw: Mapping[str, Any]) -> None:
  """A whole seed >= 0 (randomness "seed" or absent), or a null one with
  randomness "fresh" (a run that drew fresh entropy)."""
  seed, randomness = raw["seed"], raw.get("randomness")
  if randomness not in (None, SEEDED, FRESH):
    _bad("randomness", f'"{SEEDED}", "{FRESH}" or null', randomness)
  if randomness == FRESH:
    if seed is not None:
      _bad("seed", 'null where randomness is "fresh" (fresh entropy is '
           "recorded nowhere)", seed)
  elif isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
    _bad("seed", 'a whole number >= 0 (or null, with randomness "fresh")',
         seed)


def _check_nesting(raw: Mapping[str, Any]) -> None:
  """No field of the record nested more than ``MAX_NESTING`` levels deep
  (what reads a record's fields, :meth:`RunRecord.to_dict` or a report's
  labels, goes down them by recursion): each common field, each field of
  a params record, a mechanism's params as a whole."""
  params = raw["params"]
  fields = [(name, name, value) for name, value in raw.items()
            if name in _COMMON_JSON_NAMES]
  own = _PARAMS_NAMES.get(raw["algorithm"])
  if own is None:
    fields.append(("params", "params", params))
  else:
    fields += [(f"params.{name}", name, value)
               for name, value in params.items() if name in own]
  for label, name, value in fields:
    if (type(value) in _NESTED  # pylint: disable=unidiomatic-typecheck
        and _deeper_than(value, MAX_NESTING)):
      raise RecordError(BAD_FIELDS, f"{label}: nested too deeply (more "
                        f"than {MAX_NESTING} levels) to be a run's {name}")


def _deeper_than(value: Any, levels: int) -> bool:
  """Whether the JSON value ``value`` holds objects or arrays nested more
  than ``levels`` deep (``value`` itself the first), level by level,
  without recursion (and without a Python loop over a level of arrays: a
  record holds tens of thousands of words and counts)."""
  level = [value]
  for _ in range(levels):
    if set(map(type, level)) <= _ARRAYS:
      items = itertools.chain.from_iterable(level)
    else:
      items = itertools.chain.from_iterable(
          item.values() if type(item) is dict else item for item in level)  # pylint: disable=unidiomatic-typecheck
    level = [item for item in items if type(item) in _NESTED]  # pylint: disable=unidiomatic-typecheck
    if not level:
      return False
  return True


def _check_numbers(raw: Mapping[str, Any]) -> None:
  """The numbers of the record's algorithm, the floats (or null) and the
  counts and sizes (``_AT_LEAST``) of the fields it holds."""
  algorithm = raw["algorithm"]
  holds = _names_of(algorithm)
  for name in _NUMBERS.get(algorithm, ()):
    label, present, value = _located(raw, name)
    if not present:
      raise RecordError(BAD_FIELDS, f"{label}: missing (a {algorithm} "
                        "record holds it)")
    _number(label, value, "a number")
  for name in _FLOATS:
    if name in holds:
      label, _, value = _located(raw, name)
      if value is not None:
        _number(label, value, "a number or null")
  for name, low in _AT_LEAST.items():
    if name not in holds:
      continue
    label, _, value = _located(raw, name)
    if value is None and name != "seconds":  # seconds is never null
      continue
    whole = "a whole number" if name in _WHOLE else "a number"
    number = _number(label, value, f"{whole} >= {low}")
    if (not math.isfinite(number) or number < low
        or (name in _WHOLE and not number.is_integer())):
      _bad(label, f"{whole} >= {low}", value)


def _number(name: str, value, what: str) -> float:
  """``value`` as a float, or a RecordError: ``name`` must be ``what``."""
  number = as_number(value)
  if number is None:
    if isinstance(value, int) and not isinstance(value, bool):
      what += " within a float's range"
    _bad(name, what, value)
  return number


def _check_guarantee(raw: Mapping[str, Any]) -> None:
  """has_guarantee is a bool; with it, epsilon >= 0 and delta in [0, 1)
  (0: pure DP, the discrete Laplace's)."""
  flag = raw.get("has_guarantee", True)
  if not isinstance(flag, bool):
    _bad("has_guarantee", "true or false", flag)
  if not flag or raw["algorithm"] == IBLT:  # iblt: never a guarantee
    return
  epsilon, delta = raw["epsilon"], raw["delta"]
  if epsilon is not None and not 0 <= epsilon < math.inf:
    _bad("epsilon", "a finite number >= 0 (or null) with has_guarantee "
         "true", epsilon)
  if delta is not None and not 0 <= delta < 1:
    _bad("delta", "in [0, 1) (or null) with has_guarantee true", delta)


def _check_labels(raw: Mapping[str, Any]) -> None:
  """engine is a string, adjacency dp_accounting's relation names (or
  null, in records written before they existed)."""
  engine = raw.get("engine")
  if engine is not None and not isinstance(engine, str):
    _bad("engine", "a string or null", engine)
  adjacency = raw.get("adjacency")
  if adjacency is None:
    return
  known = adjacency_lib.Adjacency.__members__
  given = (adjacency.split(",") if isinstance(adjacency, str)
           and adjacency.strip() else [])
  if not isinstance(adjacency, str) or not all(
      name.strip() in known for name in given):
    _bad("adjacency", f"names among {', '.join(known)}, comma-separated "
         "(or empty, or null)", adjacency)


def _check_metrics(metrics: Any) -> None:
  """A non-empty object of numbers; proportions in [0, 1], num_discovered
  in [0, inf)."""
  if not isinstance(metrics, Mapping) or not metrics:
    _bad("metrics", "a non-empty JSON object", metrics)
  for name, value in metrics.items():
    number = _number(f"metrics[{name!r}]", value, "a number")
    base = name.partition("@")[0] if isinstance(name, str) else None
    high = (1 if base in _PROPORTIONS
            else math.inf if name == "num_discovered" else None)
    if high is not None and not (math.isfinite(number)
                                 and 0 <= number <= high):
      raise RecordError(OUT_OF_RANGE, f"metrics[{name!r}]: {value!r} is "
                        f"not in [0, {high:g}]")


def _check_discovered(discovered: Any) -> None:
  """A list of distinct strings."""
  if not isinstance(discovered, list) or not all(
      isinstance(w, str) for w in discovered):
    _bad("discovered", "a list of strings", discovered)
  if len(set(discovered)) < len(discovered):
    seen = set()
    twice = next(w for w in discovered if w in seen or seen.add(w))
    raise RecordError(BAD_FIELDS, f"discovered: must hold each word once, "
                      f"got {twice[:60]!r} more than once")


def _bad(name: str, what: str, value) -> None:
  shown = repr(value)
  shown = shown if len(shown) <= 60 else shown[:57] + "..."
  raise RecordError(BAD_FIELDS, f"{name}: must be {what}, got {shown}")


def upgrade(raw: Any) -> Any:
  """A record's JSON object of version 1 or 2 in the current layout:
  its algorithm's own fields (:data:`PARAMS`) moved under ``"params"``
  (and a version-1 record's ``counts`` as ``reported_counts``); anything
  else as it is. Every other field, ``config`` and ``config_key`` among
  them, stays as it was, so a sweep resumes over the records and a
  summary pools them with new ones."""
  if not isinstance(raw, Mapping):
    return raw
  version = raw.get("schema_version")
  if isinstance(version, bool) or version not in (1, 2):
    return raw
  out = {k: v for k, v in raw.items() if not (version == 1
                                               and k == "counts")}
  if version == 1 and "counts" in raw:
    out["reported_counts"] = raw["counts"]
  own = _PARAMS_NAMES.get(out.get("algorithm"))
  if own is not None:  # versions 1 and 2 knew the built-in ones only
    out["params"] = {name: out.pop(name) for name in list(out)
                     if name in own}
  out["schema_version"] = SCHEMA_VERSION
  return out


def schema_problem(raw: Mapping[str, Any]) -> str | None:
  """Why the JSON object ``raw`` is not a record of a schema version read
  (``READ_VERSIONS``), or None if it is. A record without
  ``schema_version`` is of an earlier layout (SFP's ``threshold``, no
  ``config``, ``"epsilon": "inf"``), which is not read."""
  version = raw.get("schema_version")
  if version is None:
    return ("run record without schema_version (an earlier layout, not "
            "read)")
  if isinstance(version, bool) or version not in READ_VERSIONS:
    read = (", ".join(str(v) for v in READ_VERSIONS[:-1])
            + f" and {READ_VERSIONS[-1]}")
    return (f"run record of schema_version {version!r} (only {read} are "
            "read)")
  return None


def as_number(value) -> float | None:
  """A JSON number as a float; None for anything else (bools too, and ints
  beyond a float's range)."""
  if isinstance(value, bool):
    return None
  if isinstance(value, (int, float)):
    try:
      return float(value)
    except OverflowError:
      return None
  return None


# orjson's options for a record's line: keys sorted, numpy values written.
_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY

# Types written as they are (floats are not: nan and inf become null).
_JSON_LEAVES = frozenset((str, int, bool, type(None)))
_PLAIN_VALUES = _JSON_LEAVES | {float}


def _jsonable(value):
  kind = type(value)
  if kind is str or kind is int or kind is bool or value is None:
    return value  # the common leaves first: a record holds thousands
  if isinstance(value, float) and not math.isfinite(value):
    return None
  if isinstance(value, Mapping):
    if _plain(value):
      return dict(value)
    return {str(k): _jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    if set(map(type, value)) <= _JSON_LEAVES:
      return list(value)
    return [_jsonable(v) for v in value]
  if hasattr(value, "item"):  # numpy scalars
    return _jsonable(value.item())
  return value


def _plain(mapping: Mapping) -> bool:
  """Whether ``mapping`` is written as it is: ``str`` keys, values of
  ``_JSON_LEAVES`` or finite floats."""
  kinds = set(map(type, mapping.values()))
  if not kinds <= _PLAIN_VALUES or not set(map(type, mapping)) <= {str}:
    return False
  return float not in kinds or all(
      math.isfinite(v) for v in mapping.values() if type(v) is float)  # pylint: disable=unidiomatic-typecheck


def config_key(config: Mapping[str, Any]) -> str:
  """16 hex digits identifying ``config`` (SHA-256 of canonical JSON)."""
  text = json.dumps(_jsonable(config), sort_keys=True, separators=(",", ":"),
                    allow_nan=False)
  return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
