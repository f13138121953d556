"""Utility of TrieHH: the worst-case discovery rate (Proposition 2).

A sequence held by ``W`` of ``n`` users that shares no prefix with any other
sequence is added to the trie at a level iff at least ``theta`` of its
holders are among the ``m`` users sampled that round: a hypergeometric tail,

    P_level = sum_{i=theta}^{min(W, m)} C(W, i) C(n - W, m - i) / C(n, m).

It must pass every one of its ``L`` levels, each with a fresh sample, so the
worst-case discovery rate is ``P_level ** L``. Sharing prefixes with other
sequences only helps, which is why real data does better.

``L`` (``num_levels`` here) is the number of levels the sequence must pass:
a word of ``k`` characters followed by the end symbol passes ``k + 1``
levels, and ``discover(max_length=k)`` runs ``k + 1`` levels
(:func:`privacy.levels_for_length`).
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable

import numpy as np

from triehh.core import validation
from triehh.theory import _search
from triehh.theory import distributions
from triehh.theory import limits
from triehh.theory import privacy

# Levels of discover's default run: max_length=10 characters + the end symbol.
DEFAULT_NUM_LEVELS = 11


def level_rate(count, n: int, batch_size: int, theta: int) -> np.ndarray:
  """P(at least ``theta`` of ``count`` holders are in a batch of ``m``).

  Vectorised over ``count``; computed by scipy's hypergeometric survival
  function (:mod:`triehh.theory.distributions`), exact for n up to 1e8 and
  beyond (no factorial overflow).
  """
  _check(n, batch_size, theta)
  count = _check_count(count, n, f"n={n}")
  return distributions.hypergeom_sf(theta - 1, n, count, batch_size)


def discovery_rate(count, n: int, batch_size: int, theta: int,
                   num_levels: int) -> np.ndarray | float:
  """Worst-case discovery rate of Proposition 2: ``level_rate ** num_levels``.

  Args:
    count: W, users holding the sequence (scalar or array).
    n: number of users.
    batch_size: m, users sampled per round.
    theta: the vote threshold.
    num_levels: L, the levels the sequence must pass: its characters plus
      the end symbol (a word of ``k`` characters passes ``k + 1``; for words
      as long as ``discover(max_length=k)`` allows, ``k + 1``).
  """
  num_levels = validation.check_int("num_levels (L, trie levels)", num_levels)
  rate = level_rate(count, n, batch_size, theta) ** num_levels
  return float(rate) if np.ndim(rate) == 0 else rate


def poisson_discovery_rate(count, rate: float, theta: int,
                           num_levels: int) -> np.ndarray | float:
  """Worst-case discovery rate under Poisson sampling (rate q).

  A sequence held by ``count`` users gets ``Binomial(count, q)`` votes at
  each level, independently across levels (every round samples afresh), so
  it is found with probability ``P[Binomial(count, q) >= theta] ^ L``; users
  holding other sequences with a shared prefix can only add votes, so this
  is a lower bound for them (Proposition 2's argument, without the batch's
  hypergeometric law).
  """
  num_levels = validation.check_int("num_levels (L, trie levels)", num_levels)
  rate = validation.check_rate("rate", rate)
  validation.check_int("theta", theta)
  count = _check_count(count, limits.MAX_USERS, "2**62 - 1")
  level = distributions.binom_sf(theta - 1, count, rate)
  out = level ** num_levels
  return float(out) if np.ndim(out) == 0 else out


def nothing_found(theta: int, users_per_round: float, n: int) -> str:
  """Why a run found no word, from its public parameters, in one line: a
  word's prefix needs ``theta`` votes in each round, which its holders
  give in expectation when about ``theta / q`` of the ``n`` users hold it
  (``q = users_per_round / n``, each user's chance of taking part); where
  that is more than ``n``, no word can be expected at this n."""
  n = validation.check_int("n", n)
  theta = validation.check_int("theta", theta)
  needed = theta * n / users_per_round if users_per_round > 0 else math.inf
  line = (f"no word found: a word needs theta={theta} votes in every round, "
          f"so about theta/q = {needed:,.0f} holders among the n={n:,} users "
          f"(q n = {users_per_round:,.1f} sampled per round)")
  if needed > n:
    return (line + ": more than there are users, so no word can be "
            "expected; ask for a larger epsilon, or run on more users")
  return line + ": no word reached it in this run"


def min_population(frequency: float, epsilon: float, *,
                   num_levels: int = DEFAULT_NUM_LEVELS,
                   probability: float = 0.9,
                   delta: Callable[[int], float] | float | None = None,
                   upper: int = 10**12) -> int:
  """Smallest n at which frequency ``f`` is discovered w.p. >= ``probability``.

  For each n, theta and the batch size come from :func:`privacy.calibrate`
  for ``(epsilon, delta(n))`` over ``num_levels`` levels (``delta`` defaults
  to ``1/n^2``, as in the paper's Figure 2 and in :func:`triehh.discover`),
  the sequence is held by ``floor(f * n)`` users, and the worst-case rate is
  Proposition 2's for a sequence that must pass all ``num_levels`` levels.
  Populations too small for Corollary 1 (gamma < 1) count as failures. The
  rate is searched by doubling then bisection, which assumes it is monotone
  in n; integer rounding of theta, m and W makes it only nearly so, so the
  answer is the smallest n found by bisection at which the target holds.

  Args:
    frequency: f, the share of users holding the sequence.
    epsilon: the target epsilon.
    num_levels: L, trie levels, not characters: the default 11 is what
      ``discover(max_length=10)`` (its default) runs; for
      ``discover(max_length=k)`` pass ``k + 1``
      (:func:`privacy.levels_for_length`).
    probability: the worst-case discovery rate to reach.
    delta: the target delta, or a function of n giving it.
    upper: the largest n searched.
  """
  validation.check_rate("frequency", frequency)
  validation.check_probability("probability", probability)
  validation.check_positive("epsilon", epsilon)
  num_levels = validation.check_int("num_levels (L, trie levels)", num_levels)
  upper = validation.check_whole("upper", upper, low=2, high=limits.MAX_USERS)
  delta_of = _delta_of(delta)

  def ok(n: int) -> bool:
    target = delta_of(n)  # a bad delta raises, not a failure
    try:
      cal = privacy.calibrate(n, num_levels, epsilon, target)
    except ValueError:
      return False
    count = math.floor(frequency * n)
    return discovery_rate(count, n, cal.batch_size, cal.theta,
                          num_levels) >= probability

  hi = min(16, upper)
  lo = max(2, hi // 2)
  while not ok(hi):
    if hi >= upper:
      raise ValueError(
          f"no population up to n={upper} discovers frequency {frequency} "
          f"with probability {probability} at epsilon={epsilon}")
    lo, hi = hi, min(2 * hi, upper)
  return _search.first_true(ok, lo, hi)


def _delta_of(delta) -> Callable[[int], float]:
  """:func:`min_population`'s ``delta`` as a function of n whose values
  are checked (:func:`limits.check_delta`), naming ``delta``."""
  if delta is None:
    return lambda n: 1.0 / n**2
  if not callable(delta):
    value = limits.check_delta("delta", delta)
    return lambda n: value

  def checked(n: int) -> float:
    return limits.check_delta("delta", delta(n), f"its value at n={n}")

  return checked


def _check_count(count, high: int, bound: str) -> np.ndarray:
  """``count`` as an array of numbers in ``[0, high]`` (``bound`` says
  what high is), or a TypeError/ValueError naming ``count``."""
  array = np.asarray(count)
  said = f"count must be in [0, {bound}] (users holding the sequence), got"
  if array.dtype == object:  # Python ints beyond 64 bits, among others
    for value in array.flat:
      if (isinstance(value, int) and not isinstance(value, bool)
          and not 0 <= value <= high):
        raise ValueError(f"{said} about {decimal.Decimal(value):.3g}")
  validation.check_numbers("count", array, "users holding the sequence")
  outside = ~((array >= 0) & (array <= high))  # also nan
  if outside.any():
    raise ValueError(f"{said} {array.flat[np.flatnonzero(outside)[0]]!r}")
  return array


def _check(n: int, batch_size: int, theta: int) -> None:
  n = limits.check_users("n (number of users)", n)
  validation.check_int("batch_size", batch_size, high=n)
  validation.check_int("theta", theta)
