"""Tests of triehh.engines.tff.noisy_process: the noisy trie's TFF process."""

import functools

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.engines.tff import clients
from triehh.engines.tff import noisy_process
from triehh.engines.tff import runtime

WORDS = ["ab"] * 9 + ["b"] * 7 + ["ba"] * 4 + ["a"] * 2 + ["bb"]
L = 2


def population(words=WORDS, max_length=L):
  return population_lib.Population.from_user_words(words,
                                                   max_length=max_length)


def client_codes(pop):
  return list(pop.codes[pop.user_word].astype(np.int32))


def central_next(proc, state, data, sigma, capacity):
  """``proc.next`` with the round's exact noise from the state's seed."""
  return proc.next(state, data,
                   noisy_process.central_noise(state, sigma, capacity))


def test_a_tiny_noise_releases_the_words_above_the_threshold(tff_context):
  pop = population()
  proc = noisy_process.build_noisy_trie_process(
      pop.alphabet, L, sigma=1e-6, threshold=3.5, capacity=8)
  state = noisy_process.with_noise_seed(proc.initialize(), [3, 4])
  sums = []
  for _ in range(L + 1):
    state, output = central_next(proc, state, client_codes(pop), 1e-6, 8)
    sums.append(np.asarray(output.sums))
  # Candidates $, a, b; then a$ aa ab b$ ba bb (frontier a, b); then ab$,
  # ba$ (bb has 1 user, below 3.5).
  np.testing.assert_allclose(sums[0], [0, 11, 12], atol=1e-4)
  np.testing.assert_allclose(sums[1], [2, 0, 9, 7, 4, 1], atol=1e-4)
  np.testing.assert_allclose(sums[2], [9, 4], atol=1e-4)
  words = noisy_process.decode_words(state, pop.alphabet)
  assert list(words) == ["b", "ab", "ba"]  # by round, then by noisy sum
  np.testing.assert_allclose(list(words.values()), [7, 9, 4], atol=1e-4)
  assert np.asarray(state.frontier).shape == (0, 3)  # empty: the run ends


def test_the_central_noise_is_the_seeds_and_has_sigma(tff_context):
  pop = population()
  proc = noisy_process.build_noisy_trie_process(
      pop.alphabet, L, sigma=2.0, threshold=1e6, capacity=4)
  noise = []
  for seed in range(150):
    state = noisy_process.initial_state(L, [seed, 7])
    _, output = central_next(proc, state, client_codes(pop), 2.0, 4)
    noise.append(np.asarray(output.sums) - [0, 11, 12])
    np.testing.assert_array_equal(
        noise[-1], noisy_process.central_noise(state, 2.0, 4)[:3])
  noise = np.concatenate(noise)
  np.testing.assert_array_equal(noise, np.rint(noise))  # integers
  start = noisy_process.initial_state(L, [0, 7])
  again = central_next(proc, start, client_codes(pop), 2.0, 4)
  np.testing.assert_array_equal(np.asarray(again[1].sums) - [0, 11, 12],
                                noise[:3])
  # the seed advances: the next round's noise is another draw
  assert not np.array_equal(noisy_process.central_noise(again[0], 2.0, 4),
                            noisy_process.central_noise(start, 2.0, 4))
  # 450 discrete Gaussian draws of sigma 2 (variance 4 to 1e-8): the mean
  # within 4.5 standard errors, the variance within 25 % (about 5 sd).
  assert abs(noise.mean()) < 4.5 * 2.0 / np.sqrt(noise.size)
  assert 0.75 * 4.0 < noise.var() < 1.25 * 4.0
  fresh = [np.asarray(proc.initialize().noise_seed) for _ in range(2)]
  assert not np.array_equal(*fresh)  # initialize draws a new seed


@pytest.mark.parametrize("chars", [2, 3])
def test_clients_vote_for_the_fast_engines_candidate(tff_context, chars):
  words = ["abc", "a", "cab", "ca", "bbbb", "abca", "b", "cc", "abcab"]
  pop = population(words, max_length=4)
  spec = noisy_process.NoisySpec(num_characters=3, max_length=4,
                                 chars_per_level=chars, capacity=64,
                                 sigma=1e-6, threshold=-1e9)
  proc = noisy_process.build_process(spec)
  state = noisy_process.initial_state(4, [0, 0])
  state, output = central_next(proc, state, client_codes(pop), 1e-6, 64)
  ext = noisy.Extensions.of(3, chars, 4, 0)
  frontier = noisy._Frontier(np.zeros((1, 0), np.int16), np.zeros(1, np.int64))
  cand = noisy._word_candidates(pop, frontier, ext, 0)
  want = np.bincount(cand[pop.user_word][cand[pop.user_word] >= 0],
                     minlength=ext.size)
  assert want.sum() > 5
  np.testing.assert_allclose(output.sums, want, atol=1e-4)
  # Every candidate passed: the frontier is every full extension, the
  # words every one ending in "$" but "$" alone.
  frontier_rows = np.asarray(state.frontier)
  full = np.arange(ext.offsets[chars], ext.size)
  np.testing.assert_array_equal(frontier_rows,
                                ext.decode(full, pop.alphabet.end_code))
  assert len(noisy_process.decode_words(state, pop.alphabet)) == (
      ext.offsets[chars] - 1)


def test_sampled_word_clients_vote_with_the_word_their_rank_draws(
    tff_context):
  pop = population([{"ab": 2, "b": 1}, {"ba": 1, "a": 3}], max_length=L)
  offsets = pop.user_offsets
  packed = [clients.pack_words(pop.codes[pop.entry_word[offsets[u]:
                                                        offsets[u + 1]]],
                               pop.entry_count[offsets[u]:offsets[u + 1]],
                               rank) for u, rank in ((0, 2), (1, 3))]
  words = [pop.vocabulary[pop.entry_word[offsets[0] + 1]],
           pop.vocabulary[pop.entry_word[offsets[1] + 1]]]
  proc = noisy_process.build_noisy_trie_process(
      pop.alphabet, L, sigma=1e-6, threshold=0.5, capacity=8,
      client_data=clients.SAMPLED_WORD)
  state = noisy_process.initial_state(L, [0, 0])
  for _ in range(L + 1):
    state, _ = central_next(proc, state, packed, 1e-6, 8)
  assert sorted(noisy_process.decode_words(state, pop.alphabet)) == sorted(
      words)


def test_the_distributed_noise_releases_the_heavy_words(tff_context):
  pop = population(["ab"] * 40 + ["b"] * 30 + ["ba"] * 3 + ["a"] * 2)
  proc = noisy_process.build_noisy_trie_process(
      pop.alphabet, L, sigma=1.0, threshold=6.0, capacity=8,
      noise=noisy_process.DISTRIBUTED, expected_clients=75)
  state = proc.initialize()
  for _ in range(L + 1):
    state, output = proc.next(state, client_codes(pop))
    assert output.measurements["actual_num_clients"] == 75
    # At least sigma per unit of the rounded sensitivity, as predicted.
    measured = noisy_process.effective_noise_multiplier(output.measurements)
    assert 1.0 <= measured < 1.2
    multiplier = noisy_process.distributed_noise_multiplier(1.0, 75, 20, 8)
    assert measured == pytest.approx(noisy_process._effective_multiplier(  # pylint: disable=protected-access
        multiplier, 75, 20, 8), rel=1e-4)
  assert set(noisy_process.decode_words(state, pop.alphabet)) == {"ab", "b"}


@pytest.mark.parametrize("sigma, clients, dim", [
    (4.63, 10_000, 1024), (1.0, 75, 8), (20.0, 10**6, 65_536)])
def test_the_distributed_noise_is_raised_for_the_rounding(sigma, clients,
                                                          dim):
  effective = functools.partial(noisy_process._effective_multiplier,  # pylint: disable=protected-access
                                clients=clients, bits=20, dim=dim)
  raised = noisy_process.distributed_noise_multiplier(sigma, clients, 20, dim)
  assert effective(raised) >= sigma
  assert effective(raised / 1.01) < sigma or raised == sigma
  if dim > 8:  # rounding many coordinates inflates the sensitivity
    assert effective(sigma) < 0.95 * sigma and raised > 1.05 * sigma


def test_the_distributed_measurements_match_the_prediction(tff_context):
  pop = population(["ab"] * 400 + ["b"] * 300)
  proc = noisy_process.build_noisy_trie_process(
      pop.alphabet, L, sigma=3.0, threshold=6.0, capacity=512,
      noise=noisy_process.DISTRIBUTED, expected_clients=700)
  _, output = proc.next(proc.initialize(), client_codes(pop))
  measured = noisy_process.effective_noise_multiplier(output.measurements)
  multiplier = noisy_process.distributed_noise_multiplier(3.0, 700, 20, 512)
  assert multiplier > 3.0  # raised
  assert 3.0 <= measured == pytest.approx(
      noisy_process._effective_multiplier(multiplier, 700, 20, 512),  # pylint: disable=protected-access
      rel=1e-4)
  # sigma itself would have given less than sigma per unit.
  assert noisy_process._effective_multiplier(3.0, 700, 20, 512) < 3.0  # pylint: disable=protected-access


def test_a_round_beyond_the_capacity_fails(tff_context):
  pop = population()
  proc = noisy_process.build_noisy_trie_process(
      pop.alphabet, L, sigma=1.0, threshold=3.0, capacity=4)
  state = noisy_process.initial_state(L, [0, 0])
  state, _ = central_next(proc, state, client_codes(pop), 1.0,
                          4)  # 3 candidates
  assert np.asarray(state.frontier).shape[0] == 2
  with pytest.raises(runtime.ComputationError, match="capacity=4"):
    central_next(proc, state, client_codes(pop), 1.0, 4)  # 6 candidates


@pytest.mark.parametrize("args, error, match", [
    (dict(sigma=0.0), ValueError,
     "sigma must be a positive finite number, got 0.0"),
    (dict(sigma=-1.0), ValueError, "sigma must be a positive finite number"),
    (dict(sigma=float("nan")), ValueError, "sigma must be a positive finite"),
    (dict(sigma=float("inf")), ValueError,
     "sigma must be a positive finite number, got inf"),
    (dict(sigma="1"), TypeError, "sigma must be a number"),
    (dict(threshold=float("inf")), ValueError, "threshold must be finite"),
    (dict(capacity=2**16 + 1), ValueError, r"capacity \(candidates the "
     r"client vectors hold\) must be in \[1, 65536\], got 65537"),
    (dict(capacity=0), ValueError, "capacity"),
    (dict(noise="laplace"), ValueError, "noise must be one of"),
    (dict(noise="distributed"), ValueError, "expected_clients must be >= 1"),
    (dict(expected_clients=10), ValueError, "expected_clients is for the "
     "'distributed' noise only"),
    (dict(noise="distributed", expected_clients=10, bits=23), ValueError,
     "bits"),
    (dict(client_mode="dataset"), ValueError, "client_data must be one of"),
])
def test_bad_specs_are_one_line_errors_naming_them(args, error, match):
  call = dict(num_characters=2, max_length=2, chars_per_level=1,
              capacity=8, sigma=1.0, threshold=3.0) | args
  with pytest.raises(error, match=match) as raised:
    noisy_process.NoisySpec(**call)
  assert "\n" not in str(raised.value)
