"""Users who are not always online: each round samples from those online.

In production only online users can be sampled, and against an adversary
who knows who is online, the guarantee of a round is set by the number of
online users, not by n (the paper's remark). :func:`discover_online` runs
TrieHH under an availability model, an :class:`OnlineUsers`:

* ``OnlineUsers(f)`` (a float in (0, 1]): in every round a uniform random
  subset of ``round(f n)`` users is online;
* ``OnlineUsers(p)``, an array ``[n]`` (per-user probability, the same
  every round) or ``[n, R]`` (per user, per round; round ``r`` uses column
  ``r mod R``): user ``u`` is online in round ``r`` with probability
  ``p[u, r]``, independently. :func:`diurnal` builds such an array from a
  phase per user (a day-night cycle).

Each round's batch is ``m`` users drawn uniformly without replacement from
that round's online users, given to the engine as a fixed ``schedule``
(so the population must list its users one by one). The online sets of all
``L + 1`` rounds and the batches are drawn, before the run, from their own
stream ``numpy.random.default_rng(SeedSequence(seed, spawn_key=(1000,)))``,
independent of the run's generator and of the streams it spawns.

Privacy. Given the online set ``S_r`` of round ``r`` (known to the
adversary), the round is Theorem 1's round mechanism on the ``n_r = |S_r|``
online users (a user who is offline takes no part in it). Theorem 1's
per-round bound grows as ``n_r`` shrinks, so the run is accounted with
Theorem 1 at the **worst (smallest) online count** ``n_min`` over the
``L + 1`` drawn rounds, with the run's theta and batch size m; Theorem 1's
conditions must hold for every round's count (``4 <= theta <= sqrt(n_r)``,
``sqrt(n_r) <= m <= n_r / (theta + 1)``), else the run is refused (or, with
``allow_no_guarantee``, reported with ``epsilon = inf``). Several words per
user redrawn every round pay ``L`` times Theorem 1's delta, as without an
availability model.

Which theta and m. ``OnlineUsers(..., calibrate_to="online")`` (the
default) calibrates theta and m by Corollary 1 for the target ``(epsilon,
delta)`` at ``n_min``: the target holds against an adversary who knows who
is online, and the batch shrinks with the online fraction (m is about
proportional to the online count). ``calibrate_to="nominal"`` keeps the
theta and m
calibrated for n, as a deployment planned for n users would, and reports
the epsilon they really achieve at ``n_min`` (larger than the target; no
guarantee once m exceeds ``n_min / (theta + 1)``). ``delta`` defaults to
``1 / n^2`` of the nominal n in both. Results record the nominal n, every
round's online count, the worst, and the achieved ``(epsilon, delta)``
(:class:`Availability`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

from triehh.core import choices
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.core import results
from triehh.core import validation
from triehh.discovery import passes as passes_lib
from triehh.discovery import run as discovery_run
from triehh.discovery import word_choice as word_choice_lib
from triehh.engines import registry
from triehh.theory import coverage
from triehh.theory import mechanism
from triehh.theory import policy

AVAILABILITY_STREAM = 1000
ONLINE = "online"
NOMINAL = "nominal"
CALIBRATIONS = (ONLINE, NOMINAL)
ACCOUNTING = "Theorem 1 at the worst round's online count (one direction)"


@dataclasses.dataclass(frozen=True)
class OnlineUsers:
  """Users who are not always online, for :func:`triehh.discover`
  (``availability=``).

  Attributes:
    online: a fraction of users online per round, or per-user online
      probabilities ``[n]`` or ``[n, R]`` (module docstring;
      :func:`diurnal`).
    calibrate_to: ``"online"`` (theta and m for the worst online count) or
      ``"nominal"`` (for n).
  """

  online: object
  calibrate_to: str = ONLINE

  def __post_init__(self):
    if self.calibrate_to not in CALIBRATIONS:
      raise ValueError(f"calibrate_to must be one of {CALIBRATIONS}, got "
                       f"{self.calibrate_to!r}")
    online = self.online
    if isinstance(online, (int, float, np.integer, np.floating)) and not \
        isinstance(online, (bool, np.bool_)):
      # A Python float from here on: numpy scalars read as a fraction too.
      object.__setattr__(self, "online", validation.check_rate(
          "online", online, "the fraction of users online"))
    elif online is None or isinstance(online, (bool, str, bytes, Mapping)):
      raise TypeError("online must be the fraction of users online, or "
                      "per-user online probabilities [n] or [n, rounds], "
                      f"got {online!r:.40}")
    else:  # probabilities: numbers, not strings taken as numbers
      validation.check_numbers("online probabilities", online)


def generator(seed: int | None) -> np.random.Generator:
  """The stream of the online sets and batches (module docstring)."""
  return np.random.default_rng(
      np.random.SeedSequence(seed, spawn_key=(AVAILABILITY_STREAM,)))


def diurnal(phases: np.ndarray, num_rounds: int, *, round_hours: float = 1.0,
            low: float = 0.05, high: float = 0.95) -> np.ndarray:
  """Per-user, per-round online probabilities of a day-night cycle.

  User ``u`` is most likely online at the time of day ``phases[u]`` (a
  fraction of the day in [0, 1)): round ``r`` runs at ``r * round_hours``
  hours and ``p[u, r] = low + (high - low) (1 + cos(2 pi (t_r - phases[u])))
  / 2`` with ``t_r`` the round's time as a fraction of the day.

  Returns:
    ``float64 [n, num_rounds]``.
  """
  validation.check_numbers("phases", phases, "fractions of a day")
  phases = np.asarray(phases, dtype=np.float64)
  if phases.ndim != 1 or not phases.size:
    raise ValueError("phases must be a non-empty 1-D array, one per user")
  if not 0 <= low <= high <= 1:
    raise ValueError(f"need 0 <= low <= high <= 1, got low={low}, "
                     f"high={high}")
  num_rounds = validation.check_int("num_rounds", num_rounds)
  memory.check_fits(f"diurnal probabilities of {phases.size:,} users x "
                    f"num_rounds={num_rounds:,}",
                    24.0 * phases.size * num_rounds,
                    "use fewer rounds: a run uses L + 1 at most")
  times = np.arange(num_rounds) * round_hours / 24.0
  wave = (1.0 + np.cos(2 * np.pi * (times[None, :] - phases[:, None]))) / 2
  return low + (high - low) * wave


@dataclasses.dataclass(frozen=True)
class Availability:
  """What an availability model did to a run, and the privacy it gives.

  Attributes:
    model: ``"fraction"`` or ``"per-user"``.
    fraction: the fraction online per round (``"fraction"``), else None.
    nominal_n: n, all users.
    online_per_round: online users in each of the ``L + 1`` drawn rounds.
    worst_online: the smallest of them (the accounting's n).
    calibrated_to: ``"online"`` or ``"nominal"``.
    epsilon, delta: Theorem 1 at ``worst_online`` (``inf`` and 1 without
      guarantee); also the run's ``params.epsilon`` and ``params.delta``.
    nominal_epsilon: Theorem 1's epsilon at the nominal n for the same
      theta and m (what the label would say if availability were ignored);
      ``inf`` outside its conditions.
  """

  model: str
  fraction: float | None
  nominal_n: int
  online_per_round: tuple[int, ...]
  worst_online: int
  calibrated_to: str
  epsilon: float
  delta: float
  nominal_epsilon: float


@dataclasses.dataclass
class OnlineResult(results.DiscoveryResult):
  """A :class:`~triehh.core.results.DiscoveryResult` with its availability."""

  availability: Availability | None = None


def _model(availability, n: int, levels: int, rng: np.random.Generator
           ) -> tuple[str, float | None, list[np.ndarray | None]]:
  """The model's name, fraction, and each round's online users (None: all)."""
  if isinstance(availability, (int, float)) and not isinstance(
      availability, bool):
    fraction = validation.check_rate("availability", availability,
                                     "the fraction of users online")
    size = max(1, round(fraction * n))
    if size == n:
      return "fraction", fraction, [None] * levels
    return "fraction", fraction, [
        np.sort(rng.choice(n, size=size, replace=False)) for _ in range(levels)]
  probs = np.asarray(availability, dtype=np.float64)
  if probs.ndim == 1:
    probs = probs[:, None]
  if probs.ndim != 2 or probs.shape[0] != n or probs.shape[1] < 1:
    raise ValueError(f"availability as probabilities must have shape [n] or "
                     f"[n, rounds] with n={n}, got {np.shape(availability)}")
  if not np.all((probs >= 0) & (probs <= 1)):
    raise ValueError("availability probabilities must be in [0, 1]")
  online = [np.flatnonzero(rng.random(n) < probs[:, r % probs.shape[1]])
            for r in range(levels)]
  return "per-user", None, online


def _round_guarantee(n_r: int, params: results.RunParams, max_length: int,
                     word_choice: str, single_word: bool
                     ) -> tuple[float, float, str]:
  """Theorem 1 for one round's online count; ``(inf, 1, why)`` outside it."""
  if params.batch_size > n_r:
    return math.inf, 1.0, (f"the batch of m={params.batch_size} users is "
                           f"larger than the {n_r} online users")
  given = mechanism.Mechanism(theta=params.theta,
                              batch_size=params.batch_size,
                              sampling=choices.FIXED, word_choice=word_choice)
  try:
    p = policy.resolve(n_r, max_length, given, single_word=single_word)
  except ValueError as err:
    return math.inf, 1.0, str(err).split(". Pass allow_no_guarantee")[0]
  return p.epsilon, p.delta, ""


def discover_online(user_words, privacy, availability: OnlineUsers, *,
                    max_length: int = population_lib.DEFAULT_MAX_LENGTH,
                    seed: int | None = None, engine: str = registry.FAST,
                    **engine_options) -> OnlineResult:
  """TrieHH where each round samples from the users online then.

  Args:
    user_words: as for :func:`triehh.discover`; the users must be listed
      one by one (not given by word frequencies).
    privacy: a :class:`triehh.Target` (``(epsilon, delta)`` to calibrate
      theta and m for; ``delta`` defaults to ``1/n^2``) or a number, its
      epsilon; or a :class:`triehh.Mechanism` with ``theta`` and
      ``batch_size``. Fixed-size batches (Theorem 1): Poisson sampling,
      ``gamma``, a prefix cap, a schedule, an adjacency and a declared
      population size are refused. Its ``allow_no_guarantee`` runs when a
      round's online count is outside Theorem 1 (reported with ``epsilon =
      inf``); its ``num_sub_rounds`` and ``word_choice`` are the run's.
    availability: an :class:`OnlineUsers`: who is online (a fraction per
      round, or per-user probabilities ``[n]`` or ``[n, R]``,
      :func:`diurnal`) and what theta and m are calibrated for (module
      docstring).
    max_length, seed, engine: as for :func:`triehh.discover`.
    **engine_options: passed to the engine (e.g. TFF workers).

  Returns:
    An :class:`OnlineResult`; its ``params`` hold the nominal n and the
    achieved ``(epsilon, delta)``, its ``availability`` the online counts.
  """
  if not isinstance(availability, OnlineUsers):
    raise TypeError("availability must be a triehh.OnlineUsers, got "
                    f"{availability!r:.60}: e.g. triehh.OnlineUsers(0.5)")
  privacy = _checked_privacy(mechanism.of(privacy))
  calibrate_to = availability.calibrate_to
  population = population_lib.as_population(user_words, max_length)
  population.check_user_array("an availability model (a fixed schedule)")
  n = population.num_users
  rng = generator(seed)
  model, fraction, online = _model(availability.online, n,
                                   population.num_levels, rng)
  counts = tuple(n if o is None else int(o.size) for o in online)
  base, base_n = _calibrated(population, max_length, min(counts),
                             calibrate_to, privacy)
  info, problems = _achieved(
      population, base, max_length, counts, privacy.word_choice,
      privacy.allow_no_guarantee, model=model, fraction=fraction,
      calibrate_to=calibrate_to)
  schedule = [_batch(rng, n, o, base.batch_size) for o in online]
  params = _run_params(base, base_n, info, problems, max_length, privacy)
  result = discovery_run.run(population, params, seed=seed, engine=engine,
                             schedule=schedule,
                             allow_no_guarantee=privacy.allow_no_guarantee,
                             **engine_options)
  return OnlineResult(heavy_hitters=result.heavy_hitters,
                      params=result.params, trie=result.trie,
                      engine=result.engine, seed=seed,
                      seconds=result.seconds, guarantee=result.guarantee,
                      availability=info)


def _checked_privacy(privacy):
  """``privacy`` if an availability model can run it (fixed-size batches,
  theta and m given or calibrated), else a ValueError naming what it
  cannot take."""
  for name in ("schedule", "gamma", "max_num_prefixes"):
    if getattr(privacy, name, None) is not None:
      raise ValueError(f"{name} cannot be given with an availability model")
  passes_lib.check_fixed_only(privacy, "availability")
  if getattr(privacy, "sampling_rate", None) is not None:
    raise ValueError("sampling_rate is for sampling='poisson'")
  mechanism.default_sampling(privacy.sampling,
                             fixed_only={"availability": True})
  return privacy


def _calibrated(population: population_lib.Population, max_length: int,
                worst: int, calibrate_to: str, privacy
                ) -> tuple[results.RunParams, int]:
  """The run's theta and m (given, or calibrated for the worst online count
  or for n, module docstring), and the n they were calibrated for."""
  n = population.num_users
  if isinstance(privacy, mechanism.Mechanism):
    base_n = n
  elif privacy.theta is not None:
    raise ValueError("give either (epsilon, delta), or theta with "
                     "batch_size")
  else:
    base_n = worst if calibrate_to == ONLINE else n
    if privacy.delta is None:
      privacy = dataclasses.replace(privacy, delta=1.0 / n**2)
  fixed = dataclasses.replace(privacy, sampling=choices.FIXED,
                              allow_no_guarantee=True)
  try:
    base = policy.resolve(base_n, max_length, fixed,
                          single_word=population.is_single_word)
  except ValueError as err:
    raise ValueError(f"calibrating for {base_n} users ({calibrate_to}; "
                     f"worst online count {worst} of n={n}): {err}") from None
  return base, base_n


def _achieved(population: population_lib.Population,
              base: results.RunParams, max_length: int,
              counts: tuple[int, ...], word_choice: str,
              allow_no_guarantee: bool, *, model: str,
              fraction: float | None,
              calibrate_to: str) -> tuple[Availability, list[str]]:
  """The :class:`Availability` of the run, with the ``(epsilon, delta)`` of
  its worst round, and why a round is outside Theorem 1 (refused unless
  ``allow_no_guarantee``)."""
  n, worst = population.num_users, min(counts)
  per_round = [_round_guarantee(c, base, max_length, word_choice,
                                population.is_single_word)
               for c in sorted(set(counts))]
  eps = max(r[0] for r in per_round)
  dlt = max(r[1] for r in per_round)
  problems = [r[2] for r in per_round if r[2]]
  if problems and not allow_no_guarantee:
    raise ValueError(f"with {worst} of n={n} users online in the worst round,"
                     f" Theorem 1 does not cover the run: {problems[0]}. Pass "
                     "allow_no_guarantee=True to run anyway, or "
                     "calibrate_to='online'")
  nominal_eps = _round_guarantee(n, base, max_length, word_choice,
                                 population.is_single_word)[0]
  info = Availability(model=model, fraction=fraction, nominal_n=n,
                      online_per_round=counts, worst_online=worst,
                      calibrated_to=calibrate_to, epsilon=eps, delta=dlt,
                      nominal_epsilon=nominal_eps)
  return info, problems


def _run_params(base: results.RunParams, base_n: int, info: Availability,
                problems: list[str], max_length: int,
                privacy) -> results.RunParams:
  """The run's parameters (with its guarantee's note): the sub-rounds and
  word choice of ``privacy``."""
  counts, worst, n = info.online_per_round, info.worst_online, info.nominal_n
  origin = ("given" if base.target_epsilon is None
            else f"calibrated for {base_n} users")
  note = (f"{ACCOUNTING}: {worst} of n={n} users online "
          f"(rounds: {list(counts)}), theta={base.theta}, m="
          f"{base.batch_size} ({origin})."
          if not problems else
          f"no differential privacy guarantee: {problems[0]}.")
  params = results.RunParams(
      theta=base.theta, gamma=base.batch_size / math.sqrt(worst),
      batch_size=base.batch_size, epsilon=info.epsilon, delta=info.delta,
      n=n, max_length=max_length, levels=max_length + 1,
      num_sub_rounds=privacy.num_sub_rounds,
      target_epsilon=base.target_epsilon, target_delta=base.target_delta,
      guarantee=note, word_choice=privacy.word_choice,
      accounting=policy.NO_GUARANTEE if problems else ACCOUNTING,
      covers=base.covers, sampling=choices.FIXED, adjacency="",
      n_source=base.n_source)
  if not problems:  # labelled by the worst round's guarantee, not base's
    params = coverage.label(params, n, None, True, None)
  return params


def _batch(rng: np.random.Generator, n: int, online: np.ndarray | None,
           batch_size: int) -> np.ndarray:
  """``batch_size`` online users (all of them if fewer), uniformly."""
  if online is None:
    return rng.choice(n, size=batch_size, replace=False, shuffle=False)
  if online.size <= batch_size:
    return online
  return online[rng.choice(online.size, size=batch_size, replace=False,
                           shuffle=False)]
