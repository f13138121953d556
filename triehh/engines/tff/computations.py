"""TrieHH as TensorFlow Federated computations.

One TFF round (one call of the process's ``next``) is one sub-round of
TrieHH: the server broadcasts the frontier of the trie (the discovered,
non-terminated prefixes of the deepest level), every sampled client answers
with a one-hot vote over the candidate extensions (frontier prefix x
alphabet + end symbol, laid out as in :mod:`triehh.core.trie`: index
``prefix * (A + 1) + symbol``) or with zeros, the votes are summed with
``tff.federated_sum`` (or ``tff.federated_secure_sum_bitwidth``) and the
server update adds them to the votes of the level. After the last sub-round
of a level the server update thresholds at theta, applies the
``max_num_prefixes`` cap to the non-terminated extensions (most voted first,
ties to the smaller vote index; finished words are never capped, as in TFF's
reference TrieHH), grows the trie by one level and records the new heavy hitters: exactly
:func:`triehh.core.trie.select_extensions` and :meth:`triehh.core.trie.Trie.grow`.

Vote capacity. ``tff.federated_sum`` needs a fully defined shape, so a
process is built for a *vote capacity* ``K``: client vote vectors have
``K * (A + 1)`` entries, of which the first ``k * (A + 1)`` (``k`` the
frontier size, at most ``K``) are the candidates and the rest stay zero. All
processes share one server state type, so a driver may pick, per round, the
process of the smallest capacity that holds the frontier
(:mod:`triehh.engines.tff.engine` uses powers of two).

Client data are tensors, not ``tf.data`` datasets (a dataset per client is
about ten times slower in TFF's C++ runtime):

* one word per user: ``int32 [L + 1]``, the symbol codes of the user's word
  (``-1`` after its end), as in :attr:`triehh.Population.codes`;
* several words per user: one ``int32 [w + 1, L + 2]`` tensor (see
  :func:`pack_words`; one tensor per client costs half as much as a
  structure of three): row ``1 + j`` holds the codes of the user's word
  ``j`` and, in its last column, the cumulative count of words ``0..j``; row
  0 holds, in its first column, a per-client, per-round rank drawn by the
  driver uniformly in ``[0, total count)``. The client votes with the first
  word whose cumulative count exceeds the rank (Algorithm 3 of the paper:
  word ``j`` with probability ``count_j / total``), or, in the ``top_words``
  mode of TFF's reference implementation, with each of its
  ``max_user_contribution`` most frequent words (ties to the earlier word).

Privacy. Theorem 1 of the paper bounds the privacy loss when every sampled
user casts at most one vote per round. The ``top_words`` mode with
``max_user_contribution > 1`` lets a user cast several votes in one round
(one per word, possibly on the same extension): Theorem 1 does not cover it.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import numpy as np
import tensorflow as tf
import tensorflow_federated as tff

ONE_WORD = "one_word"
SAMPLED_WORD = "sampled_word"
TOP_WORDS = "top_words"
CLIENT_MODES = (ONE_WORD, SAMPLED_WORD, TOP_WORDS)


class ServerState(NamedTuple):
  """The server state of the TrieHH process.

  Attributes:
    frontier: ``int32 [k, d]`` codes of the frontier prefixes (the
      non-terminated prefixes of depth ``d``, the trie's deepest level), in
      lexicographic order; ``[1, 0]`` (the root) initially.
    heavy_hitters: ``int32 [h, L + 1]`` codes of the discovered heavy hitters,
      end symbol included, ``-1`` after it; in discovery order.
    heavy_hitter_counts: ``int32 [h]`` their votes in the round that found
      them.
    accumulated_votes: ``int32 [k * (A + 1)]`` votes of the current level
      summed over its sub-rounds so far; empty before its first sub-round.
    round_num: TFF rounds (sub-rounds) run so far.
    theta: the vote threshold.
    max_num_prefixes: cap on the non-terminated extensions kept per level
      (0: no cap); extensions ending in the end symbol are never capped.
    num_sub_rounds: sub-rounds per level.
  """

  frontier: object
  heavy_hitters: object
  heavy_hitter_counts: object
  accumulated_votes: object
  round_num: object
  theta: object
  max_num_prefixes: object
  num_sub_rounds: object


class RoundOutput(NamedTuple):
  """What one call of ``next`` reports.

  Attributes:
    votes: ``int32 [k * (A + 1)]`` the level's votes including this
      sub-round (the votes that were thresholded when ``level_done``).
    level_done: whether this was the level's last sub-round, so the trie grew
      by one level (possibly by nothing).
  """

  votes: object
  level_done: object


def pack_words(codes: np.ndarray, counts: np.ndarray,
               rank: int = 0) -> np.ndarray:
  """A several-words client's tensor: ``int32 [w + 1, L + 2]``.

  Args:
    codes: ``[w, L + 1]`` symbol codes of the user's words.
    counts: ``[w]`` their positive counts (the total must be < 2**31).
    rank: the round's rank, in ``[0, sum(counts))``.
  """
  codes = np.asarray(codes)
  cumulative = np.cumsum(counts, dtype=np.int64)
  if codes.ndim != 2 or cumulative.shape != (codes.shape[0],) or not (
      cumulative.size):
    raise ValueError("codes must be [w, L + 1] and counts [w], w >= 1")
  if cumulative[-1] >= 2**31:
    raise ValueError(f"a user's total word count ({cumulative[-1]}) must be "
                     "< 2**31")
  if not 0 <= rank < cumulative[-1]:
    raise ValueError(f"rank {rank} is outside [0, {cumulative[-1]})")
  width = codes.shape[1]
  packed = np.zeros((codes.shape[0] + 1, width + 1), dtype=np.int32)
  packed[0, 0] = rank
  packed[1:, :width] = codes
  packed[1:, width] = cumulative
  return packed


@dataclasses.dataclass(frozen=True)
class ProcessSpec:
  """What fixes the types of a TrieHH process.

  Attributes:
    num_extensions: ``A + 1``, the alphabet size plus the end symbol.
    max_length: L, so sequences have ``L + 1`` symbols.
    vote_capacity: K, frontier prefixes a client vote vector can hold.
    client_mode: ``"one_word"``, ``"sampled_word"`` or ``"top_words"``.
    max_user_contribution: words a ``"top_words"`` client votes with.
    secure_sum_bitwidth: if set, votes are aggregated with
      ``tff.federated_secure_sum_bitwidth`` at this bit width (the round's
      summed votes per entry must stay below ``2**bitwidth``); else with
      ``tff.federated_sum``.
  """

  num_extensions: int
  max_length: int
  vote_capacity: int
  client_mode: str = ONE_WORD
  max_user_contribution: int = 1
  secure_sum_bitwidth: int | None = None

  def __post_init__(self):
    if self.num_extensions < 2:
      raise ValueError(f"num_extensions must be >= 2 (a symbol and the end "
                       f"symbol), got {self.num_extensions}")
    if self.max_length < 1:
      raise ValueError(f"max_length must be >= 1, got {self.max_length}")
    if self.vote_capacity < 1:
      raise ValueError(f"vote_capacity must be >= 1, got {self.vote_capacity}")
    if self.client_mode not in CLIENT_MODES:
      raise ValueError(f"client_mode must be one of {CLIENT_MODES}, got "
                       f"{self.client_mode!r}")
    if self.max_user_contribution < 1:
      raise ValueError("max_user_contribution must be >= 1, got "
                       f"{self.max_user_contribution}")
    if self.secure_sum_bitwidth is not None and not (
        1 <= self.secure_sum_bitwidth <= 31):
      raise ValueError("secure_sum_bitwidth must be in [1, 31] (votes are "
                       f"int32), got {self.secure_sum_bitwidth}")

  @property
  def vote_length(self) -> int:
    """Entries of a client's vote vector: ``K * (A + 1)``."""
    return self.vote_capacity * self.num_extensions


def state_type(max_length: int) -> tff.types.Type:
  """The TFF type of :class:`ServerState` (independent of the capacity)."""
  return tff.types.to_type(ServerState(
      frontier=tff.TensorType(np.int32, [None, None]),
      heavy_hitters=tff.TensorType(np.int32, [None, max_length + 1]),
      heavy_hitter_counts=tff.TensorType(np.int32, [None]),
      accumulated_votes=tff.TensorType(np.int32, [None]),
      round_num=tff.TensorType(np.int32),
      theta=tff.TensorType(np.int32),
      max_num_prefixes=tff.TensorType(np.int32),
      num_sub_rounds=tff.TensorType(np.int32),
  ))


def client_data_type(spec: ProcessSpec) -> tff.types.Type:
  """The TFF type of one client's data under ``spec``."""
  width = spec.max_length + 1
  if spec.client_mode == ONE_WORD:
    return tff.TensorType(np.int32, [width])
  return tff.TensorType(np.int32, [None, width + 1])


def _vote_index(frontier: tf.Tensor, codes: tf.Tensor,
                num_extensions: int) -> tf.Tensor:
  """The vote index of one word (``codes``: ``[L + 1]``), or -1.

  The word votes iff its first ``d`` symbols are a frontier prefix and it has
  a ``(d+1)``-th symbol (the fewest ops: this runs once per client).
  """
  depth = tf.shape(frontier)[1]
  num_prefixes = tf.shape(frontier)[0]
  match = tf.reduce_all(tf.equal(frontier, codes[:depth]), axis=1)
  # The first matching prefix, or num_prefixes if none matches.
  position = tf.argmax(tf.concat([tf.cast(match, tf.int32), [1]], axis=0),
                       output_type=tf.int32)
  symbol = codes[depth]
  return tf.where(tf.logical_and(symbol >= 0, position < num_prefixes),
                  position * num_extensions + symbol, -1)


def _vote_indices(frontier: tf.Tensor, codes: tf.Tensor,
                  num_extensions: int) -> tf.Tensor:
  """Per word (row of ``codes``), its vote index, or -1 if it cannot vote.

  A word votes iff its first ``d`` symbols are a frontier prefix (prefixes
  are distinct, so at most one matches) and it has a ``(d+1)``-th symbol.
  """
  depth = tf.shape(frontier)[1]
  prefix = codes[:, :depth]
  symbol = codes[:, depth]
  match = tf.reduce_all(
      tf.equal(frontier[tf.newaxis, :, :], prefix[:, tf.newaxis, :]), axis=2)
  match = tf.cast(match, tf.int32)  # [words, k], at most one 1 per row
  position = tf.reduce_sum(
      match * tf.range(tf.shape(frontier)[0], dtype=tf.int32), axis=1)
  votes = tf.logical_and(tf.reduce_sum(match, axis=1) > 0, symbol >= 0)
  return tf.where(votes, position * num_extensions + symbol, -1)


def _one_hot_sum(indices: tf.Tensor, length: int) -> tf.Tensor:
  """``int32 [length]`` with one count per non-negative index."""
  return tf.reduce_sum(tf.one_hot(indices, length, dtype=tf.int32), axis=0)


@functools.lru_cache(maxsize=None)
def client_votes_computation(spec: ProcessSpec) -> tff.Computation:
  """``(frontier, client data) -> int32 [K * (A + 1)]`` one client's votes."""
  a1, length = spec.num_extensions, spec.vote_length
  width = spec.max_length + 1
  frontier_type = tff.TensorType(np.int32, [None, None])

  if spec.client_mode == ONE_WORD:

    @tff.tensorflow.computation(frontier_type, client_data_type(spec))
    def client_votes(frontier, codes):
      return tf.one_hot(_vote_index(frontier, codes, a1), length,
                        dtype=tf.int32)

  elif spec.client_mode == SAMPLED_WORD:

    @tff.tensorflow.computation(frontier_type, client_data_type(spec))
    def client_votes(frontier, words):
      chosen = tf.searchsorted(words[1:, width], words[0, :1],
                               side="right")[0]
      return tf.one_hot(_vote_index(frontier, words[1 + chosen, :width], a1),
                        length, dtype=tf.int32)

  else:
    contribution = spec.max_user_contribution

    @tff.tensorflow.computation(frontier_type, client_data_type(spec))
    def client_votes(frontier, words):
      cumulative = words[1:, width]
      counts = cumulative - tf.concat([[0], cumulative[:-1]], axis=0)
      num_words = tf.minimum(contribution, tf.size(counts))
      _, top = tf.math.top_k(counts, k=num_words)  # ties: lower index first
      codes = tf.gather(words[1:, :width], top)
      return _one_hot_sum(_vote_indices(frontier, codes, a1), length)

  return client_votes


@functools.lru_cache(maxsize=None)
def server_update_computation(num_extensions: int,
                              max_length: int) -> tff.Computation:
  """``(state, summed votes) -> (state, RoundOutput)``: the server update.

  Adds the summed votes (``int32 [None]``, at least ``k * (A + 1)`` long,
  zero beyond) to the level's votes; after the level's last sub-round keeps
  the extensions with at least theta votes (of those not ending in the end
  symbol at most ``max_num_prefixes``: most voted first, ties to the smaller
  index), extends the frontier by one level and appends the kept extensions
  ending in the end symbol to the heavy hitters.
  """
  a1 = num_extensions
  width = max_length + 1

  @tff.tensorflow.computation(state_type(max_length),
                              tff.TensorType(np.int32, [None]))
  def server_update(state, votes):
    num_candidates = tf.shape(state.frontier)[0] * a1
    check = tf.debugging.assert_equal(
        tf.reduce_sum(tf.abs(votes[num_candidates:])), 0,
        message="votes outside the candidate extensions")
    previous = tf.cond(
        tf.size(state.accumulated_votes) > 0,
        lambda: state.accumulated_votes,
        lambda: tf.zeros([num_candidates], dtype=tf.int32))
    with tf.control_dependencies([check]):
      level_votes = previous + votes[:num_candidates]
    round_num = state.round_num + 1
    level_done = tf.equal(tf.math.floormod(round_num, state.num_sub_rounds), 0)

    def grow():
      return _grown_level(state, level_votes, a1, width)

    def accumulate():
      return (state.frontier, state.heavy_hitters, state.heavy_hitter_counts,
              level_votes)

    frontier, heavy_hitters, counts, accumulated = tf.cond(
        level_done, grow, accumulate)
    heavy_hitters = tf.ensure_shape(heavy_hitters, [None, width])
    new_state = ServerState(
        frontier=frontier, heavy_hitters=heavy_hitters,
        heavy_hitter_counts=counts, accumulated_votes=accumulated,
        round_num=round_num, theta=state.theta,
        max_num_prefixes=state.max_num_prefixes,
        num_sub_rounds=state.num_sub_rounds)
    return new_state, RoundOutput(votes=level_votes, level_done=level_done)

  return server_update


def _grown_level(state, level_votes, num_extensions: int, width: int):
  """The level's last sub-round: ``(frontier, heavy hitters, their counts,
  no accumulated votes)`` once the extensions with at least theta votes are
  kept (see :func:`server_update_computation`)."""
  a1 = num_extensions
  end_code = num_extensions - 1
  kept = tf.cast(tf.reshape(tf.where(level_votes >= state.theta), [-1]),
                 tf.int32)
  cap = state.max_num_prefixes
  unfinished = tf.boolean_mask(kept, tf.not_equal(kept % a1, end_code))

  def capped():
    finished = tf.boolean_mask(kept, tf.equal(kept % a1, end_code))
    # top_k breaks ties to the lower position, i.e. the smaller index.
    _, top = tf.math.top_k(tf.gather(level_votes, unfinished), k=cap)
    return tf.sort(tf.concat([finished, tf.gather(unfinished, top)],
                             axis=0))

  kept = tf.cond(
      tf.logical_and(cap > 0, tf.size(unfinished) > cap), capped,
      lambda: kept)
  parents = kept // a1
  symbols = kept % a1
  codes = tf.concat(
      [tf.gather(state.frontier, parents), symbols[:, tf.newaxis]], axis=1)
  is_end = tf.equal(symbols, end_code)
  frontier = tf.boolean_mask(codes, tf.logical_not(is_end))
  found = tf.boolean_mask(codes, is_end)
  found = tf.pad(found, [[0, 0], [0, width - tf.shape(codes)[1]]],
                 constant_values=-1)
  heavy_hitters = tf.concat([state.heavy_hitters, found], axis=0)
  counts = tf.concat(
      [state.heavy_hitter_counts,
       tf.boolean_mask(tf.gather(level_votes, kept), is_end)], axis=0)
  return frontier, heavy_hitters, counts, tf.zeros([0], dtype=tf.int32)


def _frontier_computation(max_length: int) -> tff.Computation:

  @tff.tensorflow.computation(state_type(max_length))
  def frontier_of(state):
    return state.frontier

  return frontier_of


@functools.lru_cache(maxsize=None)
def next_computation(spec: ProcessSpec) -> tff.Computation:
  """The federated ``next``: ``(state@SERVER, data@CLIENTS) -> (state, out)``."""
  server_state_type = tff.FederatedType(state_type(spec.max_length),
                                        tff.SERVER)
  data_type = tff.FederatedType(client_data_type(spec), tff.CLIENTS)
  client_votes = client_votes_computation(spec)
  server_update = server_update_computation(spec.num_extensions,
                                            spec.max_length)
  frontier_of = _frontier_computation(spec.max_length)

  @tff.federated_computation(server_state_type, data_type)
  def next_fn(state, client_data):
    frontier = tff.federated_broadcast(tff.federated_map(frontier_of, state))
    votes = tff.federated_map(client_votes, (frontier, client_data))
    if spec.secure_sum_bitwidth is None:
      total = tff.federated_sum(votes)
    else:
      total = tff.federated_secure_sum_bitwidth(votes,
                                                spec.secure_sum_bitwidth)
    updated = tff.federated_map(server_update, (state, total))
    return updated[0], updated[1]

  return next_fn


def initialize_computation(max_length: int, *, theta: int,
                           max_num_prefixes: int | None = None,
                           num_sub_rounds: int = 1) -> tff.Computation:
  """The federated ``initialize``: the root-only state at the server."""
  if theta < 1:
    raise ValueError(f"theta must be >= 1, got {theta}")
  if max_num_prefixes is not None and max_num_prefixes < 1:
    raise ValueError(f"max_num_prefixes must be >= 1, got {max_num_prefixes}")
  if num_sub_rounds < 1:
    raise ValueError(f"num_sub_rounds must be >= 1, got {num_sub_rounds}")
  for name, value in (("theta", theta), ("max_num_prefixes", max_num_prefixes),
                      ("num_sub_rounds", num_sub_rounds)):
    if value is not None and value >= 2**31:
      raise ValueError(f"{name}={value} does not fit the int32 state")
  cap = 0 if max_num_prefixes is None else int(max_num_prefixes)

  @tff.tensorflow.computation
  def initial_state():
    return ServerState(
        frontier=tf.zeros([1, 0], dtype=tf.int32),
        heavy_hitters=tf.zeros([0, max_length + 1], dtype=tf.int32),
        heavy_hitter_counts=tf.zeros([0], dtype=tf.int32),
        accumulated_votes=tf.zeros([0], dtype=tf.int32),
        round_num=tf.constant(0, dtype=tf.int32),
        theta=tf.constant(int(theta), dtype=tf.int32),
        max_num_prefixes=tf.constant(cap, dtype=tf.int32),
        num_sub_rounds=tf.constant(int(num_sub_rounds), dtype=tf.int32))

  @tff.federated_computation
  def initialize_fn():
    return tff.federated_eval(initial_state, tff.SERVER)

  return initialize_fn


def build_process(spec: ProcessSpec, *, theta: int,
                  max_num_prefixes: int | None = None,
                  num_sub_rounds: int = 1) -> tff.templates.IterativeProcess:
  """The TrieHH ``tff.templates.IterativeProcess`` for ``spec``.

  ``initialize()`` returns the root-only :class:`ServerState`;
  ``next(state, client_data)`` runs one sub-round over the given clients (a
  list with one entry per client, see :func:`client_data_type`) and returns
  ``(state, RoundOutput)``.
  """
  return tff.templates.IterativeProcess(
      initialize_computation(spec.max_length, theta=theta,
                             max_num_prefixes=max_num_prefixes,
                             num_sub_rounds=num_sub_rounds),
      next_computation(spec))
