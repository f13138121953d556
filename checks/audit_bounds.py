"""The statistics of the privacy audit: laws of w's path and their losses.

:mod:`checks.audit` follows the target word's path in the trie;
these are the computations it makes on it, free of any population or run:
exact hypergeometric tails (the vote count of a prefix in a round of
fixed-size sampling), the law of the depth the path reaches, the epsilon
one event or a pair of laws shows at a given delta (the hockey-stick
divergence), the audited events, and one-sided Clopper-Pearson bounds on a
frequency.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy import stats


def hypergeom_tail(size: int, holders: np.ndarray, batch: int,
                   votes: int) -> tuple[np.ndarray, np.ndarray]:
  """``(P[X >= votes], P[X < votes])`` for X ~ Hypergeometric.

  X counts the holders among ``batch`` users drawn without replacement from
  ``size`` users of which ``holders`` (an array) hold the word. Summed in
  log space term by term, so that both tails keep their relative precision.
  """
  holders = np.asarray(holders, dtype=np.int64)
  if votes <= 0:
    return np.ones(holders.shape), np.zeros(holders.shape)
  x = np.arange(votes + _TAIL_TERMS)[None, :]
  k = holders[:, None]
  valid = (x <= k) & (x <= batch) & (batch - x <= size - k)
  with np.errstate(invalid="ignore"):
    log_pmf = (_log_choose(k, x) + _log_choose(size - k, batch - x)
               - _log_choose(size, batch))
  pmf = np.where(valid, np.exp(np.where(valid, log_pmf, 0.0)), 0.0)
  below = pmf[:, :votes].sum(axis=1)
  above = pmf[:, votes:].sum(axis=1)
  # Where the lower tail is small the upper tail may reach past the summed
  # terms: take it as the complement there.
  above = np.where(below < 0.5, 1.0 - below, above)
  return above, np.where(below < 0.5, below, 1.0 - above)


_TAIL_TERMS = 120


def _log_choose(a, b):
  return special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(
      a - b + 1)


def depth_distribution(q: np.ndarray, r: np.ndarray,
                       levels: int) -> np.ndarray:
  """``[len(q), levels + 1]``: P(w's path reaches exactly depth d).

  ``q`` is the per-round pass probability and ``r = 1 - q``; level i is
  reached iff the first i rounds all pass (rounds are independent).
  """
  q = np.asarray(q, dtype=float)[:, None]
  r = np.asarray(r, dtype=float)[:, None]
  d = np.arange(levels + 1)[None, :]
  return np.where(d < levels, q**d * r, q**levels)


def event_epsilon(p: np.ndarray, p_prime: np.ndarray,
                  delta: float) -> np.ndarray:
  """Smallest eps >= 0 with ``p <= e^eps p' + delta`` (inf if none)."""
  p = np.asarray(p, dtype=float)
  p_prime = np.asarray(p_prime, dtype=float)
  with np.errstate(divide="ignore", invalid="ignore"):
    eps = np.log((p - delta) / p_prime)
  eps = np.where(p <= delta, 0.0, eps)
  eps = np.where((p > delta) & (p_prime <= 0), math.inf, eps)
  return np.maximum(eps, 0.0)


def hockey_epsilon(p: np.ndarray, p_prime: np.ndarray,
                   delta: float) -> np.ndarray:
  """Smallest eps >= 0 with ``P(S) <= e^eps P'(S) + delta`` for every S.

  ``p``, ``p_prime``: ``[rows, outcomes]`` distributions; one eps per row
  (the optimal event is the set of outcomes with ``p > e^eps p'``).
  """
  p = np.atleast_2d(np.asarray(p, dtype=float))
  p_prime = np.atleast_2d(np.asarray(p_prime, dtype=float))

  def excess(eps):
    return np.maximum(p - np.exp(eps)[:, None] * p_prime, 0).sum(axis=1)

  rows = p.shape[0]
  impossible = np.where(p_prime <= 0, p, 0).sum(axis=1) > delta
  low, high = np.zeros(rows), np.full(rows, 60.0)
  for _ in range(80):
    mid = (low + high) / 2
    ok = excess(mid) <= delta
    high = np.where(ok, mid, high)
    low = np.where(ok, low, mid)
  eps = np.where(excess(np.zeros(rows)) <= delta, 0.0, high)
  return np.where(impossible, math.inf, eps)


def path_events(levels: int) -> list[tuple[str, np.ndarray]]:
  """The audited events as masks over w's depth 0..levels."""
  depths = np.arange(levels + 1)
  events = []
  for i in range(1, levels + 1):
    name = "w discovered" if i == levels else f"p_{i}(w) in trie"
    events.append((name, depths >= i))
    events.append(("not " + name, depths < i))
  return events


def optimal_event(p: np.ndarray, p_prime: np.ndarray,
                  eps: float) -> np.ndarray:
  """The outcomes with ``p > e^eps p'``: the event that shows ``eps``."""
  if math.isinf(eps):
    return (p > 0) & (p_prime <= 0)
  return p > math.exp(eps) * p_prime


def describe_depths(mask: np.ndarray, levels: int) -> str:
  """An event over w's depth, in words."""
  depths = np.flatnonzero(mask)
  if depths.size == 0:
    return "empty"
  return ("w's path reaches depth in {" + ",".join(str(d) for d in depths)
          + f"}} (of {levels})")


def clopper_pearson(successes: np.ndarray, trials: int,
                    alpha: float) -> tuple[np.ndarray, np.ndarray]:
  """One-sided ``1 - alpha`` Clopper-Pearson lower and upper bounds."""
  x = np.asarray(successes, dtype=float)
  with np.errstate(invalid="ignore"):
    lower = np.where(x > 0, stats.beta.ppf(alpha, x, trials - x + 1), 0.0)
    upper = np.where(x < trials, stats.beta.ppf(1 - alpha, x + 1, trials - x),
                     1.0)
  return lower, upper


def log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
  """``max(ln(num / den), 0)``: 0 where ``num <= 0``, inf where ``den <= 0``."""
  num, den = np.asarray(num, float), np.asarray(den, float)
  with np.errstate(divide="ignore", invalid="ignore"):
    out = np.log(num / den)
  out = np.where(num <= 0, 0.0, out)
  return np.maximum(np.where((num > 0) & (den <= 0), math.inf, out), 0.0)
