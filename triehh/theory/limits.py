"""The bounds of what the accountants compute, checked at their public
functions: the least delta, the most users, the longest computation.

* A delta below the least normal float (``sys.float_info.min``) is
  subnormal: it keeps fewer significant bits, and the accountants' sums
  near it are off by more than the delta itself (a level of a run
  calibrated for delta = 5e-324 has a delta of 5.6e-323). Refused.
* A population has at most ``MAX_USERS`` users, as
  :class:`~triehh.core.population.Population` holds (beyond, n is no
  float).
* A computation estimated to take over ``MAX_SECONDS`` is refused before
  it starts, with what would be allowed.
* A delta above ``1/n`` (n the declared population size, else the users
  present) protects nobody: a mechanism that publishes one user's word
  at random is ``(0, 1/n)``-DP. Refused unless the caller opts in with
  :data:`DELTA_OPT_IN` (:func:`check_delta_for_n`); a guarantee run so
  says it (:func:`delta_above_1_over_n`).
"""

from __future__ import annotations

import decimal
import sys

from triehh.core import population
from triehh.core import validation

LEAST_DELTA = sys.float_info.min
MAX_USERS = population.MAX_USERS
# The longest accounting started, as estimated (a calibration, or a
# composition of given parameters).
MAX_SECONDS = 10.0
# The privacy objects' field that opts in to a delta above 1/n.
DELTA_OPT_IN = "allow_delta_above_1_over_n"


def check_delta(name: str, value, meaning: str = "") -> float:
  """``value`` as a delta in ``[LEAST_DELTA, 1)``, or a TypeError/ValueError
  naming it (and saying what it is, when ``meaning`` is given)."""
  value = validation.check_probability(name, value, meaning)
  if value < LEAST_DELTA:
    about = f" ({meaning})" if meaning else ""
    raise ValueError(
        f"{name} must be at least {LEAST_DELTA!r}{about}, the least normal "
        f"float: a smaller (subnormal) delta cannot be accounted, got "
        f"{name}={value!r}")
  return value


def check_users(name: str, value) -> int:
  """``value`` as a number of users in ``[1, MAX_USERS]``, or a
  TypeError/ValueError naming it."""
  value = validation.check_int(name, value)
  if value > MAX_USERS:
    raise ValueError(f"{name} must be at most 2**62 - 1 = {MAX_USERS} "
                     f"users, got about {decimal.Decimal(value):.3g}")
  return value


def describe_seconds(seconds: float) -> str:
  """``seconds`` in words: ``"10.2 s"``, ``"41.8 minutes"``, ``"2.0 hours"``."""
  if seconds >= 3600:
    return f"{seconds / 3600:.1f} hours"
  return f"{seconds / 60:.1f} minutes" if seconds >= 60 else f"{seconds:.1f} s"


def check_opt_in(value) -> bool:
  """``value`` of :data:`DELTA_OPT_IN` as a bool, or a TypeError naming
  it."""
  if not isinstance(value, bool):
    raise TypeError(f"{DELTA_OPT_IN} must be True or False, got "
                    f"{value!r:.40}")
  return value


def delta_above_1_over_n(delta: float, n: int | None) -> str:
  """A guarantee's caveat when ``delta`` exceeds ``1/n``, else ``""``."""
  if n is None or n < 1 or not delta <= 1 or delta * n <= 1:
    return ""
  return (f"delta={delta:.3g} exceeds 1/n = 1/{n:,} = {1 / n:.3g}: it "
          "protects nobody (publishing one user's data at random meets it)")


def check_delta_for_n(delta: float | None, n: int, *, allowed: bool,
                      source: str = "") -> None:
  """Refuses ``delta`` above ``1/n`` unless ``allowed`` (the caller's
  :data:`DELTA_OPT_IN`): a ValueError naming ``delta``, the bound and the
  opt-in. ``source``: the parameters a delta not asked for comes from
  (then the message asks for other parameters, not another delta)."""
  if delta is None or allowed or not delta * n > 1 or not delta < 1:
    return
  bound = (f"above 1/n = 1/{n:,} = {1 / n:.3g}, which protects nobody "
           "(publishing one user's data at random meets it)")
  if source:
    raise ValueError(
        f"{source} give a guarantee whose delta, {delta:.3g}, is {bound}: "
        "choose parameters that give at most 1/n, or pass "
        f"{DELTA_OPT_IN}=True to run them anyway")
  raise ValueError(
      f"delta={delta:.3g} is {bound}: give delta at most 1/n (1/n^2 is the "
      f"default), or pass {DELTA_OPT_IN}=True to run it anyway")
