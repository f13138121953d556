"""The noisy trie as TensorFlow Federated computations.

The mechanism of :mod:`triehh.theory.noisy_trie` (``docs/noisy-trie.md``)
as a ``tff.templates.IterativeProcess``: one call of ``next`` is one round.
The server broadcasts the frontier (the published prefixes of ``p``
symbols); the round's candidate set is public, every frontier prefix times
every extension of :class:`triehh.engines.noisy.Extensions` (k characters,
or fewer followed by ``$``, within L), candidate ``f * E + e`` as in the
fast engine. Every client of the round sends the one-hot vector of its
word's candidate (the zero vector if its prefix is not on the frontier or
its word has no extension there), ``float32 [C]`` for a capacity ``C`` fixed
when the process is built (entries from ``F * E`` on stay zero; a round with
more candidates fails). The sums get noise, and the server keeps
the candidates whose noisy sum reaches the threshold: those ending in ``$``
are released words (the empty word dropped), the others the next frontier.

Noise, by ``noise``:

* ``"central"``: the clients' vectors are summed exactly
  (``tff.aggregators.SumFactory``) and the server adds discrete Gaussian
  noise ``N_Z(0, sigma^2)`` to each of the ``F * E`` sums: ``next(state,
  client data, noise)`` takes the round's noise, ``int64 [capacity]``, which
  :func:`central_noise` draws exactly (:mod:`triehh.core.discrete_noise`,
  integer arithmetic: TensorFlow has no exact sampler, and a floating-point
  Gaussian leaks through its low-order bits) from the state's
  ``noise_seed`` (advanced every round). This is the law the accountant
  (:func:`triehh.theory.noisy_trie.epsilon`) accounts for, exactly.
  ``initialize`` draws the seed unseeded, fresh; a simulation may fix it
  (:func:`with_noise_seed`). The seed is the noise: it must stay with the
  server, like the state, never published.
* ``"distributed"``: Skellam shares
  (:mod:`triehh.theory.distributed_noise`). ``next(state, client data,
  shares)`` takes, with each client's data, its share: ``int64
  [capacity]``, its first ``F * E`` entries exact Skellam draws of the
  round's share mean (:func:`client_shares`; drawn in Python by
  :func:`triehh.core.discrete_noise.skellam`, integer arithmetic, and
  handed to the client with its data, since TensorFlow has no exact Poisson
  sampler). Each client adds its share to its one-hot vector modulo
  ``2**bits`` and the vectors are summed by
  ``tff.federated_secure_sum_bitwidth`` (TFF's C++ runtime computes it in
  the clear, :mod:`triehh.engines.tff.runtime`); the server reduces the sum
  modulo ``2**bits`` and reads it in ``[-2**(bits-1), 2**(bits-1))``. The
  sum of m shares is Skellam of m times the share mean, exactly: the law
  the fast engine draws (:func:`triehh.engines.noisy.run`).

Client data: ``"one_word"`` (``int32 [L + 1]`` codes) or ``"sampled_word"``
(a :func:`triehh.engines.tff.clients.pack_words` tensor; the client votes
with the word its rank draws), as in :mod:`triehh.engines.tff.clients`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import tensorflow as tf
import tensorflow_federated as tff

from triehh.core import discrete_noise
from triehh.core import validation
from triehh.engines import noisy
from triehh.engines.tff import clients
from triehh.engines.tff import counting
from triehh.engines.tff import process as process_lib

CENTRAL = "central"
DISTRIBUTED = "distributed"
NOISE_MODES = (CENTRAL, DISTRIBUTED)
CLIENT_MODES = (clients.ONE_WORD, clients.SAMPLED_WORD)
# The distributed mode's secure-sum bit widths (int64 sums of m clients).
MAX_BITS = 31
# The most candidates a round's client vectors hold (every client sends
# one float per candidate).
MAX_CANDIDATES = 2**16


@dataclasses.dataclass(frozen=True)
class NoisySpec:
  """What fixes a noisy-trie process.

  Attributes:
    num_characters: A, the alphabet's characters (``$`` not counted).
    max_length: L, characters per word kept.
    chars_per_level: k, characters a round extends the frontier by.
    capacity: C, candidates the client vectors hold (at most
      :data:`MAX_CANDIDATES`).
    sigma: the standard deviation of the noise on each candidate's sum.
    threshold: tau, the smallest noisy sum that passes.
    noise: ``"central"`` or ``"distributed"`` (module docstring).
    bits: the distributed mode's secure-sum bit width (at most 31).
    client_mode: ``"one_word"`` or ``"sampled_word"``.
  """

  num_characters: int
  max_length: int
  chars_per_level: int
  capacity: int
  sigma: float
  threshold: float
  noise: str = CENTRAL
  bits: int = counting.DEFAULT_BITS
  client_mode: str = clients.ONE_WORD

  def __post_init__(self):
    validation.check_int("num_characters", self.num_characters)
    validation.check_int("max_length", self.max_length)
    validation.check_int("chars_per_level", self.chars_per_level)
    validation.check_int("capacity (candidates the client vectors hold)",
                         self.capacity, high=MAX_CANDIDATES)
    object.__setattr__(self, "sigma",
                       validation.check_positive("sigma", self.sigma))
    tau = validation.check_real("threshold", self.threshold)
    if not math.isfinite(tau):
      raise ValueError(f"threshold must be finite, got {tau}")
    object.__setattr__(self, "threshold", float(tau))
    validation.check_choice("noise", self.noise, NOISE_MODES)
    validation.check_choice("client_data", self.client_mode, CLIENT_MODES)
    validation.check_int("bits", self.bits, low=2, high=MAX_BITS)

  @property
  def process_spec(self) -> clients.ProcessSpec:
    """The client side's spec (client data type, word choice)."""
    return clients.ProcessSpec(num_extensions=self.num_characters + 1,
                               max_length=self.max_length, vote_capacity=1,
                               client_mode=self.client_mode)

  def extension_sizes(self) -> np.ndarray:
    """``int64 [L + 1]``: E, the extensions of a prefix of ``p`` symbols."""
    return np.array([noisy.Extensions.of(self.num_characters,
                                         self.chars_per_level,
                                         self.max_length, p).size
                     for p in range(self.max_length + 1)], dtype=np.int64)

  def offsets(self) -> np.ndarray:
    """``int64 [k + 1]``: :attr:`triehh.engines.noisy.Extensions.offsets`."""
    return noisy.Extensions.of(self.num_characters, self.chars_per_level,
                               self.max_length, 0).offsets


class NoisyState(NamedTuple):
  """The server state of the noisy-trie process.

  Attributes:
    frontier: ``int32 [F, p]`` the frontier prefixes (``[1, 0]``, the root,
      initially), in candidate order.
    words: ``int32 [W, L + 1]`` the released words' codes (``-1`` after
      ``$``), by round, each round's by noisy sum, largest first.
    word_sums: ``float64 [W]`` their noisy sums.
    round_num: rounds run.
    noise_seed: ``int64 [2]`` the central mode's noise seed (secret).
  """

  frontier: object
  words: object
  word_sums: object
  round_num: object
  noise_seed: object


class NoisyRoundOutput(NamedTuple):
  """What one call of ``next`` reports.

  Attributes:
    sums: ``float64 [F * E]`` the noisy sums of the round's candidates.
    measurements: the aggregation's measurements (``()``).
  """

  sums: object
  measurements: object = ()


def state_type(max_length: int) -> tff.types.Type:
  """The TFF type of :class:`NoisyState` (independent of the capacity)."""
  return tff.types.to_type(NoisyState(
      frontier=tff.TensorType(np.int32, [None, None]),
      words=tff.TensorType(np.int32, [None, max_length + 1]),
      word_sums=tff.TensorType(np.float64, [None]),
      round_num=tff.TensorType(np.int32),
      noise_seed=tff.TensorType(np.int64, [2])))


def initial_state(max_length: int, noise_seed) -> NoisyState:
  """The root-only state, with ``noise_seed`` (two integers), as numpy."""
  return NoisyState(
      frontier=np.zeros((1, 0), dtype=np.int32),
      words=np.zeros((0, max_length + 1), dtype=np.int32),
      word_sums=np.zeros(0, dtype=np.float64),
      round_num=np.int32(0),
      noise_seed=np.asarray(noise_seed, dtype=np.int64).reshape(2))


def central_noise(state: NoisyState, sigma: float, capacity: int,
                  num_candidates: int | None = None) -> np.ndarray:
  """The central mode's noise for the round ``state`` is at: ``int64
  [capacity]``, its first ``num_candidates`` (None: all) exact discrete
  Gaussian draws of ``sigma`` from the state's ``noise_seed`` (the rest 0,
  never read), for ``next(state, client data, noise)``."""
  state = _as(NoisyState, state)
  seed = np.asarray(state.noise_seed, dtype=np.int64).reshape(2)
  rng = np.random.default_rng(seed.view(np.uint64).tolist())
  count = capacity if num_candidates is None else int(num_candidates)
  if not 0 <= count <= capacity:
    raise ValueError(f"num_candidates={count} is outside [0, capacity="
                     f"{capacity}]")
  noise = np.zeros(capacity, dtype=np.int64)
  noise[:count] = discrete_noise.discrete_gaussian(rng, sigma, count)
  return noise


def with_noise_seed(state: NoisyState, seed) -> NoisyState:
  """``state`` with its noise seed set (two integers): for a reproducible
  simulation only; a deployment keeps :func:`initialize`'s fresh seed."""
  state = _as(NoisyState, state)
  return state._replace(noise_seed=np.asarray(seed, dtype=np.int64).reshape(2))


def client_shares(rng: np.random.Generator, share_mean, num_clients: int,
                  capacity: int, num_candidates: int) -> np.ndarray:
  """The distributed mode's shares of a round's ``num_clients`` clients:
  ``int64 [num_clients, capacity]``, the first ``num_candidates`` of each
  row exact Skellam draws of ``share_mean`` (a ``fractions.Fraction``;
  :func:`triehh.core.discrete_noise.skellam`), the rest 0 (never read)."""
  if not 0 <= num_candidates <= capacity:
    raise ValueError(f"num_candidates={num_candidates} is outside [0, "
                     f"capacity={capacity}]")
  shares = np.zeros((num_clients, capacity), dtype=np.int64)
  shares[:, :num_candidates] = discrete_noise.skellam(
      rng, share_mean, (num_clients, num_candidates))
  return shares


def _encode(chunk: tf.Tensor, offsets: tf.Tensor, num_characters: int,
            chars: int) -> tf.Tensor:
  """The extension of ``chunk`` (``int64 [k]`` symbols, ``-1`` past the
  codes), or -1: :meth:`triehh.engines.noisy.Extensions.encode` in TF."""
  values = [tf.constant(0, tf.int64)]
  for i in range(chars):
    values.append(values[-1] * num_characters + tf.maximum(chunk[i], 0))
  values = tf.stack(values)
  is_end = tf.equal(chunk, num_characters)
  has_end = tf.reduce_any(is_end)
  ends_at = tf.where(has_end, tf.argmax(tf.cast(is_end, tf.int32),
                                        output_type=tf.int32), chars)
  full = tf.logical_and(tf.logical_not(has_end), tf.reduce_all(chunk >= 0))
  ext = tf.gather(offsets, ends_at) + tf.gather(values, ends_at)
  return tf.where(tf.logical_or(has_end, full), ext, -1)


def _decode(ext: tf.Tensor, offsets: tf.Tensor, num_characters: int,
            chars: int) -> tf.Tensor:
  """``int32 [m, k]`` the symbols of each extension (``-1`` after ``$``):
  :meth:`triehh.engines.noisy.Extensions.decode` in TF."""
  j = tf.searchsorted(offsets, ext, side="right") - 1
  values = ext - tf.gather(offsets, j)
  columns = []
  for i in range(chars):
    power = tf.pow(tf.constant(num_characters, tf.int64),
                   tf.cast(tf.maximum(j - 1 - i, 0), tf.int64))
    digit = (values // power) % num_characters
    columns.append(tf.where(i < j, digit,
                            tf.where(tf.equal(j, i),
                                     tf.constant(num_characters, tf.int64),
                                     tf.constant(-1, tf.int64))))
  return tf.cast(tf.stack(columns, axis=1), tf.int32)


def _client_vector_computation(spec: NoisySpec) -> tff.Computation:
  """``(frontier, client data) -> float32 [C]``: the client's one-hot;
  distributed, ``(frontier, client data, share) -> int64 [C]``: the
  one-hot plus the share, modulo ``2**bits``."""
  k, a = spec.chars_per_level, spec.num_characters
  offsets = spec.offsets()
  sizes = spec.extension_sizes()
  codes_of = counting._client_codes(spec.process_spec)  # pylint: disable=protected-access

  @tff.tensorflow.computation(tff.TensorType(np.int32, [None, None]),
                              clients.client_data_type(spec.process_spec))
  def client_vector(frontier, data):
    codes = tf.cast(codes_of(data), tf.int64)
    depth = tf.shape(frontier)[1]
    num_prefixes = tf.shape(frontier)[0]
    match = tf.reduce_all(
        tf.equal(tf.cast(frontier, tf.int64), codes[tf.newaxis, :depth]),
        axis=1)
    position = tf.argmax(tf.concat([tf.cast(match, tf.int32), [1]], axis=0),
                         output_type=tf.int32)
    padded = tf.concat([codes, -tf.ones([k], tf.int64)], axis=0)
    ext = _encode(padded[depth:depth + k], tf.constant(offsets), a, k)
    size = tf.gather(tf.constant(sizes), depth)
    votes = tf.logical_and(
        tf.logical_and(position < num_prefixes, codes[0] >= 0),
        tf.logical_and(ext >= 0, ext < size))
    index = tf.where(votes, tf.cast(position, tf.int64) * size + ext, -1)
    return tf.one_hot(index, spec.capacity, dtype=tf.float32)

  if spec.noise == CENTRAL:
    return client_vector

  @tff.tensorflow.computation(tff.TensorType(np.int32, [None, None]),
                              clients.client_data_type(spec.process_spec),
                              tff.TensorType(np.int64, [spec.capacity]))
  def client_share_vector(frontier, data, share):
    one_hot = tf.cast(client_vector(frontier, data), tf.int64)
    return tf.math.floormod(one_hot + share, 1 << spec.bits)

  return client_share_vector


def _frontier_computation(spec: NoisySpec) -> tff.Computation:
  """The state's frontier; fails if its candidates exceed the capacity."""
  sizes = spec.extension_sizes()

  @tff.tensorflow.computation(state_type(spec.max_length))
  def frontier_of(state):
    size = tf.gather(tf.constant(sizes), tf.shape(state.frontier)[1])
    candidates = tf.cast(tf.shape(state.frontier)[0], tf.int64) * size
    check = tf.debugging.assert_less_equal(
        candidates, tf.constant(spec.capacity, tf.int64),
        message=f"the round has more candidates than capacity="
        f"{spec.capacity}; build the process with a larger capacity (at "
        f"most {MAX_CANDIDATES})")
    with tf.control_dependencies([check]):
      return tf.identity(state.frontier)

  return frontier_of


def _server_step_computation(spec: NoisySpec,
                             measurements_type: tff.types.Type
                             ) -> tff.Computation:
  """``(state, sums, measurements) -> (state, NoisyRoundOutput)``: noise
  (central mode), threshold, frontier and released words."""
  k, a, width = spec.chars_per_level, spec.num_characters, spec.max_length + 1
  offsets, sizes = spec.offsets(), spec.extension_sizes()
  central = spec.noise == CENTRAL

  summed_type = (np.float32 if central else np.int64)

  @tff.tensorflow.computation(state_type(spec.max_length),
                              tff.TensorType(summed_type, [spec.capacity]),
                              measurements_type,
                              tff.TensorType(np.int64, [spec.capacity]))
  def server_step(state, summed, measurements, noise):
    depth = tf.shape(state.frontier)[1]
    size = tf.gather(tf.constant(sizes), depth)
    num_candidates = tf.cast(tf.shape(state.frontier)[0], tf.int64) * size
    sums = tf.cast(summed[:num_candidates], tf.float64)
    seed = state.noise_seed
    if central:  # integer votes (exact in float64) plus the integer noise
      sums = tf.round(sums) + tf.cast(noise[:num_candidates], tf.float64)
      seed += tf.constant([0, 1], tf.int64)
    else:  # the secure sum modulo 2^bits, read as a signed integer
      modulus = tf.constant(1 << spec.bits, tf.int64)
      wrapped = tf.math.floormod(summed[:num_candidates], modulus)
      sums = tf.cast(tf.where(wrapped >= modulus // 2, wrapped - modulus,
                              wrapped), tf.float64)
    kept = tf.reshape(tf.where(sums >= spec.threshold), [-1])
    values = tf.gather(sums, kept)
    ext = kept % size
    codes = tf.concat([tf.gather(state.frontier, kept // size),
                       _decode(ext, tf.constant(offsets), a, k)], axis=1)
    ends = ext < offsets[k]
    frontier = tf.boolean_mask(codes, tf.logical_not(ends))[:, :depth + k]
    found = tf.boolean_mask(codes, ends)
    found_values = tf.boolean_mask(values, ends)
    nonempty = tf.not_equal(found[:, 0], a)  # "$" alone: no user's word
    found = tf.boolean_mask(found, nonempty)
    found_values = tf.boolean_mask(found_values, nonempty)
    order = tf.argsort(-found_values, stable=True)
    found = tf.pad(tf.gather(found, order),
                   [[0, 0], [0, tf.maximum(width - tf.shape(found)[1], 0)]],
                   constant_values=-1)[:, :width]
    found = tf.ensure_shape(found, [None, width])
    new_state = NoisyState(
        frontier=frontier,
        words=tf.concat([state.words, found], axis=0),
        word_sums=tf.concat([state.word_sums,
                             tf.gather(found_values, order)], axis=0),
        round_num=state.round_num + 1, noise_seed=seed)
    return new_state, NoisyRoundOutput(sums=sums, measurements=measurements)

  return server_step


def aggregation_process(spec: NoisySpec) -> tff.templates.AggregationProcess:
  """Sums the clients' ``float32 [C]`` vectors exactly (central mode, the
  server adds the noise)."""
  vector_type = tff.TensorType(np.float32, [spec.capacity])
  return tff.aggregators.SumFactory().create(vector_type)


# Long function: the process's computations share its types and helpers.
@functools.lru_cache(maxsize=None)
def build_process(spec: NoisySpec) -> tff.templates.IterativeProcess:
  """The noisy-trie ``tff.templates.IterativeProcess`` of ``spec``:
  ``initialize() -> NoisyState`` and ``next(state, client data, noise)``
  (central) or ``next(state, client data, shares)`` (distributed) ``->
  (NoisyState, NoisyRoundOutput)``. Each ``next`` initializes its
  aggregation afresh (a round's release depends on no earlier one's
  aggregation state)."""
  aggregation = aggregation_process(spec)
  measurements_type = aggregation.next.type_signature.result.measurements.member
  server_state_type = tff.FederatedType(state_type(spec.max_length),
                                        tff.SERVER)
  data_type = tff.FederatedType(clients.client_data_type(spec.process_spec),
                                tff.CLIENTS)
  client_vector = _client_vector_computation(spec)
  frontier_of = _frontier_computation(spec)
  server_step = _server_step_computation(spec, measurements_type)
  width = spec.max_length + 1
  noise_type = tff.FederatedType(tff.TensorType(np.int64, [spec.capacity]),
                                 tff.SERVER)

  @tff.tensorflow.computation
  def fresh_state():
    return NoisyState(
        frontier=tf.zeros([1, 0], tf.int32),
        words=tf.zeros([0, width], tf.int32),
        word_sums=tf.zeros([0], tf.float64),
        round_num=tf.constant(0, tf.int32),
        noise_seed=tf.random.uniform([2], minval=-2**62, maxval=2**62,
                                     dtype=tf.int64))

  @tff.federated_computation
  def initialize_fn():
    return tff.federated_eval(fresh_state, tff.SERVER)

  if spec.noise == CENTRAL:

    @tff.federated_computation(server_state_type, data_type, noise_type)
    def next_fn(state, data, noise):
      frontier = tff.federated_broadcast(tff.federated_map(frontier_of,
                                                           state))
      vectors = tff.federated_map(client_vector, (frontier, data))
      summed = aggregation.next(aggregation.initialize(), vectors)
      updated = tff.federated_map(server_step, (state, summed.result,
                                                summed.measurements, noise))
      return updated[0], updated[1]

  else:

    @tff.tensorflow.computation
    def no_noise():
      return tf.zeros([spec.capacity], tf.int64)

    @tff.tensorflow.computation
    def no_measurements():
      return ()

    shares_type = tff.FederatedType(
        tff.TensorType(np.int64, [spec.capacity]), tff.CLIENTS)

    @tff.federated_computation(server_state_type, data_type, shares_type)
    def next_fn(state, data, shares):
      frontier = tff.federated_broadcast(tff.federated_map(frontier_of,
                                                           state))
      vectors = tff.federated_map(client_vector, (frontier, data, shares))
      summed = tff.federated_secure_sum_bitwidth(vectors, spec.bits)
      updated = tff.federated_map(server_step, (
          state, summed, tff.federated_eval(no_measurements, tff.SERVER),
          tff.federated_eval(no_noise, tff.SERVER)))
      return updated[0], updated[1]

  return tff.templates.IterativeProcess(initialize_fn, next_fn)


def build_noisy_trie_process(
    alphabet: process_lib.AlphabetLike, max_length: int, sigma: float,
    threshold: float, *, chars_per_level: int = 1,
    capacity: int = 1024, noise: str = CENTRAL,
    bits: int = counting.DEFAULT_BITS,
    client_data: str = clients.ONE_WORD) -> tff.templates.IterativeProcess:
  """The noisy trie as a ``tff.templates.IterativeProcess`` (module
  docstring), for a TFF user's own loop::

    process = build_noisy_trie_process("mnostu", 4, sigma=2.0, threshold=9,
                                       capacity=1024)
    state = process.initialize()
    for _ in range(5):  # R = ceil((L + 1) / k) rounds at most
      noise = central_noise(state, 2.0, 1024)  # "central"
      state, output = process.next(state, [codes_1, codes_2, ...], noise)
      # "distributed": next(state, codes, client_shares(rng, s, m, 1024, C))
    decode_words(state, "mnostu")  # {'sun': 41.0, ...}

  Args:
    alphabet: the public alphabet (an ``Alphabet`` or its characters).
    max_length: L, characters per word kept.
    sigma, threshold: the discrete Gaussian's parameter and tau (calibrate
      them with :func:`triehh.theory.noisy_trie.calibrate`).
    chars_per_level: k.
    capacity: candidates a round may have (at most :data:`MAX_CANDIDATES`);
      a round with more fails.
    noise: ``"central"`` or ``"distributed"``.
    bits: ``"distributed"``'s secure-sum bit width (its modulus ``2**bits``).
    client_data: ``"one_word"`` or ``"sampled_word"``.
  """
  alphabet = process_lib.as_alphabet(alphabet)
  return build_process(NoisySpec(
      num_characters=alphabet.size, max_length=max_length,
      chars_per_level=chars_per_level, capacity=capacity, sigma=sigma,
      threshold=threshold, noise=noise, bits=bits, client_mode=client_data))


def _as(cls, value):
  """``value`` (a named tuple, mapping or sequence from TFF) as ``cls``."""
  if isinstance(value, cls):
    return value
  if isinstance(value, Mapping):
    return cls(**value)
  if hasattr(value, "_asdict"):
    return cls(**value._asdict())
  return cls(*value)


def decode_words(state: NoisyState,
                 alphabet: process_lib.AlphabetLike) -> dict[str, float]:
  """The released words of ``state`` and their noisy sums, in release order."""
  alphabet = process_lib.as_alphabet(alphabet)
  state = _as(NoisyState, state)
  sums = np.asarray(state.word_sums, dtype=np.float64).reshape(-1)
  codes = np.asarray(state.words).reshape(sums.size, -1)
  return {alphabet.decode_word(row): float(s) for row, s in zip(codes, sums)}
