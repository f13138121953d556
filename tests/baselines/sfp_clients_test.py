"""Tests of SFP's clients: the word each user reports, and the words outside
the fragment alphabet."""

import math

from absl.testing import parameterized
import numpy as np

import triehh
from tests.baselines.sfp_helpers import collision_variance
from tests.baselines.sfp_helpers import NO_NOISE
from tests.baselines.sfp_helpers import singletons
from tests.baselines.sfp_helpers import SMALL
from tests.baselines.sfp_helpers import user_words
from triehh.baselines import sfp_clients


class ReportedWordTest(parameterized.TestCase):

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

  def test_one_word_users_report_their_word_without_drawing(self):
    listed = triehh.Population.from_user_words(["abba", "baab", "abba"])
    rng = np.random.default_rng(0)
    words = sfp_clients.reported_words(listed, rng)
    self.assertEqual([listed.vocabulary[w] for w in words],
                     ["abba", "baab", "abba"])
    counted = triehh.Population.from_word_frequencies(["abba", "baab"],
                                                      [2, 1])
    words = sfp_clients.reported_words(counted, rng)
    self.assertEqual(sorted(counted.vocabulary[w] for w in words),
                     ["abba", "abba", "baab"])
    # Neither draws from the generator.
    self.assertEqual(rng.integers(2**62),
                     np.random.default_rng(0).integers(2**62))


class FragmentAlphabetTest(parameterized.TestCase):
  """Words with characters outside Omega report but cannot be rebuilt."""

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

