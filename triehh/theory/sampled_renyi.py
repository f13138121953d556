"""Renyi DP of Poisson-sampled discrete Gaussian rounds, and its (epsilon,
delta), at any delta.

dp_accounting's PLD answers epsilon = inf below delta = 1e-15 (floating
point), where the project's populations of 10^8 users and more declare
delta = 1/n^2. This accountant answers there and keeps the amplification
that sampling buys.

* *The pair.* A round adds the discrete Gaussian N_Z(0, sigma^2) to each
  coordinate of a sum of one-hot votes; with Poisson sampling at rate q,
  adding or removing one user changes one coordinate's law from P =
  N_Z(0, sigma^2) to M = (1 - q) P + q P(. - 1), the others not at all
  (several words: a mixture of such pairs, which Renyi divergence, jointly
  quasi-convex, does not exceed). The round is (alpha, D)-RDP, both
  directions, with D = max(D_alpha(M || P), D_alpha(P || M)).
* *Towards the sampled law, exactly.* For integer alpha, expanding
  ``((1 - q) + q Q/P)^alpha``: ``(alpha - 1) D_alpha(M || P) = log sum_k
  C(alpha, k) (1 - q)^(alpha - k) q^k exp(k (k - 1) / (2 sigma^2))``,
  because ``sum_x P(x)^(1 - k) P(x - 1)^k = exp(k (k - 1) / (2 sigma^2))``
  on the integers (the exponent is ``-((x - k)^2 + k - k^2) / (2
  sigma^2)`` and a discrete Gaussian centred at an integer k has P's
  normaliser): the continuous sampled Gaussian's value (Mironov, Talwar
  and Zhang 2019).
* *Away from it, summed with a bounded tail.* ``(alpha - 1) D_alpha(P ||
  M) = log sum_x P(x) ((1 - q) + q exp((2x - 1) / (2 sigma^2)))^(1 -
  alpha)``, summed over ``|x| <= T``; the factor is at most 1 for x >= 1
  and at most ``(1 - q)^(1 - alpha)`` for x < 0, and ``P[X >= t] <=
  exp(-t^2 / (2 sigma^2)) / (1 - exp(-t / sigma^2))`` (the normaliser is at
  least 1), so the tails beyond T are bounded and added. T is chosen so
  that they are below ``exp(-700)`` of the sum.
* *Replacing one user's word* (``REPLACE_ONE``): the user, sampled or
  not, moves its vote from one coordinate to another, so the pair is ``(M
  x P, P x M)`` on the two coordinates (unsampled branch: the same law),
  and Renyi divergence adds over independent products: ``D_alpha(M || P)
  + D_alpha(P || M)`` in either direction (``order / sigma^2`` unsampled:
  the L2 sensitivity sqrt(2)).
* *Rounds.* RDP composes adaptively by adding over rounds (Mironov 2017,
  Proposition 1).
* *To (epsilon, delta).* CKS20 Proposition 12 (as Corollary 13 uses it):
  ``epsilon = eps(alpha) + (log(1 / delta) + (alpha - 1) log(1 - 1 /
  alpha) - log(alpha)) / (alpha - 1)``, at the best of :data:`ORDERS`
  (each gives a valid bound), rounded up by a relative 1e-9 for the
  floating-point sums.

Looser than the PLD where both answer (the conversion from RDP), tighter
than the unsampled zCDP bound whenever q is well below 1; checked in
``tests/theory/sampled_renyi_test.py`` against Renyi divergences summed
from the pmfs, the PLD, and Zhu and Wang's general bound for Poisson
sampling (ICML 2019, Theorem 6), which it never exceeds.
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
# The tails left out of the backward sum are below exp(-_TAIL_LOG) of it.
_TAIL_LOG = 700.0


def _log_forward(alpha: int, sigma: float, q: float) -> float:
  """``(alpha - 1) D_alpha(M || P)``, the closed form (module docstring)."""
  k = np.arange(0, alpha + 1, dtype=np.float64)
  terms = (special.gammaln(alpha + 1.0) - special.gammaln(k + 1.0)
           - special.gammaln(alpha - k + 1.0) + k * math.log(q)
           + (alpha - k) * math.log1p(-q) + k * (k - 1.0) / (2 * sigma**2))
  return float(np.logaddexp.reduce(terms))


def _log_tail(sigma: float, t: float) -> float:
  """An upper bound on ``log P[X >= t]``, t > 0 (module docstring)."""
  return -t * t / (2 * sigma**2) - math.log(-math.expm1(-t / sigma**2))


def _log_backward(alpha: int, sigma: float, q: float) -> float:
  """``(alpha - 1) D_alpha(P || M)``, summed with its tails bounded (module
  docstring)."""
  growth = (alpha - 1.0) * -math.log1p(-q)  # the factor's log for x < 0
  t = int(math.ceil(sigma * math.sqrt(2.0 * (_TAIL_LOG + growth + 50.0)))) + 2
  x = np.arange(-t, t + 1, dtype=np.float64)
  log_p = -x * x / (2 * sigma**2)
  log_p -= np.logaddexp.reduce(log_p)
  log_factor = np.logaddexp(math.log1p(-q),
                            math.log(q) + (2 * x - 1) / (2 * sigma**2))
  body = float(np.logaddexp.reduce(log_p + (1.0 - alpha) * log_factor))
  tails = np.logaddexp(_log_tail(sigma, t + 1.0),
                       _log_tail(sigma, t + 1.0) + growth)
  return float(np.logaddexp(body, tails))


@functools.lru_cache(maxsize=256)
def round_curve(sigma: float, sampling_rate: float,
                replace_one: bool = False) -> np.ndarray:
  """One round's RDP at each of :data:`ORDERS`: the discrete Gaussian of
  ``sigma`` at sensitivity 1, Poisson-sampled at ``sampling_rate``, the
  larger of the two directions (``replace_one``: their sum, module
  docstring). Read only."""
  q = sampling_rate
  if not 0.0 < q < 1.0:
    raise ValueError(
        f"sampling_rate must be in (0, 1) for the sampled bound, got {q}; "
        "an unsampled round has the zCDP bound")
  curve = np.array([round_divergence(sigma, q, a, replace_one)
                    for a in ORDERS])
  curve.flags.writeable = False
  return curve


def round_divergence(sigma: float, sampling_rate: float, order: int,
                     replace_one: bool = False) -> float:
  """One round's RDP at the integer ``order`` >= 2: ``order / (2
  sigma^2)`` unsampled (CKS20 Theorem 4), else the larger of the two
  directions of the Poisson-sampled pair (module docstring), as
  :func:`round_curve` computes it at each of :data:`ORDERS`;
  ``replace_one``: twice the unsampled value, the sum of the two
  directions sampled."""
  if order < 2 or int(order) != order:
    raise ValueError(f"order must be an integer of at least 2, got {order}")
  if sampling_rate >= 1.0:
    return order / (2.0 * sigma * sigma) * (2.0 if replace_one else 1.0)
  forward = _log_forward(int(order), sigma, sampling_rate)
  backward = _log_backward(int(order), sigma, sampling_rate)
  both = forward + backward if replace_one else max(forward, backward)
  return both / (order - 1.0)


def _conversion(alpha, delta: float):
  """CKS20 Proposition 12's term at order(s) ``alpha``: epsilon is the
  RDP plus ``(log(1 / delta) + (alpha - 1) log(1 - 1 / alpha) - log
  alpha) / (alpha - 1)``."""
  alpha = np.asarray(alpha, dtype=np.float64)
  return (-math.log(delta) + (alpha - 1.0) * np.log1p(-1.0 / alpha)
          - np.log(alpha)) / (alpha - 1.0)


def epsilon_at_order(order: int, divergence: float, delta: float) -> float:
  """epsilon at ``delta`` of a mechanism that is (order, divergence)-RDP
  (CKS20 Proposition 12), rounded up a little."""
  eps = divergence + float(_conversion(float(order), delta))
  return max(0.0, eps) * (1.0 + 1e-9)


def best_order(curve: np.ndarray, delta: float) -> int:
  """The order of :data:`ORDERS` at which an RDP curve on them gives the
  least epsilon at ``delta`` (:func:`epsilon_from_curve`'s)."""
  return ORDERS[int(np.argmin(curve + _conversion(ORDERS, delta)))]


def renyi_curve(sigmas: Sequence[float], sampling_rate: float,
                replace_one: bool = False) -> np.ndarray:
  """The composed rounds' RDP at each of :data:`ORDERS`: discrete Gaussian
  rounds of ``sigmas``, each Poisson-sampled at ``sampling_rate`` < 1
  (``replace_one``: for ``REPLACE_ONE``, module docstring)."""
  total = np.zeros(len(ORDERS))
  for sigma in sigmas:
    total += round_curve(float(sigma), float(sampling_rate),
                         bool(replace_one))
  return total


def epsilon_from_curve(curve: np.ndarray, delta: float) -> float:
  """epsilon at ``delta`` of an RDP curve on :data:`ORDERS` (CKS20
  Proposition 12, the best order), rounded up a little."""
  eps = curve + _conversion(ORDERS, delta)
  return max(0.0, float(np.min(eps))) * (1.0 + 1e-9)


def epsilon(sigmas: Sequence[float], sampling_rate: float,
            delta: float, replace_one: bool = False) -> float:
  """epsilon at ``delta`` of discrete Gaussian rounds of ``sigmas``, each
  Poisson-sampled at ``sampling_rate`` (module docstring), both
  directions (``replace_one``: for ``REPLACE_ONE``)."""
  return epsilon_from_curve(renyi_curve(sigmas, sampling_rate, replace_one),
                            delta)
