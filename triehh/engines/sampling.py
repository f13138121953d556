"""Who takes part in a round, and which word each participant votes with.

Every engine draws from the same ``numpy.random.Generator`` in the same
order, so that the same seed gives the same votes everywhere.

The contract (what an independent implementation must do to get the same
votes from the same generator). Per round, in this order:

1. Who takes part.

   a. One-word populations without a fixed schedule draw *cell counts*, not
      users (:func:`round_cell_counts`). The round's cells are, in this
      order: every (frontier prefix, next symbol) pair that some user's
      word extends, by increasing vote index ``prefix * (A + 1) + symbol``
      (the layout of :mod:`triehh.core.trie`; frontier prefixes in the trie's
      order); then, per frontier prefix in that order, the users whose word
      has that prefix and no next symbol (a word truncated there); then the
      remainder (users whose prefix is not on the frontier). With ``users``
      the ``int64`` array of every cell's users in that order (empty cells
      included) and ``n`` the population size, the sampled users per cell
      (the counts of a uniform ``batch_size``-subset, exactly, for any
      ``n < 2^62``) are drawn in two steps. First one call
      ``kept = rng.binomial(users, batch_size / n)`` (each user kept with
      that probability; empty cells draw nothing). Then, with ``t =
      sum(kept)``: if ``t > batch_size``, ``t - batch_size`` kept users are
      dropped, else if ``t < batch_size``, ``batch_size - t`` of the others
      are added: one call ``rng.choice(size_of_pool, size=abs(t -
      batch_size), replace=False, shuffle=False)`` gives their ranks among
      the pool (``kept``, or ``users - kept``, per cell in cell order), and
      rank ``r`` is in the first cell whose cumulative pool count exceeds
      ``r``. ``t == batch_size`` draws nothing more (see
      :mod:`triehh.engines.vote_counts`). The round's votes are the counts
      of its (prefix, symbol) cells.
      An engine that needs the actual clients (the TFF engine) draws them
      given the counts (:func:`triehh.engines.vote_counts.sample_members`)
      from ``rng.spawn(1)[0]``, spawned once per run before its first
      round (spawning does not advance ``rng``), so the counts, and so the
      trie, are the same as an engine's that stops at the counts.
   b. Otherwise, ``sample_users``: unless a fixed schedule gives the
      round's users, one call ``rng.choice(n, size=batch_size,
      replace=False, shuffle=False)``: ``batch_size`` distinct users,
      uniformly without replacement, in the order returned. With a
      schedule, nothing is drawn.
   c. Poisson sampling (``sampling_rate`` q given; every user takes part
      independently with probability q, the sampling of
      ``docs/privacy.md``'s two-sided accountant). One-word populations
      without a schedule: the cells as in (a), and one call
      ``rng.binomial(users[occupied], q)`` over the occupied cells in cell
      order gives their counts (independent binomials are exactly the cell
      counts of independent participation); nothing more is drawn. As an
      empty cell draws nothing (numpy's binomial returns 0 for ``n = 0``
      without drawing), that is the same call as ``rng.binomial(users,
      q)`` over all cells, which the engines make.
      Otherwise: one call ``size = rng.binomial(n, q)``, then one call
      ``rng.choice(n, size=size, replace=False, shuffle=False)`` (a uniform
      subset of a Binomial(n, q) size is exactly a Poisson sample). The TFF
      engine draws the clients of the cells as in (a).
2. ``draw_word_ranks``: for several-word populations only, one call
   ``rng.integers(0, totals)`` where ``totals`` is the ``int64`` array of
   the sampled users' total word counts ``c_i``, in sample order: one rank
   ``r_i`` uniform in ``[0, c_i)`` per sampled user. One-word populations
   draw nothing here.
3. ``words_of`` (no draw): user ``i`` votes with the first of its words,
   taken in increasing index in ``population.vocabulary`` (the order of the
   user's entries), whose cumulative count exceeds ``r_i``. Word ``w`` is
   thus chosen with probability ``c_i(w) / c_i = f_i(w)``, as in Algorithm 3
   of the paper.

Nothing else draws from the generator during a run.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from triehh.core import population as population_lib
from triehh.engines import thinning
from triehh.engines import vote_counts


def check_batch_size(num_users: int, batch_size: int) -> None:
  """Raises ``ValueError`` unless ``1 <= batch_size <= num_users``."""
  if not 0 < batch_size <= num_users:
    raise ValueError(f"batch size {batch_size} must be in [1, n={num_users}]")


def sample_users(rng: np.random.Generator, num_users: int,
                 batch_size: int) -> np.ndarray:
  """``batch_size`` distinct user indices, uniformly at random."""
  check_batch_size(num_users, batch_size)
  return rng.choice(num_users, size=batch_size, replace=False, shuffle=False)


def draws_cell_counts(population: population_lib.Population,
                      schedule: Sequence[np.ndarray] | None) -> bool:
  """Whether rounds draw cell counts instead of users (contract, step 1a)."""
  return population.is_single_word and schedule is None


def round_cell_counts(rng: np.random.Generator,
                      tables: vote_counts.PrefixUsers, depth: int,
                      frontier_ids: np.ndarray, batch_size: int,
                      sampling_rate: float | None = None
                      ) -> tuple[vote_counts.RoundCells, np.ndarray]:
  """The cells of the round that grows level ``depth`` and their counts.

  Args:
    rng: the run's generator (one draw, step 1a or 1c of the contract).
    tables: the population's :func:`triehh.engines.vote_counts.tables_of`.
    depth: the level the round grows (1-based).
    frontier_ids: the frontier's length-``(depth - 1)`` prefix ids, in the
      trie's order (``[0]``, the root, for depth 1).
    batch_size: m, users sampled (fixed-size sampling).
    sampling_rate: q for Poisson sampling (``batch_size`` is then unused).

  Returns:
    The :class:`~triehh.engines.vote_counts.RoundCells` and ``int64`` sampled
    users per cell (summing to ``batch_size`` under fixed-size sampling).
  """
  if sampling_rate is None:
    check_batch_size(tables.num_users, batch_size)
  if depth == 1:  # the root: the same cells in every run
    if tables not in _ROOT_CELLS:
      _ROOT_CELLS[tables] = vote_counts.round_cells(tables, 1, frontier_ids)
    cells = _ROOT_CELLS[tables]
  else:
    cells = vote_counts.round_cells(tables, depth, frontier_ids)
  if sampling_rate is not None:
    return cells, poisson_cell_counts(cells.users, sampling_rate, rng)
  return cells, vote_counts.sample_round_counts(cells, batch_size, rng)


def poisson_cell_counts(cell_users: np.ndarray, rate: float,
                        rng: np.random.Generator) -> np.ndarray:
  """Per-cell counts when every user takes part with probability ``rate``
  (contract, step 1c: one ``binomial`` over the occupied cells, which is the
  same call as over all cells: an empty cell draws nothing)."""
  return thinning.binomial_counts(np.asarray(cell_users, dtype=np.int64),
                                 rate, rng)


def draw_round_counts(rng: np.random.Generator,
                      tables: vote_counts.CountTables, depth: int,
                      frontier_ids: np.ndarray, batch_size: int,
                      sampling_rate: float | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """The counts of :func:`round_cell_counts`, from leaner tables.

  The same draws, from the same cells in the same order, without building
  a :class:`~triehh.engines.vote_counts.RoundCells` (checks left to the
  caller: ``batch_size`` in ``[1, n]`` under fixed-size sampling).

  Returns:
    The ``children`` and ``bounds`` of the round's
    :func:`~triehh.engines.vote_counts.round_cell_users` and the ``int64
    [c + k + 1]`` counts of all its cells.
  """
  children, bounds, users = vote_counts.round_cell_users(tables, depth,
                                                         frontier_ids)
  if sampling_rate is not None:
    return children, bounds, thinning.binomial_counts(users, sampling_rate,
                                                      rng)
  return children, bounds, thinning.thinned_counts(
      users, tables.num_users, batch_size, rng)


def poisson_users(rng: np.random.Generator, num_users: int,
                  rate: float) -> np.ndarray:
  """The users of a Poisson-sampled round (contract, step 1c)."""
  size = int(rng.binomial(num_users, rate))
  return rng.choice(num_users, size=size, replace=False, shuffle=False)


# The first round's cells per population's tables, while the tables live.
_ROOT_CELLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def round_users(rng: np.random.Generator, num_users: int, batch_size: int,
                schedule: Sequence[np.ndarray] | None,
                depth: int, sampling_rate: float | None = None
                ) -> np.ndarray | None:
  """The users of the round that grows level ``depth`` (1-based).

  A uniform sample (:func:`sample_users`), a Poisson sample when
  ``sampling_rate`` is given (:func:`poisson_users`), or with a fixed
  ``schedule`` its entry for this round; ``None`` once the schedule has no
  entry left (the run ends).
  """
  if schedule is None:
    if sampling_rate is not None:
      return poisson_users(rng, num_users, sampling_rate)
    return sample_users(rng, num_users, batch_size)
  if depth > len(schedule):
    return None
  return np.asarray(schedule[depth - 1], dtype=np.intp)


def sub_round_slices(batch_size: int, num_sub_rounds: int) -> list[slice]:
  """Splits a round's sample into ``num_sub_rounds`` near-equal consecutive batches.

  Sub-round ``j`` takes the users at positions ``slices[j]`` of the round's
  sample. The round samples without replacement once, so no user votes twice
  in a round and Theorem 1 applies with the round's total batch size.
  """
  if not 1 <= num_sub_rounds <= batch_size:
    raise ValueError(f"num_sub_rounds must be in [1, batch size={batch_size}],"
                     f" got {num_sub_rounds}")
  bounds = np.linspace(0, batch_size, num_sub_rounds + 1).round().astype(int)
  return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def draw_word_ranks(rng: np.random.Generator,
                    population: population_lib.Population,
                    users: np.ndarray) -> np.ndarray | None:
  """Per sampled user, a uniform rank into its word counts (None if one word)."""
  if population.is_single_word:
    return None
  return rng.integers(0, population.user_totals[users])


def words_of(population: population_lib.Population, users: np.ndarray,
             ranks: np.ndarray | None) -> np.ndarray:
  """The word index each sampled user votes with."""
  if population.is_single_word:
    return population.user_word[users]
  cum = population.cumulative_counts
  starts = population.user_offsets[users]
  last = population.user_offsets[users + 1] - 1
  target = np.where(starts > 0, cum[starts - 1], 0) + ranks
  # The first of the user's entries whose cumulative count exceeds the
  # target (the same entry as a search of the whole array, which would cross
  # every other user's entries): a few steps through the user's own entries.
  entries = starts
  for _ in range(_LINEAR_STEPS):
    step = (entries < last) & (cum[entries] <= target)
    if not step.any():
      return population.entry_word[entries]
    entries = entries + step
  slow = np.flatnonzero((entries < last) & (cum[entries] <= target))
  entries[slow] = np.searchsorted(cum, target[slow], side="right")
  return population.entry_word[entries]


# Steps of words_of's scan through a user's entries before it searches.
_LINEAR_STEPS = 4
