"""Tests of Proposition 2's worst-case discovery rate."""

from fractions import Fraction
import math

from absl.testing import parameterized
import pytest
import numpy as np
from scipy import stats

from triehh.theory import privacy
from triehh.theory import utility
import triehh


def exact_level_rate(w, n, m, theta):
  total = sum(math.comb(w, i) * math.comb(n - w, m - i)
              for i in range(theta, min(w, m) + 1))
  return Fraction(total, math.comb(n, m))


def tails(w, n, m, theta):
  """(P(X < theta), P(X >= theta)) for X ~ Hypergeometric, without scipy.

  P(X = 0) = prod_j (1 - m / (n - j)) is summed in log space, then each term
  follows by the exact ratio P(X = i) / P(X = i - 1) =
  (w-i+1)(m-i+1) / (i (n-w-m+i)).
  """
  log_p0 = math.fsum(math.log1p(-m / (n - j)) for j in range(w))
  assert log_p0 > -700, "P(X = 0) would underflow"
  term, lower, upper = math.exp(log_p0), [], []
  for i in range(min(w, m) + 1):
    if i:
      term *= (w - i + 1) * (m - i + 1) / (i * (n - w - m + i))
    (lower if i < theta else upper).append(term)
  return math.fsum(lower), math.fsum(upper)


class DiscoveryRateTest(parameterized.TestCase):

  def test_independent_tail_matches_exact_sum(self):
    _, got = tails(30, 100, 20, 4)
    exact = exact_level_rate(30, 100, 20, 4)
    self.assertAlmostEqual(got / float(exact), 1.0, places=12)

  @parameterized.parameters((100, 30, 20, 4), (500, 7, 100, 2),
                            (1000, 200, 50, 15), (60, 60, 60, 10))
  def test_matches_exact_rational_sum(self, n, w, m, theta):
    for length in (1, 4, 11):
      expected = float(exact_level_rate(w, n, m, theta) ** length)
      got = utility.discovery_rate(w, n, m, theta, length)
      self.assertAlmostEqual(got, expected, delta=1e-12 + 1e-9 * expected)

  @parameterized.parameters(10**6, 10**7, 10**8)
  def test_large_populations(self, n):
    cal = privacy.calibrate(n, 10, 4.0, 1.0 / n**2)
    # Holders expected in a batch: theta / 2, theta, 2 theta.
    counts = np.array([round(k * cal.theta * n / cal.batch_size)
                       for k in (0.5, 1.0, 2.0)])
    rates = utility.level_rate(counts, n, cal.batch_size, cal.theta)
    for c, r in zip(counts, rates):
      lower, upper = tails(int(c), n, cal.batch_size, cal.theta)
      self.assertTrue(np.isfinite(r))
      self.assertAlmostEqual(lower + upper, 1.0, places=10)
      self.assertAlmostEqual(r / upper, 1.0, places=8)
    self.assertTrue(np.all(np.diff(rates) > 0))  # more holders, better odds

  def test_exact_at_a_million_users(self):
    n = 10**6
    cal = privacy.calibrate(n, 10, 4.0, 1.0 / n**2)
    m, theta = cal.batch_size, cal.theta
    total = math.comb(n, m)
    for w in (100, 2000):
      below = sum(math.comb(w, i) * math.comb(n - w, m - i)
                  for i in range(theta))
      exact = Fraction(total - below, total)
      got = utility.level_rate(w, n, m, theta)
      self.assertAlmostEqual(float(got / exact), 1.0, places=10)

  def test_vectorised(self):
    counts = np.arange(0, 200, 7)
    rates = utility.discovery_rate(counts, 1000, 100, 5, 10)
    self.assertEqual(rates.shape, counts.shape)
    self.assertEqual(rates[0], 0.0)
    self.assertTrue(np.all(np.diff(rates) >= 0))

  def test_bad_arguments(self):
    with self.assertRaises(ValueError):
      utility.discovery_rate(5, 100, 200, 2, 10)
    with self.assertRaises(ValueError):
      utility.discovery_rate(101, 100, 10, 2, 10)
    with self.assertRaises(ValueError):
      utility.discovery_rate(5, 100, 10, 0, 10)


def discover_params(frequency, n, epsilon, max_length=10):
  """The parameters discover runs for ``n`` users, a share ``frequency`` of
  whom hold a word of ``max_length`` characters sharing no prefix, with the
  paper's fixed-size batch (Proposition 2's and min_population's sampling)."""
  holders = math.floor(frequency * n)
  word = "abcdefghijklmnopqrstuvwxyz"[:max_length]
  pop = triehh.Population.from_user_words(
      [word] * holders + ["z"] * (n - holders), max_length=max_length)
  result = triehh.discover(pop, triehh.Target(epsilon, sampling="fixed"),
                           max_length=max_length)
  return pop, word, holders, result.params


class MinPopulationTest(parameterized.TestCase):

  @parameterized.parameters((1e-3, 4.0), (1e-2, 1.0), (2e-3, 2.0))
  def test_is_the_threshold(self, frequency, epsilon):
    n = utility.min_population(frequency, epsilon, num_levels=10)
    def rate(k):
      cal = privacy.calibrate(k, 10, epsilon, 1.0 / k**2)
      return utility.discovery_rate(math.floor(frequency * k), k,
                                    cal.batch_size, cal.theta, 10)
    self.assertGreaterEqual(rate(n), 0.9)
    try:
      below = rate(n - 1)
    except ValueError:
      below = 0.0  # too small for Corollary 1
    self.assertLess(below, 0.9)

  @parameterized.parameters((1e-2, 4.0, 10), (1e-2, 2.0, 10), (3e-2, 4.0, 5))
  def test_agrees_with_what_discover_runs(self, frequency, epsilon, length):
    # The oracle: Proposition 2 with the theta, batch size and number of
    # levels that discover itself reports for that population.
    levels = length + 1  # characters + the end symbol
    kwargs = {} if length == 10 else {"num_levels": levels}
    n = utility.min_population(frequency, epsilon, **kwargs)
    _, _, holders, p = discover_params(frequency, n, epsilon, length)
    self.assertEqual(p.levels, levels)
    self.assertGreaterEqual(utility.discovery_rate(
        holders, n, p.batch_size, p.theta, p.levels), 0.9)
    _, _, holders, p = discover_params(frequency, n - 1, epsilon, length)
    self.assertLess(utility.discovery_rate(
        holders, n - 1, p.batch_size, p.theta, p.levels), 0.9)

  def test_counting_characters_as_levels_was_too_few_users(self):
    # Ten levels for discover(max_length=10), which runs eleven, gave about
    # 9% fewer users than needed (at any frequency: 5% here, so that n is
    # about 15,000 and discover's parameter check takes under a second; it
    # took 10 s at the 101,400 users of a 1% word).
    n_short = utility.min_population(5e-2, 4.0, num_levels=10)
    _, _, holders, p = discover_params(5e-2, n_short, 4.0)
    self.assertEqual(p.levels, 11)
    self.assertLess(utility.discovery_rate(
        holders, n_short, p.batch_size, p.theta, p.levels), 0.9)
    self.assertGreater(utility.min_population(5e-2, 4.0), 1.05 * n_short)

  def test_discover_finds_the_word_as_often_as_predicted(self):
    n = utility.min_population(1e-2, 4.0)
    pop, word, holders, p = discover_params(1e-2, n, 4.0)
    runs = 400
    found = sum(word in triehh.discover(
        pop, triehh.Target(4.0, sampling="fixed"), seed=s).heavy_hitters
                for s in range(runs))
    expected = utility.discovery_rate(holders, n, p.batch_size, p.theta,
                                      p.levels)
    # Two-sided binomial test at level 1e-4: fails only if discover runs
    # other levels or parameters than Proposition 2 is given.
    self.assertGreater(stats.binomtest(found, runs, expected).pvalue, 1e-4)

  def test_poisson_discover_finds_the_word_as_often_as_predicted(self):
    n = 20000  # about 7,300 users per round at epsilon = 4; 80 hold the word
    pop, word, holders, _ = discover_params(4e-3, n, 4.0)
    runs = 300
    results = [triehh.discover(pop, triehh.Target(4.0), seed=s) for s in range(runs)]
    p = results[0].params
    self.assertEqual(p.sampling, "poisson")
    found = sum(word in r.heavy_hitters for r in results)
    expected = utility.poisson_discovery_rate(holders, p.sampling_rate,
                                              p.theta, p.levels)
    self.assertGreater(expected, 0.05)
    self.assertLess(expected, 0.95)  # a rate that can be told apart
    self.assertGreater(stats.binomtest(found, runs, expected).pvalue, 1e-4)
    # The fixed-size law at Theorem 1's parameters is another rate.
    wrong = utility.poisson_discovery_rate(holders, p.sampling_rate,
                                           p.theta + 2, p.levels)
    self.assertLess(stats.binomtest(found, runs, wrong).pvalue, 1e-4)

  def test_smaller_epsilon_needs_more_users(self):
    self.assertGreater(utility.min_population(1e-3, 1.0),
                       utility.min_population(1e-3, 4.0))

  def test_rarer_words_need_more_users(self):
    self.assertGreater(utility.min_population(1e-4, 4.0),
                       utility.min_population(1e-3, 4.0))

  @parameterized.parameters((0.0,), (-1.0,), (math.inf,), (math.nan,))
  def test_bad_epsilon_is_named(self, epsilon):
    with self.assertRaisesRegex(ValueError, "epsilon"):
      utility.min_population(1e-3, epsilon)


@pytest.mark.parametrize("call, error, match", [
    (lambda: utility.discovery_rate(100, 10**5, 1000, 15.5, 11), TypeError,
     "theta must be an integer"),
    (lambda: utility.discovery_rate(math.nan, 10**5, 1000, 15, 11),
     ValueError, "count must be in"),
    (lambda: utility.discovery_rate(100, 10**5, True, 15, 11), TypeError,
     "batch_size must be an integer"),
    (lambda: utility.discovery_rate(100, math.nan, 100, 15, 11), TypeError,
     "n \\(number of users\\) must be an integer"),
    (lambda: utility.poisson_discovery_rate(100, 0.3, 15.5, 11), TypeError,
     "theta must be an integer"),
    (lambda: privacy.guarantee(10**6, 11, theta=15.5, gamma=12.0), TypeError,
     "theta must be an integer"),
])
def test_fractional_or_missing_counts_are_named(call, error, match):
  # theta=15.5 gave nan or a guarantee; count=nan gave 0; batch_size=True
  # was taken; n=nan said "batch_size must be in [1, n=nan]".
  with pytest.raises(error, match=match):
    call()


@pytest.mark.parametrize("delta, error, match", [
    ("abc", TypeError, r"^delta must be a number, got 'abc'$"),
    (lambda n: "x", TypeError, r"^delta must be a number, got 'x'$"),
    (True, TypeError, r"^delta must be a number, got True$"),
    (2.0, ValueError, r"^delta must be in \(0, 1\), got delta=2\.0$"),
    (-1, ValueError, r"^delta must be in \(0, 1\), got delta=-1\.0$"),
    (math.nan, ValueError, r"^delta must be in \(0, 1\), got delta=nan$"),
    (0, ValueError, r"^delta must be in \(0, 1\), got delta=0\.0$"),
    (lambda n: 2.0, ValueError, r"^delta must be in \(0, 1\) \(its value at "
     r"n=16\), got delta=2\.0$"),
    (5e-324, ValueError, r"^delta must be at least 2\.2250738585072014e-308"),
])
def test_min_population_names_a_bad_delta(delta, error, match):
  # These said "could not convert string to float", "'<' not supported",
  # or "no population up to n=10^12 discovers ...", hiding the bad delta.
  with pytest.raises(error, match=match):
    utility.min_population(1e-3, 4.0, delta=delta)


@pytest.mark.parametrize("upper, error, match", [
    ("x", TypeError, r"^upper must be an integer, got 'x'$"),
    (0, ValueError, r"^upper must be in \[2, 4611686018427387903\], got 0$"),
    (-5, ValueError, r"^upper must be in \[2, 4611686018427387903\], got -5$"),
    (1.5, ValueError, r"^upper must be a whole number in \[2, "),
    (math.nan, ValueError, r"^upper must be a whole number in \[2, "),
])
def test_min_population_names_a_bad_upper(upper, error, match):
  # 0, -5 and 1.5 were accepted; nan returned an answer.
  with pytest.raises(error, match=match):
    utility.min_population(1e-3, 4.0, upper=upper)


def test_min_population_searches_no_further_than_upper():
  answer = utility.min_population(1e-3, 4.0)
  assert utility.min_population(1e-3, 4.0, upper=answer) == answer
  assert utility.min_population(1e-3, 4.0, upper=float(answer)) == answer
  # An upper below the search's first guess (16) is searched up to itself.
  with pytest.raises(ValueError, match=r"^no population up to n=10 "):
    utility.min_population(1e-3, 4.0, upper=10)
  with pytest.raises(ValueError, match=rf"^no population up to "
                     rf"n={answer - 1} "):
    utility.min_population(1e-3, 4.0, upper=answer - 1)


@pytest.mark.parametrize("count, error, match", [
    ("5", TypeError, r"^count must be numbers \(users holding the sequence\)"),
    (10**30, ValueError, r"^count must be in \[0, 2\*\*62 - 1\] \(users "
     r"holding the sequence\), got about 1\.00e\+30$"),
    (-1, ValueError, r"^count must be in \[0, 2\*\*62 - 1\] \(users holding "
     r"the sequence\), got -1$"),
    ([5, -2], ValueError, r"got -2$"),
    (math.nan, ValueError, r"got nan$"),
])
def test_poisson_discovery_rate_names_a_bad_count(count, error, match):
  # Were a numpy UFuncTypeError, "ufunc '_binom_sf' not supported", or an
  # error not naming count.
  with pytest.raises(error, match=match):
    utility.poisson_discovery_rate(count, 0.1, 10, 11)


def test_level_rate_says_which_count_is_out_of_range():
  with pytest.raises(ValueError, match=r"^count must be in \[0, n=100000\] "
                     r"\(users holding the sequence\), got 1000000$"):
    utility.level_rate(10**6, 10**5, 100, 10)


def test_nothing_found_says_the_holders_a_word_needs_against_n():
  assert utility.nothing_found(21, 3710.5, 10_000) == (
      "no word found: a word needs theta=21 votes in every round, so about "
      "theta/q = 57 holders among the n=10,000 users (q n = 3,710.5 "
      "sampled per round): no word reached it in this run")


def test_nothing_found_says_when_no_word_can_be_expected():
  line = utility.nothing_found(12, 38.0, 100)
  assert "theta/q = 32 holders among the n=100 users" in line
  assert line.endswith(": no word reached it in this run")
  line = utility.nothing_found(50, 30.0, 100)
  assert "theta/q = 167 holders" in line
  assert line.endswith("more than there are users, so no word can be "
                       "expected; ask for a larger epsilon, or run on more "
                       "users")
