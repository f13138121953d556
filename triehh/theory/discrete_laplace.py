"""The discrete Laplace mechanism's privacy, for the noisy trie's rounds.

A round adds, to every candidate's integer vote sum, an independent draw of
the discrete Laplace law of scale b (``P[X = x]`` proportional to
``exp(-|x| / b)``, drawn exactly: :func:`triehh.core.discrete_noise.
discrete_laplace`). A user's vote moves one sum by at most 1, so the round
is ``1 / b``-DP, pure, in both directions of ``ADD_OR_REMOVE_ONE`` (the
ratio of the two laws at any output is at most ``e^(1/b)`` either way).

* *Poisson sampling.* A round each user joins with probability q is
  ``log(1 + q (e^(1/b) - 1))``-DP for adding or removing a user, both
  directions (the added user's output law is a q-mixture; the other
  direction's bound, ``-log(1 - q (1 - e^(-1/b)))``, is never larger).
* *Replacing one user's word* (``REPLACE_ONE``): the user's one coin puts
  its vote on candidate a or on candidate b, so at an output the ratio of
  the two laws is ``(q r_a + 1 - q) / (q r_b + 1 - q)``, r_c the Laplace's
  ratio at c for a vote there, in ``[e^(-1/b), e^(1/b)]``: at most
  ``log(1 + q (e^(1/b) - 1)) - log(1 - q (1 - e^(-1/b)))``, the two
  directions' bounds added; ``2 / b`` unsampled.
* *Composition.* Adaptive composition of pure DP rounds adds their epsilons
  (Dwork, McSherry, Nissim, Smith 2006): the run is ``(sum_r eps_r, 0)``-DP
  whatever each round's candidates, the scales being fixed in advance.

Against the discrete Gaussian at the deltas of the field (``1/n^2``, 1e-10
to 1e-18) a few rounds of Laplace noise cost less: the Gaussian pays
``sqrt(2 log(1/delta))`` of noise for its tails, the Laplace nothing; over
many rounds the Gaussian's composition (as the square root of R) wins
(``docs/noisy-trie.md``, "The noise's law"). :func:`round_pld` gives
dp_accounting's PLD of one round, for its accountants and the tests' check.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from triehh.core import discrete_noise
from triehh.core import validation
from triehh.theory import noise_search

# The least and largest scales searched (the exact sampler's range).
LEAST_SCALE = 2.0**-10
LARGEST_SCALE = 2.0**40
# Relative precision of a calibrated scale (rounded up: epsilon falls as the
# scale grows, so the scale found meets the target).
_SCALE_TOLERANCE = 1e-9


def round_epsilon(scale: float, sampling_rate: float = 1.0,
                  replace_one: bool = False) -> float:
  """One round's pure epsilon at ``scale`` (module docstring): ``1 /
  scale``, amplified by Poisson sampling at ``sampling_rate``; for
  ``REPLACE_ONE``, the adding direction's bound plus the removing one's."""
  scale = validation.check_positive("scale", scale)
  q = validation.check_rate("sampling_rate", sampling_rate,
                            "the probability that a user takes part")
  x = 1.0 / scale
  if q >= 1.0:
    return 2.0 * x if replace_one else x
  # log(1 + q (e^x - 1)), without overflow at large x
  adding = (math.log1p(q * math.expm1(x)) if x < 1.0
            else x + math.log(q + (1.0 - q) * math.exp(-x)))
  if not replace_one:
    return adding
  return adding - math.log1p(-q * -math.expm1(-x))


def epsilon(scales: Sequence[float], sampling_rate: float = 1.0,
            replace_one: bool = False) -> float:
  """The rounds' epsilon (delta 0): their :func:`round_epsilon` summed."""
  return math.fsum(round_epsilon(s, sampling_rate, replace_one)
                   for s in scales)


def smallest_scale(multipliers: Sequence[float], epsilon_target: float,
                   sampling_rate: float = 1.0,
                   replace_one: bool = False) -> float:
  """The smallest base scale b (relative 1e-9, rounded up) whose rounds at
  ``b * m_r`` meet ``epsilon_target`` (:func:`epsilon`); ValueError when
  not even the largest scale the sampler draws does."""
  validation.check_positive("epsilon_target", epsilon_target)
  ms = [validation.check_positive("multiplier", m) for m in multipliers]
  if not ms:
    raise ValueError("no rounds to calibrate a scale for")

  def meets(b: float) -> bool:
    return epsilon([b * m for m in ms], sampling_rate,
                   replace_one) <= epsilon_target

  if not meets(LARGEST_SCALE / max(ms)):
    raise ValueError(f"epsilon={epsilon_target:g} over {len(ms)} rounds "
                     "needs a discrete Laplace scale beyond 2^40")
  lo = LEAST_SCALE / min(ms)
  if meets(lo):
    return lo
  return noise_search.log_bisect(meets, lo, LARGEST_SCALE / max(ms),
                                 _SCALE_TOLERANCE)


@functools.lru_cache(maxsize=4096)
def threshold(scale: float, rate: float) -> int:
  """The smallest integer tau whose tail ``P[X >= tau]`` at ``scale``
  (:func:`triehh.core.discrete_noise.discrete_laplace_tail`) is at most
  ``rate`` (in (0, 1/2]): at least 1."""
  if not 0.0 < rate <= 0.5:
    raise ValueError(f"rate must be in (0, 1/2], got {rate!r}")
  return least_threshold(scale, rate)


def least_threshold(scale: float, rate: float) -> int:
  """The smallest integer tau (not below ``-ceil(40 scale) - 2``, where
  the tail is 1 in double precision) whose tail at ``scale`` is at most
  ``rate`` in (0, 1]: from the tail's closed form, then checked against
  the tail itself either way."""
  q = math.exp(-1.0 / scale)
  lowest = -math.ceil(40 * scale) - 2
  tau = (1 if rate >= q / (1.0 + q) else
         math.ceil(math.log(rate * (1.0 + q)) / math.log(q)) - 1)
  while discrete_noise.discrete_laplace_tail(scale, tau) > rate:
    tau += 1
  while (tau > lowest
         and discrete_noise.discrete_laplace_tail(scale, tau - 1) <= rate):
    tau -= 1
  return tau


@functools.lru_cache(maxsize=128)
def round_pld(scale: float, sampling_rate: float, discretization: float,
              replace_one: bool = False):
  """One round's dp_accounting ``PrivacyLossDistribution``: its discrete
  Laplace mechanism of parameter ``1 / scale`` at sensitivity 1,
  Poisson-sampled at ``sampling_rate``; ``replace_one``: composed with its
  directions swapped (the vote leaves one sum and joins another)."""
  from dp_accounting.pld import privacy_loss_distribution as pld_lib  # pylint: disable=g-import-not-at-top
  from triehh.theory import discrete_gaussian  # pylint: disable=g-import-not-at-top
  one = pld_lib.from_discrete_laplace_mechanism(
      1.0 / scale, sensitivity=1, pessimistic_estimate=True,
      value_discretization_interval=discretization,
      sampling_prob=sampling_rate)
  return discrete_gaussian.with_swap(one) if replace_one else one
