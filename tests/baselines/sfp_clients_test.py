"""Tests of SFP's clients: the word each user reports, the words outside
the fragment alphabet, and the reports' sketches and noise, the same draws
as the generator's and the Count Mean Sketch's."""

import math
from unittest import mock

from absl.testing import parameterized
import numpy as np

import triehh
from tests.baselines.sfp_helpers import collision_variance
from tests.baselines.sfp_helpers import NO_NOISE
from tests.baselines.sfp_helpers import run_sfp
from tests.baselines.sfp_helpers import singletons
from tests.baselines.sfp_helpers import SMALL
from tests.baselines.sfp_helpers import user_words
from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import sfp_clients
from triehh.baselines import sfp_encoding


class ReportedWordTest(parameterized.TestCase):

  def test_several_words_per_user_report_one_by_local_frequency(self):
    users = [{"alpha": 3, "beta": 1}] * 2000 + [{w: 1} for w in singletons(500)]
    result = run_sfp(users, **NO_NOISE, seed=3,
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
    a = run_sfp(listed, seed=5, **options)
    b = run_sfp(counted, seed=5, **options)
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
    default = run_sfp(users, **NO_NOISE, seed=0,
                      **SMALL)
    self.assertIn("internatio", default.heavy_hitters)  # the first 10
    self.assertNotIn("don't", default.heavy_hitters)  # ' is not in Omega
    self.assertEqual(default.params.num_outside_alphabet, 800)
    self.assertEqual(default.params.outside_characters, "'")
    public = triehh.Population.from_user_words(  # the words' characters
        users, alphabet="".join(sorted(set("".join(users)))))
    extended = run_sfp(public, **NO_NOISE, seed=0,
                       fragment_alphabet="data", **SMALL)
    self.assertIn("don't", extended.heavy_hitters)
    self.assertIn("'", extended.params.fragment_alphabet)
    self.assertEqual(extended.params.num_outside_alphabet, 0)

  def test_no_word_in_the_fragment_alphabet(self):
    with self.assertRaisesRegex(ValueError,
                                "outside the fragment alphabet.*'\\xe9'|"
                                "outside the fragment alphabet.*'é"):
      run_sfp(["été", "café"] * 100, epsilon=4.0, k=16)

  def test_words_outside_the_alphabet_are_counted(self):
    users = ["café"] * 300 + ["tea"] * 200 + ["naïve"] * 100
    result = run_sfp(users, seed=0, k=16, **NO_NOISE)
    self.assertEqual(result.params.num_outside_alphabet, 400)
    self.assertEqual(result.params.outside_characters, "éï")
    self.assertEqual(list(result.heavy_hitters), ["tea"])

  def test_paper_alphabet_rebuilds_apostrophes_and_slashes(self):
    users = ["i'm"] * 60 + ["b/c"] * 40
    options = dict(length=4, top_t=2, k=16, m=1024, seed=0, **NO_NOISE)
    with self.assertRaisesRegex(ValueError, "outside the fragment alphabet"):
      run_sfp(users, **options)  # a-z: neither can be rebuilt
    paper = run_sfp(users, fragment_alphabet="paper", **options)
    self.assertEqual(paper.params.fragment_alphabet,
                     "abcdefghijklmnopqrstuvwxyz.#/'")
    self.assertEqual(paper.params.num_outside_alphabet, 0)
    self.assertEqual(set(paper.heavy_hitters), {"i'm", "b/c"})



def inversion_draw(n, p, u):
  """The generator's inversion draw of Bin(n, p) from U = u 2^-53: the
  running pmf terms subtracted from U in turn; None past its bound."""
  q = 1.0 - p
  term = math.exp(n * math.log(q))
  bound = int(min(float(n), n * p + 10.0 * math.sqrt(n * p * q + 1)))
  rest, x = u * 2.0**-53, 0
  while rest > term:
    x += 1
    if x > bound:
      return None
    rest -= term
    term = (n - x + 1) * p * term / (x * q)
  return x


class BinomialTest(parameterized.TestCase):
  """The noise's binomial draws are the generator's own."""

  @parameterized.named_parameters(
      ("looked_up", lambda r: r.integers(100, 600, size=(40, 256)), 0.047,
       True),
      ("zeros_between", lambda r: np.where(
          r.random(20000) < 0.3, 0, r.integers(1, 200, size=20000)), 0.1,
       True),
      # Counts above 214 are drawn by rejection, in runs of 100.
      ("rejection_runs", lambda r: np.repeat(r.integers(150, 260, 300), 100),
       0.14, True),
      ("rejection_only", lambda r: r.integers(200, 900, size=5000), 0.3,
       False),
      ("half", lambda r: r.integers(0, 61, size=(50, 100)), 0.5, True),
      ("small_counts", lambda r: r.integers(0, 4, size=5000), 0.2, False),
  )
  def test_same_draws_and_state_as_the_generator(self, make_counts, p,
                                                 looks_up):
    counts = make_counts(np.random.default_rng(0))
    ours, theirs = np.random.default_rng(11), np.random.default_rng(11)
    self.assertTrue(sfp_clients._lookup_is_exact())  # checked (and cached)
    with mock.patch.object(sfp_clients, "_inversion_draws",
                           wraps=sfp_clients._inversion_draws) as lookup:
      got = sfp_clients.binomial(ours, counts, p)
    want = theirs.binomial(counts, p)
    self.assertEqual(lookup.called, looks_up)
    self.assertEqual(got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    self.assertEqual(ours.bit_generator.state, theirs.bit_generator.state)

  def test_a_redraw_lets_the_generator_draw_everything(self):
    counts = np.random.default_rng(0).integers(100, 600, size=5000)
    ours, theirs = np.random.default_rng(3), np.random.default_rng(3)
    with mock.patch.object(sfp_clients, "_inversion_draws",
                           return_value=None):
      got = sfp_clients.binomial(ours, counts, 0.047)
    np.testing.assert_array_equal(got, theirs.binomial(counts, 0.047))
    self.assertEqual(ours.bit_generator.state, theirs.bit_generator.state)

  def test_a_numpy_drawing_otherwise_turns_the_lookup_off(self):
    looked_up = sfp_clients._inversion_draws
    counts = np.random.default_rng(0).integers(100, 600, size=5000)
    ours, theirs = np.random.default_rng(3), np.random.default_rng(3)
    sfp_clients._lookup_is_exact.cache_clear()
    try:
      with mock.patch.object(sfp_clients, "_inversion_draws",
                             side_effect=lambda *a: looked_up(*a) + 1):
        self.assertFalse(sfp_clients._lookup_is_exact())
        got = sfp_clients.binomial(ours, counts, 0.047)
    finally:
      sfp_clients._lookup_is_exact.cache_clear()
    np.testing.assert_array_equal(got, theirs.binomial(counts, 0.047))
    self.assertTrue(sfp_clients._lookup_is_exact())

  @parameterized.parameters((1, 0.3), (7, 0.047), (629, 0.0476642),
                            (150, 0.2), (60, 0.5))
  def test_steps_are_exact(self, n, p):
    # The draw from u is the number of steps below u: u = step stops at or
    # before x, u = step + 1 goes past x.
    steps = sfp_clients._steps(np.array([n]), p)[0]
    steps = steps[steps < 2**53]
    self.assertGreater(steps.size, 1)
    for x, step in enumerate(steps.tolist()):
      self.assertLessEqual(inversion_draw(n, p, step), x)
      if step + 1 < 2**53:
        after = inversion_draw(n, p, step + 1)
        self.assertTrue(after is None or after > x, msg=(x, step, after))


class SketchTest(parameterized.TestCase):
  """The clients' sketches are the Count Mean Sketch's own."""

  @parameterized.named_parameters(
      ("fragments_looked_up", "fragments", 6.0),
      ("fragments_rejection", "fragments", 2.0),
      ("words", "words", 6.0),
      ("no_noise", "fragments", math.inf),
  )
  def test_encode_and_aggregate_are_collect(self, kind, epsilon):
    vocabulary = singletons(300)
    padded = sfp_encoding.pad_words(vocabulary, 10)
    if kind == "fragments":
      keys = sfp_encoding.fragment_keys(
          padded, sfp_encoding.puzzle_buckets(padded, 256, b"s" * 16))[:, 2]
    else:
      keys = cms_lib.digest_keys(list(padded))
    cms = cms_lib.CountMeanSketch.create(epsilon, k=64, m=1024,
                                         key_bytes=keys.shape[1], seed=3)
    reporters = np.random.default_rng(1).integers(0, 300, size=20000)
    ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
    rows, cells = sfp_clients.encode(cms, keys, reporters, ours)
    got = sfp_clients.aggregate(cms, rows, cells, ours)
    want = cms.collect(keys[reporters], theirs)
    np.testing.assert_array_equal(got.row_counts, want.row_counts)
    np.testing.assert_array_equal(got.sums, want.sums)
    self.assertEqual(got.sums.dtype, want.sums.dtype)
    self.assertEqual(ours.bit_generator.state, theirs.bit_generator.state)


def test_reports_beyond_memory_are_refused_before_they_are_built(monkeypatch):
  # 10^10 users ended in numpy's "Unable to allocate 74.5 GiB".
  import pytest  # pylint: disable=g-import-not-at-top
  from triehh.baselines import sfp_clients  # pylint: disable=g-import-not-at-top
  from triehh.core import memory  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(memory, "available_bytes", lambda: 10**6)
  pop = triehh.Population.from_word_frequencies(["sun", "moon"],
                                                [10**9, 10**9])
  with pytest.raises(MemoryError, match=r"SFP's reports of n=2,000,000,000 "
                     r"users would need about 89\.4 GiB"):
    sfp_clients.client_reports(pop, None, None, None, b"", None)
