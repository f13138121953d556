"""The counting phase in numpy: noisy sums of one-hot votes over published
words.

The mechanism (its privacy: :mod:`triehh.theory.counting`). The slots are
the K published words ``words[0..K-1]``, in the order given, and "other"
(slot K). Each user's item is the slot of its word (K when the word is not
published; -1 for a user holding the empty word, such as a deny-listed
user, who adds nothing); a user with several words first draws one with
probability proportional to its local counts (:func:`user_items`). Every
user joins the sample independently with probability q; the K + 1 sums of
the sampled users' one-hot vectors each get independent discrete Gaussian
noise ``N_Z(0, sigma^2)`` (``P[X = x]`` proportional to ``exp(-x^2 / (2
sigma^2))``), drawn exactly (:mod:`triehh.core.discrete_noise`): the sums
are integers (:func:`noisy_counts`).

Count-level sampling. Users join independently, so the sampled users of a
slot with ``c_k`` users are ``Binomial(c_k, q)``, independent over slots:
:func:`noisy_counts` draws those K + 1 binomials instead of n coins, which
is the same law (tested against per-user sampling). One-word populations
get their users per slot without any per-user work (:func:`item_counts`).

:func:`noisy_sums` is the whole phase on a population: the fast engine's
counting, and that of any engine registered without its own
(:mod:`triehh.engines.registry`). An engine's own counting releases sums of
this same law (the TFF engine's: :mod:`triehh.engines.tff.counting`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from triehh.core import discrete_noise
from triehh.core import population as population_lib
from triehh.core import validation
from triehh.engines import sampling


def word_slots(population: population_lib.Population,
               words: Sequence[str]) -> np.ndarray:
  """``int64 [V]``: the slot of each vocabulary word: its index in
  ``words``, ``len(words)`` ("other") when absent, -1 for the empty word."""
  index = {str(w): k for k, w in enumerate(words)}
  other = len(index)
  slots = np.fromiter((index.get(str(w), other) for w in population.vocabulary),
                      dtype=np.int64, count=population.num_words)
  slots[population.word_lengths == 0] = -1
  return slots


def user_items(population: population_lib.Population, words: Sequence[str],
               rng: np.random.Generator) -> np.ndarray:
  """``int64 [n]``: each user's slot in ``[0, K]``, or -1 for a user with
  no word.

  A user with several words draws one by local frequency: one call
  ``rng.integers(0, population.user_totals)`` over all users (one-word
  populations draw nothing). Needs individual users.
  """
  population.check_user_array("counting per user")
  slots = word_slots(population, words)
  if population.is_single_word:
    return slots[population.user_word]
  users = np.arange(population.num_users)
  chosen = sampling.words_of(population, users,
                             rng.integers(0, population.user_totals))
  return slots[chosen]


def item_counts(population: population_lib.Population, words: Sequence[str],
                rng: np.random.Generator) -> np.ndarray:
  """``int64 [K + 1]``: users per slot (users with no word left out).

  One-word populations, by users or by word frequencies: from the users
  per word, with no per-user work and no draw. Several words: each user's
  word drawn as :func:`user_items` does, then counted.
  """
  num_slots = len(words) + 1
  if population.is_single_word:
    slots = word_slots(population, words)
    valid = slots >= 0
    counts = np.zeros(num_slots, dtype=np.int64)  # exact up to 2^63
    np.add.at(counts, slots[valid], population.users_per_word[valid])
    return counts
  return counts_of_items(user_items(population, words, rng), num_slots)


def counts_of_items(items: np.ndarray, num_slots: int) -> np.ndarray:
  """``int64 [num_slots]``: users per slot of per-user ``items`` (-1 is
  left out)."""
  items = np.asarray(items)
  return np.bincount(items[items >= 0], minlength=num_slots).astype(np.int64)


def check_noise_std(noise_std: float) -> float:
  """``noise_std`` as a float, finite and >= 0, else a ValueError naming
  it."""
  if not (isinstance(noise_std, (int, float, np.integer, np.floating))
          and math.isfinite(noise_std) and noise_std >= 0):
    raise ValueError(f"noise_std must be a finite number >= 0, got "
                     f"{noise_std!r}")
  return float(noise_std)


def noisy_counts(item_counts: np.ndarray, sample_rate: float,
                 noise_std: float, rng: np.random.Generator) -> np.ndarray:
  """``float64 [K + 1]``: the noisy sums of a Poisson sample (integers).

  Args:
    item_counts: ``int64 [K + 1]`` users per slot (non-negative).
    sample_rate: q in (0, 1], the probability that a user is sampled.
    noise_std: sigma >= 0 of the discrete Gaussian noise added to every
      sum (0: none).
    rng: draws, in this order, one call ``rng.binomial(item_counts, q)``
      (the sampled users per slot) and ``K + 1`` exact discrete Gaussian
      draws (``discrete_noise.discrete_gaussian(rng, sigma, K + 1)``).
  """
  counts = np.asarray(item_counts)
  if counts.ndim != 1 or counts.size == 0:
    raise ValueError(f"item_counts must be a non-empty 1-D array (users per "
                     f"slot), got shape {counts.shape}")
  if not np.issubdtype(counts.dtype, np.integer):
    raise TypeError(f"item_counts must hold integers, got {counts.dtype}")
  if counts.min() < 0:
    raise ValueError(f"item_counts must be non-negative, got "
                     f"{int(counts.min())}")
  rate = validation.check_rate("sample_rate", sample_rate)
  std = check_noise_std(noise_std)
  sampled = rng.binomial(counts.astype(np.int64), rate)
  if std > 0:
    sampled = sampled + discrete_noise.discrete_gaussian(rng, std, counts.size)
  return sampled.astype(np.float64)


def noisy_sums(population: population_lib.Population, words: Sequence[str],
               sample_rate: float, noise_std: float,
               rng: np.random.Generator) -> np.ndarray:
  """``float64 [K + 1]``: the counting phase's noisy sums on ``population``
  (:func:`item_counts`, then :func:`noisy_counts`, both from ``rng``)."""
  return noisy_counts(item_counts(population, words, rng), sample_rate,
                      noise_std, rng)
