"""Bisection over the integers, shared by the theory's population searches."""

from __future__ import annotations

from collections.abc import Callable


def first_true(predicate: Callable[[int], bool], lo: int, hi: int) -> int:
  """Smallest k in [lo, hi] with ``predicate(k)``, given ``predicate(hi)``
  and that the predicate is monotone on [lo, hi]."""
  if predicate(lo):
    return lo
  while hi - lo > 1:  # predicate(lo) false, predicate(hi) true
    mid = (lo + hi) // 2
    if predicate(mid):
      hi = mid
    else:
      lo = mid
  return hi
