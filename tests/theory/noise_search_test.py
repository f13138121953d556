"""Tests of triehh.theory.noise_search: the least noise meeting a target."""

import math

from triehh.theory import noise_search


def _at_least(target):
  return lambda x: x >= target


def test_log_bisect_returns_the_end_that_meets_within_the_tolerance():
  found = noise_search.log_bisect(_at_least(3.7), 1.0, 8.0, 1e-6)
  assert 3.7 <= found <= 3.7 * (1 + 1e-6)


def test_smallest_brackets_from_one_above_and_below():
  for target in (1e-2, 0.3, 1.0, 5.0, 1234.5):
    found = noise_search.smallest(_at_least(target), 1e-4, floor=1e-6)
    assert target <= found <= target * (1 + 1e-4), target


def test_smallest_stops_halving_at_the_floor():
  # Everything meets the target: the bracket stops at the floor, and the
  # search returns a value near it, not below half of it.
  found = noise_search.smallest(lambda x: True, 1e-3, floor=0.1)
  assert 0.05 <= found <= 0.1


def test_smallest_is_none_when_nothing_up_to_the_ceiling_meets():
  tried = []

  def never(x):
    tried.append(x)
    return False

  assert noise_search.smallest(never, 1e-3, floor=0.0, ceiling=64.0) is None
  assert max(tried) == 64.0
  assert noise_search.smallest(_at_least(60.0), 1e-3, floor=0.0,
                               ceiling=64.0) > 59.9
  assert math.isfinite(noise_search.smallest(_at_least(60.0), 1e-3,
                                             floor=0.0))
