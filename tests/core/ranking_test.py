"""Tests of triehh.core.ranking: the project's one order of words with counts."""

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from triehh.core import ranking

COUNTS = st.dictionaries(st.text(alphabet="abc$'", min_size=1, max_size=4),
                         st.integers(min_value=0, max_value=5), max_size=40)


def test_by_count_orders_by_count_then_word():
  got = ranking.by_count({"b": 2, "a": 2, "c": 5, "d": 0})
  assert list(got.items()) == [("c", 5), ("a", 2), ("b", 2), ("d", 0)]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(COUNTS, st.integers(min_value=1, max_value=50))
def test_top_words_is_the_head_of_the_full_ranking(counts, k):
  # Few distinct counts, so most cases cut through a tie at the k-th place.
  full = sorted(counts, key=lambda w: (-counts[w], w))
  assert ranking.top_words(counts, k) == full[:k]
  assert ranking.ranked_words(counts) == full
