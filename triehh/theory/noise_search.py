"""The search for the least noise that meets a privacy target: bisection
on a log scale, shared by the noisy trie's sigma
(:func:`triehh.theory.noisy_trie.smallest_sigma`), the Skellam shares'
mean (:func:`triehh.theory.distributed_noise.smallest_mean`) and the
sigma of a plan whose rates adapt
(:func:`triehh.theory.noisy_plan.renyi_sigma`).

Its own module, not :mod:`triehh.theory._search`: that module's source is
part of the key of the shipped Poisson calibrations, which an edit there
would make stale."""

from __future__ import annotations

import math
from collections.abc import Callable


def log_bisect(meets: Callable[[float], bool], lo: float, hi: float,
               tolerance: float) -> float:
  """The smallest x meeting a monotone target, to a relative
  ``tolerance`` and rounded up: bisection on log(x) between ``lo`` (not
  meeting it) and ``hi`` (meeting it); returns the end that meets it."""
  while hi / lo > 1.0 + tolerance:
    mid = math.sqrt(lo * hi)
    if meets(mid):
      hi = mid
    else:
      lo = mid
  return hi


def smallest(meets: Callable[[float], bool], tolerance: float, *,
             floor: float, ceiling: float = math.inf) -> float | None:
  """The smallest x meeting a monotone target (:func:`log_bisect`), its
  bracket found from 1: doubled until it meets the target, halved while
  it still does and is above ``floor``; None if no x up to ``ceiling``
  meets it."""
  hi = 1.0
  while not meets(hi):
    if hi >= ceiling:
      return None
    hi *= 2.0
  lo = hi / 2.0
  while meets(lo) and lo > floor:
    hi, lo = lo, lo / 2.0
  return log_bisect(meets, lo, hi, tolerance)
