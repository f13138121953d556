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
"""

from __future__ import annotations

import functools
import re

import numpy as np

from triehh import population as population_lib

DEFAULT_NUM_USERS = 1_000_000
DEFAULT_VOCABULARY_SIZE = 50_000
_WORD = re.compile(r"^[a-z']+$")


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
  freqs = np.array([wordfreq.word_frequency(w, "en") for w in words])
  return tuple(words), freqs


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
  """One word per user, drawn from the English list (see module docstring)."""
  if num_users < 1:
    raise ValueError(f"num_users must be >= 1, got {num_users}")
  words, freqs = english_words(vocabulary_size)
  probs = word_probabilities(freqs, distribution, exponent)
  rng = np.random.default_rng(seed)
  user_word = rng.choice(len(words), size=num_users, p=probs)
  return population_lib.Population.from_word_indices(
      np.asarray(words, dtype=object), user_word, max_length=max_length)
