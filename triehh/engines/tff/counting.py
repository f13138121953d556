"""The counting phase as TFF computations: differentially private word counts.

Once TrieHH has published its words, a second, fresh sample of users counts
them. The domain is closed and public: the ``K`` discovered words plus an
"other" slot, ``K + 1`` slots. Every user joins the counting sample
independently with probability ``q`` (Poisson sampling); a sampled client
sends the one-hot vector of its slot (the zero vector if it has no word),
and the ``K + 1`` sums are released with i.i.d. noise of scale ``sigma``.
A one-hot vector has L2 norm 1, so one user moves the sums by at most 1 in
L2: the discrete Gaussian mechanism of sensitivity 1 (the distributed
mechanism clips at 1, which never changes a one-hot vector).
:mod:`triehh.engines.counting` is the same
mechanism in numpy (per slot ``Binomial(c_k, q) + N_Z(0, sigma^2)``); the
two agree in distribution, not draw by draw (the sampling draws differ).

* ``"gaussian"`` (central DP), in :func:`noisy_counts_tff`: TFF sums the
  one-hot vectors exactly (``tff.aggregators.SumFactory``) and the server
  adds discrete Gaussian noise ``N_Z(0, sigma^2)`` drawn exactly in numpy
  (:mod:`triehh.core.discrete_noise`; TensorFlow has no exact sampler, and
  its float Gaussian leaks through its low-order bits): the law of
  :mod:`triehh.engines.counting`, accounted by
  :mod:`triehh.theory.counting`. The process's counting round
  (:func:`counting_round_computation`) is the same: TFF sums the one-hot
  vectors exactly as ``int32``, and ``count(state, client data, noise)``
  takes the server's noise, ``int64 [word_capacity + 1]``, which
  :func:`central_noise` draws exactly outside the TF graph from the round's
  seed; the counts are integers. No float noise remains in this mechanism.
* ``"distributed_discrete_gaussian"``: ``tff.aggregators.DistributedDpSumFactory``
  with ``mechanism="distributed_dgauss"``: every client rotates, scales and
  rounds its vector to integers and adds its own discrete Gaussian share of
  the noise (central standard deviation ``sigma`` when ``expected_clients``
  clients take part), and the shares are added by a secure sum modulo
  ``2**bits``. The server never sees an un-noised sum; the result is
  approximately, not exactly, the central mechanism's (rounding, and a
  noise variance proportional to the clients that actually took part).
  TFF's C++ runtime computes secure sums in the clear
  (:mod:`triehh.engines.tff.runtime`).

Entry points: :func:`noisy_counts_tff` (slot indices in, noisy counts out,
the TFF twin of :func:`triehh.engines.counting.noisy_counts`),
:func:`noisy_sums` (the TFF engine's counting phase on a population, the
twin of :func:`triehh.engines.counting.noisy_sums`), and
:func:`counting_round_computation`, the counting round over a TrieHH server
state that :func:`triehh.engines.tff.process.build_triehh_process` adds to
its process as ``count``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import tensorflow as tf
import tensorflow_federated as tff
# TFF 0.87 exports this sum only wrapped in a mean
# (tff.learning.ddp_secure_aggregator); the counts need the sum.
from tensorflow_federated.python.aggregators import distributed_dp

from triehh.core import discrete_noise
from triehh.core import population as population_lib
from triehh.core import validation
from triehh.engines import counting as numpy_counting
from triehh.engines.tff import clients
from triehh.engines.tff import runtime as runtime_lib

GAUSSIAN = "gaussian"
DISTRIBUTED_DISCRETE_GAUSSIAN = "distributed_discrete_gaussian"
MECHANISMS = (GAUSSIAN, DISTRIBUTED_DISCRETE_GAUSSIAN)

# A client's one-hot vector has L2 norm 1: the clip and the sensitivity.
L2_CLIP = 1.0
# The secure sum's field is 2**bits (TFF allows at most 22 bits).
DEFAULT_BITS = 20
# Words the counting round's client vectors hold when not given.
DEFAULT_WORD_CAPACITY = 64


@dataclasses.dataclass(frozen=True)
class CountingSpec:
  """How the counting round sums.

  Attributes:
    noise_std: sigma, the standard deviation of the noise on every slot's
      sum (>= 0; 0 releases the exact sums, with no privacy).
    mechanism: ``"gaussian"`` or ``"distributed_discrete_gaussian"``.
    expected_clients: clients expected per counting round (the sampling
      rate times the users); the distributed mechanism splits the noise into
      this many client shares. Required by it, ignored by ``"gaussian"``.
    bits: the distributed mechanism's secure-sum bit width (at most 22).
  """

  noise_std: float
  mechanism: str = GAUSSIAN
  expected_clients: int | None = None
  bits: int = DEFAULT_BITS

  def __post_init__(self):
    numpy_counting.check_noise_std(self.noise_std)
    validation.check_choice("mechanism", self.mechanism, MECHANISMS)
    if self.mechanism == DISTRIBUTED_DISCRETE_GAUSSIAN:
      if self.expected_clients is None or int(self.expected_clients) < 1:
        raise ValueError("expected_clients must be >= 1 for the "
                         f"{DISTRIBUTED_DISCRETE_GAUSSIAN!r} mechanism, got "
                         f"{self.expected_clients}")
      validation.check_int("bits", self.bits, high=22)

  def factory(self) -> tff.aggregators.UnweightedAggregationFactory:
    """The TFF aggregation factory of this spec: for ``"gaussian"``, the
    exact sum (``tff.aggregators.SumFactory``; the server adds the exact
    discrete noise, :func:`central_noise`), else the distributed DP sum."""
    if self.mechanism == GAUSSIAN:
      return tff.aggregators.SumFactory()
    return distributed_dp.DistributedDpSumFactory(
        noise_multiplier=float(self.noise_std) / L2_CLIP,
        expected_clients_per_round=int(self.expected_clients),
        bits=int(self.bits), l2_clip=L2_CLIP, mechanism="distributed_dgauss")


class CountOutput(NamedTuple):
  """What a counting round returns.

  Attributes:
    counts: ``[K + 1]`` the noisy sums: one per discovered word (in the
      order of ``ServerState.heavy_hitters``, discovery order), then
      "other"; ``int64`` for ``"gaussian"`` (exact sums plus exact discrete
      noise), ``float32`` for the distributed mechanism.
    measurements: the DP aggregation process's measurements.
  """

  counts: object
  measurements: object = ()


def central_noise(noise_std: float, word_capacity: int,
                  seed: int | np.random.Generator | None = None
                  ) -> np.ndarray:
  """The ``"gaussian"`` counting round's noise, for ``count(state, client
  data, noise)``: ``int64 [word_capacity + 1]`` exact discrete Gaussian
  draws of ``noise_std`` (:mod:`triehh.core.discrete_noise`; zeros if it is
  0). ``seed``: ``None`` draws fresh entropy from the OS (a deployment: the
  noise must stay with the server); an integer or a ``numpy`` Generator
  repeats it (a simulation)."""
  numpy_counting.check_noise_std(noise_std)
  word_capacity = validation.check_int("word_capacity", word_capacity)
  if isinstance(seed, np.random.Generator):
    rng = seed
  elif seed is None or (not isinstance(seed, bool)
                        and isinstance(seed, (int, np.integer))):
    rng = np.random.default_rng(seed)
  else:
    raise ValueError("seed must be None, an integer or a numpy Generator, "
                     f"got {seed!r:.60}")
  if noise_std == 0:
    return np.zeros(word_capacity + 1, dtype=np.int64)
  return np.asarray(discrete_noise.discrete_gaussian(
      rng, float(noise_std), word_capacity + 1), dtype=np.int64)


def check_arguments(items: np.ndarray, num_slots: int, sample_rate: float,
                    noise_std: float) -> np.ndarray:
  """The checked items (``int64 [n]``, each in ``[-1, num_slots)``);
  ValueError naming the first bad argument."""
  if isinstance(num_slots, bool) or not isinstance(
      num_slots, (int, np.integer)) or num_slots < 1:
    raise ValueError(f"num_slots must be an integer >= 1, got {num_slots!r}")
  validation.check_rate("sample_rate", sample_rate)
  numpy_counting.check_noise_std(noise_std)
  array = np.asarray(items)
  if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype,
                                                          np.integer)):
    raise ValueError("items must be a 1-d integer array of slot indices, got "
                     f"shape {array.shape} and dtype {array.dtype}")
  array = array.astype(np.int64)
  bad = (array < -1) | (array >= num_slots)
  if bad.any():
    raise ValueError(f"items must be in [-1, num_slots={num_slots}), got "
                     f"{array[bad][0]} at position {int(np.argmax(bad))}")
  return array


@functools.lru_cache(maxsize=None)
def slot_counts_computation(num_slots: int,
                            spec: CountingSpec) -> tff.Computation:
  """``slots@CLIENTS -> float32 [num_slots]@SERVER``: one counting round.

  Each client holds its slot (``int32``, ``-1``: no word) and sends its
  one-hot vector; the sums are ``spec``'s DP aggregation (initialized in
  the round, so every call is a fresh release), except for ``"gaussian"``:
  the exact sums, to which :func:`noisy_counts_tff` adds the exact
  discrete noise.
  """
  vector_type = tff.TensorType(np.float32, [num_slots])
  aggregation = (tff.aggregators.SumFactory().create(vector_type)
                 if spec.mechanism == GAUSSIAN
                 else spec.factory().create(vector_type))

  @tff.tensorflow.computation(tff.TensorType(np.int32))
  def one_hot(slot):
    return tf.one_hot(slot, num_slots, dtype=tf.float32)

  @tff.federated_computation(tff.FederatedType(np.int32, tff.CLIENTS))
  def count(slots):
    vectors = tff.federated_map(one_hot, slots)
    return aggregation.next(aggregation.initialize(), vectors).result

  return count


def noisy_counts_tff(items: np.ndarray, num_slots: int, sample_rate: float,
                     noise_std: float, seed: int | Sequence[int], *,
                     mechanism: str = GAUSSIAN, bits: int = DEFAULT_BITS,
                     workers: str | Sequence[str] | None = None
                     ) -> np.ndarray:
  """A counting round in TFF: ``float64 [num_slots]`` noisy slot counts.

  Args:
    items: ``[n]`` each user's slot in ``[0, num_slots)``, or ``-1`` (the
      user has no word and contributes the zero vector).
    num_slots: slots, the discovered words plus "other".
    sample_rate: q, each user's probability of joining the round (Poisson
      sampling, drawn in numpy from ``seed``: one uniform per user).
    noise_std: sigma of the noise on each slot's sum.
    seed: seeds the sampling and, for ``"gaussian"``, the exact discrete
      Gaussian noise the server adds (numpy; the distributed mechanism's
      noise is TensorFlow's, unseeded). A sequence of ``R`` seeds runs ``R`` independent rounds in one TFF call
      and returns ``[R, num_slots]``: the clients of round ``r`` send their
      one-hot vectors in row ``r`` of an ``R x num_slots`` vector (still L2
      norm 1), and the DP sum noises every entry independently. (Each
      client then holds ``R x num_slots`` floats: for small populations.)
    mechanism: ``"gaussian"`` or ``"distributed_discrete_gaussian"`` (its
      expected clients: ``q n`` per round, at least 1; over ``R`` rounds in
      one call the noise shares are split among ``R q n`` clients, so each
      round's noise is as in a round of its own up to the rounding).
    bits: the distributed mechanism's secure-sum bit width.
    workers: TFF workers (``None``: the local one), see
      :func:`triehh.engines.tff.runtime.get_runtime`.
  """
  items = check_arguments(items, num_slots, sample_rate, noise_std)
  seeds = np.atleast_1d(np.asarray(seed))
  if seeds.ndim != 1 or not seeds.size or not np.issubdtype(seeds.dtype,
                                                            np.integer):
    raise ValueError(f"seed must be an integer or a non-empty sequence of "
                     f"integers, got {seed!r}")
  rounds = seeds.size
  expected = (max(1, round(rounds * sample_rate * items.size))
              if mechanism == DISTRIBUTED_DISCRETE_GAUSSIAN else None)
  spec = CountingSpec(float(noise_std), mechanism, expected_clients=expected,
                      bits=bits)
  # Client data: the entry of the client's one-hot vector (-1: none).
  entries, noise = [], []
  for row, one_seed in enumerate(seeds):
    rng = np.random.default_rng(int(one_seed))
    sampled = items[rng.random(items.size) < sample_rate]
    entries.append(np.where(sampled < 0, -1, row * num_slots + sampled))
    if mechanism == GAUSSIAN and noise_std > 0:
      noise.append(discrete_noise.discrete_gaussian(rng, float(noise_std),
                                                    int(num_slots)))
  entries = np.concatenate(entries).astype(np.int32)
  if entries.size >= 2**24:  # float32 sums of ones are exact below 2**24
    raise ValueError(f"items: {entries.size:,} sampled clients in one call; "
                     "at most 2**24 - 1 are summed exactly in float32")
  count = slot_counts_computation(rounds * int(num_slots), spec)
  with runtime_lib.get_runtime(workers).install():
    counts = count(list(entries))
  counts = np.asarray(counts, dtype=np.float64).reshape(rounds, num_slots)
  if noise:
    counts = counts + np.stack(noise)  # integers, exact below 2**53
  return counts if np.ndim(seed) else counts[0]


def noisy_sums(population: population_lib.Population, words: Sequence[str],
               sample_rate: float, noise_std: float,
               rng: np.random.Generator) -> np.ndarray:
  """``float64 [K + 1]``: the counting phase on ``population`` in TFF.

  Each user's slot (:func:`triehh.engines.counting.user_items`, drawn from
  ``rng``) summed by :func:`noisy_counts_tff` with the central discrete
  Gaussian mechanism, its sampling and noise seeded by one
  ``rng.integers(0, 2**31 - 1)``.
  """
  items = numpy_counting.user_items(population, words, rng)
  return np.asarray(noisy_counts_tff(
      items, len(words) + 1, sample_rate, noise_std,
      seed=int(rng.integers(0, 2**31 - 1))), dtype=np.float64)


def _word_slot(words: tf.Tensor, codes: tf.Tensor) -> tf.Tensor:
  """The row of ``words`` (``[K, L + 1]``) equal to ``codes`` (``[L + 1]``),
  ``K`` ("other") if none is, ``-1`` if ``codes`` is no word (all -1)."""
  match = tf.reduce_all(tf.equal(words, codes[tf.newaxis, :]), axis=1)
  row = tf.argmax(tf.concat([tf.cast(match, tf.int32), [1]], axis=0),
                  output_type=tf.int32)
  return tf.where(codes[0] < 0, -1, row)


def _client_codes(spec: clients.ProcessSpec):
  """``client data -> int32 [L + 1]``: the one word the client counts with
  (all -1 if it has none), by the client mode."""
  width = spec.max_length + 1
  if spec.client_mode == clients.ONE_WORD:
    return lambda codes: codes
  if spec.client_mode == clients.SAMPLED_WORD:

    def sampled(words):  # Algorithm 3: word j w.p. count_j / total
      chosen = tf.searchsorted(words[1:, width], words[0, :1],
                               side="right")[0]
      return words[1 + chosen, :width]

    return sampled
  if spec.client_mode == clients.TOP_WORDS:

    def top(words):  # the most frequent word, ties to the earlier
      cumulative = words[1:, width]
      counts = cumulative - tf.concat([[0], cumulative[:-1]], axis=0)
      return words[1 + clients._top_indices(counts, 1)[0], :width]  # pylint: disable=protected-access

    return top

  def from_dataset(dataset):  # the most frequent word, ties to the first seen
    distinct, _, counts = tf.unique_with_counts(
        clients._dataset_words(dataset), out_idx=tf.int32)  # pylint: disable=protected-access
    codes, unknown = clients.encode_words(distinct, spec.characters,
                                          spec.max_length)
    codes = tf.concat([codes, -tf.ones([1, width], tf.int32)], axis=0)
    top = tf.concat([clients._top_indices(counts, 1), [tf.size(counts)]],  # pylint: disable=protected-access
                    axis=0)[0]
    return tf.where(tf.reduce_any(unknown), -tf.ones([width], tf.int32),
                    codes[top])

  return from_dataset


def _words_computation(state_type: tff.types.Type,
                       word_capacity: int) -> tff.Computation:
  """``state -> state.heavy_hitters``; fails beyond ``word_capacity``."""

  @tff.tensorflow.computation(state_type)
  def words_of(state):
    check = tf.debugging.assert_less_equal(
        tf.shape(state.heavy_hitters)[0], word_capacity,
        message=f"the state holds more words than word_capacity="
        f"{word_capacity}; build the process with a larger word_capacity")
    with tf.control_dependencies([check]):
      return tf.identity(state.heavy_hitters)

  return words_of


# Long function: its TFF computations close over the types it builds
# (the one-hot length, the sums' dtype), so they are defined inside it.
@functools.lru_cache(maxsize=None)
def counting_round_computation(process_spec: clients.ProcessSpec,
                               state_type: tff.types.Type,
                               counting: CountingSpec,
                               word_capacity: int) -> tff.Computation:
  """The counting round over the words of a TrieHH server state:
  ``(state@SERVER, data@CLIENTS, noise@SERVER) -> CountOutput@SERVER`` for
  ``"gaussian"`` (``noise``: :func:`central_noise`, ``int64
  [word_capacity + 1]``; the one-hot vectors are summed exactly as
  ``int32`` and the counts are the sums plus the noise, ``int64``), and
  ``(state@SERVER, data@CLIENTS) -> CountOutput@SERVER`` for the
  distributed mechanism (its DP sum, ``float32``).

  ``state_type`` is the process's server state type (a
  ``ServerState``); the server broadcasts ``state.heavy_hitters`` (the
  ``K`` words, at most ``word_capacity``: a state with more fails the
  round), each client picks its one word (``"one_word"``: its word;
  ``"sampled_word"``: the word its rank draws; ``"top_words"`` and
  ``"dataset"``: its most frequent word; a dataset client with no word or a
  word outside the alphabet counts nothing) and sends the one-hot vector of
  its slot (``word_capacity + 1`` entries, "other" at index ``K``), and the
  server keeps the first ``K + 1`` noisy sums.
  """
  if word_capacity < 1:
    raise ValueError(f"word_capacity must be >= 1, got {word_capacity}")
  length = word_capacity + 1
  central = counting.mechanism == GAUSSIAN
  dtype = np.int32 if central else np.float32
  aggregation = counting.factory().create(tff.TensorType(dtype, [length]))
  words_type = tff.TensorType(np.int32, [None, process_spec.max_length + 1])
  words_of = _words_computation(state_type, word_capacity)
  codes_of = _client_codes(process_spec)

  @tff.tensorflow.computation(words_type,
                              clients.client_data_type(process_spec))
  def one_hot(words, data):
    return tf.one_hot(_word_slot(words, codes_of(data)), length,
                      dtype=tf.as_dtype(dtype))

  sums_type = tff.TensorType(dtype, [length])
  noise_type = tff.TensorType(np.int64, [length])

  @tff.tensorflow.computation(words_type, sums_type, noise_type)
  def kept(words, sums, noise):
    size = tf.shape(words)[0] + 1
    if central:  # exact integer sums plus the exact integer noise
      return tf.cast(sums[:size], tf.int64) + noise[:size]
    return sums[:size]

  def round_of(state, data, noise):
    words = tff.federated_map(words_of, state)
    vectors = tff.federated_map(one_hot,
                                (tff.federated_broadcast(words), data))
    summed = aggregation.next(aggregation.initialize(), vectors)
    return tff.federated_zip(CountOutput(
        counts=tff.federated_map(kept, (words, summed.result, noise)),
        measurements=summed.measurements))

  return _round_entry(round_of, central,
                      tff.FederatedType(state_type, tff.SERVER),
                      tff.FederatedType(
                          clients.client_data_type(process_spec),
                          tff.CLIENTS), noise_type)


def _round_entry(round_of, central: bool, state_at_server: tff.Type,
                 data_at_clients: tff.Type,
                 noise_type: tff.types.TensorType) -> tff.Computation:
  """The counting round's federated computation: ``round_of(state, data,
  noise)`` with the server's ``noise`` passed in (``central``), or with
  zeros in its place (the distributed mechanism, whose DP sum noises)."""
  if central:

    @tff.federated_computation(state_at_server, data_at_clients,
                               tff.FederatedType(noise_type, tff.SERVER))
    def count(state, data, noise):
      return round_of(state, data, noise)

    return count

  @tff.tensorflow.computation
  def no_noise():
    return tf.zeros(noise_type.shape, tf.int64)

  @tff.federated_computation(state_at_server, data_at_clients)
  def count_distributed(state, data):
    return round_of(state, data, tff.federated_eval(no_noise, tff.SERVER))

  return count_distributed
