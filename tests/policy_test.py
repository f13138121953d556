"""Tests of the privacy policy: what is refused, what epsilon is reported."""

import math

from absl.testing import parameterized

from triehh import policy
from triehh import population as population_lib


def theorem1(n, levels, theta, gamma):
  """Theorem 1 of the paper, written out."""
  eps = levels * math.log(1 + 1 / (math.sqrt(n) / (gamma * theta) - 1))
  delta = (theta - 2) / ((theta - 3) * math.factorial(theta))
  return eps, delta


class ResolveParamsTest(parameterized.TestCase):

  @parameterized.parameters((10_000, 10, 20, 2.0), (40_000, 5, 12, 3.0),
                            (1_000_000, 10, 10, 50.0))
  def test_theta_and_gamma_get_theorem1(self, n, max_length, theta, gamma):
    p = policy.resolve_params(n, max_length, theta=theta, gamma=gamma)
    batch = math.floor(gamma * math.sqrt(n))
    eps, delta = theorem1(n, max_length + 1, theta, batch / math.sqrt(n))
    self.assertEqual((p.theta, p.batch_size, p.levels),
                     (theta, batch, max_length + 1))
    self.assertAlmostEqual(p.gamma, batch / math.sqrt(n), places=12)
    self.assertAlmostEqual(p.epsilon, eps, places=10)
    self.assertAlmostEqual(p.delta / delta, 1.0, places=10)
    self.assertIsNone(p.target_epsilon)
    self.assertTrue(p.has_guarantee)
    self.assertEqual(p.guarantee, f"Theorem 1 for L={max_length + 1} levels.")

  def test_batch_size_is_used_as_given(self):
    p = policy.resolve_params(10_000, 10, theta=20, batch_size=250)
    self.assertEqual((p.batch_size, p.gamma), (250, 2.5))
    self.assertAlmostEqual(p.epsilon, theorem1(10_000, 11, 20, 2.5)[0],
                           places=10)

  def test_epsilon_is_calibrated_below_the_target(self):
    n = 1_000_000
    p = policy.resolve_params(n, 10, epsilon=2.0)
    self.assertEqual((p.target_epsilon, p.target_delta), (2.0, 1 / n**2))
    eps, delta = theorem1(n, 11, p.theta, p.batch_size / math.sqrt(n))
    self.assertAlmostEqual(p.epsilon, eps, places=10)
    self.assertLessEqual(p.epsilon, 2.0)
    self.assertLessEqual(delta, 1 / n**2)
    # One more user per round would exceed the target (floor of gamma sqrt n).
    more = theorem1(n, 11, p.theta, (p.batch_size + 1) / math.sqrt(n))[0]
    self.assertGreater(more, p.epsilon)
    self.assertTrue(p.guarantee.startswith("Corollary 1 calibration for L=11"))

  def test_outside_theorem1_is_refused_or_reported_without_guarantee(self):
    with self.assertRaisesRegex(ValueError, "theta >= 4.*allow_no_guarantee"):
      policy.resolve_params(10_000, 10, theta=2, batch_size=100)
    p = policy.resolve_params(10_000, 10, theta=2, batch_size=100,
                              allow_no_guarantee=True)
    self.assertEqual((p.epsilon, p.delta), (math.inf, 1.0))
    self.assertFalse(p.has_guarantee)
    self.assertTrue(p.guarantee.startswith("no differential privacy"))

  def test_cap_keeps_the_guarantee_with_a_note(self):
    p = policy.resolve_params(10_000, 10, theta=20, gamma=2.0,
                              max_num_prefixes=3)
    self.assertTrue(p.has_guarantee)
    self.assertTrue(p.guarantee.endswith(policy.CAP_NOTE))
    self.assertIn("prefix cap", policy.CAP_NOTE)
    self.assertEqual(p.max_num_prefixes, 3)

  @parameterized.named_parameters(
      ("both", dict(epsilon=1.0, theta=10, gamma=2.0), "not both"),
      ("theta_alone", dict(theta=10), "exactly one"),
      ("theta_both", dict(theta=10, gamma=2.0, batch_size=3), "exactly one"),
      ("gamma_alone", dict(gamma=2.0), "need theta"),
      ("nothing", dict(), "give epsilon"),
      ("bad_cap", dict(epsilon=4.0, max_num_prefixes=0), "max_num_prefixes"),
      ("batch_too_big", dict(theta=10, batch_size=10_001), r"\[1, n=10000\]"),
  )
  def test_bad_arguments(self, kwargs, message):
    with self.assertRaisesRegex(ValueError, message):
      policy.resolve_params(10_000, 10, **kwargs)


class CheckContributionTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.params = policy.resolve_params(10_000, 10, theta=20, gamma=2.0)
    self.several = population_lib.Population.from_user_words(
        [{"ab": 1, "b": 2}, {"a": 1}])
    self.one = population_lib.Population.from_user_words(["ab", "b"])

  @parameterized.parameters(None, 1)
  def test_one_vote_per_round_keeps_the_guarantee(self, contribution):
    options = {"max_user_contribution": contribution}
    self.assertIs(policy.check_contribution(self.params, self.several,
                                            options, False), self.params)

  def test_one_word_users_cast_one_vote_anyway(self):
    self.assertIs(policy.check_contribution(
        self.params, self.one, {"max_user_contribution": 3}, False),
                  self.params)

  def test_several_votes_are_refused_or_reported_without_guarantee(self):
    options = {"max_user_contribution": 3}
    with self.assertRaisesRegex(ValueError, "up to 3 votes per round"):
      policy.check_contribution(self.params, self.several, options, False)
    p = policy.check_contribution(self.params, self.several, options, True)
    self.assertEqual((p.epsilon, p.delta), (math.inf, 1.0))
    self.assertIn("one vote per user per round", p.guarantee)
    self.assertEqual((p.theta, p.batch_size),
                     (self.params.theta, self.params.batch_size))
