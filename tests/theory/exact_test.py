"""Tests of the exact law of TrieHH's output on tiny populations."""

import collections
from fractions import Fraction
import math
import random

from absl.testing import parameterized
import pytest
from scipy import stats

from triehh.discovery import deny_list
from triehh.theory import exact
import triehh

NUM_RANDOM_CASES = 60
KINDS = ("one_word", "per_round", "per_run")
SAMPLINGS = ("fixed", "poisson")


def random_word(rng: random.Random) -> str:
  return "".join(rng.choice("ab") for _ in range(rng.randint(0, 3)))


def random_case(seed: int) -> tuple[list, dict]:
  """A seeded tiny population and run: (users, output_distribution kwargs).

  Seeds cycle through the kinds (one word, several words per round, per
  run) and the two samplings.
  """
  rng = random.Random(seed)
  kind = KINDS[seed % 3]
  sampling = SAMPLINGS[(seed // 3) % 2]
  if kind == "one_word":
    users = [random_word(rng) for _ in range(rng.randint(5, 8))]
  else:
    users = []
    for _ in range(rng.randint(5, 6)):
      words = {random_word(rng): rng.randint(1, 3)
               for _ in range(rng.randint(1, 2))}
      users.append(words)
    users[0] = {"a": 1, "b": 2}  # at least one user with two words
  run = dict(theta=rng.randint(1, 3), max_length=rng.randint(1, 3),
             sampling=sampling,
             word_choice="per_run" if kind == "per_run" else "per_round")
  if sampling == "fixed":
    run["batch_size"] = rng.randint(run["theta"], len(users))
  else:
    run["rate"] = Fraction(rng.randint(1, 3), 4)
  return users, run


def engine_outcome(result) -> frozenset:
  """Every prefix of a discover result's trie, '$' ending the words found."""
  trie = result.trie
  found = set()
  for level in trie.levels:
    found.update(trie.alphabet.decode(c) for c in level.prefixes)
    found.update(trie.alphabet.decode(c) for c in level.terminated)
  return frozenset(found)


def chi_square_p_value(law, observed: collections.Counter) -> float:
  """p-value of the observed outcomes under ``law`` (0 if one is impossible).

  Outcomes expected fewer than 5 times are pooled into one bin.
  """
  total = sum(observed.values())
  if any(law.get(o, 0) == 0 for o in observed):
    return 0.0
  obs, expected = [], []
  pooled_obs, pooled_exp = 0, 0.0
  for outcome, p in law.items():
    e = float(p) * total
    if e >= 5:
      obs.append(observed[outcome])
      expected.append(e)
    else:
      pooled_obs += observed[outcome]
      pooled_exp += e
  if pooled_exp > 0:
    obs.append(pooled_obs)
    expected.append(pooled_exp)
  assert len(obs) >= 3, "too few bins for a meaningful test"
  return float(stats.chisquare(obs, expected).pvalue)


def neighbours_with_empty(users, index):
  return exact.neighbours(users, index, "empty")


class BruteForceTest(parameterized.TestCase):
  """The grouped computation against naive enumeration (exact Fractions)."""

  @parameterized.parameters(*range(NUM_RANDOM_CASES))
  def test_matches_brute_force(self, seed):
    users, run = random_case(seed)
    law = exact.output_distribution(users, **run)
    naive = exact.brute_force_distribution(users, **run)
    self.assertEqual(law, naive)
    self.assertTrue(all(isinstance(p, Fraction) and p > 0
                        for p in law.values()))
    self.assertEqual(sum(law.values()), 1)
    for outcome in law:  # every outcome is a trie: prefixes are in it
      for prefix in outcome:
        self.assertTrue(prefix[:-1] == "" or prefix[:-1] in outcome)

  def test_random_cases_are_not_trivial(self):
    sizes = []
    for seed in range(NUM_RANDOM_CASES):
      users, run = random_case(seed)
      sizes.append(len(exact.output_distribution(users, **run)))
    self.assertGreaterEqual(sum(size >= 3 for size in sizes),
                            NUM_RANDOM_CASES // 2)
    self.assertGreaterEqual(max(sizes), 10)

  def test_word_choice_changes_the_law(self):
    users = [{"a": 1, "b": 1}] * 3 + ["a", "b"]
    run = dict(theta=2, max_length=1, sampling="fixed", batch_size=3)
    per_round = exact.output_distribution(users, word_choice="per_round",
                                          **run)
    per_run = exact.output_distribution(users, word_choice="per_run", **run)
    self.assertNotEqual(per_round, per_run)
    for choice, law in (("per_round", per_round), ("per_run", per_run)):
      self.assertEqual(law, exact.brute_force_distribution(
          users, word_choice=choice, **run))

  def test_brute_force_refuses_large_populations(self):
    with self.assertRaisesRegex(ValueError, "n <= 8"):
      exact.brute_force_distribution(["a"] * 9, theta=1, max_length=1,
                                     sampling="fixed", batch_size=2)


class LawTest(parameterized.TestCase):

  @parameterized.parameters(
      dict(sampling="fixed", batch_size=7),
      dict(sampling="poisson", rate=Fraction(1, 5)),
  )
  def test_sums_to_one_on_larger_populations(self, **sample):
    users = (["ab"] * 12 + ["a"] * 9 + ["b"] * 8 + ["ba"] * 5 + [""] * 2
             + [{"aa": 2, "b": 1}] * 4)
    law = exact.output_distribution(users, theta=3, max_length=2, **sample)
    self.assertEqual(sum(law.values()), 1)
    self.assertGreater(len(law), 10)
    approx = exact.output_distribution(users, theta=3, max_length=2,
                                       exact=False, **sample)
    self.assertEqual(set(approx), set(law))
    self.assertTrue(all(isinstance(p, float) for p in approx.values()))
    self.assertAlmostEqual(sum(approx.values()), 1.0, places=12)
    for outcome, p in law.items():
      self.assertAlmostEqual(approx[outcome], float(p), places=12)

  def test_sequences(self):
    self.assertEqual(exact.sequence("ab", 2), "ab$")
    self.assertEqual(exact.sequence("abc", 2), "ab")
    self.assertEqual(exact.sequence("", 2), "")

  def test_truncated_words_never_end(self):
    law = exact.output_distribution(["abc"] * 3, theta=3, max_length=2,
                                    batch_size=3)
    self.assertEqual(law, {frozenset({"a", "ab"}): 1})

  def test_words_up_to_max_length_end(self):
    law = exact.output_distribution(["ab"] * 3, theta=3, max_length=2,
                                    batch_size=3)
    self.assertEqual(law, {frozenset({"a", "ab", "ab$"}): 1})

  def test_empty_words_never_vote(self):
    law = exact.output_distribution([""] * 4, theta=1, max_length=2,
                                    batch_size=4)
    self.assertEqual(law, {frozenset(): 1})
    # An empty word among a user's words is a pick that does not vote.
    law = exact.output_distribution([{"": 1, "a": 1}] * 2, theta=2,
                                    max_length=1, batch_size=2)
    self.assertEqual(law, {frozenset(): Fraction(3, 4),
                           frozenset({"a"}): Fraction(3, 16),
                           frozenset({"a", "a$"}): Fraction(1, 16)})

  def test_the_project_encodes_the_empty_word_with_no_symbol(self):
    # The convention followed above: an abstaining user's word is "" and
    # its sequence has no symbol at all (not even the end symbol).
    self.assertEqual(deny_list.ABSTAIN, "")
    pop = deny_list.apply(triehh.Population.from_user_words(["a", "b"],
                                                            max_length=2),
                          ["b"])
    index = list(pop.vocabulary).index(deny_list.ABSTAIN)
    self.assertTrue((pop.codes[index] < 0).all())

  def test_words_are_lower_cased_and_merged(self):
    run = dict(theta=2, max_length=2, batch_size=3)
    self.assertEqual(
        exact.output_distribution(["Ab", {"AB": 1, "ab": 1}, "b"], **run),
        exact.output_distribution(["ab", "ab", "b"], **run))

  def test_float_rate_is_the_decimal_it_prints_as(self):
    run = dict(theta=1, max_length=1, sampling="poisson")
    self.assertEqual(
        exact.output_distribution(["a", "b"], rate=0.1, **run),
        exact.output_distribution(["a", "b"], rate=Fraction(1, 10), **run))

  def test_poisson_single_user(self):
    law = exact.output_distribution(["a"], theta=1, max_length=1,
                                    sampling="poisson", rate=Fraction(1, 3))
    self.assertEqual(law, {frozenset(): Fraction(2, 3),
                           frozenset({"a"}): Fraction(2, 9),
                           frozenset({"a", "a$"}): Fraction(1, 9)})

  @parameterized.parameters(
      dict(kwargs=dict(theta=0, max_length=1, batch_size=1), match="theta"),
      dict(kwargs=dict(theta=1, max_length=0, batch_size=1),
           match="max_length"),
      dict(kwargs=dict(theta=1, max_length=1, batch_size=3),
           match="batch_size"),
      dict(kwargs=dict(theta=1, max_length=1), match="batch_size"),
      dict(kwargs=dict(theta=1, max_length=1, sampling="poisson"),
           match="rate"),
      dict(kwargs=dict(theta=1, max_length=1, sampling="poisson", rate=1.5),
           match="rate"),
      dict(kwargs=dict(theta=1, max_length=1, sampling="bernoulli"),
           match="sampling"),
      dict(kwargs=dict(theta=1, max_length=1, batch_size=1,
                       word_choice="once"), match="word_choice"),
  )
  def test_invalid_runs(self, kwargs, match):
    with self.assertRaisesRegex(ValueError, match):
      exact.output_distribution(["a", "b"], **kwargs)

  def test_invalid_users(self):
    run = dict(theta=1, max_length=1, batch_size=1)
    with self.assertRaisesRegex(ValueError, "end symbol"):
      exact.output_distribution(["a$"], **run)
    with self.assertRaisesRegex(ValueError, "positive"):
      exact.output_distribution([{"a": 0}], **run)
    with self.assertRaisesRegex(ValueError, "empty"):
      exact.output_distribution([], **run)
    with self.assertRaises(TypeError):
      exact.output_distribution("ab", **run)


class EngineAgreementTest(parameterized.TestCase):
  """The engine's outcome frequencies over 1000 seeds follow the exact law.

  The seeds are fixed, so each case passes or fails the same way every
  time. With 1000 runs the right law's p-values are 0.19 to 0.83 (the test
  wants more than 1e-3), and a law off by one in theta or the batch size,
  or by 0.1 in the sampling rate, is rejected at p below 1e-50. The
  population is encoded once and given to every run (what discover does
  with the list of users on each call), which gives the same outcomes.
  """

  NUM_SEEDS = 1000

  @parameterized.named_parameters(
      dict(testcase_name="one_word",
           users=["a"] * 4 + ["ab"] * 3 + ["b"] * 3 + ["ba", "bb", "abb"],
           run=dict(theta=2, batch_size=5, max_length=2)),
      dict(testcase_name="several_words_per_round",
           users=[{"a": 2, "b": 1}, {"ab": 1, "a": 1}, "a", "ab",
                  {"b": 1, "ba": 2}, "ba", "b", {"aa": 1, "bb": 1}],
           run=dict(theta=2, batch_size=4, max_length=2,
                    word_choice="per_round")),
      dict(testcase_name="several_words_per_run",
           users=[{"a": 2, "b": 1}, {"ab": 1, "a": 1}, "a", "ab",
                  {"b": 1, "ba": 2}, "ba", "b", {"aa": 1, "bb": 1}],
           run=dict(theta=2, batch_size=4, max_length=2,
                    word_choice="per_run")),
      dict(testcase_name="poisson_one_word",
           users=["a"] * 4 + ["ab"] * 3 + ["b"] * 3 + ["ba", "bb", "abb"],
           run=dict(theta=2, rate=0.4, max_length=2, sampling="poisson")),
      dict(testcase_name="poisson_several_words_per_round",
           users=[{"a": 2, "b": 1}, {"ab": 1, "a": 1}, "a", "ab",
                  {"b": 1, "ba": 2}, "ba", "b", {"aa": 1, "bb": 1}],
           run=dict(theta=2, rate=0.5, max_length=2, sampling="poisson",
                    word_choice="per_round")),
      dict(testcase_name="poisson_several_words_per_run",
           users=[{"a": 2, "b": 1}, {"ab": 1, "a": 1}, "a", "ab",
                  {"b": 1, "ba": 2}, "ba", "b", {"aa": 1, "bb": 1}],
           run=dict(theta=2, rate=0.5, max_length=2, sampling="poisson",
                    word_choice="per_run")),
  )
  def test_frequencies_follow_the_law(self, users, run):
    engine_run = dict(run)
    if "rate" in engine_run:
      engine_run["sampling_rate"] = engine_run.pop("rate")
    pop = triehh.Population.from_user_words(users,
                                            max_length=run["max_length"])
    max_length = engine_run.pop("max_length")
    privacy = triehh.Mechanism(allow_no_guarantee=True, **engine_run)
    observed = collections.Counter(
        engine_outcome(triehh.discover(pop, privacy, max_length=max_length,
                                       seed=seed))
        for seed in range(self.NUM_SEEDS))
    law = exact.output_distribution(users, **run)
    self.assertGreater(chi_square_p_value(law, observed), 1e-3)
    # The same test rejects a wrong law.
    wrong = exact.output_distribution(users, **{**run,
                                                "theta": run["theta"] + 1})
    self.assertLess(chi_square_p_value(wrong, observed), 1e-6)

  def test_abstaining_users_are_empty_words(self):
    # Deny-listed users abstain in the engine; here they hold "".
    words = ["a"] * 4 + ["ab"] * 3 + ["c"] * 3 + ["b"] * 2
    run = dict(theta=2, batch_size=5, max_length=2)
    pop = triehh.Population.from_user_words(words,
                                            max_length=run["max_length"])
    privacy = triehh.Mechanism(theta=run["theta"],
                               batch_size=run["batch_size"],
                               allow_no_guarantee=True)
    observed = collections.Counter(
        engine_outcome(triehh.discover(pop, privacy, deny_list=["c"],
                                       seed=seed,
                                       max_length=run["max_length"]))
        for seed in range(self.NUM_SEEDS))
    law = exact.output_distribution(
        [w if w != "c" else "" for w in words], **run)
    self.assertGreater(chi_square_p_value(law, observed), 1e-3)
    # Removing them instead (n = 9) is a different law, and is rejected.
    removed = exact.output_distribution([w for w in words if w != "c"], **run)
    self.assertLess(chi_square_p_value(removed, observed), 1e-6)


class CounterexampleTest(parameterized.TestCase):
  """Exact deltas of neighbouring populations that Theorem 1 must cover."""

  def test_one_b_user_against_two(self):
    run = dict(theta=5, batch_size=6, max_length=1)
    p = exact.output_distribution(["a"] * 35 + ["b"], **run)
    q = exact.output_distribution(["a"] * 34 + ["b"] * 2, **run)
    # On D at most one of the 6 sampled users is not an "a": "a" (level 1)
    # and "a$" (level 2) always get >= 5 votes.
    self.assertEqual(p, {frozenset({"a", "a$"}): 1})
    # On D' a level fails iff both "b" users are sampled:
    # C(34, 4) / C(36, 6) = 6 * 5 / (36 * 35) = 1/42. The two levels sample
    # independently, so nothing is found with probability 1/42, only "a"
    # with 41/42 * 1/42, and no word at all with 1 - (41/42)^2 = 83/1764.
    self.assertEqual(q, {frozenset(): Fraction(1, 42),
                         frozenset({"a"}): Fraction(41, 1764),
                         frozenset({"a", "a$"}): Fraction(41, 42) ** 2})
    no_word = sum(v for o, v in q.items() if "a$" not in o)
    self.assertEqual(no_word, Fraction(83, 1764))
    self.assertEqual(sum(v for o, v in q.items() if "a" not in o),
                     Fraction(1, 42))
    # P_D of those outcomes is 0, so the reverse divergence is 83/1764 at
    # any epsilon.
    forward, reverse = exact.divergences(p, q, 3.584)
    self.assertEqual(forward, 0.0)
    self.assertAlmostEqual(reverse, 83 / 1764, places=15)
    self.assertGreaterEqual(reverse, 0.0470)
    self.assertGreater(reverse, 0.0125)
    # At epsilon = 0 both are the total variation distance, exactly.
    self.assertEqual(exact.divergences(p, q, 0),
                     (Fraction(83, 1764), Fraction(83, 1764)))

  def test_two_empty_words_of_twenty_five(self):
    run = dict(theta=4, batch_size=5, max_length=2)
    d = ["aa"] * 24 + [""]
    d_prime = neighbours_with_empty(d, 0)
    self.assertEqual(d_prime.count(""), 2)
    p = exact.output_distribution(d, **run)
    q = exact.output_distribution(d_prime, **run)
    full = frozenset({"a", "aa", "aa$"})
    self.assertEqual(p, {full: 1})
    # Each of the 3 levels fails iff both empty words are sampled:
    # 5 * 4 / (25 * 24) = 1/30; 1 - (29/30)^3 = 2611/27000.
    self.assertEqual(1 - q[full], Fraction(2611, 27000))
    delta = exact.exact_delta(d, d_prime, 10.0, **run)
    self.assertEqual(delta.forward, 0.0)
    self.assertAlmostEqual(delta.reverse, 2611 / 27000, places=15)
    self.assertEqual(delta.delta, delta.reverse)
    self.assertEqual(tuple(delta), (delta.forward, delta.reverse))

  @parameterized.parameters(4, 5, 6)
  def test_batch_theta_plus_one(self, theta):
    # m = theta + 1, n = m^2: a level fails on D' iff both empty words are
    # sampled, m (m - 1) / (n (n - 1)) = 1 / (m (m + 1)); two levels ("a",
    # "a$").
    m = theta + 1
    n = m * m
    run = dict(theta=theta, batch_size=m, max_length=1)
    p = exact.output_distribution(["a"] * (n - 1) + [""], **run)
    q = exact.output_distribution(["a"] * (n - 2) + [""] * 2, **run)
    full = frozenset({"a", "a$"})
    self.assertEqual(p, {full: 1})
    level_fails = Fraction(1, m * (m + 1))
    self.assertEqual(q[frozenset()], level_fails)
    self.assertEqual(q[frozenset({"a"})], (1 - level_fails) * level_fails)
    self.assertEqual(1 - q[full], 1 - (1 - level_fails) ** 2)
    self.assertEqual(exact.hockey_stick(q, p, 0), 1 - (1 - level_fails) ** 2)
    self.assertEqual(
        {4: Fraction(59, 900), 5: Fraction(83, 1764),
         6: Fraction(111, 3136)}[theta], 1 - q[full])


class NeighbourTest(parameterized.TestCase):

  def test_neighbours(self):
    users = ["a", {"b": 2}, "ab"]
    self.assertEqual(exact.neighbours(users, 1, "empty"), ["a", "", "ab"])
    self.assertEqual(exact.neighbours(users, 1, "remove"), ["a", "ab"])
    self.assertEqual(users, ["a", {"b": 2}, "ab"])  # not modified
    with self.assertRaises(IndexError):
      exact.neighbours(users, 3, "empty")
    with self.assertRaisesRegex(ValueError, "adjacency"):
      exact.neighbours(users, 0, "replace")

  @parameterized.parameters(*range(12))
  def test_poisson_empty_is_remove(self, seed):
    users, run = random_case(seed)
    run.pop("batch_size", None)
    run.update(sampling="poisson", rate=Fraction(1 + seed % 3, 4))
    index = seed % len(users)
    empty = exact.output_distribution(
        exact.neighbours(users, index, "empty"), **run)
    removed = exact.output_distribution(
        exact.neighbours(users, index, "remove"), **run)
    self.assertEqual(empty, removed)

  def test_fixed_empty_is_not_remove(self):
    # With a batch of 3 of the 5 "a" users a level never fails; with the
    # empty word, it fails when that user is sampled (1/2 per level).
    users = ["a"] * 5 + ["b"]
    run = dict(theta=3, max_length=1, batch_size=3)
    empty = exact.output_distribution(exact.neighbours(users, 5, "empty"),
                                      **run)
    removed = exact.output_distribution(exact.neighbours(users, 5, "remove"),
                                        **run)
    self.assertEqual(removed, {frozenset({"a", "a$"}): 1})
    self.assertEqual(empty[frozenset({"a", "a$"})], Fraction(1, 4))


class HockeyStickTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.x, self.y, self.z = (frozenset({"a"}), frozenset({"b"}),
                              frozenset())
    self.p = {self.x: Fraction(1, 2), self.y: Fraction(1, 2)}
    self.q = {self.x: Fraction(1, 4), self.z: Fraction(3, 4)}

  def test_epsilon_zero_is_exact_total_variation(self):
    self.assertEqual(exact.hockey_stick(self.p, self.q, 0), Fraction(3, 4))
    self.assertIsInstance(exact.hockey_stick(self.p, self.q, 0), Fraction)
    self.assertEqual(exact.divergences(self.p, self.q, 0),
                     (Fraction(3, 4), Fraction(3, 4)))

  def test_epsilon_scales_q(self):
    eps = math.log(2)
    # max(0, 1/2 - 2 * 1/4) + max(0, 1/2 - 0) = 1/2
    self.assertAlmostEqual(exact.hockey_stick(self.p, self.q, eps), 0.5)
    # max(0, 1/4 - 2 * 1/2) + 3/4 = 3/4
    self.assertAlmostEqual(exact.hockey_stick(self.q, self.p, eps), 0.75)
    self.assertIsInstance(exact.hockey_stick(self.p, self.q, eps), float)
    self.assertEqual(exact.hockey_stick(self.p, self.p, eps), 0.0)

  def test_floats(self):
    p = {k: float(v) for k, v in self.p.items()}
    self.assertAlmostEqual(exact.hockey_stick(p, self.q, 0), 0.75)
    self.assertIsInstance(exact.hockey_stick(p, self.q, 0), float)


if __name__ == "__main__":
  pytest.main([__file__])
