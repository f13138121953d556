"""Utility of TrieHH: the worst-case discovery rate (Proposition 2).

A sequence held by ``W`` of ``n`` users that shares no prefix with any other
sequence is added to the trie at a level iff at least ``theta`` of its
holders are among the ``m`` users sampled that round: a hypergeometric tail,

    P_level = sum_{i=theta}^{min(W, m)} C(W, i) C(n - W, m - i) / C(n, m).

It must pass every one of its ``L`` levels, each with a fresh sample, so the
worst-case discovery rate is ``P_level ** L``. Sharing prefixes with other
sequences only helps, which is why real data does better.

``L`` here is the number of levels the sequence must pass: a word of ``k``
characters followed by the end symbol passes ``k + 1`` levels.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import stats

from triehh.theory import privacy


def level_rate(count, n: int, batch_size: int, theta: int) -> np.ndarray:
  """P(at least ``theta`` of ``count`` holders are in a batch of ``m``).

  Vectorised over ``count``; computed by scipy's hypergeometric survival
  function, exact for n up to 1e8 and beyond (no factorial overflow).
  """
  count = np.asarray(count)
  _check(n, batch_size, theta)
  if np.any(count < 0) or np.any(count > n):
    raise ValueError("count must be in [0, n]")
  return stats.hypergeom.sf(theta - 1, n, count, batch_size)


def discovery_rate(count, n: int, batch_size: int, theta: int,
                   max_length: int) -> np.ndarray | float:
  """Worst-case discovery rate of Proposition 2: ``level_rate ** max_length``.

  Args:
    count: W, users holding the sequence (scalar or array).
    n: number of users.
    batch_size: m, users sampled per round.
    theta: the vote threshold.
    max_length: L, the levels the sequence must pass (its length with the
      end symbol).
  """
  if max_length < 1:
    raise ValueError(f"max_length must be >= 1, got {max_length}")
  rate = level_rate(count, n, batch_size, theta) ** max_length
  return float(rate) if np.ndim(rate) == 0 else rate


def min_population(frequency: float, epsilon: float, *,
                   max_length: int = 10, probability: float = 0.9,
                   delta: Callable[[int], float] | float | None = None,
                   upper: int = 10**12) -> int:
  """Smallest n at which frequency ``f`` is discovered w.p. >= ``probability``.

  For each n, theta and the batch size come from :func:`privacy.calibrate`
  for ``(epsilon, delta(n))`` (``delta`` defaults to ``1/n^2``, as in the
  paper's Figure 2), the sequence is held by ``floor(f * n)`` users, and the
  worst-case rate is Proposition 2's. Populations too small for Corollary 1
  (gamma < 1) count as failures. The rate is searched by doubling then
  bisection, which assumes it is monotone in n; integer rounding of theta,
  m and W makes it only nearly so, so the answer is the smallest n found
  by bisection at which the target holds.
  """
  if not 0 < frequency <= 1:
    raise ValueError(f"frequency must be in (0, 1], got {frequency}")
  if not 0 < probability < 1:
    raise ValueError(f"probability must be in (0, 1), got {probability}")
  delta_of = (lambda n: 1.0 / n**2) if delta is None else (
      delta if callable(delta) else (lambda n, d=float(delta): d))

  def ok(n: int) -> bool:
    try:
      cal = privacy.calibrate(n, max_length, epsilon, delta_of(n))
    except ValueError:
      return False
    count = math.floor(frequency * n)
    return discovery_rate(count, n, cal.batch_size, cal.theta,
                          max_length) >= probability

  hi = 16
  while not ok(hi):
    hi *= 2
    if hi > upper:
      raise ValueError(
          f"no population up to n={upper} discovers frequency {frequency} "
          f"with probability {probability} at epsilon={epsilon}")
  lo = hi // 2
  while hi - lo > 1:
    mid = (lo + hi) // 2
    if ok(mid):
      hi = mid
    else:
      lo = mid
  return hi


def _check(n: int, batch_size: int, theta: int) -> None:
  if n < 1:
    raise ValueError(f"n must be >= 1, got {n}")
  if not 1 <= batch_size <= n:
    raise ValueError(f"batch_size must be in [1, n={n}], got {batch_size}")
  if theta < 1:
    raise ValueError(f"theta must be >= 1, got {theta}")
