"""Count-level sampling: a round's votes without drawing users one by one.

For a one-word population, a round's votes depend only on how many sampled
users fall in each *cell*: a (frontier prefix, next symbol) pair, a frontier
prefix whose words have no next symbol, or the remainder (users whose prefix
is not on the frontier). Drawing a uniform ``m``-subset of the ``n`` users and
counting per cell gives a multivariate hypergeometric vector over the cells,
so a round is one such draw over the users per cell. The users per cell come
from per-level "users per prefix" tables (:class:`PrefixUsers`) built once
per population, with one gather over the frontier's children: a round costs
time in the frontier's size only, not in ``n`` or ``m``.

The draw. A uniform ``m``-subset of the ``n`` users is drawn in two exact
steps, for any ``n < 2^62`` (no numpy hypergeometric sampler, which needs
fewer than ``10^9`` items and costs a univariate draw per cell):

* Thinning: each user is kept independently with probability ``p = m / n``
  (cell counts ``Binomial(K_c, p)``, one vectorised draw). Given their total
  ``t``, the kept users are a uniform ``t``-subset.
* Exact top-up: if ``t > m``, a uniform ``(t - m)``-subset of the kept users
  is dropped; if ``t < m``, a uniform ``(m - t)``-subset of the others is
  added. Either way the result is a uniform ``m``-subset. The ``|t - m|``
  (about ``sqrt(m)``) users are drawn as distinct ranks (``choice`` without
  replacement) and mapped to their cells by the cumulative counts.
  :mod:`triehh.engines.thinning` makes the two steps.

Engines that need only the counts read leaner per-level tables
(:class:`CountTables`, :func:`round_cell_users`): the same cells in the same
order, with each prefix's children, users and symbol codes at hand.

Which users. An engine that needs the actual clients (the TFF engine) draws
the cell counts first and then, from a separate stream, a uniform subset of
each cell's users of that size (:func:`sample_members`). Given the counts,
independent uniform subsets per cell make the whole sample a uniform
``m``-subset, and the counts are the same as those of an engine that stops
after the first stage, seed for seed.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from triehh.core import population as population_lib
from triehh.core import validation
from triehh.engines import cache
from triehh.engines import thinning


def sample_cell_counts(cell_users: np.ndarray, batch_size: int,
                       rng: np.random.Generator) -> np.ndarray:
  """Per-cell counts of a uniform ``batch_size``-subset of the users.

  Args:
    cell_users: ``int [c]`` users in each cell (non-negative); the cells
      partition the ``n = sum(cell_users)`` users.
    batch_size: m, users sampled (without replacement), in ``[1, n]``.
    rng: the random generator (draws of the module docstring).

  Returns:
    ``int64 [c]`` sampled users per cell, summing to ``batch_size``.
  """
  users = np.asarray(cell_users)
  if users.ndim != 1 or users.size == 0:
    raise ValueError("cell_users must be a non-empty 1-D array of counts")
  if not np.issubdtype(users.dtype, np.integer):
    raise TypeError(f"cell_users must hold integers, got {users.dtype}")
  if users.min() < 0:
    raise ValueError("cell_users holds a negative count")
  users = users.astype(np.int64, copy=False)
  total = int(users.sum())
  if total >= 2**62:  # int64 sums of int64 counts would overflow
    raise ValueError(f"{total} users are too many to count in int64")
  m = validation.check_int("batch_size", batch_size, 1, total)
  return thinning.thinned_counts(users, total, m, rng)


# ---- per-population tables ---------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class PrefixUsers:
  """Per-level users-per-prefix tables of a one-word population.

  Users are numbered by *position*: all users sorted by the lexicographic
  order of their word's symbol codes (``-1`` after the end first), so that the
  users of every prefix occupy one range of positions.

  Attributes:
    num_users: n.
    num_extensions: A + 1, symbols per frontier prefix in the vote layout.
    users: per level l = 0..L+1, ``int64 [P_l]`` users whose word's
      length-l prefix is each prefix id.
    first: per level, ``int64 [P_l]`` position of each prefix's first user.
    child_offsets: per level l >= 1, ``int64 [P_(l-1) + 1]``: the children of
      length-(l-1) prefix ``q`` are the length-l ids
      ``child_offsets[l][q]:child_offsets[l][q+1]`` (level 0 is empty).
    child_symbols: per level l >= 1, ``int64 [P_l]`` last symbol code of each
      length-l prefix (level 0 is empty).
    no_symbol: per level, ``int64 [P_l]`` users whose word has the prefix and
      no next symbol (all of them at the last level).
  """

  num_users: int
  num_extensions: int
  users: tuple[np.ndarray, ...]
  first: tuple[np.ndarray, ...]
  child_offsets: tuple[np.ndarray, ...]
  child_symbols: tuple[np.ndarray, ...]
  no_symbol: tuple[np.ndarray, ...]


def prefix_users(population: population_lib.Population,
                 users_per_word: np.ndarray | None = None) -> PrefixUsers:
  """Builds the :class:`PrefixUsers` tables of a one-word population.

  Args:
    population: supplies the vocabulary's codes and prefix ids.
    users_per_word: ``int [V]`` users holding each word; by default the
      population's own (:attr:`Population.users_per_word
      <triehh.core.population.Population.users_per_word>`). Given explicitly, it
      describes a population of ``sum(users_per_word)`` users with no
      per-user array.
  """
  upw = _users_per_word(population, users_per_word)
  num_users = int(upw.sum())
  codes = population.codes
  order = np.lexsort(codes.T[::-1])
  start = np.empty_like(upw)
  start[order] = np.cumsum(upw[order]) - upw[order]
  users, first, child_offsets, child_symbols = [], [], [], []
  empty = np.zeros(0, dtype=np.int64)
  for level, (ids, count) in enumerate(zip(population.prefix_ids,
                                           population.num_prefixes)):
    sorted_ids = ids[order]
    has = sorted_ids >= 0
    valid_ids, valid_words = sorted_ids[has], order[has]  # ids non-decreasing
    users.append(_sum_by_sorted_key(upw[valid_words], valid_ids, count))
    firsts = np.searchsorted(valid_ids, np.arange(count))
    first.append(start[valid_words[firsts]] if count else empty)
    if level == 0:
      child_offsets.append(empty)
      child_symbols.append(empty)
      continue
    parents = population.prefix_ids[level - 1][valid_words[firsts]]
    child_offsets.append(np.searchsorted(
        parents, np.arange(population.num_prefixes[level - 1] + 1)
    ).astype(np.int64))
    child_symbols.append(
        codes[valid_words[firsts], level - 1].astype(np.int64))
  return PrefixUsers(
      num_users=num_users,
      num_extensions=population.alphabet.num_extensions,
      users=tuple(users), first=tuple(first),
      child_offsets=tuple(child_offsets), child_symbols=tuple(child_symbols),
      no_symbol=tuple(_no_symbol(users, child_offsets)))


def _users_per_word(population: population_lib.Population,
                    users_per_word: np.ndarray | None) -> np.ndarray:
  """``int64 [V]``: ``users_per_word`` checked, or the population's own."""
  if users_per_word is None:
    if not population.is_single_word:
      raise ValueError("count-level sampling needs a one-word population; "
                       "this one has several words per user")
    users_per_word = population.users_per_word
  upw = np.asarray(users_per_word)
  if upw.shape != (population.num_words,):
    raise ValueError(f"users_per_word has shape {upw.shape}, expected "
                     f"({population.num_words},): one count per word")
  if not np.issubdtype(upw.dtype, np.integer) or upw.min() < 0:
    raise ValueError("users_per_word must hold non-negative integers")
  upw = upw.astype(np.int64)
  if int(upw.sum()) <= 0:
    raise ValueError("users_per_word counts no user")
  return upw


def _no_symbol(users: list[np.ndarray],
               child_offsets: list[np.ndarray]) -> list[np.ndarray]:
  """Per level, users of each prefix whose word has no next symbol there:
  the prefix's users minus those of its children (all at the last level)."""
  no_symbol = []
  for level, level_users in enumerate(users):
    if level + 1 == len(users):
      no_symbol.append(level_users)
      continue
    running = np.zeros(users[level + 1].size + 1, dtype=np.int64)
    users[level + 1].cumsum(out=running[1:])
    ranges = running[child_offsets[level + 1]]
    no_symbol.append(level_users - (ranges[1:] - ranges[:-1]))
  return no_symbol


@cache.per_population
def tables_of(population: population_lib.Population) -> PrefixUsers:
  """The population's :class:`PrefixUsers`, built once while it lives."""
  return prefix_users(population)


class CountLevel(NamedTuple):
  """One level's tables for the rounds that draw cell counts, by prefix id.

  Attributes:
    parents: ``int64 [P_(l-1), 5]`` per length-(l-1) prefix, the columns
      :data:`FIRST_CHILD`, :data:`NUM_CHILDREN`, :data:`END_CHILD` (its
      children are the length-l ids in ``[first, end)``), :data:`NO_SYMBOL`
      (its users whose word has no l-th symbol) and :data:`USERS`.
    users: ``int64 [P_l]`` users per length-l prefix.
    ends: ``bool [P_l]`` whether the prefix ends in the end symbol.
    codes: ``int32 [P_l, l]`` the prefix's symbol codes.
  """

  parents: np.ndarray
  users: np.ndarray
  ends: np.ndarray
  codes: np.ndarray


FIRST_CHILD, NUM_CHILDREN, END_CHILD, NO_SYMBOL, USERS = range(5)


@dataclasses.dataclass(frozen=True, eq=False)
class CountTables:
  """What the rounds of a one-word population that draw cell counts read.

  Attributes:
    num_users: n.
    levels: ``levels[l - 1]``, the :class:`CountLevel` of level l = 1..L+1
      (read by the round that grows it).
    positions: ``int64`` ``0, 1, ...`` up to the largest ``P_l``.
    root: the first round's :func:`round_cell_users` (read-only arrays).
  """

  num_users: int
  levels: tuple[CountLevel, ...]
  positions: np.ndarray
  root: tuple[np.ndarray, np.ndarray, np.ndarray]


@cache.per_population
def count_tables(population: population_lib.Population) -> CountTables:
  """The population's :class:`CountTables`, built once while it lives."""
  tables = tables_of(population)
  end = population.alphabet.end_code
  levels = []
  for level in range(1, len(tables.users)):
    offsets = tables.child_offsets[level]
    parents = np.stack([offsets[:-1], np.diff(offsets), offsets[1:],
                        tables.no_symbol[level - 1], tables.users[level - 1]],
                       axis=1).astype(np.int64)
    ids = population.prefix_ids[level]
    words = np.flatnonzero(ids >= 0)
    word_of = np.empty(population.num_prefixes[level], dtype=np.intp)
    word_of[ids[words]] = words  # a word of each prefix
    levels.append(CountLevel(
        parents=parents, users=tables.users[level],
        ends=tables.child_symbols[level] == end,
        codes=population.codes[word_of, :level].astype(np.int32)))
  positions = np.arange(max(lv.users.size for lv in levels), dtype=np.int64)
  root = _cells(levels[0], positions, tables.num_users,
                np.zeros(1, dtype=np.int64))
  for array in root:
    array.flags.writeable = False
  return CountTables(num_users=tables.num_users, levels=tuple(levels),
                     positions=positions, root=root)


def round_cell_users(tables: CountTables, depth: int,
                     frontier_ids: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """:func:`round_cells`' cells, in its order, from :class:`CountTables`.

  Returns ``children``: ``int64 [c]`` the length-``depth`` prefix id of each
  (prefix, symbol) cell; ``bounds``: ``int64 [k]`` the cumulative number of
  those cells per frontier prefix (prefix ``i`` has the cells
  ``bounds[i - 1]:bounds[i]``); and ``users``: ``int64 [c + k + 1]`` the
  users of every cell.
  """
  if depth == 1:
    return tables.root
  level = tables.levels[depth - 1]
  if thinning.compiled is not None:  # the same arrays, in one call
    return thinning.compiled.round_cell_users(level.parents, level.users,
                                              frontier_ids, tables.num_users)
  return _cells(level, tables.positions, tables.num_users, frontier_ids)


def _cells(level: CountLevel, positions: np.ndarray, num_users: int,
           frontier_ids: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """:func:`round_cell_users` of a round past the first."""
  rows = level.parents.take(frontier_ids, axis=0)
  lengths = rows[:, NUM_CHILDREN]
  bounds = lengths.cumsum()
  num_cells = int(bounds[-1])
  # Each frontier prefix's children are consecutive ids from its first.
  children = (rows[:, END_CHILD] - bounds).repeat(lengths)
  children += positions[:num_cells]
  users = np.empty(num_cells + frontier_ids.size + 1, dtype=np.int64)
  level.users.take(children, out=users[:num_cells])
  users[num_cells:-1] = rows[:, NO_SYMBOL]
  users[-1] = num_users - np.add.reduce(rows[:, USERS])
  return children, bounds, users


def _sum_by_sorted_key(values: np.ndarray, keys: np.ndarray,
                       num_keys: int) -> np.ndarray:
  """Exact int64 sums of ``values`` per key (``keys`` non-decreasing)."""
  sums = np.zeros(num_keys, dtype=np.int64)
  if keys.size:
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sums[keys[starts]] = np.add.reduceat(values, starts)
  return sums


def users_by_position(population: population_lib.Population) -> np.ndarray:
  """``int64 [n]`` the user at each position of :class:`PrefixUsers`."""
  if not population.is_single_word:
    raise ValueError("positions are defined for one-word populations only")
  population.check_user_array("users_by_position")
  lex_rank = np.empty(population.num_words, dtype=np.int64)
  lex_rank[np.lexsort(population.codes.T[::-1])] = np.arange(
      population.num_words)
  return np.argsort(lex_rank[population.user_word], kind="stable")


# ---- one round ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class RoundCells:
  """The cells of one round, for a frontier of ``k`` prefixes.

  Cells are ordered: the ``c`` (frontier prefix, symbol) cells that some
  user falls in, then one "no next symbol" cell per frontier prefix, then
  the remainder.

  Attributes:
    vote_index: ``int64 [c]`` index of each (prefix, symbol) cell in the
      round's vote vector (``prefix * (A + 1) + symbol``, as in
      :mod:`triehh.core.trie`), increasing.
    child_ids: ``int64 [c]`` the length-``depth`` prefix id of each
      (prefix, symbol) cell.
    users: ``int64 [c + k + 1]`` users in each cell.
    num_votes: length of the vote vector, ``k * (A + 1)``.
    frontier_ids: ``int64 [k]`` the frontier's prefix ids.
    level_first, parent_first, parent_users: the tables' ``first`` of the
      round's level and ``first`` and ``users`` of the frontier's level,
      from which the positions below are derived when an engine asks.
  """

  vote_index: np.ndarray
  child_ids: np.ndarray
  users: np.ndarray
  num_votes: int
  frontier_ids: np.ndarray
  level_first: np.ndarray
  parent_first: np.ndarray
  parent_users: np.ndarray

  @property
  def frontier_first(self) -> np.ndarray:
    """``int64 [k]`` position of each frontier prefix's first user, whose
    :attr:`frontier_users` users span all its cells."""
    return self.parent_first[self.frontier_ids]

  @property
  def frontier_users(self) -> np.ndarray:
    """``int64 [k]`` users per frontier prefix."""
    return self.parent_users[self.frontier_ids]

  @property
  def first(self) -> np.ndarray:
    """``int64 [c + k]`` position of each frontier cell's first user (its
    users are the next ``users`` positions)."""
    # Words with no next symbol sort first among their prefix's words.
    return np.concatenate([self.level_first[self.child_ids],
                           self.frontier_first])


def round_cells(tables: PrefixUsers, depth: int,
                frontier_ids: np.ndarray) -> RoundCells:
  """The cells of the round that grows level ``depth`` (1-based).

  ``frontier_ids`` are the length-``(depth - 1)`` prefix ids of the frontier,
  in the trie's order (``[0]``, the root, for depth 1). Costs time in the
  number of frontier prefixes and their children only.
  """
  if not 1 <= depth < len(tables.users):
    raise ValueError(f"depth must be in [1, {len(tables.users) - 1}], got "
                     f"{depth}")
  frontier_ids = np.asarray(frontier_ids, dtype=np.int64)
  k = frontier_ids.size
  offsets = tables.child_offsets[depth]
  starts = offsets[frontier_ids]
  lengths = offsets[frontier_ids + 1] - starts
  parent = np.arange(k, dtype=np.int64).repeat(lengths)
  # Each frontier prefix's children are consecutive ids from its start.
  children = np.arange(parent.size, dtype=np.int64)
  children += (starts - (lengths.cumsum() - lengths))[parent]
  users = np.empty(children.size + k + 1, dtype=np.int64)
  np.take(tables.users[depth], children, out=users[:children.size])
  np.take(tables.no_symbol[depth - 1], frontier_ids,
          out=users[children.size:-1])
  users[-1] = tables.num_users - users[:-1].sum()
  vote_index = parent * tables.num_extensions
  vote_index += tables.child_symbols[depth][children]
  return RoundCells(vote_index=vote_index, child_ids=children, users=users,
                    num_votes=k * tables.num_extensions,
                    frontier_ids=frontier_ids,
                    level_first=tables.first[depth],
                    parent_first=tables.first[depth - 1],
                    parent_users=tables.users[depth - 1])


def votes_of(cells: RoundCells, counts: np.ndarray) -> np.ndarray:
  """``int64 [k * (A + 1)]`` the round's vote vector from its cell counts."""
  votes = np.zeros(cells.num_votes, dtype=np.int64)
  votes[cells.vote_index] = counts[:cells.vote_index.size]
  return votes


def sample_round_counts(cells: RoundCells, batch_size: int,
                        rng: np.random.Generator) -> np.ndarray:
  """:func:`sample_cell_counts` of a round's cells, which need no checks.

  ``cells`` come from :func:`round_cells` (non-negative ``int64`` counts
  summing to ``n < 2^62``); ``batch_size`` must be in ``[1, n]``.
  """
  return thinning.thinned_counts(cells.users, int(cells.users.sum()),
                                 batch_size, rng)


def sample_members(cells: RoundCells, counts: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
  """Positions of the sampled users, given the round's cell counts.

  Each cell gets a uniform subset of its users of the drawn size, from
  ``rng`` (a stream spawned for this purpose, so that the counts stay those
  of the first stage). The result, in random order, is a uniform subset of
  all positions; map it to users with :func:`users_by_position`.
  """
  counts = np.asarray(counts, dtype=np.int64)
  if counts.shape != cells.users.shape or np.any(counts > cells.users) or (
      counts.min() < 0):
    raise ValueError("counts must give, per cell, between 0 and its users")
  picked = []
  for cell in np.flatnonzero(counts[:-1]):
    picked.append(cells.first[cell] + rng.choice(
        cells.users[cell], size=counts[cell], replace=False, shuffle=False))
  if counts[-1]:
    picked.append(_remainder_positions(cells, int(counts[-1]), rng))
  positions = (np.concatenate(picked) if picked
               else np.zeros(0, dtype=np.int64))
  return rng.permutation(positions)


def _remainder_positions(cells: RoundCells, size: int,
                         rng: np.random.Generator) -> np.ndarray:
  """A uniform ``size``-subset of the positions outside the frontier."""
  order = np.argsort(cells.frontier_first, kind="stable")
  lo = cells.frontier_first[order]
  hi = lo + cells.frontier_users[order]
  num_users = int(cells.users.sum())
  gap_starts = np.concatenate([[0], hi])
  gap_lengths = np.concatenate([lo, [num_users]]) - gap_starts
  gap_ends = np.cumsum(gap_lengths)
  ranks = rng.choice(int(gap_ends[-1]), size=size, replace=False,
                     shuffle=False)
  gap = np.searchsorted(gap_ends, ranks, side="right")
  return gap_starts[gap] + ranks - (gap_ends[gap] - gap_lengths[gap])
