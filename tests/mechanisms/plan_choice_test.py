"""Tests of triehh.mechanisms.plan_choice: the planned run's rule and
sampling rate, chosen on the public prior before any data is read."""

import glob
import inspect
import json
import os

import numpy as np
import pytest

from triehh.mechanisms import plan_choice
from triehh.theory import calibration_store
from triehh.theory import noisy_plan
from triehh.theory import noisy_prior
from triehh.theory.upload_budget import SAMPLING_RATES
from triehh.theory.upload_budget import SMALLEST_SAMPLING_RATE
from triehh.theory.upload_budget import UploadBudget

_N, _L, _A = 20_000, 8, 27


def test_the_choice_reads_no_population():
  names = set(inspect.signature(plan_choice.choose).parameters)
  # dropout: the distributed mode's declared bound, public like the rest;
  # replace_one: the neighbouring relation asked for; noise_law: the
  # target's.
  assert names == {"population_size", "max_length", "alphabet_size",
                   "epsilon", "delta", "budget", "one_word", "dropout",
                   "replace_one", "noise_law"}


def test_the_prior_population_is_the_priors_draw():
  pop = plan_choice.prior_population(_N, _L, _A)
  assert pop.num_users == _N and pop.is_single_word
  assert pop.alphabet.size == _A and pop.max_length == _L
  _, lengths, counts = noisy_prior.drawn(_N, _L, _A)
  assert counts.sum() == _N
  # A string drawn twice is one word: at most as many words as draws.
  assert pop.num_words <= counts.size
  assert max(len(w) for w in pop.vocabulary) == lengths.max()
  assert plan_choice.prior_population(_N, _L, _A) is pop  # remembered


def _scored(budget, epsilon=4.0):
  return plan_choice.candidates(_N, _L, _A, epsilon, 1.0 / _N**2, budget,
                                True)


def test_every_rule_and_rate_is_tried_and_the_best_is_chosen():
  budget = UploadBudget(1_000_000)
  scored = _scored(budget)
  for rule in plan_choice.CANDIDATE_RULES:
    assert _tried(scored, rule)[:len(SAMPLING_RATES)] == list(SAMPLING_RATES)
  for c, plan in scored:
    assert plan.sampling_rate == c.sampling_rate
    assert plan.verify == (c.rule == noisy_plan.VERIFIED)
    assert noisy_plan.epsilon(plan) <= 4.0
  chosen = plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget)
  best = max(c.true_words for c, _ in scored)
  assert [c.true_words for c, p in scored if p == chosen][0] == best


def _gaussian(c) -> bool:
  return c.noise_law == noisy_plan.GAUSSIAN


def _tried(scored, rule):
  return [c.sampling_rate for c, _ in scored
          if c.rule == rule and not c.adapted and _gaussian(c)]


def _halved_while_better(scored, rule):
  """The rule's rates: SAMPLING_RATES, then halvings, each made only when
  the rate before it found more than every rate before that; then, if
  its best is below 1, that rate once more with its rates adapted; then
  that rate with discrete Laplace noise."""
  rates = _tried(scored, rule)
  found = [c.true_words for c, _ in scored
           if c.rule == rule and not c.adapted and _gaussian(c)]
  adapted = [c.sampling_rate for c, _ in scored
             if c.rule == rule and c.adapted]
  laplace = [(c.sampling_rate, c.adapted) for c, _ in scored
             if c.rule == rule and not _gaussian(c)]
  best = rates[int(np.argmax(found))]
  assert adapted == ([best] if best < 1.0 else [])
  assert laplace == [(best, False)]
  assert rates[:len(SAMPLING_RATES)] == list(SAMPLING_RATES)
  for i in range(len(SAMPLING_RATES), len(rates)):
    assert rates[i] == rates[i - 1] / 2
    assert found[i - 1] > max(found[:i - 1])
  last = len(rates) - 1
  assert (found[last] <= max(found[:last])
          or rates[last] / 2 < SMALLEST_SAMPLING_RATE)
  return rates


def test_noise_binds_every_user_votes_and_bytes_bind_q_is_smaller():
  # A roomy budget: counts near the threshold, q = 1 finds the most.
  roomy = {(c.rule, c.sampling_rate, c.adapted, c.noise_law): c.true_words
           for c, _ in _scored(UploadBudget(1_000_000))}
  best = max(roomy, key=roomy.get)
  assert best[1] == 1.0
  # A budget of 6 kB: the frontier does not fit; sampling lets a round's
  # vector grow by 1/q and a q < 1 candidate finds more.
  scored = _scored(UploadBudget(6_000))
  tight = {(c.rule, c.sampling_rate, c.adapted, c.noise_law): c.true_words
           for c, _ in scored}
  best = max(tight, key=tight.get)
  assert best[1] < 1.0
  assert tight[best] > max(v for k, v in tight.items() if k[1] == 1.0)
  for rule in plan_choice.CANDIDATE_RULES:
    _halved_while_better(scored, rule)
  # At 3 kB the smallest of SAMPLING_RATES finds the most: halving goes
  # past it while it finds more, and stops.
  tighter = _scored(UploadBudget(3_000))
  longest = max(len(_halved_while_better(tighter, rule))
                for rule in plan_choice.CANDIDATE_RULES)
  assert longest > len(SAMPLING_RATES)


def test_a_given_rate_is_kept():
  scored = _scored(UploadBudget(1_000_000, sampling_rate=0.5))
  assert {c.sampling_rate for c, _ in scored} == {0.5}
  assert not any(c.adapted for c, _ in scored)  # q given: kept every round
  assert {c.rule for c, _ in scored} == set(plan_choice.CANDIDATE_RULES)


def test_scores_are_the_engines_true_words_on_the_prior():
  (c, plan), *_ = _scored(UploadBudget(1_000_000))
  from triehh.engines import noisy  # pylint: disable=g-import-not-at-top
  prior = plan_choice.prior_population(_N, _L, _A)
  runs = [noisy.run_planned(prior, plan, s) for s in plan_choice.PRIOR_SEEDS]
  assert c.true_words == pytest.approx(np.mean(
      [len(r.words) - r.num_false_words for r in runs]))


def test_below_the_pld_delta_sampled_candidates_are_amplified():
  # Below delta = 1e-15 a sampled plan is accounted by its rounds' own
  # Renyi divergence: tried like the others, each within the target, and a
  # sampled plan's noise smaller than the unsampled one's.
  scored = plan_choice.candidates(_N, _L, _A, 4.0, 1e-16,
                                  UploadBudget(6_000), True)
  assert min(c.sampling_rate for c, _ in scored) < 1.0
  for c, plan in scored:
    assert noisy_plan.epsilon(plan) <= 4.0
  sigma = {(c.rule, c.sampling_rate): plan.sigma for c, plan in scored
           if not c.adapted}
  for rule in plan_choice.CANDIDATE_RULES:
    assert sigma[rule, 0.25] < 0.8 * sigma[rule, 1.0]
  given = plan_choice.candidates(_N, _L, _A, 4.0, 1e-16,
                                 UploadBudget(6_000, sampling_rate=0.5),
                                 True)
  assert {c.sampling_rate for c, _ in given} == {0.5}


@pytest.fixture(name="store")
def _store(tmp_path, monkeypatch):
  """A fresh calibration store in tmp_path, restored afterwards."""
  monkeypatch.setattr(calibration_store, "_directory",
                      calibration_store._directory)
  calibration_store.configure(str(tmp_path))
  return os.path.join(str(tmp_path), "calibrations")


def _no_prior(*args, **kwargs):
  raise AssertionError("the candidates ran on the prior")


def test_the_choice_is_remembered_on_disk_and_rebuilt_from_it(
    store, monkeypatch):
  budget = UploadBudget(6_000)
  chosen = plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget)
  (entry,) = glob.glob(os.path.join(store, "plan_choice-*.json"))
  with open(entry, encoding="utf-8") as f:
    answer = json.load(f)["answer"]
  assert answer == {"rule": "verified" if chosen.verify else "fixed",
                    "sampling_rate": chosen.sampling_rate,
                    "adapted": chosen.renyi_order is not None,
                    "noise_law": chosen.noise_law}
  # As in a new process: the prior is not run again, the plan is the same.
  monkeypatch.setattr(plan_choice, "candidates", _no_prior)
  assert plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2,
                            budget=budget) == chosen
  # Other arguments are another entry.
  with pytest.raises(AssertionError, match="ran on the prior"):
    plan_choice.choose(_N, _L, _A, 2.0, 1.0 / _N**2, budget=budget)


@pytest.mark.parametrize("answer", [{"rule": "prior", "sampling_rate": 1.0},
                                    {"rule": "fixed", "sampling_rate": 0.3},
                                    {"rule": "fixed", "sampling_rate": 2**-12},
                                    {"rule": "fixed", "sampling_rate": 1.0,
                                     "adapted": True},
                                    {"rule": "fixed", "sampling_rate": 0.5,
                                     "adapted": "yes"},
                                    {"rule": "fixed", "sampling_rate": 1.0,
                                     "noise_law": "cauchy"},
                                    {"rule": "fixed", "sampling_rate": 0.5,
                                     "adapted": True,
                                     "noise_law": "laplace"},
                                    {"rule": "fixed"}, {}])
def test_a_stored_choice_that_is_no_candidate_is_ignored(store, monkeypatch,
                                                         answer):
  budget = UploadBudget(6_000)
  plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget)
  (entry,) = glob.glob(os.path.join(store, "plan_choice-*.json"))
  with open(entry, encoding="utf-8") as f:
    stored = json.load(f)
  stored["answer"] = answer
  with open(entry, "w", encoding="utf-8") as f:
    json.dump(stored, f)
  monkeypatch.setattr(plan_choice, "candidates", _no_prior)
  with pytest.raises(AssertionError, match="ran on the prior"):
    plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget)


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_a_law_asked_for_is_the_only_one_scanned(store, law):
  del store  # a fresh store: the prior runs
  budget = UploadBudget(6_000)
  scored = plan_choice.candidates(_N, _L, _A, 4.0, 1.0 / _N**2, budget,
                                  True, noise_law=law)
  assert {c.noise_law for c, _ in scored} == {law}
  assert not any(c.adapted for c, _ in scored) or law == "gaussian"
  chosen = plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget,
                              noise_law=law)
  assert chosen.noise_law == law
  # The stored choice of the free law is not the asked law's, nor reused.
  free = plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget)
  again = plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget,
                             noise_law=law)
  assert again == chosen and free.noise_law in noisy_plan.NOISE_LAWS
  with pytest.raises(ValueError, match="Skellam"):
    plan_choice.choose(_N, _L, _A, 4.0, 1.0 / _N**2, budget=budget,
                       dropout=0.1, noise_law="laplace")
