"""The verification round's thresholds, one per word, from the discovery
rounds' released counts (``docs/noisy-trie.md``, "Thresholds from the
discovery counts").

Discover then verify (:mod:`triehh.theory.noisy_plan`) releases a word v of
V when its verification count plus the round's noise N reaches its
threshold tau_v. The discovery rounds' noise is independent of N, so for
thresholds that are functions of the discovery rounds' releases (public:
post-processing), a word no user holds is released with probability
``P[N >= tau_v]`` given them, and the run releases at most ``F`` false
words in expectation whenever ``sum_v P[N >= tau_v] <= F``. Splitting F
evenly gives each word the rate ``F / |V|``. Here F is spent where it finds
more:

* *A model for the weights.* A word's count c_v is read from its discovery
  value y_v under a flat prior: ``c_v = y_v - N_d`` (N_d its discovery
  round's noise, mirrored), and its verification value is then
  ``y_v - N_d + N``. Exact for one word per user at q = 1 (the round
  counts the same users); at q < 1 a model (another sample of the same
  holders). With several words per user a user's verification vote goes
  to its word measured lowest, so a word's two counts part ways: the
  engine keeps the even split there
  (:attr:`~triehh.theory.noisy_plan.NoisyPlan.weighted_verification`). The false-word bound above does not
  depend on the model.
* *Lagrange's split.* For a multiplier lambda each word takes the tau
  that maximises ``P[y_v - N_d + N >= tau] - lambda P[N >= tau]``, tau
  from 1 (a tail below 1/2) to the first threshold whose tail is at most
  ``TOP_RATE`` (words far above every threshold take it and spend next to
  nothing), on a lattice of sigma / 8 (every integer below sigma = 16);
  lambda is the least (bisection on its logarithm) whose thresholds'
  tails sum to at most F. A word measured low (most false ones) gets a
  high threshold; one measured near the thresholds, a lower one than the
  even split's.
* *Several draws.* With ``parts`` = 2, N and N_d are each the sum of two
  independent draws (the two servers' noise, ``docs/two-servers.md``):
  the same split over that law.
"""

from __future__ import annotations

import math

import numpy as np

from triehh.theory import noise_laws
from triehh.theory.noise_laws import GAUSSIAN
from triehh.theory.noise_laws import LAPLACE

# The smallest rate a threshold is taken at (a word far above it passes
# anyway): its threshold is the highest any word gets.
TOP_RATE = 1e-18
# The noise laws' grids reach this many sigmas (or scales): the mass past
# them is below 3e-20, under TOP_RATE (the discrete Gaussian's tail at t
# sigmas is at most exp(-t^2 / 2), the Laplace's exp(-t)).
_WIDTH = {GAUSSIAN: 9.5, LAPLACE: 45.0}
# Thresholds (and the discovery values) are taken on a lattice of this
# many steps per sigma or scale (every integer while sigma is below 16),
# so that the table of pass chances stays small at any scale.
_STEPS_PER_SCALE = 8
_BISECTIONS = 80


def spent(law: str, scale: float, taus, parts: int = 1) -> float:
  """``sum_v P[N >= tau_v]``: the false words thresholds ``taus`` release
  in expectation at most (N the sum of ``parts`` draws)."""
  distinct, counts = np.unique(np.asarray(taus, dtype=np.int64),
                               return_counts=True)
  return math.fsum(float(c) * noise_laws.tail(law, scale, int(t), parts)
                   for t, c in zip(distinct, counts))


def _law(law: str, scale: float, parts: int) -> tuple[np.ndarray, int]:
  """``(pmf, W)``: the sum of ``parts`` draws on ``[-W, W]``, each draw
  cut at the grid's width (the mass beyond it below 3e-20 a draw)."""
  w = int(math.ceil(_WIDTH[noise_laws.check(law)] * scale))
  return noise_laws.cut_sum_pmf(law, scale, parts, w), parts * w


def _upper_tails(law: str, scale: float, parts: int) -> np.ndarray:
  """``P[N >= t]`` for t = 0, 1, ... up to the grid's width, summed from
  the far end."""
  pmf, w = _law(law, scale, parts)
  return np.cumsum(pmf[w:][::-1])[::-1]


def thresholds(law: str, verification_scale: float,
               discovery_values, discovery_scales,
               false_words: float, parts: int = 1) -> np.ndarray:
  """``int64``: each word's threshold (module docstring), the words given
  by their discovery values and their discovery rounds' noise parameters
  (sigma or scale, one each), under ``law`` at ``verification_scale``,
  each noise the sum of ``parts`` draws; their tails sum to at most
  ``false_words``."""
  values = np.rint(np.asarray(discovery_values, dtype=np.float64))
  scales = np.asarray(discovery_scales, dtype=np.float64)
  if values.shape != scales.shape:
    raise ValueError(f"{values.size} discovery values but {scales.size} "
                     "discovery scales")
  out = np.zeros(values.size, dtype=np.int64)
  if not values.size:
    return out
  upper = _upper_tails(law, verification_scale, parts)
  step = max(1, int(verification_scale // _STEPS_PER_SCALE))
  # From 1 (rate below 1/2) to the first threshold at TOP_RATE.
  high = int(np.argmax(upper <= TOP_RATE))
  taus = np.arange(1, high + step, step)
  taus = taus[taus < upper.size]
  tails = upper[taus]
  gains = []  # per discovery scale: its words, their rows, P[pass] rows
  for s in np.unique(scales):
    members = np.flatnonzero(scales == s)
    gains.append((members, *_pass_chances(law, float(s), verification_scale,
                                          values[members], taus, step,
                                          parts)))

  def chosen(log_lambda: float) -> np.ndarray:
    lam = math.exp(log_lambda)
    for members, inverse, chances in gains:
      out[members] = np.argmax(chances - lam * tails, axis=1)[inverse]
    return out

  def spent_at(log_lambda: float) -> float:
    return float(tails[chosen(log_lambda)].sum())

  lo, hi = -50.0, 200.0
  if spent_at(lo) <= false_words:
    return taus[chosen(lo)]
  for _ in range(_BISECTIONS):
    mid = 0.5 * (lo + hi)
    if spent_at(mid) > false_words:
      lo = mid
    else:
      hi = mid
  return taus[chosen(hi)]


def _pass_chances(law: str, discovery_scale: float, scale: float,
                  values: np.ndarray, taus: np.ndarray, step: int,
                  parts: int) -> tuple[np.ndarray, np.ndarray]:
  """For the distinct ``values`` (clipped where no threshold tells them
  apart, rounded to the thresholds' lattice): the index of each value's
  row, and each row's chance of ``value - N_d + N >= tau`` at every tau of
  ``taus``."""
  discovery, w_d = _law(law, discovery_scale, parts)
  verification, w_v = _law(law, scale, parts)
  # D's law by FFT: chances to about 1e-15, which is all a weight needs
  # (the tails that bound the false words are summed exactly above).
  d = _convolved(discovery, verification)
  at_least = np.clip(np.cumsum(np.maximum(d, 0.0)[::-1])[::-1], 0.0, 1.0)
  width = w_d + w_v
  clipped = np.clip(values, taus[0] - width - step, taus[-1] + width + step)
  lattice = taus[0] + step * np.rint((clipped - taus[0]) / step)
  distinct, inverse = np.unique(lattice.astype(np.int64),
                                return_inverse=True)
  k = taus[None, :] - distinct[:, None]  # D >= k passes
  chances = np.where(k < -width, 1.0,
                     at_least[np.clip(k + width, 0, 2 * width)])
  chances = np.where(k > width, 0.0, chances)
  return inverse, chances


def _convolved(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """The full convolution of ``a`` and ``b`` by numpy's real FFT."""
  size = a.size + b.size - 1
  n = 1 << (size - 1).bit_length()
  return np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n)[:size]
