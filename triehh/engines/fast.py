"""The fast engine: an exact, vectorised numpy simulation of TrieHH.

It runs Algorithms 1-2 (one word per user) and Algorithm 3 (several words
per user) of the paper with whole-array operations: one round costs a few
array gathers and one ``bincount`` over the sampled users, independent of the
population size once the population is encoded.

How a round works. The population precomputes, for every word and level,
the id of the word's length-``l`` prefix (:attr:`Population.prefix_ids`). The
engine keeps ``frontier_pos``: for each distinct length-``(l-1)`` prefix, its
index in the trie's frontier (the frontier size if it is not on it). A
sampled user votes iff its word's length-``(l-1)`` prefix is on the frontier
and the word's sequence has an ``l``-th symbol; one ``bincount`` over
(parent, symbol) cells counts all votes, and the cells of real parents and
symbols are exactly the vote layout of :mod:`triehh.trie`.
Sub-rounds split the round's sample (drawn without replacement for the
whole round) into batches whose vote vectors are summed before
thresholding, which gives the same votes as one batch.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

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
  stride = a1 + 1  # vote columns: every symbol, then "no symbol here"
  tables = _level_tables(pop)
  trie = trie_lib.Trie(pop.alphabet)
  frontier_ids = np.zeros(1, dtype=np.intp)  # the root
  frontier_pos = np.array([0, 1], dtype=np.intp)
  for depth in range(1, pop.num_levels + 1):
    num_frontier = frontier_ids.size
    if num_frontier == 0:
      break  # every discovered prefix is terminated: nothing can grow
    users = sampling.round_users(rng, pop.num_users, batch_size, schedule,
                                 depth)
    if users is None:
      break
    words = sampling.words_of(pop, users,
                              sampling.draw_word_ranks(rng, pop, users))
    words = words.astype(np.intp, copy=False)
    # Row = the word's frontier parent (num_frontier if none), column = its
    # depth-th symbol (a1 if it has none): one bincount counts every vote.
    cell = (frontier_pos[tables.ids[depth - 1][words]] * stride
            + tables.symbols[depth - 1][words])
    size = (num_frontier + 1) * stride
    if num_sub_rounds == 1:
      counts = np.bincount(cell, minlength=size)
    else:
      counts = np.zeros(size, dtype=np.int64)
      for batch in sampling.sub_round_slices(users.size, num_sub_rounds):
        counts += np.bincount(cell[batch], minlength=size)
    votes = counts.reshape(num_frontier + 1, stride)[:num_frontier, :a1].ravel()
    level, frontier_index = trie.grow(votes, theta, max_num_prefixes,
                                      num_sampled=users.size)
    if not level.grew:
      break
    parents, symbols = np.divmod(frontier_index, a1)
    frontier_ids = np.searchsorted(tables.child_keys[depth],
                                   frontier_ids[parents] * a1 + symbols)
    frontier_pos = np.full(pop.num_prefixes[depth] + 1, frontier_ids.size,
                           dtype=np.intp)
    frontier_pos[frontier_ids] = np.arange(frontier_ids.size)
  return trie


def prepare(population: population_lib.Population) -> None:
  """Builds the population's lookup tables now (they are cached)."""
  _level_tables(population)


class _Tables(NamedTuple):
  """Per-level lookup tables of a population, all ``intp``.

  ids[l]: word -> id of its length-l prefix, or P_l if it has none.
  symbols[l]: word -> code of its (l+1)-th symbol, or A + 1 if it has none.
  child_keys[l]: length-l prefix id -> parent id * (A + 1) + last symbol,
    increasing (ids are lexicographic), so a child is found by searchsorted.
  """

  ids: tuple[np.ndarray, ...]
  symbols: tuple[np.ndarray, ...]
  child_keys: tuple[np.ndarray, ...]


@functools.lru_cache(maxsize=8)
def _level_tables(pop: population_lib.Population) -> _Tables:
  a1 = pop.alphabet.num_extensions
  ids = tuple(np.where(level_ids >= 0, level_ids, count).astype(np.intp)
              for level_ids, count in zip(pop.prefix_ids, pop.num_prefixes))
  symbols = tuple(
      np.where(pop.codes[:, level] >= 0, pop.codes[:, level], a1).astype(np.intp)
      for level in range(pop.codes.shape[1]))
  child_keys = [np.zeros(1, dtype=np.intp)]
  for level in range(1, len(ids)):
    has = pop.prefix_ids[level] >= 0
    keys = np.empty(pop.num_prefixes[level], dtype=np.intp)
    keys[ids[level][has]] = (ids[level - 1][has] * a1
                             + pop.codes[has, level - 1])
    child_keys.append(keys)
  return _Tables(ids, symbols, tuple(child_keys))
