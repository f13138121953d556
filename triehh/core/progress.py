"""Saying on stderr that a step is slow, once it is.

:func:`said_if_slow` wraps a block that usually ends at once but may take
seconds (a calibration on a new n, a sweep's plan): past a threshold it
says ``<prefix>: <what> ...`` on stderr, and how long it took when it ends.
The library's threshold is :data:`SLOW_SECONDS`, or the environment's
:data:`PROGRESS_AFTER_VARIABLE` (``inf``: never; the test suite sets it, as
a script that parses stderr should).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Iterator

SLOW_SECONDS = 2.0
PROGRESS_AFTER_VARIABLE = "TRIEHH_PROGRESS_AFTER"


def slow_seconds() -> float:
  """:data:`SLOW_SECONDS`, or the environment's override."""
  text = os.environ.get(PROGRESS_AFTER_VARIABLE)
  if text is None:
    return SLOW_SECONDS
  try:
    return float(text)
  except ValueError:
    raise ValueError(f"{PROGRESS_AFTER_VARIABLE}={text!r} is not a number of "
                     "seconds (inf: never say a calibration is slow)") from None


@contextlib.contextmanager
def said_if_slow(what: str, *, prefix: str = "triehh",
                 after: float | None = None) -> Iterator[None]:
  """Says ``<prefix>: <what> ...`` on stderr if the block still runs after
  ``after`` seconds (None: :func:`slow_seconds`), and how long it took when
  it ends."""
  start = time.monotonic()
  after = slow_seconds() if after is None else after
  if math.isinf(after):
    yield
    return
  timer = threading.Timer(after, lambda: print(
      f"{prefix}: {what} ...", file=sys.stderr, flush=True))
  timer.daemon = True
  timer.start()
  try:
    yield
  finally:
    timer.cancel()
    timer.join()  # its line, if it was said, comes first
    if time.monotonic() - start >= after:
      print(f"{prefix}: {what} took {time.monotonic() - start:.1f} s",
            file=sys.stderr, flush=True)
