"""The privacy accountants checked against exact laws on small populations."""

import collections
import dataclasses
import math
import random

from absl.testing import parameterized
import numpy as np

from triehh.core import choices
from triehh.theory import exact
from triehh.theory import exact_validation as ev
from triehh.theory import poisson
from triehh.theory import privacy

SEED = 0
# Populations 0 .. NUM_POPULATIONS - 1 of case_for(SEED, .), in chunks.
NUM_POPULATIONS = 600
CHUNK = 60


def cases(start: int, stop: int):
  for number in range(start, stop):
    case = ev.case_for(SEED, number)
    for index in case.differing_indices():
      yield number, case.with_index(index)


def too_low_rate(rate, theta, num_levels):
  """A wrong accountant: the rate divided by 3."""
  return ev.PoissonClaims.from_loss(
      poisson.run_loss(float(rate) / 3, theta, num_levels))


def one_level_fewer(rate, theta, num_levels):
  """A wrong accountant: L - 1 levels."""
  return ev.PoissonClaims.from_loss(
      poisson.run_loss(float(rate), theta, num_levels - 1))


class ClaimsHoldTest(parameterized.TestCase):
  """Both accountants on populations 0 .. NUM_POPULATIONS - 1."""

  @parameterized.parameters(*range(0, NUM_POPULATIONS, CHUNK))
  def test_claimed_directions_hold(self, start):
    checked = collections.Counter()
    for number, case in cases(start, start + CHUNK):
      for record in ev.check(case):
        checked[record.accountant] += 1
        self.assertFalse(record.violated,
                         f"population {number}: {case.describe()}: {record}")
        self.assertLessEqual(record.ratio, 1 + 1e-9)
        if record.accountant == ev.POISSON:
          # Each direction within the accountant's own bound for it.
          self.assertLessEqual(record.side_ratio, 1 + 1e-9)
    self.assertGreater(checked[ev.POISSON], 0)
    self.assertGreater(checked[ev.THEOREM1], 0)


class CoverageTest(parameterized.TestCase):
  """The populations are the adversarial ones they are meant to be."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.cases = [ev.case_for(SEED, i) for i in range(NUM_POPULATIONS)]

  def test_every_family_and_accountant(self):
    seen = collections.Counter((c.accountant, c.family) for c in self.cases)
    for accountant in ev.ACCOUNTANTS:
      for family in ev.FAMILIES:
        self.assertGreaterEqual(seen[(accountant, family)], 35,
                                (accountant, family))

  def test_runs_vary(self):
    self.assertEqual({c.max_length for c in self.cases}, {1, 2, 3})
    letters = set()
    for case in self.cases:
      for user in case.users:
        letters.update("".join(user) if isinstance(user, dict) else user)
    self.assertEqual(letters, set("abc"))
    self.assertEqual({c.theta for c in self.cases
                      if c.accountant == ev.POISSON}, set(ev.POISSON_THETAS))
    self.assertEqual({c.theta for c in self.cases
                      if c.accountant == ev.THEOREM1}, {4, 5, 6})
    several = [c for c in self.cases if c.several_words]
    self.assertEqual({c.word_choice for c in several},
                     {ev.PER_ROUND, ev.PER_RUN})
    for case in self.cases:
      if case.family in (ev.PER_ROUND, ev.PER_RUN):
        user = case.users[case.index]
        self.assertIsInstance(user, dict)
        self.assertGreater(len(user), 1)

  def test_shares_around_theta(self):
    # The differing user's word held by theta - 1, theta, theta + 1 and
    # theta + 2 others, in both accountants' threshold populations.
    for accountant in ev.ACCOUNTANTS:
      offsets = set()
      for case in self.cases:
        if case.accountant == accountant and case.family == ev.THRESHOLD:
          mine = case.users[case.index]
          offsets.add(sum(u == mine for u in case.users) - 1 - case.theta)
      self.assertContainsSubset({-1, 0, 1, 2}, offsets, accountant)

  def test_crowded_batches(self):
    # Fixed-size populations where at least m - theta users crowd the
    # differing user's word out, and Poisson ones with many empty words.
    crowded = 0
    for case in self.cases:
      if case.family != ev.CROWD:
        continue
      mine = case.users[case.index]
      others = sum(u != mine for u in case.users)
      if case.accountant == ev.THEOREM1:
        crowded += others >= case.batch_size - case.theta
      else:
        crowded += case.users.count("") >= 5
    self.assertGreater(crowded, 50)

  def test_theorem1_cases_meet_its_conditions(self):
    for case in self.cases:
      if case.accountant == ev.THEOREM1:
        self.assertBetween(case.n, 16, ev.MAX_THEOREM1_USERS)
        privacy.check_conditions(case.n, case.theta,
                                 case.batch_size / math.sqrt(case.n))

  def test_divergences_are_not_trivial(self):
    # Theorem 1's epsilon is large on populations this small (2 to 8), so
    # its forward divergence is mostly 0; some pairs must still have one.
    big = collections.Counter()
    for _, case in cases(0, 100):
      for record in ev.check(case):
        if record.accountant == ev.POISSON:
          big["poisson"] += max(record.forward, record.reverse) > 0.01
        else:
          big["forward"] += record.forward > 1e-6
          big["reverse"] += record.reverse > 0.01
    self.assertGreater(big["poisson"], 500)
    self.assertGreater(big["forward"], 5)
    self.assertGreater(big["reverse"], 5)

  def test_cases_are_deterministic(self):
    self.assertEqual(ev.case_for(3, 17), ev.case_for(3, 17))
    self.assertNotEqual(ev.case_for(3, 17), ev.case_for(4, 17))
    drawn = list(ev.random_cases(random.Random(5), 20))
    self.assertEqual(drawn, list(ev.random_cases(random.Random(5), 20)))
    self.assertEqual({c.accountant for c in drawn}, set(ev.ACCOUNTANTS))


class CheckCanFailTest(parameterized.TestCase):
  """The check catches bounds that do not hold."""

  def test_rate_divided_by_three_is_caught(self):
    caught = []
    for number, case in cases(0, 60):
      if case.accountant != ev.POISSON:
        continue
      bad = [r for r in ev.check_poisson(case, claims=too_low_rate)
             if r.violated]
      if bad:
        caught.append(max(r.ratio for r in bad))
    self.assertGreater(len(caught), 10)
    self.assertGreater(max(caught), 10)

  def test_one_level_fewer_is_caught(self):
    # 27 users hold "a" (L = 2 levels: "a", "a$"); each level passes iff 5
    # of them take part (q = 0.2, 26 others: near the mean). The two levels
    # together are 2 % further apart in total variation than the
    # accountant's bound for one level allows.
    case = ev.Case(ev.POISSON, ev.THRESHOLD, ("a",) * 27, 0, theta=5,
                   max_length=1, sampling=choices.POISSON, rate=0.2)
    fewer = ev.check_poisson(case, epsilons=(0.0,), deltas=(),
                             claims=one_level_fewer)
    self.assertTrue(all(r.violated for r in fewer))
    self.assertGreater(min(r.ratio for r in fewer), 1.015)
    right = ev.check_poisson(case, epsilons=(0.0,), deltas=())
    self.assertFalse(any(r.violated for r in right))
    # Exactly, in Fractions: the same.
    exact_right = ev.check_poisson(case, epsilons=(0.0,), deltas=(),
                                   exact_numbers=True)
    for a, b in zip(right, exact_right):
      self.assertAlmostEqual(a.forward, b.forward, places=14)
      self.assertAlmostEqual(a.reverse, b.reverse, places=14)

  def test_theorem1_reverse_fails_on_the_counterexample(self):
    # D: 35 "a" and 1 "b"; D': one "a" user given the empty word. With
    # theta = 5 and a batch of 6, D finds "a$" always, D' misses it when
    # both non-"a" users are sampled in a level: 1 - (41/42)^2 = 83/1764.
    users = ("a",) * 35 + ("b",)
    case = ev.Case(ev.THEOREM1, "counterexample", users, 0, theta=5,
                   max_length=1, sampling=choices.FIXED, batch_size=6)
    epsilon, delta = ev.theorem1_claim(case)
    self.assertAlmostEqual(epsilon, 2 * math.log(6))
    self.assertAlmostEqual(delta, 0.0125)
    [record] = ev.check_theorem1(case, exact_numbers=True)
    self.assertEqual(record.forward, 0.0)
    self.assertAlmostEqual(record.reverse, 83 / 1764, places=15)
    self.assertTrue(record.reverse_exceeds)
    self.assertGreater(record.reverse_ratio, 3.7)
    self.assertFalse(record.violated)  # the reverse is not claimed
    # If the reverse were claimed, the check would report it.
    claimed = dataclasses.replace(record, claims_reverse=True)
    self.assertTrue(claimed.violated)
    # The pair as stated, 34 "a" and 2 "b": the same law as D'.
    run = case.run(exact_numbers=True)
    self.assertEqual(
        exact.output_distribution(["a"] * 34 + ["b"] * 2, **run),
        exact.output_distribution(case.neighbour(exact.EMPTY), **run))
    # At epsilon 0 the reverse divergence is exactly 83/1764.
    [at_zero] = ev.check_theorem1(case, (epsilon, 10.0), exact_numbers=True)[1:]
    self.assertAlmostEqual(at_zero.reverse, 83 / 1764, places=15)

  def test_crowding_lower_bound_agrees(self):
    from triehh.theory import crowding  # pylint: disable=g-import-not-at-top
    # The crowding family's worst pair, computed exactly here too.
    n, m, theta, max_length = 49, 7, 6, 3
    users = ("a",) * 48 + ("",)
    case = ev.Case(ev.THEOREM1, ev.CROWD, users, 0, theta, max_length,
                   choices.FIXED, batch_size=m)
    epsilon, delta = ev.theorem1_claim(case)
    [record] = ev.check_theorem1(case)
    with np.errstate(divide="ignore"):  # log1p(-1) where a level always fails
      bound = crowding.reverse_lower_bound(n, m, theta, max_length + 1,
                                           epsilon)
    self.assertGreaterEqual(bound.divergence, record.reverse - 1e-12)
    self.assertGreater(record.reverse, 10 * delta)


class HelpersTest(parameterized.TestCase):

  def test_ratio_and_tolerance(self):
    self.assertEqual(ev.ratio(0.5, 1.0), 0.5)
    self.assertEqual(ev.ratio(0.0, 0.0), 0.0)
    self.assertEqual(ev.ratio(1e-16, 0.0), 0.0)
    self.assertEqual(ev.ratio(1e-3, 0.0), math.inf)
    self.assertTrue(ev.within(0.1 * (1 + 1e-12), 0.1))
    self.assertFalse(ev.within(0.1 * (1 + 1e-8), 0.1))

  def test_removing_the_only_user(self):
    case = ev.Case(ev.POISSON, ev.THRESHOLD, ("ab",), 0, theta=1,
                   max_length=2, sampling=choices.POISSON, rate=0.5)
    records = ev.check_poisson(case, epsilons=(0.0,), deltas=())
    self.assertEqual([r.adjacency for r in records], ["empty", "remove"])
    # The user takes part in round 1 with probability 1/2: the total
    # variation distance to the empty run.
    for record in records:
      self.assertAlmostEqual(record.forward, 0.5)
      self.assertAlmostEqual(record.reverse, 0.5)

  def test_poisson_adjacencies_agree(self):
    for number, case in cases(0, 40):
      if case.accountant != ev.POISSON:
        continue
      empty, removed = (
          [r for r in ev.check_poisson(case) if r.adjacency == a]
          for a in (exact.EMPTY, exact.REMOVE))
      for a, b in zip(empty, removed):
        self.assertAlmostEqual(a.forward, b.forward, places=12)
        self.assertAlmostEqual(a.reverse, b.reverse, places=12)

  def test_float_laws_match_fractions(self):
    for number, case in list(cases(0, 24))[::3]:
      floats = ev.check(case)
      fractions = ev.check(case, exact_numbers=True)
      for a, b in zip(floats, fractions):
        self.assertAlmostEqual(a.forward, b.forward, delta=1e-13)
        self.assertAlmostEqual(a.reverse, b.reverse, delta=1e-13)

  def test_epsilon_for_delta_points(self):
    case = ev.Case(ev.POISSON, ev.THRESHOLD, ("a",) * 6, 0, theta=3,
                   max_length=1, sampling=choices.POISSON, rate=0.1)
    records = ev.check_poisson(case, adjacencies=(exact.REMOVE,))
    sources = [r.source for r in records]
    self.assertEqual(sources[:len(ev.POISSON_EPSILONS)],
                     ["grid"] * len(ev.POISSON_EPSILONS))
    for record in records[len(ev.POISSON_EPSILONS):]:
      delta = float(record.source.split("(")[1].rstrip(")"))
      self.assertEqual(record.claimed, delta)
      self.assertEqual(record.epsilon,
                       poisson.epsilon_for_delta(0.1, 3, 2, delta))
    for record in records[:len(ev.POISSON_EPSILONS)]:
      self.assertEqual(record.claimed, poisson.delta_for_epsilon(
          0.1, 3, 2, record.epsilon))
      self.assertEqual(record.claimed,
                       max(record.forward_bound, record.reverse_bound))

  def test_wrong_sampling_is_refused(self):
    poisson_case = ev.case_for(SEED, 0)
    fixed_case = ev.case_for(SEED, 1)
    with self.assertRaisesRegex(ValueError, "Poisson"):
      ev.check_poisson(fixed_case)
    with self.assertRaisesRegex(ValueError, "fixed-size"):
      ev.check_theorem1(poisson_case)
    with self.assertRaisesRegex(ValueError, "below"):
      ev.check_theorem1(fixed_case, (0.0,))

  def test_theorem1_settings(self):
    settings = ev.theorem1_settings()
    self.assertIn((36, 5, 6), settings)
    self.assertIn((49, 6, 7), settings)
    self.assertEqual(min(n for n, _, _ in settings), 25)
    for n, theta, m in settings:
      privacy.check_conditions(n, theta, m / math.sqrt(n))

  def test_several_words_per_round_pay_levels(self):
    users = ({"a": 1, "b": 1},) + ("a",) * 34 + ("b",)
    case = ev.Case(ev.THEOREM1, ev.PER_ROUND, users, 0, theta=5,
                   max_length=2, sampling=choices.FIXED, batch_size=6)
    _, delta = ev.theorem1_claim(case)
    self.assertAlmostEqual(delta, 3 * privacy.theorem_delta(5))
    per_run = ev.Case(ev.THEOREM1, ev.PER_RUN, users, 0, theta=5,
                      max_length=2, sampling=choices.FIXED, batch_size=6,
                      word_choice=ev.PER_RUN)
    self.assertAlmostEqual(ev.theorem1_claim(per_run)[1],
                           privacy.theorem_delta(5))

  def test_describe(self):
    case = ev.Case(ev.THEOREM1, ev.CROWD, ("a", "", "a", {"a": 1, "b": 2}),
                   3, theta=4, max_length=1, sampling=choices.FIXED,
                   batch_size=2)
    text = case.describe()
    self.assertIn("2 x 'a'", text)
    self.assertIn("{'a': 1, 'b': 2}", text)
    self.assertIn("theta=4", text)
    self.assertIn("m=2", text)
    self.assertEqual(case.differing_indices(), [3, 0])
