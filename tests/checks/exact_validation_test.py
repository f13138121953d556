"""The privacy accountants checked against exact laws on small populations."""

import collections
import dataclasses
import math
import os
import random
from fractions import Fraction

from absl.testing import parameterized
import numpy as np

from triehh.core import choices
from triehh.theory import exact
from checks import exact_validation as ev
from triehh.theory import poisson
from triehh.theory import privacy
from triehh.theory.adjacency import Adjacency

SEED = 0
# Populations 0 .. NUM_POPULATIONS - 1 of case_for(SEED, .), in chunks.
NUM_POPULATIONS = 600
CHUNK = 60


def cases(start: int, stop: int):
  for number in range(start, stop):
    case = ev.case_for(SEED, number)
    for index in case.differing_indices():
      yield number, case.with_index(index)


def too_low_rate(rate, theta, num_levels, adjacency):
  """A wrong accountant: the rate divided by 3."""
  return ev.PoissonClaims.from_loss(
      poisson.run_loss(float(rate) / 3, theta, num_levels,
                       adjacency=adjacency))


def one_level_fewer(rate, theta, num_levels, adjacency):
  """A wrong accountant: L - 1 levels."""
  return ev.PoissonClaims.from_loss(
      poisson.run_loss(float(rate), theta, num_levels - 1,
                       adjacency=adjacency))


def one_level(rate, theta, num_levels, adjacency):
  """The accountant for one level (for runs in which users vote once)."""
  del num_levels
  return ev.PoissonClaims.public(rate, theta, 1, adjacency)


def one_level_add_remove(rate, theta, num_levels, adjacency):
  """A wrong accountant for replace-one: the add/remove claim of one
  level, whatever the adjacency."""
  del num_levels, adjacency
  return ev.PoissonClaims.public(rate, theta, 1)


def add_remove_only(rate, theta, num_levels, adjacency):
  """A wrong accountant for replace-one: the add/remove claim, whatever the
  adjacency."""
  del adjacency
  return ev.PoissonClaims.public(rate, theta, num_levels)


def swap_case(word, other, others_a, others_b, theta, rate, max_length=1):
  """``others_a + 1`` users hold ``word`` and ``others_b`` hold ``other``;
  the first user's word is replaced by ``other``."""
  users = (word,) * (others_a + 1) + (other,) * others_b
  return ev.Case(ev.POISSON, ev.TWO_GROUPS, users, 0, theta=theta,
                 max_length=max_length, sampling=choices.POISSON, rate=rate,
                 replacement=other)


def one_level_swap(others_a, others_b, theta, rate, epsilon):
  """An independent oracle: the exact delta (both directions) of one level
  in which the differing user votes for "a" in D and "b" in D', with
  others_a others voting "a" and others_b "b" (Fractions)."""
  rate = Fraction(rate)

  def pmf(n, k):
    return math.comb(n, k) * rate**k * (1 - rate)**(n - k)

  p, q = collections.Counter(), collections.Counter()
  for x in range(others_a + 1):
    for y in range(others_b + 1):
      for voted, weight in ((1, rate), (0, 1 - rate)):
        mass = pmf(others_a, x) * pmf(others_b, y) * weight
        p[(x + voted >= theta, y >= theta)] += mass
        q[(x >= theta, y + voted >= theta)] += mass
  scale = math.exp(epsilon)
  return max(sum(max(0.0, float(p[o]) - scale * float(q[o])) for o in p),
             sum(max(0.0, float(q[o]) - scale * float(p[o])) for o in q))


def poisson_numbers(start, stop):
  """The Poisson populations among case_for(SEED, start .. stop - 1)."""
  return range(start + start % 2, stop, 2)


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


  @parameterized.parameters(*range(0, NUM_POPULATIONS, CHUNK))
  def test_replace_one_holds(self, start):
    # Every kind of user as the differing one, each with its replacement.
    checked = 0
    for number in poisson_numbers(start, start + CHUNK):
      case = ev.case_for(SEED, number)
      for index in case.differing_indices():
        pair = case.with_index(index)
        for record in ev.check_poisson(pair, adjacencies=(exact.REPLACE,)):
          checked += 1
          self.assertFalse(record.violated,
                           f"population {number}: {pair.describe()}: "
                           f"{record}")
          self.assertLessEqual(record.side_ratio, 1 + 1e-9)
    self.assertGreater(checked, 100)


# The replace-one pairs of the issue: 4 others hold "a", others_b hold "b",
# the differing user's "a" becomes "b"; theta = 4. Per pair: others_b, the
# rate, epsilon, the exact delta when users vote in one round ("aa" and
# "bb" at max_length 1: no end symbol) and in the two levels of "a" and "b"
# ("a", then "a$").
ISSUE_PAIRS = (
    (3, 0.75, 0.0, 0.41652, 0.41652),
    (4, 0.5, 0.5, 0.092057, 0.093136),
    (4, 0.25, 1.0, 0.0051116, 0.0051119),
)


class ReplaceOneTest(parameterized.TestCase):
  """Replace-one adjacency against the accountant's REPLACE_ONE claim."""

  @parameterized.parameters(*ISSUE_PAIRS)
  def test_one_round_pairs_need_the_product(self, others_b, rate, epsilon,
                                            one_round, _):
    case = swap_case("aa", "bb", 4, others_b, theta=4, rate=rate)
    [record] = ev.check_poisson(case, (epsilon,), (),
                                adjacencies=(exact.REPLACE,),
                                exact_numbers=True, claims=one_level)
    exact_delta = max(record.forward, record.reverse)
    self.assertAlmostEqual(exact_delta, one_round, delta=1e-5 * one_round)
    self.assertAlmostEqual(exact_delta,
                           one_level_swap(4, others_b, 4, rate, epsilon),
                           places=14)
    # Users vote in one round: the one-level claims are the run's. The
    # exact delta exceeds the add/remove claim and meets the replace-one.
    add_remove = poisson.delta_for_epsilon(rate, 4, 1, epsilon)
    replace_one = poisson.delta_for_epsilon(
        rate, 4, 1, epsilon, adjacency=Adjacency.REPLACE_ONE)
    self.assertGreater(exact_delta, add_remove * 1.01)
    self.assertLessEqual(exact_delta, replace_one)
    self.assertEqual(record.claimed, replace_one)
    self.assertEqual(record.add_remove_claimed, add_remove)
    self.assertTrue(record.exceeds_add_remove)
    self.assertGreater(record.add_remove_ratio, 1.01)
    self.assertFalse(record.violated)
    # With the add/remove claim for replace-one, the check fails; the
    # add/remove and empty-word pairs meet it.
    wrong = ev.check_poisson(case, (epsilon,), (),
                             adjacencies=ev.POISSON_ADJACENCIES,
                             claims=one_level_add_remove)
    self.assertEqual({r.adjacency: r.violated for r in wrong},
                     {exact.EMPTY: False, exact.REMOVE: False,
                      exact.REPLACE: True})

  @parameterized.parameters(*ISSUE_PAIRS)
  def test_two_level_pairs_hold(self, others_b, rate, epsilon, _,
                                two_levels):
    # "a" and "b" at max_length 1: L = 2 levels. The exact delta exceeds
    # the add/remove claim of one level (the issue's comparison) but not
    # that of the run's two levels, and meets the replace-one claim.
    case = swap_case("a", "b", 4, others_b, theta=4, rate=rate)
    [record] = ev.check_poisson(case, (epsilon,), (),
                                adjacencies=(exact.REPLACE,),
                                exact_numbers=True)
    exact_delta = max(record.forward, record.reverse)
    self.assertAlmostEqual(exact_delta, two_levels, delta=1e-5 * two_levels)
    self.assertGreater(exact_delta,
                       poisson.delta_for_epsilon(rate, 4, 1, epsilon))
    self.assertLess(exact_delta, record.add_remove_claimed)
    self.assertEqual(record.add_remove_claimed,
                     poisson.delta_for_epsilon(rate, 4, 2, epsilon))
    self.assertEqual(record.claimed, poisson.delta_for_epsilon(
        rate, 4, 2, epsilon, adjacency=Adjacency.REPLACE_ONE))
    self.assertFalse(record.violated)
    self.assertLessEqual(record.side_ratio, 1 + 1e-9)
    [as_add_remove] = ev.check_poisson(case, (epsilon,), (),
                                       adjacencies=(exact.REPLACE,),
                                       claims=add_remove_only)
    self.assertFalse(as_add_remove.violated)

  def test_a_small_batch_holds(self):
    checked = collections.Counter()
    for number in poisson_numbers(0, 32):
      case = ev.case_for(SEED, number)
      for record in ev.check_poisson(case, adjacencies=(exact.REPLACE,)):
        checked[record.source] += 1
        checked["nonzero"] += max(record.forward, record.reverse) > 0.01
        self.assertFalse(record.violated, f"{case.describe()}: {record}")
        self.assertEqual(record.replacement, case.replacement)
    self.assertEqual(checked["grid"], 16 * len(ev.POISSON_EPSILONS))
    self.assertGreater(checked["epsilon_for_delta(0.01)"], 3)
    self.assertGreater(checked["nonzero"], 30)

  def test_a_wrong_accountant_is_caught(self):
    caught = 0
    for number in poisson_numbers(0, 40):
      case = ev.case_for(SEED, number)
      caught += any(r.violated for r in ev.check_poisson(
          case, adjacencies=(exact.REPLACE,), claims=too_low_rate))
    self.assertGreater(caught, 5)

  def test_replacements(self):
    kinds = collections.Counter()
    for number in poisson_numbers(0, 400):
      case = ev.case_for(SEED, number)
      mine, other = case.users[case.index], case.replacement
      self.assertIsNotNone(other)
      self.assertNotEqual(ev._user_key(other), ev._user_key(mine))
      if isinstance(other, dict):
        kinds["bag"] += len(other) > 1
        continue
      words = [mine] if isinstance(mine, str) else list(mine)
      held = {w for u in case.users for w in ev._words(u)} - set(words)
      kinds["held by others"] += other in held
      kinds["prefix"] += any(w.startswith(other) for w in words)
      kinds["extension"] += any(other.startswith(w) for w in words)
      kinds["first letter"] += all(other[:1] != w[:1] for w in words)
      kinds["shared prefix"] += any(
          0 < len(os.path.commonprefix([w, other])) < min(len(w), len(other))
          for w in words)
      if case.family == ev.TWO_GROUPS:
        kinds["other group"] += other in held and other[0] != mine[0]
    for kind in ("bag", "held by others", "prefix", "extension",
                 "first letter", "shared prefix", "other group"):
      self.assertGreater(kinds[kind], 5, kind)
    # Deterministic, and only Poisson cases have one.
    self.assertEqual(ev.case_for(7, 10).replacement,
                     ev.case_for(7, 10).replacement)
    self.assertIsNone(ev.case_for(SEED, 1).replacement)

  def test_with_index_swaps_a_user_holding_the_replacement(self):
    case = swap_case("a", "b", 2, 2, theta=2, rate=0.5)
    self.assertEqual(case.with_index(1).replacement, "b")
    # User 3 holds "b" already: it gets user 0's "a" instead.
    self.assertEqual(case.with_index(3).replacement, "a")
    self.assertIn("(replaced by 'b')", case.describe())
    self.assertEqual(case.neighbour(exact.REPLACE),
                     ["b", "a", "a", "b", "b"])

  def test_the_only_user_replaced(self):
    case = ev.Case(ev.POISSON, ev.THRESHOLD, ("ab",), 0, theta=1,
                   max_length=2, sampling=choices.POISSON, rate=0.5,
                   replacement="b")
    [record] = ev.check_poisson(case, epsilons=(0.0,), deltas=(),
                                adjacencies=(exact.REPLACE,))
    # Sampled in round 1 (probability 1/2), the user is seen: "a" or "b".
    self.assertAlmostEqual(record.forward, 0.5)
    self.assertAlmostEqual(record.reverse, 0.5)

  def test_replace_needs_a_replacement(self):
    case = ev.Case(ev.POISSON, ev.THRESHOLD, ("a", "a"), 0, theta=1,
                   max_length=1, sampling=choices.POISSON, rate=0.5)
    with self.assertRaisesRegex(ValueError, "replacement"):
      ev.check_poisson(case, adjacencies=(exact.REPLACE,))
    with self.assertRaisesRegex(ValueError, "replacement"):
      case.neighbour(exact.REPLACE)
    with self.assertRaisesRegex(ValueError, "adjacency must be one of"):
      ev.check_poisson(case, adjacencies=("swap",))


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
