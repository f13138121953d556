"""Tests of triehh.discover over every mechanism: one protocol, one result
type, dispatch through the mechanism and engine registries."""

import dataclasses

import dp_accounting
import pytest

import triehh
from triehh.baselines.partition_selection import PartitionSelectionTarget
from triehh.core.release import Release
from triehh.engines import registry as engines
from triehh.mechanisms import protocol
from triehh.mechanisms import registry
from triehh.theory import dp_events

_WORDS = ["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000 + [
    f"w{i}" for i in range(4000)]
_USERS = triehh.Population.from_user_words(
    _WORDS, alphabet="0123456789amnorstuw")

_PRIVACY = {
    "triehh": triehh.Target(4.0, delta=1e-8),
    "noisy_trie": triehh.NoisyTarget(4.0, delta=1e-8),
    "partition_selection": PartitionSelectionTarget(4.0, delta=1e-8),
}


@pytest.mark.parametrize("name", sorted(_PRIVACY))
def test_every_mechanism_returns_a_release_its_protocol_describes(name):
  privacy = _PRIVACY[name]
  mechanism = registry.for_privacy(privacy)
  assert mechanism.name == name
  result = triehh.discover(_USERS, privacy, seed=3)
  assert isinstance(result, Release)
  assert result.mechanism == name
  assert {"sun", "moon", "star"} <= set(result.words)
  assert result.per_round and result.seconds >= 0
  # The protocol's own parts agree with the run's label.
  params = mechanism.calibrate(privacy, _USERS.num_users,
                               protocol.Shape.of(_USERS))
  guarantee = mechanism.guarantee(params)
  assert guarantee.epsilon == pytest.approx(result.guarantee.epsilon,
                                            rel=1e-9)
  assert guarantee.delta == result.guarantee.delta == 1e-8
  assert guarantee.adjacencies == result.guarantee.adjacencies
  assert guarantee.trust and guarantee.public
  assert isinstance(mechanism.dp_event(params), dp_accounting.DpEvent)


@pytest.mark.parametrize("name", ["triehh", "noisy_trie"])
def test_the_dp_event_composes_to_the_runs_own_epsilon(name):
  mechanism = registry.get(name)
  params = mechanism.calibrate(_PRIVACY[name], _USERS.num_users,
                               protocol.Shape.of(_USERS))
  accountant = dp_events.PLDAccountant(
      value_discretization_interval=1e-3)
  accountant.compose(mechanism.dp_event(params))
  assert accountant.get_epsilon(1e-8) == pytest.approx(
      mechanism.guarantee(params).epsilon, rel=2e-3)


def test_a_number_is_triehhs_target_epsilon_numpy_scalars_included():
  import numpy as np  # pylint: disable=g-import-not-at-top
  for epsilon in (4, 4.0, np.float32(4.0), np.float64(4.0)):
    assert triehh.discover(_WORDS, epsilon).mechanism == "triehh"


def test_an_unknown_privacy_object_names_the_known_ones():
  with pytest.raises(TypeError, match="NoisyTarget, PartitionSelection"
                     "Target"):
    triehh.discover(_WORDS, "4")


@pytest.mark.parametrize("name", ["noisy_trie", "partition_selection"])
@pytest.mark.parametrize("extra", [dict(counts=True),
                                   dict(passes=triehh.Passes(2))])
def test_triehhs_extras_are_refused_by_the_other_mechanisms(name, extra):
  with pytest.raises(ValueError, match=f"the {name} mechanism runs alone"):
    triehh.discover(_USERS, _PRIVACY[name], **extra)


def test_an_engine_that_does_not_serve_the_mechanism_is_refused_first():
  with pytest.raises(ValueError, match="engine 'fast' does not run the "
                     "iblt_or_other mechanism"):
    engines.get("fast").runner("iblt_or_other")
  with pytest.raises(ValueError, match="engine 'beam' does not run the "
                     "triehh mechanism; it runs .*partition_selection"):
    triehh.discover(_USERS, _PRIVACY["triehh"], engine="beam")
  with pytest.raises(ValueError, match="unknown engine 'nowhere'"):
    triehh.discover(_USERS, _PRIVACY["noisy_trie"], engine="nowhere")


@pytest.mark.parametrize("name", sorted(_PRIVACY))
def test_data_larger_than_a_declared_size_is_refused(name):
  import dataclasses  # pylint: disable=g-import-not-at-top
  privacy = dataclasses.replace(_PRIVACY[name], population_size=5_000)
  with pytest.raises(ValueError, match="5,000"):
    triehh.discover(_USERS, privacy)


def test_registering_a_privacy_type_twice_for_two_mechanisms_is_refused():

  class Other(protocol.BaseMechanism):
    name = "other"
    privacy_types = (triehh.NoisyTarget,)

    def calibrate(self, privacy, population_size, shape):
      raise NotImplementedError

    guarantee = dp_event = run = calibrate

  with pytest.raises(ValueError, match="NoisyTarget already asks for the "
                     "noisy_trie mechanism"):
    registry.register(Other())
  with pytest.raises(TypeError, match="it lacks name, .*calibrate"):
    registry.register(object())
  assert "other" not in registry.names()


def test_sfp_is_a_mechanism_its_release_labelled_as_its_plan():
  from triehh.baselines.sfp import SFPTarget  # pylint: disable=g-import-not-at-top
  users = _WORDS * 5  # SFP's fragment positions need more users
  privacy = SFPTarget(4.0, delta=1e-8)
  mechanism = registry.for_privacy(privacy)
  result = triehh.discover(users, privacy, seed=1)
  assert isinstance(result, Release) and result.mechanism == "sfp"
  assert result.words[:3] == ("sun", "moon", "star")  # ranked by estimate
  plan = mechanism.calibrate(privacy, len(users), protocol.Shape(8))
  assert mechanism.guarantee(plan) == result.guarantee
  assert isinstance(mechanism.dp_event(plan),
                    dp_accounting.UnsupportedDpEvent)


def _iblt_target():
  from triehh.baselines import IBLTTarget  # pylint: disable=g-import-not-at-top
  return IBLTTarget(k_anonymity=20,
                    batch=triehh.Target(4.0, sampling="fixed"))


def test_iblt_is_a_mechanism_without_dp_on_its_own_engine():
  mechanism = registry.for_privacy(_iblt_target())
  assert mechanism.name == "iblt" and mechanism.default_engine == "tff"
  plan = mechanism.calibrate(_iblt_target(), _USERS.num_users,
                             protocol.Shape.of(_USERS))
  # TrieHH's fixed-size batch for the same target and data.
  assert plan.batch_size == triehh.discover(
      _WORDS, triehh.Target(4.0, sampling="fixed")).params.batch_size
  guarantee = mechanism.guarantee(plan)
  assert guarantee.adjacencies == () and guarantee.epsilon == float("inf")
  assert "not differential privacy" in guarantee.accounting
  assert mechanism.dp_event(plan) is None
  with pytest.raises(ValueError, match="engine 'fast' does not run the "
                     "iblt mechanism"):
    triehh.discover(_USERS, _iblt_target(), engine="fast")


@pytest.mark.tff
@pytest.mark.slow
def test_iblt_runs_through_discover_on_tff_labelled_as_its_plan():
  result = triehh.discover(_WORDS, _iblt_target(), seed=1)
  assert isinstance(result, Release) and result.mechanism == "iblt"
  assert result.words == ("sun", "moon", "star")  # ranked by count
  mechanism = registry.get("iblt")
  plan = mechanism.calibrate(_iblt_target(), len(_WORDS), protocol.Shape.of(
      triehh.Population.from_user_words(_WORDS)))
  assert result.params.batch_size == plan.batch_size
  assert result.guarantee == mechanism.guarantee(plan)


def test_fixed_size_batches_for_another_declared_size_are_refused():
  # Sized for the declared n, drawn from |D|: each user sampled more often
  # than accounted, which no proof bounds.
  with pytest.raises(ValueError, match="population_size=20,000 is declared, "
                     "but the data holds 10,000 users: fixed-size batches"):
    triehh.discover(_WORDS, triehh.Target(4.0, sampling="fixed",
                                          population_size=20_000))
  # The declared size of the data itself, and Poisson's rate, are covered.
  same = triehh.discover(_WORDS, triehh.Target(4.0, sampling="fixed",
                                               population_size=10_000))
  assert same.guarantee.n_source == "declared"
  larger = triehh.discover(_WORDS, triehh.Target(4.0,
                                                 population_size=20_000))
  assert larger.guarantee.adjacencies[0].value == "ADD_OR_REMOVE_ONE"


def test_counts_with_replace_one_asked_are_refused():
  with pytest.raises(ValueError, match="counts=True cannot go with "
                     "adjacency='REPLACE_ONE'"):
    triehh.discover(_WORDS, triehh.Target(4.0, delta=1e-8,
                                          adjacency="REPLACE_ONE"),
                    counts=True)


def test_a_runs_guarantee_with_counts_is_the_total_of_both_phases():
  result = triehh.discover(_WORDS, triehh.Target(4.0, delta=1e-8),
                           counts=True)
  assert result.guarantee.epsilon == result.counts.epsilon <= 4.0
  assert result.guarantee.delta == result.counts.delta
  assert result.params.epsilon < result.guarantee.epsilon  # discovery's


def test_distributed_noise_for_another_declared_size_is_refused(
    monkeypatch):
  # Refused before the engine runs: the runner is a stand-in that fails,
  # the TFF engine's option check one that says the noise is distributed.
  from triehh.mechanisms import noisy_trie  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(noisy_trie, "_checked_options",
                      lambda *args: noisy_trie.DISTRIBUTED)
  engines.register("split_noise", None,
                   mechanisms={"noisy_trie": lambda *a, **k: 1 / 0})
  try:
    mechanism = registry.get("noisy_trie")
    params = mechanism.calibrate(
        triehh.NoisyTarget(4.0, population_size=20_000), 20_000,
        protocol.Shape(8, single_word=True, declared=True))
    with pytest.raises(ValueError, match="declared population_size=20,000 "
                       "with 10,000 users present"):
      mechanism.run(_USERS, params, 0, "split_noise")
  finally:
    engines._ENGINES.pop("split_noise")  # pylint: disable=protected-access


# ---- randomness: fresh entropy unless a simulation asks for a seed ----------


@pytest.mark.parametrize("name", sorted(_PRIVACY))
def test_without_a_seed_the_run_draws_fresh_entropy_and_says_so(name):
  result = triehh.discover(_USERS, _PRIVACY[name])
  seeded = triehh.discover(_USERS, _PRIVACY[name], seed=5)
  if name == "partition_selection":  # python-dp's noise takes no seed
    noise = ("; PipelineDP's noise from python-dp's secure randomness (the "
             "operating system's), not reproducible")
    assert result.guarantee.randomness == (
        "fresh entropy (not recorded) for the word choice" + noise)
    assert seeded.guarantee.randomness == "seed 5 for the word choice" + noise
  else:
    assert result.guarantee.randomness == "fresh entropy (not recorded)"
    assert seeded.guarantee.randomness == (
        "seed 5 (a simulation: whoever knows the seed can undo the noise)")
  # The same parameters, the same guarantee: how the run drew its
  # randomness is said, not compared.
  assert seeded.guarantee == result.guarantee


def test_runs_without_a_seed_differ_and_a_seed_repeats():
  # The noisy trie's released sums carry Gaussian noise of sigma > 1:
  # two fresh draws agree with probability 0.
  noisy = _PRIVACY["noisy_trie"]
  first, second = (triehh.discover(_USERS, noisy) for _ in range(2))
  assert first.words and not (
      first.words == second.words
      and (first.noisy_counts == second.noisy_counts).all())
  again = [triehh.discover(_USERS, noisy, seed=11) for _ in range(2)]
  assert again[0].words == again[1].words
  assert again[0].noisy_counts == pytest.approx(again[1].noisy_counts)
  # TrieHH: the sampled users' votes differ between fresh runs.
  votes = [triehh.discover(_WORDS, 4.0).unprotected.votes for _ in range(2)]
  assert votes[0] != votes[1]


def test_the_other_entry_points_draw_fresh_entropy_by_default():
  sfp = triehh.sfp_discover(_WORDS, triehh.SFPTarget(epsilon=4.0, top_t=5))
  assert sfp.seed is None
  assert sfp.guarantee.randomness == "fresh entropy (not recorded)"
  assert triehh.sfp_discover(
      _WORDS, triehh.SFPTarget(epsilon=4.0, top_t=5),
      seed=2).guarantee.randomness.startswith("seed 2 (a simulation")
  passes = triehh.discover(_WORDS, triehh.Target(4.0, sampling="fixed"),
                           passes=triehh.Passes(2))
  assert passes.seed is None
  assert passes.guarantee.randomness == "fresh entropy (not recorded)"
  counted = triehh.discover(_WORDS, 4.0, counts=True)
  assert counted.guarantee.randomness == "fresh entropy (not recorded)"


# A delta of 1e-3 is above 1/n = 1e-4 for the 10,000 users of _USERS.
_ABOVE = {
    "triehh": triehh.Target(4.0, delta=1e-3),
    "noisy_trie": triehh.NoisyTarget(4.0, delta=1e-3),
    "partition_selection": PartitionSelectionTarget(4.0, delta=1e-3),
    "sfp": triehh.SFPTarget(4.0, 1e-3),
}


@pytest.mark.parametrize("name", sorted(_ABOVE))
def test_a_delta_above_1_over_n_is_refused_before_the_run(name, monkeypatch):
  mechanism = registry.for_privacy(_ABOVE[name])
  monkeypatch.setattr(type(mechanism), "run", _no_run)
  with pytest.raises(ValueError, match=(
      r"^delta=0\.001 is above 1/n = 1/10,000 = 0\.0001, which protects "
      r"nobody .*pass allow_delta_above_1_over_n=True to run it anyway$")):
    triehh.discover(_USERS, _ABOVE[name], seed=3)


def _no_run(*args, **kwargs):
  raise AssertionError("ran")


@pytest.mark.parametrize("name", ["triehh", "partition_selection"])
def test_opted_in_the_run_says_its_delta_protects_nobody(name):
  privacy = dataclasses.replace(_ABOVE[name], allow_delta_above_1_over_n=True)
  result = triehh.discover(_USERS, privacy, seed=3)
  assert result.guarantee.delta == pytest.approx(1e-3, rel=1e-6)
  assert result.guarantee.describe().endswith(
      "; WEAK: delta=0.001 exceeds 1/n = 1/10,000 = 0.0001: it protects "
      "nobody (publishing one user's data at random meets it)")
  plain = triehh.discover(_USERS, _PRIVACY[name], seed=3)
  assert plain.guarantee.caveat == "" and "WEAK" not in (
      plain.guarantee.describe())


@pytest.mark.parametrize("name", ["triehh", "partition_selection"])
def test_the_bound_is_1_over_the_declared_size(name):
  # 1e-4 is 1/n of the data's 10,000 users, above 1/20,000 declared.
  privacy = dataclasses.replace(_PRIVACY[name], delta=1e-4,
                                population_size=20_000)
  with pytest.raises(ValueError, match=r"^delta=0\.0001 is above 1/n = "
                     r"1/20,000"):
    triehh.discover(_USERS, privacy, seed=3)
  triehh.discover(_USERS, dataclasses.replace(privacy, population_size=None),
                  seed=3)


def test_the_delta_of_given_parameters_is_refused_naming_them():
  users = ["ab"] * 200 + ["ba"] * 150 + ["c"] * 50
  with pytest.raises(ValueError, match=(
      r"^theta=4 and its sampling as given give a guarantee whose delta, "
      r"0\.0833, is above 1/n = 1/400 .*allow_delta_above_1_over_n=True")):
    triehh.discover(users, triehh.Mechanism(theta=4, batch_size=40),
                    max_length=2)


def test_counts_and_passes_refuse_it_too():
  with pytest.raises(ValueError, match=r"^delta=0\.001 is above 1/n"):
    triehh.discover(_WORDS, _ABOVE["triehh"], counts=True)
  with pytest.raises(ValueError, match=r"^delta=0\.001 is above 1/n"):
    triehh.discover(_WORDS, triehh.Target(4.0, delta=1e-3),
                    passes=triehh.Passes(2))
