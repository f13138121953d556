"""TensorFlow Federated's IBLT heavy hitters, on TrieHH's sampled users.

TFF ships a federated heavy-hitters algorithm built on an invertible Bloom
lookup table (IBLT): ``tff.analytics.heavy_hitters.iblt.build_iblt_computation``.
Each client encodes its strings into an IBLT sketch (a fixed-size table of
hashed string chunks, counts and checksums); the server sums the sketches
with ``tff.federated_sum`` (or a secure sum) and decodes every string with
its count, releasing those held by at least ``k_anonymity`` clients of the
round. :func:`iblt_discover` runs that computation so that it can be
compared with TrieHH on the same users:

* Target. :func:`iblt_discover` takes an :class:`IBLTTarget`: the
  k-anonymity threshold, the round's users (``batch``: a batch size, or a
  :class:`triehh.Target` whose calibration gives TrieHH's), the sketch's
  parameters and the rounds, each checked when it is built. The result is
  a :class:`triehh.core.release.Release` whose ``guarantee`` says that
  there is no differential privacy (epsilon ``inf``, delta 1, no
  adjacency), with what k-anonymity means here in its ``covers``.
* Users (:mod:`triehh.baselines.iblt_rounds`). Each IBLT round takes
  ``batch_size`` users (TrieHH's m, given or calibrated by Corollary 1 from
  the target's ``epsilon``) drawn through :mod:`triehh.engines.sampling` from
  ``numpy.random.default_rng(seed)``: the first round's users exactly as
  TrieHH's first round draws them
  (:func:`~triehh.baselines.iblt_rounds.first_round_users`: for one-word
  populations the root's cell counts, then the users inside the cells as
  the TFF engine draws its clients), then for several-word populations one
  word rank per sampled user, and each user sends the one word
  :func:`triehh.engines.sampling.words_of` picks (Algorithm 3's draw). The first IBLT round therefore has the users
  and words of TrieHH's first round for the same seed. Later rounds:
  ``rounds="sampled"`` draws each afresh, uniformly
  (:func:`triehh.engines.sampling.sample_users`; TrieHH's later rounds depend on
  its trie); ``rounds="disjoint"`` draws each from the users not yet drawn
  (disjoint passes; with ``num_rounds=None`` until every user took part).
  The whole population is never one round (unless ``batch_size`` is n).
* Result. A word's count is the sum of its counts over the rounds in which
  it passed ``k_anonymity`` (with one round: exactly how many sampled users
  sent it).
* Privacy. Releasing every string held by ``k`` clients with its exact
  count is k-anonymity, not (epsilon, delta)-differential privacy: a word
  of ``k`` users is released whatever one of them holds. ``params.privacy``
  says so; no epsilon is reported.
* Truncation. IBLT cuts strings to ``string_max_bytes`` UTF-8 bytes (e.g.
  ``http://twi``), where TrieHH never reports a truncated word. An output
  some of whose senders held a longer word is a truncated output; such
  outputs stay in ``heavy_hitters`` (the IBLT released them) but are
  counted as false positives: ``params.num_truncated`` counts them and
  ``params.truncated`` lists them.
* Memory. The sketch's ``capacity`` must cover every distinct (cut) string
  among a round's participants (``None``: exactly that many, the most over
  the rounds; a smaller one is refused). TFF's C++ worker holds every
  client's sketch of a round, about :data:`WORKER_BYTES_PER_SKETCH_BYTE`
  times its size (measured: a round of 88k clients at capacity ~33k grew
  the worker by ~5 MB per client). The run is refused, with the estimate,
  when a round would need more than ``max_memory_fraction`` of the
  physical memory.
  :func:`plan_run` makes every check and the draw without running TFF (a
  sweep checks its cells with it before any run).

The computations run on the TFF engine's runtime
(:func:`triehh.engines.tff.runtime.get_runtime`): by default one local C++
worker, stopped when Python exits, or running workers given by
``workers``. With ``secure_sum_bitwidth`` the sketches are summed with
TFF's secure (modular) sum, which that runtime computes in the clear.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import time

import numpy as np

from triehh.baselines import iblt_rounds
from triehh.baselines import moved
from triehh.core import choices
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.core import progress
from triehh.core import ranking
from triehh.core import release
from triehh.core import validation
from triehh.theory import coverage
from triehh.theory import mechanism as mechanism_lib

DEFAULT_STRING_MAX_BYTES = 10
DEFAULT_REPETITIONS = 3
DEFAULT_MAX_MEMORY_FRACTION = 0.5
# Worker memory per byte of a client's sketch (sketch plus count tensor):
# one round of 88k clients at capacity ~33k (2.5 MB of tensors per client)
# grew TFF's worker by about 5 MB per client.
WORKER_BYTES_PER_SKETCH_BYTE = 2.0
ROUNDS = ("sampled", "disjoint")
# Appended to a truncated output when it is scored (IBLTResult.scored).
TRUNCATED_MARK = " [truncated]"
_TENSOR_BYTES = 8  # the IBLT's tensors are int64
# The largest k_anonymity taken: TFF compares it with the clients' counts
# in a tensor (a larger Python int overflows there), and no round has as
# many users.
MAX_K_ANONYMITY = 2**31 - 1
# Memory of the drawn rounds (measured): per user of a round, its index and
# its word's vocabulary index (8 bytes each); per round, its arrays' and
# tuple's overhead.
ROUND_BYTES_PER_USER = 16
ROUND_BYTES_OVERHEAD = 400
# What the release takes as public (Guarantee.public), and whom it trusts.
PUBLIC = ("k_anonymity, the batch size, the number of rounds, the IBLT's "
          "capacity, string_max_bytes and hash repetitions")
TRUST = ("the server: it picks each round's users, and sums and decodes "
         "their sketches, seeing every string of the round with its count "
         "(TFF's secure sum, when asked, is computed in the clear here); "
         "the k-anonymity threshold applies to what it releases")


@dataclasses.dataclass(frozen=True)
class IBLTTarget:
  """An IBLT run's release rule and parameters, checked when built.

  Everything that changes the law of the output is here (the seed, the
  memory bounds and the TFF workers are :func:`iblt_discover`'s keywords).
  Each field is checked once, here: a bad value raises naming it; what
  depends on the users (a batch above them, a ``k_anonymity`` above a
  round's users, a capacity below a round's strings) is checked when the
  run starts.

  Attributes:
    k_anonymity: release strings sent by at least this many clients of a
      round (at most the users of a round).
    batch: the users per round: a whole number, or a :class:`triehh.Target`
      (or :class:`triehh.Mechanism`) whose fixed-size calibration on the
      population gives TrieHH's batch size (Corollary 1 for a target;
      ``delta`` None: ``1/n^2``); its privacy only sizes the rounds.
    capacity: distinct strings the sketch holds; None: the most distinct
      cut strings of a round's participants. A smaller value is refused.
    string_max_bytes: cut strings to this many UTF-8 bytes.
    secure_sum_bitwidth: sum with TFF's secure sum at this bit width (1 to
      62), or None for ``tff.federated_sum``.
    num_rounds: IBLT rounds; None: 1 (``"sampled"``) or enough disjoint
      passes to cover every user (``"disjoint"``).
    rounds: ``"sampled"`` (each round a fresh TrieHH-style sample) or
      ``"disjoint"`` (each round from the users not yet drawn).
    repetitions: hash repetitions of the IBLT (at least 3).
  """

  k_anonymity: int
  batch: int | mechanism_lib.Target | mechanism_lib.Mechanism
  _: dataclasses.KW_ONLY
  capacity: int | None = None
  string_max_bytes: int = DEFAULT_STRING_MAX_BYTES
  secure_sum_bitwidth: int | None = None
  num_rounds: int | None = None
  rounds: str = "sampled"
  repetitions: int = DEFAULT_REPETITIONS

  def __post_init__(self):
    put = functools.partial(object.__setattr__, self)
    put("k_anonymity", validation.check_int("k_anonymity", self.k_anonymity,
                                            1, MAX_K_ANONYMITY))
    put("batch", _checked_batch(self.batch))
    if self.capacity is not None:
      put("capacity", validation.check_int("capacity", self.capacity))
    put("string_max_bytes", validation.check_int("string_max_bytes",
                                                 self.string_max_bytes))
    if self.secure_sum_bitwidth is not None:
      put("secure_sum_bitwidth", validation.check_int(
          "secure_sum_bitwidth", self.secure_sum_bitwidth, 1, 62))
    if self.num_rounds is not None:
      put("num_rounds", validation.check_int("num_rounds", self.num_rounds))
    if self.rounds not in ROUNDS:
      raise ValueError(f"rounds must be one of {ROUNDS}, got "
                       f"{self.rounds!r}")
    put("repetitions", validation.check_int("repetitions", self.repetitions,
                                            3))


def _checked_batch(batch):
  """``batch`` as a whole number, or a Target or Mechanism of fixed-size
  batches (its sampling named ``"fixed"``); an error naming ``batch``."""
  if isinstance(batch, (mechanism_lib.Target, mechanism_lib.Mechanism)):
    if batch.sampling not in (None, choices.FIXED) or (
        isinstance(batch, mechanism_lib.Mechanism)
        and batch.sampling_rate is not None):
      raise ValueError(
          "batch: IBLT rounds are fixed-size batches, and a Poisson "
          "sampling gives no batch size; give the triehh.Target or "
          "triehh.Mechanism sampling=None or 'fixed' (and a batch_size or "
          "gamma, not a sampling_rate)")
    if batch.schedule is not None:
      raise ValueError("batch: a schedule chooses each round's users; IBLT "
                       "draws them, so give a Target or Mechanism without "
                       "one")
    if batch.sampling is None:
      batch = dataclasses.replace(batch, sampling=choices.FIXED)
    return batch
  if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)):
    raise TypeError("batch must be the users per round (a whole number) or "
                    "a triehh.Target whose calibration gives them, got "
                    f"{batch!r:.60}")
  return validation.check_int("batch (users per round)", batch)


# The keywords iblt_discover and plan_run took before their target was
# typed.
MOVED = {
    **dict.fromkeys(("k_anonymity", "capacity", "string_max_bytes",
                     "secure_sum_bitwidth", "num_rounds", "rounds",
                     "repetitions"), "a field of triehh.IBLTTarget"),
    "batch_size": ("triehh.IBLTTarget's batch (a whole number, or a "
                   "triehh.Target whose calibration gives it)"),
    **dict.fromkeys(("epsilon", "delta"),
                    "a field of the triehh.Target given as "
                    "triehh.IBLTTarget's batch"),
}
EXAMPLE = ("iblt_discover(users, triehh.IBLTTarget(k_anonymity=14, "
           "batch=triehh.Target(epsilon=4.0)))")


@dataclasses.dataclass(frozen=True)
class IBLTParams:
  """The parameters of an IBLT run and what it guarantees.

  Attributes:
    k_anonymity: strings held by fewer clients of a round are not released.
    capacity: distinct strings the sketch is sized for.
    string_max_bytes: strings are cut to this many UTF-8 bytes.
    secure_sum_bitwidth: bit width of TFF's secure sum, or None (plain sum).
    batch_size: m, users per round (TrieHH's batch size).
    rounds: ``"sampled"`` or ``"disjoint"``.
    num_rounds: IBLT rounds run.
    users_sampled: user-rounds over the run (a user in two rounds counts
      twice).
    distinct_users: distinct users that took part.
    n: number of users.
    max_length: L of the population (TrieHH's maximum characters per word).
    repetitions: hash repetitions of the IBLT.
    sketch_shape: shape of a client's sketch, ``(repetitions, table size,
      chunks + 2)``; the count tensor is ``(repetitions, table size, 1)``.
    bytes_per_client: bytes of the tensors each client sends.
    memory_estimate_bytes: worker memory the largest round needs (estimate).
    num_not_decoded: strings the server could not decode, over the rounds.
    num_truncated: released strings cut at ``string_max_bytes``: false
      positives (TrieHH never reports a truncated word).
    truncated: those strings, sorted.
    privacy: the guarantee, in words.
    n_source: where the n the batch size was derived from comes from
      (``"data"``, ``"declared"``, or ``"unused"`` for a batch given).
  """

  k_anonymity: int
  capacity: int
  string_max_bytes: int
  secure_sum_bitwidth: int | None
  batch_size: int
  rounds: str
  num_rounds: int
  users_sampled: int
  distinct_users: int
  n: int
  max_length: int
  repetitions: int
  sketch_shape: tuple[int, int, int]
  bytes_per_client: int
  memory_estimate_bytes: int
  num_not_decoded: int
  num_truncated: int
  truncated: tuple[str, ...]
  privacy: str
  n_source: str = coverage.N_UNUSED

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


def release_guarantee(params: IBLTParams) -> mechanism_lib.Guarantee:
  """What covers a run with ``params``: no differential privacy (epsilon
  ``inf``, delta 1, no adjacency); its ``accounting`` names k-anonymity and
  its ``covers`` says what that means here."""
  k = params.k_anonymity
  covers = (
      f"no differential privacy. k-anonymity (k={k}): every string sent by "
      f"at least {k} clients of a round is released with its exact count, "
      f"and a string of fewer clients is not; a string of {k} clients is "
      "released whatever one of them holds, so one user's word can change "
      "the output, and the counts are exact")
  return mechanism_lib.Guarantee(
      epsilon=math.inf, delta=1.0, adjacencies=(), two_sided=False,
      accounting=f"k-anonymity (k={k}), not differential privacy",
      n_source=params.n_source, covers=covers, public=PUBLIC, trust=TRUST)


@dataclasses.dataclass
class IBLTResult:
  """The outcome of one IBLT run (a :class:`triehh.core.release.Release`).

  Attributes:
    heavy_hitters: released string -> count summed over the rounds, largest
      first (ties by string); truncated outputs included (see ``params``).
    params: the :class:`IBLTParams`.
    seed: the seed of the sampling.
    seconds: wall time of the TFF rounds (sampling and setup excluded).
    round_seconds: wall time of each round's TFF call.
    round_users: each round's user indices, in sample order.
    per_round: each round's :class:`~triehh.core.release.RoundStats`: the
      strings it released and its users (the strings it decoded below
      ``k_anonymity`` are not returned: ``candidates`` is None).
  """

  heavy_hitters: dict[str, int]
  params: IBLTParams
  seed: int | None
  seconds: float
  round_seconds: tuple[float, ...]
  round_users: tuple[np.ndarray, ...]
  per_round: tuple[release.RoundStats, ...] = ()

  mechanism = "iblt"  # unannotated: not a field

  @property
  def words(self) -> tuple[str, ...]:
    """The released strings, largest count first."""
    return tuple(self.heavy_hitters)

  @property
  def guarantee(self) -> mechanism_lib.Guarantee:
    """No differential privacy (:func:`release_guarantee`)."""
    return dataclasses.replace(release_guarantee(self.params),
                               randomness=release.randomness(self.seed))

  @property
  def unprotected(self) -> dict[str, object]:
    """What the run read off the raw words (simulation studies only): the
    released strings cut from longer words, false positives."""
    return {"num_truncated": self.params.num_truncated,
            "truncated": self.params.truncated}

  @property
  def seconds_per_client(self) -> float:
    """TFF time per participating client (all rounds)."""
    return self.seconds / max(self.params.users_sampled, 1)

  def scored(self) -> dict[str, int]:
    """``heavy_hitters`` for the metrics: truncated outputs made false
    positives (renamed ``"<string> [truncated]"``, which no user holds)."""
    truncated = set(self.params.truncated)
    return {(w + TRUNCATED_MARK if w in truncated else w): c
            for w, c in self.heavy_hitters.items()}


def privacy_statement(k_anonymity: int) -> str:
  """What the IBLT's threshold guarantees, plainly."""
  return (f"k-anonymity (k={k_anonymity}), not (epsilon, delta)-differential "
          "privacy: every string sent by at least k clients of a round is "
          "released with its exact count.")


def cut(word: str, string_max_bytes: int) -> str:
  """``word`` as IBLT stores it: its first ``string_max_bytes`` UTF-8 bytes
  (a character split by the cut becomes U+FFFD)."""
  return word.encode("utf-8")[:string_max_bytes].decode("utf-8", "replace")


def _quiet_tensorflow() -> None:
  """Imports :mod:`triehh.engines.tff` before TensorFlow is, which sets
  TensorFlow's C++ log level (quiet unless the user set one)."""
  import triehh.engines.tff  # pylint: disable=g-import-not-at-top,unused-import


@functools.lru_cache(maxsize=64)
def sketch_shape(capacity: int, string_max_bytes: int,
                 repetitions: int = DEFAULT_REPETITIONS
                 ) -> tuple[int, int, int]:
  """``(repetitions, table size, chunks + 2)`` of TFF's IBLT sketch."""
  _quiet_tensorflow()
  from tensorflow_federated.python.analytics.heavy_hitters.iblt import chunkers  # pylint: disable=g-import-not-at-top
  from tensorflow_federated.python.analytics.heavy_hitters.iblt import iblt_tensor  # pylint: disable=g-import-not-at-top
  encoder = iblt_tensor.IbltTensorEncoder(
      capacity=capacity, string_max_bytes=string_max_bytes,
      encoding=chunkers.CharacterEncoding.UTF8, repetitions=repetitions,
      value_shape=(1,))
  return tuple(int(d) for d in encoder.iblt_shape)


def client_bytes(shape: tuple[int, int, int]) -> int:
  """Bytes a client sends: its int64 sketch and count tensor."""
  repetitions, table_size, width = shape
  return _TENSOR_BYTES * repetitions * table_size * (width + 1)


def physical_memory() -> int:
  """Bytes of physical memory (``os.sysconf``)."""
  return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(num_clients: int, per_client: int, *,
                 max_memory_fraction: float = DEFAULT_MAX_MEMORY_FRACTION,
                 memory_bytes: int | None = None) -> int:
  """The worker memory a round of ``num_clients`` needs (estimate).

  Raises:
    MemoryError: if it exceeds ``max_memory_fraction`` of ``memory_bytes``
      (default: the physical memory), with the estimate.
  """
  estimate = int(math.ceil(num_clients * per_client
                           * WORKER_BYTES_PER_SKETCH_BYTE))
  total = physical_memory() if memory_bytes is None else int(memory_bytes)
  budget = max_memory_fraction * total
  if estimate > budget:
    raise MemoryError(
        f"an IBLT round of {num_clients} clients needs about "
        f"{estimate / 1e9:.3g} GB of worker memory ({num_clients} clients x "
        f"{per_client * WORKER_BYTES_PER_SKETCH_BYTE / 1e6:.3g} MB for "
        f"{per_client / 1e6:.3g} MB of sketch each), more than "
        f"{max_memory_fraction:.0%} of {total / 1e9:.3g} GB; use fewer users "
        "per round (batch_size), a smaller capacity or string_max_bytes")
  return estimate


@functools.lru_cache(maxsize=8)
def _computation(*, capacity: int, string_max_bytes: int, k_anonymity: int,
                 secure_sum_bitwidth: int | None, repetitions: int):
  _quiet_tensorflow()
  import tensorflow_federated as tff  # pylint: disable=g-import-not-at-top
  return tff.analytics.heavy_hitters.iblt.build_iblt_computation(
      capacity=capacity, string_max_bytes=string_max_bytes,
      k_anonymity=k_anonymity, secure_sum_bitwidth=secure_sum_bitwidth,
      repetitions=repetitions)


@dataclasses.dataclass(frozen=True)
class RunPlan:
  """An IBLT run checked and drawn, before TFF runs anything.

  Attributes:
    population: the population.
    options: the checked options (``k_anonymity``, ``capacity`` as used,
      ``string_max_bytes``, ``secure_sum_bitwidth``, ``rounds``,
      ``repetitions``).
    batch_size: m, users per round.
    drawn: per round, its users and the word (vocabulary index) each sends.
    sketch_shape: shape of a client's sketch.
    bytes_per_client: bytes of the tensors each client sends.
    memory_estimate_bytes: worker memory the largest round needs (estimate).
    n_source: where the n the batch size came from (``IBLTParams``).
  """

  population: population_lib.Population
  options: dict
  batch_size: int
  drawn: tuple[tuple[np.ndarray, np.ndarray], ...]
  sketch_shape: tuple[int, int, int]
  bytes_per_client: int
  memory_estimate_bytes: int
  n_source: str = coverage.N_UNUSED


def plan_run(user_words, target: IBLTTarget | None = None, *,
             seed: int | None = None,
             max_length: int = population_lib.DEFAULT_MAX_LENGTH,
             max_memory_fraction: float = DEFAULT_MAX_MEMORY_FRACTION,
             memory_bytes: int | None = None, alphabet=None,
             unknown: str | None = None, **moved_keywords) -> RunPlan:
  """Checks an IBLT run and draws its rounds, without running it.

  Takes :func:`iblt_discover`'s arguments (but ``workers``) and raises what
  it raises before any TFF call: a bad option, a capacity below a round's
  distinct strings, a round that would not fit in memory. Imports
  TensorFlow (the sketch's shape is TFF's).

  Raises:
    TypeError, ValueError: on a bad option (named), a ``k_anonymity``
      above the users of a round, or a capacity below a round's distinct
      strings; a TypeError for a missing target or a moved keyword.
    MemoryError: if a round would not fit in memory (with the estimate);
      :class:`~triehh.core.memory.InsufficientMemoryError` (also a
      ``ValueError``) before any draw if the rounds' users would not.
  """
  moved.refuse("plan_run", moved_keywords, MOVED,
               EXAMPLE.replace("iblt_discover", "plan_run"))
  moved.check_target("plan_run", target, IBLTTarget,
                     EXAMPLE.replace("iblt_discover", "plan_run"))
  seed = validation.check_seed(seed)
  if memory_bytes is not None:
    memory_bytes = validation.check_int("memory_bytes", memory_bytes)
  validation.check_rate("max_memory_fraction", max_memory_fraction)
  options = {k: v for k, v in (("alphabet", alphabet), ("unknown", unknown))
             if v is not None}
  pop = population_lib.as_population(user_words, max_length, **options)
  options = dict(k_anonymity=target.k_anonymity, capacity=target.capacity,
                 string_max_bytes=target.string_max_bytes,
                 secure_sum_bitwidth=target.secure_sum_bitwidth,
                 rounds=target.rounds, repetitions=target.repetitions)
  m, n_source = iblt_rounds.round_size(pop, max_length, target.batch)
  _check_rounds(pop, m, options, target.num_rounds)
  with progress.said_if_slow("drawing the users of the IBLT rounds"):
    drawn = iblt_rounds.draw_rounds(pop, m, options["rounds"],
                                    target.num_rounds, seed)
  options["capacity"] = _capacity(pop, drawn, options["capacity"],
                                  options["string_max_bytes"])
  shape = sketch_shape(options["capacity"], options["string_max_bytes"],
                       options["repetitions"])
  per_client = client_bytes(shape)
  estimate = check_memory(max(u.size for u, _ in drawn), per_client,
                          max_memory_fraction=max_memory_fraction,
                          memory_bytes=memory_bytes)
  return RunPlan(
      population=pop, options=options, batch_size=m, drawn=tuple(drawn),
      sketch_shape=shape, bytes_per_client=per_client,
      memory_estimate_bytes=estimate, n_source=n_source)


def rounds_bytes(num_rounds: int, batch_size: int) -> int:
  """The memory of ``num_rounds`` drawn rounds of ``batch_size`` users."""
  return num_rounds * (batch_size * ROUND_BYTES_PER_USER
                       + ROUND_BYTES_OVERHEAD)


def _check_rounds(pop: population_lib.Population, m: int, options: dict,
                  num_rounds: int | None) -> None:
  """Refuses, before any round is drawn, a ``k_anonymity`` above the ``m``
  users of a round (nothing could be released) and rounds whose users
  would not fit in memory, naming ``k_anonymity`` or ``num_rounds``."""
  k = options["k_anonymity"]
  if k > m:
    raise ValueError(
        f"k_anonymity={k:,} is above the {m:,} users of a round (batch "
        "size): no string can be sent by that many of them, so nothing "
        f"would be released; use k_anonymity <= {m:,}")
  passes = -(-pop.num_users // m)
  if num_rounds is None:
    num_rounds = passes if options["rounds"] == "disjoint" else 1
  elif options["rounds"] == "disjoint":
    num_rounds = min(num_rounds, passes)
  per_round = rounds_bytes(1, m)
  memory.check_fits(
      f"num_rounds={num_rounds:,} rounds of {m:,} users", num_rounds
      * per_round, lambda available: "use num_rounds <= "
      f"{memory.most_that_fit(per_round, available):,} (or fewer users per "
      "round)")


def _capacity(pop: population_lib.Population,
              drawn: list[tuple[np.ndarray, np.ndarray]],
              capacity: int | None, string_max_bytes: int) -> int:
  """The sketch's capacity: ``capacity``, or the most distinct cut strings
  of a round's participants; a capacity below that is refused."""
  needed = max(len({cut(str(w), string_max_bytes)
                    for w in pop.vocabulary[words]}) for _, words in drawn)
  if capacity is None:
    capacity = needed
  if capacity < needed:
    raise ValueError(
        f"capacity={capacity} is below the {needed} distinct strings (cut to "
        f"{string_max_bytes} bytes) among a round's participants; the IBLT "
        "could not decode them all. Raise capacity or pass None")
  return capacity


# Long function: its docstring documents its ten arguments; the body is
# short.
def iblt_discover(user_words, target: IBLTTarget | None = None, *,
                  seed: int | None = None,
                  max_length: int = population_lib.DEFAULT_MAX_LENGTH,
                  max_memory_fraction: float = DEFAULT_MAX_MEMORY_FRACTION,
                  memory_bytes: int | None = None, workers=None,
                  alphabet=None, unknown: str | None = None,
                  **moved_keywords) -> IBLTResult:
  """Discovers heavy hitters with TFF's IBLT on TrieHH's sampled users.

  See the module docstring for the sampling, the counts, the privacy (k-
  anonymity, not differential privacy), truncated outputs (false positives)
  and the memory check.

  Args:
    user_words: one entry per user, a ``str`` or a mapping word -> count, or
      a :class:`triehh.Population` (as for :func:`triehh.discover`).
    target: an :class:`IBLTTarget`: the k-anonymity threshold, the users
      per round (a number, or a :class:`triehh.Target` whose calibration
      gives TrieHH's), the sketch and the rounds.
    seed: seed of the sampling (TrieHH's seed gives TrieHH's users); None
      (the default): fresh entropy, kept nowhere.
    max_length: L, as for :func:`triehh.discover` (a given population must
      use it; a target's calibration uses it); it does not cut IBLT
      strings, ``string_max_bytes`` does.
    max_memory_fraction: refuse rounds estimated to need more than this
      share of ``memory_bytes``.
    memory_bytes: memory to compare with (default: the physical memory).
    workers: ``"host:port,..."`` of running TFF workers; ``None``: one local
      worker.
    alphabet, unknown: encoding options when ``user_words`` is not a
      Population.
    **moved_keywords: none; a keyword the untyped call took
      (``k_anonymity=``, ``batch_size=``, ``epsilon=`` ...) is refused with
      a TypeError naming where it is now.

  Returns:
    An :class:`IBLTResult` (a :class:`triehh.core.release.Release`).

  Raises:
    TypeError: for a missing target or a moved keyword.
    ValueError: on a bad option (named), a ``k_anonymity`` above the users
      of a round, or a capacity below a round's distinct strings.
    MemoryError: if a round, or the rounds' users, would not fit in memory
      (with the estimate).
  """
  moved.refuse("iblt_discover", moved_keywords, MOVED, EXAMPLE)
  moved.check_target("iblt_discover", target, IBLTTarget, EXAMPLE)
  plan = plan_run(user_words, target, seed=seed, max_length=max_length,
                  max_memory_fraction=max_memory_fraction,
                  memory_bytes=memory_bytes, alphabet=alphabet,
                  unknown=unknown)
  counts, truncated, round_seconds, not_decoded, kept = _run_rounds(
      plan, workers)
  drawn = plan.drawn
  params = IBLTParams(
      **plan.options, batch_size=plan.batch_size, num_rounds=len(drawn),
      users_sampled=int(sum(u.size for u, _ in drawn)),
      distinct_users=int(np.unique(np.concatenate([u for u, _ in drawn])).size),
      n=plan.population.num_users, max_length=plan.population.max_length,
      sketch_shape=plan.sketch_shape, bytes_per_client=plan.bytes_per_client,
      memory_estimate_bytes=plan.memory_estimate_bytes,
      num_not_decoded=not_decoded, num_truncated=len(truncated),
      truncated=tuple(sorted(truncated)),
      privacy=privacy_statement(plan.options["k_anonymity"]),
      n_source=plan.n_source)
  return IBLTResult(
      heavy_hitters=ranking.by_count(counts), params=params, seed=seed,
      seconds=float(sum(round_seconds)), round_seconds=tuple(round_seconds),
      round_users=tuple(u for u, _ in drawn),
      per_round=tuple(release.RoundStats(candidates=None, kept=k,
                                         sampled=int(u.size))
                      for k, (u, _) in zip(kept, drawn)))


def _run_rounds(plan: RunPlan, workers
                ) -> tuple[dict[str, int], set[str], list[float], int,
                           list[int]]:
  """Runs TFF's IBLT computation on each round of ``plan``.

  Returns the released strings with their counts summed over the rounds,
  the truncated ones among them, each round's seconds, the number of
  strings not decoded and each round's number of released strings.
  """
  pop, options = plan.population, plan.options
  string_max_bytes = options["string_max_bytes"]
  from triehh.engines.tff import runtime as runtime_lib  # pylint: disable=g-import-not-at-top
  comp = _computation(**{k: v for k, v in options.items() if k != "rounds"})
  runtime = runtime_lib.get_runtime(workers)
  counts: dict[str, int] = {}
  truncated: set[str] = set()
  round_seconds = []
  not_decoded = 0
  kept = []
  with runtime.install(), progress.said_if_slow(
      f"{len(plan.drawn):,} round{'s' * (len(plan.drawn) != 1)} of TFF's "
      "IBLT computation"):
    for _, words in plan.drawn:
      texts = [str(w) for w in pop.vocabulary[words]]
      data = [[np.array([t], dtype=object)] for t in texts]
      start = time.perf_counter()
      out = comp(data)
      round_seconds.append(time.perf_counter() - start)
      not_decoded += int(out.num_not_decoded)
      kept.append(len(out.heavy_hitters))
      long_cuts = {cut(t, string_max_bytes) for t in texts
                   if len(t.encode("utf-8")) > string_max_bytes}
      for raw, count in zip(out.heavy_hitters, out.heavy_hitters_counts):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else (
            str(raw))
        counts[text] = counts.get(text, 0) + int(count)
        if text in long_cuts:
          truncated.add(text)
  return counts, truncated, round_seconds, not_decoded, kept
