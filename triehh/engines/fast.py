"""The fast engine: an exact, vectorised numpy simulation of TrieHH.

It runs Algorithms 1-2 (one word per user) and Algorithm 3 (several words
per user) of the paper with whole-array operations.

One-word populations (no fixed schedule). A round's votes are the sampled
users per (frontier prefix, next symbol) cell, drawn at once as a
multivariate hypergeometric vector
(:func:`triehh.engines.sampling.draw_round_counts`,
:mod:`triehh.engines.vote_counts`): the same distribution as sampling the
users and counting their votes, at a cost in the frontier's size only, not
in n or the batch size. The rounds read per-level tables built once per
population (:func:`triehh.engines.vote_counts.count_tables`: each prefix's
children, users and codes), so that a round costs little more than its
draws (:class:`triehh.engines.rounds.CountVotes`). Populations given by
word frequencies (:meth:`Population.from_word_frequencies
<triehh.core.population.Population.from_word_frequencies>`) run the same way.

Several-word populations, and fixed schedules: the sampled users' votes are
counted with array gathers and one ``bincount``, independent of the
population size once the population is encoded. The population precomputes, for every word and level,
the id of the word's length-``l`` prefix (:attr:`Population.prefix_ids`). The
engine keeps ``frontier_pos``: for each distinct length-``(l-1)`` prefix, its
index in the trie's frontier (the frontier size if it is not on it). A
sampled user votes iff its word's length-``(l-1)`` prefix is on the frontier
and the word's sequence has an ``l``-th symbol; one ``bincount`` over
(parent, symbol) cells counts all votes, and the cells of real parents and
symbols are exactly the vote layout of :mod:`triehh.core.trie`.
Sub-rounds split the round's sample (drawn without replacement for the
whole round) into batches whose vote vectors are summed before
thresholding, which gives the same votes as one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.engines import cache
from triehh.engines import counting
from triehh.engines import rounds
from triehh.engines import sampling
from triehh.engines import vote_counts


def run(population: population_lib.Population, *, theta: int,
        batch_size: int, rng: np.random.Generator,
        num_sub_rounds: int = 1,
        max_num_prefixes: int | None = None,
        schedule: Sequence[np.ndarray] | None = None,
        sampling_rate: float | None = None) -> trie_lib.Trie:
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
    sampling_rate: q for Poisson sampling (each user takes part in a round
      independently with probability q; ``batch_size`` is then unused).

  Returns:
    The grown :class:`~triehh.core.trie.Trie` (see :mod:`triehh.engines.rounds`
    for the stopping rule).
  """
  if sampling.draws_cell_counts(population, schedule):
    counter = rounds.CountVotes()
  else:
    counter = _BincountVotes(population)
  return rounds.run(population, counter, theta=theta,
                    batch_size=batch_size, rng=rng,
                    num_sub_rounds=num_sub_rounds,
                    max_num_prefixes=max_num_prefixes, schedule=schedule,
                    sampling_rate=sampling_rate)


def prepare(population: population_lib.Population) -> None:
  """Builds the population's lookup tables now (they are cached).

  One-word populations get the tables of count-level rounds; those of
  user-level rounds (a fixed schedule) are then built on first use.
  """
  if population.is_single_word:
    vote_counts.count_tables(population)
  else:
    _level_tables(population)


def count(population: population_lib.Population, words: Sequence[str],
          sample_rate: float, noise_std: float,
          rng: np.random.Generator) -> np.ndarray:
  """The counting phase: :func:`triehh.engines.counting.noisy_sums`
  (count-level sampling, exact)."""
  return counting.noisy_sums(population, words, sample_rate, noise_std, rng)


class _BincountVotes:
  """Counts a round's votes with one ``bincount`` per sub-round.

  ``frontier_ids`` holds the prefix id of each frontier prefix (the root at
  first). ``word_cell`` maps each word to its vote cell of the next round:
  row = the word's frontier parent (the frontier size if none), column =
  its next symbol (A + 1 if none), so a round needs one gather per sampled
  user; it is rebuilt (over the vocabulary) when the frontier changes.
  """

  def __init__(self, population: population_lib.Population):
    self._pop = population
    self._tables = _level_tables(population)
    self._frontier_ids = np.zeros(1, dtype=np.intp)  # the root
    self._word_cell = self._tables.symbols[0]  # every word's parent: row 0

  def count(self, trie: trie_lib.Trie, users: np.ndarray,
            ranks: np.ndarray | None, batches: Sequence[slice]) -> np.ndarray:
    a1 = self._pop.alphabet.num_extensions
    stride = a1 + 1  # vote columns: every symbol, then "no symbol here"
    num_frontier = self._frontier_ids.size
    cell = self._word_cell[sampling.words_of(self._pop, users, ranks)]
    size = (num_frontier + 1) * stride
    counts = np.bincount(cell[batches[0]], minlength=size)
    for batch in batches[1:]:
      counts += np.bincount(cell[batch], minlength=size)
    return counts.reshape(num_frontier + 1, stride)[:num_frontier, :a1].ravel()

  def grown(self, trie: trie_lib.Trie, level: trie_lib.TrieLevel,
            kept: np.ndarray) -> None:
    del trie  # unused
    if not level.grew or level.depth >= len(self._tables.symbols):
      return  # the run ends
    a1 = self._pop.alphabet.num_extensions
    parents, symbols = np.divmod(kept, a1)
    ids = np.searchsorted(self._tables.child_keys[level.depth],
                          self._frontier_ids[parents] * a1 + symbols)
    self._frontier_ids = ids
    frontier_pos = np.full(self._pop.num_prefixes[level.depth] + 1,
                           ids.size, dtype=np.intp)
    frontier_pos[ids] = np.arange(ids.size)
    self._word_cell = (frontier_pos[self._tables.ids[level.depth]] * (a1 + 1)
                       + self._tables.symbols[level.depth])


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


@cache.per_population
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
