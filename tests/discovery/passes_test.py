"""Tests of triehh.discovery.passes: the budget split, the deny lists, the totals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from triehh.core import population as population_lib
from triehh.data import synthetic
from triehh.discovery import passes
import triehh


@pytest.fixture(scope="module")
def pop():
  return synthetic.english_population(200_000, seed=1).encode()


def _advanced(eps_p, delta_p, num_passes, delta_prime):
  # Dwork-Rothblum-Vadhan, written out here independently of the module.
  eps = (math.sqrt(2 * num_passes * math.log(1 / delta_prime)) * eps_p
         + num_passes * eps_p * (math.exp(eps_p) - 1))
  return eps, num_passes * delta_p + delta_prime


def test_basic_split():
  budget = passes.split_budget(3.0, 3e-9, 3, "basic")
  assert (budget.epsilon, budget.delta) == pytest.approx((1.0, 1e-9))
  assert (budget.total_epsilon, budget.total_delta) == pytest.approx(
      (3.0, 3e-9))


@pytest.mark.parametrize("num_passes", [2, 10, 400])
def test_advanced_split_meets_the_total(num_passes):
  budget = passes.split_budget(4.0, 1e-6, num_passes, "advanced")
  eps, dlt = _advanced(budget.epsilon, budget.delta, num_passes,
                       budget.delta_prime)
  # The split keeps a relative 1e-9 margin under the total.
  assert eps <= 4.0 and eps == pytest.approx(4.0, rel=1e-8)
  assert dlt == pytest.approx(1e-6)
  assert budget.delta_prime == pytest.approx(5e-7)


def test_advanced_total_beyond_floating_point_is_infinite():
  assert passes.advanced_total(1e6, 1e-9, 2, 1e-9)[0] == math.inf


@pytest.mark.parametrize("epsilon", [1e6, 1e300])
def test_a_huge_total_epsilon_splits_without_overflow(epsilon):
  budget = passes.split_budget(epsilon, 1e-8, 3, "advanced")
  assert budget.epsilon < 710 and budget.total_epsilon <= epsilon
  # The 1e-9 margin on a per-pass epsilon of hundreds: about 1e-6 of it.
  assert budget.total_epsilon == pytest.approx(epsilon, rel=1e-5)
  assert passes.split_budget(epsilon, 1e-8, 3).composition == "basic"


def test_best_picks_the_larger_per_pass_epsilon():
  few = passes.split_budget(4.0, 1e-6, 2, "best")
  assert few.composition == "basic"  # 2.0 against about 0.4
  many = passes.split_budget(4.0, 1e-6, 400, "best")
  assert many.composition == "advanced"
  assert many.epsilon > 4.0 / 400


def test_bad_composition():
  with pytest.raises(ValueError, match="composition must be one of"):
    passes.split_budget(1.0, 1e-6, 2, "strong")


def test_one_pass_is_discover(pop):
  one = passes.discover_passes(pop, triehh.Target(4.0), passes.Passes(1),
                               seed=3)
  ref = triehh.discover(pop, triehh.Target(4.0, sampling="fixed"), seed=3)  # as passes run
  assert one.words == ref.words
  assert one.params.epsilon == ref.params.epsilon
  assert one.params.delta == ref.params.delta
  assert "in one direction only" in one.params.covers


def test_passes_union_totals_and_deny_lists(pop):
  result = passes.discover_passes(pop, triehh.Target(4.0), passes.Passes(3),
                                  seed=0)
  n = pop.num_users
  found = []
  for index, run in enumerate(result.passes):
    assert set(result.deny_lists[index]) == set(found)
    assert not set(run.words) & set(found)  # denied words are never found
    found.extend(run.words)
    assert run.params.epsilon <= 4.0 / 3
    assert run.params.delta <= 1 / n**2 / 3
  assert result.words == tuple(found)
  p = result.params
  assert p.composition == "basic"
  assert p.epsilon == pytest.approx(sum(r.params.epsilon
                                        for r in result.passes))
  assert p.delta == pytest.approx(sum(r.params.delta for r in result.passes))
  assert p.epsilon <= 4.0 and p.delta <= 1 / n**2
  assert len(result.passes[1].words) > 0


def test_same_seed_same_result(pop):
  a = passes.discover_passes(pop, 2.0, passes.Passes(2), seed=5)
  b = passes.discover_passes(pop, 2.0, passes.Passes(2), seed=5)
  c = passes.discover_passes(pop, 2.0, passes.Passes(2), seed=6)
  assert a.words == b.words
  assert [r.seed for r in a.passes] == [r.seed for r in b.passes]
  assert a.passes[1].seed != c.passes[1].seed


def test_advanced_totals_recomputed(pop):
  result = passes.discover_passes(
      pop, triehh.Target(4.0, delta=1e-6), passes.Passes(2, "advanced"))
  eps_p = max(r.params.epsilon for r in result.passes)
  dlt_p = max(r.params.delta for r in result.passes)
  eps, dlt = _advanced(eps_p, dlt_p, 2, 5e-7)
  assert result.params.epsilon == pytest.approx(eps)
  assert result.params.delta == pytest.approx(dlt)
  assert result.params.epsilon <= 4.0


def test_refuses_a_per_pass_share_theorem_1_cannot_give(pop):
  with pytest.raises(ValueError, match=r"50 passes .* each pass \(epsilon="
                     r"0\.02.* Theorem 1 cannot give for n=200000"):
    passes.discover_passes(pop, triehh.Target(1.0),
                           passes.Passes(50, "basic"))


def test_refuses_fixed_parameters(pop):
  with pytest.raises(ValueError, match="theta cannot be given"):
    passes.discover_passes(pop, triehh.Target(1.0, theta=10),
                           passes.Passes(2))


def test_several_words_per_run():
  users = [{"apple": 3, "pear": 1}, {"apple": 1, "plum": 1}] * 5000
  pop = population_lib.Population.from_user_words(users, max_length=5)
  result = passes.discover_passes(
      pop, triehh.Target(8.0, word_choice="per_run"), passes.Passes(2),
      max_length=5)
  assert result.passes[0].words == ("apple",) or "apple" in result.words
  assert "apple" in result.passes[0].words
  assert "apple" not in result.passes[1].words
  assert set(result.passes[1].words) <= {"pear", "plum"}
  assert np.isfinite(result.params.epsilon)


def test_discover_num_passes(pop):
  via_api = triehh.discover(pop, triehh.Target(4.0), seed=4,
                            passes=triehh.Passes(2))
  direct = passes.discover_passes(pop, triehh.Target(4.0), passes.Passes(2),
                                  seed=4)
  assert isinstance(via_api, passes.PassesResult)
  assert via_api.words == direct.words
  assert via_api.params == direct.params
  with pytest.raises(ValueError, match="batch_size, theta cannot be given"):
    triehh.discover(pop, triehh.Mechanism(theta=10, batch_size=500),
                    passes=triehh.Passes(2))
  with pytest.raises(ValueError, match="cannot be combined"):
    triehh.discover(pop, triehh.Target(4.0), passes=triehh.Passes(2),
                    availability=triehh.OnlineUsers(0.5))


@pytest.mark.parametrize("privacy, match", [
    (triehh.Target(4.0, sampling="poisson"),
     "passes runs fixed-size batches"),
    (triehh.Target(4.0, adjacency="replace_one"),
     "adjacency='REPLACE_ONE' is not supported with passes"),
    (triehh.Target(4.0, population_size=300_000),
     "population_size=300000 is not supported with passes"),
    (triehh.Mechanism(theta=10, batch_size=500),
     "batch_size, theta cannot be given"),
])
def test_refuses_a_privacy_the_passes_cannot_calibrate(pop, privacy, match):
  with pytest.raises(ValueError, match=match):
    passes.discover_passes(pop, privacy, passes.Passes(2))


def test_passes_are_a_passes(pop):
  with pytest.raises(TypeError, match="passes must be a triehh.Passes"):
    passes.discover_passes(pop, triehh.Target(4.0), 2)
