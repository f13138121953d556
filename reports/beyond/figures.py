"""The figures of ``BEYOND.md`` as PNG files, from its rows
(:mod:`reports.beyond.rows`).

Drawn and saved as the paper's figures are
(:mod:`reports.reproduction.figures`: its colours per epsilon, its
saving); means are lines or points, 95% intervals over runs shaded or
error bars.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from reports.beyond import counts
from reports.beyond import rows as rows_lib
from reports.beyond import runs as runs_lib
from reports.reproduction import figures as paper_figures
from reports.reproduction import style
from triehh.discovery import availability as availability_lib
from triehh.discovery import counts as counts_lib

plt = paper_figures.plt


def f1_figure(rows: Sequence[Mapping], path: str) -> str:
  """F1@K vs K, TrieHH and IBLT, one panel per data set."""
  names = list(dict.fromkeys(r["data"] for r in rows))
  fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 3.8),
                           squeeze=False)
  ks = runs_lib.F1_KS
  for ax, name in zip(axes[0], names):
    mine = [r for r in rows if r["data"] == name]
    epsilons = [r["epsilon"] for r in mine]
    for row in mine:
      stats = [rows_lib.mean_half(rows_lib.metric(row, f"f1@{k}"))
               for k in ks]
      mean = np.array([s[0] for s in stats])
      half = np.array([s[1] for s in stats])
      dashes = "--" if row["algorithm"].startswith("IBLT") else "-"
      label = f"{row['algorithm'].split(',')[0]} (ε={row['epsilon']:g}" + (
          f", k={row['algorithm'].split('k=')[1]})" if dashes == "--"
          else ")")
      line = style.epsilon_line(row["epsilon"], epsilons)
      color = line["color"]
      ax.plot(ks, mean, dashes, label=label, **line)
      ax.fill_between(ks, np.clip(mean - half, 0, 1),
                      np.clip(mean + half, 0, 1), color=color, alpha=0.15,
                      lw=0)
    ax.set_xlabel("K")
    ax.set_ylabel("F1@K")
    ax.set_ylim(0, 1.02)
    style.title(ax, f"{name}\n" + style.about(
        "", [r["n"] for r in mine if "n" in r] or "?", delta="1/n²"))
    ax.grid(True, alpha=0.3)
  style.legend(fig)
  return paper_figures.save(fig, path)


def passes_figure(rows: Sequence[Mapping], path: str,
                  total_epsilon: float) -> str:
  """Recall@K vs the number of passes at the total epsilon."""
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  colors = {10: "tab:green", 50: "tab:blue", 100: "tab:purple"}
  for name, dashes in zip(dict.fromkeys(r["data"] for r in rows), ("-", "--")):
    ok = [r for r in rows if r["data"] == name and not r["error"]]
    for k in runs_lib.KS:
      stats = [rows_lib.mean_half(rows_lib.metric(r, f"recall@{k}"))
               for r in ok]
      ax.errorbar([r["passes"] for r in ok], [s[0] for s in stats],
                  yerr=[s[1] for s in stats], fmt="o" + dashes,
                  color=colors[k], ms=3, capsize=2,
                  label=f"{name.split(' (')[0]}, recall@{k}")
  ax.set_xlabel("passes (total ε fixed)")
  ax.set_ylabel("recall@K")
  ax.set_ylim(0, 1.02)
  ns = ", ".join(f"{name.split(' (')[0]}: n = {n:,}" for name, n in
                 dict.fromkeys((r["data"], r["n"]) for r in rows if "n" in r))
  style.title(ax, f"Recall vs passes at total ε = {total_epsilon:g}, "
              f"δ = 1/n²\n{ns}")
  ax.grid(True, alpha=0.3)
  style.legend(fig, columns=2)
  return paper_figures.save(fig, path)


def availability_figure(rows: Sequence[Mapping], path: str,
                        total_epsilon: float) -> str:
  """Recall@50 and the achieved epsilon vs the fraction online."""
  fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.8))
  for calibrate_to, color in zip(availability_lib.CALIBRATIONS,
                                 ("tab:blue", "tab:orange")):
    mine = [r for r in rows if r["calibrate_to"] == calibrate_to]
    x = [r["fraction"] for r in mine]
    stats = [rows_lib.mean_half(rows_lib.metric(r, "recall@50"))
             for r in mine]
    left.errorbar(x, [s[0] for s in stats], yerr=[s[1] for s in stats],
                  fmt="o-", color=color, ms=3, capsize=2,
                  label=f"calibrated to {calibrate_to}")
    eps = [max(r["epsilons"]) for r in mine]
    finite = [(f, e) for f, e in zip(x, eps) if math.isfinite(e)]
    right.plot([f for f, _ in finite], [e for _, e in finite], "o-",
               color=color, ms=3, label=f"calibrated to {calibrate_to}")
    for f, e in zip(x, eps):
      if not math.isfinite(e):
        right.annotate("no guarantee", (f, 0.95),
                       xycoords=("data", "axes fraction"),
                       fontsize=style.LEGEND_FONTSIZE,
                       color=color, rotation=90, ha="center", va="top")
  for ax in (left, right):
    ax.set_xscale("log")
    ax.set_xlabel("fraction of users online per round")
    ax.grid(True, alpha=0.3, which="both")
  style.legend(fig)
  left.set_ylabel("recall@50")
  left.set_ylim(0, 1.02)
  right.set_ylabel("achieved ε (worst round)")
  right.axhline(total_epsilon, color="gray", lw=0.8, ls=":")
  style.suptitle(fig, style.about(
      "Default data", [r["n"] for r in rows if "n" in r] or "?",
      total_epsilon, "1/n²").replace("ε =", "target ε ="))
  return paper_figures.save(fig, path)


def counts_figure(rows: Sequence[Mapping], path: str,
                  total_epsilon: float) -> str:
  """(d): error@10 of the counts vs the total epsilon (TrieHH at the
  default split, SFP dashed: past the top 10 it misses most words, so its
  error@50 is 1) and vs TrieHH's budget split at ``total_epsilon``, a
  colour per data set; log scale."""
  fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.8))
  names = list(dict.fromkeys(r["data"] for r in rows))
  colors = dict(zip(names, ("tab:blue", "tab:orange", "tab:green")))
  default = counts_lib.DEFAULT_COUNT_SHARE

  def curve(ax, mine, x, fmt, label):
    stats = [rows_lib.mean_half(rows_lib.metric(r, "count_error@10"))
             for r in mine]
    if stats:
      ax.errorbar(x, [s[0] for s in stats], yerr=[s[1] for s in stats],
                  fmt=fmt, color=colors[mine[0]["data"]], ms=3, capsize=2,
                  label=label)

  for name in names:
    triehh = [r for r in rows if r["data"] == name
              and r["role"] == counts.TRIEHH_COUNTS]
    by_eps = sorted((r for r in triehh if r["share"] == default),
                    key=lambda r: r["epsilon"])
    curve(left, by_eps, [r["epsilon"] for r in by_eps], "o-",
          f"{name}: TrieHH")
    sfp = sorted((r for r in rows if r["data"] == name
                  and r["role"] == counts.SFP_COUNTS),
                 key=lambda r: r["epsilon"])
    curve(left, sfp, [r["epsilon"] for r in sfp], "s--", f"{name}: SFP")
    by_share = sorted((r for r in triehh if r["epsilon"] == total_epsilon),
                      key=lambda r: r["share"])
    curve(right, by_share, [r["share"] for r in by_share], "o-", name)
  left.set_xlabel(f"total ε (TrieHH: count share {default:g})")
  right.set_xlabel(f"count share (TrieHH, total ε = {total_epsilon:g})")
  for ax, ticks in ((left, sorted({r["epsilon"] for r in rows})),
                    (right, sorted({r["share"] for r in rows
                                    if r["share"] is not None}))):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_ylabel("median relative error, top-10 counts")
    ax.grid(True, alpha=0.3, which="both")
  ns = ", ".join(f"{name.split(' (')[0].split(',')[0]}: n = {n:,}"
                 for name, n in dict.fromkeys((r["data"], r["n"])
                                              for r in rows if "n" in r))
  style.suptitle(fig, "Protected counts (mean ± 95% CI over seeds; a word "
                 f"not found counts as 1), δ = 1/n²\n{ns}")
  style.legend(fig, columns=2)
  return paper_figures.save(fig, path)
