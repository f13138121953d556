"""Privacy amplification by shuffling: SFP's local epsilon for a central one.

The paper compares TrieHH and SFP "at the same central (epsilon, delta)":
SFP's reports are locally private, and when the ``n`` reports reach the
server as an anonymous, shuffled multiset, the ``eps0``-local guarantee
amplifies to a central ``(eps, delta)`` one. The paper does this with
Theorem 5.3 of Balle, Bell, Gascon and Nissim, "The Privacy Blanket of the
Shuffle Model" (CRYPTO 2019).

The bound (generic ``eps0``-LDP randomizers, privacy blanket + Hoeffding).
For any ``eps > 0``, the shuffled protocol is ``(eps, delta)``-DP with::

    delta(eps, eps0, n) = (e^eps - 1) / (4 n t) * exp(-(1 - e^-2) n min(e^-eps0, t))
    t = ( (e^eps - 1) / ((e^eps + 1) (e^eps0 - e^-eps0)) )^2

How it arises, so that it can be checked: every ``eps0``-LDP randomizer
outputs, with probability ``gamma >= e^-eps0``, a draw from an
input-independent "blanket" distribution; the privacy loss then rests on a
sum over the other users' blanket messages (about ``gamma n``) of independent "privacy amplification"
variables of range at most ``gamma (e^eps + 1)(e^eps0 - e^-eps0)``, and
Hoeffding's inequality with ``1 - e^{-2x} >= (1 - e^-2) min(1, x)`` and
``e^-eps0 <= gamma <= 1`` gives the closed form above.

Assumptions (the theorem holds only under them):

* every user applies the same ``eps0``-LDP randomizer (pure LDP, no
  ``delta0``) to its own data, independently of the others, and sends
  exactly one message;
* a trusted shuffler hands the server a uniformly random permutation of the
  ``n`` messages (the server sees neither who sent what nor the order);
* neighbouring datasets replace one user's data (``n`` is fixed and public);
* the guarantee covers this one release; further releases compose.

For SFP the one message of a user is its fragment position ``l``, its CMS
row ``j`` and its noisy vector: ``l`` and ``j`` do not depend on the data,
and the vector is ``eps_local``-LDP, so the message is ``eps_local``-LDP. If
a whole-word sketch is sent too (``word_budget > 0`` in
:func:`triehh.sfp_discover`), both sketches must travel in the same
message, and their epsilons add up to ``eps_local`` (basic composition).

Agreement with the paper. :func:`sfp_local_epsilon` gives, with
``delta = 1/n^2``: ``eps = 1 -> 4.29`` and ``eps = 4 -> 4.96`` for
``n = 659,775`` (the number of users of the full Sentiment140 training
set; any ``n`` from about 652,000 to 660,000 rounds to these values, and the
paper's released configuration used ``delta = 2.3e-12``, i.e.
``n ~ 659,380``), and ``eps = 1 -> 5.31``, ``eps = 4 -> 5.99`` for the
6M-user OOV setting: the paper's four values to the two decimals printed
(``tests/baselines/amplification_test.py``).

The local epsilon is never below the central one: an ``eps``-LDP report is
``(eps, 0)``-DP at the server even without the shuffle.
"""

from __future__ import annotations

import math

import numpy as np

_HOEFFDING_CONST = 1.0 - math.exp(-2.0)
# Tolerances of the root finding (brentq's xtol and rtol).
_XTOL = 1e-12
_RTOL = 4 * np.finfo(float).eps


def _check(epsilon: float, delta: float, n: int, name: str = "epsilon"
           ) -> tuple[float, float, int]:
  try:
    eps = float(epsilon)
    dlt = float(delta)
  except (TypeError, ValueError):
    raise TypeError(f"{name} and delta must be numbers, got {epsilon!r}, "
                    f"{delta!r}") from None
  if math.isnan(eps) or eps <= 0:
    raise ValueError(f"{name} must be > 0, got {epsilon!r}")
  if not 0.0 < dlt < 1.0:
    raise ValueError(f"delta must be in (0, 1), got {delta!r}")
  if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
    raise TypeError(f"n must be an integer number of users, got {n!r}")
  if n < 2:
    raise ValueError(f"the shuffle bound needs n >= 2 users, got n={n}")
  return eps, dlt, int(n)


def _log_expm1(x: float) -> float:
  """``log(e^x - 1)`` without overflow."""
  return x + math.log1p(-math.exp(-x)) if x > 30 else math.log(math.expm1(x))


def _log_two_sinh(x: float) -> float:
  """``log(e^x - e^-x)`` without overflow (``log(2x)`` where ``e^-2x``
  rounds to 1)."""
  if math.exp(-2.0 * x) == 1.0:
    return math.log(2.0 * x)
  return x + math.log1p(-math.exp(-2.0 * x))


def _log_tanh_half(x: float) -> float:
  """``log((e^x - 1) / (e^x + 1))`` (``log(x / 2)`` where ``e^-x`` rounds
  to 1)."""
  if x <= 0:
    return -math.inf
  if math.exp(-x) == 1.0:
    return math.log(x) - math.log(2.0)
  return math.log1p(-math.exp(-x)) - math.log1p(math.exp(-x))


def log_delta(epsilon: float, epsilon_local: float, n: int) -> float:
  """``log delta(eps, eps0, n)`` of the bound in the module docstring."""
  log_t = 2.0 * (_log_tanh_half(epsilon) - _log_two_sinh(epsilon_local))
  small = min(-epsilon_local, log_t)
  return (-log_t + _log_expm1(epsilon) - math.log(4.0 * n)
          - _HOEFFDING_CONST * n * math.exp(small))


def shuffle_delta(epsilon: float, epsilon_local: float, n: int) -> float:
  """``delta`` of the shuffled ``epsilon_local``-LDP reports at ``epsilon``."""
  eps, _, n = _check(epsilon, 0.5, n)
  eps0, _, _ = _check(epsilon_local, 0.5, n, "epsilon_local")
  return min(1.0, math.exp(min(log_delta(eps, eps0, n), 0.0)))


def _root_meeting_delta(excess, lo: float, hi: float) -> float:
  """The root of the monotone ``excess`` (``log delta - log target``) in
  ``[lo, hi]``, by ``scipy.optimize.brentq``; if ``excess`` there is still
  positive, moved past the root by twice brentq's tolerance, so that the
  returned point meets the target delta."""
  from scipy import optimize  # pylint: disable=g-import-not-at-top
  root = optimize.brentq(excess, lo, hi, xtol=_XTOL, rtol=_RTOL)
  if excess(root) > 0:
    step = 2.0 * (_XTOL + _RTOL * abs(root))
    root = max(lo, root - step) if excess(lo) <= 0 else min(hi, root + step)
  return root


def sfp_local_epsilon(epsilon: float, delta: float, n: int) -> float:
  """The largest local epsilon whose ``n`` shuffled reports are
  ``(epsilon, delta)``-DP by the bound in the module docstring.

  Args:
    epsilon: the target central epsilon (``math.inf`` gives ``inf``).
    delta: the target central delta, in (0, 1).
    n: the number of users (one report each).

  Returns:
    ``max(epsilon, eps0)`` where ``eps0`` solves ``delta(epsilon, eps0, n) =
    delta`` (``delta(.)`` increases with ``eps0``), by Brent's method to
    ``1e-12``, on the side that meets ``delta``.
  """
  if isinstance(epsilon, (int, float)) and math.isinf(epsilon) and epsilon > 0:
    _check(1.0, delta, n)
    return math.inf
  eps, dlt, n = _check(epsilon, delta, n)
  target = math.log(dlt)

  def excess(eps0: float) -> float:
    return log_delta(eps, eps0, n) - target

  if not excess(eps) <= 0:  # the shuffle cannot beat the report's own eps
    return eps
  lo, hi = eps, 2.0 * eps
  while excess(hi) <= 0:
    lo, hi = hi, 2.0 * hi
  return max(eps, _root_meeting_delta(excess, lo, hi))


def central_epsilon(epsilon_local: float, delta: float, n: int) -> float:
  """The central epsilon of ``n`` shuffled ``epsilon_local``-LDP reports.

  The smallest ``eps <= epsilon_local`` with ``delta(eps, epsilon_local, n)
  <= delta`` by the bound in the module docstring, else ``epsilon_local``
  itself (what the reports give without the shuffle). The inverse of
  :func:`sfp_local_epsilon` where the shuffle helps.
  """
  eps0, dlt, n = _check(epsilon_local, delta, n, "epsilon_local")
  target = math.log(dlt)

  def excess(eps: float) -> float:
    return log_delta(eps, eps0, n) - target

  # delta(eps) first falls then (slowly) rises with eps: scan for the first
  # grid point below the target, then solve on the falling stretch before it
  # (halving the grid step if the first point already meets the target).
  with np.errstate(invalid="ignore"):  # step underflows for a tiny eps0
    grid = np.linspace(0.0, eps0, 2001)[1:]
  grid = grid[grid > 0]
  below = [excess(float(e)) <= 0 for e in grid]
  if not any(below):
    return eps0
  first = below.index(True)
  hi = float(grid[first])
  lo = float(grid[first - 1]) if first else hi
  while excess(lo) <= 0:  # only when the first grid point meets the target
    if lo / 2.0 == 0.0:
      return lo  # the bound is met down to the smallest float
    lo /= 2.0
  return _root_meeting_delta(excess, lo, hi)
