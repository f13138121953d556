"""Argument checks shared by every module: each names the argument and the
value it got, so a bad parameter fails with a message the user can act on."""

from __future__ import annotations

import numpy as np


def check_int(name: str, value, low: int = 1, high: int | None = None) -> int:
  """``value`` as an int in ``[low, high]``, or a TypeError/ValueError naming it."""
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
    raise TypeError(f"{name} must be an integer, got {value!r}")
  if value < low or (high is not None and value > high):
    bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
    raise ValueError(f"{name} must be {bound}, got {value}")
  return int(value)


def check_positive(name: str, value) -> float:
  """``value`` as a positive finite float, or a TypeError/ValueError naming it."""
  value = _check_real(name, value)
  if not 0 < value < float("inf"):  # also refuses nan
    raise ValueError(f"{name} must be a positive finite number, got {value}")
  return value


def check_probability(name: str, value) -> float:
  """``value`` as a float in the open interval (0, 1), or an error naming it."""
  value = _check_real(name, value)
  if not 0 < value < 1:  # also refuses nan
    raise ValueError(f"{name} must be in (0, 1), got {name}={value}")
  return value


def _check_real(name: str, value) -> float:
  if isinstance(value, bool) or not isinstance(
      value, (int, float, np.integer, np.floating)):
    raise TypeError(f"{name} must be a number, got {value!r}")
  return float(value)
