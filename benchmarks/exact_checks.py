"""What the exact-law privacy checks share (no flags of their own).

``benchmarks.exact_privacy_check`` (both accountants, the empty and remove
adjacencies) and ``benchmarks.exact_replace_one`` (the Poisson accountant,
replace-one) draw populations of :mod:`checks.exact_validation` in
chunks, check them on worker processes and keep the worst ratio per
group: the chunks, the parallel map with its merge, the worst case and the
epsilon a record is at are here.
"""

from __future__ import annotations

import collections
import dataclasses
import multiprocessing
import os
from collections.abc import Callable, Hashable

from checks import exact_validation as ev

Chunk = tuple[int, int, int, int | None]


@dataclasses.dataclass
class Worst:
  """The largest ratio seen and where."""

  ratio: float = 0.0
  case: str = ""
  record: ev.Record | None = None

  def offer(self, ratio: float, case: ev.Case, record: ev.Record) -> None:
    if self.record is None or ratio > self.ratio:
      self.ratio, self.case, self.record = ratio, case.describe(), record

  def merge(self, other: "Worst") -> None:
    if other.record is not None and (self.record is None
                                     or other.ratio > self.ratio):
      self.ratio, self.case, self.record = (other.ratio, other.case,
                                            other.record)


def chunks(seed: int, num_populations: int, chunk: int,
           max_differing: int | None) -> list[Chunk]:
  """Work units ``(seed, start, stop, max_differing)`` of ``chunk``
  populations each."""
  return [(seed, start, min(num_populations, start + chunk), max_differing)
          for start in range(0, num_populations, chunk)]


def default_workers(num_workers: int | None) -> int:
  """``num_workers``, or up to 2 cores."""
  return num_workers or min(2, os.cpu_count() or 1)


def merged_tallies(run_chunk: Callable[[Chunk], dict], work: list[Chunk],
                   workers: int, tally: Callable[[], object]) -> dict:
  """``run_chunk``'s tallies over ``work``, merged per key (each a
  ``tally()`` with a ``merge``), on ``workers`` forked processes."""
  tallies: dict[Hashable, object] = collections.defaultdict(tally)
  if workers == 1:
    results = map(run_chunk, work)
  else:
    pool = multiprocessing.get_context("fork").Pool(workers)
    results = pool.imap_unordered(run_chunk, work)
  for result in results:
    for key, part in result.items():
      tallies[key].merge(part)
  if workers > 1:
    pool.close()
    pool.join()
  return tallies


def point(record: ev.Record) -> str:
  """The epsilon a Poisson record is at: the grid's, or the delta it was
  computed for."""
  if record.source == "grid":
    return f"epsilon {record.epsilon:g}"
  return record.source


def point_order(label: str) -> tuple:
  """Sorts :func:`point` labels: the grid's epsilons, then by delta."""
  if label.startswith("epsilon "):
    return (0, float(label.split()[1]))
  return (1, -float(label.split("(")[1].rstrip(")")))
