"""Tests of protected counts (triehh/discovery/counts.py) and of
``discover(counts=True)``."""

import math

import numpy as np
import pytest

import triehh
from triehh.core.population import Population
from triehh.discovery import counts
from triehh.discovery import discover as discover_lib
from triehh.engines import counting as engine_counting

_USERS = ["sun"] * 300 + ["moon"] * 200 + ["star"] * 100 + [
    f"w{i}" for i in range(400)]


def test_estimate_is_the_scaled_sum_with_noise_and_sampling_variance():
  est, lower, upper = counts.estimate(np.array([50.0, -4.0]), 0.5, 2.0,
                                      confidence=0.95)
  assert est.tolist() == [100.0, -8.0]
  z = 1.959963984540054
  # c (1 - q) / q + sigma^2 / q^2, c clipped at 0; plus the continuity
  # correction 1 / (2 q) = 1.
  assert upper[0] - est[0] == pytest.approx(z * math.sqrt(100 + 16) + 1)
  assert est[1] - lower[1] == pytest.approx(z * math.sqrt(16) + 1)
  _, low3, _ = counts.estimate(np.array([50.0]), 0.5, 2.0,
                               several_words=True)
  assert est[0] - low3[0] == pytest.approx(
      z * math.sqrt(100 + 16 + 100) + 1)


@pytest.mark.parametrize("rate, std", [(0.5, 3.0), (1.0, 2.0), (0.1, 0.5)])
def test_intervals_cover_at_their_nominal_rate(rate, std):
  truth = np.array([400, 100, 20, 3], dtype=np.int64)
  seeds = 2000
  hits = np.zeros(truth.size)
  for seed in range(seeds):
    sums = engine_counting.noisy_counts(truth, rate, std,
                                        np.random.default_rng(seed))
    _, lower, upper = counts.estimate(sums, rate, std, 0.9)
    hits += (lower <= truth) & (truth <= upper)
  # Monte Carlo error of a 0.9 coverage over 2000 seeds: 4 standard errors.
  tolerance = 4 * math.sqrt(0.9 * 0.1 / seeds)
  big = hits[:3] / seeds if rate > 0.2 else hits[:2] / seeds
  # The sums are integers: the coverage is at least the nominal one, and
  # no more than it or, at q = 1 (the noise alone), the coverage the
  # lattice forces, P[|X| <= floor(z sigma + 1/2)] from the pmf.
  most = 0.9
  if rate == 1.0:
    x = np.arange(-60, 61)
    pmf = np.exp(-x**2 / (2 * std**2))
    pmf /= pmf.sum()
    reach = math.floor(1.6448536269514722 * std + 0.5)
    most = float(pmf[np.abs(x) <= reach].sum())
  assert np.all(big >= 0.9 - tolerance), big
  assert np.all(big <= most + tolerance), (big, most)


def test_several_word_intervals_cover_the_population_frequency():
  pop = Population.from_user_words([{"a": 1, "b": 1}] * 300
                                   + [{"a": 3, "c": 1}] * 100)
  truth = pop.true_weights[[list(pop.vocabulary).index("a")]]
  seeds, hits = 600, 0
  for seed in range(seeds):
    rng = np.random.default_rng(seed)
    sums = counts.noisy_sums(pop, ["a"], 0.5, 2.0, rng)
    _, lower, upper = counts.estimate(sums, 0.5, 2.0, 0.9,
                                      several_words=True)
    hits += int(lower[0] <= truth[0] <= upper[0])
  assert hits / seeds >= 0.9 - 4 * math.sqrt(0.09 / seeds)  # conservative


@pytest.mark.parametrize("words, match", [
    ([], "words is empty"),
    (["sun", "sun"], "'sun' twice"),
    (["sun", "s!n"], "'!' outside the alphabet"),
    (["sunshine"], "longer than max_length=4"),
    (["sun", ""], "non-empty strings"),
])
def test_count_words_refuses_a_list_that_is_not_published(words, match):
  with pytest.raises(ValueError, match=match):
    counts.count_words(["sun", "moon"], words, counts.CountTarget(1.0),
                       max_length=4)


def test_count_words_refuses_a_single_string():
  with pytest.raises(TypeError, match="words must be a sequence"):
    counts.count_words(["sun"], "sun", counts.CountTarget(1.0))


@pytest.mark.parametrize("rate", [0.0, 1.5])
def test_count_words_refuses_a_sample_rate_outside(rate):
  with pytest.raises(ValueError, match=f"sample_rate must be in .* got "
                     f"sample_rate={rate}"):
    counts.count_words(["sun"], ["sun"],
                       counts.CountTarget(1.0, sample_rate=rate))


def test_count_words_of_one_user_says_it_is_too_few():
  with pytest.raises(ValueError, match="n=1 user is too few for the default "
                     "delta"):
    triehh.count_words(["sun"], ["sun"], triehh.CountTarget(1.0))


def test_count_words_is_consistent():
  result = triehh.count_words(_USERS, ["moon", "sun"], triehh.CountTarget(
      2.0, delta=1e-6, sample_rate=1.0), seed=4)
  assert result.words == ("moon", "sun")
  assert result.estimate == result.noisy_sums[:2]
  assert result.other_estimate == result.noisy_sums[2]
  assert result.shares == tuple(e / 1000 for e in result.estimate)
  assert all(lo < e < up for lo, e, up in zip(result.lower, result.estimate,
                                              result.upper))
  assert result.epsilon <= 2.0 and result.delta == 1e-6
  assert result.discovery_epsilon is None
  assert abs(result.estimate[0] - 200) < 6 * result.noise_std
  again = triehh.count_words(_USERS, ["moon", "sun"],
                             triehh.CountTarget(2.0, delta=1e-6), seed=4)
  assert again == result


@pytest.mark.parametrize("privacy, kwargs, match", [
    (4.0, dict(counts=triehh.Counting), "counts must be True, False or a "
     "triehh.Counting"),
    (4.0, dict(counts=1), "counts must be True, False or a triehh.Counting"),
    (triehh.Target(4.0, allow_no_guarantee=True), dict(counts=True),
     "allow_no_guarantee=True"),
    (triehh.Mechanism(theta=5, batch_size=100), dict(counts=True),
     "counts=True needs epsilon"),
    (4.0, dict(counts=True, passes=triehh.Passes(2)), "with num_passes"),
    (4.0, dict(counts=True, availability=triehh.OnlineUsers(0.5)),
     "with availability"),
    (triehh.Target(4.0, schedule=[np.arange(10)]), dict(counts=True),
     "with schedule"),
])
def test_discover_refuses_what_counts_cannot_go_with(privacy, kwargs, match):
  with pytest.raises((ValueError, TypeError), match=match):
    triehh.discover(_USERS, privacy, **kwargs)


@pytest.mark.parametrize("options, match", [
    (dict(share=0.0), "count_share=0.0"),
    (dict(share=1.0), "count_share=1.0"),
    (dict(sample_rate=0.0), "count_sample_rate=0.0"),
    (dict(sample_rate=2.0), "count_sample_rate=2.0"),
])
def test_counting_options_are_checked_when_built(options, match):
  with pytest.raises(ValueError, match=match):
    triehh.Counting(**options)


def test_discover_without_counts_has_none():
  result = triehh.discover(_USERS * 20, triehh.Target(4.0, sampling="fixed"))
  assert result.counts is None


def test_discover_with_counts_reports_the_total_and_each_phase():
  result = triehh.discover(_USERS * 20,
                           triehh.Target(4.0, delta=1e-8, sampling="fixed"),
                           seed=1,
                           counts=triehh.Counting(share=0.3, sample_rate=0.5))
  found = result.counts
  assert found.words == result.words and found.words
  assert found.epsilon <= 4.0 and found.delta == 1e-8
  assert result.params.epsilon <= 0.7 * 4.0
  assert result.params.epsilon == found.discovery_epsilon
  assert found.discovery_delta + found.counting_delta == pytest.approx(1e-8)
  assert "one direction" in found.accounting
  assert found.sample_rate == 0.5
  assert found.n == 20000
  truth = {"sun": 6000, "moon": 4000, "star": 2000}
  for word, low, up in zip(found.words, found.lower, found.upper):
    assert low <= truth[word] <= up


_README_USERS = (["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000
                 + [f"w{i}" for i in range(4000)])


@pytest.mark.parametrize("seed, error, match", [
    (-1, ValueError, "seed must be >= 0"),
    (1.5, TypeError, "seed must be an integer"),
    (True, TypeError, "seed must be an integer")])
def test_count_words_names_a_bad_seed(seed, error, match):
  with pytest.raises(error, match=match):
    triehh.count_words(_README_USERS, ["sun"], 1.0, seed=seed)


@pytest.mark.parametrize("epsilon", [1e3, 1e9])
def test_a_huge_epsilon_stops_at_the_least_sigma(epsilon):
  # The noise search stopped at sigma 1e-6, whose Gaussian distribution
  # holds billions of cells (8 GB, or past 120 s): it stops at a tenth of
  # a user, more private than asked, and reports what it gives.
  counted = triehh.count_words(_README_USERS, ["sun"],
                               triehh.CountTarget(epsilon))
  assert counts.theory.LEAST_SIGMA <= counted.noise_std < 0.2
  assert counted.epsilon <= epsilon


def test_a_huge_total_epsilon_with_discovery_stops_at_the_least_sigma():
  counted = triehh.discover(_README_USERS, triehh.Target(1e6),
                            counts=True).counts
  assert counted.noise_std == counts.theory.LEAST_SIGMA
  assert counted.epsilon <= 1e6


@pytest.mark.parametrize("options", [dict(epsilon=1e-4),
                                     dict(epsilon=1.0, sample_rate=1e-12)])
def test_a_tiny_epsilon_or_rate_is_calibrated(options):
  # Gaussian epsilons of 0 ended in "math domain error".
  counted = triehh.count_words(_README_USERS, ["sun"],
                               triehh.CountTarget(**options))
  assert counted.epsilon <= options["epsilon"]


@pytest.mark.parametrize("name", ["epsilon", "delta", "sample_rate"])
def test_count_words_names_the_home_of_an_old_keyword(name):
  with pytest.raises(TypeError, match=f"count_words: {name}= is a field of "
                     "triehh.CountTarget"):
    triehh.count_words(_README_USERS, ["sun"], **{name: 0.5})


@pytest.mark.parametrize("privacy, error, match", [
    ("1.0", TypeError, "privacy must be a triehh.CountTarget"),
    (True, TypeError, "privacy must be a triehh.CountTarget"),
    (triehh.Target(1.0), TypeError, "privacy must be a triehh.CountTarget"),
])
def test_count_words_takes_a_count_target(privacy, error, match):
  with pytest.raises(error, match=match):
    triehh.count_words(_README_USERS, ["sun"], privacy)


def test_a_number_is_the_count_targets_epsilon():
  assert (triehh.count_words(_README_USERS, ["sun"], 1.0, seed=2)
          == triehh.count_words(_README_USERS, ["sun"],
                                triehh.CountTarget(epsilon=1.0), seed=2))
