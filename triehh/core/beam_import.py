"""Apache Beam imported without its note about BigQuery clients.

Importing Apache Beam (directly, or through pipeline_dp) logs a warning on
the root logger that its BigQuery client libraries are absent: none is
installed and none is used, and the line reads as a fault in a command's
output. :func:`quiet` drops that one note while a block imports,
:func:`quietly` imports one module so.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import types
from collections.abc import Iterator


class _NoBigQueryNote(logging.Filter):
  """Drops Beam's note that its BigQuery clients are absent."""

  def filter(self, record: logging.LogRecord) -> bool:
    return "apitools not found" not in record.getMessage()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
  """A block whose imports of Beam log no BigQuery note."""
  root = logging.getLogger()
  note = _NoBigQueryNote()
  root.addFilter(note)
  try:
    yield
  finally:
    root.removeFilter(note)


def quietly(name: str) -> types.ModuleType:
  """``importlib.import_module(name)`` with Beam's BigQuery note dropped."""
  with quiet():
    return importlib.import_module(name)
