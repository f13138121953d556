"""Tests of the privacy policy: what is refused, what epsilon is reported."""

import math
import re
import sys

from absl.testing import parameterized
import pytest

from triehh.core import population as population_lib
from triehh.theory import accountants
from triehh.theory import counting
from triehh.theory import crowding
from triehh.theory import noisy_trie
from triehh.theory import poisson
from triehh.theory import poisson_calibration
from triehh.theory import policy
from triehh.theory import privacy
from triehh.theory import utility
from triehh.theory import mechanism
from triehh.theory.mechanism import Mechanism
from triehh.theory.mechanism import NoisyTarget
from triehh.theory.mechanism import Target


def _privacy(**fields):
  """The Target (``epsilon`` given) or Mechanism of keyword ``fields``, the
  paper's fixed-size batches unless ``sampling`` says otherwise."""
  return mechanism.from_options({"sampling": "fixed", **fields})


def theorem1(n, levels, theta, gamma):
  """Theorem 1 of the paper, written out."""
  eps = levels * math.log(1 + 1 / (math.sqrt(n) / (gamma * theta) - 1))
  delta = (theta - 2) / ((theta - 3) * math.factorial(theta))
  return eps, delta


class ResolveTest(parameterized.TestCase):

  @parameterized.parameters((10_000, 10, 20, 2.0), (40_000, 5, 12, 3.0),
                            (1_000_000, 10, 10, 50.0))
  def test_theta_and_gamma_get_theorem1(self, n, max_length, theta, gamma):
    p = policy.resolve(n, max_length, Mechanism(
        theta=theta, gamma=gamma, sampling="fixed"))
    batch = math.floor(gamma * math.sqrt(n))
    eps, delta = theorem1(n, max_length + 1, theta, batch / math.sqrt(n))
    self.assertEqual((p.theta, p.batch_size, p.levels),
                     (theta, batch, max_length + 1))
    self.assertAlmostEqual(p.gamma, batch / math.sqrt(n), places=12)
    self.assertAlmostEqual(p.epsilon, eps, places=10)
    self.assertAlmostEqual(p.delta / delta, 1.0, places=10)
    self.assertIsNone(p.target_epsilon)
    self.assertTrue(p.has_guarantee)
    self.assertEqual(p.guarantee, f"Theorem 1 for L={max_length + 1} levels, "
                     "in the direction its proof covers.")

  def test_batch_size_is_used_as_given(self):
    p = policy.resolve(10_000, 10, Mechanism(
        theta=20, batch_size=250, sampling="fixed"))
    self.assertEqual((p.batch_size, p.gamma), (250, 2.5))
    self.assertAlmostEqual(p.epsilon, theorem1(10_000, 11, 20, 2.5)[0],
                           places=10)

  def test_epsilon_is_calibrated_below_the_target(self):
    n = 1_000_000
    p = policy.resolve(n, 10, Target(2.0, sampling="fixed"))
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
      policy.resolve(10_000, 10, Mechanism(
          theta=2, batch_size=100, sampling="fixed"))
    p = policy.resolve(10_000, 10, Mechanism(
        theta=2, batch_size=100, allow_no_guarantee=True, sampling="fixed"))
    self.assertEqual((p.epsilon, p.delta), (math.inf, 1.0))
    self.assertFalse(p.has_guarantee)
    self.assertTrue(p.guarantee.startswith("no differential privacy"))

  def test_cap_is_refused_or_reported_without_guarantee(self):
    with self.assertRaisesRegex(
        ValueError, "max_num_prefixes=3 .*vote ranks.*allow_no_guarantee"):
      policy.resolve(10_000, 10, Mechanism(
          theta=20, gamma=2.0, max_num_prefixes=3, sampling="fixed"))
    with self.assertRaisesRegex(ValueError, "max_num_prefixes=3"):
      policy.resolve(10_000, 10, Target(
          4.0, max_num_prefixes=3, sampling="fixed"))
    p = policy.resolve(10_000, 10, Mechanism(
        theta=20, gamma=2.0, max_num_prefixes=3, allow_no_guarantee=True,
        sampling="fixed"))
    self.assertEqual((p.epsilon, p.delta), (math.inf, 1.0))
    self.assertFalse(p.has_guarantee)
    self.assertEqual(p.accounting, "none")
    self.assertTrue(p.guarantee.startswith("no differential privacy "
                                           "guarantee: max_num_prefixes=3"))
    self.assertEqual((p.theta, p.batch_size, p.max_num_prefixes), (20, 200, 3))

  def test_cap_outside_theorem1_names_both_problems(self):
    p = policy.resolve(10_000, 10, Mechanism(
        theta=2, batch_size=100, max_num_prefixes=3, allow_no_guarantee=True,
        sampling="fixed"))
    self.assertIn("theta >= 4", p.guarantee)
    self.assertIn("max_num_prefixes=3", p.guarantee)

  def test_calibrated_cap_keeps_the_calibrated_parameters(self):
    plain = policy.resolve(10_000, 10, Target(4.0, sampling="fixed"))
    capped = policy.resolve(10_000, 10, Target(
        4.0, max_num_prefixes=3, allow_no_guarantee=True, sampling="fixed"))
    self.assertEqual((capped.theta, capped.batch_size, capped.target_epsilon),
                     (plain.theta, plain.batch_size, 4.0))
    self.assertEqual(capped.epsilon, math.inf)

  def test_outputs_covered_and_accounting_are_stated(self):
    p = policy.resolve(10_000, 10, Mechanism(
        theta=20, gamma=2.0, sampling="fixed"))
    self.assertEqual((p.accounting, p.word_choice),
                     ("Theorem 1 (one direction)", "per_round"))
    self.assertIn("discovered words and prefixes", p.covers)
    self.assertIn("not their vote counts", p.covers)
    self.assertIn("in one direction only", p.covers)
    self.assertEqual((p.sampling, p.sampling_rate, p.two_sided),
                     ("fixed", None, False))
    self.assertEqual(p.to_dict()["covers"], p.covers)


class ReverseDirectionTest(parameterized.TestCase):
  """Fixed-size runs where the unproven direction is known to fail."""

  @parameterized.named_parameters(
      dict(testcase_name="crowding_36", n=36, max_length=1, theta=5,
           batch_size=6, family="crowding"),
      dict(testcase_name="crowding_25", n=25, max_length=2, theta=4,
           batch_size=5, family="crowding"),
      dict(testcase_name="two_groups_209", n=209, max_length=1, theta=10,
           batch_size=19, family="two groups"))
  def test_are_refused_or_run_without_guarantee(self, n, max_length, theta,
                                                batch_size, family):
    with self.assertRaisesRegex(ValueError, "does not prove fails") as caught:
      policy.resolve(n, max_length, Mechanism(
          theta=theta, batch_size=batch_size, sampling="fixed"))
    self.assertIn("allow_no_guarantee", str(caught.exception))
    p = policy.resolve(n, max_length, Mechanism(
        theta=theta, batch_size=batch_size, allow_no_guarantee=True,
        sampling="fixed"))
    self.assertFalse(p.has_guarantee)
    self.assertEqual(p.accounting, "none")
    failure = crowding.reverse_lower_bound(
        n, batch_size, theta, max_length + 1,
        theorem1(n, max_length + 1, theta, batch_size / math.sqrt(n))[0])
    self.assertEqual(failure.family, family)

  def test_paper_operating_points_are_labelled_not_refused(self):
    p = policy.resolve(10_000, 10, Target(4.0, sampling="fixed"))
    self.assertTrue(p.has_guarantee)
    self.assertFalse(p.two_sided)
    failure = crowding.reverse_lower_bound(10_000, p.batch_size, p.theta, 11,
                                           p.epsilon)
    self.assertLess(failure.divergence, 1e-300)


class PoissonTest(parameterized.TestCase):
  """sampling="poisson": the two-sided accountant."""

  def test_calibrated(self):
    n = 100_000
    p = policy.resolve(n, 10, Target(2.0, sampling="poisson"))
    cal = poisson_calibration.calibrate(n, 11, 2.0, 1 / n**2)
    self.assertEqual((p.theta, p.sampling_rate), (cal.theta, cal.rate))
    self.assertEqual(p.batch_size, round(cal.rate * n))
    self.assertLessEqual(p.epsilon, 2.0)
    self.assertEqual((p.delta, p.target_epsilon), (1 / n**2, 2.0))
    self.assertEqual(p.accounting, "Poisson accountant (two-sided)")
    self.assertIn("in both directions", p.covers)
    self.assertTrue(p.two_sided)

  def test_several_words_pay_nothing_more(self):
    one = policy.resolve(10**5, 10, Target(2.0, sampling="poisson"))
    several = policy.resolve(10**5, 10, Target(
        2.0, sampling="poisson"), single_word=False)
    self.assertEqual((one.theta, one.sampling_rate, one.delta),
                     (several.theta, several.sampling_rate, several.delta))

  @parameterized.parameters(dict(sampling_rate=0.05), dict(batch_size=5000),
                            dict(gamma=5000 / math.sqrt(10**5)))
  def test_given_theta_and_a_rate(self, **rate):
    p = policy.resolve(10**5, 10, _privacy(
        theta=15, sampling="poisson", **rate))
    self.assertAlmostEqual(p.sampling_rate, 0.05)
    self.assertAlmostEqual(
        p.epsilon, poisson.epsilon_for_delta(0.05, 15, 11, 1e-10))
    self.assertEqual(p.delta, 1e-10)
    self.assertIsNone(p.target_epsilon)

  def test_no_finite_epsilon_is_refused(self):
    with self.assertRaisesRegex(ValueError, "no finite epsilon"):
      policy.resolve(1000, 3, Mechanism(
          theta=1, sampling_rate=0.5, sampling="poisson"))
    p = policy.resolve(1000, 3, Mechanism(
        theta=1, sampling_rate=0.5, sampling="poisson",
        allow_no_guarantee=True))
    self.assertEqual((p.epsilon, p.accounting), (math.inf, "none"))

  def test_bad_combinations(self):
    with self.assertRaisesRegex(ValueError, "give one of sampling_rate, "
                                "batch_size and gamma, not sampling_rate and "
                                "batch_size"):
      policy.resolve(1000, 3, Mechanism(
          theta=5, sampling_rate=0.1, batch_size=10, sampling="poisson"))
    with self.assertRaisesRegex(ValueError, "is for sampling='poisson'"):
      policy.resolve(1000, 3, Mechanism(
          theta=5, sampling_rate=0.1, sampling="fixed"))
    with self.assertRaisesRegex(ValueError, "sampling must be one of"):
      policy.resolve(1000, 3, Target(1.0, sampling="bernoulli"))
    with self.assertRaisesRegex(ValueError, "sampling_rate must be in"):
      policy.resolve(1000, 3, Mechanism(
          theta=5, sampling_rate=1.5, sampling="poisson"))


class SeveralWordsTest(parameterized.TestCase):
  """Several words per user: per-round redraws pay L * delta_1."""

  @parameterized.parameters((10_000, 10, 20, 2.0), (40_000, 5, 12, 3.0))
  def test_per_round_redraws_report_levels_times_delta(self, n, max_length,
                                                       theta, gamma):
    p = policy.resolve(n, max_length, Mechanism(
        theta=theta, gamma=gamma, sampling="fixed"), single_word=False)
    levels = max_length + 1
    eps, delta_1 = theorem1(n, levels, theta,
                            math.floor(gamma * math.sqrt(n)) / math.sqrt(n))
    self.assertAlmostEqual(p.epsilon, eps, places=10)
    self.assertAlmostEqual(p.delta / (levels * delta_1), 1.0, places=10)
    self.assertEqual(p.accounting,
                     "per-round composition (L*delta), one direction")
    self.assertIn(f"L*delta_1 = {levels} x", p.guarantee)

  def test_per_run_choice_gets_theorem1(self):
    p = policy.resolve(10_000, 10, Mechanism(
        theta=20, gamma=2.0, word_choice="per_run",
        sampling="fixed"), single_word=False)
    self.assertAlmostEqual(p.delta / theorem1(10_000, 11, 20, 2.0)[1], 1.0,
                           places=10)
    self.assertEqual((p.accounting, p.word_choice),
                     ("Theorem 1 (one direction)", "per_run"))

  @parameterized.parameters(10_000, 1_000_000)
  def test_calibration_keeps_levels_times_delta_below_the_target(self, n):
    p = policy.resolve(n, 10, Target(4.0, sampling="fixed"), single_word=False)
    one = policy.resolve(n, 10, Target(4.0, sampling="fixed"))
    delta_1 = theorem1(n, 11, p.theta, p.gamma)[1]
    self.assertAlmostEqual(p.delta / (11 * delta_1), 1.0, places=10)
    self.assertLessEqual(p.delta, 1 / n**2)
    self.assertEqual(p.target_delta, 1 / n**2)
    self.assertGreaterEqual(p.theta, one.theta)
    # Theorem 1's delta for the one-word theta would break the target.
    self.assertGreater(11 * theorem1(n, 11, one.theta, one.gamma)[1], 1 / n**2)
    self.assertAlmostEqual(
        p.epsilon, theorem1(n, 11, p.theta, p.batch_size / math.sqrt(n))[0],
        places=10)
    self.assertLessEqual(p.epsilon, 4.0)

  def test_bad_word_choice(self):
    with self.assertRaisesRegex(ValueError, "word_choice must be one of"):
      policy.resolve(10_000, 10, Target(
          4.0, word_choice="per_user", sampling="fixed"))


  @parameterized.named_parameters(
      ("both", dict(epsilon=1.0, theta=10, gamma=2.0), "not both"),
      ("theta_alone", dict(theta=10), "give one of sampling_rate"),
      ("theta_both", dict(theta=10, gamma=2.0, batch_size=3),
       "not batch_size and gamma"),
      ("gamma_alone", dict(gamma=2.0), "give epsilon"),
      ("nothing", dict(), "give epsilon"),
      ("bad_cap", dict(epsilon=4.0, max_num_prefixes=0), "max_num_prefixes"),
      ("batch_too_big", dict(theta=10, batch_size=10_001),
       r"batch_size must be in \[1, n=10000\].*got 10001"),
      ("batch_zero", dict(theta=10, batch_size=0), "batch_size must be >= 1"),
      ("gamma_inf", dict(theta=10, gamma=math.inf),
       "gamma must be a positive finite number, got inf"),
      ("gamma_nan", dict(theta=10, gamma=math.nan), "gamma must be a positive"),
      ("gamma_negative", dict(theta=10, gamma=-1.0), "gamma must be a positive"),
      ("gamma_huge", dict(theta=10, gamma=1e300),
       r"gamma=1e\+300 asks for a batch of gamma\*sqrt\(n\) = 1e\+302 users, "
       r"more than the n=10000 users; use gamma <= sqrt\(n\) = 100"),
      ("gamma_tiny", dict(theta=10, gamma=0.001),
       r"batch of floor\(gamma\*sqrt\(n\)\) = 0 users; use gamma >= "
       r"1/sqrt\(n\) = 0.01"),
      ("theta_zero", dict(theta=0, batch_size=10), "theta must be >= 1"),
  )
  def test_bad_arguments(self, kwargs, message):
    with self.assertRaisesRegex(ValueError, message):
      policy.resolve(10_000, 10, _privacy(allow_no_guarantee=True, **kwargs))

  @parameterized.named_parameters(
      ("float_batch", dict(theta=10, batch_size=2.5), "batch_size must be an"),
      ("bool_batch", dict(theta=10, batch_size=True), "batch_size must be an"),
      ("float_theta", dict(theta=10.5, batch_size=100), "theta must be an"),
      ("string_gamma", dict(theta=10, gamma="2"), "gamma must be a number"),
      ("float_cap", dict(epsilon=4.0, max_num_prefixes=2.0),
       "max_num_prefixes must be an"),
      ("string_epsilon", dict(epsilon="4", sampling="poisson"),
       "epsilon must be a number, got '4'"),
      ("string_delta", dict(epsilon=4.0, delta="1e-9"),
       "delta must be a number"),
      ("bool_sub_rounds", dict(epsilon=4.0, num_sub_rounds=True),
       "num_sub_rounds must be an integer, got True"),
  )
  def test_bad_types(self, kwargs, message):
    with self.assertRaisesRegex(TypeError, message):
      policy.resolve(10_000, 10, _privacy(allow_no_guarantee=True, **kwargs))


  def test_max_length_must_be_an_integer(self):
    with self.assertRaisesRegex(TypeError, "max_length must be an integer, "
                                "got True"):
      policy.resolve(10_000, True, Target(4.0, sampling="fixed"))


class CheckContributionTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.params = policy.resolve(10_000, 10, Mechanism(
        theta=20, gamma=2.0, sampling="fixed"))
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


class AdjacencyTest(parameterized.TestCase):
  """Every guarantee names the relations it covers and where n came from."""

  def test_default_poisson_runs_calibrated_from_the_data_cover_equal_sizes(self):
    # delta = 1/n^2 is read off |D|: D and D + u would run other rates.
    p = policy.resolve(10_000, 10, Target(4.0, sampling="poisson"))
    self.assertEqual(p.adjacencies, ("REPLACE_SPECIAL",))
    self.assertEqual(p.n_source, policy.N_FROM_DATA)
    self.assertIn("REPLACE_SPECIAL", p.covers)
    self.assertIn("same size", p.covers)
    self.assertNotIn("ADD_OR_REMOVE_ONE", p.covers)

  @parameterized.parameters(
      dict(epsilon=4.0, delta=1e-8),
      dict(theta=20, sampling_rate=0.3, delta=1e-8))
  def test_parameters_free_of_n_cover_add_or_remove(self, **kwargs):
    p = policy.resolve(10_000, 10, _privacy(sampling="poisson", **kwargs))
    self.assertEqual(p.adjacencies, ("ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL"))
    self.assertEqual(p.n_source, policy.N_UNUSED)

  def test_a_declared_population_size_is_public(self):
    p = policy.resolve(9_000, 10, Target(
        4.0, sampling="poisson", population_size=10_000))
    self.assertEqual(p.adjacencies, ("ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL"))
    self.assertEqual((p.n, p.population_size, p.n_source),
                     (9_000, 10_000, policy.N_DECLARED))
    self.assertEqual(p.target_delta, 1e-8)  # 1 / 10_000^2, not 1 / 9_000^2

  def test_add_or_remove_asked_of_parameters_from_the_data_is_refused(self):
    with self.assertRaisesRegex(ValueError, "ADD_OR_REMOVE_ONE .* not "
                                "covered.*population_size"):
      policy.resolve(10_000, 10, Target(
          4.0, sampling="poisson", adjacency="ADD_OR_REMOVE_ONE"))
    with self.assertRaisesRegex(ValueError, "not covered"):
      policy.resolve(10_000, 10, Mechanism(
          theta=20, batch_size=3000, delta=1e-8, sampling="poisson",
          adjacency="ADD_OR_REMOVE_ONE"))

  def test_replace_one_has_its_own_accountant(self):
    p = policy.resolve(10_000, 10, Target(
        4.0, delta=1e-8, sampling="poisson", adjacency="REPLACE_ONE"))
    self.assertEqual(p.adjacencies, ("ADD_OR_REMOVE_ONE", "REPLACE_ONE",
                                     "REPLACE_SPECIAL"))
    self.assertEqual(p.accounting, policy.POISSON_REPLACE_ACCOUNTANT)
    plain = policy.resolve(10_000, 10, Target(
        4.0, delta=1e-8, sampling="poisson"))
    self.assertLess(p.sampling_rate / p.theta,
                    plain.sampling_rate / plain.theta)
    self.assertLessEqual(poisson.delta_for_epsilon(
        p.sampling_rate, p.theta, 11, 4.0, adjacency="REPLACE_ONE"), 1e-8)
    # The add/remove rate misses replace-one's target.
    self.assertGreater(poisson.delta_for_epsilon(
        plain.sampling_rate, plain.theta, 11, plain.epsilon,
        adjacency="REPLACE_ONE"), 1e-8)

  @parameterized.parameters("REPLACE_ONE", "ADD_OR_REMOVE_ONE")
  def test_theorem_1_covers_replace_special_only(self, asked):
    p = policy.resolve(10**6, 10, Target(4.0, sampling="fixed"))
    self.assertEqual(p.adjacencies, ("REPLACE_SPECIAL",))
    self.assertIn("(REPLACE_SPECIAL)", p.covers)
    with self.assertRaisesRegex(ValueError, "REPLACE_SPECIAL only"):
      policy.resolve(10**6, 10, Target(4.0, adjacency=asked, sampling="fixed"))

  def test_no_guarantee_names_no_adjacency(self):
    p = policy.resolve(10_000, 10, Mechanism(
        theta=2, batch_size=5000, allow_no_guarantee=True, sampling="fixed"))
    self.assertEqual(p.adjacency, "")

  def test_a_declared_size_below_the_batch_is_refused(self):
    with self.assertRaisesRegex(ValueError, "more than the n=100 users"):
      policy.resolve(100, 10, Mechanism(
          theta=20, gamma=10.0, population_size=10**6, sampling="fixed"))


def test_resolve_computes_a_target_once_per_population_size():
  # discover resolves its parameters on every call; the same (n, L,
  # target) gives the same frozen parameters, not a new calibration.
  target = Target(4.0, sampling="fixed")
  first = policy.resolve(10**4, 10, target)
  assert policy.resolve(10**4, 10, Target(4.0, sampling="fixed")) is first
  other = policy.resolve(2 * 10**4, 10, target)
  assert other is not first and other.n == 2 * 10**4
  assert other.batch_size != first.batch_size


def test_a_delta_of_one_or_more_is_no_guarantee():
  # Per-round composition over 21 levels adds their deltas up to 1: the
  # run was labelled (19.4, 1)-DP with has_guarantee true.
  with pytest.raises(ValueError, match="a delta of 1 or more bounds nothing"):
    policy.resolve(1000, 20, Mechanism(
        theta=4, batch_size=60, sampling="fixed"), single_word=False)
  params = policy.resolve(1000, 20, Mechanism(
      theta=4, batch_size=60, allow_no_guarantee=True,
      sampling="fixed"), single_word=False)
  assert not params.has_guarantee and params.epsilon == math.inf


@pytest.mark.parametrize("sampling, kwargs", [
    ("poisson", dict(sampling_rate=0.5)), ("fixed", dict(batch_size=100))])
def test_a_theta_above_n_is_refused_before_any_accounting(sampling, kwargs,
                                                          monkeypatch):
  for name in ("run_delta", "run_loss"):
    monkeypatch.setattr(poisson, name, lambda *a, **k: 1 / 0)
  with pytest.raises(ValueError, match=r"theta=1,000,000,000 is more than "
                     r"the n=10,000 users"):
    policy.resolve(10_000, 10, _privacy(
        theta=10**9, sampling=sampling, **kwargs))


def test_a_declared_population_smaller_than_the_one_present_is_refused():
  # population_size=30 on 10,000 users ran at delta = 1/900, unsaid.
  with pytest.raises(ValueError, match="population_size=30 is smaller than "
                     "the n=10,000 users the population holds"):
    policy.resolve(10_000, 10, Target(4.0, population_size=30,
                                      sampling="poisson"))


# Every public function that takes a delta, as (the name it gives, a call).
_TAKES_A_DELTA = [
    ("delta", lambda d: Target(4.0, delta=d)),
    ("delta", lambda d: Mechanism(theta=20, sampling_rate=0.3, delta=d)),
    ("delta", lambda d: NoisyTarget(4.0, delta=d)),
    ("delta", lambda d: policy.resolve(10_000, 10, Target(
        4.0, delta=d, sampling="poisson"))),
    ("delta", lambda d: policy.resolve(10_000, 10, Mechanism(
        theta=20, sampling_rate=0.3, delta=d, sampling="poisson"))),
    ("delta", lambda d: policy.resolve(10**6, 10, Target(
        4.0, delta=d, sampling="fixed"))),
    ("delta", lambda d: privacy.calibrate(10**6, 11, 4.0, d)),
    ("delta", lambda d: privacy.lambert_theta(d)),
    ("delta", lambda d: poisson.epsilon_for_delta(0.05, 15, 11, d)),
    ("delta", lambda d: poisson_calibration.calibrate(10_000, 11, 4.0, d)),
    ("delta", lambda d: utility.min_population(1e-3, 4.0, delta=d)),
    ("delta", lambda d: counting.split_budget(4.0, d, 0.1)),
    ("delta (counting share)", lambda d: counting.calibrate_noise(1.0, d,
                                                                  1.0)),
    ("delta", lambda d: noisy_trie.calibrate(6, 4.0, d)),
]


@pytest.mark.parametrize("delta", [5e-324, 1e-323, 1e-322, 1e-321, 1e-310])
@pytest.mark.parametrize("name, call", _TAKES_A_DELTA)
def test_a_subnormal_delta_is_refused_wherever_a_delta_is_taken(name, call,
                                                                delta):
  # Target(4.0, delta=5e-324) was calibrated to theta=400, q=0.14656, where
  # one level alone has delta(epsilon) = 5.6e-323: subnormal floats cannot
  # be accounted.
  with pytest.raises(ValueError, match=(
      rf"^{re.escape(name)} must be at least 2\.2250738585072014e-308, the "
      r"least normal float: a smaller \(subnormal\) delta cannot be "
      rf"accounted, got {re.escape(name)}={delta!r}$")):
    call(delta)


@pytest.mark.parametrize("name, call", _TAKES_A_DELTA[:3])
def test_the_least_normal_delta_is_taken(name, call):
  del name
  assert call(sys.float_info.min).delta == sys.float_info.min


_TOO_MANY = (r"^n \(number of users\) must be at most 2\*\*62 - 1 = "
             r"4611686018427387903 users, got about ")


@pytest.mark.parametrize("n, about", [(10**400, "1.00e+400"),
                                      (2**62, "4.61e+18")],
                         ids=["10**400", "2**62"])
@pytest.mark.parametrize("call", [
    lambda n: privacy.guarantee(n, 11, theta=15, gamma=12.0),
    lambda n: privacy.calibrate(n, 11, 4.0, 1e-12),
    lambda n: privacy.check_conditions(n, 15, 12.0),
    lambda n: poisson_calibration.calibrate(n, 11, 4.0, 1e-12),
    lambda n: policy.resolve(n, 10, Target(4.0, delta=1e-12, sampling="fixed")),
    lambda n: policy.resolve(n, 10, Target(4.0, delta=1e-12,
                                           sampling="poisson")),
    lambda n: utility.discovery_rate(100, n, 1000, 15, 11),
])
def test_more_users_than_a_population_holds_are_refused(call, n, about):
  # 10**400 raised OverflowError "int too large to convert to float".
  with pytest.raises(ValueError, match=_TOO_MANY + re.escape(about) + "$"):
    call(n)


def test_a_declared_population_beyond_the_bound_is_refused():
  with pytest.raises(ValueError, match=r"^population_size \(the declared, "
                     r"public number of users\) must be at most 2\*\*62 - 1"):
    Target(4.0, population_size=2**62)


@pytest.mark.parametrize("call", [
    lambda m: policy.resolve(6000, 1000, m),
    lambda m: accountants.POISSON.guarantee(m, 10**4, 1000),
])
def test_a_mechanism_too_long_to_account_is_refused(call, monkeypatch):
  # discover(['sun'] * 6000, Mechanism(theta=20, sampling_rate=0.3),
  # max_length=1000) ran for minutes; as the calibration of a Target is.
  monkeypatch.setattr(poisson, "_run_loss", lambda *a: 1 / 0)
  mechanism = Mechanism(theta=20, sampling_rate=0.3, sampling="poisson")
  with pytest.raises(ValueError, match=(
      r"^num_levels=1001 levels would take about [\d.]+ minutes to account "
      r"for Poisson sampling at theta=20, rate 0\.3 and discretization="
      r"0\.001 .* use num_levels <= \d+ \(words of at most \d+ characters: "
      r"max_length <= \d+\) or fixed-size batches")):
    call(mechanism)
