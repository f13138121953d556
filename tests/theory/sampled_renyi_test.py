"""Checks of the Poisson-sampled RDP bound against computations written
here: Renyi divergences summed from the discrete Gaussian's pmfs, and
dp_accounting's PLD where it answers."""

import math

import numpy as np
import pytest

from triehh.theory import discrete_gaussian
from triehh.theory import sampled_renyi


def _renyi(log_p: np.ndarray, log_q: np.ndarray, alpha: float) -> float:
  """D_alpha(P || Q) summed from log pmfs on one support."""
  return float(np.logaddexp.reduce(alpha * log_p + (1 - alpha) * log_q)
               / (alpha - 1))


def _sampled_pair(sigma: float, rate: float):
  """Log pmfs of one round without the user and with it Poisson-sampled
  at ``rate`` (the mixture of the shifted and the unshifted law)."""
  x = np.arange(-int(40 * sigma) - 40, int(40 * sigma) + 41).astype(float)
  log_z = np.logaddexp.reduce(-x**2 / (2 * sigma**2))
  without = -x**2 / (2 * sigma**2) - log_z
  shifted = -(x - 1)**2 / (2 * sigma**2) - log_z
  return without, np.logaddexp(math.log1p(-rate) + without,
                               math.log(rate) + shifted)


def _zhu_wang(sigma: float, rate: float, alpha: int) -> float:
  """Zhu and Wang's general bound for Poisson sampling (ICML 2019, Theorem
  6) at integer order alpha, on the discrete Gaussian's RDP l / (2
  sigma^2): a published upper bound, written here."""
  q, eps = rate, lambda l: l / (2 * sigma**2)
  total = ((1 - q)**(alpha - 1) * (alpha * q - q + 1)
           + math.comb(alpha, 2) * q**2 * (1 - q)**(alpha - 2)
           * math.exp(eps(2)))
  total += 3 * sum(math.comb(alpha, l) * (1 - q)**(alpha - l) * q**l
                   * math.exp((l - 1) * eps(l)) for l in range(3, alpha + 1))
  return math.log(total) / (alpha - 1)


@pytest.mark.parametrize("sigma", [0.7, 2.0, 6.0, 40.0])
@pytest.mark.parametrize("rate", [0.9, 0.25, 1 / 64])
def test_one_sampled_round_is_the_larger_divergence_from_the_pmfs(
    sigma, rate):
  without, sampled = _sampled_pair(sigma, rate)
  curve = sampled_renyi.round_curve(sigma, rate)
  for alpha in (2, 3, 5, 8, 16, 32, 64):
    computed = curve[sampled_renyi.ORDERS.index(alpha)]
    forward = _renyi(sampled, without, alpha)
    backward = _renyi(without, sampled, alpha)
    assert computed == pytest.approx(max(forward, backward), rel=1e-8,
                                     abs=1e-13)
    if alpha * (alpha - 1) / (2 * sigma**2) < 700:  # within a double
      assert computed <= _zhu_wang(sigma, rate, alpha) * (1 + 1e-9)
    # Each direction's own computation, not only the larger one.
    assert (sampled_renyi._log_backward(alpha, sigma, rate) / (alpha - 1)
            == pytest.approx(backward, rel=1e-8, abs=1e-13))
    assert (sampled_renyi._log_forward(alpha, sigma, rate) / (alpha - 1)
            == pytest.approx(forward, rel=1e-8, abs=1e-13))


def test_rounds_compose_by_adding_and_sampling_amplifies():
  one = sampled_renyi.renyi_curve([3.0], 0.125)
  two = sampled_renyi.renyi_curve([3.0, 5.0], 0.125)
  other = sampled_renyi.renyi_curve([5.0], 0.125)
  np.testing.assert_allclose(two, one + other, rtol=1e-12)
  # Below the unsampled rounds' 1 / (2 sigma^2) per order, by about q^2
  # at order 2.
  alpha = np.asarray(sampled_renyi.ORDERS, dtype=float)
  assert np.all(one <= alpha / (2 * 9.0) * (1 + 1e-12))
  assert one[0] < 0.02 * (2 / 18)


@pytest.mark.parametrize("delta", [1e-6, 1e-10, 1e-14])
@pytest.mark.parametrize("rate", [0.5, 0.1])
def test_never_below_the_pld_where_the_pld_answers(delta, rate):
  """The near-exact PLD is a floor no valid bound goes under; the bound
  stays within 1.6 times it here."""
  sigmas = [3.0] * 4
  bound = sampled_renyi.epsilon(sigmas, rate, delta)
  pld = discrete_gaussian.pld_epsilon(sigmas, rate, delta, 1e-4)
  assert pld <= bound <= 1.6 * pld


def test_the_conversion_is_the_zcdp_one_on_a_zcdp_curve():
  rho = 0.05
  curve = rho * np.asarray(sampled_renyi.ORDERS, dtype=float)
  for delta in (1e-8, 1e-18):
    eps = sampled_renyi.epsilon_from_curve(curve, delta)
    unsampled = discrete_gaussian.zcdp_epsilon([math.sqrt(0.5 / rho)], delta)
    # Integer orders only: at or a hair above the best real order's.
    assert unsampled * (1 - 1e-6) <= eps <= unsampled * 1.01
    # The closed form rho + 2 sqrt(rho ln(1/delta)) (Bun and Steinke
    # 2016, Proposition 1.3) bounds it.
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))


@pytest.mark.parametrize("rate", [0.0, 1.0, 1.5])
def test_a_rate_outside_zero_one_is_refused(rate):
  with pytest.raises(ValueError, match="sampling_rate"):
    sampled_renyi.round_curve(2.0, rate)


def _exact_delta(sigma: float, rate: float, rounds: int, eps: float) -> float:
  """delta(eps) of ``rounds`` Poisson-sampled discrete Gaussian rounds,
  the larger direction, summed exactly over the product of the rounds'
  supports in log space: sum of P(x) (1 - e^(eps - L(x))) where the
  privacy loss L(x) > eps."""
  without, sampled = _sampled_pair(sigma, rate)
  worst = 0.0
  for first, second in ((sampled, without), (without, sampled)):
    loss, mass = first - second, first
    losses, masses = loss, mass
    for _ in range(rounds - 1):
      losses = (losses[:, None] + loss[None, :]).ravel()
      masses = (masses[:, None] + mass[None, :]).ravel()
    above = losses > eps
    terms = masses[above] + np.log(-np.expm1(eps - losses[above]))
    if terms.size:
      worst = max(worst, float(np.exp(np.logaddexp.reduce(terms))))
  return worst


@pytest.mark.parametrize("sigma", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("rate", [0.5, 0.1])
@pytest.mark.parametrize("rounds", [1, 2])
def test_the_claimed_epsilon_meets_delta_by_the_exact_composition(
    sigma, rate, rounds):
  """Below the PLD's reach, end to end: the epsilon the accountant
  claims (the sampled RDP bound or the zCDP bound, the smaller) meets
  delta by the exact delta(eps) of the composed rounds, and a fifth less
  does not (the claim is not vacuous)."""
  for delta in (1e-16, 1e-20):
    claimed = discrete_gaussian.epsilon([sigma] * rounds, rate, delta, 1e-4)
    assert claimed < discrete_gaussian.zcdp_epsilon([sigma] * rounds, delta)
    assert _exact_delta(sigma, rate, rounds, claimed) <= delta
    assert _exact_delta(sigma, rate, rounds, 0.8 * claimed) > delta


@pytest.mark.parametrize("sigma", [0.7, 2.0, 6.0])
@pytest.mark.parametrize("rate", [0.9, 0.25, 1 / 64])
def test_replacing_one_is_the_divergence_over_both_candidates(sigma, rate):
  """REPLACE_ONE: the round's RDP equals D_alpha(M x P || P x M) summed
  here over both candidates' laws (the user's vote, if sampled, on the
  first candidate in one population and the second in the other)."""
  without, sampled = _sampled_pair(sigma, rate)
  first = (sampled[:, None] + without[None, :]).ravel()
  second = (without[:, None] + sampled[None, :]).ravel()
  curve = sampled_renyi.round_curve(sigma, rate, replace_one=True)
  for alpha in (2, 3, 5, 8, 16):
    assert curve[sampled_renyi.ORDERS.index(alpha)] == pytest.approx(
        _renyi(first, second, alpha), rel=1e-8, abs=1e-13)
  assert sampled_renyi.round_divergence(
      sigma, 1.0, 4, replace_one=True) == pytest.approx(4 / sigma**2,
                                                         rel=1e-12)
