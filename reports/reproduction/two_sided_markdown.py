"""REPORT.md's section beyond the paper: Poisson sampling, proven both ways.

:func:`write_section` appends the section to the report's lines: the
calibration table of :func:`two_sided.calibration_rows` (Corollary 1's
theta and batch beside the Poisson accountant's theta and rate, no runs),
then the Poisson-sampled runs' measures beside the paper's value and the
fixed-size runs'. The numbers are those of
:mod:`reports.reproduction.two_sided`;
:mod:`reports.reproduction.markdown` writes the rest of the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from reports.reproduction import numbers
from reports.reproduction import two_sided


def write_section(lines: list[str], poisson_series: Sequence[numbers.Series],
                  series: Sequence[numbers.Series], *,
                  table_ns: Sequence[int], table_epsilons: Sequence[float],
                  multi_note: str) -> None:
  """Appends the section beyond the paper to ``lines``.

  Args:
    lines: the report's lines so far.
    poisson_series: the Poisson-sampled series.
    series: the fixed-size series (the paper's rows).
    table_ns, table_epsilons: the n and epsilons of the calibration table.
    multi_note: the data note of the several-words setting.
  """
  lines += _calibration_intro(two_sided.TABLE_LEVELS)
  rows = two_sided.calibration_rows(table_ns, table_epsilons)
  bounded = _calibration_table(lines, rows)
  lines.append("")
  calibrated = [r for r in rows if r.poisson]
  if bounded:
    lines += ["†: q is bounded by δ alone. If exactly θ_P − 1 other users "
              "hold the user's prefix, the prefix passes only if all of them "
              "and the user take part (probability q^θ_P per level), and "
              "never without the user; over the L levels that is "
              "1 − (1 − q^θ_P)^L, at least half of δ in these rows, and δ "
              "cannot be below it at any ε, so a larger ε buys no larger "
              "rate.", ""]
  if calibrated:
    lines += [_meets_target(calibrated) + " "
              + _trend(rows, table_ns, table_epsilons), ""]
  _runs(lines, poisson_series, series, multi_note)


def _calibration_intro(levels: int) -> list[str]:
  """The section's title, what it is, and the calibration table's head."""
  return ["## Beyond the paper: Poisson sampling, a guarantee proven in "
          "both directions", "",
          "Not in the paper. Every row above is the paper's TrieHH: a "
          "batch of exactly m users per round, θ and m from Corollary 1, "
          "and Theorem 1's (ε, δ), which is proven in one direction only "
          "(P[M(D) ∈ S] ≤ e^ε P[M(D′) ∈ S] + δ, D holding the user's word "
          "and D′ the empty word in its place; `docs/privacy.md`). Here "
          "every user takes part in a round independently with "
          "probability q, and the accountant of `triehh.theory.poisson` "
          "proves (ε, δ) in both directions, for neighbours that differ "
          "by one user. Every row of this section is " + two_sided.LABEL +
          ".", "",
          f"### θ and users per round at the same (ε, δ = 1/n²), L = "
          f"{levels} levels", "",
          f"From `triehh.theory.privacy.calibrate(n, {levels}, ε, 1/n²)` "
          "(Corollary 1: θ₁ and the batch m, labelled by Theorem 1, one "
          f"direction) and `triehh.theory.poisson_calibration.calibrate(n, {levels}, "
          "ε, 1/n²)` (θ_P and the rate q that maximise q/θ_P; q·n users "
          "per round on average; both directions); no runs. "
          f"{levels} levels are words of up to {levels - 1} characters "
          "plus the end symbol (the library's default; the runs below use "
          "the paper's 10). A word held by c users gets c·m/n votes on "
          "average in a fixed-size round and c·q in a Poisson round, and "
          "passes at θ: the count whose expected votes reach θ is θ₁·n/m "
          "under Theorem 1 and θ_P/q under the accountant, and the last "
          "column is how many times smaller the second is.", "",
          "| n | ε | Theorem 1 (Corollary 1): θ₁, m | Poisson accountant: "
          "θ_P, q, q·n | q·n / m | (q·n/θ_P) / (m/θ₁) |",
          "|---|---|---|---|---|---|"]


def _calibration_table(lines: list[str],
                       rows: Sequence[two_sided.CalibrationRow]) -> bool:
  """Appends one row per (n, epsilon); whether a rate is bounded by delta
  alone (marked †)."""
  bounded = False
  for row in rows:
    fixed = (f"{row.fixed.theta}, {row.fixed.batch_size:,}" if row.fixed
             else f"cannot be calibrated: {row.fixed_error}")
    if row.poisson:
      mark = ""
      if row.atom >= 0.5 * row.delta:
        mark, bounded = " †", True
      two = (f"{row.poisson.theta}, {row.poisson.rate:.4g}, "
             f"{row.poisson.expected_batch_size:,.0f}{mark}")
    else:
      two = f"cannot be calibrated: {row.poisson_error}"
    lines.append(f"| 10^{round(math.log10(row.n))} | {row.epsilon:g} | "
                 f"{fixed} | {two} | {_ratio(row.batch_ratio)} | "
                 f"{_ratio(row.threshold_ratio)} |")
  return bounded


def _ratio(value: float | None) -> str:
  return "—" if value is None else f"{value:.1f}"


def _meets_target(rows: Sequence[two_sided.CalibrationRow]) -> str:
  """Whether every Poisson calibration's delta is at most its target."""
  over = [r for r in rows if r.poisson.delta > r.delta]
  worst = max(r.poisson.delta / r.delta for r in rows)
  if not over:
    return ("The accountant's two-sided δ at the target ε is at most the "
            f"target δ in every row (largest ratio {worst:.6f}).")
  where = "; ".join(f"n = 10^{round(math.log10(r.n))}, ε = {r.epsilon:g}"
                    for r in over)
  rows_text = "one row" if len(over) == 1 else f"{len(over)} rows"
  return ("The accountant's two-sided δ at the target ε exceeds the target "
          f"δ by at most {worst - 1:.2g} of it in {rows_text} ({where}; "
          "floating-point rounding in the calibration's search), and is at "
          "most the target in the others.")


def _trend(rows: Sequence[two_sided.CalibrationRow],
           table_ns: Sequence[int], table_epsilons: Sequence[float]) -> str:
  """The span of q over n per epsilon, and of the batch-per-threshold
  ratio over the table."""
  spans = []
  for epsilon in table_epsilons:
    qs = [r.poisson.rate for r in rows
          if r.poisson and math.isclose(r.epsilon, epsilon)]
    if qs:
      spans.append(f"{min(qs):.3f} to {max(qs):.3f} at ε = {epsilon:g}")
  ns = ", ".join(f"10^{round(math.log10(n))}" for n in table_ns)
  text = f"Over n = {ns}, q stays within {'; '.join(spans)}."
  both = [r for r in rows if r.threshold_ratio is not None]
  if both:
    low = min(both, key=lambda r: r.threshold_ratio)
    high = max(both, key=lambda r: r.threshold_ratio)
    where = lambda r: f"n = 10^{round(math.log10(r.n))}, ε = {r.epsilon:g}"  # pylint: disable=unnecessary-lambda-assignment
    text += (" The batch per threshold is "
             f"{low.threshold_ratio:.1f} ({where(low)}) to "
             f"{high.threshold_ratio:.1f} ({where(high)}) times Theorem 1's.")
  return text


def _runs(lines: list[str], poisson_series: Sequence[numbers.Series],
          series: Sequence[numbers.Series], multi_note: str) -> None:
  """The Poisson runs' measures beside the paper's and the fixed-size runs',
  and how their intervals compare."""
  levels = sorted({int(s.records[0]["levels"]) for s in poisson_series
                   if s.runs})
  at = ("the paper's 10 levels" if levels == [10] else
        f"L = {', '.join(map(str, levels))} levels" if levels else
        "the same levels")
  lines += _runs_intro(at)
  order = list(two_sided.MEASURES)
  chosen = sorted((s for s in poisson_series if s.runs),
                  key=lambda s: (order.index(s.figure), s.epsilon))
  higher, overlapping, lower, fewer = [], [], [], False
  for s in chosen:
    line, verdict, has_fewer = _run_row(s, series)
    lines.append(line)
    fewer |= has_fewer
    if verdict is not None:
      name = f"{two_sided.MEASURES[s.figure][0]} {s.figure} ε = {s.epsilon:g}"
      {"higher": higher, "overlapping": overlapping,
       "lower": lower}[verdict].append(name)
  lines.append("")
  if not chosen:
    lines += ["No Poisson-sampled runs.", ""]
    return
  compared = len(higher) + len(overlapping) + len(lower)
  listed = lambda names: f" ({'; '.join(names)})" if names else ""  # pylint: disable=unnecessary-lambda-assignment
  lines.append(
      "Against the fixed-size runs' interval, the Poisson runs' is above "
      f"in {len(higher)} of {compared} rows, overlaps it in "
      f"{len(overlapping)}{listed(overlapping)} and is below it in "
      f"{len(lower)}{listed(lower)}. " + (
          "Some Poisson cells have fewer runs than the fixed-size cell "
          "beside them (runs column)." if fewer else "Each Poisson cell has "
          "as many runs as the fixed-size cell beside it."))
  lines.append("")
  deltas = _several_words_deltas(chosen, series)
  if deltas:
    lines += [deltas, ""]
  if multi_note.startswith("not run"):
    lines += [f"Several words: {multi_note}", ""]


def _runs_intro(at: str) -> list[str]:
  """The runs' subsection title, what they are, and their table's head."""
  return ["### What it buys: the measures above, with Poisson-sampled "
          "runs on the same data", "",
          "Poisson-sampled TrieHH (fast engine) on the same populations as "
          f"the paper's rows above (see Data), at the same ε and δ and {at}, "
          "with θ and q from "
          "`triehh.theory.poisson_calibration.calibrate` at each population's n: "
          "δ = 1/n² with one word per user, δ = 5·10⁻⁹ (the paper's "
          "bound) with several "
          "(where the accountant needs no split of δ over the levels, "
          "which the fixed-size runs' per-round composition takes); each "
          "row's achieved δ is printed with its θ. Means "
          "± 95% intervals over the runs.", "",
          "The ceiling is the measure's largest value at the runs' "
          "levels: a word longer than the runs' `max_length` is never "
          "found, so recall of the top K is at most the share of its "
          "words that are not longer (the paper's F1 follows from it).",
          "",
          "| row | measure | ε | paper | ours, fixed size (Theorem 1, "
          "one direction) | ours, Poisson (both directions) | ceiling | "
          "runs (fixed, Poisson) | θ, users per round and δ (fixed; "
          "Poisson) | data |",
          "|---|---|---|---|---|---|---|---|---|---|"]


def _run_row(s: numbers.Series, series: Sequence[numbers.Series]
             ) -> tuple[str, str | None, bool]:
  """One Poisson series' row; where its interval lies against the
  fixed-size one's (``"higher"``, ``"overlapping"``, ``"lower"``, or
  ``None`` when no fixed-size series ran); whether it has fewer runs."""
  _, what, _ = two_sided.MEASURES[s.figure]
  p_mean, p_half, p_text = numbers.stat(two_sided.measure(s))
  fixed = numbers.find(series, "triehh", s.figure, s.epsilon)
  verdict, fewer = None, False
  if fixed is None:
    f_text, runs, params = "not run", f"0, {s.runs}", "—; "
  else:
    f_mean, f_half, f_text = numbers.stat(two_sided.measure(fixed))
    runs = f"{fixed.runs}, {s.runs}"
    fewer = s.runs < fixed.runs
    params = _parameters(fixed) + "; "
    p_lo, p_hi = p_mean - _half(p_half), p_mean + _half(p_half)
    f_lo, f_hi = f_mean - _half(f_half), f_mean + _half(f_half)
    verdict = ("higher" if p_lo > f_hi else "lower" if p_hi < f_lo
               else "overlapping")
  line = (f"| {two_sided.LABEL} | {what} | {s.epsilon:g} | "
          f"{two_sided.paper_value(s.figure, s.epsilon)} | {f_text} | "
          f"{p_text} | {two_sided.ceiling(s):.2f} | {runs} | {params}"
          f"{_parameters(s)} | {_data(s)} |")
  return line, verdict, fewer


def _parameters(s: numbers.Series) -> str:
  """theta, the users per round and the achieved delta of a series."""
  return (f"{two_sided.run_parameters(s)}, δ = "
          f"{numbers.sci(numbers.achieved_delta(s))}")


def _data(s: numbers.Series) -> str:
  """The data column: the semi-synthetic label, if any, and the data."""
  label = numbers.data_label(s.figure)
  return f"{label}; {s.data}" if label else s.data


def _several_words_deltas(poisson_series: Sequence[numbers.Series],
                          series: Sequence[numbers.Series]) -> str:
  """The several-words rows' δ against the paper's bound (``""`` if none)."""
  parts = []
  for s in poisson_series:
    if not (s.figure.startswith("multi") and s.runs):
      continue
    fixed = numbers.find(series, "triehh", s.figure, s.epsilon)
    for name, run in (("fixed size", fixed), ("Poisson", s)):
      if run is not None:
        delta = numbers.achieved_delta(run)
        parts.append(f"{name} at n = {run.n:,}: {numbers.sci(delta)}, "
                     f"{numbers.versus_paper_delta(delta)}")
  if not parts:
    return ""
  return ("With several words the paper states δ < "
          f"{numbers.sci(numbers.PAPER_MULTI_DELTA, 1)}; our runs target "
          "that δ, and achieve: " + "; ".join(parts) + ".")


def _half(half: float) -> float:
  return 0.0 if math.isnan(half) else half
