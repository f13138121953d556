"""The hypergeometric and binomial laws, as ``scipy.stats`` computes them,
without importing ``scipy.stats``.

Importing ``scipy.stats`` costs about 0.5 s, more than the rest of a
command's start; the theory needs only a few functions of two laws (the
label of a fixed-size run, :mod:`triehh.theory.crowding`; the discovery
rates, :mod:`triehh.theory.utility`). These are scipy's own: the same
kernels (Boost's, which ``scipy.special`` holds, and ``betaln``) on the same
arguments, with the same handling of the support, so that every value is
bit for bit scipy's (``tests/theory/distributions_test.py``).

The arguments follow scipy's order. Hypergeometric: ``k`` successes in
``draws`` draws without replacement from ``total`` items of which ``good``
are successes (``scipy.stats.hypergeom(total, good, draws)``); binomial:
``k`` successes in ``trials`` trials of probability ``p``. They must be
valid (integers with ``0 <= good, draws <= total``, ``total > 0``; ``trials
>= 0``, ``0 <= p <= 1``); ``k`` outside the support is handled as scipy
does. Arrays broadcast; a 0-d result is a numpy scalar, as scipy's.
"""

from __future__ import annotations

import numpy as np
from scipy import special
# The kernels scipy.stats.hypergeom and scipy.stats.binom call
# (scipy/stats/_discrete_distns.py).
from scipy.special import _ufuncs  # pylint: disable=protected-access


def _hypergeom(k, total, good, draws):
  """Broadcast arrays and the support ``[low, high]`` of each."""
  k, total, good, draws = np.broadcast_arrays(
      *map(np.asarray, (k, total, good, draws)))
  if np.any((total <= 0) | (good < 0) | (draws < 0) | (good > total)
            | (draws > total)):
    raise ValueError("hypergeometric arguments out of range: need "
                     "0 <= good, draws <= total and total > 0")
  low = np.maximum(draws - (total - good), 0)
  return (k, total, good, draws), low, np.minimum(good, draws)


def _result(out: np.ndarray):
  """``out``, or its value as a numpy scalar if it is 0-d (as scipy)."""
  return out[()] if out.ndim == 0 else out


def _filled(out: np.ndarray, inside: np.ndarray, kernel, *args):
  """``out`` with scipy's kernel, clipped to [0, 1] as scipy clips it, at
  the ``inside`` entries (``args`` broadcast to ``out``'s shape)."""
  if inside.any():
    out[inside] = np.clip(kernel(*(arg[inside] for arg in args)), 0, 1)
  return _result(out)


def hypergeom_pmf(k, total, good, draws):
  """``P[X = k]``."""
  (k, total, good, draws), low, high = _hypergeom(k, total, good, draws)
  inside = (k >= low) & (k <= high) & (np.floor(k) == k)
  return _filled(np.zeros(k.shape), inside, _ufuncs._hypergeom_pmf,  # pylint: disable=protected-access
                 k, good, draws, total)


def hypergeom_logpmf(k, total, good, draws):
  """``log P[X = k]`` (``-inf`` outside the support)."""
  (k, total, good, draws), low, high = _hypergeom(k, total, good, draws)
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
  return _result(out)


def hypergeom_cdf(k, total, good, draws):
  """``P[X <= k]``."""
  (k, total, good, draws), low, high = _hypergeom(k, total, good, draws)
  inside = (k >= low) & (k < high) & np.isfinite(k)
  return _filled(np.where(k >= high, 1.0, 0.0), inside,
                 _ufuncs._hypergeom_cdf, k, good, draws, total)  # pylint: disable=protected-access


def hypergeom_sf(k, total, good, draws):
  """``P[X > k]``."""
  (k, total, good, draws), low, high = _hypergeom(k, total, good, draws)
  inside = (k >= low) & (k < high) & np.isfinite(k)
  return _filled(np.where(k < low, 1.0, 0.0), inside,
                 _ufuncs._hypergeom_sf, k, good, draws, total)  # pylint: disable=protected-access


def binom_sf(k, trials, p):
  """``P[Binomial(trials, p) > k]``."""
  k, trials, p = np.broadcast_arrays(*map(np.asarray, (k, trials, p)))
  if np.any((trials < 0) | (trials != np.floor(trials)) | (p < 0) | (p > 1)):
    raise ValueError("binomial arguments out of range: need an integer "
                     "trials >= 0 and 0 <= p <= 1")
  inside = (k >= 0) & (k < trials) & np.isfinite(k)
  return _filled(np.where(k < 0, 1.0, 0.0), inside, _ufuncs._binom_sf,  # pylint: disable=protected-access
                 np.floor(k), trials, p)
