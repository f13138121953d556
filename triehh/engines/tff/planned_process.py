"""The TFF process of a planned noisy-trie round: one-hot votes over an
explicit public candidate table, summed, the server's noise added.

A round of the planned run (:mod:`triehh.theory.noisy_plan`) has a
candidate set chosen by the server from public values and earlier
releases: the frontier prefixes times their extensions of k_r characters,
or, in a verification round, the discovered words V. The server
broadcasts it as a table, ``int32 [C, L + 1]``, one candidate's symbol
codes per row (``-1`` past its length: any symbol matches there), and a
public priority per row (``float64 [C]``; zeros but in a verification
round, where it is the discovery round's noisy count). A client's data is
:func:`triehh.engines.tff.clients.pack_words`'s tensor (its words, their
cumulative counts, and in row 0 a rank). The client keeps its words that
some row prefixes (at most one row each: the rows of a round are prefix
free), among them those whose row has the smallest priority, and votes for
the row of the first such word whose cumulative count (over the kept
words) exceeds the rank: with the rank uniform in ``[0, their total)``, a
word drawn by local frequency, as :func:`triehh.engines.noisy._votes_for`
draws it. No such word: a zero vector. The votes are summed exactly
(``tff.federated_sum`` of ``int32``), and the server adds the round's noise,
drawn exactly by the driver (:func:`triehh.core.discrete_noise.
discrete_gaussian`), and returns every candidate's noisy sum. Thresholds,
the frontier and the release are the driver's post-processing
(:mod:`triehh.engines.tff.planned_engine`).

With Skellam shares (``PlannedSpec.bits`` set: the plan's
:class:`~triehh.theory.distributed_noise.DistributedNoise`), every
delivering client, with a vote or without, adds its own share (``int64
[C]``, drawn exactly by the driver, :func:`triehh.engines.tff.
noisy_process.client_shares`) to its one-hot modulo ``2**bits``; the
vectors go through ``tff.federated_secure_sum_bitwidth`` and the server
reads the sum modulo ``2**bits`` as a signed integer: it adds no noise.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import tensorflow as tf
import tensorflow_federated as tff

from triehh.core import validation

# The most candidates a round's table holds (each client matches its words
# against every row).
MAX_CANDIDATES = 2**16


@dataclasses.dataclass(frozen=True)
class PlannedSpec:
  """What fixes a planned round's process: L, C, the rows of the
  candidate table (at most :data:`MAX_CANDIDATES`), and ``bits``: None
  (the server's noise) or the secure sum's bit width of Skellam shares."""

  max_length: int
  capacity: int
  bits: int | None = None

  def __post_init__(self):
    validation.check_int("max_length", self.max_length)
    validation.check_int("capacity (candidates the table holds)",
                         self.capacity, high=MAX_CANDIDATES)
    if self.bits is not None:
      validation.check_int("bits", self.bits, high=62)


def client_data_type(max_length: int) -> tff.types.Type:
  """A client's packed words: ``int32 [w + 1, L + 2]``."""
  return tff.TensorType(np.int32, [None, max_length + 2])


def _client_vote_computation(spec: PlannedSpec) -> tff.Computation:
  """``(table, priority, packed words) -> int32 [C]``: the client's one-hot
  (module docstring)."""
  width = spec.max_length + 1

  @tff.tensorflow.computation(tff.TensorType(np.int32, [spec.capacity, width]),
                              tff.TensorType(np.float64, [spec.capacity]),
                              client_data_type(spec.max_length))
  def client_vote(table, priority, packed):
    rank = tf.cast(packed[0, 0], tf.int64)
    codes = packed[1:, :width]
    cumulative = tf.cast(packed[1:, width], tf.int64)
    counts = cumulative - tf.concat([[0], cumulative[:-1]], axis=0)
    match = tf.reduce_all(tf.logical_or(
        tf.equal(table[tf.newaxis, :, :], codes[:, tf.newaxis, :]),
        tf.equal(table[tf.newaxis, :, :], -1)), axis=2)  # [w, C]
    has_row = tf.reduce_any(match, axis=1)
    row = tf.argmax(tf.cast(match, tf.int32), axis=1, output_type=tf.int32)
    rank_of = tf.where(has_row, tf.gather(priority, row),
                       tf.constant(np.inf, tf.float64))
    kept = tf.logical_and(has_row, tf.equal(rank_of,
                                            tf.reduce_min(rank_of)))
    weights = tf.cumsum(tf.where(kept, counts, tf.zeros_like(counts)))
    beyond = tf.concat([tf.cast(weights > rank, tf.int32), [1]], axis=0)
    chosen = tf.argmax(beyond, output_type=tf.int32)
    total = tf.reduce_sum(tf.where(kept, counts, tf.zeros_like(counts)))
    index = tf.where(total > 0,
                     tf.gather(tf.concat([row, [0]], axis=0), chosen), -1)
    return tf.one_hot(index, spec.capacity, dtype=tf.int32)

  return client_vote


def _server_noise_computation(spec: PlannedSpec) -> tff.Computation:
  """``(round, sums, noise) -> (round + 1, noisy sums)``."""

  @tff.tensorflow.computation(np.int32,
                              tff.TensorType(np.int32, [spec.capacity]),
                              tff.TensorType(np.int64, [spec.capacity]))
  def server_noise(round_num, summed, noise):
    return round_num + 1, tf.cast(summed, tf.int64) + noise

  return server_noise


def _shares_computations(spec: PlannedSpec, client_vote: tff.Computation
                         ) -> tuple[tff.Computation, tff.Computation]:
  """With Skellam shares: ``(table, priority, packed, share) -> int64
  [C]``, the one-hot plus the share modulo ``2**bits``, and ``(round,
  secure sum) -> (round + 1, the sum modulo 2**bits read as signed)``."""
  width = spec.max_length + 1
  modulus = 1 << spec.bits

  @tff.tensorflow.computation(tff.TensorType(np.int32, [spec.capacity, width]),
                              tff.TensorType(np.float64, [spec.capacity]),
                              client_data_type(spec.max_length),
                              tff.TensorType(np.int64, [spec.capacity]))
  def client_share_vote(table, priority, packed, share):
    one_hot = tf.cast(client_vote(table, priority, packed), tf.int64)
    return tf.math.floormod(one_hot + share, modulus)

  @tff.tensorflow.computation(np.int32,
                              tff.TensorType(np.int64, [spec.capacity]))
  def server_read(round_num, summed):
    wrapped = tf.math.floormod(summed, modulus)
    return round_num + 1, tf.where(wrapped >= modulus // 2,
                                   wrapped - modulus, wrapped)

  return client_share_vote, server_read


# Long function: the process's computations share its types.
@functools.lru_cache(maxsize=None)
def build_process(spec: PlannedSpec) -> tff.templates.IterativeProcess:
  """The planned round's ``tff.templates.IterativeProcess``: state the
  rounds run so far (``int32``); ``next(state, table, priority, client
  data, noise) -> (state, int64 [C] noisy sums)``, the noise the server's
  (``int64 [C]``), or, with ``spec.bits``, the clients' shares (``int64
  [C]`` each, placed with their data) (module docstring)."""
  width = spec.max_length + 1
  client_vote = _client_vote_computation(spec)
  server_noise = _server_noise_computation(spec)

  @tff.tensorflow.computation
  def zero():
    return tf.constant(0, tf.int32)

  @tff.federated_computation
  def initialize_fn():
    return tff.federated_eval(zero, tff.SERVER)

  state_type = tff.FederatedType(np.int32, tff.SERVER)
  table_type = tff.FederatedType(
      tff.TensorType(np.int32, [spec.capacity, width]), tff.SERVER)
  priority_type = tff.FederatedType(
      tff.TensorType(np.float64, [spec.capacity]), tff.SERVER)
  data_type = tff.FederatedType(client_data_type(spec.max_length),
                                tff.CLIENTS)
  vector = tff.TensorType(np.int64, [spec.capacity])

  if spec.bits is None:

    @tff.federated_computation(state_type, table_type, priority_type,
                               data_type, tff.FederatedType(vector,
                                                            tff.SERVER))
    def next_fn(state, table, priority, data, noise):
      votes = tff.federated_map(client_vote, (
          tff.federated_broadcast(table), tff.federated_broadcast(priority),
          data))
      summed = tff.federated_sum(votes)
      updated = tff.federated_map(server_noise, (state, summed, noise))
      return updated[0], updated[1]

  else:
    client_share_vote, server_read = _shares_computations(spec, client_vote)

    @tff.federated_computation(state_type, table_type, priority_type,
                               data_type, tff.FederatedType(vector,
                                                            tff.CLIENTS))
    def next_fn(state, table, priority, data, shares):
      vectors = tff.federated_map(client_share_vote, (
          tff.federated_broadcast(table), tff.federated_broadcast(priority),
          data, shares))
      summed = tff.federated_secure_sum_bitwidth(vectors, spec.bits)
      updated = tff.federated_map(server_read, (state, summed))
      return updated[0], updated[1]

  return tff.templates.IterativeProcess(initialize_fn, next_fn)
