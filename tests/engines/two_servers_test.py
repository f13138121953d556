"""The fast engine of the two-server walk: its shortcut for the candidates
no key reaches has the law of evaluating every candidate (two-sample
chi-squared tests that a shifted threshold fails), and its false passes
average what the theory's tail says."""

import string

import numpy as np
import pytest
from scipy import stats

from triehh.core import prefix_code
from triehh.engines import two_servers as engine
from triehh.theory import two_servers as theory

CODE = prefix_code.PrefixCode(("a", "b", "c"), 3)  # 6 bits, 39 candidates
ENGLISH = prefix_code.PrefixCode(("'",) + tuple(string.ascii_lowercase), 10)


def _counts(code, words):
  ids, ok = code.encode(list(words))
  assert ok.all()
  return dict(zip(ids.tolist(), words.values()))


def _runs(monkeypatch, enumerate_all, threshold, seeds):
  monkeypatch.setattr(engine, "ENUMERATE", 1 << 30 if enumerate_all else 0)
  counts = _counts(CODE, {"ab": 5, "c": 2})
  passes, values, which = [], [], []
  for seed in seeds:
    kept = engine.run_walk(counts, 6, [6], [1.0], [threshold], seed,
                           code=CODE)[0]
    false = {k: v for k, v in kept.items() if k not in counts}
    passes.append(len(false))
    values.extend(false.values())
    which.extend(false)
  return np.array(passes), np.array(values), which


def _chi2_p(a, b):
  support = np.union1d(a, b)
  table = np.array([[np.sum(a == s) for s in support],
                    [np.sum(b == s) for s in support]])
  table = table[:, table.sum(axis=0) >= 5]
  return stats.chi2_contingency(table)[1]


# Threshold 2 passes about a fifth of the noise-only candidates (drawn by
# rejection), 0 more than half (drawn from the class's list).
@pytest.mark.parametrize("threshold", [2, 0])
def test_shortcut_has_the_law_of_every_candidate(monkeypatch, threshold):
  full_n, full_v, _ = _runs(monkeypatch, True, threshold, range(800))
  fast_n, fast_v, fast_w = _runs(monkeypatch, False, threshold,
                                 range(800, 1600))
  assert _chi2_p(full_n, fast_n) > 1e-3
  assert _chi2_p(full_v, fast_v) > 1e-3
  # which candidates: uniform over the 37 no key reaches
  hits = np.unique(fast_w, return_counts=True)[1]
  assert hits.size == 37
  assert stats.chisquare(hits).pvalue > 1e-3
  # and the test fails on a threshold one off
  off_n, off_v, _ = _runs(monkeypatch, False, threshold + 1,
                          range(800, 1600))
  assert _chi2_p(full_n, off_n) < 1e-6
  assert _chi2_p(full_v, off_v) < 1e-6


def test_held_candidates_carry_their_counts():
  counts = _counts(CODE, {"ab": 1000, "c": 3})
  kept = engine.run_walk(counts, 6, [6], [1.0], [10], 0, code=CODE)[0]
  ab = next(iter(_counts(CODE, {"ab": 1}).keys()))
  assert abs(kept[ab] - 1000) < 30


def test_false_passes_average_the_budget():
  plan = theory.plan(ENGLISH.characters, 10, 4.0)
  expected = sum(k * theory.sum_tail("laplace", 0.25, t)
                 for k, t in zip(plan.candidates(0), plan.thresholds[0]))
  assert 0.1 < expected <= 1.0  # integer thresholds: below the budget
  found = [len(engine.run_walk({}, 50, plan.steps, plan.scales,
                               plan.thresholds, seed, code=ENGLISH)[0])
           for seed in range(200)]
  # Poisson(expected) over 200 runs: mean within 4 standard errors
  assert abs(np.mean(found) - expected) < 4 * np.sqrt(expected / 200)
  for seed in range(5):
    kept = engine.run_walk({}, 50, plan.steps, plan.scales, plan.thresholds,
                           seed, code=ENGLISH)[0]
    words = ENGLISH.decode(kept)
    assert all(0 < len(w) <= 10 for w in words)


def test_walk_in_steps_extends_live_prefixes_only():
  counts = _counts(ENGLISH, {"the": 500, "there": 400, "a": 300,
                             "zebra": 200})
  plan = theory.plan(ENGLISH.characters, 10, 4.0, chars_per_step=3,
                     max_frontier=100)
  out = engine.run_walk(counts, 50, plan.steps, plan.scales, plan.thresholds,
                        1, code=ENGLISH, max_frontier=100)
  assert len(out) == 4
  first = set(ENGLISH.decode(out[0], 3))
  assert {"the", "a", "zeb"} <= first
  last = set(ENGLISH.decode(out[-1]))
  assert {"there", "zebra"} <= set(ENGLISH.decode(out[1], 6)) | last


def test_generic_hash_walk_and_frontier_cap():
  rng = np.random.default_rng(0)
  ids = rng.integers(0, 1 << 20, size=50, dtype=np.uint64)
  counts = dict(zip(ids.tolist(), range(100, 150)))
  out = engine.run_walk(counts, 20, [8, 14, 20], [0.5] * 3, [40, 40, 40], 0)
  assert set(counts) == set(out[-1])
  capped = engine.run_walk(counts, 20, [8, 14, 20], [0.5] * 3, [40] * 3, 0,
                           max_frontier=10)
  assert len(capped[-1]) <= 10


def test_bad_plans_are_refused():
  with pytest.raises(ValueError, match="steps must increase"):
    engine.run_walk({}, 8, [4, 4, 8], [1.0] * 3, [1] * 3, 0)
  with pytest.raises(ValueError, match="one sigma and one threshold"):
    engine.run_walk({}, 8, [4, 8], [1.0], [1, 1], 0)
  with pytest.raises(ValueError, match="one per class"):
    engine.run_walk({}, 6, [6], [1.0], [[1, 2]], 0, code=CODE)


def test_a_verification_step_releases_the_found_words_at_its_threshold():
  counts = _counts(CODE, {"ab": 9, "abc": 6, "c": 5, "ba": 2})
  # Noise of scale 2^-6: a draw is 0 but with chance below 1e-13.
  kept = engine.run_walk(counts, 6, [2, 6], [2.0**-6] * 2, [[1, 1], [1, 1, 1]],
                         0, code=CODE, verify_sigma=2.0**-6, verify_cap=3,
                         verify_thresholds=((6, 3),))
  assert len(kept) == 3
  # V: the three highest counts of the words found ("ba" is fourth);
  # released at 6 or more: "ab" and "abc".
  assert sorted(CODE.decode(kept[-1])) == ["ab", "abc"]
  assert sorted(kept[-1].values()) == [6, 9]
  with pytest.raises(ValueError, match="needs a code"):
    engine.run_walk(counts, 6, [6], [1.0], [1], 0, verify_sigma=1.0,
                    verify_cap=3, verify_thresholds=((6, 3),))
