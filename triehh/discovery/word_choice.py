"""When a user holding several words chooses the word it votes with.

* ``"per_round"`` (the default, Algorithm 3 of the paper): every sampled user
  draws a word by its local frequency in every round
  (:func:`triehh.engines.sampling.draw_word_ranks`). Its privacy is accounted by
  per-round composition: Theorem 1's epsilon, ``L`` times its delta
  (``docs/privacy.md``).
* ``"per_run"``: every user draws one word by its local frequency once,
  before the first round (:func:`draw_once`), and the run is the single-word
  algorithm on those words. Theorem 2 of the paper covers this exactly, with
  Theorem 1's ``(epsilon, delta)``.

One-word populations are the same under both: there is nothing to choose.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from triehh.core import population as population_lib
from triehh.engines import sampling

def per_run_generator(rng: np.random.Generator) -> np.random.Generator:
  """The generator of the once-per-run draw: ``rng.spawn(1)[0]``.

  ``rng`` is the run's own generator, ``numpy.random.default_rng(seed)``.
  Spawning does not advance it, so the rounds draw as they would anyway;
  and an engine that spawns its own stream from ``rng`` later in the run
  (the TFF engine's client draw) gets the next child, a stream independent
  of the word draw.
  """
  return rng.spawn(1)[0]


def draw_once(population: population_lib.Population,
              rng: np.random.Generator) -> population_lib.Population:
  """A one-word population: each user's word drawn once by local frequency.

  User ``i`` gets word ``w`` with probability ``c_i(w) / c_i`` (one call
  ``rng.integers(0, totals)`` over all users, then the word choice of
  :func:`triehh.engines.sampling.words_of`). Users keep their indices (a fixed
  schedule selects the same users), and the result keeps the alphabet and
  the count of users dropped when ``population`` was built. The vocabulary
  is cut to the words drawn, in their order, without re-encoding it: a user
  of a deny-listed population whose every word was denied keeps its empty
  word and still abstains (:mod:`triehh.discovery.deny_list`). A one-word
  population is returned as is.
  """
  if population.is_single_word:
    return population
  users = np.arange(population.num_users)
  words = sampling.words_of(population, users,
                            rng.integers(0, population.user_totals))
  used = np.bincount(words, minlength=population.num_words) > 0
  return dataclasses.replace(
      population, vocabulary=population.vocabulary[used],
      codes=population.codes[used],
      word_lengths=population.word_lengths[used],
      user_word=((np.cumsum(used) - 1)[words]).astype(np.int32),
      user_offsets=None, entry_word=None, entry_count=None)
