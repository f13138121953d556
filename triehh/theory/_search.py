"""The theory's searches: bisection over the integers (the population
searches) and regula falsi on a log scale (the calibrations of a rate or a
noise)."""

from __future__ import annotations

import math
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


def log_regula_falsi(excess: Callable[[float], float],
                     good: tuple[float, float], bad: tuple[float, float],
                     tolerance: float) -> float:
  """The end of a bracket where ``excess <= 0``, narrowed to a relative
  ``tolerance``: regula falsi on log(x) (Illinois variant), bisection where
  an excess is infinite.

  ``good = (x, excess(x) <= 0)`` and ``bad = (x, excess(x) > 0)``, on either
  side of each other, ``excess`` monotone between them; returns the good
  end (a rate or a noise that meets the target)."""
  (g, f_g), (b, f_b) = good, bad
  side = 0
  while max(g, b) / min(g, b) > 1.0 + tolerance:
    x_g, x_b = math.log(g), math.log(b)
    x_lo, x_hi = min(x_g, x_b), max(x_g, x_b)
    if math.isfinite(f_g) and math.isfinite(f_b):
      x = x_b - f_b * (x_g - x_b) / (f_g - f_b)
      x = min(max(x, x_lo + 0.01 * (x_hi - x_lo)), x_hi - 0.01 * (x_hi - x_lo))
    else:
      x = 0.5 * (x_lo + x_hi)
    mid = math.exp(x)
    f_mid = excess(mid)
    if f_mid <= 0:
      g, f_g = mid, f_mid
      if side == 1:  # the good end moved twice: halve the bad end's excess
        f_b /= 2
      side = 1
    else:
      b, f_b = mid, f_mid
      if side == -1:
        f_g /= 2
      side = -1
  return g
