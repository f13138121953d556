"""Tests of SFP: recovery without noise, determinism, options, bad input."""

import hashlib
import math

from absl.testing import parameterized
import numpy as np

import triehh
from tests.baselines.amplification_test import closed_form_delta
from triehh.baselines import sfp

SMALL = dict(k=64, m=1024)  # few hash functions keep the decode fast
# Reports without noise (no privacy guarantee): only hash collisions remain.
NO_NOISE = dict(epsilon_local=math.inf, allow_no_guarantee=True)
TOP = {"the": 2000, "and": 1200, "you": 800, "heavy": 600, "hitter": 450,
       "privacy": 350, "federated": 280, "sequence": 220, "a": 180,
       "fragment": 150}
NUM_SINGLETONS = 1000


def singletons(num, seed=0):
  rng = np.random.default_rng(seed)
  letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
  words = set()
  while len(words) < num:
    words.add("".join(rng.choice(letters, size=rng.integers(3, 13))))
  return sorted(words - set(TOP))


def user_words(top=None, num_singletons=NUM_SINGLETONS):
  top = TOP if top is None else top
  words = [w for w, c in top.items() for _ in range(c)]
  words += singletons(num_singletons)
  rng = np.random.default_rng(1)
  return [words[i] for i in rng.permutation(len(words))]


POPULATION = triehh.Population.from_user_words(user_words())


def collision_variance(counts, word):
  """Variance of a noiseless CMS estimate (count_mean_sketch docstring)."""
  k, m = SMALL["k"], SMALL["m"]
  n = sum(counts.values())
  pairs = sum(f * (f - 1) for w, f in counts.items() if w != word)
  return (n - counts[word]) / (m - 1) + pairs / (k * (m - 1))


class RecoveryTest(parameterized.TestCase):

  @parameterized.parameters("sketch", "reports")
  def test_no_noise_recovers_the_true_top_words(self, simulation):
    result = triehh.sfp_discover(POPULATION, epsilon=1e3, seed=0,
                                 simulation=simulation, **SMALL)
    self.assertGreaterEqual(result.params.epsilon_local, 1e3)
    found = result.heavy_hitters
    self.assertContainsSubset(set(TOP), set(found))
    self.assertEqual(next(iter(found)), "the")
    truth = POPULATION.ground_truth()
    m = triehh.precision_recall_f1(found, truth, ks=[10])
    self.assertEqual(m["recall@10"], 1.0)
    for entries in result.fragment_tops:
      self.assertLen(entries, 20)
      ests = [e for _, _, e in entries]
      self.assertEqual(ests, sorted(ests, reverse=True))

  def test_word_sketch_counts_without_noise(self):
    # A whole-word sketch gives unbiased counts: only hash collisions
    # (variance (n - f) / (m - 1)) are left without noise.
    result = triehh.sfp_discover(POPULATION, **NO_NOISE,
                                 word_budget=0.5, seed=0, **SMALL)
    self.assertEqual(result.params.epsilon_word, math.inf)
    counts = dict(POPULATION.ground_truth())
    for word, f in TOP.items():
      sd = math.sqrt(collision_variance(counts, word))
      self.assertLess(abs(result.heavy_hitters[word] - f), 5 * sd, msg=word)

  def test_noisy_run_at_the_papers_privacy_finds_the_head(self):
    result = triehh.sfp_discover(POPULATION, epsilon=4.0, seed=0, **SMALL)
    self.assertGreaterEqual(result.params.epsilon_local, 4.0)
    self.assertContainsSubset({"the", "and", "you"}, set(result.heavy_hitters))

  def test_several_words_per_user_report_one_by_local_frequency(self):
    users = [{"alpha": 3, "beta": 1}] * 2000 + [{w: 1} for w in singletons(500)]
    result = triehh.sfp_discover(users, **NO_NOISE, seed=3,
                                 word_budget=0.5, **SMALL)
    counts = {"alpha": 1500, "beta": 500, **{w: 1 for w in singletons(500)}}
    for word, share in (("alpha", 0.75), ("beta", 0.25)):
      # The word drawn per user is binomial; the sketch adds collisions.
      var = 2000 * share * (1 - share) + collision_variance(counts, word)
      self.assertLess(abs(result.heavy_hitters[word] - 2000 * share),
                      5 * math.sqrt(var), msg=word)

  def test_truncation_and_the_fragment_alphabet(self):
    users = user_words({"internationalization": 900, "don't": 800,
                        "the": 700}, 1000)
    default = triehh.sfp_discover(users, **NO_NOISE, seed=0,
                                  **SMALL)
    self.assertIn("internatio", default.heavy_hitters)  # the first 10
    self.assertNotIn("don't", default.heavy_hitters)  # ' is not in Omega
    self.assertEqual(default.params.num_outside_alphabet, 800)
    self.assertEqual(default.params.outside_characters, "'")
    extended = triehh.sfp_discover(users, **NO_NOISE, seed=0,
                                   fragment_alphabet="data", **SMALL)
    self.assertIn("don't", extended.heavy_hitters)
    self.assertIn("'", extended.params.fragment_alphabet)
    self.assertEqual(extended.params.num_outside_alphabet, 0)

  def test_puzzle_hash_check_only_removes_candidates(self):
    plain = triehh.sfp_discover(POPULATION, epsilon=2.0, seed=1, top_t=40,
                                **SMALL)
    checked = triehh.sfp_discover(POPULATION, epsilon=2.0, seed=1,
                                  top_t=40, check_puzzle_hash=True, **SMALL)
    self.assertContainsSubset(set(checked.heavy_hitters),
                              set(plain.heavy_hitters))
    for word in checked.heavy_hitters:
      self.assertEqual(checked.heavy_hitters[word], plain.heavy_hitters[word])


class DeterminismTest(parameterized.TestCase):

  def test_same_seed_same_result(self):
    runs = [triehh.sfp_discover(POPULATION, epsilon=4.0, seed=7,
                                num_threads=t, **SMALL) for t in (1, 2, 2)]
    for other in runs[1:]:
      self.assertEqual(runs[0].heavy_hitters, other.heavy_hitters)
      self.assertEqual(runs[0].fragment_tops, other.fragment_tops)
      self.assertEqual(runs[0].params, other.params)
    different = triehh.sfp_discover(POPULATION, epsilon=4.0, seed=8, **SMALL)
    self.assertNotEqual(runs[0].fragment_tops, different.fragment_tops)

  def test_words_or_population_give_the_same_run(self):
    words = user_words()
    a = triehh.sfp_discover(words, epsilon=4.0, seed=2, **SMALL)
    b = triehh.sfp_discover(triehh.Population.from_user_words(words),
                            epsilon=4.0, seed=2, **SMALL)
    self.assertEqual(a.heavy_hitters, b.heavy_hitters)


class ParamsTest(parameterized.TestCase):

  def test_params_and_defaults(self):
    n = 200
    result = triehh.sfp_discover(["ab", "ba", "ab", "abba"] * 50,
                                 epsilon=1.0, fragment_alphabet="ab")
    p = result.params
    # The defaults of the paper's appendix: k = 2048, m = 1024, T = 20,
    # strings of 10 characters, 256 puzzle buckets, no word sketch.
    self.assertEqual((p.n, p.k, p.m, p.T, p.top_t), (n, 2048, 1024, 20, 20))
    self.assertEqual((p.length, p.num_buckets, p.word_budget), (10, 256, 0.0))
    self.assertEqual((p.epsilon, p.delta), (1.0, 1.0 / n**2))
    # 200 users are too few for the shuffle to amplify anything: the bound
    # written out by hand exceeds delta for any local epsilon above 1.
    self.assertGreater(closed_form_delta(1.0, 1.0 + 1e-6, n), 1.0 / n**2)
    self.assertEqual(p.epsilon_local, 1.0)
    self.assertEqual(p.epsilon_fragment, 1.0)
    self.assertIsNone(p.epsilon_word)
    self.assertEqual(sum(result.reports_per_position), n)
    self.assertLen(result.reports_per_position, 5)

  def test_given_local_epsilon_reports_the_central_one(self):
    n = POPULATION.num_users
    result = triehh.sfp_discover(POPULATION, epsilon_local=6.0, delta=1e-6,
                                 **SMALL)
    self.assertEqual(result.params.epsilon_local, 6.0)
    self.assertAlmostEqual(
        triehh.sfp_local_epsilon(result.params.epsilon, 1e-6, n), 6.0,
        places=6)

  @parameterized.named_parameters(
      ("top_t", dict(top_t=0), ValueError, r"top_t \(T\)"),
      ("odd_length", dict(length=9), ValueError, "length must be even"),
      ("buckets", dict(num_buckets=300), ValueError, "num_buckets"),
      ("pad_in_alphabet", dict(fragment_alphabet="ab$"), ValueError,
       "padding symbol"),
      ("repeated_alphabet", dict(fragment_alphabet="aab"), ValueError,
       "repeated"),
      ("word_budget", dict(word_budget=1.0), ValueError, "word_budget"),
      ("simulation", dict(simulation="dense"), ValueError, "simulation"),
      ("width", dict(m=1000), ValueError, "power of two"),
      ("both_epsilons", dict(epsilon_local=5.0), ValueError, "not both"),
      ("too_many", dict(top_t=20, max_candidates=1), ValueError,
       "max_candidates"),
      ("delta", dict(delta=2.0), ValueError, "delta"),
  )
  def test_bad_parameters(self, kwargs, error, message):
    args = dict(epsilon=1e3, seed=0, **SMALL)
    args.update(kwargs)
    with self.assertRaisesRegex(error, message):
      triehh.sfp_discover(POPULATION, **args)

  @parameterized.named_parameters(
      ("top_t", dict(top_t=0), r"top_t \(T\)"),
      ("odd_length", dict(length=9), "length must be even"),
      ("buckets", dict(num_buckets=300), "num_buckets"),
      ("pad_in_alphabet", dict(fragment_alphabet="ab$"), "padding symbol"),
      ("word_budget", dict(word_budget=1.0), "word_budget"),
      ("simulation", dict(simulation="dense"), "simulation"),
      ("stitching", dict(stitching="glue"), "stitching"),
      ("both_epsilons", dict(epsilon_local=5.0), "not both"),
      ("no_epsilon", dict(epsilon=None), "give the central epsilon"),
      ("delta", dict(delta=2.0), "delta"),
      ("infinite", dict(epsilon=math.inf), "allow_no_guarantee"),
  )
  def test_check_refuses_what_a_run_refuses_before_reporting(self, kwargs,
                                                             message):
    args = dict(epsilon=1e3)
    args.update(kwargs)
    with self.assertRaisesRegex(ValueError, message) as raised:
      sfp.check(POPULATION, **args)
    with self.assertRaisesRegex(ValueError, message) as ran:
      triehh.sfp_discover(POPULATION, seed=0, **SMALL, **args)
    self.assertEqual(str(raised.exception), str(ran.exception))
    self.assertIsNone(sfp.check(POPULATION, epsilon=1e3, length=12,
                                fragment_alphabet="data"))

  def test_missing_epsilon_and_padding_in_words(self):
    with self.assertRaisesRegex(ValueError, "give the central epsilon"):
      triehh.sfp_discover(POPULATION, **SMALL)
    words = triehh.Population.from_user_words(["a$b"] * 10, end_symbol="#")
    with self.assertRaisesRegex(ValueError, "padding symbol"):
      triehh.sfp_discover(words, epsilon=1.0, **SMALL)


class StitchingOracleTest(parameterized.TestCase):
  """Noise-free runs whose result follows by hand from the algorithm."""

  # Words of 4 characters over {a, b}: 2 positions, fragments "ab", "ba".
  USERS = ["abba"] * 60 + ["baab"] * 40
  OPTIONS = dict(length=4, fragment_alphabet="ab", top_t=2, k=16, m=1024,
                 seed=0, **NO_NOISE)

  def test_one_bucket_stitches_every_combination(self):
    # With a single puzzle bucket, Q_0 = Q_2 = {ab, ba}: the Cartesian
    # product holds the two real words and the two crossings.
    result = triehh.sfp_discover(self.USERS, num_buckets=1, **self.OPTIONS)
    self.assertEqual(set(result.heavy_hitters),
                     {"abba", "baab", "abab", "baba"})
    self.assertEqual(result.num_stitched, 4)

  def test_puzzle_hash_keeps_only_the_real_words(self):
    result = triehh.sfp_discover(self.USERS, **self.OPTIONS)
    # pylint: disable-next=protected-access
    salt = sfp._salts(result.params.hash_seed)[0]
    buckets = sfp.puzzle_buckets(sfp.pad_words(["abba", "baab"], 4), 256,
                                 salt)
    self.assertNotEqual(buckets[0], buckets[1])  # the test's premise
    self.assertEqual(set(result.heavy_hitters), {"abba", "baab"})
    self.assertEqual(result.num_stitched, 2)
    # Without noise and collisions, the debiased estimate of a fragment that
    # f of the n_l reports hold is (m f - n_l) / (m - 1).
    for l, entries in enumerate(result.fragment_tops):
      n_l = result.reports_per_position[l]
      total = sum(est for _, _, est in entries)
      self.assertAlmostEqual(total, (1024 * n_l - 2 * n_l) / 1023, places=6)

  def test_single_word_counts_every_user(self):
    # Every report holds the word: at each position f = n_l, the estimate is
    # n_l and scaled by n / n_l it is n.
    result = triehh.sfp_discover(["abba"] * 30, **self.OPTIONS)
    self.assertEqual(list(result.heavy_hitters), ["abba"])
    self.assertAlmostEqual(result.heavy_hitters["abba"], 30.0, places=9)


class InputTest(parameterized.TestCase):
  """Inputs SFP cannot serve are refused or reported (no junk, no silence)."""

  def test_fewer_users_than_positions(self):
    with self.assertRaisesRegex(ValueError, r"at least 5 users.*n=4"):
      triehh.sfp_discover(["apple", "pear", "apple", "fig"], epsilon=1.0)

  def test_a_position_without_reports(self):
    # 5 users over 5 positions: some position gets no report for this seed,
    # and the run used to stitch junk words with count 0.0.
    with self.assertRaisesRegex(ValueError,
                                r"no user reported .* position.*too few"):
      triehh.sfp_discover(["apple", "banana", "apple", "cherry", "apple"],
                          epsilon=1.0, seed=0, k=64)

  def test_no_word_in_the_fragment_alphabet(self):
    with self.assertRaisesRegex(ValueError,
                                "outside the fragment alphabet.*'\\xe9'|"
                                "outside the fragment alphabet.*'é"):
      triehh.sfp_discover(["été", "café"] * 100, epsilon=4.0, k=16)

  def test_words_outside_the_alphabet_are_counted(self):
    users = ["café"] * 300 + ["tea"] * 200 + ["naïve"] * 100
    result = triehh.sfp_discover(users, seed=0, k=16, **NO_NOISE)
    self.assertEqual(result.params.num_outside_alphabet, 400)
    self.assertEqual(result.params.outside_characters, "éï")
    self.assertEqual(list(result.heavy_hitters), ["tea"])

  @parameterized.parameters(dict(epsilon=math.inf),
                            dict(epsilon_local=math.inf),
                            dict(epsilon=np.float64(np.inf)))
  def test_infinite_epsilon_needs_allow_no_guarantee(self, **privacy):
    with self.assertRaisesRegex(ValueError, "no differential privacy guarantee"
                                ".*allow_no_guarantee=True"):
      triehh.sfp_discover(POPULATION, **privacy, **SMALL)
    result = triehh.sfp_discover(POPULATION, allow_no_guarantee=True,
                                 **privacy, **SMALL)
    self.assertEqual(result.params.epsilon, math.inf)
    self.assertIn("no differential privacy guarantee",
                  result.params.guarantee)

  def test_huge_epsilon_runs_without_overflow(self):
    result = triehh.sfp_discover(POPULATION, epsilon=1e6, seed=0, **SMALL)
    self.assertEqual(result.params.epsilon_local, 1e6)
    self.assertContainsSubset(set(TOP), set(result.heavy_hitters))

  def test_tiny_delta(self):
    result = triehh.sfp_discover(POPULATION, epsilon=1.0, delta=5e-324,
                                 seed=0, **SMALL)
    self.assertGreaterEqual(result.params.epsilon_local, 1.0)
    self.assertEqual(result.params.delta, 5e-324)


def pinned_population():
  """2690 users: a head of 8 words and 400 random singletons (seeded)."""
  rng = np.random.default_rng(42)
  head = {"the": 900, "and": 500, "you": 300, "sun": 200, "moon": 150,
          "star": 100, "sky": 80, "cloud": 60}
  words = [w for w, c in head.items() for _ in range(c)]
  letters = list("abcdefghijklmnopqrstuvwxyz")
  words += ["".join(rng.choice(letters, size=int(rng.integers(3, 9))))
            for _ in range(400)]
  return [words[i] for i in rng.permutation(len(words))]


def pinned_several_words():
  return ([{"alpha": 3, "beta": 1}] * 600 + [{"gamma": 1, "delta": 2}] * 300
          + [{"zeta": 1}] * 100)


class PinnedRunTest(parameterized.TestCase):
  """Outputs of small runs recorded before the module was split into steps:
  the same seed must keep giving exactly these results."""

  @parameterized.named_parameters(
      ("central", pinned_population,
       dict(epsilon=4.0, seed=5, k=32, m=256, top_t=40),
       [("the", 820.572020286732), ("and", 493.76194730389005),
        ("you", 211.4794415251662), ("xod", 205.78410559043178)],
       (566, 517, 547, 517, 543), 6, 4.0, 7424841456459477715,
       "926874a4131e6747"),
      ("reports_word_sketch", pinned_several_words,
       dict(epsilon_local=8.0, word_budget=0.5, simulation="reports", seed=3,
            k=16, m=256, top_t=12),
       [("alpha", 465.0846045992325), ("delta", 184.31131813763423)],
       (223, 194, 199, 198, 186), 2, 8.0, 789974133212406139,
       "d91330a965270bea"),
      ("options", pinned_population,
       dict(epsilon=2.0, delta=1e-6, seed=9, k=16, m=128, top_t=30,
            check_puzzle_hash=True, fragment_alphabet="data", hash_seed=11,
            num_buckets=64, length=8),
       # The local epsilon by brentq to 1e-12 (a bisection to 1e-10 gave
       # 2.383188475621864, and counts differing from the 9th digit on).
       [("the", 881.8423299634858), ("and", 437.6841133536222)],
       (663, 645, 702, 680), 9, 2.383188475784962, 11, "ab822d2a72e59172"),
  )
  def test_same_output_as_recorded(self, make_users, kwargs, heavy_hitters,
                                   per_position, num_stitched, epsilon_local,
                                   hash_seed, tops_digest):
    result = triehh.sfp_discover(make_users(), num_threads=1, **kwargs)
    self.assertEqual(list(result.heavy_hitters.items()), heavy_hitters)
    self.assertEqual(result.reports_per_position, per_position)
    self.assertEqual(result.num_stitched, num_stitched)
    self.assertEqual(result.params.epsilon_local, epsilon_local)
    self.assertEqual(result.params.hash_seed, hash_seed)
    digest = hashlib.sha256(repr(result.fragment_tops).encode()).hexdigest()
    self.assertEqual(digest[:16], tops_digest)


if __name__ == "__main__":
  import absl.testing.absltest
  absl.testing.absltest.main()


class PaperOptionsTest(parameterized.TestCase):
  """The paper authors' fragment alphabet and stitching, noise-free."""

  # Position 0 keeps bb (80 reports) and a$ (20); position 2 keeps ab (50)
  # and ba (30): the one bucket stitches bbab, bbba, a$ab and a$ba.
  USERS = ["bbab"] * 50 + ["bbba"] * 30 + ["a"] * 20
  OPTIONS = dict(length=4, fragment_alphabet="ab", top_t=2, k=16, m=1024,
                 num_buckets=1, seed=0, **NO_NOISE)

  def test_drop_stitching_drops_a_character_after_a_pad(self):
    result = triehh.sfp_discover(self.USERS, **self.OPTIONS)
    self.assertEqual(set(result.heavy_hitters), {"bbab", "bbba"})
    self.assertEqual(result.params.stitching, "drop")

  def test_paper_stitching_keeps_the_part_before_the_first_pad(self):
    result = triehh.sfp_discover(self.USERS, stitching="paper",
                                 **self.OPTIONS)
    self.assertEqual(set(result.heavy_hitters), {"bbab", "bbba", "a"})
    self.assertEqual(result.num_stitched, 4)
    self.assertEqual(result.params.stitching, "paper")

  def test_unknown_stitching_is_refused(self):
    with self.assertRaisesRegex(ValueError, "stitching must be one of"):
      triehh.sfp_discover(self.USERS, stitching="glue", **self.OPTIONS)

  def test_paper_alphabet_rebuilds_apostrophes_and_slashes(self):
    users = ["i'm"] * 60 + ["b/c"] * 40
    options = dict(length=4, top_t=2, k=16, m=1024, seed=0, **NO_NOISE)
    with self.assertRaisesRegex(ValueError, "outside the fragment alphabet"):
      triehh.sfp_discover(users, **options)  # a-z: neither can be rebuilt
    paper = triehh.sfp_discover(users, fragment_alphabet="paper", **options)
    self.assertEqual(paper.params.fragment_alphabet,
                     "abcdefghijklmnopqrstuvwxyz.#/'")
    self.assertEqual(paper.params.num_outside_alphabet, 0)
    self.assertEqual(set(paper.heavy_hitters), {"i'm", "b/c"})

  def test_users_per_word_run_as_the_same_users_listed(self):
    listed = triehh.Population.from_user_words(["abba"] * 60 + ["baab"] * 40)
    counted = triehh.Population.from_word_frequencies(["abba", "baab"],
                                                      [60, 40])
    options = dict(length=4, fragment_alphabet="ab", top_t=2, k=16,
                   m=1024, epsilon=1.0)
    a = triehh.sfp_discover(listed, seed=5, **options)
    b = triehh.sfp_discover(counted, seed=5, **options)
    self.assertEqual(a.heavy_hitters, b.heavy_hitters)
    self.assertEqual(a.fragment_tops, b.fragment_tops)
