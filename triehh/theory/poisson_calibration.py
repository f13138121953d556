"""Calibration of Poisson-sampled TrieHH: theta and the rate for a target.

For a target ``(epsilon, delta)`` over L levels, under an adjacency, the
search (:func:`calibrate`) picks theta maximising ``rate / theta`` and the
largest rate the accountant (:mod:`triehh.theory.poisson`) allows for it.
The search does not depend on n; n only checks that a round samples at
least theta users on average. Answers are remembered on disk
(:mod:`triehh.theory.calibration_store`), or shipped in its table for
common targets, and confirmed by the accountant before use.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from triehh.core import progress
from triehh.core import validation
from triehh.theory import _search as search_lib
from triehh.theory import adjacency as adjacency_lib
from triehh.theory import calibration_store
from triehh.theory import limits
from triehh.theory import pld
from triehh.theory import poisson
from triehh.theory.adjacency import Adjacency

DEFAULT_DISCRETIZATION = poisson.DEFAULT_DISCRETIZATION
# The code whose answers the store keeps: the search and the accountant.
SOURCES = (__file__, poisson.__file__, pld.__file__, adjacency_lib.__file__,
            search_lib.__file__)


@dataclasses.dataclass(frozen=True)
class PoissonCalibration:
  """theta and the sampling rate for a target ``(epsilon, delta)``.

  Attributes:
    theta: the vote threshold.
    rate: q, the probability that a user takes part in a round.
    expected_batch_size: ``q * n``, users per round on average.
    epsilon, delta: what the accountant gives at ``(rate, theta)``: epsilon
      for the target delta (<= target epsilon), and delta at the target
      epsilon (<= target delta); both directions.
    target_epsilon, target_delta, n, num_levels: what was asked for.
    adjacency: the neighbouring relation the rate was calibrated for.
  """

  theta: int
  rate: float
  expected_batch_size: float
  epsilon: float
  delta: float
  target_epsilon: float
  target_delta: float
  n: int
  num_levels: int
  adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE


def max_rate(theta: int, num_levels: int, epsilon: float, delta: float, *,
             discretization: float = DEFAULT_DISCRETIZATION,
             bracket: tuple[float, float] | None = None,
             tolerance: float = 1e-4,
             adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE) -> float:
  """The largest rate (to a relative ``tolerance``) at which ``(rate,
  theta)`` is ``(epsilon, delta)``-DP over ``num_levels`` levels, by
  bisection on log(rate); 0 if no rate above 1e-15 is.

  ``bracket`` is a guess ``(ok, too_high)``; it is checked and widened.
  """
  budget = poisson.trimming_budget(delta, num_levels)
  replace = poisson.replaces(adjacency)

  def excess(rate: float) -> float:
    """log(delta(rate) / target): <= 0 iff the rate is private enough (the
    ratio first, so that an excess of a few ulps is not lost in the log)."""
    got = poisson.run_delta(rate, theta, num_levels, discretization, budget,
                            epsilon, replace)
    return math.log(got / delta) if got > 0 else -math.inf

  top = 1.0 - 1e-9
  lo, hi = bracket if bracket is not None else (1e-3, 1e-2)
  lo, hi = min(lo, top), min(hi, top)
  f_lo = excess(lo)
  while lo > 1e-15 and f_lo > 0:
    lo, hi = lo / 8, lo
    f_lo = excess(lo)
  if lo <= 1e-15:
    return 0.0
  f_hi = excess(hi)
  while hi < top and f_hi <= 0:
    lo, f_lo, hi = hi, f_hi, min(top, hi * 8)
    f_hi = excess(hi)
  if f_hi <= 0:
    return hi
  return search_lib.log_regula_falsi(excess, (lo, f_lo), (hi, f_hi),
                                    tolerance)


# Seconds of calibrate() per (num_levels / discretization)^2: its search
# composes each level's loss (about 3,000 cells on the default grid) with
# itself L times by direct convolution of its non-zero runs, about 80 times.
# Measured (n = 10^4, epsilon = 4, delta = 1/n^2, the default grid 1e-3, no
# stored answer): L = 11 in 0.20 s, 21 in 0.80 s, 34 in 2.39 s, 51 in
# 3.91 s, 70 in 10.2 s (1.7e-9 to 2.1e-9 s per unit); a fifth more here.
_SECONDS_PER_UNIT = 2.5e-9
# The longest calibration started, as estimated (L <= 63 on the default grid).
MAX_CALIBRATION_SECONDS = limits.MAX_SECONDS


def check_calibration_time(num_levels: int, discretization: float) -> None:
  """Refuses, before any work, a calibration of ``num_levels`` levels whose
  exact composition would take over ``MAX_CALIBRATION_SECONDS``.

  Raises:
    ValueError: with the estimate, the largest ``num_levels`` that is
      calibrated in time and what to do.
  """
  seconds = _SECONDS_PER_UNIT * (num_levels / discretization)**2
  if seconds <= MAX_CALIBRATION_SECONDS:
    return
  most = int(discretization * math.sqrt(MAX_CALIBRATION_SECONDS
                                        / _SECONDS_PER_UNIT))
  took = limits.describe_seconds(seconds)
  raise ValueError(
      f"num_levels={num_levels} levels would take about {took} to calibrate "
      f"for Poisson sampling at discretization={discretization:g} (the "
      "accountant composes each level's privacy loss L times, a cost that "
      f"grows as L^2), over the {MAX_CALIBRATION_SECONDS:g} s allowed; use "
      f"num_levels <= {most} (words of at most {most - 1} characters: "
      f'max_length <= {most - 1}) or fixed-size batches (sampling="fixed"), '
      "whose calibration composes nothing")


# The search for theta uses this coarser grid (a pessimistic rounding, so a
# rate found on it is safe on the finer one), then refines the rate.
_SEARCH_DISCRETIZATION = 1e-2


@functools.lru_cache(maxsize=256)
def calibrate(n: int, num_levels: int, epsilon: float, delta: float, *,
              theta: int | None = None,
              discretization: float = DEFAULT_DISCRETIZATION,
              adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE
              ) -> PoissonCalibration:
  """theta and rate for ``(epsilon, delta)``, both directions, for
  neighbours under ``adjacency``.

  With ``theta`` given, the largest rate for it. Otherwise theta maximises
  ``rate / theta``: a word held by c users gets ``c * rate`` votes on
  average and is found when that reaches theta, so ``rate / theta`` sets the
  smallest count found (the role of ``m / theta`` under Theorem 1).

  Raises:
    ValueError: when no rate gives the target (too small an epsilon or
      delta for any theta), or the expected batch is smaller than theta
      (nothing could be found), or before any work, when so many levels
      would take too long (:func:`check_calibration_time`).
  """
  n = limits.check_users("n (number of users)", n)
  num_levels = validation.check_int("num_levels (L, trie levels)", num_levels)
  discretization = validation.check_positive("discretization", discretization)
  check_calibration_time(num_levels, discretization)
  epsilon = validation.check_positive("epsilon", epsilon)
  delta = limits.check_delta("delta", delta)
  if theta is not None:
    theta = validation.check_int("theta", theta)
  adjacency = Adjacency.of(adjacency)
  theta, rate = _search(num_levels, float(epsilon), float(delta), theta,
                        float(discretization), adjacency)
  _check_calibrated_rate(n, num_levels, epsilon, delta, theta, rate)
  loss = poisson.composed_loss(rate, theta, num_levels, discretization,
                               poisson.trimming_budget(delta, num_levels),
                               poisson.replaces(adjacency))
  if not loss.delta(epsilon) <= delta:  # max_rate returns a rate that meets it
    raise AssertionError(f"calibrated rate {rate} misses delta={delta}")
  return PoissonCalibration(
      theta=theta, rate=rate, expected_batch_size=rate * n,
      epsilon=loss.epsilon(delta), delta=loss.delta(epsilon),
      target_epsilon=epsilon, target_delta=delta, n=n,
      num_levels=num_levels, adjacency=adjacency)


# The relative tolerance of the calibrated rate (``max_rate``).
_RATE_TOLERANCE = 1e-3


@functools.lru_cache(maxsize=256)
def _search(num_levels: int, epsilon: float, delta: float, theta: int | None,
            discretization: float,
            adjacency: Adjacency) -> tuple[int, float]:
  """theta (unless given) and the largest rate for it: the search, which
  does not depend on n. A stored answer (:mod:`calibration_store`) is used
  when the accountant confirms it; a new one is stored."""
  arguments = search_arguments(num_levels, epsilon, delta, theta,
                               discretization, adjacency)
  # The shipped table's answers are the search's own (its optimality is
  # not checked again); a disk entry's rate must also be the largest.
  for stored, largest in (
      (calibration_store.shipped("poisson", arguments, SOURCES), False),
      (calibration_store.load("poisson", arguments, SOURCES), True)):
    if stored is None:
      continue
    checked = _checked_answer(stored, num_levels, epsilon, delta, theta,
                              discretization, adjacency,
                              check_largest=largest)
    if checked is not None:
      return checked
  what = (f"calibrating Poisson sampling for epsilon={epsilon:g}, "
          f"delta={delta:.3g} over L={num_levels} levels")
  with progress.said_if_slow(what):
    theta, rate = search(num_levels, epsilon, delta, theta, discretization,
                         adjacency)
  if rate > 0:
    calibration_store.save("poisson", arguments, SOURCES,
                           {"theta": theta, "rate": rate})
  return theta, rate


def search_arguments(num_levels: int, epsilon: float, delta: float,
                     theta: int | None, discretization: float,
                     adjacency: Adjacency) -> dict:
  """The arguments of a search as the store keys them."""
  return {"num_levels": num_levels, "epsilon": epsilon, "delta": delta,
          "theta": theta, "discretization": discretization,
          "adjacency": adjacency.value}


def search(num_levels: int, epsilon: float, delta: float,
           theta: int | None, discretization: float,
           adjacency: Adjacency) -> tuple[int, float]:
  """theta (unless given) and its largest rate, searched (no stored answer
  read): theta on the coarse grid, then its rate on ``discretization``."""
  coarse = max(_SEARCH_DISCRETIZATION, discretization)
  found: dict[int, float] = {}

  def coarse_rate(t: int) -> float:
    if t not in found:
      found[t] = max_rate(t, num_levels, epsilon, delta,
                          discretization=coarse, bracket=_guess(found, t),
                          tolerance=1e-2, adjacency=adjacency)
    return found[t]

  if theta is None:
    theta = _best_theta(lambda t: coarse_rate(t) / t)
  start = coarse_rate(theta)
  bracket = (start, start * 1.5) if start > 0 else None
  rate = max_rate(theta, num_levels, epsilon, delta,
                  discretization=discretization, bracket=bracket,
                  tolerance=_RATE_TOLERANCE, adjacency=adjacency)
  return theta, rate


def _guess(found: dict[int, float], theta: int) -> tuple[float, float] | None:
  """A bracket of the rate for ``theta`` from the rates ``found`` for other
  thetas: log-rate against log-theta through the two nearest, within a
  factor 1.25 (a guess: :func:`max_rate` checks and widens it)."""
  near = sorted((k for k in found if found[k] > 0),
                key=lambda k: abs(math.log(k / theta)))[:2]
  if not near:
    return None
  guess = found[near[0]]
  if len(near) == 2:
    (t1, t2), (r1, r2) = near, (found[near[0]], found[near[1]])
    slope = math.log(r2 / r1) / math.log(t2 / t1)
    guess = r1 * (theta / t1)**slope
  guess = min(guess, 0.5)
  return guess / 1.25, guess * 1.25


def _checked_answer(stored: dict, num_levels: int, epsilon: float,
                    delta: float, theta: int | None,
                    discretization: float, adjacency: Adjacency, *,
                    check_largest: bool = True
                    ) -> tuple[int, float] | None:
  """A stored ``(theta, rate)`` if the accountant confirms that the rate
  meets the target and (``check_largest``) a rate ``1 + tolerance`` times
  larger does not (it is the largest, as the search would find it), else
  None. theta's optimality is the search's and is not re-checked."""
  got_theta, rate = stored.get("theta"), calibration_store.finite_float(
      stored.get("rate"))
  if (isinstance(got_theta, bool) or not isinstance(got_theta, int)
      or got_theta < 1 or (theta is not None and got_theta != theta)
      or (theta is None and not _THETA_LOW <= got_theta <= _THETA_HIGH)
      or rate is None or not 0.0 < rate < 1.0):
    return None
  budget = poisson.trimming_budget(delta, num_levels)
  replace = poisson.replaces(adjacency)

  def meets(r: float) -> bool:
    return poisson.run_delta(r, got_theta, num_levels, discretization, budget,
                             epsilon, replace) <= delta

  larger = rate * (1.0 + _RATE_TOLERANCE)
  if not meets(rate) or (check_largest and larger < 1.0 and meets(larger)):
    return None
  return got_theta, rate


def _check_calibrated_rate(n: int, num_levels: int, epsilon: float,
                           delta: float, theta: int, rate: float) -> None:
  """Raises ``ValueError`` when no rate gives the target, or when the
  expected batch ``rate * n`` is below theta (nothing could be found)."""
  setting = (f"epsilon={epsilon:g}, delta={delta:.3g} over L={num_levels} "
             f"levels")
  if rate <= 0.0:
    raise ValueError(f"no sampling rate gives {setting} with theta={theta}; "
                     "ask for a larger epsilon or delta")
  if rate * n < theta:
    need = math.ceil(theta / rate)
    raise ValueError(
        f"n={n} users are too few for Poisson sampling at {setting}: the "
        f"rate {rate:.3g} with theta={theta} samples {rate * n:.3g} users per "
        f"round on average, fewer than theta, so not even a word every user "
        f"holds is found; it needs about n = {need} users (more for a "
        "smaller delta)")


# The thetas the search considers (a stored theta outside is not its answer).
_THETA_LOW, _THETA_HIGH = 2, 400


def _best_theta(score, low: int = _THETA_LOW, high: int = _THETA_HIGH) -> int:
  """The theta in [low, high] with the highest ``score`` (assumed
  unimodal): a scan of a geometric grid, then a ternary search between the
  best point's neighbours."""
  grid = sorted({low, high} | {int(round(low * 1.5**i)) for i in range(20)
                                if low * 1.5**i <= high})
  scores = []
  for t in grid:  # up to the first fall: past it, the scores fall (unimodal)
    scores.append(score(t))
    if len(scores) > 1 and scores[-1] < scores[-2]:
      break
  best = int(np.argmax(scores))
  lo = grid[max(best - 1, 0)]
  hi = grid[min(best + 1, len(grid) - 1)]
  while hi - lo > 2:
    a, b = lo + (hi - lo) // 3, hi - (hi - lo) // 3
    if score(a) < score(b):
      lo = a
    else:
      hi = b
  return max(range(lo, hi + 1), key=lambda t: (score(t), -t))
