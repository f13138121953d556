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

import functools
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
  ids, symbols = _level_tables(pop)
  trie = trie_lib.Trie(pop.alphabet)
  # frontier_pos[l][p]: frontier index of length-l prefix id p, or -1; the
  # extra last slot is the sentinel id of words shorter than l.
  frontier_pos = np.array([0, -1], dtype=np.intp)  # the root is entry 0
  for depth in range(1, pop.num_levels + 1):
    if trie.frontier.shape[0] == 0:
      break  # every discovered prefix is terminated: nothing can grow
    if schedule is not None:
      if depth > len(schedule):
        break
      users = np.asarray(schedule[depth - 1], dtype=np.intp)
    else:
      users = sampling.sample_users(rng, pop.num_users, batch_size)
    words = sampling.words_of(pop, users,
                              sampling.draw_word_ranks(rng, pop, users))
    words = words.astype(np.intp, copy=False)
    parent_pos = frontier_pos[ids[depth - 1][words]]
    symbol = symbols[depth - 1][words]
    voting = (parent_pos >= 0) & (symbol >= 0)
    vote_index = parent_pos[voting] * a1 + symbol[voting]
    if num_sub_rounds == 1:
      votes = np.bincount(vote_index, minlength=trie.num_candidates)
    else:
      position = np.cumsum(voting) - 1  # rank of each voter among voters
      votes = np.zeros(trie.num_candidates, dtype=np.int64)
      for batch in sampling.sub_round_slices(users.size, num_sub_rounds):
        first = position[batch.start - 1] + 1 if batch.start else 0
        votes += np.bincount(vote_index[first:position[batch.stop - 1] + 1],
                             minlength=votes.size)
    level, frontier_index = trie.grow(votes, theta, max_num_prefixes,
                                      num_sampled=users.size)
    if not level.grew:
      break
    rank = np.full(votes.size, -1, dtype=np.intp)
    rank[frontier_index] = np.arange(frontier_index.size)
    voter_rank = rank[vote_index]
    on_frontier = voter_rank >= 0
    frontier_pos = np.full(pop.num_prefixes[depth] + 1, -1, dtype=np.intp)
    frontier_pos[ids[depth][words[voting][on_frontier]]] = voter_rank[on_frontier]
  return trie


@functools.lru_cache(maxsize=8)
def _level_tables(pop: population_lib.Population
                  ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
  """Per level, prefix ids with sentinel ``P_l`` for "none", and symbol codes.

  Both as contiguous ``intp`` arrays indexed by word, so a round's gathers
  need no index conversion.
  """
  ids = tuple(np.where(level_ids >= 0, level_ids, count).astype(np.intp)
              for level_ids, count in zip(pop.prefix_ids, pop.num_prefixes))
  symbols = tuple(np.ascontiguousarray(pop.codes[:, level], dtype=np.intp)
                  for level in range(pop.codes.shape[1]))
  return ids, symbols
