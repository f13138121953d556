"""Tests of the shuffle amplification bound against the paper's values."""

import math

from absl.testing import parameterized

from triehh.baselines import amplification
import triehh

SENTIMENT140_USERS = 659_775  # users of the full Sentiment140 training set
OOV_USERS = 6_000_000


def closed_form_delta(eps, eps0, n):
  """The bound written out directly (fine for moderate values)."""
  t = ((math.exp(eps) - 1) / ((math.exp(eps) + 1)
                              * (math.exp(eps0) - math.exp(-eps0))))**2
  return ((math.exp(eps) - 1) / (4 * n * t)
          * math.exp(-(1 - math.exp(-2)) * n * min(math.exp(-eps0), t)))


class PaperValuesTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("single_word_eps1", SENTIMENT140_USERS, 1.0, 4.29),
      ("single_word_eps4", SENTIMENT140_USERS, 4.0, 4.96),
      ("oov_eps1", OOV_USERS, 1.0, 5.31),
      ("oov_eps4", OOV_USERS, 4.0, 5.99),
  )
  def test_reproduces_the_paper(self, n, eps, paper):
    local = triehh.sfp_local_epsilon(eps, 1.0 / n**2, n)
    # The paper prints two decimals; ours agree to within rounding.
    self.assertLess(abs(local - paper), 0.005)
    self.assertEqual(round(local, 2), paper)

  def test_which_n_reproduces_the_single_word_values(self):
    # Both single-word values round to the paper's from about 652k to 660k
    # users; 640k users already give 4.28 at epsilon = 1.
    for n in (652_000, 659_380, 660_000):
      self.assertEqual(round(triehh.sfp_local_epsilon(1.0, n**-2.0, n), 2),
                       4.29)
      self.assertEqual(round(triehh.sfp_local_epsilon(4.0, n**-2.0, n), 2),
                       4.96)
    self.assertEqual(
        round(triehh.sfp_local_epsilon(1.0, 640_000**-2.0, 640_000), 2), 4.28)


class BoundTest(parameterized.TestCase):

  @parameterized.parameters((1.0, 3.0, 10_000), (0.5, 2.0, 50_000),
                            (4.0, 3.5, 20_000))
  def test_log_delta_is_the_closed_form(self, eps, eps0, n):
    self.assertAlmostEqual(
        amplification.log_delta(eps, eps0, n),
        math.log(closed_form_delta(eps, eps0, n)), places=9)

  @parameterized.parameters((1.0, 1e-8, 10**5), (4.0, 1e-12, 10**6),
                            (0.3, 1e-6, 10**7))
  def test_solution_meets_delta_and_round_trips(self, eps, delta, n):
    local = amplification.sfp_local_epsilon(eps, delta, n)
    self.assertGreater(local, eps)
    self.assertAlmostEqual(
        amplification.shuffle_delta(eps, local, n) / delta, 1.0, places=6)
    # A slightly larger local epsilon breaks the target.
    self.assertGreater(amplification.shuffle_delta(eps, local + 1e-3, n),
                       delta)
    self.assertAlmostEqual(amplification.central_epsilon(local, delta, n), eps,
                           places=6)

  def test_monotone_in_every_argument(self):
    base = amplification.sfp_local_epsilon(1.0, 1e-10, 10**6)
    self.assertGreater(amplification.sfp_local_epsilon(2.0, 1e-10, 10**6),
                       base)
    self.assertGreater(amplification.sfp_local_epsilon(1.0, 1e-8, 10**6), base)
    self.assertGreater(amplification.sfp_local_epsilon(1.0, 1e-10, 10**7),
                       base)

  def test_never_below_the_central_epsilon(self):
    # Too few users for the shuffle to help: the report's own epsilon.
    self.assertEqual(amplification.sfp_local_epsilon(1.0, 1e-6, 100), 1.0)
    self.assertEqual(amplification.central_epsilon(1.0, 1e-6, 100), 1.0)
    self.assertEqual(amplification.sfp_local_epsilon(math.inf, 1e-6, 100),
                     math.inf)
    self.assertEqual(amplification.sfp_local_epsilon(300.0, 1e-12, 10**6),
                     300.0)

  @parameterized.parameters(
      (1.0, 1e-8, 10**5), (4.0, 1e-12, 10**6), (0.3, 1e-6, 10**7),
      (1.0, 5e-324, 10**6), (1e-12, 1e-10, 10**12), (0.01, 1e-3, 10**15))
  def test_the_solution_is_on_the_side_that_meets_delta(self, eps, delta, n):
    local = amplification.sfp_local_epsilon(eps, delta, n)
    self.assertGreater(local, eps)
    self.assertLessEqual(amplification.log_delta(eps, local, n),
                         math.log(delta))
    central = amplification.central_epsilon(local, delta, n)
    self.assertLessEqual(amplification.log_delta(central, local, n),
                         math.log(delta))

  @parameterized.parameters(
      (1e6, 1e-6, 1000), (1e6, 5e-324, 10**9), (1e300, 1e-12, 10**6),
      (5e-324, 1e-6, 10**6), (1e-300, 0.5, 100), (1.0, 5e-324, 2))
  def test_extreme_values_give_a_number(self, eps, delta, n):
    # These overflowed, or hit a log of 0, before.
    for solve in (amplification.sfp_local_epsilon,
                  amplification.central_epsilon):
      value = solve(eps, delta, n)
      self.assertTrue(0 < value < math.inf, msg=f"{solve.__name__}: {value}")
    # Large epsilons: the report's own epsilon, the shuffle cannot add to it.
    if eps >= 1e6:
      self.assertEqual(amplification.sfp_local_epsilon(eps, delta, n), eps)
      self.assertEqual(amplification.central_epsilon(eps, delta, n), eps)

  @parameterized.parameters(
      (0.0, 1e-6, 100, ValueError, "epsilon must be > 0"),
      (-1.0, 1e-6, 100, ValueError, "epsilon must be > 0"),
      (math.nan, 1e-6, 100, ValueError, "epsilon must be > 0"),
      (1.0, 0.0, 100, ValueError, r"delta must be in \(0, 1\)"),
      (1.0, 1.0, 100, ValueError, r"delta must be in \(0, 1\)"),
      (1.0, 1e-6, 1, ValueError, "n >= 2"),
      (1.0, 1e-6, 10.5, TypeError, "n must be an integer"),
      ("x", 1e-6, 100, TypeError, "must be numbers"),
  )
  def test_bad_parameters(self, eps, delta, n, error, message):
    with self.assertRaisesRegex(error, message):
      amplification.sfp_local_epsilon(eps, delta, n)
