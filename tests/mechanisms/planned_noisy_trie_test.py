"""Tests of the planned noisy trie as a mechanism: triehh.discover with a
NoisyTarget that has an upload budget."""

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest

import triehh
from triehh.engines import noisy as noisy_engine
from triehh.mechanisms import noisy_trie as noisy_mechanism
from triehh.mechanisms import plan_choice
from triehh.mechanisms import planned_noisy_trie as planned
from triehh.mechanisms import protocol
from triehh.theory import distributed_noise
from triehh.theory import dp_events
from triehh.theory import noisy_plan
from triehh.theory.adjacency import Adjacency
from tests.mechanisms import replace_special

_ALPHABET = "0123456789amnorstuw"
_WORDS = ["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000 + [
    f"w{i}" for i in range(4000)]
_USERS = triehh.Population.from_user_words(_WORDS, alphabet=_ALPHABET)
_BUDGET = triehh.UploadBudget(200_000)
_TARGET = triehh.NoisyTarget(4.0, upload_budget=_BUDGET)
_MECHANISM = noisy_mechanism.MECHANISM


def _fields(plan) -> dict:
  return {f.name: getattr(plan, f.name)
          for f in dataclasses.fields(noisy_plan.NoisyPlan)}


@pytest.fixture(scope="module")
def release():
  return triehh.discover(_USERS, _TARGET, seed=0)


def test_a_budget_runs_the_planned_trie_and_finds_the_frequent_words(
    release):
  assert isinstance(release, planned.PlannedNoisyTrieRelease)
  assert isinstance(release.params, planned.CalibratedPlan)
  assert {"sun", "moon", "star"} <= set(release.words)
  # The budget is one false word a run in expectation (about 0.9 over 60
  # seeds here): what is counted is what no user holds.
  held = set(_WORDS)
  assert release.num_false_words == sum(w not in held for w in release.words)
  assert release.notes == ()
  assert release.mechanism == "noisy_trie"
  assert len(release.per_round) == len(release.levels) >= 1
  assert release.unprotected == {"false_words": tuple(
      w for w in release.words if w not in held)}
  again = triehh.discover(_USERS, _TARGET, seed=0)
  assert again.words == release.words


def test_the_release_carries_the_planned_upload_within_the_budget(release):
  per_round = release.upload_bytes_per_round
  assert per_round == tuple(level.upload_bytes for level in release.levels)
  assert release.upload_bytes == sum(per_round) > 0
  assert release.upload_bytes <= _BUDGET.bytes_per_run
  # Each round's bytes recomputed from its characters and its blocks'
  # bits: at least one bit per candidate, at most n's bits.
  plan = release.params
  for level in release.levels:
    candidates = level.stats.num_candidates
    assert math.ceil(candidates / 8) <= level.upload_bytes
    assert level.upload_bytes <= math.ceil(
        candidates * noisy_plan.bits_for(4 * plan.population_size) / 8)
  assert release.levels[-1].verification  # the default rule verifies
  assert release.chars_per_round == tuple(l.chars
                                          for l in release.levels[:-1])


def test_the_plan_is_the_one_computed_from_public_values_alone(release):
  # n, L, A, one word, epsilon, delta = 1/n^2, the budget: nothing else.
  n, length, size = 10_000, _USERS.max_length, _USERS.alphabet.size
  want = plan_choice.choose(n, length, size, 4.0, 1.0 / n**2,
                            budget=_BUDGET, one_word=True)
  assert _fields(release.params) == _fields(want)
  # ...the candidate with the most true words on the prior, a plan of
  # noisy_plan.plan at its own rule and q.
  scored = plan_choice.candidates(n, length, size, 4.0, 1.0 / n**2, _BUDGET,
                                  True)
  best = max(c.true_words for c, _ in scored)
  (chosen,) = [c for c, p in scored if p == want][:1]
  assert chosen.true_words == best
  assert _fields(want) == _fields(noisy_plan.plan(
      n, length, size, 4.0, 1.0 / n**2, one_word=True, rule=chosen.rule,
      budget=dataclasses.replace(_BUDGET,
                                 sampling_rate=chosen.sampling_rate),
      noise_law=chosen.noise_law))
  # calibrate is handed the public shape only, never the population.
  by_hand = _MECHANISM.calibrate(
      _TARGET, n, protocol.Shape(length, single_word=True,
                                 alphabet_size=size))
  assert by_hand == release.params


def test_other_data_of_the_same_public_shape_gets_the_same_plan(release):
  words = ["zzz"] * 9000 + ["a"] * 1000
  other = triehh.Population.from_user_words(
      [w.replace("z", "w") for w in words], alphabet=_ALPHABET,
      max_length=_USERS.max_length)
  assert other.num_users == _USERS.num_users
  result = triehh.discover(other, _TARGET, seed=3)
  assert result.params == release.params
  assert result.guarantee == release.guarantee


def test_a_declared_n_covers_add_or_remove_and_n_from_data_does_not(
    release):
  assert release.guarantee.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert release.guarantee.n_source == "data"
  assert "same size" in release.guarantee.covers
  declared = triehh.discover(
      _USERS, triehh.NoisyTarget(4.0, delta=1e-8, population_size=20_000,
                                 upload_budget=_BUDGET), seed=0)
  g = declared.guarantee
  assert g.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                           Adjacency.REPLACE_SPECIAL)
  # delta as asked, or 0 where the prior chose discrete Laplace noise.
  assert g.n_source == "declared"
  assert g.delta == (0.0 if declared.params.laplace else 1e-8)
  assert declared.params.population_size == 20_000
  assert "any size" in g.covers and "200,000 bytes" in g.covers
  assert "declared population size" in g.public


def _exact_delta(sigmas, epsilon: float) -> float:
  """delta(epsilon) of R discrete Gaussian rounds at ``sigmas`` on sums of
  sensitivity 1, summed exactly from the pmfs (no accountant): the loss of
  a round is ``(2 X + 1) / (2 sigma^2)``, X ~ N_Z(0, sigma^2); rounds of one
  sigma grouped (their X summed by convolution); the groups but the last
  joined atom by atom."""
  groups = {}
  for s in sigmas:
    groups[s] = groups.get(s, 0) + 1
  laws = []  # (values of the group's loss, their probabilities)
  for sigma, count in groups.items():
    x = np.arange(-math.ceil(45 * sigma), math.ceil(45 * sigma) + 1)
    pmf = np.exp(-x.astype(float)**2 / (2 * sigma**2))
    pmf /= pmf.sum()
    total, support = pmf, x
    for _ in range(count - 1):
      total = np.convolve(total, pmf)
      support = np.arange(support[0] + x[0], support[-1] + x[-1] + 1)
    laws.append(((2 * support + count) / (2 * sigma**2), total))
  while len(laws) > 2:  # join the first two: every pair of atoms
    (la, pa), (lb, pb) = laws[:2]
    joint = np.outer(pa, pb).ravel()
    keep = joint > 1e-300
    laws[:2] = [(np.add.outer(la, lb).ravel()[keep], joint[keep])]
  if len(laws) == 1:
    laws.append((np.zeros(1), np.ones(1)))
  (l0, p0), (l1, p1) = laws
  # sum over l0 of p0 * E[(1 - e^(eps - l0 - L1))_+], L1 sorted ascending:
  # tails from the top, accumulated smallest first.
  tail = np.cumsum(p1[::-1])[::-1]
  tail_exp = np.cumsum((p1 * np.exp(-l1))[::-1])[::-1]
  tail, tail_exp = np.append(tail, 0.0), np.append(tail_exp, 0.0)
  first = np.searchsorted(l1, epsilon - l0, side="right")
  inner = tail[first] - np.exp(epsilon - l0) * tail_exp[first]
  return float(np.sum(p0 * np.maximum(inner, 0.0)))


@pytest.fixture(scope="module")
def gaussian_plan():
  """The verified rule's plan with the discrete Gaussian at q = 1 (the
  prior may choose the Laplace for _TARGET itself)."""
  plan = noisy_plan.plan(_USERS.num_users, _USERS.max_length,
                         len(_ALPHABET), 4.0, 1e-8,
                         budget=dataclasses.replace(_BUDGET,
                                                    sampling_rate=1.0))
  return planned.CalibratedPlan(**_fields(plan), n_source="data")


def test_the_guarantee_checks_against_an_exact_sum(gaussian_plan):
  plan, g = gaussian_plan, planned.guarantee(gaussian_plan)
  sigmas = plan.sigmas
  # Discover then verify: three sigmas (the first round's, the other
  # discovery rounds', the verification's).
  assert plan.verify and plan.num_levels > 2 and len(set(sigmas)) == 3
  assert g.epsilon <= 4.0 and g.delta == 1e-8
  assert _exact_delta(sigmas, g.epsilon) <= g.delta * (1 + 1e-6)
  # Tight: 3% less epsilon needs more delta.
  assert _exact_delta(sigmas, 0.97 * g.epsilon) > g.delta
  # The exact sum itself, against the one-round closed form's neighbour:
  # more noise, less delta.
  assert _exact_delta([2 * s for s in sigmas], g.epsilon) < g.delta / 100


def test_the_dp_event_composes_to_the_guarantee(gaussian_plan):
  plan, g = gaussian_plan, planned.guarantee(gaussian_plan)
  event = _MECHANISM.dp_event(plan)
  assert isinstance(event, dp_accounting.ComposedDpEvent)
  assert [e.sigma for e in event.events] == pytest.approx(list(plan.sigmas))
  accountant = dp_events.PLDAccountant(value_discretization_interval=1e-4)
  accountant.compose(event)
  assert accountant.get_epsilon(g.delta) == pytest.approx(g.epsilon,
                                                          rel=0.02)
  assert noisy_plan.epsilon(plan) == pytest.approx(g.epsilon, rel=1e-9)


@pytest.mark.parametrize("engine", ["protocol"])
def test_other_engines_refuse_a_budget_in_one_line(release, engine):
  with pytest.raises(ValueError, match="^upload_budget: the planned noisy "
                     "trie runs on the 'beam', 'fast' and 'tff' engines "
                     f"only, not '{engine}'") as raised:
    _MECHANISM.run(_USERS, release.params, 0, engine)
  assert "\n" not in str(raised.value)


def test_the_fast_engine_takes_noise_and_dropout_only_with_a_plan(release):
  with pytest.raises(ValueError, match="fast engine takes dropout, noise; "
                     "got workers"):
    _MECHANISM.run(_USERS, release.params, 0, "fast", workers="x")
  with pytest.raises(ValueError, match="dropout is for noise='distributed' "
                     "only"):
    _MECHANISM.run(_USERS, release.params, 0, "fast", dropout=0.1)
  with pytest.raises(ValueError, match="dropout must be in"):
    _MECHANISM.run(_USERS, release.params, 0, "fast", noise="distributed",
                   dropout=1.0)


def test_the_tff_engine_refuses_unknown_options(release):
  # Refused before TFF is imported or any data read.
  with pytest.raises(ValueError, match="tff engine takes connect_timeout, "
                     "dropout, noise, rpc_timeout, workers; got threads"
                     ) as raised:
    _MECHANISM.run(_USERS, release.params, 0, "tff", threads=2)
  assert "\n" not in str(raised.value)
  with pytest.raises(ValueError, match="dropout is for noise='distributed' "
                     "only"):
    _MECHANISM.run(_USERS, release.params, 0, "tff", dropout=0.1)


def test_a_release_with_no_word_says_why():
  few = triehh.Population.from_user_words(["sun"] * 6 + ["w1"] * 4,
                                          alphabet=_ALPHABET)
  # No user's word can pass; a run may still release about one false word
  # (the expected false words per run): the first seed that releases none.
  results = [triehh.discover(few, triehh.NoisyTarget(
      0.5, upload_budget=_BUDGET), seed=s) for s in range(16)]
  assert all(r.num_false_words == len(r.words) for r in results)
  result = next(r for r in results if not r.words)
  (note,) = result.notes
  assert note.startswith("no word found: a word needs a noisy count of "
                         "at least")
  assert "more than there are users" in note


def test_the_run_is_the_engines_planned_run(release):
  raw = noisy_engine.run_planned(_USERS, release.params, 0)
  assert raw.words == release.words
  assert raw.upload_bytes == release.upload_bytes


@pytest.fixture(scope="module")
def shares_release():
  return triehh.discover(_USERS, _TARGET, seed=0, engine="fast",
                         noise="distributed", dropout=0.05)


def test_skellam_shares_are_labelled_as_what_they_are(shares_release):
  """The label names the Skellam accountant and its assumptions (h, the
  dropout bound, delta_short, the blocks' moduli), covers REPLACE_SPECIAL
  only and claims no amplification; the plan carries the shares."""
  g = shares_release.guarantee
  shares = shares_release.params.distributed
  assert shares is not None and shares.dropout == 0.05
  assert g.accounting == distributed_noise.ACCOUNTING
  assert g.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert g.trust == distributed_noise.TRUST
  for said in (f"at least h={shares.min_clients:,}", "dropout at most 0.05",
               "delta_short=", "each block's secure sum modulo 2^b",
               "upload budget of 200,000 bytes"):
    assert said in g.covers
  assert "amplification accounted" not in g.covers
  assert g.epsilon <= 4.0 and g.delta == shares_release.params.delta
  assert {"sun", "moon", "star"} <= set(shares_release.words)


def test_skellam_shares_export_their_rounds_to_an_accountant(shares_release):
  """The DpEvent is R Skellam rounds at h s_r: a REPLACE_SPECIAL PLD
  accountant composing it gives the label's epsilon at delta less
  delta_short; the central discrete Gaussian's event of the same plan does
  not."""
  plan = shares_release.params
  event = _MECHANISM.dp_event(plan)
  shares = plan.distributed
  assert len(event.events) == plan.num_levels == shares.num_rounds
  label = shares_release.guarantee.epsilon
  at = plan.delta - shares.delta_short
  assert replace_special.epsilon(event, at) == pytest.approx(label, rel=1e-6)
  central = planned.dp_event(dataclasses.replace(plan, distributed=None))
  assert abs(replace_special.epsilon(central, at) - label) > 1e-3


def test_skellam_shares_below_the_pld_reach_are_accounted_by_renyi():
  """At delta = 1e-16 (the PLD answers inf there) the shares are planned
  and labelled by the Skellam RDP bound; dp_accounting's RDP accountant,
  composing the run's event for REPLACE_SPECIAL, says the label's
  epsilon at delta less delta_short."""
  target = triehh.NoisyTarget(4.0, delta=1e-16, upload_budget=_BUDGET)
  result = triehh.discover(_USERS, target, seed=0, engine="fast",
                           noise="distributed", dropout=0.05)
  g, plan = result.guarantee, result.params
  assert g.accounting == distributed_noise.ACCOUNTING_RENYI
  assert g.epsilon <= 4.0 and g.delta == 1e-16
  accountant = dp_events.RdpAccountant(
      dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
  accountant.compose(_MECHANISM.dp_event(plan))
  at = plan.delta - plan.distributed.delta_short
  assert accountant.get_epsilon(at) == pytest.approx(g.epsilon, rel=1e-6)
  assert {"sun", "moon", "star"} <= set(result.words)


@pytest.mark.parametrize("replace_one", [False, True])
def test_rates_adapted_to_the_frontier_are_labelled_at_their_order(
    replace_one):
  """A plan whose rates adapt: its run says each round's rate, some above
  q where the frontier fits; the label names the Renyi order and says the
  rates adapt; dp_accounting's RDP accountant, composing the run's event,
  says the label's epsilon (under REPLACE_ONE for a plan calibrated for
  it); the PLD accountant refuses the event."""
  shape = dict(population_size=len(_WORDS), max_length=_USERS.max_length,
               alphabet_size=_USERS.alphabet.size, epsilon=4.0,
               delta=1e-8)
  plan = noisy_plan.plan(**shape, budget=triehh.UploadBudget(
      20_000, sampling_rate=0.25), rule="fixed", adapt_rates=True,
                         replace_one=replace_one)
  calibrated = planned.CalibratedPlan(
      **{f.name: getattr(plan, f.name)
         for f in dataclasses.fields(noisy_plan.NoisyPlan)},
      n_source="declared")
  result = _MECHANISM.run(_USERS, calibrated, 0, "fast")
  assert max(result.sampling_rates) > 0.25
  assert set(result.sampling_rates) <= {0.25,
                                        *noisy_plan.rate_menu(0.25)}
  assert result.upload_bytes <= 20_000
  g = result.guarantee
  accounting = planned.RATES_ADAPTED_ACCOUNTING.format(
      order=plan.renyi_order)
  assert g.accounting == (accounting.replace(
      ", two-sided)", ", replace-one swap, two-sided)") if replace_one
                          else accounting)
  assert f"Renyi divergence at order {plan.renyi_order}" in g.covers
  assert g.epsilon == noisy_plan.epsilon(plan) <= 4.0
  event = _MECHANISM.dp_event(calibrated)
  accountant = dp_events.RdpAccountant(
      dp_accounting.NeighboringRelation.REPLACE_ONE if replace_one
      else dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
  accountant.compose(event)
  assert accountant.get_epsilon(1e-8) == pytest.approx(g.epsilon, rel=1e-6)
  assert g.holds_for(Adjacency.REPLACE_ONE) == replace_one
  with pytest.raises(dp_accounting.UnsupportedEventError):
    dp_events.PLDAccountant().compose(event)
  assert {"sun", "moon", "star"} <= set(result.words)


def test_skellam_shares_need_the_declared_n_present():
  target = triehh.NoisyTarget(4.0, upload_budget=_BUDGET,
                              population_size=2 * len(_WORDS))
  with pytest.raises(ValueError, match="distributed noise split among the "
                     "clients of a declared population_size=20,000 with "
                     "10,000 users present"):
    triehh.discover(_USERS, target, seed=0, noise="distributed")


def test_a_plan_for_replace_one_meets_delta_by_both_candidates_exact_sum():
  """REPLACE_ONE at q = 1: a round's loss is the sum of two independent
  rounds' (the vote leaves one candidate and joins another), so the
  plan's delta summed exactly over every sigma twice meets the label's;
  3% less epsilon does not. The label covers it, and with Skellam shares
  too."""
  target = triehh.NoisyTarget(4.0, upload_budget=triehh.UploadBudget(
      200_000, sampling_rate=1.0), population_size=10_000,
                              adjacency="REPLACE_ONE")
  result = triehh.discover(_USERS, target, seed=0)
  plan, g = result.params, result.guarantee
  assert plan.replace_one and plan.sampling_rate == 1.0
  assert Adjacency.REPLACE_ONE in g.adjacencies and g.epsilon <= 4.0
  sigmas = list(plan.sigmas)
  assert _exact_delta(sigmas + sigmas, g.epsilon) <= g.delta * (1 + 1e-6)
  assert _exact_delta(sigmas + sigmas, 0.97 * g.epsilon) > g.delta
  shares = triehh.discover(_USERS, target, seed=0, noise="distributed")
  assert shares.params.distributed.replace_one
  assert shares.guarantee.adjacencies == (Adjacency.REPLACE_ONE,
                                          Adjacency.REPLACE_SPECIAL)
  assert shares.guarantee.epsilon <= 4.0


# ---- discrete Laplace noise -------------------------------------------------


@pytest.fixture(scope="module")
def laplace_plan():
  plan = noisy_plan.plan(10_000, _USERS.max_length, len(_ALPHABET), 4.0,
                         1e-8, budget=_BUDGET, noise_law="laplace")
  return planned.CalibratedPlan(**_fields(plan), n_source="declared")


def test_a_laplace_plan_is_pure_and_labelled_so(laplace_plan):
  g = planned.guarantee(laplace_plan)
  assert g.delta == 0.0 and g.two_sided
  assert g.accounting == planned.LAPLACE_ACCOUNTING
  # The closed form: one round's epsilon is 1 / b_r, the rounds' added.
  closed = sum(1.0 / b for b in laplace_plan.sigmas)
  assert g.epsilon == pytest.approx(closed, rel=1e-12) and closed <= 4.0
  release = planned.run(_USERS, laplace_plan, 0, "fast")
  assert {"sun", "moon", "star"} <= set(release.words)
  assert release.guarantee == g


def test_a_laplace_plans_event_composes_in_the_pld_accountant(laplace_plan):
  event = planned.dp_event(laplace_plan)
  assert [e.scale for e in event.events] == pytest.approx(
      list(laplace_plan.sigmas))
  accountant = dp_events.PLDAccountant(value_discretization_interval=1e-4)
  accountant.compose(event)
  rounds = laplace_plan.num_levels
  pure = noisy_plan.epsilon(laplace_plan)
  # At delta 0 the PLD's epsilon is the largest loss (each round's rounded
  # up to its grid); at 1e-8 it can only be smaller.
  assert abs(accountant.get_epsilon(0.0) - pure) <= rounds * 1e-4 + 1e-9
  assert accountant.get_epsilon(1e-8) <= pure + rounds * 1e-4


def test_a_noise_law_asked_for_is_the_plans_and_distributed_refuses_laplace():
  for law in noisy_plan.NOISE_LAWS:
    target = triehh.NoisyTarget(4.0, upload_budget=_BUDGET, noise_law=law)
    release = triehh.discover(_USERS, target, seed=0)
    assert release.params.noise_law == law
    assert release.params.noise_law_asked == law
    assert (release.guarantee.delta == 0.0) == (law == "laplace")
  laplace = triehh.NoisyTarget(4.0, upload_budget=_BUDGET,
                               noise_law="laplace")
  with pytest.raises(ValueError, match="noise_law='laplace' is the server's "
                     "noise; noise='distributed' draws the clients' Skellam"):
    triehh.discover(_USERS, laplace, seed=0, noise="distributed")
