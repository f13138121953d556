"""Tests of the numpy counting phase (triehh/engines/counting.py).

The distribution tests compare fixed-seed samples with a chi-square test at
a false-alarm rate of 1e-3 per test (the seeds are fixed, so a pass is
deterministic; a wrong law fails by far more than that).
"""

import numpy as np
import pytest
from scipy import stats

from triehh.core import discrete_noise
from triehh.core.population import Population
from triehh.discovery import deny_list
from triehh.engines import counting

_ALPHA = 1e-3


def test_word_slots_puts_unpublished_words_in_other_and_empty_words_nowhere():
  pop = deny_list.apply(Population.from_user_words(
      ["sun", "moon", "star", "sun", "rain"]), ["rain"])
  slots = dict(zip(pop.vocabulary, counting.word_slots(pop, ["moon", "sun"])))
  assert slots == {"sun": 1, "moon": 0, "star": 2, deny_list.ABSTAIN: -1}


def test_item_counts_of_one_word_populations_by_user_or_by_frequency():
  words = ["sun", "moon"]
  by_user = Population.from_user_words(["sun"] * 5 + ["moon"] * 3 + ["sky"])
  by_freq = Population.from_word_frequencies(["sun", "moon", "sky"], [5, 3, 1])
  rng = np.random.default_rng(0)
  expected = [5, 3, 1]
  assert counting.item_counts(by_user, words, rng).tolist() == expected
  assert counting.item_counts(by_freq, words, rng).tolist() == expected
  items = counting.user_items(by_user, words, rng)
  assert counting.counts_of_items(items, 3).tolist() == expected


def test_item_counts_are_exact_for_huge_word_frequencies():
  big = 2**61 + 1  # not a float64
  pop = Population.from_word_frequencies(["a", "b"], [big, 3])
  counts = counting.item_counts(pop, ["a"], np.random.default_rng(0))
  assert counts.tolist() == [big, 3]


def test_user_items_draw_one_word_by_local_frequency():
  # Every user holds "a" once and "b" three times: P(a) = 1/4.
  pop = Population.from_user_words([{"a": 1, "b": 3}] * 4000 + [{"c": 2}])
  items = counting.user_items(pop, ["a", "b"], np.random.default_rng(3))
  assert items[-1] == 2  # "c" is other
  observed = np.bincount(items[:-1], minlength=2)
  assert stats.chisquare(observed, [1000, 3000]).pvalue > _ALPHA


def test_user_items_need_individual_users():
  pop = Population.from_word_frequencies(["a"], [3])
  with pytest.raises(ValueError, match="counting per user needs individual"):
    counting.user_items(pop, ["a"], np.random.default_rng(0))


def test_noisy_counts_without_noise_or_sampling_are_the_counts():
  counts = np.array([7, 0, 2], dtype=np.int64)
  out = counting.noisy_counts(counts, 1.0, 0.0, np.random.default_rng(0))
  assert out.dtype == np.float64
  assert out.tolist() == [7.0, 0.0, 2.0]


@pytest.mark.parametrize("counts, rate, std, error, match", [
    (np.array([1, -1]), 0.5, 1.0, ValueError, "non-negative, got -1"),
    (np.array([1.0, 2.0]), 0.5, 1.0, TypeError, "integers, got float64"),
    (np.array([], dtype=np.int64), 0.5, 1.0, ValueError, "non-empty"),
    (np.array([1]), 0.0, 1.0, ValueError,
     r"sample_rate must be .* got sample_rate=0.0"),
    (np.array([1]), 1.5, 1.0, ValueError,
     r"sample_rate must be .* got sample_rate=1.5"),
    (np.array([1]), "0.5", 1.0, TypeError, "sample_rate must be a number"),
    (np.array([1]), 0.5, -1.0, ValueError, r"noise_std .* got -1.0"),
])
def test_noisy_counts_refuse_bad_arguments(counts, rate, std, error, match):
  with pytest.raises(error, match=match):
    counting.noisy_counts(counts, rate, std, np.random.default_rng(0))


def _per_user(items: np.ndarray, num_slots: int, rate: float, std: float,
              rng: np.random.Generator) -> np.ndarray:
  """The mechanism user by user: each user joins with probability rate."""
  joined = items[rng.random(items.size) < rate]
  sums = np.bincount(joined[joined >= 0], minlength=num_slots)
  if std == 0:
    return sums.astype(np.float64)
  return sums + discrete_noise.discrete_gaussian(rng, std, num_slots)


def _same_law(a: np.ndarray, b: np.ndarray) -> float:
  """Chi-square p-value of two integer samples having the same law (bins
  with at least 5 expected in each sample, the tails pooled)."""
  values = np.concatenate([a, b])
  edges = np.unique(np.quantile(values, np.linspace(0, 1, 12)))
  edges[-1] += 1
  table = np.array([np.histogram(a, edges)[0], np.histogram(b, edges)[0]])
  return stats.chi2_contingency(table).pvalue


def test_count_level_sampling_has_the_law_of_per_user_sampling():
  items = np.repeat([0, 1, 2, -1], [40, 15, 6, 9])  # -1: no word
  counts = counting.counts_of_items(items, 3)
  rate, draws = 0.3, 3000
  fast = np.array([counting.noisy_counts(counts, rate, 0.0,
                                         np.random.default_rng(s))
                   for s in range(draws)])
  slow = np.array([_per_user(items, 3, rate, 0.0, np.random.default_rng(s))
                   for s in range(draws, 2 * draws)])
  for k in range(3):
    assert _same_law(fast[:, k], slow[:, k]) > _ALPHA
    expected = stats.binom.pmf(np.arange(counts[k] + 1), counts[k], rate)
    assert fast[:, k].mean() == pytest.approx(counts[k] * rate,
                                              abs=4 * np.sqrt(
                                                  counts[k] * rate
                                                  * (1 - rate) / draws))
    assert expected.sum() == pytest.approx(1.0)
  # Slots are independent in both: the law of a sum of two slots agrees.
  assert _same_law(fast[:, 0] + fast[:, 1], slow[:, 0] + slow[:, 1]) > _ALPHA


def test_noisy_counts_have_the_law_of_per_user_sampling_with_noise():
  items = np.repeat([0, 1], [30, 10])
  counts = counting.counts_of_items(items, 2)
  fast = np.array([counting.noisy_counts(counts, 0.5, 2.0,
                                         np.random.default_rng(s))
                   for s in range(2000)])
  slow = np.array([_per_user(items, 2, 0.5, 2.0, np.random.default_rng(s))
                   for s in range(2000, 4000)])
  assert np.array_equal(fast, np.round(fast))  # integer sums
  for k in range(2):
    assert _same_law(fast[:, k], slow[:, k]) > _ALPHA


def test_the_noise_is_the_discrete_gaussian():
  # Every user sampled: the sums less the users are the noise alone, whose
  # law is the discrete Gaussian's pmf (computed here), and not at a wrong
  # sigma.
  counts = np.array([7, 0, 3])
  noise = np.concatenate([
      counting.noisy_counts(counts, 1.0, 1.5, np.random.default_rng(s))
      - counts for s in range(3000)])
  assert np.array_equal(noise, np.round(noise))
  x = np.arange(-4, 5)
  observed = np.array([np.sum(noise == v) for v in x]
                      + [np.sum(np.abs(noise) > 4)])

  def expected(sigma):
    support = np.arange(-60, 61)
    pmf = np.exp(-support**2 / (2 * sigma**2))
    pmf /= pmf.sum()
    inner = pmf[(support >= -4) & (support <= 4)]
    return np.append(inner, 1 - inner.sum()) * noise.size

  assert stats.chisquare(observed, expected(1.5)).pvalue > _ALPHA
  assert stats.chisquare(observed, expected(1.8)).pvalue < 1e-6
