"""Tests of the two-sided accountant of Poisson-sampled TrieHH."""

import dataclasses
import decimal
import math

import numpy as np
from absl.testing import absltest
from absl.testing import parameterized
import pytest
from scipy import special
from scipy import stats

from triehh.theory import pld
from triehh.theory import poisson
from triehh.theory import poisson_calibration


def _pair(rate: float, theta: int, k: int) -> tuple[np.ndarray, np.ndarray]:
  """One level's exact two-point laws (pass, fail) with k other holders."""
  with_user = stats.binom.sf(theta - 1, k + 1, rate)  # X + B >= theta
  without = stats.binom.sf(theta - 1, k, rate) if k else 0.0
  return (np.array([with_user, 1 - with_user]),
          np.array([without, 1 - without]))


def _hockey(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
  return float(np.maximum(p - math.exp(epsilon) * q, 0.0).sum())


class LevelLossTest(parameterized.TestCase):

  @parameterized.parameters((0.05, 5), (0.3, 2), (0.13, 23), (1e-4, 12),
                            (0.6, 1))
  def test_masses_sum_to_one(self, rate, theta):
    one = poisson.level_loss(rate, theta)
    # Cells are sums of binomial tails, exact to about 1e-12.
    self.assertAlmostEqual(one.forward.probs.sum() + one.forward.infinity,
                           1.0, delta=1e-11)
    self.assertAlmostEqual(one.reverse.probs.sum() + one.reverse.infinity,
                           1.0, delta=1e-11)
    self.assertAlmostEqual(one.forward.infinity, rate**theta, places=15)

  @parameterized.parameters((0.05, 4), (0.3, 3), (0.13, 12), (0.5, 6))
  def test_dominates_every_pair_in_both_directions(self, rate, theta):
    # Step 3 of docs/privacy.md: the envelope's divergence is at least every
    # k's, at every epsilon, in both directions (up to the grid's rounding,
    # which only makes the envelope larger).
    one = poisson.level_loss(rate, theta, 1e-4)
    ks = list(range(0, 400)) + [1000, 5000]
    worst_forward = worst_reverse = 0.0
    for epsilon in (0.0, 0.01, 0.05, 0.2, 0.5, 1.0, 2.0):
      claimed_f = one.forward.delta(epsilon)
      claimed_r = one.reverse.delta(epsilon)
      for k in ks:
        p, q = _pair(rate, theta, k)
        f, r = _hockey(p, q, epsilon), _hockey(q, p, epsilon)
        self.assertLessEqual(f, claimed_f * (1 + 1e-9) + 1e-15, (epsilon, k))
        self.assertLessEqual(r, claimed_r * (1 + 1e-9) + 1e-15, (epsilon, k))
        worst_forward = max(worst_forward, f / max(claimed_f, 1e-300))
        worst_reverse = max(worst_reverse, r / max(claimed_r, 1e-300))
    # The envelope is tight: some k comes close in each direction.
    self.assertGreater(worst_forward, 0.5)
    self.assertGreater(worst_reverse, 0.5)

  def test_without_the_lone_user_atom_a_pair_escapes(self):
    # The atom q^theta (u with exactly theta - 1 others) is what a pair with
    # k = theta - 1 needs at a large epsilon: the check above can fail.
    rate, theta = 0.2, 3
    one = poisson.level_loss(rate, theta, 1e-4)
    p, q = _pair(rate, theta, theta - 1)
    exact = _hockey(p, q, 20.0)
    self.assertAlmostEqual(exact, rate**theta, places=12)
    self.assertGreater(exact, one.forward.delta(20.0) - one.forward.infinity)
    self.assertLessEqual(exact, one.forward.delta(20.0) * (1 + 1e-9))

  @parameterized.parameters((0.05, 10), (0.3, 4))
  def test_reverse_loss_is_at_most_log_one_over_one_minus_rate(self, rate,
                                                               theta):
    one = poisson.level_loss(rate, theta)
    bound = -math.log1p(-rate)
    self.assertEqual(one.reverse.delta(bound + 2e-3), 0.0)
    self.assertGreater(one.reverse.delta(bound - 0.01), 0.0)


class GridLineNextToTheLowestLossTest(parameterized.TestCase):
  """A grid line within ~1e-8 of ln(1 - q) puts a cell's first k near 1e10,
  where scipy's binomial tails can be NaN; they are summed term by term."""

  @parameterized.product(cells=(100, 357), gap=(1e-13, 1e-9),
                         theta=(14, 25))
  def test_no_nan_and_delta_is_continuous_in_the_rate(self, cells, gap,
                                                      theta):
    # ln(1 - q) lies `gap` below the grid line -cells * d.
    d = poisson.DEFAULT_DISCRETIZATION
    rate = -math.expm1(-cells * d - gap)
    one = poisson.level_loss(rate, theta, d)
    for side in (one.forward, one.reverse):
      self.assertFalse(np.isnan(side.probs).any())
      self.assertAlmostEqual(side.probs.sum() + side.infinity, 1.0,
                             delta=1e-11)
    # The same delta as a rate whose grid line is far from the bottom, up
    # to the change of delta with the rate (under 3e-4 here).
    near = poisson.delta_for_epsilon(rate, theta, 3, 2.0)
    far = poisson.delta_for_epsilon(-math.expm1(-cells * d - 1e-6), theta,
                                     3, 2.0)
    self.assertGreater(near, 0.0)
    self.assertAlmostEqual(near / far, 1.0, delta=1e-3)

  @parameterized.parameters(
      # (x, trials, mean): the NaN case below, tails from 1e-34 to nearly
      # 1, and one where scipy's own bdtrc is 2e-7 off.
      (1, 17_063_484_642, 1.0170), (0, 10**10, 0.1), (13, 10**9, 4.0),
      (60, 10**9, 210.0), (399, 10**8, 320.2), (20, 10**11, 15.0))
  def test_tails_by_terms_are_exact(self, x, trials, mean):
    # An exact oracle: the lower tail's terms in 60-digit decimals.
    with decimal.localcontext() as context:
      context.prec = 60
      rate = mean / trials
      q = decimal.Decimal(rate)
      lower = sum(math.comb(trials, i) * q**i * (1 - q)**(trials - i)
                  for i in range(x + 1))
      upper = 1 - lower
    for lower_tail, want in ((True, lower), (False, upper)):
      got = poisson._tail_by_terms(x, np.array([trials]), rate,
                                   lower_tail=lower_tail)[0]
      self.assertAlmostEqual(got / float(want), 1.0, delta=1e-11,
                             msg=(x, trials, mean, lower_tail))

  def test_scipys_nan_tails_are_recomputed(self):
    # Trial counts at which scipy's bdtr and bdtrc return NaN.
    trials = np.array([17_063_484_642, 2_600_346_699, 10**12])
    rates = (5.960464477539063e-11, 1e-4, 0.3)
    for count, rate in zip(trials, rates):
      self.assertTrue(math.isnan(special.bdtr(1, count, rate)))
    lower = [float(poisson._binom_cdf(1, t, r)) for t, r in zip(trials, rates)]
    upper = [float(poisson._binom_sf(1, t, r)) for t, r in zip(trials, rates)]
    # The first is about Poisson(1.017)'s P[X <= 1]; the others underflow.
    mean = trials[0] * rates[0]
    self.assertAlmostEqual(lower[0], math.exp(-mean) * (1 + mean), delta=1e-9)
    self.assertAlmostEqual(lower[0] + upper[0], 1.0, delta=1e-14)
    self.assertEqual(lower[1:], [0.0, 0.0])
    self.assertEqual(upper[1:], [1.0, 1.0])

  def test_a_nan_direction_is_refused_not_dropped(self):
    one = poisson.level_loss(0.2, 5)
    broken = dataclasses.replace(one.reverse,
                                 probs=np.r_[one.reverse.probs[:-1], np.nan])
    for pair in (pld.TwoSided(one.forward, broken),
                 pld.TwoSided(broken, one.forward)):
      with self.assertRaisesRegex(FloatingPointError, "NaN"):
        pair.delta(0.0)


class RunLossTest(parameterized.TestCase):

  @parameterized.parameters((0.12, 22, 11, 1.0), (0.3, 5, 3, 2.0),
                            (0.0058, 15, 11, 0.06))
  def test_agrees_with_dp_accounting_above_its_floor(self, rate, theta,
                                                     levels, epsilon):
    ours = poisson.run_loss(rate, theta, levels, 1e-3)
    forward, reverse = poisson.dp_accounting_pld(rate, theta, 20000, 1e-3)
    theirs = max(
        forward.self_compose(levels).get_delta_for_epsilon(epsilon),
        reverse.self_compose(levels).get_delta_for_epsilon(epsilon))
    self.assertGreater(theirs, 1e-13)  # above dp_accounting's FFT floor
    self.assertAlmostEqual(ours.delta(epsilon) / theirs, 1.0, delta=0.02)

  def test_the_searchs_delta_is_run_loss_delta_bit_for_bit(self):
    # _run_delta skips the reverse composition where no reverse loss can
    # exceed epsilon; it must return the very same float either way.
    rng = np.random.default_rng(7)
    skipped = 0
    for _ in range(20):
      rate = float(10**rng.uniform(-3, -0.2))
      theta, levels = int(rng.integers(2, 40)), int(rng.integers(1, 12))
      epsilon = float(rng.choice([0.5, 1.0, 2.0, 4.0, 8.0]))
      budget = poisson.trimming_budget(1e-10, levels)
      for grid in (1e-2, 1e-3):
        loss = poisson.run_loss(rate, theta, levels, grid, budget)
        got = poisson.run_delta(rate, theta, levels, grid, budget, epsilon)
        self.assertEqual(got, loss.delta(epsilon),
                         (rate, theta, levels, epsilon, grid))
        reverse = poisson.level_loss(rate, theta, grid).reverse.trimmed(budget)
        largest = reverse.composed_largest_loss(levels)
        self.assertEqual(largest, loss.reverse.losses[-1])
        skipped += largest <= epsilon
    self.assertGreater(skipped, 8)  # the shortcut was taken

  def test_precise_where_an_fft_is_not(self):
    # Below 1e-15 the direct convolution still gives a positive, stable
    # delta, and it decreases with epsilon.
    loss = poisson.run_loss(0.05, 20, 11)
    small = [loss.delta(e) for e in (1.0, 1.5, 2.0)]
    self.assertTrue(all(0 < d < 1e-15 for d in small), small)
    self.assertTrue(small[0] > small[1] > small[2])

  def test_epsilon_for_delta_inverts_delta(self):
    eps = poisson.epsilon_for_delta(0.1, 12, 11, 1e-10)
    self.assertLessEqual(poisson.delta_for_epsilon(0.1, 12, 11, eps),
                         1e-10 * (1 + 1e-3))
    self.assertGreater(poisson.delta_for_epsilon(0.1, 12, 11, eps - 0.01),
                       1e-10)

  def test_more_levels_and_larger_rates_cost_more(self):
    base = poisson.epsilon_for_delta(0.1, 12, 5, 1e-10)
    self.assertGreater(poisson.epsilon_for_delta(0.1, 12, 11, 1e-10), base)
    self.assertGreater(poisson.epsilon_for_delta(0.2, 12, 5, 1e-10), base)

  def test_no_finite_epsilon_below_the_lone_user_mass(self):
    # theta = 1: a lone participant passes with probability q per level.
    self.assertEqual(poisson.epsilon_for_delta(0.01, 1, 3, 1e-6), math.inf)

  def test_a_fractional_theta_or_level_count_is_refused_not_truncated(self):
    with self.assertRaisesRegex(ValueError,
                                "theta must be a whole number.*12.5"):
      poisson.epsilon_for_delta(0.1, 12.5, 5, 1e-10)
    with self.assertRaisesRegex(
        ValueError, r"num_levels \(L, trie levels\) must be a whole number"):
      poisson.delta_for_epsilon(0.1, 12, 5.5, 1.0)
    self.assertEqual(poisson.epsilon_for_delta(0.1, 12.0, 5.0, 1e-10),
                     poisson.epsilon_for_delta(0.1, 12, 5, 1e-10))

  def test_rejects_bad_rates(self):
    for rate in (0.0, 1.0, -0.5, 2.0):
      with self.assertRaisesRegex(ValueError, "sampling rate"):
        poisson.level_loss(rate, 5)


class CalibrateTest(parameterized.TestCase):

  @parameterized.parameters((10**4, 4.0), (10**6, 1.0))
  def test_meets_the_target_and_is_tight(self, n, epsilon):
    delta = 1.0 / n**2
    cal = poisson_calibration.calibrate(n, 11, epsilon, delta)
    self.assertLessEqual(
        poisson.delta_for_epsilon(cal.rate, cal.theta, 11, epsilon), delta)
    self.assertLessEqual(cal.epsilon, epsilon)
    self.assertGreater(
        poisson.delta_for_epsilon(cal.rate * 1.02, cal.theta, 11, epsilon),
        delta)
    self.assertAlmostEqual(cal.expected_batch_size, cal.rate * n)

  def test_meets_the_target_where_delta_alone_binds(self):
    # At a large epsilon the rate is bounded by the lone-user atom,
    # L q^theta ~ delta: the search must not overshoot by a rounding error.
    cal = poisson_calibration.calibrate(10**6, 11, 8.0, 1e-12)
    self.assertLessEqual(cal.delta, 1e-12)
    self.assertLess(cal.epsilon, 8.0)
    lone = -math.expm1(11 * math.log1p(-cal.rate**cal.theta))
    self.assertGreater(lone, 0.5e-12)

  def test_theta_maximises_rate_over_theta(self):
    cal = poisson_calibration.calibrate(10**5, 11, 2.0, 1e-10)
    score = cal.rate / cal.theta
    for theta in (cal.theta - 2, cal.theta + 2):
      rate = poisson_calibration.max_rate(theta, 11, 2.0, 1e-10, tolerance=1e-3)
      self.assertLessEqual(rate / theta, score * 1.01)

  def test_given_theta(self):
    cal = poisson_calibration.calibrate(10**5, 11, 2.0, 1e-10, theta=8)
    self.assertEqual(cal.theta, 8)

  def test_too_few_users(self):
    with self.assertRaisesRegex(ValueError, "too few for Poisson sampling"):
      poisson_calibration.calibrate(3, 11, 0.1, 1e-12)



def _composing(*args, **kwargs):
  raise AssertionError(f"composed a privacy loss: {args} {kwargs}")


_TOO_LONG = (
    "num_levels=10000 levels would take about 8.3 hours to account for "
    "Poisson sampling at theta=15, rate 0.05 and discretization=0.001 (the "
    "accountant composes each level's privacy loss L times, a cost that "
    "grows as L^2), over the 10 s allowed; use num_levels <= 183 (words of "
    "at most 182 characters: max_length <= 182) or fixed-size batches "
    '(sampling="fixed"), whose guarantee composes nothing')


def test_a_composition_too_long_is_refused_at_once(monkeypatch):
  # epsilon_for_delta(0.05, 15, 10**4, 1e-12) ran for minutes. Refused
  # before composing: a spy, not a wall-clock bound.
  monkeypatch.setattr(poisson, "_run_loss", _composing)
  with pytest.raises(ValueError) as refused:
    poisson.epsilon_for_delta(0.05, 15, 10**4, 1e-12)
  assert str(refused.value) == _TOO_LONG


@pytest.mark.parametrize("call", [
    lambda: poisson.delta_for_epsilon(0.3, 20, 1001, 1.0),
    lambda: poisson.run_loss(0.3, 20, 1001),
    lambda: poisson.epsilon_for_delta(0.3, 20, 1001, 1e-8,
                                      adjacency="REPLACE_ONE"),
])
def test_every_composition_of_given_parameters_is_bounded(call, monkeypatch):
  monkeypatch.setattr(poisson, "_run_loss", _composing)
  with pytest.raises(ValueError, match=r"^num_levels=1001 levels would take "
                     r"about [\d.]+ (minutes|hours) to account for Poisson "
                     r"sampling at theta=20, rate 0\.3 .* use num_levels <= "
                     r"\d+ \(words of at most \d+ characters"):
    call()


def test_the_largest_number_of_levels_advised_is_allowed():
  with pytest.raises(ValueError, match=r"use num_levels <= 160 "):
    poisson.check_composition(0.3, 20, 161, 1e-3, 0.0, False)
  poisson.check_composition(0.3, 20, 160, 1e-3, 0.0, False)


def test_a_level_grid_too_large_for_memory_is_refused(monkeypatch):
  # discretization=1e-9 tried to allocate 20.2 GiB, 1e-7 12.9 GiB.
  monkeypatch.setattr(poisson.memory, "available_bytes", lambda: 2**34)
  with pytest.raises(poisson.memory.InsufficientMemoryError, match=(
      r"^discretization=1e-09 \(at theta=15: 5,416,100,410 grid cells of a "
      r"level's privacy loss\) would need about 3\.0 TiB of memory, more "
      r"than the 16\.0 GiB available; use a coarser discretization \(the "
      r"default is 0\.001\)$")):
    poisson.epsilon_for_delta(0.05, 15, 11, 1e-12, discretization=1e-9)
  with pytest.raises(poisson.memory.InsufficientMemoryError,
                     match=r"^discretization=1e-07 \(at theta=15: "):
    poisson.epsilon_for_delta(0.05, 15, 11, 1e-12, discretization=1e-7)


def test_a_level_grid_too_slow_to_compute_is_refused(monkeypatch):
  monkeypatch.setattr(poisson.memory, "available_bytes", lambda: 2**40)
  with pytest.raises(ValueError, match=(
      r"^discretization=5e-07 \(at theta=15: 10,832,209 grid cells of a "
      r"level's privacy loss\) would take about 16\.2 s to compute, over the "
      r"10 s allowed; use a coarser discretization")):
    poisson.delta_for_epsilon(0.05, 15, 11, 1.0, discretization=5e-7)


def test_a_huge_theta_is_refused_before_its_tails_are_summed(monkeypatch):
  # theta=10**9 tried to allocate 7.45 GiB for one binomial tail.
  monkeypatch.setattr(poisson.memory, "available_bytes", lambda: 2**34)
  with pytest.raises(poisson.memory.InsufficientMemoryError, match=(
      r"^theta=1,000,000,000 \([\d,]+ binomial tails summed term by term, "
      r"[\d,]+ terms\) would need about .* of memory, more than the 16\.0 "
      r"GiB available; use a smaller theta$")):
    poisson.epsilon_for_delta(0.05, 10**9, 11, 1e-12)


def test_a_composition_too_large_for_memory_is_refused(monkeypatch):
  poisson.level_loss(0.3, 20)  # computed, then too little memory is left
  monkeypatch.setattr(poisson.memory, "available_bytes", lambda: 4 * 10**6)
  with pytest.raises(poisson.memory.InsufficientMemoryError,
                     match=r"^num_levels=50 levels \([\d,]+ cells of the "
                     r"composed privacy loss\) would need about"):
    poisson.delta_for_epsilon(0.3, 20, 50, 1.0)


@pytest.mark.parametrize("epsilon", [-5.0, math.inf, math.nan])
def test_delta_for_epsilon_refuses_a_negative_or_infinite_epsilon(epsilon):
  # -5.0 was accepted.
  with pytest.raises(ValueError, match=r"^epsilon must be a finite number "
                     rf">= 0, got epsilon={epsilon}$"):
    poisson.delta_for_epsilon(0.05, 15, 11, epsilon)


@pytest.mark.parametrize("call", [
    lambda r: poisson.run_loss(r, 20, 11),
    lambda r: poisson.level_loss(r, 20),
])
def test_a_rate_that_is_no_number_is_refused(call):
  # '0.3' was taken for 0.3.
  with pytest.raises(TypeError, match="^the sampling rate must be a number, "
                     "got '0.3'$"):
    call("0.3")


@pytest.mark.parametrize("discretization", [0.0, -1e-3, math.nan, "x"])
def test_a_discretization_that_is_no_positive_number_is_refused(
    discretization):
  with pytest.raises((TypeError, ValueError), match="^discretization must "):
    poisson.delta_for_epsilon(0.05, 15, 11, 1.0,
                              discretization=discretization)


if __name__ == "__main__":
  absltest.main()
