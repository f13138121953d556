"""Populations and checks shared by the tff engine tests."""

import numpy as np

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib

VOCABULARY = ["the", "then", "there", "they", "sun", "sunny", "star", "stars",
              "moon", "mood", "moo", "at", "a", "tea", "team", "seam"]


def one_word_population(n=400, seed=0):
  rng = np.random.default_rng(seed)
  p = 1.0 / np.arange(1, len(VOCABULARY) + 1)
  words = rng.choice(VOCABULARY, size=n, p=p / p.sum())
  return population_lib.Population.from_user_words(list(words), max_length=5)


def several_words_population(n=200, seed=1):
  rng = np.random.default_rng(seed)
  p = 1.0 / np.arange(1, len(VOCABULARY) + 1)
  users = []
  for _ in range(n):
    held = rng.choice(VOCABULARY, size=rng.integers(1, 5), replace=False,
                      p=p / p.sum())
    users.append({w: int(rng.integers(1, 6)) for w in held})
  return population_lib.Population.from_user_words(users, max_length=5)


POPULATIONS = {"one": one_word_population(), "several":
               several_words_population()}


def assert_same_trie(got: trie_lib.Trie, want: trie_lib.Trie):
  assert got.depth == want.depth
  for a, b in zip(got.levels, want.levels):
    for field in ("prefixes", "prefix_votes", "parents", "terminated",
                  "terminated_votes", "terminated_parents"):
      np.testing.assert_array_equal(getattr(a, field), getattr(b, field),
                                    err_msg=f"depth {b.depth}: {field}")
    assert (a.num_candidates, a.num_sampled, a.num_votes, a.num_capped) == (
        b.num_candidates, b.num_sampled, b.num_votes, b.num_capped)
  assert got.heavy_hitters() == want.heavy_hitters()
  assert got.to_dict() == want.to_dict()
