"""Tests of SFP's run: recovery, determinism, options and their checks, and
outputs pinned by seed."""

import dataclasses
import hashlib
import math
import os

from absl.testing import parameterized
import numpy as np
from scipy import stats

import triehh
from tests.baselines.amplification_test import closed_form_delta
from tests.baselines.sfp_helpers import NO_NOISE
from tests.baselines.sfp_helpers import POPULATION
from tests.baselines.sfp_helpers import run_sfp
from tests.baselines.sfp_helpers import SMALL
from tests.baselines.sfp_helpers import TOP
from tests.baselines.sfp_helpers import user_words
from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import sfp
from triehh.baselines import sfp_clients
from triehh.baselines import sfp_options
from triehh.baselines import sfp_privacy
from triehh.core import population as population_lib
from triehh.core import release
from triehh.theory.adjacency import Adjacency
from triehh.theory.mechanism import Guarantee


class RecoveryTest(parameterized.TestCase):

  @parameterized.parameters("sketch", "reports")
  def test_no_noise_recovers_the_true_top_words(self, simulation):
    result = run_sfp(POPULATION, epsilon=1e3, seed=0,
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

  def test_noisy_run_at_the_papers_privacy_finds_the_head(self):
    result = run_sfp(POPULATION, epsilon=4.0, seed=0, **SMALL)
    self.assertGreaterEqual(result.params.epsilon_local, 4.0)
    self.assertContainsSubset({"the", "and", "you"}, set(result.heavy_hitters))


class PhaseTimesTest(parameterized.TestCase):

  def test_phases_make_the_clients_and_server_times(self):
    result = run_sfp(POPULATION, epsilon=4.0, seed=0, **SMALL)
    phases = result.phase_seconds
    self.assertEqual(set(phases), {"encode", "aggregate", "decode"})
    self.assertTrue(all(t > 0 for t in phases.values()), msg=phases)
    self.assertLessEqual(phases["encode"] + phases["aggregate"],
                         result.client_seconds)
    self.assertEqual(phases["decode"], result.server_seconds)


class DeterminismTest(parameterized.TestCase):

  def test_same_seed_same_result(self):
    runs = [run_sfp(POPULATION, epsilon=4.0, seed=7,
                    num_threads=t, **SMALL) for t in (1, 2, 2)]
    for other in runs[1:]:
      self.assertEqual(runs[0].heavy_hitters, other.heavy_hitters)
      self.assertEqual(runs[0].fragment_tops, other.fragment_tops)
      self.assertEqual(runs[0].params, other.params)
    different = run_sfp(POPULATION, epsilon=4.0, seed=8, **SMALL)
    self.assertNotEqual(runs[0].fragment_tops, different.fragment_tops)

  def test_words_or_population_give_the_same_run(self):
    words = user_words()
    a = run_sfp(words, epsilon=4.0, seed=2, **SMALL)
    b = run_sfp(triehh.Population.from_user_words(words),
                epsilon=4.0, seed=2, **SMALL)
    self.assertEqual(a.heavy_hitters, b.heavy_hitters)


class ParamsTest(parameterized.TestCase):

  def test_params_and_defaults(self):
    n = 200
    result = run_sfp(["ab", "ba", "ab", "abba"] * 50,
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
      # Each names the argument (numpy's own messages named none), and a
      # string is not taken for True.
      ("negative_seed", dict(seed=-1), ValueError,
       "^seed must be >= 0, got -1$"),
      ("fractional_seed", dict(seed=1.5), TypeError,
       "^seed must be an integer, got 1.5$"),
      ("word_budget_text", dict(word_budget="x"), TypeError,
       "^word_budget must be a number, got 'x'$"),
      ("puzzle_hash_text", dict(check_puzzle_hash="no"), TypeError,
       "^check_puzzle_hash must be True or False, got 'no'$"),
      ("no_guarantee_text", dict(epsilon=math.inf, allow_no_guarantee="no"),
       TypeError, "^allow_no_guarantee must be True or False, got 'no'$"),
  )
  def test_bad_parameters(self, kwargs, error, message):
    args = dict(epsilon=1e3, seed=0, **SMALL)
    args.update(kwargs)
    with self.assertRaisesRegex(error, message):
      run_sfp(POPULATION, **args)

  @parameterized.named_parameters(
      ("top_t", dict(top_t=0), r"^top_t \(T\) must be >= 1, got 0$"),
      ("odd_length", dict(length=9), "^length must be even"),
      ("short_length", dict(length=1), "^length must be >= 2, got 1$"),
      ("buckets", dict(num_buckets=300), r"^num_buckets must be in \[1, "),
      ("pad_in_alphabet", dict(fragment_alphabet="ab$"),
       "^fragment_alphabet must not contain the padding symbol"),
      ("empty_alphabet", dict(fragment_alphabet=""),
       "^fragment_alphabet must be a non-empty string"),
      ("word_budget", dict(word_budget=1.0), r"^word_budget must be in \[0, "),
      ("stitching", dict(stitching="glue"), "^stitching must be one of"),
      ("both_epsilons", dict(epsilon_local=5.0), "not both"),
      ("no_epsilon", dict(epsilon=None), "^give the central epsilon"),
      ("delta", dict(delta=2.0), r"^delta must be in \(0, 1\)"),
      ("infinite", dict(epsilon=math.inf), "allow_no_guarantee"),
      ("hash_functions", dict(k=0), r"^k \(number of hash functions\)"),
      ("width", dict(m=1000), "power of two"),
      ("max_candidates", dict(max_candidates=0), "^max_candidates must be"),
  )
  def test_a_bad_field_is_refused_when_the_target_is_built(self, kwargs,
                                                           message):
    args = dict(epsilon=1e3)
    args.update(kwargs)
    with self.assertRaisesRegex(ValueError, message):
      sfp.SFPTarget(**args)

  @parameterized.named_parameters(
      ("puzzle_hash_text", dict(check_puzzle_hash="no"),
       "^check_puzzle_hash must be True or False, got 'no'$"),
      ("no_guarantee_text", dict(allow_no_guarantee=1),
       "^allow_no_guarantee must be True or False, got 1$"),
      ("top_t_float", dict(top_t=2.0), r"^top_t \(T\) must be an integer"),
      ("alphabet_list", dict(fragment_alphabet=["a"]),
       "^fragment_alphabet must be a non-empty string"),
  )
  def test_a_field_of_another_type_is_named(self, kwargs, message):
    with self.assertRaisesRegex((TypeError, ValueError), message):
      sfp.SFPTarget(1.0, **kwargs)

  def test_a_target_is_frozen_and_keeps_its_checked_values(self):
    target = sfp.SFPTarget(np.float64(4.0), top_t=np.int64(40))
    self.assertEqual((target.epsilon, target.top_t), (4.0, 40))
    self.assertIs(type(target.top_t), int)
    self.assertEqual(sfp.SFPTarget(epsilon_local=np.float64(np.inf),
                                   allow_no_guarantee=True).epsilon_local,
                     math.inf)
    with self.assertRaises(AttributeError):
      target.top_t = 80  # pylint: disable=assigning-non-slot

  @parameterized.named_parameters(
      ("simulation", dict(simulation="dense"), "^simulation must be one of"),
      ("threads", dict(num_threads=0), r"^num_threads must be in \[1, "),
  )
  def test_check_refuses_the_run_options_a_run_refuses(self, options,
                                                       message):
    target = sfp.SFPTarget(1e3, **SMALL)
    with self.assertRaisesRegex(ValueError, message) as raised:
      sfp.check(POPULATION, target, **options)
    with self.assertRaisesRegex(ValueError, message) as ran:
      triehh.sfp_discover(POPULATION, target, seed=0, **options)
    self.assertEqual(str(raised.exception), str(ran.exception))
    self.assertIsNone(sfp.check(POPULATION, sfp.SFPTarget(
        1e3, length=12, fragment_alphabet="data")))

  def test_check_refuses_what_the_population_does_not_allow(self):
    few = triehh.Population.from_user_words(["ab", "ba", "ab"])
    target = sfp.SFPTarget(1.0, **SMALL)
    with self.assertRaisesRegex(ValueError, r"at least 5 users.*n=3"):
      sfp.check(few, target)
    with self.assertRaisesRegex(ValueError, "read off the users' words"):
      sfp.check(few, sfp.SFPTarget(1.0, length=4, fragment_alphabet="data"))

  @parameterized.parameters("epsilon", "delta", "epsilon_local", "top_t",
                            "k", "m", "length", "num_buckets",
                            "fragment_alphabet", "word_budget", "stitching",
                            "check_puzzle_hash", "max_candidates",
                            "allow_no_guarantee")
  def test_an_old_keyword_names_its_new_home(self, keyword):
    with self.assertRaisesRegex(TypeError, (
        rf"^sfp_discover: {keyword}= is a field of triehh.SFPTarget, e.g. "
        r"sfp_discover\(users, triehh.SFPTarget\(epsilon=4.0\)\)$")):
      triehh.sfp_discover(POPULATION, **{keyword: 1})
    # Before any work: with a target too, the old keyword is refused.
    with self.assertRaisesRegex(TypeError, f"^sfp_discover: {keyword}="):
      triehh.sfp_discover(POPULATION, sfp.SFPTarget(4.0), **{keyword: 1})

  def test_a_missing_or_untyped_target_is_refused(self):
    with self.assertRaisesRegex(TypeError, "^sfp_discover takes a "
                                "triehh.SFPTarget as its target, none was "
                                "given: e.g. sfp_discover"):
      triehh.sfp_discover(POPULATION)
    with self.assertRaisesRegex(TypeError, "got float 4.0"):
      triehh.sfp_discover(POPULATION, 4.0)
    with self.assertRaisesRegex(TypeError, "unexpected keyword argument "
                                "'top_k'"):
      triehh.sfp_discover(POPULATION, sfp.SFPTarget(4.0), top_k=3)
    with self.assertRaisesRegex(TypeError, "check takes a triehh.SFPTarget"):
      sfp.check(POPULATION, dict(epsilon=4.0))

  def test_missing_epsilon_and_padding_in_words(self):
    with self.assertRaisesRegex(ValueError, "give the central epsilon"):
      run_sfp(POPULATION, **SMALL)
    words = triehh.Population.from_user_words(["a$b"] * 10, end_symbol="#")
    with self.assertRaisesRegex(ValueError, "padding symbol"):
      run_sfp(words, epsilon=1.0, **SMALL)

  def test_fragments_from_an_alphabet_read_off_the_data_are_refused(self):
    # Candidates built from such an alphabet can release a character only
    # one user types: no guarantee covers it.
    words = user_words() + ["zz\u00e9"]
    with self.assertRaisesRegex(ValueError, "read off the users' words"):
      run_sfp(words, epsilon=4.0, fragment_alphabet="data",
              **SMALL)
    public = triehh.Population.from_user_words(
        words, alphabet="abcdefghijklmnopqrstuvwxyz\u00e9")
    self.assertIsNone(sfp.check(public, sfp.SFPTarget(
        4.0, fragment_alphabet="data")))

  def test_decode_threads_beyond_the_machine_are_refused(self):
    too_many = sfp.MAX_THREADS_PER_CPU * (os.cpu_count() or 1) + 1
    with self.assertRaisesRegex(ValueError, r"num_threads must be in \[1, "):
      run_sfp(POPULATION, epsilon=4.0, num_threads=too_many,
              **SMALL)

  def test_fewer_users_than_positions(self):
    with self.assertRaisesRegex(ValueError, r"at least 5 users.*n=4"):
      run_sfp(["apple", "pear", "apple", "fig"], epsilon=1.0)


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


def pinned_public_population():
  """pinned_population() with its alphabet given, as fragment_alphabet=
  "data" needs (the same 26 letters the words use)."""
  return triehh.Population.from_user_words(
      pinned_population(), alphabet="abcdefghijklmnopqrstuvwxyz")


def pinned_counts():
  """51,769 users per word: a head of 8 words and singletons to triplets
  (seeded); at k = 64 a position's rows hold about 160 reports."""
  rng = np.random.default_rng(7)
  head = {"the": 18000, "and": 10000, "you": 6000, "sun": 4000,
          "moon": 3000, "star": 2000, "sky": 1600, "cloud": 1200}
  letters = list("abcdefghijklmnopqrstuvwxyz")
  tail = sorted({"".join(rng.choice(letters, size=int(rng.integers(3, 9))))
                 for _ in range(3000)} - set(head))
  counts = [int(c) for c in rng.integers(1, 4, size=len(tail))]
  return triehh.Population.from_word_frequencies(
      list(head) + tail, list(head.values()) + counts)


def pinned_several_words():
  return ([{"alpha": 3, "beta": 1}] * 600 + [{"gamma": 1, "delta": 2}] * 300
          + [{"zeta": 1}] * 100)


class PinnedRunTest(parameterized.TestCase):
  """Outputs of small runs recorded before the module was split into steps
  (and before its speed-ups): the same seed must keep giving exactly these
  results."""

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
      ("options", pinned_public_population,
       dict(epsilon=2.0, delta=1e-6, seed=9, k=16, m=128, top_t=30,
            check_puzzle_hash=True, fragment_alphabet="data", hash_seed=11,
            num_buckets=64, length=8),
       # The local epsilon by brentq to 1e-12 (a bisection to 1e-10 gave
       # 2.383188475621864, and counts differing from the 9th digit on).
       [("the", 881.8423299634858), ("and", 437.6841133536222)],
       (663, 645, 702, 680), 9, 2.383188475784962, 11, "ab822d2a72e59172"),
      # Recorded before the noise's lookup draws: at flip probability 0.16,
      # rows of up to 187 reports draw the -1 entries' flips by inversion
      # (looked up), fuller rows by rejection (the generator).
      ("lookup_and_rejection", pinned_counts,
       dict(epsilon_local=3.3, seed=4, k=64, m=1024, top_t=20),
       [("the", 17350.56892910002), ("and", 9868.8456266888),
        ("you", 5782.113845823862), ("sun", 3406.3401955786253),
        ("moon", 2968.7783199354453), ("star", 1810.8363229173597),
        ("sky", 1279.95735722927), ("jqe", 1270.1570019896149),
        ("mokq", 1251.9141680852827), ("starcr", 1183.0566381038918)],
       (10483, 10396, 10257, 10309, 10324), 10, 3.3, 8698157313321341862,
       "f7c8a81ed71450bc"),
  )
  def test_same_output_as_recorded(self, make_users, kwargs, heavy_hitters,
                                   per_position, num_stitched, epsilon_local,
                                   hash_seed, tops_digest):
    result = run_sfp(make_users(), num_threads=1, **kwargs)
    self.assertEqual(list(result.heavy_hitters.items()), heavy_hitters)
    self.assertEqual(result.reports_per_position, per_position)
    self.assertEqual(result.num_stitched, num_stitched)
    self.assertEqual(result.params.epsilon_local, epsilon_local)
    self.assertEqual(result.params.hash_seed, hash_seed)
    digest = hashlib.sha256(repr(result.fragment_tops).encode()).hexdigest()
    self.assertEqual(digest[:16], tops_digest)


class ReleaseTest(parameterized.TestCase):
  """The result is a Release, with the shuffled reports' guarantee."""

  def test_the_result_is_a_release_of_the_central_guarantee(self):
    result = triehh.sfp_discover(POPULATION, sfp.SFPTarget(4.0, **SMALL))
    self.assertIsInstance(result, release.Release)
    self.assertEqual(result.mechanism, "sfp")
    self.assertNotIn("mechanism",
                     {f.name for f in dataclasses.fields(result)})
    self.assertEqual(result.words, tuple(result.heavy_hitters))
    counts = list(result.heavy_hitters.values())
    self.assertEqual(counts, sorted(counts, reverse=True))  # ranked
    g = result.guarantee
    self.assertIsInstance(g, Guarantee)
    n = POPULATION.num_users
    self.assertEqual((g.epsilon, g.delta, g.two_sided, g.n_source),
                     (4.0, 1.0 / n**2, True, "data"))
    # Balle et al.'s neighbours replace one user's data; n is fixed.
    self.assertEqual(g.adjacencies, (Adjacency.REPLACE_ONE,
                                     Adjacency.REPLACE_SPECIAL))
    self.assertFalse(g.holds_for(Adjacency.ADD_OR_REMOVE_ONE))
    self.assertIn("Balle et al. 2019", g.accounting)
    self.assertIn(f"{result.params.epsilon_local:.6g}-LDP on its own",
                  g.covers)
    self.assertGreaterEqual(result.params.epsilon_local, 4.0)
    self.assertIn("estimated counts", g.covers)
    self.assertIn("shuffler", g.trust)
    self.assertEqual(result.per_round, (release.RoundStats(
        candidates=result.num_stitched, kept=len(result.heavy_hitters)),))
    self.assertEqual(result.unprotected, {"num_outside_alphabet": 0,
                                          "outside_characters": ""})

  def test_a_given_local_epsilon_and_delta_derive_nothing_from_n(self):
    result = triehh.sfp_discover(POPULATION, sfp.SFPTarget(
        epsilon_local=6.0, delta=1e-6, **SMALL))
    g = result.guarantee
    self.assertEqual((g.delta, g.n_source), (1e-6, "unused"))
    self.assertEqual(g.epsilon, result.params.epsilon)
    self.assertLessEqual(g.epsilon, 6.0)
    self.assertIn("6-LDP on its own", g.covers)
    local = triehh.sfp_discover(POPULATION, sfp.SFPTarget(
        epsilon_local=6.0, **SMALL))
    self.assertEqual(local.guarantee.n_source, "data")  # delta = 1/n^2

  def test_reports_without_noise_have_no_guarantee(self):
    result = run_sfp(POPULATION, **NO_NOISE, **SMALL)
    g = result.guarantee
    self.assertEqual((g.epsilon, g.delta, g.adjacencies, g.two_sided),
                     (math.inf, 1.0, (), False))
    self.assertTrue(g.describe().startswith(
        "no differential privacy guarantee"))

  def test_same_output_as_the_steps_run_by_hand(self):
    # The untyped call's steps, from the lower-level functions, with the
    # options it took: the target changes the interface, not the draws.
    users, seed = pinned_population(), 6
    result = triehh.sfp_discover(
        users, sfp.SFPTarget(2.0, top_t=30, k=32, m=256, word_budget=0.25),
        seed=seed, num_threads=1)
    pop = population_lib.as_population(users,
                                       population_lib.DEFAULT_MAX_LENGTH)
    opts = sfp_options.Options(
        top_t=30, length=10, num_buckets=256,
        fragment_alphabet="abcdefghijklmnopqrstuvwxyz", word_budget=0.25,
        simulation="sketch", chunk_size=cms_lib.DEFAULT_CHUNK_SIZE,
        num_threads=1, check_puzzle_hash=False, max_candidates=2_000_000,
        stitching="drop")
    privacy = sfp_privacy.calibrate(pop.num_users, 2.0, None, None, 0.25,
                                    False)
    rng = np.random.default_rng(seed)
    hashing = sfp._hashing(privacy, None, 32, 256, rng)  # pylint: disable=protected-access
    reports = sfp_clients.client_reports(pop, opts, hashing.frag_cms,
                                         hashing.word_cms,
                                         hashing.puzzle_salt, rng)
    heavy, tops, counts, stitched = sfp._server(reports, hashing, opts)  # pylint: disable=protected-access
    self.assertNotEmpty(heavy)
    self.assertEqual(list(result.heavy_hitters.items()), list(heavy.items()))
    self.assertEqual(result.fragment_tops, tops)
    self.assertEqual(result.reports_per_position, tuple(counts))
    self.assertEqual(result.num_stitched, stitched)
    self.assertEqual(result.params.epsilon_local, privacy.epsilon_local)
    self.assertEqual(result.params.epsilon_word, privacy.epsilon_word)
    self.assertEqual(result.params.hash_seed, hashing.hash_seed)


if __name__ == "__main__":
  import absl.testing.absltest
  absl.testing.absltest.main()


def _sun_run(per_100: int, seed: int) -> sfp.SFPResult:
  """SFP at epsilon 4 (T=5, k=16, m=256) on 100 copies of ``per_100``
  users holding "sun" and 300 holding one word each (``w0`` to ``w299``,
  outside the fragment alphabet)."""
  words = ["sun"] * per_100 + [f"w{i}" for i in range(300)]
  return triehh.sfp_discover(
      words * 100, triehh.SFPTarget(epsilon=4.0, top_t=5, k=16, m=256),
      seed=seed)


class NothingFoundTest(parameterized.TestCase):

  def test_no_word_found_says_the_holders_a_word_needs(self):
    # 500 of 30,500 users held "sun" and no word was found; the note said
    # 170 holders were enough "for one standard deviation", not that the
    # decode keeps only the T largest of 186,624 estimates a position.
    result = _sun_run(5, seed=2)
    self.assertEqual(result.words, ())
    (note,) = result.notes
    self.assertEqual(note, sfp.nothing_found(result.params,
                                             result.reports_per_position))
    # By hand: the sketch's variance of an absent item at the position of
    # fewest reports, which needs the most holders (std grows as sqrt n_l),
    # and the normal quantile of T among 256 buckets x 27^2 fragments.
    fewest = min(result.reports_per_position)
    sketch = cms_lib.CountMeanSketch.create(
        result.params.epsilon_fragment, k=16, m=256)
    std = math.sqrt(sketch.variance(fewest))
    z = stats.norm.isf(5 / (256 * 27**2))  # scipy's, not the module's
    self.assertEqual(sfp.decode_cut(result.params)[0], 186_624)
    self.assertAlmostEqual(sfp.decode_cut(result.params)[1], z, places=9)
    needed, worst = sfp.holders_needed(result.params,
                                       result.reports_per_position)
    self.assertAlmostEqual(worst, std, places=9)
    self.assertAlmostEqual(needed, z * std * 30_500 / fewest, places=6)
    self.assertGreater(needed, 500)  # so "sun" was not expected
    self.assertIn(f"keeps the T=5 largest of 186,624 fragment estimates at "
                  f"each of the {len(result.reports_per_position)} "
                  f"positions", note)
    self.assertIn(f"about {z:.1f} standard deviations up, at about "
                  f"{z * std:,.0f}", note)
    self.assertIn(f"about {needed:,.0f} holders among the n=30,500 users",
                  note)
    self.assertTrue(note.endswith("no word's fragments were kept at every "
                                  "position in this run"), note)
    # Fewer users than a word needs: none can be expected.
    # (std = sqrt(5 (c^2 - 1) / 4) = 8.96 at epsilon 0.5: 724 holders of
    # 100 at z = 4.04.)
    small = dataclasses.replace(result.params, n=100, epsilon_fragment=0.5)
    self.assertIn("about 724 holders among the n=100 users: more than "
                  "there are users", sfp.nothing_found(small, (5, 5)))

  def test_the_decode_cut_is_where_the_kept_estimates_end(self):
    # The T-th kept estimate of each position is about z std, and a word
    # is found with twice the holders the note names, not with 500.
    result = _sun_run(5, seed=2)
    _, z = sfp.decode_cut(result.params)
    sketch = cms_lib.CountMeanSketch.create(4.0, k=16, m=256)
    ratios = [tops[-1][2] / (z * math.sqrt(sketch.variance(n_l)))
              for tops, n_l in zip(result.fragment_tops,
                                   result.reports_per_position)]
    self.assertLen(result.fragment_tops[0], 5)
    self.assertBetween(float(np.mean(ratios)), 0.85, 1.25)
    needed, _ = sfp.holders_needed(result.params,
                                   result.reports_per_position)
    self.assertLess(needed, 700)
    for seed in range(3):
      self.assertNotIn("sun", _sun_run(5, seed=seed).words)
      self.assertIn("sun", _sun_run(14, seed=seed).words)  # 1,400 holders

  def test_a_run_that_finds_words_has_no_note(self):
    result = run_sfp(user_words(), seed=0, **NO_NOISE, **SMALL)
    self.assertTrue(result.words)
    self.assertEqual(result.notes, ())
