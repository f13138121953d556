"""The ``tff`` engine: TrieHH run as TensorFlow Federated computations.

``triehh.discover(..., engine="tff")`` calls :func:`run` (and
:func:`count` for its counting phase). Each trie level is
one TrieHH round, run as ``num_sub_rounds`` calls of the ``next`` of the
``tff.templates.IterativeProcess`` that the public constructor
:func:`triehh.engines.tff.process.build_triehh_process` returns (see
:mod:`triehh.engines.tff.computations`), with tensor client data. The
driver draws randomness exactly as :func:`triehh.engines.fast.run` does, in
the same order (the contract of :mod:`triehh.engines.sampling`), so both
engines produce the same trie from the same seed. One-word populations:
each round draws the sampled users per cell from the run's generator, as the
fast engine does, then which users inside each cell from a stream spawned
once per run, and those users are the round's clients. Several-word
populations: the sampled users, then one rank per sampled user (the
per-client, per-round seed the client uses to pick its word in TF). A
one-word population given by word frequencies is expanded to one client per
user when it has at most :data:`MAX_EXPANDED_USERS` users, and refused
above. The round loop and its stopping rule are those of
:mod:`triehh.engines.rounds`; after each level the driver records the
thresholded votes in a :class:`triehh.core.trie.Trie` (so results and output
are those of the fast engine) and checks that the TFF server state
(frontier, heavy hitters, counts) agrees with it.

Where it runs: by default on one local TFF worker (TFF's C++
``worker_binary``) started on a loopback port for this Python process; with
``workers="host:port,..."`` on already-running workers (start them with
``python -m triehh.engines.tff.worker``, its port given), the clients of
each call split across them. See :mod:`triehh.engines.tff.runtime` for failure handling.

Vote capacity: per round the driver uses the process whose client vote
vectors hold the smallest power of two of frontier prefixes that is at least
the frontier size (one compiled process per capacity, cached), unless a fixed
``vote_capacity`` is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import tensorflow_federated as tff

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.engines import cache
from triehh.engines import rounds
from triehh.engines import vote_counts
from triehh.engines.tff import computations
from triehh.engines.tff import counting
from triehh.engines.tff import process as process_lib
from triehh.engines.tff import runtime as runtime_lib

# A population given by word frequencies is expanded to one client per user
# up to this many users.
MAX_EXPANDED_USERS = 10**7


def run(population: population_lib.Population, *, theta: int,
        batch_size: int, rng: np.random.Generator,
        num_sub_rounds: int = 1,
        max_num_prefixes: int | None = None,
        schedule: Sequence[np.ndarray] | None = None,
        sampling_rate: float | None = None,
        secure_sum: bool = False,
        max_user_contribution: int | None = None,
        vote_capacity: int | None = None,
        **connection) -> trie_lib.Trie:
  """Runs TrieHH with TFF until the trie stops growing or has L + 1 levels.

  Args:
    population: the encoded users.
    theta, batch_size, rng, num_sub_rounds, max_num_prefixes, schedule,
      sampling_rate: as in :func:`triehh.engines.fast.run` (same meaning,
      same randomness).
    secure_sum: aggregate votes with ``tff.federated_secure_sum_bitwidth``
      (:class:`computations.SecureSumBitwidthFactory`; the bit width is the
      smallest that holds a round's summed votes).
    max_user_contribution: several-word users only; ``None`` (default): each
      sampled user votes with one word drawn by its local frequency
      (Algorithm 3). An integer ``c``: each sampled user votes with each of
      its ``c`` most frequent words, as TFF's reference implementation does;
      with ``c > 1`` a user can cast ``c`` votes per round, which Theorem 1
      does not cover.
    vote_capacity: fixed number of frontier prefixes the client vote vectors
      hold (``None``: per round, the next power of two).
    **connection: where it runs, the fields of
      :class:`~triehh.engines.tff.runtime.Connection` (the engine options
      the drivers' ``--tff_*`` flags set, checked as one): ``workers``,
      ``"host:port,..."`` (or a list) of running TFF workers (``None``
      starts one local worker); ``connect_timeout`` and ``rpc_timeout``,
      seconds to reach a worker and for one call, past which the run stops
      with :class:`runtime.WorkerError`.

  Returns:
    The grown :class:`~triehh.core.trie.Trie`, equal to the fast engine's.
  """
  where = runtime_lib.Connection.of(connection, "run")
  rounds.check_theta(theta)
  _check_options(secure_sum, max_user_contribution, vote_capacity)
  population = _with_clients(population)
  mode, contribution = _client_mode(population, max_user_contribution)
  bitwidth = (_round_bitwidth(population, batch_size, schedule,
                              sampling_rate, contribution)
              if secure_sum else None)
  runtime = where.runtime()
  counter = _ProcessVotes(
      population, theta=theta, max_num_prefixes=max_num_prefixes,
      num_sub_rounds=num_sub_rounds, client_mode=mode,
      contribution=contribution, bitwidth=bitwidth,
      vote_capacity=vote_capacity, member_rng=rng.spawn(1)[0])
  with runtime.install():
    counter.initialize()
    return rounds.run(population, counter, theta=theta, batch_size=batch_size,
                      rng=rng, num_sub_rounds=num_sub_rounds,
                      max_num_prefixes=max_num_prefixes, schedule=schedule,
                      sampling_rate=sampling_rate)


def count(population: population_lib.Population, words: Sequence[str],
          sample_rate: float, noise_std: float,
          rng: np.random.Generator) -> np.ndarray:
  """The counting phase in TFF: :func:`triehh.engines.tff.counting.noisy_sums`
  (the fast engine's law, TensorFlow's noise)."""
  return counting.noisy_sums(population, words, sample_rate, noise_std, rng)


def _round_bitwidth(population: population_lib.Population, batch_size: int,
                    schedule: Sequence[np.ndarray] | None,
                    sampling_rate: float | None, contribution: int) -> int:
  """The secure sum's bit width: it holds the most votes a round can sum."""
  # A Poisson round can sample every user.
  most = (population.num_users if sampling_rate is not None and
          schedule is None else
          _most_users_per_round(population, batch_size, schedule))
  return _secure_sum_bitwidth(most, contribution)


def _with_clients(pop: population_lib.Population) -> population_lib.Population:
  """The population with one entry per user (expanded from word counts)."""
  if pop.has_user_array:
    return pop
  if pop.num_users > MAX_EXPANDED_USERS:
    raise ValueError(
        f"the TFF engine runs one client per sampled user and needs a "
        f"per-user array, but this population of {pop.num_users:,} users "
        "was given by word frequencies; at most "
        f"{MAX_EXPANDED_USERS:,} users are expanded. Use engine='fast', or "
        "build the population from user words")
  return _expanded(pop)


@cache.per_population
def _expanded(pop: population_lib.Population) -> population_lib.Population:
  user_word = np.repeat(np.arange(pop.num_words, dtype=np.int32),
                        pop.users_per_word)
  return dataclasses.replace(pop, user_word=user_word, word_users=None)


def _check_options(secure_sum: bool, max_user_contribution: int | None,
                   vote_capacity: int | None) -> None:
  if not isinstance(secure_sum, bool):
    raise TypeError(f"secure_sum must be True or False, got {secure_sum!r}")
  if max_user_contribution is not None and max_user_contribution < 1:
    raise ValueError("max_user_contribution must be >= 1, got "
                     f"{max_user_contribution}")
  if vote_capacity is not None and vote_capacity < 1:
    raise ValueError(f"vote_capacity must be >= 1, got {vote_capacity}")


def _client_mode(pop: population_lib.Population,
                 max_user_contribution: int | None) -> tuple[str, int]:
  """The clients' vote mode and the most votes a client casts per round."""
  if pop.is_single_word:
    return computations.ONE_WORD, 1
  if max_user_contribution is None:
    return computations.SAMPLED_WORD, 1
  return computations.TOP_WORDS, int(max_user_contribution)


def _most_users_per_round(pop: population_lib.Population, batch_size: int,
                          schedule: Sequence[np.ndarray] | None) -> int:
  if schedule is not None:
    return max((len(s) for s in schedule), default=1)
  if not 0 < batch_size <= pop.num_users:
    raise ValueError(f"batch size {batch_size} must be in "
                     f"[1, n={pop.num_users}]")
  return batch_size


def _secure_sum_bitwidth(most_users: int, contribution: int) -> int:
  """Bits that hold one call's summed votes (a call sums at most a round)."""
  bitwidth = max(1, int(most_users * contribution).bit_length())
  if bitwidth > 31:
    raise ValueError(f"secure sum over {most_users} users x "
                     f"{contribution} votes needs {bitwidth} bits; at most "
                     "31 are supported")
  return bitwidth


class _ProcessVotes:
  """Counts a round's votes with the TFF iterative process, one ``next``
  call per sub-round, and checks the server state against the trie.

  Per round it uses the process whose client vote vectors hold
  :func:`_capacity` frontier prefixes (one compiled process per capacity;
  all share the state type, so the state moves from one to the next).
  """

  def __init__(self, pop: population_lib.Population, *, theta: int,
               max_num_prefixes: int | None, num_sub_rounds: int,
               client_mode: str, contribution: int, bitwidth: int | None,
               vote_capacity: int | None, member_rng: np.random.Generator):
    self._pop = pop
    self._member_rng = member_rng
    self._mode = client_mode
    self._num_sub_rounds = num_sub_rounds
    self._vote_capacity = vote_capacity
    self._codes = _codes32(pop)
    self._options = dict(
        theta=theta, max_num_prefixes=max_num_prefixes,
        num_sub_rounds=num_sub_rounds, client_data=client_mode,
        max_user_contribution=contribution,
        aggregation_factory=(None if bitwidth is None else
                             computations.SecureSumBitwidthFactory(bitwidth)))
    self._processes: dict[int, tff.templates.IterativeProcess] = {}
    self._state = None

  def _process(self, capacity: int) -> tff.templates.IterativeProcess:
    if capacity not in self._processes:
      self._processes[capacity] = process_lib.build_triehh_process(
          self._pop.alphabet, self._pop.max_length, vote_capacity=capacity,
          **self._options)
    return self._processes[capacity]

  def initialize(self) -> None:
    """Sets the initial server state (inside the runtime's context)."""
    self._state = self._process(1).initialize()

  def count(self, trie: trie_lib.Trie, users: np.ndarray,
            ranks: np.ndarray | None, batches: Sequence[slice]) -> np.ndarray:
    data = _client_data(self._pop, self._codes, users, ranks, self._mode)
    capacity = _capacity(trie.frontier.shape[0], self._vote_capacity)
    next_fn = self._process(capacity).next
    state, output = self._state, None
    for batch in batches:
      state, output = next_fn(state, data[batch])
    # Several-worker contexts return plain mappings: restore the types.
    self._state = _as(computations.ServerState, state)
    output = _as(computations.RoundOutput, output)
    if not output.level_done:
      raise RuntimeError("the TFF process did not close the level after "
                         f"{self._num_sub_rounds} sub-rounds")
    return np.asarray(output.votes, dtype=np.int64)

  def count_cells(self, trie: trie_lib.Trie, cells: vote_counts.RoundCells,
                  counts: np.ndarray, batches: Sequence[slice]) -> np.ndarray:
    """Draws the users inside each cell; they are the round's clients."""
    positions = vote_counts.sample_members(cells, counts, self._member_rng)
    users = _users_by_position(self._pop)[positions]
    votes = self.count(trie, users, None, batches)
    at_cells = votes[cells.vote_index]
    if at_cells.sum() != votes.sum():
      raise RuntimeError("the TFF process counted votes for an extension "
                         "that no sampled user holds")
    return at_cells

  def grown(self, trie: trie_lib.Trie, level: trie_lib.TrieLevel,
            kept: np.ndarray) -> None:
    del kept  # the server state holds the frontier
    found_before = sum(lv.terminated.shape[0] for lv in trie.levels[:-1])
    _check_agreement(self._state, level, found_before, self._pop.max_length)


def _as(cls, value):
  if isinstance(value, cls):
    return value
  if isinstance(value, Mapping):
    return cls(**value)
  return cls(*value)


def _capacity(num_prefixes: int, fixed: int | None) -> int:
  if fixed is not None:
    if num_prefixes > fixed:
      raise ValueError(f"the frontier has {num_prefixes} prefixes, more than "
                       f"vote_capacity={fixed}")
    return fixed
  return 1 << (num_prefixes - 1).bit_length()


@cache.per_population
def _users_by_position(pop: population_lib.Population) -> np.ndarray:
  return vote_counts.users_by_position(pop)


@cache.per_population
def _codes32(pop: population_lib.Population) -> np.ndarray:
  return np.ascontiguousarray(pop.codes, dtype=np.int32)


def _client_data(pop: population_lib.Population, codes: np.ndarray,
                 users: np.ndarray, ranks: np.ndarray | None,
                 mode: str) -> list:
  """One entry per sampled user, in sample order."""
  if mode == computations.ONE_WORD:
    return list(codes[pop.user_word[users]])
  offsets = pop.user_offsets
  if ranks is None:
    ranks = np.zeros(users.size, dtype=np.int64)
  data = []
  for user, rank in zip(users, ranks):
    entries = slice(offsets[user], offsets[user + 1])
    data.append(computations.pack_words(codes[pop.entry_word[entries]],
                                        pop.entry_count[entries], rank))
  return data


def _check_agreement(state: computations.ServerState,
                     level: trie_lib.TrieLevel, found_before: int,
                     max_length: int) -> None:
  """Raises if the TFF server state differs from the level the trie grew."""
  frontier = np.asarray(state.frontier, dtype=np.int32).reshape(
      -1, level.depth)
  found = np.asarray(state.heavy_hitters, dtype=np.int32)[found_before:]
  counts = np.asarray(state.heavy_hitter_counts, dtype=np.int64)[found_before:]
  expected = np.full((level.terminated.shape[0], max_length + 1), -1,
                     dtype=np.int32)
  expected[:, :level.depth] = level.terminated
  if not (np.array_equal(frontier, level.prefixes)
          and np.array_equal(found, expected)
          and np.array_equal(counts, level.terminated_votes)):
    raise RuntimeError(
        f"the TFF server state disagrees with the trie at depth "
        f"{level.depth}: frontier {frontier.tolist()} vs "
        f"{level.prefixes.tolist()}, heavy hitters {found.tolist()} "
        f"({counts.tolist()}) vs {expected.tolist()} "
        f"({level.terminated_votes.tolist()})")
