"""Privacy of Poisson-sampled TrieHH: a two-sided numerical accountant.

Covers ``ADD_OR_REMOVE_ONE`` and ``REPLACE_SPECIAL`` (one level's dominating
pair, composed over L levels) and ``REPLACE_ONE`` (its swap product); the
calibration that searches it is :mod:`triehh.theory.poisson_calibration`.

The mechanism. Every round each of the n users takes part independently with
probability ``rate`` (q); a participant whose word's prefix is on the
frontier votes for its next symbol, and every extension with at least theta
votes joins the trie, for at most L levels. Neighbouring populations differ
by one user u, present in D and absent in D' (add/remove adjacency). A user
holding the empty word never votes, so the paper's adjacency (u's word w in
D, the empty word in D') is the same pair of output laws.

One level (the proof is written out step by step in ``docs/privacy.md``).
Fix the trie before the level. The other users take part independently of
u, and u votes for at most one extension p (the next prefix of its word, if
its current prefix is on the frontier; else the level's law is the same in
D and D'). Every other extension's count is the same in D and D'. Given who
else takes part, let X be the number of other participants voting for p:
in D', p passes iff X >= theta; in D, iff X + B >= theta with
B ~ Bernoulli(q) independent. With one word per user, X ~ Binomial(k, q)
for the k other holders of p and is independent of the other extensions'
counts, so the level's pair of laws is, up to a common factor, the pair of
two-point laws "p passes / fails" (their privacy losses are the same):

    P_k = (P[X + B >= theta], P[X + B < theta])      (D)
    Q_k = (P[X >= theta],     P[X < theta])          (D')

The envelope. The trade-off curve of (P_k, Q_k) is the polyline from
(0, 1) through v_k = (P_k(fail), Q_k(pass)) to (1, 0). As k grows, v_k moves
left and down, and the slopes between consecutive v_k are those of one pair
(P, Q) with atoms, for k = theta - 1, theta, ...:

    P-mass  q * Bin(theta - 1; k + 1, q),   Q-mass  q * Bin(theta - 1; k, q),
    privacy loss  ln(P / Q) = ln(1 - q) + ln((k + 1) / (k + 2 - theta)),

plus an atom of P-mass q^theta where Q has none (u alone with theta - 1
others). The losses decrease in k, so this polyline is convex: it is the
trade-off curve of (P, Q) and passes through every v_k, so (P, Q) dominates
every (P_k, Q_k) in both directions (a dominating pair, Zhu, Dong and Wang,
AISTATS 2022). The reverse loss is at most ln(1 / (1 - q)).

Several words per user. Each participant picks its word by local frequency,
independently of taking part; given everybody's picks, the level is one of
the pairs above (or the identity), so its law is a mixture of pairs that
(P, Q) dominates, and so is dominated by (P, Q) (the hockey-stick
divergence is jointly convex). This holds for a pick per round and a pick
per run alike: no L * delta_1 penalty.

Replace-one (a user's word w replaced by another word w'). Fix the trie
before the level. If w and w' share their length-i prefix the level's law is
the same in D and D'. Otherwise u votes (when sampled, with probability q,
one coin in both populations) for p in D and for p' != p in D' (or for
only one of them, where the other's parent is not on the frontier). With
one word per user the other voters of p and of p' are disjoint sets of
users, so their counts X and Y are independent of each other and of every
other extension's count, and the level's pair of laws is, up to a common
factor, ``(P_k x Q'_j, Q_k x P'_j)``: p's pair in the remove direction
times p''s pair in the add direction. (P, Q) dominates the first factor and
(Q, P) the second; tensor products preserve domination (Dong, Roth and Su,
2022, Lemma C.3), so ``(P x Q, Q x P)`` dominates the level, in both
directions (the pair is symmetric). Its privacy loss is the sum of a
forward and an independent reverse loss: ``pld.swap_product``. Where only
one of p, p' is voted for, the level is one factor alone, which the
product dominates too (dropping a factor is post-processing). Several
words per user: given both picks, the level is such a pair; the picks of u
in D and in D' are independent of everything else, so the level is a
mixture with the product weights of pairs the product dominates, hence
dominated (joint convexity), a pick per round or per run alike.
``tests/checks/exact_validation_test.py`` checks it against the exact
output law of tiny populations.

Composition. The L levels are adaptive (each sees the trie so far) and each
is dominated by the same pair, so the run is dominated by the L-fold
product of (P, Q) (ibid.); the stopping rule is a function of the published
trie. ``delta(epsilon)`` is the larger of the two directions' hockey-stick
divergences of the L-fold product.

Numerics. Privacy losses are rounded up to a grid of ``discretization``
(pessimistic) in each direction separately (:mod:`triehh.theory.pld`); the
masses of all k in one grid cell are summed exactly (a telescoping sum of
binomial tails, or the terms themselves), so no k is left out; where
scipy's binomial tails are NaN (huge trial counts), they are summed term by
term (:func:`_settle_nan`). :func:`dp_accounting_pld` builds the same pair
as a dp_accounting ``PrivacyLossDistribution`` for cross-checks.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from triehh.core import memory
from triehh.core import validation
from triehh.theory import limits
from triehh.theory import pld
from triehh.theory.adjacency import Adjacency

DEFAULT_DISCRETIZATION = 1e-3
# The label of a run's accounting; the relations it covers are named apart
# (RunParams.adjacency). Records written before the adjacency was named say
# "Poisson accountant (two-sided, add/remove)" for the same accountant.
ACCOUNTING = "Poisson accountant (two-sided)"
REPLACE_ACCOUNTING = "Poisson accountant (two-sided, replace-one)"
# Grid cells holding at most this many k sum their terms directly.
_DIRECT_TERMS = 64
# The relations the accountant covers (REPLACE_SPECIAL and ADD_OR_REMOVE_ONE
# are the same pair of laws: the empty word never votes).
ADJACENCIES = (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_ONE,
               Adjacency.REPLACE_SPECIAL)


def _loss(k: np.ndarray, rate: float, theta: int) -> np.ndarray:
  """``ln(1 - q) + ln((k + 1) / (k + 2 - theta))``: the loss of atom k
  (``inf`` below ``theta - 1``, where there is no atom)."""
  k = np.asarray(k, dtype=float)
  with np.errstate(divide="ignore", invalid="ignore"):
    loss = math.log1p(-rate) + np.log1p((theta - 1) / (k + 2 - theta))
  return np.where(k >= theta - 1, loss, np.inf)


def _first_at_most(t: np.ndarray, rate: float, theta: int) -> np.ndarray:
  """Per threshold t, the least k >= theta - 1 with loss(k) <= t (a huge
  number where there is none: losses exceed ln(1 - q))."""
  none = np.iinfo(np.int64).max // 4
  ratio = np.exp(t - math.log1p(-rate))  # (k + 1) / (k + 2 - theta) <= ratio
  with np.errstate(divide="ignore", invalid="ignore"):
    approx = np.where(ratio > 1.0, (ratio * (theta - 2) + 1.0) / (ratio - 1.0),
                      np.inf)
  approx = np.minimum(approx, float(none))
  k = np.maximum(theta - 1, np.ceil(approx)).astype(np.int64)
  # Fix rounding: make k the least with loss(k) <= t.
  for _ in range(3):
    finite = k < none
    high = finite & (_loss(k.astype(float), rate, theta) > t)
    k = np.where(high, k + 1, k)
    back = finite & (k > theta - 1) & (
        _loss((k - 1).astype(float), rate, theta) <= t)
    k = np.where(back, k - 1, k)
  return k


def _binom_cdf(x: int, trials: np.ndarray, rate: float) -> np.ndarray:
  """P[Binomial(trials, rate) <= x] (1 where trials <= x)."""
  trials = np.asarray(trials, dtype=np.int64)
  return _settle_nan(np.where(trials <= x, 1.0, special.bdtr(
      x, np.maximum(trials, x + 1), rate)), x, trials, rate, lower_tail=True)


def _binom_sf(x: int, trials: np.ndarray, rate: float) -> np.ndarray:
  """P[Binomial(trials, rate) > x] (0 where trials <= x)."""
  trials = np.asarray(trials, dtype=np.int64)
  return _settle_nan(np.where(trials <= x, 0.0, special.bdtrc(
      x, np.maximum(trials, x + 1), rate)), x, trials, rate, lower_tail=False)


# Terms past x that the upper tail sums, beyond 2 x (see _tail_by_terms).
_UPPER_TERMS = 100


def _settle_nan(tail: np.ndarray, x: int, trials: np.ndarray, rate: float,
                *, lower_tail: bool) -> np.ndarray:
  """``tail`` with scipy's NaNs recomputed term by term.

  scipy's ``bdtr`` and ``bdtrc`` return NaN at some huge trial counts (seen
  from 1.7e9 trials, at 2.6e9 and 1e12 but not at 1e10), which the cells
  next to the lowest loss reach when a grid line falls within about 1e-8 of
  ln(1 - q), and tiny rates reach too. A NaN mass would leave a direction
  out of delta; :func:`_tail_by_terms` gives those entries instead.
  """
  nan = np.isnan(tail)
  if not nan.any():
    return tail
  tail = np.array(tail, dtype=float)
  tail[nan] = _tail_by_terms(
      x, np.broadcast_to(trials, tail.shape)[nan].astype(float), rate,
      lower_tail=lower_tail)
  return tail


def _tail_by_terms(x: int, trials: np.ndarray, rate: float, *,
                   lower_tail: bool) -> np.ndarray:
  """``P[Binomial(trials, rate) <= x]`` (or ``> x``) as a sum of its terms.

  Each term is ``exp(log(n! / (n - i)!) - log(i!) + i log q + (n - i)
  log(1 - q))``, the falling factorial summed as logs (exact for any n, where
  log-gamma differences of huge n are not): positive terms, so the sum is
  accurate to about 1e-12 relative. The upper tail is ``1 - lower`` where
  the lower is at most 1/2, else the sum of the terms past x: the median is
  then at most x, so the mean is at most x + 1 (they differ by less than
  ln 2) and past ``2 (x + 1) / (1 - q)`` each term is at most half the one
  before; the sum stops ``_UPPER_TERMS`` terms after ``2 x``, and raises if
  the last term still counts.
  """
  n = np.asarray(trials, dtype=float)[:, None]
  _check_terms_fit(x, n.shape[0], lower_tail)
  log_q, log_not_q = math.log(rate), math.log1p(-rate)

  def terms(first: int, last: int) -> np.ndarray:  # i = first..last
    i = np.arange(first, last + 1, dtype=float)[None, :]
    log_fall = np.cumsum(np.log(np.maximum(n - np.arange(last)[None, :],
                                           1.0)), axis=1)
    log_fall = np.concatenate([np.zeros((n.shape[0], 1)), log_fall],
                              axis=1)[:, first:]
    with np.errstate(invalid="ignore"):
      log_terms = (log_fall - special.gammaln(i + 1) + i * log_q
                   + (n - i) * log_not_q)
    return np.where(i <= n, np.exp(log_terms), 0.0)

  lower = terms(0, x).sum(axis=1)
  if lower_tail:
    return np.minimum(lower, 1.0)
  upper = 1.0 - lower
  high = lower > 0.5
  if high.any():
    last = 2 * x + _UPPER_TERMS
    past = terms(x + 1, last)[high]
    sums = past.sum(axis=1)
    if np.any(past[:, -1] > 1e-20 * sums):
      raise FloatingPointError(
          f"the binomial tail above x={x} at rate={rate} does not converge "
          f"within {last} terms")
    upper[high] = sums
  return upper


# Peak bytes of _tail_by_terms per term of a tail (measured: 42 to 49).
_BYTES_PER_TERM = 56


def _check_terms_fit(x: int, rows: int, lower_tail: bool) -> None:
  """InsufficientMemoryError naming theta (``x + 1``) when summing ``rows``
  tails term by term would not fit."""
  terms = rows * (x + 1 if lower_tail else 2 * x + _UPPER_TERMS + 1)
  memory.check_fits(
      f"theta={x + 1:,} ({rows:,} binomial tails summed term by term, "
      f"{terms:,} terms)", _BYTES_PER_TERM * terms, "use a smaller theta")


def _binom_pmf(x: int, trials: np.ndarray, rate: float) -> np.ndarray:
  """P[Binomial(trials, rate) = x] (trials >= x), from log-gamma."""
  trials = np.asarray(trials, dtype=float)
  return np.exp(special.gammaln(trials + 1) - special.gammaln(x + 1)
                - special.gammaln(trials - x + 1) + x * math.log(rate)
                + (trials - x) * math.log1p(-rate))


def _range_masses(starts: np.ndarray, stops: np.ndarray, rate: float,
                  theta: int, shift: int) -> np.ndarray:
  """``sum_{k in [start, stop)} q * Bin(theta - 1; k + shift, q)`` per range.

  ``shift`` is 1 for the P-masses, 0 for the Q-masses. ``stop`` may be
  "infinite" (a huge number). Short ranges add their terms; long ones use
  the telescoping identity (the sum is a difference of binomial tails), on
  the side where the tails are small.
  """
  masses = np.zeros(starts.size)
  short = (stops - starts) <= _DIRECT_TERMS
  if short.any():
    s, e = starts[short], stops[short]
    offsets = np.arange(_DIRECT_TERMS)
    k = s[:, None] + offsets[None, :]
    valid = k < e[:, None]
    # Only the valid terms are computed (a few in a hundred, as most cells
    # hold one k); the zeros keep each row's sum in the same order.
    terms = np.zeros(k.shape)
    terms[valid] = rate * _binom_pmf(theta - 1, k[valid] + shift, rate)
    masses[short] = terms.sum(axis=1)
  long = ~short
  if long.any():
    s, e = starts[long], stops[long]
    # P: sum = cdf(theta-1; s+1) - cdf(theta-1; e+1); Q: sf(e) - sf(s),
    # i.e. cdf(theta-1; s) - cdf(theta-1; e). Both: c(s + shift) - c(e + shift)
    # with c(t) = P[Bin(t, q) <= theta - 1], c(inf) = 0.
    huge = e >= np.iinfo(np.int64).max // 8
    e_trials = np.where(huge, s, e) + shift
    s_trials = s + shift
    lo_cdf = _binom_cdf(theta - 1, s_trials, rate)
    hi_cdf = np.where(huge, 0.0, _binom_cdf(theta - 1, e_trials, rate))
    by_sf = (_binom_sf(theta - 1, e_trials, rate)
             - _binom_sf(theta - 1, s_trials, rate))
    use_cdf = huge | (lo_cdf <= 0.5)
    masses[long] = np.where(use_cdf, lo_cdf - hi_cdf, by_sf)
  return np.maximum(masses, 0.0)


def level_loss(rate: float, theta: int,
               discretization: float = DEFAULT_DISCRETIZATION, *,
               adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE
               ) -> pld.TwoSided:
  """The dominating pair of one level, discretised pessimistically (for
  ``REPLACE_ONE``, its swap product)."""
  return _level_loss(check_rate(rate), validation.check_int("theta", theta),
                     check_discretization(discretization),
                     replaces(adjacency))


def replaces(adjacency) -> bool:
  """Whether ``adjacency`` (an :class:`Adjacency` or its name) is
  ``REPLACE_ONE``, the one relation with its own pair of laws."""
  return Adjacency.of(adjacency) is Adjacency.REPLACE_ONE


@functools.lru_cache(maxsize=4096)
def _level_loss(rate: float, theta: int, discretization: float,
                replace: bool = False) -> pld.TwoSided:
  """:func:`level_loss` on checked arguments (cached: the searches ask for
  the same levels again)."""
  if replace:
    return pld.swap_product(_level_loss(rate, theta, discretization))
  _check_level_size(theta, discretization)
  top = float(_loss(np.array([theta - 1.0]), rate, theta)[0])
  bottom = math.log1p(-rate)
  # Forward: P-masses at loss rounded up. Cell i holds losses in
  # ((i - 1) d, i d]: k in [first(loss <= i d), first(loss <= (i - 1) d)).
  # Thresholds are nudged down by 1e-12, which can only move a loss up a cell.
  d = discretization
  hi_cell = math.ceil(top / d) + 1
  lo_cell = math.floor(bottom / d)
  cells = np.arange(lo_cell, hi_cell + 1)
  starts = _first_at_most(cells * d - 1e-12, rate, theta)
  stops = np.r_[_first_at_most(cells[:1] * d - d - 1e-12, rate, theta),
                starts[:-1]]
  forward = _range_masses(starts, stops, rate, theta, shift=1)
  # Reverse: Q-masses at -loss rounded up. Cell j holds -loss in
  # ((j - 1) d, j d], i.e. loss in [-j d, -(j - 1) d).
  # k with loss >= -j d: k < first(loss < -j d), taken as first(loss <=
  # -j d + 1e-12), which can only move a k to a higher cell.
  r_cells = np.arange(math.floor(-top / d), math.ceil(-bottom / d) + 2)
  r_stops = _first_at_most(-r_cells * d + 1e-12, rate, theta)
  r_starts = np.r_[theta - 1, r_stops[:-1]]
  reverse = _range_masses(r_starts, r_stops, rate, theta, shift=0)
  huge = np.iinfo(np.int64).max // 8
  if starts[-1] != theta - 1 or stops[0] < huge or r_stops[-1] < huge:
    raise AssertionError("the grid cells do not cover every k")  # a bug
  return pld.TwoSided(
      forward=pld.LossDistribution(d, int(lo_cell), forward, rate**theta),
      reverse=pld.LossDistribution(d, int(r_cells[0]), reverse, 0.0))


def run_loss(rate: float, theta: int, num_levels: int,
             discretization: float = DEFAULT_DISCRETIZATION,
             budget: float = 0.0, *,
             adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE
             ) -> pld.TwoSided:
  """The privacy loss of a run of ``num_levels`` levels (both directions)
  for neighbours under ``adjacency``.

  ``budget`` > 0 trims each level's distribution first
  (:meth:`pld.LossDistribution.trimmed`, pessimistic): the run's delta can
  grow by at most ``num_levels * budget``, and the composition is much
  faster.
  """
  run = _checked_run(rate, theta, num_levels)
  discretization = check_discretization(discretization)
  replace = replaces(adjacency)
  check_composition(*run, discretization, budget, replace)
  return _run_loss(*run, discretization, budget, replace)


def composed_loss(rate: float, theta: int, num_levels: int,
                  discretization: float, budget: float,
                  replace: bool) -> pld.TwoSided:
  """:func:`run_loss` on checked arguments, its time not estimated: for
  the calibration, whose own check bounds it
  (``poisson_calibration.check_calibration_time``)."""
  return _run_loss(rate, theta, num_levels, discretization, budget, replace)


def _checked_run(rate: float, theta: int,
                 num_levels: int) -> tuple[float, int, int]:
  """A run's rate in (0, 1), theta and levels (whole numbers >= 1), or a
  ValueError/TypeError naming the first that is not."""
  return (check_rate(rate), validation.check_whole("theta", theta),
          validation.check_whole("num_levels (L, trie levels)", num_levels))


@functools.lru_cache(maxsize=4096)
def _run_loss(rate: float, theta: int, num_levels: int, discretization: float,
              budget: float, replace: bool = False) -> pld.TwoSided:
  """:func:`run_loss` on checked arguments (cached).

  Replace-one: the swap product of the level's pair with each factor
  trimmed by half the budget (the product's delta grows by at most the sum),
  composed factor by factor (:func:`pld.swap_compose`); symmetric, so one
  composition serves both directions."""
  one = _level_loss(rate, theta, discretization)
  if replace:
    both = pld.swap_compose(pld.TwoSided(one.forward.trimmed(budget / 2),
                                         one.reverse.trimmed(budget / 2)),
                            num_levels)
    return pld.TwoSided(both, both)
  forward = one.forward.trimmed(budget).compose(num_levels)
  return pld.TwoSided(forward, one.reverse.trimmed(budget).compose(num_levels))


def run_delta(rate: float, theta: int, num_levels: int,
              discretization: float, budget: float, epsilon: float,
              replace: bool = False) -> float:
  """``run_loss(...).delta(epsilon)``, the same float, for the searches.

  The reverse direction's losses are at most about ln(1 / (1 - q)) a level:
  where even its largest composed loss is at most ``epsilon``, no entry is
  above it and its delta is its infinity mass, which needs no composition
  (the largest loss and the mass computed as ``compose`` and ``delta`` do).
  That halves an evaluation for the larger epsilons (4 at q = 0.3 over 10
  levels, say). Unchecked: the calibration's searches call it with checked
  arguments.
  """
  if replace:
    return _run_loss(rate, theta, num_levels, discretization, budget,
                     True).forward.delta(epsilon)
  one = _level_loss(rate, theta, discretization)
  reverse = one.reverse.trimmed(budget)
  if reverse.composed_largest_loss(num_levels) > epsilon:
    return _run_loss(rate, theta, num_levels, discretization, budget).delta(
        epsilon)
  forward = one.forward.trimmed(budget).compose(num_levels)
  return pld.larger(forward.delta(epsilon),
                 reverse.composed_infinity(num_levels), epsilon)


def trimming_budget(delta: float, num_levels: int) -> float:
  """A trimming budget that can move delta by at most 1e-4 of ``delta``."""
  return 1e-4 * delta / num_levels


def delta_for_epsilon(rate: float, theta: int, num_levels: int,
                      epsilon: float, *,
                      discretization: float = DEFAULT_DISCRETIZATION,
                      adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE
                      ) -> float:
  """delta of Poisson-sampled TrieHH at ``epsilon``, both directions, for
  neighbours under ``adjacency``."""
  run = _checked_run(rate, theta, num_levels)
  epsilon = validation.check_real("epsilon", epsilon)
  if not 0.0 <= epsilon < math.inf:  # also refuses nan
    raise ValueError(f"epsilon must be a finite number >= 0, got "
                     f"epsilon={epsilon}")
  discretization = check_discretization(discretization)
  replace = replaces(adjacency)
  check_composition(*run, discretization, 0.0, replace)
  return _run_loss(*run, discretization, 0.0, replace).delta(epsilon)


def epsilon_for_delta(rate: float, theta: int, num_levels: int,
                      delta: float, *,
                      discretization: float = DEFAULT_DISCRETIZATION,
                      adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE
                      ) -> float:
  """The smallest epsilon at which the run is (epsilon, delta)-DP, both
  directions, for neighbours under ``adjacency`` (``inf`` if none)."""
  rate, theta, num_levels = _checked_run(rate, theta, num_levels)
  delta = limits.check_delta("delta", delta)
  discretization = check_discretization(discretization)
  budget, replace = trimming_budget(delta, num_levels), replaces(adjacency)
  check_composition(rate, theta, num_levels, discretization, budget, replace)
  return _run_loss(rate, theta, num_levels, discretization, budget,
                   replace).epsilon(delta)


def dominating_pair(rate: float, theta: int,
                    num_atoms: int) -> tuple[np.ndarray, np.ndarray]:
  """The first ``num_atoms`` atoms of the dominating pair (P, Q), plus the
  atom where Q has no mass and one atom for the rest of each law.

  For tests and cross-checks: ``P`` and ``Q`` are probability vectors over
  the same outcomes; the last atom lumps every k >= theta - 1 + num_atoms.
  """
  rate = check_rate(rate)
  k = np.arange(theta - 1, theta - 1 + num_atoms)
  p = rate * _binom_pmf(theta - 1, k + 1, rate)
  q = rate * _binom_pmf(theta - 1, k, rate)
  last = theta - 1 + num_atoms
  p_rest = float(_binom_cdf(theta - 1, np.array(last + 1), rate))
  q_rest = float(_binom_cdf(theta - 1, np.array(last), rate))
  return (np.r_[rate**theta, p, p_rest], np.r_[0.0, q, q_rest])


def dp_accounting_pld(rate: float, theta: int, num_atoms: int,
                      discretization: float = 1e-4):
  """The dominating pair as dp_accounting ``PrivacyLossDistribution``s.

  Returns ``(forward, reverse)``, each from
  ``from_two_probability_mass_functions`` with pessimistic rounding; the
  last atom lumps the rest of each law (pessimistically for the reverse
  direction: the rest's losses are at most ln(1/(1-q)); for the forward
  direction its loss is taken as that of atom ``num_atoms - 1`` by putting
  its mass there).
  """
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  p, q = dominating_pair(rate, theta, num_atoms)
  # Forward: the rest of P at the last listed loss (an upper bound).
  p_fwd, q_fwd = p[:-1].copy(), q[:-1].copy()
  p_fwd[-1] += p[-1]
  last_loss = float(_loss(np.array([theta - 2 + num_atoms]), rate, theta)[0])
  q_fwd[-1] = p_fwd[-1] * math.exp(-last_loss)
  # Reverse: the rest of Q at loss ln(1/(1-q)).
  p_rev, q_rev = p.copy(), q.copy()
  p_rev[-1] = q[-1] * (1 - rate)

  def logs(values):
    return {i: math.log(v) for i, v in enumerate(values) if v > 0}

  forward = pld_lib.from_two_probability_mass_functions(
      logs(q_fwd), logs(p_fwd), pessimistic_estimate=True,
      value_discretization_interval=discretization)
  reverse = pld_lib.from_two_probability_mass_functions(
      logs(p_rev), logs(q_rev), pessimistic_estimate=True,
      value_discretization_interval=discretization)
  return forward, reverse


def check_rate(rate: float) -> float:
  """``rate`` as a float in (0, 1), else a TypeError/ValueError."""
  rate = validation.check_real("the sampling rate", rate)
  if not 0.0 < rate < 1.0:
    raise ValueError(f"the sampling rate must be in (0, 1), got {rate}")
  return rate


def check_discretization(discretization) -> float:
  """``discretization`` as a positive finite float, else an error naming
  it."""
  return validation.check_positive("discretization", discretization)


# Peak bytes of a level's privacy loss per grid cell, both directions
# (measured: 588 at theta = 2 to 400 on grids of 1e-5 and 1e-6).
_LEVEL_BYTES_PER_CELL = 600
# Seconds per grid cell of a level's privacy loss (measured: 0.6e-6 to
# 1.3e-6 on a grid of 1e-6); a fifth more here.
_LEVEL_SECONDS_PER_CELL = 1.5e-6
_COARSER = (f"use a coarser discretization (the default is "
            f"{DEFAULT_DISCRETIZATION:g})")


def _check_level_size(theta: int, discretization: float) -> None:
  """Refuses, before any allocation, a level whose grid has too many cells
  to fit in memory or to be computed within ``limits.MAX_SECONDS``."""
  cells = 2.0 * math.log(theta) / discretization + 8.0
  what = (f"discretization={discretization:g} (at theta={theta}: "
          f"{cells:,.0f} grid cells of a level's privacy loss)")
  memory.check_fits(what, _LEVEL_BYTES_PER_CELL * cells, _COARSER)
  seconds = _LEVEL_SECONDS_PER_CELL * cells
  if seconds > limits.MAX_SECONDS:
    raise ValueError(f"{what} would take about "
                     f"{limits.describe_seconds(seconds)} to compute, over "
                     f"the {limits.MAX_SECONDS:g} s allowed; {_COARSER}")


# Seconds per product of a composition's convolutions (measured: 2.6e-10
# to 4.6e-10 at theta = 5 to 400 over 50 and 150 levels on the default
# grid).
_SECONDS_PER_PRODUCT = 5e-10
# Peak bytes of a composition per cell of the composed distributions
# (measured: 20, and 36 for replace-one).
_COMPOSED_BYTES_PER_CELL = 40


def check_composition(rate: float, theta: int, num_levels: int,
                      discretization: float, budget: float,
                      replace: bool) -> None:
  """Refuses, before composing, a run whose composition of ``num_levels``
  levels (each trimmed by ``budget``) would take over
  ``limits.MAX_SECONDS`` or not fit in memory (estimated from the level's
  own distribution, as :func:`_run_loss` composes it)."""
  one = _level_loss(rate, theta, discretization)
  share = budget / 2 if replace else budget
  forward, reverse = one.forward.trimmed(share), one.reverse.trimmed(share)
  per_square = _SECONDS_PER_PRODUCT * _products_per_square(forward, reverse,
                                                          replace)
  seconds = per_square * float(num_levels)**2
  if seconds > limits.MAX_SECONDS:
    most = math.floor(math.sqrt(limits.MAX_SECONDS / per_square))
    fewer = (f"use num_levels <= {most} (words of at most {most - 1} "
             f"characters: max_length <= {most - 1})" if most >= 2
             else _COARSER)
    raise ValueError(
        f"num_levels={num_levels} levels would take about "
        f"{limits.describe_seconds(seconds)} to account for Poisson "
        f"sampling at theta={theta}, rate {rate:.6g} and discretization="
        f"{discretization:g} (the accountant composes each level's privacy "
        "loss L times, a cost that grows as L^2), over the "
        f"{limits.MAX_SECONDS:g} s allowed; {fewer} or fixed-size batches "
        '(sampling="fixed"), whose guarantee composes nothing')
  cells = num_levels * (forward.probs.size + reverse.probs.size)
  memory.check_fits(f"num_levels={num_levels} levels ({cells:,} cells of "
                    "the composed privacy loss)",
                    _COMPOSED_BYTES_PER_CELL * cells,
                    "use fewer levels (a smaller max_length) or a coarser "
                    "discretization")


def _products_per_square(forward: pld.LossDistribution,
                         reverse: pld.LossDistribution,
                         replace: bool) -> float:
  """The products the composition's convolutions add, over L^2: step i
  convolves about ``i`` levels' cells with a level's non-zero entries (all
  its entries where :func:`pld.convolve` goes dense)."""
  f, r = forward.probs.size, reverse.probs.size
  if replace:  # forward L times, then its result with reverse L times
    return 0.5 * f * _terms(forward) + (f + 0.5 * r) * _terms(reverse)
  return 0.5 * (f * _terms(forward) + r * _terms(reverse))


def _terms(loss: pld.LossDistribution) -> int:
  """The entries of ``loss`` a convolution with it multiplies by."""
  nonzero = int(np.count_nonzero(loss.probs))
  return loss.probs.size if 2 * nonzero > loss.probs.size else nonzero
