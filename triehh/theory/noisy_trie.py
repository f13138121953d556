"""The noisy trie: TrieHH with discrete Gaussian noise on a public
candidate set.

The mechanism, per round r = 1..R (``R = ceil((L + 1) / k)`` for words of
at most L characters and k characters per round):

1. The candidate set C_r is public: every frontier prefix of the trie
   published so far, extended by every string of k symbols of the alphabet,
   or by fewer than k symbols followed by the end symbol ``$`` (within L
   characters). It is a function of the earlier outputs only.
2. Each user takes part with probability q (Poisson sampling; q = 1: every
   user). A participant whose word's prefix is on the frontier adds a
   one-hot vector over C_r: 1 at its word's next k symbols (or up to its
   ``$``); others add nothing.
3. The server gets the sums plus independent discrete Gaussian noise
   ``N_Z(0, sigma_r^2)`` (``P[X = x]`` proportional to ``exp(-x^2 / (2
   sigma_r^2))`` on the integers, drawn exactly:
   :mod:`triehh.core.discrete_noise`) on every candidate, and keeps the
   candidates whose noisy sum, an integer, is at least the integer
   threshold tau_r. Those ending in ``$`` are released words; the others
   are the next frontier.

The noise may differ by round: ``sigma_r = sigma * m_r`` for public
multipliers m_r fixed in advance (:attr:`NoisyTrieParams.noise_multipliers`,
1 past the last one given, each in [1e-3, 1e3]), and tau_r the smallest
integer with ``P[N_Z(0, sigma_r^2) >= tau_r] <= alpha``, the same
false-positive rate alpha (at most) in every round. Early rounds count short
prefixes, which many users share: more noise there costs few words and
leaves budget for the later rounds, where a word's own count decides.

The guarantee (proof sketch; docs/noisy-trie.md gives it in full):

* *One round.* Fix the published trie before the round, hence C_r. Adding
  or removing one user u changes the vector of sums over C_r by a vector
  that is zero or one-hot: L2 sensitivity 1 (and one coordinate changes by
  1). Without sampling the round's noisy sums are the discrete Gaussian
  mechanism on one coordinate (the others' laws do not change); with
  Poisson sampling u's contribution is present with probability q,
  independently of the other users', which is its Poisson-subsampled
  version (:mod:`triehh.theory.discrete_gaussian`: dp_accounting's PLD of
  the discrete Gaussian, ``ADD_OR_REMOVE_ONE``, both directions). Several words per user: u's word is drawn independently
  of everything else, its contribution is still zero or one-hot, so the
  pair of output laws is a mixture of pairs each dominated by the same
  pair, and the hockey-stick divergence is jointly convex.
* *Threshold.* Which candidates pass is a function of the noisy sums alone:
  post-processing, it costs nothing. tau only sets precision: a candidate
  nobody votes for passes with probability alpha = ``P[N_Z(0, sigma^2) >=
  tau]`` (the false-positive rate per candidate, the pmf summed).
* *The discrete law's accountant.* The continuous Gaussian's epsilon is
  not an upper bound for the discrete Gaussian (at sigma = 2, delta = 1e-6
  it leaves the discrete law a delta of 1.17e-6), so the closed form of R
  continuous Gaussians (Balle and Wang, ICML 2018) no longer accounts a
  run. dp_accounting's PLD of the discrete Gaussian composes
  the rounds (pessimistic; the truncation of its support accounted), and
  without sampling the zCDP bound (CKS20: ``1 / (2 sigma_r^2)`` per round,
  composed and converted) caps it; below delta = 1e-15 the zCDP bound
  answers, and for sampled rounds the sampled rounds' own Renyi
  divergence, both directions, when smaller
  (:func:`triehh.theory.discrete_gaussian.epsilon`,
  :mod:`triehh.theory.sampled_renyi`).
* *R rounds.* C_r depends only on earlier outputs, so the run is the
  adaptive composition of R such mechanisms, round r's dominated by the
  same pair (at sigma_r) whatever C_r is: ``SelfComposedDpEvent(level, R)``,
  or ``ComposedDpEvent`` of the R rounds' events when sigma_r differ (the
  multipliers are fixed before the run), whose PLD dp_accounting composes
  (:func:`epsilon`); a level is a
  :class:`triehh.theory.dp_events.DiscreteGaussianDpEvent`. Stopping early
  is post-processing.
* *Neighbours.* ``ADD_OR_REMOVE_ONE``: above. ``REPLACE_SPECIAL`` (u's
  words replaced by the empty word): a user with the empty word adds
  nothing in any round, the same law as u absent, so the same pair. The
  parameters (sigma, tau, q, k, R) are chosen without looking at the data
  and do not depend on n, so the guarantee holds for neighbours of any
  size. ``REPLACE_ONE`` (u's words replaced by others; the run calibrated
  with ``replace_one``): a round moves u's vote from one candidate to
  another (or only removes or only adds it, a marginal of that), so its
  pair is the product of the two directions' pairs at sigma_r, the swap
  accountant of :mod:`triehh.theory.discrete_gaussian`; it dominates the
  add/remove pair, so such a run covers all three relations.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import dp_accounting
from scipy import special

from triehh.core import discrete_noise
from triehh.core import progress
from triehh.core import validation
from triehh.theory import calibration_store
from triehh.theory import discrete_gaussian
from triehh.theory import dp_events
from triehh.theory import limits
from triehh.theory import mechanism as mechanism_lib
from triehh.theory import noise_search
from triehh.theory import sampled_renyi
from triehh.theory.adjacency import Adjacency
from triehh.theory.mechanism import Guarantee

# The round multipliers taken: beyond, a round's noise is a thousandth or a
# thousand times the base (1e-300 made sigma_r^2 underflow to 0).
MULTIPLIER_RANGE = (1e-3, 1e3)


def check_multipliers(multipliers, num_levels: int | None = None
                      ) -> tuple[float, ...]:
  """The round multipliers, checked as the target checks them and within
  MULTIPLIER_RANGE; ValueError naming ``noise_multipliers``."""
  checked = mechanism_lib.check_noise_multipliers(multipliers, num_levels)
  low, high = MULTIPLIER_RANGE
  for i, m in enumerate(checked):
    if not low <= m <= high:
      raise ValueError(
          f"noise_multipliers[{i}]={m:g} is outside [{low:g}, {high:g}]: a "
          "round's noise is sigma times its multiplier; give multipliers "
          "in that range (or change sigma)")
  return checked


# The neighbouring relations the guarantee covers (module docstring), and
# with the replace-one accountant.
ADJACENCIES = (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_SPECIAL)
REPLACE_ONE_ADJACENCIES = (Adjacency.REPLACE_ONE,) + ADJACENCIES
ACCOUNTING = "noisy trie (discrete Gaussian PLD, two-sided)"
# Without sampling, the discrete Gaussian's PLD capped by its zCDP bound,
# which answers below SMALLEST_PLD_DELTA (dp_accounting's PLD answers
# epsilon = inf below about 1e-15, floating point), with the sampled RDP
# bound for subsampled rounds there (triehh.theory.discrete_gaussian).
ACCOUNTING_EXACT = ("noisy trie (discrete Gaussian PLD and zCDP, "
                    "two-sided)")
ACCOUNTING_SAMPLED_RENYI = ("noisy trie (discrete Gaussian zCDP and "
                            "Poisson-sampled RDP, two-sided)")
SMALLEST_PLD_DELTA = discrete_gaussian.SMALLEST_PLD_DELTA
COVERS = ("the released words, the published trie and every noisy count, "
          "for neighbours of any size (no parameter depends on n)")
PUBLIC = ("the alphabet, the maximum word length L, the characters per "
          "level k, the noise and its round multipliers")
TRUST = ("the server: it samples in secret, adds the noise (central mode) "
         "and thresholds; with distributed noise each client adds a share")
# PLD grid of epsilon(); calibrate() searches on a coarser grid first.
DEFAULT_DISCRETIZATION = 1e-4
SEARCH_DISCRETIZATION = 1e-3
DEFAULT_FALSE_POSITIVE_RATE = 1e-5
DEFAULT_SAMPLING_RATES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
# Relative precision of the calibrated sigma.
_SIGMA_TOLERANCE = 1e-3
# The code that answers a calibration: the store's key (:func:`calibrate`).
_SOURCES = (__file__, discrete_gaussian.__file__, discrete_noise.__file__,
            noise_search.__file__, sampled_renyi.__file__)


@dataclasses.dataclass(frozen=True)
class NoisyTrieParams:
  """The parameters of a noisy-trie run (module docstring).

  Give ``threshold`` or ``false_positive_rate`` (the other is derived:
  ``threshold`` the smallest integer whose tail ``P[N_Z(0, sigma^2) >=
  threshold]`` is at most ``false_positive_rate``), or both if they agree.

  Attributes:
    sigma: the discrete Gaussian's parameter (``P[X = x]`` proportional to
      ``exp(-x^2 / (2 sigma^2))``; its standard deviation is at most sigma,
      and within 1e-8 of it from sigma = 1) of the noise on each candidate.
    threshold: tau, the smallest noisy sum that passes: an integer (a real
      one given is rounded up: the noisy sums are integers).
    sampling_rate: q, each user's probability of taking part in a round.
    false_positive_rate: alpha, ``P[N_Z(0, sigma^2) >= tau]``: the chance a
      candidate with no vote passes (the pmf summed in double precision; at
      most the rate asked for).
    num_levels: R, the rounds accounted for (a run may stop earlier).
    chars_per_level: k, symbols per candidate (``$`` included).
    noise_multipliers: m_r of the first rounds (round r's noise is
      ``sigma * m_r``, its threshold ``threshold * m_r``); 1 for the rounds
      past them. Empty: the same noise every round. ``sigma`` and
      ``threshold`` are then the base, :meth:`at_round` a round's.
    delta: the delta the guarantee is stated at (set by the calibration for
      a target; None: give it to :func:`guarantee`).
    n_source: where the n behind delta came from (``"declared"``,
      ``"data"``: delta is ``1/n^2`` of |D|, or ``"unused"``).
    population_size: the n the run was calibrated for (the declared size,
      else the data's); None when not calibrated for a population.
    replace_one: accounted for ``REPLACE_ONE`` too (module docstring).
  """

  sigma: float
  num_levels: int
  threshold: float | None = None
  sampling_rate: float = 1.0
  false_positive_rate: float | None = None
  chars_per_level: int = 1
  noise_multipliers: tuple[float, ...] = ()
  delta: float | None = None
  n_source: str = "unused"
  population_size: int | None = None
  replace_one: bool = False

  def __post_init__(self):
    sigma = validation.check_positive("sigma", self.sigma)
    if not math.isfinite(sigma) or sigma > 2.0**40:
      raise ValueError(f"sigma must be finite and at most 2^40, got {sigma}")
    object.__setattr__(self, "sigma", sigma)
    object.__setattr__(self, "num_levels",
                       validation.check_int("num_levels", self.num_levels))
    object.__setattr__(self, "chars_per_level", validation.check_int(
        "chars_per_level", self.chars_per_level))
    object.__setattr__(self, "sampling_rate", validation.check_rate(
        "sampling_rate", self.sampling_rate, "the probability a user takes "
        "part in a round"))
    object.__setattr__(self, "noise_multipliers",
                       check_multipliers(self.noise_multipliers,
                                         self.num_levels))
    self._fill_threshold()

  def _fill_threshold(self) -> None:
    """Derives tau from alpha or alpha from tau, checking they agree."""
    alpha, tau = self.false_positive_rate, self.threshold
    if alpha is None and tau is None:
      raise ValueError("give threshold or false_positive_rate")
    if alpha is not None:
      alpha = validation.check_probability(
          "false_positive_rate", alpha, "the chance a zero-count candidate "
          "passes")
    derived = None if alpha is None else threshold_for(self.sigma, alpha)
    if tau is None:
      tau = derived
    tau = validation.check_real("threshold", tau)
    if not math.isfinite(tau) or abs(tau) > 2.0**53:
      raise ValueError(f"threshold must be finite (at most 2^53 in size), "
                       f"got {tau}")
    tau = math.ceil(tau)  # the noisy sums are integers
    if derived is not None and tau != derived:
      raise ValueError(f"threshold {tau} and false_positive_rate {alpha} "
                       f"disagree at sigma={self.sigma} (that rate gives "
                       f"{derived}); give one of them")
    object.__setattr__(self, "threshold", tau)
    object.__setattr__(self, "false_positive_rate",
                       discrete_noise.discrete_gaussian_tail(self.sigma, tau))

  def multiplier(self, r: int) -> float:
    """m_r, round r's noise over the base (r = 0, 1, ...)."""
    return (self.noise_multipliers[r] if r < len(self.noise_multipliers)
            else 1.0)

  @property
  def sigmas(self) -> tuple[float, ...]:
    """sigma_r of the R rounds accounted for."""
    return tuple(self.sigma * self.multiplier(r)
                 for r in range(self.num_levels))

  def at_round(self, r: int) -> "NoisyTrieParams":
    """Round r's parameters: its sigma and threshold (the smallest integer
    whose tail at that sigma is at most the base's false-positive rate; the
    base threshold times the multiplier, rounded up, if that rate is 0 in
    double precision), no multipliers."""
    if not self.noise_multipliers:
      return self
    m = self.multiplier(r)
    if self.false_positive_rate == 0.0:  # the tail under a double's range
      return dataclasses.replace(self, sigma=self.sigma * m,
                                 threshold=math.ceil(self.threshold * m),
                                 false_positive_rate=None,
                                 noise_multipliers=())
    return dataclasses.replace(self, sigma=self.sigma * m, threshold=None,
                               false_positive_rate=self.false_positive_rate,
                               noise_multipliers=())

  @property
  def smallest_count(self) -> float:
    """``tau / q``: the count a candidate needs to pass with probability
    about 1/2 (its expected sampled count reaches tau); the calibration
    minimises it."""
    return self.threshold / self.sampling_rate


def threshold_for(sigma: float, false_positive_rate: float) -> int:
  """The smallest integer tau with ``P[N_Z(0, sigma^2) >= tau] <=
  false_positive_rate`` (the discrete Gaussian's tail, summed)."""
  sigma = validation.check_positive("sigma", sigma)
  alpha = validation.check_probability("false_positive_rate",
                                       false_positive_rate)
  tail = functools.partial(discrete_noise.discrete_gaussian_tail, sigma)
  # the continuous quantile is within a few units of the discrete one
  tau = math.ceil(-sigma * special.ndtri(alpha)) if alpha < 1 else 0
  while tail(tau) > alpha:
    tau += 1
  lowest = -math.ceil(40 * sigma) - 2  # P[X >= lowest] is 1 in doubles
  while tau > lowest and tail(tau - 1) <= alpha:
    tau -= 1
  return int(tau)


def rounds_for(max_length: int, chars_per_level: int = 1) -> int:
  """R, the rounds for words of at most ``max_length`` characters (and the
  end symbol) at ``chars_per_level`` symbols a round."""
  validation.check_int("max_length", max_length)
  validation.check_int("chars_per_level", chars_per_level)
  return -(-(max_length + 1) // chars_per_level)


def level_event(sigma: float, sampling_rate: float):
  """One round's ``DpEvent``: the discrete Gaussian, Poisson-subsampled if
  q < 1 (:class:`triehh.theory.dp_events.DiscreteGaussianDpEvent`; not a
  ``GaussianDpEvent``, whose PLD would under-count the discrete law)."""
  return dp_events.DiscreteGaussianDpEvent(sigma, min(sampling_rate, 1.0))


def dp_event(params: NoisyTrieParams):
  """The run's ``DpEvent``: R adaptive rounds of :func:`level_event`, at
  each round's sigma."""
  if not params.noise_multipliers:
    return dp_accounting.SelfComposedDpEvent(
        level_event(params.sigma, params.sampling_rate), params.num_levels)
  return dp_accounting.ComposedDpEvent(
      [level_event(s, params.sampling_rate) for s in params.sigmas])


def epsilon(params: NoisyTrieParams, delta: float, *,
            discretization: float = DEFAULT_DISCRETIZATION) -> float:
  """The run's epsilon at ``delta``, both directions (the discrete
  Gaussian's PLD, pessimistic, ``ADD_OR_REMOVE_ONE`` or with
  ``params.replace_one`` ``REPLACE_ONE``, capped by its zCDP bound without
  sampling; module docstring)."""
  limits.check_delta("delta", delta)
  return _epsilon(params.sigma, params.sampling_rate, params.num_levels,
                  delta, discretization, params.noise_multipliers,
                  params.replace_one)


def _epsilon(sigma: float, rate: float, num_levels: int, delta: float,
             discretization: float,
             multipliers: tuple[float, ...] = (),
             replace_one: bool = False) -> float:
  scales = [multipliers[r] if r < len(multipliers) else 1.0
            for r in range(num_levels)]
  return discrete_gaussian.epsilon([sigma * m for m in scales], rate, delta,
                                   discretization, replace_one)


def guarantee(params: NoisyTrieParams, delta: float | None = None
              ) -> Guarantee:
  """What a run with ``params`` guarantees at ``delta`` (None: the
  ``params.delta`` they were calibrated for) (module docstring):
  ``(epsilon, delta)``-DP, both directions, for ADD_OR_REMOVE_ONE and
  REPLACE_SPECIAL (and REPLACE_ONE with ``params.replace_one``), with
  parameters free of n."""
  if delta is None:
    if params.delta is None:
      raise ValueError("give the delta to state the guarantee at: these "
                       "parameters were not calibrated for one")
    delta = params.delta
  return stated(epsilon(params, delta), delta,
                _accounting(params.sampling_rate, delta),
                replace_one=params.replace_one)


def stated(epsilon_value: float, delta: float, accounting: str, *,
           replace_one: bool = False) -> Guarantee:
  """The noisy trie's guarantee at ``(epsilon_value, delta)`` as
  ``accounting`` found it: both directions, ADD_OR_REMOVE_ONE and
  REPLACE_SPECIAL (``replace_one``: REPLACE_ONE too, the accounting said
  so), what it covers, what is public, whom it trusts."""
  if replace_one:
    accounting = discrete_gaussian.replace_one_accounting(accounting)
  return Guarantee(epsilon=epsilon_value, delta=delta,
                   adjacencies=(REPLACE_ONE_ADJACENCIES if replace_one
                                else ADJACENCIES), two_sided=True,
                   accounting=accounting, n_source="unused", covers=COVERS,
                   public=PUBLIC, trust=TRUST)


def _accounting(sampling_rate: float, delta: float) -> str:
  """The accountant that answers for a run at ``sampling_rate`` and
  ``delta`` (:func:`triehh.theory.discrete_gaussian.epsilon`)."""
  if sampling_rate >= 1:
    return ACCOUNTING_EXACT
  return ACCOUNTING if delta >= SMALLEST_PLD_DELTA else ACCOUNTING_SAMPLED_RENYI


# The least base sigma searched: below a tenth of a vote the noise changes
# nothing a threshold decides, and the accountant's Gaussian spans about
# 1/sigma^2 losses (epsilon = 10^6 searched down to sigma = 1e-3, for
# minutes).
LEAST_SIGMA = 0.1


def smallest_sigma(num_levels: int, epsilon_target: float, delta: float, *,
                   sampling_rate: float = 1.0,
                   discretization: float = SEARCH_DISCRETIZATION,
                   noise_multipliers: tuple[float, ...] = (),
                   replace_one: bool = False) -> float:
  """The smallest base sigma (to a relative 1e-3, rounded up) whose run
  meets ``(epsilon_target, delta)`` at ``sampling_rate`` (``replace_one``:
  for ``REPLACE_ONE`` too): bisection on ``log(sigma)``, epsilon being
  decreasing in sigma."""

  def meets(sigma: float) -> bool:
    return _epsilon(sigma, sampling_rate, num_levels, delta,
                    discretization, noise_multipliers,
                    replace_one) <= epsilon_target

  hi = 1.0
  while not meets(hi):
    hi *= 2.0
  lo = hi / 2.0
  while meets(lo):
    if lo / 2.0 < LEAST_SIGMA:
      return lo  # more private than asked: the accountant reports it
    lo /= 2.0
  return noise_search.log_bisect(meets, lo, hi, _SIGMA_TOLERANCE)


def calibrate(num_levels: int, epsilon_target: float, delta: float, *,
              false_positive_rate: float = DEFAULT_FALSE_POSITIVE_RATE,
              sampling_rates: Sequence[float] = DEFAULT_SAMPLING_RATES,
              chars_per_level: int = 1,
              noise_multipliers: Sequence[float] = (),
              discretization: float = DEFAULT_DISCRETIZATION,
              replace_one: bool = False) -> NoisyTrieParams:
  """The parameters that meet ``(epsilon_target, delta)`` over
  ``num_levels`` rounds and need the smallest count to pass.

  Over the sampling rates q given, sigma is the smallest meeting the target
  at q (:func:`smallest_sigma`) and tau the threshold of
  ``false_positive_rate``; the chosen q minimises ``tau / q``
  (:attr:`NoisyTrieParams.smallest_count`). A rate is dismissed with one
  accountant call when sigma = (best tau / q so far) * q / z does not meet
  the target. The answer is checked by :func:`epsilon` on the
  ``discretization`` grid (sigma raised by 0.1 % steps until it meets it).
  ``noise_multipliers`` (fixed in advance) scale the first rounds' noise;
  sigma is their base. Below ``SMALLEST_PLD_DELTA`` sampled rates are
  accounted by the sampled RDP bound (looser than the PLD).
  ``replace_one``: accounted for ``REPLACE_ONE`` too (module docstring).
  Nothing here depends on n. The answer is remembered in the process and
  on disk (:mod:`triehh.theory.calibration_store`; a stored
  one is used when the accountant confirms it).
  """
  validation.check_int("num_levels", num_levels)
  multipliers = check_multipliers(noise_multipliers, num_levels)
  validation.check_positive("epsilon", epsilon_target)
  validation.check_positive("discretization", discretization)
  limits.check_delta("delta", delta)
  rates = sorted({validation.check_rate("sampling rate", q)
                  for q in sampling_rates}, reverse=True)
  if not rates:
    raise ValueError("sampling_rates is empty")
  sigma, rate = _remembered(num_levels, float(epsilon_target), float(delta),
                            tuple(rates), multipliers, float(discretization),
                            bool(replace_one))
  return NoisyTrieParams(sigma=sigma, num_levels=num_levels,
                         sampling_rate=rate,
                         false_positive_rate=false_positive_rate,
                         chars_per_level=chars_per_level,
                         noise_multipliers=multipliers,
                         replace_one=bool(replace_one))


@functools.lru_cache(maxsize=64)
def _remembered(num_levels: int, epsilon_target: float, delta: float,
                rates: tuple[float, ...], multipliers: tuple[float, ...],
                discretization: float, replace_one: bool = False
                ) -> tuple[float, float]:
  """``(sigma, rate)`` of :func:`calibrate`: once per process, and a
  stored answer (:mod:`calibration_store`) when the accountant confirms it
  (:func:`_confirmed`); a new one is stored. Neither alpha nor k changes
  them."""
  arguments = {"num_levels": num_levels, "epsilon": epsilon_target,
               "delta": delta, "sampling_rates": list(rates),
               "noise_multipliers": list(multipliers),
               "discretization": discretization}
  if replace_one:
    arguments["replace_one"] = True
  stored = calibration_store.load("noisy_trie", arguments, _SOURCES)
  if stored is not None:
    found = _confirmed(stored, num_levels, epsilon_target, delta, rates,
                       multipliers, discretization, replace_one)
    if found is not None:
      return found
  with progress.said_if_slow(
      f"calibrating the noisy trie for epsilon={epsilon_target:g}, "
      f"delta={delta:.3g} over {num_levels} rounds"):
    params = _calibrated(num_levels, epsilon_target, delta, list(rates),
                         DEFAULT_FALSE_POSITIVE_RATE, 1, multipliers,
                         discretization, replace_one)
  calibration_store.save("noisy_trie", arguments, _SOURCES,
                         {"sigma": params.sigma, "rate": params.sampling_rate})
  return params.sigma, params.sampling_rate


def _confirmed(stored: dict, num_levels: int, epsilon_target: float,
               delta: float, rates: tuple[float, ...],
               multipliers: tuple[float, ...], discretization: float,
               replace_one: bool = False) -> tuple[float, float] | None:
  """A stored ``(sigma, rate)`` if the rate is one of ``rates``, sigma
  meets the target on the ``discretization`` grid and sigma / (1 +
  tolerance) does not on the search's or that grid (or is below the least
  sigma searched), as :func:`_calibrated` answers; else None. The rate's
  optimality is the search's and is not re-checked."""
  sigma = calibration_store.finite_float(stored.get("sigma"))
  rate = calibration_store.finite_float(stored.get("rate"))
  if (sigma is None or rate is None or rate not in rates
      or not LEAST_SIGMA / 2.0 <= sigma <= 2.0**40):
    return None

  def meets(s: float, grid: float) -> bool:
    return _epsilon(s, rate, num_levels, delta, grid,
                    multipliers, replace_one) <= epsilon_target

  smaller = sigma / (1.0 + _SIGMA_TOLERANCE)
  if not meets(sigma, discretization) or (
      sigma >= 2.0 * LEAST_SIGMA and meets(smaller, SEARCH_DISCRETIZATION)
      and meets(smaller, discretization)):
    return None
  return sigma, rate


def _calibrated(num_levels: int, epsilon_target: float, delta: float,
                rates: list[float], false_positive_rate: float,
                chars_per_level: int, multipliers: tuple[float, ...],
                discretization: float, replace_one: bool = False
                ) -> NoisyTrieParams:
  """:func:`calibrate` on checked arguments."""
  best_sigma, best_rate = None, None
  for rate in rates:
    if best_sigma is not None:
      rival = best_sigma / best_rate * rate  # the same tau / q
      if rival < LEAST_SIGMA or _epsilon(
          rival, rate, num_levels, delta, SEARCH_DISCRETIZATION,
          multipliers, replace_one) > epsilon_target:
        continue  # (below the least sigma, this rate's tau / q is larger)
    sigma = smallest_sigma(num_levels, epsilon_target, delta,
                           sampling_rate=rate, noise_multipliers=multipliers,
                           replace_one=replace_one)
    if best_sigma is None or sigma / rate < best_sigma / best_rate:
      best_sigma, best_rate = sigma, rate
  while _epsilon(best_sigma, best_rate, num_levels, delta,
                 discretization, multipliers, replace_one) > epsilon_target:
    best_sigma *= 1.0 + _SIGMA_TOLERANCE
  return NoisyTrieParams(sigma=best_sigma, num_levels=num_levels,
                         sampling_rate=best_rate,
                         false_positive_rate=false_positive_rate,
                         chars_per_level=chars_per_level,
                         noise_multipliers=multipliers,
                         replace_one=replace_one)
