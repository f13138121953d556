"""The numbers of ``FIELD.md``, from the records of ``results.jsonl``.

A row is a planned cell with the records of its seeds; a number is the
mean over them with its 95% Student-t half-width
(:func:`reports.summary.mean_interval`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from reports import summary
from reports.field import mechanisms
from reports.field import runs as runs_lib


@dataclasses.dataclass(frozen=True)
class Row:
  """A cell and the records of its seeds (those recorded), or why the
  mechanism refused it."""

  cell: runs_lib.Cell
  records: tuple[dict, ...]
  refused: str | None = None

  def values(self, name: str) -> list[float]:
    """``name`` over the seeds, those where it is None left out."""
    return [float(r[name]) for r in self.records if r[name] is not None]

  def mean_half(self, name: str) -> tuple[float, float]:
    """Mean and 95% half-width of ``name`` over the seeds (NaN half for one
    seed; NaN mean for none)."""
    values = self.values(name)
    if not values:
      return math.nan, math.nan
    mean, _, half = summary.mean_interval(values)
    return mean, half

  def mean(self, name: str) -> float:
    return self.mean_half(name)[0]

  def first(self, name: str):
    return self.records[0][name] if self.records else None


def rows(cells: Sequence[runs_lib.Cell], records: Sequence[dict]
         ) -> list[Row]:
  """A row per cell, with the records of its seeds."""
  by_key: dict[tuple, dict[int, dict]] = {}
  for record in records:
    by_key.setdefault(runs_lib.record_key(record), {})[record["seed"]] = record
  out = []
  for cell in cells:
    mine = [record for seed, record in by_key.get(cell.key, {}).items()
            if seed in cell.seeds]
    refused = [r["refused"] for r in mine if r.get("refused")]
    out.append(Row(cell, tuple(sorted((r for r in mine
                                       if not r.get("refused")),
                                      key=lambda r: r["seed"])),
                   refused[0] if refused else None))
  return out


def central_rows(table: Sequence[Row], population: str, n: int | None,
                 epsilon: float) -> tuple[Row, ...]:
  """The partition selection strategies' rows at a cell, in
  ``mechanisms.PS`` order (those that ran)."""
  return tuple(row for name in mechanisms.PS
               if (row := find(table, population, n, name, epsilon)))


def find(table: Sequence[Row], population: str, n: int | None,
         mechanism: str, epsilon: float) -> Row | None:
  """The row of a cell (n None: the population's only n), or None."""
  for row in table:
    c = row.cell
    if (c.population == population and (n is None or c.n == n)
        and c.mechanism == mechanism and c.epsilon == epsilon
        and row.records):
      return row
  return None


def true_words(row: Row) -> float:
  """The mean number of released words some user holds (false words, the
  noisy trie's false positives, left out)."""
  false = row.values("false_words")
  return row.mean("words") - (float(np.mean(false)) if false else 0.0)


@dataclasses.dataclass(frozen=True)
class Moonshot:
  """The moonshot ratios at one (n, epsilon): each noisy trie's, TrieHH
  Poisson's and the two-server walks' mean true words over the best
  partition selection strategy's (which releases no false word)."""

  n: int
  epsilon: float
  best: Row  # the partition selection strategy releasing the most words
  noisy: dict[str, Row]  # noisy trie variant -> its row, those that ran
  poisson: Row | None
  strategies: tuple[Row, ...]
  two_servers: dict[str, Row] = dataclasses.field(default_factory=dict)

  def ratio(self, row: Row | None) -> float:
    return true_words(row) / true_words(self.best) if row else math.nan

  def half(self, row: Row | None) -> float:
    """The ratio's 95% half-width (NaN without a row or with one seed)."""
    return _ratio_half(row, self.best) if row else math.nan


def moonshots(table: Sequence[Row], population: str,
              epsilons: Sequence[float]) -> list[Moonshot]:
  """The moonshot at each epsilon of ``epsilons``, at the largest n of
  ``population`` where partition selection ran at that epsilon."""
  out = []
  for epsilon in epsilons:
    sizes = sorted({r.cell.n for r in table if r.records
                    and r.cell.population == population
                    and r.cell.epsilon == epsilon
                    and r.cell.mechanism in mechanisms.PS})
    if not sizes:
      continue
    n = sizes[-1]
    strategies = central_rows(table, population, n, epsilon)
    best = max(strategies, key=lambda r: r.mean("words"))
    noisy = {name: row for name in mechanisms.NOISY_VARIANTS
             if (row := find(table, population, n, name, epsilon))}
    two = {name: row for name in mechanisms.TWO_SERVER_NAMES
           if (row := find(table, population, n, name, epsilon))}
    out.append(Moonshot(
        n, epsilon, best, noisy,
        find(table, population, n, mechanisms.POISSON, epsilon), strategies,
        two))
  return out


def ci(row: Row, name: str, digits: int = 2) -> str:
  """``mean ± half`` of ``name`` (the mean alone for one seed)."""
  mean, half = row.mean_half(name)
  if math.isnan(mean):
    return "–"
  if math.isnan(half):
    return f"{mean:,.{digits}f}"
  return f"{mean:,.{digits}f} ± {half:,.{digits}f}"


def median(row: Row, name: str) -> float:
  return float(np.median(row.values(name))) if row.records else math.nan


def series(table: Sequence[Row], population: str, mechanism: str, *,
           n: int | None = None, epsilon: float | None = None
           ) -> list[tuple[float, float, float]]:
  """(x, mean words, half) along epsilon (``n`` fixed) or along n
  (``epsilon`` fixed), for a figure."""
  out = []
  for row in table:
    c = row.cell
    if (c.population != population or c.mechanism != mechanism
        or not row.records or (n is not None and c.n != n)
        or (epsilon is not None and c.epsilon != epsilon)):
      continue
    mean, half = row.mean_half("words")
    out.append((c.epsilon if n is not None else c.n, mean,
                0.0 if math.isnan(half) else half))
  return sorted(out)


def by_population(table: Sequence[Row]) -> Mapping[str, list[Row]]:
  out: dict[str, list[Row]] = {}
  for row in table:
    out.setdefault(row.cell.population, []).append(row)
  return out


@dataclasses.dataclass(frozen=True)
class CellRatios:
  """At one (population, n, epsilon) where central partition selection
  ran: the federated mechanisms' true words over its best strategy's."""

  population: str
  n: int
  epsilon: float
  central: Row  # the partition selection strategy releasing the most
  ratios: dict[str, float]  # mechanism -> ratio of means (those that ran)
  halves: dict[str, float]  # mechanism -> the ratio's 95% half-width


def every_cell_ratios(table: Sequence[Row], names: Sequence[str]
                      ) -> list[CellRatios]:
  """The ratio of each of ``names`` at every (population, n, epsilon)
  where a partition selection strategy ran, in the table's order."""
  out, seen = [], set()
  for row in table:
    c = row.cell
    key = (c.population, c.n, c.epsilon)
    if key in seen or c.mechanism not in mechanisms.PS or not row.records:
      continue
    seen.add(key)
    best = max(central_rows(table, c.population, c.n, c.epsilon),
               key=true_words)
    ran = {name: r for name in names
           if (r := find(table, c.population, c.n, name, c.epsilon))}
    out.append(CellRatios(
        c.population, c.n, c.epsilon, best,
        {name: true_words(r) / true_words(best) for name, r in ran.items()},
        {name: _ratio_half(r, best) for name, r in ran.items()}))
  return out


def _ratio_half(row: Row, central: Row) -> float:
  """The half-width of true_words(row) / true_words(central) from both
  rows' relative half-widths (words; NaN for one seed)."""
  mean, half = row.mean_half("words")
  c_mean, c_half = central.mean_half("words")
  if not mean or not c_mean:
    return math.nan
  return (true_words(row) / true_words(central)
          * summary.relative_half_width(mean, half, c_mean, c_half))
