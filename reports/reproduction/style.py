"""The rules every figure of the project is drawn by, in one place.

* Epsilon colours: an ordered sequential colormap (``CMAP``) read at a
  position growing with log2(epsilon) (:func:`epsilon_color`), so a
  larger epsilon is always further along it, in every figure; grey for no
  guarantee.
* Curves that may coincide (one per epsilon): a marker per epsilon, the
  lower epsilon drawn on top and the higher one wider beneath it, so that
  both show where they overlap (:func:`epsilon_line`).
* Legends: one per figure, below its axes (never over a curve), in
  ``LEGEND_FONTSIZE`` points (:func:`legend`).
* Titles say what the data are: the population, n and epsilon or delta
  (:func:`about`).
* Saving: at ``DPI``, the legend inside the image, whole or not at all
  (:func:`save`).

:func:`problems` lists where a drawn figure breaks these rules (the tests
draw every figure and check it).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
from matplotlib import colors as mcolors  # pylint: disable=g-import-not-at-top,wrong-import-position
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top,wrong-import-position
import numpy as np  # pylint: disable=g-import-not-at-top,wrong-import-position

from triehh.core import files  # pylint: disable=g-import-not-at-top,wrong-import-position

DPI = 110
LEGEND_FONTSIZE = 9
TITLE_FONTSIZE = 10
CMAP = "plasma"
# Colormap position per doubling of epsilon, from epsilon = 1/4 at 0; cut
# at _TOP (past it the colormap turns too pale to read on white), reached
# near epsilon = 10.
_PER_DOUBLING = 0.17
_TOP = 0.9
NO_GUARANTEE = "tab:gray"
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
# What a title must say: n, and epsilon or delta.
_N = re.compile(r"\bn (=|≥|≤|from|on)")


def _position(epsilon: float) -> float:
  return float(np.clip(_PER_DOUBLING * (math.log2(epsilon) + 2), 0, _TOP))


def epsilon_color(epsilon: float | None) -> str:
  """The colour of ``epsilon``'s curves in every figure (hex): further
  along ``CMAP`` for a larger epsilon; grey without one (None, inf, NaN,
  or not positive)."""
  if epsilon is None or not 0 < float(epsilon) < math.inf:
    return NO_GUARANTEE
  return mcolors.to_hex(plt.get_cmap(CMAP)(_position(float(epsilon))))


def color_position(color) -> float:
  """Where ``color`` lies along ``CMAP`` (0 to 1; the nearest of 256
  samples), NaN for a colour off it: how the tests read the order."""
  rgb = np.array(mcolors.to_rgb(color))
  samples = plt.get_cmap(CMAP)(np.linspace(0, 1, 256))[:, :3]
  distance = np.abs(samples - rgb).sum(axis=1)
  nearest = int(distance.argmin())
  return nearest / 255 if distance[nearest] < 0.02 else math.nan


def epsilon_line(epsilon: float, epsilons: Sequence[float]) -> dict:
  """``ax.plot`` options of ``epsilon``'s curve among ``epsilons`` (those
  of its axes): its colour, a marker of its own, and the lower epsilon
  on top with the higher ones wider beneath, so coinciding curves both
  show."""
  ordered = sorted({float(e) for e in epsilons} | {float(epsilon)})
  rank, count = ordered.index(float(epsilon)), len(ordered)
  return {"color": epsilon_color(epsilon),
          "marker": _MARKERS[rank % len(_MARKERS)],
          "zorder": 3 + count - rank,
          "lw": 1.4 + 1.6 * rank / max(count - 1, 1),
          "ms": 3.5 + 2.5 * rank / max(count - 1, 1)}


def about(population: str, n: int | Sequence[int] | str,
          epsilon: float | str | None = None,
          delta: float | str | None = None) -> str:
  """A title's line saying what the data are: ``population, n = ...,
  ε = ..., δ = ...`` (a number formatted; a text as given; no
  population when empty)."""
  if isinstance(n, str):
    n_text = n
  elif isinstance(n, (int, np.integer)):
    n_text = f"{int(n):,}"
  else:
    ns = sorted({int(v) for v in n})
    n_text = (f"{ns[0]:,}" if len(ns) == 1
              else f"{ns[0]:,} to {ns[-1]:,}")
  parts = [population] if population else []
  parts.append(f"n = {n_text}")
  if epsilon is not None:
    parts.append(f"ε = {epsilon:g}" if isinstance(epsilon, (int, float))
                 else f"ε = {epsilon}")
  if delta is not None:
    parts.append(f"δ = {delta:.2g}" if isinstance(delta, (int, float))
                 else f"δ = {delta}")
  return ", ".join(parts)


def title(ax, text: str) -> None:
  """``text`` as the title of ``ax``, in the figures' size."""
  ax.set_title(text, fontsize=TITLE_FONTSIZE)


def suptitle(fig, text: str) -> None:
  """``text`` as the title of the whole figure, in the figures' size."""
  fig.suptitle(text, fontsize=TITLE_FONTSIZE)


def legend(fig, columns: int | None = None) -> None:
  """One legend for the whole figure, below its axes: every labelled
  artist of its axes once (the first of a label), in
  ``LEGEND_FONTSIZE``; ``columns`` as many as fit the width when None."""
  handles, labels = [], []
  for ax in fig.axes:
    for handle, label in zip(*ax.get_legend_handles_labels()):
      if label not in labels:
        handles.append(handle)
        labels.append(label)
    if ax.get_legend() is not None:
      ax.get_legend().remove()
  if not labels:
    return
  if columns is None:
    width = fig.get_figwidth() * 72  # points
    per_entry = 0.55 * LEGEND_FONTSIZE * max(len(t) for t in labels) + 40
    columns = max(1, min(len(labels), int(width // per_entry)))
  fig.legend(handles, labels, loc="upper center", ncol=columns,
             bbox_to_anchor=(0.5, 0.0), fontsize=LEGEND_FONTSIZE,
             frameon=False)


def problems(fig) -> list[str]:
  """Where ``fig`` breaks the rules: a legend inside an axes or under
  ``LEGEND_FONTSIZE``, no title naming n and epsilon or delta, epsilon
  colours (legend entries ``ε=<value>``, ``ε = <value>``) out of order."""
  found = []
  for ax in fig.axes:
    if ax.get_legend() is not None:
      found.append(f"a legend inside the axes {ax.get_title()!r}")
  for box in fig.legends:
    size = min((t.get_fontsize() for t in box.get_texts()), default=math.inf)
    if size < LEGEND_FONTSIZE:
      found.append(f"legend font {size:g} pt < {LEGEND_FONTSIZE} pt")
  titles = " ".join([fig.get_suptitle()]
                    + [ax.get_title() for ax in fig.axes])
  if not _N.search(titles) or not re.search("[εδ]", titles):
    found.append(f"titles {titles.strip()!r} do not say n and ε or δ")
  by_epsilon = {}
  for box in fig.legends:
    for handle, text in zip(box.legend_handles, box.get_texts()):
      match = re.search(r"ε ?= ?([0-9.e+-]+)", text.get_text())
      color = getattr(handle, "get_color", lambda: None)()
      if match and color is not None and not isinstance(color, np.ndarray):
        by_epsilon.setdefault(float(match.group(1).rstrip(".")),
                              color_position(color))
  positions = [by_epsilon[e] for e in sorted(by_epsilon)]
  if any(not b > a for a, b in zip(positions, positions[1:])):
    found.append(f"epsilon colours out of order: {sorted(by_epsilon)} at "
                 f"colormap positions {positions}")
  return found


def save(fig, path: str) -> str:
  """Writes ``fig`` to ``path`` at ``DPI`` with its legend (whole or not
  at all) and closes it; ``path``."""
  fig.tight_layout()
  try:
    with files.replacing(path, suffix=os.path.splitext(path)[1]) as tmp:
      fig.savefig(tmp, dpi=DPI, bbox_inches="tight")
  finally:
    plt.close(fig)
  return path
