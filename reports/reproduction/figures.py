"""The paper's figures as PNG files (matplotlib, Agg backend).

Each function draws one figure from :mod:`reports.reproduction.numbers` and
writes it to ``path``; means are lines, 95% intervals over runs are shaded.
Their colours per epsilon (:func:`epsilon_color`), interval bands
(:func:`band`) and atomic saving (:func:`save`) are shared with the other
figures of the package (:mod:`reports.plots`,
:mod:`reports.beyond.figures`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top,wrong-import-position
import numpy as np  # pylint: disable=g-import-not-at-top,wrong-import-position

from reports.reproduction import numbers  # pylint: disable=g-import-not-at-top,wrong-import-position
from triehh.core import files  # pylint: disable=g-import-not-at-top,wrong-import-position

DPI = 110
_COLORS = {1.0: "tab:red", 2.0: "tab:orange", 4.0: "tab:blue",
           8.0: "tab:green"}


def epsilon_color(epsilon: float) -> str:
  """The colour of ``epsilon``'s curves in every figure (the paper's)."""
  return _COLORS.get(float(epsilon), "tab:gray")


def save(fig, path: str) -> str:
  """Writes ``fig`` to ``path`` at the figures' resolution (whole or not at
  all) and closes it."""
  fig.tight_layout()
  try:
    with files.replacing(path, suffix=os.path.splitext(path)[1]) as tmp:
      fig.savefig(tmp, dpi=DPI)
  finally:
    plt.close(fig)
  return path


def band(ax, x, mean, half, color, label, style="-",
         clip: tuple[float | None, float | None] | None = (0, 1),
         **line) -> None:
  """``mean`` against ``x`` as a line (``style``, ``line``: more options of
  ``ax.plot``) and ``mean ± half`` shaded, cut to ``clip`` (None: not cut);
  nothing shaded where ``half`` is NaN. A lone point gets an error bar, as
  a band of one point would not show."""
  ax.plot(x, mean, style, color=color, label=label, lw=1.6, **line)
  if np.all(np.isnan(half)):
    return
  low, high = np.asarray(mean - half), np.asarray(mean + half)
  if clip is not None:
    low, high = np.clip(low, *clip), np.clip(high, *clip)
  if np.size(x) == 1:
    ax.errorbar(x, mean, yerr=np.vstack([mean - low, high - mean]),
                color=color, capsize=3, lw=1.2, fmt="none")
  else:
    ax.fill_between(x, low, high, color=color, alpha=0.2, lw=0)


def fix_prob(path: str, frequencies: Sequence[float],
             data: dict[float, list[int]]) -> str:
  """``fig-fix-prob``: minimum n for a 0.9 worst-case rate vs frequency."""
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  for epsilon, ns in data.items():
    ax.plot(frequencies, ns, "o-", color=epsilon_color(epsilon), ms=3,
            label=f"ε={epsilon:g}")
  ax.set_xscale("log")
  ax.set_yscale("log")
  ax.set_xlabel("sequence frequency")
  ax.set_ylabel("minimum n")
  ax.set_title("Min n for worst-case discovery rate ≥ 0.9\n"
               "(L = 10 levels, δ = 1/n²)", fontsize=9)
  ax.grid(True, which="both", alpha=0.3)
  ax.legend()
  return save(fig, path)


def frequency(path: str, series: Sequence[numbers.Series], title: str,
              bound: bool) -> str:
  """``fig-freq-*``: discovery rate vs frequency; Proposition 2 dashed."""
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  for s in series:
    mids, mean, half, _, word_bound = numbers.discovery_by_frequency(s)
    color = epsilon_color(s.epsilon)
    ax.plot(mids, mean, "o-", color=color, ms=3, label=f"ε={s.epsilon:g}")
    if not np.all(np.isnan(half)):
      ax.fill_between(mids, np.clip(mean - half, 0, 1),
                      np.clip(mean + half, 0, 1), color=color, alpha=0.2,
                      lw=0)
    if bound:
      ax.plot(mids, word_bound, "--", color=color, lw=1)
  ax.set_xscale("log")
  ax.set_ylim(-0.02, 1.02)
  ax.set_xlabel("word frequency")
  ax.set_ylabel("discovery rate")
  ax.set_title(title + ("\n(dashed: Proposition 2 worst case, bin mean)"
                        if bound else ""), fontsize=9)
  ax.grid(True, alpha=0.3)
  ax.legend(fontsize=8)
  return save(fig, path)


def top_k(path: str, series: Sequence[numbers.Series], k_max: int,
          metric: str, title: str) -> str:
  """F1 (the paper's) or recall of the top K words vs K."""
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  for s in series:
    curves = (numbers.f1_paper_curves(s, k_max) if metric == "f1_paper"
              else numbers.recall_curves(s, k_max))
    mean, half = numbers.mean_ci(curves)
    ks = np.arange(1, mean.size + 1)
    style = "-" if s.algorithm == "triehh" else ("--" if s.top_t == 20
                                                 else ":")
    band(ax, ks, mean, half, epsilon_color(s.epsilon), s.label, style)
  ax.set_ylim(-0.02, 1.02)
  ax.set_xlabel("K")
  ax.set_ylabel("F1 (paper: 2r/(r+1))" if metric == "f1_paper"
                else "recall")
  ax.set_title(title, fontsize=9)
  ax.grid(True, alpha=0.3)
  ax.legend(fontsize=8)
  return save(fig, path)
