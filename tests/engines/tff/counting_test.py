"""Tests of triehh.engines.tff.counting: the counting phase in TFF."""

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

import tensorflow as tf
from scipy import stats

from triehh.core import population as population_lib
from triehh.engines import counting as numpy_counting
from triehh.engines.tff import clients
from triehh.engines.tff import counting
from triehh.engines.tff import process
from triehh.engines.tff import runtime

DDG = counting.DISTRIBUTED_DISCRETE_GAUSSIAN

# ---- noisy_counts_tff --------------------------------------------------------


def sampled_sums(items, num_slots, sample_rate, seed):
  """The one-hot sums of the users that seed's Poisson sample keeps (the
  sampling contract of noisy_counts_tff: one uniform per user)."""
  items = np.asarray(items)
  kept = items[np.random.default_rng(seed).random(items.size) < sample_rate]
  return np.bincount(kept[kept >= 0], minlength=num_slots).astype(float)


def test_zero_noise_gives_exactly_the_sampled_one_hot_sums(tff_context):
  items = np.random.default_rng(5).integers(-1, 4, size=120)
  got = counting.noisy_counts_tff(items, 4, 0.6, 0.0, 0)
  want = sampled_sums(items, 4, 0.6, 0)
  assert 0 < want.sum() < np.sum(items >= 0)  # a proper sample
  np.testing.assert_array_equal(got, want)
  # Several seeds: one round per seed, in one call.
  batch = counting.noisy_counts_tff(items, 4, 0.6, 0.0, [3, 0, 7])
  np.testing.assert_array_equal(
      batch, [sampled_sums(items, 4, 0.6, seed) for seed in (3, 0, 7)])
  assert len({tuple(row) for row in batch}) == 3


def test_users_without_a_word_contribute_nothing(tff_context):
  assert counting.noisy_counts_tff(np.full(30, -1), 3, 1.0, 0.0,
                                   0).tolist() == [0.0, 0.0, 0.0]
  items = np.array([0, 2, 2, 1, 2, 0, 2])
  padded = np.concatenate([items, np.full(9, -1)])
  assert counting.noisy_counts_tff(padded, 4, 1.0, 0.0, 0).tolist() == [
      2.0, 1.0, 4.0, 0.0]
  assert counting.noisy_counts_tff(np.zeros(0, int), 2, 1.0, 0.0,
                                   0).tolist() == [0.0, 0.0]


def test_zero_noise_distributed_discrete_gaussian_is_the_sum_rounded(
    tff_context):
  items = np.random.default_rng(6).integers(-1, 4, size=80)
  got = counting.noisy_counts_tff(items, 4, 0.7, 0.0, 3, mechanism=DDG)
  want = sampled_sums(items, 4, 0.7, 3)
  # The clients' randomized rounding at TFF's scale (about 1e3 per unit at
  # 20 bits here) leaves errors of order 1e-3.
  np.testing.assert_allclose(got, want, atol=0.05)
  assert not np.array_equal(got, want)  # it went through the rounding


@pytest.mark.parametrize("args, match", [
    (dict(num_slots=0), "num_slots must be an integer >= 1, got 0"),
    (dict(num_slots=2.0), "num_slots must be an integer >= 1, got 2.0"),
    (dict(sample_rate=0.0),
     r"sample_rate must be in \(0, 1\], got sample_rate=0.0"),
    (dict(sample_rate=1.5),
     r"sample_rate must be in \(0, 1\], got sample_rate=1.5"),
    (dict(sample_rate=float("nan")), r"sample_rate must be in \(0, 1\]"),
    (dict(noise_std=-1.0), "noise_std must be a finite number >= 0, got -1"),
    (dict(noise_std=float("inf")), "noise_std must be a finite number"),
    (dict(items=np.zeros((2, 2), int)), r"items must be a 1-d integer array"),
    (dict(items=np.array([0.0, 1.0])), "items must be a 1-d integer array"),
    (dict(items=np.array([0, 3])), r"items must be in \[-1, num_slots=3\), "
     "got 3 at position 1"),
    (dict(items=np.array([-2, 0])), r"items must be in \[-1, num_slots=3\), "
     "got -2 at position 0"),
    (dict(mechanism="laplace"), "mechanism must be one of"),
    (dict(seed=[]), "seed must be an integer or a non-empty sequence"),
    (dict(seed=1.5), "seed must be an integer or a non-empty sequence"),
])
def test_bad_arguments_are_one_line_errors_naming_them(args, match):
  call = dict(items=np.array([0, 1, 2]), num_slots=3, sample_rate=0.5,
              noise_std=1.0, seed=0) | args
  with pytest.raises(ValueError, match=match) as error:
    counting.noisy_counts_tff(**call)
  assert "\n" not in str(error.value)


def test_a_counting_spec_checks_the_distributed_options():
  with pytest.raises(ValueError, match="expected_clients must be >= 1"):
    counting.CountingSpec(1.0, DDG)
  with pytest.raises(ValueError, match=r"bits must be in \[1, 22\], got 23"):
    counting.CountingSpec(1.0, DDG, expected_clients=10, bits=23)
  with pytest.raises(TypeError, match="bits must be an integer, got 2.5"):
    counting.CountingSpec(1.0, DDG, expected_clients=10, bits=2.5)


# ---- the TFF path and the numpy path agree in distribution ------------------

# Users per slot (the last is "other") and users with no word.
SLOT_USERS = np.array([45, 30, 20, 10])
NO_WORD = 15
RATE, SIGMA = 0.5, 3.0
TFF_DRAWS, NUMPY_DRAWS = 100, 4000
# The chance that some statistic crosses its threshold when the laws are
# equal (Bonferroni over the slots and the three tests). The central
# ("gaussian") noise is drawn exactly from the discrete Gaussian, seeded, so
# that case is deterministic; the distributed mechanism's noise is
# TensorFlow's, unseeded: this is the rate at which it fails spuriously.
FALSE_ALARM = 1e-4


def distribution_statistics(tff_draws, numpy_draws):
  """Per slot: the p-values of Welch's t test (means), the Brown-Forsythe
  test (spreads) and the two-sample Kolmogorov-Smirnov test (laws)."""
  p_values = {}
  for slot in range(tff_draws.shape[1]):
    a, b = tff_draws[:, slot], numpy_draws[:, slot]
    p_values[f"slot {slot} mean"] = stats.ttest_ind(a, b,
                                                    equal_var=False).pvalue
    p_values[f"slot {slot} spread"] = stats.levene(a, b,
                                                   center="median").pvalue
    p_values[f"slot {slot} law"] = stats.ks_2samp(a, b).pvalue
  return p_values


@pytest.mark.parametrize("mechanism", [counting.GAUSSIAN, DDG])
def test_the_tff_and_numpy_paths_agree_in_distribution(tff_context,
                                                       mechanism):
  items = np.random.default_rng(0).permutation(np.concatenate(
      [np.repeat(np.arange(SLOT_USERS.size), SLOT_USERS),
       np.full(NO_WORD, -1)]))
  tff_draws = counting.noisy_counts_tff(items, SLOT_USERS.size, RATE, SIGMA,
                                        range(TFF_DRAWS), mechanism=mechanism)
  rng = np.random.default_rng(1)
  numpy_draws = np.array([
      numpy_counting.noisy_counts(SLOT_USERS, RATE, SIGMA, rng)
      for _ in range(NUMPY_DRAWS)])
  # Both laws are on the integers (the distributed one: its rounding).
  assert np.array_equal(numpy_draws, np.round(numpy_draws))
  if mechanism == counting.GAUSSIAN:
    assert np.array_equal(tff_draws, np.round(tff_draws))
  p_values = distribution_statistics(tff_draws, numpy_draws)
  threshold = FALSE_ALARM / len(p_values)
  assert min(p_values.values()) > threshold, {
      name: p for name, p in p_values.items() if p <= threshold}
  # The laws compared: the sampling and the noise both matter here.
  variance = SLOT_USERS * RATE * (1 - RATE) + SIGMA**2
  np.testing.assert_allclose(numpy_draws.var(axis=0), variance, rtol=0.1)


# ---- the counting round of the TrieHH process --------------------------------

WORDS = (["to"] * 8 + ["tea"] * 7 + ["ten"] * 4 + ["a"] * 6 + ["at"] * 5
         + ["on"] * 5 + ["no", "ant", "toe", "oat", "net", "tan"])
ALPHABET = "".join(sorted(set("".join(WORDS))))
L = 3


@pytest.fixture(scope="module")
def discovered(tff_runtime_module):
  """The state after three discovery rounds over every user (one_word)."""
  proc = process.build_triehh_process(ALPHABET, L, 5,
                                      client_data=clients.ONE_WORD)
  pop = population_lib.Population.from_user_words(WORDS, max_length=L)
  codes = list(pop.codes[pop.user_word].astype(np.int32))
  with tff_runtime_module.get_runtime().install():
    state = proc.initialize()
    for _ in range(L + 1):
      state, _ = proc.next(state, codes)
  return state, codes


def test_count_after_discovery_counts_each_users_word(tff_context,
                                                      discovered):
  state, codes = discovered
  proc = process.build_triehh_process(ALPHABET, L, 5,
                                      client_data=clients.ONE_WORD,
                                      counting=counting.CountingSpec(0.0))
  assert isinstance(proc, process.TrieHHProcess)
  output = proc.count(state, codes, proc.central_noise(seed=0))
  assert output.counts.dtype == np.int64  # exact integer sums
  words, other = process.decode_counts(state, output, ALPHABET)
  assert list(words) == ["a", "at", "on", "to", "tea"]  # discovery order
  assert set(words) == set(process.decode_state(state, ALPHABET))
  assert words == {w: float(WORDS.count(w)) for w in words}
  assert other == len(WORDS) - sum(words.values())


def test_count_adds_the_exact_noise_it_is_given(tff_context, discovered):
  state, codes = discovered
  proc = process.build_triehh_process(ALPHABET, L, 5,
                                      client_data=clients.ONE_WORD,
                                      counting=counting.CountingSpec(2.0),
                                      word_capacity=8)
  noise = proc.central_noise(seed=4)
  assert noise.dtype == np.int64 and noise.shape == (9,)
  np.testing.assert_array_equal(noise, proc.central_noise(seed=4))
  np.testing.assert_array_equal(
      noise, counting.central_noise(2.0, 8, np.random.default_rng(4)))
  output = proc.count(state, codes, noise)
  words, other = process.decode_counts(state, output, ALPHABET)
  exact = [WORDS.count(w) for w in words]
  exact.append(len(WORDS) - sum(exact))
  np.testing.assert_array_equal(output.counts, np.array(exact) + noise[:6])
  assert np.any(noise[:6] != 0) and other == exact[-1] + noise[5]


def test_central_noise_checks_its_arguments():
  with pytest.raises(ValueError, match="noise_std must be a finite number"):
    counting.central_noise(-1.0, 4)
  with pytest.raises(ValueError, match="seed must be None, an integer"):
    counting.central_noise(1.0, 4, seed=1.5)
  assert counting.central_noise(0.0, 3, seed=0).tolist() == [0, 0, 0, 0]
  distributed = process.build_triehh_process(
      ALPHABET, L, 5, counting=counting.CountingSpec(
          1.0, DDG, expected_clients=10))
  with pytest.raises(ValueError, match="central_noise is for .*'gaussian'"):
    distributed.central_noise()


def test_dataset_and_several_word_clients_count_one_word_each(tff_context,
                                                              discovered):
  state, _ = discovered
  users = [{"to": 3, "tea": 1}, {"tea": 2, "at": 5}, {"on": 1, "ant": 4},
           {"to": 1}, {}, {"t!": 2}]
  datasets = [tf.data.Dataset.from_tensor_slices(tf.constant(
      [w for w, c in u.items() for _ in range(c)], tf.string)) for u in users]
  # Most frequent word: to, at, ant (other); the empty user and the one with
  # a character outside the alphabet count nothing.
  want = {"a": 0.0, "at": 1.0, "on": 0.0, "to": 2.0, "tea": 0.0}
  proc = process.build_triehh_process(ALPHABET, L, 5,
                                      client_data=clients.DATASET,
                                      counting=counting.CountingSpec(0.0))
  zero = proc.central_noise()
  assert process.decode_counts(state, proc.count(state, datasets, zero),
                               ALPHABET) == (want, 1.0)
  pop = population_lib.Population.from_user_words(
      users[:4], max_length=L, alphabet=process.as_alphabet(ALPHABET))
  offsets = pop.user_offsets
  # Ranks 3, 6, 0, 0 draw: tea (3 >= 3 copies of "to"), at, on, to.
  packed = [clients.pack_words(pop.codes[pop.entry_word[offsets[u]:
                                                        offsets[u + 1]]],
                               pop.entry_count[offsets[u]:offsets[u + 1]],
                               rank)
            for u, rank in zip(range(4), (3, 6, 0, 0))]
  sampled = process.build_triehh_process(
      ALPHABET, L, 5, client_data=clients.SAMPLED_WORD,
      counting=counting.CountingSpec(0.0))
  assert process.decode_counts(state, sampled.count(state, packed, zero),
                               ALPHABET) == (
                                   {"a": 0.0, "at": 1.0, "on": 1.0, "to": 1.0,
                                    "tea": 1.0}, 0.0)
  # top_words clients count their most frequent word, as dataset clients do.
  top = process.build_triehh_process(
      ALPHABET, L, 5, client_data=clients.TOP_WORDS, max_user_contribution=2,
      counting=counting.CountingSpec(0.0))
  assert process.decode_counts(state, top.count(state, packed, zero),
                               ALPHABET) == (want, 1.0)


def test_a_state_with_more_words_than_the_capacity_fails(tff_context,
                                                         discovered):
  state, codes = discovered
  proc = process.build_triehh_process(ALPHABET, L, 5,
                                      client_data=clients.ONE_WORD,
                                      counting=counting.CountingSpec(0.0),
                                      word_capacity=4)
  with pytest.raises(runtime.ComputationError, match="word_capacity=4"):
    proc.count(state, codes, proc.central_noise())


def test_counting_options_need_the_counting_round():
  plain = process.build_triehh_process(ALPHABET, L, 5)
  assert not isinstance(plain, process.TrieHHProcess)
  with pytest.raises(ValueError, match="word_capacity needs counting"):
    process.build_triehh_process(ALPHABET, L, 5, word_capacity=8)
  with pytest.raises(ValueError, match="noise_std must be a finite number"):
    process.build_triehh_process(ALPHABET, L, 5,
                                 counting=counting.CountingSpec(-1.0))
  with pytest.raises(ValueError, match="expected_clients must be >= 1"):
    process.build_triehh_process(ALPHABET, L, 5,
                                 counting=counting.CountingSpec(1.0, DDG))
  with pytest.raises(TypeError, match="counting must be a .*CountingSpec"):
    process.build_triehh_process(ALPHABET, L, 5, counting=1.0)


# The process's own counting round (count(state, clients, noise)) against
# the numpy engine: the discovered words' users, a Poisson sample of them
# per round (seeded), the noise from central_noise.
PROCESS_DRAWS = 100


@pytest.fixture(scope="module")
def process_draws(tff_runtime_module, discovered):
  """``[PROCESS_DRAWS, K + 1]`` counting rounds of the process at SIGMA and
  RATE, and the users of each slot (the numpy engine's input)."""
  state, codes = discovered
  proc = process.build_triehh_process(ALPHABET, L, 5,
                                      client_data=clients.ONE_WORD,
                                      counting=counting.CountingSpec(SIGMA),
                                      word_capacity=8)
  codes = np.array(codes)
  draws = []
  with tff_runtime_module.get_runtime().install():
    for draw in range(PROCESS_DRAWS):
      rng = np.random.default_rng([7, draw])
      sampled = codes[rng.random(len(codes)) < RATE]
      draws.append(proc.count(state, list(sampled),
                              proc.central_noise(seed=rng)).counts)
  num_words = len(process.decode_state(state, ALPHABET))
  words, _ = process.decode_counts(state, np.zeros(num_words + 1), ALPHABET)
  slot_users = np.array([WORDS.count(w) for w in words])  # discovery order
  slot_users = np.append(slot_users, len(WORDS) - slot_users.sum())
  return np.array(draws), slot_users


def numpy_engine_draws(slot_users, sigma):
  rng = np.random.default_rng(1)
  return np.array([numpy_counting.noisy_counts(slot_users, RATE, sigma, rng)
                   for _ in range(NUMPY_DRAWS)])


def test_the_process_counting_round_draws_the_numpy_engines_law(
    process_draws):
  draws, slot_users = process_draws
  assert draws.dtype == np.int64  # integer sums plus integer noise
  p_values = distribution_statistics(draws, numpy_engine_draws(slot_users,
                                                               SIGMA))
  threshold = FALSE_ALARM / len(p_values)
  assert min(p_values.values()) > threshold, {
      name: p for name, p in p_values.items() if p <= threshold}


def test_the_statistic_rejects_the_numpy_engine_at_a_wrong_sigma(
    process_draws):
  # The same comparison fails when the laws differ: sigma 1.5 times too
  # large.
  draws, slot_users = process_draws
  p_values = distribution_statistics(draws, numpy_engine_draws(
      slot_users, 1.5 * SIGMA))
  assert min(p_values.values()) <= FALSE_ALARM / len(p_values), p_values


def test_decode_counts_wants_one_count_per_word_and_other(discovered):
  state, _ = discovered
  with pytest.raises(ValueError, match="3 counts for 5 words"):
    process.decode_counts(state, np.zeros(3), ALPHABET)
