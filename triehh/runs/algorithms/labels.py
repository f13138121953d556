"""The parts of a cell's label that the algorithms name alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def privacy_parts(config: Mapping[str, Any]) -> list[str]:
  """``eps=...`` and ``delta=...`` of a run's ``config``, those it gives."""
  parts = []
  if config.get("epsilon") is not None:
    parts.append(f"eps={config['epsilon']:g}")
  if config.get("delta") is not None:
    parts.append(f"delta={config['delta']:g}")
  return parts
