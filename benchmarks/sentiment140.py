"""Where the benchmarks find the Sentiment140 sample."""

from __future__ import annotations

import os

ENV = "TRIEHH_SENTIMENT140"
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(os.path.dirname(_ROOT), "shared", "data",
                       "sentiment140_sample.csv.gz")


def sample_path(explicit: str | None = None) -> str | None:
  """``explicit``, else ``$TRIEHH_SENTIMENT140``, else ``../shared/data/
  sentiment140_sample.csv.gz`` beside the repository; None if it is absent."""
  path = explicit or os.environ.get(ENV) or DEFAULT
  return path if os.path.exists(path) else None
