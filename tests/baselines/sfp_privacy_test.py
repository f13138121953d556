"""Tests of SFP's privacy: central and local epsilons, infinite epsilon, the
word budget's split."""

import math

from absl.testing import parameterized
import numpy as np

import triehh
from tests.baselines.sfp_helpers import POPULATION
from tests.baselines.sfp_helpers import run_sfp
from tests.baselines.sfp_helpers import SMALL
from tests.baselines.sfp_helpers import TOP
from triehh.baselines import amplification
from triehh.baselines import sfp_privacy
from triehh.theory import limits


class PrivacyTest(parameterized.TestCase):

  def test_given_local_epsilon_reports_the_central_one(self):
    n = POPULATION.num_users
    result = run_sfp(POPULATION, epsilon_local=6.0, delta=1e-6,
                     **SMALL)
    self.assertEqual(result.params.epsilon_local, 6.0)
    self.assertAlmostEqual(
        triehh.sfp_local_epsilon(result.params.epsilon, 1e-6, n), 6.0,
        places=6)

  @parameterized.parameters(dict(epsilon=math.inf),
                            dict(epsilon_local=math.inf),
                            dict(epsilon=np.float64(np.inf)))
  def test_infinite_epsilon_needs_allow_no_guarantee(self, **privacy):
    with self.assertRaisesRegex(ValueError, "no differential privacy guarantee"
                                ".*allow_no_guarantee=True"):
      run_sfp(POPULATION, **privacy, **SMALL)
    result = run_sfp(POPULATION, allow_no_guarantee=True,
                     **privacy, **SMALL)
    self.assertEqual(result.params.epsilon, math.inf)
    self.assertIn("no differential privacy guarantee",
                  result.params.guarantee)

  def test_huge_epsilon_runs_without_overflow(self):
    result = run_sfp(POPULATION, epsilon=1e6, seed=0, **SMALL)
    self.assertEqual(result.params.epsilon_local, 1e6)
    self.assertContainsSubset(set(TOP), set(result.heavy_hitters))

  def test_tiny_delta(self):
    result = run_sfp(POPULATION, epsilon=1.0, delta=limits.LEAST_DELTA,
                     seed=0, **SMALL)
    self.assertGreaterEqual(result.params.epsilon_local, 1.0)
    self.assertEqual(result.params.delta, limits.LEAST_DELTA)

  def test_subnormal_delta_is_refused_naming_it(self):
    with self.assertRaisesRegex(ValueError, r"^delta must be at least .*"
                                r"subnormal.*delta=5e-324"):
      triehh.SFPTarget(1.0, 5e-324)

  def test_delta_above_1_over_n_needs_the_opt_in(self):
    n = POPULATION.num_users
    with self.assertRaisesRegex(ValueError, r"^delta=0\.5 is above 1/n .*"
                                r"allow_delta_above_1_over_n=True"):
      run_sfp(POPULATION, epsilon=1.0, delta=0.5, seed=0, **SMALL)
    result = run_sfp(POPULATION, epsilon=1.0, delta=0.5, seed=0,
                     allow_delta_above_1_over_n=True, **SMALL)
    self.assertIn(f"exceeds 1/n = 1/{n:,}", result.guarantee.describe())
    quiet = run_sfp(POPULATION, epsilon=1.0, delta=0.5 / n, seed=0, **SMALL)
    self.assertEqual(quiet.guarantee.caveat, "")

  def test_calibrate_splits_the_local_epsilon_between_the_sketches(self):
    n = 10_000
    privacy = sfp_privacy.calibrate(n, 4.0, None, None, 0.25, False)
    self.assertEqual(privacy.delta, 1.0 / n**2)
    self.assertEqual(privacy.epsilon_local,
                     amplification.sfp_local_epsilon(4.0, 1.0 / n**2, n))
    self.assertEqual(privacy.epsilon_fragment, privacy.epsilon_local * 0.75)
    self.assertEqual(privacy.epsilon_word, privacy.epsilon_local * 0.25)
    no_word = sfp_privacy.calibrate(n, 4.0, None, None, 0.0, False)
    self.assertEqual(no_word.epsilon_fragment, no_word.epsilon_local)
    self.assertIsNone(no_word.epsilon_word)

  @parameterized.parameters(True, False, np.bool_(True), "4", -1.0, 0.0)
  def test_check_epsilon_refuses_what_is_not_a_positive_number(self, value):
    with self.assertRaises((TypeError, ValueError)):
      sfp_privacy.check_epsilon("epsilon", value, True)
