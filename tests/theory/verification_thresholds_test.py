"""Tests of triehh.theory.verification_thresholds: the false-word budget
kept (the thresholds' tails summed here from the pmf), the even split when
every word measured alike, higher thresholds for words measured low, a
Monte Carlo check of the false words released, and the same over the sum
of two draws (two servers' noise)."""

import math

import numpy as np
import pytest

from triehh.core import discrete_noise
from triehh.theory import discrete_laplace
from triehh.theory import noise_laws
from triehh.theory import verification_thresholds as vt


def _tail_from_pmf(law: str, scale: float, tau: int) -> float:
  """P[N >= tau], the pmf summed over a wide window (written here)."""
  x = np.arange(tau, tau + int(200 * scale) + 200)
  if law == "laplace":
    p = math.exp(-1.0 / scale)
    return float(((1 - p) / (1 + p) * np.exp(-np.abs(x) / scale)).sum())
  grid = np.arange(-int(40 * scale) - 40, int(40 * scale) + 41)
  norm = np.exp(-grid.astype(float)**2 / (2 * scale**2)).sum()
  return float(np.exp(-x.astype(float)**2 / (2 * scale**2)).sum() / norm)


@pytest.mark.parametrize("law,scale,d_scale", [("laplace", 1.2, 2.4),
                                               ("gaussian", 2.9, 5.8)])
def test_tails_sum_to_at_most_the_false_words(law, scale, d_scale):
  rng = np.random.default_rng(3)
  values = np.concatenate([rng.integers(4, 12, 3000),
                           rng.integers(12, 400, 700)])
  scales = np.where(rng.random(values.size) < 0.2, 2 * d_scale, d_scale)
  taus = vt.thresholds(law, scale, values, scales, 1.0)
  total = math.fsum(_tail_from_pmf(law, scale, int(t)) for t in taus)
  assert total <= 1.0 + 1e-9
  # The budget is spent, not hoarded: one step lower on the words at the
  # least threshold would exceed it... or they are already at the rate 1/2.
  assert total > 0.5
  assert vt.spent(law, scale, taus) == pytest.approx(total, rel=1e-6)


def test_words_measured_alike_take_the_even_split():
  values = np.full(5000, 9)
  taus = vt.thresholds("laplace", 1.2, values, np.full(5000, 2.4), 1.0)
  assert np.unique(taus).size == 1
  even = discrete_laplace.threshold(1.2, 1.0 / 5000)
  assert int(taus[0]) == even


def test_low_words_get_higher_thresholds_and_high_words_the_top():
  values = np.array([5] * 2000 + [10] * 2000 + [10_000] * 10)
  taus = vt.thresholds("laplace", 1.2, values, np.full(values.size, 2.4),
                       1.0)
  even = discrete_laplace.threshold(1.2, 1.0 / values.size)
  assert taus[0] > even > taus[2000]  # measured low: higher; near: lower
  top = discrete_laplace.threshold(1.2, vt.TOP_RATE)
  assert taus[-1] == top  # far above: the top threshold, next to no budget


def test_false_words_released_by_noise_alone_within_budget():
  # Every word of V held by no one: the words released are the noise's
  # passes at each threshold; over runs, their mean is at most F (here
  # the budget is spent on words that all have count 0).
  rng = np.random.default_rng(11)
  values = rng.integers(5, 16, 400)
  taus = vt.thresholds("laplace", 1.0, values, np.full(values.size, 2.0),
                       2.0)
  noise = discrete_noise.discrete_laplace(rng, 1.0, (4000, values.size))
  released = (noise >= taus[None, :]).sum(axis=1)
  mean = released.mean()
  assert mean <= 2.0 + 4 * released.std() / math.sqrt(released.size)
  assert mean == pytest.approx(vt.spent("laplace", 1.0, taus), rel=0.1)


def test_mismatched_inputs_are_named():
  with pytest.raises(ValueError, match="discovery scales"):
    vt.thresholds("laplace", 1.0, [5, 6], [2.0], 1.0)
  with pytest.raises(ValueError, match="noise law"):
    noise_laws.pmf("cauchy", 1.0, np.arange(3))


def _pair_tail_from_pmf(scale: float, tau: int) -> float:
  """P[Z_0 + Z_1 >= tau] for two discrete Laplace draws: the double sum
  over a wide window (written here)."""
  x = np.arange(-int(120 * scale) - 60, int(120 * scale) + 61)
  p = math.exp(-1.0 / scale)
  one = (1 - p) / (1 + p) * np.exp(-np.abs(x) / scale)
  both = np.add.outer(x, x)
  return float((np.outer(one, one) * (both >= tau)).sum())


def test_two_servers_noise_keeps_the_budget_in_its_own_law():
  rng = np.random.default_rng(5)
  values = np.concatenate([rng.integers(3, 14, 2000),
                           rng.integers(14, 300, 300)])
  taus = vt.thresholds("laplace", 0.75, values, np.full(values.size, 1.5),
                       1.0, parts=2)
  distinct, counts = np.unique(taus, return_counts=True)
  total = math.fsum(c * _pair_tail_from_pmf(0.75, int(t))
                    for t, c in zip(distinct, counts))
  assert 0.5 < total <= 1.0 + 1e-9
  assert vt.spent("laplace", 0.75, taus, parts=2) == pytest.approx(
      total, rel=1e-6)
  # One server's law would spend too little per threshold: its thresholds
  # are lower, and over two servers' noise they exceed the budget.
  single = vt.thresholds("laplace", 0.75, values, np.full(values.size, 1.5),
                         1.0)
  assert vt.spent("laplace", 0.75, single, parts=2) > 1.5


def test_no_words_no_thresholds():
  assert vt.thresholds("gaussian", 2.0, [], [], 1.0).size == 0
