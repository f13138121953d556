"""Tests of triehh.theory._search: the theory's shared searches."""

import math

import pytest

from triehh.theory import _search


@pytest.mark.parametrize("root", [1e-6, 0.37, 42.0])
@pytest.mark.parametrize("increasing", [True, False])
def test_regula_falsi_returns_the_good_end_near_the_root(root, increasing):
  # An excess <= 0 below the root (a rate) or above it (a noise).
  sign = 1.0 if increasing else -1.0
  calls = []

  def excess(x):
    calls.append(x)
    return sign * math.log(x / root)

  good, bad = (root / 100, root * 100) if increasing else (
      root * 100, root / 100)
  got = _search.log_regula_falsi(excess, (good, excess(good)),
                                 (bad, excess(bad)), 1e-6)
  assert excess(got) <= 0
  assert abs(got / root - 1) <= 1e-6
  assert len(calls) < 40  # the interpolation, not a bisection's 50 steps


def test_an_infinite_excess_is_bisected():
  def excess(x):
    return math.inf if x > 2.0 else (-math.inf if x < 1.0 else x - 1.5)

  got = _search.log_regula_falsi(excess, (1e-3, -math.inf), (1e3, math.inf),
                                 1e-9)
  assert got <= 1.5 and got == pytest.approx(1.5, rel=1e-8)
