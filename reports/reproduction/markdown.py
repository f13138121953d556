"""REPORT.md: the paper's tables and figures beside ours, with the data used.

:func:`write` takes the scored series (:class:`numbers.Series`), draws the
figures (:mod:`reports.reproduction.figures`) into the report's directory and
writes ``REPORT.md`` there. Every number the paper states is shown with
ours and the data each used; where ours differs beyond the interval, the
report shows the number as the suspected cause varies, from runs
(:mod:`reports.reproduction.ablations`), or says "hypothesis, not
measured". Where the reproduction follows the authors' released code
rather than the paper's text, it says so (``AUTHORS_CODE``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

from reports.reproduction import ablations
from reports.reproduction import figures
from reports.reproduction import numbers
from reports.reproduction import sfp_limits
from reports.reproduction import two_sided
from reports.reproduction import two_sided_markdown
from triehh.core import files
from triehh.core import metrics
from triehh.theory import privacy
from triehh.theory import utility

FIX_PROB_FREQUENCIES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
K_MAX = {"single": 100, "oov": 100, "multi": 300, "multi-n": 300}
PAPER_DATA = {
    "single": "Sentiment140 (1.6M tweets, 659,775 users), each user's most "
              "frequent word",
    "oov": "6M users drawn from the OOV token frequencies of Sentiment140 "
           "(words outside an unpublished 260k-word dictionary)",
    "multi": "Sentiment140 as is (659,775 users, every word with its local "
             "frequency)"}
# Where the reproduction follows the authors' released code rather than the
# paper's text.
AUTHORS_CODE = "https://github.com/triehh/triehh"
CITE = f"the authors' released code ({AUTHORS_CODE})"


@dataclasses.dataclass
class Provenance:
  """What the invocation that wrote the report measured of itself."""

  wall_seconds: float
  cpu_self: float
  cpu_children: float
  peak_self_mib: float
  peak_children_mib: float
  load_start: tuple[float, float, float]
  load_end: tuple[float, float, float]
  runs_written: int
  runs_read: int
  cpus: int = 0

  def describe(self) -> str:
    """One sentence of the measured facts."""
    load = lambda l: "/".join(f"{x:.2f}" for x in l)  # pylint: disable=unnecessary-lambda-assignment
    return (f"wall time {self.wall_seconds:.0f} s; CPU time "
            f"{self.cpu_self + self.cpu_children:.0f} s ({self.cpu_self:.0f}"
            f" s this process, {self.cpu_children:.0f} s its worker "
            f"processes); peak memory {self.peak_self_mib:.0f} MiB (this "
            f"process), {self.peak_children_mib:.0f} MiB (largest worker); "
            f"load average (1/5/15 min) {load(self.load_start)} at the "
            f"start, {load(self.load_end)} at the end"
            + (f", on {self.cpus} CPUs" if self.cpus else ""))


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
  provenance: Provenance | None = None
  # The tail of the one-word populations the paper's rows use.
  main_tail: str = "sample"
  # The section beyond the paper (two_sided): whether to write it, and the
  # n and epsilons of its calibration table.
  beyond: bool = False
  table_ns: Sequence[int] = two_sided.TABLE_NS
  table_epsilons: Sequence[float] = two_sided.TABLE_EPSILONS


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
  lines += ["", ("Where they differ: " + ablations.NOT_MEASURED + " (no "
                 "run varies a calibration)." if differs
                 else "Every θ matches the paper, and every γ once ours is "
                 "cut (not rounded) to two decimals, as the paper's are."),
            ""]


def _table2(lines: list[str], series: Sequence[numbers.Series],
            everything: Sequence[numbers.Series]) -> None:
  lines += ["## Table 2: recall@50 and precision, OOV setting (δ = 1/n²)",
            "",
            "Paper: " + PAPER_DATA["oov"] + ". Ours: the "
            + numbers.data_label("oov") + " (see Data). Ours are means ± "
            "95% intervals over the runs." + _table2_delta(series), "",
            "| algorithm | ε | paper recall@50 | ours | paper precision | ours "
            "| runs | δ (ours) | data | where they differ: the cause varied |",
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
    _, _, r_text = numbers.stat(numbers.metric_of_runs(s, "recall@50"))
    _, _, q_text = numbers.stat(
        numbers.metric_of_runs(s, "precision"), 3)
    why = [ablations.table2_why(everything, s, p_recall, "recall@50", 2),
           ablations.table2_why(everything, s, p_prec, "precision", 3)]
    if algorithm == "triehh":
      why.append("a word needs " + numbers.threshold_share(s) + " of a "
                 "round's users; " + ablations.level_ceiling(s))
    else:
      why += _sfp_limits(s)
    text = "; ".join(w for w in why if w) or "within the interval"
    lines.append(f"| {name} | {epsilon:g} | {p_recall} | {r_text} | "
                 f"{p_prec} | {q_text} | {s.runs} | "
                 f"{numbers.sci(numbers.achieved_delta(s))} | {label} | "
                 f"{text} |")
  lines.append("")


def _sfp_limits(s: numbers.Series) -> list[str]:
  """SFP's alphabet ceiling, and at T = 80 the padded positions' cause
  (:mod:`reports.reproduction.sfp_limits`)."""
  notes = [sfp_limits.alphabet_note(s.records, s.truth)]
  if s.top_t == 80:
    padding = sfp_limits.padding_note(s.records, s.truth)
    if padding and "not measured" not in padding:
      padding += (f"; {CITE} also keeps the T largest of all 256·31² "
                  "strings per position, with no quota per bucket")
    notes.append(padding)
  return notes


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


def _claims(lines: list[str], series: Sequence[numbers.Series],
            everything: Sequence[numbers.Series]) -> None:
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
    ours += ablations.single_claim_tails(
        everything, algorithm, 20 if algorithm == "sfp" else None)
    lines.append(f"| F1 of the top 100 words, single word, ε = 4, {who} | "
                 f"{paper} | {ours} | {numbers.data_label('single')} |")
  bound = numbers.sci(numbers.PAPER_MULTI_DELTA, 1)
  for figure in ("multi", "multi-n"):
    s = numbers.find(series, "triehh", figure, 4.0)
    if s:
      mean, _, ours = numbers.stat(numbers.recall_curves(s, 200)[:, -1])
      why = ("" if mean >= 0.9 else " Differs: n and the accounting are "
             "varied in the ablation below (Several words, recall of the "
             "top 200).")
      delta = numbers.achieved_delta(s)
      lines.append(f"| recall of the top 200 words, several words, ε = 4, "
                   f"δ < {bound} | close to 1 | {ours} at δ = "
                   f"{numbers.sci(delta)} ({numbers.versus_paper_delta(delta)}"
                   f"; the runs' target δ = "
                   f"{numbers.sci(numbers.target_delta(s))}, our L·δ₁ "
                   f"accounting) | {s.data}{why} |")
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


def _ablations(lines: list[str], everything: Sequence[numbers.Series]
               ) -> None:
  """The section of measured ablations (``ablations``)."""
  lines += ["## Ablations: where ours differs, the suspected cause varied",
            "", "Every row is from runs of this reproduction (its records "
            "are in results.jsonl with the others). A cause no run varies "
            f"is printed as \"{ablations.NOT_MEASURED}\".", ""]
  ablations.table2_tails(lines, everything)
  ablations.several_words(lines, everything)


def _figure(lines: list[str], name: str, caption: str, note: str) -> None:
  lines += [f"### {name}", "", f"![{name}]({name}.png)", "", caption, "",
            note, ""]


def write(output_dir: str, series: Sequence[numbers.Series],
          context: Context) -> str:
  """Draws the figures and writes ``output_dir/REPORT.md``; returns its path.

  Everything but the section beyond the paper uses the fixed-size series
  only; Poisson series go to that section
  (:mod:`reports.reproduction.two_sided_markdown`).
  """
  everything = list(series)
  poisson_series = [s for s in series if s.sampling == two_sided.POISSON
                    and s.tail == context.main_tail]
  series = [s for s in series if s.sampling == two_sided.FIXED
            and s.tail == context.main_tail and not s.variant
            and s.figure != "multi-large"]
  os.makedirs(output_dir, exist_ok=True)
  drawn = _draw_figures(output_dir, series)
  lines = _opening(context, series)
  _table1(lines)
  _table2(lines, series, everything)
  _local_epsilon(lines, series)
  _claims(lines, series, everything)
  _ablations(lines, everything)
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
           _provenance(context), "",
           "Runs use the paper's 10 levels: words of at most 9 characters "
           "plus the end symbol (`max_length=9`; 10 rounds, each word "
           f"ending in `$`, as in {CITE}, whose `max_word_len` is 10), "
           + _deltas(series) + ", the paper authors' tokenisation, and SFP "
           "with the authors' fragment alphabet (`a-z . # / '` plus `$`) "
           f"and stitching (the part before the first `$`), both from "
           f"{CITE}. F1 in the F1-vs-K figures is the paper's, 2r/(r + 1) "
           "from recall r at K (precision taken as 1), the F1 that "
           f"{CITE} computes and plots.", "",
           _calibration(series), "",
           _caveat(), "", "## Data", ""]
  for key, note in context.data_notes.items():
    label = numbers.data_label(key)
    lines.append(f"- **{key}**{f' ({label})' if label else ''}: {note}")
  lines += ["", "Paper's data: " + "; ".join(
      f"{k}: {v}" for k, v in PAPER_DATA.items()) + ".", ""]
  return lines


def _calibration(series: Sequence[numbers.Series]) -> str:
  """θ and the batch of the runs against those of the authors' code."""
  runs = [s for s in series if s.algorithm == "triehh" and s.runs
          and s.sampling == two_sided.FIXED]
  same_theta, same_batch = 0, 0
  for s in runs:
    r = s.records[0]
    per_round = r["target_delta"] / (r["levels"] if "L*delta" in str(
        r.get("accounting", "")) else 1)
    same_theta += numbers.authors_theta(per_round) == int(r["theta"])
    same_batch += numbers.authors_batch_size(
        int(r["n_users"]), s.epsilon, int(r["theta"]),
        int(r["levels"])) == int(r["batch_size"])
  checked = (f" Checked on this report's {len(runs)} fixed-size TrieHH "
             f"cells: the search gives their θ in {same_theta} and the "
             f"formula their m in {same_batch}." if runs else "")
  return ("θ and the batch size: Corollary 1 at 10 levels "
          "(`triehh.theory.privacy.calibrate`): θ by the paper's closed "
          "form, m = ⌊γ√n⌋ with γ = (e^(ε/L) − 1)√n/(θe^(ε/L)). "
          f"{CITE[0].upper() + CITE[1:]} instead searches θ upward from 9 "
          "for the first whose Theorem 1 δ, (θ − 2)/((θ − 3)·θ!), is at most the target, and "
          "sets m = int(n(e^(ε/L) − 1)/(θe^(ε/L))), the same batch "
          "formula." + checked)


def _provenance(context: Context) -> str:
  """Wall and CPU time, memory and load, as this invocation measured them."""
  runs = (f"TrieHH {context.triehh_runs} runs per cell, {context.multi_runs} "
          f"with several words; SFP {context.sfp_runs} per cell on each "
          "tail; fast engine")
  note = f" {context.load_note}" if context.load_note else ""
  p = context.provenance
  if p is None:
    return (f"Wall time: {context.seconds:.0f} s for {context.runs_written} "
            f"runs written by this invocation ({runs}).{note}")
  resumed = (f" It wrote {p.runs_written} runs and read {p.runs_read} from "
             "the records of earlier invocations (resumed: their time is "
             "not in these figures)." if p.runs_read else
             f" It wrote all {p.runs_written} runs the report uses (none "
             "resumed from earlier records).")
  return (f"Measured by the invocation that wrote this report, from its "
          "start to the scoring of its runs (drawing the figures and "
          f"writing this file come after): {p.describe()} ({runs})."
          f"{resumed}{note}")


@functools.lru_cache(maxsize=4)
def _caveat(n: int = 10**4, epsilon: float = 2.0, levels: int = 10,
            rates: Sequence[float] = (0.5, 0.9)) -> str:
  """The introduction's caveat: the smallest frequency with useful recall
  at small n, by Proposition 2 at Corollary 1's θ and m."""
  cal = privacy.calibrate(n, levels, epsilon, 1 / n**2)
  counts = np.arange(1, n + 1)
  rate = utility.discovery_rate(counts, n, cal.batch_size, cal.theta, levels)
  found = [f"{r:g} at a frequency of {counts[np.argmax(rate >= r)] / n:.3f}"
           for r in rates]
  return (f"A caveat for a reader of the paper's introduction: at "
          f"n = {n:,} and ε = {epsilon:g} (δ = 1/n², {levels} levels: "
          f"θ = {cal.theta}, m = {cal.batch_size}), Proposition 2's "
          "worst-case discovery rate of a word reaches " + " and ".join(found)
          + " (`triehh.theory.utility.discovery_rate` at each count W = f·n, "
          "the smallest f reaching the rate), so useful recall needs a word "
          "held by about that share of the users or more.")


def _deltas(series: Sequence[numbers.Series]) -> str:
  """The runs' δ against the paper's, for the report's opening."""
  achieved = sorted({(s.n, numbers.achieved_delta(s)) for s in series
                     if s.algorithm == "triehh"
                     and s.figure.startswith("multi") and s.runs},
                    reverse=True)
  text = ("δ = 1/n² with one word per user, as the paper; with several "
          "words the paper states δ < "
          f"{numbers.sci(numbers.PAPER_MULTI_DELTA, 1)}, and our runs "
          "target that δ under our accounting (L·δ₁ for per-round redraws)")
  if achieved:
    text += " (achieved: " + "; ".join(
        f"{numbers.sci(d)} at n = {n:,}, {numbers.versus_paper_delta(d)}"
        for n, d in achieved) + ")"
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
