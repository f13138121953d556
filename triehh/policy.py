"""The privacy policy of a run: which parameters are refused, which epsilon
and delta are reported.

* ``(epsilon, delta)`` are calibrated by Corollary 1 (``delta`` defaults to
  ``1/n^2``) and reported as Theorem 1 gives them at the integer batch size.
* ``theta`` with ``gamma`` or ``batch_size``: reported by Theorem 1; outside
  its conditions the run is refused unless ``allow_no_guarantee``, and then
  reported with ``epsilon = inf``, ``delta = 1``.
* Several votes per user per round (the ``tff`` engine's
  ``max_user_contribution > 1`` on several-word users) are outside Theorem 1:
  refused, or reported without guarantee under ``allow_no_guarantee``.
* A prefix cap (``max_num_prefixes``) keeps the guarantee, with a note
  (:data:`CAP_NOTE`) that Theorem 1 is proved without it.

Privacy accounts for ``max_length + 1`` trie levels: the end symbol is a
level too.
"""

from __future__ import annotations

import dataclasses
import math

from triehh import population as population_lib
from triehh import results
from triehh.theory import privacy

CAP_NOTE = (" Theorem 1 is proved without a prefix cap; with max_num_prefixes "
            "the kept set also depends on vote ranks.")


def resolve_params(n: int, max_length: int, *, epsilon: float | None = None,
                   delta: float | None = None, theta: int | None = None,
                   gamma: float | None = None, batch_size: int | None = None,
                   num_sub_rounds: int = 1,
                   max_num_prefixes: int | None = None,
                   allow_no_guarantee: bool = False) -> results.RunParams:
  """Turns either ``(epsilon, delta)`` or ``theta`` with ``gamma``/``batch_size``
  into run parameters with their Theorem 1 guarantee.

  ``delta`` defaults to ``1/n^2``. Parameters outside Theorem 1 raise
  ``ValueError`` unless ``allow_no_guarantee`` (then epsilon is ``inf``).
  """
  if max_num_prefixes is not None and max_num_prefixes < 1:
    raise ValueError(f"max_num_prefixes must be >= 1, got {max_num_prefixes}")
  common = dict(n=n, max_length=max_length, levels=max_length + 1,
                num_sub_rounds=num_sub_rounds,
                max_num_prefixes=max_num_prefixes)
  cap_note = CAP_NOTE if max_num_prefixes is not None else ""
  if theta is None:
    if gamma is not None or batch_size is not None:
      raise ValueError("gamma/batch_size need theta too")
    if epsilon is None:
      raise ValueError("give epsilon (and optionally delta), or theta with "
                       "gamma or batch_size")
    return _calibrated(n, epsilon, delta, cap_note, common)
  if epsilon is not None or delta is not None:
    raise ValueError("give either (epsilon, delta) or theta with gamma/"
                     "batch_size, not both")
  if (gamma is None) == (batch_size is None):
    raise ValueError("with theta, give exactly one of gamma and batch_size")
  return _given_theta(n, theta, gamma, batch_size, allow_no_guarantee,
                      cap_note, common)


def _calibrated(n: int, epsilon: float, delta: float | None, cap_note: str,
                common: dict) -> results.RunParams:
  """Corollary 1 parameters for a target ``(epsilon, delta)``."""
  levels = common["levels"]
  target_delta = 1.0 / n**2 if delta is None else delta
  cal = privacy.calibrate(n, levels, epsilon, target_delta)
  return results.RunParams(
      theta=cal.theta, gamma=cal.effective_gamma, batch_size=cal.batch_size,
      epsilon=cal.epsilon, delta=cal.delta, target_epsilon=float(epsilon),
      target_delta=float(target_delta),
      guarantee=(f"Corollary 1 calibration for L={levels} levels; "
                 f"epsilon, delta from Theorem 1 at m={cal.batch_size}."
                 + cap_note), **common)


def _given_theta(n: int, theta: int, gamma: float | None,
                 batch_size: int | None, allow_no_guarantee: bool,
                 cap_note: str, common: dict) -> results.RunParams:
  """Theorem 1's guarantee for a given ``theta`` and batch size."""
  levels = common["levels"]
  root = math.sqrt(n)
  if batch_size is None:
    batch_size = math.floor(gamma * root)
  if not 1 <= batch_size <= n:
    raise ValueError(f"batch size {batch_size} must be in [1, n={n}]")
  used_gamma = batch_size / root
  try:
    eps, dlt = privacy.guarantee(n, levels, theta, used_gamma)
    note = f"Theorem 1 for L={levels} levels." + cap_note
  except ValueError as err:
    if not allow_no_guarantee:
      raise ValueError(
          f"{err}. Pass allow_no_guarantee=True (--allow_no_guarantee) to run "
          "without a privacy guarantee") from None
    eps, dlt = math.inf, 1.0
    note = f"no differential privacy guarantee: {err}"
  return results.RunParams(theta=int(theta), gamma=used_gamma,
                           batch_size=int(batch_size), epsilon=eps, delta=dlt,
                           guarantee=note, **common)


def check_contribution(params: results.RunParams,
                       population: population_lib.Population,
                       engine_options: dict,
                       allow_no_guarantee: bool) -> results.RunParams:
  """``params``, or refused, or without guarantee, for the engine options.

  Engine option ``max_user_contribution`` > 1 (several-word users) lets a
  user cast that many votes per round: outside Theorem 1.
  """
  contribution = engine_options.get("max_user_contribution")
  if contribution is None or contribution <= 1 or population.is_single_word:
    return params
  problem = (f"max_user_contribution={contribution} lets a user cast up to "
             f"{contribution} votes per round, and Theorem 1 covers one vote "
             "per user per round")
  if not allow_no_guarantee:
    raise ValueError(f"{problem}. Pass allow_no_guarantee=True to run "
                     "without a privacy guarantee")
  return dataclasses.replace(
      params, epsilon=math.inf, delta=1.0,
      guarantee=f"no differential privacy guarantee: {problem}.")
