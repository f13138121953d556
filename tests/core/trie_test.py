"""Tests of the tensor-encoded trie and the vote layout."""

import re

from absl.testing import parameterized
import numpy as np

from triehh.core import alphabet as alphabet_lib
from triehh.core import trie as trie_lib


class SelectTest(parameterized.TestCase):

  def test_threshold(self):
    votes = np.array([0, 3, 2, 5, 1])
    np.testing.assert_array_equal(
        trie_lib.select_extensions(votes, 2, num_extensions=5), [1, 2, 3])

  def test_cap_keeps_most_voted_then_smallest_index(self):
    # Two extensions per prefix ("a", "$"): indices 1, 3, 5 end in "$".
    votes = np.array([4, 0, 4, 0, 5, 0, 3, 0, 4, 0])
    np.testing.assert_array_equal(
        trie_lib.select_extensions(votes, 3, max_num_prefixes=3,
                                   num_extensions=2), [0, 2, 4])
    np.testing.assert_array_equal(
        trie_lib.select_extensions(votes, 3, max_num_prefixes=4,
                                   num_extensions=2), [0, 2, 4, 8])

  def test_cap_never_drops_finished_words(self):
    # Three extensions per prefix ("a", "b", "$"): indices 2 and 5 end in "$".
    votes = np.array([2, 9, 3, 9, 4, 1])
    np.testing.assert_array_equal(
        trie_lib.select_extensions(votes, 2, max_num_prefixes=1,
                                   num_extensions=3), [1, 2])
    np.testing.assert_array_equal(
        trie_lib.select_extensions(votes, 1, max_num_prefixes=2,
                                   num_extensions=3), [1, 2, 3, 5])


class GrowTest(parameterized.TestCase):

  def test_layout_and_heavy_hitters(self):
    a = alphabet_lib.Alphabet.of("ab")  # a=0, b=1, $=2
    trie = trie_lib.Trie(a)
    self.assertEqual(trie.num_candidates, 3)
    level, frontier_index = trie.grow(np.array([2, 5, 0]), theta=2,
                                      num_sampled=7)
    self.assertEqual(trie.prefixes(1), ["a", "b"])
    np.testing.assert_array_equal(frontier_index, [0, 1])
    self.assertEqual(trie.num_candidates, 6)
    # Index = prefix * 3 + extension: "a$" = 0*3+2, "ba" = 1*3+0, "bb" = 4.
    level, _ = trie.grow(np.array([0, 0, 3, 2, 1, 0]), theta=2)
    self.assertEqual(trie.prefixes(2), ["ba"])
    np.testing.assert_array_equal(level.parents, [1])
    self.assertEqual(trie.heavy_hitters(), {"a": 3})
    self.assertEqual(trie.frequent_prefixes(), {"ba": 2})
    self.assertIn("a$", trie)
    self.assertIn("ba", trie)
    self.assertNotIn("bb", trie)
    self.assertEqual(level.num_votes, 6)

  def test_grow_at_reads_only_the_given_entries(self):
    a = alphabet_lib.Alphabet.of("ab")  # a=0, b=1, $=2
    trie = trie_lib.Trie(a)
    trie.grow(np.array([2, 5, 0]), theta=2)  # frontier "a", "b"
    # Entries "a$" (2), "ba" (3) and "bb" (4) of the six; the rest are zero.
    level, at = trie.grow_at(np.array([2, 3, 4]), np.array([3, 2, 1]),
                             theta=2, num_sampled=9)
    np.testing.assert_array_equal(at, [1])  # "ba", the second entry given
    self.assertEqual(trie.prefixes(2), ["ba"])
    np.testing.assert_array_equal(level.parents, [1])
    np.testing.assert_array_equal(level.prefix_votes, [2])
    self.assertEqual(trie.heavy_hitters(), {"a": 3})
    self.assertEqual((level.num_votes, level.num_sampled,
                      level.num_candidates), (6, 9, 6))

  def test_grow_at_cap_counts_what_it_removed(self):
    a = alphabet_lib.Alphabet.of("ab")  # a=0, b=1, $=2
    trie = trie_lib.Trie(a)
    # "a" 4, "b" 5, "$" 3 votes: the cap of one keeps "b" and the empty word.
    level, at = trie.grow_at(np.array([0, 1, 2]), np.array([4, 5, 3]),
                             theta=2, max_num_prefixes=1)
    np.testing.assert_array_equal(at, [1])
    self.assertEqual(trie.prefixes(1), ["b"])
    self.assertEqual(level.num_capped, 1)
    self.assertEqual(level.terminated.shape, (1, 1))

  def test_candidate_extensions_follow_the_vote_layout(self):
    a = alphabet_lib.Alphabet.of("ab")
    trie = trie_lib.Trie(a)
    self.assertEqual([a.decode(c) for c in trie.candidate_extensions()],
                     ["a", "b", "$"])
    trie.grow(np.array([2, 5, 0]), theta=2)
    self.assertEqual([a.decode(c) for c in trie.candidate_extensions()],
                     ["aa", "ab", "a$", "ba", "bb", "b$"])

  def test_wrong_vote_shape(self):
    trie = trie_lib.Trie(alphabet_lib.Alphabet.of("ab"))
    with self.assertRaisesRegex(ValueError, "expected"):
      trie.grow(np.zeros(4), theta=1)

  def test_capped_count(self):
    trie = trie_lib.Trie(alphabet_lib.Alphabet.of("abc"))
    level, _ = trie.grow(np.array([5, 5, 5, 0]), theta=1, max_num_prefixes=2)
    self.assertEqual(level.num_capped, 1)
    self.assertEqual(trie.prefixes(1), ["a", "b"])

  def test_cap_applies_to_unfinished_extensions_only(self):
    # TFF's reference semantics: users a x5, ab x4, ac x3, ad x2, all voting,
    # theta 2, cap 2. Round 2 passes "a$" 5, "ab" 4, "ac" 3, "ad" 2: "a$" is
    # a finished word (never capped), of the others the two most voted stay.
    a = alphabet_lib.Alphabet.of("abcd")  # a..d = 0..3, $ = 4
    trie = trie_lib.Trie(a)
    trie.grow(np.array([14, 0, 0, 0, 0]), theta=2, max_num_prefixes=2)
    level, _ = trie.grow(np.array([0, 4, 3, 2, 5]), theta=2,
                         max_num_prefixes=2)
    self.assertEqual(trie.prefixes(2), ["ab", "ac"])
    self.assertEqual(level.num_capped, 1)
    trie.grow(np.array([0, 0, 0, 0, 4, 0, 0, 0, 0, 3]), theta=2,
              max_num_prefixes=2)
    self.assertEqual(trie.heavy_hitters(), {"a": 5, "ab": 4, "ac": 3})

  @parameterized.parameters(None, 3, 1)
  def test_support_gives_the_same_levels(self, cap):
    # Random sparse vote vectors over three rounds: reading only the indices
    # that may hold votes (and a few zeros among them) changes nothing.
    a = alphabet_lib.Alphabet.of("abc")  # $ = 3
    rng = np.random.default_rng(7)
    dense, sparse = trie_lib.Trie(a), trie_lib.Trie(a)
    for _ in range(3):
      size = dense.num_candidates
      votes = np.where(rng.random(size) < 0.6, rng.integers(0, 9, size), 0)
      if dense.depth == 0:
        votes = np.array([5, 6, 0, 4])  # "a", "b" and the empty word
      support = np.flatnonzero(votes | (rng.random(size) < 0.2))
      got = dense.grow(votes, 3, cap, num_sampled=40)
      want = sparse.grow(votes, 3, cap, num_sampled=40, support=support)
      np.testing.assert_array_equal(got[1], want[1])
      for field in ("prefixes", "prefix_votes", "parents", "terminated",
                    "terminated_votes", "terminated_parents"):
        np.testing.assert_array_equal(getattr(got[0], field),
                                      getattr(want[0], field))
        self.assertEqual(getattr(got[0], field).dtype,
                         getattr(want[0], field).dtype)
      for field in ("depth", "num_candidates", "num_sampled", "num_votes",
                    "num_capped"):
        self.assertEqual(getattr(got[0], field), getattr(want[0], field))
      if not dense.frontier.shape[0]:
        break
    self.assertGreaterEqual(dense.depth, 3)


class HeavyHittersTest(parameterized.TestCase):

  @parameterized.parameters(("ab", "$", 0), ("aé日ßz", "$", 1),
                            ("x🙂'Z", "#", 2), ("abc", "é", 3))
  def test_equal_to_decoding_word_by_word_in_the_same_order(self, chars, end,
                                                           seed):
    # Random votes over several levels, with many ties in the counts, so
    # the order of words with equal votes is exercised.
    rng = np.random.default_rng(seed)
    trie = trie_lib.Trie(alphabet_lib.Alphabet.of(chars, end))
    for _ in range(4):
      votes = rng.integers(0, 4, size=trie.num_candidates)
      level, _ = trie.grow(votes, theta=1)
      if not level.prefixes.shape[0]:
        break
    want = {}
    for level in trie.levels:
      for codes, v in zip(level.terminated, level.terminated_votes):
        want[trie.alphabet.decode_word(codes)] = int(v)
    want = sorted(want.items(), key=lambda item: (-item[1], item[0]))
    got = trie.heavy_hitters()
    self.assertGreater(len(got), 3)
    self.assertEqual(list(got.items()), want)
    self.assertTrue(all(type(v) is int for v in got.values()))

  def test_votes_far_apart_keep_the_order(self):
    # Ties among votes within 2^16 of the smallest and among votes far
    # above them (two sorts), across levels.
    rng = np.random.default_rng(4)
    trie = trie_lib.Trie(alphabet_lib.Alphabet.of("abc"))
    for _ in range(4):
      votes = rng.choice([0, 1, 2, 70_000, 70_001, 2**40],
                         size=trie.num_candidates)
      level, _ = trie.grow(votes, theta=1)
      if not level.prefixes.shape[0]:
        break
    want = {}
    for level in trie.levels:
      for codes, v in zip(level.terminated, level.terminated_votes):
        want[trie.alphabet.decode_word(codes)] = int(v)
    got = trie.heavy_hitters()
    self.assertGreater(len({v for v in got.values() if v >= 2**16}), 1)
    self.assertEqual(list(got.items()),
                     sorted(want.items(), key=lambda kv: (-kv[1], kv[0])))

  def test_the_empty_word_and_no_words(self):
    trie = trie_lib.Trie(alphabet_lib.Alphabet.of("ab"))
    self.assertEqual(trie.heavy_hitters(), {})
    trie.grow(np.array([0, 1, 5]), theta=2)  # "$" alone: the empty word
    self.assertEqual(trie.heavy_hitters(), {"": 5})

  def test_deep_words_over_a_large_alphabet(self):
    # 3,000 symbols take 12 bits each, so words of 9 characters span two
    # sort keys; sparse votes keep the trie small.
    rng = np.random.default_rng(7)
    chars = [chr(0x4E00 + i) for i in range(3000)]
    trie = trie_lib.Trie(alphabet_lib.Alphabet.of(chars))
    a = trie.alphabet.num_extensions
    for _ in range(10):
      frontier = trie.num_candidates // a
      votes = np.zeros(trie.num_candidates, np.int64)
      for p in range(frontier):
        votes[p * a + rng.choice(a - 1, size=2, replace=False)] = 3
        votes[p * a + a - 1] = rng.integers(0, 6)  # finish some words here
      trie.grow(votes, theta=2, max_num_prefixes=4)
    want = {}
    for level in trie.levels:
      for codes, v in zip(level.terminated, level.terminated_votes):
        want[trie.alphabet.decode_word(codes)] = int(v)
    self.assertGreater(max(map(len, want)), 7)
    self.assertEqual(list(trie.heavy_hitters().items()),
                     sorted(want.items(), key=lambda kv: (-kv[1], kv[0])))


class ArgumentsTest(parameterized.TestCase):
  """Bad arguments fail naming them; ``in`` is False for a non-string."""

  def grown(self) -> trie_lib.Trie:
    trie = trie_lib.Trie(alphabet_lib.Alphabet.of("ab"))  # a=0, b=1, $=2
    trie.grow(np.array([2, 5, 0]), theta=2)  # "a", "b"
    trie.grow(np.array([0, 0, 3, 2, 1, 0]), theta=2)  # "a$", "ba"
    return trie

  @parameterized.parameters(None, "abc", (("a", "b"),))
  def test_a_trie_needs_an_alphabet(self, alphabet):
    with self.assertRaisesRegex(
        TypeError, f"^alphabet must be a triehh.Alphabet .*, got "
        f"{re.escape(repr(alphabet))}$"):
      trie_lib.Trie(alphabet)

  @parameterized.parameters(5, None, b"a", (("a",),), 1.5)
  def test_a_non_string_is_not_in_the_trie(self, value):
    trie = self.grown()
    self.assertIn("a", trie)
    self.assertNotIn(value, trie)

  @parameterized.parameters((3, ValueError, "must be at most the trie's "
                             "depth, 2, got 3"),
                            (100, ValueError, "must be at most the trie's "
                             "depth, 2, got 100"),
                            (0, ValueError, "must be >= 1, got 0"),
                            (-1, ValueError, "must be >= 1, got -1"),
                            (1.0, TypeError, "must be an integer, got 1.0"))
  def test_a_depth_outside_the_trie_is_refused(self, depth, error, message):
    with self.assertRaisesRegex(error, f"^depth {message}"):
      self.grown().prefixes(depth)

  def test_depths_of_the_trie_and_numpy_depths(self):
    trie = self.grown()
    self.assertEqual(trie.prefixes(1), ["a", "b"])
    self.assertEqual(trie.prefixes(np.int64(2)), ["ba"])
    with self.assertRaisesRegex(ValueError, "trie's depth, 0, got 1"):
      trie_lib.Trie(trie.alphabet).prefixes(1)
