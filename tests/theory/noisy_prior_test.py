"""Tests of triehh.theory.noisy_prior: the public prior the planned noisy
trie's choices are made on, and its simulated run against the engine's."""

import collections

import numpy as np
import pytest

from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.theory import noisy_plan
from triehh.theory import noisy_prior

LETTERS = "abcdefghijklmnopqrstuvwxyz'"


def test_the_strings_follow_the_stated_laws():
  rng = np.random.default_rng(3)
  symbols, lengths = noisy_prior._strings(rng, 40, 10, 50_000)
  # Lengths 1 + Poisson(5): mean 6, variance 5 (L = 40 cuts nothing).
  assert lengths.min() >= 1
  assert lengths.mean() == pytest.approx(6.0, abs=0.05)
  assert lengths.var() == pytest.approx(5.0, rel=0.05)
  # Symbols: P(j) = (1 / (j + 1)) / H_10, the end symbol after each string.
  rows = np.arange(lengths.size)
  assert (symbols[rows, lengths] == 10).all()
  letters = symbols[:, 0]
  law = 1.0 / np.arange(1, 11)
  observed = np.bincount(letters, minlength=10) / letters.size
  assert observed == pytest.approx(law / law.sum(), abs=0.01)
  # Lengths above L are drawn again.
  _, short = noisy_prior._strings(rng, 4, 10, 10_000)
  assert short.max() <= 4


def test_the_population_is_seeded_and_its_prefix_ids_nest():
  prior = noisy_prior.population(20_000, 8, 27)
  again = noisy_prior.population.__wrapped__(20_000, 8, 27)
  assert all((a == b).all() for a, b in zip(prior.ids, again.ids))
  assert prior.counts.sum() == 20_000 and (prior.counts > 0).all()
  assert prior.lengths.max() <= 8
  # Strings are distinct, and sharing d symbols means sharing d - 1.
  assert np.unique(prior.ids[-1]).size == prior.counts.size
  for d in range(1, 10):
    pairs = np.unique(np.stack([prior.ids[d], prior.ids[d - 1]]), axis=1)
    assert np.unique(pairs[0]).size == pairs.shape[1]
  # A Zipf law: the most common string holds about 1/H_V of the users
  # (strings drawn twice merged, so at least that).
  harmonic = np.sum(1.0 / np.arange(1, noisy_prior.PRIOR_VOCABULARY + 1))
  assert prior.counts.max() / 20_000 >= 0.8 / harmonic


def _engine_population(n: int, max_length: int) -> population_lib.Population:
  """The prior's population as the engine runs it (the same draws)."""
  rng = np.random.default_rng(noisy_prior.PRIOR_SEED)
  symbols, lengths = noisy_prior._strings(rng, max_length, 27,
                                          noisy_prior.PRIOR_VOCABULARY)
  weights = 1.0 / np.arange(1, noisy_prior.PRIOR_VOCABULARY + 1)
  counts = rng.multinomial(n, weights / weights.sum())
  words = collections.Counter()
  for row, length, count in zip(symbols, lengths, counts):
    if count:
      words["".join(LETTERS[s] for s in row[:length])] += count
  return population_lib.Population.from_word_frequencies(
      np.array(list(words), dtype=object), np.array(list(words.values())),
      alphabet=LETTERS, max_length=max_length)


def test_the_simulated_run_tracks_the_engine_on_the_prior():
  n = 30_000
  plan = noisy_plan.plan(n, 8, 27, 4.0, 1.0 / n**2, rule="fixed")
  prior = noisy_prior.population(n, 8, 27)
  simulated = np.mean([noisy_prior.true_words(plan, prior, s)
                       for s in range(1, 5)])
  pop = _engine_population(n, 8)
  assert pop.num_users == n
  runs = [noisy.run_planned(pop, plan, s) for s in range(4)]
  engine = np.mean([len(r.words) - r.num_false_words for r in runs])
  assert engine > 50
  assert simulated == pytest.approx(engine, rel=0.1)
  # Seeded: the same seed, the same count.
  assert noisy_prior.true_words(plan, prior, 1) == noisy_prior.true_words(
      plan, prior, 1)
