"""Tests of triehh.core.ranking: the project's one order of words with counts."""

import math

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest

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


@settings(max_examples=200, derandomize=True, deadline=None)
@given(COUNTS, st.lists(st.integers(min_value=1, max_value=50), min_size=1,
                        max_size=4))
def test_ranked_counts_serve_any_sequence_of_k_as_top_words(counts, ks):
  # Small k first then larger ones, and the reverse: the remembered ranking
  # must never serve a head shorter than asked or from another order.
  ranked = ranking.RankedCounts(counts)
  for k in ks:
    assert ranked.top(k) == ranking.top_words(counts, k)
  assert ranked == counts


def test_ranked_counts_rank_once(monkeypatch):
  calls = []
  real = ranking.top_words
  monkeypatch.setattr(ranking, "top_words",
                      lambda c, k: calls.append(k) or real(c, k))
  ranked = ranking.RankedCounts({f"w{i}": i % 7 for i in range(1000)})
  for _ in range(5):
    ranked.top(100)
    ranked.top(10)
  assert calls == [100]


def test_ranked_counts_are_read_only_and_survive_pickle_and_json():
  import json  # pylint: disable=g-import-not-at-top
  import pickle  # pylint: disable=g-import-not-at-top
  ranked = ranking.RankedCounts({"a": 2, "b": 3})
  ranked.top(1)
  for change in (lambda d: d.__setitem__("c", 1), lambda d: d.pop("a"),
                 lambda d: d.update(c=1), lambda d: d.clear(),
                 lambda d: d.setdefault("c", 1), lambda d: d.popitem(),
                 lambda d: d.__delitem__("a")):
    try:
      change(ranked)
    except TypeError:
      pass
    else:
      raise AssertionError("changed a RankedCounts")
  assert ranked == {"a": 2, "b": 3}
  copy = pickle.loads(pickle.dumps(ranked))
  assert type(copy) is ranking.RankedCounts and copy == ranked
  assert copy.top(2) == ["b", "a"]
  assert json.loads(json.dumps(ranked)) == {"a": 2, "b": 3}


def test_check_weights_names_the_mapping_and_the_word():
  ranking.check_weights("truth", {"a": 0, "b": 2.5, "c": np.int64(3)})
  ranking.check_weights("truth", {})
  for counts, error, match in [
      ({"a": 1, "b": math.nan}, ValueError, r"truth\['b'\] must be a number "
       ">= 0, got nan"),
      ({"a": np.float64("nan")}, ValueError, r"truth\['a'\] must be"),
      ({"a": -1}, ValueError, r"truth\['a'\] must be a number >= 0, got -1"),
      ({"a": 1, "b": "2"}, TypeError, r"truth\['b'\] must be a number, got "
       "'2'"),
      ({"a": [1]}, TypeError, r"truth\['a'\] must be a number, got \[1\]")]:
    with pytest.raises(error, match=match):
      ranking.check_weights("truth", counts)


def test_ranked_counts_are_checked_once_when_first_ranked(monkeypatch):
  calls = []
  real = ranking.check_weights
  monkeypatch.setattr(ranking, "check_weights",
                      lambda name, c: calls.append(name) or real(name, c))
  ranked = ranking.RankedCounts({"a": 2, "b": 3})
  assert calls == []  # building one costs no pass over the counts
  for _ in range(3):
    ranked.top(1)
    ranked.top(2)
    ranked.positive()
  assert calls == ["truth"]
  bad = ranking.RankedCounts({"a": 2, "b": math.nan})
  with pytest.raises(ValueError, match=r"truth\['b'\]"):
    bad.positive()
  with pytest.raises(ValueError, match=r"truth\['b'\]"):
    bad.top(1)
