"""TrieHH as dp_accounting ``DpEvent``s, for composing with other releases.

A run of Poisson-sampled TrieHH is ``SelfComposedDpEvent(TrieHHLevelDpEvent
(sampling_rate, theta), count=L)``: L adaptive levels, each dominated by the
pair of :mod:`triehh.theory.poisson`. No built-in event has that privacy
loss, so :class:`TrieHHLevelDpEvent` is a custom event, and
:class:`PLDAccountant` (dp_accounting's, extended) knows its PLD: the
project's discretised distribution (pessimistic, both directions, the
L-fold composition computed exactly by direct convolution, then handed to
dp_accounting). A fixed-size run is :class:`TheoremOneDpEvent`, an
``(epsilon, delta)`` mechanism in the one direction Theorem 1 proves, for
``REPLACE_SPECIAL`` only.

The accountant's neighbouring relation picks the pair: ``ADD_OR_REMOVE_ONE``
and ``REPLACE_SPECIAL`` the level's pair, ``REPLACE_ONE`` its swap product
(:func:`triehh.theory.pld.swap_product`); for the noisy trie's
:class:`DiscreteGaussianDpEvent` the same: the round's two directions
composed (:func:`triehh.theory.discrete_gaussian.round_pld`). dp_accounting's own
``PoissonSampledDpEvent`` is ``ADD_OR_REMOVE_ONE`` only; under
``REPLACE_SPECIAL`` (a user whose words become the empty word adds
nothing, the same pair) this accountant composes it too.

Example::

    accountant = dp_events.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(dp_events.release_event(result))  # counts included
    accountant.compose(my_other_release_event)
    accountant.get_epsilon(target_delta=1e-10)

At a ``target_delta`` below what the composed events can reach (their
probability of an infinite privacy loss: a run's own delta is above it),
no epsilon holds: ``get_epsilon`` answers ``inf``, as dp_accounting's
accountants do, and warns (:class:`DeltaTooSmallWarning`) saying the
least delta the composition reaches.
"""

from __future__ import annotations

import functools
import math
import warnings

import attr
import numpy as np
import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant

from triehh.core import choices
from triehh.core import results
from triehh.core import validation
from triehh.theory import discrete_gaussian
from triehh.theory import discrete_laplace
from triehh.theory import distributed_noise
from triehh.theory import pld
from triehh.theory import poisson
from triehh.theory import sampled_renyi
from triehh.theory.adjacency import Adjacency

_Relation = dp_accounting.NeighboringRelation


@attr.s(frozen=True, slots=True, auto_attribs=True)
class TrieHHLevelDpEvent(dp_event.DpEvent):
  """One level of Poisson-sampled TrieHH: every user takes part with
  probability ``sampling_rate`` and votes for one extension of the trie;
  extensions with at least ``theta`` votes are released."""

  sampling_rate: float
  theta: int

  def __attrs_post_init__(self):
    object.__setattr__(self, "sampling_rate", validation.check_probability(
        "sampling_rate", self.sampling_rate,
        "the probability that a user takes part in a level"))
    object.__setattr__(self, "theta", validation.check_int("theta",
                                                           self.theta))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class TheoremOneDpEvent(dp_event.DpEvent):
  """A fixed-size TrieHH run, ``(epsilon, delta)``-DP by Theorem 1 in one
  direction (the user's word in D, the empty word in D')."""

  epsilon: float
  delta: float

  def __attrs_post_init__(self):
    epsilon = validation.check_real("epsilon", self.epsilon)
    if not 0.0 <= epsilon < math.inf:  # also refuses nan
      raise ValueError(f"epsilon must be a finite number >= 0, got "
                       f"epsilon={epsilon}")
    delta = validation.check_real("delta", self.delta)
    if not 0.0 <= delta < 1.0:  # also refuses nan
      raise ValueError(f"delta must be in [0, 1), got delta={delta}")
    object.__setattr__(self, "epsilon", epsilon)
    object.__setattr__(self, "delta", delta)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteGaussianDpEvent(dp_event.DpEvent):
  """The discrete Gaussian mechanism of parameter ``sigma`` on integer sums
  of sensitivity 1 (the noise ``P[X = x]`` proportional to ``exp(-x^2 / (2
  sigma^2))``), Poisson-sampled at ``sampling_rate`` (1: not sampled).

  Not a ``GaussianDpEvent``: built here because the continuous Gaussian's
  PLD under-counts the discrete law (at sigma = 2, delta = 1e-6 its epsilon
  leaves the discrete law a delta of 1.17e-6, checked in
  ``tests/theory/discrete_gaussian_test.py``), so a stand-in would let a
  PLD accountant report too small an epsilon. The discrete Gaussian has the
  continuous one's zCDP and RDP (CKS20, Theorem 4), so an RDP accountant
  could take ``GaussianDpEvent(sigma)`` for an unsampled round; sampled,
  that is not proven. dp_accounting's own accountants refuse this event
  (UnsupportedEventError, never a smaller epsilon); :class:`PLDAccountant`
  composes its PLD (:func:`triehh.theory.discrete_gaussian.round_pld`;
  under ``REPLACE_ONE`` the vote moving between two candidates, its two
  directions composed).
  """

  sigma: float
  sampling_rate: float = 1.0

  def __attrs_post_init__(self):
    _check_round(self, "sigma")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteLaplaceDpEvent(dp_event.DpEvent):
  """The discrete Laplace mechanism of scale ``scale`` on integer sums of
  sensitivity 1 (the noise ``P[X = x]`` proportional to ``exp(-|x| /
  scale)``), Poisson-sampled at ``sampling_rate`` (1: not sampled).

  Not a ``LaplaceDpEvent``: the continuous Laplace's PLD is not an upper
  bound on the discrete law's (at epsilon 0 its delta is ``1 -
  e^(-1/(2b))``, the discrete law's ``tanh(1/(2b))``, larger).
  :class:`PLDAccountant` composes dp_accounting's own PLD of the discrete
  Laplace (:func:`triehh.theory.discrete_laplace.round_pld`; under
  ``REPLACE_ONE``, its two directions composed); the round is also
  ``round_epsilon``-DP, pure (:mod:`triehh.theory.discrete_laplace`).
  """

  scale: float
  sampling_rate: float = 1.0

  def __attrs_post_init__(self):
    _check_round(self, "scale")


def _check_round(event, noise: str) -> None:
  """A one-round event's noise parameter ``noise`` (positive, finite) and
  sampling rate (in (0, 1]) checked and set as floats, or a ValueError
  naming the field."""
  value = validation.check_positive(noise, getattr(event, noise))
  if not math.isfinite(value):
    raise ValueError(f"{noise} must be finite, got {value}")
  object.__setattr__(event, noise, value)
  object.__setattr__(event, "sampling_rate", validation.check_rate(
      "sampling_rate", event.sampling_rate,
      "the probability that a user takes part in a round"))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class RenyiDpEvent(dp_event.DpEvent):
  """A mechanism known only to be ``(order, divergence)``-RDP, both
  directions, for ``ADD_OR_REMOVE_ONE`` and ``REPLACE_SPECIAL`` (and,
  with ``replace_one``, the divergence the swap's, ``REPLACE_ONE``): the
  noisy trie with its rates adapted to the frontier
  (:mod:`triehh.theory.noisy_plan`, *Rates adapted*), whose rounds are
  bounded at one order and at no other. :class:`RdpAccountant` composes
  it at that order (infinite at the others); the PLD accountants refuse
  it."""

  order: int
  divergence: float
  replace_one: bool = False

  def __attrs_post_init__(self):
    order = validation.check_int("order", self.order)
    if order < 2:
      raise ValueError(f"order must be at least 2, got {order}")
    divergence = validation.check_real("divergence", self.divergence)
    if not 0.0 <= divergence < math.inf:  # also refuses nan
      raise ValueError(f"divergence must be a finite number >= 0, got "
                       f"{divergence}")
    if not isinstance(self.replace_one, bool):
      raise TypeError(f"replace_one must be True or False, got "
                      f"{self.replace_one!r}")
    object.__setattr__(self, "order", order)
    object.__setattr__(self, "divergence", divergence)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SkellamDpEvent(dp_event.DpEvent):
  """Skellam noise ``Sk(mean) = Poisson(mean) - Poisson(mean)`` on integer
  sums one user moves by at most 1: a round of the noisy trie's distributed
  mode, its noise the ``h s_r`` of the shares the accountant counts
  (:mod:`triehh.theory.distributed_noise`). Accounted for
  ``REPLACE_SPECIAL`` and ``REPLACE_ONE`` (the user still a client; the
  latter its two directions composed), not ``ADD_OR_REMOVE_ONE`` (a
  client's own share and its delivery are seen); :class:`PLDAccountant`
  composes its PLD (:func:`triehh.theory.distributed_noise.round_pld`),
  :class:`RdpAccountant` its RDP bound (below delta = 1e-15),
  dp_accounting's own accountants refuse it."""

  mean: float

  def __attrs_post_init__(self):
    mean = validation.check_positive("mean", self.mean)
    object.__setattr__(self, "mean", mean)


def run_event(params: results.RunParams) -> dp_event.DpEvent:
  """The ``DpEvent`` of a run with these parameters (a guarantee needed)."""
  _check_run_params(params)
  if not params.has_guarantee:
    raise ValueError("the run has no privacy guarantee "
                     f"(accounting={params.accounting!r}): no DpEvent")
  if params.sampling == choices.POISSON:
    return dp_event.SelfComposedDpEvent(
        TrieHHLevelDpEvent(params.sampling_rate, params.theta), params.levels)
  return TheoremOneDpEvent(params.epsilon, params.delta)


def release_event(result: results.DiscoveryResult) -> dp_event.DpEvent:
  """The ``DpEvent`` of the whole of a TrieHH run: discovery
  (:func:`run_event`) and, when the run counted its words, the counting
  phase after it (``DiscreteGaussianDpEvent(sigma, q)``: the discrete
  Gaussian on integer sums of sensitivity 1, Poisson-sampled,
  :mod:`triehh.theory.counting`), composed. Export this,
  not ``run_event(result.params)``, which is discovery's alone."""
  discovery = run_event(result.params)
  counts = getattr(result, "counts", None)
  if counts is None:
    return discovery
  return dp_event.ComposedDpEvent([
      discovery, DiscreteGaussianDpEvent(counts.noise_std, counts.sample_rate)])


def _check_run_params(params) -> None:
  """TypeError unless ``params`` are a TrieHH run's ``RunParams``."""
  if not isinstance(params, results.RunParams):
    noisy = type(params).__name__ == "NoisyTrieParams"
    raise TypeError(
        "params must be a TrieHH run's RunParams (result.params), got "
        f"{type(params).__name__}"
        + ("; a noisy trie's DpEvent is triehh.theory.noisy_trie.dp_event"
           "(result.params), its guarantee result.guarantee" if noisy else ""))


def run_relation(params: results.RunParams) -> Adjacency:
  """The strongest relation the run's guarantee names: ``REPLACE_ONE`` if
  covered, else ``ADD_OR_REMOVE_ONE``, else ``REPLACE_SPECIAL``."""
  for relation in (Adjacency.REPLACE_ONE, Adjacency.ADD_OR_REMOVE_ONE,
                   Adjacency.REPLACE_SPECIAL):
    if relation.value in params.adjacencies:
      return relation
  raise ValueError(f"the run names no adjacency ({params.adjacency!r})")


@functools.lru_cache(maxsize=64)
def level_pld(event: TrieHHLevelDpEvent, count: int, relation: Adjacency,
              discretization: float,
              budget: float = 0.0) -> pld_lib.PrivacyLossDistribution:
  """The PLD of ``count`` composed levels under ``relation`` (REMOVE: the
  user present in the upper law; the two directions of a replace-one pair
  are the same). ``budget`` trims each level as
  :func:`triehh.theory.poisson.run_loss` does (pessimistic)."""
  loss = poisson.run_loss(event.sampling_rate, event.theta, count,
                          discretization, budget, adjacency=relation)
  return as_pld(loss)


def run_pld(params: results.RunParams,
            discretization: float) -> pld_lib.PrivacyLossDistribution:
  """The PLD of a run's :func:`run_event` under :func:`run_relation`, as
  its epsilon was computed (Poisson: each level trimmed by the accountant's
  budget for the run's delta; Theorem 1: ``from_privacy_parameters``, in
  the direction its proof covers)."""
  event = run_event(params)
  if isinstance(event, TheoremOneDpEvent):
    return pld_lib.from_privacy_parameters(
        dp_accounting.pld.common.DifferentialPrivacyParameters(
            event.epsilon, event.delta),
        value_discretization_interval=discretization)
  return level_pld(event.event, event.count, run_relation(params),
                   discretization,
                   poisson.trimming_budget(params.delta, params.levels))


def as_pld(loss: pld.TwoSided) -> pld_lib.PrivacyLossDistribution:
  """A two-sided loss as a dp_accounting ``PrivacyLossDistribution``
  (forward as REMOVE, reverse as ADD; pessimistic)."""

  def pmf(side: pld.LossDistribution):
    return pld_pmf.DensePLDPmf(side.discretization, side.lower, side.probs,
                               side.infinity, pessimistic_estimate=True)

  return pld_lib.PrivacyLossDistribution(pmf(loss.forward),
                                         pmf(loss.reverse))


class DeltaTooSmallWarning(UserWarning):
  """``get_epsilon`` was asked at a delta the composition cannot reach:
  it answers ``inf`` (:meth:`PLDAccountant.get_epsilon`)."""


# The server's noise on sums of sensitivity 1: each event's law, the field
# holding its parameter and its round's PLD (both directions; the swap's
# under REPLACE_ONE).
_SERVER_NOISE_ROUNDS = {
    DiscreteGaussianDpEvent: ("discrete Gaussian", "sigma",
                              discrete_gaussian.round_pld),
    DiscreteLaplaceDpEvent: ("discrete Laplace", "scale",
                             discrete_laplace.round_pld),
}


class PLDAccountant(pld_privacy_accountant.PLDAccountant):
  """dp_accounting's PLD accountant that also knows TrieHH's events.

  The first event composed replaces the identity distribution instead of
  being convolved with it: dp_accounting's FFT convolution has an absolute
  error near 1e-15, which at delta = 1e-12 moves epsilon by about 1 %, and
  a lone TrieHH run then reads exactly the project's own distribution.
  Later compositions are dp_accounting's.
  """

  def __init__(self, neighboring_relation=_Relation.ADD_OR_REMOVE_ONE,
               value_discretization_interval: float = 1e-4):
    super().__init__(neighboring_relation, value_discretization_interval)
    self._composed_any = False

  def get_epsilon(self, target_delta: float) -> float:
    """dp_accounting's epsilon at ``target_delta``; where none holds
    (``inf``: the delta is below the composition's probability of an
    infinite privacy loss), a :class:`DeltaTooSmallWarning` naming the
    least delta it reaches."""
    epsilon = super().get_epsilon(target_delta)
    if math.isinf(epsilon):
      least = self.least_delta()
      reach = (f" below {least:.3g}, the least the composed events reach "
               "(their probability of an infinite privacy loss)"
               if least is not None and least > target_delta else "")
      warnings.warn(
          f"get_epsilon: no epsilon holds at target_delta={target_delta:g}"
          f"{reach}, so the answer is inf; ask at a target_delta of at least "
          "the sum of the deltas composed (a run's own delta)",
          DeltaTooSmallWarning, stacklevel=2)
    return epsilon

  def least_delta(self) -> float | None:
    """The least delta any epsilon reaches: the larger infinity mass of the
    composed privacy loss distribution's two directions (None: unknown)."""
    masses = [getattr(getattr(self._pld, side, None), "_infinity_mass", None)
              for side in ("_pmf_remove", "_pmf_add")]
    masses = [float(m) for m in masses if m is not None]
    return max(masses) if masses else None

  def _compose_pld(self, other: pld_lib.PrivacyLossDistribution) -> None:
    self._pld = other if not self._composed_any else self._pld.compose(other)
    self._composed_any = True

  @staticmethod
  def _round_events(event: dp_event.DpEvent, relation: Adjacency):
    """``(relations covered, what it is, PLD of a discretisation)`` of the
    project's one-round events for ``relation``, None for any other."""
    for kind, (law, noise, round_pld) in _SERVER_NOISE_ROUNDS.items():
      if isinstance(event, kind):
        return ((Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_SPECIAL,
                 Adjacency.REPLACE_ONE),
                f"the {law} event is",
                lambda d, noise=noise, round_pld=round_pld: round_pld(
                    getattr(event, noise), event.sampling_rate, d,
                    relation is Adjacency.REPLACE_ONE))
    if isinstance(event, SkellamDpEvent):
      return ((Adjacency.REPLACE_SPECIAL, Adjacency.REPLACE_ONE),
              "the distributed Skellam shares are",
              lambda d: distributed_noise.round_pld(
                  event.mean, discretization=d,
                  replace_one=relation is Adjacency.REPLACE_ONE))
    if isinstance(event, TheoremOneDpEvent):
      return ((Adjacency.REPLACE_SPECIAL,),
              "Theorem 1 (one direction) is",
              lambda d: pld_lib.from_privacy_parameters(
                  dp_accounting.pld.common.DifferentialPrivacyParameters(
                      event.epsilon, event.delta),
                  value_discretization_interval=d))
    return None

  def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                     do_compose: bool):
    relation = Adjacency.of(self.neighboring_relation)
    if isinstance(event, TrieHHLevelDpEvent):
      if do_compose:
        self._compose_pld(level_pld(
            event, count, relation, self._value_discretization_interval))
      return None
    rounds = self._round_events(event, relation)
    if rounds is not None:
      covered, what, pld_of = rounds
      if relation not in covered:
        return pld_privacy_accountant.CompositionErrorDetails(
            invalid_event=event, error_message=(
                f"{what} accounted for "
                f"{' and '.join(r.value for r in covered)} only, not "
                f"{relation.value}"))
      if do_compose:
        one = pld_of(self._value_discretization_interval)
        self._compose_pld(one.self_compose(count) if count > 1 else one)
      return None
    if (relation is Adjacency.REPLACE_SPECIAL
        and isinstance(event, dp_event.PoissonSampledDpEvent)
        and isinstance(event.event, dp_event.GaussianDpEvent)
        and event.event.noise_multiplier > 0):
      if do_compose:
        self._compose_pld(pld_lib.from_gaussian_mechanism(
            standard_deviation=event.event.noise_multiplier,
            sampling_prob=event.sampling_probability,
            value_discretization_interval=self._value_discretization_interval
        ).self_compose(count))
      return None
    error = super()._maybe_compose(event, count, do_compose)
    if do_compose and error is None:
      self._composed_any = True  # dp_accounting composed into self._pld
    return error


class RdpAccountant(rdp_privacy_accountant.RdpAccountant):
  """dp_accounting's RDP accountant that also knows
  :class:`DiscreteGaussianDpEvent`, on the integer orders of
  :data:`triehh.theory.sampled_renyi.ORDERS`: a round's RDP is ``alpha /
  (2 sigma^2)`` unsampled (CKS20 Theorem 4), the sampled round's own
  divergence, both directions, when Poisson-sampled
  (:func:`triehh.theory.sampled_renyi.round_curve`). It answers at any
  delta, where the PLD answers ``inf`` below about 1e-15 (populations of
  10^8 users and more at delta = 1/n^2); looser than the PLD above.
  :class:`RenyiDpEvent` at its order (infinite at the others).
  ``ADD_OR_REMOVE_ONE``, and ``REPLACE_ONE`` for the discrete Gaussian
  (its two directions' RDP summed); dp_accounting's own events as its
  accountant composes them. :class:`DiscreteLaplaceDpEvent` at
  ``min(eps, alpha eps^2 / 2)``, eps its pure round epsilon
  (:func:`triehh.theory.discrete_laplace.round_epsilon`; the swap's under
  ``REPLACE_ONE``). :class:`SkellamDpEvent` too, for
  ``REPLACE_SPECIAL`` and ``REPLACE_ONE`` (twice), at the Skellam
  mechanism's RDP bound
  (:func:`triehh.theory.distributed_noise.renyi_bound`)."""

  def __init__(self, neighboring_relation=_Relation.ADD_OR_REMOVE_ONE):
    super().__init__(orders=sampled_renyi.ORDERS,
                     neighboring_relation=neighboring_relation)

  def _event_curve(self, event: dp_event.DpEvent):
    """``(relations covered, what it is, its RDP at the accountant's
    orders)`` of the project's events (the RDP None when the event's one
    order is not among them), None for any other."""
    orders = np.asarray(self._orders, dtype=np.float64)
    if isinstance(event, RenyiDpEvent):
      known = orders == event.order
      return ((_Relation.ADD_OR_REMOVE_ONE, _Relation.REPLACE_SPECIAL)
              + ((_Relation.REPLACE_ONE,) if event.replace_one else ()),
              "the Renyi event is",
              np.where(known, event.divergence, np.inf) if known.any()
              else None)
    if isinstance(event, SkellamDpEvent):
      swap = self._neighboring_relation == _Relation.REPLACE_ONE
      return ((_Relation.REPLACE_SPECIAL, _Relation.REPLACE_ONE),
              "the distributed Skellam shares are",
              distributed_noise.renyi_bound(event.mean, orders)
              * (2.0 if swap else 1.0))
    if isinstance(event, DiscreteLaplaceDpEvent):
      # Pure eps-DP is eps^2/2-zCDP (Bun and Steinke 2016, Proposition
      # 3.3), and no Renyi divergence exceeds the max divergence eps.
      eps = discrete_laplace.round_epsilon(
          event.scale, event.sampling_rate,
          self._neighboring_relation == _Relation.REPLACE_ONE)
      return ((_Relation.ADD_OR_REMOVE_ONE, _Relation.REPLACE_SPECIAL,
               _Relation.REPLACE_ONE),
              "the discrete Laplace event's RDP is",
              np.minimum(eps, orders * eps * eps / 2.0))
    if isinstance(event, DiscreteGaussianDpEvent):
      swap = self._neighboring_relation == _Relation.REPLACE_ONE
      return ((_Relation.ADD_OR_REMOVE_ONE, _Relation.REPLACE_ONE),
              "the discrete Gaussian event's RDP is",
              orders / (2.0 * event.sigma**2) * (2.0 if swap else 1.0)
              if event.sampling_rate >= 1.0
              else sampled_renyi.round_curve(event.sigma,
                                             event.sampling_rate, swap))
    return None

  def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                     do_compose: bool):
    found = self._event_curve(event)
    if found is None:
      return super()._maybe_compose(event, count, do_compose)
    covered, what, curve = found
    if self._neighboring_relation not in covered:
      return rdp_privacy_accountant.CompositionErrorDetails(
          invalid_event=event, error_message=(
              f"{what} accounted for "
              f"{' and '.join(r.name for r in covered)} only"))
    if curve is None:
      return rdp_privacy_accountant.CompositionErrorDetails(
          invalid_event=event, error_message=(
              f"order {event.order} is not among the accountant's"))
    if do_compose:
      self._rdp += count * curve
    return None
