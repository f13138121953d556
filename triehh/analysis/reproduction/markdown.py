"""REPORT.md: the paper's tables and figures beside ours, with the data used.

:func:`write` takes the scored series (:class:`numbers.Series`), draws the
figures (:mod:`triehh.analysis.reproduction.figures`) into the report's directory and
writes ``REPORT.md`` there. Every number the paper states is shown with
ours, the data each used and, where ours differs beyond the interval, one
sentence on why (``REASONS``; the sentence is printed only if it differs).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence

from triehh.analysis.reproduction import figures
from triehh.analysis.reproduction import numbers
from triehh.analysis.reproduction import two_sided
from triehh.analysis.reproduction import two_sided_markdown
from triehh.core import files
from triehh.core import metrics

FIX_PROB_FREQUENCIES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
K_MAX = {"single": 100, "oov": 100, "multi": 300, "multi-n": 300}
PAPER_DATA = {
    "single": "Sentiment140 (1.6M tweets, 659,775 users), each user's most "
              "frequent word",
    "oov": "6M users drawn from the OOV token frequencies of Sentiment140 "
           "(words outside an unpublished 260k-word dictionary)",
    "multi": "Sentiment140 as is (659,775 users, every word with its local "
             "frequency)"}
# Why ours can differ, per comparison; printed only where it differs beyond
# the interval. ``{threshold}`` is the runs' theta over their batch size
# (numbers.threshold_share).
REASONS = {
    "table1": "ours is Corollary 1 as the project implements it; a "
              "difference beyond the paper's truncation to two decimals "
              "means the calibration differs from the paper's",
    ("triehh", 1.0): "at ε = 1 the top-50 words near the threshold "
                     "({threshold} of users) are found more or less often "
                     "depending on how many tail words share their "
                     "prefixes, and our tail below the published head is "
                     "the sample's (capped), not the paper's",
    ("triehh", 4.0): "at ε = 4 every top-50 word of at most 9 characters "
                     "is found, so the difference lies in which words are "
                     "longer than 9 characters (12 of the published top 50)",
    "multi": "our several-words population is the 88k-user sample (or "
             "users resampled from it), whose words are spread over fewer "
             "users' bags than the full data's, so F(w) of the top-200 "
             "words and their prefix support differ from the paper's",
    "sfp_recall": "SFP's recall hinges on which fragments win the top-T "
                  "per position among all 256 buckets, and our tail (the "
                  "sample's OOV words under wordfreq's 50k dictionary, "
                  "capped below the head, with hundreds of words at the "
                  "cap) competes harder than the paper's smoother tail",
    "sfp_precision": "precision is the share of SFP's stitched words that "
                     "some user holds; with the authors' stitching (keep "
                     "the part before the first $) short fragments of real "
                     "words count as held whenever the tail has them, which "
                     "depends on the tail's vocabulary",
    "local_epsilon": "",
}


@dataclasses.dataclass
class Context:
  """Facts about the reproduction run shown in the report."""

  command: str
  seconds: float
  runs_written: int
  triehh_runs: int
  sfp_runs: int
  multi_runs: int
  data_notes: Mapping[str, str]
  load_note: str = ""
  # The section beyond the paper (two_sided): whether to write it, and the
  # n and epsilons of its calibration table.
  beyond: bool = False
  table_ns: Sequence[int] = two_sided.TABLE_NS
  table_epsilons: Sequence[float] = two_sided.TABLE_EPSILONS


def _why(paper: float, mean: float, half: float, reason: str) -> str:
  if numbers.within(paper, mean, half) or not reason:
    return ""
  return reason


def _table1(lines: list[str]) -> None:
  lines += ["## Table 1: θ and γ for ε = 2 (L = 10 levels)", "",
            "From `triehh.theory.privacy.calibrate` (no runs). Data: none "
            "(theory), as in the paper.", "",
            "| n | paper θ, γ (δ ≤ 1/300n) | ours | paper θ, γ (δ ≤ 1/n²) "
            "| ours |", "|---|---|---|---|---|"]
  differs = False
  for row in numbers.table1_rows():
    p, o = row["paper"], row["ours"]
    cut = lambda g: math.floor(g * 100 + 1e-9) / 100  # pylint: disable=unnecessary-lambda-assignment
    same = (p[0] == o[0] and math.isclose(cut(o[1]), p[1]) and p[2] == o[2]
            and math.isclose(cut(o[3]), p[3]))
    differs |= not same
    lines.append(f"| 10^{int(math.log10(row['n']))} | {p[0]}, {p[1]:.2f} | "
                 f"{o[0]}, {o[1]:.3f} | {p[2]}, {p[3]:.2f} | {o[2]}, "
                 f"{o[3]:.3f} |")
  lines += ["", ("Where they differ: " + REASONS["table1"] + "." if differs
                 else "Every θ matches the paper, and every γ once ours is "
                 "cut (not rounded) to two decimals, as the paper's are."),
            ""]


def _table2(lines: list[str], series: Sequence[numbers.Series]) -> None:
  lines += ["## Table 2: recall@50 and precision, OOV setting (δ = 1/n²)",
            "",
            "Paper: " + PAPER_DATA["oov"] + ". Ours: the "
            + numbers.data_label("oov") + " (see Data). Ours are means ± "
            "95% intervals over the runs." + _table2_delta(series), "",
            "| algorithm | ε | paper recall@50 | ours | paper precision | ours "
            "| runs | δ (ours) | data | why they differ |",
            "|---|---|---|---|---|---|---|---|---|---|"]
  label = numbers.data_label("oov")
  for (algorithm, t, epsilon), (p_recall, p_prec) in (
      numbers.PAPER_TABLE2.items()):
    s = numbers.find(series, algorithm, "oov", epsilon, t)
    name = "TrieHH" if algorithm == "triehh" else f"SFP (T={t})"
    if s is None:
      lines.append(f"| {name} | {epsilon:g} | {p_recall} | not run | "
                   f"{p_prec} | not run | 0 | | {label} | |")
      continue
    r_mean, r_half, r_text = numbers.stat(
        numbers.metric_of_runs(s, "recall@50"))
    q_mean, q_half, q_text = numbers.stat(
        numbers.metric_of_runs(s, "precision"), 3)
    if algorithm == "triehh":
      why = [_why(p_recall, r_mean, r_half,
                  REASONS.get((algorithm, epsilon), "").format(
                      threshold=numbers.threshold_share(s)))]
    else:
      why = [_why(p_recall, r_mean, r_half, REASONS["sfp_recall"]),
             _why(p_prec, q_mean, q_half, REASONS["sfp_precision"])]
    diff = f"{r_mean - p_recall:+.2f} recall"
    text = "; ".join(w for w in why if w)
    lines.append(f"| {name} | {epsilon:g} | {p_recall} | {r_text} | "
                 f"{p_prec} | {q_text} | {s.runs} | "
                 f"{numbers.sci(numbers.achieved_delta(s))} | {label} | "
                 f"{diff}{'; ' + text if text else ''} |")
  lines.append("")


def _table2_delta(series: Sequence[numbers.Series]) -> str:
  """What the δ column of Table 2 is, with the runs' target 1/n²."""
  ran = [s for s in series if s.figure == "oov" and s.runs]
  if not ran:
    return ""
  n = ran[0].n
  return (f" The target is the paper's δ = 1/n² = "
          f"{numbers.sci(numbers.target_delta(ran[0]))} (n = {n:,}); the δ "
          "column is what each row's runs achieve: Theorem 1's at TrieHH's "
          "θ, and the δ of SFP's amplification.")


def _local_epsilon(lines: list[str], series: Sequence[numbers.Series]
                   ) -> None:
  lines += ["## SFP's local ε (amplification by shuffling)", "",
            "| setting | central ε | paper ε_local | ours | n |",
            "|---|---|---|---|---|"]
  for (figure, epsilon), paper in numbers.PAPER_LOCAL_EPSILON.items():
    s = numbers.find(series, "sfp", figure, epsilon)
    ours = (f"{s.records[0]['epsilon_local']:.2f}" if s else "not run")
    n = f"{s.n:,}" if s else ""
    lines.append(f"| {figure} | {epsilon:g} | {paper} | {ours} | {n} |")
  lines.append("")


def _claims(lines: list[str], series: Sequence[numbers.Series]) -> None:
  lines += ["## Claims of the text", "",
            "| claim (paper) | paper | ours | data |", "|---|---|---|---|"]
  for algorithm, paper in (("triehh", "close to 1"), ("sfp", "about 0.2")):
    s = numbers.find(series, algorithm, "single", 4.0, 20 if algorithm == "sfp"
              else None)
    ours = "not run"
    if s:
      curve = numbers.f1_paper_curves(s, 100)
      _, _, ours = numbers.stat(curve[:, -1])
    who = "TrieHH" if algorithm == "triehh" else "SFP (T=20)"
    lines.append(f"| F1 of the top 100 words, single word, ε = 4, {who} | "
                 f"{paper} | {ours} | {numbers.data_label('single')} |")
  bound = numbers.sci(numbers.PAPER_MULTI_DELTA, 1)
  for figure in ("multi", "multi-n"):
    s = numbers.find(series, "triehh", figure, 4.0)
    if s:
      mean, half, ours = numbers.stat(numbers.recall_curves(s, 200)[:, -1])
      why = "" if mean >= 0.9 else f" Differs: {REASONS['multi']}."
      delta = numbers.achieved_delta(s)
      lines.append(f"| recall of the top 200 words, several words, ε = 4, "
                   f"δ < {bound} | close to 1 | {ours} at δ = "
                   f"{numbers.sci(delta)} ({numbers.versus_paper_delta(delta)}"
                   f"; the runs' target δ = 1/(300n) = "
                   f"{numbers.sci(numbers.target_delta(s))}) | "
                   f"{s.data}{why} |")
  for epsilon in (1.0, 4.0):
    s = numbers.find(series, "triehh", "oov", epsilon)
    if s:
      rates = metrics.discovery_rates([r["discovered"] for r in s.records],
                                      numbers.PAPER_NAMED_OOV)
      named = ", ".join(f"`{w}` {r:.2f}" for w, r in
                        zip(numbers.PAPER_NAMED_OOV, rates))
      lines.append(f"| OOV words named as discovered (share of TrieHH runs "
                   f"finding each, ε = {epsilon:g}) | discovered | {named} | "
                   f"{numbers.data_label('oov')} |")
  lines.append("")


def _figure(lines: list[str], name: str, caption: str, note: str) -> None:
  lines += [f"### {name}", "", f"![{name}]({name}.png)", "", caption, "",
            note, ""]


def write(output_dir: str, series: Sequence[numbers.Series],
          context: Context) -> str:
  """Draws the figures and writes ``output_dir/REPORT.md``; returns its path.

  Everything but the section beyond the paper uses the fixed-size series
  only; Poisson series go to that section
  (:mod:`triehh.analysis.reproduction.two_sided_markdown`).
  """
  poisson_series = [s for s in series if s.sampling == two_sided.POISSON]
  series = [s for s in series if s.sampling == two_sided.FIXED]
  os.makedirs(output_dir, exist_ok=True)
  drawn = _draw_figures(output_dir, series)
  lines = _opening(context, series)
  _table1(lines)
  _table2(lines, series)
  _local_epsilon(lines, series)
  _claims(lines, series)
  if context.beyond:
    two_sided_markdown.write_section(
        lines, poisson_series, series, table_ns=context.table_ns,
        table_epsilons=context.table_epsilons,
        multi_note=context.data_notes.get("multi", ""))
  _figures(lines, drawn, context)
  path = os.path.join(output_dir, "REPORT.md")
  files.write_text(path, "\n".join(lines).rstrip() + "\n")
  return path


def _draw_figures(output_dir: str,
                  series: Sequence[numbers.Series]) -> list[str]:
  """Draws the figures into ``output_dir``; the names of those drawn after
  ``fig-fix-prob`` (the others have no runs)."""
  png = lambda name: os.path.join(output_dir, f"{name}.png")  # pylint: disable=unnecessary-lambda-assignment
  fix = numbers.fix_prob_data(FIX_PROB_FREQUENCIES)
  figures.fix_prob(png("fig-fix-prob"), FIX_PROB_FREQUENCIES, fix)
  drawn = []
  for figure, title, bound in (
      ("single", "Single word (paper-calibrated)", True),
      ("multi", "Several words (the sample's users)", False),
      ("multi-n", "Several words (resampled to n = 659,775)", False)):
    chosen = [s for s in series if s.algorithm == "triehh"
              and s.figure == figure and s.runs]
    if chosen:
      name = {"single": "fig-freq-single", "multi": "fig-freq-multi",
              "multi-n": "fig-freq-multi-paper-n"}[figure]
      figures.frequency(png(name), chosen, title, bound)
      drawn.append(name)
  for figure, name, metric, title in (
      ("single", "fig-recall-single", "f1_paper",
       "F1 of the top K, single word (SFP T = 20)"),
      ("oov", "fig-f1-single-oov", "f1_paper",
       "F1 of the top K, OOV (SFP T = 20)"),
      ("multi", "fig-recall-multi", "recall",
       "Recall of the top K, several words (the sample's users)"),
      ("multi-n", "fig-recall-multi-paper-n", "recall",
       "Recall of the top K, several words (resampled to n = 659,775)")):
    chosen = [s for s in series if s.figure == figure and s.runs and (
        s.algorithm == "triehh" and (figure.startswith("multi")
                                     or s.epsilon in (1.0, 4.0))
        or s.algorithm == "sfp" and s.top_t == 20)]
    if chosen:
      figures.top_k(png(name), chosen, K_MAX[figure], metric, title)
      drawn.append(name)
  return drawn


def _opening(context: Context,
             series: Sequence[numbers.Series]) -> list[str]:
  """The report's title, how it was produced, and its data."""
  lines = ["# Reproducing the paper's tables and figures", "",
           "Produced by one command:", "", "```", context.command, "```", "",
           f"Wall time: {context.seconds:.0f} s for {context.runs_written} "
           f"runs written by this invocation (TrieHH {context.triehh_runs} "
           f"runs per cell, {context.multi_runs} with several words; SFP "
           f"{context.sfp_runs} per cell; fast engine; "
           "2 cores)." + (f" {context.load_note}" if context.load_note
                          else ""), "",
           "Runs use the paper's 10 levels: words of at most 9 characters "
           "plus the end symbol (`max_length=9`), " + _deltas(series) +
           ", θ and the "
           "batch size from Corollary 1 at 10 levels, the paper authors' "
           "tokenisation, and SFP with the authors' fragment alphabet "
           "(`a-z . # / '` plus `$`) and stitching (the part before the "
           "first `$`). F1 in the F1-vs-K figures is the paper's, "
           "2r/(r + 1) from recall r at K (precision taken as 1).", "",
           "## Data", ""]
  for key, note in context.data_notes.items():
    label = numbers.data_label(key)
    lines.append(f"- **{key}**{f' ({label})' if label else ''}: {note}")
  lines += ["", "Paper's data: " + "; ".join(
      f"{k}: {v}" for k, v in PAPER_DATA.items()) + ".", ""]
  return lines


def _deltas(series: Sequence[numbers.Series]) -> str:
  """The runs' δ against the paper's, for the report's opening."""
  targets = sorted({(s.n, numbers.target_delta(s)) for s in series
                    if s.algorithm == "triehh" and s.figure.startswith("multi")
                    and s.runs}, reverse=True)
  text = ("δ = 1/n² with one word per user, as the paper; with several "
          "words the paper states only δ < "
          f"{numbers.sci(numbers.PAPER_MULTI_DELTA, 1)}, and our runs "
          "target δ = 1/(300n)")
  if targets:
    text += " (" + "; ".join(
        f"{numbers.sci(d)} at n = {n:,}, {numbers.versus_paper_delta(d)}"
        for n, d in targets) + ")"
  fixed = [s for s in series if s.algorithm == "triehh" and s.runs]
  if fixed and all(numbers.achieved_delta(s) <= numbers.target_delta(s)
                   for s in fixed):
    text += ("; Theorem 1's δ at the calibrated θ, at most the target, is "
             "printed in Table 2 and in the several-words rows")
  return text


def _figures(lines: list[str], drawn: Sequence[str], context: Context) -> None:
  """The figures section: ``fig-fix-prob``, then each figure ``drawn``."""
  lines += ["## Figures", ""]
  _figure(lines, "fig-fix-prob", "Minimum n for a worst-case discovery rate "
          "of 0.9 vs frequency (Proposition 2 with Corollary 1, L = 10 "
          "levels, δ = 1/n²).", "Data: none (theory), as in the paper.")
  captions = {
      "fig-freq-single": ("Discovery rate vs frequency, single word, ε = 1, "
                          "2, 4, 8, per log-spaced frequency bin (share of "
                          "the bin's words each run found); dashed: "
                          "Proposition 2's worst case at the runs' n, θ, "
                          "batch size and 10 levels, averaged over the same "
                          "words (each at its own count), so the two are "
                          "comparable bin by bin.",
                          "Ours: the " + numbers.data_label("single") +
                          " (see Data). Paper: " + PAPER_DATA["single"] +
                          "."),
      "fig-freq-multi": ("Discovery rate vs F(w), several words. No "
                         "worst-case bound exists for several words per "
                         "user (paper, Section 6), so none is drawn.",
                         "Ours: " + context.data_notes.get("multi", "") +
                         " Paper: " + PAPER_DATA["multi"] + "."),
      "fig-freq-multi-paper-n": ("The same at the paper's n.", "Ours: " +
                                 context.data_notes.get("multi-n", "")),
      "fig-recall-single": ("The paper's F1 of the top K vs K, TrieHH vs "
                            "SFP (T = 20), ε = 1 and 4.",
                            "Ours: the " + numbers.data_label("single") +
                            " (see Data). Paper: " + PAPER_DATA["single"] +
                            "."),
      "fig-f1-single-oov": ("The same in the OOV setting.",
                            "Ours: the " + numbers.data_label("oov") +
                            " (see Data). Paper: " + PAPER_DATA["oov"] +
                            "."),
      "fig-recall-multi": ("Recall of the top K vs K, several words, "
                           "ε = 1, 2, 4, 8.", "Ours: " +
                           context.data_notes.get("multi", "")),
      "fig-recall-multi-paper-n": ("The same at the paper's n.", "Ours: " +
                                   context.data_notes.get("multi-n", ""))}
  for name in drawn:
    caption, note = captions[name]
    _figure(lines, name, caption, note)
