"""Tests of triehh.engines.noisy: the noisy trie's simulation, and a Monte
Carlo check of its privacy claim."""

import dataclasses
import fractions
import itertools
import math

import numpy as np
import pytest

from triehh.core import discrete_noise
from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.theory import discrete_laplace
from triehh.theory import distributed_noise
from triehh.theory import noisy_plan
from triehh.theory import noisy_trie
from triehh.theory import verification_thresholds

WORDS = {"hello": 2000, "help": 1500, "he": 900, "world": 700, "a": 600,
         "abcdefgh": 400, "toolongword": 800, "zz": 1}
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _population(words=None, max_length=8, alphabet=None):
  words = WORDS if words is None else words
  return population_lib.Population.from_word_frequencies(
      list(words), list(words.values()), max_length=max_length,
      alphabet=alphabet)


def _params(sigma, alpha, rounds, **kwargs):
  return noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=rounds,
                                    false_positive_rate=alpha, **kwargs)


@pytest.mark.parametrize("k", [1, 2, 3, 9])
def test_tiny_noise_releases_exactly_the_words_within_length(k):
  # Every word of at most 8 characters has a user and passes; the
  # truncated one and nothing else (false positives at rate 1e-15): the
  # extensions of k symbols are encoded and decoded right.
  pop = _population()
  result = noisy.run(pop, _params(0.01, 1e-15, noisy_trie.rounds_for(8, k),
                                  chars_per_level=k), rng=0)
  assert sorted(result.words) == sorted(w for w in WORDS if len(w) <= 8)
  assert not result.false_words.any()
  for word, count in zip(result.words, result.noisy_counts):
    assert count == pytest.approx(WORDS[word], abs=0.1)


def test_same_seed_same_result_and_seeds_differ():
  pop = _population()
  params = noisy_trie.calibrate(9, 1.0, 1e-6, sampling_rates=(1.0,))
  first, again = noisy.run(pop, params, 3), noisy.run(pop, params, 3)
  assert first.words == again.words
  np.testing.assert_array_equal(first.noisy_counts, again.noisy_counts)
  assert first.levels == again.levels
  other = noisy.run(pop, params, 4)
  assert not np.array_equal(first.noisy_counts, other.noisy_counts)


def test_a_word_of_many_users_is_found_and_a_rare_one_is_not():
  pop = _population()
  params = noisy_trie.calibrate(9, 1.0, 1e-12, sampling_rates=(1.0,))
  assert 50 < params.threshold < 200
  for seed in range(5):
    words = noisy.run(pop, params, seed).words
    assert {"hello", "help", "he", "world", "a", "abcdefgh"} <= set(words)
    assert "zz" not in words


def test_poisson_sampling_thins_the_votes():
  pop = _population({"hello": 4000, "hi": 10})
  params = _params(0.01, 1e-12, 9, sampling_rate=0.25)
  counts = [dict(zip(r.words, r.noisy_counts))["hello"]
            for r in (noisy.run(pop, params, s) for s in range(20))]
  # Binomial(4000, 0.25): mean 1000, sd 27.
  assert abs(np.mean(counts) - 1000) < 4 * 27 / math.sqrt(20)
  assert 27 / 2 < np.std(counts) * math.sqrt(20 / 19) < 27 * 1.5


def test_zero_vote_candidates_pass_at_the_false_positive_rate():
  # Over 300 runs about 27,000 candidates have no vote; each passes with
  # probability alpha (the discrete tail at the integer threshold, at most
  # the 0.02 asked for), noise drawn or their number drawn (Binomial, then
  # a uniform subset). A rate off by a quarter fails.
  pop = _population({"ab": 50, "b": 50}, max_length=2, alphabet=LETTERS)
  params = _params(3.0, 0.02, 3, sampling_rate=0.5)
  alpha = params.false_positive_rate
  assert 0.01 < alpha <= 0.02
  zero = passing = 0
  for seed in range(300):
    for level in noisy.run(pop, params, seed).levels:
      zero += level.num_zero_vote
      passing += level.num_zero_vote_passing
      assert level.expected_false_positives == pytest.approx(
          alpha * level.num_candidates)
  assert zero > 20_000
  assert abs(passing / zero - alpha) < 4 * math.sqrt(alpha * (1 - alpha)
                                                     / zero)


def test_false_positives_are_fresh_candidates_with_noisy_counts_above_tau():
  pop = _population({"ab": 50, "b": 50}, max_length=3, alphabet=LETTERS)
  params = _params(1.0, 0.02, 4)
  for seed in range(50):
    result = noisy.run(pop, params, seed)
    assert len(set(result.words)) == len(result.words)
    assert (result.noisy_counts >= params.threshold).all()
    assert set(np.array(result.words)[result.false_words]).isdisjoint(
        {"ab", "b"})


def test_several_words_per_user_vote_one_word_a_round():
  users = [{"hello": 3, "world": 1}] * 300 + [{"world": 1}] * 200
  pop = population_lib.Population.from_user_words(users, max_length=6)
  params = _params(0.01, 1e-12, 7)
  result = noisy.run(pop, params, 0)
  assert set(result.words) == {"hello", "world"}
  counts = dict(zip(result.words, result.noisy_counts))
  # 300 users pick hello with probability 3/4: 225 votes on average.
  assert 180 < counts["hello"] < 270 and counts["world"] > 230
  again = noisy.run(pop, params, 0)
  assert again.words == result.words
  sampled = noisy.run(pop, _params(0.01, 1e-12, 7, sampling_rate=0.5), 1)
  assert set(sampled.words) == {"hello", "world"}


def test_params_must_account_for_every_round():
  with pytest.raises(ValueError, match="need 9"):
    noisy.run(_population(), _params(1.0, 1e-3, 8), 0)


def _released_counts(pop, params, seeds):
  """Per seed, the noisy count "a" was released with (-inf if it was not)."""
  out = np.empty(len(seeds))
  for i, seed in enumerate(seeds):
    result = noisy.run(pop, params, seed)
    counts = dict(zip(result.words, result.noisy_counts))
    out[i] = counts.get("a", -math.inf)
  return out


def test_monte_carlo_privacy_loss_stays_below_the_claim():
  # D holds a user with "a", D' is D without it (ADD_OR_REMOVE_ONE). For
  # the events S_x = {"a" released with a noisy count >= x}, P_D(S) <=
  # e^eps P_D'(S) + delta within sampling error (4 standard errors), in
  # both directions; and the check has power: it catches the claim of a
  # mechanism with 3 times the noise.
  d = _population({"a": 1, "b": 1}, max_length=1, alphabet="ab")
  d_prime = _population({"b": 1}, max_length=1, alphabet="ab")
  params = _params(1.0, 0.5, 2)
  delta = 0.2
  eps = noisy_trie.epsilon(params, delta)
  weak_claim = noisy_trie.epsilon(_params(3.0, 0.5, 2), delta)
  runs = 3000
  # Each run's count of "a" once; the events are cutoffs on it.
  counts = _released_counts(d, params, range(runs))
  counts_prime = _released_counts(d_prime, params, range(runs, 2 * runs))
  caught = False
  for cutoff in (0.0, 1.0, 2.0):
    p = (counts >= cutoff).mean()
    p_prime = (counts_prime >= cutoff).mean()
    se = math.sqrt(p * (1 - p) / runs) + math.sqrt(
        p_prime * (1 - p_prime) / runs) * math.exp(eps)
    assert p <= math.exp(eps) * p_prime + delta + 4 * se
    assert (1 - p_prime) <= math.exp(eps) * (1 - p) + delta + 4 * se
    caught |= p > math.exp(weak_claim) * p_prime + delta + 4 * se
  assert caught


def test_a_frontier_of_noise_alone_past_every_word_runs():
  # At a high false-positive rate, candidates longer than every word pass
  # by noise; a round whose prefixes no word has ends without an error.
  pop = _population({"ab": 500, "cd": 300}, alphabet=LETTERS)
  result = noisy.run(pop, _params(2.0, 0.1, 9), rng=1)
  assert result.false_words.any()
  assert max(map(len, result.words)) > 2


def test_more_passing_candidates_than_memory_holds_are_refused(monkeypatch):
  monkeypatch.setattr(noisy.memory, "available_bytes", lambda: 10**6)
  with pytest.raises(MemoryError, match=r"false_positive_rate=0\.3\d* over "):
    noisy.run(_population(), _params(1.0, 0.5, 9), rng=0)


def test_a_round_too_large_for_memory_is_refused_before_allocating(
    monkeypatch):
  """10^6 users at a large chars_per_level allocated 7.46 GiB before any
  check; the estimate refuses first, naming the size, the limit and the
  fix (here on 2 words, 480 bytes, with the memory limit lowered)."""
  pop = _population({"ab": 50, "b": 50}, max_length=3, alphabet=LETTERS)
  monkeypatch.setattr(noisy.memory, "available_bytes", lambda: 300)
  with pytest.raises(MemoryError) as info:
    noisy.run(pop, _params(1.0, 0.01, 1, chars_per_level=9), rng=0)
  text = str(info.value)
  assert "\n" not in text
  for part in ("chars_per_level=9 over 2 words", "about 480 bytes",
               "more than the 300 bytes available",
               "lower chars_per_level (at most 4 is ever useful"):
    assert part in text
  # a smaller k fits the same limit and runs
  noisy.run(pop, _params(1.0, 1e-9, 4, chars_per_level=1), rng=0)


def test_extensions_beyond_int64_are_refused():
  pop = _population({"ab": 50, "b": 50}, max_length=3, alphabet=LETTERS)
  with pytest.raises(ValueError, match="chars_per_level=40 gives"):
    noisy.run(pop, _params(1.0, 0.01, 1, chars_per_level=40), rng=0)


# ---- the planned run (triehh.theory.noisy_plan) ---------------------------


def _plan(sigma, *, bytes_per_run=10**9, rounds=9, false_words=1e-12,
          prefix_rate=1e-15, n=8000, one_word=True, bytes_per_round=None,
          max_length=8, alphabet_size=26, verify=False, multipliers=()):
  return noisy_plan.NoisyPlan(
      sigma=sigma, num_levels=rounds, noise_multipliers=multipliers,
      verify=verify,
      word_false_positive_rate=1e-15, prefix_false_positive_rate=prefix_rate,
      budget=noisy_plan.UploadBudget(bytes_per_run, bytes_per_round),
      population_size=n, max_length=max_length,
      alphabet_size=alphabet_size, one_word=one_word,
      false_words=false_words)


def test_planned_tiny_noise_releases_the_words_within_length():
  pop = _population(alphabet=LETTERS)
  result = noisy.run_planned(pop, _plan(0.01), 0)
  assert sorted(result.words) == sorted(w for w in WORDS if len(w) <= 8)
  assert not result.false_words.any()
  # A small frontier at first: several characters in the first rounds.
  assert result.levels[0].chars > 1
  assert sum(level.chars for level in result.levels) <= 9
  again = noisy.run_planned(pop, _plan(0.01), 0)
  assert again.words == result.words and again.levels == result.levels


def test_planned_words_of_l_letters_end_when_the_last_frontier_is_cut():
  # 300 words of L = 4 letters, 30 users each: at 4,000 bytes a round the
  # last round cannot hold every 3-letter prefix, keeps the first ones and
  # gives them their last letter and "$" (A + 1 extensions, one
  # character's bytes): the words of the prefixes kept are released.
  rng = np.random.default_rng(0)
  words = {}
  while len(words) < 300:
    words["".join(rng.choice(list(LETTERS), 4))] = 30
  pop = _population(words, max_length=4, alphabet=LETTERS)
  plan = _plan(0.01, rounds=4, max_length=4, n=9000,
               bytes_per_round=4000)
  result = noisy.run_planned(pop, plan, 0)
  last = result.levels[-1]
  assert (last.stats.prefix_length, last.chars) == (3, 2)
  assert 0 < last.num_dropped < 300
  assert set(result.words) <= set(words)
  # Every kept prefix holds a word (some hold two).
  assert len(result.words) >= last.stats.num_frontier > 0
  assert last.upload_bytes <= 4000


def test_word_groups_are_the_classes_of_their_end():
  ext = noisy.Extensions.of(4, 3, 10, 2)  # "$", 4 of "x$", 16 of "xy$"
  assert ext.word_groups(False) == [(0, 21)]
  assert ext.word_groups(True) == [(0, 1), (1, 5), (5, 21)]
  last = noisy.Extensions.of(4, 2, 10, 9)  # "$" and "x$": both words
  assert last.size == 5 and last.word_groups(True) == [(0, 1), (1, 5)]


def test_each_class_of_words_passes_at_its_own_rate():
  # 20 prefixes, each extended by "$" or a letter and "$" (the last round
  # of a verified plan): zero votes everywhere, so what passes is the
  # noise. By class, the 20 "$"s and the 500 letter words each pass about
  # 20 times the prefix rate; all together, the 520 share it.
  ext = noisy.Extensions.of(25, 2, 10, 9)
  none = np.zeros(0, dtype=np.int64)
  voted = noisy._Voted(none, none, none)
  rate = 0.05

  def thresholds(word, num_candidates, num_blocks=None):
    alpha = rate * (num_blocks / num_candidates if word else 1.0)
    tau = discrete_laplace.threshold(1.0, alpha)
    return noisy._Thresholds(
        1.0, tau, discrete_noise.discrete_laplace_tail(1.0, tau), True)

  passed = {True: np.zeros(26), False: np.zeros(26)}
  for seed in range(400):
    for by_class in (True, False):
      cand, _, _ = noisy._draw_two(voted, 20, ext, thresholds,
                                   np.random.default_rng(seed), by_class)
      passed[by_class] += np.bincount(cand % ext.size, minlength=26)
  # "$" (extension 0): 20 blocks at the prefix's tail by class, at its
  # 26th together.
  dollar = [passed[b][0] / 400 for b in (True, False)]
  assert 20 * rate / 3 < dollar[0] < 20 * rate
  assert dollar[1] < dollar[0] / 5
  letters = passed[True][1:].sum() / 400
  assert 20 * rate / 3 < letters < 20 * rate


def _brute_wrapped(explicit, votes, num_candidates, scale, tau, window,
                   rng):
  """Every candidate's noise drawn, its sum read modulo the window's
  modulus into [low, low + modulus), thresholded: the law the engine's
  shortcut must follow (written here, not taken from the engine)."""
  low, modulus = window
  sums = discrete_noise.discrete_laplace(rng, scale, num_candidates)
  sums[explicit] += votes
  read = low + np.mod(sums - low, modulus)
  return np.flatnonzero(read >= tau), read[read >= tau]


@pytest.mark.parametrize("window, wrong, same", [
    ((-4, 16), (-4, 16), True),
    ((-4, 16), None, False),  # the sums read as integers
    ((-4, 16), (-4, 32), False),  # another modulus
])
def test_wrapped_sums_pass_as_every_candidate_drawn_and_read(window, wrong,
                                                            same):
  # One block of 40 candidates ("$" and 39 letters), two voted for; scale
  # 3 around a window of 16 values from -4: a sum wraps about one time in
  # four. What passes (how many of the others, their read values, which
  # candidates) against every noise drawn and read modulo 16.
  from scipy import stats  # pylint: disable=g-import-not-at-top
  explicit, votes = np.array([3, 10]), np.array([20, 0])
  params = noisy._Thresholds(3.0, 5, discrete_noise.discrete_laplace_tail(
      3.0, 5), True)
  ext = noisy.Extensions.of(39, 1, 5, 2)
  voted = noisy._Voted(explicit, votes, np.zeros(2, dtype=np.int64))
  read_as = None if wrong is None else noisy.Window(wrong[0],
                                                    np.array([wrong[1]]))
  keys = {"engine": [], "brute": []}
  for seed in range(3000):
    cand, values, source = noisy._draw_two(
        voted, 1, ext, lambda word, n, blocks=None: params,
        np.random.default_rng(seed), window=read_as)
    keys["engine"].append((cand, values, source))
    cand, values = _brute_wrapped(explicit, votes, 40, 3.0, 5, window,
                                  np.random.default_rng(10**6 + seed))
    keys["brute"].append((cand, values, None))

  def table(stat, cells):
    rows = []
    for side in ("engine", "brute"):
      counts = np.zeros(cells)
      for cand, values, _ in keys[side]:
        for x in stat(cand, values):
          counts[min(x, cells - 1)] += 1
      rows.append(counts)
    rows = np.array(rows)
    return stats.chi2_contingency(rows[:, rows.sum(axis=0) > 0]).pvalue

  others = lambda c, v: [int(np.isin(c, [3, 10], invert=True).sum())]
  read = lambda c, v: list(v[np.isin(c, [3, 10], invert=True)] - 5)
  where = lambda c, v: list(c)
  voted = lambda c, v: list(v[c == 3] - 5)
  p_values = [table(others, 8), table(read, 20), table(where, 40),
              table(voted, 20)]
  if same:
    assert min(p_values) > 1e-3 / 4, p_values
  else:
    assert min(p_values) < 1e-6, p_values


def test_planned_rounds_read_each_block_modulo_its_own():
  # The fast engine reads a round's sums as the blocks' secure sums decode
  # them: run_planned gives each kept prefix its block's modulus, the
  # server's noise draws with that window, Skellam shares without.
  seen = []

  class Capturing(noisy.FastVoter):

    def window(self, plan, r, frontier):
      got = super().window(plan, r, frontier)
      seen.append((r, frontier.moduli.copy(), got))
      return got

  pop = _population(alphabet=LETTERS)
  plan = dataclasses.replace(
      _plan(2.0, rounds=10, verify=True, prefix_rate=3.0 / 27,
            bytes_per_run=40_000, multipliers=(2.0,) * 9),
      discovery_wrap_tail=1e-4)
  noisy.run_planned(pop, plan, 0, voter=Capturing())
  assert len(seen) > 2
  parents = [None]
  for r, moduli, window in seen:
    assert window.low == plan.window_low(r) < 0
    assert np.array_equal(window.moduli, moduli)
    assert moduli.min() >= 2
  assert seen[0][1].tolist() == [plan.cap_modulus(parents[0], 0)]
  # Skellam shares: their one modulus is bounded, not drawn.
  frontier = noisy._Frontier(np.zeros((1, 0), dtype=np.int16),
                             np.zeros(1, dtype=np.int64), np.array([64]))
  shares = dataclasses.replace(plan, distributed=object())
  assert noisy.SkellamVoter().window(shares, 1, frontier) is None
  assert noisy.FastVoter().window(plan, 1, frontier).moduli.tolist() == [64]


@pytest.mark.parametrize("moduli, same", [((16, 32, 16), True),
                                           ((16, 16, 16), False)])
def test_each_block_reads_its_sums_modulo_its_own_modulus(moduli, same):
  # A round of three blocks of one character over 4 letters (a "$" and 4
  # letters each), the middle block's sums read modulo 32, the others'
  # modulo 16, from -4: which candidates pass and their readings, against
  # every candidate's noise drawn and read in the test; reading the middle
  # block modulo 16 is told apart.
  from scipy import stats  # pylint: disable=g-import-not-at-top
  ext = noisy.Extensions.of(4, 1, 5, 2)
  voted = noisy._Voted(np.array([1, 7, 12]), np.array([30, 30, 0]),
                       np.zeros(3, dtype=np.int64))
  tail = discrete_noise.discrete_laplace_tail(3.0, 5)
  thresholds = lambda word, n, blocks=None: noisy._Thresholds(3.0, 5, tail,
                                                              True)
  window = noisy.Window(-4, np.array(moduli))
  truth = np.array([16, 32, 16])
  counts = np.zeros((2, 15 * 20))
  for seed in range(2000):
    cand, values, _ = noisy._draw_two(voted, 3, ext, thresholds,
                                      np.random.default_rng(seed),
                                      window=window)
    counts[0, cand * 20 + np.minimum(values - 5, 19)] += 1
    rng = np.random.default_rng(10**6 + seed)
    sums = discrete_noise.discrete_laplace(rng, 3.0, 15)
    sums[voted.candidates] += voted.votes
    read = -4 + np.mod(sums + 4, np.repeat(truth, 5))
    passed = np.flatnonzero(read >= 5)
    counts[1, passed * 20 + np.minimum(read[passed] - 5, 19)] += 1
  p = stats.chi2_contingency(counts[:, counts.sum(axis=0) >= 10]).pvalue
  assert (p > 1e-3) == same, p


def test_planned_uploads_stay_within_the_budget():
  pop = _population(alphabet=LETTERS)
  plan = _plan(0.01, bytes_per_run=3000, bytes_per_round=1200)
  result = noisy.run_planned(pop, plan, 0)
  assert 0 < result.upload_bytes <= 3000
  spent = 0
  for r, level in enumerate(result.levels):
    assert level.upload_bytes <= plan.round_allowance(r, spent) <= 1200
    spent += level.upload_bytes
  # The budget binds: fewer characters, or fewer words, than unbounded.
  free = noisy.run_planned(pop, _plan(0.01), 0)
  assert result.upload_bytes < free.upload_bytes


def test_planned_false_words_stay_near_the_stated_expectation():
  # Realistic noise on a small population: the word threshold of each
  # round spends false_words / R over its word candidates, so the mean
  # false words over runs stays about false_words (0.5 here).
  pop = _population(alphabet=LETTERS)
  plan = _plan(3.0, false_words=0.5, prefix_rate=0.1 / 27,
               bytes_per_run=20_000)
  falses, expected = [], []
  for seed in range(30):
    result = noisy.run_planned(pop, plan, seed)
    falses.append(result.num_false_words)
    assert {"hello", "help"} <= set(result.words)
  assert np.mean(falses) < 1.0
  loose = noisy.run_planned(pop, _plan(3.0, false_words=500.0,
                                      prefix_rate=0.1 / 27,
                                      bytes_per_run=20_000), 0)
  assert loose.num_false_words > 5  # the rate is what sets them


def test_planned_votes_count_for_words_on_the_frontier():
  # 300 users hold "zz" nine times and "ab" once; with only "a" on the
  # frontier every one of them votes "ab" (the frequency-drawn vote of
  # the plain engine would give it about 30).
  users = [{"zz": 9, "ab": 1}] * 300 + [{"ac": 1}] * 50
  pop = population_lib.Population.from_user_words(users, max_length=4,
                                                  alphabet="abcz")
  word_a = list(pop.vocabulary).index("ab")
  frontier = noisy._Frontier(
      pop.codes[word_a:word_a + 1, :1].astype(np.int16),
      np.array([pop.prefix_ids[1][word_a]], dtype=np.int64))
  ext = noisy.Extensions.of(pop.alphabet.size, 1, pop.max_length, 1)
  voted = noisy._planned_votes(pop, np.random.default_rng(0), frontier,
                               ext, 1)
  assert voted.votes.sum() == 350
  assert sorted(voted.votes) == [50, 300]
  plain = noisy._votes(pop, 1.0, np.random.default_rng(0), frontier, ext, 1)
  assert plain.votes.sum() < 120


# ---- discover, then verify -------------------------------------------------


def test_verified_tiny_noise_releases_the_words_within_length_at_the_end():
  pop = _population(alphabet=LETTERS)
  result = noisy.run_planned(pop, _plan(0.01, rounds=10, verify=True), 0)
  assert sorted(result.words) == sorted(w for w in WORDS if len(w) <= 8)
  assert not result.false_words.any()
  *discovery, last = result.levels
  assert last.verification and last.chars == 0
  assert not any(level.verification for level in discovery)
  # Every word was found by discovery and is released by verification
  # alone: its candidates are the words discovery passed.
  assert last.stats.num_candidates == len(result.words)
  assert last.stats.num_released == len(result.words)
  plain = noisy.run_planned(pop, _plan(0.01), 0)
  assert sorted(plain.words) == sorted(result.words)


def test_verified_false_words_stay_near_the_stated_expectation():
  # Discovery passes every candidate at the loose prefix rate, so many
  # candidates no user holds reach the verification round; its threshold
  # spends false_words over them: about false_words false words a run.
  pop = _population(alphabet=LETTERS)
  plan = _plan(2.0, rounds=10, false_words=0.5, prefix_rate=3.0 / 27,
               bytes_per_run=40_000, verify=True, multipliers=(2.0,) * 9)
  falses, candidates = [], []
  for seed in range(30):
    result = noisy.run_planned(pop, plan, seed)
    falses.append(result.num_false_words)
    candidates.append(result.levels[-1].stats.num_phantom)
    assert {"hello", "help"} <= set(result.words)
  assert np.mean(candidates) > 50  # false candidates reach verification
  assert np.mean(falses) < 1.0
  loose = noisy.run_planned(pop, dataclasses.replace(plan, false_words=500.0),
                            0)
  assert loose.num_false_words > 5  # the rate is what sets them


def test_verified_uploads_keep_the_reserve_and_stay_within_the_budget():
  pop = _population(alphabet=LETTERS)
  plan = _plan(0.01, rounds=10, verify=True, bytes_per_run=3000)
  result = noisy.run_planned(pop, plan, 0)
  assert 0 < result.upload_bytes <= 3000
  reserve = math.ceil(noisy_plan.VERIFY_RESERVE * 3000)
  spent = 0
  for r, level in enumerate(result.levels[:-1]):
    assert level.upload_bytes <= plan.round_allowance(r, spent)
    spent += level.upload_bytes
  assert spent <= 3000 - reserve
  assert result.levels[-1].upload_bytes <= 3000 - spent


def test_verification_keeps_the_largest_candidates_that_fit():
  pop = _population(alphabet=LETTERS)
  found = noisy._Found()
  codes = {w: pop.codes[i, :len(w) + 1].astype(np.int16)
           for i, w in enumerate(pop.vocabulary)}
  for word, value in (("help", 1500.0), ("hello", 2000.0), ("he", 900.0)):
    found.add([codes[word]], [value], [list(pop.vocabulary).index(word)],
              0.01)
  plan = _plan(0.01, rounds=10, verify=True, bytes_per_run=10**6)
  bits = [noisy_plan.packed_bits(m, 1) for m in plan.verification_moduli(
      [2000.0, 1500.0], [0.01, 0.01])]
  # A budget that holds the two largest counts' blocks and no third.
  spent = plan.budget.bytes_per_run - math.ceil(sum(bits) / 8) - 0
  level, (words, values, false) = noisy._verification_round(
      pop, plan, found, spent, np.random.default_rng(0))
  assert level.num_dropped == 1 and level.stats.num_candidates == 2
  assert list(words) == ["hello", "help"] and not false.any()
  assert list(values) == pytest.approx([2000, 1500], abs=1)


def test_verification_thresholds_come_from_the_discovery_counts():
  # Words no user holds, measured at discovery from 4 to 40: the weighted
  # split's thresholds (each word's own, their tails summed the round's
  # expected false positives, at most F); the even split at F / |V| each.
  pop = _population(alphabet=LETTERS)
  found = noisy._Found()
  values = np.arange(4, 41, dtype=np.float64).repeat(20)
  for i, value in enumerate(values):
    found.add([np.array([0, 1 + i % 20, i % 7, pop.alphabet.end_code],
                        dtype=np.int16)],
              [value], [-1], 6.0)
  plan = dataclasses.replace(_plan(3.0, rounds=4, verify=True,
                                   false_words=1.0), noise_law="laplace")
  level, _ = noisy._verification_round(pop, plan, found, 0,
                                       np.random.default_rng(0))
  order = np.argsort(-values, kind="stable")
  taus = verification_thresholds.thresholds(
      "laplace", plan.round_sigma(3), values[order],
      np.full(values.size, 6.0), 1.0)
  by_value = dict(zip(values[order].tolist(), taus.tolist()))
  even_tau = plan.params(3, True, values.size).threshold
  # Measured near the even split's threshold: lower than it; measured
  # low (most false words): higher.
  assert by_value[15.0] < even_tau < by_value[4.0]
  assert level.stats.expected_false_positives == pytest.approx(
      verification_thresholds.spent("laplace", 3.0, taus))
  assert level.stats.expected_false_positives <= 1.0
  even, _ = noisy._verification_round(
      pop, dataclasses.replace(plan, verification_split="even"), found, 0,
      np.random.default_rng(0))
  rate = plan.params(3, True, values.size).false_positive_rate
  assert even.stats.expected_false_positives == pytest.approx(
      rate * values.size)


def test_verification_votes_count_each_users_word_among_the_candidates():
  # 300 users hold "zz" nine times and "ab" once; with only "ab" a
  # candidate every one of them votes for it.
  users = [{"zz": 9, "ab": 1}] * 300 + [{"ac": 1}] * 50
  pop = population_lib.Population.from_user_words(users, max_length=4,
                                                  alphabet="abcz")
  cand = np.full(pop.num_words, -1, dtype=np.int64)
  cand[list(pop.vocabulary).index("ab")] = 0
  voted = noisy._votes_for(pop, cand, np.random.default_rng(0))
  assert voted.candidates.tolist() == [0] and voted.votes.tolist() == [300]


def test_verification_votes_go_to_the_users_word_measured_lowest():
  # 300 users hold "zz" nine times and "ab" once, 50 hold "ac" and "ab";
  # all three are candidates. By local frequency most of the 300 would
  # vote "zz"; with discovery's counts as priority (zz 900 > ab 40 > ac
  # 30) each votes for its word measured lowest: "ab" for the 300, "ac"
  # for the 50.
  users = [{"zz": 9, "ab": 1}] * 300 + [{"ac": 1, "ab": 5}] * 50
  pop = population_lib.Population.from_user_words(users, max_length=4,
                                                  alphabet="abcz")
  vocab = list(pop.vocabulary)
  cand = np.full(pop.num_words, -1, dtype=np.int64)
  for i, word in enumerate(["zz", "ab", "ac"]):
    cand[vocab.index(word)] = i
  by_frequency = noisy._votes_for(pop, cand, np.random.default_rng(0))
  assert dict(zip(by_frequency.candidates.tolist(),
                  by_frequency.votes.tolist()))[0] > 200
  voted = noisy._votes_for(pop, cand, np.random.default_rng(0),
                           priority=np.array([900.0, 40.0, 30.0]))
  assert dict(zip(voted.candidates.tolist(), voted.votes.tolist())) == {
      0: 0, 1: 300, 2: 50}
  # Ties: drawn by local frequency among the tied words.
  tied = noisy._votes_for(pop, cand, np.random.default_rng(0),
                          priority=np.array([5.0, 5.0, 30.0]))
  votes = dict(zip(tied.candidates.tolist(), tied.votes.tolist()))
  assert votes[0] > 200 and votes[1] == 300 - votes[0] + 50


def test_least_per_user_marks_each_users_smallest_key():
  users = [{"ab": 1, "ac": 1}, {"zz": 2}, {"ab": 1, "zz": 1, "ac": 3}]
  pop = population_lib.Population.from_user_words(users, max_length=4,
                                                  alphabet="abcz")
  vocab = list(pop.vocabulary)
  rank = {"ab": 2.0, "ac": 1.0, "zz": 7.0}
  key = np.array([rank[vocab[w]] for w in pop.entry_word])
  least = noisy._least_per_user(pop, key)
  marked = [vocab[w] for w in pop.entry_word[least]]
  assert marked == ["ac", "zz", "ac"]


def test_planned_sampling_thins_the_votes_and_counts_expected_bytes():
  pop = _population(alphabet=LETTERS)
  plan = dataclasses.replace(
      _plan(0.01, rounds=10, verify=True, bytes_per_run=3000,
            multipliers=(1.0,) * 9),
      sampling_rate=0.5,
      budget=noisy_plan.UploadBudget(3000, sampling_rate=0.5))
  counts = {}
  for seed in range(20):
    result = noisy.run_planned(pop, plan, seed)
    for word, value in zip(result.words, result.noisy_counts):
      counts.setdefault(word, []).append(value)
    # A client's expected bytes (q times each round's vector) within the
    # budget, its rounds up to twice what q = 1 allows.
    assert 0.5 * result.upload_bytes <= 3000
  # About half of each word's users vote: hello (2000) about 1000.
  assert np.mean(counts["hello"]) == pytest.approx(1000, abs=25)
  assert np.std(counts["hello"]) > 5  # binomial, not a fixed half
  whole = noisy.run_planned(pop, dataclasses.replace(
      plan, sampling_rate=1.0, budget=noisy_plan.UploadBudget(3000)), 0)
  assert dict(zip(whole.words, whole.noisy_counts))["hello"] == 2000


# ---- distributed noise: Skellam shares ---------------------------------------


def _shares(n: int, h: int, dropout: float):
  import fractions  # pylint: disable=g-import-not-at-top
  from triehh.theory import distributed_noise  # pylint: disable=g-import-not-at-top
  return distributed_noise.DistributedNoise(
      num_clients=n, sampling_rate=1.0, dropout=dropout, min_clients=h,
      share_means=(fractions.Fraction(1, 64),) * 4, thresholds=(6,) * 4,
      bits=12, delta_short=1e-9)


def test_a_round_short_of_its_clients_stops_the_distributed_run():
  """m - 1 >= h releases; at dropout 1/2 of 300 users, h = 290 is never
  reached (m about 150): no round is released."""
  population = population_lib.Population.from_user_words(
      ["ab"] * 200 + ["b"] * 100, alphabet="ab", max_length=3)
  params = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=4, threshold=6)
  full = noisy.run(population, params, 0, distributed=_shares(300, 299, 0.0))
  assert set(full.words) == {"ab", "b"} and full.levels
  short = noisy.run(population, params, 0,
                    distributed=_shares(300, 290, 0.5))
  assert not short.words and not short.levels


def test_distributed_votes_are_thinned_by_the_dropout():
  """Each sampled user delivers with probability 1 - dropout: the noisy
  sum of a 300-user word averages 150 at dropout 1/2 (noise of variance
  2 m / 64, about 5)."""
  population = population_lib.Population.from_user_words(
      ["a"] * 300, max_length=1,
      alphabet="a")
  params = noisy_trie.NoisyTrieParams(sigma=2.0, num_levels=2, threshold=6)
  sums = [noisy.run(population, params, seed,
                    distributed=_shares(300, 100, 0.5)).noisy_counts[0]
          for seed in range(40)]
  assert abs(np.mean(sums) - 150) < 4 * math.sqrt((75 + 5) / 40)


def test_a_verification_round_with_no_word_found_runs_on_several_words():
  # Discovery passed no word: V is empty and so is its priority; each
  # user has no candidate, the round counts nothing and releases nothing.
  users = [{"zz": 9, "ab": 1}] * 30 + [{"ac": 1}] * 20
  pop = population_lib.Population.from_user_words(users, max_length=4,
                                                  alphabet="abcz")
  cand = np.full(pop.num_words, -1, dtype=np.int64)
  voted = noisy._votes_for(pop, cand, np.random.default_rng(0),
                           priority=np.zeros(0))
  assert voted.candidates.size == 0 and voted.votes.sum() == 0
  plan = _plan(0.01, rounds=4, verify=True, one_word=False, max_length=4,
               alphabet_size=4, n=50)
  level, (words, _, false) = noisy._verification_round(
      pop, plan, noisy._Found(), 0, np.random.default_rng(0))
  assert level.verification and level.stats.num_candidates == 0
  assert not words and not false.size


# ---- Skellam shares in a planned run (noisy.SkellamVoter) ------------------


def _planned_shares(n, *, dropout=0.2, min_clients=None,
                    share=fractions.Fraction(1, 8), rounds=10):
  return distributed_noise.DistributedNoise(
      num_clients=n, sampling_rate=1.0, dropout=dropout,
      min_clients=(n // 2 if min_clients is None else min_clients),
      share_means=(share,) * rounds, thresholds=(1,) * rounds, bits=20,
      delta_short=1e-12)


@pytest.mark.parametrize("exact", [True, False])
def test_skellam_shares_draw_the_delivered_votes_and_their_noise(exact):
  """A verified plan with shares: a word's released count is its delivered
  votes, Binomial(c, 1 - dropout), plus Sk(m s), m the delivered clients
  (Binomial(n, 1 - dropout), the 6,000 users whose words are never found
  too): its mean is c (1 - d) and its variance c d (1 - d) + 2 n (1 - d)
  s. The plan choice's simulation (``exact=False``: the noise at the
  shares' variance) gives the same two moments."""
  rare = itertools.islice(("".join(w) for w in itertools.product(
      "cdefgh", repeat=3)), 120)
  words = {"aa": 2000, "bb": 2000, **{w: 50 for w in rare}}
  pop = _population(words, max_length=3, alphabet="abcdefgh")
  n = pop.num_users
  assert n == 10_000
  plan = dataclasses.replace(
      _plan(1.0, rounds=4, verify=True, n=n, max_length=3,
            alphabet_size=8),
      # h far below the m of about 8,000 delivered: the noise is m s_r.
      distributed=_planned_shares(n, min_clients=n // 4))
  counts = []
  for seed in range(150):
    result = noisy.run_planned(pop, plan, seed,
                               voter=noisy.SkellamVoter(exact=exact))
    assert set(result.words) == {"aa", "bb"}
    assert result.levels[-1].verification
    counts.append(result.noisy_counts[list(result.words).index("aa")])
  d, s = 0.2, 1 / 8
  assert np.mean(counts) == pytest.approx(2000 * (1 - d), abs=10)
  variance = 2000 * d * (1 - d) + 2 * n * (1 - d) * s
  assert np.var(counts, ddof=1) == pytest.approx(variance, rel=0.25)
  # The central plan's noise is the server's, at sigma 1: no dropout.
  central = noisy.run_planned(pop, dataclasses.replace(plan,
                                                       distributed=None), 0)
  assert abs(central.noisy_counts[0] - 2000) < 10


def test_a_round_short_of_its_shares_is_not_released():
  """Fewer than h delivered shares besides one: the round is not released
  and the run stops; a verified plan then releases nothing."""
  pop = _population({"aa": 2000, "bb": 2000}, max_length=3, alphabet="ab")
  for verify in (False, True):
    plan = dataclasses.replace(
        _plan(1.0, rounds=4, verify=verify, n=4000, max_length=3,
              alphabet_size=2),
        distributed=_planned_shares(4000, min_clients=3999))
    result = noisy.run_planned(pop, plan, 0)
    assert result.words == () and result.levels == ()
  # h within reach: released.
  plan = dataclasses.replace(plan, distributed=_planned_shares(4000,
                                                        min_clients=3000))
  assert set(noisy.run_planned(pop, plan, 0).words) == {"aa", "bb"}


# ---- rates adapted to the frontier (noisy_plan, *Rates adapted*) -----------


def _adapted(bytes_per_run, **kwargs):
  return dataclasses.replace(
      _plan(0.01, bytes_per_run=bytes_per_run, **kwargs), sampling_rate=0.25,
      budget=noisy_plan.UploadBudget(bytes_per_run, sampling_rate=0.25),
      renyi_order=12)


def test_adapted_rounds_count_every_user_where_the_frontier_fits():
  """With room for every round at rate 1, every round takes it: a word's
  count is its users, not a quarter of them; the rates at q alone thin
  them. Expected bytes stay within the budget either way."""
  pop = _population(alphabet=LETTERS)
  adapted = noisy.run_planned(pop, _adapted(10**9), 0)
  assert {level.sampling_rate for level in adapted.levels} == {1.0}
  assert dict(zip(adapted.words, adapted.noisy_counts))["hello"] == 2000
  fixed = noisy.run_planned(
      pop, dataclasses.replace(_adapted(10**9), renyi_order=None), 0)
  assert {level.sampling_rate for level in fixed.levels} == {0.25}
  assert dict(zip(fixed.words, fixed.noisy_counts))["hello"] < 700
  tight = _adapted(2500)
  for seed in range(5):
    result = noisy.run_planned(pop, tight, seed)
    rates = [level.sampling_rate for level in result.levels]
    assert set(rates) <= {0.25, *noisy_plan.rate_menu(0.25)}
    assert result.expected_upload_bytes <= 2500
  assert min(rates) < 1.0 < 2 * max(rates)  # some rounds fit, some not


def test_an_adapted_round_takes_the_largest_rate_that_keeps_its_frontier():
  """round_plan's rate keeps every frontier prefix and at least q's
  characters; the next larger rate of the menu does not; a plan whose
  rates do not adapt stays at q."""
  plan = _adapted(4000)
  base = dataclasses.replace(plan, renyi_order=None)
  rates = (1.0, *noisy_plan.rate_menu(0.25)[1:], 0.25)
  for size in (1, 5, 20, 60, 200):
    parent = [50.0] * size
    at, moduli, k, kept = noisy.round_plan(plan, parent, 2, 2, 0, 0.25)
    base_k, _ = base.chars_for_round(base.block_moduli(parent, 2), 2, 2, 0)
    assert at.sampling_rate in rates
    if at.sampling_rate > 0.25:
      assert kept == len(moduli) == size and k >= max(base_k, 1)
    i = rates.index(at.sampling_rate)
    if i:  # the next larger rate fails one of the two
      larger = dataclasses.replace(
          next(o for o in plan.rate_options(2)
               if o.sampling_rate == rates[i - 1]), parent_rate=0.25)
      lk, lkept = larger.chars_for_round(larger.block_moduli(parent, 2), 2,
                                         2, 0)
      assert lkept < size or lk < max(base_k, 1)
    fixed_at, *_ = noisy.round_plan(base, parent, 2, 2, 0, 0.25)
    assert fixed_at.sampling_rate == 0.25


# ---- discrete Laplace noise (noise_law="laplace") -------------------------


def _laplace_pmf(scale: float, x: np.ndarray) -> np.ndarray:
  p = math.exp(-1.0 / scale)
  return (1.0 - p) / (1.0 + p) * p**np.abs(x.astype(float))


def _chi_square_ok(values: np.ndarray, pmf: np.ndarray,
                   support: np.ndarray) -> float:
  """The chi-square p-value of ``values`` against ``pmf`` on ``support``
  (cells of fewer than 20 expected pooled into one)."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  expected = values.size * pmf / pmf.sum()
  counts = np.array([(values == v).sum() for v in support], dtype=float)
  big = expected >= 20
  observed = np.append(counts[big], values.size - counts[big].sum())
  wanted = np.append(expected[big], values.size - expected[big].sum())
  return float(stats.chisquare(observed, wanted).pvalue)


def test_laplace_rounds_draw_their_noise_and_passes_in_law():
  rng = np.random.default_rng(3)
  laplace = noisy._Thresholds(1.5, 4, float(  # pylint: disable=protected-access
      (1 - math.exp(-1 / 1.5)) / (1 + math.exp(-1 / 1.5))
      * math.exp(-4 / 1.5) / (1 - math.exp(-1 / 1.5))), True)
  explicit = np.arange(20_000, dtype=np.int64)
  votes = np.full(explicit.size, 10, dtype=np.int64)
  _, values, source = noisy.draw_passing(explicit, votes, explicit.size,
                                         laplace, rng)
  # Every vote sum passes but those whose noise fell below -6: the noise
  # is the Laplace's, given >= -6 (a scale 5 % off is seen).
  noise = values[source >= 0] - 10
  support = np.arange(-6, 40)
  assert _chi_square_ok(noise, _laplace_pmf(1.5, support), support) > 1e-3
  assert _chi_square_ok(noise, _laplace_pmf(1.575, support), support) < 1e-3
  # Candidates no one votes for: as many pass as the tail says, each
  # value the Laplace's given >= 4.
  passes = [noisy.draw_passing(np.zeros(0, dtype=np.int64),
                               np.zeros(0, dtype=np.int64), 200_000,
                               laplace, rng) for _ in range(20)]
  counts = np.array([p[0].size for p in passes])
  mean = 200_000 * laplace.false_positive_rate
  assert abs(counts.mean() - mean) < 5 * math.sqrt(mean / 20)
  above = np.concatenate([p[1] for p in passes])
  support = np.arange(4, 60)
  assert above.min() >= 4
  assert _chi_square_ok(above, _laplace_pmf(1.5, support), support) > 1e-3


def test_laplace_verified_false_words_stay_near_the_stated_expectation():
  pop = _population(alphabet=LETTERS)
  plan = dataclasses.replace(
      _plan(0.8, rounds=10, false_words=0.5, prefix_rate=3.0 / 27,
            bytes_per_run=40_000, verify=True, multipliers=(2.0,) * 9),
      noise_law=noisy_plan.LAPLACE)
  falses = []
  for seed in range(30):
    result = noisy.run_planned(pop, plan, seed)
    falses.append(result.num_false_words)
    assert {"hello", "help"} <= set(result.words)
  assert np.mean(falses) < 1.0
  loose = noisy.run_planned(pop, dataclasses.replace(plan, false_words=500.0),
                            0)
  assert loose.num_false_words > 5
