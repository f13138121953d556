"""Tests of triehh.core.discrete_noise: the laws drawn, exactly."""

import fractions
import math

import numpy as np
import pytest
from scipy import stats

from triehh.core import discrete_noise

# A seeded chi-square statistic above the 1 - 1e-6 quantile fails the test:
# the draws do not have the law.
_P_REJECT = 1e-6


def _chi_square_p(draws: np.ndarray, pmf) -> float:
  """p-value of the chi-square test of ``draws`` against ``pmf(x)`` on the
  integers, cells with fewer than 20 expected draws pooled in the tails."""
  n = draws.size
  lo, hi = int(draws.min()) - 50, int(draws.max()) + 50
  x = np.arange(lo, hi + 1)
  p = pmf(x)
  expected = n * p
  big = np.flatnonzero(expected >= 20)
  first, last = int(big[0]), int(big[-1])
  counts = np.bincount(draws - lo, minlength=x.size).astype(float)
  observed = np.concatenate([[counts[:first].sum()], counts[first:last + 1],
                             [counts[last + 1:].sum()]])
  wanted = np.concatenate([[expected[:first].sum()],
                           expected[first:last + 1],
                           [expected[last + 1:].sum()]])
  # the law's mass outside [lo, hi] goes to the end cells
  wanted[0] += n * max(0.0, (1.0 - p.sum()) / 2)
  wanted[-1] += n * max(0.0, (1.0 - p.sum()) / 2)
  keep = wanted > 0
  chi2 = float(((observed[keep] - wanted[keep]) ** 2 / wanted[keep]).sum())
  return float(stats.chi2.sf(chi2, keep.sum() - 1))


def _gaussian_pmf_direct(sigma: float):
  """The discrete Gaussian's pmf, normalised by a direct sum (independent
  of the library's Poisson summation)."""
  span = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
  z = float(np.exp(-span.astype(float) ** 2 / (2 * sigma**2)).sum())
  return lambda x: np.exp(-np.asarray(x, float) ** 2 / (2 * sigma**2)) / z


def _laplace_pmf(scale: float):
  q = math.exp(-1.0 / scale)
  return lambda x: (1 - q) / (1 + q) * q ** np.abs(np.asarray(x, float))


@pytest.mark.parametrize("sigma", [0.4, 1.0, 2.5, 7.3, 40.0])
def test_discrete_gaussian_has_its_pmf(sigma):
  draws = discrete_noise.discrete_gaussian(np.random.default_rng(7), sigma,
                                           200_000)
  assert draws.dtype == np.int64
  assert _chi_square_p(draws, _gaussian_pmf_direct(sigma)) > _P_REJECT


@pytest.mark.parametrize("sigma,wrong", [(2.5, 2.6), (7.3, 7.0),
                                         (40.0, 41.0)])
def test_a_wrong_sigma_is_rejected(sigma, wrong):
  """The chi-square test above can fail: draws of sigma against the pmf of
  a sigma a few percent off."""
  draws = discrete_noise.discrete_gaussian(np.random.default_rng(7), sigma,
                                           200_000)
  assert _chi_square_p(draws, _gaussian_pmf_direct(wrong)) < _P_REJECT


@pytest.mark.parametrize("sigma", [1.0, 12.5])
def test_discrete_gaussian_is_symmetric_with_its_variance(sigma):
  n = 400_000
  draws = discrete_noise.discrete_gaussian(np.random.default_rng(3), sigma, n)
  pmf = _gaussian_pmf_direct(sigma)
  x = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
  variance = float((x.astype(float) ** 2 * pmf(x)).sum())
  assert abs(draws.mean()) < 5 * math.sqrt(variance / n)
  # var of the sample variance: (mu4 - var^2) / n
  mu4 = float((x.astype(float) ** 4 * pmf(x)).sum())
  assert abs(draws.var() - variance) < 5 * math.sqrt((mu4 - variance**2) / n)
  positive = np.bincount(draws[draws > 0])
  negative = np.bincount(-draws[draws < 0], minlength=positive.size)
  both = positive + negative[:positive.size]
  cells = both >= 20
  # given |x|, its sign is a fair coin: a binomial test per cell, pooled
  z = (positive[cells] - both[cells] / 2) / np.sqrt(both[cells] / 4)
  assert stats.chi2.sf(float((z**2).sum()), cells.sum()) > _P_REJECT


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.3, 25.0])
def test_discrete_laplace_has_its_pmf(scale):
  draws = discrete_noise.discrete_laplace(np.random.default_rng(11), scale,
                                          200_000)
  assert draws.dtype == np.int64
  assert _chi_square_p(draws, _laplace_pmf(scale)) > _P_REJECT
  assert _chi_square_p(draws, _laplace_pmf(scale * 1.05)) < _P_REJECT


@pytest.mark.parametrize("scale,tau", [(1.1875, 10), (2.375, 1),
                                       (0.7, 0), (3.0, -4)])
def test_discrete_laplace_above_has_the_conditioned_pmf(scale, tau):
  """The geometric tail (tau >= 1) and plain rejection (tau <= 0) draw the
  discrete Laplace law given X >= tau; one threshold higher is seen."""
  draws = discrete_noise.discrete_laplace_above(np.random.default_rng(17),
                                                scale, tau, 30_000)
  assert draws.dtype == np.int64 and draws.min() >= tau
  pmf = _laplace_pmf(scale)

  def conditioned(start):
    x = np.arange(start, start + 4000)
    mass = float(pmf(x).sum())
    return lambda v: np.where(np.asarray(v) >= start, pmf(v) / mass, 0.0)

  assert _chi_square_p(draws, conditioned(tau)) > _P_REJECT
  shifted = discrete_noise.discrete_laplace_above(
      np.random.default_rng(17), scale, tau + 1, 30_000)
  assert _chi_square_p(shifted, conditioned(tau)) < _P_REJECT


@pytest.mark.parametrize("num,den", [(0, 1), (1, 3), (1, 1), (7, 3),
                                     (25, 4), (1, 2**50)])
def test_bernoulli_exp_frequency(num, den):
  """Algorithm 1's frequency over seeded draws against exp(-num / den), in
  integer arithmetic all the way (no float enters the draw)."""
  n = 400_000
  hits = discrete_noise.bernoulli_exp(np.random.default_rng(5),
                                      np.full(n, num), den)
  p = math.exp(-num / den)
  assert abs(hits.mean() - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_bernoulli_exp_refuses_bad_input():
  with pytest.raises(ValueError, match="num >= 0"):
    discrete_noise.bernoulli_exp(np.random.default_rng(0), -1, 3)


def test_big_rational_bernoulli_frequency():
  """The 62-bit-digit Bernoulli of rationals far beyond 64 bits."""
  den = 3**130 + 1
  num = den // 3
  rng = np.random.default_rng(2)
  which = np.zeros(200_000, dtype=np.int64)
  hits = discrete_noise._bernoulli_digits(rng, [num], den, which)
  assert abs(hits.mean() - 1 / 3) < 5 * math.sqrt(2 / 9 / which.size)


class _TieRng:
  """Integers from a script: forces a tie on the first 62 bits."""

  def __init__(self, script):
    self.script = list(script)

  def integers(self, low, high, dtype=None, size=None):
    del low, high, dtype
    if size is None:
      return self.script.pop(0)
    return np.array([self.script.pop(0) for _ in range(size)], np.int64)


def test_a_tie_on_the_first_bits_is_resolved_by_the_next():
  num, den = 1, 3  # 1/3 = 0.010101... in binary: 62 bits 0x1555...
  digit = (num << 62) // den
  # first draw ties, the next is below the next digit (the same pattern)
  assert discrete_noise._bernoulli_digits(
      _TieRng([digit, digit - 1]), [num], den, np.zeros(1, np.int64))[0]
  assert not discrete_noise._bernoulli_digits(
      _TieRng([digit, digit + 1]), [num], den, np.zeros(1, np.int64))[0]


def test_same_seed_same_draws_and_shapes():
  a = discrete_noise.discrete_gaussian(np.random.default_rng(1), 3.0, (4, 5))
  b = discrete_noise.discrete_gaussian(np.random.default_rng(1), 3.0, (4, 5))
  assert a.shape == (4, 5) and np.array_equal(a, b)
  assert discrete_noise.discrete_laplace(np.random.default_rng(1), 2.0,
                                         0).shape == (0,)


def test_fraction_parameters_are_exact():
  exact = discrete_noise.discrete_gaussian(
      np.random.default_rng(4), fractions.Fraction(5, 2), 1000)
  as_float = discrete_noise.discrete_gaussian(np.random.default_rng(4), 2.5,
                                              1000)
  assert np.array_equal(exact, as_float)  # 2.5 is exactly 5/2


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"),
                                 2.0**41, "x"])
def test_bad_parameters_are_refused_in_one_line(bad):
  for name, draw in (("sigma", discrete_noise.discrete_gaussian),
                     ("scale", discrete_noise.discrete_laplace)):
    with pytest.raises(ValueError, match=name) as info:
      draw(np.random.default_rng(0), bad, 3)
    assert "\n" not in str(info.value)
  with pytest.raises(ValueError, match="scale"):
    discrete_noise.discrete_laplace(np.random.default_rng(0), 1e-300, 3)


def test_a_negligible_sigma_draws_zeros():
  """Below 2^-10 the law's mass off 0 is below exp(-2^19)."""
  draws = discrete_noise.discrete_gaussian(np.random.default_rng(0), 1e-6, 9)
  assert draws.dtype == np.int64 and not draws.any()


@pytest.mark.parametrize("sigma,tau", [(1.5, 3), (4.0, 20), (30.0, 130),
                                       (10.0, 5), (10.0, -4), (0.6, 2)])
def test_the_tail_draws_have_the_conditioned_pmf(sigma, tau):
  """The geometric proposal (tau > sigma) and the plain rejection (tau <=
  sigma) draw the discrete Gaussian given X >= tau; one threshold higher
  is seen."""
  draws = discrete_noise.discrete_gaussian_above(np.random.default_rng(8),
                                                 sigma, tau, 100_000)
  assert draws.dtype == np.int64 and draws.min() >= tau
  pmf = _gaussian_pmf_direct(sigma)

  def conditioned(start):
    mass = float(pmf(np.arange(start, start + int(60 * sigma) + 60)).sum())
    return lambda x: np.where(np.asarray(x) >= start, pmf(x) / mass, 0.0)

  assert _chi_square_p(draws, conditioned(tau)) > _P_REJECT
  if pmf(tau) / float(pmf(np.arange(tau, tau + 999)).sum()) > 0.05:
    shifted = discrete_noise.discrete_gaussian_above(
        np.random.default_rng(8), sigma, tau + 1, 100_000)
    assert _chi_square_p(shifted, conditioned(tau)) < _P_REJECT


@pytest.mark.parametrize("sigma", [0.5, 1.0, 4.2, 30.0])
def test_tail_is_the_summed_pmf(sigma):
  pmf = _gaussian_pmf_direct(sigma)
  for tau in (-3, 0, 1, 2, int(3 * sigma), int(6 * sigma) + 1):
    x = np.arange(tau, tau + int(60 * sigma) + 60)
    direct = float(pmf(x).sum())
    assert math.isclose(discrete_noise.discrete_gaussian_tail(sigma, tau),
                        direct, rel_tol=1e-12, abs_tol=1e-300)
  x = np.arange(-5, 6)
  assert np.allclose(discrete_noise.discrete_gaussian_pmf(sigma, x), pmf(x),
                     rtol=1e-12)


# ---- Poisson and Skellam ----------------------------------------------------


@pytest.mark.parametrize("mean", [fractions.Fraction(1, 3),
                                  fractions.Fraction(1, 2), 0.75, 2.25,
                                  fractions.Fraction(73, 8)])
def test_poisson_has_its_pmf(mean):
  """The pieces (1/2s and a rest of at most 1/2, or two) sum to the law."""
  draws = discrete_noise.poisson(np.random.default_rng(11), mean, 100_000)
  assert draws.dtype == np.int64 and draws.min() >= 0
  pmf = lambda x: stats.poisson.pmf(x, float(mean))
  assert _chi_square_p(draws, pmf) > _P_REJECT
  # a mean 5% off is told apart: the test can fail
  wrong = lambda x: stats.poisson.pmf(x, 1.05 * float(mean))
  assert _chi_square_p(draws, wrong) < _P_REJECT


@pytest.mark.parametrize("mean", [fractions.Fraction(1, 2**20), 0.375,
                                  fractions.Fraction(25, 4), 20.0])
def test_skellam_has_its_pmf(mean):
  draws = discrete_noise.skellam(np.random.default_rng(12), mean, 40_000)
  assert draws.dtype == np.int64
  m = float(mean)
  assert _chi_square_p(draws, lambda x: stats.skellam.pmf(x, m, m)) > _P_REJECT
  assert np.allclose(discrete_noise.skellam_pmf(m, np.arange(-6, 7)),
                     stats.skellam.pmf(np.arange(-6, 7), m, m), rtol=1e-9)
  if m > 0.1:
    wrong = lambda x: stats.skellam.pmf(x, 1.1 * m, 1.1 * m)
    assert _chi_square_p(draws, wrong) < _P_REJECT


@pytest.mark.parametrize("mean,tau", [(fractions.Fraction(9, 2), 7),
                                      (fractions.Fraction(12), 17),
                                      (fractions.Fraction(1, 64), 2),
                                      (fractions.Fraction(5), 0),
                                      (fractions.Fraction(5), -2)])
def test_skellam_above_has_the_conditioned_pmf(mean, tau):
  """The tilted proposal (tau > 0) and plain rejection (tau <= 0) draw
  the Skellam law given X >= tau; one threshold higher is seen."""
  m = float(mean)
  draws = discrete_noise.skellam_above(np.random.default_rng(13), mean, tau,
                                       30_000)
  assert draws.dtype == np.int64 and draws.min() >= tau

  def conditioned(start):
    mass = float(stats.skellam.sf(start - 1, m, m))
    return lambda x: np.where(np.asarray(x) >= start,
                              stats.skellam.pmf(x, m, m) / mass, 0.0)

  assert _chi_square_p(draws, conditioned(tau)) > _P_REJECT
  shifted = discrete_noise.skellam_above(np.random.default_rng(13), mean,
                                         tau + 1, 30_000)
  assert _chi_square_p(shifted, conditioned(tau)) < _P_REJECT


@pytest.mark.parametrize("mean", [0.5, 3.0, 40.0])
def test_skellam_tail_is_the_summed_pmf(mean):
  for tau in (-3, 0, 1, 2, int(3 * mean) + 1, int(6 * math.sqrt(mean)) + 2):
    direct = float(stats.skellam.pmf(np.arange(tau, tau + 2000), mean,
                                     mean).sum())
    assert math.isclose(discrete_noise.skellam_tail(mean, tau), direct,
                        rel_tol=1e-9, abs_tol=1e-300)


def test_poisson_same_seed_same_draws_and_fractions_exact():
  a = discrete_noise.skellam(np.random.default_rng(1), 2.5, (4, 5))
  b = discrete_noise.skellam(np.random.default_rng(1),
                             fractions.Fraction(5, 2), (4, 5))
  assert a.shape == (4, 5) and np.array_equal(a, b)
  assert discrete_noise.poisson(np.random.default_rng(1), 1.0, 0).shape == (0,)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"),
                                 2.0**21, 1e-300, "x"])
def test_bad_means_are_refused_in_one_line(bad):
  for draw in (discrete_noise.poisson, discrete_noise.skellam):
    with pytest.raises(ValueError, match="mean") as info:
      draw(np.random.default_rng(0), bad, 3)
    assert "\n" not in str(info.value)
  with pytest.raises(ValueError, match="mean"):
    discrete_noise.skellam_above(np.random.default_rng(0), 0.3, 2, 3)
