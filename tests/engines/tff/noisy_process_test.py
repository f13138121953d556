"""Tests of triehh.engines.tff.noisy_process: the noisy trie's TFF process."""

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


def test_the_distributed_sums_are_votes_plus_shares_modulo_2_bits(
    tff_context):
  """Each client adds its share modulo 2^bits; the server reads the secure
  sum modulo 2^bits as a signed integer: a sum beyond 2^(bits-1) wraps."""
  pop = population(["a"] * 3 + ["b"] * 2)
  proc = noisy_process.build_noisy_trie_process(
      pop.alphabet, L, sigma=1.0, threshold=-100.0, capacity=4,
      noise=noisy_process.DISTRIBUTED, bits=4)
  shares = np.zeros((5, 4), dtype=np.int64)
  shares[:, 0] = [1, -2, 0, 3, 1]  # "$": no vote + 3
  shares[:, 1] = [2, 2, 2, 1, 1]  # "a": 3 votes + 8 = 11, wraps to -5
  shares[:, 2] = [-1, -1, -1, -1, -4]  # "b": 2 votes - 8 = -6
  state = noisy_process.initial_state(L, [0, 0])
  _, output = proc.next(state, client_codes(pop), list(shares))
  np.testing.assert_array_equal(np.asarray(output.sums), [3, -5, -6])


def test_client_shares_are_skellam_draws_in_the_candidates_only():
  import fractions  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  shares = noisy_process.client_shares(rng, fractions.Fraction(1, 2), 3000,
                                       8, 5)
  assert shares.shape == (3000, 8) and not shares[:, 5:].any()
  assert abs(shares[:, :5].var() - 1.0) < 0.05  # variance 2 x 1/2
  with pytest.raises(ValueError, match="num_candidates=9"):
    noisy_process.client_shares(rng, fractions.Fraction(1, 2), 3, 8, 9)


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
    (dict(noise="distributed", bits=32), ValueError, "bits"),
    (dict(noise="distributed", bits=1), ValueError, "bits"),
    (dict(client_mode="dataset"), ValueError, "client_data must be one of"),
])
def test_bad_specs_are_one_line_errors_naming_them(args, error, match):
  call = dict(num_characters=2, max_length=2, chars_per_level=1,
              capacity=8, sigma=1.0, threshold=3.0) | args
  with pytest.raises(error, match=match) as raised:
    noisy_process.NoisySpec(**call)
  assert "\n" not in str(raised.value)
