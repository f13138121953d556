"""The hypergeometric law, as ``scipy.stats.hypergeom`` computes it, without
importing ``scipy.stats``.

Importing ``scipy.stats`` costs about 0.5 s, more than the rest of a
command's start; the label of a fixed-size run needs only three functions
of one law (:mod:`triehh.theory.crowding`). These are scipy's own: the same
kernels (``pmf`` and ``cdf`` from Boost, which ``scipy.special`` holds;
``logpmf`` from ``betaln``) on the same arguments, so that every value is
bit for bit scipy's (checked in ``tests/theory/hypergeom_test.py``).

The arguments follow scipy's order: ``k`` successes in ``draws`` draws
without replacement from ``total`` items of which ``good`` are successes.
They must be valid (integers with ``0 <= good, draws <= total``, ``total >
0``); ``k`` outside the support gets probability 0.
"""

from __future__ import annotations

import numpy as np
from scipy import special
# scipy.stats.hypergeom's pmf and cdf kernels (scipy/stats/_discrete_distns).
from scipy.special import _ufuncs


def _arguments(k, total, good, draws):
  """Broadcast arrays, and where ``k`` is in the support (integral ``k``
  between ``max(0, draws - (total - good))`` and ``min(good, draws)``)."""
  k, total, good, draws = np.broadcast_arrays(
      *map(np.asarray, (k, total, good, draws)))
  if np.any((total <= 0) | (good < 0) | (draws < 0) | (good > total)
            | (draws > total)):
    raise ValueError("hypergeometric arguments out of range: need "
                     "0 <= good, draws <= total and total > 0")
  low = np.maximum(draws - (total - good), 0)
  high = np.minimum(good, draws)
  return (k, total, good, draws), low, high


def pmf(k, total, good, draws) -> np.ndarray:
  """``P[X = k]``."""
  (k, total, good, draws), low, high = _arguments(k, total, good, draws)
  inside = (k >= low) & (k <= high) & (np.floor(k) == k)
  out = np.zeros(k.shape)
  if inside.any():
    out[inside] = np.clip(_ufuncs._hypergeom_pmf(  # pylint: disable=protected-access
        k[inside], good[inside], draws[inside], total[inside]), 0, 1)
  return out


def logpmf(k, total, good, draws) -> np.ndarray:
  """``log P[X = k]`` (``-inf`` outside the support)."""
  (k, total, good, draws), low, high = _arguments(k, total, good, draws)
  inside = (k >= low) & (k <= high) & (np.floor(k) == k)
  out = np.full(k.shape, -np.inf)
  if inside.any():
    k, tot, good, n = k[inside], total[inside], good[inside], draws[inside]
    bad = tot - good
    out[inside] = (special.betaln(good + 1, 1) + special.betaln(bad + 1, 1)
                   + special.betaln(tot - n + 1, n + 1)
                   - special.betaln(k + 1, good - k + 1)
                   - special.betaln(n - k + 1, bad - n + k + 1)
                   - special.betaln(tot + 1, 1))
  return out


def cdf(k, total, good, draws) -> np.ndarray:
  """``P[X <= k]``."""
  (k, total, good, draws), low, high = _arguments(k, total, good, draws)
  inside = (k >= low) & (k < high) & np.isfinite(k)
  out = np.where(k >= high, 1.0, 0.0)
  if inside.any():
    out[inside] = np.clip(_ufuncs._hypergeom_cdf(  # pylint: disable=protected-access
        k[inside], good[inside], draws[inside], total[inside]), 0, 1)
  return out
