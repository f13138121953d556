"""Tests of the counting phase's accounting (triehh/theory/counting.py)."""

import math
import sys

import pytest

from triehh.core import choices
from triehh.core import progress
from triehh.theory import counting
from triehh.theory import hockey_stick
from triehh.theory import poisson
from triehh.theory import policy
from triehh.theory.mechanism import Mechanism
from triehh.theory.mechanism import Target


@pytest.mark.parametrize("share", [0.0, 1.0, 1.5, -0.2, math.nan])
def test_split_budget_refuses_a_share_outside_the_open_interval(share):
  with pytest.raises(ValueError, match=rf"count_share=.*{share}"):
    counting.split_budget(4.0, 1e-8, share)


def test_split_budget_gives_each_phase_its_share():
  split = counting.split_budget(4.0, 1e-8, 0.25)
  assert split.counting_epsilon == pytest.approx(1.0)
  assert split.discovery_epsilon == pytest.approx(3.0)
  assert split.counting_delta == pytest.approx(2.5e-9)
  assert split.discovery_delta == pytest.approx(7.5e-9)


@pytest.mark.parametrize("rate", [0.0, 1.5, -1.0])
def test_check_sample_rate_names_the_argument(rate):
  with pytest.raises(ValueError, match=rf"count_sample_rate={rate}"):
    counting.check_sample_rate(rate)


@pytest.mark.parametrize("rate", [5e-324, 1e-310, 1e-100, 1e-16])
def test_a_sample_rate_too_small_to_account_is_refused(rate):
  # dp_accounting failed on these ("a must be greater than b. Got a=inf and
  # b=inf", "deltas are not in non-increasing order").
  match = (r"^count_sample_rate must be at least 2\.220446049250313e-16, the "
           r"float spacing at 1: .* cannot be accounted, got "
           rf"count_sample_rate={rate!r}$")
  with pytest.raises(ValueError, match=match):
    counting.check_sample_rate(rate)
  with pytest.raises(ValueError, match=match):
    counting.calibrate_noise(1.0, 1e-6, rate)


def test_the_least_sample_rate_is_taken():
  least = sys.float_info.epsilon
  assert counting.check_sample_rate(least) == least


@pytest.mark.parametrize("rate", [1.0, 0.3, 0.02])
def test_calibrate_noise_is_tight(rate):
  sigma = counting.calibrate_noise(1.0, 1e-8, rate)
  assert counting.gaussian_epsilon(sigma, rate, 1e-8) <= 1.0
  assert counting.gaussian_epsilon(sigma * 0.99, rate, 1e-8) > 1.0


def test_calibrate_noise_is_monotone():
  by_epsilon = [counting.calibrate_noise(e, 1e-8, 1.0) for e in (1, 2)]
  assert by_epsilon[0] > by_epsilon[1]
  by_delta = [counting.calibrate_noise(1.0, d, 1.0) for d in (1e-8, 1e-6)]
  assert by_delta[0] > by_delta[1]
  by_rate = [counting.calibrate_noise(1.0, 1e-8, q) for q in (0.3, 1.0)]
  assert by_rate[0] < by_rate[1]  # amplification by sampling


@pytest.mark.parametrize("rate", [0.5, 0.05])
def test_gaussian_epsilon_is_the_worse_direction(rate):
  # pylint: disable=protected-access
  pld = counting.gaussian_pld(2.0, rate)
  # Asked at delta less the share kept for the truncation's slack.
  remove = pld._pmf_remove.get_epsilon_for_delta(1e-8 * (1 - 1e-3))
  add = pld._pmf_add.get_epsilon_for_delta(1e-8 * (1 - 1e-3))
  assert remove != add  # subsampling makes the directions differ
  assert counting.gaussian_epsilon(2.0, rate, 1e-8) == pytest.approx(
      max(remove, add), rel=1e-12)
  assert remove > add  # here REMOVE (the user present) dominates


def _poisson_params(n, delta, rate=0.05, theta=12, max_length=4):
  return policy.resolve(n, max_length, Mechanism(
      theta=theta, sampling_rate=rate, delta=delta, sampling=choices.POISSON))


def _fixed_params(n, epsilon, delta):
  return policy.resolve(n, 4, Target(epsilon, delta=delta,
                                     sampling=choices.FIXED))


# Each accounting call costs ~0.1-1 s: the grids below are pairwise covering
# arrays (every pair of values of any two parameters appears once) instead
# of the full 2 x 2 x 2 products.
_PAIRWISE = [(0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 0)]


def _pairwise(first, second, third):
  return [(first[i], second[j], third[k]) for i, j, k in _PAIRWISE]


@pytest.mark.parametrize("delta, share, rate",
                         _pairwise([1e-6, 1e-10], [0.2, 0.5], [1.0, 0.2]))
def test_total_is_at_most_requested_with_poisson_discovery(delta, share,
                                                           rate):
  discovery = _poisson_params(10**5, delta * (1 - share))
  epsilon = discovery.epsilon / (1 - share)  # discovery used its share
  sigma = counting.calibrate_noise(share * epsilon, share * delta, rate)
  total = counting.compose(discovery, sigma, rate, delta)
  assert total.epsilon <= epsilon
  assert total.delta == delta
  assert total.pld_epsilon < total.basic_epsilon  # the PLD is tighter
  assert total.two_sided
  assert total.counting_epsilon <= share * epsilon + 1e-9


@pytest.mark.parametrize("epsilon, share, rate",
                         _pairwise([1.0, 4.0], [0.2, 0.5], [1.0, 0.2]))
def test_total_is_at_most_requested_with_fixed_discovery(epsilon, share,
                                                         rate):
  delta = 1e-8
  discovery = _fixed_params(10**5, epsilon * (1 - share), delta * (1 - share))
  sigma = counting.calibrate_noise(share * epsilon, share * delta, rate)
  total = counting.compose(discovery, sigma, rate, delta)
  assert total.epsilon <= epsilon
  assert not total.two_sided
  assert "one direction" in total.accounting
  assert "Theorem 1" in total.accounting


def test_a_negligible_counting_phase_leaves_discovery_epsilon():
  discovery = _poisson_params(10**5, 1e-8)
  total = counting.compose(discovery, 1e4, 1.0, 2e-8)
  alone = poisson.epsilon_for_delta(discovery.sampling_rate, discovery.theta,
                                    discovery.levels, 2e-8)
  assert total.epsilon == pytest.approx(alone, abs=5e-3)


def test_fixed_discovery_pld_is_its_epsilon_delta():
  discovery = _fixed_params(10**5, 2.0, 1e-8)
  pld = counting.discovery_pld(discovery)
  assert pld.get_epsilon_for_delta(discovery.delta) == pytest.approx(
      discovery.epsilon, abs=2e-3)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_calibrate_noise_to_total_meets_the_total_tightly(sampling):
  if sampling == "poisson":
    discovery = _poisson_params(10**5, 5e-9)
  else:
    discovery = _fixed_params(10**5, 2.0, 5e-9)
  epsilon = discovery.epsilon + 1.0
  sigma = counting.calibrate_noise_to_total(discovery, epsilon, 1e-8, 0.5)
  assert counting.compose(discovery, sigma, 0.5, 1e-8).epsilon <= epsilon
  assert counting.compose(discovery, sigma / 1.01, 0.5,
                          1e-8).epsilon > epsilon
  assert sigma < counting.calibrate_noise(1.0, 5e-9, 0.5)


def test_repeated_accounting_with_equal_arguments_is_cached():
  discovery = _fixed_params(10**5, 2.0, 5e-9)
  epsilon = discovery.epsilon + 1.0
  # pylint: disable=protected-access
  first = counting.calibrate_noise_to_total(discovery, epsilon, 1e-8, 0.5)
  hits = counting.calibrate_total.cache_info().hits
  again = counting.calibrate_noise_to_total(
      _fixed_params(10**5, 2.0, 5e-9), epsilon, 1e-8, 0.5)  # an equal copy
  assert again == first
  assert counting.calibrate_total.cache_info().hits == hits + 1
  total = counting.compose(discovery, first, 0.5, 1e-8)
  hits = counting._compose.cache_info().hits
  assert counting.compose(discovery, first, 0.5, 1e-8) == total
  assert counting._compose.cache_info().hits == hits + 1


def test_calibrate_total_is_compose_at_the_calibrated_sigma():
  discovery = _fixed_params(10**5, 2.0, 5e-9)  # as the caching test: cached
  epsilon = discovery.epsilon + 1.0
  total = counting.calibrate_total(discovery, epsilon, 1e-8, 0.5)
  assert total.noise_std == counting.calibrate_noise_to_total(
      discovery, epsilon, 1e-8, 0.5)
  assert total == counting.compose(discovery, total.noise_std, 0.5, 1e-8)
  assert total.sample_rate == 0.5 and total.epsilon <= epsilon


@pytest.mark.parametrize("epsilon, delta, rate, message", [
    (3.0, 1e-8, 1.5, r"count_sample_rate must be in \(0, 1\].*1.5"),
    (3.0, None, 0.5, "leaves nothing for counting after discovery's delta"),
    (1.0, 1e-8, 0.5, "epsilon=1 leaves nothing for counting"),
    (-1.0, 1e-8, 0.5, "epsilon must be a positive"),
])
def test_calibrate_total_refuses_bad_arguments_before_accounting(
    epsilon, delta, rate, message):
  discovery = _fixed_params(10**5, 2.0, 5e-9)
  if delta is None:  # all of the total's delta spent by discovery
    delta = discovery.delta
  with pytest.raises(ValueError, match=message):
    counting.calibrate_total(discovery, epsilon, delta, rate)


def test_calibrate_total_refuses_a_share_above_what_discovery_leaves():
  discovery = _fixed_params(10**5, 2.0, 5e-9)
  rest = 3.0 - discovery.epsilon
  with pytest.raises(ValueError, match=r"counting_epsilon=.* is more than "
                     r"the .* that discovery leaves"):
    counting.calibrate_total(discovery, 3.0, 1e-8, 0.5,
                             counting_epsilon=rest * 1.01)
  with pytest.raises(ValueError, match=r"counting_delta=.* is more than"):
    counting.calibrate_total(discovery, 3.0, 1e-8, 0.5,
                             counting_delta=1e-8 - discovery.delta / 2)


def test_compose_refuses_a_delta_discovery_used_up():
  discovery = _poisson_params(10**5, 1e-8)
  with pytest.raises(ValueError, match="delta=1e-08 leaves nothing"):
    counting.compose(discovery, 1.0, 1.0, 1e-8)


def test_compose_refuses_a_run_without_guarantee():
  params = policy.resolve(100, 4, Mechanism(
      theta=1, gamma=5.0, allow_no_guarantee=True, sampling=choices.FIXED))
  assert not params.has_guarantee
  with pytest.raises(ValueError, match="without a privacy guarantee"):
    counting.compose(params, 1.0, 1.0, 0.5)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_every_user_counted_meets_the_total_tightly_from_the_closed_form(
    sampling):
  # Sample rate 1: the search starts from exact_gaussian_sigma, a guess
  # the accountant's sigma never goes below (its Gaussian is discretised
  # pessimistically), and still ends at the accountant's least sigma.
  if sampling == "poisson":
    discovery = _poisson_params(10**5, 5e-9)
  else:
    discovery = _fixed_params(10**5, 2.0, 5e-9)
  epsilon = discovery.epsilon + 1.0
  sigma = counting.calibrate_noise_to_total(discovery, epsilon, 1e-8, 1.0)
  assert counting.compose(discovery, sigma, 1.0, 1e-8).epsilon <= epsilon
  assert counting.compose(discovery, sigma / 1.01, 1.0,
                          1e-8).epsilon > epsilon
  guess = counting.exact_gaussian_sigma(counting.discovery_pld(discovery),
                                        epsilon, 1e-8)
  assert guess <= sigma < guess * 1.05


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-6), (0.3, 1e-10),
                                            (4.0, 1e-8)])
def test_exact_gaussian_sigma_alone_is_the_analytic_gaussian(epsilon, delta):
  # With nothing before it (all mass at loss 0), the closed form is the
  # Gaussian mechanism's own: dp_accounting's accountant on a fine grid
  # (pessimistic) gives at most a little more epsilon at that sigma.
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  nothing = pld_lib.from_privacy_parameters(
      pld_lib.common.DifferentialPrivacyParameters(0.0, 0.0),
      value_discretization_interval=1e-3)
  sigma = counting.exact_gaussian_sigma(nothing, epsilon, delta)
  fine = pld_lib.from_gaussian_mechanism(
      sigma, sensitivity=1.0, value_discretization_interval=1e-5,
      pessimistic_estimate=True)
  got = fine.get_epsilon_for_delta(delta)
  assert epsilon * (1 - 1e-6) <= got <= epsilon * 1.01
  optimistic = pld_lib.from_gaussian_mechanism(
      sigma, sensitivity=1.0, value_discretization_interval=1e-5,
      pessimistic_estimate=False)
  assert optimistic.get_epsilon_for_delta(delta) <= epsilon * (1 + 1e-6)


def test_a_slow_counting_calibration_says_what_it_does(monkeypatch, capsys):
  monkeypatch.setenv(progress.PROGRESS_AFTER_VARIABLE, "0")
  discovery = _poisson_params(10**5, 4e-9, rate=0.04)
  counting.calibrate_total(discovery, discovery.epsilon + 0.7, 1e-8, 1.0)
  err = capsys.readouterr().err
  said = (f"triehh: calibrating the counting noise for a total "
          f"epsilon={discovery.epsilon + 0.7:g}, delta=1e-08")
  assert f"{said} ...\n" in err and f"{said} took " in err


@pytest.mark.parametrize("n", [10**8, 10**9])
def test_a_delta_below_the_ffts_floor_meets_the_total_tightly(n):
  # delta = 1/n^2 from n = 10^8 on is below the FFT composition's error
  # floor (about 1e-15): the search and the full check sum directly, so
  # the total is met, tightly, and the PLD still beats basic composition.
  delta = 1.0 / n**2
  discovery = _poisson_params(n, delta * 0.9, rate=0.002, theta=20)
  epsilon = discovery.epsilon + 0.5
  sigma = counting.calibrate_noise_to_total(discovery, epsilon, delta, 1.0)
  total = counting.compose(discovery, sigma, 1.0, delta)
  assert total.epsilon <= epsilon
  assert total.pld_epsilon < total.basic_epsilon
  assert counting.compose(discovery, sigma / 1.01, 1.0,
                          delta).epsilon > epsilon


def test_the_direct_epsilon_is_the_least_the_direct_sum_allows():
  # pylint: disable=protected-access
  first, second = counting.gaussian_pld(1.5, 1.0), counting.gaussian_pld(
      2.5, 0.3)
  for delta in (1e-6, 1e-14, 1e-20):
    epsilon = counting._direct_epsilon(first, second, delta)
    got = hockey_stick.composed_delta(first, second, epsilon)
    assert got <= delta
    assert hockey_stick.composed_delta(first, second, epsilon - 1e-6) > delta
  # Below the mass the distributions put at infinity, no epsilon is.
  # (The truncated discrete Gaussian's, pessimistic: about 4e-66 here.)
  infinite = hockey_stick.composed_delta(first, second, 1e6)
  assert infinite > 0
  assert counting._direct_epsilon(first, second, infinite / 2) == math.inf
  # Where the FFT is exact enough, the two agree to its grid.
  fft = first.compose(second, tail_mass_truncation=0.0)
  assert counting._direct_epsilon(first, second, 1e-6) == pytest.approx(
      fft.get_epsilon_for_delta(1e-6), abs=2e-3)
