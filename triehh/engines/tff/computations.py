"""TrieHH as TensorFlow Federated computations.

One TFF round (one call of the process's ``next``) is one sub-round of
TrieHH: the server broadcasts the frontier of the trie (the discovered,
non-terminated prefixes of the deepest level), every sampled client answers
with its votes over the candidate extensions (frontier prefix x alphabet +
end symbol, laid out as in :mod:`triehh.core.trie`: index
``prefix * (A + 1) + symbol``; see :mod:`triehh.engines.tff.clients` for the
client data and how clients vote), an aggregation process sums the votes
and the server update adds them to the votes of the level. After the last
sub-round of a level the server update thresholds at theta, applies the
``max_num_prefixes`` cap to the non-terminated extensions (most voted first,
ties to the smaller vote index; finished words are never capped, as in TFF's
reference TrieHH), grows the trie by one level and records the new heavy
hitters: exactly :func:`triehh.core.trie.select_extensions` and
:meth:`triehh.core.trie.Trie.grow`.

Aggregation. The votes are summed by the ``tff.templates.AggregationProcess``
that a ``tff.aggregators.UnweightedAggregationFactory`` creates for the vote
vector type: ``tff.aggregators.SumFactory`` (``tff.federated_sum``) by
default, :class:`SecureSumBitwidthFactory`
(``tff.federated_secure_sum_bitwidth``) when the spec sets
``secure_sum_bitwidth``, or any factory given. Its state
travels in :attr:`ServerState.aggregator` and its measurements come back in
:attr:`RoundOutput.measurements`.

Vote capacity. ``tff.federated_sum`` needs a fully defined shape, so a
process is built for a *vote capacity* ``K``: client vote vectors have
``K * (A + 1)`` entries, of which the first ``k * (A + 1)`` (``k`` the
frontier size, at most ``K``) are the candidates and the rest stay zero. A
round whose frontier holds more than ``K`` prefixes fails. All processes
with the same aggregation state type share one server state type, so a
driver may pick, per round, the process of the smallest capacity that holds
the frontier (:mod:`triehh.engines.tff.engine` uses powers of two).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import numpy as np
import tensorflow as tf
import tensorflow_federated as tff

# The client side, also reachable from here (the unused names too).
# pylint: disable=unused-import
from triehh.engines.tff.clients import CLIENT_MODES
from triehh.engines.tff.clients import client_data_type
from triehh.engines.tff.clients import client_votes_computation
from triehh.engines.tff.clients import DATASET
from triehh.engines.tff.clients import ONE_WORD
from triehh.engines.tff.clients import pack_words
from triehh.engines.tff.clients import ProcessSpec
from triehh.engines.tff.clients import SAMPLED_WORD
from triehh.engines.tff.clients import TOP_WORDS
# pylint: enable=unused-import

_NO_STATE = tff.StructType([])


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
    aggregator: the state of the vote aggregation process (``()`` for
      ``tff.aggregators.SumFactory`` and the secure sums).
  """

  frontier: object
  heavy_hitters: object
  heavy_hitter_counts: object
  accumulated_votes: object
  round_num: object
  theta: object
  max_num_prefixes: object
  num_sub_rounds: object
  aggregator: object = ()


class RoundOutput(NamedTuple):
  """What one call of ``next`` reports.

  Attributes:
    votes: ``int32 [k * (A + 1)]`` the level's votes including this
      sub-round (the votes that were thresholded when ``level_done``).
    level_done: whether this was the level's last sub-round, so the trie grew
      by one level (possibly by nothing).
    measurements: the aggregation process's measurements of this sub-round
      (``()`` for ``tff.aggregators.SumFactory``).
  """

  votes: object
  level_done: object
  measurements: object = ()


@dataclasses.dataclass(frozen=True)
class SecureSumBitwidthFactory(tff.aggregators.UnweightedAggregationFactory):
  """Sums with ``tff.federated_secure_sum_bitwidth`` at a fixed bit width.

  The ``tff`` engine's secure sum: ``bitwidth`` is chosen so that a round's
  summed votes per entry stay below ``2**bitwidth``. The state and the
  measurements are empty. (``tff.aggregators.SecureSumFactory`` also works,
  bounding each client's entries instead and measuring the clipping.)
  """

  bitwidth: int

  def create(self, value_type) -> tff.templates.AggregationProcess:
    """The aggregation process for ``value_type`` (integer tensors)."""

    @tff.federated_computation
    def init_fn():
      return tff.federated_value((), tff.SERVER)

    @tff.federated_computation(init_fn.type_signature.result,
                               tff.FederatedType(value_type, tff.CLIENTS))
    def next_fn(state, value):
      total = tff.federated_secure_sum_bitwidth(value, self.bitwidth)
      return tff.templates.MeasuredProcessOutput(
          state, total, tff.federated_value((), tff.SERVER))

    return tff.templates.AggregationProcess(init_fn, next_fn)


def state_type(max_length: int,
               aggregator_type: tff.types.Type = _NO_STATE) -> tff.types.Type:
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
      aggregator=aggregator_type,
  ))


def _cached_per_factory(function):
  """``lru_cache`` on ``(spec, factory)``, skipped for unhashable factories."""
  cached = functools.lru_cache(maxsize=None)(function)

  @functools.wraps(function)
  def wrapper(spec, aggregation_factory=None):
    try:
      hash(aggregation_factory)
    except TypeError:
      return function(spec, aggregation_factory)
    return cached(spec, aggregation_factory)

  return wrapper


@_cached_per_factory
def aggregation_process(
    spec: ProcessSpec,
    aggregation_factory: tff.aggregators.UnweightedAggregationFactory | None
    = None) -> tff.templates.AggregationProcess:
  """The process summing the client vote vectors of ``spec``.

  ``None``: :class:`SecureSumBitwidthFactory` if ``spec.secure_sum_bitwidth``
  is set, else ``tff.aggregators.SumFactory``. The process must return an
  ``int32 [K * (A + 1)]`` sum at the server.
  """
  if aggregation_factory is None:
    aggregation_factory = (
        tff.aggregators.SumFactory() if spec.secure_sum_bitwidth is None
        else SecureSumBitwidthFactory(spec.secure_sum_bitwidth))
  elif spec.secure_sum_bitwidth is not None:
    raise ValueError("give either secure_sum_bitwidth or an aggregation "
                     "factory, not both")
  vote_type = tff.TensorType(np.int32, [spec.vote_length])
  process = aggregation_factory.create(vote_type)
  result = process.next.type_signature.result.result.member
  if not tff.TensorType(np.int32, [None]).is_assignable_from(result):
    raise TypeError(f"the aggregation factory {aggregation_factory!r} sums "
                    f"{vote_type} votes to {result}; the server needs "
                    "int32 [n] votes")
  return process


def _aggregation_types(aggregation: tff.templates.AggregationProcess):
  """(state type, measurements type) of the aggregation process."""
  result = aggregation.next.type_signature.result
  return result.state.member, result.measurements.member


def _updated(state: ServerState, votes: tf.Tensor, num_extensions: int,
             width: int) -> tuple[ServerState, RoundOutput]:
  """The server update's TensorFlow (see :func:`server_update_computation`);
  the aggregator state is carried over."""
  a1 = num_extensions
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
      num_sub_rounds=state.num_sub_rounds, aggregator=state.aggregator)
  return new_state, RoundOutput(votes=level_votes, level_done=level_done)


@functools.lru_cache(maxsize=None)
def server_update_computation(num_extensions: int,
                              max_length: int) -> tff.Computation:
  """``(state, summed votes) -> (state, RoundOutput)``: the server update.

  Adds the summed votes (``int32 [None]``, at least ``k * (A + 1)`` long,
  zero beyond) to the level's votes; after the level's last sub-round keeps
  the extensions with at least theta votes (of those not ending in the end
  symbol at most ``max_num_prefixes``: most voted first, ties to the smaller
  index), extends the frontier by one level and appends the kept extensions
  ending in the end symbol to the heavy hitters. (The state's aggregator is
  empty here; the process's ``next`` runs the same update with its own.)
  """

  @tff.tensorflow.computation(state_type(max_length),
                              tff.TensorType(np.int32, [None]))
  def server_update(state, votes):
    return _updated(state, votes, num_extensions, max_length + 1)

  return server_update


@functools.lru_cache(maxsize=None)
def _server_step_computation(num_extensions: int, max_length: int,
                             aggregator_type: tff.types.Type,
                             measurements_type: tff.types.Type
                             ) -> tff.Computation:
  """The server update of ``next``: ``(state, summed votes, new aggregator
  state, measurements) -> (state, RoundOutput)``."""

  @tff.tensorflow.computation(state_type(max_length, aggregator_type),
                              tff.TensorType(np.int32, [None]),
                              aggregator_type, measurements_type)
  def server_step(state, votes, aggregator, measurements):
    new_state, output = _updated(state, votes, num_extensions, max_length + 1)
    return (new_state._replace(aggregator=aggregator),
            output._replace(measurements=measurements))

  return server_step


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


@functools.lru_cache(maxsize=None)
def _frontier_computation(max_length: int, vote_capacity: int,
                          aggregator_type: tff.types.Type) -> tff.Computation:
  """The state's frontier; fails if it has more than ``vote_capacity``
  prefixes (their votes would not fit the clients' vote vectors)."""

  @tff.tensorflow.computation(state_type(max_length, aggregator_type))
  def frontier_of(state):
    size = tf.shape(state.frontier)[0]
    check = tf.debugging.assert_less_equal(
        size, vote_capacity,
        message=f"the frontier has more prefixes than vote_capacity="
        f"{vote_capacity}; build the process with a larger vote_capacity "
        "or a max_num_prefixes cap")
    with tf.control_dependencies([check]):
      return tf.identity(state.frontier)

  return frontier_of


@_cached_per_factory
def next_computation(
    spec: ProcessSpec,
    aggregation_factory: tff.aggregators.UnweightedAggregationFactory | None
    = None) -> tff.Computation:
  """The federated ``next``: ``(state@SERVER, data@CLIENTS) -> (state, out)``.

  The votes are summed by :func:`aggregation_process` of ``spec`` and
  ``aggregation_factory``.
  """
  aggregation = aggregation_process(spec, aggregation_factory)
  aggregator_type, measurements_type = _aggregation_types(aggregation)
  server_state_type = tff.FederatedType(
      state_type(spec.max_length, aggregator_type), tff.SERVER)
  data_type = tff.FederatedType(client_data_type(spec), tff.CLIENTS)
  client_votes = client_votes_computation(spec)
  server_step = _server_step_computation(spec.num_extensions, spec.max_length,
                                         aggregator_type, measurements_type)
  frontier_of = _frontier_computation(spec.max_length, spec.vote_capacity,
                                      aggregator_type)

  @tff.federated_computation(server_state_type, data_type)
  def next_fn(state, client_data):
    frontier = tff.federated_broadcast(tff.federated_map(frontier_of, state))
    votes = tff.federated_map(client_votes, (frontier, client_data))
    summed = aggregation.next(state.aggregator, votes)
    updated = tff.federated_map(
        server_step,
        (state, summed.result, summed.state, summed.measurements))
    return updated[0], updated[1]

  return next_fn


@functools.lru_cache(maxsize=None)
def initialize_computation(
    max_length: int, *, theta: int, max_num_prefixes: int | None = None,
    num_sub_rounds: int = 1,
    aggregation: tff.templates.AggregationProcess | None = None
) -> tff.Computation:
  """The federated ``initialize``: the root-only state at the server, with
  the initial state of ``aggregation`` (``None``: an empty one)."""
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
  aggregator_type = (_NO_STATE if aggregation is None
                     else _aggregation_types(aggregation)[0])

  @tff.tensorflow.computation(aggregator_type)
  def initial_state(aggregator):
    return ServerState(
        frontier=tf.zeros([1, 0], dtype=tf.int32),
        heavy_hitters=tf.zeros([0, max_length + 1], dtype=tf.int32),
        heavy_hitter_counts=tf.zeros([0], dtype=tf.int32),
        accumulated_votes=tf.zeros([0], dtype=tf.int32),
        round_num=tf.constant(0, dtype=tf.int32),
        theta=tf.constant(int(theta), dtype=tf.int32),
        max_num_prefixes=tf.constant(cap, dtype=tf.int32),
        num_sub_rounds=tf.constant(int(num_sub_rounds), dtype=tf.int32),
        aggregator=aggregator)

  @tff.federated_computation
  def initialize_fn():
    aggregator = (tff.federated_value((), tff.SERVER) if aggregation is None
                  else aggregation.initialize())
    return tff.federated_map(initial_state, aggregator)

  return initialize_fn


def build_process(
    spec: ProcessSpec, *, theta: int, max_num_prefixes: int | None = None,
    num_sub_rounds: int = 1,
    aggregation_factory: tff.aggregators.UnweightedAggregationFactory | None
    = None) -> tff.templates.IterativeProcess:
  """The TrieHH ``tff.templates.IterativeProcess`` for ``spec``.

  ``initialize()`` returns the root-only :class:`ServerState`;
  ``next(state, client_data)`` runs one sub-round over the given clients (a
  list with one entry per client, see :func:`client_data_type`) and returns
  ``(state, RoundOutput)``. Votes are summed as :func:`aggregation_process`
  says. :func:`triehh.engines.tff.process.build_triehh_process` is the
  public constructor.
  """
  return tff.templates.IterativeProcess(
      initialize_computation(
          spec.max_length, theta=theta, max_num_prefixes=max_num_prefixes,
          num_sub_rounds=num_sub_rounds,
          aggregation=aggregation_process(spec, aggregation_factory)),
      next_computation(spec, aggregation_factory))
