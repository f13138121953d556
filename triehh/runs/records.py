"""The run record: one JSON line of ``results.jsonl`` per finished run.

``experiments.run_triehh`` and ``experiments.run_sfp`` (and a sweep over
them and TFF's IBLT heavy hitters) write one :class:`RunRecord` per run;
``experiments.summarize`` and :mod:`triehh.analysis.summary` read them back. A
record is one JSON object on one line, keys sorted. Fields (``triehh``:
TrieHH records only, ``sfp``: SFP records only, ``iblt``: IBLT records
only; every other field is in every record):

Identity of the run
  ``schema_version`` (int): 1. A record without it is of an earlier layout
  and is not read (:func:`schema_problem`).
  ``algorithm`` (str): ``"triehh"``, ``"sfp"`` or ``"iblt"`` (TFF's IBLT
  heavy hitters, :mod:`triehh.baselines.iblt`, run by a sweep).
  ``engine`` (str, triehh): ``"fast"`` or ``"tff"``.
  ``dataset`` (str): the data set's name (``"default"``, a file's base
  name, ``"synthetic:<table>:<law>"``).
  ``setting`` (str): ``"single"``, ``"oov"`` or ``"multi"``.
  ``n_users`` (int): users in the population.
  ``run`` (int): index of the run within its invocation (0, 1, ...).
  ``seed`` (int): seed of the run (``--seed`` + ``run``).
  ``config`` (object): everything given that changes the result except the
  seed: the algorithm's options as asked for (target epsilon and delta,
  theta, batch size, T, sketch size, ...; ``null`` where not given) and,
  under ``"data"``, the data-set options (``dataset``, absolute
  ``data_path``, ``setting``, ``num_users``, ``max_length``, ...).
  ``config_key`` (str): 16 hex digits, a SHA-256 of ``config`` as canonical
  JSON (:func:`config_key`). Two runs with the same ``config_key`` and
  ``seed`` are the same run (a rerun or a duplicate line); a sweep skips
  the cells whose key and seed are already recorded.

Privacy
  ``epsilon`` (float or null), ``delta`` (float or null): the central
  guarantee the run achieved ((epsilon, delta)-DP; for TrieHH Theorem 1 at
  the run's parameters, for SFP the shuffle bound). ``null`` exactly when
  ``has_guarantee`` is false.
  ``has_guarantee`` (bool): false for runs outside Theorem 1 (``--theta``
  with ``--allow_no_guarantee``): no privacy guarantee at all. Always false
  for iblt.
  ``target_epsilon``, ``target_delta`` (float or null): what was asked for
  (null when theta and the batch size were given directly; always null for
  iblt, which is not calibrated to any epsilon).
  ``privacy`` (str, iblt): what an IBLT run gives, plainly: k-anonymity
  (every string sent by at least ``k_anonymity`` clients of a round is
  released with its exact count), which is NOT (epsilon, delta)-differential
  privacy: ``epsilon`` and ``delta`` are null, ``has_guarantee`` false and
  ``accounting`` ``"none"``, as for a TrieHH run without guarantee.
  ``matched_epsilon``, ``matched_delta`` (float or null, iblt): the TrieHH
  target (epsilon, delta) whose Corollary 1 batch size (and theta, when
  ``k_anonymity`` was not given) the run used, so that it samples TrieHH's
  users for the same seed; NOT a guarantee of the IBLT run.
  ``epsilon_local``, ``epsilon_fragment``, ``epsilon_word`` (float or null,
  sfp): the local epsilon of a user's message and its share for the
  fragment and the (optional) whole-word sketch.

Parameters
  ``theta`` (int), ``gamma`` (float, ``batch_size / sqrt(n_users)``),
  ``levels`` (int, L + 1), ``num_sub_rounds`` (int),
  ``max_num_prefixes`` (int or null): triehh.
  ``batch_size`` (int, users sampled per round, m), ``max_length`` (int, L
  in characters): triehh and iblt.
  ``word_choice`` (str, triehh): ``per_round`` (Algorithm 3, several-word
  users redraw every round) or ``per_run``. ``accounting`` (str, triehh and
  iblt): the proof the (epsilon, delta) comes from (``Theorem 1``,
  ``per-round composition (L*delta)`` or ``none``; iblt: ``none``).
  ``covers`` (str, triehh): which outputs the guarantee covers, and in
  which direction(s) (``docs/privacy.md``).
  ``sampling`` (str, triehh): ``"poisson"`` (each user takes part in a
  round with probability ``sampling_rate``; ``batch_size`` is then the
  expected batch) or ``"fixed"`` (the paper's m users per round). Records
  written before the field existed are fixed-size runs.
  ``sampling_rate`` (float or null, triehh): q of a Poisson run.
  ``tff_secure_sum`` (bool or null), ``tff_max_user_contribution`` (int or
  null), ``tff_workers`` (int or null, the number of remote workers):
  triehh, null for the fast engine.
  ``top_t`` (int, sfp): T, tuples kept per fragment position. ``k``, ``m``
  (int, sfp): Count Mean Sketch hash functions and width. ``length`` (int,
  sfp): padded string length in characters. ``num_buckets`` (int),
  ``fragment_alphabet`` (str), ``word_budget`` (float), ``simulation``
  (str), ``check_puzzle_hash`` (bool), ``hash_seed`` (int): sfp.
  ``k_anonymity`` (int, iblt): strings sent by fewer clients of a round are
  not released. ``capacity`` (int, iblt): distinct strings the sketch was
  sized for (with ``config["capacity"]`` null, the most distinct strings
  of a round of this run, so it varies with the seed). ``string_max_bytes``
  (int, iblt): strings are cut to this many UTF-8 bytes.
  ``secure_sum_bitwidth`` (int or null, iblt): bit width of TFF's secure
  sum, null for the plain sum. ``round_draw`` (str, iblt): ``sampled``
  (each round a fresh TrieHH-style sample; the first is TrieHH's first
  round for the seed) or ``disjoint``. ``repetitions`` (int, iblt): hash
  repetitions. ``sketch_shape`` (list of int, iblt): a client's sketch.
  ``bytes_per_client`` (int, iblt): bytes of the tensors a client sends per
  round. ``memory_estimate_bytes`` (int, iblt): worker memory the largest
  round needs (the estimate the run was checked against).

Results
  ``discovered`` (list of str): the heavy hitters, most counted first.
  iblt: every string the IBLT released, truncated ones included.
  ``counts`` (list of float): their votes (triehh), estimated counts (sfp)
  or exact counts summed over the rounds that released them (iblt), in the
  same order. TrieHH's votes, and its ``votes_per_round``, are NOT covered
  by the run's (epsilon, delta), which covers only the set of
  ``discovered`` words: simulation studies only (``docs/privacy.md``).
  SFP's estimates are outputs of its local-DP reports, covered by its
  guarantee. IBLT's counts are released as they are (k-anonymity only).
  ``metrics`` (object): ``precision@K``, ``recall@K``, ``f1@K`` per K,
  ``precision`` and ``num_discovered`` (``triehh.core.metrics``); proportions in
  [0, 1] except ``num_discovered``. For iblt, truncated outputs count as
  false positives (TrieHH never reports a truncated word).
  ``seconds`` (float): wall time of the run in seconds, data loading
  excluded (iblt: of its TFF rounds, sampling excluded).
  ``client_seconds``, ``server_seconds`` (float, sfp): its parts.
  ``rounds`` (int): rounds run (triehh: trie levels; iblt: IBLT rounds).
  ``num_participants`` (int, user-rounds sampled): triehh and iblt.
  ``votes_per_round`` (list of int): triehh.
  ``reports_per_position`` (list of int), ``num_stitched`` (int): sfp.
  ``distinct_users`` (int, iblt): distinct users that took part.
  ``seconds_per_client`` (float, iblt): ``seconds`` per participating
  client. ``round_seconds`` (list of float, iblt): each round's TFF call.
  ``num_not_decoded`` (int, iblt): strings the server could not decode.
  ``num_truncated`` (int, iblt): released strings cut at
  ``string_max_bytes`` (some sender held a longer word), ``truncated``
  (list of str, iblt): those strings; counted as false positives.

Writing: :class:`ResultsWriter` appends each record as one complete line
with a single ``os.write`` on an ``O_APPEND`` descriptor under an exclusive
``fcntl.flock``, so concurrent writers never interleave. A last line
without its newline (a writer killed mid-line) is moved to
``results.jsonl.partial-<UTC time>-<pid>`` before the next append, with a
message on stderr, and is never glued to the next record.
"""

from __future__ import annotations

import dataclasses
import datetime
import fcntl
import hashlib
import json
import math
import os
import signal
import sys
from collections.abc import Iterator, Mapping
from typing import Any

SCHEMA_VERSION = 1
RESULTS_FILE = "results.jsonl"
ALGORITHMS = ("triehh", "sfp", "iblt")
_TRIEHH = ("triehh",)
_SFP = ("sfp",)
_IBLT = ("iblt",)


def _only(*algorithms: str) -> dict:
  return {"algorithms": algorithms}


@dataclasses.dataclass
class RunRecord:
  """One finished run; the fields are documented in the module docstring."""

  algorithm: str
  dataset: str
  setting: str
  n_users: int
  run: int
  seed: int
  epsilon: float | None
  delta: float | None
  target_epsilon: float | None
  target_delta: float | None
  discovered: list[str]
  counts: list[float]
  metrics: dict[str, float]
  seconds: float
  config: dict = dataclasses.field(default_factory=dict)
  has_guarantee: bool = True
  # TrieHH.
  engine: str | None = dataclasses.field(default=None, metadata=_only(*_TRIEHH))
  theta: int | None = dataclasses.field(default=None, metadata=_only(*_TRIEHH))
  gamma: float | None = dataclasses.field(default=None,
                                          metadata=_only(*_TRIEHH))
  batch_size: int | None = dataclasses.field(
      default=None, metadata=_only(*_TRIEHH, *_IBLT))
  max_length: int | None = dataclasses.field(
      default=None, metadata=_only(*_TRIEHH, *_IBLT))
  levels: int | None = dataclasses.field(default=None, metadata=_only(*_TRIEHH))
  num_sub_rounds: int | None = dataclasses.field(default=None,
                                                 metadata=_only(*_TRIEHH))
  word_choice: str | None = dataclasses.field(default=None,
                                              metadata=_only(*_TRIEHH))
  accounting: str | None = dataclasses.field(
      default=None, metadata=_only(*_TRIEHH, *_IBLT))
  covers: str | None = dataclasses.field(default=None,
                                         metadata=_only(*_TRIEHH))
  sampling: str | None = dataclasses.field(default=None,
                                           metadata=_only(*_TRIEHH))
  sampling_rate: float | None = dataclasses.field(default=None,
                                                  metadata=_only(*_TRIEHH))
  max_num_prefixes: int | None = dataclasses.field(default=None,
                                                   metadata=_only(*_TRIEHH))
  tff_secure_sum: bool | None = dataclasses.field(default=None,
                                                  metadata=_only(*_TRIEHH))
  tff_max_user_contribution: int | None = dataclasses.field(
      default=None, metadata=_only(*_TRIEHH))
  tff_workers: int | None = dataclasses.field(default=None,
                                              metadata=_only(*_TRIEHH))
  rounds: int | None = dataclasses.field(default=None,
                                         metadata=_only(*_TRIEHH, *_IBLT))
  votes_per_round: list[int] | None = dataclasses.field(
      default=None, metadata=_only(*_TRIEHH))
  num_participants: int | None = dataclasses.field(
      default=None, metadata=_only(*_TRIEHH, *_IBLT))
  # SFP.
  epsilon_local: float | None = dataclasses.field(default=None,
                                                  metadata=_only(*_SFP))
  epsilon_fragment: float | None = dataclasses.field(default=None,
                                                     metadata=_only(*_SFP))
  epsilon_word: float | None = dataclasses.field(default=None,
                                                 metadata=_only(*_SFP))
  top_t: int | None = dataclasses.field(default=None, metadata=_only(*_SFP))
  k: int | None = dataclasses.field(default=None, metadata=_only(*_SFP))
  m: int | None = dataclasses.field(default=None, metadata=_only(*_SFP))
  length: int | None = dataclasses.field(default=None, metadata=_only(*_SFP))
  num_buckets: int | None = dataclasses.field(default=None,
                                              metadata=_only(*_SFP))
  fragment_alphabet: str | None = dataclasses.field(default=None,
                                                    metadata=_only(*_SFP))
  word_budget: float | None = dataclasses.field(default=None,
                                                metadata=_only(*_SFP))
  simulation: str | None = dataclasses.field(default=None,
                                             metadata=_only(*_SFP))
  check_puzzle_hash: bool | None = dataclasses.field(default=None,
                                                     metadata=_only(*_SFP))
  hash_seed: int | None = dataclasses.field(default=None,
                                            metadata=_only(*_SFP))
  reports_per_position: list[int] | None = dataclasses.field(
      default=None, metadata=_only(*_SFP))
  num_stitched: int | None = dataclasses.field(default=None,
                                               metadata=_only(*_SFP))
  client_seconds: float | None = dataclasses.field(default=None,
                                                   metadata=_only(*_SFP))
  server_seconds: float | None = dataclasses.field(default=None,
                                                   metadata=_only(*_SFP))
  # IBLT.
  privacy: str | None = dataclasses.field(default=None, metadata=_only(*_IBLT))
  matched_epsilon: float | None = dataclasses.field(default=None,
                                                    metadata=_only(*_IBLT))
  matched_delta: float | None = dataclasses.field(default=None,
                                                  metadata=_only(*_IBLT))
  k_anonymity: int | None = dataclasses.field(default=None,
                                              metadata=_only(*_IBLT))
  capacity: int | None = dataclasses.field(default=None,
                                           metadata=_only(*_IBLT))
  string_max_bytes: int | None = dataclasses.field(default=None,
                                                   metadata=_only(*_IBLT))
  secure_sum_bitwidth: int | None = dataclasses.field(default=None,
                                                      metadata=_only(*_IBLT))
  round_draw: str | None = dataclasses.field(default=None,
                                             metadata=_only(*_IBLT))
  repetitions: int | None = dataclasses.field(default=None,
                                              metadata=_only(*_IBLT))
  sketch_shape: list[int] | None = dataclasses.field(default=None,
                                                     metadata=_only(*_IBLT))
  bytes_per_client: int | None = dataclasses.field(default=None,
                                                   metadata=_only(*_IBLT))
  memory_estimate_bytes: int | None = dataclasses.field(
      default=None, metadata=_only(*_IBLT))
  distinct_users: int | None = dataclasses.field(default=None,
                                                 metadata=_only(*_IBLT))
  seconds_per_client: float | None = dataclasses.field(default=None,
                                                       metadata=_only(*_IBLT))
  round_seconds: list[float] | None = dataclasses.field(
      default=None, metadata=_only(*_IBLT))
  num_not_decoded: int | None = dataclasses.field(default=None,
                                                  metadata=_only(*_IBLT))
  num_truncated: int | None = dataclasses.field(default=None,
                                                metadata=_only(*_IBLT))
  truncated: list[str] | None = dataclasses.field(default=None,
                                                  metadata=_only(*_IBLT))
  config_key: str = ""
  schema_version: int = SCHEMA_VERSION

  def __post_init__(self):
    if self.algorithm not in ALGORITHMS:
      raise ValueError(f"algorithm must be one of {ALGORITHMS}, got "
                       f"{self.algorithm!r}")
    if self.algorithm == "iblt":  # k-anonymity: no (epsilon, delta)
      self.has_guarantee = False
    if self.epsilon is not None and not math.isfinite(self.epsilon):
      self.epsilon, self.delta, self.has_guarantee = None, None, False
    if not self.has_guarantee:
      self.epsilon, self.delta = None, None
    if not self.config_key:
      self.config_key = config_key(self.config)

  def to_dict(self) -> dict[str, Any]:
    """The JSON object: common fields and those of the record's algorithm."""
    out = {}
    for field in dataclasses.fields(self):
      algorithms = field.metadata.get("algorithms")
      if algorithms is None or self.algorithm in algorithms:
        out[field.name] = _jsonable(getattr(self, field.name))
    return out

  def to_json(self) -> str:
    """One line of ``results.jsonl`` (no newline)."""
    return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False)

  @classmethod
  def from_dict(cls, raw: Mapping[str, Any]) -> RunRecord:
    """A record from its JSON object. Unknown keys are ignored.

    Raises:
      ValueError: if the object is not of the current ``schema_version``
        (:func:`schema_problem`), or a required field is missing or has the
        wrong type.
    """
    if not isinstance(raw, Mapping):
      raise ValueError("a run record is a JSON object")
    problem = schema_problem(raw)
    if problem:
      raise ValueError(problem)
    data = dict(raw)
    for name in ("epsilon", "delta", "target_epsilon", "target_delta",
                 "epsilon_local", "epsilon_fragment", "epsilon_word",
                 "matched_epsilon", "matched_delta"):
      if name in data:
        data[name] = _float_or_none(data[name], name)
    names = {f.name for f in dataclasses.fields(cls)}
    missing = [f.name for f in dataclasses.fields(cls)
               if f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING
               and f.name not in data]
    if missing:
      raise ValueError(f"run record without {', '.join(missing)}")
    kept = {k: v for k, v in data.items() if k in names}
    return cls(**kept)

  @classmethod
  def from_json(cls, line: str | bytes) -> RunRecord:
    """A record from one line of ``results.jsonl``.

    Raises:
      ValueError: if the line is not JSON or not a run record.
    """
    return cls.from_dict(json.loads(line))


def schema_problem(raw: Mapping[str, Any]) -> str | None:
  """Why the JSON object ``raw`` is not a record of this schema version, or
  None if it is. A record without ``schema_version`` is of an earlier
  layout (SFP's ``threshold``, no ``config``, ``"epsilon": "inf"``), which
  is not read."""
  version = raw.get("schema_version")
  if version is None:
    return ("run record without schema_version (an earlier layout, not "
            "read)")
  if isinstance(version, bool) or version != SCHEMA_VERSION:
    return (f"run record of schema_version {version!r} (only "
            f"{SCHEMA_VERSION} is read)")
  return None


def as_number(value) -> float | None:
  """A JSON number as a float; None for anything else (bools too)."""
  if isinstance(value, bool):
    return None
  if isinstance(value, (int, float)):
    return float(value)
  return None


def _float_or_none(value, name: str) -> float | None:
  if value is None:
    return None
  number = as_number(value)
  if number is None:
    raise ValueError(f"{name} must be a number, got {value!r}")
  return number


def _jsonable(value):
  if isinstance(value, float) and not math.isfinite(value):
    return None
  if isinstance(value, Mapping):
    return {str(k): _jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_jsonable(v) for v in value]
  if hasattr(value, "item"):  # numpy scalars
    return _jsonable(value.item())
  return value


def config_key(config: Mapping[str, Any]) -> str:
  """16 hex digits identifying ``config`` (SHA-256 of canonical JSON)."""
  text = json.dumps(_jsonable(config), sort_keys=True, separators=(",", ":"),
                    allow_nan=False)
  return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---- results.jsonl ----------------------------------------------------------


def results_path(output_dir: str) -> str:
  return os.path.join(output_dir, RESULTS_FILE)


def check_output_dir(output_dir: str) -> str:
  """Creates ``output_dir`` if needed; the path of its results file.

  Raises:
    ValueError: if ``output_dir`` is a file, its results file is not a
      regular file, or either cannot be written.
  """
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise ValueError(f"--output_dir={output_dir} is a file, not a directory")
  try:
    os.makedirs(output_dir, exist_ok=True)
  except OSError as err:
    raise ValueError(f"--output_dir={output_dir}: cannot create it "
                     f"({err.strerror})") from None
  path = results_path(output_dir)
  if os.path.exists(path) and not os.path.isfile(path):
    raise ValueError(f"--output_dir={output_dir}: {path} is not a regular "
                     "file (a directory?); move it away or choose another "
                     "--output_dir")
  target = path if os.path.exists(path) else output_dir
  if not os.access(target, os.W_OK):
    raise ValueError(f"--output_dir={output_dir}: {target} is not writable")
  return path


def _partial_path(path: str) -> str:
  stamp = datetime.datetime.now(datetime.timezone.utc).strftime(
      "%Y%m%dT%H%M%S.%fZ")
  return f"{path}.partial-{stamp}-{os.getpid()}"


def _set_aside_partial_line(fd: int, path: str) -> str | None:
  """Moves an unterminated last line to a side file; its path, or None.

  The caller holds the file's lock.
  """
  size = os.fstat(fd).st_size
  if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
    return None
  end = size
  start = 0
  while end > 0:
    begin = max(0, end - 65536)
    chunk = os.pread(fd, end - begin, begin)
    newline = chunk.rfind(b"\n")
    if newline >= 0:
      start = begin + newline + 1
      break
    end = begin
  partial = os.pread(fd, size - start, start)
  side = _partial_path(path)
  with open(side, "xb") as f:
    f.write(partial)
    f.flush()
    os.fsync(f.fileno())
  os.ftruncate(fd, start)
  return side


class ResultsWriter:
  """Appends records to ``<output_dir>/results.jsonl``, one line each.

  Every append takes an exclusive ``flock`` on the file, sets aside an
  unterminated last line (see the module docstring) and writes the record
  and its newline with one ``os.write`` on an ``O_APPEND`` descriptor, then
  ``fsync``s. Without ``output_dir`` nothing is written.
  """

  def __init__(self, output_dir: str | None, *, log=None):
    self.path = check_output_dir(output_dir) if output_dir else None
    self._log = log or (lambda text: print(text, file=sys.stderr))
    self.written = 0

  def write(self, record: RunRecord) -> None:
    if self.path is None:
      return
    line = (record.to_json() + "\n").encode("utf-8")
    fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
      fcntl.flock(fd, fcntl.LOCK_EX)
      side = _set_aside_partial_line(fd, self.path)
      if side:
        self._log(f"warning: {self.path} ended in an unfinished line (a "
                  f"writer was killed mid-line); moved it to {side}")
      # Ctrl-C waits until the line is written and counted, so that the
      # count said on interrupt is the number of lines kept.
      mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
      try:
        view = memoryview(line)
        while view:
          done = os.write(fd, view)
          view = view[done:]
        self.written += 1
      finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
      os.fsync(fd)
    finally:
      os.close(fd)  # also releases the lock


def repair(path: str, *, log=None) -> str | None:
  """Sets aside an unterminated last line of ``path``; the side file or None."""
  log = log or (lambda text: print(text, file=sys.stderr))
  try:
    fd = os.open(path, os.O_RDWR)
  except FileNotFoundError:
    return None
  try:
    fcntl.flock(fd, fcntl.LOCK_EX)
    side = _set_aside_partial_line(fd, path)
  finally:
    os.close(fd)
  if side:
    log(f"warning: {path} ended in an unfinished line; moved it to {side}")
  return side


def iter_lines(path: str) -> Iterator[tuple[int, bytes]]:
  """``(line number, raw line)`` of the non-blank lines of ``path``."""
  with open(path, "rb") as f:
    for number, raw in enumerate(f, start=1):
      if raw.strip():
        yield number, raw


def read(path: str) -> tuple[list[RunRecord], list[int]]:
  """The records of ``path`` and the numbers of the lines that are not."""
  records, bad = [], []
  for number, raw in iter_lines(path):
    try:
      records.append(RunRecord.from_json(raw.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, TypeError):
      bad.append(number)
  return records, bad


def completed(path: str) -> set[tuple[str, int]]:
  """``(config_key, seed)`` of every run recorded in ``path`` (may not exist)."""
  try:
    records, _ = read(path)
  except FileNotFoundError:
    return set()
  return {(r.config_key, r.seed) for r in records}
