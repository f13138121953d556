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


def test_ks_may_be_any_iterable_of_ints_read_once():
  # A generator was read twice: max() found it empty.
  truth = {"sun": 5, "moon": 2, "star": 1}
  expected = metrics.precision_recall_f1(["sun", "star"], truth, ks=[1, 2])
  assert metrics.precision_recall_f1(["sun", "star"], truth,
                                     ks=iter([1, 2])) == expected
  assert metrics.precision_recall_f1(["sun", "star"], truth,
                                     ks=(k for k in (1, 2))) == expected
  assert metrics.precision_recall_f1(["sun", "star"], truth,
                                     ks=np.array([1, 2])) == expected


@pytest.mark.parametrize("ks", [None, 3, "10"])
def test_ks_that_is_no_iterable_of_ints_is_named(ks):
  with pytest.raises(TypeError, match="^ks must be an iterable of integers"):
    metrics.precision_recall_f1(["sun"], {"sun": 5}, ks=ks)


_BAD_TRUTHS = [
    ({"sun": float("nan"), "moon": 2.0, "star": 1.0}, ValueError,
     r"^truth\['sun'\] must be a number >= 0, got nan"),
    ({"sun": -4.0, "moon": 2.0}, ValueError,
     r"^truth\['sun'\] must be a number >= 0, got -4.0"),
    ({"sun": "x", "moon": 2.0}, TypeError,
     r"^truth\['sun'\] must be a number, got 'x'"),
    ({"moon": 2.0, "sun": None}, TypeError,
     r"^truth\['sun'\] must be a number, got None"),
]


@pytest.mark.parametrize("truth, error, match", _BAD_TRUTHS)
@pytest.mark.parametrize("ranked", [False, True])
def test_a_truth_weight_that_is_no_number_ge_0_is_named(truth, error, match,
                                                        ranked):
  # A nan weight was ranked into the top K; a string failed in the sort.
  if ranked:
    truth = ranking.RankedCounts(truth)
  with pytest.raises(error, match=match):
    metrics.top_k(truth, 2)
  with pytest.raises(error, match=match):
    metrics.precision_recall_f1(["moon"], truth, ks=[1])
  with pytest.raises(error, match=match):
    metrics.precision_recall_f1(["moon"], truth, ks=[])


def test_a_ranked_truth_is_checked_once(monkeypatch):
  checked = []
  real = ranking.check_weights
  monkeypatch.setattr(ranking, "check_weights",
                      lambda name, c: checked.append(name) or real(name, c))
  truth = ranking.RankedCounts({f"w{i}": i % 7 for i in range(100)})
  for _ in range(3):
    metrics.precision_recall_f1(["w6", "w1"], truth, ks=[5, 10])
    metrics.top_k(truth, 20)
  assert checked == ["truth"]
  metrics.top_k(dict(truth), 2)  # a plain mapping: checked every call
  assert checked == ["truth", "truth"]


@pytest.mark.parametrize("runs, words, match", [
    (["sun"], ["sun"], "^runs must hold collections of words, not one "
     "string"),
    ([["sun"], b"sun"], ["sun"], "^runs must hold collections of words"),
    ("sun", ["sun"], "^runs must be a sequence"),
    (None, ["sun"], "^runs must be a sequence"),
    ([["sun"]], [5], "^words must hold strings, got 5"),
    ([["sun"]], ["sun", None], "^words must hold strings, got None"),
    ([["sun"]], "sun", "^words must be a sequence of words, not one string"),
])
def test_discovery_rates_refuses_runs_or_words_of_the_wrong_kind(runs, words,
                                                                 match):
  # A run "sun" was scored as the characters s, u, n (rate 0.0); the word 5
  # as found by no run.
  with pytest.raises(TypeError, match=match):
    metrics.discovery_rates(runs, words)


def test_an_unranked_sets_metrics_drop_the_top_k_ranking_ones():
  values = metrics.precision_recall_f1(["b", "a"], {"a": 3, "b": 2, "c": 1},
                                       ks=(1, 2))
  assert metrics.set_metrics(values) == {
      "recall@1": 1.0, "f1_paper@1": 1.0, "recall@2": 1.0,
      "f1_paper@2": 1.0, "precision": 1.0, "num_discovered": 2.0}
  assert values["precision@1"] == 0.0  # "b" cut first: what is dropped
