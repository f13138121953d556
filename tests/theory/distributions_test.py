"""Tests of triehh.theory.distributions: scipy.stats's hypergeometric and
binomial values, bit for bit, without importing scipy.stats."""

import pathlib
import subprocess
import sys

from absl.testing import parameterized
import numpy as np
from scipy import stats

from triehh.theory import distributions

_ROOT = pathlib.Path(distributions.__file__).parent.parent.parent
_HYPERGEOM = ("pmf", "logpmf", "cdf", "sf")


def _hypergeom(name: str):
  return getattr(distributions, f"hypergeom_{name}")


def _random_hypergeom_arguments(seed: int, size: int):
  """Valid (total, good, draws) with k over and beyond the support."""
  rng = np.random.default_rng(seed)
  total = rng.integers(1, 10**rng.integers(1, 7, size=size), size=size)
  good = rng.integers(0, total + 1)
  draws = rng.integers(0, total + 1)
  k = rng.integers(-2, np.minimum(good, draws) + 3)
  return k, total, good, draws


class HypergeomTest(parameterized.TestCase):

  @parameterized.parameters(0, 1, 2)
  def test_every_function_is_scipys_bit_for_bit(self, seed):
    args = _random_hypergeom_arguments(seed, 1500)
    for name in _HYPERGEOM:
      got = _hypergeom(name)(*args)
      want = getattr(stats.hypergeom, name)(*args)
      self.assertEqual(got.dtype, want.dtype, name)
      np.testing.assert_array_equal(got, want, err_msg=name)
    self.assertGreater(np.count_nonzero(distributions.hypergeom_pmf(*args)
                                        > 0), 400)

  def test_scalars_and_broadcasting_are_scipys(self):
    holders = np.arange(40, 0, -1)
    for name in _HYPERGEOM:
      for k in (-1, 0, 3, 7, 12, 40):
        got = _hypergeom(name)(k, 100, holders, 12)
        want = getattr(stats.hypergeom, name)(k, 100, holders, 12)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} k={k}")
        scalar = _hypergeom(name)(k, 100, 30, 12)
        self.assertEqual(type(scalar), np.float64)
        self.assertEqual(scalar, getattr(stats.hypergeom, name)(k, 100, 30, 12))

  def test_the_law_sums_to_one_and_cdf_and_sf_are_its_running_sums(self):
    k = np.arange(-1, 16)
    pmf = distributions.hypergeom_pmf(k, 50, 20, 15)
    self.assertEqual(pmf[0], 0.0)
    self.assertAlmostEqual(pmf.sum(), 1.0, places=12)
    np.testing.assert_allclose(distributions.hypergeom_cdf(k, 50, 20, 15),
                               np.cumsum(pmf), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(distributions.hypergeom_sf(k, 50, 20, 15),
                               1 - np.cumsum(pmf), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(
        np.exp(distributions.hypergeom_logpmf(k, 50, 20, 15)), pmf,
        rtol=1e-12)

  @parameterized.parameters((3, 10, 11, 5), (3, 10, 4, 11), (3, 0, 0, 0),
                            (3, 10, -1, 2))
  def test_arguments_out_of_range_are_refused(self, k, total, good, draws):
    for name in _HYPERGEOM:
      with self.assertRaisesRegex(ValueError, "out of range"):
        _hypergeom(name)(k, total, good, draws)


class BinomTest(parameterized.TestCase):

  @parameterized.parameters(0, 1)
  def test_sf_is_scipys_bit_for_bit(self, seed):
    rng = np.random.default_rng(seed)
    trials = rng.integers(0, 10**rng.integers(1, 9, size=3000), size=3000)
    p = np.where(rng.random(3000) < 0.05, rng.choice([0.0, 1.0], size=3000),
                 10**rng.uniform(-6, 0, size=3000))
    # Near the mean (a tail strictly between 0 and 1), and some anywhere.
    spread = np.sqrt(trials * p * (1 - p) + 1)
    k = np.where(rng.random(3000) < 0.8,
                 np.floor(trials * p + rng.normal(0, 2, size=3000) * spread),
                 rng.integers(-2, trials + 3))
    k = k + rng.choice([0.0, 0.5], size=3000)
    got = distributions.binom_sf(k, trials, p)
    np.testing.assert_array_equal(got, stats.binom.sf(k, trials, p))
    self.assertGreater(np.count_nonzero((got > 0) & (got < 1)), 1000)
    self.assertEqual(distributions.binom_sf(13, 40, 0.3),
                     stats.binom.sf(13, 40, 0.3))
    self.assertEqual(type(distributions.binom_sf(13, 40, 0.3)), np.float64)

  @parameterized.parameters((3, -1, 0.5), (3, 2.5, 0.5), (3, 10, 1.5),
                            (3, 10, -0.1))
  def test_arguments_out_of_range_are_refused(self, k, trials, p):
    with self.assertRaisesRegex(ValueError, "out of range"):
      distributions.binom_sf(k, trials, p)


def test_a_fixed_size_label_and_discovery_rates_do_not_import_scipy_stats():
  # The reverse direction's lower bound, which every fixed-size run's label
  # computes (triehh.theory.policy), and the discovery rates that summaries
  # print, in a fresh process.
  code = ("import sys\n"
          "from triehh.theory import crowding, utility\n"
          "found = crowding.reverse_lower_bound(26701, 12959, 44, 10, 4.0)\n"
          "assert found.divergence >= 0\n"
          "assert 0 < utility.discovery_rate(3000, 10**5, 1915, 14, 11) < 1\n"
          "assert 0 < utility.poisson_discovery_rate(60, 0.3, 14, 11) < 1\n"
          "print('scipy.stats' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True, check=True, timeout=120, cwd=_ROOT)
  assert out.stdout.strip() == "False", out.stdout + out.stderr
