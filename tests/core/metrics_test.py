"""Tests of the utility metrics."""

from absl.testing import parameterized
import numpy as np

from triehh.core import metrics

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
