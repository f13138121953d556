"""Renyi DP of Poisson-sampled rounds, and its (epsilon, delta), at any delta.

dp_accounting's PLD answers epsilon = inf below delta = 1e-15 (floating
point), where the project's populations of 10^8 users and more declare
delta = 1/n^2. This bound answers there and keeps the amplification that
sampling buys.

* *One round.* Zhu and Wang ("Poisson Subsampled Renyi Differential
  Privacy", ICML 2019), Theorem 6, the general upper bound: if a mechanism
  M is (l, eps(l))-RDP for every integer order l in 2..alpha, under adding
  or removing one element (both directions), then M on a Poisson sample
  of rate q is (alpha, eps_q(alpha))-RDP, both directions, with
  ``(alpha - 1) eps_q(alpha) = log[(1 - q)^(alpha - 1) (alpha q - q + 1)
  + C(alpha, 2) q^2 (1 - q)^(alpha - 2) e^eps(2)
  + 3 sum_{l=3..alpha} C(alpha, l) q^l (1 - q)^(alpha - l)
  e^((l - 1) eps(l))]``, for integer alpha >= 2.
* *The discrete Gaussian.* eps(l) = l / (2 sigma^2) at sensitivity 1, both
  directions (Canonne, Kamath and Steinke 2020, Theorem 4: the
  continuous Gaussian's Renyi divergence bounds the discrete one's).
* *Rounds.* RDP composes adaptively by adding eps_q(alpha) over rounds
  (Mironov 2017, Proposition 1), whatever each round's q and sigma.
* *To (epsilon, delta).* CKS20 Proposition 12 (as Corollary 13 uses it):
  ``epsilon = eps(alpha) + (log(1 / delta) + (alpha - 1) log(1 - 1 /
  alpha) - log(alpha)) / (alpha - 1)``, minimised over the orders
  :data:`ORDERS` (each gives a valid bound).

Looser than the PLD where both answer, tighter than the unsampled zCDP
bound whenever q is well below 1; checked from the pmfs in
``tests/theory/sampled_renyi_test.py``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy import special

# Integer orders: every one to 64, then about 4 % apart to 10^4 (an order
# near log(1 / delta) / epsilon is the best; 10^4 covers epsilon = 0.005 at
# delta = 1e-20).
ORDERS = tuple(sorted(set(range(2, 65)) | {
    int(round(64 * 1.04**k)) for k in range(1, 130)
    if 64 * 1.04**k <= 10_000}))


@functools.lru_cache(maxsize=256)
def _log_moments(sigma: float, sampling_rate: float) -> np.ndarray:
  """``(alpha - 1) eps_q(alpha)`` of one discrete Gaussian round (sigma,
  q) at each of :data:`ORDERS` (module docstring)."""
  q = sampling_rate
  out = np.empty(len(ORDERS))
  for i, alpha in enumerate(ORDERS):
    l = np.arange(2, alpha + 1, dtype=np.float64)
    log_binomial = (special.gammaln(alpha + 1.0) - special.gammaln(l + 1.0)
                    - special.gammaln(alpha - l + 1.0))
    terms = (log_binomial + l * math.log(q) + (alpha - l) * math.log1p(-q)
             + (l - 1.0) * l / (2.0 * sigma * sigma))
    terms[1:] += math.log(3.0)  # the orders l >= 3
    first = (alpha - 1.0) * math.log1p(-q) + math.log1p((alpha - 1.0) * q)
    out[i] = np.logaddexp(first, np.logaddexp.reduce(terms))
  return out


def renyi_curve(sigmas: Sequence[float], sampling_rate: float) -> np.ndarray:
  """The composed rounds' RDP ``eps(alpha)`` at each of :data:`ORDERS`:
  discrete Gaussian rounds of ``sigmas``, each Poisson-sampled at
  ``sampling_rate`` < 1."""
  if not 0.0 < sampling_rate < 1.0:
    raise ValueError(
        f"sampling_rate must be in (0, 1) for the sampled bound, got "
        f"{sampling_rate}; an unsampled round has the zCDP bound")
  total = np.zeros(len(ORDERS))
  for sigma in sigmas:
    total += _log_moments(float(sigma), float(sampling_rate))
  return total / (np.asarray(ORDERS, dtype=np.float64) - 1.0)


def epsilon_from_curve(curve: np.ndarray, delta: float) -> float:
  """epsilon at ``delta`` of an RDP curve on :data:`ORDERS` (CKS20
  Proposition 12, the best order), rounded up a little."""
  alpha = np.asarray(ORDERS, dtype=np.float64)
  eps = curve + (-math.log(delta) + (alpha - 1.0) * np.log1p(-1.0 / alpha)
                 - np.log(alpha)) / (alpha - 1.0)
  return max(0.0, float(np.min(eps))) * (1.0 + 1e-9)


def epsilon(sigmas: Sequence[float], sampling_rate: float,
            delta: float) -> float:
  """epsilon at ``delta`` of discrete Gaussian rounds of ``sigmas``, each
  Poisson-sampled at ``sampling_rate`` (module docstring), both
  directions."""
  return epsilon_from_curve(renyi_curve(sigmas, sampling_rate), delta)
