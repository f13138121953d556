"""The two-server mechanism behind the one protocol: discover runs it on
both engines, its guarantee names the trust model and the neighbours, its
plan follows the target."""

import numpy as np
import pytest

import triehh
from triehh.engines import registry as engines
from triehh.mechanisms import registry
from triehh.mechanisms import two_servers
from triehh.theory import two_servers as theory
from triehh.theory.adjacency import Adjacency

USERS = ["sun"] * 300 + ["moon"] * 200 + ["star"] * 60 + ["sky"] * 2 + [
    "w1", "toolongawordforl"]


def test_discover_releases_the_heavy_words_with_the_trust_model():
  result = triehh.discover(USERS, triehh.TwoServerTarget(4.0), seed=0)
  assert result.mechanism == "two_servers"
  assert result.words[:3] == ("sun", "moon", "star")
  assert np.all(np.abs(result.noisy_counts[:3] - [300, 200, 60]) < 10)
  assert "w1" not in result.words and "toolongawordforl" not in result.words
  guarantee = result.guarantee
  assert (guarantee.epsilon, guarantee.delta) == (pytest.approx(4.0), 0.0)
  assert guarantee.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                                   Adjacency.REPLACE_SPECIAL)
  assert "collude with any set of clients" in guarantee.trust
  assert "REPLACE_ONE at twice epsilon" in guarantee.covers
  assert "research prototype" in result.prototype
  assert result.per_round[0].candidates == sum(27**k for k in range(1, 11))
  assert result.params.upload_bytes <= 10_000
  again = triehh.discover(USERS, triehh.TwoServerTarget(4.0), seed=0)
  assert again.words == result.words


def test_registered_with_its_engines():
  assert registry.get("two_servers") is two_servers.MECHANISM
  assert registry.for_privacy(triehh.TwoServerTarget(1.0)).name == (
      "two_servers")
  assert {"fast", "protocol"} <= set(engines.engines_for("two_servers"))


def _params(target, n=1000, max_length=10, declared=False):
  from triehh.mechanisms import protocol
  return two_servers.MECHANISM.calibrate(
      target, n, protocol.Shape(max_length, declared=declared))


def test_plan_follows_the_target():
  several = _params(triehh.TwoServerTarget(2.0, words_per_user=2))
  assert several.plan.scales == (pytest.approx(1.0),)
  assert several.upload_bytes == 4 * two_servers.key_bytes(50, 1)
  steps = _params(triehh.TwoServerTarget(2.0, chars_per_step=5))
  assert steps.plan.step_chars == (5, 10) and steps.n_source == "data"
  assert two_servers.MECHANISM.guarantee(steps).adjacencies == (
      Adjacency.REPLACE_SPECIAL,)
  gaussian = _params(triehh.TwoServerTarget(2.0, noise="gaussian"))
  assert gaussian.plan.delta == pytest.approx(1e-6)
  assert gaussian.n_source == "data"
  declared = _params(triehh.TwoServerTarget(2.0, noise="gaussian",
                                            population_size=1000),
                     declared=True)
  assert two_servers.MECHANISM.guarantee(declared).adjacencies == (
      Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_SPECIAL)


def test_several_words_per_user_send_at_most_m():
  population = triehh.Population.from_user_words(
      [{"sun": 2, "moon": 1, "star": 1}] * 50 + [{"sun": 1}] * 10)
  code = two_servers.MECHANISM.calibrate(
      triehh.TwoServerTarget(1.0, words_per_user=2), 60,
      two_servers.protocol.Shape(10, single_word=False)).plan.code
  ids, keys = two_servers.client_counts(population, code, 2,
                                        np.random.default_rng(0))
  assert keys.sum() == 50 * 2 + 10
  assert dict(zip(code.decode(ids), keys))["sun"] > 10


def test_protocol_engine_runs_the_same_walk():
  users = ["ab"] * 300 + ["ba"] * 200 + ["aab"] * 100
  population = triehh.Population.from_user_words(users, alphabet="ab",
                                                 max_length=3)
  target = triehh.TwoServerTarget(1.0, alphabet="ab")
  for engine in ("fast", "protocol"):
    result = triehh.discover(population, target, seed=3, engine=engine,
                             max_length=3)
    assert result.words[:3] == ("ab", "ba", "aab")
    assert result.per_round[0].candidates == 14


def test_refusals_name_the_field():
  with pytest.raises(ValueError, match="max_upload_bytes=1,000"):
    _params(triehh.TwoServerTarget(1.0, max_upload_bytes=1000))
  with pytest.raises(ValueError, match="false_words"):
    triehh.TwoServerTarget(1.0, false_words=0)
  with pytest.raises(ValueError, match="noise must be"):
    triehh.TwoServerTarget(1.0, noise="skellam")
  with pytest.raises(ValueError, match="verification_split must be"):
    triehh.TwoServerTarget(1.0, verification_split="uneven")
  with pytest.raises(ValueError, match="live_passes"):
    triehh.TwoServerTarget(1.0, live_passes=0)
  with pytest.raises(ValueError, match="lower max_length"):
    _params(triehh.TwoServerTarget(1.0), max_length=13)
  with pytest.raises(ValueError, match="takes no options"):
    triehh.discover(USERS, triehh.TwoServerTarget(1.0), seed=0,
                    workers=2)


def test_the_live_passes_set_the_discovery_s_loose_budget():
  # A step's noise-only live prefixes average live_passes times its cap.
  for passes in (0.25, 1.0):
    plan = _params(triehh.TwoServerTarget(
        4.0, chars_per_step=2, max_candidates=10**5, live_passes=passes),
                   n=10**4).plan
    scale, cap = plan.scales[1], plan.max_frontier
    live = plan.thresholds[1][0]
    k = cap * 27**2
    budget = passes * cap
    assert k * theory.sum_tail("laplace", scale, live) <= budget
    assert k * theory.sum_tail("laplace", scale, live - 1) > budget


def test_max_candidates_caps_each_step_and_frees_the_plan_of_n():
  target = triehh.TwoServerTarget(4.0, chars_per_step=2, max_candidates=10**5)
  params = _params(target, n=10**6)
  per_prefix = sum(27**k for k in range(3))  # 2 letters, 1, or the prefix
  assert params.plan.max_frontier == 10**5 // per_prefix
  assert params.n_source == "unused"
  result = triehh.discover(USERS * 20, target, seed=1)
  assert result.words[:3] == ("sun", "moon", "star")
  assert all(r.candidates <= 10**5 for r in result.per_round)
  with pytest.raises(ValueError, match="give chars_per_step too"):
    _params(triehh.TwoServerTarget(4.0, max_candidates=10**5))
  with pytest.raises(ValueError, match="lower chars_per_step"):
    _params(triehh.TwoServerTarget(4.0, chars_per_step=4,
                                   max_candidates=10**5))


def test_the_first_step_is_as_wide_as_the_work_bound_allows():
  at_root = [sum(27**k for k in range(1, j + 1)) for j in range(11)]

  def chars(**fields):
    return _params(triehh.TwoServerTarget(4.0, **fields)).plan.step_chars
  assert chars(chars_per_step=2, max_candidates=10**7,
               verify=True) == (4, 6, 8, 10)
  assert chars(chars_per_step=2, max_candidates=at_root[4]) == (4, 6, 8, 10)
  assert chars(chars_per_step=2, max_candidates=at_root[4] - 1) == (
      3, 5, 7, 9, 10)
  assert chars(chars_per_step=1, max_candidates=10**5) == (3, 4, 5, 6, 7, 8,
                                                           9, 10)
  # the whole walk fits the bound: one step; verifying keeps one to discover
  assert chars(chars_per_step=2, max_candidates=10**15) == (10,)
  assert chars(chars_per_step=2, max_candidates=10**15,
               verify=True) == (9, 10)
  # asked for: even steps, or a first step of its own
  assert chars(chars_per_step=2, first_step_chars=2,
               max_candidates=10**7) == (2, 4, 6, 8, 10)
  assert chars(chars_per_step=3, first_step_chars=5) == (5, 8, 10)
  with pytest.raises(ValueError, match="first_step_chars needs chars_per"):
    triehh.TwoServerTarget(4.0, first_step_chars=3)
  with pytest.raises(ValueError, match="lower first_step_chars, or set "
                     "verify=False"):
    _params(triehh.TwoServerTarget(4.0, chars_per_step=2, first_step_chars=10,
                                   max_candidates=10**15, verify=True))
  with pytest.raises(ValueError, match="or first_step_chars"):
    _params(triehh.TwoServerTarget(4.0, chars_per_step=2, first_step_chars=5,
                                   max_candidates=10**7))


def test_a_walk_in_steps_under_a_work_bound_verifies_unless_told_not_to():
  def verifies(**fields):
    return _params(triehh.TwoServerTarget(4.0, **fields)).plan.verifies
  assert verifies(chars_per_step=2, max_candidates=10**7)
  assert not verifies(chars_per_step=2, max_candidates=10**7, verify=False)
  assert not verifies(chars_per_step=2)  # no work bound
  assert not verifies()  # one step
  assert not verifies(chars_per_step=2, max_candidates=10**15)  # fits one
  plain = triehh.discover(USERS * 20, triehh.TwoServerTarget(
      4.0, chars_per_step=2, max_candidates=10**5, verify=False), seed=1)
  verified = triehh.discover(USERS * 20, triehh.TwoServerTarget(
      4.0, chars_per_step=2, max_candidates=10**5), seed=1)
  assert len(verified.per_round) == len(plain.per_round) + 1
  assert "verifies" in verified.guarantee.accounting
  assert "verifies" not in plain.guarantee.accounting


def test_a_wide_first_step_runs_on_both_engines():
  users = ["abc"] * 300 + ["cab"] * 200 + ["bcab"] * 100 + ["a"] * 2
  population = triehh.Population.from_user_words(users, alphabet="abc",
                                                 max_length=4)
  target = triehh.TwoServerTarget(6.0, alphabet="abc", chars_per_step=1,
                                  max_candidates=50, verify=True)
  for engine in ("fast", "protocol"):
    result = triehh.discover(population, target, seed=4, engine=engine,
                             max_length=4)
    assert result.params.plan.step_chars == (3, 4)  # 39 <= 50 < 120
    assert result.words[:3] == ("abc", "cab", "bcab")
    assert result.per_round[0].candidates == 39


def test_protocol_engine_refuses_a_step_it_cannot_evaluate():
  with pytest.raises(ValueError, match="give chars_per_step=4 or fewer"):
    triehh.discover(["sun"] * 10, triehh.TwoServerTarget(4.0), seed=0,
                    engine="protocol")


def test_a_verified_walk_releases_only_what_its_last_step_verifies():
  target = triehh.TwoServerTarget(8.0, chars_per_step=2, max_candidates=10**5,
                                  verify=True)
  params = _params(target, n=10**4)
  plan = params.plan
  assert plan.verifies and plan.verify_cap == 10**5
  assert plan.scales == pytest.approx((2 * plan.verify_scale,) * 5)
  result = triehh.discover(USERS * 20, target, seed=1)
  assert result.words[:3] == ("sun", "moon", "star")
  assert len(result.per_round) == 6  # five steps, then the verification
  last = result.per_round[-1]
  assert last.kept == len(result.words) and last.candidates >= last.kept
  assert "verifies" in result.guarantee.accounting
  assert result.guarantee.epsilon == pytest.approx(8.0)
  for engine in ("fast", "protocol"):
    small = triehh.discover(USERS, triehh.TwoServerTarget(
        8.0, chars_per_step=2, max_candidates=2000, verify=True), seed=2,
                            engine=engine)
    assert small.words[:2] == ("sun", "moon")
  with pytest.raises(ValueError, match="verify=True needs chars_per_step"):
    triehh.TwoServerTarget(4.0, chars_per_step=2, verify=True)
  with pytest.raises(ValueError, match="verify must be True, False or None"):
    triehh.TwoServerTarget(4.0, verify="yes")
