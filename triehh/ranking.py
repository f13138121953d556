"""The one order in which the project lists words with counts: most counts
first, ties broken alphabetically (so every listing is deterministic)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

Count = TypeVar("Count", int, float)


def by_count(counts: Mapping[str, Count]) -> dict[str, Count]:
  """``counts`` as a dict ordered by count (descending), then by word."""
  return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def ranked_words(counts: Mapping[str, float]) -> list[str]:
  """The words of ``counts`` in :func:`by_count` order."""
  return list(by_count(counts))
