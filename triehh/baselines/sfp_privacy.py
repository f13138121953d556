"""The privacy of an SFP run: central ``(epsilon, delta)`` and local epsilons.

:func:`calibrate` is the first step of
:func:`triehh.baselines.sfp.sfp_discover`: the local epsilon of
:func:`triehh.baselines.amplification.sfp_local_epsilon` for a central
``(epsilon, delta)`` (privacy amplification by shuffling of the ``n``
one-message reports), or the central epsilon of a given local one; then the
local epsilon's split between the fragment sketch and the whole-word sketch
(``word_budget``). An infinite epsilon (reports without noise) needs
``allow_no_guarantee=True``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from triehh.baselines import amplification
from triehh.baselines import sfp_options
from triehh.core import validation


@dataclasses.dataclass(frozen=True)
class Privacy:
  """The privacy of a run: central guarantee and the local epsilons."""

  epsilon: float
  delta: float
  epsilon_local: float
  epsilon_fragment: float
  epsilon_word: float | None
  guarantee: str


def check_epsilon(name: str, value, allow_no_guarantee: bool) -> float:
  """An epsilon > 0; ``inf`` (reports without noise) only when allowed."""
  if (not isinstance(value, (bool, np.bool_))
      and isinstance(value, (int, float, np.integer, np.floating))
      and value == math.inf):
    if not allow_no_guarantee:
      raise ValueError(
          f"{name}=inf sends the reports without noise: no differential "
          "privacy guarantee. Pass allow_no_guarantee=True to run so")
    return math.inf
  return validation.check_positive(name, value)


def calibrate(n: int, epsilon: float | None, delta: float | None,
              epsilon_local: float | None, word_budget: float,
              allow_no_guarantee: bool) -> Privacy:
  """Step 1: the local epsilon for a central ``(epsilon, delta)``, or the
  central epsilon of a given local one (amplification by shuffling), split
  between the fragment and word sketches."""
  allow_no_guarantee = sfp_options.check_switch("allow_no_guarantee",
                                                allow_no_guarantee)
  target_delta = 1.0 / n**2 if delta is None else delta
  if epsilon_local is None:
    if epsilon is None:
      raise ValueError("give the central epsilon (and optionally delta), or "
                       "epsilon_local")
    central = check_epsilon("epsilon", epsilon, allow_no_guarantee)
    eps_local = amplification.sfp_local_epsilon(central, target_delta, n)
    guarantee = ("central (epsilon, delta) by amplification by shuffling of "
                 f"n={n} one-message {eps_local:.4g}-LDP reports (Balle et "
                 "al. 2019, Theorem 5.3).")
  else:
    if epsilon is not None:
      raise ValueError("give either the central epsilon or epsilon_local, "
                       "not both")
    eps_local = check_epsilon("epsilon_local", epsilon_local,
                              allow_no_guarantee)
    central = (math.inf if math.isinf(eps_local) else
               amplification.central_epsilon(eps_local, target_delta, n))
    guarantee = (f"local epsilon {eps_local:.4g} given; central epsilon from "
                 "the shuffle bound (Balle et al. 2019, Theorem 5.3).")
  if math.isinf(eps_local):
    guarantee = "no differential privacy guarantee: reports without noise."
  return Privacy(
      epsilon=central, delta=float(target_delta), epsilon_local=eps_local,
      epsilon_fragment=eps_local * (1.0 - word_budget),
      epsilon_word=eps_local * word_budget if word_budget > 0 else None,
      guarantee=guarantee)
