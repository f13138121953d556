"""Populations: users and their words, encoded once as integer arrays.

A :class:`Population` is built once from per-user data and reused by every
run of every engine, so repeated runs never re-encode text.

Encoding rules (documented here because they change what can be discovered):

* Words are lower-cased (``str.lower``). Empty words are rejected.
* A word of at most ``max_length`` characters becomes the sequence of its
  characters followed by the end symbol, ``len(word) + 1`` symbols in all.
* A word longer than ``max_length`` is truncated to its first ``max_length``
  characters and gets **no** end symbol: its user still supports the
  prefixes it shares with other words, but a truncated word can never be
  reported as a heavy hitter (it would be a word nobody typed). Its
  truncated form may show up among the frequent non-terminated prefixes.
* Only the first ``max_length`` characters are ever sent, so only they must
  belong to the alphabet. With no alphabet given, the alphabet is every
  character used there. With an alphabet given, a word with an outside
  character raises ``ValueError`` (policy ``"error"``, the default) or its
  users are removed from the population (policy ``"drop"``; counted in
  :attr:`Population.num_dropped_users`).
* One word per user (a ``str`` entry) or several (a ``Mapping`` word -> count
  with positive integer counts, adding up to less than ``2^63``; the same
  word after lower-casing is merged). ``user_words`` itself is never a
  mapping.
* A one-word population can also be given as (word, number of users) pairs
  (:meth:`Population.from_word_frequencies`): O(V) memory, no per-user
  array, up to ``2^62`` users. Engines that sample vote counts run on it;
  anything that needs individual users (a fixed schedule, the TFF engine
  past a size) refuses it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Union

import numpy as np

from triehh.core import alphabet as alphabet_lib
from triehh.core import population_inputs as inputs
from triehh.core import validation
from triehh.core import vocabulary as vocabulary_lib

DEFAULT_MAX_LENGTH = 10
# The most users a population holds (int64 vote sums of them cannot
# overflow).
MAX_USERS = 2**62 - 1

UserWords = Sequence[Union[str, Mapping[str, int]]]


@dataclasses.dataclass(frozen=True, eq=False)
class Population:
  """Users and their words as integer arrays (see the module docstring).

  Attributes:
    alphabet: the symbol alphabet.
    max_length: L, the maximum number of characters per word.
    vocabulary: the distinct (lower-cased) words, ``[V]`` of ``str``.
    codes: ``int16 [V, L + 1]`` symbol codes of each word's sequence, ``-1``
      after its end.
    word_lengths: ``int32 [V]`` character count of each word (untruncated).
    user_word: ``int32 [n]`` the word of each user (one-word populations),
      else ``None``.
    user_offsets: ``int64 [n + 1]`` CSR row offsets into ``entry_word`` and
      ``entry_count`` (several-word populations), else ``None``.
    entry_word: ``int32 [nnz]`` word index of each (user, word) entry.
    entry_count: ``int64 [nnz]`` occurrences of the word on the user's device.
    num_dropped_users: users removed by the unknown-character policy.
    word_users: ``int64 [V]`` users holding each word, for a one-word
      population given by word frequencies (then ``user_word`` is ``None``),
      else ``None``.
    alphabet_from_data: whether the alphabet was read off the words
      themselves (built with ``alphabet=None``) rather than given. Such an
      alphabet is not public: a mechanism that releases candidates no user
      holds (the noisy trie, SFP's ``fragment_alphabet="data"``) has no
      guarantee with it.
  """

  alphabet: alphabet_lib.Alphabet
  max_length: int
  vocabulary: np.ndarray
  codes: np.ndarray
  word_lengths: np.ndarray
  user_word: np.ndarray | None = None
  user_offsets: np.ndarray | None = None
  entry_word: np.ndarray | None = None
  entry_count: np.ndarray | None = None
  num_dropped_users: int = 0
  word_users: np.ndarray | None = None
  alphabet_from_data: bool = False

  # ---- construction -------------------------------------------------------

  @classmethod
  def from_user_words(
      cls,
      user_words: UserWords,
      *,
      max_length: int = DEFAULT_MAX_LENGTH,
      alphabet: alphabet_lib.Alphabet | str | None = None,
      end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL,
      unknown: str = "error",
  ) -> "Population":
    """Builds a population from one entry per user.

    Args:
      user_words: per user, a ``str`` (the user's single word) or a mapping
        word -> positive count (the user's words). If every entry is a
        ``str`` the population is one-word-per-user.
      max_length: L, the maximum number of characters per word.
      alphabet: an :class:`~triehh.core.alphabet.Alphabet`, a string of allowed
        characters, or ``None`` to derive it from the data.
      end_symbol: the end-of-sequence symbol (used when ``alphabet`` is not an
        ``Alphabet``).
      unknown: ``"error"`` or ``"drop"``, see the module docstring.
    """
    _check_not_one_entry(user_words)
    inputs.check_encoding(max_length, alphabet, end_symbol, unknown)
    if not isinstance(user_words, list):
      try:
        user_words = list(user_words)
      except TypeError:
        raise TypeError(
            "user_words must be a sequence with one entry per user (a word, "
            "or a mapping or list of one user's words) or a Population, got "
            f"{type(user_words).__name__} {user_words!r:.60}") from None
    if not user_words:
      raise ValueError("user_words is empty: a population needs users")
    # One word per user: each distinct word is numbered in one pass over the
    # users, and only the distinct words are checked and encoded.
    factorized = vocabulary_lib.factorize_strings(user_words)
    if factorized is None and all(isinstance(u, str) for u in user_words):
      factorized = vocabulary_lib.factorize(user_words)
    if factorized is not None:
      words, vocab = factorized
      return cls._from_every_word_index(
          vocab, words, max_length, alphabet, end_symbol, unknown,
          distinct=True)
    offsets, flat_words, flat_counts = inputs.flattened(user_words)
    words, vocab = vocabulary_lib.factorize(flat_words)
    return cls.from_word_counts(
        np.asarray(vocab, dtype=object), offsets, words,
        np.asarray(flat_counts, dtype=np.int64), max_length=max_length,
        alphabet=alphabet, end_symbol=end_symbol, unknown=unknown)

  @classmethod
  def from_word_indices(
      cls,
      vocabulary: Sequence[str] | np.ndarray,
      user_word: np.ndarray,
      *,
      max_length: int = DEFAULT_MAX_LENGTH,
      alphabet: alphabet_lib.Alphabet | str | None = None,
      end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL,
      unknown: str = "error",
  ) -> "Population":
    """One word per user, given as indices into ``vocabulary``."""
    inputs.check_encoding(max_length, alphabet, end_symbol, unknown)
    vocabulary = inputs.vocabulary_array(vocabulary)
    if np.ndim(user_word) == 1 and np.size(user_word) == 0:
      raise ValueError("user_word must be a non-empty 1-D array of indices")
    kind = np.asarray(user_word).dtype
    if not np.issubdtype(kind, np.integer) or kind == bool:
      raise TypeError("user_word must hold integer indices into the "
                      f"vocabulary, got an array of {kind}")
    user_word = validation.check_indices(
        "user_word (each user's index into the vocabulary)", user_word,
        len(vocabulary))
    used = np.bincount(user_word, minlength=len(vocabulary)) > 0
    if used.all():
      user_word = user_word.copy()  # the population's own
    else:  # encode only the words some user holds
      user_word = (np.cumsum(used) - 1)[user_word]
      vocabulary = vocabulary[used]
    return cls._from_every_word_index(vocabulary, user_word, max_length,
                                      alphabet, end_symbol, unknown)

  @classmethod
  def _from_every_word_index(cls, vocabulary: np.ndarray,
                             user_word: np.ndarray, max_length: int,
                             alphabet, end_symbol: str, unknown: str, *,
                             distinct: bool = False) -> "Population":
    """One word per user, from indices (owned by the population from now
    on) that hold every word of ``vocabulary`` (``distinct``: once each)."""
    enc = inputs.encoded(vocabulary, max_length, alphabet, end_symbol, unknown,
                         distinct=distinct)
    if np.array_equal(enc.old_to_new, np.arange(len(vocabulary))):
      user_word = user_word.astype(np.int32, copy=False)  # nothing to map
      dropped = 0
    else:
      mapped = enc.old_to_new[user_word]
      keep = mapped >= 0
      user_word = mapped[keep].astype(np.int32)
      dropped = int(keep.size - user_word.size)
    return cls(
        alphabet=enc.alphabet, max_length=max_length,
        vocabulary=enc.vocabulary, codes=enc.codes,
        word_lengths=enc.word_lengths, user_word=user_word,
        num_dropped_users=dropped,
        alphabet_from_data=alphabet is None)._checked()

  @classmethod
  def from_word_counts(
      cls,
      vocabulary: Sequence[str] | np.ndarray,
      user_offsets: np.ndarray,
      entry_word: np.ndarray,
      entry_count: np.ndarray,
      *,
      max_length: int = DEFAULT_MAX_LENGTH,
      alphabet: alphabet_lib.Alphabet | str | None = None,
      end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL,
      unknown: str = "error",
  ) -> "Population":
    """Several words per user, in CSR form.

    User ``i`` holds ``entry_word[user_offsets[i]:user_offsets[i+1]]`` with the
    matching ``entry_count`` (positive). Duplicate words of one user (also
    after lower-casing) are merged. Users with an unknown character in one of
    their words lose that word; users left with no word are dropped. The
    counts must add up to less than ``2^63``.
    """
    inputs.check_encoding(max_length, alphabet, end_symbol, unknown)
    vocabulary = inputs.vocabulary_array(vocabulary)
    offsets, entry_word, entry_count = inputs.csr_arrays(
        len(vocabulary), user_offsets, entry_word, entry_count)
    enc = inputs.encoded(vocabulary, max_length, alphabet, end_symbol, unknown)
    num_users = offsets.size - 1
    users = np.repeat(np.arange(num_users, dtype=np.int64), np.diff(offsets))
    words = enc.old_to_new[entry_word]
    keep = words >= 0
    users, words, counts = users[keep], words[keep], entry_count[keep]
    # Merge duplicate (user, word) pairs, sorted by user then word; input
    # that is already sorted and merged skips the sort.
    v = max(len(enc.vocabulary), 1)
    keys = users * v + words
    if np.any(keys[1:] <= keys[:-1]):
      keys, inverse = np.unique(keys, return_inverse=True)
      merged = np.bincount(inverse, weights=counts).astype(np.int64)
    else:
      merged = counts
    kept_users = keys // v  # non-decreasing
    starts = np.flatnonzero(np.r_[True, kept_users[1:] != kept_users[:-1]])
    new_offsets = np.append(starts, keys.size).astype(np.int64)
    return cls(
        alphabet=enc.alphabet, max_length=max_length,
        vocabulary=enc.vocabulary, codes=enc.codes,
        word_lengths=enc.word_lengths,
        user_offsets=new_offsets, entry_word=(keys % v).astype(np.int32),
        entry_count=merged,
        num_dropped_users=int(num_users - starts.size),
        alphabet_from_data=alphabet is None)._checked()

  @classmethod
  def from_word_frequencies(
      cls,
      words: Sequence[str] | np.ndarray,
      users: Sequence[int] | np.ndarray,
      *,
      max_length: int = DEFAULT_MAX_LENGTH,
      alphabet: alphabet_lib.Alphabet | str | None = None,
      end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL,
      unknown: str = "error",
  ) -> "Population":
    """One word per user, given as the number of users holding each word.

    ``users[i]`` users hold ``words[i]`` (non-negative integers; words that
    coincide after lower-casing are merged, words with no user are left
    out). No per-user array is built: memory is O(V) for any n below
    ``2^62``. With ``unknown="drop"``, the users of a word with an outside
    character are removed (counted in ``num_dropped_users``).
    """
    if isinstance(words, (str, bytes)):
      raise TypeError("words must be a sequence of words, not a single string")
    inputs.check_encoding(max_length, alphabet, end_symbol, unknown)
    vocabulary = np.asarray(list(words), dtype=object)
    counts = np.asarray(users)
    if counts.ndim != 1 or counts.shape != vocabulary.shape:
      raise ValueError(f"users has shape {counts.shape} but there are "
                       f"{vocabulary.size} words: give one count per word")
    if vocabulary.size == 0:
      raise ValueError("words is empty: a population needs users")
    if counts.dtype != object and not np.issubdtype(counts.dtype,
                                                   np.integer):
      raise TypeError("users must hold integers that fit int64, got "
                      f"{counts.dtype}")
    counts = inputs.int64_counts("users", counts)
    if counts.min() < 0:
      raise ValueError(f"users holds a negative count ({int(counts.min())} "
                       f"for word {vocabulary[int(np.argmin(counts))]!r})")
    if int(counts.sum(dtype=object)) > MAX_USERS:
      raise ValueError("users count 2^62 users or more; at most 2^62 - 1 are "
                       "supported")
    used = counts > 0
    vocabulary, counts = vocabulary[used], counts[used]
    if vocabulary.size == 0:
      raise ValueError("users counts no user: a population needs users")
    enc = inputs.encoded(vocabulary, max_length, alphabet, end_symbol, unknown)
    keep = enc.old_to_new >= 0
    word_users = np.zeros(len(enc.vocabulary), dtype=np.int64)
    np.add.at(word_users, enc.old_to_new[keep], counts[keep])
    return cls(
        alphabet=enc.alphabet, max_length=max_length,
        vocabulary=enc.vocabulary, codes=enc.codes,
        word_lengths=enc.word_lengths, word_users=word_users,
        num_dropped_users=int(counts[~keep].sum()),
        alphabet_from_data=alphabet is None)._checked()

  def _checked(self) -> "Population":
    if self.num_users == 0:
      raise ValueError(
          "no users are left after removing words with characters outside "
          f"the alphabet ({self.num_dropped_users} dropped)")
    return self

  # ---- basic facts -------------------------------------------------------

  @functools.cached_property
  def num_users(self) -> int:
    """n, the number of users."""
    if self.user_word is not None:
      return int(self.user_word.size)
    if self.word_users is not None:
      return int(self.word_users.sum())
    return int(self.user_offsets.size - 1)

  @property
  def is_single_word(self) -> bool:
    return self.user_word is not None or self.word_users is not None

  @property
  def has_user_array(self) -> bool:
    """Whether users are listed one by one (not only counted per word)."""
    return self.user_word is not None or self.user_offsets is not None

  def check_user_array(self, needed_by: str) -> None:
    """Raises ``ValueError`` naming ``needed_by`` if users are only counted."""
    if not self.has_user_array:
      raise ValueError(
          f"{needed_by} needs individual users, but this population of "
          f"{self.num_users:,} users was given by word frequencies "
          "(Population.from_word_frequencies); build it with "
          "Population.from_word_indices or from_user_words instead")

  def check_public_alphabet(self, needed_by: str, remedy: str) -> None:
    """Raises ``ValueError`` if the alphabet was read off the users' words
    (``alphabet_from_data``) for ``needed_by``, a mechanism whose released
    candidates are built from the alphabet: noise or sketching can release
    one no user holds, and with it a character only one user types."""
    if self.alphabet_from_data:
      raise ValueError(
          f"{needed_by} needs a public alphabet, fixed before the data; this "
          "population's alphabet was read off the users' words, and "
          "candidates built from it can release a character only one user "
          f"types. {remedy}")

  @functools.cached_property
  def users_per_word(self) -> np.ndarray:
    """``int64 [V]`` users holding each word (one-word populations)."""
    if self.word_users is not None:
      return self.word_users
    if not self.is_single_word:
      raise ValueError("users_per_word is defined for one-word populations "
                       "only; this one has several words per user")
    return np.bincount(self.user_word, minlength=self.num_words).astype(
        np.int64)

  @property
  def num_words(self) -> int:
    """V, the number of distinct words."""
    return int(self.vocabulary.size)

  @property
  def num_levels(self) -> int:
    """Maximum number of trie levels: L characters plus the end symbol."""
    return self.max_length + 1

  @functools.cached_property
  def sequence_lengths(self) -> np.ndarray:
    """``int32 [V]`` symbols per sequence: ``len + 1``, or L if truncated."""
    return (self.codes >= 0).sum(axis=1).astype(np.int32)

  @functools.cached_property
  def user_totals(self) -> np.ndarray:
    """``int64 [n]`` total word count per user (1 for one-word users)."""
    self.check_user_array("user_totals")
    if self.is_single_word:
      return np.ones(self.num_users, dtype=np.int64)
    return np.add.reduceat(self.entry_count, self.user_offsets[:-1])

  @functools.cached_property
  def entry_users(self) -> np.ndarray:
    """``int64 [nnz]`` the user of each (user, word) entry (several-word
    populations)."""
    if self.user_offsets is None:
      raise ValueError("entry_users: a one-word-per-user population has no "
                       "(user, word) entries")
    return np.repeat(np.arange(self.num_users), np.diff(self.user_offsets))

  @functools.cached_property
  def cumulative_counts(self) -> np.ndarray:
    """``int64 [nnz]`` running sum of ``entry_count`` (for word picking)."""
    if self.is_single_word:
      raise ValueError("a one-word population has no entries")
    return np.cumsum(self.entry_count)

  @functools.cached_property
  def true_weights(self) -> np.ndarray:
    """``float64 [V]`` ground truth weight of each word.

    One word per user: the number of users holding it. Several words per
    user: ``sum_i f_i(w)``, the paper's population frequency times n.
    """
    if self.is_single_word:
      return self.users_per_word.astype(np.float64)
    local_freq = self.entry_count / self.user_totals[self.entry_users]
    return np.bincount(self.entry_word, weights=local_freq,
                       minlength=self.num_words)

  def ground_truth(self) -> dict[str, float]:
    """Word -> ground truth weight (see :attr:`true_weights`).

    Truncated words (longer than L) are included: they are real words that
    TrieHH cannot discover, which is part of what recall measures.
    """
    weights = self.true_weights
    nz = np.flatnonzero(weights > 0)
    return {str(self.vocabulary[i]): float(weights[i]) for i in nz}

  # ---- prefix tables -----------------------------------------------------

  @functools.cached_property
  def prefix_ids(self) -> tuple[np.ndarray, ...]:
    """Per level l = 0..L+1, ``int32 [V]`` id of each word's length-l prefix.

    Ids number the distinct length-l prefixes ``0..P_l-1`` in lexicographic
    order of their codes; ``-1`` where the word's sequence is shorter than l.
    Level 0 is the root (every word has id 0).
    """
    v, width = self.codes.shape
    order = np.lexsort(self.codes.T[::-1])
    sorted_codes = self.codes[order]
    differs = np.zeros(v, dtype=bool)
    differs[0] = True
    ids = [np.zeros(v, dtype=np.int32)]
    for level in range(1, width + 1):
      col = sorted_codes[:, level - 1]
      differs[1:] |= col[1:] != col[:-1]
      valid = col >= 0
      ranks = np.cumsum(differs & valid) - 1
      level_ids = np.full(v, -1, dtype=np.int32)
      level_ids[order[valid]] = ranks[valid]
      ids.append(level_ids)
    return tuple(ids)

  @functools.cached_property
  def num_prefixes(self) -> tuple[int, ...]:
    """P_l, the number of distinct length-l prefixes, per level l = 0..L+1."""
    return tuple(int(ids.max()) + 1 if ids.size and ids.max() >= 0 else 0
                 for ids in self.prefix_ids)

  def encode(self) -> "Population":
    """Computes every cached table now (so timed runs exclude it)."""
    _ = self.prefix_ids, self.num_prefixes, self.sequence_lengths
    _ = self.true_weights
    if not self.is_single_word:
      _ = self.user_totals, self.cumulative_counts
    return self

  def __repr__(self) -> str:
    kind = "one word" if self.is_single_word else "several words"
    return (f"Population(n={self.num_users}, {kind} per user, "
            f"V={self.num_words}, |alphabet|={self.alphabet.size}, "
            f"L={self.max_length})")


def encoding_options(alphabet=None, unknown: str | None = None,
                     end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL
                     ) -> dict:
  """The encoding options a caller gave, checked, for :func:`as_population`:
  ``alphabet`` and ``unknown`` unless None, ``end_symbol`` unless the
  default."""
  validation.check_character("end_symbol", end_symbol)
  if unknown is not None:
    validation.check_choice("unknown", unknown, inputs.UNKNOWN_POLICIES)
  options = {k: v for k, v in (("alphabet", alphabet), ("unknown", unknown))
             if v is not None}
  if end_symbol != alphabet_lib.DEFAULT_END_SYMBOL:
    options["end_symbol"] = end_symbol
  return options


def _check_not_one_entry(user_words) -> None:
  """A TypeError for what would be read as something else than one entry
  per user: a single string, a mapping, a table (a DataFrame iterates over
  its column names)."""
  if isinstance(user_words, (str, bytes)):
    raise TypeError("user_words must be a sequence with one entry per user, "
                    "not a single string")
  if isinstance(user_words, Mapping):
    raise TypeError(
        "user_words must be a sequence with one entry per user, not a "
        "mapping: give [{word: count, ...}] for one user with several "
        "words, or Population.from_word_frequencies(words, users) for the "
        "number of users holding each word")
  if hasattr(user_words, "columns") and hasattr(user_words, "iloc"):
    raise TypeError(
        "user_words must be a sequence with one entry per user, not a "
        "table: give one column, e.g. frame['word'] (or "
        "frame['word'].tolist())")


def as_population(user_words, max_length: int = DEFAULT_MAX_LENGTH,
                  **options) -> Population:
  """A :class:`Population` from user words, or the population itself.

  Args:
    user_words: a :class:`Population` (returned as is) or what
      :meth:`Population.from_user_words` takes.
    max_length: L; a given population must have been built with it.
    **options: :meth:`Population.from_user_words` options (``alphabet``,
      ``unknown``...), only when building from words.
  """
  max_length = validation.check_int("max_length", max_length)
  if isinstance(user_words, Population):
    if user_words.max_length != max_length:
      raise ValueError(
          f"the population was encoded with max_length={user_words.max_length}"
          f" but max_length={max_length} was asked; rebuild the population "
          "or pass the same max_length")
    if options:
      raise ValueError(f"options {sorted(options)} only apply when building a "
                       "population from words")
    return user_words
  return Population.from_user_words(user_words, max_length=max_length,
                                    **options)
