"""The discrete Gaussian mechanism's privacy: its PLD, composed, and zCDP.

Every noise that protects a release is drawn exactly from the discrete
Gaussian ``N_Z(0, sigma^2)`` (:mod:`triehh.core.discrete_noise`; Canonne,
Kamath and Steinke 2020, "CKS20"), added to integer sums of sensitivity 1.
Its accountant is for that law, not the continuous Gaussian's:

* *PLD.* dp_accounting's ``from_discrete_gaussian_mechanism`` (pessimistic,
  both directions when Poisson-sampled), with the noise's support truncated
  at ``T = ceil(sigma * sqrt(120 ln 10)) + 1``. The sampler does not
  truncate: coupling the two laws, they differ on an event of probability
  m = ``P[|X| > T]`` (below 1e-59) per round, so delta grows by at most
  ``R m (1 + e^epsilon)``. :func:`epsilon` asks the PLD for epsilon at
  ``delta (1 - 1e-3)`` and checks that slack fits in the rest.
* *zCDP.* CKS20 Theorem 4: the discrete Gaussian is ``1 / (2 sigma^2)``-zCDP
  at sensitivity 1, as the continuous one; R rounds compose to
  ``rho = sum_r 1 / (2 sigma_r^2)`` and CKS20 Corollary 13 converts to
  ``(epsilon, delta)`` at any delta. Looser than the PLD; used where the
  PLD cannot answer (delta below 1e-15) or cannot hold the losses
  (:func:`epsilon`). It holds for Poisson-sampled rounds too, unamplified:
  a sampled round's output law, given the rounds before, is a mixture
  over the sample of pairs that are either equal or the unsampled round on
  neighbouring inputs, and Renyi divergence is jointly quasi-convex (van
  Erven and Harremoes 2014, Theorem 13), so each sampled round is
  ``1 / (2 sigma^2)``-zCDP in both directions and the rounds compose
  adaptively (Bun and Steinke 2016, Lemma 2.3).
* *Replacing one user's word* (``replace_one``, ``REPLACE_ONE``): the
  vote leaves one coordinate and joins another, so a round's pair is the
  product of its two directions' pairs: its PLD the composition of the
  round's PLD with its directions swapped (the same in both directions),
  its zCDP ``1 / sigma^2`` (L2 sensitivity sqrt(2)), its sampled RDP the
  sum of the two directions' (:mod:`triehh.theory.sampled_renyi`). A vote
  that only leaves, or only joins, is a marginal of that pair: covered.
* *Sampled RDP.* Below 1e-15 a Poisson-sampled run also has its rounds'
  own Renyi divergence, both directions, at integer orders
  (:mod:`triehh.theory.sampled_renyi`), amplified by sampling;
  :func:`epsilon` takes the smaller of the two.

The continuous Gaussian's accountant is *not* an upper bound here: at
sigma = 2 and delta = 1e-6 the continuous epsilon (2.254) leaves the discrete
law a delta of 1.17e-6 (the hockey-stick divergence summed from the pmf;
``tests/theory/discrete_gaussian_test.py``), so its events are not stand-ins
for a PLD accountant (:mod:`triehh.theory.dp_events`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from scipy import optimize

from triehh.core import discrete_noise
from triehh.theory import sampled_renyi

# Below this delta dp_accounting's PLD answers epsilon = inf (floating
# point); the zCDP bound answers at any delta.
SMALLEST_PLD_DELTA = 1e-15
# The part of delta kept for the truncation's slack (module docstring).
_SLACK_SHARE = 1e-3
# The noise's support in the PLD: P[|X| > T] below 1e-59.
_TRUNCATION_SIGMAS = math.sqrt(120.0 * math.log(10.0))


def truncation_bound(sigma: float) -> int:
  """T, where the PLD truncates the noise's support."""
  return int(math.ceil(sigma * _TRUNCATION_SIGMAS)) + 1


def truncated_mass(sigma: float) -> float:
  """``P[|X| > T]`` of the discrete Gaussian, doubled (a safe margin on
  its double-precision sum)."""
  return 4.0 * discrete_noise.discrete_gaussian_tail(
      sigma, truncation_bound(sigma) + 1)


# Cached: a calibration asks for the same (sigma, q, grid) many times, and a
# build costs up to a second at small sigma. Read only (compose returns new).
@functools.lru_cache(maxsize=128)
def round_pld(sigma: float, sampling_rate: float, discretization: float,
              replace_one: bool = False):
  """One round's dp_accounting ``PrivacyLossDistribution``: the discrete
  Gaussian of ``sigma`` at sensitivity 1, Poisson-sampled at
  ``sampling_rate`` (both directions) or not (pessimistic);
  ``replace_one``: composed with its directions swapped (module
  docstring)."""
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  one = pld_lib.from_discrete_gaussian_mechanism(
      sigma, sensitivity=1, truncation_bound=truncation_bound(sigma),
      pessimistic_estimate=True,
      value_discretization_interval=discretization,
      sampling_prob=sampling_rate)
  return with_swap(one) if replace_one else one


def with_swap(pld):
  """A round's dp_accounting PLD composed with its directions swapped:
  the loss of a vote that leaves one candidate and joins another
  (``REPLACE_ONE``, module docstring), the same in both directions."""
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  return pld.compose(pld_lib.PrivacyLossDistribution(
      pld._pmf_add, pld._pmf_remove))  # pylint: disable=protected-access


def composed_pld(sigmas: Sequence[float], sampling_rate: float,
                 discretization: float, replace_one: bool = False):
  """The PLD of rounds at ``sigmas`` (adaptive composition; rounds of one
  sigma self-composed)."""
  return compose_rounds(
      sigmas, lambda sigma: round_pld(sigma, sampling_rate, discretization,
                                      replace_one))


def compose_rounds(parameters: Sequence[float], one_round):
  """The adaptive composition of rounds whose PLD is ``one_round(p)`` for
  each ``p`` of ``parameters``: each distinct parameter's PLD built once
  and self-composed over its rounds."""
  counts: dict[float, int] = {}
  for parameter in parameters:
    counts[float(parameter)] = counts.get(float(parameter), 0) + 1
  composed = None
  for parameter, count in counts.items():
    one = one_round(parameter)
    part = one.self_compose(count) if count > 1 else one
    composed = part if composed is None else composed.compose(part)
  return composed


def pld_epsilon(sigmas: Sequence[float], sampling_rate: float, delta: float,
                discretization: float, replace_one: bool = False) -> float:
  """epsilon at ``delta`` of the untruncated rounds by their PLD (module
  docstring); inf if the truncation's slack does not fit."""
  pld = composed_pld(sigmas, sampling_rate, discretization, replace_one)
  eps = float(pld.get_epsilon_for_delta(delta * (1.0 - _SLACK_SHARE)))
  if not math.isfinite(eps):
    return math.inf
  # Replacing one, two coordinates' laws are truncated in a round.
  slack = (2 if replace_one else 1) * sum(
      truncated_mass(s) for s in sigmas) * (1.0 + math.exp(min(eps, 700.0)))
  return eps if slack <= _SLACK_SHARE * delta else math.inf


def zcdp_epsilon(sigmas: Sequence[float], delta: float,
                 replace_one: bool = False) -> float:
  """epsilon at ``delta`` of the unsampled rounds from their zCDP (CKS20
  Theorem 4 and Corollary 13; ``replace_one``: twice the rho, module
  docstring), minimised over the Renyi order."""
  rho = sum(0.5 / (s * s) for s in sigmas) * (2.0 if replace_one else 1.0)
  log_delta = math.log(delta)

  def eps_at(log_alpha_minus_one: float) -> float:
    am1 = math.exp(log_alpha_minus_one)  # alpha - 1 > 0
    alpha = 1.0 + am1
    return (alpha * rho + (-log_delta - math.log(am1)
                           + alpha * math.log1p(-1.0 / alpha)) / am1)

  best = optimize.minimize_scalar(eps_at, bounds=(-20.0, 40.0),
                                  method="bounded",
                                  options={"xatol": 1e-10})
  # Any order gives a valid bound: the minimiser's, rounded up a little.
  return max(0.0, float(best.fun)) * (1.0 + 1e-9)


def epsilon(sigmas: Sequence[float], sampling_rate: float, delta: float,
            discretization: float, replace_one: bool = False) -> float:
  """The rounds' epsilon at ``delta``, both directions (``replace_one``:
  for ``REPLACE_ONE``, module docstring): the PLD's
  (:func:`pld_epsilon`, Poisson-sampled at ``sampling_rate``), without
  sampling no more than the zCDP bound's (:func:`zcdp_epsilon`); below
  ``SMALLEST_PLD_DELTA`` the zCDP bound, which holds sampled or not, and
  sampled no more than the sampled RDP bound
  (:func:`triehh.theory.sampled_renyi.epsilon`) (module docstring)."""
  if delta < SMALLEST_PLD_DELTA:
    unsampled = zcdp_epsilon(sigmas, delta, replace_one)
    if sampling_rate >= 1.0:
      return unsampled
    return min(unsampled, sampled_renyi.epsilon(sigmas, sampling_rate, delta,
                                                replace_one))
  if sampling_rate >= 1.0:
    return min(zcdp_epsilon(sigmas, delta, replace_one),
               pld_epsilon(sigmas, 1.0, delta, discretization, replace_one))
  return pld_epsilon(sigmas, sampling_rate, delta, discretization,
                     replace_one)


def replace_one_accounting(accounting: str) -> str:
  """An accountant's name ``"... (..., two-sided)"`` said for the swap of
  ``REPLACE_ONE`` (module docstring): ``"(..., replace-one swap,
  two-sided)"``."""
  return accounting.replace(", two-sided)", ", replace-one swap, two-sided)")


def hockey_stick_delta(sigma: float, epsilon_value: float) -> float:
  """delta(epsilon) of one unsampled round, summed directly from the pmf
  (``sum_x max(0, P[X = x] - e^epsilon P[X = x - 1])``): the exact
  divergence in double precision, for checks."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  width = truncation_bound(sigma) + 2
  x = np.arange(-width, width + 1, dtype=np.float64)
  p = discrete_noise.discrete_gaussian_pmf(sigma, x)
  q = discrete_noise.discrete_gaussian_pmf(sigma, x - 1.0)
  return float(np.maximum(p - math.exp(epsilon_value) * q, 0.0).sum())
