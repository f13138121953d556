"""Tests of triehh.discovery.availability: online sets, batches and the accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from triehh.core import population as population_lib
from triehh.data import synthetic
from triehh.discovery import availability
import triehh


# 40,000 users: every distinct online count is checked against Theorem 1,
# whose check at n users costs about (n / 10,000)^2 / 10 s (10 s at 100,000).
@pytest.fixture(scope="module")
def pop():
  return synthetic.english_population(40_000, seed=2).encode()


def _theorem_1(n, levels, theta, m):
  # Theorem 1 written out: eps = L ln(1 + 1/(sqrt(n)/(gamma theta) - 1)).
  gamma = m / math.sqrt(n)
  return levels * math.log(1 + 1 / (math.sqrt(n) / (gamma * theta) - 1))


def test_everyone_online_has_discovers_parameters(pop):
  result = availability.discover_online(pop, triehh.Target(4.0),
                                        triehh.OnlineUsers(1.0))
  ref = triehh.discover(pop, triehh.Target(4.0, sampling="fixed"))
  assert (result.params.theta, result.params.batch_size) == (
      ref.params.theta, ref.params.batch_size)
  assert result.params.epsilon == pytest.approx(ref.params.epsilon)
  assert result.availability.online_per_round == (40_000,) * 11
  assert result.sampled_per_round[0] == ref.params.batch_size
  assert result.params.accounting == (
      "Theorem 1 at the worst round's online count (one direction)")
  assert result.params.sampling == "fixed" and not result.params.two_sided


def test_fraction_recalibrated_to_the_online_count(pop):
  result = availability.discover_online(pop, triehh.Target(4.0),
                                        triehh.OnlineUsers(0.3))
  info = result.availability
  assert info.online_per_round == (12_000,) * 11
  assert info.worst_online == 12_000 and info.nominal_n == 40_000
  assert result.params.n == 40_000
  theta, m = result.params.theta, result.params.batch_size
  assert info.epsilon == pytest.approx(_theorem_1(12_000, 11, theta, m))
  assert info.epsilon <= 4.0
  assert result.params.epsilon == info.epsilon
  assert info.nominal_epsilon == pytest.approx(
      _theorem_1(40_000, 11, theta, m))
  assert info.nominal_epsilon < info.epsilon


def test_nominal_calibration_reports_the_larger_epsilon(pop):
  full = triehh.discover(pop, triehh.Target(2.0, sampling="fixed"))
  result = availability.discover_online(
      pop, triehh.Target(2.0), triehh.OnlineUsers(0.5, "nominal"))
  theta, m = full.params.theta, full.params.batch_size
  assert (result.params.theta, result.params.batch_size) == (theta, m)
  assert result.params.epsilon == pytest.approx(
      _theorem_1(20_000, 11, theta, m))
  assert result.params.epsilon > 2.0


def test_nominal_calibration_refused_outside_theorem_1(pop):
  with pytest.raises(ValueError, match=r"2000 of n=40000 users online"):
    availability.discover_online(pop, triehh.Target(4.0),
                                 triehh.OnlineUsers(0.05, "nominal"))
  result = availability.discover_online(
      pop, triehh.Target(4.0, allow_no_guarantee=True),
      triehh.OnlineUsers(0.05, "nominal"))
  assert math.isinf(result.params.epsilon)
  assert result.params.accounting == "none"


def test_batches_are_drawn_from_online_users():
  words = ["ab"] * 300 + ["cd"] * 300
  pop = population_lib.Population.from_user_words(words, max_length=2)
  probs = np.zeros(600)
  probs[:300] = 1.0  # only the users of "ab" are ever online
  result = availability.discover_online(
      pop, triehh.Mechanism(theta=5, batch_size=40, allow_no_guarantee=True),
      triehh.OnlineUsers(probs), max_length=2)
  assert result.words == ("ab",)
  assert result.availability.online_per_round == (300,) * 3
  assert result.unprotected.votes_per_round == (40, 40, 40)


def test_same_seed_same_result():
  # 20,000 users (Zipf words, so that some are found), not the fixture's
  # 40,000: every round has its own online count, each checked against
  # Theorem 1, which takes about 1.3 s of CPU a run at 20,000 users, 3.8 s
  # at 40,000 and 29 s at 100,000.
  pop = synthetic.english_population(20_000, seed=2,
                                     distribution="zipf").encode()
  probs = availability.diurnal(np.random.default_rng(0).random(20_000), 11)
  online = triehh.OnlineUsers(probs)
  a = availability.discover_online(pop, triehh.Target(4.0), online, seed=1)
  b = availability.discover_online(pop, triehh.Target(4.0), online, seed=1)
  c = availability.discover_online(pop, triehh.Target(4.0), online, seed=2)
  assert a.words and a.words == b.words
  assert a.availability == b.availability
  assert a.availability.online_per_round != c.availability.online_per_round
  counts = a.availability.online_per_round
  assert a.availability.worst_online == min(counts)
  assert a.params.epsilon <= 4.0


def test_diurnal():
  probs = availability.diurnal(np.array([0.0, 0.5]), 25, low=0.1, high=0.9)
  assert probs.shape == (2, 25)
  # At hour 0 user 0 is at its peak and user 1 at its trough; at 12 h the
  # other way round; at 24 h as at 0 h.
  np.testing.assert_allclose(probs[:, 0], [0.9, 0.1])
  np.testing.assert_allclose(probs[:, 12], [0.1, 0.9])
  np.testing.assert_allclose(probs[:, 24], probs[:, 0])
  np.testing.assert_allclose(probs[0, 6], 0.5)


@pytest.mark.parametrize("bad, message", [
    (0.0, r"in \(0, 1\]"), (1.5, r"in \(0, 1\]"),
    (np.ones(7), "shape"), (np.full(600, 2.0), r"in \[0, 1\]")])
def test_bad_availability(bad, message):
  pop = population_lib.Population.from_user_words(["ab"] * 600, max_length=2)
  with pytest.raises(ValueError, match=message):
    availability.discover_online(
        pop, triehh.Mechanism(theta=5, batch_size=40),
        triehh.OnlineUsers(bad), max_length=2)


def test_needs_individual_users():
  pop = population_lib.Population.from_word_frequencies(
      ["ab", "cd"], [10_000, 10_000], max_length=2)
  with pytest.raises(ValueError, match="needs individual users"):
    availability.discover_online(pop, triehh.Target(4.0),
                                 triehh.OnlineUsers(0.5), max_length=2)


def test_bad_calibration(pop):
  with pytest.raises(ValueError, match="calibrate_to must be one of"):
    triehh.OnlineUsers(0.5, calibrate_to="both")


def test_discover_availability_argument(pop):
  via_api = triehh.discover(pop, triehh.Target(4.0), seed=3,
                            availability=triehh.OnlineUsers(0.5))
  direct = availability.discover_online(pop, triehh.Target(4.0),
                                        triehh.OnlineUsers(0.5), seed=3)
  assert isinstance(via_api, availability.OnlineResult)
  assert via_api.words == direct.words
  assert via_api.availability == direct.availability
  assert via_api.params == direct.params
  denied = triehh.discover(pop, triehh.Target(4.0), seed=3,
                           deny_list=via_api.words[:3],
                           availability=triehh.OnlineUsers(0.5))
  assert not set(denied.words) & set(via_api.words[:3])
  with pytest.raises(ValueError, match="schedule cannot be given"):
    triehh.discover(pop, triehh.Target(4.0, schedule=[np.arange(10)]),
                    availability=triehh.OnlineUsers(0.5))


@pytest.mark.parametrize("phases, num_rounds, error, match", [
    (["a"], 2, TypeError, "phases must be numbers"),
    (np.zeros(3), 2.5, TypeError, "num_rounds must be an integer"),
    (np.zeros(3), 10**12, MemoryError, "num_rounds=1,000,000,000,000"),
])
def test_diurnal_names_a_bad_argument(phases, num_rounds, error, match):
  # 2.5 rounds gave 3 columns; 10^12 rounds a bare MemoryError.
  with pytest.raises(error, match=match):
    availability.diurnal(phases, num_rounds)


def test_given_parameters_are_labelled_by_the_worst_rounds_guarantee():
  # theta and m given: m = 300 is below sqrt(n) at n = 10^5 (no guarantee
  # there), above it at the 5 * 10^4 users online. The run's label must be
  # that of the guarantee it reports, and say the parameters were given.
  words = (["sun"] * 30_000 + ["moon"] * 20_000
           + [f"w{i}" for i in range(50_000)])
  result = triehh.discover(words, triehh.Mechanism(theta=10, batch_size=300),
                           availability=triehh.OnlineUsers(0.5))
  params = result.params
  assert params.has_guarantee and params.adjacency == "REPLACE_SPECIAL"
  assert params.n_source == "data" and "(given)" in params.guarantee
  assert "calibrated" not in params.guarantee
  described = triehh.Guarantee.of(params).describe()
  assert described.startswith(f"({params.epsilon:g}"[:6])
  assert "no differential privacy" not in described


def test_a_numpy_fraction_is_a_fraction():
  online = triehh.OnlineUsers(np.float32(0.5))
  assert type(online.online) is float and online.online == 0.5
  words = ["sun"] * 3000 + ["moon"] * 2000 + [f"w{i}" for i in range(5000)]
  assert (triehh.discover(words, 4.0, availability=online, seed=1).words
          == triehh.discover(words, 4.0, availability=triehh.OnlineUsers(0.5),
                             seed=1).words)


@pytest.mark.parametrize("privacy, match", [
    (triehh.Target(4.0, sampling="poisson"),
     "availability runs fixed-size batches"),
    (triehh.Mechanism(theta=5, gamma=1.0), "gamma cannot be given"),
    (triehh.Target(4.0, max_num_prefixes=3), "max_num_prefixes cannot be"),
    (triehh.Target(4.0, theta=5), "give either"),
    (triehh.Target(4.0, population_size=1000),
     "population_size=1000 is not supported with availability"),
])
def test_refuses_a_privacy_an_availability_model_cannot_run(privacy, match):
  pop = population_lib.Population.from_user_words(["ab"] * 600, max_length=2)
  with pytest.raises(ValueError, match=match):
    availability.discover_online(pop, privacy, triehh.OnlineUsers(0.5),
                                 max_length=2)


def test_availability_is_an_online_users():
  pop = population_lib.Population.from_user_words(["ab"] * 600, max_length=2)
  with pytest.raises(TypeError, match="availability must be a "
                     "triehh.OnlineUsers"):
    availability.discover_online(pop, triehh.Target(4.0), 0.5, max_length=2)
