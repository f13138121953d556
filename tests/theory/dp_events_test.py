"""Tests of triehh.theory.dp_events: a run composes in dp_accounting."""

import math

import dp_accounting
import numpy as np
import pytest

from triehh.theory import counting
from triehh.theory import discrete_gaussian
from triehh.theory import discrete_laplace
from triehh.theory import dp_events
from triehh.theory import poisson
from triehh.theory import policy
from triehh.theory import sampled_renyi
from triehh.theory.mechanism import Mechanism
from triehh.theory.mechanism import Target

_Relation = dp_accounting.NeighboringRelation


def _poisson_params(n, epsilon, **kwargs):
  return policy.resolve(n, 10, Target(epsilon, delta=1 / n**2,
                                      sampling="poisson", **kwargs))


@pytest.mark.parametrize("n,epsilon", [(10**4, 4.0), (10**6, 1.0),
                                       (10**6, 4.0)])
def test_a_run_reads_its_own_epsilon_in_dp_accountings_accountant(n, epsilon):
  params = _poisson_params(n, epsilon)
  accountant = dp_events.PLDAccountant(_Relation.ADD_OR_REMOVE_ONE, 1e-3)
  accountant.compose(dp_events.run_event(params))
  assert accountant.get_epsilon(params.delta) == pytest.approx(
      params.epsilon, rel=1e-2)
  assert accountant.get_epsilon(params.delta) <= params.epsilon * 1.01
  assert accountant.get_delta(params.epsilon) <= params.delta * 1.01


def test_the_event_is_the_accountants_composition_over_levels():
  params = _poisson_params(10**4, 4.0)
  event = dp_events.run_event(params)
  assert isinstance(event, dp_accounting.SelfComposedDpEvent)
  assert event.count == params.levels == 11
  assert event.event == dp_events.TrieHHLevelDpEvent(params.sampling_rate,
                                                     params.theta)
  assert event.to_named_tuple().event.class_name == "TrieHHLevelDpEvent"


def test_composed_with_counting_as_the_counting_phase_composes():
  params = _poisson_params(10**4, 3.0)
  sigma, rate = 3.0, 0.1
  ours = counting.compose(params, sigma, rate, 2 * params.delta)
  accountant = dp_events.PLDAccountant(_Relation.ADD_OR_REMOVE_ONE, 1e-3)
  accountant.compose(dp_events.run_event(params))
  accountant.compose(dp_accounting.PoissonSampledDpEvent(
      rate, dp_accounting.GaussianDpEvent(sigma)))
  assert accountant.get_epsilon(2 * params.delta) == pytest.approx(
      ours.pld_epsilon, rel=1e-2)
  # The counting phase's discovery distribution is the event's.
  assert counting.discovery_pld(params) is dp_events.run_pld(
      params, counting.DISCRETIZATION)


def test_replace_one_reads_the_swap_product_accountant():
  params = _poisson_params(10**4, 4.0, adjacency="REPLACE_ONE",
                           population_size=10**4)
  accountant = dp_events.PLDAccountant(_Relation.REPLACE_ONE, 1e-3)
  accountant.compose(dp_events.run_event(params))
  replace = poisson.epsilon_for_delta(params.sampling_rate, params.theta, 11,
                                      params.delta, adjacency="REPLACE_ONE")
  add_remove = poisson.epsilon_for_delta(params.sampling_rate, params.theta,
                                         11, params.delta)
  assert replace > add_remove
  assert accountant.get_epsilon(params.delta) == pytest.approx(replace,
                                                               rel=1e-2)


def test_theorem_1_composes_only_for_replace_special():
  params = policy.resolve(10**6, 10, Target(4.0, sampling="fixed"))
  assert params.adjacency == "REPLACE_SPECIAL"
  event = dp_events.run_event(params)
  assert isinstance(event, dp_events.TheoremOneDpEvent)
  special = dp_events.PLDAccountant(_Relation.REPLACE_SPECIAL, 1e-3)
  special.compose(event)
  assert special.get_epsilon(params.delta) == pytest.approx(params.epsilon,
                                                            rel=1e-2)
  refused = dp_events.PLDAccountant(_Relation.ADD_OR_REMOVE_ONE, 1e-3)
  assert not refused.supports(event)


def test_a_run_without_guarantee_has_no_event():
  params = policy.resolve(10**4, 10, Mechanism(
      theta=2, batch_size=5000, allow_no_guarantee=True, sampling="fixed"))
  with pytest.raises(ValueError, match="no privacy guarantee"):
    dp_events.run_event(params)


def test_a_noisy_tries_params_are_named_with_where_to_look():
  # run_event and Guarantee.of failed with AttributeError on them.
  from triehh.theory import mechanism  # pylint: disable=g-import-not-at-top
  from triehh.theory import noisy_trie  # pylint: disable=g-import-not-at-top
  params = noisy_trie.NoisyTrieParams(sigma=5.0, num_levels=3,
                                     false_positive_rate=1e-5)
  with pytest.raises(TypeError, match="noisy_trie.dp_event"):
    dp_events.run_event(params)
  with pytest.raises(TypeError, match="result.guarantee"):
    mechanism.Guarantee.of(params)


@pytest.mark.parametrize("epsilon, delta, match", [
    (float("inf"), 1e-6, r"^epsilon must be a finite number >= 0, got "
     r"epsilon=inf$"),
    (float("nan"), 1e-6, r"^epsilon must be a finite number >= 0, got "
     r"epsilon=nan$"),
    (-1.0, 1e-6, r"^epsilon must be a finite number >= 0, got epsilon=-1\.0$"),
    (1.0, 1.0, r"^delta must be in \[0, 1\), got delta=1\.0$"),
    (1.0, float("nan"), r"^delta must be in \[0, 1\), got delta=nan$"),
])
def test_a_theorem_one_event_checks_its_fields(epsilon, delta, match):
  # inf and nan were taken, then failed in the accountant ("cannot convert
  # float infinity to integer").
  with pytest.raises(ValueError, match=match):
    dp_events.TheoremOneDpEvent(epsilon, delta)


@pytest.mark.parametrize("rate, theta, error, match", [
    (None, None, TypeError, r"^sampling_rate must be a number, got None$"),
    ("0.3", 20, TypeError, r"^sampling_rate must be a number, got '0\.3'$"),
    (1.0, 20, ValueError, r"^sampling_rate must be in \(0, 1\) "),
    (0.3, None, TypeError, r"^theta must be an integer, got None$"),
    (0.3, 20.5, TypeError, r"^theta must be an integer, got 20\.5$"),
    (0.3, 0, ValueError, r"^theta must be >= 1, got 0$"),
])
def test_a_level_event_checks_its_fields(rate, theta, error, match):
  # (None, None) failed in the accountant; ('0.3', 20) was composed.
  with pytest.raises(error, match=match):
    dp_events.TrieHHLevelDpEvent(rate, theta)


def test_an_infinite_epsilon_never_reaches_the_accountant():
  accountant = dp_events.PLDAccountant(
      dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
  with pytest.raises(ValueError, match="^epsilon must be a finite number"):
    accountant.compose(dp_events.TheoremOneDpEvent(float("inf"), 1.0))


def test_a_composition_too_long_is_refused_before_it_starts(monkeypatch):
  monkeypatch.setattr(poisson, "_run_loss", lambda *a: 1 / 0)
  accountant = dp_events.PLDAccountant()
  event = dp_accounting.SelfComposedDpEvent(
      dp_events.TrieHHLevelDpEvent(0.3, 20), 1001)
  with pytest.raises(ValueError, match=r"^num_levels=1001 levels would take "
                     r"about [\d.]+ (minutes|hours) to account for Poisson "
                     r"sampling"):
    accountant.compose(event)


def test_the_release_event_of_a_counted_run_is_the_whole_run():
  import triehh  # pylint: disable=g-import-not-at-top
  users = ["sun"] * 3000 + ["moon"] * 2000 + [f"w{i}" for i in range(5000)]
  result = triehh.discover(users, Target(4.0, delta=1e-8), counts=True)

  def epsilon(event):
    accountant = dp_events.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(event)
    return accountant.get_epsilon(1e-8)

  # Discovery's event alone under-counts (its share of the budget); the
  # release's composes the counting phase and gives the run's own total.
  assert epsilon(dp_events.run_event(result.params)) < 3.5
  # The counting phase's event is the discrete law's, not a Gaussian's.
  counted = dp_events.release_event(result).events[1]
  assert counted == dp_events.DiscreteGaussianDpEvent(
      result.counts.noise_std, result.counts.sample_rate)
  assert epsilon(dp_events.release_event(result)) == pytest.approx(
      result.counts.epsilon, rel=2e-3)
  uncounted = triehh.discover(users, Target(4.0, delta=1e-8))
  assert (dp_events.release_event(uncounted)
          == dp_events.run_event(uncounted.params))


def test_get_epsilon_below_the_least_delta_warns_why_and_answers_inf():
  params = policy.resolve(10_000, 10, Target(4.0, sampling="poisson",
                                             population_size=10_000))
  accountant = dp_events.PLDAccountant(value_discretization_interval=1e-3)
  accountant.compose(dp_events.run_event(params))
  least = accountant.least_delta()
  assert 0 < least <= params.delta
  with pytest.warns(dp_events.DeltaTooSmallWarning, match=(
      r"^get_epsilon: no epsilon holds at target_delta=1e-10 below "
      rf"{least:.3g}, the least the composed events reach .*inf")):
    assert accountant.get_epsilon(1e-10) == float("inf")


def test_get_epsilon_at_the_runs_own_delta_does_not_warn():
  params = policy.resolve(10_000, 10, Target(4.0, sampling="poisson",
                                             population_size=10_000))
  accountant = dp_events.PLDAccountant(value_discretization_interval=1e-3)
  accountant.compose(dp_events.run_event(params))
  import warnings  # pylint: disable=g-import-not-at-top
  with warnings.catch_warnings():
    warnings.simplefilter("error", dp_events.DeltaTooSmallWarning)
    assert accountant.get_epsilon(params.delta) == pytest.approx(
        params.epsilon, rel=2e-3)


_RELATION = dp_accounting.NeighboringRelation


@pytest.mark.parametrize("event, refused, accepted", [
    (dp_events.SkellamDpEvent(8.0), _RELATION.ADD_OR_REMOVE_ONE,
     _RELATION.REPLACE_SPECIAL),
    (dp_events.SkellamDpEvent(8.0), _RELATION.ADD_OR_REMOVE_ONE,
     _RELATION.REPLACE_ONE),
    (dp_events.TheoremOneDpEvent(1.0, 1e-6), _RELATION.ADD_OR_REMOVE_ONE,
     _RELATION.REPLACE_SPECIAL),
])
def test_a_round_event_is_composed_only_under_the_relations_it_covers(
    event, refused, accepted):
  with pytest.raises(dp_accounting.UnsupportedEventError,
                     match=f"only, not {refused.name}"):
    dp_events.PLDAccountant(neighboring_relation=refused).compose(event)
  accountant = dp_events.PLDAccountant(neighboring_relation=accepted)
  accountant.compose(event, 2)
  assert 0.0 < accountant.get_epsilon(1e-5) < float("inf")


@pytest.mark.parametrize("rate", [1.0, 0.5])
def test_the_discrete_gaussian_replacing_one_is_its_two_directions_composed(
    rate):
  """Under REPLACE_ONE both accountants take the swap: the PLD's epsilon is
  that of the round composed with its directions swapped, the RDP's
  curve the sum of the two directions (twice the unsampled one's)."""
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  event = dp_events.DiscreteGaussianDpEvent(2.0, rate)
  swap = dp_events.PLDAccountant(_RELATION.REPLACE_ONE,
                                 value_discretization_interval=1e-3)
  swap.compose(event, 3)
  one = discrete_gaussian.round_pld(2.0, rate, 1e-3)
  both = one.compose(pld_lib.PrivacyLossDistribution(
      one._pmf_add, one._pmf_remove)).self_compose(3)  # pylint: disable=protected-access
  assert swap.get_epsilon(1e-6) == pytest.approx(
      both.get_epsilon_for_delta(1e-6), rel=1e-9)
  plain = dp_events.PLDAccountant(value_discretization_interval=1e-3)
  plain.compose(event, 3)
  assert swap.get_epsilon(1e-6) > plain.get_epsilon(1e-6)
  rdp = dp_events.RdpAccountant(_RELATION.REPLACE_ONE)
  rdp.compose(event)
  orders = np.asarray(sampled_renyi.ORDERS, dtype=float)
  expected = (orders / 4.0 if rate == 1.0 else np.array(
      [sampled_renyi.round_divergence(2.0, rate, a, replace_one=True)
       for a in sampled_renyi.ORDERS]))
  np.testing.assert_allclose(rdp._rdp, expected, rtol=1e-12)  # pylint: disable=protected-access


@pytest.mark.parametrize("rate", [1.0, 0.5])
def test_the_discrete_laplace_event_is_pure_in_both_relations(rate):
  """The PLD accountant's epsilon at delta 0 is the round's pure epsilon
  (ln(1 + q(e^(1/b) - 1)); under REPLACE_ONE plus -ln(1 - q(1 -
  e^(-1/b))), closed forms here) to the grid's rounding, as
  triehh.theory.discrete_laplace says; bad values are named."""
  event = dp_events.DiscreteLaplaceDpEvent(1.5, rate)
  adding = math.log1p(rate * math.expm1(1.0 / 1.5))
  removing = -math.log1p(-rate * (1.0 - math.exp(-1.0 / 1.5)))
  for relation, one in ((_RELATION.ADD_OR_REMOVE_ONE, adding),
                        (_RELATION.REPLACE_ONE, adding + removing)):
    accountant = dp_events.PLDAccountant(
        relation, value_discretization_interval=1e-4)
    accountant.compose(event, 3)
    assert abs(accountant.get_epsilon(0.0) - 3 * one) <= 6 * 1e-4 + 1e-9
    assert discrete_laplace.round_epsilon(
        1.5, rate, relation == _RELATION.REPLACE_ONE) == pytest.approx(
            one, rel=1e-12)
  with pytest.raises(ValueError, match="scale"):
    dp_events.DiscreteLaplaceDpEvent(math.inf)
  with pytest.raises(ValueError, match="sampling_rate"):
    dp_events.DiscreteLaplaceDpEvent(1.0, 1.5)


def test_a_swap_renyi_event_covers_replace_one_and_a_plain_one_does_not():
  swap = dp_events.RenyiDpEvent(8, 0.5, replace_one=True)
  accountant = dp_events.RdpAccountant(_RELATION.REPLACE_ONE)
  accountant.compose(swap)
  assert accountant.get_epsilon(1e-6) == pytest.approx(
      sampled_renyi.epsilon_at_order(8, 0.5, 1e-6), rel=1e-6)
  with pytest.raises(dp_accounting.UnsupportedEventError):
    dp_events.RdpAccountant(_RELATION.REPLACE_ONE).compose(
        dp_events.RenyiDpEvent(8, 0.5))
  with pytest.raises(TypeError, match="replace_one must be True or False"):
    dp_events.RenyiDpEvent(8, 0.5, replace_one="yes")


# ---- the RDP accountant: any delta ------------------------------------------


def test_the_rdp_accountant_reads_a_noisy_runs_label_below_the_pld():
  from triehh.theory import noisy_trie  # pylint: disable=g-import-not-at-top
  delta = 1e-18
  for rate in (0.125, 1.0):
    params = noisy_trie.NoisyTrieParams(sigma=4.0, num_levels=6,
                                        sampling_rate=rate,
                                        false_positive_rate=1e-3)
    event = noisy_trie.dp_event(params)
    accountant = dp_events.RdpAccountant()
    accountant.compose(event)
    label = noisy_trie.epsilon(params, delta)
    # Sampled: the same curve; unsampled: the zCDP bound over real orders,
    # the accountant's over integer ones (a hair larger).
    assert accountant.get_epsilon(delta) == pytest.approx(label, rel=3e-3)
    # The PLD accountant cannot answer there.
    pld_accountant = dp_events.PLDAccountant(value_discretization_interval=1e-3)
    pld_accountant.compose(event)
    with pytest.warns(dp_events.DeltaTooSmallWarning):
      assert pld_accountant.get_epsilon(delta) == float("inf")
  # dp_accounting's own events compose beside it, as its accountant does:
  # one more release, a larger epsilon.
  sampled = dp_events.RdpAccountant()
  sampled.compose(dp_events.DiscreteGaussianDpEvent(4.0, 0.125), 6)
  alone = sampled.get_epsilon(delta)
  sampled.compose(dp_accounting.GaussianDpEvent(10.0))
  assert sampled.get_epsilon(delta) > alone * 1.05


def test_the_rdp_accountant_refuses_other_relations_for_the_event():
  accountant = dp_events.RdpAccountant(
      dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
  with pytest.raises(dp_accounting.UnsupportedEventError,
                     match="ADD_OR_REMOVE_ONE and REPLACE_ONE only"):
    accountant.compose(dp_events.DiscreteGaussianDpEvent(4.0, 0.5))
  with pytest.raises(dp_accounting.UnsupportedEventError):
    dp_events.RdpAccountant().compose(dp_events.SkellamDpEvent(10.0))


def test_a_renyi_event_is_composed_at_its_order_only():
  """The RDP accountant says CKS20 Proposition 12 at the event's order
  (twice the divergence for two events); the PLD accountant and other
  relations refuse it; an order the accountant lacks is refused."""
  from triehh.theory import sampled_renyi  # pylint: disable=g-import-not-at-top
  accountant = dp_events.RdpAccountant()
  accountant.compose(dp_events.RenyiDpEvent(12, 0.2), 2)
  assert accountant.get_epsilon(1e-12) == pytest.approx(
      0.4 + (math.log(1e12) + 11 * math.log1p(-1 / 12) - math.log(12)) / 11,
      rel=1e-9)
  assert accountant.get_epsilon(1e-12) == pytest.approx(
      sampled_renyi.epsilon_at_order(12, 0.4, 1e-12), rel=1e-9)
  special = dp_events.RdpAccountant(
      dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
  special.compose(dp_events.RenyiDpEvent(12, 0.2))
  with pytest.raises(dp_accounting.UnsupportedEventError):
    dp_events.RdpAccountant(
        dp_accounting.NeighboringRelation.REPLACE_ONE).compose(
            dp_events.RenyiDpEvent(12, 0.2))
  with pytest.raises(dp_accounting.UnsupportedEventError):
    dp_events.RdpAccountant().compose(dp_events.RenyiDpEvent(100_001, 0.2))
  with pytest.raises(dp_accounting.UnsupportedEventError):
    dp_events.PLDAccountant().compose(dp_events.RenyiDpEvent(12, 0.2))
  for order, divergence in ((1, 0.2), (12, -0.1), (12, math.inf)):
    with pytest.raises(ValueError):
      dp_events.RenyiDpEvent(order, divergence)


@pytest.mark.parametrize("rate", [1.0, 0.25])
def test_the_rdp_accountant_takes_the_discrete_laplace_as_pure_dp(rate):
  """min(eps, alpha eps^2 / 2) at every order (pure eps-DP is eps^2/2-zCDP,
  Bun and Steinke 2016), eps the round's closed form written here."""
  x = 1.0 / 2.5
  for relation in (_RELATION.ADD_OR_REMOVE_ONE, _RELATION.REPLACE_ONE):
    eps = math.log1p(rate * math.expm1(x))
    if relation == _RELATION.REPLACE_ONE:
      eps -= math.log1p(-rate * (1.0 - math.exp(-x)))
    accountant = dp_events.RdpAccountant(relation)
    accountant.compose(dp_events.DiscreteLaplaceDpEvent(2.5, rate), 4)
    orders = np.asarray(sampled_renyi.ORDERS, dtype=float)
    np.testing.assert_allclose(
        accountant._rdp, 4 * np.minimum(eps, orders * eps**2 / 2),  # pylint: disable=protected-access
        rtol=1e-12)
    # The conversion answers at a delta the PLD cannot reach.
    assert 0 < accountant.get_epsilon(1e-18) < math.inf
