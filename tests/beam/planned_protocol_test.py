"""The planned noisy trie on Beam: the fast engine's run draw for draw at
q = 1, and below it the votes of each user's keyed coin, mirrored here."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("apache_beam", reason="apache-beam is not installed")

import triehh  # pylint: disable=g-import-not-at-top
from triehh.beam import planned_protocol  # pylint: disable=g-import-not-at-top
from triehh.beam import protocol  # pylint: disable=g-import-not-at-top
from triehh.engines import noisy  # pylint: disable=g-import-not-at-top
from triehh.theory import noisy_plan  # pylint: disable=g-import-not-at-top

_WORDS = (["sun"] * 300 + ["moon"] * 200 + ["star"] * 100 + ["sunny"] * 40
          + [f"w{i}" for i in range(400)])
_USERS = triehh.Population.from_user_words(_WORDS,
                                           alphabet="0123456789amnorstuwy")


def _plan(rate: float, rule: str,
          law: str = noisy_plan.GAUSSIAN) -> noisy_plan.NoisyPlan:
  return noisy_plan.plan(
      _USERS.num_users, _USERS.max_length, _USERS.alphabet.size, 4.0, 1e-6,
      budget=triehh.UploadBudget(20_000, sampling_rate=rate), rule=rule,
      noise_law=law)


def _same(first: noisy.PlannedResult, second: noisy.PlannedResult) -> None:
  assert first.words == second.words
  np.testing.assert_array_equal(first.noisy_counts, second.noisy_counts)
  np.testing.assert_array_equal(first.false_words, second.false_words)
  assert first.levels == second.levels


@pytest.mark.parametrize("rule,law", [("verified", "gaussian"),
                                      ("fixed", "gaussian"),
                                      ("verified", "laplace")])
def test_every_user_counted_is_the_fast_engines_run_draw_for_draw(rule, law):
  plan = _plan(1.0, rule, law)
  beam_run = planned_protocol.run_planned(_USERS, plan, 3)
  _same(beam_run, noisy.run_planned(_USERS, plan, 3))
  assert {"sun", "moon", "star"} <= set(beam_run.words)


class _MirrorVoter(noisy.FastVoter):
  """The votes of each user's keyed coin, from the population's own
  candidate of each word (``noisy._word_candidates``), not the
  pipeline's."""

  def __init__(self, seed: int):
    super().__init__()
    self.seed = seed

  def _votes(self, cand, level: int, rate: float) -> noisy._Voted:  # pylint: disable=protected-access
    _, candidates, words, _ = noisy._explicit(cand)  # pylint: disable=protected-access
    chosen = [int(cand[w]) for user, w in enumerate(_USERS.user_word)
              if cand[w] >= 0 and protocol.sampled(self.seed, level, user,
                                                   rate)]
    votes = np.array([chosen.count(int(c)) for c in candidates],
                     dtype=np.int64)
    return noisy._Voted(candidates, votes, words)  # pylint: disable=protected-access

  def planned_round(self, population, plan, r, frontier, ext, p, rng):
    cand = noisy._word_candidates(population, frontier, ext, p)  # pylint: disable=protected-access
    voted = self._votes(cand, r + 1, plan.delivery_rate)
    return (voted, *noisy._draw_two(voted, frontier.real.size, ext,  # pylint: disable=protected-access
                                    self.thresholds(plan, r, voted, rng),
                                    rng, plan.words_by_class(r),
                                    self.window(plan, r, frontier)))

  def verification_round(self, population, plan, cand, priority, codes,
                         rng, taus=None):
    voted = self._votes(cand, plan.num_levels, plan.delivery_rate)
    if taus is not None:  # a threshold per word (the server's noise)
      return (voted, *noisy.draw_each(voted.candidates, voted.votes, plan,
                                      taus, rng))
    thresholds = self.thresholds(plan, plan.num_levels - 1, voted, rng)
    return (voted, *noisy.draw_passing(
        voted.candidates, voted.votes, len(codes),
        thresholds(True, max(len(codes), 1)), rng))


def test_sampled_rounds_count_each_users_keyed_coin():
  """q = 1/2: the pipeline's sums are the votes of the users whose keyed
  coin (under the seed spawned from the run's generator) says they take
  part, each for its word's candidate as the population numbers it; the
  noise then as the fast engine draws it."""
  plan = _plan(0.5, "verified")
  seed = int(np.random.default_rng(5).spawn(1)[0].integers(0, 2**62))
  beam_run = planned_protocol.run_planned(_USERS, plan, 5)
  _same(beam_run, noisy.run_planned(_USERS, plan, 5,
                                    voter=_MirrorVoter(seed)))
  # Another seed's coins are other coins.
  other = noisy.run_planned(_USERS, plan, 5, voter=_MirrorVoter(seed + 1))
  assert not np.array_equal(other.noisy_counts, beam_run.noisy_counts)


def test_discover_runs_a_budget_on_beam_and_refuses_what_it_does_not_run():
  target = triehh.NoisyTarget(4.0, delta=1e-6, upload_budget=triehh.
                              UploadBudget(20_000, sampling_rate=1.0))
  result = triehh.discover(_USERS, target, engine="beam", seed=2)
  fast = triehh.discover(_USERS, target, seed=2)
  assert result.words == fast.words and result.guarantee == fast.guarantee
  with pytest.raises(ValueError, match="beam engine takes no options; got "
                     "noise"):
    triehh.discover(_USERS, target, engine="beam", seed=2,
                    noise="distributed")
  with pytest.raises(ValueError, match="Skellam shares"):
    planned_protocol.run_planned(_USERS, noisy_plan.with_distributed(
        _plan(1.0, "verified"), 4.0), 0)
  several = triehh.Population.from_user_words(
      [{"sun": 2, "moon": 1}, "star"], alphabet="amnorstu")
  with pytest.raises(ValueError, match="one word per user"):
    planned_protocol.BeamVoter(several, 0)
