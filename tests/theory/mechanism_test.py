"""Tests of the privacy objects' checks: the noisy trie's upload budget."""

import pytest

import triehh
from triehh.theory import mechanism
from triehh.theory import noisy_plan


def test_the_upload_budget_defaults_to_none_the_classic_trie():
  assert triehh.NoisyTarget(4.0).upload_budget is None


def test_a_budget_is_kept_and_exported_from_the_package():
  budget = triehh.UploadBudget(500_000, bytes_per_round=100_000)
  assert triehh.UploadBudget is noisy_plan.UploadBudget
  target = mechanism.NoisyTarget(4.0, upload_budget=budget)
  assert target.upload_budget == budget
  assert target.upload_budget.bytes_per_round == 100_000


@pytest.mark.parametrize("value", [10**6, "1MB", True, {"bytes_per_run": 1}])
def test_a_budget_that_is_no_upload_budget_is_a_type_error(value):
  with pytest.raises(TypeError, match="upload_budget must be a "
                     r"triehh\.UploadBudget"):
    triehh.NoisyTarget(4.0, upload_budget=value)


@pytest.mark.parametrize("options, named", [
    (dict(chars_per_level=2), "chars_per_level"),
    (dict(noise_multipliers=(4.0,)), "noise_multipliers"),
    (dict(false_positive_rate=1e-7), "false_positive_rate"),
    (dict(chars_per_level=3, noise_multipliers=(2.0,)),
     "chars_per_level and noise_multipliers"),
])
def test_settings_the_plan_chooses_are_refused_with_a_budget(options, named):
  with pytest.raises(ValueError, match=f"^{named} given with upload_budget: "
                     "the budget's plan chooses"):
    triehh.NoisyTarget(4.0, upload_budget=triehh.UploadBudget(), **options)
  # Without a budget they are the classic trie's settings.
  triehh.NoisyTarget(4.0, **options)


def test_a_bad_budget_is_refused_where_it_is_built():
  with pytest.raises(ValueError, match="bytes_per_run"):
    triehh.UploadBudget(0)


def test_the_noise_law_is_a_known_one_and_the_laplace_needs_a_budget():
  assert triehh.NoisyTarget(4.0).noise_law is None  # chosen on the prior
  budget = triehh.UploadBudget()
  for law in noisy_plan.NOISE_LAWS:
    assert triehh.NoisyTarget(4.0, upload_budget=budget,
                              noise_law=law).noise_law == law
  triehh.NoisyTarget(4.0, noise_law="gaussian")  # the classic trie's
  with pytest.raises(ValueError, match="^noise_law must be one of"):
    triehh.NoisyTarget(4.0, upload_budget=budget, noise_law="cauchy")
  with pytest.raises(ValueError, match="^noise_law='laplace' is for planned "
                     "runs: give an upload_budget"):
    triehh.NoisyTarget(4.0, noise_law="laplace")
