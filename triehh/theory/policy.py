"""The privacy policy of a run: which parameters are refused, which epsilon
and delta are reported, and from which proof.

Its entry is :func:`resolve`, which turns a typed privacy (a
:class:`~triehh.theory.mechanism.Target` or a
:class:`~triehh.theory.mechanism.Mechanism`, checked when built) into the
run's :class:`~triehh.core.results.RunParams`:

* ``(epsilon, delta)`` are calibrated by Corollary 1 (``delta`` defaults to
  ``1/n^2``) and reported as Theorem 1 gives them at the integer batch size.
* ``theta`` with ``gamma`` or ``batch_size``: reported by Theorem 1; outside
  its conditions the run is refused unless ``allow_no_guarantee``, and then
  reported with ``epsilon = inf``, ``delta = 1``.
* Several words per user, redrawn every round (``word_choice="per_round"``,
  Algorithm 3): each round is covered by Theorem 2 with one round's delta
  ``delta_1`` of Theorem 1, and the run by composition over its ``L``
  rounds: epsilon as Theorem 1, ``delta = L * delta_1`` (``docs/privacy.md``).
  Calibration picks theta so that ``L * delta_1`` is at most the target.
  ``word_choice="per_run"`` runs on one word per user and gets Theorem 1.
* Poisson sampling (``sampling="poisson"``): each user takes part in a round
  with probability ``sampling_rate``; ``(epsilon, delta)`` come from the
  two-sided accountant of :mod:`triehh.theory.poisson`, in both directions
  and for several words per user alike; calibration picks theta and the
  rate (:func:`triehh.theory.poisson_calibration.calibrate`).
* Fixed-size sampling (``sampling="fixed"``, the paper's): Theorem 1 is
  proven in one direction only (``docs/privacy.md``): the label says so, and
  parameters where the other direction is known to fail by more than delta
  (:func:`triehh.theory.crowding.reverse_lower_bound`) are refused unless
  ``allow_no_guarantee``.
* A prefix cap (``max_num_prefixes``) keeps the most-voted extensions, so the
  output depends on vote ranks, not only on the threshold event Theorem 1's
  proof uses: refused, or reported without guarantee under
  ``allow_no_guarantee``.
* Several votes per user per round (the ``tff`` engine's
  ``max_user_contribution > 1`` on several-word users) are outside Theorem 1:
  refused, or reported without guarantee under ``allow_no_guarantee``.

The guarantee covers :data:`COVERS`, never the vote counts. Privacy accounts
for ``max_length + 1`` trie levels: the end symbol is a level too.
"""

from __future__ import annotations

import dataclasses
import functools
import math

from triehh.core import choices
from triehh.core import population as population_lib
from triehh.core import results
from triehh.core import safe_format
from triehh.core import validation
from triehh.theory import coverage
from triehh.theory import crowding
from triehh.theory import limits
from triehh.theory import mechanism
from triehh.theory import poisson
from triehh.theory import poisson_calibration
from triehh.theory import privacy
from triehh.theory.adjacency import Adjacency

COVERS = coverage.COVERS
ONE_DIRECTION = coverage.ONE_DIRECTION
N_DECLARED, N_FROM_DATA, N_UNUSED = (coverage.N_DECLARED,
                                     coverage.N_FROM_DATA, coverage.N_UNUSED)
THEOREM_1 = "Theorem 1 (one direction)"
PER_ROUND_COMPOSITION = "per-round composition (L*delta), one direction"
POISSON_ACCOUNTANT = poisson.ACCOUNTING
POISSON_REPLACE_ACCOUNTANT = poisson.REPLACE_ACCOUNTING
NO_GUARANTEE = "none"
_REFUSED = (". Pass allow_no_guarantee=True to run without a privacy "
            "guarantee")


def resolve(n: int, max_length: int,
            privacy: mechanism.Target | mechanism.Mechanism, *,
            single_word: bool = True,
            delta_from_n: bool = False) -> results.RunParams:
  """Turns a typed privacy into run parameters with their guarantee.

  ``privacy`` is a :class:`~triehh.theory.mechanism.Target` (``(epsilon,
  delta)`` to calibrate for) or a :class:`~triehh.theory.mechanism.
  Mechanism` (theta with its sampling), checked when it was built, its
  sampling named (:func:`triehh.theory.mechanism.default_sampling`
  decides the user-facing default; internal callers that run the paper's
  batches name ``"fixed"``): only ``n`` and ``max_length`` are checked
  here.

  ``delta`` defaults to ``1/n^2``. Fixed-size sampling: parameters outside
  Theorem 1 (a prefix cap included), or where its unproven direction is
  known to fail, raise ``ValueError`` unless ``allow_no_guarantee`` (then
  epsilon is ``inf``). ``single_word=False`` with ``word_choice="per_round"``
  (users redraw one of several words every round) is accounted by per-round
  composition: delta is ``L`` times Theorem 1's. ``sampling="poisson"``: see
  :func:`_poisson`. A fixed ``schedule`` has no guarantee.

  ``privacy.adjacency`` asks for a neighbouring relation (:mod:`triehh.
  theory.adjacency`); by default the guarantee covers what its accountant
  proves (:func:`triehh.theory.coverage.covered`). ``REPLACE_ONE`` is
  proven for Poisson sampling (its own accountant); ``ADD_OR_REMOVE_ONE``
  needs parameters that do not depend on |D|. ``privacy.population_size``
  declares a public n to derive the parameters from (``delta = 1/n^2``,
  ``batch_size = gamma sqrt(n)``, ...) instead of |D| = ``n``.
  ``delta_from_n``: the caller derived ``delta`` from |D| (a share of the
  default ``1/n^2``), so the parameters depend on it.
  """
  if not isinstance(privacy, (mechanism.Target, mechanism.Mechanism)):
    raise TypeError("privacy must be a triehh.Target or a triehh.Mechanism, "
                    f"got {privacy!r:.80}")
  n = limits.check_users("n (number of users)", n)
  max_length = validation.check_int("max_length", max_length)
  if privacy.sampling is None:
    raise ValueError("the run's sampling must be named (mechanism."
                     "default_sampling decides the default)")
  given = (dict(epsilon=privacy.epsilon, gamma=None, batch_size=None,
                sampling_rate=None)
           if isinstance(privacy, mechanism.Target) else
           dict(epsilon=None, gamma=privacy.gamma,
                batch_size=privacy.batch_size,
                sampling_rate=privacy.sampling_rate))
  params = _resolve(n, max_length, delta=privacy.delta, theta=privacy.theta,
                    num_sub_rounds=privacy.num_sub_rounds,
                    max_num_prefixes=privacy.max_num_prefixes,
                    allow_no_guarantee=privacy.allow_no_guarantee,
                    word_choice=privacy.word_choice, single_word=single_word,
                    sampling=privacy.sampling, asked=privacy.adjacency,
                    declared=privacy.population_size,
                    delta_from_n=delta_from_n, **given)
  if privacy.schedule is None:
    return params
  return _without_guarantee(
      params, "a fixed schedule chooses each round's users, and the "
      "guarantee rests on users sampled at random", privacy.allow_no_guarantee)


# Cached: every run at the same (n, L, target) resolves the same frozen
# parameters (the calibrations, the reverse bound, the labels), a tenth of
# a millisecond a call; typed, so 4 and 4.0 keep their own records.
@functools.lru_cache(maxsize=256, typed=True)
def _resolve(n: int, max_length: int, *, epsilon, delta, theta, gamma,
             batch_size, num_sub_rounds, max_num_prefixes,
             allow_no_guarantee, word_choice, single_word, sampling,
             sampling_rate, asked, declared,
             delta_from_n) -> results.RunParams:
  """:func:`resolve` on checked arguments."""
  if declared is not None and declared < n:
    raise ValueError(
        f"population_size={declared:,} is smaller than the n={n:,} users "
        "the population holds: declare the public number of users (at "
        "least those present), or leave it out")
  if theta is not None and theta > n:
    # Before any accountant: its level losses span theta cells (theta =
    # 10^9 allocated terabytes).
    raise ValueError(f"theta={theta:,} is more than the n={n:,} users: no "
                     "word can reach theta votes in a round")
  n_params = n if declared is None else declared
  if delta is None:
    coverage.default_delta(n_params)  # refuses n = 1 before any work
  if sampling == choices.POISSON:
    params = _poisson(n_params, max_length, epsilon=epsilon, delta=delta,
                      theta=theta, gamma=gamma, batch_size=batch_size,
                      sampling_rate=sampling_rate,
                      num_sub_rounds=num_sub_rounds,
                      max_num_prefixes=max_num_prefixes,
                      allow_no_guarantee=allow_no_guarantee,
                      word_choice=word_choice,
                      replace=asked is Adjacency.REPLACE_ONE)
    uses_n = (delta is None or delta_from_n
              or (sampling_rate is None and epsilon is None))
    params = _capped(params, max_num_prefixes, allow_no_guarantee)
    return coverage.label(params, n, declared, uses_n, asked)
  coverage.check_fixed(asked)
  params = _fixed(n, n_params, max_length, epsilon=epsilon, delta=delta,
                  theta=theta, gamma=gamma, batch_size=batch_size,
                  num_sub_rounds=num_sub_rounds,
                  max_num_prefixes=max_num_prefixes,
                  allow_no_guarantee=allow_no_guarantee,
                  word_choice=word_choice, single_word=single_word,
                  sampling_rate=sampling_rate)
  return coverage.label(params, n, declared, True, asked)


def _fixed(n: int, n_params: int, max_length: int, *, epsilon, delta, theta,
           gamma, batch_size, num_sub_rounds, max_num_prefixes,
           allow_no_guarantee, word_choice, single_word,
           sampling_rate) -> results.RunParams:
  """Run parameters of fixed-size TrieHH (Theorem 1), derived from
  ``n_params`` users, for a population of ``n``."""
  if sampling_rate is not None:
    raise ValueError("sampling_rate is for sampling='poisson'; fixed-size "
                     "sampling takes batch_size or gamma")
  levels = max_length + 1
  composed = not single_word and word_choice == choices.PER_ROUND
  common = dict(n=n, max_length=max_length, levels=levels,
                num_sub_rounds=num_sub_rounds,
                max_num_prefixes=max_num_prefixes, word_choice=word_choice,
                accounting=PER_ROUND_COMPOSITION if composed else THEOREM_1,
                covers=COVERS + ONE_DIRECTION, sampling=choices.FIXED)
  if theta is None:
    if gamma is not None or batch_size is not None:
      raise ValueError("gamma/batch_size need theta too")
    if epsilon is None:
      raise ValueError("give epsilon (and optionally delta), or theta with "
                       "gamma or batch_size")
    params = _calibrated(n_params, epsilon, delta, composed, common)
  else:
    if epsilon is not None or delta is not None:
      raise ValueError("give either (epsilon, delta) or theta with gamma/"
                       "batch_size, not both")
    if (gamma is None) == (batch_size is None):
      raise ValueError("with theta, give exactly one of gamma and batch_size")
    params = _given_theta(n_params, theta, gamma, batch_size,
                          allow_no_guarantee, composed, common)
  if params.batch_size > n:
    raise ValueError(
        f"the batch of {params.batch_size} users per round (from the "
        f"declared population_size={n_params}) is more than the n={n} users "
        "the population holds")
  params = _check_reverse(params, allow_no_guarantee)
  params = _check_vacuous(params, allow_no_guarantee)
  return _capped(params, max_num_prefixes, allow_no_guarantee)


def _check_vacuous(params: results.RunParams,
                   allow_no_guarantee: bool) -> results.RunParams:
  """A guarantee whose delta is 1 or more (per-round composition adds L
  deltas) bounds nothing: refused, or no guarantee."""
  if not params.has_guarantee or params.delta < 1.0:
    return params
  return _without_guarantee(
      params, f"at theta={params.theta} and batch size {params.batch_size} "
      f"over L={params.levels} levels, delta={params.delta:.3g}: a delta of "
      "1 or more bounds nothing. Use a larger theta or a smaller batch, or "
      "epsilon to calibrate them", allow_no_guarantee)


def _capped(params: results.RunParams, max_num_prefixes: int | None,
            allow_no_guarantee: bool) -> results.RunParams:
  if max_num_prefixes is None:
    return params
  return _without_guarantee(
      params, f"max_num_prefixes={max_num_prefixes} keeps the most-voted "
      "extensions, so the output depends on vote ranks, and the guarantee "
      "covers only the threshold event (count >= theta)", allow_no_guarantee)


def _check_reverse(params: results.RunParams,
                   allow_no_guarantee: bool) -> results.RunParams:
  """Fixed-size runs where the unproven direction is known to fail by more
  than delta (:mod:`triehh.theory.crowding`): refused, or no guarantee."""
  if not params.has_guarantee:
    return params
  failure = crowding.reverse_lower_bound(params.n, params.batch_size,
                                         params.theta, params.levels,
                                         params.epsilon)
  if failure.divergence <= params.delta:
    return params
  return _without_guarantee(
      params, f"at n={params.n}, batch size {params.batch_size}, "
      f"theta={params.theta} and L={params.levels} levels, the direction "
      "Theorem 1 does not prove fails: "
      f"{failure.describe(params.n)}, a reverse delta of at least "
      f"{failure.divergence:.3g} at epsilon={params.epsilon:.4g}, above "
      f"delta={params.delta:.3g} (docs/privacy.md). Use sampling='poisson', "
      "or more users", allow_no_guarantee)


def _poisson(n: int, max_length: int, *, epsilon: float | None,
             delta: float | None, theta: int | None, gamma: float | None,
             batch_size: int | None, sampling_rate: float | None,
             num_sub_rounds: int, max_num_prefixes: int | None,
             allow_no_guarantee: bool, word_choice: str,
             replace: bool = False) -> results.RunParams:
  """Run parameters of Poisson-sampled TrieHH and their two-sided guarantee.

  ``(epsilon, delta)``, optionally with ``theta``: theta (unless given) and
  the rate are calibrated (:func:`triehh.theory.poisson_calibration.calibrate`).
  ``theta`` with one of ``sampling_rate``, ``batch_size`` (the expected
  batch, ``rate = batch_size / n``) or ``gamma`` (``rate = gamma /
  sqrt(n)``): epsilon is the accountant's at ``delta`` (default ``1/n^2``).
  """
  levels = max_length + 1
  target_delta = 1.0 / n**2 if delta is None else limits.check_delta(
      "delta", delta)
  common = dict(n=n, max_length=max_length, levels=levels,
                num_sub_rounds=num_sub_rounds,
                max_num_prefixes=max_num_prefixes, word_choice=word_choice,
                accounting=POISSON_ACCOUNTANT, covers=COVERS,
                sampling=choices.POISSON)
  adjacency = (Adjacency.REPLACE_ONE if replace
               else Adjacency.ADD_OR_REMOVE_ONE)
  if replace:
    common["accounting"] = POISSON_REPLACE_ACCOUNTANT
  given = [name for name, value in (("sampling_rate", sampling_rate),
                                    ("batch_size", batch_size),
                                    ("gamma", gamma)) if value is not None]
  if len(given) > 1:
    raise ValueError(f"give at most one of {', '.join(given)}")
  if epsilon is not None:
    if given:
      raise ValueError(
          f"{given[0]} is calibrated from (epsilon, delta); give either "
          "(epsilon, delta) (optionally with theta) or theta with "
          "sampling_rate, batch_size or gamma")
    return _poisson_calibrated(n, levels, float(epsilon), target_delta, theta,
                               common, adjacency)
  if theta is None:
    raise ValueError("give epsilon (and optionally delta and theta), or "
                     "theta with sampling_rate, batch_size or gamma")
  if not given:
    raise ValueError("with theta, give one of sampling_rate, batch_size (the "
                     "expected users per round) or gamma")
  theta = validation.check_int("theta", theta)
  rate = _poisson_rate(n, sampling_rate, batch_size, gamma)
  return _poisson_at_rate(n, levels, theta, rate, delta, target_delta,
                          allow_no_guarantee, common, adjacency)


def _poisson_calibrated(n: int, levels: int, epsilon: float,
                        target_delta: float, theta: int | None,
                        common: dict,
                        adjacency: Adjacency) -> results.RunParams:
  """Theta (unless given) and the rate calibrated for ``(epsilon, delta)``."""
  if theta is not None:
    theta = validation.check_int("theta", theta)
  cal = poisson_calibration.calibrate(n, levels, epsilon, target_delta,
                                      theta=theta, adjacency=adjacency)
  return results.RunParams(
      theta=cal.theta, gamma=cal.rate * math.sqrt(n),
      batch_size=max(1, round(cal.expected_batch_size)),
      epsilon=cal.epsilon, delta=target_delta,
      target_epsilon=epsilon, target_delta=target_delta,
      sampling_rate=cal.rate,
      guarantee=(f"Poisson accountant for L={levels} levels, both "
                 f"directions: theta={cal.theta} and rate "
                 f"{safe_format.rate_down(cal.rate)} "
                 f"(about {cal.expected_batch_size:.4g} users per round) "
                 f"maximise rate/theta for the target; delta at the "
                 f"target epsilon is {cal.delta:.3g}."),
      **common)


def _poisson_rate(n: int, sampling_rate: float | None,
                  batch_size: int | None, gamma: float | None) -> float:
  """The rate from the one of ``sampling_rate``, ``batch_size`` (expected
  users per round) and ``gamma`` given."""
  if sampling_rate is not None:
    return choices.check_sampling_rate(sampling_rate)
  if batch_size is not None:
    batch_size = validation.check_int("batch_size", batch_size)
    if batch_size > n:
      raise ValueError(f"batch_size (expected users per round) must be in "
                       f"[1, n={n}], got {batch_size}")
    return batch_size / n
  rate = validation.check_positive("gamma", gamma) / math.sqrt(n)
  if rate > 1:
    raise ValueError(f"gamma={gamma:.6g} asks for gamma*sqrt(n) = "
                     f"{gamma * math.sqrt(n):.4g} users per round, more "
                     f"than the n={n} users; use gamma <= sqrt(n)")
  return rate


def _poisson_at_rate(n: int, levels: int, theta: int, rate: float,
                     delta: float | None, target_delta: float,
                     allow_no_guarantee: bool, common: dict,
                     adjacency: Adjacency) -> results.RunParams:
  """The accountant's epsilon at ``delta`` for a given theta and rate (no
  guarantee when it is not finite)."""
  expected = dict(theta=theta, gamma=rate * math.sqrt(n),
                  batch_size=max(1, round(rate * n)), sampling_rate=rate)
  eps = (math.inf if rate >= 1.0 else
         poisson.epsilon_for_delta(rate, theta, levels, target_delta,
                                   adjacency=adjacency))
  if not math.isfinite(eps):
    problem = (f"theta={theta} at rate {rate:.6g} gives no finite epsilon "
               f"at delta={target_delta:.3g} (a user alone with theta - 1 "
               f"others passes with probability rate^theta = "
               f"{rate**theta if rate < 1 else 1:.3g} per level); use a "
               "larger theta, a smaller rate or a larger delta")
    if not allow_no_guarantee:
      raise ValueError(f"{problem}{_REFUSED}")
    return results.RunParams(
        epsilon=math.inf, delta=1.0,
        guarantee=f"no differential privacy guarantee: {problem}",
        **expected, **{**common, "accounting": NO_GUARANTEE})
  return results.RunParams(
      epsilon=eps, delta=target_delta,
      target_delta=None if delta is None else target_delta,
      guarantee=(f"Poisson accountant for L={levels} levels, both "
                 f"directions, at rate {safe_format.rate_down(rate)} "
                 f"(about {rate * n:.4g} "
                 "users per round)."),
      **expected, **common)


def _calibrated(n: int, epsilon: float, delta: float | None, composed: bool,
                common: dict) -> results.RunParams:
  """Corollary 1 parameters for a target ``(epsilon, delta)``.

  Composed (per-round redraws): theta is calibrated for ``delta / L``, so
  that ``L * delta_1`` is at most the target.
  """
  levels = common["levels"]
  target_delta = 1.0 / n**2 if delta is None else delta
  per_round = target_delta / levels if composed else target_delta
  cal = privacy.calibrate(n, levels, epsilon, per_round)
  note = (f"Corollary 1 calibration for L={levels} levels; epsilon, delta "
          f"from Theorem 1 at m={cal.batch_size}, in the direction its proof "
          "covers.")
  return results.RunParams(
      theta=cal.theta, gamma=cal.effective_gamma, batch_size=cal.batch_size,
      epsilon=cal.epsilon, delta=_run_delta(cal.delta, levels, composed),
      target_epsilon=float(epsilon), target_delta=float(target_delta),
      guarantee=note + _composition_note(cal.delta, levels, composed,
                                         calibrated=True),
      **common)


def _given_theta(n: int, theta: int, gamma: float | None,
                 batch_size: int | None, allow_no_guarantee: bool,
                 composed: bool, common: dict) -> results.RunParams:
  """Theorem 1's guarantee for a given ``theta`` and batch size."""
  levels = common["levels"]
  theta = validation.check_int("theta", theta)
  batch_size = _batch_size(n, gamma, batch_size)
  used_gamma = batch_size / math.sqrt(n)
  try:
    eps, dlt = privacy.guarantee(n, levels, theta, used_gamma)
  except ValueError as err:
    if not allow_no_guarantee:
      raise ValueError(f"{err}{_REFUSED}") from None
    return results.RunParams(
        theta=theta, gamma=used_gamma, batch_size=batch_size,
        epsilon=math.inf, delta=1.0,
        guarantee=f"no differential privacy guarantee: {err}",
        **{**common, "accounting": NO_GUARANTEE})
  return results.RunParams(
      theta=theta, gamma=used_gamma, batch_size=batch_size, epsilon=eps,
      delta=_run_delta(dlt, levels, composed),
      guarantee=(f"Theorem 1 for L={levels} levels, in the direction its "
                 "proof covers."
                 + _composition_note(dlt, levels, composed, calibrated=False)),
      **common)


def _batch_size(n: int, gamma: float | None, batch_size: int | None) -> int:
  """The batch size ``floor(gamma sqrt(n))`` or ``batch_size``, checked in
  the caller's terms before anything is computed from it."""
  root = math.sqrt(n)
  if gamma is None:
    batch_size = validation.check_int("batch_size", batch_size)
    if batch_size > n:
      raise ValueError(f"batch_size must be in [1, n={n}] (users sampled per "
                       f"round, without replacement), got {batch_size}")
    return batch_size
  gamma = validation.check_positive("gamma", gamma)
  if gamma > root:
    raise ValueError(
        f"gamma={gamma:.6g} asks for a batch of gamma*sqrt(n) = "
        f"{gamma * root:.4g} users, more than the n={n} users; use gamma <= "
        f"sqrt(n) = {root:.6g} (Theorem 1 needs gamma <= sqrt(n)/(theta+1))")
  batch_size = math.floor(gamma * root)
  if batch_size < 1:
    raise ValueError(
        f"gamma={gamma:.6g} gives a batch of floor(gamma*sqrt(n)) = 0 users; "
        f"use gamma >= 1/sqrt(n) = {1 / root:.6g} (Theorem 1 needs gamma >= 1)")
  return batch_size


def _run_delta(round_delta: float, levels: int, composed: bool) -> float:
  """The run's delta: Theorem 1's, or ``L`` times it when composed."""
  return min(1.0, levels * round_delta) if composed else round_delta


def _composition_note(round_delta: float, levels: int, composed: bool, *,
                      calibrated: bool) -> str:
  if not composed:
    return ""
  chosen = (" theta was chosen so that it is at most the target delta."
            if calibrated else "")
  return (" Users hold several words and redraw one every round "
          "(word_choice='per_round'): by per-round composition, delta = "
          f"L*delta_1 = {levels} x {round_delta:.3g}, epsilon as Theorem 1."
          + chosen)


def _without_guarantee(params: results.RunParams, problem: str,
                       allow_no_guarantee: bool) -> results.RunParams:
  """``params`` reported without guarantee, or ValueError naming the problem."""
  if not allow_no_guarantee:
    raise ValueError(f"{problem}{_REFUSED}")
  if params.has_guarantee:
    note = f"no differential privacy guarantee: {problem}."
  else:  # already outside Theorem 1: name both problems
    note = f"{params.guarantee.rstrip('.')}; and {problem}."
  return dataclasses.replace(params, epsilon=math.inf, delta=1.0,
                             accounting=NO_GUARANTEE, guarantee=note)


def check_contribution(params: results.RunParams,
                       population: population_lib.Population,
                       engine_options: dict,
                       allow_no_guarantee: bool) -> results.RunParams:
  """``params``, or refused, or without guarantee, for the engine options.

  Engine option ``max_user_contribution`` > 1 (several-word users) lets a
  user cast that many votes per round: outside Theorem 1.
  """
  contribution = engine_options.get("max_user_contribution")
  if contribution is None or contribution <= 1 or population.is_single_word:
    return params
  return _without_guarantee(
      params, f"max_user_contribution={contribution} lets a user cast up to "
      f"{contribution} votes per round, and Theorem 1 covers one vote per "
      "user per round", allow_no_guarantee)
