"""The walk's public plan: checked arguments, candidates, thresholds, live
prefixes."""

from __future__ import annotations

import numpy as np
import pytest

from triehh.core import prefix_code
from triehh.secure import plan as plan_lib


def test_a_plan_of_hashes_extends_every_prefix():
  plan = plan_lib.WalkPlan(8, (3, 8), (1.0, 2.0), (4, 5))
  assert plan.thresholds == ((4,), (5,))
  np.testing.assert_array_equal(plan.candidates(0, [0]), np.arange(8))
  np.testing.assert_array_equal(
      plan.candidates(1, [2, 5]),
      np.concatenate([np.arange(64, 96), np.arange(160, 192)]))
  np.testing.assert_array_equal(plan.thresholds_of(1, np.arange(3)), [5] * 3)
  np.testing.assert_array_equal(plan.live(0, [1, 4], [7, 9]), [1, 4])
  assert plan.live(1, [1, 4], [7, 9]).size == 0


def test_the_frontier_cap_keeps_the_highest_counts_smaller_first():
  plan = plan_lib.WalkPlan(8, (4, 8), (1.0, 1.0), (0, 0), max_frontier=2)
  np.testing.assert_array_equal(plan.live(0, [1, 3, 6, 9], [5, 8, 5, 2]),
                                [1, 3])
  np.testing.assert_array_equal(plan.live(0, [1, 3, 6, 9], [5, 8, 6, 2]),
                                [3, 6])


def test_a_plan_of_words_extends_live_prefixes_only():
  code = prefix_code.PrefixCode(tuple("ab"), 3)  # 2 bits per character
  plan = plan_lib.WalkPlan(6, (2, 6), (1.0, 1.0), ((3,), (3, 4, 5)),
                           code=code)
  ids, _ = code.encode(["a", "ab", "bba"])
  first = plan.candidates(0, [0])
  np.testing.assert_array_equal(first, [1, 2])  # "a", "b"
  second = plan.candidates(1, [1])
  # "a" then: the end ("a" complete), "a?" complete, "a??" of 3 characters.
  assert code.decode(second) == ["a", "aa", "aaa", "aab", "ab", "aba", "abb"]
  assert int(ids[0]) in second.tolist() and int(ids[1]) in second.tolist()
  np.testing.assert_array_equal(plan.thresholds_of(1, second),
                                [5, 4, 3, 3, 4, 3, 3])
  np.testing.assert_array_equal(plan.live(0, [1, 2], [9, 9]), [1, 2])


@pytest.mark.parametrize("args, match", [
    ((8, (3, 7), (1.0, 1.0), (1, 1)), "steps must end at bits=8"),
    ((30, (30,), (1.0,), (1,)), "increase by 1 to 20 bits"),
    ((8, (4, 8), (1.0, 0.0), (1, 1)), r"sigmas\[1\] must be in"),
    ((8, (4, 8), (1.0,), (1, 1)), "one entry per step"),
    ((8, (4, 8), (1.0, 1.0), (1, (1, 2))), r"thresholds\[1\] must be one "),
])
def test_bad_plans_are_named(args, match):
  with pytest.raises(ValueError, match=match):
    plan_lib.WalkPlan(*args)


def test_bad_types_and_codes_are_named():
  with pytest.raises(TypeError, match=r"thresholds\[0\]\[0\] must be an "):
    plan_lib.WalkPlan(4, (4,), (1.0,), (1.5,))
  with pytest.raises(ValueError, match="noise must be one of"):
    plan_lib.WalkPlan(4, (4,), (1.0,), (1,), noise="uniform")
  code = prefix_code.PrefixCode(tuple("ab"), 3)
  with pytest.raises(ValueError, match="multiple of the code's 2 bits"):
    plan_lib.WalkPlan(6, (3, 6), (1.0, 1.0), (1, 1), code=code)
  with pytest.raises(ValueError, match="max_frontier must be None or"):
    plan_lib.WalkPlan(4, (4,), (1.0,), (1,), max_frontier=0)


def test_a_plan_goes_to_json_and_back():
  code = prefix_code.PrefixCode(tuple("xyz"), 4)
  plan = plan_lib.WalkPlan(8, (4, 8), (0.5, 2.0), (3, (1, 2, 3)),
                           noise="laplace", code=code, max_frontier=7)
  back = plan_lib.WalkPlan.from_json(plan.to_json())
  assert back == plan


def test_the_verification_candidates_are_the_discovered_words_padded():
  code = prefix_code.PrefixCode(tuple("ab"), 4)  # 2 bits a character
  ids = dict(zip(["a", "b", "ab", "ba", "abab", "bbbb", "bb"],
                 code.encode(["a", "b", "ab", "ba", "abab", "bbbb",
                              "bb"])[0].tolist()))
  # Step 0 (2 characters): "a" complete (an end code), "ab" and "bb" live;
  # step 1 (4 characters): every kept candidate is a word.
  first = {ids["a"] >> 4: 9, ids["ab"] >> 4: 7, ids["bb"] >> 4: 3}
  second = {ids["abab"]: 5, ids["bbbb"]: 5, ids["ba"]: 2}
  every = plan_lib.verification_points(code, (4, 8), [first, second], 10)
  assert sorted(code.decode(every)) == ["a", "abab", "ba", "bbbb"]
  # At most three: the highest counts, the smaller point among equals.
  top = plan_lib.verification_points(code, (4, 8), [first, second], 2)
  assert code.decode(top) == ["a", "abab"]


def test_a_verifying_plan_is_checked_and_goes_to_json_and_back():
  code = prefix_code.PrefixCode(tuple("xyz"), 4)
  plan = plan_lib.WalkPlan(8, (4, 8), (1.0, 1.0), (3, (1, 2, 3)),
                           code=code, verify_sigma=0.5, verify_cap=9,
                           verify_thresholds=[[3, 2], [4, 9]])
  assert plan.verifies and plan.num_releases == 3
  assert plan.verify_thresholds == ((3, 2), (4, 9))
  assert plan_lib.WalkPlan.from_json(plan.to_json()) == plan
  assert plan_lib.verification_threshold(plan.verify_thresholds, 2) == 3
  assert plan_lib.verification_threshold(plan.verify_thresholds, 3) == 4
  for changes, match in (
      (dict(verify_thresholds=((3, 2), (4, 8))), "the last serving"),
      (dict(verify_thresholds=((4, 2), (3, 9))), "both increasing"),
      (dict(verify_cap=0), "verify_cap must be an integer >= 1"),
      (dict(code=None, thresholds=(3, 3)), "needs a code"),
      (dict(verify_sigma=None), "need verify_sigma")):
    args = dict(code=code, verify_sigma=0.5, verify_cap=9,
                verify_thresholds=((3, 2), (4, 9)), thresholds=(3, (1, 2, 3)))
    args.update(changes)
    thresholds = args.pop("thresholds")
    with pytest.raises(ValueError, match=match):
      plan_lib.WalkPlan(8, (4, 8), (1.0, 1.0), thresholds, **args)
