"""Tests of the public API: triehh.discover and friends."""

import math
import subprocess
import sys
import textwrap
from unittest import mock

from absl.testing import parameterized
import numpy as np
import pytest
from scipy import special

from triehh.core import population as population_lib
from triehh.data import synthetic
from triehh.engines import registry
from triehh.theory import poisson
from triehh.theory import poisson_calibration
import triehh
from tests import reference


def zipf_words(n, seed=0):
  return synthetic.english_population(n, seed=seed, distribution="zipf")


class DiscoverTest(parameterized.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.pop = zipf_words(40_000)

  def test_calibrated_run_reports_its_guarantee(self):
    result = triehh.discover(self.pop, triehh.Target(4.0, sampling="fixed"),
                             seed=1)
    p = result.params
    n, levels = self.pop.num_users, 11  # L = 10 characters + the end symbol
    target_delta = 1 / n**2
    # Corollary 1 and Theorem 1, written out from the paper.
    c = math.log(8 / (7 * math.sqrt(2 * math.pi)) / target_delta) / math.e
    growth = math.exp(4.0 / levels)
    theta = max(10, math.ceil(math.exp(special.lambertw(c).real + 1) - 0.5),
                math.ceil(growth - 1))
    batch = math.floor((growth - 1) * n / (theta * growth))
    gamma = batch / math.sqrt(n)
    epsilon = levels * math.log(1 + 1 / (math.sqrt(n) / (gamma * theta) - 1))
    delta = (theta - 2) / ((theta - 3) * math.factorial(theta))
    self.assertEqual((p.theta, p.batch_size, p.levels), (theta, batch, levels))
    self.assertAlmostEqual(p.gamma, gamma, places=12)
    self.assertAlmostEqual(p.epsilon, epsilon, places=10)
    self.assertAlmostEqual(p.delta / delta, 1.0, places=10)
    self.assertLessEqual(p.epsilon, 4.0)
    self.assertLessEqual(p.delta, target_delta)
    self.assertEqual((p.target_epsilon, p.target_delta), (4.0, target_delta))
    self.assertEqual((p.sampling, p.accounting, p.two_sided),
                     ("fixed", "Theorem 1 (one direction)", False))
    self.assertEqual(result.rounds, len(result.votes_per_round))
    self.assertEqual(result.num_participants, batch * result.rounds)

  def test_default_is_poisson_with_a_two_sided_guarantee(self):
    result = triehh.discover(self.pop, triehh.Target(4.0), seed=1)
    p = result.params
    n = self.pop.num_users
    cal = poisson_calibration.calibrate(n, 11, 4.0, 1 / n**2)
    self.assertEqual((p.sampling, p.theta, p.sampling_rate),
                     ("poisson", cal.theta, cal.rate))
    self.assertTrue(p.two_sided)
    self.assertLessEqual(poisson.delta_for_epsilon(p.sampling_rate, p.theta,
                                                   11, p.epsilon), p.delta)
    # Each round samples about rate * n users, not a fixed number.
    sampled = result.sampled_per_round
    self.assertGreater(len(set(sampled)), 1)
    spread = 5 * math.sqrt(n * cal.rate)
    self.assertTrue(all(abs(s - n * cal.rate) < spread for s in sampled))

  @parameterized.named_parameters(
      ("batch_size", triehh.Mechanism(theta=10, batch_size=500), "fixed"),
      ("gamma", triehh.Mechanism(theta=10, gamma=2.5), "fixed"),
      ("rate", triehh.Mechanism(theta=10, sampling_rate=0.01), "poisson"),
      ("epsilon", triehh.Target(4.0), "poisson"),
      ("number", 4.0, "poisson"),
      ("poisson_batch", triehh.Mechanism(theta=10, batch_size=500,
                                         sampling="poisson"), "poisson"),
      ("schedule", triehh.Mechanism(theta=2, batch_size=2,
                                    schedule=[[0, 1]],
                                    allow_no_guarantee=True), "fixed"))
  def test_default_sampling(self, privacy, sampling):
    self.assertEqual(triehh.discover(self.pop, privacy).params.sampling,
                     sampling)

  def test_poisson_is_refused_where_only_fixed_batches_run(self):
    with self.assertRaisesRegex(ValueError, "schedule runs fixed-size"):
      triehh.discover(self.pop,
                      triehh.Mechanism(
                          theta=2, sampling_rate=0.1, sampling="poisson",
                          schedule=[[0, 1]]))
    with self.assertRaisesRegex(ValueError, "is for sampling='poisson'"):
      triehh.discover(self.pop,
                      triehh.Mechanism(
                          theta=2, sampling_rate=0.1, sampling="fixed"))

  def test_same_seed_same_result(self):
    a = triehh.discover(self.pop, triehh.Target(4.0), seed=5)
    b = triehh.discover(self.pop, triehh.Target(4.0), seed=5)
    self.assertEqual(a.heavy_hitters, b.heavy_hitters)
    self.assertEqual(a.trie.to_dict(), b.trie.to_dict())

  def test_strings_mappings_and_population_agree(self):
    words = [str(w) for w in self.pop.vocabulary[self.pop.user_word]]
    as_strings = triehh.discover(words, triehh.Target(4.0), seed=2)
    as_maps = triehh.discover([{w: 1} for w in words], triehh.Target(4.0),
                              seed=2)
    as_pop = triehh.discover(self.pop, triehh.Target(4.0), seed=2)
    self.assertEqual(as_strings.heavy_hitters, as_pop.heavy_hitters)
    # One-word mappings draw a (trivial) word rank per user, so the random
    # stream differs; the trie is still a valid TrieHH outcome.
    self.assertTrue(set(as_maps.heavy_hitters) <= set(words))

  def test_theta_and_gamma_directly(self):
    result = triehh.discover(self.pop, triehh.Mechanism(theta=10, gamma=2.0))
    n = self.pop.num_users
    self.assertEqual(result.params.batch_size, math.floor(2.0 * math.sqrt(n)))
    self.assertIsNone(result.params.target_epsilon)
    self.assertTrue(result.params.has_guarantee)

  def test_outside_theorem_needs_opt_in(self):
    with self.assertRaisesRegex(ValueError, "allow_no_guarantee"):
      triehh.discover(self.pop, triehh.Mechanism(theta=2, batch_size=1000))
    result = triehh.discover(self.pop,
                             triehh.Mechanism(
                                 theta=2, batch_size=1000,
                                 allow_no_guarantee=True))
    self.assertFalse(result.params.has_guarantee)
    self.assertIn("no differential privacy guarantee", result.params.guarantee)

  def test_cap_is_refused_or_run_without_guarantee(self):
    with self.assertRaisesRegex(ValueError,
                                "vote ranks.*allow_no_guarantee=True"):
      triehh.discover(self.pop, triehh.Target(4.0, max_num_prefixes=5))
    result = triehh.discover(self.pop,
                             triehh.Target(
                                 4.0, sampling="fixed", max_num_prefixes=5,
                                 allow_no_guarantee=True))
    p = result.params
    self.assertEqual((p.epsilon, p.delta, p.accounting), (math.inf, 1.0, "none"))
    self.assertIn("vote ranks", p.guarantee)
    n = self.pop.num_users
    calibrated = triehh.calibrate(n, 11, 4.0, 1 / n**2)
    self.assertEqual((p.theta, p.batch_size),
                     (calibrated.theta, calibrated.batch_size))
    for level in result.trie.levels:
      self.assertLessEqual(level.prefixes.shape[0], 5)

  @parameterized.named_parameters(
      ("theta_alone", lambda: triehh.Mechanism(theta=10),
       "give one of sampling_rate"),
      ("two_samplings", lambda: triehh.Mechanism(theta=10, gamma=2.0,
                                                 batch_size=5),
       "not batch_size and gamma"),
      ("bad_epsilon", lambda: triehh.Target(-1.0), "epsilon must be"),
      ("bad_cap", lambda: triehh.Target(4.0, max_num_prefixes=0),
       "max_num_prefixes"),
      ("bad_adjacency", lambda: triehh.Target(4.0, adjacency="swap"),
       "adjacency must be one of"),
  )
  def test_bad_privacy_is_refused_when_built(self, build, message):
    with self.assertRaisesRegex(ValueError, message):
      build()

  @parameterized.named_parameters(
      ("bad_engine", triehh.Target(1.0), dict(engine="gpu"),
       "unknown engine"),
      ("small_population_epsilon", triehh.Target(0.1, sampling="fixed"),
       {}, "at least n ="),
      ("small_population_poisson", triehh.Target(0.1), {},
       "too few for Poisson sampling"),
      # Below the accountant's grid (1e-3) no rate is private: every loss
      # is rounded up to at least one cell.
      ("epsilon_below_the_grid_poisson", triehh.Target(1e-6), {},
       "no sampling rate gives epsilon=1e-06"),
      ("add_or_remove_with_n_from_the_data",
       triehh.Target(4.0, adjacency="ADD_OR_REMOVE_ONE"), {},
       "population_size"),
  )
  def test_bad_arguments(self, privacy, options, message):
    with self.assertRaisesRegex(ValueError, message):
      triehh.discover(self.pop, privacy, **options)

  def test_privacy_is_a_typed_argument(self):
    with self.assertRaisesRegex(TypeError, "needs its privacy"):
      triehh.discover(self.pop)
    with self.assertRaisesRegex(TypeError, "privacy must be a triehh.Target"):
      triehh.discover(self.pop, "4")
    # The keywords of the untyped call name where they went.
    with self.assertRaisesRegex(TypeError, "epsilon= is a field of "
                                "triehh.Target"):
      triehh.discover(self.pop, epsilon=4.0)
    with self.assertRaisesRegex(TypeError, "count_share= is a field of "
                                "triehh.Counting"):
      triehh.discover(self.pop, 4.0, counts=True, count_share=0.2)

  @parameterized.named_parameters(
      ("inf", math.inf, "gamma must be a positive finite number, got inf"),
      ("huge", 1e300, "more than the n=40000 users"),
  )
  def test_gamma_is_checked_before_the_batch_is_computed(self, gamma,
                                                         message):
    with self.assertRaisesRegex(ValueError, message):
      triehh.discover(self.pop, triehh.Mechanism(theta=10, gamma=gamma))

  def test_same_trie_under_both_word_choices_for_one_word_users(self):
    a = triehh.discover(self.pop, triehh.Target(4.0), seed=3)
    b = triehh.discover(self.pop, triehh.Target(4.0, word_choice="per_run"),
                        seed=3)
    self.assertEqual(a.trie.to_dict(), b.trie.to_dict())
    self.assertEqual((a.params.delta, b.params.delta, b.params.word_choice),
                     (a.params.delta, a.params.delta, "per_run"))
    self.assertEqual(b.params.accounting,
                     "Poisson accountant (two-sided)")

  def test_max_length_mismatch(self):
    with self.assertRaisesRegex(ValueError, "max_length=10"):
      triehh.discover(self.pop, triehh.Target(4.0), max_length=8)

  def test_engine_names(self):
    self.assertEqual(triehh.engine_names(),
                     ["beam", "fast", "protocol", "tff"])

  def test_several_words_per_user(self):
    rng = np.random.default_rng(0)
    vocab = [str(w) for w in self.pop.vocabulary[:200]]
    users = [{vocab[i]: int(c) for i, c in zip(
        rng.zipf(1.3, size=3) % 200, rng.integers(1, 5, size=3))}
             for _ in range(30_000)]
    result = triehh.discover(users, triehh.Target(4.0), seed=0)
    # The naive reference, at the run's theta and rate, from the seed.
    _, want = reference.run(triehh.Population.from_user_words(users),
                            theta=result.params.theta,
                            batch_size=result.params.batch_size,
                            rng=np.random.default_rng(0),
                            sampling_rate=result.params.sampling_rate)
    self.assertEqual(result.heavy_hitters, want)
    self.assertNotEmpty(want)
    self.assertTrue(set(result.heavy_hitters) <= set(vocab))


def several_word_users(n, seed=0):
  """n users with 1-3 words of a 40-word vocabulary, counts 1-4."""
  rng = np.random.default_rng(seed)
  vocab = [a + b for a in "abcdefgh" for b in "xyzuv"]
  users = []
  for _ in range(n):
    k = int(rng.integers(1, 4))
    words = rng.choice(len(vocab), size=k, replace=False, p=ZIPF_40)
    users.append({vocab[w]: int(c) for w, c in
                  zip(words, rng.integers(1, 5, size=k))})
  return users


ZIPF_40 = np.arange(1, 41, dtype=float)**-1.5 / np.sum(
    np.arange(1, 41, dtype=float)**-1.5)


def theorem1(n, levels, theta, batch):
  """Theorem 1 of the paper, written out, at an integer batch."""
  gamma = batch / math.sqrt(n)
  eps = levels * math.log(1 + 1 / (math.sqrt(n) / (gamma * theta) - 1))
  delta = (theta - 2) / ((theta - 3) * math.factorial(theta))
  return eps, delta


class SeveralWordsTest(parameterized.TestCase):
  """Per-round redraws are accounted by composition; per_run by Theorem 1."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.users = several_word_users(4000)
    cls.pop = triehh.Population.from_user_words(cls.users, max_length=2)

  def test_per_round_delta_is_levels_times_theorem1(self):
    result = triehh.discover(self.pop, triehh.Mechanism(theta=10, gamma=2.0),
                             max_length=2)
    p, n = result.params, 4000
    eps, delta_1 = theorem1(n, 3, 10, math.floor(2.0 * math.sqrt(n)))
    self.assertAlmostEqual(p.epsilon, eps, places=10)
    self.assertAlmostEqual(p.delta / (3 * delta_1), 1.0, places=10)
    self.assertEqual((p.word_choice, p.accounting),
                     ("per_round",
                      "per-round composition (L*delta), one direction"))
    self.assertTrue(result.words)

  def test_per_round_calibration_keeps_levels_times_delta_below_target(self):
    n, levels = 4000, 3
    p = triehh.discover(self.pop, triehh.Target(4.0, sampling="fixed"),
                        max_length=2).params
    # Corollary 1's theta for delta / L, written out from the paper.
    target = 1 / n**2
    c = math.log(8 / (7 * math.sqrt(2 * math.pi)) / (target / levels)) / math.e
    theta = max(10, math.ceil(math.exp(special.lambertw(c).real + 1) - 0.5),
                math.ceil(math.exp(4.0 / levels) - 1))
    self.assertEqual(p.theta, theta)
    delta_1 = theorem1(n, levels, theta, p.batch_size)[1]
    self.assertAlmostEqual(p.delta / (levels * delta_1), 1.0, places=10)
    self.assertLessEqual(p.delta, target)
    self.assertEqual(p.target_delta, target)

  def test_per_run_gets_theorem1(self):
    p = triehh.discover(self.pop,
                        triehh.Mechanism(
                            theta=10, gamma=2.0, word_choice="per_run"),
                        max_length=2).params
    eps, delta_1 = theorem1(4000, 3, 10, math.floor(2.0 * math.sqrt(4000)))
    self.assertAlmostEqual(p.epsilon, eps, places=10)
    self.assertAlmostEqual(p.delta / delta_1, 1.0, places=10)
    self.assertEqual((p.word_choice, p.accounting),
                     ("per_run", "Theorem 1 (one direction)"))

  def test_per_run_is_the_one_word_run_on_words_drawn_once(self):
    # The draw, written out: one integers() call on a stream spawned from the
    # seed, then the word whose cumulative count first exceeds the rank.
    seed = 11
    spawned = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    counts = reference.user_counts(self.pop)
    totals = np.array([sum(c for _, c in u) for u in counts])
    ranks = spawned.integers(0, totals)
    drawn = [str(self.pop.vocabulary[reference.choose_word(u, int(r))])
             for u, r in zip(counts, ranks)]
    want = triehh.discover(
        triehh.Population.from_user_words(drawn, max_length=2,
                                          alphabet=self.pop.alphabet),
        triehh.Mechanism(theta=10, gamma=2.0), max_length=2, seed=seed)
    got = triehh.discover(self.pop,
                          triehh.Mechanism(
                              theta=10, gamma=2.0, word_choice="per_run"),
                          max_length=2, seed=seed)
    self.assertEqual(got.trie.to_dict(), want.trie.to_dict())
    self.assertTrue(got.words)
    again = triehh.discover(self.pop,
                            triehh.Mechanism(
                                theta=10, gamma=2.0, word_choice="per_run"),
                            max_length=2, seed=seed)
    self.assertEqual(again.trie.to_dict(), got.trie.to_dict())

  def test_bad_word_choice(self):
    with self.assertRaisesRegex(ValueError, "word_choice must be one of"):
      triehh.discover(self.pop, triehh.Target(4.0, word_choice="once"),
                      max_length=2)


class TinyPopulationTest(parameterized.TestCase):
  """Whole-population batches make every round deterministic: the tries
  below are counted by hand."""

  def test_one_word_trie(self):
    # a: 3 votes, b: 1; then ab: 3; then ab$: 3 (theta = 2).
    result = triehh.discover(["ab", "ab", "ab", "b"],
                             triehh.Mechanism(
                                 theta=2, batch_size=4, allow_no_guarantee=True))
    self.assertEqual(result.heavy_hitters, {"ab": 3})
    self.assertEqual(result.trie.to_dict(), [
        {"depth": 1, "prefixes": {"a": 3}, "terminated": {},
         "num_sampled": 4, "num_votes": 4, "num_capped": 0},
        {"depth": 2, "prefixes": {"ab": 3}, "terminated": {},
         "num_sampled": 4, "num_votes": 3, "num_capped": 0},
        {"depth": 3, "prefixes": {}, "terminated": {"ab": 3},
         "num_sampled": 4, "num_votes": 3, "num_capped": 0},
    ])
    self.assertEqual(result.votes_per_round, [4, 3, 3])
    self.assertFalse(result.params.has_guarantee)

  def test_empty_frontier_ends_the_run(self):
    # a: 2, b: 2 kept; then a$: 2 ends "a" while ba: 1, bc: 1 fall short,
    # which leaves no frontier prefix: the run ends after 2 rounds.
    result = triehh.discover(["a", "a", "ba", "bc"],
                             triehh.Mechanism(
                                 theta=2, batch_size=4, allow_no_guarantee=True),
                             max_length=3)
    self.assertEqual(result.heavy_hitters, {"a": 2})
    self.assertEqual(result.frequent_prefixes, {"b": 2})
    self.assertEqual([(lv["prefixes"], lv["terminated"])
                      for lv in result.trie.to_dict()],
                     [({"a": 2, "b": 2}, {}), ({}, {"a": 2})])

  def test_round_that_adds_nothing_ends_the_run(self):
    # a: 4; then ab, ac, ad, ae: 1 each, below theta: the second round adds
    # nothing and is the last.
    result = triehh.discover(["ab", "ac", "ad", "ae"],
                             triehh.Mechanism(
                                 theta=2, batch_size=4, allow_no_guarantee=True))
    self.assertEqual(result.heavy_hitters, {})
    self.assertEqual(result.frequent_prefixes, {"a": 4})
    self.assertEqual(result.rounds, 2)
    self.assertFalse(result.trie.levels[-1].grew)

  @parameterized.named_parameters(
      # "abc" fills L = 3: its end symbol is level L + 1 = 4, the last.
      ("fits", "abc", {"abc": 3}, {}, True),
      # "abcd" is truncated to "abc" without end symbol: level 4 has no
      # votes, the round adds nothing.
      ("truncated", "abcd", {}, {"abc": 3}, False),
  )
  def test_at_most_max_length_plus_one_levels(self, word, hitters, prefixes,
                                               last_grew):
    result = triehh.discover([word] * 3,
                             triehh.Mechanism(
                                 theta=2, batch_size=3, allow_no_guarantee=True),
                             max_length=3)
    self.assertEqual(result.rounds, 4)
    self.assertEqual(result.heavy_hitters, hitters)
    self.assertEqual(result.frequent_prefixes, prefixes)
    self.assertEqual(result.trie.levels[-1].grew, last_grew)

  def test_cap_keeps_the_most_voted(self):
    # a: 3, b: 2, c: 2 over theta = 2; a cap of 2 keeps a and then b (the
    # tie at 2 goes to the lexicographically first).
    words = ["a", "a", "a", "b", "b", "c", "c"]
    result = triehh.discover(words,
                             triehh.Mechanism(
                                 theta=2, batch_size=7, max_num_prefixes=2,
                                 allow_no_guarantee=True))
    self.assertEqual(result.heavy_hitters, {"a": 3, "b": 2})
    self.assertEqual(result.trie.levels[0].num_capped, 1)

  def test_cap_applies_to_unfinished_extensions_only(self):
    # TFF's reference semantics. Round 2 passes "a$" 5, "ab" 4, "ac" 3,
    # "ad" 2: the finished word "a" is never capped; of the others the two
    # most voted stay, and round 3 finishes them.
    words = ["a"] * 5 + ["ab"] * 4 + ["ac"] * 3 + ["ad"] * 2
    result = triehh.discover(words,
                             triehh.Mechanism(
                                 theta=2, batch_size=len(words),
                                 max_num_prefixes=2, allow_no_guarantee=True))
    self.assertEqual(result.words, ("a", "ab", "ac"))
    self.assertEqual(result.heavy_hitters, {"a": 5, "ab": 4, "ac": 3})
    self.assertEqual([lv.num_capped for lv in result.trie.levels], [0, 1, 0])

  def test_words_and_unprotected_votes(self):
    # Round 1: a 5, b 2, c 2. Round 2: a$ 3, ab 2, ba 2, c$ 2 (9 votes).
    # Round 3: ab$ 2, ba$ 2 (4 votes; "a" and "c" have no third symbol).
    words = ["ba"] * 2 + ["a"] * 3 + ["ab"] * 2 + ["c"] * 2
    result = triehh.discover(words,
                             triehh.Mechanism(
                                 theta=2, batch_size=9, allow_no_guarantee=True),
                             max_length=3)
    self.assertEqual(result.words, ("a", "c", "ab", "ba"))
    self.assertEqual(list(result.heavy_hitters), ["a", "ab", "ba", "c"])
    hidden = result.unprotected
    self.assertEqual(hidden.votes, {"a": 3, "ab": 2, "ba": 2, "c": 2})
    self.assertEqual(hidden.prefix_votes,
                     {"a": 5, "b": 2, "c": 2, "ab": 2, "ba": 2})
    self.assertEqual(hidden.votes_per_round, (9, 9, 4))
    self.assertEqual(hidden.sampled_per_round, (9, 9, 9))
    self.assertEqual(hidden.num_votes, 22)
    with self.assertRaises(AttributeError):
      hidden.num_votes = 0  # frozen
    self.assertIn("not their vote counts", result.params.covers)

  def test_several_word_users_with_one_word_each(self):
    # Every user's only word is chosen whatever its rank: counts as above.
    users = [{"ab": 2}, {"ab": 5}, {"ab": 1}, {"b": 3}]
    result = triehh.discover(users,
                             triehh.Mechanism(
                                 theta=2, batch_size=4, allow_no_guarantee=True),
                             seed=7)
    self.assertEqual(result.heavy_hitters, {"ab": 3})


USERS = ["sun"] * 30 + ["moon"] * 20 + [f"w{i}" for i in range(50)]


class ArgumentsTest(parameterized.TestCase):
  """Bad arguments fail naming them, before any work."""

  @parameterized.named_parameters(
      ("negative", -1, ValueError, "seed must be >= 0, got -1"),
      ("fraction", 1.5, TypeError, "seed must be an integer, got 1.5"),
      ("string", "1", TypeError, "seed must be an integer"))
  def test_seed_is_named(self, seed, error, message):
    with self.assertRaisesRegex(error, message):
      triehh.discover(USERS, 4.0, seed=seed)

  def test_one_user_and_the_default_delta(self):
    # delta = 1/n^2 is 1 at n = 1: said so, not "delta must be in (0, 1)".
    with self.assertRaisesRegex(ValueError, "n=1 user is too few for the "
                                "default delta = 1/n\\^2 = 1"):
      triehh.discover(["a"], 4.0)

  def test_float_word_indices_are_named(self):
    with self.assertRaisesRegex(TypeError, "user_word must hold integer "
                                "indices .* float64"):
      triehh.Population.from_word_indices(["a", "b"], np.array([0.0, 1.0]))

  @parameterized.named_parameters(
      ("mapping", {"sun": 10**30}, TypeError,
       "user_words must be a sequence .*not a mapping"),
      ("huge_count", [{"sun": 10**30}], ValueError,
       "user_words: user 0: the count of 'sun' must be a positive integer "
       "below 2\\^63"),
      ("string_count", [{"sun": "3"}] * 10, TypeError,
       "user_words: user 0: the count of 'sun' must be a positive integer, "
       "got '3'"),
  )
  def test_user_words(self, user_words, error, message):
    with self.assertRaisesRegex(error, message):
      triehh.discover(user_words, triehh.Target(4.0))

  @parameterized.named_parameters(
      ("bool_max_length", dict(max_length=True), TypeError,
       "max_length must be an integer, got True"),
      ("encoding_keyword", dict(end_symbol="#"), TypeError,
       "end_symbol= is a field of triehh.Population"),
      ("string_epsilon", dict(privacy="4"), TypeError,
       "privacy must be a triehh.Target"),
  )
  def test_checked_before_the_population_is_built(self, kwargs, error,
                                                  message):
    kwargs.setdefault("privacy", 4.0)
    with mock.patch.object(population_lib.Population, "from_user_words",
                           side_effect=AssertionError("built")):
      with self.assertRaisesRegex(error, message):
        triehh.discover(USERS, **kwargs)

  def test_end_symbol_is_an_encoding_option_of_the_population(self):
    population = triehh.Population.from_user_words(["a$b"] * 40,
                                                   end_symbol="#")
    result = triehh.discover(population, triehh.Mechanism(
        theta=4, batch_size=20, allow_no_guarantee=True))
    self.assertEqual(result.trie.alphabet.end_symbol, "#")
    self.assertEqual(result.words, ("a$b",))
    passes = triehh.discover(
        triehh.Population.from_user_words(["a$b"] * 2000, end_symbol="#"),
        8.0, passes=triehh.Passes(2))
    self.assertEqual(passes.words, ("a$b",))

  @parameterized.named_parameters(
      ("too_large", [[10**9]], ValueError,
       r"schedule\[0\] \(the users of round 1\) holds index 1000000000, "
       r"outside \[0, 100\)"),
      ("negative", [[0, 1], [-1]], ValueError,
       r"schedule\[1\] \(the users of round 2\) holds index -1"),
      ("fraction", [[0.5]], ValueError,
       r"schedule\[0\] .* must hold whole-number indices, got 0.5"),
      ("bool", [[True]], TypeError, "must hold integer indices"),
      ("string", "01", TypeError, "schedule must be a sequence"),
  )
  def test_bad_schedule(self, schedule, error, message):
    with self.assertRaisesRegex(error, message):
      triehh.discover(USERS,
                      triehh.Mechanism(
                          theta=2, batch_size=2, allow_no_guarantee=True,
                          schedule=schedule))

  @parameterized.named_parameters(
      ("target", dict(epsilon=4.0)),
      ("mechanism", dict(theta=12, gamma=3.0)))
  def test_a_schedule_has_no_guarantee(self, privacy):
    # The users of each round are chosen, not sampled: neither Theorem 1
    # nor the Poisson accountant covers the run (one user's word, chosen
    # every round, would be published).
    users = ["sun"] * 3000 + ["moon"] * 2000 + [f"w{i}" for i in range(5000)]
    kind = triehh.Target if "epsilon" in privacy else triehh.Mechanism
    schedule = [[5000] * 300] * 11  # the one user holding "w0"
    with self.assertRaisesRegex(ValueError, "fixed schedule chooses"):
      triehh.discover(users, kind(**privacy, schedule=schedule))
    result = triehh.discover(users, kind(**privacy, schedule=schedule,
                                         allow_no_guarantee=True))
    self.assertEqual(result.words, ("w0",))
    self.assertFalse(result.params.has_guarantee)
    self.assertIn("fixed schedule chooses", result.params.guarantee)

  def test_schedule_with_whole_floats_and_repeats_runs(self):
    as_ints = triehh.discover(USERS,
                              triehh.Mechanism(
                                  theta=2, batch_size=4,
                                  allow_no_guarantee=True,
                                  schedule=[[0, 0, 1, 30]] * 4))
    as_floats = triehh.discover(
        USERS,
        triehh.Mechanism(theta=2, batch_size=4, allow_no_guarantee=True,
                         schedule=[np.array([0.0, 0.0, 1.0, 30.0])] * 4))
    self.assertEqual(as_ints.trie.to_dict(), as_floats.trie.to_dict())
    self.assertEqual(as_ints.words, ("sun",))

  @parameterized.named_parameters(
      ("name", dict(name=3), TypeError, "name must be a string"),
      ("empty_name", dict(name=""), ValueError, "name must be a non-empty"),
      ("run", dict(run="fast"), TypeError, "run must be a function"),
      ("prepare", dict(prepare=1), TypeError, "prepare must be a function"),
      ("built_in", dict(name="fast"), ValueError,
       "'fast' is a built-in engine"),
      ("built_in_tff", dict(name="tff"), ValueError,
       "'tff' is a built-in engine"),
  )
  def test_register_engine(self, kwargs, error, message):
    args = {"name": "mine", "run": lambda population, **kw: None, **kwargs}
    with self.assertRaisesRegex(error, message):
      triehh.register_engine(**args)
    self.assertNotIn("mine", triehh.engine_names())


class EngineRegistryTest(parameterized.TestCase):

  def test_registered_engine_is_run_and_listed(self):
    calls = []

    def constant(population, **kwargs):
      calls.append((population.num_users, kwargs["theta"],
                    kwargs["batch_size"]))
      return triehh.Trie(population.alphabet)

    triehh.register_engine("constant", constant)
    try:
      self.assertIn("constant", triehh.engine_names())
      result = triehh.discover(
          ["ab"] * 5,
          triehh.Mechanism(theta=3, batch_size=4, allow_no_guarantee=True),
          engine="constant")
    finally:
      registry._ENGINES.pop("constant")  # pylint: disable=protected-access
    self.assertEqual(calls, [(5, 3, 4)])
    self.assertEqual((result.engine, result.heavy_hitters), ("constant", {}))
    self.assertNotIn("constant", triehh.engine_names())


def test_unknown_engine_fails_without_importing_tensorflow():
  code = textwrap.dedent("""
      import sys
      import triehh
      try:
        triehh.discover(["ab"] * 4, triehh.Mechanism(theta=1, batch_size=2),
                  engine="gpu")
      except ValueError as err:
        print(err)
      print(sorted(m for m in sys.modules if m.split(".")[0] in
                   ("tensorflow", "tensorflow_federated")))
      """)
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                        text=True, check=True, timeout=120)
  assert proc.stdout.splitlines() == [
      "unknown engine 'gpu'; available: ['beam', 'fast', 'protocol', "
      "'tff']", "[]"]


def test_missing_dependency_is_named(monkeypatch):
  monkeypatch.delitem(registry._ENGINES, "tff", raising=False)  # pylint: disable=protected-access
  monkeypatch.setitem(registry._MODULES, "tff",  # pylint: disable=protected-access
                      "triehh_no_such_module.engine")
  with pytest.raises(ValueError, match=r"engine 'tff' could not be loaded "
                     r"\(No module named 'triehh_no_such_module'\); it "
                     "needs TensorFlow Federated"):
    triehh.discover(["ab"] * 10,
                    triehh.Mechanism(
                        theta=1, batch_size=10, allow_no_guarantee=True),
                    engine="tff")


@pytest.mark.parametrize("name, value", [
    ("passes", 2), ("availability", 0.5), ("passes", "2")])
def test_passes_and_availability_must_be_their_types(name, value):
  # An int ended in "'int' object has no attribute 'num_passes'".
  kind = {"passes": "Passes", "availability": "OnlineUsers"}[name]
  with pytest.raises(TypeError, match=rf"{name} must be a triehh\.{kind}"):
    triehh.discover(USERS, 4.0, **{name: value})


@pytest.mark.parametrize("call, error, match", [
    (lambda: triehh.NoisyTarget(4.0, noise_multipliers=np.array(2.0)),
     ValueError, "noise_multipliers must be a sequence"),
    (lambda: triehh.NoisyTarget(4.0, noise_multipliers={1.0: 2}), ValueError,
     "noise_multipliers must be a sequence"),
    (lambda: triehh.Target(4.0, schedule=5), TypeError,
     "schedule must be a sequence"),
    (lambda: triehh.discover(USERS, 4.0, deny_list=5), TypeError,
     "deny_list must be a collection of words"),
    (lambda: triehh.OnlineUsers("half"), TypeError,
     "online must be the fraction of users online"),
    (lambda: triehh.OnlineUsers(True), TypeError,
     "online must be the fraction of users online"),
    (lambda: triehh.OnlineUsers(["0.5"] * 100), TypeError,
     "online probabilities must be numbers"),
])
def test_typed_options_are_checked_when_built(call, error, match):
  # Each ended in a Python or numpy error naming no argument, was taken
  # (strings as probabilities), or was caught only later, in discover.
  with pytest.raises(error, match=match):
    call()
