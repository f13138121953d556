"""The one order in which the project lists words with counts: most counts
first, ties broken alphabetically (so every listing is deterministic)."""

from __future__ import annotations

import heapq
import itertools
import operator
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


def check_weights(name: str, counts: Mapping[str, float]) -> None:
  """A TypeError/ValueError naming ``name`` and the word unless every count
  is a number >= 0 (nan is none: it would rank anywhere)."""
  try:  # one pass in C for the common case: all fine
    if all(map(operator.ge, counts.values(), itertools.repeat(0))):
      return
  except TypeError:
    pass
  for word, count in counts.items():
    if isinstance(count, (bool, str, bytes)):
      raise TypeError(f"{name}[{word!r}] must be a number, got {count!r}")
    try:
      fine = count >= 0
    except TypeError:
      raise TypeError(f"{name}[{word!r}] must be a number, got "
                      f"{count!r:.60}") from None
    if not fine:
      raise ValueError(f"{name}[{word!r}] must be a number >= 0, got "
                       f"{count!r}")


class RankedCounts(dict):
  """Counts of a truth that remember their ranking: a read-only ``dict``
  whose :meth:`top` ranks the words once and serves every later call from
  that.

  A sweep scores every run of a cell against the same truth; ranking its tens
  of thousands of words again for each run cost more than the run itself.
  The counts are checked (:func:`check_weights`, naming ``truth``) once, by
  the first :meth:`top` or :meth:`positive`.
  """

  __slots__ = ("_top", "_positive", "_checked")

  def __init__(self, counts: Mapping[str, float] = (), /):
    super().__init__(counts)
    self._top: list[str] = []
    self._positive: frozenset[str] | None = None
    self._checked = False

  def _check(self) -> None:
    if not self._checked:
      check_weights("truth", self)
      self._checked = True

  def positive(self) -> frozenset[str]:
    """The words of positive count (found once, then served from that)."""
    if self._positive is None:
      self._check()
      self._positive = frozenset(w for w, c in self.items() if c > 0)
    return self._positive

  def top(self, k: int) -> list[str]:
    """The first ``k`` words of :func:`ranked_words` (as :func:`top_words`)."""
    if k > len(self._top) and len(self._top) < len(self):
      self._check()
      self._top = top_words(self, k)
    return self._top[:k]

  def __reduce__(self):
    return (RankedCounts, (dict(self),))

  def _read_only(self, *args, **kwargs):
    raise TypeError("RankedCounts is read-only: copy it with dict(...) to "
                    "change it")

  __setitem__ = __delitem__ = __ior__ = _read_only
  clear = pop = popitem = setdefault = update = _read_only
