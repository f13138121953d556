"""Tests of triehh.engines.tff.computations: client votes, server update, process."""

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

from triehh.core import alphabet as alphabet_lib
from triehh.core import trie as trie_lib
from triehh.engines.tff import computations

L = 4
A1 = 4  # alphabet "abc" (codes 0-2) plus the end symbol (code 3)
END = 3
ALPHABET = alphabet_lib.Alphabet(("a", "b", "c"))


def word(*codes):
  return np.array(list(codes) + [-1] * (L + 1 - len(codes)), dtype=np.int32)


def state(frontier, *, theta=1, cap=0, sub_rounds=1, round_num=0,
          accumulated=(), found=np.zeros((0, L + 1), np.int32),
          counts=np.zeros(0, np.int32)):
  return computations.ServerState(
      frontier=np.asarray(frontier, dtype=np.int32),
      heavy_hitters=found, heavy_hitter_counts=counts,
      accumulated_votes=np.asarray(accumulated, dtype=np.int32),
      round_num=round_num, theta=theta, max_num_prefixes=cap,
      num_sub_rounds=sub_rounds)


# ---- client votes ------------------------------------------------------------


def test_one_word_client_votes_one_hot_or_zeros(tff_context):
  spec = computations.ProcessSpec(A1, L, vote_capacity=4)
  votes = computations.client_votes_computation(spec)
  frontier = np.array([[0, 1], [2, 0], [2, 2]], dtype=np.int32)
  cases = {
      (2, 0, END): 1 * A1 + END,  # "ca" + end symbol
      (2, 2, 1, END): 2 * A1 + 1,  # "cc" + "b"
      (0, 1, 0, 0): 0 * A1 + 0,  # a truncated word still votes
      (1, 1, END): None,  # "bb" is not on the frontier
      (0, 1): None,  # "ab" has no third symbol (truncated at L=2 chars)
      (0, END): None,  # shorter than the frontier prefixes
  }
  for codes, index in cases.items():
    got = votes(frontier, word(*codes))
    assert got.shape == (4 * A1,) and got.dtype == np.int32
    expected = np.zeros(4 * A1, dtype=np.int32)
    if index is not None:
      expected[index] = 1
    np.testing.assert_array_equal(got, expected, err_msg=str(codes))
  root = np.zeros((1, 0), dtype=np.int32)
  assert votes(root, word(1, END)).tolist() == [0, 1, 0, 0] + [0] * 12
  empty = np.zeros((0, 3), dtype=np.int32)
  assert not votes(empty, word(0, 1, 2, END)).any()


def test_sampled_word_client_picks_the_word_of_its_rank(tff_context):
  spec = computations.ProcessSpec(A1, L, vote_capacity=1,
                                  client_mode=computations.SAMPLED_WORD)
  votes = computations.client_votes_computation(spec)
  root = np.zeros((1, 0), dtype=np.int32)
  codes = np.stack([word(0, END), word(1, END), word(2, END)])
  counts = np.array([2, 1, 3], dtype=np.int64)
  # Cumulative counts 2, 3, 6: ranks 0-1 -> a, 2 -> b, 3-5 -> c.
  for rank, symbol in enumerate([0, 0, 1, 2, 2, 2]):
    got = votes(root, computations.pack_words(codes, counts, rank))
    assert got.tolist() == [int(s == symbol) for s in range(A1)], rank


def test_top_words_client_votes_with_its_most_frequent_words(tff_context):
  root = np.zeros((1, 0), dtype=np.int32)
  codes = np.stack([word(0, END), word(1, END), word(2, END), word(0, 0, END)])
  counts = np.array([2, 5, 2, 1], dtype=np.int64)
  expected = {1: [0, 1, 0, 0],  # b (5)
              2: [1, 1, 0, 0],  # b, then a (ties with c: the earlier word)
              3: [1, 1, 1, 0],
              10: [2, 1, 1, 0]}  # every word; "a" and "aa" both vote "a"
  for contribution, want in expected.items():
    spec = computations.ProcessSpec(
        A1, L, vote_capacity=1, client_mode=computations.TOP_WORDS,
        max_user_contribution=contribution)
    votes = computations.client_votes_computation(spec)
    got = votes(root, computations.pack_words(codes, counts))
    assert got.tolist() == want, contribution


# ---- server update -------------------------------------------------------------


def _trie_with_frontier(frontier):
  trie = trie_lib.Trie(ALPHABET)
  depth = frontier.shape[1]
  if depth:
    empty = np.zeros(0, dtype=np.int64)
    trie.levels.append(trie_lib.TrieLevel(
        depth=depth, prefixes=frontier, prefix_votes=empty,
        parents=np.zeros(frontier.shape[0], dtype=np.int32),
        terminated=np.zeros((0, depth), dtype=np.int32),
        terminated_votes=empty, terminated_parents=np.zeros(0, np.int32),
        num_candidates=0, num_sampled=0, num_votes=0))
  return trie


def _random_frontier(rng, depth):
  rows = {tuple(rng.integers(0, A1 - 1, size=depth))
          for _ in range(rng.integers(1, 6))}
  return np.array(sorted(rows), dtype=np.int32).reshape(-1, depth)


def test_server_update_grows_the_trie_exactly_like_trie_grow(tff_context):
  update = computations.server_update_computation(A1, L)
  rng = np.random.default_rng(7)
  found = np.array([word(1, END)], dtype=np.int32)
  checked_caps = 0
  for case in range(24):
    depth = int(rng.integers(0, L + 1))
    frontier = (np.zeros((1, 0), np.int32) if depth == 0
                else _random_frontier(rng, depth))
    k = frontier.shape[0]
    votes = rng.integers(0, 5, size=k * A1).astype(np.int32)
    theta = int(rng.integers(1, 4))
    cap = int(rng.integers(0, 4))  # 0: no cap
    padded = np.concatenate([votes, np.zeros(2 * A1, np.int32)])
    new, out = update(state(frontier, theta=theta, cap=cap, found=found,
                            counts=np.array([9], np.int32)), padded)
    trie = _trie_with_frontier(frontier)
    level, _ = trie.grow(votes.astype(np.int64), theta, cap or None)
    checked_caps += level.num_capped > 0
    assert out.level_done and out.votes.tolist() == votes.tolist()
    np.testing.assert_array_equal(
        np.asarray(new.frontier).reshape(-1, depth + 1), level.prefixes)
    terminated = np.full((level.terminated.shape[0], L + 1), -1, np.int32)
    terminated[:, :depth + 1] = level.terminated
    np.testing.assert_array_equal(new.heavy_hitters,
                                  np.concatenate([found, terminated]))
    assert new.heavy_hitter_counts.tolist() == (
        [9] + level.terminated_votes.tolist()), case
    assert new.accumulated_votes.size == 0 and new.round_num == 1
  assert checked_caps >= 3  # the cap and its tie-breaking were exercised


def test_cap_keeps_finished_words_like_tffs_reference(tff_context):
  # Frontier "a"; votes "aa" 0, "ab" 4, "ac" 3, "a$" 5 (users a x5, ab x4,
  # ac x3). Theta 2, cap 1: the finished word "a" is never capped, of the
  # unfinished extensions only the most voted, "ab", stays.
  update = computations.server_update_computation(A1, L)
  new, _ = update(state(np.array([[0]]), theta=2, cap=1),
                  np.array([0, 4, 3, 5], np.int32))
  assert np.asarray(new.frontier).tolist() == [[0, 1]]
  assert new.heavy_hitters.tolist() == [[0, END, -1, -1, -1]]
  assert new.heavy_hitter_counts.tolist() == [5]


def test_sub_rounds_accumulate_before_thresholding(tff_context):
  update = computations.server_update_computation(A1, L)
  frontier = np.array([[0], [2]], dtype=np.int32)
  s = state(frontier, theta=3, sub_rounds=3)
  parts = [np.array(v, np.int32) for v in ([1, 0, 2, 0, 0, 0, 1, 0],
                                           [1, 0, 0, 0, 0, 0, 1, 1],
                                           [1, 0, 0, 0, 0, 0, 1, 2])]
  for i, part in enumerate(parts):
    s, out = update(s, part)
    assert out.votes.tolist() == sum(parts[:i + 1]).tolist()
    assert bool(out.level_done) == (i == 2)
  assert np.asarray(s.frontier).tolist() == [[0, 0], [2, 2]]
  assert s.heavy_hitters.tolist() == [[2, END, -1, -1, -1]]
  assert s.heavy_hitter_counts.tolist() == [3]
  assert s.round_num == 3


def test_server_update_rejects_votes_outside_the_candidates(tff_context):
  from triehh.engines.tff import runtime  # pylint: disable=g-import-not-at-top
  update = computations.server_update_computation(A1, L)
  votes = np.zeros(2 * A1, np.int32)
  votes[A1 + 1] = 1  # the frontier has one prefix: entries >= A1 are outside
  with pytest.raises(runtime.ComputationError,
                     match="votes outside the candidate extensions"):
    update(state(np.zeros((1, 0), np.int32)), votes)


# ---- the process ---------------------------------------------------------------


def test_process_initializes_the_root_and_runs_a_level(tff_context):
  spec = computations.ProcessSpec(A1, L, vote_capacity=1)
  process = computations.build_process(spec, theta=2, max_num_prefixes=5,
                                       num_sub_rounds=1)
  s = process.initialize()
  assert np.asarray(s.frontier).shape == (1, 0)
  assert (s.theta, s.max_num_prefixes, s.num_sub_rounds, s.round_num) == (
      2, 5, 1, 0)
  s, out = process.next(s, [word(0, END), word(0, 1, END), word(2, END)])
  assert out.votes.tolist() == [2, 0, 1, 0] and out.level_done
  assert np.asarray(s.frontier).tolist() == [[0]]


def test_packed_words_layout_and_checks():
  packed = computations.pack_words(np.stack([word(0, END), word(2, END)]),
                                   np.array([2, 3]), rank=4)
  assert packed.dtype == np.int32 and packed.shape == (3, L + 2)
  assert packed[0].tolist() == [4] + [0] * (L + 1)
  assert packed[1].tolist() == word(0, END).tolist() + [2]
  assert packed[2].tolist() == word(2, END).tolist() + [5]
  with pytest.raises(ValueError, match="rank 5 is outside"):
    computations.pack_words(np.stack([word(0, END)]), np.array([5]), rank=5)
  with pytest.raises(ValueError, match="2\\*\\*31"):
    computations.pack_words(np.stack([word(0, END)] * 2),
                            np.array([2**30, 2**30]))


def test_invalid_specs_and_parameters_are_rejected():
  with pytest.raises(ValueError, match="num_extensions"):
    computations.ProcessSpec(1, L, 1)
  with pytest.raises(ValueError, match="vote_capacity"):
    computations.ProcessSpec(A1, L, 0)
  with pytest.raises(ValueError, match="client_mode"):
    computations.ProcessSpec(A1, L, 1, client_mode="two_words")
  with pytest.raises(ValueError, match="secure_sum_bitwidth"):
    computations.ProcessSpec(A1, L, 1, secure_sum_bitwidth=40)
  with pytest.raises(ValueError, match="theta"):
    computations.initialize_computation(L, theta=0)
  with pytest.raises(ValueError, match="max_num_prefixes"):
    computations.initialize_computation(L, theta=1, max_num_prefixes=0)
  with pytest.raises(ValueError, match="int32"):
    computations.initialize_computation(L, theta=2**31)
