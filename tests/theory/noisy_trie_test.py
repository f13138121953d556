"""Tests of triehh.theory.noisy_trie: its accountant against independent
computations, its calibration, and its parameters."""

import dataclasses
import json
import math
import os

import dp_accounting
import numpy as np
import pytest
from scipy import optimize

from triehh.theory import calibration_store
from triehh.theory import dp_events
from triehh.theory import noisy_trie
from triehh.theory import pld
from triehh.theory import sampled_renyi
from triehh.theory.adjacency import Adjacency


def _pmf(sigma: float, x: np.ndarray) -> np.ndarray:
  """The discrete Gaussian's pmf, normalised by a direct sum (independent
  of the library)."""
  span = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
  z = float(np.exp(-span.astype(float) ** 2 / (2 * sigma**2)).sum())
  return np.exp(-np.asarray(x, float) ** 2 / (2 * sigma**2)) / z


def _composed_delta(sigma: float, levels: int, epsilon: float) -> float:
  """delta(epsilon) of ``levels`` unsampled discrete Gaussians of sigma,
  exactly in double precision: under P (user present, noise x per round)
  the loss is ``sum_r (1 - 2 x_r) / (2 sigma^2)``, a function of S = sum_r
  x_r, whose pmf is the pmf convolved ``levels`` times (direct, positive
  terms: no cancellation)."""
  x = np.arange(-int(45 * sigma) - 5, int(45 * sigma) + 6)
  one = _pmf(sigma, x)
  law = one
  for _ in range(levels - 1):
    law = np.convolve(law, one)
  s = np.arange(law.size) + levels * x[0]
  loss = (levels - 2 * s) / (2 * sigma**2)
  gain = -np.expm1(np.minimum(epsilon - loss, 0.0))  # (1 - e^(eps - L))_+
  return float((law * gain).sum())


def _composed_epsilon(sigma: float, levels: int, delta: float) -> float:
  return optimize.brentq(lambda e: _composed_delta(sigma, levels, e) - delta,
                         0.0, 300.0, xtol=1e-10)


@pytest.mark.parametrize("sigma,levels,delta", [
    (5.769, 11, 1e-12), (21.76, 4, 1e-12), (2.0, 4, 1e-6), (1.0, 1, 1e-3)])
def test_without_sampling_epsilon_meets_the_exact_discrete_composition(
    sigma, levels, delta):
  # The rounds' exact delta(epsilon), from the pmf convolved in the test:
  # the accountant's epsilon meets delta, and is tight (pessimistic by its
  # grid and the truncation's slack only).
  params = noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=levels,
                                      false_positive_rate=1e-3)
  computed = noisy_trie.epsilon(params, delta)
  exact = _composed_epsilon(sigma, levels, delta)
  assert _composed_delta(sigma, levels, computed) <= delta
  assert exact <= computed <= exact + 2e-3 * max(1.0, exact)


def _pld_epsilon(sigmas, delta):
  """dp_accounting's discrete-Gaussian PLD of the rounds, its own
  truncation, composed round by round."""
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  composed = None
  for sigma in sigmas:
    one = pld_lib.from_discrete_gaussian_mechanism(
        sigma, value_discretization_interval=1e-4)
    composed = one if composed is None else composed.compose(one)
  return composed.get_epsilon_for_delta(delta)


@pytest.mark.parametrize("delta", [1e-16, 1e-18, 1e-30])
def test_without_sampling_epsilon_meets_delta_past_the_pld(delta):
  # Below ~1e-15 the PLD accountant answers inf; the zCDP bound still meets
  # delta (the exact composition says so), and grows as delta shrinks.
  params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=6,
                                      false_positive_rate=1e-3)
  computed = noisy_trie.epsilon(params, delta)
  assert math.isfinite(computed)
  assert _composed_delta(4.0, 6, computed) <= delta
  # zCDP is looser than exact, but not by much here
  assert computed <= 1.5 * _composed_epsilon(4.0, 6, delta)
  assert noisy_trie.epsilon(params, delta) > noisy_trie.epsilon(params, 1e-12)


def test_subsampled_runs_past_the_pld_are_amplified_and_labelled():
  params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=6,
                                      sampling_rate=0.5,
                                      false_positive_rate=1e-3)
  unsampled = dataclasses.replace(params, sampling_rate=1.0)
  sampled_eps = noisy_trie.epsilon(params, 1e-18)
  # The sampled RDP bound answers, below the unsampled zCDP bound (which
  # holds for it too, and meets delta by the exact composition).
  assert sampled_eps < 0.8 * noisy_trie.epsilon(unsampled, 1e-18)
  assert _composed_delta(4.0, 6, noisy_trie.epsilon(unsampled, 1e-18)) <= 1e-18
  assert sampled_eps == sampled_renyi.epsilon([4.0] * 6, 0.5, 1e-18)
  assert (noisy_trie.guarantee(params, 1e-18).accounting
          == noisy_trie.ACCOUNTING_SAMPLED_RENYI)
  assert (noisy_trie.guarantee(params, 1e-12).accounting
          == noisy_trie.ACCOUNTING)
  # Calibration may sample there now; at this target q = 1 still needs the
  # smallest count, and meets the target.
  calibrated = noisy_trie.calibrate(6, 4.0, 1e-18)
  assert calibrated.sampling_rate == 1.0
  assert noisy_trie.epsilon(calibrated, 1e-18) <= 4.0
  at_half = noisy_trie.calibrate(6, 4.0, 1e-18, sampling_rates=(0.5,))
  assert at_half.sampling_rate == 0.5
  assert at_half.sigma < 0.8 * calibrated.sigma
  assert noisy_trie.epsilon(at_half, 1e-18) <= 4.0


def _subsampled_loss(sigma: float, rate: float, grid: float,
                     remove: bool) -> pld.LossDistribution:
  """The loss of one round's dominating pair on the integers: REMOVE (P =
  (1 - q) N_Z(0, s^2) + q N_Z(1, s^2) against Q = N_Z(0, s^2), under P) or
  ADD (Q against P, under Q); each loss rounded up to the grid
  (pessimistic). The support is exact up to a mass below 1e-300."""
  x = np.arange(-int(40 * sigma) - 2, int(40 * sigma) + 3)
  mass_q = _pmf(sigma, x)
  mass_p = (1 - rate) * mass_q + rate * _pmf(sigma, x - 1)
  loss = np.log1p(rate * np.expm1((2 * x - 1) / (2 * sigma**2)))
  if remove:
    cells, mass = np.ceil(loss / grid - 1e-9), mass_p
  else:
    cells, mass = np.ceil(-loss / grid - 1e-9), mass_q
  cells = cells.astype(np.int64)
  lower = int(cells.min())
  probs = np.bincount(cells - lower, weights=mass)
  return pld.LossDistribution(grid, lower, probs, 0.0)


@pytest.mark.parametrize("sigma,rate,levels,delta", [
    (3.0, 0.5, 11, 1e-12), (6.0, 0.1, 11, 1e-10), (1.5, 0.3, 4, 1e-6)])
def test_subsampled_discrete_gaussian_matches_a_direct_composition(
    sigma, rate, levels, delta):
  # The dominating pair of the subsampled discrete Gaussian, on its integer
  # support, composed by direct convolution (triehh.theory.pld), both
  # directions. Its grid g makes it pessimistic by at most levels * g in
  # epsilon. So the accountant's epsilon meets its delta there, and is
  # tight (3 % less epsilon does not).
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


def test_pld_epsilon_is_below_the_zcdp_and_rdp_bounds():
  # Unsampled, the discrete Gaussian has the continuous one's RDP (CKS20,
  # Theorem 4): an RDP accountant of GaussianDpEvent(sigma) bounds it.
  params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=11,
                                      false_positive_rate=1e-3)
  rdp = dp_accounting.rdp.RdpAccountant()
  rdp.compose(dp_accounting.GaussianDpEvent(4.0), 11)
  pld_epsilon = noisy_trie.epsilon(params, 1e-12)
  assert pld_epsilon <= rdp.get_epsilon(1e-12)
  assert pld_epsilon >= 0.85 * rdp.get_epsilon(1e-12)  # RDP is not far off


def test_dp_accountings_own_accountants_refuse_the_event():
  """Never a smaller epsilon from a continuous stand-in: refused."""
  params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=11,
                                      sampling_rate=0.5,
                                      false_positive_rate=1e-3)
  for accountant in (dp_accounting.rdp.RdpAccountant(),
                     dp_accounting.pld.PLDAccountant()):
    with pytest.raises(dp_accounting.UnsupportedEventError):
      accountant.compose(noisy_trie.dp_event(params))


def test_sampling_amplifies():
  eps = [noisy_trie.epsilon(noisy_trie.NoisyTrieParams(
      sigma=4.0, num_levels=11, sampling_rate=q, false_positive_rate=1e-3),
                            1e-12) for q in (1.0, 0.5, 0.1)]
  assert eps[0] > eps[1] > eps[2] > 0


def test_dp_event_is_levels_of_the_subsampled_discrete_gaussian():
  params = noisy_trie.NoisyTrieParams(sigma=3.0, num_levels=7,
                                      sampling_rate=0.25,
                                      false_positive_rate=1e-4)
  assert noisy_trie.dp_event(params) == dp_accounting.SelfComposedDpEvent(
      dp_events.DiscreteGaussianDpEvent(3.0, 0.25), 7)
  full = noisy_trie.NoisyTrieParams(sigma=3.0, num_levels=7,
                                    false_positive_rate=1e-4)
  assert noisy_trie.dp_event(full) == dp_accounting.SelfComposedDpEvent(
      dp_events.DiscreteGaussianDpEvent(3.0), 7)
  accountant = dp_events.PLDAccountant(value_discretization_interval=1e-4)
  accountant.compose(noisy_trie.dp_event(params))
  assert accountant.get_epsilon(1e-10) == pytest.approx(
      noisy_trie.epsilon(params, 1e-10), rel=1e-3)


@pytest.mark.parametrize("epsilon", [4.0, 1.0])
def test_calibration_meets_the_target_with_the_smallest_sigma(epsilon):
  params = noisy_trie.calibrate(11, epsilon, 1e-12, false_positive_rate=1e-5)
  assert noisy_trie.epsilon(params, 1e-12) <= epsilon
  smaller = noisy_trie.NoisyTrieParams(
      sigma=params.sigma * 0.99, num_levels=11,
      sampling_rate=params.sampling_rate, false_positive_rate=1e-5)
  assert noisy_trie.epsilon(smaller, 1e-12) > epsilon
  _assert_smallest_integer_threshold(params.sigma, params.threshold, 1e-5)
  assert params.false_positive_rate <= 1e-5


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


def _tail(sigma: float, tau: int) -> float:
  return float(_pmf(sigma, np.arange(tau, tau + int(60 * sigma) + 60)).sum())


def _assert_smallest_integer_threshold(sigma, tau, alpha):
  """tau is an integer, its tail (summed in the test) at most alpha, the
  tail of tau - 1 above it."""
  assert isinstance(tau, int)
  assert _tail(sigma, tau) <= alpha * (1 + 1e-12)
  assert _tail(sigma, tau - 1) > alpha


def test_params_derive_threshold_and_rate_from_each_other():
  by_rate = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3,
                                       false_positive_rate=0.01)
  # the continuous quantile is 4.65; the discrete tail at 5 is 0.012
  assert by_rate.threshold == 6
  _assert_smallest_integer_threshold(2.0, by_rate.threshold, 0.01)
  assert by_rate.false_positive_rate == pytest.approx(_tail(2.0, 6),
                                                      rel=1e-12)
  by_tau = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3, threshold=6)
  assert by_tau.false_positive_rate == by_rate.false_positive_rate
  # a real threshold is rounded up: the noisy sums are integers
  assert noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3,
                                    threshold=4.2).threshold == 5
  with pytest.raises(ValueError, match="disagree"):
    noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3, threshold=1.0,
                               false_positive_rate=0.01)
  with pytest.raises(ValueError, match="threshold or false_positive_rate"):
    noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=3)


@pytest.mark.parametrize("sigma,alpha", [(0.7, 0.05), (3.3, 1e-5),
                                         (40.0, 1e-9), (2.0, 0.6)])
def test_threshold_for_is_the_smallest_integer_meeting_the_rate(sigma, alpha):
  _assert_smallest_integer_threshold(
      sigma, noisy_trie.threshold_for(sigma, alpha), alpha)


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
def test_rounds_of_different_noise_compose(sigma, multipliers, levels,
                                           delta):
  # dp_accounting's discrete-Gaussian PLD of the rounds, composed one by
  # one in the test, and the zCDP bound, which is looser.
  params = noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=levels,
                                      false_positive_rate=1e-3,
                                      noise_multipliers=multipliers)
  computed = noisy_trie.epsilon(params, delta)
  direct = _pld_epsilon(params.sigmas, delta)
  assert direct * (1 - 2e-3) <= computed <= direct * (1 + 2e-3) + 1e-3
  rho = sum(0.5 / s**2 for s in params.sigmas)
  assert computed <= rho + 2 * math.sqrt(rho * math.log(1 / delta))
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
  alpha = params.false_positive_rate  # the base's, at most 1e-5
  assert alpha <= 1e-5
  for r in range(4):
    round_params = params.at_round(r)
    _assert_smallest_integer_threshold(round_params.sigma,
                                       round_params.threshold, alpha)
    assert round_params.false_positive_rate <= alpha
    assert round_params.noise_multipliers == ()
  assert first.threshold > 3 * last.threshold
  assert noisy_trie.dp_event(params) == dp_accounting.ComposedDpEvent(
      [dp_events.DiscreteGaussianDpEvent(s) for s in (8.0, 4.0, 2.0, 2.0)])
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
    ((2.0,) * 5, "more than the 4 rounds"), ("4", "sequence"),
    ((1e-300,), r"noise_multipliers\[0\]=1e-300 is outside"),
    ((1.0, 1e4), r"noise_multipliers\[1\]=10000 is outside")])
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


def test_a_round_whose_rate_underflows_scales_the_threshold():
  """At sigma = 0.01 the tail at 1 is 0 in doubles: round r's threshold is
  the base's times its multiplier, rounded up."""
  params = noisy_trie.NoisyTrieParams(sigma=0.01, num_levels=3, threshold=0.5,
                                      noise_multipliers=(1000.0,))
  assert params.threshold == 1 and params.false_positive_rate == 0.0
  first = params.at_round(0)
  assert (first.sigma, first.threshold) == (10.0, 1000)
  assert params.at_round(1).threshold == 1



# A small calibration (three rounds, q = 1 only): half a second of CPU,
# searched once for the tests of the store below.
_SMALL = dict(num_levels=3, epsilon_target=4.0, delta=1e-6,
              sampling_rates=(1.0,))


def _forget_in_process():
  noisy_trie._remembered.cache_clear()  # pylint: disable=protected-access


@pytest.fixture(name="searched", scope="module")
def _searched(tmp_path_factory):
  """The small calibration, searched, and the entry it stored."""
  where = str(tmp_path_factory.mktemp("store"))
  before = calibration_store._directory  # pylint: disable=protected-access
  calibration_store.configure(where)
  _forget_in_process()
  try:
    params = noisy_trie.calibrate(**_SMALL)
  finally:
    calibration_store._directory = before  # pylint: disable=protected-access
    _forget_in_process()
  (name,) = os.listdir(os.path.join(where, "calibrations"))
  with open(os.path.join(where, "calibrations", name), encoding="utf-8") as f:
    return params, name, json.load(f)


@pytest.fixture(name="store")
def _store(tmp_path, monkeypatch):
  """A fresh calibration store in tmp_path, nothing remembered in process."""
  monkeypatch.setattr(calibration_store, "_directory",
                      calibration_store._directory)  # restored afterwards
  calibration_store.configure(str(tmp_path))
  _forget_in_process()
  os.makedirs(os.path.join(str(tmp_path), "calibrations"))
  yield os.path.join(str(tmp_path), "calibrations")
  _forget_in_process()


def _searches(monkeypatch, answer):
  """The calls to the search from now on, which answers ``answer``."""
  calls = []
  monkeypatch.setattr(noisy_trie, "_calibrated",
                      lambda *args: calls.append(args) or answer)
  return calls


def test_a_stored_calibration_is_read_back_and_remembered(store, searched,
                                                          monkeypatch):
  params, name, entry = searched
  with open(os.path.join(store, name), "w", encoding="utf-8") as f:
    json.dump(entry, f)
  calls = _searches(monkeypatch, None)
  assert noisy_trie.calibrate(**_SMALL) == params  # from the disk
  os.remove(os.path.join(store, name))
  assert noisy_trie.calibrate(**_SMALL) == params  # from the process
  # alpha and k are not the calibration's: the same sigma and rate.
  other = noisy_trie.calibrate(**_SMALL, false_positive_rate=1e-3,
                               chars_per_level=2)
  assert (other.sigma, other.sampling_rate, other.chars_per_level) == (
      params.sigma, 1.0, 2)
  assert not calls


@pytest.mark.parametrize("factor", [0.9, 1.1])
def test_a_stored_sigma_not_private_or_not_smallest_is_searched_again(
    store, searched, monkeypatch, factor):
  params, name, entry = searched
  wrong = json.loads(json.dumps(entry))
  wrong["answer"]["sigma"] *= factor
  with open(os.path.join(store, name), "w", encoding="utf-8") as f:
    json.dump(wrong, f)
  calls = _searches(monkeypatch, params)
  assert noisy_trie.calibrate(**_SMALL) == params
  assert len(calls) == 1
