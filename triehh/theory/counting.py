"""Privacy of the counting phase, and of discovery followed by counting.

The counting mechanism (:mod:`triehh.engines.counting`). The K discovered
words (public: TrieHH published them) and an "other" slot make K + 1 slots.
Every user joins the counting sample independently with probability q
(Poisson sampling); a sampled user adds a one-hot vector over the slots (its
word, or "other"; a user holding the empty word adds nothing), and each of
the K + 1 sums gets independent discrete Gaussian noise N_Z(0, sigma^2),
drawn exactly (:mod:`triehh.core.discrete_noise`).

Accounted for the discrete law (:mod:`triehh.theory.discrete_gaussian`),
not the continuous Gaussian's, which under-counts it.

Adjacency: add/remove one user. With u in D and not in D', the sums differ
by ``B * e_k`` with B ~ Bernoulli(q) (u's slot k), an L2 change of at most
1, so the pair of output laws is, along e_k, the Poisson-subsampled
discrete Gaussian pair ``(1 - q) N_Z(0, sigma^2) + q N_Z(1, sigma^2)`` vs
``N_Z(0, sigma^2)``: dp_accounting's ``from_discrete_gaussian_mechanism(
sigma, sensitivity=1, sampling_prob=q)`` with its truncation's slack
counted (:func:`triehh.theory.discrete_gaussian.round_pld`), whose REMOVE
and ADD distributions are the two directions. A user with several
words draws one by local frequency, independently of the sample: a mixture
of such pairs, dominated by the same pair. Replacing u's word by the empty
word (the paper's adjacency) gives the same pair: the empty word adds
nothing.

Composition (:func:`compose`). The counting phase runs after discovery on
its published word list, so the two compose adaptively; their privacy loss
distributions are composed with dp_accounting. Discovery's distribution is
its own accountant's where it has one (Poisson sampling: the discretised
dominating pair of :mod:`triehh.theory.poisson`, composed over the L
levels, REMOVE = user present in the upper law), and otherwise the
distribution that dominates every ``(epsilon, delta)``-DP mechanism
(``from_privacy_parameters``): Theorem 1's fixed-size phase, proven in one
direction only, which the composed label then says. The total reported is
the smaller of the PLD composition and basic composition (eps_d + eps_c,
delta_d + delta_c), both valid bounds.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys

import numpy as np
from scipy import special

from triehh.core import progress
from triehh.core import results
from triehh.core import validation
from triehh.theory import _search
from triehh.theory import discrete_gaussian
from triehh.theory import hockey_stick
from triehh.theory import limits
from triehh.theory import poisson
from triehh.theory.adjacency import Adjacency

# The privacy loss grid of both phases (dp_accounting composes only PLDs on
# the same grid); the Poisson accountant's own default.
DISCRETIZATION = poisson.DEFAULT_DISCRETIZATION
# calibrate_noise's relative precision on sigma.
_SIGMA_TOLERANCE = 1e-4
# The least sigma the searches return: a tenth of a user changes no count's
# rounding, and a smaller one only makes the accountant's Gaussian larger
# (its losses span about 1/sigma^2: 8 GB near sigma = 1e-6, at epsilon =
# 1e6). A target it meets more than fully is reported at this sigma.
LEAST_SIGMA = 0.1
# The least counting sample rate accounted: the float spacing at 1. The
# subsampled Gaussian's loss, log(1 - q + q e^x), loses a smaller q beside
# 1 - q (dp_accounting fails below 2^-53, and from 1e-310).
LEAST_SAMPLE_RATE = sys.float_info.epsilon
# The first raise of an FFT epsilon that the direct sum refuses, relative.
_FFT_NUDGE = 1e-6
# The part of the total delta kept for the counting noise's truncation
# slack (:mod:`triehh.theory.discrete_gaussian`).
_SLACK_SHARE = 1e-3

GAUSSIAN = ("Poisson-subsampled discrete Gaussian (dp_accounting PLD), "
            "both directions (ADD_OR_REMOVE_ONE, REPLACE_SPECIAL)")
COMPOSED_TWO_SIDED = (
    "PLD composition (dp_accounting): the Poisson accountant's discovery "
    "and the Poisson-subsampled discrete Gaussian counts, both directions "
    "({adjacency})")
COMPOSED_ONE_DIRECTION = (
    "PLD composition (dp_accounting): discovery as an (epsilon, delta) "
    "mechanism ({accounting}) and the Poisson-subsampled discrete Gaussian "
    "counts; "
    "one direction, the one discovery's proof covers ({adjacency})")
# The relations the counting phase is proven for: a user whose words become
# the empty word adds nothing, as a removed user. Replace-one is not proven
# for the counts.
COUNTING_ADJACENCIES = (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_SPECIAL)
COVERS = ("the set of discovered words and prefixes and the noisy counts of "
          "the discovered words (not the vote counts)")


@dataclasses.dataclass(frozen=True)
class BudgetSplit:
  """A total ``(epsilon, delta)`` split between discovery and counting."""

  discovery_epsilon: float
  discovery_delta: float
  counting_epsilon: float
  counting_delta: float
  count_share: float


def check_count_share(count_share: float, name: str = "count_share") -> float:
  """``count_share`` as a float in (0, 1), else an error naming it as
  ``name`` (a driver gives its flag)."""
  return validation.check_probability(
      name, count_share, "the share of epsilon and delta spent on counting")


def split_budget(epsilon: float, delta: float,
                 count_share: float) -> BudgetSplit:
  """Counting gets ``count_share`` of epsilon and of delta, discovery the
  rest; by basic composition the two phases are within ``(epsilon,
  delta)``."""
  epsilon = validation.check_positive("epsilon", epsilon)
  delta = limits.check_delta("delta", delta)
  share = check_count_share(count_share)
  return BudgetSplit(
      discovery_epsilon=epsilon * (1.0 - share),
      discovery_delta=delta * (1.0 - share),
      counting_epsilon=epsilon * share, counting_delta=delta * share,
      count_share=share)


def check_sample_rate(sample_rate: float,
                      name: str = "count_sample_rate") -> float:
  """``sample_rate`` as a float in [``LEAST_SAMPLE_RATE``, 1], else an
  error naming it as ``name`` (``count_sample_rate``, or a driver's
  flag)."""
  sample_rate = validation.check_rate(
      name, sample_rate, "the probability that a user joins the counting "
      "sample")
  if sample_rate < LEAST_SAMPLE_RATE:
    raise ValueError(
        f"{name} must be at least {LEAST_SAMPLE_RATE!r}, the float spacing "
        "at 1: a smaller rate vanishes beside 1 in the subsampled "
        "Gaussian's privacy loss, which then cannot be accounted, got "
        f"{name}={sample_rate!r}")
  return sample_rate


# Cached: the noise searches ask for the same sigmas again (their brackets
# start at 0.5 and 1 and double), 26% of the calls over 24 searches; a
# build costs 10 ms to 0.9 s (small sigmas). dp_accounting's distributions
# are not changed by their methods (compose returns a new one).
@functools.lru_cache(maxsize=128)
def gaussian_pld(noise_std: float, sample_rate: float,
                 discretization: float = DISCRETIZATION):
  """The counting phase's dp_accounting ``PrivacyLossDistribution``: the
  discrete Gaussian's, support truncated (pessimistic; REMOVE and ADD are
  its two directions; shared, read only). Its truncation's slack is
  counted by :func:`gaussian_epsilon` and :func:`compose`."""
  return discrete_gaussian.round_pld(noise_std, sample_rate, discretization)


def gaussian_epsilon(noise_std: float, sample_rate: float, delta: float,
                     discretization: float = DISCRETIZATION) -> float:
  """The counting phase's epsilon at ``delta``, both directions, for the
  discrete law (:func:`triehh.theory.discrete_gaussian.epsilon`: its PLD
  with the truncation's slack, and unsampled no more than its zCDP
  bound)."""
  return discrete_gaussian.epsilon([noise_std], sample_rate, delta,
                                   discretization)


@functools.lru_cache(maxsize=256)
def calibrate_noise(epsilon_c: float, delta_c: float,
                    sample_rate: float) -> float:
  """The smallest sigma (to a relative 1e-4, rounded up) for which the
  counting phase is ``(epsilon_c, delta_c)``-DP in both directions.

  Bisection on log(sigma); epsilon decreases as sigma grows.
  """
  return _calibrate_noise(
      validation.check_positive("epsilon (counting share)", epsilon_c),
      limits.check_delta("delta (counting share)", delta_c),
      check_sample_rate(sample_rate))


def _calibrate_noise(epsilon_c: float, delta_c: float, sample_rate: float,
                     tolerance: float = _SIGMA_TOLERANCE) -> float:
  """:func:`calibrate_noise` on checked arguments (to a relative
  ``tolerance``)."""

  def excess(sigma: float) -> float:
    return _log_ratio(gaussian_epsilon(sigma, sample_rate, delta_c),
                      epsilon_c)

  lo, hi = 0.5, 1.0
  f_lo, f_hi = math.inf, excess(hi)
  while f_hi > 0:
    lo, f_lo, hi = hi, f_hi, hi * 2.0
    f_hi = excess(hi)
  if f_lo == math.inf:
    f_lo = excess(lo)
  while f_lo <= 0:
    hi, f_hi, lo = lo, f_lo, lo / 2.0
    if lo < LEAST_SIGMA:
      return hi
    f_lo = excess(lo)
  return least_private(excess, (lo, f_lo), (hi, f_hi), tolerance)


def _log_ratio(got: float, target: float) -> float:
  """``log(got / target)``: > 0 iff ``got`` exceeds ``target`` (inf for an
  infinite ``got``, -inf for 0)."""
  if not math.isfinite(got):
    return math.inf
  return math.log(got / target) if got > 0 else -math.inf


def least_private(excess, low: tuple[float, float], high: tuple[float, float],
                  tolerance: float) -> float:
  """The least sigma (to a relative ``tolerance``) with ``excess(sigma) <=
  0``, ``excess`` decreasing, from ``low = (sigma, excess(sigma) > 0)``
  and ``high = (sigma, excess(sigma) <= 0)``: regula falsi on log(sigma)
  (Illinois variant, bisection where an excess is infinite), keeping the
  bracket; returns its private end."""
  return _search.log_regula_falsi(excess, high, low, tolerance)


@dataclasses.dataclass(frozen=True)
class Composition:
  """The privacy of discovery followed by counting.

  Attributes:
    epsilon, delta: the total: epsilon at the total delta (the smaller of
      ``pld_epsilon`` and ``basic_epsilon``).
    discovery_epsilon, discovery_delta: discovery's guarantee (its params).
    counting_epsilon, counting_delta: the counting phase's epsilon at its
      delta (both directions).
    pld_epsilon: epsilon at ``delta`` of the composed PLDs.
    basic_epsilon: ``discovery_epsilon + counting_epsilon`` (valid at
      ``discovery_delta + counting_delta <= delta``).
    accounting: how it was obtained, and in which direction(s).
    two_sided: whether both directions are proven.
    noise_std, sample_rate: the counting phase's sigma and q.
  """

  epsilon: float
  delta: float
  discovery_epsilon: float
  discovery_delta: float
  counting_epsilon: float
  counting_delta: float
  pld_epsilon: float
  basic_epsilon: float
  accounting: str
  two_sided: bool
  noise_std: float
  sample_rate: float


@functools.lru_cache(maxsize=64)
def discovery_pld(params: results.RunParams,
                  discretization: float = DISCRETIZATION):
  """Discovery's dp_accounting ``PrivacyLossDistribution``: the PLD of its
  ``DpEvent`` (:func:`triehh.theory.dp_events.run_pld`). Poisson sampling:
  the accountant's L-fold composed dominating pair, forward (the user
  present in the upper law) as REMOVE and reverse as ADD. Otherwise
  ``from_privacy_parameters(epsilon, delta)``, valid for any ``(epsilon,
  delta)``-DP phase in the direction(s) its proof covers.
  """
  from triehh.theory import dp_events  # pylint: disable=g-import-not-at-top
  if not params.has_guarantee:
    raise ValueError("discovery ran without a privacy guarantee "
                     f"(accounting={params.accounting!r}); nothing to compose")
  return dp_events.run_pld(params, discretization)


def _composed_epsilon(first, second, delta: float) -> float:
  """epsilon at ``delta`` of two composed PLDs, both directions: the FFT
  composition's, checked (and raised if needed) with dp_accounting's direct
  hockey-stick sum (vectorised, :mod:`triehh.theory.hockey_stick`), which
  has no FFT error floor; below ``_FFT_FLOOR_DELTA``, the direct sum's own
  (bisection)."""
  if delta < _FFT_FLOOR_DELTA:
    return _direct_epsilon(first, second, delta)
  composed = first.compose(second, tail_mass_truncation=0.0)
  epsilon = composed.get_epsilon_for_delta(delta)
  if not math.isfinite(epsilon):
    return epsilon
  # Checked a hair above the FFT's epsilon (where the FFT's own delta meets
  # the target; the direct sum differs by the FFT's error, and about half
  # the time refuses the exact point), then raised by grid steps, doubling.
  epsilon += _FFT_NUDGE * max(epsilon, 1.0)
  step = DISCRETIZATION
  while hockey_stick.composed_delta(first, second, epsilon) > delta:
    epsilon += step
    step *= 2.0
  return epsilon


# Below this delta the FFT composition's epsilon is not used: its error
# floor (about 1e-15 absolute) would set it, far above the exact value.
_FFT_FLOOR_DELTA = 1e-12


def _direct_epsilon(first, second, delta: float) -> float:
  """The least epsilon >= 0 (to 1e-9) at which the direct sum of ``first``
  composed with ``second`` is at most ``delta``; inf if none is."""

  def meets(epsilon: float) -> bool:
    return hockey_stick.composed_delta(first, second, epsilon) <= delta

  if meets(0.0):
    return 0.0
  hi = 1.0
  while not meets(hi):
    if hi > 1e4:  # past every finite loss: the infinity masses exceed delta
      return math.inf
    hi *= 2.0
  lo = hi / 2.0 if hi > 1.0 else 0.0
  while hi - lo > 1e-9 * max(hi, 1.0):
    mid = 0.5 * (lo + hi)
    if meets(mid):
      hi = mid
    else:
      lo = mid
  return hi


def compose(discovery: results.RunParams, noise_std: float,
            sample_rate: float, delta: float) -> Composition:
  """The total privacy of discovery (``discovery``, its run parameters)
  followed by counting with ``noise_std`` at ``sample_rate``, at the total
  ``delta`` (at least ``discovery.delta``).

  The counting phase's own epsilon is computed at ``delta -
  discovery.delta``.
  """
  delta = _check_total_delta(discovery, delta)
  return _compose(discovery, validation.check_positive("noise_std", noise_std),
                  check_sample_rate(sample_rate), delta)


def _check_total_delta(discovery: results.RunParams, delta: float) -> float:
  """``delta`` as a probability above ``discovery.delta``, discovery with a
  guarantee; else a ValueError naming the problem."""
  if not discovery.has_guarantee:
    raise ValueError("discovery ran without a privacy guarantee "
                     f"(accounting={discovery.accounting!r}); nothing to "
                     "compose")
  delta = limits.check_delta("delta", delta)
  if not delta - discovery.delta > 0:
    raise ValueError(f"delta={delta:.3g} leaves nothing for counting after "
                     f"discovery's delta={discovery.delta:.3g}")
  return delta


# Cached: sweeps compose the same discovery parameters for many seeds
# (RunParams is frozen, so the exact arguments are the key), and a
# calibration's last full check composes the sigma it returns.
@functools.lru_cache(maxsize=256)
def _compose(discovery: results.RunParams, noise_std: float,
             sample_rate: float, delta: float) -> Composition:
  """:func:`compose` on checked arguments."""
  counting_delta = delta - discovery.delta
  counting_epsilon = gaussian_epsilon(noise_std, sample_rate, counting_delta)
  pld_epsilon = _with_slack(
      _composed_epsilon(discovery_pld(discovery),
                        gaussian_pld(noise_std, sample_rate),
                        delta * (1.0 - _SLACK_SHARE)), noise_std, delta)
  basic = discovery.epsilon + counting_epsilon
  two_sided = discovery.two_sided
  adjacency = composed_adjacency(discovery)
  accounting = (COMPOSED_TWO_SIDED.format(adjacency=adjacency) if two_sided
                else COMPOSED_ONE_DIRECTION.format(
                    accounting=discovery.accounting, adjacency=adjacency))
  return Composition(
      epsilon=min(pld_epsilon, basic), delta=delta,
      discovery_epsilon=discovery.epsilon, discovery_delta=discovery.delta,
      counting_epsilon=counting_epsilon, counting_delta=counting_delta,
      pld_epsilon=pld_epsilon, basic_epsilon=basic, accounting=accounting,
      two_sided=two_sided, noise_std=noise_std, sample_rate=sample_rate)


def _with_slack(epsilon: float, noise_std: float, delta: float) -> float:
  """``epsilon`` (found at ``delta (1 - _SLACK_SHARE)`` for the truncated
  discrete Gaussian), or inf where the untruncated law's slack, ``P[|X| >
  T] (1 + e^epsilon)`` (:mod:`triehh.theory.discrete_gaussian`), does not
  fit in the rest of ``delta``."""
  if not math.isfinite(epsilon):
    return epsilon
  slack = discrete_gaussian.truncated_mass(noise_std) * (
      1.0 + math.exp(min(epsilon, 700.0)))
  return epsilon if slack <= _SLACK_SHARE * delta else math.inf


def _bracket(excess, guess: float, step: float = 1.001, tries: int = 8):
  """``((lo, excess(lo) > 0), (hi, excess(hi) <= 0))`` around ``guess``:
  steps of ``step`` first (the accountant's sigma is typically within
  0.1 % of the exact Gaussian's), each next step the square of the last;
  None after ``tries`` steps without one."""
  f_guess = excess(guess)
  for _ in range(tries):
    other = guess * (step if f_guess > 0 else 1.0 / step)
    f_other = excess(other)
    if (f_other <= 0) == (f_guess > 0):
      pair = sorted([(guess, f_guess), (other, f_other)])
      return pair[0], pair[1]
    guess, f_guess, step = other, f_other, step * step
  return None


def _atoms(pmf) -> tuple[np.ndarray, np.ndarray] | None:
  """The losses and masses of a dp_accounting dense or sparse PLD PMF
  (None for another kind)."""
  # pylint: disable=protected-access
  if hasattr(pmf, "_probs") and hasattr(pmf, "_lower_loss"):
    probs = np.asarray(pmf._probs, dtype=float)
    return ((pmf._lower_loss + np.arange(probs.size)) * pmf._discretization,
            probs)
  if isinstance(getattr(pmf, "_loss_probs", None), dict):
    items = sorted(pmf._loss_probs.items())
    return (np.array([k for k, _ in items], dtype=float) * pmf._discretization,
            np.array([p for _, p in items], dtype=float))
  return None


def exact_gaussian_sigma(first, epsilon: float, delta: float) -> float | None:
  """The sigma at which ``first`` (a dp_accounting PLD with dense or sparse
  distributions) composed with the Gaussian mechanism, every user counted
  and not discretised, has ``delta`` at ``epsilon`` (the larger direction;
  to a relative 1e-6), or None (other distributions, or no sigma below
  1e6). The Gaussian's hockey-stick divergence is in closed form (Balle and
  Wang, ICML 2018, Theorem 8), summed over ``first``'s losses. A guess for
  the searches, never a guarantee: the accountant's Gaussian is discretised
  pessimistically and needs a little more noise."""
  sides = []
  for pmf in (getattr(first, "_pmf_remove", None),
              getattr(first, "_pmf_add", None)):
    atoms = _atoms(pmf)
    if atoms is None:
      return None
    losses, probs = atoms
    kept = probs > delta * 1e-12  # the rest moves delta by < 1e-7 of it
    sides.append((epsilon - losses[kept], probs[kept], pmf._infinity_mass))  # pylint: disable=protected-access

  def composed_delta(sigma: float) -> float:
    mu = 1.0 / sigma  # sensitivity 1: the loss is N(mu^2 / 2, mu^2)
    worst = 0.0
    for t, probs, infinity in sides:
      hockey = (special.ndtr(-t / mu + mu / 2)
                - np.exp(t + special.log_ndtr(-t / mu - mu / 2)))
      worst = max(worst, infinity + float(np.dot(probs,
                                                 np.maximum(hockey, 0.0))))
    return worst

  def excess(sigma: float) -> float:
    got = composed_delta(sigma)
    return math.log(got / delta) if got > 0 else -math.inf

  lo, hi = 0.5, 1.0
  f_lo, f_hi = excess(lo), excess(hi)
  while f_hi > 0:
    if hi > 1e6:
      return None
    lo, f_lo, hi = hi, f_hi, hi * 2.0
    f_hi = excess(hi)
  while f_lo <= 0:
    if lo < 1e-3:
      return lo
    hi, f_hi, lo = lo, f_lo, lo / 2.0
    f_lo = excess(lo)
  return least_private(excess, (lo, f_lo), (hi, f_hi), 1e-6)


def composed_adjacency(discovery: results.RunParams) -> str:
  """The relations both phases are proven for: discovery's, without
  ``REPLACE_ONE`` (not proven for the counts)."""
  names = [name for name in discovery.adjacencies
           if Adjacency.of(name) in COUNTING_ADJACENCIES]
  return ", ".join(names) if names else "none in common"


def calibrate_noise_to_total(discovery: results.RunParams, epsilon: float,
                             delta: float, sample_rate: float) -> float:
  """The smallest sigma (to a relative 1e-3, rounded up) for which
  discovery (``discovery``) followed by counting is ``(epsilon, delta)``-DP
  by :func:`compose`: counting takes all the budget discovery leaves.

  The search starts from the sigma :func:`calibrate_noise` gives for the
  basic-composition rest ``epsilon - discovery.epsilon`` at ``delta -
  discovery.delta``, which meets the total.
  """
  return calibrate_total(discovery, epsilon, delta, sample_rate).noise_std


# Cached on the exact arguments (1-3 s a call under Poisson sampling; sweeps
# call it with the same parameters for every seed).
@functools.lru_cache(maxsize=256)
def calibrate_total(discovery: results.RunParams, epsilon: float,
                    delta: float, sample_rate: float,
                    counting_epsilon: float | None = None,
                    counting_delta: float | None = None) -> Composition:
  """The :func:`compose` of discovery (``discovery``) with the least
  counting noise (to a relative 1e-3, rounded up) for which the two phases
  are ``(epsilon, delta)``-DP: counting takes all the budget discovery
  leaves. Its arguments are checked once, here.

  The search starts from a sigma that meets the total: the one
  :func:`calibrate_noise` gives for ``(counting_epsilon, counting_delta)``,
  a basic-composition share of the total (by default the rest
  ``epsilon - discovery.epsilon`` at ``delta - discovery.delta``).
  """
  epsilon = validation.check_positive("epsilon", epsilon)
  sample_rate = check_sample_rate(sample_rate)
  if counting_epsilon is not None:
    counting_epsilon = validation.check_positive("counting_epsilon",
                                                 counting_epsilon)
  if counting_delta is not None:
    counting_delta = limits.check_delta("counting_delta", counting_delta)
  delta = _check_total_delta(discovery, delta)
  counting_epsilon, counting_delta = _basic_share(
      discovery, epsilon, delta, counting_epsilon, counting_delta)
  # A sigma that meets the total (a relative 1e-2 is enough), found only
  # if the search needs it.
  upper = functools.partial(_calibrate_noise, counting_epsilon,
                            counting_delta, sample_rate, tolerance=1e-2)
  with progress.said_if_slow(
      f"calibrating the counting noise for a total epsilon={epsilon:g}, "
      f"delta={delta:.3g}"):
    sigma = _noise_to_total(discovery, epsilon, delta, sample_rate, upper)
  return _compose(discovery, sigma, sample_rate, delta)


def _basic_share(discovery: results.RunParams, epsilon: float, delta: float,
                 counting_epsilon: float | None,
                 counting_delta: float | None) -> tuple[float, float]:
  """Counting's ``(epsilon, delta)`` by basic composition: by default all
  that discovery leaves of the total; a ValueError when a given one is more
  than that (its sigma would not meet the total)."""
  if not epsilon - discovery.epsilon > 0:
    raise ValueError(f"epsilon={epsilon:g} leaves nothing for counting "
                     f"after discovery's epsilon={discovery.epsilon:g}")
  share = []
  for name, given, left in (
      ("counting_epsilon", counting_epsilon, epsilon - discovery.epsilon),
      ("counting_delta", counting_delta, delta - discovery.delta)):
    # 1e-9: the split's rounding (4 - 4 * 0.9 is 1 ulp below 4 * 0.1).
    if given is not None and given > left * (1.0 + 1e-9):
      raise ValueError(
          f"{name}={given:.6g} is more than the {left:.6g} that discovery "
          "leaves of the total: by basic composition the two phases would "
          "not meet it")
    share.append(left if given is None else given)
  return share[0], share[1]


def _noise_to_total(discovery: results.RunParams, epsilon: float,
                    delta: float, sample_rate: float, upper) -> float:
  """:func:`calibrate_total`'s sigma, on checked arguments; ``upper()``
  meets the total.

  The search brackets the accountant's sigma from a guess where there is
  one (:func:`exact_gaussian_sigma`, every user counted: the accountant's
  discretised Gaussian needs a little more noise than the exact one), else
  from ``upper()`` and half of it; the accountant decides every step.
  """
  first = discovery_pld(discovery)
  # The search aims a little below epsilon: where the full check finds the
  # FFT's epsilon a hair too low, it nudges it (_composed_epsilon), which
  # then still meets the total, and one full check is enough.
  aim = epsilon * (1.0 - 10 * _FFT_NUDGE)

  def excess(sigma: float) -> float:
    # log(delta at the aim / delta), by the direct sum: no FFT error floor
    # (about 1e-15, above delta = 1/n^2 from n = 10^8 on).
    return _log_ratio(hockey_stick.composed_delta(
        first, gaussian_pld(sigma, sample_rate), aim),
        delta * (1.0 - _SLACK_SHARE))

  guess = (exact_gaussian_sigma(first, aim, delta) if sample_rate == 1.0
           else None)
  if guess is not None and guess < LEAST_SIGMA:
    if excess(LEAST_SIGMA) <= 0:
      return _checked_total(discovery, LEAST_SIGMA, sample_rate, delta,
                            epsilon)
    guess = LEAST_SIGMA
  bracket = None if guess is None else _bracket(excess, guess)
  if bracket is None:
    hi = upper()
    f_hi = excess(hi)
    if f_hi > 0:
      # The composed distributions give no more than basic composition
      # here (their pessimistic rounding); upper() meets the total by it.
      return _checked_total(discovery, hi, sample_rate, delta, epsilon)
    lo = hi / 2.0
    f_lo = excess(lo)
    while f_lo <= 0:
      if lo / 2.0 < LEAST_SIGMA:
        return _checked_total(discovery, lo, sample_rate, delta, epsilon)
      hi, f_hi, lo = lo, f_lo, lo / 2.0
      f_lo = excess(lo)
    bracket = (lo, f_lo), (hi, f_hi)
  hi = least_private(excess, *bracket, 1e-3)
  return _checked_total(discovery, hi, sample_rate, delta, epsilon)


def _checked_total(discovery: results.RunParams, sigma: float,
                   sample_rate: float, delta: float, epsilon: float) -> float:
  """``sigma``, raised until the full check (FFT error floor included)
  holds."""
  while _compose(discovery, sigma, sample_rate, delta).epsilon > epsilon:
    sigma *= 1.0 + 1e-3
  return sigma
