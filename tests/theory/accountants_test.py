"""Tests of triehh.theory.accountants: calibrate, guarantee, event."""

import dp_accounting
import pytest

from triehh.theory import accountants
from triehh.theory import dp_events
from triehh.theory import poisson
from triehh.theory.adjacency import Adjacency
from triehh.theory.mechanism import Guarantee
from triehh.theory.mechanism import Mechanism
from triehh.theory.mechanism import Target


@pytest.mark.parametrize("target", [
    Target(4.0, delta=1e-8),
    Target(4.0, population_size=10_000),
    Target(2.0, delta=1e-8, adjacency="REPLACE_ONE"),
])
def test_poisson_calibrates_a_mechanism_that_meets_its_target(target):
  accountant = accountants.for_sampling("poisson")
  mechanism = accountant.calibrate(10_000, 10, target)
  assert isinstance(mechanism, Mechanism)
  assert mechanism.sampling == "poisson" and mechanism.sampling_rate < 1
  guarantee = accountant.guarantee(mechanism, 10_000, 10)
  assert guarantee.epsilon <= target.epsilon
  assert guarantee.holds_for("ADD_OR_REMOVE_ONE")
  assert guarantee.holds_for("REPLACE_SPECIAL")
  assert guarantee.holds_for("REPLACE_ONE") == (
      target.adjacency is Adjacency.REPLACE_ONE)
  replace = "REPLACE_ONE" if guarantee.holds_for("REPLACE_ONE") else (
      "ADD_OR_REMOVE_ONE")
  assert poisson.delta_for_epsilon(
      mechanism.sampling_rate, mechanism.theta, 11, target.epsilon,
      adjacency=replace) <= guarantee.delta


def test_a_target_from_the_data_is_covered_for_equal_sizes_only():
  guarantee = accountants.POISSON.guarantee(
      accountants.POISSON.calibrate(10_000, 10, Target(4.0)), 10_000, 10)
  assert guarantee.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert guarantee.n_source == "data"
  assert "n read off the data" in guarantee.describe()
  assert guarantee.neighboring_relations == (
      dp_accounting.NeighboringRelation.REPLACE_SPECIAL,)


def test_theorem_1_calibrates_a_batch_one_direction():
  mechanism = accountants.THEOREM_1.calibrate(10**6, 10, Target(4.0))
  assert mechanism.batch_size and mechanism.sampling == "fixed"
  guarantee = accountants.THEOREM_1.guarantee(mechanism, 10**6, 10)
  assert not guarantee.two_sided
  assert guarantee.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert guarantee.epsilon <= 4.0
  assert "one direction" in guarantee.describe()


def test_the_event_is_the_mechanisms():
  mechanism = Mechanism(theta=20, sampling_rate=0.3, delta=1e-8)
  event = accountants.POISSON.dp_event(mechanism, 10_000, 10)
  assert event == dp_accounting.SelfComposedDpEvent(
      dp_events.TrieHHLevelDpEvent(0.3, 20), 11)
  accountant = dp_events.PLDAccountant(
      dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, 1e-3)
  accountant.compose(event)
  guarantee = accountants.POISSON.guarantee(mechanism, 10_000, 10)
  assert accountant.get_epsilon(1e-8) == pytest.approx(guarantee.epsilon,
                                                       rel=1e-2)


def test_guarantee_of_a_run_without_one():
  guarantee = accountants.THEOREM_1.guarantee(
      Mechanism(theta=2, batch_size=5000, allow_no_guarantee=True), 10_000,
      10)
  assert guarantee.adjacencies == ()
  assert guarantee.describe().startswith("no differential privacy")
  assert isinstance(guarantee, Guarantee)


def test_an_unknown_sampling_is_refused():
  with pytest.raises(ValueError, match="sampling must be one of"):
    accountants.for_sampling("bernoulli")


@pytest.mark.parametrize("accountant", [accountants.POISSON,
                                        accountants.THEOREM_1])
@pytest.mark.parametrize("given", ["x", 4.0, None])
def test_calibrate_refuses_what_is_not_a_target_naming_it(accountant, given):
  with pytest.raises(TypeError, match=r"^target must be a triehh\.Target "
                     r"\(epsilon, delta, \.\.\.\) .*; got "):
    accountant.calibrate(10_000, 10, given)


def test_calibrate_refuses_another_mechanisms_target_naming_its_type():
  from triehh.theory.mechanism import NoisyTarget  # pylint: disable=g-import-not-at-top
  with pytest.raises(TypeError, match=r"^target must be .*; got NoisyTarget"):
    accountants.POISSON.calibrate(10_000, 10, NoisyTarget(4.0))


@pytest.mark.parametrize("method", ["guarantee", "dp_event"])
def test_guarantee_and_event_refuse_what_is_not_a_mechanism(method):
  with pytest.raises(TypeError, match=r"^mechanism must be a "
                     r"triehh\.Mechanism .*; got str 'x'"):
    getattr(accountants.POISSON, method)("x", 10_000, 10)


def test_calibrate_keeps_the_opt_in_to_a_delta_above_1_over_n():
  target = Target(4.0, delta=0.5, allow_delta_above_1_over_n=True)
  assert accountants.POISSON.calibrate(
      10_000, 10, target).allow_delta_above_1_over_n
