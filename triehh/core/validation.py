"""Argument checks shared by every module: each names the argument and the
value it got, so a bad parameter fails with a message the user can act on."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

INT64_MAX = 2**63 - 1


def check_int(name: str, value, low: int = 1, high: int | None = None) -> int:
  """``value`` as an int in ``[low, high]``, or a TypeError/ValueError naming it."""
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
    raise TypeError(f"{name} must be an integer, got {value!r}")
  if value < low or (high is not None and value > high):
    bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
    raise ValueError(f"{name} must be {bound}, got {value}")
  return int(value)


def check_seed(seed, name: str = "seed") -> int | None:
  """``seed`` for ``numpy.random.default_rng``: None (fresh entropy) or a
  whole number >= 0 (not a bool), or a TypeError/ValueError naming it."""
  return None if seed is None else check_int(name, seed, low=0)


def check_whole(name: str, value, low: int = 1,
                high: int | None = None) -> int:
  """Like :func:`check_int`, but also takes a float with an integer value
  (``3.0``); ``bool`` and strings are refused."""
  if isinstance(value, (float, np.floating)) and not isinstance(value, bool):
    if not float(value).is_integer():  # also nan and inf
      bound = f">= {low}" if high is None else f"in [{low}, {high}]"
      raise ValueError(f"{name} must be a whole number {bound}, got {value!r}")
    value = int(value)
  return check_int(name, value, low, high)


def check_real(name: str, value) -> float:
  """``value`` as a float (any real number, not ``bool``), or a TypeError."""
  return _check_real(name, value)


def check_positive(name: str, value) -> float:
  """``value`` as a positive finite float, or a TypeError/ValueError naming it."""
  value = _check_real(name, value)
  if not 0 < value < float("inf"):  # also refuses nan
    raise ValueError(f"{name} must be a positive finite number, got {value}")
  return value


def check_probability(name: str, value, meaning: str = "") -> float:
  """``value`` as a float in the open interval (0, 1), or an error naming it
  (and saying what it is, when ``meaning`` is given)."""
  value = _check_real(name, value)
  if not 0 < value < 1:  # also refuses nan
    raise ValueError(f"{name} must be in (0, 1){_about(meaning)}, got "
                     f"{name}={value}")
  return value


def check_rate(name: str, value, meaning: str = "") -> float:
  """``value`` as a float in (0, 1] (a sampling rate: 1 takes everyone), or
  an error naming it (and saying what it is, when ``meaning`` is given)."""
  value = _check_real(name, value)
  if not 0 < value <= 1:  # also refuses nan
    raise ValueError(f"{name} must be in (0, 1]{_about(meaning)}, got "
                     f"{name}={value}")
  return value


def _about(meaning: str) -> str:
  return f" ({meaning})" if meaning else ""


def check_choice(name: str, value, choices: Collection[str]) -> str:
  """``value`` if it is one of ``choices``, else a ValueError naming them."""
  if not isinstance(value, str) or value not in choices:
    options = ", ".join(repr(c) for c in choices)
    raise ValueError(f"{name} must be one of {options}, got {value!r}")
  return value


def check_character(name: str, value) -> str:
  """``value`` if it is a one-character string, else a TypeError/ValueError."""
  if not isinstance(value, str):
    raise TypeError(f"{name} must be a one-character string, got {value!r}")
  if len(value) != 1:
    raise ValueError(f"{name} must be exactly one character, got {value!r}")
  return value


def check_indices(name: str, values, size: int) -> np.ndarray:
  """``values`` as a 1-D ``intp`` array of indices in ``[0, size)``.

  Integer arrays and whole-valued floats are taken; anything else (other
  fractions, ``bool``, strings, a negative or too large index, more than one
  dimension) raises a TypeError/ValueError naming ``name``.
  """
  array = np.asarray(values)
  if array.ndim != 1:
    raise ValueError(f"{name} must be a 1-D sequence of indices, got an "
                     f"array of shape {array.shape}")
  if array.size == 0:
    return np.zeros(0, dtype=np.intp)
  if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer)
                                 or np.issubdtype(array.dtype, np.floating)):
    raise TypeError(f"{name} must hold integer indices, got {array.dtype} "
                    f"values such as {array.flat[0]!r}")
  if np.issubdtype(array.dtype, np.floating):
    whole = np.isfinite(array) & (array == np.floor(array))
    if not whole.all():
      bad = array[np.flatnonzero(~whole)[0]]
      raise ValueError(f"{name} must hold whole-number indices, got {bad!r}")
  outside = (array < 0) | (array >= size)
  if outside.any():
    bad = array[np.flatnonzero(outside)[0]]
    raise ValueError(f"{name} holds index {bad!r}, outside [0, {size})")
  return array.astype(np.intp)


def check_numbers(name: str, values, meaning: str = "") -> None:
  """TypeError naming ``name`` unless ``values`` are numbers (an array or
  sequence of them; not booleans, strings or objects)."""
  kind = np.asarray(values).dtype
  if not np.issubdtype(kind, np.number) or kind == bool:
    said = f" ({meaning})" if meaning else ""
    raise TypeError(f"{name} must be numbers{said}, got an array of {kind}")


def check_sequence(name: str, value) -> Sequence:
  """``value`` if it is a sequence (list, tuple, array; not a string)."""
  if isinstance(value, (str, bytes)) or not (
      isinstance(value, Sequence) or isinstance(value, np.ndarray)):
    raise TypeError(f"{name} must be a sequence (a list, tuple or array), "
                    f"got {type(value).__name__}")
  return value


def _check_real(name: str, value) -> float:
  if isinstance(value, bool) or not isinstance(
      value, (int, float, np.integer, np.floating)):
    raise TypeError(f"{name} must be a number, got {value!r}")
  try:
    return float(value)
  except OverflowError:  # an int beyond the float range
    raise ValueError(f"{name} is too large, got {value}") from None
