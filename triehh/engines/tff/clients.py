"""The client side of the TrieHH process: client data and client votes.

Every sampled client answers the broadcast frontier (the ``k`` non-terminated
prefixes of depth ``d``) with a vote vector of ``K * (A + 1)`` entries (``K``
the vote capacity, :class:`ProcessSpec`): one count per candidate extension,
at index ``prefix * (A + 1) + symbol`` as in :mod:`triehh.core.trie`, zero
beyond the first ``k * (A + 1)``. A word votes iff its first ``d`` symbols
are a frontier prefix and it has a ``(d+1)``-th symbol.

Client data, per client mode:

* ``"one_word"``: ``int32 [L + 1]``, the symbol codes of the user's word
  (``-1`` after its end), as in :attr:`triehh.Population.codes`;
* ``"sampled_word"`` and ``"top_words"``: one ``int32 [w + 1, L + 2]``
  tensor (see :func:`pack_words`; one tensor per client costs half as much
  as a structure of three): row ``1 + j`` holds the codes of the user's word
  ``j`` and, in its last column, the cumulative count of words ``0..j``; row
  0 holds, in its first column, a per-client, per-round rank drawn by the
  driver uniformly in ``[0, total count)``. A ``"sampled_word"`` client votes
  with the first word whose cumulative count exceeds the rank (Algorithm 3
  of the paper: word ``j`` with probability ``count_j / total``); a
  ``"top_words"`` client, as in TFF's reference implementation, with each of
  its ``max_user_contribution`` most frequent words (ties to the earlier
  word);
* ``"dataset"``: a ``tf.data.Dataset`` of the user's words (``tf.string``
  scalars, one element per occurrence), as TFF's own analytics take client
  data. The client encodes its words in TensorFlow by the rules of
  :mod:`triehh.core.population`: lower-cased (``tf.strings.lower``, UTF-8),
  empty words ignored, the first ``L`` characters kept, the end symbol after
  a word of at most ``L`` characters. It votes, like a ``"top_words"``
  client, with each of its ``max_user_contribution`` most frequent distinct
  words (ties to the word seen first). A client holding a word with a
  character outside the alphabet among its first ``L`` (or invalid UTF-8)
  casts no vote, as the ``"drop"`` policy drops such users.

Tensors are faster than datasets: a dataset per client costs about ten times
as much in TFF's C++ runtime, so the ``tff`` engine uses the tensor modes.

Privacy. Theorem 1 of the paper bounds the privacy loss when every sampled
user casts at most one vote per round. ``max_user_contribution > 1`` (modes
``"top_words"`` and ``"dataset"``) lets a user cast several votes in one round
(one per word, possibly on the same extension): Theorem 1 does not cover it.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import tensorflow as tf
import tensorflow_federated as tff

from triehh.core import validation

ONE_WORD = "one_word"
SAMPLED_WORD = "sampled_word"
TOP_WORDS = "top_words"
DATASET = "dataset"
CLIENT_MODES = (ONE_WORD, SAMPLED_WORD, TOP_WORDS, DATASET)


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
    client_mode: ``"one_word"``, ``"sampled_word"``, ``"top_words"`` or
      ``"dataset"``.
    max_user_contribution: words a ``"top_words"`` or ``"dataset"`` client
      votes with.
    secure_sum_bitwidth: if set, votes are aggregated with
      ``tff.federated_secure_sum_bitwidth`` at this bit width (the round's
      summed votes per entry must stay below ``2**bitwidth``); else by the
      process's aggregation factory (``tff.federated_sum`` by default).
    characters: the alphabet's characters in code order (sorted), needed
      by ``"dataset"`` clients to encode their words; ``A`` of them.
  """

  num_extensions: int
  max_length: int
  vote_capacity: int
  client_mode: str = ONE_WORD
  max_user_contribution: int = 1
  secure_sum_bitwidth: int | None = None
  characters: str = ""

  def __post_init__(self):
    # At least a symbol and the end symbol; votes are int32 (bit-width).
    validation.check_int("num_extensions", self.num_extensions, low=2)
    validation.check_int("max_length", self.max_length)
    validation.check_int("vote_capacity", self.vote_capacity)
    validation.check_choice("client_mode", self.client_mode, CLIENT_MODES)
    validation.check_int("max_user_contribution", self.max_user_contribution)
    if self.secure_sum_bitwidth is not None:
      validation.check_int("secure_sum_bitwidth", self.secure_sum_bitwidth,
                           high=31)
    if self.client_mode == DATASET and (
        len(self.characters) != self.num_extensions - 1
        or list(self.characters) != sorted(set(self.characters))):
      raise ValueError(f"a {DATASET!r} client needs the alphabet's "
                       f"{self.num_extensions - 1} characters, sorted and "
                       f"distinct; got {self.characters!r}")

  @property
  def vote_length(self) -> int:
    """Entries of a client's vote vector: ``K * (A + 1)``."""
    return self.vote_capacity * self.num_extensions


def client_data_type(spec: ProcessSpec) -> tff.types.Type:
  """The TFF type of one client's data under ``spec``."""
  width = spec.max_length + 1
  if spec.client_mode == ONE_WORD:
    return tff.TensorType(np.int32, [width])
  if spec.client_mode == DATASET:
    return tff.SequenceType(tff.TensorType(np.str_))
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


def _top_indices(counts: tf.Tensor, contribution: int) -> tf.Tensor:
  """Positions of the ``contribution`` largest counts (ties: lower first)."""
  num_words = tf.minimum(contribution, tf.size(counts))
  _, top = tf.math.top_k(counts, k=num_words)
  return top


def encode_words(words: tf.Tensor, characters: str,
                 max_length: int) -> tuple[tf.Tensor, tf.Tensor]:
  """Lower-cased ``tf.string [w]`` words -> (``int32 [w, L + 1]`` codes,
  ``bool [w]`` whether a word has a character outside ``characters`` among
  its first ``L``), by the rules of :mod:`triehh.core.population`."""
  points = tf.constant([ord(c) for c in characters], dtype=tf.int32)
  chars = tf.strings.unicode_decode(words, "UTF-8", errors="replace",
                                    replacement_char=0xFFFD)
  lengths = tf.cast(chars.row_lengths(), tf.int32)
  kept = chars[:, :max_length].to_tensor(default_value=-1,
                                         shape=[None, max_length])
  flat = tf.reshape(kept, [-1])
  # The alphabet is sorted, so a character's code is its sorted position.
  position = tf.minimum(tf.searchsorted(points, flat, out_type=tf.int32),
                        len(characters) - 1)
  known = tf.equal(tf.gather(points, position), flat)
  codes = tf.reshape(tf.where(known, position, -1), tf.shape(kept))
  unknown = tf.reduce_any(
      tf.reshape(tf.logical_and(flat >= 0, tf.logical_not(known)),
                 tf.shape(kept)), axis=1)
  codes = tf.pad(codes, [[0, 0], [0, 1]], constant_values=-1)
  end = tf.equal(tf.range(max_length + 1)[tf.newaxis, :],
                 lengths[:, tf.newaxis])
  return tf.where(end, len(characters), codes), unknown


def _dataset_words(dataset: tf.data.Dataset) -> tf.Tensor:
  """The client's non-empty lower-cased words, ``tf.string [n]``."""
  words = dataset.map(lambda w: tf.strings.lower(w, encoding="utf-8"))
  words = words.filter(lambda w: tf.strings.length(w) > 0)
  return words.reduce(tf.zeros([0], tf.string),
                      lambda seen, w: tf.concat([seen, [w]], axis=0))


def _dataset_client(spec: ProcessSpec, frontier_type) -> tff.Computation:
  a1, length = spec.num_extensions, spec.vote_length

  @tff.tensorflow.computation(frontier_type, client_data_type(spec))
  def client_votes(frontier, dataset):
    distinct, _, counts = tf.unique_with_counts(_dataset_words(dataset),
                                                out_idx=tf.int32)
    codes, unknown = encode_words(distinct, spec.characters, spec.max_length)
    chosen = tf.gather(codes, _top_indices(counts, spec.max_user_contribution))
    votes = _one_hot_sum(_vote_indices(frontier, chosen, a1), length)
    return tf.where(tf.reduce_any(unknown), tf.zeros_like(votes), votes)

  return client_votes


def _tensor_client(spec: ProcessSpec, frontier_type) -> tff.Computation:
  a1, length = spec.num_extensions, spec.vote_length
  width = spec.max_length + 1
  data_type = client_data_type(spec)

  if spec.client_mode == ONE_WORD:

    @tff.tensorflow.computation(frontier_type, data_type)
    def client_votes(frontier, codes):
      return tf.one_hot(_vote_index(frontier, codes, a1), length,
                        dtype=tf.int32)

  elif spec.client_mode == SAMPLED_WORD:

    @tff.tensorflow.computation(frontier_type, data_type)
    def client_votes(frontier, words):
      chosen = tf.searchsorted(words[1:, width], words[0, :1],
                               side="right")[0]
      return tf.one_hot(_vote_index(frontier, words[1 + chosen, :width], a1),
                        length, dtype=tf.int32)

  else:

    @tff.tensorflow.computation(frontier_type, data_type)
    def client_votes(frontier, words):
      cumulative = words[1:, width]
      counts = cumulative - tf.concat([[0], cumulative[:-1]], axis=0)
      top = _top_indices(counts, spec.max_user_contribution)
      codes = tf.gather(words[1:, :width], top)
      return _one_hot_sum(_vote_indices(frontier, codes, a1), length)

  return client_votes


@functools.lru_cache(maxsize=None)
def client_votes_computation(spec: ProcessSpec) -> tff.Computation:
  """``(frontier, client data) -> int32 [K * (A + 1)]`` one client's votes."""
  frontier_type = tff.TensorType(np.int32, [None, None])
  if spec.client_mode == DATASET:
    return _dataset_client(spec, frontier_type)
  return _tensor_client(spec, frontier_type)
