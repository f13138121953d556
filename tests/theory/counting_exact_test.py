"""The counting phase's accounting against direct sums, not dp_accounting.

The counting phase releases sums of one-hots with discrete Gaussian noise
N_Z(0, sigma^2) (``P[X = x]`` proportional to ``exp(-x^2 / (2 sigma^2))``),
each user present with probability q. For a user present (D) or absent
(D'), along the user's slot the output laws are A = (1 - q) N_Z(0, s^2) +
q N_Z(1, s^2) and B = N_Z(0, s^2), both on the integers; the hockey-stick
divergences H_{e^t}(A || B) and H_{e^t}(B || A) are summed here from the
pmf, computed in this file. Discovery at (eps_d, delta_d) is dominated by
the canonical four-atom pair of an (eps_d, delta_d)-DP mechanism (Kairouz,
Oh and Viswanath 2015), and the hockey stick of a product with a finite
pair is a sum over its atoms. These give the exact delta of the
composition at the epsilon that triehh.theory.counting reports, computed
without dp_accounting.
"""

import math

import numpy as np
import pytest
from scipy import stats

from triehh.core import choices
from triehh.theory import counting
from triehh.theory import discrete_gaussian
from triehh.theory import pld
from triehh.theory import poisson
from triehh.theory import policy
from triehh.theory.mechanism import Target


def _pmf(sigma: float) -> tuple[np.ndarray, np.ndarray]:
  """The integers ``x`` within 40 sigma of 0 and the discrete Gaussian's
  ``P[X = x]`` there (the rest weighs below exp(-800))."""
  width = int(math.ceil(40 * sigma)) + 2
  x = np.arange(-width, width + 2, dtype=np.float64)
  weights = np.exp(-x**2 / (2.0 * sigma**2))
  return x, weights / weights.sum()


def _gaussian_hockey_at(t: np.ndarray, sigma: float, q: float,
                        present_first: bool) -> np.ndarray:
  """H_{e^t}(A || B) (``present_first``) or H_{e^t}(B || A) at every ``t``
  of an array, summed over the integers from the pmf."""
  _, p = _pmf(sigma)
  b = p
  a = (1 - q) * p + q * np.concatenate([[0.0], p[:-1]])  # P[X + 1 = x]
  e = np.exp(np.asarray(t, dtype=np.float64))[:, np.newaxis]
  upper, lower = (a, b) if present_first else (b, a)
  return np.maximum(upper[np.newaxis, :] - e * lower[np.newaxis, :],
                    0.0).sum(axis=1)


def _gaussian_hockey(t: float, sigma: float, q: float, present_first: bool
                     ) -> float:
  """:func:`_gaussian_hockey_at` at one ``t``."""
  return float(_gaussian_hockey_at(np.array([t]), sigma, q, present_first)[0])


def _canonical(epsilon: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
  """The four-atom pair (P, Q) of an (epsilon, delta)-DP mechanism."""
  e = math.exp(epsilon)
  p = np.array([delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0])
  return p, p[::-1].copy()


def _composed_delta(epsilon: float, discovery: tuple[float, float],
                    sigma: float, q: float) -> float:
  """The exact delta at ``epsilon`` of discovery's canonical pair followed
  by the counting phase, the larger of the two directions (the canonical
  pair is its own mirror image, so the counting phase's two directions
  cover both)."""
  p, qq = _canonical(*discovery)
  worst = 0.0
  for present_first in (True, False):
    total = 0.0
    for pi, qi in zip(p, qq):
      if pi == 0:
        continue
      if qi == 0:
        total += pi
        continue
      total += pi * max(0.0, _gaussian_hockey(
          epsilon - math.log(pi / qi), sigma, q, present_first))
    worst = max(worst, total)
  return worst


def _gaussian_delta(epsilon: float, sigma: float, q: float) -> float:
  return max(_gaussian_hockey(epsilon, sigma, q, True),
             _gaussian_hockey(epsilon, sigma, q, False))


def test_the_sum_is_the_library_checks_and_above_the_continuous():
  # Unsampled, the library's own pmf sum (for checks) agrees; and the
  # discrete law's divergence exceeds the continuous Gaussian's closed form
  # at sigma 2 (why the continuous accountant is not a stand-in).
  sigma, t = 2.0, 2.254
  got = _gaussian_hockey(t, sigma, 1.0, True)
  assert got == pytest.approx(
      discrete_gaussian.hockey_stick_delta(sigma, t), rel=1e-9)
  norm = stats.norm
  cut = 0.5 + sigma**2 * t
  continuous = norm.sf((cut - 1) / sigma) - math.exp(t) * norm.sf(cut / sigma)
  assert got > continuous * 1.1
  # Sampled: the two directions differ, and both are probabilities.
  forward = _gaussian_hockey(0.2, sigma, 0.3, True)
  reverse = _gaussian_hockey(0.2, sigma, 0.3, False)
  assert 0 < reverse < forward < 1


@pytest.mark.parametrize("rate", [1.0, 0.3])
def test_counting_alone_meets_its_delta_tightly(rate):
  delta = 1e-8
  sigma = counting.calibrate_noise(1.0, delta, rate)
  epsilon = counting.gaussian_epsilon(sigma, rate, delta)
  assert epsilon <= 1.0
  assert _gaussian_delta(epsilon, sigma, rate) <= delta
  # Not a loose bound: a little less epsilon needs more delta.
  assert _gaussian_delta(epsilon - 0.02, sigma, rate) > delta


def _discovery_then_counting(sampling: str, rate: float):
  """Discovery (n = 10^5, L = 4, epsilon 2) and counting calibrated to a
  total of (its epsilon + 1, 1e-8): the discovery parameters, sigma and the
  library's composition."""
  discovery = policy.resolve(10**5, 4, Target(2.0, delta=5e-9,
                                              sampling=sampling))
  total_epsilon, total_delta = discovery.epsilon + 1.0, 1e-8
  sigma = counting.calibrate_noise_to_total(discovery, total_epsilon,
                                            total_delta, rate)
  total = counting.compose(discovery, sigma, rate, total_delta)
  assert total.epsilon <= total_epsilon and total.delta == total_delta
  return discovery, sigma, total


@pytest.mark.parametrize("rate", [1.0, 0.5])
def test_fixed_discovery_and_counting_meet_the_reported_total(rate):
  discovery, sigma, total = _discovery_then_counting(choices.FIXED, rate)
  total_delta = total.delta
  pair = (discovery.epsilon, discovery.delta)
  assert _composed_delta(total.epsilon, pair, sigma, rate) <= total_delta
  # The reported total is near the exact one, not merely safe.
  assert _composed_delta(total.epsilon - 0.05, pair, sigma,
                         rate) > total_delta


def _poisson_composed_delta(epsilon: float, loss: pld.TwoSided,
                            sigma: float, q: float) -> float:
  """The exact delta at ``epsilon`` of the Poisson accountant's discovery
  loss (both directions) followed by the counting phase: the hockey stick
  of a product is the discovery law's expectation of the counting phase's
  hockey stick at ``epsilon`` minus the discovery loss (its infinite-loss
  mass counts whole). The user is present in the upper law of both phases
  (forward), or absent in both (reverse)."""
  worst = 0.0
  for side, present_first in ((loss.forward, True), (loss.reverse, False)):
    keep = side.probs > 0
    losses = (side.lower + np.flatnonzero(keep)) * side.discretization
    total = side.infinity + float(np.sum(side.probs[keep] * _gaussian_hockey_at(
        epsilon - losses, sigma, q, present_first)))
    worst = max(worst, total)
  return worst


@pytest.mark.parametrize("rate", [1.0, 0.5])
def test_poisson_discovery_and_counting_meet_the_reported_total(rate):
  # Discovery's own two-sided loss distribution (as counting composes it),
  # composed with the Gaussian counting phase by direct summation over its
  # atoms: no FFT, no dp_accounting.
  discovery, sigma, total = _discovery_then_counting(choices.POISSON, rate)
  total_delta = total.delta
  assert total.two_sided
  loss = poisson.run_loss(discovery.sampling_rate, discovery.theta,
                          discovery.levels, counting.DISCRETIZATION,
                          poisson.trimming_budget(discovery.delta, discovery.levels))  # pylint: disable=protected-access
  assert loss.delta(discovery.epsilon) <= discovery.delta
  assert _poisson_composed_delta(total.epsilon, loss, sigma,
                                 rate) <= total_delta
  # The reported total is near the exact one, not merely safe.
  assert _poisson_composed_delta(total.epsilon - 0.05, loss, sigma,
                                 rate) > total_delta
