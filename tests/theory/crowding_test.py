"""Tests of triehh.theory.crowding: the reverse direction's lower bound."""

import math

from absl.testing import parameterized
import numpy as np
from scipy import stats

from triehh.theory import crowding


def _exact_cdf(x: int, n: int, holders: int, m: int) -> float:
  """P[H <= x] by exact integer arithmetic (small n only)."""
  total = math.comb(n, m)
  return sum(math.comb(holders, i) * math.comb(n - holders, m - i)
             for i in range(x + 1)) / total


class HypergeomCdfDescendingTest(parameterized.TestCase):

  @parameterized.parameters(
      # (x, n, first, count, m): the window _crowding asks for, and edges.
      (3, 60, 55, 50, 20),     # starts where every term is still 0
      (0, 40, 40, 38, 5),      # x = 0
      (9, 80, 80, 70, 10),     # x = m - 1
      (12, 30, 30, 10, 12),    # x >= m: every cdf is 1
      (4, 50, 20, 2, 10),      # too few rows for the walk
      (5, 120, 100, 95, 40),   # holders fall below x: the last rows
  )
  def test_equals_exact_arithmetic(self, x, n, first, count, m):
    got = crowding.hypergeom_cdf_descending(x, n, first, count, m)
    want = np.array([_exact_cdf(x, n, first - j, m) for j in range(count)])
    self.assertEqual(got.shape, (count,))
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300)

  @parameterized.parameters((5000, 300, 4), (26701, 12959, 44),
                            (3000, 1000, 30), (35305, 9025, 16))
  def test_matches_scipy_on_the_crowding_window(self, n, m, theta):
    lo = max(0, m - theta)
    count = min(4 * m + 200, n - theta - lo + 2, 50_000)
    got = crowding.hypergeom_cdf_descending(theta - 1, n, n - lo, count, m)
    rows = np.unique(np.r_[np.arange(0, count, 37), count - 1])  # scipy is slow
    got = got[rows]
    want = stats.hypergeom.cdf(theta - 1, n, n - lo - rows, m)
    self.assertTrue(np.all(got[want == 0] < 1e-280))
    normal = want > 1e-280
    self.assertGreater(normal.sum(), 5)
    np.testing.assert_allclose(got[normal], want[normal], rtol=1e-8)


class ReverseLowerBoundTest(parameterized.TestCase):

  def test_crowding_pair_is_recomputed_from_its_definition(self):
    n, m, theta, levels, epsilon = 400, 60, 5, 4, 1.0
    found = crowding.reverse_lower_bound(n, m, theta, levels, epsilon)
    self.assertEqual(found.family, "crowding")
    k = found.holders

    def miss(holders):
      return 1 - (1 - _exact_cdf(theta - 1, n, holders, m))**levels

    self.assertAlmostEqual(found.p_d, miss(k), delta=1e-12)
    self.assertAlmostEqual(found.p_d_prime, miss(k - 1), delta=1e-12)
    self.assertAlmostEqual(found.divergence,
                           miss(k - 1) - math.exp(epsilon) * miss(k),
                           delta=1e-12)
    # And it is the worst pair of the window.
    window = range(n - max(0, m - theta),
                   n - min(n - theta, max(0, m - theta) + 4 * m + 200) - 1, -1)
    best = max(miss(h - 1) - math.exp(epsilon) * miss(h) for h in window)
    self.assertAlmostEqual(found.divergence, best, delta=1e-12)
    self.assertGreater(found.divergence, 0.0)
