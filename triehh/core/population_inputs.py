"""What a :class:`~triehh.core.population.Population` is built from, checked.

The encoding options (``max_length``, ``alphabet``, ``end_symbol``,
``unknown``) are checked before any work, each error naming its argument;
the vocabulary is encoded (:func:`triehh.core.vocabulary.encode`) only once
its arrays, ``max_length + 1`` symbols per distinct word, are known to fit
in memory (:mod:`triehh.core.memory`); per-user entries are flattened to
CSR arrays, and CSR arrays are checked, every count a positive integer and
their total below ``2^63``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from triehh.core import alphabet as alphabet_lib
from triehh.core import memory
from triehh.core import validation
from triehh.core import vocabulary as vocabulary_lib

# Peak bytes per (distinct word, character) of encoding a vocabulary and its
# prefix tables (measured: about 26 to encode, 6 for the tables).
ENCODING_BYTES_PER_CELL = 32
UNKNOWN_POLICIES = tuple(p.value for p in alphabet_lib.UnknownCharacterPolicy)
_ALPHABET_TYPES = (alphabet_lib.Alphabet, str, list, tuple, set, frozenset)


def check_encoding(max_length, alphabet, end_symbol, unknown) -> None:
  """The encoding options checked, each error naming its argument."""
  validation.check_int("max_length", max_length)
  validation.check_character("end_symbol", end_symbol)
  validation.check_choice("unknown", unknown, UNKNOWN_POLICIES)
  if alphabet is not None and not isinstance(alphabet, _ALPHABET_TYPES):
    raise TypeError("alphabet must be an Alphabet, a string of characters or "
                    f"None, got {type(alphabet).__name__}")


def encoding_bytes(num_words: int, max_length: int) -> int:
  """Estimated peak memory of encoding ``num_words`` distinct words of up
  to ``max_length`` characters, with their prefix tables."""
  return num_words * (max_length + 2) * ENCODING_BYTES_PER_CELL


def encoded(vocabulary, max_length: int, alphabet, end_symbol: str,
            unknown: str, *, distinct: bool = False
            ) -> vocabulary_lib.EncodedVocabulary:
  """The vocabulary encoded once its arrays are known to fit in memory
  (``distinct``: no word is given twice, see
  :func:`~triehh.core.vocabulary.encode`).

  Raises:
    memory.InsufficientMemoryError: naming ``max_length``, the estimate and
      the largest ``max_length`` that fits.
  """
  check_encoding(max_length, alphabet, end_symbol, unknown)
  num_words = len(vocabulary)

  def hint(available: int) -> str:
    fit = memory.most_that_fit(num_words * ENCODING_BYTES_PER_CELL,
                               available) - 2
    if fit < 1:
      return (f"not even max_length=1 fits {num_words:,} distinct words; use "
              "fewer distinct words")
    longest = max((len(w) for w in vocabulary if isinstance(w, str)),
                  default=0)
    return (f"use max_length <= {fit:,} (the longest word has {longest:,} "
            "characters; longer words are truncated)")

  memory.check_fits(
      f"max_length={max_length:,} characters for each of {num_words:,} "
      "distinct words", encoding_bytes(num_words, max_length), hint)
  return vocabulary_lib.encode(vocabulary, max_length, alphabet, end_symbol,
                               unknown, distinct=distinct)


def int64_counts(name: str, counts) -> np.ndarray:
  """``counts`` as ``int64`` whole numbers, or a ValueError/TypeError naming
  ``name`` (fractions, ``bool``, strings and values of 2^63 or more are
  refused, not truncated or wrapped)."""
  array = np.asarray(counts)
  if array.size == 0:
    return array.astype(np.int64)
  if array.dtype == object:  # Python ints beyond 64 bits, or mixed types
    for value in array.flat:
      validation.check_whole(name, value, -validation.INT64_MAX,
                             validation.INT64_MAX)
    return array.astype(np.int64)
  if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer)
                                 or np.issubdtype(array.dtype, np.floating)):
    raise TypeError(f"{name} must hold integer counts, got {array.dtype}")
  if np.issubdtype(array.dtype, np.floating):
    whole = np.isfinite(array) & (array == np.floor(array))
    if not whole.all():
      bad = array[np.flatnonzero(~whole)[0]]
      raise ValueError(f"{name} must hold whole counts, got {bad!r}")
  if array.max() > validation.INT64_MAX:  # uint64, or large floats
    raise ValueError(f"{name} holds {array.max()!r}, 2^63 or more; counts "
                     "must fit a 64-bit integer")
  return array.astype(np.int64)


def vocabulary_array(vocabulary) -> np.ndarray:
  """``vocabulary`` (a sequence of words, not one string or a mapping) as a
  1-D object array."""
  validation.check_sequence("vocabulary", vocabulary)
  array = np.empty(len(vocabulary), dtype=object)
  array[:] = list(vocabulary)
  return array


def csr_arrays(num_words: int, user_offsets, entry_word, entry_count
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """``int64`` offsets, word indices and counts of a CSR population, or a
  ValueError/TypeError naming what is wrong with them."""
  offsets = int64_counts("user_offsets", user_offsets)
  if np.ndim(entry_word) == 1 and np.size(entry_word) == 0:
    entry_word = np.zeros(0, dtype=np.int64)
  else:
    entry_word = validation.check_indices(
        "entry_word (each entry's index into the vocabulary)", entry_word,
        num_words).astype(np.int64)
  entry_count = int64_counts("entry_count", entry_count)
  if offsets.ndim != 1 or offsets.size < 2 or offsets[0] != 0:
    raise ValueError("user_offsets must start at 0 and list n + 1 offsets")
  if np.any(np.diff(offsets) < 0) or offsets[-1] != entry_word.size:
    raise ValueError("user_offsets must be non-decreasing and end at the "
                     "number of entries")
  if entry_count.shape != entry_word.shape:
    raise ValueError("entry_word and entry_count differ in length")
  if entry_word.size and (entry_word.min() < 0
                          or entry_word.max() >= num_words):
    raise ValueError("entry_word holds an index outside the vocabulary")
  if entry_count.size and entry_count.min() <= 0:
    raise ValueError("every word count must be positive")
  if int(entry_count.sum(dtype=object)) > validation.INT64_MAX:
    raise ValueError("the word counts add up to 2^63 or more; their total "
                     "must fit a 64-bit integer")
  empty = np.flatnonzero(np.diff(offsets) == 0)
  if empty.size:
    raise ValueError(f"user {int(empty[0])} has no words")
  return offsets, entry_word, entry_count


def flattened(user_words: list) -> tuple[np.ndarray, list[str], list[int]]:
  """CSR offsets, words and counts of per-user entries (``str`` or mapping)."""
  offsets = np.zeros(len(user_words) + 1, dtype=np.int64)
  flat_words: list[str] = []
  flat_counts: list[int] = []
  for i, entry in enumerate(user_words):
    if isinstance(entry, str):
      flat_words.append(entry)
      flat_counts.append(1)
    elif isinstance(entry, Mapping):
      if not entry:
        raise ValueError(f"user_words: user {i} has no words")
      for word, count in entry.items():
        if not isinstance(word, str):
          raise TypeError(f"user_words: user {i}: word {word!r} is not a "
                          "string")
        flat_words.append(word)
        flat_counts.append(_entry_count(i, word, count))
    else:
      raise TypeError(
          f"user_words: user {i}: expected a str or a mapping word -> count, "
          f"got {type(entry).__name__}")
    offsets[i + 1] = len(flat_words)
  return offsets, flat_words, flat_counts


def _entry_count(user: int, word: str, count) -> int:
  """A user's count of a word: a positive integer below 2^63."""
  what = f"user_words: user {user}: the count of {word!r}"
  if isinstance(count, bool) or not isinstance(
      count, (int, float, np.integer, np.floating)):
    raise TypeError(f"{what} must be a positive integer, got {count!r}")
  if isinstance(count, (float, np.floating)):
    if not float(count).is_integer():  # also nan and inf
      raise ValueError(f"{what} must be a positive integer, got {count!r}")
    count = int(count)
  if not 0 < count <= validation.INT64_MAX:
    raise ValueError(f"{what} must be a positive integer below 2^63, got "
                     f"{count!r}")
  return int(count)
