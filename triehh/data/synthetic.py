"""Synthetic populations drawn from a real English word-frequency list.

The word list comes from the ``wordfreq`` package (its English list,
frequencies from web, subtitle, news, book and social media text). Only
words made of ``a``-``z`` and the apostrophe are kept, so the alphabet has
at most 27 characters. Each user receives one word drawn independently,
with probability either

* ``"wordfreq"``: proportional to the word's English frequency, or
* ``"zipf"``: proportional to ``1 / rank**exponent`` (rank in that list).

The draw is seeded, so a (size, seed, distribution) triple always gives the
same population.

For scale tests (1e6 to 1e8 users), :func:`scale_population` draws from the
same English list or from a user-provided frequency table file
(:func:`read_frequency_table`), with the table's own weights or a Zipf law
over its ranks, in memory linear in the users (4 bytes each): the word
counts are one multinomial draw, then the users are shuffled
(:func:`draw_user_words`). A draw whose arrays would not fit in the
available memory is refused before it starts (:func:`check_num_users`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import math
import re
import typing
import warnings
import zipfile
from collections.abc import Mapping

import numpy as np

if typing.TYPE_CHECKING:
  import pandas as pd

from triehh.core import memory
from triehh.core import population as population_lib
from triehh.core import validation
from triehh.data import input_files

DEFAULT_NUM_USERS = 1_000_000
DEFAULT_VOCABULARY_SIZE = 50_000
_WORD = re.compile(r"^[a-z']+$")
# Peak bytes per user drawn (measured): english_population draws with
# rng.choice and maps the words, population_from_weights draws the counts
# and shuffles (draw_user_words alone holds 4 per user).
ENGLISH_BYTES_PER_USER = 38
WEIGHTS_BYTES_PER_USER = 11
DRAW_BYTES_PER_USER = 4


def word_list_version() -> str:
  """The installed ``wordfreq``'s version (its lists make the populations)."""
  return importlib.metadata.version("wordfreq")


@functools.lru_cache(maxsize=4)
def english_words(vocabulary_size: int = DEFAULT_VOCABULARY_SIZE
                  ) -> tuple[tuple[str, ...], np.ndarray]:
  """The most frequent English words (a-z and ') and their frequencies."""
  try:
    import wordfreq
  except ImportError as err:  # pragma: no cover - a declared dependency
    raise ImportError("the default data set needs the 'wordfreq' package: "
                      "pip install wordfreq") from err
  words = []
  for w in wordfreq.top_n_list("en", vocabulary_size * 2):
    if _WORD.match(w) and w.strip("'"):
      words.append(w)
      if len(words) == vocabulary_size:
        break
  table = wordfreq.get_frequency_dict("en")
  freqs = np.array([_word_frequency(w, table, wordfreq) for w in words])
  return tuple(words), freqs


def _word_frequency(word: str, table: Mapping[str, float], wordfreq) -> float:
  """``wordfreq.word_frequency(word, "en")``, the same float, without its
  tokenizer for a word of letters a-z alone (which is one token); a word
  holding an apostrophe is left to wordfreq."""
  if "'" in word or word not in table:
    return wordfreq.word_frequency(word, "en")
  # wordfreq's arithmetic for one token: 1 / (1 / f), rounded to 3
  # significant digits.
  freq = 1.0 / (0.0 + 1.0 / table[word])
  return round(freq, math.floor(-math.log(freq, 10)) + 3)


def word_probabilities(frequencies: np.ndarray, distribution: str,
                       exponent: float = 1.0) -> np.ndarray:
  """Normalised draw probabilities for a ranked word list."""
  if distribution == "wordfreq":
    weights = np.asarray(frequencies, dtype=np.float64)
  elif distribution == "zipf":
    if exponent <= 0:
      raise ValueError(f"the Zipf exponent must be > 0, got {exponent}")
    weights = 1.0 / np.arange(1, len(frequencies) + 1) ** exponent
  else:
    raise ValueError(f"distribution must be 'wordfreq' or 'zipf', got "
                     f"{distribution!r}")
  return weights / weights.sum()


def english_population(num_users: int = DEFAULT_NUM_USERS, *, seed: int = 0,
                       distribution: str = "wordfreq", exponent: float = 1.0,
                       vocabulary_size: int = DEFAULT_VOCABULARY_SIZE,
                       max_length: int = population_lib.DEFAULT_MAX_LENGTH
                       ) -> population_lib.Population:
  """One word per user, drawn from the English list (see module docstring).

  Raises:
    memory.InsufficientMemoryError: if the draw would not fit in memory,
      naming ``num_users`` and how many fit.
  """
  check_num_users(num_users, ENGLISH_BYTES_PER_USER)
  validation.check_int("max_length", max_length)
  words, freqs = english_words(vocabulary_size)
  probs = word_probabilities(freqs, distribution, exponent)
  rng = np.random.default_rng(seed)
  user_word = rng.choice(len(words), size=num_users, p=probs)
  return population_lib.Population.from_word_indices(
      np.asarray(words, dtype=object), user_word, max_length=max_length,
      alphabet=list_alphabet(words))


def list_alphabet(words) -> str:
  """The characters of a public word list (the English list's here): an
  alphabet fixed before any user's words, unlike one read off the words
  drawn (``Population.alphabet_from_data``)."""
  return "".join(sorted(set("".join(words))))


def check_num_users(num_users: int, bytes_per_user: int) -> int:
  """``num_users`` checked: an integer >= 1 whose per-user arrays, of
  ``bytes_per_user`` bytes each, fit in memory.

  Raises:
    TypeError, ValueError: naming ``num_users``.
    memory.InsufficientMemoryError: with the estimate and how many fit.
  """
  num_users = validation.check_int("num_users", num_users)

  def hint(available: int) -> str:
    fit = memory.most_that_fit(bytes_per_user, available)
    return (f"use num_users <= {fit:,}, or give the population as word counts "
            "(Population.from_word_frequencies), which holds no per-user "
            "array (up to 2^62 users)")

  memory.check_fits(f"num_users={num_users:,} users drawn one by one "
                    f"({bytes_per_user} bytes each)",
                    num_users * bytes_per_user, hint)
  return num_users


# ---- scale tests ------------------------------------------------------------


def draw_user_words(weights: np.ndarray, num_users: int,
                    seed: int) -> np.ndarray:
  """``int32 [num_users]``: users holding word i with probability ~ weights[i].

  The counts of the words are one multinomial draw; the users are then
  shuffled, so the result is distributed as ``num_users`` independent draws.
  Weights whose sum is past the largest float are divided by the largest
  first (the probabilities are the same).
  """
  check_num_users(num_users, DRAW_BYTES_PER_USER)
  weights = np.asarray(weights, dtype=np.float64)
  if weights.ndim != 1 or not weights.size:
    raise ValueError("need a non-empty 1-D array of word weights")
  if not np.all(np.isfinite(weights)) or weights.min() < 0 or (
      weights.max() <= 0):
    raise ValueError("word weights must be finite, >= 0 and not all 0")
  with np.errstate(over="ignore"):
    total = weights.sum()
  if not np.isfinite(total):
    weights = weights / weights.max()
    total = weights.sum()
  rng = np.random.default_rng(seed)
  counts = rng.multinomial(num_users, weights / total)
  user_word = np.repeat(np.arange(weights.size, dtype=np.int32), counts)
  rng.shuffle(user_word)
  return user_word


@dataclasses.dataclass
class FrequencyTable:
  """Words and weights read from a table file (see read_frequency_table)."""

  words: np.ndarray
  weights: np.ndarray
  skipped_lines: int


def read_frequency_table(path: str) -> FrequencyTable:
  """Reads ``word<separator>weight`` lines (tab, comma or spaces).

  A regular UTF-8 file, optionally ``.gz``, ``.bz2`` or ``.zip``, each line
  at most ``input_files.MAX_LINE_BYTES`` long. Blank lines and lines
  starting with ``#`` are ignored, and so is a header: a first line of two
  fields neither of which looks like a number (``word<TAB>count``). Lines
  without a positive finite weight (``nan``, ``inf``, ``0``, ``-3``, a word
  such as ``many``, no weight at all), or whose word holds the end symbol
  ``$``, are skipped, counted and said in one warning naming the first of
  them. Repeated words add up.

  Raises:
    ValueError: naming the file and the line, for a line of more than two
      fields, a line starting with a separator (an empty word), or a weight
      that looks like a number but is not one in decimal (``0x10``, ``1e``).
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top
  table = _frequency_lines(path)
  if len(table) and _is_header(table["word"].iloc[0],
                               table["weight"].iloc[0]):
    table = table.iloc[1:]
  weight = pd.to_numeric(table["weight"], errors="coerce")
  _check_weights(path, table, weight)
  good = (np.isfinite(weight) & (weight > 0)
          & ~table["word"].str.contains("$", regex=False))
  skipped = int((~good).sum())
  if not good.any():
    raise ValueError(f"frequency table {path} holds no usable line "
                     f"({skipped} skipped)")
  with np.errstate(over="ignore"):
    totals = weight[good].groupby(table["word"][good], sort=False).sum()
  weights = totals.to_numpy(dtype=np.float64)
  if not np.isfinite(weights).all():
    word = totals.index[~np.isfinite(weights)][0]
    raise ValueError(f"frequency table {path}: the weights of {word!r} add "
                     "up past the largest float; scale the weights down")
  if skipped:
    first = table[~good].iloc[0]
    warnings.warn(f"frequency table {path}: {skipped:,} line(s) skipped "
                  "(no positive finite weight, or a word holding the end "
                  f"symbol $), the first line {first['line']} (word "
                  f"{first['word']!r}, weight {first['weight']!r})",
                  stacklevel=2)
  return FrequencyTable(np.array(totals.index, dtype=object), weights,
                        skipped)


_SEPARATORS = re.compile(r"[\t,\s]+")
# A field that starts like a number (sign, digit, point) or spells one.
_NUMBER_LIKE = re.compile(r"[+-]?(\d|\.\d|inf|nan)", re.IGNORECASE)


def _is_header(word: str, weight: str) -> bool:
  """Whether a first line is a header: two fields, neither number-like."""
  return bool(weight) and not (_NUMBER_LIKE.match(word)
                               or _NUMBER_LIKE.match(weight))


def _check_weights(path: str, table: pd.DataFrame, weight: pd.Series
                   ) -> None:
  """Refuses a weight that starts like a number but does not parse."""
  unparsed = weight.isna() & ~table["weight"].str.lower().isin(
      ("nan", "+nan", "-nan"))
  bad = table["weight"][unparsed].str.match(_NUMBER_LIKE)
  if bad.any():
    row = table[unparsed][bad.to_numpy()].iloc[0]
    raise ValueError(f"frequency table {path} line {row['line']}: weight "
                     f"{row['weight']!r} is not a number (write weights in "
                     "decimal, e.g. 16, 2.5 or 1e6)")


def _frequency_lines(path: str) -> pd.DataFrame:
  """A table's lines, but blank and comment ones, as (first field, last
  field, line number); the last field is ``""`` on a line of one field.

  Raises:
    ValueError: for a line of more than two fields or one starting with a
      separator, naming the file and the line.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top
  words, weights, numbers = [], [], []
  try:
    for number, line in input_files.text_lines(path, "frequency table"):
      line = line.rstrip()
      if not line or line.startswith("#"):
        continue
      fields = _SEPARATORS.split(line)
      if len(fields) > 2 or not fields[0]:
        problem = (f"has {len(fields)} fields: a line is word<separator>"
                   "weight" if fields[0] else
                   "starts with a separator: its word is empty")
        raise ValueError(f"frequency table {path} line {number} {problem} "
                         f"(a word holds no tab, comma or space): "
                         f"{line[:60]!r}")
      words.append(fields[0])
      weights.append(fields[1] if len(fields) > 1 else "")
      numbers.append(number)
  except (OSError, EOFError, zipfile.BadZipFile) as err:
    if isinstance(err, FileNotFoundError):
      raise
    raise ValueError(f"cannot read frequency table {path}: {err}") from err
  return pd.DataFrame({"word": words, "weight": weights, "line": numbers}
                      ).astype({"word": object, "weight": object})


def population_from_weights(words, weights: np.ndarray, num_users: int, *,
                            seed: int = 0,
                            max_length: int = population_lib.DEFAULT_MAX_LENGTH,
                            alphabet=None) -> population_lib.Population:
  """``num_users`` users, each holding word i with probability ~ weights[i].

  Memory is 4 bytes per user beyond the vocabulary: the vocabulary is
  encoded once and the drawn indices are mapped into it. ``alphabet`` (None:
  the words' characters) must hold every character of the words.
  """
  check_num_users(num_users, WEIGHTS_BYTES_PER_USER)
  words = np.asarray(words, dtype=object)
  if words.shape != np.shape(weights):
    raise ValueError("words and weights differ in length")
  drawn = draw_user_words(weights, num_users, seed)
  used = np.flatnonzero(np.bincount(drawn, minlength=words.size))
  # Encode the used words once (one user each), then point every user at
  # its word's encoded index.
  base = population_lib.Population.from_word_indices(
      words[used], np.arange(used.size), max_length=max_length,
      alphabet=alphabet)
  position = np.full(words.size, -1, dtype=np.int32)
  position[used] = base.user_word
  return dataclasses.replace(base, user_word=position[drawn])


def scale_population(num_users: int, *, table_path: str | None = None,
                     zipf_exponent: float | None = None, seed: int = 0,
                     vocabulary_size: int = DEFAULT_VOCABULARY_SIZE,
                     max_length: int = population_lib.DEFAULT_MAX_LENGTH
                     ) -> population_lib.Population:
  """A one-word population for scale tests.

  Args:
    num_users: n (1e6 .. 1e8 and beyond; memory ~4 bytes per user).
    table_path: a frequency table file (``read_frequency_table``); None for
      the English ``wordfreq`` list of ``vocabulary_size`` words.
    zipf_exponent: None to draw by the table's (or wordfreq's) weights, or
      s > 0 to draw the word of rank r with probability ~ 1 / r**s (ranks by
      decreasing weight, ties by word).
    seed: seed of the draw.
    vocabulary_size: size of the English list when no table is given.
    max_length: L.
  """
  check_num_users(num_users, WEIGHTS_BYTES_PER_USER)  # before any reading
  validation.check_int("max_length", max_length)
  if table_path:
    table = read_frequency_table(table_path)
    words, weights = table.words, table.weights
  else:
    words, weights = english_words(vocabulary_size)
    words = np.asarray(words, dtype=object)
  if zipf_exponent is not None:
    order = np.lexsort((words.astype(str), -np.asarray(weights)))
    words = words[order]
    weights = word_probabilities(weights, "zipf", zipf_exponent)
  return population_from_weights(words, weights, num_users, seed=seed,
                                 max_length=max_length)
