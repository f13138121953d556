"""The laws of the server's noise a planned noisy-trie run may draw
(``docs/noisy-trie.md``, "The noise's law"): the discrete Gaussian (sigma,
composed by its PLD: ``(epsilon, delta)``) or the discrete Laplace (scale
b, pure DP, composed by adding epsilons: ``(epsilon, 0)``), with their
pmfs and tails in double precision."""

from __future__ import annotations

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


def tail(law: str, scale: float, threshold: int) -> float:
  """``P[N >= threshold]`` of that law."""
  if check(law) == LAPLACE:
    return discrete_noise.discrete_laplace_tail(scale, threshold)
  return discrete_noise.discrete_gaussian_tail(scale, threshold)
