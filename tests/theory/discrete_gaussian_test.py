"""Tests of triehh.theory.discrete_gaussian: the discrete law's accountant
against the hockey-stick divergence summed from its pmf."""

import math

import numpy as np
import pytest

from triehh.theory import discrete_gaussian
from triehh.theory import dp_events
from triehh.theory import sampled_renyi


def _hockey_stick(sigma: float, epsilon: float) -> float:
  """delta(epsilon) of one discrete Gaussian round, sensitivity 1, summed in
  the test from the pmf (normalised by a direct sum): ``sum_x max(0, P(x)
  - e^eps P(x - 1))``."""
  x = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61).astype(float)
  log_p = -x**2 / (2 * sigma**2)
  log_q = -(x - 1)**2 / (2 * sigma**2)
  log_z = np.logaddexp.reduce(log_p)
  return float(np.maximum(np.exp(log_p - log_z)
                          - math.exp(epsilon) * np.exp(log_q - log_z),
                          0.0).sum())


def _continuous_epsilon(sigma: float, delta: float) -> float:
  """The continuous Gaussian's exact epsilon at delta (Balle and Wang)."""
  from scipy import optimize  # pylint: disable=g-import-not-at-top
  from scipy import special  # pylint: disable=g-import-not-at-top
  mu = 1.0 / sigma

  def d(e):
    return special.ndtr(-e / mu + mu / 2) - math.exp(e) * special.ndtr(
        -e / mu - mu / 2)

  return optimize.brentq(lambda e: d(e) - delta, 0.0, 100.0, xtol=1e-12)


@pytest.mark.parametrize("sigma,delta", [(0.8, 1e-6), (1.0, 1e-3),
                                         (2.0, 1e-6), (5.0, 1e-10),
                                         (20.0, 1e-12)])
def test_one_round_meets_the_summed_hockey_stick_tightly(sigma, delta):
  computed = discrete_gaussian.epsilon([sigma], 1.0, delta, 1e-4)
  assert _hockey_stick(sigma, computed) <= delta
  assert _hockey_stick(sigma, computed - 2e-3 * max(1.0, computed)) > delta
  assert math.isclose(discrete_gaussian.hockey_stick_delta(sigma, computed),
                      _hockey_stick(sigma, computed), rel_tol=1e-9,
                      abs_tol=1e-300)


def test_the_continuous_gaussian_under_counts_the_discrete_law():
  """The figures the docstrings quote: at sigma = 2, delta = 1e-6, the
  continuous epsilon (2.254) leaves the discrete law a delta of 1.17e-6."""
  eps = _continuous_epsilon(2.0, 1e-6)
  assert eps == pytest.approx(2.254, abs=5e-4)
  assert _hockey_stick(2.0, eps) == pytest.approx(1.17e-6, rel=5e-3)
  assert discrete_gaussian.epsilon([2.0], 1.0, 1e-6, 1e-4) > eps


@pytest.mark.parametrize("sigma", [0.5, 2.0, 7.0])
def test_the_zcdp_bound_holds_and_is_looser(sigma):
  for delta in (1e-6, 1e-12):
    bound = discrete_gaussian.zcdp_epsilon([sigma], delta)
    assert _hockey_stick(sigma, bound) <= delta
    assert bound >= discrete_gaussian.pld_epsilon([sigma], 1.0, delta, 1e-4)
  assert math.isfinite(discrete_gaussian.epsilon([sigma] * 3, 1.0, 1e-30,
                                                 1e-4))


@pytest.mark.parametrize("sigma", [0.3, 1.0, 10.0, 300.0])
def test_the_truncated_mass_is_negligible(sigma):
  assert 0.0 <= discrete_gaussian.truncated_mass(sigma) < 1e-58


def test_the_event_composes_in_the_project_accountant():
  event = dp_events.DiscreteGaussianDpEvent(3.0, 0.5)
  accountant = dp_events.PLDAccountant(value_discretization_interval=1e-4)
  accountant.compose(event, 4)
  assert accountant.get_epsilon(1e-10) == pytest.approx(
      discrete_gaussian.epsilon([3.0] * 4, 0.5, 1e-10, 1e-4), rel=1e-3)
  with pytest.raises(ValueError, match="sampling_rate"):
    dp_events.DiscreteGaussianDpEvent(3.0, 1.5)


def _renyi(log_p: np.ndarray, log_q: np.ndarray, alpha: float) -> float:
  """D_alpha(P || Q) summed in the test from log pmfs on one support."""
  return float(np.logaddexp.reduce(alpha * log_p + (1 - alpha) * log_q)
               / (alpha - 1))


@pytest.mark.parametrize("sigma", [0.7, 2.0, 6.0])
@pytest.mark.parametrize("rate", [0.9, 0.25, 1 / 64])
def test_a_sampled_round_keeps_the_unsampled_rounds_zcdp(sigma, rate):
  """The module's claim, checked from the pmfs: a Poisson-sampled round
  (the user's vote in the sum with probability q) has Renyi divergence at
  most alpha / (2 sigma^2) from the round without the user, both ways, so
  the unsampled zCDP bound holds for it; and the bound is not loose by
  much at q near 1."""
  x = np.arange(-int(40 * sigma) - 40, int(40 * sigma) + 41).astype(float)
  log_z = np.logaddexp.reduce(-x**2 / (2 * sigma**2))
  without = -x**2 / (2 * sigma**2) - log_z
  shifted = -(x - 1)**2 / (2 * sigma**2) - log_z  # log P(X + 1 = x)
  sampled = np.logaddexp(math.log1p(-rate) + without,
                         math.log(rate) + shifted)
  for alpha in (1.5, 2.0, 8.0, 32.0):
    bound = alpha / (2 * sigma**2)
    assert _renyi(sampled, without, alpha) <= bound * (1 + 1e-9)
    assert _renyi(without, sampled, alpha) <= bound * (1 + 1e-9)
    # The unsampled round itself is at most the bound (CKS20), and a
    # sampled round at q = 0.9 comes within a few tenths of it at small
    # orders: the check sees the mixture, not zero.
    assert _renyi(shifted, without, alpha) <= bound * (1 + 1e-9)
  if rate == 0.9:
    assert _renyi(sampled, without, 2.0) > 0.5 * _renyi(shifted, without, 2.0)


def test_below_the_pld_a_sampled_run_takes_the_smaller_bound():
  sigmas = [6.0, 3.0, 3.0, 3.0]
  unsampled = discrete_gaussian.zcdp_epsilon(sigmas, 1e-18)
  assert discrete_gaussian.epsilon(sigmas, 1.0, 1e-18, 1e-4) == unsampled
  for rate in (0.5, 1 / 16):
    eps = discrete_gaussian.epsilon(sigmas, rate, 1e-18, 1e-4)
    assert eps == min(unsampled,
                      sampled_renyi.epsilon(sigmas, rate, 1e-18))
    assert eps < unsampled  # amplified
  # Near q = 1 the two agree.
  assert (discrete_gaussian.epsilon(sigmas, 0.999, 1e-18, 1e-4)
          == pytest.approx(unsampled, rel=1e-3))
  # The closed form rho + 2 sqrt(rho ln(1/delta)) (Bun and Steinke 2016,
  # Proposition 1.3), written here, bounds the unsampled one.
  rho = sum(0.5 / s**2 for s in sigmas)
  assert unsampled <= rho + 2 * math.sqrt(rho * math.log(1e18))
  # Above it, the sampled PLD, amplified, as before.
  assert (discrete_gaussian.epsilon(sigmas, 0.5, 1e-12, 1e-4)
          < discrete_gaussian.epsilon(sigmas, 1.0, 1e-12, 1e-4))


def _log_pair(sigma: float, rate: float):
  """Log pmfs of a candidate's noisy sum without the user's vote and with
  it, the user Poisson-sampled at ``rate`` (1: always)."""
  x = np.arange(-int(40 * sigma) - 40, int(40 * sigma) + 41).astype(float)
  log_z = np.logaddexp.reduce(-x**2 / (2 * sigma**2))
  without = -x**2 / (2 * sigma**2) - log_z
  shifted = -(x - 1)**2 / (2 * sigma**2) - log_z
  if rate >= 1.0:
    return without, shifted
  return without, np.logaddexp(math.log1p(-rate) + without,
                               math.log(rate) + shifted)


def _replace_one_delta(sigma: float, rate: float, eps: float) -> float:
  """delta(eps) of one round when a user's vote moves from candidate a to
  candidate b, summed here over both candidates' noisy sums: one
  population's law is ``M(x_a) P(x_b)``, the other's ``P(x_a) M(x_b)``
  (the user, if sampled, votes for a in one and for b in the other); the
  pair is symmetric, so one direction."""
  without, with_vote = _log_pair(sigma, rate)
  gain = with_vote - without
  losses = (gain[:, None] - gain[None, :]).ravel()
  masses = (with_vote[:, None] + without[None, :]).ravel()
  above = losses > eps
  terms = masses[above] + np.log(-np.expm1(eps - losses[above]))
  return float(np.exp(np.logaddexp.reduce(terms))) if terms.size else 0.0


@pytest.mark.parametrize("sigma,rate", [(1.0, 0.5), (2.0, 1.0), (2.0, 0.2),
                                        (4.0, 0.5), (3.0, 1.0)])
@pytest.mark.parametrize("delta", [1e-6, 1e-10, 1e-16, 1e-20])
def test_replacing_one_meets_the_two_candidates_summed_delta(sigma, rate,
                                                             delta):
  """REPLACE_ONE, one round: the claimed epsilon (the PLD's at delta >=
  1e-15, else the zCDP or sampled RDP bound's) meets delta by the delta
  summed here over both candidates' laws, is not vacuous (tight for the
  PLD, within a fifth for the others), and exceeds the add/remove
  epsilon."""
  claimed = discrete_gaussian.epsilon([sigma], rate, delta, 1e-4,
                                      replace_one=True)
  assert _replace_one_delta(sigma, rate, claimed) <= delta
  slack = (2e-3 * max(1.0, claimed) if delta >= 1e-15 else 0.2 * claimed)
  assert _replace_one_delta(sigma, rate, claimed - slack) > delta
  assert claimed > discrete_gaussian.epsilon([sigma], rate, delta, 1e-4)
