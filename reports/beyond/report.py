"""``BEYOND.md`` and its figures, from the records of the runs.

:func:`write` makes the report of planned parts
(:func:`reports.beyond.runs.plan`) from the records in
``<output_dir>/results.jsonl`` (:mod:`reports.beyond.rows`): the
same records give the same report, whether they were run now or by an
earlier invocation, but for the wall time and the command it names.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from reports.beyond import counts as counts_lib  # registers (d)
from reports.beyond import rows as rows_lib
from reports.beyond import runs as runs_lib
from reports.reproduction import numbers
from triehh.core import files

REPORT = "BEYOND.md"
TITLE = ("# Beyond the paper: IBLT, repeated passes, users offline, "
         "protected counts")
_LETTERS = {runs_lib.IBLT: "a", runs_lib.PASSES: "b",
            runs_lib.AVAILABILITY: "c", runs_lib.COUNTS: "d"}


@dataclasses.dataclass(frozen=True)
class Context:
  """What the report says of its invocation.

  Attributes:
    command: the command line that made it.
    seconds: the invocation's wall time.
    outcome: what its runs did (:class:`reports.beyond.runs.Outcome`).
  """

  command: str
  seconds: float
  outcome: runs_lib.Outcome


def write(report_dir: str, output_dir: str, settings: runs_lib.Settings,
          parts: Sequence[runs_lib.Part], context: Context) -> str:
  """Writes ``<report_dir>/BEYOND.md`` and its figures from the records of
  ``output_dir``; its path."""
  os.makedirs(report_dir, exist_ok=True)
  records = rows_lib.recorded(output_dir)
  outcome = context.outcome
  lines = [TITLE, "", f"Produced by `{context.command}`.", ""]
  for part in parts:
    if part.name == runs_lib.IBLT:
      lines += _iblt(part, records, outcome, settings, report_dir)
    elif part.name == runs_lib.PASSES:
      rows = rows_lib.passes_rows(part, records, outcome.refused)
      lines += passes_section(rows, part.notes, settings)
      _figure(lines, report_dir, "beyond-passes.png", "recall@K vs passes",
              lambda path, rows=rows: _figures().passes_figure(
                  rows, path, settings.total_epsilon))
    elif part.name == runs_lib.COUNTS:
      lines += _counts(part, records, outcome, settings, report_dir)
    else:
      rows = rows_lib.availability_rows(part, records)
      lines += availability_section(rows, part.points[0].n_users, settings)
      _figure(lines, report_dir, "beyond-availability.png",
              "recall@50 and achieved epsilon vs fraction online",
              lambda path, rows=rows: _figures().availability_figure(
                  rows, path, settings.total_epsilon))
  timings = ", ".join(f"({_LETTERS[part.name]}) "
                      f"{outcome.seconds.get(part.name, 0.0):.0f} s"
                      for part in parts)
  lines += [f"Wall time {context.seconds:.0f} s ({timings}) on a shared "
            f"2-core machine{_earlier(parts, records, outcome)}.", ""]
  return files.write_text(os.path.join(report_dir, REPORT), "\n".join(lines))


def _earlier(parts: Sequence[runs_lib.Part], records: rows_lib.Recorded,
             outcome: runs_lib.Outcome) -> str:
  """How many of the report's runs were recorded by an earlier invocation
  (nothing when none were)."""
  total = sum((p.key, seed) in records for part in parts for p in part.points
              for seed in p.seeds)
  read = total - outcome.written
  if read <= 0:
    return ""
  return (f"; {read} of its {total} runs were recorded by an earlier "
          "invocation and read from `results.jsonl`")


def _figures():
  from reports.beyond import figures  # pylint: disable=g-import-not-at-top
  return figures


def _figure(lines: list[str], report_dir: str, name: str, alt: str,
            draw: Callable[[str], object]) -> None:
  """Draws a figure into ``report_dir`` and links it; without matplotlib,
  says so."""
  try:
    draw(os.path.join(report_dir, name))
  except ImportError as err:  # matplotlib missing: tables only
    lines += [f"(figure {name} not drawn: {err})", ""]
    return
  lines += [f"![{alt}]({name})", ""]


def _counts(part: runs_lib.Part, records: rows_lib.Recorded,
            outcome: runs_lib.Outcome, settings: runs_lib.Settings,
            report_dir: str) -> list[str]:
  """(d)'s section and figure."""
  rows, notes = counts_lib.counts_rows(part, records, outcome.refused)
  lines = counts_lib.counts_section(rows, notes, settings)
  if rows:
    _figure(lines, report_dir, "beyond-counts.png",
            "median relative error of the top-10 counts vs epsilon and vs "
            "the budget split",
            lambda path: _figures().counts_figure(rows, path,
                                                  settings.total_epsilon))
  return lines


# ---- (a) IBLT -----------------------------------------------------------------


def _iblt(part: runs_lib.Part, records: rows_lib.Recorded,
          outcome: runs_lib.Outcome, settings: runs_lib.Settings,
          report_dir: str) -> list[str]:
  if part.name in outcome.missing:
    return iblt_missing(outcome.missing[part.name])
  rows, notes = rows_lib.iblt_rows(part, records, outcome.refused)
  lines = iblt_section(rows, notes, settings)
  if rows:
    _figure(lines, report_dir, "beyond-iblt-f1.png",
            "F1@K vs K, TrieHH and IBLT",
            lambda path: _figures().f1_figure(rows, path))
  return lines


def iblt_section(rows: Sequence[Mapping], notes: Sequence[str],
                 settings: runs_lib.Settings) -> list[str]:
  out = ["## (a) TFF's IBLT heavy hitters next to TrieHH", "",
         "IBLT (`tff.analytics.heavy_hitters.iblt`, via "
         "`triehh.baselines.iblt.iblt_discover`) runs one round on TrieHH's "
         "first-round users (same seed, same `triehh.engines.sampling` draw: m "
         "users) with k_anonymity = TrieHH's θ; TrieHH runs all its rounds "
         "(≈ L·m client-rounds). Time per client: IBLT's TFF round over its "
         "clients (building the computation excluded), TrieHH's TFF engine "
         "per client-round (one seed, run warm: a first run compiles). Bytes "
         "per client: IBLT's sketch and count tensors "
         "(int64); TrieHH's vote vector (int32) per client per round. "
         "IBLT's outputs cut at `string_max_bytes` are false positives "
         "(TrieHH never reports a truncated word). Utility: mean ± 95% CI "
         f"over {settings.runs} TrieHH seeds and {settings.iblt_runs} IBLT "
         "seeds.", "",
         "**Privacy.** TrieHH's label is (ε, δ)-differential privacy "
         "(Theorem 1, whose proof covers one direction: P[M(D) ∈ S] ≤ "
         "e^ε P[M(D′) ∈ S] + δ with D′ holding the empty word in place of "
         "the user's; `docs/privacy.md`). IBLT's k-anonymity is **not** "
         "(ε, δ)-DP: every "
         "string sent by at least k clients of the round is released with "
         "its exact count, so whether a word of exactly k users is "
         "released depends on each one of them.", ""]
  out += [f"- {n}" for n in notes]
  out += ["| data | ε | algorithm | clients | ms per client | bytes per "
          "client | truncated outputs | recall@10 | recall@50 | F1@10 | "
          "F1@50 | F1@100 | privacy |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
  ci, metric = rows_lib.ci, rows_lib.metric
  for row in rows:
    out.append(
        f"| {row['data']} | {row['epsilon']:g} | {row['algorithm']} | "
        f"{np.mean(row['clients']):,.0f} | {np.median(row['ms']):.3f} | "
        f"{row['bytes']} | {np.mean(row['truncated']):.1f} | "
        f"{ci(metric(row, 'recall@10'))} | "
        f"{ci(metric(row, 'recall@50'))} | "
        f"{ci(metric(row, 'f1@10'))} | {ci(metric(row, 'f1@50'))} | "
        f"{ci(metric(row, 'f1@100'))} | {row['privacy']} |")
  out.append("")
  return out


def iblt_missing(err: BaseException) -> list[str]:
  return ["## (a) TFF's IBLT heavy hitters next to TrieHH", "",
          f"**Not produced in this run** ({type(err).__name__}: {err}). "
          "It needs TensorFlow Federated and `triehh.baselines.iblt`; run "
          "`python -m experiments.beyond --parts=iblt` (or `python -m "
          "benchmarks.iblt_benchmark`) where they are available.", ""]


# ---- (b) passes ----------------------------------------------------------------


def passes_section(rows: Sequence[Mapping], notes: Sequence[str],
                   settings: runs_lib.Settings) -> list[str]:
  out = ["## (b) Repeated passes with a deny list",
         "",
         f"P passes at a total ε = {settings.total_epsilon:g} (δ = 1/n²), "
         "pass p denying the words found by passes before it "
         "(`triehh.discovery.passes.discover_passes`, composition \"best\": "
         "the larger per-pass ε of basic and advanced composition). Recall "
         "of the union of the passes' words; mean ± 95% CI over "
         f"{settings.runs} seeds.", ""]
  out += notes
  out += ["| data | passes | composition | per-pass ε target | total ε "
          "(achieved) | total δ | recall@10 | recall@50 | recall@100 | "
          "words found |",
          "|---|---|---|---|---|---|---|---|---|---|"]
  ci, metric = rows_lib.ci, rows_lib.metric
  for row in rows:
    if row["error"]:
      out.append(f"| {row['data']} | {row['passes']} | refused: "
                 f"{row['error'][:160]}… | | | | | | | |")
      continue
    found = rows_lib.mean_half(metric(row, "num_discovered"))
    out.append(
        f"| {row['data']} | {row['passes']} | {row['composition']} | "
        f"{row['pass_target_epsilon']:.3f} | {row['epsilon']:.3f} | "
        f"{row['delta']:.2g} | {ci(metric(row, 'recall@10'))} | "
        f"{ci(metric(row, 'recall@50'))} | "
        f"{ci(metric(row, 'recall@100'))} | "
        f"{numbers.fmt(*found, 1)} |")
  out += ["", rows_lib.passes_answer(rows), ""]
  return out


# ---- (c) availability ----------------------------------------------------------


def _eps(value: float) -> str:
  return "∞ (no guarantee)" if not math.isfinite(value) else f"{value:.3f}"


def availability_section(rows: Sequence[Mapping], n: int,
                         settings: runs_lib.Settings) -> list[str]:
  out = ["## (c) Users who are not always online",
         "",
         f"Default data (n = {n:,}); every round a uniform "
         "random subset of round(f·n) users is online and the batch is "
         "drawn from it (`triehh.discovery.availability.discover_online`). "
         "The accounting is Theorem 1 at the worst round's online count (an "
         "adversary who knows who is online). \"online\": θ and m "
         f"calibrated for ε = {settings.total_epsilon:g} at the online "
         "count; \"nominal\": θ and m calibrated for n, as a deployment "
         "planned for n users would, and the ε they really give. \"ε if n\" "
         "is the label one would print ignoring availability. Mean ± 95% CI "
         f"over {settings.runs} seeds.", "",
         "| calibrated to | online fraction | worst online count | θ | m | "
         "achieved ε | ε if n | recall@10 | recall@50 | recall@100 |",
         "|---|---|---|---|---|---|---|---|---|---|"]
  ci, metric = rows_lib.ci, rows_lib.metric
  for row in rows:
    out.append(
        f"| {row['calibrate_to']} | {row['fraction']:g} | "
        f"{row['worst_online']:,} | {row['theta']} | "
        f"{row['batch_size']:,} | {_eps(max(row['epsilons']))} | "
        f"{_eps(row['nominal_epsilon'])} | "
        f"{ci(metric(row, 'recall@10'))} | "
        f"{ci(metric(row, 'recall@50'))} | "
        f"{ci(metric(row, 'recall@100'))} |")
  out.append("")
  return out
