"""The fast engine: an exact, vectorised numpy simulation of TrieHH.

It runs Algorithms 1-2 (one word per user) and Algorithm 3 (several words
per user) of the paper with whole-array operations: one round costs a few
array gathers and one ``bincount`` over the sampled users, independent of the
population size once the population is encoded.

How a round works. The population precomputes, for every word and level,
the id of the word's length-``l`` prefix (:attr:`Population.prefix_ids`). The
engine keeps ``frontier_pos``: for each distinct length-``l`` prefix, its
index in the trie's frontier, or -1. A sampled user votes iff its word's
length-``(l-1)`` prefix is on the frontier and the word's sequence has an
``l``-th symbol; the vote index follows the layout of :mod:`triehh.trie`.
Sub-rounds split the round's sample (drawn without replacement for the
whole round) into batches whose vote vectors are summed before
thresholding, which gives the same votes as one batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from triehh import population as population_lib
from triehh import sampling
from triehh import trie as trie_lib


def run(population: population_lib.Population, *, theta: int,
        batch_size: int, rng: np.random.Generator,
        num_sub_rounds: int = 1,
        max_num_prefixes: int | None = None,
        schedule: Sequence[np.ndarray] | None = None) -> trie_lib.Trie:
  """Runs TrieHH until the trie stops growing or reaches L + 1 levels.

  Args:
    population: the encoded users.
    theta: the vote threshold.
    batch_size: m, users sampled per round.
    rng: the random generator (sampling, then word choice, each round).
    num_sub_rounds: R, batches per round whose votes are summed before
      thresholding (the round's sample is split, see the module docstring).
    max_num_prefixes: optional cap on extensions kept per round.
    schedule: optional fixed user indices per round, replacing the uniform
      sample (for worked examples and tests); rounds beyond the schedule
      end the run.

  Returns:
    The grown :class:`~triehh.trie.Trie`.
  """
  if theta < 1:
    raise ValueError(f"theta must be >= 1, got {theta}")
  pop = population
  a1 = pop.alphabet.num_extensions
  prefix_ids = pop.prefix_ids
  trie = trie_lib.Trie(pop.alphabet)
  frontier_pos = np.zeros(1, dtype=np.int64)  # the root is frontier entry 0
  for depth in range(1, pop.num_levels + 1):
    if trie.frontier.shape[0] == 0:
      break  # every discovered prefix is terminated: nothing can grow
    if schedule is not None:
      if depth > len(schedule):
        break
      users = np.asarray(schedule[depth - 1], dtype=np.int64)
    else:
      users = sampling.sample_users(rng, pop.num_users, batch_size)
    words = sampling.words_of(pop, users,
                              sampling.draw_word_ranks(rng, pop, users))
    child = prefix_ids[depth][words]
    # A word with a depth-th symbol also has a (depth-1)-prefix, so rows with
    # child >= 0 never index frontier_pos with -1.
    parent_pos = frontier_pos[prefix_ids[depth - 1][words]]
    voting = (child >= 0) & (parent_pos >= 0)
    vote_of_user = np.where(
        voting, parent_pos * a1 + pop.codes[words, depth - 1], -1)
    votes = np.zeros(trie.num_candidates, dtype=np.int64)
    for batch in sampling.sub_round_slices(users.size, num_sub_rounds):
      cast = vote_of_user[batch]
      votes += np.bincount(cast[cast >= 0], minlength=votes.size)
    vote_index = vote_of_user[voting]
    level, frontier_index = trie.grow(votes, theta, max_num_prefixes,
                                      num_sampled=users.size)
    if not level.grew:
      break
    rank = np.full(votes.size, -1, dtype=np.int64)
    rank[frontier_index] = np.arange(frontier_index.size)
    voter_rank = rank[vote_index]
    on_frontier = voter_rank >= 0
    frontier_pos = np.full(pop.num_prefixes[depth], -1, dtype=np.int64)
    frontier_pos[child[voting][on_frontier]] = voter_rank[on_frontier]
  return trie
