"""The noisy trie's distributed noise: Skellam shares, and their accountant.

Skellam noise ``Sk(mu) = Poisson(mu) - Poisson(mu)`` (variance ``2 mu``;
Agarwal, Kairouz and Liu, NeurIPS 2021) is closed under sums: shares
``Sk(s)`` from m clients sum to exactly ``Sk(m s)``, whatever m, so the law
of a round's noise is known exactly and every engine draws it exactly
(:func:`triehh.core.discrete_noise.skellam`).

* *A round.* Replacing user u's words by the empty word (u still a
  client, still sending its share) changes one candidate's sum by 1, and
  the noise on it is the sum of the delivered shares. Conditioned on who
  delivered (which the server sees and which does not depend on anyone's
  words), u's share and every share beyond ``h`` honest ones of other
  clients are independent noise added to both sides (post-processing), so
  the round is dominated by the pair ``(Sk(h s) + 1, Sk(h s))``, built here
  from the two pmfs (dp_accounting's ``from_two_probability_mass_functions``,
  pessimistic, both directions, the tails beyond the support in the
  infinity mass). Sampling is not amplified: the server sees who delivered.
* *Replacing u's word by another* (``replace_one``, ``REPLACE_ONE``; u
  still a client): the vote moves from one candidate to another, on each
  the same delivered shares, so the pair is the product of the round's two
  directions, ``(Sk + 1, Sk)`` on one candidate and ``(Sk, Sk + 1)`` on
  the other: its PLD the round's composed with its directions swapped,
  its RDP the two directions' summed (twice the bound below, the Skellam
  law being symmetric). A vote that only leaves or only joins is a
  marginal of it.
* *Rounds.* The rounds' means are fixed before the data is read; the PLDs
  compose (:func:`epsilon`).
* *Below delta = 1e-15*, where dp_accounting's PLD answers epsilon = inf
  (populations of 10^8 users and more at delta = 1/n^2): Renyi DP. The
  Skellam mechanism of mean mu at L1 and L2 sensitivity 1 is (alpha,
  ``alpha / (4 mu) + min((2 alpha + 5) / (16 mu^2), 3 / (4 mu))``)-RDP for
  every order alpha > 1 (Agarwal, Kairouz and Liu, NeurIPS 2021, their
  Skellam RDP bound; both directions, the pair being symmetric); rounds
  add (Mironov 2017, Proposition 1) and CKS20 Proposition 12 converts at
  the best of :data:`triehh.theory.sampled_renyi.ORDERS`
  (:func:`renyi_epsilon`).
* *Shortfalls.* The plan assumes each sampled client fails to deliver with
  probability at most ``dropout``, independently; ``h`` (min clients) is
  chosen so that ``P[Binomial(n - 1, q (1 - dropout)) < h]``, summed over
  the rounds, is at most ``delta_short``, which the stated delta includes. A
  round whose delivered shares minus one are fewer than h is not released.
* *Wrap-around.* The secure sum is modulo ``2^bits``; a sum outside
  ``[-2^(bits-1), 2^(bits-1))`` wraps, with probability at most
  :attr:`DistributedNoise.wrap_probability` per candidate: post-processing
  of the noisy sum (utility, not privacy).

``docs/noisy-trie.md`` ("Distributed noise") gives the argument in full.
"""

from __future__ import annotations

import dataclasses
import fractions
import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from triehh.core import discrete_noise
from triehh.core import validation
from triehh.theory import discrete_gaussian
from triehh.theory import noise_search
from triehh.theory import sampled_renyi
from triehh.theory.adjacency import Adjacency

ACCOUNTING = "Skellam shares (PLD from the pmfs, two-sided)"
ACCOUNTING_RENYI = ("Skellam shares (RDP, Agarwal-Kairouz-Liu bound, "
                    "two-sided)")
# Whom a run with Skellam shares trusts, and for what.
TRUST = ("the secure sum: the server sees which clients delivered a share, "
         "never an un-noised sum (only the sum modulo 2^b); the h clients "
         "whose shares are counted add them honestly and do not collude "
         "with the server; the server samples and thresholds")
DEFAULT_DROPOUT = 0.1
# The part of delta spent on a round short of h honest shares.
DEFAULT_SHORT_SHARE = 0.1
DEFAULT_DISCRETIZATION = 1e-4
SEARCH_DISCRETIZATION = 1e-3
# The pmf's support: its tails beyond have mass below 1e-40.
_TAIL_MASS = 1e-40
# A share's mean is rounded up to a multiple of 2^-bits, its relative
# increase at most 2^-_SHARE_PRECISION_BITS (bits at most 40).
_SHARE_PRECISION_BITS = 10
_MAX_SHARE_BITS = 40
# The chance a candidate's sum wraps around the modulus, at most.
WRAP_BOUND = 1e-12
MAX_BITS = 31
_MEAN_TOLERANCE = 1e-3
# Below this delta dp_accounting's PLD answers epsilon = inf.
SMALLEST_PLD_DELTA = discrete_gaussian.SMALLEST_PLD_DELTA
# The largest base mean searched: the samplers' largest, 2^20.
_MAX_SEARCHED_MEAN = float(2**20)


def _support(mean: float) -> int:
  """T: ``P[|Sk(mean)| > T]`` below ``_TAIL_MASS``."""
  t = int(math.ceil(12.0 * math.sqrt(2.0 * mean))) + 8
  while discrete_noise.skellam_tail(mean, t + 1) > _TAIL_MASS / 2:
    t *= 2
  return t


def _log_pmfs(mean: float, sampling_rate: float
              ) -> tuple[dict, dict]:
  """``log`` pmfs of the pair: upper ``(1 - q) Sk + q (Sk + 1)``, lower
  ``Sk``, on ``[-T, T + 1]``, each tail's mass as an outcome of its own
  (in the infinity mass where it is the upper's)."""
  t = _support(mean)
  x = np.arange(-t, t + 2)
  lower = discrete_noise.skellam_pmf(mean, x)
  upper = (1.0 - sampling_rate) * lower + sampling_rate * (
      discrete_noise.skellam_pmf(mean, x - 1))
  tail = discrete_noise.skellam_tail(mean, t + 1)  # each side, lower
  tail_upper = tail + sampling_rate * discrete_noise.skellam_pmf(
      mean, np.array([t + 1]))[0]
  with np.errstate(divide="ignore"):
    log_lower = dict(zip(x.tolist(), np.log(lower).tolist()))
    log_upper = dict(zip(x.tolist(), np.log(upper).tolist()))
  log_upper["upper tails"] = math.log(2.0 * tail_upper)
  log_lower["lower tails"] = math.log(2.0 * tail_upper)
  return log_lower, log_upper


@functools.lru_cache(maxsize=128)
def round_pld(mean: float, sampling_rate: float = 1.0,
              discretization: float = DEFAULT_DISCRETIZATION,
              replace_one: bool = False):
  """One round's dp_accounting ``PrivacyLossDistribution``: Skellam noise
  of ``mean`` on a sum one user moves by 1, Poisson-sampled at
  ``sampling_rate`` (the mixture), both directions, pessimistic;
  ``replace_one``: composed with its directions swapped (module
  docstring)."""
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  mean = validation.check_positive("mean", mean)
  rate = validation.check_rate("sampling_rate", sampling_rate)
  log_lower, log_upper = _log_pmfs(mean, rate)
  # One direction each (dp_accounting 0.4's symmetric=False path fails),
  # joined as the remove and add parts of one distribution.
  remove, add = (pld_lib.from_two_probability_mass_functions(
      lower, upper, pessimistic_estimate=True,
      value_discretization_interval=discretization)
                 for lower, upper in ((log_lower, log_upper),
                                      (log_upper, log_lower)))
  one = pld_lib.PrivacyLossDistribution(remove._pmf_remove, add._pmf_remove)  # pylint: disable=protected-access
  return discrete_gaussian.with_swap(one) if replace_one else one


def composed_pld(means: Sequence[float], sampling_rate: float = 1.0,
                 discretization: float = DEFAULT_DISCRETIZATION,
                 replace_one: bool = False):
  """The PLD of rounds of Skellam ``means`` (adaptive composition)."""
  return discrete_gaussian.compose_rounds(
      means, lambda mean: round_pld(mean, sampling_rate, discretization,
                                    replace_one))


def epsilon(means: Sequence[float], delta: float, *,
            sampling_rate: float = 1.0,
            discretization: float = DEFAULT_DISCRETIZATION,
            replace_one: bool = False) -> float:
  """epsilon at ``delta`` of rounds with Skellam noise of ``means`` on sums
  of sensitivity 1, both directions (module docstring): their PLD, or
  below ``SMALLEST_PLD_DELTA`` their RDP (:func:`renyi_epsilon`, which
  holds sampled or not: a sampled round's pair is a mixture of equal pairs
  and the unsampled one, and Renyi divergence is jointly quasi-convex).
  ``replace_one``: for ``REPLACE_ONE`` (module docstring)."""
  if not means:
    raise ValueError("means is empty: no round to account for")
  delta = validation.check_probability("delta", delta)
  if delta < SMALLEST_PLD_DELTA:
    return renyi_epsilon(means, delta, replace_one)
  pld = composed_pld(means, sampling_rate, discretization, replace_one)
  return float(pld.get_epsilon_for_delta(delta))


def renyi_bound(mean: float, orders) -> np.ndarray:
  """The Skellam mechanism's RDP at each of ``orders`` (> 1), mean mu, L1
  and L2 sensitivity 1: ``alpha / (4 mu) + min((2 alpha + 5) / (16 mu^2),
  3 / (4 mu))`` (Agarwal, Kairouz and Liu, NeurIPS 2021; module
  docstring)."""
  mu = validation.check_positive("mean", float(mean))
  alpha = np.asarray(orders, dtype=np.float64)
  return alpha / (4.0 * mu) + np.minimum((2.0 * alpha + 5.0) / (16.0 * mu
                                                                  * mu),
                                         3.0 / (4.0 * mu))


def renyi_epsilon(means: Sequence[float], delta: float,
                  replace_one: bool = False) -> float:
  """epsilon at ``delta`` of Skellam rounds of ``means`` by their RDP
  (:func:`renyi_bound`, summed over the rounds, twice for
  ``replace_one``, converted by CKS20 Proposition 12 at the best of
  :data:`triehh.theory.sampled_renyi.ORDERS`); at any delta."""
  if not means:
    raise ValueError("means is empty: no round to account for")
  delta = validation.check_probability("delta", delta)
  curve = sum(renyi_bound(m, sampled_renyi.ORDERS) for m in means) * (
      2.0 if replace_one else 1.0)
  return sampled_renyi.epsilon_from_curve(curve, delta)


def accounting(delta: float, replace_one: bool = False) -> str:
  """The accountant's name for a guarantee at ``delta`` (``delta_short``
  taken off): the PLD's, or below ``SMALLEST_PLD_DELTA`` the RDP's
  (``replace_one``: saying the swap)."""
  name = ACCOUNTING if delta >= SMALLEST_PLD_DELTA else ACCOUNTING_RENYI
  return discrete_gaussian.replace_one_accounting(name) if replace_one else name


def adjacencies(replace_one: bool) -> tuple[Adjacency, ...]:
  """The relations the shares' guarantee covers: ``REPLACE_SPECIAL``, and
  ``REPLACE_ONE`` when accounted for it (never adding or removing a
  client: its share and its delivery are seen)."""
  return ((Adjacency.REPLACE_ONE, Adjacency.REPLACE_SPECIAL) if replace_one
          else (Adjacency.REPLACE_SPECIAL,))


def neighbours(replace_one: bool) -> str:
  """The neighbours the shares' guarantee covers, in words."""
  return ("for a user's words replaced by the empty word"
          + (" or by other words" if replace_one else "")
          + " (the user still a client: its share and its delivery are "
          "seen, so adding or removing a client is not covered)")


def smallest_mean(epsilon_target: float, delta: float,
                  multipliers: Sequence[float], *,
                  discretization: float = SEARCH_DISCRETIZATION,
                  replace_one: bool = False) -> float:
  """The smallest base mean mu (to a relative 1e-3, rounded up) whose
  rounds of means ``mu m_r^2`` meet ``(epsilon_target, delta)`` unsampled:
  bisection on ``log mu`` (epsilon decreases in mu: a larger Skellam is a
  smaller one plus independent noise). ValueError if no mean up to 2^20
  meets it (the PLD's epsilon is inf at too small a delta)."""
  squares = [float(m) ** 2 for m in multipliers]

  def meets(mu: float) -> bool:
    return epsilon([mu * s for s in squares], delta,
                   discretization=discretization,
                   replace_one=replace_one) <= epsilon_target

  mean = noise_search.smallest(meets, _MEAN_TOLERANCE, floor=1e-3,
                               ceiling=_MAX_SEARCHED_MEAN)
  if mean is None:
    raise ValueError(
        f"no Skellam mean up to {_MAX_SEARCHED_MEAN:g} meets "
        f"epsilon={epsilon_target:g} at delta={delta:g} over "
        f"{len(squares)} rounds: give a larger delta or epsilon")
  return mean


def threshold_for(mean: float, false_positive_rate: float) -> int:
  """The smallest integer tau with ``P[Sk(mean) >= tau] <=
  false_positive_rate`` (the Skellam tail, summed)."""
  mean = validation.check_positive("mean", float(mean))
  alpha = validation.check_probability("false_positive_rate",
                                       false_positive_rate)
  tail = functools.partial(discrete_noise.skellam_tail, mean)
  sd = math.sqrt(2.0 * mean)
  tau = max(1, int(sd))
  while tail(tau) > alpha:
    tau = tau + max(1, int(sd / 4))
  while tau > -int(40 * sd) - 2 and tail(tau - 1) <= alpha:
    tau -= 1
  return int(tau)


def threshold_and_tail(mean: float, false_positive_rate: float
                       ) -> tuple[int, float]:
  """(tau, alpha): :func:`threshold_for` at ``mean`` and the Skellam tail
  there, the rate a candidate nobody votes for passes at."""
  tau = threshold_for(mean, false_positive_rate)
  return tau, discrete_noise.skellam_tail(mean, tau)


def shortfall_probability(num_clients: int, sampling_rate: float,
                          dropout: float, min_clients: int) -> float:
  """``P[Binomial(n - 1, q (1 - dropout)) < h]``: the chance a round has
  fewer than h delivered shares besides one user's."""
  p = sampling_rate * (1.0 - dropout)
  return float(stats.binom.cdf(min_clients - 1, num_clients - 1, p))


def min_clients_for(num_clients: int, sampling_rate: float, dropout: float,
                    delta_short: float, num_rounds: int) -> int:
  """h, the most shares counted with ``num_rounds`` times
  :func:`shortfall_probability` at most ``delta_short``; ValueError if
  not even 1."""
  per_round = delta_short / num_rounds
  p = sampling_rate * (1.0 - dropout)
  h = int(stats.binom.ppf(per_round, num_clients - 1, p))
  while h > 0 and shortfall_probability(num_clients, sampling_rate, dropout,
                                        h) > per_round:
    h -= 1
  while shortfall_probability(num_clients, sampling_rate, dropout,
                              h + 1) <= per_round:
    h += 1
  if h < 1:
    raise ValueError(
        f"num_clients={num_clients:,} at sampling_rate={sampling_rate:g} "
        f"and dropout={dropout:g} cannot promise one honest share per "
        f"round but with probability {delta_short:g}: more clients, a "
        "larger delta or a smaller dropout")
  return h


def share_mean(total: float, min_clients: int) -> fractions.Fraction:
  """A client's share mean: ``total / h`` rounded *up* to a multiple of
  ``2^-b`` (more noise, never less), b the least giving a relative
  increase of at most 2^-10 (b at most 40)."""
  exact = fractions.Fraction(total) / min_clients
  bits = min(_MAX_SHARE_BITS, max(0, _SHARE_PRECISION_BITS - math.floor(
      math.log2(exact))))
  scale = 1 << bits
  return fractions.Fraction(math.ceil(exact * scale), scale)


def bits_for(num_clients: int, largest_mean: float) -> int:
  """The secure sum's modulus bits: the least b with the votes (at most
  n) and noise ``Sk(n s)`` outside ``[-2^(b-1), 2^(b-1))`` with probability
  at most :data:`WRAP_BOUND`; ValueError beyond :data:`MAX_BITS`."""
  for bits in range(2, MAX_BITS + 1):
    half = 1 << (bits - 1)
    if half <= num_clients:
      continue
    if 2.0 * discrete_noise.skellam_tail(largest_mean,
                                         half - num_clients) <= WRAP_BOUND:
      return bits
  raise ValueError(f"num_clients={num_clients:,} needs a secure sum of more "
                   f"than {MAX_BITS} bits")


@dataclasses.dataclass(frozen=True)
class DistributedNoise:
  """The distributed noise of a run, fixed before the data is read.

  Attributes:
    num_clients: n, the declared population (every client a user).
    sampling_rate: q, each client's chance of taking part in a round.
    dropout: beta, the assumed bound on a sampled client's chance of not
      delivering (independently of everything else).
    min_clients: h, the other clients' shares the accountant counts.
    share_means: each round's share mean s_r (power-of-two denominator).
    thresholds: each round's tau_r, from the tail of ``Sk(n s_r)`` (the
      most shares a round can have) at the false-positive rate.
    bits: the secure sum's modulus ``2^bits``.
    delta_short: the rounds' summed chance of fewer than h other shares.
    replace_one: accounted for ``REPLACE_ONE`` too (module docstring).
  """

  num_clients: int
  sampling_rate: float
  dropout: float
  min_clients: int
  share_means: tuple[fractions.Fraction, ...]
  thresholds: tuple[int, ...]
  bits: int
  delta_short: float
  replace_one: bool = False

  def __post_init__(self):
    validation.check_int("num_clients", self.num_clients)
    validation.check_rate("sampling_rate", self.sampling_rate)
    check_dropout(self.dropout)
    validation.check_int("min_clients", self.min_clients)
    if self.min_clients >= self.num_clients:
      raise ValueError(f"min_clients={self.min_clients} must be below "
                       f"num_clients={self.num_clients}")
    if not self.share_means or len(self.share_means) != len(self.thresholds):
      raise ValueError("share_means and thresholds must give every round")
    for s in self.share_means:
      if not isinstance(s, fractions.Fraction) or s <= 0 or (
          s.denominator & (s.denominator - 1)):
        raise ValueError(f"share_means must be positive fractions with "
                         f"power-of-two denominators, got {s!r}")
    validation.check_int("bits", self.bits, high=MAX_BITS)

  @property
  def num_rounds(self) -> int:
    return len(self.share_means)

  @property
  def accounted_means(self) -> tuple[float, ...]:
    """``h s_r``: the Skellam noise the accountant counts per round."""
    return tuple(float(self.min_clients * s) for s in self.share_means)

  def releases(self, delivered: int) -> bool:
    """Whether a round of ``delivered`` shares is released: at least h
    besides one."""
    return delivered - 1 >= self.min_clients

  def noise_mean(self, r: int, delivered: int) -> fractions.Fraction:
    """The summed shares' Skellam mean in round r: ``m s_r``."""
    return delivered * self.share_means[r]

  def false_positive_rate(self, r: int) -> float:
    """At most: ``P[Sk(n s_r) >= tau_r]``."""
    return discrete_noise.skellam_tail(
        float(self.num_clients * self.share_means[r]), self.thresholds[r])

  @property
  def wrap_probability(self) -> float:
    """A bound on a candidate's sum wrapping around the modulus."""
    half = 1 << (self.bits - 1)
    worst = float(self.num_clients * max(self.share_means))
    return 2.0 * discrete_noise.skellam_tail(worst, half - self.num_clients)

  def epsilon(self, delta: float, *,
              discretization: float = DEFAULT_DISCRETIZATION) -> float:
    """epsilon at ``delta`` (``delta_short`` included: :func:`epsilon`
    at ``delta - delta_short``)."""
    if delta <= self.delta_short:
      raise ValueError(f"delta={delta:g} must exceed delta_short="
                       f"{self.delta_short:g}")
    return epsilon(self.accounted_means, delta - self.delta_short,
                   discretization=discretization,
                   replace_one=self.replace_one)

  def describe(self, modulus: str | None = None) -> str:
    """The assumptions, in one line, for a guarantee's label; ``modulus``
    (None: this plan's one modulus ``2^bits``) says the secure sums'."""
    if modulus is None:
      modulus = (f"secure sum modulo 2^{self.bits} (wrap-around at most "
                 f"{self.wrap_probability:.2g} per candidate, utility only)")
    return (f"Skellam shares: at least h={self.min_clients:,} other "
            f"clients' shares per released round (n={self.num_clients:,}, "
            f"q={self.sampling_rate:g}, dropout at most {self.dropout:g} "
            "per sampled client, independently; a round short of h is not "
            f"released; delta_short={self.delta_short:.3g} included), "
            + modulus)


def check_dropout(dropout: float) -> float:
  """``dropout`` in [0, 1); ValueError naming it."""
  value = validation.check_real("dropout", dropout)
  if not 0.0 <= value < 1.0:
    raise ValueError(f"dropout must be in [0, 1) (a sampled client's "
                     f"chance of not delivering), got {dropout!r}")
  return float(value)


def plan(num_clients: int, sampling_rate: float, epsilon_target: float,
         delta: float, multipliers: Sequence[float],
         false_positive_rate: float, *, dropout: float = DEFAULT_DROPOUT,
         short_share: float = DEFAULT_SHORT_SHARE,
         replace_one: bool = False) -> DistributedNoise:
  """The distributed noise meeting ``(epsilon_target, delta)`` over
  ``len(multipliers)`` rounds (round r's variance the base's times
  ``m_r^2``), from public values only: h from n, q, dropout and
  ``short_share`` of delta; the base mean by :func:`smallest_mean` at the
  rest of delta; shares rounded up; thresholds at the false-positive rate.
  ``replace_one``: for ``REPLACE_ONE`` too (module docstring)."""
  validation.check_int("num_clients", num_clients)
  if num_clients < 2:
    raise ValueError(f"num_clients must be at least 2, got {num_clients}")
  check_dropout(dropout)
  delta = validation.check_probability("delta", delta)
  short = validation.check_probability("short_share", short_share)
  delta_short = delta * short
  h = min_clients_for(num_clients, sampling_rate, dropout, delta_short,
                      len(multipliers))
  mu = smallest_mean(epsilon_target, delta - delta_short, multipliers,
                     replace_one=replace_one)
  shares = tuple(share_mean(mu * float(m) ** 2, h) for m in multipliers)
  while epsilon([float(h * s) for s in shares], delta - delta_short,
                replace_one=replace_one) > epsilon_target:
    shares = tuple(share_mean(float(s) * (1 + _MEAN_TOLERANCE) * h, h)
                   for s in shares)
  thresholds = tuple(threshold_for(float(num_clients * s),
                                   false_positive_rate) for s in shares)
  bits = bits_for(num_clients, float(num_clients * max(shares)))
  return DistributedNoise(num_clients=num_clients,
                          sampling_rate=float(sampling_rate),
                          dropout=float(dropout), min_clients=h,
                          share_means=shares, thresholds=thresholds,
                          bits=bits, delta_short=delta_short,
                          replace_one=bool(replace_one))
