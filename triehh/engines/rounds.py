"""The round loop of TrieHH, shared by every engine.

Each round grows the trie by one level: it draws who takes part from the
run's generator (:mod:`triehh.engines.sampling`), has the engine count their votes
for the frontier's extensions, and thresholds them with :meth:`Trie.grow
<triehh.core.trie.Trie.grow>`. Who takes part comes in one of two forms:

* one-word populations without a fixed schedule: the sampled users per
  round cell (:func:`triehh.engines.sampling.round_cell_counts`), drawn at once
  from per-level tables built once per population, at a cost independent
  of n and the batch size; the engine gets the cells and their counts
  (:meth:`VoteCounter.count_cells`);
* otherwise: the sampled users and, for several-word users, their word
  ranks (:meth:`VoteCounter.count`).

Either form draws a batch of exactly ``batch_size`` users (the paper's
sampling) or, with ``sampling_rate`` q, every user independently with
probability q (Poisson sampling; contract step 1c).

The run stops when

* the frontier is empty (every discovered prefix is terminated),
* a fixed schedule has no entry left for the round,
* a round adds nothing to the trie, or
* the trie has L + 1 levels (L characters and the end symbol).

An engine supplies only how a round's votes are counted (a
:class:`VoteCounter`), so every engine stops, samples and thresholds alike
and grows the same trie from the same seed. An engine whose votes are the
drawn cell counts themselves (:class:`CountVotes`, the fast engine) has its
count-level rounds run on a shorter path with the same draws, stopping rule
and levels (:func:`_count_rounds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from triehh.core import choices
from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.engines import sampling
from triehh.engines import vote_counts


class VoteCounter(Protocol):
  """How an engine counts the votes of a round."""

  def count(self, trie: trie_lib.Trie, users: np.ndarray,
            ranks: np.ndarray | None, batches: Sequence[slice]) -> np.ndarray:
    """The round's vote vector, in the layout of :mod:`triehh.core.trie`.

    Args:
      trie: the trie so far (its frontier is what users can extend).
      users: the sampled user indices, in sample order.
      ranks: per sampled user its word rank (several-word populations, see
        :func:`triehh.engines.sampling.draw_word_ranks`), else ``None``.
      batches: the sub-rounds, as slices of ``users``, whose votes are summed.
    """

  def count_cells(self, trie: trie_lib.Trie, cells: vote_counts.RoundCells,
                  counts: np.ndarray, batches: Sequence[slice]) -> np.ndarray:
    """The votes of the round's (prefix, symbol) cells (one-word populations).

    Returns ``int64 [c]``: the votes at ``cells.vote_index`` (every other
    entry of the round's vote vector is zero, those cells hold no users).

    Args:
      trie: the trie so far.
      cells: the round's cells (:func:`triehh.engines.vote_counts.round_cells`).
      counts: sampled users per cell.
      batches: the sub-rounds, as slices of the round's sample (an engine
        that draws the users inside the cells splits them so).
    """

  def grown(self, trie: trie_lib.Trie, level: trie_lib.TrieLevel,
            kept: np.ndarray) -> None:
    """Called after every round with the new level and the vote indices that
    became frontier prefixes (see :meth:`Trie.grow <triehh.core.trie.Trie.grow>`)."""


class CountVotes:
  """The votes of a round are the drawn counts of its cells (the fast engine).

  With this counter, :func:`run` runs the rounds that draw cell counts
  (contract step 1a or 1c of :mod:`triehh.engines.sampling`) on a shorter
  path, :func:`_count_rounds`: the same draws from leaner tables
  (:func:`triehh.engines.sampling.draw_round_counts`), and each level built
  from the stored codes of its prefixes; the same trie from the same seed.
  """

  def count(self, trie: trie_lib.Trie, users: np.ndarray,
            ranks: np.ndarray | None, batches: Sequence[slice]) -> np.ndarray:
    raise NotImplementedError("rounds of one-word populations count cells")

  def count_cells(self, trie: trie_lib.Trie, cells: vote_counts.RoundCells,
                  counts: np.ndarray, batches: Sequence[slice]) -> np.ndarray:
    del trie, batches  # a round's votes are the sum of its sub-rounds'
    return counts[:cells.vote_index.size]

  def grown(self, trie: trie_lib.Trie, level: trie_lib.TrieLevel,
            kept: np.ndarray) -> None:
    del trie, level, kept  # the round loop tracks the frontier's prefix ids


def check_theta(theta: int) -> None:
  """Raises ``ValueError`` unless the vote threshold is at least 1."""
  if theta < 1:
    raise ValueError(f"theta must be >= 1, got {theta}")


def run(population: population_lib.Population, counter: VoteCounter, *,
        theta: int, batch_size: int, rng: np.random.Generator,
        num_sub_rounds: int = 1, max_num_prefixes: int | None = None,
        schedule: Sequence[np.ndarray] | None = None,
        sampling_rate: float | None = None) -> trie_lib.Trie:
  """Runs rounds until the stopping rule (module docstring) ends the run.

  Args:
    population: the encoded users.
    counter: the engine's vote counting (:class:`CountVotes`: the drawn
      cell counts, on the shorter path of the count-level rounds).
    theta: the vote threshold.
    batch_size: m, users sampled per round.
    rng: the random generator (each round's draws, in the order of the
      contract of :mod:`triehh.engines.sampling`).
    num_sub_rounds: R, batches per round whose votes are summed before
      thresholding (the round's sample is split, see
      :func:`triehh.engines.sampling.sub_round_slices`).
    max_num_prefixes: optional cap on extensions kept per round.
    schedule: optional fixed user indices per round, replacing the uniform
      sample; rounds beyond the schedule end the run.
    sampling_rate: q for Poisson sampling (each user takes part in a round
      with probability q; ``batch_size`` is then unused), else ``None``.

  Returns:
    The grown :class:`~triehh.core.trie.Trie`.
  """
  check_theta(theta)
  if sampling_rate is not None:
    sampling_rate = choices.check_sampling_rate(sampling_rate)
  options = dict(theta=theta, batch_size=batch_size,
                 num_sub_rounds=num_sub_rounds,
                 max_num_prefixes=max_num_prefixes,
                 sampling_rate=sampling_rate)
  cell_level = sampling.draws_cell_counts(population, schedule)
  if cell_level and isinstance(counter, CountVotes):
    return _count_rounds(population, rng, **options)
  trie = trie_lib.Trie(population.alphabet)
  if cell_level:
    tables = vote_counts.tables_of(population)
    frontier_ids = np.zeros(1, dtype=np.int64)  # the root
  else:
    population.check_user_array("a fixed schedule")
  for depth in range(1, population.num_levels + 1):
    if trie.frontier.shape[0] == 0:
      break
    if cell_level:
      level, kept, frontier_ids = _cell_round(
          trie, counter, rng, tables, depth, frontier_ids, **options)
    else:
      grown = _user_round(trie, counter, rng, population, depth, schedule,
                          **options)
      if grown is None:
        break
      level, kept = grown
    counter.grown(trie, level, kept)
    if not level.grew:
      break
  return trie


def _cell_round(trie: trie_lib.Trie, counter: VoteCounter,
                rng: np.random.Generator, tables: vote_counts.PrefixUsers,
                depth: int, frontier_ids: np.ndarray, *, theta: int,
                batch_size: int, num_sub_rounds: int,
                max_num_prefixes: int | None, sampling_rate: float | None
                ) -> tuple[trie_lib.TrieLevel, np.ndarray, np.ndarray]:
  """One round drawn as vote-cell counts: the grown level, the kept vote
  indices and the kept cells' ids (the next frontier)."""
  cells, cell_counts = sampling.round_cell_counts(
      rng, tables, depth, frontier_ids, batch_size, sampling_rate)
  sampled = (batch_size if sampling_rate is None
             else int(cell_counts.sum()))
  votes = counter.count_cells(trie, cells, cell_counts,
                              _batches(sampled, num_sub_rounds,
                                       sampling_rate is not None))
  level, at = trie.grow_at(cells.vote_index, votes, theta,
                           max_num_prefixes, num_sampled=sampled)
  return level, cells.vote_index[at], cells.child_ids[at]


def _count_rounds(population: population_lib.Population,
                  rng: np.random.Generator, *, theta: int, batch_size: int,
                  num_sub_rounds: int, max_num_prefixes: int | None,
                  sampling_rate: float | None) -> trie_lib.Trie:
  """The rounds of :func:`run` for :class:`CountVotes`: those of
  :func:`_cell_round`, with the same draws, levels and stopping rule."""
  tables = vote_counts.count_tables(population)
  if sampling_rate is None:  # the checks of every round, once
    sampling.check_batch_size(tables.num_users, batch_size)
    _batches(batch_size, num_sub_rounds)
  a1 = population.alphabet.num_extensions
  trie = trie_lib.Trie(population.alphabet)
  frontier = np.zeros(1, dtype=np.int64)  # the root's prefix id
  for depth in range(1, population.num_levels + 1):
    children, bounds, counts = sampling.draw_round_counts(
        rng, tables, depth, frontier, batch_size, sampling_rate)
    sampled = (batch_size if sampling_rate is None
               else int(np.add.reduce(counts)))
    votes = counts[:children.size]
    if max_num_prefixes is None:
      frontier = _count_level(
          trie, tables.levels[depth - 1], votes, children, bounds,
          theta=theta, num_sampled=sampled,
          num_votes=sampled - int(np.add.reduce(counts[children.size:])))
    else:
      symbols = tables.levels[depth - 1].codes[:, depth - 1]
      parents = np.arange(bounds.size).repeat(np.diff(bounds, prepend=0))
      _, at = trie.grow_at(parents * a1 + symbols.take(children), votes,
                           theta, max_num_prefixes, num_sampled=sampled)
      frontier = children.take(at)
    if not frontier.size:  # nothing to extend: the level is the last
      break
  return trie


def _count_level(trie: trie_lib.Trie, level: vote_counts.CountLevel,
                 votes: np.ndarray, children: np.ndarray, bounds: np.ndarray,
                 *, theta: int, num_sampled: int, num_votes: int
                 ) -> np.ndarray:
  """Adds the level that :meth:`Trie.grow_at <triehh.core.trie.Trie.grow_at>`
  would add for the votes of the cells of ``children`` (uncapped): the
  cells with at least ``theta`` votes, unfinished then finished, each in
  vote order, their codes read from ``level``. Returns the prefix ids of
  the new frontier."""
  at = np.greater_equal(votes, theta).nonzero()[0]
  ids = children.take(at)
  ends = level.ends.take(ids)
  new = at.size - int(np.add.reduce(ends))
  if new < at.size:
    order = ends.argsort(kind="stable")
    at, ids = at.take(order), ids.take(order)
  codes = level.codes.take(ids, axis=0)
  kept_votes = votes.take(at)
  parents = bounds.searchsorted(at, side="right").astype(np.int32)
  trie.levels.append(trie_lib.TrieLevel(
      depth=trie.depth + 1, prefixes=codes[:new],
      prefix_votes=kept_votes[:new], parents=parents[:new],
      terminated=codes[new:], terminated_votes=kept_votes[new:],
      terminated_parents=parents[new:],
      num_candidates=bounds.size * trie.alphabet.num_extensions,
      num_sampled=num_sampled, num_votes=num_votes))
  return ids[:new]


def _user_round(trie: trie_lib.Trie, counter: VoteCounter,
                rng: np.random.Generator,
                population: population_lib.Population, depth: int,
                schedule: Sequence[np.ndarray] | None, *, theta: int,
                batch_size: int, num_sub_rounds: int,
                max_num_prefixes: int | None, sampling_rate: float | None
                ) -> tuple[trie_lib.TrieLevel, np.ndarray] | None:
  """One round drawn user by user: the grown level and the kept vote
  indices, or ``None`` when the schedule has no such round."""
  users = sampling.round_users(rng, population.num_users, batch_size,
                               schedule, depth, sampling_rate)
  if users is None:
    return None
  ranks = sampling.draw_word_ranks(rng, population, users)
  votes = counter.count(trie, users, ranks,
                        _batches(users.size, num_sub_rounds,
                                 sampling_rate is not None))
  return trie.grow(votes, theta, max_num_prefixes, num_sampled=users.size)


def _batches(num_users: int, num_sub_rounds: int,
             poisson: bool = False) -> list[slice]:
  if poisson:  # a Poisson round may sample fewer users than sub-rounds
    num_sub_rounds = max(1, min(num_sub_rounds, num_users))
  if num_sub_rounds == 1:
    return [slice(0, num_users)]
  return sampling.sub_round_slices(num_users, num_sub_rounds)
