"""Tests of Theorem 1 and Corollary 1, including the paper's Table 1."""

from fractions import Fraction
import math
import re
import sys

from absl.testing import parameterized
import pytest

from triehh.theory import privacy

# Table 1 of the paper: epsilon = 2, L = 10; (theta, gamma) for
# delta <= 1/(300 n) and delta <= 1/n^2. The paper truncates gamma to two
# decimals.
TABLE_1 = [
    (10**4, (10, 1.81), (12, 1.51)),
    (10**5, (11, 5.21), (14, 4.09)),
    (10**6, (12, 15.10), (15, 12.08)),
    (10**7, (13, 44.09), (17, 33.71)),
]


class Table1Test(parameterized.TestCase):

  @parameterized.parameters(*TABLE_1)
  def test_table_1(self, n, per_300n, per_n2):
    for delta, (theta, gamma) in ((1 / (300 * n), per_300n),
                                  (1 / n**2, per_n2)):
      cal = privacy.calibrate(n, 10, 2.0, delta)
      self.assertEqual(cal.theta, theta)
      self.assertLess(abs(cal.gamma_unrounded - gamma), 0.01)
      self.assertEqual(math.floor(cal.gamma_unrounded * 100) / 100,
                       gamma)  # truncation
      self.assertLessEqual(cal.delta, delta)
      self.assertLessEqual(cal.epsilon, 2.0)
      self.assertGreater(cal.epsilon, 1.99)

  @parameterized.parameters(*TABLE_1)
  def test_log10_rule_gives_the_first_column(self, n, per_300n, _):
    cal = privacy.calibrate(n, 10, 2.0, 1 / (300 * n), theta_rule="log10")
    self.assertEqual(cal.theta, per_300n[0])
    self.assertLessEqual(cal.delta, 1 / (300 * n))


class GuaranteeTest(parameterized.TestCase):

  def test_formula(self):
    n, length, theta, gamma = 10**6, 10, 12, 15.0
    eps, delta = privacy.guarantee(n, length, theta, gamma)
    self.assertAlmostEqual(
        eps, length * math.log(1 + 1 / (math.sqrt(n) / (gamma * theta) - 1)))
    self.assertAlmostEqual(delta, 10 / (9 * math.factorial(12)), delta=1e-22)

  @parameterized.parameters((123_457, 11, 3.0, 1e-9), (10**6, 11, 4.0, 1e-12),
                            (54_321, 5, 1.0, 1e-4), (10**8, 21, 8.0, 1e-16),
                            (10**5, 2, 10.0, 1e-10))
  def test_calibrate_matches_corollary_1_recomputed(self, n, length, eps,
                                                    delta):
    # Corollary 1 and Theorem 1 written out from the paper, with Lambert W by
    # Newton's method and Theorem 1's delta as an exact fraction.
    c = math.log(8 / (7 * math.sqrt(2 * math.pi)) / delta) / math.e
    w = math.log(c)
    for _ in range(100):
      w -= (w * math.exp(w) - c) / (math.exp(w) * (w + 1))
    growth = math.exp(eps / length)
    theta = max(10, math.ceil(math.exp(w + 1) - 0.5), math.ceil(growth - 1))
    gamma = (growth - 1) * math.sqrt(n) / (theta * growth)
    batch = math.floor(gamma * math.sqrt(n))
    used = batch / math.sqrt(n)
    self.assertTrue(1 <= used <= math.sqrt(n) / (theta + 1))
    expected_eps = length * math.log(1 + 1 / (math.sqrt(n) / (used * theta)
                                              - 1))
    expected_delta = Fraction(theta - 2, (theta - 3) * math.factorial(theta))

    cal = privacy.calibrate(n, length, eps, delta)
    self.assertEqual((cal.theta, cal.batch_size), (theta, batch))
    self.assertAlmostEqual(cal.gamma_unrounded / gamma, 1.0, places=12)
    self.assertAlmostEqual(cal.epsilon / expected_eps, 1.0, places=10)
    self.assertAlmostEqual(cal.delta / float(expected_delta), 1.0, places=10)
    self.assertLessEqual(cal.epsilon, eps)
    self.assertLessEqual(cal.delta, delta)

  def test_large_theta_does_not_overflow(self):
    _, delta = privacy.guarantee(10**8, 10, 100, 1.0)  # 100! > 1e157
    expected = Fraction(98, 97 * math.factorial(100))
    self.assertAlmostEqual(delta / float(expected), 1.0, places=12)

  @parameterized.named_parameters(
      ("theta_too_small", 10**6, 3, 2.0, "theta >= 4"),
      ("theta_above_root_n", 100, 11, 1.0, r"theta <= sqrt\(n\)"),
      ("gamma_below_one", 10**6, 10, 0.5, "gamma >= 1"),
      ("gamma_too_large", 10**6, 10, 100.0, r"gamma <= sqrt\(n\)/\(theta\+1\)"),
  )
  def test_conditions_raise(self, n, theta, gamma, message):
    with self.assertRaisesRegex(ValueError, message):
      privacy.guarantee(n, 10, theta, gamma)

  def test_error_says_what_would_satisfy(self):
    with self.assertRaisesRegex(ValueError, "at most 909 users"):
      privacy.guarantee(10**4, 10, 10, 100.0)


class CalibrateErrorsTest(parameterized.TestCase):

  def test_population_too_small(self):
    with pytest.raises(ValueError, match=(
        r"n=1000 users are too few .*at least n = \d+ users, or epsilon >= "
        r".*gamma=.*batch size \d+")):
      privacy.calibrate(1000, 10, 1.0, 1e-6)

  def test_suggested_population_works(self):
    try:
      privacy.calibrate(1000, 10, 1.0, 1e-6)
    except ValueError as err:
      need = int(str(err).split("at least n = ")[1].split()[0])
    cal = privacy.calibrate(need, 10, 1.0, 1e-6)
    self.assertGreaterEqual(cal.effective_gamma, 1.0)

  @parameterized.parameters((0.0, 1e-6), (-1.0, 1e-6), (1.0, 0.0), (1.0, 1.5))
  def test_bad_targets(self, epsilon, delta):
    with self.assertRaises(ValueError):
      privacy.calibrate(10**6, 10, epsilon, delta)

  def test_log10_rule_needs_large_n(self):
    with self.assertRaisesRegex(ValueError, "n >= 10000"):
      privacy.calibrate(5000, 10, 2.0, 1e-6, theta_rule="log10")

  def test_log10_rule_refuses_smaller_delta(self):
    with self.assertRaisesRegex(ValueError, "lambert"):
      privacy.calibrate(10**5, 10, 2.0, 1e-12, theta_rule="log10")

  def test_bad_length(self):
    with self.assertRaisesRegex(ValueError, "num_levels"):
      privacy.calibrate(10**5, 0, 2.0, 1e-6)
    with self.assertRaisesRegex(TypeError, "num_levels"):
      privacy.calibrate(10**5, 10.5, 2.0, 1e-6)


class LevelsTest(parameterized.TestCase):

  def test_levels_for_length_counts_the_end_symbol(self):
    self.assertEqual(privacy.levels_for_length(10), 11)
    self.assertEqual(privacy.levels_for_length(1), 2)
    with self.assertRaisesRegex(ValueError, "max_length"):
      privacy.levels_for_length(0)

  def test_num_levels_keyword(self):
    eps, _ = privacy.guarantee(10**6, num_levels=7, theta=12, gamma=15.0)
    self.assertAlmostEqual(
        eps, 7 * math.log(1 + 1 / (1000 / (15.0 * 12) - 1)), places=12)
    cal = privacy.calibrate(10**6, num_levels=7, epsilon=2.0, delta=1e-12)
    self.assertEqual(cal.num_levels, 7)

  def test_effective_gamma_is_the_rounded_batch(self):
    cal = privacy.calibrate(10**6, 10, 2.0, 1e-12)
    self.assertEqual(cal.effective_gamma, cal.batch_size / 1000)
    # The unrounded gamma is not the one the batch uses.
    self.assertLess(cal.effective_gamma, cal.gamma_unrounded)


def needed_users(n, num_levels, epsilon, delta):
  """The n the too-few-users error of calibrate asks for."""
  with pytest.raises(ValueError, match="too few") as err:
    privacy.calibrate(n, num_levels, epsilon, delta)
  return int(re.search(r"at least n = (\d+) users", str(err.value)).group(1))


class TooFewUsersTest(parameterized.TestCase):

  @parameterized.parameters((1000, 10, 1.0, 1e-6), (500, 11, 4.0, 1e-8),
                            (2000, 3, 0.5, 1e-3))
  def test_needed_users_match_a_linear_search(self, n, length, eps, delta):
    # Oracle: Corollary 1's batch floor(gamma sqrt(n)) recomputed here for
    # every n up to twice the answer; the answer is the n from which on the
    # batch is never below sqrt(n) (Theorem 1's gamma >= 1).
    need = needed_users(n, length, eps, delta)
    theta = privacy.calibrate(need, length, eps, delta).theta
    growth = math.exp(eps / length)
    last_short = max(
        k for k in range(1, 2 * need)
        if math.floor((growth - 1) * math.sqrt(k) / (theta * growth)
                      * math.sqrt(k)) < math.sqrt(k))
    self.assertEqual(need, last_short + 1)
    for k in range(need, need + 300):
      self.assertGreaterEqual(privacy.calibrate(k, length, eps, delta)
                              .effective_gamma, 1.0)

  def test_one_user(self):
    # delta = 1/n^2 = 1 for n = 1: the population is the problem, not delta.
    with self.assertRaisesRegex(
        ValueError, r"^n=1 user is too few for Theorem 1 at epsilon=4 over "
        r"L=11 levels: it needs at least n = \d+ users"):
      privacy.calibrate(1, 11, 4.0, 1.0)

  def test_too_few_for_any_epsilon(self):
    with self.assertRaisesRegex(ValueError, "n=50 users are too few for "
                                "Theorem 1 at any epsilon"):
      privacy.calibrate(50, 11, 100.0, 1e-3)

  def test_no_infinite_epsilon_suggested(self):
    # theta = 10 = sqrt(n): no epsilon makes the batch large enough.
    with self.assertRaises(ValueError) as err:
      privacy.calibrate(100, 11, 4.0, 1e-4)
    self.assertNotIn("inf", str(err.exception))
    self.assertIn("at least n = ", str(err.exception))


class ExtremeInputsTest(parameterized.TestCase):

  @parameterized.parameters(1e-300, 5e-324, 1e-12)
  def test_tiny_epsilon(self, epsilon):  # was ZeroDivisionError
    with self.assertRaisesRegex(ValueError, r"at least n = about [\d.]+e\+\d+"):
      privacy.calibrate(10**6, 11, epsilon, 1e-12)

  @parameterized.parameters((100_000, 1e-7, 1e-10), (10**6, 1e-9, 1e-300),
                            (10**12, 1e-5, 1e-30))
  def test_small_epsilon_answers_at_once(self, n, epsilon, delta):
    # Was an endless n += 1 search; a bisection takes a few hundred steps.
    with self.assertRaisesRegex(ValueError, "too few"):
      privacy.calibrate(n, 11, epsilon, delta)

  def test_huge_epsilon(self):  # was OverflowError
    with self.assertRaisesRegex(ValueError, r"ask for epsilon <= 76"):
      privacy.calibrate(10**6, 11, 1e6, 1e-12)

  def test_smallest_delta(self):  # was OverflowError
    least = sys.float_info.min  # the least delta accounted
    cal = privacy.calibrate(10**6, 11, 4.0, least)
    self.assertLessEqual(cal.delta, least)
    self.assertLessEqual(cal.epsilon, 4.0)
    # The smallest theta whose exact Theorem 1 delta is at most that.
    smallest = next(t for t in range(4, 1000) if Fraction(
        t - 2, (t - 3) * math.factorial(t)) <= Fraction(least))
    self.assertGreaterEqual(cal.theta, smallest)

  @parameterized.parameters(5e-324, 1e-320, 1e-310)
  def test_a_subnormal_delta_is_refused(self, delta):
    # 5e-324 was calibrated; subnormal floats cannot be accounted.
    for call in (lambda: privacy.calibrate(10**6, 11, 4.0, delta),
                 lambda: privacy.lambert_theta(delta)):
      with self.assertRaisesRegex(
          ValueError, r"^delta must be at least 2\.2250738585072014e-308, "
          r"the least normal float: .*, got delta="):
        call()

  @parameterized.parameters(math.inf, math.nan, -1.0, 0.0)
  def test_bad_gamma(self, gamma):
    with self.assertRaisesRegex(ValueError, "gamma"):
      privacy.guarantee(10**6, 11, 12, gamma)

  @parameterized.parameters(math.inf, math.nan)
  def test_bad_epsilon(self, epsilon):
    with self.assertRaisesRegex(ValueError, "epsilon must be a positive"):
      privacy.calibrate(10**6, 11, epsilon, 1e-6)

  def test_delta_not_a_probability(self):
    with self.assertRaisesRegex(ValueError, r"delta must be in \(0, 1\)"):
      privacy.calibrate(10**6, 11, 4.0, math.nan)


def advised(message):
  """The (theta, gamma, n) values a Theorem 1 error suggests."""
  thetas = [(int(a), int(b)) for a, b in
            re.findall(r"use theta in \[(\d+), (\d+)\]", message)]
  thetas += [(4, 4)] * len(re.findall(r"use theta=4\b", message))
  gammas = [float(g) for g in re.findall(r"use gamma in \[1, ([\d.e+]+)\]",
                                         message)]
  users = [(int(u), int(t)) for u, t in re.findall(
      r"at least n = (\d+) users for theta=(\d+)", message)]
  users += [(int(u), 4) for u in re.findall(
      r"use at least n = (\d+) users", message)]
  return thetas, gammas, users


class AdviceTest(parameterized.TestCase):
  """A refusal never suggests a value outside Theorem 1's range."""

  def test_too_few_users_for_any_theta(self):
    with pytest.raises(ValueError) as err:
      privacy.guarantee(2, 11, theta=15, gamma=1.0)
    message = str(err.value)
    self.assertNotIn("theta <= 1", message)  # was "use theta <= 1"
    self.assertIn("no theta in Theorem 1's range works at n=2", message)
    self.assertIn("use at least n = 25 users (at least n = 256 users for "
                  "theta=15)", message)

  def test_no_gamma_for_this_theta(self):
    # sqrt(20)/(4 + 1) < 1: no gamma is in [1, sqrt(n)/(theta+1)].
    with pytest.raises(ValueError, match="no gamma works at theta=4") as err:
      privacy.guarantee(20, 11, theta=4, gamma=1.0)
    self.assertNotIn("use gamma <= 0.89", str(err.value))

  def test_every_suggestion_satisfies_the_theorem(self):
    checked = 0
    for n in (2, 20, 24, 25, 26, 30, 100, 1000, 10**4, 10**6):
      for theta in (1, 3, 4, 5, 9, 15, 40, 2000):
        for gamma in (0.1, 0.99, 1.0, 1.5, 3.0, 50.0):
          try:
            privacy.guarantee(n, 11, theta, gamma)
            continue
          except ValueError as err:
            message = str(err)
          thetas, gammas, users = advised(message)
          self.assertTrue(thetas or gammas or users, message)
          for low, high in thetas:
            self.assertEqual(low, 4, message)
            privacy.guarantee(n, 11, high, 1.0)  # the largest one works
          for upper in gammas:  # printed to 6 digits
            self.assertGreaterEqual(upper, 1.0, message)
            privacy.guarantee(n, 11, theta, 1.0)
            privacy.guarantee(n, 11, theta, max(1.0, upper * (1 - 1e-5)))
          for need, at_theta in users:
            privacy.guarantee(need, 11, at_theta, 1.0)
            with pytest.raises(ValueError):
              privacy.guarantee(need - 1, 11, at_theta, 1.0)
          checked += 1
    self.assertGreater(checked, 100)
