"""The one order in which the project lists words with counts: most counts
first, ties broken alphabetically (so every listing is deterministic)."""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import TypeVar

Count = TypeVar("Count", int, float)


def by_count(counts: Mapping[str, Count]) -> dict[str, Count]:
  """``counts`` as a dict ordered by count (descending), then by word."""
  return dict(sorted(counts.items(), key=_order))


def _order(item: tuple[str, float]) -> tuple[float, str]:
  return (-item[1], item[0])


def ranked_words(counts: Mapping[str, float]) -> list[str]:
  """The words of ``counts`` in :func:`by_count` order."""
  return list(by_count(counts))


def top_words(counts: Mapping[str, float], k: int) -> list[str]:
  """The first ``k`` words of :func:`ranked_words`, without sorting them all
  (a heap: O(V log k) for V words)."""
  return [w for w, _ in heapq.nsmallest(k, counts.items(), key=_order)]
