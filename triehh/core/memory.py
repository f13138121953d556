"""Memory estimates, checked before a size the caller chose is allocated.

A size the caller controls (users drawn, characters per word, sketch
dimensions, populations audited) decides how large the arrays built from it
are. Every place that allocates by such a size first estimates the bytes
and calls :func:`check_fits`, which refuses with one line naming the
argument, the estimate and what fits, instead of numpy failing (or the
system swapping) deep inside a run. The estimates are the measured peak of
the allocating code per unit (user, word character, sketch cell), so a size
that is refused would not have run.
"""

from __future__ import annotations

import os
from collections.abc import Callable

_MEMINFO = "/proc/meminfo"
_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


class InsufficientMemoryError(ValueError, MemoryError):
  """A size whose arrays would not fit in the available memory.

  A ``ValueError`` (a bad argument, reported like one) and a
  ``MemoryError``.
  """


def available_bytes() -> int | None:
  """Memory available for new allocations, in bytes, or None if unknown.

  ``MemAvailable`` of ``/proc/meminfo`` where there is one, else the
  physical memory (``os.sysconf``).
  """
  try:
    with open(_MEMINFO, encoding="ascii") as meminfo:
      for line in meminfo:
        if line.startswith("MemAvailable:"):
          return int(line.split()[1]) * 1024  # the file counts kB
  except (OSError, ValueError, IndexError):
    pass
  try:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
  except (AttributeError, OSError, ValueError):
    return None


def format_bytes(num_bytes: float) -> str:
  """``num_bytes`` in binary units, e.g. ``"74.5 GiB"``."""
  value = float(num_bytes)
  for unit in _UNITS[:-1]:
    if abs(value) < 1024:
      return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
    value /= 1024
  return f"{value:.1f} {_UNITS[-1]}"


def most_that_fit(bytes_each: float, available: int,
                  fixed: float = 0) -> int:
  """How many units of ``bytes_each`` fit in ``available`` bytes beside
  ``fixed`` bytes (0 if none)."""
  if bytes_each <= 0:
    raise ValueError(f"bytes_each must be positive, got {bytes_each}")
  return max(0, int((available - fixed) // bytes_each))


def check_fits(what: str, num_bytes: float,
               hint: str | Callable[[int], str] = "") -> None:
  """Raises :class:`InsufficientMemoryError` if ``num_bytes`` do not fit.

  Args:
    what: the size being allocated, naming its argument and value, e.g.
      ``"num_users=10000000000 users"``.
    num_bytes: the estimated peak memory of the allocation.
    hint: what to do instead (e.g. the largest value that fits), or a
      function of the available bytes that returns it.

  The message is one line: ``<what> would need about <estimate> of memory,
  more than the <available> available; <hint>``. Nothing is checked when the
  available memory cannot be read.
  """
  available = available_bytes()
  if available is None or num_bytes <= available:
    return
  advice = hint(available) if callable(hint) else hint
  raise InsufficientMemoryError(
      f"{what} would need about {format_bytes(num_bytes)} of memory, more than "
      f"the {format_bytes(available)} available"
      + (f"; {advice}" if advice else ""))
