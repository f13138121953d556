"""A round's cell counts by thinning: alone, or with the exact top-up.

:func:`binomial_counts` draws a Poisson round (step 1c of the contract of
:mod:`triehh.engines.sampling`): ``rng.binomial(users, q)``.
:func:`thinned_counts` draws a fixed-size round (step 1a), a uniform
``m``-subset of the ``n`` users counted per cell, in two exact steps (why
they are exact: :mod:`triehh.engines.vote_counts`): ``kept =
rng.binomial(users, m / n)``, then :func:`top_up`, one ``choice`` of the
ranks of the users dropped or added.

Where the package was built with them (``setup.py``, ``make setup``), the
compiled draws of ``triehh/engines/_compiled_draws.pyx`` make these draws:
numpy's own C functions on the generator's bit generator, the same draws
and the same counts, without the Python-level work of the numpy calls (at
10^6 users the draws of a fixed-size run cost 0.83x ``rng.binomial`` over
the occupied cells alone, against 1.45x for the numpy calls;
docs/engines.md). Elsewhere (no C compiler or Cython, Bazel's sandbox)
numpy's calls make them.
"""

from __future__ import annotations

import numpy as np

from triehh.core import compiled_extensions


def thinned_counts(users: np.ndarray, total: int, m: int,
                   rng: np.random.Generator) -> np.ndarray:
  """The counts of a uniform ``m``-subset of the ``total`` users of the
  cells ``users`` (``int64``): the thinning's ``rng.binomial(users, m /
  total)``, then :func:`top_up`.

  Empty cells draw nothing from the generator (numpy returns 0 for n = 0
  without a draw), so the binomial is the same call as over the occupied
  cells. Where the package was built with them, the compiled draws
  (``triehh/engines/_compiled_draws.pyx``) make both steps, the same
  draws from the same generator; else numpy's calls do.
  """
  if compiled is not None:
    users = np.ascontiguousarray(users, dtype=np.int64)
    kept, done = compiled.thinned_counts(rng, users, total, m / total, m)
    if not done:
      top_up(users, kept, total, m, rng)
    return kept
  kept = rng.binomial(users, m / total)
  top_up(users, kept, total, m, rng)
  return kept


def binomial_counts(users: np.ndarray, p: float,
                    rng: np.random.Generator) -> np.ndarray:
  """``rng.binomial(users, p)`` (``int64`` users, ``p`` in [0, 1]): the
  thinning alone, a Poisson round's cell counts (step 1c). The compiled
  draws make the same draws where they were built."""
  if compiled is not None:
    return compiled.binomial_counts(
        rng, np.ascontiguousarray(users, dtype=np.int64), p)
  return rng.binomial(users, p)


# The compiled draws' module (also a round's cells,
# :func:`triehh.engines.vote_counts.round_cell_users`), or None where the
# package was installed without them (no C compiler or Cython; Bazel's
# sandbox).
compiled = compiled_extensions.load("triehh.engines._compiled_draws")


def top_up(users: np.ndarray, kept: np.ndarray, total: int, m: int,
           rng: np.random.Generator) -> None:
  """The exact top-up of the thinning's ``int64`` counts ``kept``, in place.

  ``users`` (``int64``) are the cells' users and ``total`` their sum. Unless
  ``kept`` sums to ``m``, one ``choice`` draws the ranks of the users dropped
  (among the kept) or added (among the others), per cell in cell order.
  """
  kept_total = int(np.add.reduce(kept))
  if kept_total > m:  # drop kept users
    ranks = rng.choice(kept_total, size=kept_total - m, replace=False,
                       shuffle=False)
    np.subtract.at(kept, kept.cumsum().searchsorted(ranks, side="right"), 1)
  elif kept_total < m:  # add users that were not kept
    ranks = rng.choice(total - kept_total, size=m - kept_total,
                       replace=False, shuffle=False)
    pool = np.subtract(users, kept)
    np.add.at(kept, pool.cumsum().searchsorted(ranks, side="right"), 1)
