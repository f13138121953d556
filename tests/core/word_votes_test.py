"""The found words' dict: ranked by votes then alphabet, decoded two ways.

``word_votes.ranked`` must give :func:`triehh.core.ranking.by_count`'s
order, and the compiled pass (``triehh/core/_compiled_word_votes.pyx``,
where the package was built with it) the very dict numpy's path builds,
in the same order, for any alphabet. Tests of the compiled pass skip where
it was not built (Bazel's sandbox runs the sources).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from triehh.core import alphabet as alphabet_lib
from triehh.core import ranking
from triehh.core import trie as trie_lib
from triehh.core import word_votes

compiled = word_votes.compiled
needs_compiled = pytest.mark.skipif(
    compiled is None, reason="the package was installed without its "
    "compiled word votes (no C compiler or Cython, or a Bazel sandbox)")

# ASCII, Latin-1, Cyrillic and astral characters, in code point order.
_CHARACTERS = sorted("'-abz" + "éÿ" + "жя" + "\U0001F600")


def _matrix(words: list[str], characters: list[str], width: int):
  code = {c: i for i, c in enumerate(characters)}
  rows = np.full((len(words), width), -1, dtype=np.int32)
  for i, word in enumerate(words):
    rows[i, :len(word)] = [code[c] for c in word]
  lengths = np.array([len(w) for w in words], dtype=np.int64)
  points = np.array([ord(c) for c in characters] + [ord("$")],
                    dtype=np.uint32)
  return points, rows, lengths


_WORDS = st.lists(st.text(alphabet=_CHARACTERS, max_size=7), unique=True,
                  max_size=60)


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(words=_WORDS, data=st.data())
def test_ranked_is_by_count_and_both_paths_build_it(words, data):
  votes = np.array(data.draw(st.lists(
      st.integers(0, 2**40), min_size=len(words), max_size=len(words))),
                   dtype=np.int64)
  points, rows, lengths = _matrix(words, _CHARACTERS, max(
      [len(w) for w in words] + [1]))
  order = word_votes.ranked(rows, votes, len(points))
  want = ranking.by_count(dict(zip(words, votes.tolist())))
  got = word_votes.numpy_votes_dict(points, rows, lengths, votes, order)
  assert list(got.items()) == list(want.items())
  if compiled is not None:
    assert list(compiled.votes_dict(points, rows[order], lengths[order],
                                    votes[order]).items()) == list(want.items())


def test_long_words_rank_by_their_lexicographic_order():
  # 30 symbols over 20 positions overflow a 63-bit key: the lexsort path.
  characters = [chr(ord("a") + i) for i in range(26)] + list("éжяё")
  characters.sort()
  rng = np.random.default_rng(7)
  words = sorted({"".join(rng.choice(characters, size=rng.integers(1, 21)))
                  for _ in range(300)} | {"a" * 20, "a" * 19, "a"})
  votes = rng.integers(1, 4, size=len(words)).astype(np.int64)
  points, rows, lengths = _matrix(words, characters, 20)
  assert (len(points) + 1) ** 20 >= 2**63
  order = word_votes.ranked(rows, votes, len(points))
  assert list(word_votes.votes_dict(points, rows, lengths, votes, order)
             ) == list(ranking.by_count(dict(zip(words, votes.tolist()))))


def test_votes_far_apart_keep_the_order():
  # Votes spread over more than 2^16 take the merge sort beside the radix.
  words = ["b", "a", "c", "d"]
  votes = np.array([5, 2**20, 5, 2**40], dtype=np.int64)
  points, rows, lengths = _matrix(words, list("abcd"), 1)
  order = word_votes.ranked(rows, votes, len(points))
  assert [words[i] for i in order] == ["d", "a", "b", "c"]


@needs_compiled
def test_compiled_refuses_codes_and_lengths_outside_its_arrays():
  points, rows, lengths = _matrix(["ab", "b"], list("ab"), 2)
  votes = np.array([3, 4], dtype=np.int64)
  bad = rows.copy()
  bad[1, 0] = 3  # beyond the three symbols
  with pytest.raises(ValueError, match="row 1 holds code 3, outside the 3 "):
    compiled.votes_dict(points, bad, lengths, votes)
  with pytest.raises(ValueError, match="row 0 has length 3, outside 0 .. 2"):
    compiled.votes_dict(points, rows, np.array([3, 1]), votes)
  with pytest.raises(ValueError, match="one entry per word"):
    compiled.votes_dict(points, rows, lengths[:1], votes)


@pytest.mark.parametrize("path", ["compiled", "numpy"])
def test_a_trie_gives_the_dict_of_its_words_one_by_one(path, monkeypatch):
  if path == "numpy":
    monkeypatch.setattr(word_votes, "compiled", None)
  elif compiled is None:
    pytest.skip("the package was installed without its compiled word votes")
  alphabet = alphabet_lib.Alphabet.of("abé")
  trie = trie_lib.Trie(alphabet)
  rng = np.random.default_rng(3)
  for _ in range(4):
    votes = rng.integers(0, 6, size=trie.num_candidates)
    trie.grow(votes, theta=2)
  want = trie._heavy_hitters_one_by_one()  # pylint: disable=protected-access
  assert want  # the seed finds words
  assert list(trie.heavy_hitters().items()) == list(want.items())


@pytest.mark.parametrize("dtype", [np.int8, np.int32])
def test_many_rows_get_the_keys_of_the_matrix_product(dtype):
  # From 4,096 rows the keys are summed column by column (no int64 copy of
  # the rows); they must be the matrix product's.
  rng = np.random.default_rng(5)
  rows = rng.integers(0, 27, size=(5000, 10)).astype(dtype)
  rows[np.arange(10) >= rng.integers(1, 11, size=5000)[:, None]] = -1
  powers = 29 ** np.arange(9, -1, -1, dtype=np.int64)
  want = (rows.astype(np.int64) + 1) @ powers
  got = word_votes._alphabetical_keys(rows, 28)  # pylint: disable=protected-access
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(
      word_votes._alphabetical_keys(rows[:100], 28), want[:100])  # pylint: disable=protected-access


@needs_compiled
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_compiled_ranking_of_sorted_runs_is_the_two_numpy_sorts(data):
  # Runs of increasing keys (a trie's levels), votes near and far apart.
  sizes = data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=6))
  keys = data.draw(st.lists(st.integers(0, 2**62), min_size=sum(sizes),
                            max_size=sum(sizes), unique=True))
  runs, at = [], 0
  for size in sizes:
    runs.append(sorted(keys[at:at + size]))
    at += size
  keys = np.array([k for run in runs for k in run], dtype=np.int64)
  votes = np.array(data.draw(st.lists(
      st.one_of(st.integers(0, 3), st.integers(0, 2**45)),
      min_size=keys.size, max_size=keys.size)), dtype=np.int64)
  starts = np.cumsum([0] + sizes[:-1]).astype(np.int64)
  alphabetical = np.argsort(keys, kind="stable")
  want = alphabetical[word_votes._descending(votes[alphabetical])]  # pylint: disable=protected-access
  np.testing.assert_array_equal(compiled.ranked(keys, votes, starts), want)


@needs_compiled
def test_compiled_ranking_refuses_runs_that_do_not_increase():
  keys = np.array([1, 5, 3], dtype=np.int64)
  votes = np.array([1, 1, 1], dtype=np.int64)
  with pytest.raises(ValueError, match="keys must increase within each run"):
    compiled.ranked(keys, votes, np.array([0], dtype=np.int64))
  with pytest.raises(ValueError, match="votes must be >= 0"):
    compiled.ranked(keys, -votes, np.array([0, 2], dtype=np.int64))
  with pytest.raises(ValueError, match="run_starts must be increasing"):
    compiled.ranked(keys, votes, np.array([0, 2, 1], dtype=np.int64))
