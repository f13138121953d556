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
  """The words of ``counts`` in :func:`by_count` order.

  Two sorts without a Python key function: alphabetical, then by count
  from the largest (a stable sort, so equal counts stay alphabetical).
  """
  words = sorted(counts)
  words.sort(key=counts.__getitem__, reverse=True)
  return words


def top_words(counts: Mapping[str, float], k: int) -> list[str]:
  """The first ``k`` words of :func:`ranked_words`, without sorting them all
  (a heap: O(V log k) for V words)."""
  return [w for w, _ in heapq.nsmallest(k, counts.items(), key=_order)]


class RankedCounts(dict):
  """Counts that remember their ranking: a read-only ``dict`` whose
  :meth:`top` ranks the words once and serves every later call from that.

  A sweep scores every run of a cell against the same truth; ranking its tens
  of thousands of words again for each run cost more than the run itself.
  """

  __slots__ = ("_top", "_positive")

  def __init__(self, counts: Mapping[str, float] = (), /):
    super().__init__(counts)
    self._top: list[str] = []
    self._positive: frozenset[str] | None = None

  def positive(self) -> frozenset[str]:
    """The words of positive count (found once, then served from that)."""
    if self._positive is None:
      self._positive = frozenset(w for w, c in self.items() if c > 0)
    return self._positive

  def top(self, k: int) -> list[str]:
    """The first ``k`` words of :func:`ranked_words` (as :func:`top_words`)."""
    if k > len(self._top) and len(self._top) < len(self):
      self._top = top_words(self, k)
    return self._top[:k]

  def __reduce__(self):
    return (RankedCounts, (dict(self),))

  def _read_only(self, *args, **kwargs):
    raise TypeError("RankedCounts is read-only: copy it with dict(...) to "
                    "change it")

  __setitem__ = __delitem__ = __ior__ = _read_only
  clear = pop = popitem = setdefault = update = _read_only
