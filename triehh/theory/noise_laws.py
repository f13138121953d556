"""The laws of the server's noise a planned noisy-trie run may draw
(``docs/noisy-trie.md``, "The noise's law"): the discrete Gaussian (sigma,
composed by its PLD: ``(epsilon, delta)``) or the discrete Laplace (scale
b, pure DP, composed by adding epsilons: ``(epsilon, 0)``), with their
pmfs and tails in double precision, and the law of the sum of several
independent draws (two servers' noise, ``docs/two-servers.md``)."""

from __future__ import annotations

import functools
import math

import numpy as np

from triehh.core import discrete_noise

GAUSSIAN, LAPLACE = "gaussian", "laplace"
NOISE_LAWS = (GAUSSIAN, LAPLACE)


def check(law: str) -> str:
  """``law`` if it is one of :data:`NOISE_LAWS`; ValueError otherwise."""
  if law not in NOISE_LAWS:
    raise ValueError(f"noise must be {GAUSSIAN!r} or {LAPLACE!r} (the noise "
                     f"law), got {law!r}")
  return law


def pmf(law: str, scale: float, values) -> np.ndarray:
  """``P[N = values]`` of the discrete Gaussian of sigma ``scale`` or the
  discrete Laplace of that scale."""
  if check(law) == LAPLACE:
    q = math.exp(-1.0 / scale)
    return (1.0 - q) / (1.0 + q) * np.exp(-np.abs(values) / scale)
  return discrete_noise.discrete_gaussian_pmf(scale, values)


def tail(law: str, scale: float, threshold: int, parts: int = 1) -> float:
  """``P[N >= threshold]`` of that law, or of the sum of ``parts``
  independent draws of it."""
  if parts != 1:
    return float(sum_tail(law, scale, threshold, parts))
  if check(law) == LAPLACE:
    return discrete_noise.discrete_laplace_tail(scale, threshold)
  return discrete_noise.discrete_gaussian_tail(scale, threshold)


# One draw's pmf is cut this many scales (sigmas) out: the mass past it is
# below 1e-40.
_REACH = {LAPLACE: 93, GAUSSIAN: 14}


def cut_sum_pmf(law: str, scale: float, parts: int, half_width: int
                ) -> np.ndarray:
  """``P[S = s]`` for s in ``[-parts w, parts w]`` (w = ``half_width``),
  S the sum of ``parts`` independent draws, each cut to ``[-w, w]``;
  convolved directly (no FFT), so tails stay exact far below 1e-16."""
  if isinstance(parts, bool) or not isinstance(parts, int) or parts < 1:
    raise ValueError(f"parts must be a whole number >= 1 (the draws summed),"
                     f" got {parts!r}")
  one = pmf(law, scale, np.arange(-half_width, half_width + 1))
  total = one
  for _ in range(parts - 1):
    total = np.convolve(total, one)
  return total


@functools.lru_cache(maxsize=64)
def sum_tails(law: str, scale: float, parts: int) -> tuple[np.ndarray, int]:
  """``(tails, M)``: ``tails[i] = P[S >= i - M]`` for S the sum of
  ``parts`` draws, each cut where its tail is below 1e-40."""
  m = int(math.ceil(_REACH[check(law)] * scale)) + 2
  total = cut_sum_pmf(law, scale, parts, m)
  return np.cumsum(total[::-1])[::-1], parts * m


def sum_pmf(law: str, scale: float, parts: int) -> tuple[np.ndarray,
                                                         np.ndarray]:
  """``(z, pmf)``: the law of the sum of ``parts`` independent draws on its
  support (cut where the tail is below 1e-40)."""
  tails, m = sum_tails(law, float(scale), parts)
  return np.arange(-m, m + 1), tails - np.append(tails[1:], 0.0)


def sum_tail(law: str, scale: float, threshold, parts: int
             ) -> np.ndarray | float:
  """``P[S >= threshold]`` for S the sum of ``parts`` independent draws."""
  tails, m = sum_tails(law, float(scale), parts)
  index = np.clip(np.asarray(threshold) + m, 0, tails.size)
  out = np.where(index >= tails.size, 0.0,
                 tails[np.minimum(index, tails.size - 1)])
  return float(out) if np.ndim(out) == 0 else out
