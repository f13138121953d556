"""Numbers printed on the side that keeps a privacy guarantee.

A printed parameter must meet the target on its own: someone who runs the
mechanism at the printed rate q, or the printed noise sigma, gets at least
the privacy reported. A smaller rate and a larger sigma are more private,
so rates are printed rounded down and noise scales rounded up, to
``digits`` significant digits.
"""

from __future__ import annotations

import decimal
import math


def _rounded(value: float, digits: int, rounding: str) -> str:
  if not math.isfinite(value) or value == 0:
    return f"{value:g}"
  shortest = repr(float(value))
  if _significant(shortest) <= digits:
    # The value is this decimal's float (0.7 given by a user): printed as
    # given, it reads back as the very float used.
    return f"{float(value):g}"
  exact = decimal.Decimal(value)  # the float's exact binary value
  exponent = exact.adjusted() - digits + 1
  text = exact.quantize(decimal.Decimal(1).scaleb(exponent),
                        rounding=rounding)
  return f"{float(text):.{digits}g}" if _same(text, digits) else str(text)


def _same(text: decimal.Decimal, digits: int) -> bool:
  """Whether printing ``text`` as a float with ``digits`` significant digits
  gives its value back exactly (so no second rounding can go the wrong
  way)."""
  return decimal.Decimal(f"{float(text):.{digits}g}") == text


def _significant(text: str) -> int:
  """The significant digits of a float's shortest decimal form."""
  mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "")
  return len(mantissa.strip("0")) or 1


def rate_down(rate: float, digits: int = 4) -> str:
  """``rate`` to ``digits`` significant digits, rounded down (a printed
  sampling rate is never above the one the guarantee was computed for)."""
  return _rounded(rate, digits, decimal.ROUND_FLOOR)


def scale_up(scale: float, digits: int = 4) -> str:
  """``scale`` to ``digits`` significant digits, rounded up (a printed
  noise standard deviation is never below the one used)."""
  return _rounded(scale, digits, decimal.ROUND_CEILING)
