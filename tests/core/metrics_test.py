"""Tests of the utility metrics."""

from absl.testing import parameterized
import pytest
import numpy as np

from triehh.core import metrics
from triehh.core import ranking

TRUTH = {"a": 10, "b": 8, "c": 8, "d": 5, "e": 1}


class MetricsTest(parameterized.TestCase):

  def test_top_k_breaks_ties_by_word(self):
    self.assertEqual(metrics.top_k(TRUTH, 2), ["a", "b"])
    self.assertEqual(metrics.top_k({"z": 1, "y": 1, "x": 1}, 2), ["x", "y"])

  def test_precision_recall_f1(self):
    found = {"a": 9, "c": 7, "zz": 6}  # "zz" is held by nobody
    m = metrics.precision_recall_f1(found, TRUTH, ks=[2, 4])
    self.assertAlmostEqual(m["recall@2"], 1 / 2)       # a of {a, b}
    self.assertAlmostEqual(m["precision@2"], 1 / 2)    # D_2 = {a, c}
    self.assertAlmostEqual(m["f1@2"], 1 / 2)
    self.assertAlmostEqual(m["recall@4"], 2 / 4)
    self.assertAlmostEqual(m["precision@4"], 2 / 3)
    self.assertAlmostEqual(m["f1@4"], 2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    self.assertAlmostEqual(m["precision"], 2 / 3)
    self.assertEqual(m["num_discovered"], 3)

  def test_paper_f1_takes_precision_as_one(self):
    # Ranked by votes, "zz" (held by nobody) pushes "b" out of D_2; the
    # paper's F1 only sees that a and b of the top 2 were found.
    found = {"zz": 9, "a": 8, "b": 1}
    m = metrics.precision_recall_f1(found, TRUTH, ks=[2])
    self.assertAlmostEqual(m["recall@2"], 1.0)
    self.assertAlmostEqual(m["f1_paper@2"], 1.0)
    self.assertAlmostEqual(m["f1@2"], 2 * 0.5 * 1.0 / 1.5)
    m = metrics.precision_recall_f1({"a": 1}, TRUTH, ks=[4])
    self.assertAlmostEqual(m["f1_paper@4"], 2 * 0.25 / 1.25)  # 0.4

  @parameterized.parameters(-0.1, 1.5)
  def test_paper_f1_refuses_a_recall_outside_0_1(self, recall):
    with self.assertRaisesRegex(ValueError, "recall must be in"):
      metrics.f1_paper(recall)

  def test_nothing_found(self):
    m = metrics.precision_recall_f1({}, TRUTH, ks=[3])
    self.assertEqual((m["precision@3"], m["recall@3"], m["f1@3"],
                      m["precision"]), (0.0, 0.0, 0.0, 0.0))

  def test_discovery_rates(self):
    rates = metrics.discovery_rates([{"a", "b"}, {"a"}, set(), {"a", "c"}],
                                    ["a", "b", "d"])
    np.testing.assert_allclose(rates, [0.75, 0.25, 0.0])

  def test_bad_k(self):
    with self.assertRaises(ValueError):
      metrics.top_k(TRUTH, 0)


def _metrics_by_definition(found, truth, ks):
  """precision@K and precision by the module docstring, one word at a time."""
  ranked = [w for w, _ in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))]
  top = sorted(truth, key=lambda w: (-truth[w], w))
  out = {}
  for k in ks:
    head = ranked[:k]
    out[f"precision@{k}"] = (len(set(head) & set(top[:k])) / len(head)
                             if head else 0.0)
  out["precision"] = sum(truth.get(w, 0) > 0 for w in found) / len(found)
  return out


class RankedHeadTest(parameterized.TestCase):

  @parameterized.parameters((0, True), (1, True), (2, False), (3, False))
  def test_equal_to_the_definition_in_any_order_and_with_ties(self, seed,
                                                              in_order):
    # Few distinct counts, so ties straddle the K-th word; the counts come
    # either in the order heavy_hitters gives (non-increasing, words not
    # sorted within ties) or shuffled.
    rng = np.random.default_rng(seed)
    words = [f"w{i:03d}" for i in rng.permutation(300)]
    counts = rng.integers(1, 6, size=300).tolist()
    found = dict(zip(words, counts))
    if in_order:
      found = dict(sorted(found.items(), key=lambda kv: -kv[1]))
    truth = {w: float(c) for w, c in zip(words, rng.integers(0, 9, 300))}
    for truth_map in (truth, ranking.RankedCounts(truth)):
      got = metrics.precision_recall_f1(found, truth_map, ks=(10, 50, 100))
      for name, value in _metrics_by_definition(found, truth,
                                                (10, 50, 100)).items():
        self.assertAlmostEqual(got[name], value, msg=name)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(ks=[2.0]), TypeError, "ks \\(each K\\) must be an integer"),
    (dict(ks=[True]), TypeError, "ks \\(each K\\) must be an integer"),
    (dict(ks=[0]), ValueError, "ks \\(each K\\) must be >= 1"),
    (dict(discovered="sun"), TypeError, "not one string"),
    (dict(truth=["sun"]), TypeError, "truth must be a mapping"),
])
def test_arguments_are_named(kwargs, error, match):
  # ks=[2.0] failed inside heapq, [True] made keys "precision@True", and
  # the string "sun" was scored as the words "s", "u", "n".
  args = dict(discovered={"sun": 3}, truth={"sun": 5, "moon": 2}, ks=[1])
  args.update(kwargs)
  with pytest.raises(error, match=match):
    metrics.precision_recall_f1(**args)
