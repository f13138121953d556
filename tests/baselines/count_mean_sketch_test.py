"""Tests of the Count Mean Sketch: unbiasedness, variance, both simulations."""

import decimal
import math
from unittest import mock

from absl.testing import parameterized
import numpy as np
from scipy import stats

from triehh.baselines import count_mean_sketch as cms_lib
from triehh.core import memory

K, M = 64, 128
EPS = 2.0
# Item 0, 1, 2 held by 300, 150, 50 users; 500 users hold distinct items.
COUNTS = (300, 150, 50)
NUM_SINGLETONS = 500
N = sum(COUNTS) + NUM_SINGLETONS
Z = 4.5  # two-sided z bound per check


def item_keys():
  """``uint8 [N, 8]`` keys of the users' items and the queried keys."""
  items = np.repeat(np.arange(len(COUNTS)), COUNTS)
  items = np.concatenate([items, len(COUNTS) + np.arange(NUM_SINGLETONS)])
  keys = items.astype(">u8").view(np.uint8).reshape(-1, 8)
  absent = np.array([10**6], dtype=">u8").view(np.uint8).reshape(-1, 8)
  queries = np.concatenate([keys[np.cumsum((0,) + COUNTS[:-1])], absent])
  truth = np.array(COUNTS + (0,), dtype=float)
  return keys, queries, truth


def conditional_moments(cms, keys, query):
  """Exact mean and variance of ``f~(query)`` given the hash family.

  A user's coordinate ``h_J(query)`` holds ``+1`` before noise with
  probability ``p`` = share of rows where its item and ``query`` collide;
  then ``E v~ = (2p - 1)/c`` and ``Var v~ = 1 - ((2p - 1)/c)^2``.
  """
  rows_q = cms.hashes.all_rows(query[None, :])[:, 0]
  rows_u = cms.hashes.all_rows(keys)
  p = (rows_u == rows_q[:, None]).mean(axis=0)
  c = cms.c_epsilon
  mean_v = (2 * p - 1) / c
  a_mean = (c / 2 * mean_v + 0.5).sum()
  a_var = (c**2 / 4 * (1 - mean_v**2)).sum()
  m = cms.m
  return (m / (m - 1) * (a_mean - keys.shape[0] / m),
          (m / (m - 1))**2 * a_var)


class HashFamilyTest(parameterized.TestCase):

  def test_seeded_and_in_range(self):
    a = cms_lib.HashFamily.from_seed(16, 64, 3, seed=7)
    b = cms_lib.HashFamily.from_seed(16, 64, 3, seed=7)
    c = cms_lib.HashFamily.from_seed(16, 64, 3, seed=8)
    np.testing.assert_array_equal(a.tables, b.tables)
    self.assertFalse(np.array_equal(a.tables, c.tables))
    keys = np.random.default_rng(0).integers(0, 256, (100, 3), dtype=np.uint8)
    h = a.all_rows(keys)
    self.assertEqual(h.shape, (16, 100))
    self.assertTrue((h < 64).all())

  def test_rows_partial_and_all_rows_agree(self):
    fam = cms_lib.HashFamily.from_seed(32, 256, 5, seed=1)
    keys = np.random.default_rng(1).integers(0, 256, (40, 5), dtype=np.uint8)
    full = fam.all_rows(keys)
    parts = fam.partial([0, 3], keys[:, [0, 3]]) ^ fam.partial(
        [1, 2, 4], keys[:, [1, 2, 4]])
    np.testing.assert_array_equal(full, parts)
    rows = np.arange(40) % 32
    np.testing.assert_array_equal(fam(keys, rows), full[rows, np.arange(40)])

  def test_pairwise_collision_rate_is_one_over_m(self):
    # Distinct keys collide in a row with probability 1/m.
    fam = cms_lib.HashFamily.from_seed(4096, 16, 2, seed=3)
    keys = np.array([[1, 2], [1, 3], [9, 2]], dtype=np.uint8)
    h = fam.all_rows(keys)
    for a, b in ((0, 1), (0, 2), (1, 2)):
      hits = int((h[:, a] == h[:, b]).sum())
      lo, hi = stats.binom.interval(1 - 1e-6, 4096, 1 / 16)
      self.assertBetween(hits, lo, hi)

  def test_bad_widths(self):
    with self.assertRaisesRegex(ValueError, "power of two"):
      cms_lib.HashFamily.from_seed(8, 1000, 2, seed=0)
    with self.assertRaisesRegex(ValueError, "k .* must be >= 1"):
      cms_lib.HashFamily.from_seed(0, 1024, 2, seed=0)
    fam = cms_lib.HashFamily.from_seed(8, 16, 2, seed=0)
    with self.assertRaisesRegex(TypeError, "uint8"):
      fam.all_rows(np.zeros((3, 2), dtype=np.int64))
    with self.assertRaisesRegex(ValueError, "3 bytes"):
      fam.all_rows(np.zeros((3, 3), dtype=np.uint8))


class ClientTest(parameterized.TestCase):

  def test_reports_are_plus_minus_one_and_flip_at_rate_q(self):
    cms = cms_lib.CountMeanSketch.create(EPS, k=K, m=M, seed=0)
    keys, _, _ = item_keys()
    reports = cms.encode(keys, np.random.default_rng(0))
    self.assertEqual(reports.vectors.shape, (N, M))
    self.assertTrue(np.isin(reports.vectors, (-1, 1)).all())
    clean = np.full((N, M), -1, dtype=np.int8)
    clean[np.arange(N), cms.hashes(keys, reports.rows)] = 1
    flips = int((reports.vectors != clean).sum())
    q = 1 / (math.exp(EPS / 2) + 1)
    self.assertAlmostEqual(cms.flip_probability, q)
    lo, hi = stats.binom.interval(1 - 1e-6, N * M, q)
    self.assertBetween(flips, lo, hi)

  @parameterized.parameters(1e3, 1419.6, 1e6)
  def test_huge_epsilon_gives_the_flip_rate_without_overflow(self, eps):
    # e^{eps/2} overflows a float from eps = 1419.57 on; decimal does not.
    expected = float(1 / (decimal.Decimal(eps / 2).exp() + 1))
    self.assertAlmostEqual(cms_lib.flip_probability(eps), expected,
                           delta=expected * 1e-9)
    self.assertEqual(cms_lib.c_epsilon(eps), 1.0)

  def test_no_noise_report_is_the_hashed_indicator(self):
    cms = cms_lib.CountMeanSketch.create(math.inf, k=K, m=M, seed=0)
    keys, _, _ = item_keys()
    reports = cms.encode(keys, np.random.default_rng(5))
    plus = np.argwhere(reports.vectors == 1)
    np.testing.assert_array_equal(plus[:, 0], np.arange(N))
    np.testing.assert_array_equal(plus[:, 1], cms.hashes(keys, reports.rows))

  @parameterized.parameters(1, 7, 10_000)
  def test_chunked_reports_equal_encode_then_aggregate(self, chunk_size):
    cms = cms_lib.CountMeanSketch.create(EPS, k=K, m=M, seed=0)
    keys, _, _ = item_keys()
    direct = cms.aggregate(cms.encode(keys, np.random.default_rng(3)))
    streamed = cms.collect(keys, np.random.default_rng(3),
                           simulation="reports", chunk_size=chunk_size)
    np.testing.assert_array_equal(direct.sums, streamed.sums)
    np.testing.assert_array_equal(direct.row_counts, streamed.row_counts)
    self.assertEqual(streamed.num_reports, N)

  def test_both_simulations_agree_without_noise(self):
    cms = cms_lib.CountMeanSketch.create(math.inf, k=K, m=M, seed=0)
    keys, _, _ = item_keys()
    a = cms.collect(keys, np.random.default_rng(9), simulation="sketch")
    b = cms.collect(keys, np.random.default_rng(9), simulation="reports")
    np.testing.assert_array_equal(a.sums, b.sums)
    # Every report adds +1 at its cell and -1 elsewhere.
    np.testing.assert_array_equal(a.sums.sum(axis=1),
                                  a.row_counts * (2 - M))

  def test_sketch_matrix_matches_the_appendix(self):
    cms = cms_lib.CountMeanSketch.create(EPS, k=K, m=M, seed=0)
    keys, _, _ = item_keys()
    reports = cms.encode(keys[:20], np.random.default_rng(4))
    matrix = np.zeros((K, M))
    c = cms.c_epsilon
    for j, v in zip(reports.rows, reports.vectors):
      matrix[j] += K * (c / 2 * v + 0.5)
    np.testing.assert_allclose(cms.aggregate(reports).matrix(EPS), matrix)


class FrequencyOracleTest(parameterized.TestCase):

  def test_unbiased_over_seeded_runs(self):
    # Hash family and noise redrawn every run: the mean estimate is within
    # sampling error (from the CMS variance formula) of the truth.
    keys, queries, truth = item_keys()
    runs = 300
    est = np.empty((runs, len(truth)))
    for r in range(runs):
      cms = cms_lib.CountMeanSketch.create(EPS, k=K, m=M, seed=[r, 1])
      sketch = cms.collect(keys, np.random.default_rng([r, 2]))
      est[r] = cms.estimate(sketch, queries)
    pairs = sum(f * (f - 1) for f in COUNTS)
    for i, f in enumerate(truth):
      var = cms.variance(N, f, other_pairs=pairs - f * max(f - 1, 0))
      se = math.sqrt(var / runs)
      self.assertLess(abs(est[:, i].mean() - f), Z * se, msg=f"item {i}")
      # The spread over runs is the formula's (chi-square bounds).
      ratio = (runs - 1) * est[:, i].var(ddof=1) / var
      self.assertBetween(ratio, *stats.chi2.interval(1 - 1e-5, runs - 1))

  @parameterized.parameters("sketch", "reports")
  def test_moments_given_the_hash_family(self, simulation):
    # Fixed hash family: mean and variance of f~ over the noise match their
    # exact values, and the variance matches the CMS formula.
    keys, queries, truth = item_keys()
    cms = cms_lib.CountMeanSketch.create(EPS, k=K, m=M, seed=11)
    runs = 400 if simulation == "sketch" else 150
    est = np.empty((runs, len(truth)))
    for r in range(runs):
      sketch = cms.collect(keys, np.random.default_rng(r),
                           simulation=simulation)
      est[r] = cms.estimate(sketch, queries)
    chi_lo, chi_hi = stats.chi2.interval(1 - 1e-5, runs - 1)
    for i, f in enumerate(truth):
      mean, var = conditional_moments(cms, keys, queries[i])
      self.assertLess(abs(est[:, i].mean() - mean),
                      Z * math.sqrt(var / runs), msg=f"item {i}")
      ratio = (runs - 1) * est[:, i].var(ddof=1) / var
      self.assertBetween(ratio, chi_lo, chi_hi, msg=f"item {i}")
      # The formula averages the collisions over hash families.
      self.assertAlmostEqual(var / cms.variance(N, f), 1.0, delta=0.03)

  def test_variance_formula_terms(self):
    cms = cms_lib.CountMeanSketch.create(EPS, k=K, m=M, seed=0)
    c = (math.exp(EPS / 2) + 1) / (math.exp(EPS / 2) - 1)
    self.assertAlmostEqual(cms.c_epsilon, c)
    expected = (M / (M - 1))**2 * N * (c**2 - 1) / 4 + (N - 300) / (M - 1)
    self.assertAlmostEqual(cms.variance(N, 300), expected)
    self.assertAlmostEqual(cms.variance(N, 300, other_pairs=150 * 149),
                           expected + 150 * 149 / (K * (M - 1)))
    exact = cms_lib.CountMeanSketch.create(math.inf, k=K, m=M, seed=0)
    self.assertAlmostEqual(exact.variance(N, 300), (N - 300) / (M - 1))

  def test_collisions_of_a_repeated_item_vary_with_the_family(self):
    # Without noise, only collisions are left; for a query colliding with a
    # heavy item, the family-to-family spread is the third term.
    heavy, n_light = 4000, 200
    keys = np.concatenate([np.zeros(heavy, ">u8"),
                           1 + np.arange(n_light, dtype=">u8")])
    keys = keys.view(np.uint8).reshape(-1, 8)
    query = np.array([10**6], dtype=">u8").view(np.uint8).reshape(1, 8)
    runs = 300
    est = np.empty(runs)
    for r in range(runs):
      cms = cms_lib.CountMeanSketch.create(math.inf, k=K, m=M, seed=[r, 3])
      est[r] = cms.estimate(cms.collect(keys, np.random.default_rng(r)),
                            query)[0]
    n = heavy + n_light
    var = cms.variance(n, 0, other_pairs=heavy * (heavy - 1))
    self.assertGreater(var, 5 * cms.variance(n, 0))  # the third term dominates
    self.assertLess(abs(est.mean()), Z * math.sqrt(var / runs))
    ratio = (runs - 1) * est.var(ddof=1) / var
    self.assertBetween(ratio, *stats.chi2.interval(1 - 1e-5, runs - 1))

  def test_no_noise_estimates_count_plus_collisions(self):
    keys, queries, truth = item_keys()
    cms = cms_lib.CountMeanSketch.create(math.inf, k=2048, m=1024, seed=0)
    sketch = cms.collect(keys, np.random.default_rng(0))
    est = cms.estimate(sketch, queries)
    sd = math.sqrt(cms.variance(N, 0))
    np.testing.assert_array_less(np.abs(est - truth), 5 * sd)

  def test_bad_parameters(self):
    for eps in (0.0, -1.0, math.nan):
      with self.assertRaisesRegex(ValueError, "local epsilon must be > 0"):
        cms_lib.CountMeanSketch.create(eps, k=K, m=M)
    cms = cms_lib.CountMeanSketch.create(EPS, k=K, m=M, seed=0)
    keys, _, _ = item_keys()
    with self.assertRaisesRegex(ValueError, "simulation must be one of"):
      cms.collect(keys, np.random.default_rng(0), simulation="dense")
    other = cms_lib.CountMeanSketch.create(EPS, k=K, m=2 * M, seed=0)
    sketch = other.collect(keys, np.random.default_rng(0))
    with self.assertRaisesRegex(ValueError, "the sketch is"):
      cms.estimate(sketch, keys[:2])


class MemoryTest(parameterized.TestCase):
  """Sketch sizes that would not fit are refused before anything is drawn."""

  def setUp(self):
    super().setUp()
    self.available = 2**20  # 1 MiB
    self.enter_context(mock.patch.object(memory, "available_bytes",
                                         lambda: self.available))

  def test_create_refuses_before_drawing_the_tables(self):
    with mock.patch.object(np.random, "default_rng",
                           side_effect=AssertionError("drawn")):
      with self.assertRaises(memory.InsufficientMemoryError) as err:
        cms_lib.CountMeanSketch.create(2.0, k=4096, m=1024, key_bytes=7)
    # Tables 7 * 4096 * 512 bytes, collection 32 bytes per cell.
    self.assertEqual(str(err.exception), (
        "a sketch of k=4,096 hash functions and m=1,024 cells (4,194,304 "
        "cells, 7-byte keys) would need about 142.0 MiB of memory, more than "
        "the 1.0 MiB available; use k <= 28 at m=1,024, or a smaller m (the "
        "default is k=2048, m=1024)"))

  def test_the_k_said_to_fit_fits(self):
    cms_lib.CountMeanSketch.create(2.0, k=28, m=1024, key_bytes=7)
    with self.assertRaises(memory.InsufficientMemoryError):
      cms_lib.CountMeanSketch.create(2.0, k=29, m=1024, key_bytes=7)

  def test_hash_tables_alone(self):
    with self.assertRaisesRegex(
        memory.InsufficientMemoryError,
        r"^k=100,000 hash functions on 8-byte keys .* would need about 390.6 "
        r"MiB of memory.*; use k <= 256$"):
      cms_lib.HashFamily.from_seed(100_000, 1024, 8, seed=0)

  def test_collect_refuses_what_does_not_fit(self):
    cms = cms_lib.CountMeanSketch.create(2.0, k=16, m=1024, seed=0)
    self.available = 100_000
    keys = np.zeros((10, 8), dtype=np.uint8)
    with self.assertRaisesRegex(memory.InsufficientMemoryError,
                                "collecting 10 reports into k=16 x m=1,024"):
      cms.collect(keys, np.random.default_rng(0))

  def test_estimate_hashes_fewer_keys_at_a_time_to_fit(self):
    cms = cms_lib.CountMeanSketch.create(2.0, k=64, m=128, seed=0)
    keys = np.random.default_rng(1).integers(0, 256, (500, 8), np.uint8)
    sketch = cms.collect(keys, np.random.default_rng(2))
    expected = cms.estimate(sketch, keys)
    self.available = 64 * cms_lib.ESTIMATE_BYTES_PER_HASH * 100
    chunks = []
    all_rows = cms.hashes.all_rows
    with mock.patch.object(type(cms.hashes), "all_rows",
                           lambda self, k: chunks.append(len(k))
                           or all_rows(k)):
      got = cms.estimate(sketch, keys)
    self.assertEqual(chunks, [100] * 5)
    np.testing.assert_array_equal(got, expected)




class WidthTest(parameterized.TestCase):

  @parameterized.parameters(
      (1000, "must be a power of two for tabulation hashing, got 1000; the "
       "nearest are 512 and 1024"),
      (1, "must be in \\[2, 65536\\], got 1"))
  def test_the_width_names_itself_and_the_nearest_powers(self, m, message):
    with self.assertRaisesRegex(ValueError, message):
      cms_lib.check_width(m)
    with self.assertRaisesRegex(ValueError, "--cms_m"):
      cms_lib.check_width(m, "--cms_m")
