"""``FIELD.md`` and its figures, from the records of the runs.

:func:`write` makes the report of a plan (:func:`reports.field.
runs.plan`) from ``<output_dir>/results.jsonl``: the same records give the
same report, whether they were run now or by an earlier invocation, but
for the wall time and the command it names.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence

from reports.field import mechanisms
from reports.field import populations
from reports.field import rows as rows_lib
from reports.field import runs as runs_lib
from reports.field import text
from triehh.core import files

REPORT = "FIELD.md"
TITLE = "# Where TrieHH stands in the field"
FIGURE_EPSILON = "field-words-vs-epsilon.png"
FIGURE_N = "field-words-vs-n.png"


@dataclasses.dataclass(frozen=True)
class Context:
  """What the report says of its invocation.

  Attributes:
    command: the command line that made it.
    seconds: the invocation's wall time.
    mechanism_seconds: the wall time of each mechanism's runs (run now).
    written: runs run now (the others were read from results.jsonl).
    workers: the processes that ran them (the mechanisms' seconds are
      summed over them).
  """

  command: str
  seconds: float
  mechanism_seconds: Mapping[str, float]
  written: int
  workers: int = 1


def write(report_dir: str, output_dir: str, settings: runs_lib.Settings,
          plan: runs_lib.Plan, context: Context) -> str:
  """Writes ``<report_dir>/FIELD.md`` and its figures; its path."""
  os.makedirs(report_dir, exist_ok=True)
  table = rows_lib.rows(plan.cells, runs_lib.recorded(output_dir))
  shots = rows_lib.moonshots(table, populations.ENGLISH,
                             settings.moonshot_epsilons)
  lines = [TITLE, "", f"Produced by `{context.command}`.", ""]
  lines += text.introduction(settings)
  lines += text.moonshot_section(shots)
  lines += text.every_cell_section(rows_lib.every_cell_ratios(
      table, text.CELL_RATIO_MECHANISMS))
  lines += _figures(table, settings, report_dir)
  for name, mine in rows_lib.by_population(table).items():
    lines += population_section(name, mine, plan)
  lines += text.guarantees_section(table)
  lines += text.left_out(plan.notes)
  lines += text.which_to_use(table, settings)
  lines += [wall_time_line(context, table), ""]
  return files.write_text(os.path.join(report_dir, REPORT), "\n".join(lines))


def wall_time_line(context: Context, table: Sequence[rows_lib.Row]) -> str:
  """The invocation's wall time, split by mechanism."""
  parts = ", ".join(f"{mechanisms.LABELS[name]} {seconds:.0f} s"
                    for name, seconds in context.mechanism_seconds.items()
                    if seconds >= 0.5)
  total = sum(len(row.cell.seeds) if row.refused else len(row.records)
              for row in table)
  read = total - context.written
  earlier = (f"; {read} of its {total} runs were recorded by an earlier "
             "invocation and read from `results.jsonl`" if read > 0 else "")
  processes = (f" in {context.workers} worker processes (runs by mechanism "
               "summed over them)" if context.workers > 1 else "")
  return (f"Wall time {context.seconds:.0f} s from the command's start to "
          f"its last run (populations and {total} runs; this file and its "
          "figures are written after) on a shared 2-core machine"
          f"{processes}; runs by "
          f"mechanism: {parts or 'none'}{earlier}.")


def _figures(table: Sequence[rows_lib.Row], settings: runs_lib.Settings,
             report_dir: str) -> list[str]:
  """The two figures, drawn and linked (a note without matplotlib)."""
  lines = ["## Figures", ""]
  if settings.users:
    n = max(settings.users)
    lines += _figure(report_dir, FIGURE_EPSILON,
                     f"words released vs epsilon at n = {n:,}",
                     lambda path: _draw().words_vs_epsilon(table, n, path))
  epsilon = 4.0 if 4.0 in settings.epsilons else max(settings.epsilons)
  lines += _figure(report_dir, FIGURE_N,
                   f"words released vs n at epsilon = {epsilon:g}",
                   lambda path: _draw().words_vs_n(table, epsilon, path))
  return lines


def _draw():
  from reports.field import figures  # pylint: disable=g-import-not-at-top
  return figures


def _figure(report_dir: str, name: str, alt: str,
            draw: Callable[[str], object]) -> list[str]:
  try:
    draw(os.path.join(report_dir, name))
  except ImportError as err:  # matplotlib missing: tables only
    return [f"(figure {name} not drawn: {err})", ""]
  return [f"![{alt}]({name})", ""]


_HEADER = ("| n | ε | mechanism | parameters | runs | words released | "
           "false words | recall@10 | recall@100 | recall@1000 | precision | "
           "rounds | bytes per round (max) | bytes per user per run | "
           "server sees raw strings | ms per run (median) | guarantee |")


def population_section(name: str, table: Sequence[rows_lib.Row],
                       plan: runs_lib.Plan) -> list[str]:
  """A population's table: a row per (n, epsilon, mechanism)."""
  sizes = sorted({row.cell.n for row in table})
  some = plan.data[(name, sizes[0])]
  lines = [f"## {some.label}", "",
           f"n = {', '.join(f'{n:,}' for n in sizes)}; L = "
           f"{some.population.max_length}; {some.population.num_words:,} "
           f"distinct words at n = {sizes[0]:,}; a raw word is "
           f"{some.raw_bytes:.1f} bytes on average.", "", _HEADER,
           "|" + "---|" * (_HEADER.count("|") - 1)]
  order = {m: i for i, m in enumerate(mechanisms.MECHANISMS)}
  for row in sorted(table, key=lambda r: (r.cell.n, r.cell.epsilon,
                                          order[r.cell.mechanism])):
    lines.append(table_row(row))
  lines.append("")
  return lines


def _bytes(row: rows_lib.Row, name: str) -> str:
  if row.first("raw_strings"):
    return f"raw word, {row.mean(name):.1f}"
  return f"{row.mean(name):,.0f}"


def table_row(row: rows_lib.Row) -> str:
  """One line of a population's table."""
  c = row.cell
  if not row.records:
    why = (f"refused: {row.refused.split(' (')[0]}" if row.refused
           else "not run")
    return (f"| {c.n:,} | {c.epsilon:g} | {mechanisms.LABELS[c.mechanism]} "
            f"| {why} |" + " |" * 13)
  seconds = rows_lib.median(row, "seconds")
  return (f"| {c.n:,} | {c.epsilon:g} | {mechanisms.LABELS[c.mechanism]} | "
          f"{row.first('setting')} | {len(row.records)} | "
          f"{rows_lib.ci(row, 'words', 1)} | "
          f"{rows_lib.ci(row, 'false_words', 1)} | "
          f"{rows_lib.ci(row, 'recall@10')} | "
          f"{rows_lib.ci(row, 'recall@100')} | "
          f"{rows_lib.ci(row, 'recall@1000')} | "
          f"{rows_lib.ci(row, 'precision', 3)} | "
          f"{rows_lib.median(row, 'rounds'):.0f} | "
          f"{_bytes(row, 'bytes_round_max')} | "
          f"{_bytes(row, 'bytes_per_user')} | "
          f"{'yes' if row.first('raw_strings') else 'no'} | "
          f"{_milliseconds(seconds)} | {row.first('guarantee')} |")


def _milliseconds(seconds: float) -> str:
  if math.isnan(seconds):
    return "–"
  ms = 1000 * seconds
  return f"{ms:.2f}" if ms < 1 else f"{ms:.1f}" if ms < 100 else f"{ms:,.0f}"
