"""Tests of the reproduction's numbers: curves, intervals, Table 1."""

import math

import numpy as np
import pytest
from scipy import stats

from reports.reproduction import numbers

TRUTH = {"a": 10.0, "b": 8.0, "c": 5.0, "d": 1.0}


def series(discovered, truth=TRUTH, **extra):
  records = [{"discovered": d, "max_length": 9, **extra} for d in discovered]
  return numbers.Series("triehh", "single", 1.0, None, records, truth,
                        n=int(sum(truth.values())))


def test_recall_and_paper_f1_curves_by_hand():
  s = series([["a", "c", "zz"], ["b"]])
  recall = numbers.recall_curves(s, 4)
  np.testing.assert_allclose(recall, [[1, 1 / 2, 2 / 3, 1 / 2],
                                      [0, 1 / 2, 1 / 3, 1 / 4]])
  f1 = numbers.f1_paper_curves(s, 4)
  np.testing.assert_allclose(f1[0], [1, 2 / 3, 0.8, 2 / 3])


def test_mean_ci_is_the_student_t_interval():
  mean, half = numbers.mean_ci(np.array([[1.0], [3.0]]))
  # s = sqrt(2), r = 2: t_{0.975, 1} * sqrt(2) / sqrt(2) = 12.7062...
  assert mean[0] == 2.0
  assert half[0] == pytest.approx(12.7062047, rel=1e-6)
  _, half = numbers.mean_ci(np.array([[0.5]]))
  assert math.isnan(half[0])
  with pytest.raises(ValueError, match="at least one run"):
    numbers.mean_ci(np.zeros((0, 3)))


def test_within_and_format():
  assert numbers.within(0.65, 0.7, 0.06)
  assert not numbers.within(0.65, 0.76, 0.01)
  assert numbers.within(1.0, 1.0, math.nan)
  assert numbers.fmt(0.756, 0.0123) == "0.76 ± 0.01"
  assert numbers.fmt(0.5, math.nan) == "0.50"


def test_discovery_by_frequency_shares_per_bin():
  truth = {"aaa": 600.0, "bbb": 300.0, "ccc": 100.0}
  s = series([["aaa", "bbb"], ["aaa"]], truth=truth, n_users=1000,
             batch_size=100, theta=5, levels=4)
  mids, mean, _, counts, bound = numbers.discovery_by_frequency(
      s, num_bins=3)
  # Bins are log-spaced from 0.1 to 0.6; each word falls in its own bin.
  np.testing.assert_array_equal(counts, [1, 1, 1])
  np.testing.assert_allclose(mean, [0.0, 0.5, 1.0])
  assert np.all(np.diff(mids) > 0)
  # Proposition 2 for ccc (100 of 1000 users, batch 100, theta 5, 4
  # levels): P(hypergeometric >= 5) ** 4, by scipy; rising with the count.
  assert bound[0] == pytest.approx(stats.hypergeom(1000, 100, 100).sf(4)**4)
  assert np.all(np.diff(bound) >= 0) and bound[-1] <= 1


def test_table1_reproduces_the_papers_thetas():
  rows = numbers.table1_rows()
  assert [r["n"] for r in rows] == [10**4, 10**5, 10**6, 10**7]
  for row in rows:
    paper, ours = row["paper"], row["ours"]
    assert (ours[0], ours[2]) == (paper[0], paper[2])
    assert ours[1] == pytest.approx(paper[1], abs=0.011)
    assert ours[3] == pytest.approx(paper[3], abs=0.011)
