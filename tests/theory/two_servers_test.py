"""The two-server accountant against computations written here: the
discrete Laplace's privacy loss read off its pmf, the discrete Gaussian's
hockey-stick divergence summed over the pmf of the composed steps, the
tail of the sum of two noises as a double sum."""

import dataclasses
import math
import string

import numpy as np
import pytest

from triehh.secure import plan as secure_plan
from triehh.theory import two_servers

ENGLISH = ("'",) + tuple(string.ascii_lowercase)


def _dg_pmf(sigma, support):
  z = np.arange(-support, support + 1)
  p = np.exp(-z.astype(float) ** 2 / (2 * sigma**2))
  return z, p / p.sum()


def _dg_losses(sigma, steps, m):
  """The law of the privacy loss of ``steps`` discrete Gaussians of
  ``sigma`` moved by m: the sum S of the steps' draws (its pmf, the
  weights) has loss ``(steps m^2 - 2 m S) / (2 sigma^2)`` (P centred at 0,
  Q at m)."""
  z, p = _dg_pmf(sigma, int(20 * sigma) + 20)
  total = np.array([1.0])
  for _ in range(steps):
    total = np.convolve(total, p)
  s = np.arange(total.size) - steps * (z.size // 2)
  return total, (steps * m**2 - 2 * m * s) / (2 * sigma**2)


def _hockey_stick(weights, loss, epsilon):
  return float(np.sum(weights * np.clip(1 - np.exp(epsilon - loss), 0,
                                        None)))


def _dg_delta(sigma, steps, sensitivity, epsilon):
  """delta(epsilon) of ``steps`` discrete Gaussians of ``sigma`` moved by
  ``sensitivity`` (:func:`_dg_losses`)."""
  return _hockey_stick(*_dg_losses(sigma, steps, sensitivity), epsilon)


def test_laplace_epsilon_is_the_pmf_s_largest_log_ratio():
  scale, m = 0.7, 2
  z = np.arange(-200, 201)
  log_p = -np.abs(z) / scale
  worst = np.max(np.abs(log_p[m:] - log_p[:-m]))  # P(z) against P(z - m)
  assert two_servers.laplace_epsilon([scale], m) == pytest.approx(worst)
  assert two_servers.laplace_epsilon([scale, 2 * scale], m) == pytest.approx(
      1.5 * worst)


def test_laplace_pld_agrees_with_the_closed_form():
  pld = two_servers.privacy_loss(two_servers.LAPLACE, [0.5, 0.5])
  assert pld.get_epsilon_for_delta(0.0) == pytest.approx(4.0, rel=1e-3)


@pytest.mark.parametrize("sigma,steps,m", [(2.0, 1, 1), (3.0, 3, 2)])
def test_gaussian_pld_bounds_the_direct_sum(sigma, steps, m):
  pld = two_servers.privacy_loss(two_servers.GAUSSIAN, [sigma] * steps, m)
  for epsilon in (0.5, 1.0, 2.0):
    exact = _dg_delta(sigma, steps, m, epsilon)
    library = pld.get_delta_for_epsilon(epsilon)
    assert exact - 1e-12 <= library <= exact * 1.02 + 1e-9


def test_calibrated_sigma_is_tight():
  sigma = two_servers.calibrate_sigma(2.0, 1e-6, 2)
  assert _dg_delta(sigma, 2, 1, 2.0) <= 1e-6
  assert _dg_delta(sigma * 0.97, 2, 1, 2.0) > 1e-6


@pytest.mark.parametrize("scale", [0.25, 1.0, 3.0])
def test_sum_tail_is_the_double_sum(scale):
  q = math.exp(-1 / scale)

  def pmf(z):
    return (1 - q) / (1 + q) * q ** abs(z)

  def tail(k):  # P[Z >= k]
    return q**k / (1 + q) if k >= 1 else 1 - q ** (1 - k) / (1 + q)

  for threshold in (-3, 0, 1, 4, 9):
    direct = sum(pmf(z) * tail(threshold - z) for z in range(-400, 401))
    assert two_servers.sum_tail("laplace", scale, threshold) == pytest.approx(
        direct, rel=1e-9, abs=1e-300)


def test_threshold_is_the_least_within_budget():
  for candidates in (10.0, 1e6, 2e14):
    t = two_servers.threshold_for("laplace", 0.25, candidates, 0.1)
    assert candidates * two_servers.sum_tail("laplace", 0.25, t) <= 0.1
    assert candidates * two_servers.sum_tail("laplace", 0.25, t - 1) > 0.1


def test_plan_per_length_thresholds():
  plan = two_servers.plan(ENGLISH, 10, 4.0)
  assert plan.steps == (50,) and plan.scales == (0.25,)
  assert plan.epsilon == pytest.approx(4.0) and plan.delta == 0.0
  # t end codes: words of 10 - t letters, 27^(10 - t) candidates each
  assert plan.thresholds[0][:10] == (10, 9, 8, 7, 6, 6, 5, 4, 3, 2)
  assert plan.thresholds[0][10] == two_servers.NEVER  # the empty word
  for t, threshold in enumerate(plan.thresholds[0][:10]):
    k = 27.0 ** (10 - t)
    assert k * two_servers.sum_tail("laplace", 0.25, threshold) <= 0.1


def test_plan_in_steps_splits_epsilon():
  plan = two_servers.plan(ENGLISH, 10, 4.0, chars_per_step=4,
                          max_frontier=1000)
  assert plan.step_chars == (4, 8, 10)
  assert plan.scales == pytest.approx((0.75, 0.75, 0.75))
  assert plan.epsilon == pytest.approx(4.0)
  assert plan.candidates(1)[0] == 1000 * 27**4


def test_a_wider_first_step_then_steps_of_k():
  assert two_servers.step_lengths(10, 2) == [2, 4, 6, 8, 10]
  assert two_servers.step_lengths(10, 2, 4) == [4, 6, 8, 10]
  assert two_servers.step_lengths(10, 3, 5) == [5, 8, 10]
  assert two_servers.step_lengths(10, 2, 10) == [10]
  with pytest.raises(ValueError, match="first step's characters"):
    two_servers.step_lengths(10, 2, 0)
  plan = two_servers.plan(ENGLISH, 10, 4.0, chars_per_step=2, first_chars=4,
                          max_frontier=1000, live_budget=250.0, verify=True,
                          verify_cap=10**4)
  assert plan.step_chars == (4, 6, 8, 10)
  # four discovery steps at 2b and the verification at b: 4 / 2b + 1 / b
  assert plan.verify_scale == pytest.approx(3 / 4.0)
  assert plan.scales == pytest.approx((1.5,) * 4)
  assert plan.epsilon == pytest.approx(4.0)
  assert plan.candidates(0) == [27**4, 27**3, 27**2, 27, 0]
  assert plan.candidates(1)[0] == 1000 * 27**2


def test_gaussian_plan_meets_its_target():
  plan = two_servers.plan(ENGLISH, 4, 2.0, noise="gaussian", delta=1e-6)
  assert plan.epsilon <= 2.0
  assert _dg_delta(plan.scales[0], 1, 1, 2.0) <= 1e-6


def test_refusals_name_the_argument():
  with pytest.raises(ValueError, match="noise must be"):
    two_servers.plan(ENGLISH, 10, 1.0, noise="skellam")
  with pytest.raises(ValueError, match="delta"):
    two_servers.plan(ENGLISH, 10, 1.0, noise="gaussian")
  with pytest.raises(ValueError, match="max_length"):
    two_servers.plan(ENGLISH, 13, 1.0)


def test_live_prefixes_take_their_own_budget():
  plan = two_servers.plan(ENGLISH, 10, 4.0, chars_per_step=5,
                          max_frontier=100, live_budget=25.0)
  live = plan.thresholds[0][0]  # 5 letters, no end: extended, not released
  k = 27.0**5
  assert k * two_servers.sum_tail("laplace", 0.5, live) <= 25.0
  assert k * two_servers.sum_tail("laplace", 0.5, live - 1) > 25.0
  words = plan.thresholds[1][0]  # 10 letters, released at the last step
  assert 100 * k * two_servers.sum_tail("laplace", 0.5, words) <= 0.1


def _laplace_tail(scale, threshold):
  """P[Z_0 + Z_1 >= threshold] for two discrete Laplaces of ``scale``,
  summed here."""
  q = math.exp(-1 / scale)
  z = np.arange(-600, 601)
  pmf = (1 - q) / (1 + q) * q ** np.abs(z)
  return float(sum(pmf[i] * pmf[z >= threshold - z[i]].sum()
                   for i in range(z.size)))


def _dg_delta_verified(sigma, steps, m, epsilon):
  """delta(epsilon) of ``steps`` discrete Gaussians of 2 sigma and one of
  sigma, each moved by m: the loss is the discovery sum's plus the
  verification draw's, summed over both pmfs."""
  w_d, loss_d = _dg_losses(2 * sigma, steps, m)
  w_v, loss_v = _dg_losses(sigma, 1, m)
  return _hockey_stick(w_d[:, None] * w_v[None, :],
                       loss_d[:, None] + loss_v[None, :], epsilon)


def test_a_verified_laplace_plan_spends_epsilon_on_steps_and_verification():
  plan = two_servers.plan(ENGLISH, 10, 4.0, chars_per_step=2,
                          max_frontier=1000, live_budget=250.0, verify=True,
                          verify_cap=10**5)
  b = plan.verify_scale
  assert plan.scales == pytest.approx((2 * b,) * 5)
  assert 5 / (2 * b) + 1 / b == pytest.approx(4.0)  # pure: sum m / b
  assert plan.epsilon == pytest.approx(4.0) and plan.delta == 0.0
  assert "verifies" in plan.accounting and "6 step(s)" in plan.accounting


def test_a_verified_plan_s_discovery_passes_words_loosely():
  plan = two_servers.plan(ENGLISH, 10, 4.0, chars_per_step=2,
                          max_frontier=1000, live_budget=250.0, verify=True,
                          verify_cap=10**5)
  scale = plan.scales[1]
  live, one_end, two_ends = plan.thresholds[1]  # 4 letters; 3; 2
  for threshold, budget, k in ((live, 250.0, 1000 * 27**2),
                               (one_end, 125.0, 1000 * 27),
                               (two_ends, 125.0, 1000)):
    assert k * two_servers.sum_tail("laplace", scale, threshold) <= budget
    assert k * two_servers.sum_tail("laplace", scale,
                                    threshold - 1) > budget


def test_the_verification_threshold_is_the_least_for_its_candidates():
  scale, cap = 0.6, 5000
  table = two_servers.verification_table("laplace", scale, 1.0, cap)
  for size in (1, 2, 7, 40, 333, 4999, 5000):
    t = secure_plan.verification_threshold(table, size)
    assert size * _laplace_tail(scale, t) <= 1.0
    assert size * _laplace_tail(scale, t - 1) > 1.0
  with pytest.raises(ValueError, match="no verification threshold"):
    secure_plan.verification_threshold(table, cap + 1)


def test_a_verified_gaussian_plan_meets_its_target_tightly():
  plan = two_servers.plan(ENGLISH, 6, 2.0, noise="gaussian", delta=1e-6,
                          chars_per_step=2, max_frontier=100,
                          live_budget=25.0, verify=True, verify_cap=1000)
  sigma = plan.verify_scale
  assert plan.scales == pytest.approx((2 * sigma,) * 3)
  assert plan.epsilon <= 2.0
  assert _dg_delta_verified(sigma, 3, 1, 2.0) <= 1e-6
  assert _dg_delta_verified(sigma * 0.97, 3, 1, 2.0) > 1e-6


def test_verify_needs_steps_and_a_work_bound():
  with pytest.raises(ValueError, match="max_candidates"):
    two_servers.plan(ENGLISH, 10, 4.0, chars_per_step=2, max_frontier=1000,
                     verify=True)
  with pytest.raises(ValueError, match="chars_per_step"):
    two_servers.plan(ENGLISH, 10, 4.0, live_budget=1.0, verify=True,
                     verify_cap=10)


def _weighted_plan():
  return two_servers.plan(ENGLISH, 4, 4.0, chars_per_step=2,
                          max_frontier=1000, live_budget=1000.0, verify=True,
                          verify_cap=10**4)


def test_verified_words_no_user_holds_stay_within_the_budget():
  # Every point of V held by no one: its verification count is the two
  # servers' noise alone, drawn here; over runs the words released average
  # at most the budget (1), the thresholds set from the discovery counts.
  plan = _weighted_plan()
  assert plan.verification_split == "weighted" and plan.engine_thresholds == ()
  rng = np.random.default_rng(8)
  words = {"".join(rng.choice(list("abcdefgh"), 4)) for _ in range(400)}
  ids, _ = plan.code.encode(sorted(words))
  discovery = dict(zip(ids.tolist(), rng.integers(3, 15, ids.size).tolist()))
  b = plan.verify_scale
  released = []
  for _ in range(3000):
    z = (rng.geometric(1 - math.exp(-1 / b), (2, ids.size))
         - rng.geometric(1 - math.exp(-1 / b), (2, ids.size))).sum(axis=0)
    last = dict(zip(ids.tolist(), z.tolist()))
    released.append(len(two_servers.verified(plan, [{}, discovery, last])[-1]))
  released = np.array(released)
  assert released.mean() <= 1.0 + 4 * released.std() / math.sqrt(3000)
  assert released.mean() > 0.4  # the budget is spent, not hoarded
  # The even split keeps the engines' cut: nothing to redo.
  even = dataclasses.replace(plan, verification_split="even")
  assert even.engine_thresholds == plan.verify_thresholds
  frontiers = [{}, discovery, {int(ids[0]): 99}]
  assert two_servers.verified(even, frontiers) == frontiers


def test_verified_needs_every_point_of_v():
  plan = _weighted_plan()
  ids, _ = plan.code.encode(["abcd", "dcba"])
  with pytest.raises(ValueError, match="returned 1 points of V's 2"):
    two_servers.verified(plan, [{}, {int(ids[0]): 9, int(ids[1]): 8},
                                {int(ids[0]): 3}])
  with pytest.raises(ValueError, match="verification_split"):
    dataclasses.replace(plan, verification_split="uneven")
