"""Tests of Theorem 1 and Corollary 1, including the paper's Table 1."""

from fractions import Fraction
import math

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
      self.assertLess(abs(cal.gamma - gamma), 0.01)
      self.assertEqual(math.floor(cal.gamma * 100) / 100, gamma)  # truncation
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

  def test_calibrate_then_guarantee_round_trips(self):
    cal = privacy.calibrate(123_457, 11, 3.0, 1e-9)
    eps, delta = privacy.guarantee(123_457, 11, cal.theta, cal.effective_gamma)
    self.assertEqual((eps, delta), (cal.epsilon, cal.delta))
    self.assertEqual(cal.batch_size, math.floor(cal.gamma * math.sqrt(123_457)))

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
    with pytest.raises(ValueError, match=r"gamma=.* \(batch size \d+\).*at least n = \d+"):
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
    with self.assertRaisesRegex(ValueError, "max_length"):
      privacy.calibrate(10**5, 0, 2.0, 1e-6)
