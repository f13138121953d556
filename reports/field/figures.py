"""The figures of ``FIELD.md`` as PNG files, from its rows
(:mod:`reports.field.rows`): words released per mechanism, mean
over seeds with 95% intervals as error bars, on log axes; saved as the
paper's figures are (:mod:`reports.reproduction.figures`)."""

from __future__ import annotations

from collections.abc import Sequence

from reports.field import mechanisms
from reports.field import populations
from reports.field import rows as rows_lib
from reports.reproduction import figures as paper_figures
from reports.reproduction import style

plt = paper_figures.plt

_STYLES = {
    mechanisms.FIXED: ("tab:gray", "o-"),
    mechanisms.POISSON: ("tab:blue", "o-"),
    mechanisms.NOISY_K1: ("tab:red", "s-"),
    mechanisms.NOISY_K2: ("tab:orange", "s--"),
    mechanisms.NOISY_K2_X4: ("tab:red", "D-."),
    mechanisms.NOISY_K3_X4: ("tab:cyan", "D:"),
    mechanisms.NOISY_PLANNED: ("magenta", "P-"),
    mechanisms.TWO_SERVERS: ("black", "*-"),
    mechanisms.TWO_SERVERS_VERIFIED: ("gray", "*--"),
    mechanisms.PS[0]: ("tab:green", "^-"),
    mechanisms.PS[1]: ("tab:olive", "^--"),
    mechanisms.PS[2]: ("tab:purple", "^:"),
    mechanisms.TFF_CENTRAL: ("darkred", "v-"),
    mechanisms.TFF_DISTRIBUTED: ("salmon", "v--"),
    mechanisms.SFP: ("tab:brown", "d-"),
    mechanisms.IBLT: ("tab:pink", "x-"),
}


def _curves(ax, table: Sequence[rows_lib.Row], names, **where) -> None:
  for name in mechanisms.MECHANISMS:
    points = []
    for population in names:
      points += rows_lib.series(table, population, name, **where)
    if not points:
      continue
    points.sort()
    color, style = _STYLES[name]
    ax.errorbar([p[0] for p in points], [p[1] for p in points],
                yerr=[p[2] for p in points], fmt=style, color=color, ms=4,
                capsize=2, label=mechanisms.LABELS[name])


def _finish(ax, xlabel: str, title: str) -> None:
  ax.set_xscale("log")
  ax.set_yscale("log")
  ax.set_xlabel(xlabel)
  ax.set_ylabel("words released (mean ± 95% CI)")
  style.title(ax, title)
  ax.grid(True, alpha=0.3, which="both")
  style.legend(ax.figure, columns=2)


def words_vs_epsilon(table: Sequence[rows_lib.Row], n: int,
                     path: str) -> str:
  """Words released vs epsilon per mechanism, English population at n."""
  fig, ax = plt.subplots(figsize=(6.4, 4.4))
  _curves(ax, table, (populations.ENGLISH, populations.ENGLISH_COUNTS), n=n)
  epsilons = sorted({r.cell.epsilon for r in table if r.cell.n == n})
  _finish(ax, "ε", style.about("English", n, delta="1/n²"))
  ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
  ax.minorticks_off()
  return paper_figures.save(fig, path)


def words_vs_n(table: Sequence[rows_lib.Row], epsilon: float,
               path: str) -> str:
  """Words released vs n per mechanism, English population at epsilon
  (the largest n as word counts)."""
  fig, ax = plt.subplots(figsize=(6.4, 4.4))
  _curves(ax, table, (populations.ENGLISH, populations.ENGLISH_COUNTS),
          epsilon=epsilon)
  english = (populations.ENGLISH, populations.ENGLISH_COUNTS)
  ns = sorted({r.cell.n for r in table if r.cell.epsilon == epsilon
               and r.cell.population in english})
  _finish(ax, "n (users)", style.about(
      "English", ns or "on the x axis", epsilon, "1/n²"))
  return paper_figures.save(fig, path)
