"""Tests of triehh.theory.hypergeom: scipy.stats.hypergeom's values, bit for
bit, without importing scipy.stats."""

import pathlib
import subprocess
import sys

from absl.testing import parameterized
import numpy as np
from scipy import stats

from triehh.theory import hypergeom

_ROOT = pathlib.Path(hypergeom.__file__).parent.parent.parent


def _random_arguments(seed: int, size: int):
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
    args = _random_arguments(seed, 1500)
    for name in ("pmf", "logpmf", "cdf"):
      got = getattr(hypergeom, name)(*args)
      want = getattr(stats.hypergeom, name)(*args)
      self.assertEqual(got.dtype, want.dtype, name)
      np.testing.assert_array_equal(got, want, err_msg=name)
    self.assertGreater(np.count_nonzero(hypergeom.pmf(*args) > 0), 400)

  def test_scalars_and_broadcasting_are_scipys(self):
    holders = np.arange(40, 0, -1)
    for name in ("pmf", "logpmf", "cdf"):
      for k in (0, 3, 7, 12, 40):
        got = getattr(hypergeom, name)(k, 100, holders, 12)
        want = getattr(stats.hypergeom, name)(k, 100, holders, 12)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} k={k}")

  def test_the_law_sums_to_one_and_the_cdf_is_its_running_sum(self):
    k = np.arange(-1, 16)
    pmf = hypergeom.pmf(k, 50, 20, 15)
    self.assertEqual(pmf[0], 0.0)
    self.assertAlmostEqual(pmf.sum(), 1.0, places=12)
    np.testing.assert_allclose(hypergeom.cdf(k, 50, 20, 15), np.cumsum(pmf),
                               rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(np.exp(hypergeom.logpmf(k, 50, 20, 15)), pmf,
                               rtol=1e-12)

  @parameterized.parameters((3, 10, 11, 5), (3, 10, 4, 11), (3, 0, 0, 0),
                            (3, 10, -1, 2))
  def test_arguments_out_of_range_are_refused(self, k, total, good, draws):
    for name in ("pmf", "logpmf", "cdf"):
      with self.assertRaisesRegex(ValueError, "out of range"):
        getattr(hypergeom, name)(k, total, good, draws)


def test_a_fixed_size_label_does_not_import_scipy_stats():
  # The reverse direction's lower bound, which every fixed-size run's label
  # computes (triehh.theory.policy), in a fresh process.
  code = ("import sys\n"
          "from triehh.theory import crowding\n"
          "found = crowding.reverse_lower_bound(26701, 12959, 44, 10, 4.0)\n"
          "assert found.divergence >= 0\n"
          "print('scipy.stats' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True, check=True, timeout=120, cwd=_ROOT)
  assert out.stdout.strip() == "False", out.stdout + out.stderr
