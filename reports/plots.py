"""The figures of a summary: what ``triehh-summarize --plot_dir`` draws.

From the configurations and tables of :mod:`reports.summary`, each
figure is a PNG with its data as CSV beside it (same basename), drawn as
the paper's figures are (:mod:`reports.reproduction.figures`: its
colours per epsilon, interval bands and files written whole or not at all):

* ``recall_vs_epsilon`` and ``f1_vs_epsilon``: recall@K and F1@K against
  epsilon, one panel per K, one line per series;
* ``f1_vs_k``: F1@K and the paper's F1@K (``f1_paper@K``) against K, one
  panel each, one line per configuration coloured by its epsilon;
* ``discovery_vs_frequency`` (given the population): TrieHH's discovery
  rate per word-frequency bin, one line per configuration, and dashed
  Proposition 2's worst-case rate averaged over the bin's words
  (:func:`reports.summary.discovery_table`);
* ``cost_vs_epsilon``: rounds, users sampled (user-rounds,
  ``num_participants``) and seconds per run against epsilon, one panel
  each (on a log scale when its means are more than 20 times apart); a
  panel shows the algorithms whose records hold the value (SFP has no
  rounds nor sampled users).

Series. A series is the configurations that differ in epsilon alone: the
``config`` of their records (what was asked for) agree but for its
``epsilon``. Its label is its algorithm and the options in which it differs
from the other series of that algorithm. A configuration stands at its
target epsilon (the achieved one for runs given theta directly); IBLT's at
the TrieHH epsilon whose batch size it used (``matched_epsilon``: its
k-anonymity is not differential privacy); runs without a guarantee have no
epsilon and are left out of the figures against epsilon.

Values. Means over runs with the Student-t intervals of
:func:`reports.summary.metric_table` (clipped to [0, 1] for
proportions) and, for rounds, users and seconds,
:func:`reports.summary.mean_interval` (cut at 0). The CSV
columns ``runs, mean, std, half_width, ci_low, ci_high`` are what is drawn:
the line is the mean, the band (an error bar for a lone point) runs from
``ci_low`` to ``ci_high``. One run has no interval; one epsilon gives
points.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence

from matplotlib import ticker
import numpy as np
import pandas as pd

from reports import summary as analysis
from reports.reproduction import figures
from reports.reproduction import style
from triehh.core import files

plt = figures.plt

RECALL, F1, F1_VS_K, DISCOVERY, COST = FIGURES = (
    "recall_vs_epsilon", "f1_vs_epsilon", "f1_vs_k", "discovery_vs_frequency",
    "cost_vs_epsilon")
# Per run, against epsilon: CSV metric -> (record field, axis label).
COSTS = {"rounds": ("rounds", "rounds"),
         "users_sampled": ("num_participants", "users sampled (user-rounds)"),
         "seconds": ("seconds", "seconds per run")}
STATS = ("runs", "mean", "std", "half_width", "ci_low", "ci_high")
# The columns of the CSV of the figures against epsilon and K (costs: no k).
COLUMNS = ("series", "algorithm", "config_id", "epsilon", "metric",
           "k") + STATS
DISCOVERY_COLUMNS = ("series", "algorithm", "config_id", "epsilon", "bin",
                     "freq_low", "freq_high", "freq_mid", "words", "runs",
                     "rate", "bound_mid", "bound_words")
_NAMES = {"triehh": "TrieHH", "sfp": "SFP",
          "iblt": "IBLT (k-anonymity, not DP)"}
_STYLES = {"triehh": "-", "sfp": "--", "iblt": ":"}
_SHORT = {"num_users": "n", "top_t": "T", "max_length": "L",
          "k_anonymity": "k"}
# Configuration fields that change with epsilon in a series (calibrated
# from it, or IBLT's matched to TrieHH's there).
_FOLLOW_EPSILON = ("epsilon", "delta", "theta", "gamma", "batch_size",
                   "sampling_rate", "k_anonymity", "matched_epsilon",
                   "matched_delta")


@dataclasses.dataclass
class Series:
  """Configurations that differ in epsilon alone: a line against epsilon.

  Attributes:
    label: its name in legends and CSVs.
    algorithm: "triehh", "sfp" or "iblt".
    config_ids: its configurations (indices of the groups), by epsilon.
  """

  label: str
  algorithm: str
  config_ids: list[int]

  def legend(self, groups: Sequence[analysis.Group]) -> str:
    """Its label in legends: with the targets its mechanism cannot use
    (:func:`reports.summary.ceiling`)."""
    hit = [f"ε={groups[i].get('epsilon'):g} achieves "
           f"{analysis.ceiling(groups[i]):.3g}" for i in self.config_ids
           if analysis.ceiling(groups[i]) is not None]
    return self.label + (f" (ceiling: {'; '.join(hit)})" if hit else "")


def epsilon_of(group: analysis.Group) -> float:
  """Where ``group`` stands on the epsilon axis: its target (or achieved)
  epsilon; IBLT: its ``matched_epsilon``; ``inf`` without either."""
  field = "matched_epsilon" if group.get("algorithm") == "iblt" else "epsilon"
  value = group.get(field)
  return math.inf if value is None else float(value)


def _asked(group: analysis.Group) -> dict:
  """What the runs of ``group`` asked for but epsilon, data options
  flattened (named ``data.<key>`` where the name is taken)."""
  config = dict(group.records[0].config)
  config.pop("epsilon", None)
  data = config.pop("data", None)
  if isinstance(data, Mapping):
    for key, value in data.items():
      config[f"data.{key}" if key in config else key] = value
  elif data is not None:
    config["data"] = data
  return config


def _text(value) -> str:
  if value is None:
    return "auto"
  if isinstance(value, float):
    return f"{value:g}"
  return value if isinstance(value, str) else json.dumps(value)


def _labels(groups: Sequence[analysis.Group],
            members: Sequence[tuple[list[int], str]]) -> list[str]:
  """A label per series: its algorithm, the options in which it differs
  from the other series of that algorithm and what tells it apart from
  the configurations asking for the same."""
  asked = [_asked(groups[ids[0]]) for ids, _ in members]
  algorithms = [groups[ids[0]].get("algorithm") for ids, _ in members]
  labels = []
  for mine, algorithm, (_, apart) in zip(asked, algorithms, members):
    others = [a for a, b in zip(asked, algorithms) if b == algorithm]
    differ = [key for key in sorted(mine) if key != "algorithm" and len(
        {json.dumps(o.get(key), sort_keys=True, default=str)
         for o in others}) > 1]
    parts = ", ".join(f"{_SHORT.get(key, key)}={_text(mine[key])}"
                      for key in differ)
    labels.append(_NAMES.get(algorithm, algorithm)
                  + (f" ({parts})" if parts else "")
                  + (f" [{apart}]" if apart else ""))
  return labels


def _apart(groups: Sequence[analysis.Group],
           ids: list[int]) -> list[tuple[list[int], str]]:
  """The configurations ``ids`` asking for the same but epsilon, as
  series by epsilon, each with the fields telling it apart from the others
  ("" when they are one series).

  Two at one epsilon differ in a field their ``config`` does not hold:
  series are told apart by the configuration fields that do not follow
  epsilon (``_FOLLOW_EPSILON``), or else are one configuration each.
  """
  def by_epsilon(members):
    return sorted(members, key=lambda i: epsilon_of(groups[i]))
  if len({epsilon_of(groups[i]) for i in ids}) == len(ids):
    return [(by_epsilon(ids), "")]
  fields = [f for f in analysis.CONFIG_FIELDS if f not in _FOLLOW_EPSILON]
  subsets: dict[tuple, list[int]] = {}
  for i in ids:
    subsets.setdefault(tuple(groups[i].get(f) for f in fields), []).append(i)
  differ = [j for j in range(len(fields))
            if len({key[j] for key in subsets}) > 1]
  out = []
  for key, members in subsets.items():
    text = " ".join(f"{fields[j]}={key[j]}" for j in differ)
    if len({epsilon_of(groups[i]) for i in members}) < len(members):
      out += [([i], f"{text} configuration {i}".strip()) for i in members]
    else:
      out.append((by_epsilon(members), text))
  return out


def series_of(groups: Sequence[analysis.Group]) -> list[Series]:
  """The series of ``groups`` (:func:`reports.summary.group_runs`),
  in their order."""
  by_asked: dict[str, list[int]] = {}
  for index, group in enumerate(groups):
    key = json.dumps(_asked(group), sort_keys=True, default=str)
    by_asked.setdefault(key, []).append(index)
  members = [one for ids in by_asked.values() for one in _apart(groups, ids)]
  return [Series(label, groups[ids[0]].get("algorithm"), ids)
          for label, (ids, _) in zip(_labels(groups, members), members)]


def metric_rows(table: pd.DataFrame, groups: Sequence[analysis.Group],
                series: Sequence[Series],
                metrics: Sequence[str]) -> pd.DataFrame:
  """The rows of ``table`` (:func:`reports.summary.metric_table`)
  of ``metrics`` at each K, as the CSV of a figure (``COLUMNS``)."""
  rows = []
  for s in series:
    for config_id in s.config_ids:
      mine = table[(table["config_id"] == config_id)
                   & table["metric"].isin(metrics) & table["k"].notna()]
      for _, row in mine.iterrows():
        rows.append({"series": s.label, "algorithm": s.algorithm,
                     "config_id": config_id,
                     "epsilon": epsilon_of(groups[config_id]),
                     "metric": row["metric"], "k": int(row["k"]),
                     **{c: row[c] for c in STATS}})
  return pd.DataFrame(rows, columns=list(COLUMNS))


def cost_rows(groups: Sequence[analysis.Group], series: Sequence[Series],
              confidence: float) -> pd.DataFrame:
  """Rounds, users sampled and seconds per run (``COSTS``) of every
  configuration with an epsilon, where its records hold them; intervals
  cut at 0 (``ci_low``: none of them is negative)."""
  rows = []
  for s in series:
    for config_id in s.config_ids:
      group = groups[config_id]
      epsilon = epsilon_of(group)
      if not math.isfinite(epsilon):
        continue
      for name, (field, _) in COSTS.items():
        values = [float(v) for r in group.records
                  if (v := r.get(field)) is not None]
        if not values:
          continue
        mean, std, half = analysis.mean_interval(values, confidence)
        rows.append({"series": s.label, "algorithm": s.algorithm,
                     "config_id": config_id, "epsilon": epsilon,
                     "metric": name, "runs": len(values), "mean": mean,
                     "std": std, "half_width": half,
                     "ci_low": (mean - half if math.isnan(half)
                                else max(mean - half, 0.0)),
                     "ci_high": mean + half})
  return pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "k"])


def discovery_rows(rates: pd.DataFrame, groups: Sequence[analysis.Group],
                   series: Sequence[Series]) -> pd.DataFrame:
  """The rows of ``rates`` (:func:`reports.summary.discovery_table`)
  as the CSV of ``discovery_vs_frequency`` (``DISCOVERY_COLUMNS``)."""
  label = {i: s.label for s in series for i in s.config_ids}
  out = rates.copy()
  out["series"] = [label[i] for i in out["config_id"]]
  out["epsilon"] = [epsilon_of(groups[i]) for i in out["config_id"]]
  return out[list(DISCOVERY_COLUMNS)].reset_index(drop=True)


def epsilon_colors(epsilons: Sequence[float]) -> dict[float, str]:
  """A colour per epsilon (:func:`reports.reproduction.style.epsilon_color`:
  further along an ordered colormap for a larger one; grey for ``inf``,
  no guarantee)."""
  return {e: style.epsilon_color(e) for e in sorted(set(epsilons))}


def _epsilon_text(epsilon: float, algorithm: str,
                  group: analysis.Group | None = None) -> str:
  """``ε=4``; IBLT's ``matched ε=4``; at a ceiling ``ε=8 (ceiling:
  achieves 4.04)``."""
  if not math.isfinite(epsilon):
    return "no guarantee"
  if group is not None and analysis.ceiling(group) is not None:
    return f"ε={analysis.epsilon_text(group)}"
  return f"{'matched ' if algorithm == 'iblt' else ''}ε={epsilon:g}"


def _title(groups: Sequence[analysis.Group], ids) -> str:
  """The line of a title saying what the data of configurations ``ids``
  are: population(s), n and delta."""
  chosen = [groups[int(i)] for i in dict.fromkeys(ids)]
  populations = ", ".join(dict.fromkeys(
      f"{g.get('dataset')} {g.get('setting')}" for g in chosen))
  deltas = {g.get("delta") for g in chosen if g.get("delta") is not None}
  ns = [g.get("n_users") for g in chosen]
  if deltas and all(abs(d * n * n - 1) < 1e-6 for d, n in
                    ((g.get("delta"), g.get("n_users")) for g in chosen
                     if g.get("delta") is not None)):
    delta = "1/n²"
  elif len(deltas) == 1:
    delta = deltas.pop()
  else:
    delta = "per line" if deltas else "none (no DP)"
  return style.about(populations, ns, delta=delta)


def _write(plot_dir: str, name: str, rows: pd.DataFrame, fig) -> str:
  """Writes ``rows`` as ``<name>.csv`` and ``fig`` as ``<name>.png`` (each
  whole or not at all); the PNG's path."""
  path = os.path.join(plot_dir, name)
  try:
    with files.replacing(f"{path}.csv", suffix=".csv") as tmp:
      rows.to_csv(tmp, index=False)
  except BaseException:
    plt.close(fig)
    raise
  return figures.save(fig, f"{path}.png")


def _not_drawn(plot_dir: str, name: str, why: str) -> str:
  return f"not drawn: {os.path.join(plot_dir, name)}.png ({why})"


def _epsilon_axis(ax, epsilons: Sequence[float], iblt: bool) -> None:
  """A log epsilon axis ticked at ``epsilons``."""
  ticks = sorted(set(epsilons))
  ax.set_xscale("log")
  ax.set_xticks(ticks, [f"{e:.3g}" for e in ticks])
  ax.xaxis.set_minor_formatter(ticker.NullFormatter())
  ax.set_xlabel("ε (IBLT: the TrieHH ε its batch size matches)" if iblt
                else "ε")


def _panels(rows: pd.DataFrame, column: str, panels: Sequence[tuple],
            ylabel, clip, title: str, legends: Mapping[str, str]):
  """One panel per ``(value, heading)`` of ``column``: a line per series
  against epsilon, with its interval (``legends``: a series' text in the
  legend); the figure."""
  labels = list(dict.fromkeys(rows["series"]))
  fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8),
                           squeeze=False)
  for ax, (value, heading) in zip(axes[0], panels):
    here = rows[rows[column] == value]
    for i, label in enumerate(labels):
      line = here[here["series"] == label].sort_values("epsilon")
      if line.empty:
        continue
      figures.band(ax, line["epsilon"].to_numpy(float),
                   line["mean"].to_numpy(float),
                   line["half_width"].to_numpy(float), f"C{i % 10}",
                   legends.get(label, label),
                   _STYLES.get(line["algorithm"].iloc[0], "-")
                   + "osD^vPX*"[i % 8], clip=clip, ms=4)
    _epsilon_axis(ax, here["epsilon"], (here["algorithm"] == "iblt").any())
    ax.set_ylabel(ylabel(value))
    style.title(ax, f"{title}: {heading}")
    ax.grid(True, alpha=0.3)
  return fig


def _finite(rows: pd.DataFrame) -> pd.DataFrame:
  return rows[np.isfinite(rows["epsilon"].to_numpy(float))]


def _left_out(groups: Sequence[analysis.Group]) -> str:
  count = sum(not math.isfinite(epsilon_of(g)) for g in groups)
  return (f"; {count} configuration{'s' if count != 1 else ''} without "
          "epsilon left out" if count else "")


def _finish(fig, groups: Sequence[analysis.Group], ids) -> None:
  """The figure's title (its data) and legend."""
  style.suptitle(fig, _title(groups, ids))
  style.legend(fig)


def _metric_vs_epsilon(plot_dir: str, name: str, metric: str,
                       rows: pd.DataFrame, groups: Sequence[analysis.Group],
                       legends: Mapping[str, str]) -> str:
  """``recall_vs_epsilon`` or ``f1_vs_epsilon``: one panel per K."""
  rows = _finite(rows[rows["metric"] == metric])
  if rows.empty:
    return _not_drawn(plot_dir, name, f"no {metric}@K of a configuration "
                      "with an epsilon")
  ks = sorted(rows["k"].unique())
  what = {"recall": "recall", "f1": "F1"}[metric]
  fig = _panels(rows, "k", [(k, f"K={k}") for k in ks],
                lambda k: f"{what}@{k}", (0, 1), f"{what}@K", legends)
  for ax in fig.axes:
    ax.set_ylim(-0.02, 1.02)
  _finish(fig, groups, rows["config_id"])
  path = _write(plot_dir, name, rows, fig)
  return (f"wrote {path} and .csv: {what}@K against epsilon, one panel per "
          f"K ({', '.join(map(str, ks))}), {rows['series'].nunique()} "
          f"series at {rows['epsilon'].nunique()} epsilon(s)"
          + _left_out(groups))


def _f1_vs_k(plot_dir: str, rows: pd.DataFrame,
             groups: Sequence[analysis.Group]) -> str:
  """``f1_vs_k``: F1@K and the paper's F1@K, a line per configuration."""
  if rows.empty:
    return _not_drawn(plot_dir, F1_VS_K, "no f1@K in the records")
  metrics = [m for m in ("f1", "f1_paper") if (rows["metric"] == m).any()]
  fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics), 3.8),
                           squeeze=False)
  for ax, metric in zip(axes[0], metrics):
    for config_id, line in rows[rows["metric"] == metric].groupby(
        "config_id", sort=True):
      line = line.sort_values("k")
      first = line.iloc[0]
      label = (f"{first['series']}, " + _epsilon_text(
          first["epsilon"], first["algorithm"], groups[config_id]))
      look = style.epsilon_line(first["epsilon"], rows["epsilon"])
      figures.band(ax, line["k"].to_numpy(float), line["mean"].to_numpy(float),
                   line["half_width"].to_numpy(float), look.pop("color"),
                   label, _STYLES.get(first["algorithm"], "-"), **look)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("K")
    ax.set_ylabel("F1@K" if metric == "f1" else "F1@K (paper: 2r/(r+1))")
    style.title(ax, "F1 of the top K words" if metric == "f1" else
                "The paper's F1 (precision taken as 1)")
    ax.grid(True, alpha=0.3)
  _finish(fig, groups, rows["config_id"])
  path = _write(plot_dir, F1_VS_K, rows, fig)
  ks = sorted(rows["k"].unique())
  return (f"wrote {path} and .csv: {' and '.join(metrics)} against K "
          f"({', '.join(map(str, ks))}), {rows['config_id'].nunique()} "
          "configuration(s) coloured by epsilon")


def _discovery(plot_dir: str, rows: pd.DataFrame | None,
               groups: Sequence[analysis.Group]) -> str:
  """``discovery_vs_frequency``: rates per bin, Proposition 2 dashed."""
  if rows is None:
    return _not_drawn(plot_dir, DISCOVERY, "needs the population: "
                      "--truth_from_dataset")
  if rows.empty:
    return _not_drawn(plot_dir, DISCOVERY, "no TrieHH runs on the "
                      "population")
  fig, ax = plt.subplots(figsize=(6.2, 4.2))
  bounds = 0
  for config_id, line in rows.groupby("config_id", sort=True):
    first = line.iloc[0]
    look = style.epsilon_line(first["epsilon"], rows["epsilon"])
    seen = line[line["rate"].notna()]
    epsilon = _epsilon_text(first["epsilon"], "triehh", groups[config_id])
    ax.plot(seen["freq_mid"], seen["rate"], "-",
            label=f"{first['series']}, {epsilon}", **look)
    bound = line[line["bound_words"].notna()]
    if not bound.empty:
      bounds += 1
      ax.plot(bound["freq_mid"], bound["bound_words"], "--",
              color=look["color"], lw=1, zorder=look["zorder"])
  ax.set_xscale("log")
  ax.set_ylim(-0.02, 1.02)
  ax.set_xlabel("word frequency (bin mid)")
  ax.set_ylabel("discovery rate")
  style.title(ax, "Discovery rate per frequency bin"
              + ("\n(dashed: Proposition 2 worst case, bin mean)"
                 if bounds else ""))
  ax.grid(True, alpha=0.3)
  _finish(fig, groups, rows["config_id"])
  path = _write(plot_dir, DISCOVERY, rows, fig)
  return (f"wrote {path} and .csv: discovery rate against word frequency, "
          f"{rows['config_id'].nunique()} TrieHH configuration(s), "
          f"Proposition 2's bound for {bounds}")


def _cost(plot_dir: str, rows: pd.DataFrame,
          groups: Sequence[analysis.Group],
          legends: Mapping[str, str]) -> str:
  """``cost_vs_epsilon``: a panel per cost the records hold."""
  if rows.empty:
    return _not_drawn(plot_dir, COST, "no configuration with an epsilon")
  names = [n for n in COSTS if (rows["metric"] == n).any()]
  fig = _panels(rows, "metric", [(n, COSTS[n][1]) for n in names],
                lambda n: COSTS[n][1], (0, None), "per run", legends)
  for ax, name in zip(fig.axes, names):
    means = rows[rows["metric"] == name]["mean"]
    if means.min() > 0 and means.max() > 20 * means.min():
      ax.set_yscale("log")  # seconds of algorithms far apart
  _finish(fig, groups, rows["config_id"])
  path = _write(plot_dir, COST, rows, fig)
  counts = rows.groupby("metric")["series"].nunique()
  shown = ", ".join(f"{COSTS[n][1]} ({counts[n]} series)" for n in names)
  return f"wrote {path} and .csv: against epsilon, {shown}" + _left_out(groups)


def draw(plot_dir: str, groups: Sequence[analysis.Group],
         table: pd.DataFrame, rates: pd.DataFrame | None,
         confidence: float) -> list[str]:
  """Draws every figure the records support into ``plot_dir`` (which
  exists); one line per figure saying what was drawn and where, or why not.

  Args:
    groups, table: :func:`reports.summary.group_runs` and its
      :func:`~reports.summary.metric_table`.
    rates: :func:`reports.summary.discovery_table`'s rows, or None
      when the population is not known.
    confidence: the level of the intervals of rounds, users and seconds.
  """
  series = series_of(groups)
  legends = {s.label: s.legend(groups) for s in series}
  rows = metric_rows(table, groups, series, ("recall", "f1", "f1_paper"))
  lines = [_metric_vs_epsilon(plot_dir, name, metric, rows, groups, legends)
           for name, metric in ((RECALL, "recall"), (F1, "f1"))]
  lines.append(_f1_vs_k(plot_dir, rows[rows["metric"].isin(("f1",
                                                             "f1_paper"))],
                        groups))
  lines.append(_discovery(plot_dir, None if rates is None else
                          discovery_rows(rates, groups, series), groups))
  lines.append(_cost(plot_dir, cost_rows(groups, series, confidence), groups,
                     legends))
  return lines
