"""Tests of triehh.theory.discrete_laplace: one round's pure epsilon,
sampled and swapped, the rounds' sum, the calibrated scale and the
threshold, each against a computation written here (the pmf summed, or
dp_accounting's own PLD of the discrete Laplace)."""

import math

import dp_accounting
import numpy as np
import pytest

from triehh.theory import discrete_laplace


def _pmf(scale: float, x: np.ndarray) -> np.ndarray:
  """The discrete Laplace pmf, normalised in closed form."""
  p = math.exp(-1.0 / scale)
  return (1.0 - p) / (1.0 + p) * np.exp(-np.abs(x) / scale)


def _largest_log_ratio(scale: float, q: float, swap: bool) -> float:
  """The largest |log ratio| of a round's output laws on two neighbours,
  over outputs summed from the pmf: one candidate's sum with and without
  the user (sampled at q); ``swap``: two candidates, the vote moving."""
  x = np.arange(-60, 61)
  without = _pmf(scale, x)
  with_user = q * _pmf(scale, x - 1) + (1.0 - q) * without
  one = np.max(np.abs(np.log(with_user) - np.log(without)))
  if not swap:
    return float(one)
  # One coin puts the vote on sum a (one neighbour) or on sum b (the
  # other): the two laws on the pair (a, b), every pair of outputs.
  la, lb = np.meshgrid(x, x, indexing="ij")
  first = (q * _pmf(scale, la - 1) * _pmf(scale, lb)
           + (1.0 - q) * _pmf(scale, la) * _pmf(scale, lb))
  second = (q * _pmf(scale, la) * _pmf(scale, lb - 1)
            + (1.0 - q) * _pmf(scale, la) * _pmf(scale, lb))
  return float(np.max(np.abs(np.log(first) - np.log(second))))


@pytest.mark.parametrize("scale", [0.5, 1.1875, 4.0])
@pytest.mark.parametrize("q", [1.0, 0.5, 0.1])
def test_a_rounds_epsilon_is_its_largest_log_ratio(scale, q):
  assert discrete_laplace.round_epsilon(scale, q) == pytest.approx(
      _largest_log_ratio(scale, q, False), rel=1e-9)


@pytest.mark.parametrize("scale", [0.5, 2.0])
@pytest.mark.parametrize("q", [1.0, 0.5, 0.1])
def test_the_swap_is_its_largest_log_ratio(scale, q):
  assert discrete_laplace.round_epsilon(scale, q, True) == pytest.approx(
      _largest_log_ratio(scale, q, True), rel=1e-9)
  # Unsampled, twice the round's; sampled, less than twice.
  twice = 2.0 * discrete_laplace.round_epsilon(scale, q)
  assert discrete_laplace.round_epsilon(scale, q, True) <= twice * (
      1 + 1e-12)


def _dp_accounting_epsilon(scales, q: float, delta: float,
                           interval: float) -> float:
  """The rounds' epsilon by dp_accounting's own discrete Laplace PLD."""
  pld = None
  for scale in scales:
    one = dp_accounting.pld.privacy_loss_distribution.\
        from_discrete_laplace_mechanism(1.0 / scale, sensitivity=1,
                                        value_discretization_interval=interval,
                                        sampling_prob=q)
    pld = one if pld is None else pld.compose(one)
  return float(pld.get_epsilon_for_delta(delta))


@pytest.mark.parametrize("q", [1.0, 0.25])
def test_the_sum_bounds_dp_accountings_pld(q):
  scales = [4.75] + [2.375] * 7 + [1.1875]
  ours = discrete_laplace.epsilon(scales, q)
  interval = 1e-4
  # At delta 0 the PLD's epsilon is the largest loss, each round's rounded
  # up to the grid: ours within that.
  at_zero = _dp_accounting_epsilon(scales, q, 0.0, interval)
  assert abs(at_zero - ours) <= len(scales) * interval + 1e-9
  # At any delta the PLD can only find less.
  assert _dp_accounting_epsilon(scales, q, 1e-12, interval) <= ours + (
      len(scales) * interval)


def test_the_smallest_scale_meets_the_target_and_three_percent_less_fails():
  multipliers = [4.0] + [2.0] * 7 + [1.0]
  for q, swap in ((1.0, False), (0.5, False), (1.0, True)):
    b = discrete_laplace.smallest_scale(multipliers, 4.0, q, swap)
    assert discrete_laplace.epsilon([b * m for m in multipliers], q,
                                    swap) <= 4.0
    assert discrete_laplace.epsilon([0.97 * b * m for m in multipliers], q,
                                    swap) > 4.0
  # Unsampled, the closed form: sum_r 1 / (b m_r) = epsilon.
  b = discrete_laplace.smallest_scale(multipliers, 4.0)
  assert b == pytest.approx(sum(1.0 / m for m in multipliers) / 4.0,
                            rel=1e-8)


@pytest.mark.parametrize("scale", [0.3, 1.1875, 9.5])
@pytest.mark.parametrize("rate", [0.5, 0.08, 1e-4, 1e-9])
def test_the_threshold_is_the_least_whose_summed_tail_is_within_rate(scale,
                                                                     rate):
  tau = discrete_laplace.threshold(scale, rate)
  x = np.arange(-4000, 4001)
  pmf = _pmf(scale, x)

  def tail(t):
    return float(pmf[x >= t].sum())

  assert tail(tau) <= rate * (1 + 1e-9)
  assert tau == 1 or tail(tau - 1) > rate


@pytest.mark.parametrize("scale", [0.3, 2.375])
@pytest.mark.parametrize("rate", [0.6, 0.99, 1.0])
def test_the_least_threshold_holds_for_rates_above_a_half(scale, rate):
  tau = discrete_laplace.least_threshold(scale, rate)
  x = np.arange(-4000, 4001)
  pmf = _pmf(scale, x)
  lowest = -math.ceil(40 * scale) - 2
  assert tau <= 1 and float(pmf[x >= tau].sum()) <= rate * (1 + 1e-9)
  assert tau == lowest or float(pmf[x >= tau - 1].sum()) > rate


def test_bad_values_are_named():
  with pytest.raises(ValueError, match="rate"):
    discrete_laplace.threshold(1.0, 0.7)
  with pytest.raises(ValueError, match="scale"):
    discrete_laplace.round_epsilon(0.0)
  with pytest.raises(ValueError, match="epsilon_target"):
    discrete_laplace.smallest_scale([1.0], -1.0)
