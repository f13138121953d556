"""Tests of triehh.theory.noisy_trie: its accountant against independent
computations, its calibration, and its parameters."""

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest
from scipy import optimize
from scipy import special
from scipy import stats

from triehh.theory import noisy_trie
from triehh.theory import pld
from triehh.theory.adjacency import Adjacency


def _gaussian_delta(mu: float, epsilon: float) -> float:
  """delta(epsilon) of the Gaussian mechanism of sensitivity / sigma = mu
  (Balle and Wang, ICML 2018, Theorem 8), in logs for small deltas."""
  a = special.log_ndtr(-epsilon / mu + mu / 2)
  b = epsilon + special.log_ndtr(-epsilon / mu - mu / 2)
  return math.exp(a) * -math.expm1(b - a)


def _gaussian_epsilon(mu: float, delta: float) -> float:
  return optimize.brentq(lambda e: _gaussian_delta(mu, e) - delta, 0.0, 200.0,
                         xtol=1e-12)


@pytest.mark.parametrize("sigma,levels,delta", [
    (5.769, 11, 1e-12), (21.76, 11, 1e-12), (2.0, 4, 1e-6), (1.0, 1, 1e-3)])
def test_without_sampling_the_levels_are_one_gaussian(sigma, levels, delta):
  # L Gaussians of sigma compose to one of sigma / sqrt(L); the PLD is
  # pessimistic and within its discretisation of the exact epsilon.
  params = noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=levels,
                                      false_positive_rate=1e-3)
  mu = math.sqrt(levels) / sigma
  exact = _gaussian_epsilon(mu, delta)
  computed = noisy_trie.epsilon(params, delta)
  assert exact - 1e-6 <= computed <= exact + 2e-3 * max(1.0, exact)
  assert _gaussian_delta(mu, computed) <= delta * (1 + 1e-6)
  # dp_accounting's PLD of the composed rounds, pessimistic: not below.
  assert _pld_epsilon([sigma] * levels, delta) >= computed - 1e-9


def _pld_epsilon(sigmas, delta):
  accountant = dp_accounting.pld.PLDAccountant(
      dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
      value_discretization_interval=1e-4)
  for sigma in sigmas:
    accountant.compose(dp_accounting.GaussianDpEvent(sigma))
  return accountant.get_epsilon(delta)


@pytest.mark.parametrize("delta", [1e-16, 1e-18, 1e-30])
def test_without_sampling_epsilon_is_exact_past_the_pld(delta):
  # Below ~1e-15 the PLD accountant answers inf; the closed form still
  # meets delta, tightly (epsilon 1e-6 smaller does not).
  params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=6,
                                      false_positive_rate=1e-3)
  computed = noisy_trie.epsilon(params, delta)
  mu = math.sqrt(6) / 4.0
  assert math.isfinite(computed)
  assert _gaussian_delta(mu, computed) <= delta
  assert _gaussian_delta(mu, computed - 1e-6) > delta
  assert noisy_trie.epsilon(params, delta) > noisy_trie.epsilon(params, 1e-12)


def test_subsampled_runs_refuse_a_delta_past_the_pld():
  params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=6,
                                      sampling_rate=0.5,
                                      false_positive_rate=1e-3)
  with pytest.raises(ValueError, match="sampling rate 1"):
    noisy_trie.epsilon(params, 1e-18)
  # Calibration keeps to q = 1 there, and meets the target.
  calibrated = noisy_trie.calibrate(6, 4.0, 1e-18)
  assert calibrated.sampling_rate == 1.0
  assert noisy_trie.epsilon(calibrated, 1e-18) <= 4.0


def _subsampled_loss(sigma: float, rate: float, grid: float,
                     remove: bool) -> pld.LossDistribution:
  """The loss of one level's dominating pair, discretised from the
  Gaussians' CDFs: REMOVE (P = (1 - q) N(0, s^2) + q N(1, s^2) against Q =
  N(0, s^2), under P) or ADD (Q against P, under Q). Each cell of x takes
  its largest loss, rounded up to the grid (pessimistic)."""
  edges = np.linspace(-40 * sigma, 1 + 40 * sigma, 400_001)
  cdf0 = special.ndtr(edges / sigma)
  cdf1 = special.ndtr((edges - 1) / sigma)
  mass_q = np.diff(cdf0)
  mass_p = (1 - rate) * mass_q + rate * np.diff(cdf1)
  loss = np.log1p(rate * np.expm1((2 * edges - 1) / (2 * sigma**2)))
  if remove:  # loss increases in x: a cell's largest is at its right edge
    cells, mass = np.ceil(loss[1:] / grid - 1e-9), mass_p
    tail = (1 - rate) * (1 - cdf0[-1]) + rate * (1 - cdf1[-1])
    low_tail = (1 - rate) * cdf0[0] + rate * cdf1[0]
  else:
    cells, mass = np.ceil(-loss[:-1] / grid - 1e-9), mass_q
    tail, low_tail = cdf0[0], 1 - cdf0[-1]
  cells = cells.astype(np.int64)
  lower = int(cells.min())
  probs = np.bincount(cells - lower, weights=mass)
  probs[0] += low_tail  # beyond the grid, losses below the lowest kept
  return pld.LossDistribution(grid, lower, probs, float(tail))


@pytest.mark.parametrize("sigma,rate,levels,delta", [
    (3.0, 0.5, 11, 1e-12), (6.0, 0.1, 11, 1e-10), (1.5, 0.3, 4, 1e-6)])
def test_subsampled_gaussian_matches_a_direct_composition(sigma, rate, levels,
                                                          delta):
  # The dominating pair of the subsampled Gaussian, discretised from the
  # normal CDFs and composed by direct convolution (triehh.theory.pld),
  # both directions. Its grid g makes it pessimistic by at most levels * g
  # in epsilon: delta(e + levels * g) <= true delta(e) <= delta(e). So the
  # accountant's epsilon meets its delta there, and is tight (3 % less
  # epsilon does not).
  grid = 5e-4
  params = noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=levels,
                                      sampling_rate=rate,
                                      false_positive_rate=1e-3)
  computed = noisy_trie.epsilon(params, delta)
  both = pld.TwoSided(*(
      _subsampled_loss(sigma, rate, grid, remove).trimmed(1e-18).compose(
          levels) for remove in (True, False)))
  assert both.delta(computed + levels * grid) <= delta
  assert both.delta(computed * 0.97 + levels * grid) > delta


@pytest.mark.parametrize("rate", [1.0, 0.5, 0.1])
def test_pld_epsilon_is_below_the_rdp_bound(rate):
  params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=11,
                                      sampling_rate=rate,
                                      false_positive_rate=1e-3)
  rdp = dp_accounting.rdp.RdpAccountant()
  rdp.compose(noisy_trie.dp_event(params))
  pld_epsilon = noisy_trie.epsilon(params, 1e-12)
  assert pld_epsilon <= rdp.get_epsilon(1e-12)
  assert pld_epsilon >= 0.85 * rdp.get_epsilon(1e-12)  # RDP is not far off


def test_sampling_amplifies():
  eps = [noisy_trie.epsilon(noisy_trie.NoisyTrieParams(
      sigma=4.0, num_levels=11, sampling_rate=q, false_positive_rate=1e-3),
                            1e-12) for q in (1.0, 0.5, 0.1)]
  assert eps[0] > eps[1] > eps[2] > 0


def test_dp_event_is_levels_of_the_subsampled_gaussian():
  params = noisy_trie.NoisyTrieParams(sigma=3.0, num_levels=7,
                                      sampling_rate=0.25,
                                      false_positive_rate=1e-4)
  assert noisy_trie.dp_event(params) == dp_accounting.SelfComposedDpEvent(
      dp_accounting.PoissonSampledDpEvent(
          0.25, dp_accounting.GaussianDpEvent(3.0)), 7)
  full = noisy_trie.NoisyTrieParams(sigma=3.0, num_levels=7,
                                    false_positive_rate=1e-4)
  assert noisy_trie.dp_event(full) == dp_accounting.SelfComposedDpEvent(
      dp_accounting.GaussianDpEvent(3.0), 7)


@pytest.mark.parametrize("epsilon", [4.0, 1.0])
def test_calibration_meets_the_target_with_the_smallest_sigma(epsilon):
  params = noisy_trie.calibrate(11, epsilon, 1e-12, false_positive_rate=1e-5)
  assert noisy_trie.epsilon(params, 1e-12) <= epsilon
  smaller = noisy_trie.NoisyTrieParams(
      sigma=params.sigma * 0.99, num_levels=11,
      sampling_rate=params.sampling_rate, false_positive_rate=1e-5)
  assert noisy_trie.epsilon(smaller, 1e-12) > epsilon
  assert params.threshold == pytest.approx(
      params.sigma * stats.norm.isf(1e-5), rel=1e-9)
  assert params.false_positive_rate == pytest.approx(1e-5, rel=1e-9)


def test_calibration_picks_the_rate_with_the_smallest_count():
  rates = (1.0, 0.2)
  params = noisy_trie.calibrate(11, 4.0, 1e-12, sampling_rates=rates)
  counts = {q: noisy_trie.smallest_sigma(11, 4.0, 1e-12, sampling_rate=q) / q
            for q in rates}
  assert params.sampling_rate == min(counts, key=counts.get)
  only = noisy_trie.calibrate(11, 4.0, 1e-12, sampling_rates=(0.2,))
  assert only.sampling_rate == 0.2
  assert noisy_trie.epsilon(only, 1e-12) <= 4.0
  assert only.smallest_count > params.smallest_count


def test_params_derive_threshold_and_rate_from_each_other():
  by_rate = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3,
                                       false_positive_rate=0.01)
  assert by_rate.threshold == pytest.approx(2.0 * 2.3263478740, rel=1e-9)
  by_tau = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3,
                                      threshold=by_rate.threshold)
  assert by_tau.false_positive_rate == pytest.approx(0.01, rel=1e-9)
  assert by_tau == by_rate
  with pytest.raises(ValueError, match="disagree"):
    noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3, threshold=1.0,
                               false_positive_rate=0.01)
  with pytest.raises(ValueError, match="threshold or false_positive_rate"):
    noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3)


@pytest.mark.parametrize("field,value", [
    ("sigma", 0.0), ("sigma", math.inf), ("num_levels", 0),
    ("sampling_rate", 0.0), ("sampling_rate", 1.5),
    ("false_positive_rate", 1.0), ("chars_per_level", 0)])
def test_params_are_checked_at_construction(field, value):
  args = dict(sigma=1.0, num_levels=2, false_positive_rate=0.1)
  args[field] = value
  with pytest.raises(ValueError, match=field):
    noisy_trie.NoisyTrieParams(**args)


def test_rounds_for_counts_the_end_symbol():
  assert noisy_trie.rounds_for(10) == 11
  assert noisy_trie.rounds_for(10, 2) == 6
  assert noisy_trie.rounds_for(10, 11) == 1
  assert noisy_trie.rounds_for(10, 20) == 1


def test_guarantee_names_both_adjacencies_and_no_n():
  params = noisy_trie.NoisyTrieParams(sigma=5.8, num_levels=11,
                                      false_positive_rate=1e-5)
  guarantee = noisy_trie.guarantee(params, 1e-12)
  assert guarantee.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                                   Adjacency.REPLACE_SPECIAL)
  assert guarantee.two_sided and guarantee.n_source == "unused"
  assert not guarantee.holds_for(Adjacency.REPLACE_ONE)
  text = guarantee.describe()
  for part in ("ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL", "both directions",
               "free of n"):
    assert part in text
  assert guarantee.epsilon == noisy_trie.epsilon(params, 1e-12)


@pytest.mark.parametrize("sigma,multipliers,levels,delta", [
    (3.913, (4.0,), 6, 1e-12), (5.0, (8.0, 4.0, 2.0), 11, 1e-12),
    (2.0, (0.5, 3.0), 4, 1e-6)])
def test_rounds_of_different_noise_are_one_gaussian(sigma, multipliers,
                                                     levels, delta):
  # Gaussians of sigma_r compose to one of mu^2 = sum 1 / sigma_r^2 (an
  # independent, closed-form check of the composed PLD).
  params = noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=levels,
                                      false_positive_rate=1e-3,
                                      noise_multipliers=multipliers)
  mu = math.sqrt(sum(1 / s**2 for s in params.sigmas))
  exact = _gaussian_epsilon(mu, delta)
  computed = noisy_trie.epsilon(params, delta)
  assert exact - 1e-6 <= computed <= exact + 2e-3 * max(1.0, exact)
  assert _pld_epsilon(params.sigmas, delta) >= computed - 1e-9
  # More noise on a round than the uniform run: a smaller epsilon.
  uniform = noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=levels,
                                       false_positive_rate=1e-3)
  if min(multipliers) >= 1.0:
    assert computed < noisy_trie.epsilon(uniform, delta)


def test_a_round_has_its_own_noise_and_threshold_at_one_rate():
  params = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=4,
                                      false_positive_rate=1e-5,
                                      noise_multipliers=(4.0, 2.0))
  assert params.sigmas == (8.0, 4.0, 2.0, 2.0)
  first, last = params.at_round(0), params.at_round(3)
  assert (first.sigma, last.sigma) == (8.0, 2.0)
  assert first.threshold == pytest.approx(4 * last.threshold, rel=1e-12)
  for r in range(4):
    assert params.at_round(r).false_positive_rate == pytest.approx(1e-5,
                                                                   rel=1e-9)
    assert params.at_round(r).noise_multipliers == ()
  assert noisy_trie.dp_event(params) == dp_accounting.ComposedDpEvent(
      [dp_accounting.GaussianDpEvent(s) for s in (8.0, 4.0, 2.0, 2.0)])
  plain = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=4,
                                     false_positive_rate=1e-5)
  assert plain.at_round(2) is plain


def test_calibration_with_multipliers_meets_the_target_tightly():
  params = noisy_trie.calibrate(6, 4.0, 1e-12, false_positive_rate=1e-5,
                                chars_per_level=2, noise_multipliers=(4.0,),
                                sampling_rates=(1.0,))
  assert params.noise_multipliers == (4.0,)
  assert noisy_trie.epsilon(params, 1e-12) <= 4.0
  smaller = dataclasses.replace(params, sigma=params.sigma * 0.99,
                                threshold=None)
  assert noisy_trie.epsilon(smaller, 1e-12) > 4.0
  # The later rounds' noise is below the uniform calibration's.
  uniform = noisy_trie.calibrate(6, 4.0, 1e-12, false_positive_rate=1e-5,
                                 chars_per_level=2, sampling_rates=(1.0,))
  assert params.at_round(5).sigma < uniform.sigma < params.at_round(0).sigma


@pytest.mark.parametrize("multipliers,match", [
    ((0.0,), r"noise_multipliers\[0\]"), ((1.0, math.inf), "finite"),
    ((2.0,) * 5, "more than the 4 rounds"), ("4", "sequence")])
def test_multipliers_are_checked_at_construction(multipliers, match):
  with pytest.raises(ValueError, match=match):
    noisy_trie.NoisyTrieParams(sigma=1.0, num_levels=4,
                               false_positive_rate=0.1,
                               noise_multipliers=multipliers)


def test_a_huge_epsilon_stops_at_the_least_sigma(monkeypatch):
  # The search went down to sigma 1e-3 (minutes), and a rival rate's sigma
  # below it ended in dp_accounting's "deltas are not in non-increasing
  # order".
  built = []
  real = noisy_trie._epsilon  # pylint: disable=protected-access
  monkeypatch.setattr(noisy_trie, "_epsilon",
                      lambda sigma, *a: built.append(sigma) or real(sigma, *a))
  params = noisy_trie.calibrate(11, 1e6, 1e-8)
  assert noisy_trie.LEAST_SIGMA <= params.sigma < 2 * noisy_trie.LEAST_SIGMA
  assert min(built) >= noisy_trie.LEAST_SIGMA / 2


@pytest.mark.parametrize("call, match", [
    (lambda: noisy_trie.threshold_for(1.0, 2.0), "false_positive_rate"),
    (lambda: noisy_trie.threshold_for(-1.0, 0.1), "sigma"),
    (lambda: noisy_trie.calibrate(11, 4.0, 1e-8, discretization=-1),
     "discretization"),
    (lambda: noisy_trie.calibrate(11, 4.0, 1e-8, discretization=math.nan),
     "discretization")])
def test_arguments_outside_their_range_are_named(call, match):
  with pytest.raises(ValueError, match=match):
    call()
