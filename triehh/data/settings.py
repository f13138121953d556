"""The paper's three settings (Section 6), from tokenised user texts.

* ``single``: one word per user, heavy hitters. Each user holds the word
  they wrote most often. **Tie rule**: among words used equally often, the
  one the user wrote first (rows in file order, words left to right), as
  ``collections.Counter(words).most_common(1)`` picks it.
* ``oov``: one word per user, out of vocabulary. Tokens lose their leading
  and trailing periods (``OOV_STRIP``: the paper's list has ``p.s``,
  ``r.i.p`` and ``a.m`` but no ``it.`` or ``...``); those made only of
  English letters and the symbols ``@ # ' * : ( ) . / -`` (and at least
  ``min_length`` long) that are not in a dictionary are counted over every
  token of every user; a population of ``num_users`` users (the paper: 6M)
  is then drawn from those frequencies, seeded.
* ``multi``: several words per user. Each user holds every kept word with
  its count f_i(w); the ground truth weight of w is
  ``sum_i f_i(w) / sum_w' f_i(w')``, i.e. n F(w) with the paper's
  ``F(w) = (1/n) sum_i f_i(w)`` for normalised local frequencies
  (``Population.true_weights``).

Tokenizers (``tokenizer`` of the ``*_for`` functions and of ``DataSpec``):

* ``"simple"`` (the default): the rules above.
* ``"paper"``: the paper authors' released preprocessing, the same in every
  setting: lower-case, split on whitespace, strip ``,.;?!`` from both ends
  (``PAPER_STRIP``), drop words starting with ``http`` or ``www``
  (``PAPER_DROP_PREFIXES``), keep words of at least 3 characters made only
  of ``a-z _ @ # - ; ( ) * : . ' /`` (``PAPER_CHARACTERS``); ``oov`` then
  drops the dictionary's words as above.

Users whose texts give no kept word hold nothing and are left out (counted
in the load report). Every population's ground truth is
``population.ground_truth()``: users per word (``single``, ``oov``), or
``n F(w)`` (``multi``); dividing by ``population.num_users`` gives
frequencies.
"""

from __future__ import annotations

import dataclasses
import string
import typing

import numpy as np

if typing.TYPE_CHECKING:
  import pandas as pd

from triehh.core import alphabet as alphabet_lib
from triehh.core import population as population_lib
from triehh.data import synthetic
from triehh.data import tokenize as tokenize_lib

SETTINGS = ("single", "oov", "multi")
OOV_SYMBOLS = "@#'*:()./-"
OOV_CHARACTERS = "".join(sorted(string.ascii_lowercase + OOV_SYMBOLS))
OOV_STRIP = "."
DEFAULT_OOV_NUM_USERS = 6_000_000

TOKENIZERS = ("simple", "paper")
DEFAULT_TOKENIZER = "simple"
PAPER_CHARACTERS = "".join(sorted(string.ascii_lowercase + "_@#-;()*:.'/"))
PAPER_STRIP = ",.;?!"
PAPER_DROP_PREFIXES = ("http", "www")


@dataclasses.dataclass
class SettingResult:
  """A population built for one setting, with facts about how.

  Attributes:
    population: the users and their words.
    users_without_words: users of the input holding no kept word.
    info: setting-specific facts (JSON-able), e.g. for ``oov`` the number of
      distinct OOV words and OOV tokens the draw was based on.
  """

  population: population_lib.Population
  users_without_words: int
  info: dict


def characters_for(setting: str, tokenizer: str = DEFAULT_TOKENIZER) -> str:
  """The allowed characters of a setting's words (before dictionaries)."""
  check_setting(setting)
  if check_tokenizer(tokenizer) == "paper":
    return PAPER_CHARACTERS
  return (OOV_CHARACTERS if setting == "oov"
          else tokenize_lib.DEFAULT_CHARACTERS)


def strip_for(setting: str, tokenizer: str = DEFAULT_TOKENIZER) -> str:
  """Characters stripped from token ends in a setting (see tokenize)."""
  check_setting(setting)
  if check_tokenizer(tokenizer) == "paper":
    return PAPER_STRIP
  return OOV_STRIP if setting == "oov" else ""


def drop_prefixes_for(tokenizer: str = DEFAULT_TOKENIZER) -> tuple[str, ...]:
  """Prefixes of words the tokenizer drops (links, for ``paper``)."""
  return (PAPER_DROP_PREFIXES if check_tokenizer(tokenizer) == "paper"
          else ())


def check_tokenizer(tokenizer: str) -> str:
  if tokenizer not in TOKENIZERS:
    raise ValueError(f"unknown tokenizer {tokenizer!r}: use one of "
                     f"{', '.join(TOKENIZERS)}")
  return tokenizer


def check_setting(setting: str) -> None:
  if setting not in SETTINGS:
    raise ValueError(f"unknown setting {setting!r}: use one of "
                     f"{', '.join(SETTINGS)}")


def _alphabet(characters: str) -> alphabet_lib.Alphabet:
  return alphabet_lib.Alphabet.of(characters)


def single_word(tokens: tokenize_lib.Tokens, row_user: np.ndarray,
                num_users: int, *, characters: str,
                max_length: int = population_lib.DEFAULT_MAX_LENGTH
                ) -> SettingResult:
  """Each user's most frequent word (ties: first written; module docstring)."""
  pair_user, pair_word, pair_count, first = user_word_counts(tokens,
                                                             row_user)
  if not pair_user.size:
    raise ValueError("no user has a word: nothing to build a population from")
  # Best pair of each user: largest count, then smallest first position.
  score = pair_count << _bits(tokens.num_tokens + 1)
  score -= first
  user_starts = np.flatnonzero(np.diff(pair_user, prepend=-1))
  top = np.maximum.reduceat(score, user_starts)
  best = np.flatnonzero(score == np.repeat(
      top, np.diff(user_starts, append=pair_user.size)))
  words, user_word = np.unique(pair_word[best], return_inverse=True)
  pop = population_lib.Population.from_word_indices(
      tokens.vocabulary[words], user_word.astype(np.int32),
      max_length=max_length, alphabet=_alphabet(characters))
  return SettingResult(pop, num_users - best.size, {})


def multi_word(tokens: tokenize_lib.Tokens, row_user: np.ndarray,
               num_users: int, *, characters: str,
               max_length: int = population_lib.DEFAULT_MAX_LENGTH
               ) -> SettingResult:
  """Each user's words with their counts f_i(w)."""
  pair_user, pair_word, pair_count, _ = user_word_counts(tokens, row_user)
  if not pair_user.size:
    raise ValueError("no user has a word: nothing to build a population from")
  user_starts = np.flatnonzero(np.diff(pair_user, prepend=-1))
  offsets = np.append(user_starts, pair_user.size).astype(np.int64)
  words = np.flatnonzero(np.bincount(pair_word,
                                     minlength=tokens.vocabulary.size))
  remap = np.zeros(tokens.vocabulary.size, dtype=np.int32)
  remap[words] = np.arange(words.size, dtype=np.int32)
  pop = population_lib.Population.from_word_counts(
      tokens.vocabulary[words], offsets, remap[pair_word], pair_count,
      max_length=max_length, alphabet=_alphabet(characters))
  users = user_starts
  return SettingResult(pop, num_users - users.size, {})


def oov_counts(tokens: tokenize_lib.Tokens, dictionary
               ) -> tuple[np.ndarray, np.ndarray]:
  """OOV words and their token counts, most frequent first (ties by word).

  Args:
    tokens: tokens kept with the OOV characters (``OOV_CHARACTERS``).
    dictionary: the in-vocabulary words (any collection of lower-case str).
  """
  counts = np.bincount(tokens.token_word, minlength=tokens.vocabulary.size)
  return oov_table(tokens.vocabulary, counts, dictionary)


def oov_table(vocabulary: np.ndarray, counts: np.ndarray, dictionary
              ) -> tuple[np.ndarray, np.ndarray]:
  """The words of ``vocabulary`` with a positive token count that are not in
  ``dictionary``, and their counts, most frequent first (ties by word)."""
  import pandas as pd  # pylint: disable=g-import-not-at-top
  counts = np.array(counts, dtype=np.int64)
  known = pd.Index(vocabulary).isin(pd.Index(list(dictionary))
                                    if not isinstance(dictionary, pd.Index)
                                    else dictionary)
  counts[known] = 0
  keep = np.flatnonzero(counts > 0)
  words = vocabulary[keep]
  counts = counts[keep]
  order = np.lexsort((words.astype(str), -counts))
  return words[order], counts[order]


def oov(tokens: tokenize_lib.Tokens, dictionary, *,
        num_users: int = DEFAULT_OOV_NUM_USERS, seed: int = 0,
        max_length: int = population_lib.DEFAULT_MAX_LENGTH,
        characters: str = OOV_CHARACTERS) -> SettingResult:
  """A population of ``num_users`` drawn from OOV word frequencies.

  Each user independently holds OOV word w with probability proportional
  to w's token count (``synthetic.draw_user_words``: a multinomial draw,
  then the users are shuffled; the same ``seed`` gives the same population).
  The alphabet is ``OOV_CHARACTERS`` with any other of ``characters`` (the
  characters the tokens were kept with).
  """
  if num_users < 1:
    raise ValueError(f"num_users must be >= 1, got {num_users}")
  words, counts = oov_counts(tokens, dictionary)
  return oov_from_counts(words, counts, num_users=num_users, seed=seed,
                         max_length=max_length, characters=characters)


def oov_from_counts(words: np.ndarray, counts: np.ndarray, *,
                    num_users: int = DEFAULT_OOV_NUM_USERS, seed: int = 0,
                    max_length: int = population_lib.DEFAULT_MAX_LENGTH,
                    characters: str = OOV_CHARACTERS) -> SettingResult:
  """The ``oov`` population drawn from an OOV table (:func:`oov_table`)."""
  if num_users < 1:
    raise ValueError(f"num_users must be >= 1, got {num_users}")
  if not words.size:
    raise ValueError("no out-of-vocabulary word is left after removing the "
                     "dictionary words")
  pop = synthetic.population_from_weights(
      words, counts, num_users, seed=seed, max_length=max_length,
      alphabet=_alphabet("".join(sorted(set(OOV_CHARACTERS)
                                        | set(characters)))))
  info = {"oov_words": int(words.size), "oov_tokens": int(counts.sum()),
          "seed": int(seed)}
  return SettingResult(pop, 0, info)


def user_word_counts(tokens: tokenize_lib.Tokens, row_user: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                np.ndarray]:
  """Distinct (user, word) pairs, sorted by user then word.

  Returns ``int32`` users and words of the pairs, their ``int64`` counts,
  and the position (token index) of each pair's first occurrence.
  """
  num_tokens = tokens.num_tokens
  num_users = int(row_user.max()) + 1 if row_user.size else 1
  word_bits = _bits(tokens.vocabulary.size)
  pos_bits = _bits(num_tokens)
  key = row_user.astype(np.int64)[tokens.token_row]
  key <<= word_bits
  key |= tokens.token_word
  if _bits(num_users) + word_bits + pos_bits <= 63:
    # One in-place sort of (user, word, position) packed in an int64: runs
    # of equal (user, word) are the pairs, each led by its first position.
    key <<= pos_bits
    key |= np.arange(num_tokens, dtype=np.int64)
    key.sort()
    starts = _run_starts(key >> pos_bits)
    first = key[starts] & ((1 << pos_bits) - 1)
    pairs = key[starts] >> pos_bits
  else:
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = _run_starts(key)
    first = order[starts]
    pairs = key[starts]
  del key
  counts = np.diff(starts, append=num_tokens)
  return ((pairs >> word_bits).astype(np.int32),
          (pairs & ((1 << word_bits) - 1)).astype(np.int32),
          counts.astype(np.int64), first)


def _run_starts(values: np.ndarray) -> np.ndarray:
  """Indices where a run of equal values starts in a sorted array."""
  if not values.size:
    return np.zeros(0, dtype=np.int64)
  change = np.empty(values.size, dtype=bool)
  change[0] = True
  np.not_equal(values[1:], values[:-1], out=change[1:])
  return np.flatnonzero(change)


def _bits(n: int) -> int:
  """Bits to hold the values 0 .. n-1 (at least 1)."""
  return max(int(n - 1).bit_length(), 1)
