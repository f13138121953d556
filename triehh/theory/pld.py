"""Discretised privacy loss distributions, both directions, composed exactly.

A mechanism's privacy loss between two neighbouring inputs, rounded up to
a grid of ``discretization`` (pessimistic, as dp_accounting's
``pessimistic_estimate``), in each direction separately
(:class:`LossDistribution`, :class:`TwoSided`). Composition is a direct
convolution of non-negative arrays (:func:`convolve`): every entry is a
sum of positive terms, accurate to ~1e-12 relative, so deltas as small as
1e-30 are exact. A TrieHH level's array is mostly zeros (its atoms above
the lowest losses are further apart than a grid step: about 150 non-zero
cells of 3,000 at theta = 21 on the 1e-3 grid), so :func:`convolve` adds
only the non-zero terms, the same sums in another order. dp_accounting's FFT composition has an absolute error floor
near 1e-15 (measured: it returns -1.2e-15 where the exact value is 2.9e-16),
too high for delta = 1/n^2 at n >= 10^7; :mod:`triehh.theory.dp_events`
hands these distributions to dp_accounting where a user composes them with
other releases.

:func:`product` is the loss of two independent mechanisms run on the same
pair of inputs: the sum of their losses, a convolution per direction.
:func:`swap_product` is the loss of a pair ``(P x Q, Q x P)`` built from one
pair ``(P, Q)``: the loss when one user's contribution leaves one place and
joins another independent one (replace-one adjacency under Poisson
sampling, ``docs/privacy.md``).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np


@dataclasses.dataclass(frozen=True)
class LossDistribution:
  """A discretised privacy loss distribution of one direction.

  ``probs[j]`` is the mass at loss ``(lower + j) * discretization``;
  ``infinity`` the mass where the other law has none.
  """

  discretization: float
  lower: int
  probs: np.ndarray
  infinity: float

  def compose(self, times: int) -> "LossDistribution":
    """The ``times``-fold composition (direct convolution)."""
    probs = np.ones(1)
    for _ in range(times):
      probs = convolve(probs, self.probs)
    return LossDistribution(self.discretization, self.lower * times, probs,
                            self.composed_infinity(times))

  def composed_infinity(self, times: int) -> float:
    """The infinity mass of the ``times``-fold composition, never below the
    exact value (``1 - (1 - p)^times`` is computed with rounding errors,
    which could leave it an ulp below ``p`` at one level)."""
    if self.infinity == 0.0 or times == 0:
      return 0.0
    if times == 1:
      return self.infinity
    return _at_least(-math.expm1(times * math.log1p(-self.infinity)),
                     self.infinity)

  def composed_largest_loss(self, times: int) -> float:
    """The largest loss of the ``times``-fold composition, computed as its
    :attr:`losses` are."""
    return ((self.lower * times + times * (self.probs.size - 1))
            * self.discretization)

  def trimmed(self, budget: float) -> "LossDistribution":
    """Pessimistically smaller: at most ``budget / 2`` of the mass at the
    lowest losses is raised to the lowest loss kept, and at most ``budget /
    2`` at the highest losses is moved to infinity. Either can only raise
    delta, each by at most the mass moved, per composed level."""
    if budget <= 0 or self.probs.size < 3:
      return self
    below = np.cumsum(self.probs)
    first = int(np.searchsorted(below, budget / 2, side="right"))
    above = np.cumsum(self.probs[::-1])
    last = self.probs.size - int(np.searchsorted(above, budget / 2,
                                                 side="right"))
    if first >= last:
      return self
    probs = self.probs[first:last].copy()
    probs[0] += below[first - 1] if first else 0.0
    moved_up = float(self.probs[last:].sum())
    return LossDistribution(self.discretization, self.lower + first, probs,
                            self.infinity + moved_up)

  def delta(self, epsilon: float) -> float:
    """The hockey-stick divergence ``sum (1 - e^(eps - loss))_+`` + infinity."""
    losses = self.losses
    first = int(np.searchsorted(losses, epsilon, side="right"))  # > epsilon
    return float(self.infinity + np.sum(
        self.probs[first:] * -np.expm1(epsilon - losses[first:])))

  @functools.cached_property
  def losses(self) -> np.ndarray:
    """The loss of each entry of ``probs`` (increasing)."""
    return (self.lower + np.arange(self.probs.size)) * self.discretization


@dataclasses.dataclass(frozen=True)
class TwoSided:
  """The privacy loss of a run in both directions (D vs D' and D' vs D)."""

  forward: LossDistribution
  reverse: LossDistribution

  def delta(self, epsilon: float) -> float:
    """The larger delta of the two directions at ``epsilon``."""
    return larger(self.forward.delta(epsilon), self.reverse.delta(epsilon),
                   epsilon)

  def epsilon(self, delta: float) -> float:
    """The smallest epsilon >= 0 (to 1e-9) with ``delta(epsilon) <= delta``."""
    if max(self.forward.infinity, self.reverse.infinity) > delta:
      return math.inf
    if self.delta(0.0) <= delta:
      return 0.0
    top = max(_top_loss(self.forward), _top_loss(self.reverse))
    lo, hi = 0.0, top  # delta(top) = infinity mass <= delta
    while hi - lo > 1e-9:
      mid = 0.5 * (lo + hi)
      if self.delta(mid) <= delta:
        hi = mid
      else:
        lo = mid
    return hi


def larger(forward: float, reverse: float, epsilon: float) -> float:
  """The larger of the two directions' deltas; a NaN raises (max() would
  drop a NaN second argument: a direction left out)."""
  if math.isnan(forward) or math.isnan(reverse):
    raise FloatingPointError(f"the accountant's delta at epsilon={epsilon} "
                             f"is NaN (forward {forward}, reverse {reverse})")
  return max(forward, reverse)


def _top_loss(loss: LossDistribution) -> float:
  return (loss.lower + loss.probs.size) * loss.discretization



def product(first: LossDistribution,
            second: LossDistribution) -> LossDistribution:
  """The loss of two independent mechanisms on the same pair of inputs:
  the convolution of the two (same grid); the infinity masses combine as
  ``a + b - ab``, rounded up."""
  if first.discretization != second.discretization:
    raise ValueError("the two distributions are on different grids: "
                     f"{first.discretization} and {second.discretization}")
  a, b = first.infinity, second.infinity
  infinity = _at_least(a + b - a * b, max(a, b))
  return LossDistribution(first.discretization, first.lower + second.lower,
                          convolve(first.probs, second.probs), infinity)


def swap_compose(pair: TwoSided, times: int) -> LossDistribution:
  """The ``times``-fold composition of :func:`swap_product` ``(pair)`` (one
  direction; the other is the same): ``(F * R)^times = F^times * R^times``,
  computed as ``F`` composed ``times`` times, then convolved with ``R``
  ``times`` times, so that every convolution is with one sparse level."""
  forward = pair.forward.compose(times)
  probs = forward.probs
  for _ in range(times):
    probs = convolve(probs, pair.reverse.probs)
  a, b = forward.infinity, pair.reverse.composed_infinity(times)
  infinity = _at_least(a + b - a * b, max(a, b))
  return LossDistribution(forward.discretization,
                          forward.lower + pair.reverse.lower * times, probs,
                          infinity)


# Runs of consecutive non-zero entries at least this long are convolved as
# blocks (numpy's direct convolution); shorter ones term by term.
_BLOCK = 8
# Below this many products numpy's convolution is faster than any split
# (measured: a level of theta = 21 on the 1e-2 grid composed 11 times,
# 0.6 ms by numpy.convolve, 3.6 ms by runs at a 2e5 threshold).
_SMALL = 5_000_000


def convolve(first: np.ndarray, second: np.ndarray) -> np.ndarray:
  """The full discrete convolution of two non-negative arrays, as
  ``numpy.convolve`` (direct, no FFT), adding only the terms where
  ``second`` is non-zero: each of its runs of non-zero entries is one
  shifted ``numpy.convolve`` (or a scaled copy of ``first`` for a lone
  entry). The sums hold the same non-zero products as numpy's."""
  first, second = np.asarray(first, float), np.asarray(second, float)
  if first.size < second.size:
    first, second = second, first
  if first.size * second.size <= _SMALL:
    return np.convolve(first, second)
  nonzero = np.flatnonzero(second)
  if nonzero.size * 2 > second.size:
    return np.convolve(first, second)
  out = np.zeros(first.size + second.size - 1)
  gaps = np.flatnonzero(np.diff(nonzero) > 1)
  starts = np.r_[nonzero[0], nonzero[gaps + 1]].tolist()
  stops = (np.r_[nonzero[gaps], nonzero[-1]] + 1).tolist()
  scaled = np.empty(first.size)
  for start, stop in zip(starts, stops):
    if stop - start >= _BLOCK:
      out[start:start + first.size + stop - start - 1] += np.convolve(
          first, second[start:stop])
    else:
      for j in range(start, stop):
        np.multiply(first, second[j], out=scaled)
        out[j:j + first.size] += scaled
  return out


def swap_product(pair: TwoSided) -> TwoSided:
  """The two-sided loss of ``(P x Q, Q x P)`` for a pair ``(P, Q)`` whose
  directions are ``pair``: ``forward * reverse`` in both directions (the
  pair is symmetric under swapping its two factors)."""
  both = product(pair.forward, pair.reverse)
  return TwoSided(forward=both, reverse=both)


# Relative rounding error allowed for in a computed infinity mass (a few
# ulps: log1p, a product and expm1, each correctly rounded or nearly).
_ROUNDING = 1e-15


def _at_least(value: float, floor: float) -> float:
  """An infinity mass computed with rounding errors, raised by a few ulps
  and to at least ``floor`` (a mass it cannot be below): never below the
  exact value."""
  return min(1.0, max(value * (1.0 + _ROUNDING), floor))
