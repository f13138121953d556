"""The paper's figures as PNG files (matplotlib, Agg backend).

Each function draws one figure from :mod:`reports.reproduction.numbers` and
writes it to ``path``; means are lines, 95% intervals over runs are shaded.
Their colours per epsilon (:func:`epsilon_color`), interval bands
(:func:`band`) and saving (:func:`save`) are shared with the other
figures of the package (:mod:`reports.plots`,
:mod:`reports.beyond.figures`, :mod:`reports.field.figures`); the rules
they all follow are :mod:`reports.reproduction.style`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reports.reproduction import numbers
from reports.reproduction import style

plt = style.plt
DPI = style.DPI


def epsilon_color(epsilon: float) -> str:
  """The colour of ``epsilon``'s curves in every figure
  (:func:`reports.reproduction.style.epsilon_color`)."""
  return style.epsilon_color(epsilon)


def save(fig, path: str) -> str:
  """Writes ``fig`` to ``path`` (:func:`reports.reproduction.style.save`:
  whole or not at all) and closes it; ``path``."""
  return style.save(fig, path)


def band(ax, x, mean, half, color, label, style="-",
         clip: tuple[float | None, float | None] | None = (0, 1),
         **line) -> None:
  """``mean`` against ``x`` as a line (``style``, ``line``: more options of
  ``ax.plot``) and ``mean ± half`` shaded, cut to ``clip`` (None: not cut);
  nothing shaded where ``half`` is NaN. A lone point gets an error bar, as
  a band of one point would not show."""
  line.setdefault("lw", 1.6)
  ax.plot(x, mean, style, color=color, label=label, **line)
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


def _data_line(series: Sequence[numbers.Series]) -> str:
  """The title's line of the data: n and the runs' delta (1/n² when it
  is that)."""
  ns = sorted({s.n for s in series})
  record = series[0].records[0]
  delta = record.get("target_delta") or record.get("delta")
  if delta is not None and all(abs(delta * n * n - 1) < 1e-6 for n in ns):
    delta = "1/n²"
  return style.about("", ns, delta=delta)


def fix_prob(path: str, frequencies: Sequence[float],
             data: dict[float, list[int]]) -> str:
  """``fig-fix-prob``: minimum n for a 0.9 worst-case rate vs frequency."""
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  epsilons = list(data)
  for epsilon, ns in data.items():
    ax.plot(frequencies, ns, "-", label=f"ε={epsilon:g}",
            **style.epsilon_line(epsilon, epsilons))
  ax.set_xscale("log")
  ax.set_yscale("log")
  ax.set_xlabel("sequence frequency")
  ax.set_ylabel("minimum n")
  style.title(ax, "Min n for worst-case discovery rate ≥ 0.9\n"
              "(theory, any population: n on the y axis, L = 10 levels, "
              "δ = 1/n²)")
  ax.grid(True, which="both", alpha=0.3)
  style.legend(fig)
  return save(fig, path)


def frequency(path: str, series: Sequence[numbers.Series], title: str,
              bound: bool) -> str:
  """``fig-freq-*``: discovery rate vs frequency; Proposition 2 dashed."""
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  epsilons = [s.epsilon for s in series]
  for s in series:
    mids, mean, half, _, word_bound = numbers.discovery_by_frequency(s)
    line = style.epsilon_line(s.epsilon, epsilons)
    color = line["color"]
    ax.plot(mids, mean, "-", label=f"ε={s.epsilon:g}", **line)
    if not np.all(np.isnan(half)):
      ax.fill_between(mids, np.clip(mean - half, 0, 1),
                      np.clip(mean + half, 0, 1), color=color, alpha=0.2,
                      lw=0)
    if bound:
      ax.plot(mids, word_bound, "--", color=color, lw=1,
              zorder=line["zorder"])
  ax.set_xscale("log")
  ax.set_ylim(-0.02, 1.02)
  ax.set_xlabel("word frequency")
  ax.set_ylabel("discovery rate")
  style.title(ax, f"{title}\n{_data_line(series)}"
              + ("\n(dashed: Proposition 2 worst case, bin mean)"
                 if bound else ""))
  ax.grid(True, alpha=0.3)
  style.legend(fig)
  return save(fig, path)


def top_k(path: str, series: Sequence[numbers.Series], k_max: int,
          metric: str, title: str) -> str:
  """F1 (the paper's) or recall of the top K words vs K."""
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  epsilons = [s.epsilon for s in series]
  for s in series:
    curves = (numbers.f1_paper_curves(s, k_max) if metric == "f1_paper"
              else numbers.recall_curves(s, k_max))
    mean, half = numbers.mean_ci(curves)
    ks = np.arange(1, mean.size + 1)
    dashes = "-" if s.algorithm == "triehh" else ("--" if s.top_t == 20
                                                  else ":")
    line = style.epsilon_line(s.epsilon, epsilons)
    color = line.pop("color")
    band(ax, ks, mean, half, color, s.label, dashes,
         markevery=max(1, ks.size // 12), **line)
  ax.set_ylim(-0.02, 1.02)
  ax.set_xlabel("K")
  ax.set_ylabel("F1 (paper: 2r/(r+1))" if metric == "f1_paper"
                else "recall")
  style.title(ax, f"{title}\n{_data_line(series)}")
  ax.grid(True, alpha=0.3)
  style.legend(fig)
  return save(fig, path)
