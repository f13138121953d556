"""The reverse direction of Theorem 1: populations that crowd a prefix out.

Theorem 1's proof bounds one direction, P[M(D) in S] <= e^eps P[M(D') in S]
+ delta, with D holding the user's word w and D' the empty word in its
place. Under fixed-size sampling the user with the empty word still takes a
slot of the batch, so D' can crowd a prefix out where D cannot, and the
other direction, P[M(D') in S] <= e^eps P[M(D) in S] + delta, fails for
some parameters inside the theorem's range (``docs/privacy.md``).

This module computes, exactly, the reverse divergence of two families of
neighbouring populations, a *lower bound* on the reverse delta of any run
with the same (n, m, theta, L) (each family is one pair of populations and
one event):

* ``"crowding"``: k users and the differing user u hold ``w = "a" * C``
  (``L = C + 1`` levels), the other ``n - k - 1`` hold the empty word; in D'
  u holds the empty word too. Every level samples m users and passes w's
  next prefix iff at least theta of them hold w (hypergeometric), so
  ``P[w found] = s^L``; S = "w is not found".
* ``"two groups"`` (only when ``m <= 2 theta - 1``): every user holds ``"a"``
  or ``"b"`` (u holds ``"a"``); in D' u holds the empty word. S = "nothing
  passes the first level": impossible in D when ``m = 2 theta - 1`` (a batch
  holds theta of one group), possible in D' (theta - 1 of each and u).

:func:`reverse_lower_bound` maximises over k (and over the split) on a
window of the sizes where the divergence can be large; it is exact for the
pairs it examines and is not an upper bound on anything.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from triehh.theory import distributions

# Most population sizes examined per family (the window of k).
_MAX_POINTS = 50_000


@dataclasses.dataclass(frozen=True)
class ReverseFailure:
  """The worst pair found: ``P[M(D') in S] - e^eps P[M(D) in S]``.

  Attributes:
    divergence: that difference (a lower bound on the reverse delta).
    family: ``"crowding"`` or ``"two groups"``.
    holders: users of D holding the differing user's word, the user
      included (``"two groups"``: the size of its group).
    p_d, p_d_prime: ``P[M(D) in S]`` and ``P[M(D') in S]``.
    event: S in words.
  """

  divergence: float
  family: str
  holders: int
  p_d: float
  p_d_prime: float
  event: str

  def describe(self, n: int) -> str:
    """The pair and the event, in words."""
    if self.family == "crowding":
      pair = (f"D = {self.holders} users holding a word and {n - self.holders}"
              f" the empty word; D' = one of those {self.holders} given the "
              "empty word")
    else:
      pair = (f"D = {self.holders} users holding 'a' and "
              f"{n - self.holders} holding 'b'; D' = one 'a' user given the "
              "empty word")
    return (f"{pair}: P[{self.event}] = {self.p_d_prime:.3g} under D' against"
            f" {self.p_d:.3g} under D")


def _crowding(n: int, m: int, theta: int, levels: int,
              epsilon: float) -> ReverseFailure | None:
  # j = n - k - 1 users hold the empty word in D (j + 1 in D'). A level fails
  # only if at least m - theta + 1 sampled users are empty, so j >= m - theta.
  lo = max(0, m - theta)
  hi = min(n - theta, lo + 4 * m + 200, lo + _MAX_POINTS)
  if hi < lo:
    return None
  empty = np.arange(lo, hi + 1)
  holders_d = n - empty  # u included
  # P[fewer than theta holders in the batch] for n - lo, n - lo - 1, ...
  # holders: D' has one holder fewer, the next entry.
  fail = hypergeom_cdf_descending(theta - 1, n, n - lo, hi - lo + 2, m)
  fail_d, fail_d_prime = fail[:-1], fail[1:]
  with np.errstate(divide="ignore"):  # a level that always fails: log 0
    miss_d = -np.expm1(levels * np.log1p(-np.minimum(fail_d, 1.0)))
    miss_d_prime = -np.expm1(levels * np.log1p(-np.minimum(fail_d_prime,
                                                            1.0)))
  return _worst("crowding", holders_d, miss_d, miss_d_prime, epsilon,
                "the word is not found")


def hypergeom_cdf_descending(x: int, n: int, first: int, count: int,
                             m: int) -> np.ndarray:
  """``P[H <= x]`` for H ~ Hypergeometric(n, K, m), K = first, first - 1,
  ..., first - count + 1 (holders among n users, m drawn).

  scipy's ``hypergeom.cdf`` costs about 0.3 ms per K at n = 10^5; here one
  exact log-pmf per term i = 0..x starts a running sum of the logs of
  ``pmf(i; K - 1) / pmf(i; K) = (K - i) / K * (n - K + 1) / (n - K + 1 - m
  + i)``, so each further K costs O(x) arithmetic. The sums of up to
  ``_MAX_POINTS`` logs keep a relative error near 1e-12 (checked against
  scipy in ``tests/theory/crowding_test.py``).
  """
  holders = first - np.arange(count)
  if x >= m or count <= 2 or x < 0:
    return distributions.hypergeom_cdf(x, n, holders, m)
  i = np.arange(x + 1)
  # pmf(i; K) > 0 iff the m - i others fit among the n - K non-holders (and
  # i <= K): the first row where term i can be drawn.
  start = np.clip(m - i - (n - first), 0, count - 1)
  start = np.where(holders[start] >= i, start, count)  # never (K < i)
  log_pmf = np.full((count, x + 1), -np.inf)
  live = start < count
  if live.any():
    k_prev = holders[:-1, None].astype(np.float64)  # K of the row before
    with np.errstate(divide="ignore", invalid="ignore"):
      steps = (np.log((k_prev - i) / k_prev)
               + np.log((n - k_prev + 1) / (n - k_prev + 1 - m + i)))
    rows = np.arange(1, count)[:, None]
    steps = np.where(rows > start[None, :], steps, 0.0)
    walked = np.vstack([np.zeros((1, x + 1)), np.cumsum(steps, axis=0)])
    cols = np.flatnonzero(live)
    origin = distributions.hypergeom_logpmf(i[cols], n, holders[start[cols]],
                                            m)
    log_pmf[:, cols] = origin + walked[:, cols] - walked[start[cols], cols]
    log_pmf[np.arange(count)[:, None] < start[None, :]] = -np.inf
  return np.minimum(np.exp(log_pmf).sum(axis=1), 1.0)


def _worst(family: str, holders: np.ndarray, p_d: np.ndarray,
           p_d_prime: np.ndarray, epsilon: float,
           event: str) -> ReverseFailure:
  """The pair of a family with the largest ``P_D'(S) - e^eps P_D(S)``."""
  gap = p_d_prime - math.exp(epsilon) * p_d
  best = int(np.argmax(gap))
  return ReverseFailure(
      divergence=float(gap[best]), family=family,
      holders=int(holders[best]), p_d=float(p_d[best]),
      p_d_prime=float(p_d_prime[best]), event=event)


def _two_groups(n: int, m: int, theta: int,
                epsilon: float) -> ReverseFailure | None:
  if m > 2 * theta - 1 or n < 2 * theta:
    return None
  size_a = np.arange(theta, n - theta + 1)  # u's group, u included
  if size_a.size > _MAX_POINTS:
    size_a = size_a[:: max(1, size_a.size // _MAX_POINTS)]
  # D: a ~ Hypergeometric(n, size_a, m); nothing passes iff a < theta and
  # m - a < theta.
  a = np.arange(max(0, m - theta + 1), min(theta - 1, m) + 1)
  p_d = np.zeros(size_a.size)
  for count in a:
    p_d += distributions.hypergeom_pmf(count, n, size_a, m)
  # D': u is empty. Nothing passes iff the other a-users sampled (a') and
  # the b-users sampled (b) are both below theta, with a' + b = m - e and e
  # = 1 if u is sampled: P[e = 1] = m / n, the rest a uniform (m - e)-subset
  # of the other n - 1 users.
  p_dp = np.zeros(size_a.size)
  for sampled_u, weight in ((1, m / n), (0, 1 - m / n)):
    size = m - sampled_u
    for count in range(max(0, size - theta + 1), min(theta - 1, size) + 1):
      p_dp += weight * distributions.hypergeom_pmf(count, n - 1, size_a - 1,
                                                   size)
  return _worst("two groups", size_a, p_d, p_dp, epsilon,
                "nothing passes the first level")


@functools.lru_cache(maxsize=1024)
def reverse_lower_bound(n: int, batch_size: int, theta: int, levels: int,
                        epsilon: float) -> ReverseFailure:
  """The largest reverse divergence at ``epsilon`` over the two families.

  A lower bound on the delta of the direction Theorem 1 does not prove, for
  fixed-size sampling of ``batch_size`` of ``n`` users, threshold ``theta``
  and ``levels`` trie levels.
  """
  found = [f for f in (_crowding(n, batch_size, theta, levels, epsilon),
                       _two_groups(n, batch_size, theta, epsilon))
           if f is not None]
  if not found:
    return ReverseFailure(0.0, "crowding", n, 0.0, 0.0,
                          "the word is not found")
  return max(found, key=lambda f: f.divergence)
