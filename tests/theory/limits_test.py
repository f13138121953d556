"""Tests of the bounds checked at the accountants' public functions
(triehh/theory/limits.py): here, a delta above 1/n."""

import pytest

from triehh.theory import limits


def test_a_delta_above_1_over_n_is_refused_naming_delta_the_bound_and_opt_in():
  with pytest.raises(ValueError, match=(
      r"^delta=0\.01 is above 1/n = 1/400 = 0\.0025, which protects nobody "
      r".*: give delta at most 1/n .*allow_delta_above_1_over_n=True to run "
      r"it anyway$")):
    limits.check_delta_for_n(0.01, 400, allowed=False)


def test_a_delta_the_parameters_give_is_refused_asking_for_other_ones():
  with pytest.raises(ValueError, match=(
      r"^theta=4 as given give a guarantee whose delta, 0\.917, is above "
      r"1/n = 1/398 .*choose parameters that give at most 1/n")):
    limits.check_delta_for_n(0.917, 398, allowed=False,
                             source="theta=4 as given")


@pytest.mark.parametrize("delta, n, allowed", [
    (1 / 400, 400, False),     # exactly 1/n: the bound itself passes
    (0.9 / 400, 400, False),
    (0.5, 400, True),          # opted in
    (None, 400, False),        # 1/n^2 by default
    (1.0, 400, False),         # no guarantee at all (delta 1): said apart
])
def test_what_passes(delta, n, allowed):
  limits.check_delta_for_n(delta, n, allowed=allowed)


def test_the_caveat_says_the_delta_and_the_bound_only_above_it():
  assert limits.delta_above_1_over_n(0.5, 10_000) == (
      "delta=0.5 exceeds 1/n = 1/10,000 = 0.0001: it protects nobody "
      "(publishing one user's data at random meets it)")
  assert limits.delta_above_1_over_n(1e-4, 10_000) == ""
  assert limits.delta_above_1_over_n(0.5, None) == ""
  assert limits.delta_above_1_over_n(1.5, 10) == ""  # not a delta


@pytest.mark.parametrize("value", [1, "yes", None])
def test_the_opt_in_is_a_bool(value):
  with pytest.raises(TypeError, match="^allow_delta_above_1_over_n must be "
                     "True or False"):
    limits.check_opt_in(value)
