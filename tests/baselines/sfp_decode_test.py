"""Tests of SFP's server: fragment estimates, the decode, the stitching and
the word sketch's counts."""

import math
from unittest import mock

from absl.testing import parameterized
import numpy as np

from tests.baselines.sfp_helpers import collision_variance
from tests.baselines.sfp_helpers import NO_NOISE
from tests.baselines.sfp_helpers import POPULATION
from tests.baselines.sfp_helpers import run_sfp
from tests.baselines.sfp_helpers import SMALL
from tests.baselines.sfp_helpers import TOP
from triehh.baselines import sfp
from triehh.baselines import sfp_decode
from triehh.baselines import sfp_encoding
from triehh.core import memory
from triehh.core import population as population_lib


class DecodeTest(parameterized.TestCase):

  def test_top_tuples_largest_first_ties_by_low_index(self):
    estimates = np.array([[1.0, 3.0, 0.0], [3.0, 2.0, 3.0]])
    self.assertEqual(list(sfp_decode.top_tuples(estimates, 4)), [1, 3, 5, 4])
    self.assertEqual(list(sfp_decode.top_tuples(estimates, 2)), [1, 3])
    self.assertEqual(list(sfp_decode.top_tuples(estimates, 9)),
                     [1, 3, 5, 4, 0, 2])

  def test_word_sketch_counts_without_noise(self):
    # A whole-word sketch gives unbiased counts: only hash collisions
    # (variance (n - f) / (m - 1)) are left without noise.
    result = run_sfp(POPULATION, **NO_NOISE,
                     word_budget=0.5, seed=0, **SMALL)
    self.assertEqual(result.params.epsilon_word, math.inf)
    counts = dict(POPULATION.ground_truth())
    for word, f in TOP.items():
      sd = math.sqrt(collision_variance(counts, word))
      self.assertLess(abs(result.heavy_hitters[word] - f), 5 * sd, msg=word)

  def test_puzzle_hash_check_only_removes_candidates(self):
    plain = run_sfp(POPULATION, epsilon=2.0, seed=1, top_t=40,
                    **SMALL)
    checked = run_sfp(POPULATION, epsilon=2.0, seed=1,
                      top_t=40, check_puzzle_hash=True, **SMALL)
    self.assertContainsSubset(set(checked.heavy_hitters),
                              set(plain.heavy_hitters))
    for word in checked.heavy_hitters:
      self.assertEqual(checked.heavy_hitters[word], plain.heavy_hitters[word])

  def test_a_position_without_reports(self):
    # 5 users over 5 positions: some position gets no report for this seed,
    # and the run used to stitch junk words with count 0.0.
    with self.assertRaisesRegex(ValueError,
                                r"no user reported .* position.*too few"):
      run_sfp(["apple", "banana", "apple", "cherry", "apple"],
              epsilon=1.0, seed=0, k=64)


class HashedSumsTest(parameterized.TestCase):

  @parameterized.named_parameters(
      # Rows of up to 3000 reports: 16-bit partial sums over a few rows.
      ("16_bit_blocks", 3000, 1),
      ("16_bit_threads", 3000, 3),
      # A row of more than 2^15 reports: 32-bit sums.
      ("32_bit", 40000, 2),
  )
  def test_sums_over_rows_of_every_candidate(self, largest, num_threads):
    rng = np.random.default_rng(0)
    num_pos, k, m, nb, n1, n2 = 3, 40, 64, 5, 4, 6
    # Sketch sums are mostly -1 entries: a row of N reports sums to about
    # -0.9 N in every cell, so partial sums grow fast.
    counts = rng.integers(largest // 2, largest + 1, size=(num_pos, k))
    sums = (2 * rng.binomial(counts[:, :, None], 0.05, size=(num_pos, k, m))
            - counts[:, :, None]).astype(np.int32)
    bucket, first, second = (rng.integers(0, m, size=(k, d), dtype=np.uint16)
                             for d in (nb, n1, n2))
    got = sfp_decode.hashed_sums(sums, bucket, first, second, num_threads)
    cells = (bucket[:, :, None, None] ^ first[:, None, :, None]
             ^ second[:, None, None, :]).astype(np.intp)
    want = np.stack([np.take_along_axis(
        sums[l], cells.reshape(k, -1), axis=1).sum(axis=0, dtype=np.int64)
                     for l in range(num_pos)]).reshape(num_pos, nb, n1 * n2)
    self.assertEqual(got.dtype, np.int32)
    np.testing.assert_array_equal(got, want)


class StitchingOracleTest(parameterized.TestCase):
  """Noise-free runs whose result follows by hand from the algorithm."""

  # Words of 4 characters over {a, b}: 2 positions, fragments "ab", "ba".
  USERS = ["abba"] * 60 + ["baab"] * 40
  OPTIONS = dict(length=4, fragment_alphabet="ab", top_t=2, k=16, m=1024,
                 seed=0, **NO_NOISE)

  def test_one_bucket_stitches_every_combination(self):
    # With a single puzzle bucket, Q_0 = Q_2 = {ab, ba}: the Cartesian
    # product holds the two real words and the two crossings.
    result = run_sfp(self.USERS, num_buckets=1, **self.OPTIONS)
    self.assertEqual(set(result.heavy_hitters),
                     {"abba", "baab", "abab", "baba"})
    self.assertEqual(result.num_stitched, 4)

  def test_puzzle_hash_keeps_only_the_real_words(self):
    result = run_sfp(self.USERS, **self.OPTIONS)
    salt = sfp_encoding.salts(result.params.hash_seed)[0]
    buckets = sfp_encoding.puzzle_buckets(
        sfp_encoding.pad_words(["abba", "baab"], 4), 256, salt)
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
    result = run_sfp(["abba"] * 30, **self.OPTIONS)
    self.assertEqual(list(result.heavy_hitters), ["abba"])
    self.assertAlmostEqual(result.heavy_hitters["abba"], 30.0, places=9)


class PaperStitchingTest(parameterized.TestCase):
  """The paper authors' stitching next to the default, noise-free."""

  # Position 0 keeps bb (80 reports) and a$ (20); position 2 keeps ab (50)
  # and ba (30): the one bucket stitches bbab, bbba, a$ab and a$ba.
  USERS = ["bbab"] * 50 + ["bbba"] * 30 + ["a"] * 20
  OPTIONS = dict(length=4, fragment_alphabet="ab", top_t=2, k=16, m=1024,
                 num_buckets=1, seed=0, **NO_NOISE)

  def test_drop_stitching_drops_a_character_after_a_pad(self):
    result = run_sfp(self.USERS, **self.OPTIONS)
    self.assertEqual(set(result.heavy_hitters), {"bbab", "bbba"})
    self.assertEqual(result.params.stitching, "drop")

  def test_paper_stitching_keeps_the_part_before_the_first_pad(self):
    result = run_sfp(self.USERS, stitching="paper",
                     **self.OPTIONS)
    self.assertEqual(set(result.heavy_hitters), {"bbab", "bbba", "a"})
    self.assertEqual(result.num_stitched, 4)
    self.assertEqual(result.params.stitching, "paper")

  def test_unknown_stitching_is_refused(self):
    with self.assertRaisesRegex(ValueError, "stitching must be one of"):
      run_sfp(self.USERS, stitching="glue", **self.OPTIONS)


class DecodeMemoryTest(parameterized.TestCase):
  """A fragment alphabet whose decode would not fit is refused up front."""

  # 300 characters: 5 x 256 x 301^2 candidates of 12 bytes, about 1.3 GiB.
  CHARS = "".join(chr(0x4E00 + i) for i in range(300))

  def _population(self):
    words = [self.CHARS[i] + self.CHARS[(7 * i) % 300] for i in range(300)]
    return population_lib.Population.from_word_frequencies(
        words, [100] * 300, max_length=10, alphabet=self.CHARS)

  def test_decode_bytes_count_every_candidate_of_every_position(self):
    options = sfp._check_options(  # pylint: disable=protected-access
        self._population(), sfp.SFPTarget(
            4.0, top_t=20, length=10, num_buckets=256,
            fragment_alphabet="data", word_budget=0.0,
            check_puzzle_hash=False, max_candidates=10),
        simulation="sketch", chunk_size=1, num_threads=1)
    self.assertEqual(sfp_decode.decode_bytes(options), 5 * 256 * 301**2 * 12)

  def test_too_large_an_alphabet_is_refused_before_any_report(self):
    with mock.patch.object(memory, "available_bytes", return_value=2**30):
      with self.assertRaisesRegex(
          memory.InsufficientMemoryError,
          r"^SFP's decode over fragment_alphabet of 300 characters \(5 "
          r"positions x 256 buckets x 301\^2 fragments\) would need about "
          r"1\.3 GiB of memory, more than the 1\.0 GiB available; use a "
          r"fragment_alphabet of at most 263 characters \(besides the "
          r"padding\), or length <= 6 \(now 10\)$"):
        sfp.check(self._population(),
                  sfp.SFPTarget(4.0, fragment_alphabet="data"))
      # The letters alone fit: the same population is checked, not run.
      self.assertIsNone(sfp.check(
          self._population(), sfp.SFPTarget(4.0, fragment_alphabet="ab")))
    with mock.patch.object(memory, "available_bytes", return_value=2**31):
      self.assertIsNone(sfp.check(
          self._population(), sfp.SFPTarget(4.0, fragment_alphabet="data")))


class SketchesMemoryTest(parameterized.TestCase):
  """Sketches of every fragment position that would not fit are refused
  before any report is drawn."""

  def test_sketches_bytes_count_every_position(self):
    one = sfp_decode.sketches_bytes(2048, 1024, 2)
    self.assertEqual(sfp_decode.sketches_bytes(2048, 1024, 1000) - one,
                     499 * 2048 * 1024 * sfp_decode.SKETCH_BYTES_PER_CELL)

  def test_a_long_length_is_refused_naming_k_and_length(self):
    # 500 positions of the default 2048 x 1024 cells: about 11.8 GiB; one
    # sketch alone fits in 2 GiB.
    words = ["ab", "cd"] * 300
    with mock.patch.object(memory, "available_bytes", return_value=2**31):
      with self.assertRaisesRegex(
          memory.InsufficientMemoryError,
          r"^SFP's 500 fragment sketches \(length=1,000 / 2 positions\) of "
          r"k=2,048 x m=1,024 cells would need about 11\.8 GiB of memory, "
          r"more than the 2\.0 GiB available; use k <= 347 at "
          r"length=1,000, or length <= 164 at k=2,048, or a smaller m$"):
        run_sfp(words, epsilon=4.0, length=1000)
      population = population_lib.as_population(words, 10)
      # check makes the run's sketch check, at the default k (2048) too.
      for target in (sfp.SFPTarget(4.0, length=1000, k=2048),
                     sfp.SFPTarget(4.0, length=1000)):
        with self.assertRaisesRegex(memory.InsufficientMemoryError,
                                    "500 fragment sketches"):
          sfp.check(population, target)
      self.assertIsNone(sfp.check(population,
                                  sfp.SFPTarget(4.0, length=1000, k=256)))
