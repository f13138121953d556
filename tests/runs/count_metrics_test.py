"""Tests of the count metrics (triehh/runs/count_metrics.py)."""

import pytest

from triehh.core import results
from triehh.runs import count_metrics

_TRUTH = {"a": 100.0, "b": 50.0, "c": 20.0, "d": 10.0}


def test_count_error_is_the_median_capped_relative_error_of_the_true_top_k():
  estimates = {"a": 110.0, "b": 49.0, "c": 80.0, "zz": 5.0}
  got = count_metrics.count_metrics(estimates, _TRUTH, (1, 2, 3, 4))
  # a: 0.1, b: 0.02, c: capped at 1 (3.0), d: not found (1).
  assert got == pytest.approx({"count_error@1": 0.1, "count_error@2": 0.06,
                               "count_error@3": 0.1, "count_error@4": 0.55})


def test_relative_errors_are_capped_at_one_and_one_when_not_found():
  got = count_metrics.relative_errors({"a": 250.0, "b": 45.0}, _TRUTH,
                                      ["a", "b", "d"])
  assert got.tolist() == [1.0, pytest.approx(0.1), 1.0]


def test_coverage_is_the_share_of_found_top_words_whose_interval_holds():
  intervals = {"a": (90.0, 99.0), "b": (45.0, 55.0), "d": (10.0, 12.0)}
  got = count_metrics.count_metrics({w: 0.0 for w in intervals}, _TRUTH,
                                    (1, 2, 4), intervals)
  assert got["count_coverage@1"] == 0.0
  assert got["count_coverage@2"] == 0.5
  assert got["count_coverage@4"] == pytest.approx(2 / 3)  # c not found


def test_no_coverage_without_a_found_top_word():
  got = count_metrics.count_metrics({}, _TRUTH, (2,), {"d": (0.0, 20.0)})
  assert got == {"count_error@2": 1.0}


def test_protected_count_metrics_read_a_word_counts():
  counts = results.WordCounts(
      words=("b", "a"), estimate=(50.5, 90.0), lower=(48.0, 85.0),
      upper=(53.0, 95.0), other_estimate=0.0, other_lower=0.0,
      other_upper=0.0, noisy_sums=(50.5, 90.0, 0.0), n=180, confidence=0.9,
      noise_std=1.0, sample_rate=1.0, epsilon=1.0, delta=1e-6,
      counting_epsilon=1.0, counting_delta=1e-6, discovery_epsilon=None,
      discovery_delta=None, accounting="x")
  got = count_metrics.protected_count_metrics(counts, _TRUTH, (2,))
  assert got == pytest.approx({"count_error@2": (0.1 + 0.01) / 2,
                               "count_coverage@2": 0.5})


def test_ks_of_a_records_metrics():
  assert count_metrics.ks_of({"recall@50": 1, "precision@10": 1,
                              "recall@10": 0, "precision": 1}) == [10, 50]
