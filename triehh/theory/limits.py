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
