"""The numbers of ``BEYOND.md``: its rows, from the run records.

Each part's rows (dicts, one per table row and figure curve) come from the
records of its points (:mod:`reports.beyond.runs`), looked up by
``(config_key, seed)``: a point shows once every seed is recorded. A
refused point shows its refusal ((a): a note, and no rows for its data and
epsilon; (b): a row saying why).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from reports import summary
from reports.beyond import runs as runs_lib
from reports.reproduction import numbers
from triehh.discovery import passes as passes_lib
from triehh.runs import records as records_lib

Recorded = Mapping[tuple[str, int], records_lib.RunRecord]


def recorded(output_dir: str) -> dict[tuple[str, int], records_lib.RunRecord]:
  """The records of ``<output_dir>/results.jsonl`` by ``(config_key,
  seed)``, the first of each; empty if there is no such file."""
  path = records_lib.results_path(output_dir)
  try:
    got, _ = records_lib.read(path)
  except FileNotFoundError:
    return {}
  kept, _ = summary.deduplicate(got)
  return {(r.config_key, r.seed): r for r in kept}


def point_records(point: runs_lib.Point, records: Recorded
                  ) -> list[records_lib.RunRecord] | None:
  """The records of the point's seeds, in seed order; None unless all are
  recorded."""
  got = [records.get((point.key, seed)) for seed in point.seeds]
  return None if any(r is None for r in got) else got


def mean_half(values: Iterable[float]) -> tuple[float, float]:
  """Mean and 95% Student-t half-width (0 for one value)."""
  mean, _, half = summary.mean_interval(list(values))
  return mean, 0.0 if math.isnan(half) else half


def ci(values: Iterable[float]) -> str:
  """``mean ± half`` of the values (95% Student t)."""
  mean, _, half = summary.mean_interval(list(values))
  return numbers.fmt(mean, half)


def metric(row: Mapping, name: str) -> list[float]:
  """The values of the metric ``name`` over a row's runs."""
  return [scores[name] for scores in row["scores"]]


def _inf_if_none(value: float | None) -> float:
  return math.inf if value is None else value


# ---- (a) ---------------------------------------------------------------------


def iblt_rows(part: runs_lib.Part, records: Recorded,
              refused: Mapping[str, str]) -> tuple[list[dict], list[str]]:
  """(a)'s rows, IBLT then TrieHH per data set and epsilon, and its notes."""
  rows, notes = [], list(part.notes)
  for group in dict.fromkeys(p.group for p in part.points):
    points = {p.role: p for p in part.points if p.group == group}
    name, epsilon = group
    iblt_point = points[runs_lib.IBLT_RUNS]
    if iblt_point.key in refused:
      notes.append(f"{name}, ε={epsilon:g}: IBLT refused: "
                   f"{refused[iblt_point.key]}")
      continue
    got = [point_records(points[role], records) for role in runs_lib.ROLES]
    if any(g is None for g in got):
      continue
    iblt, fast, tff = got
    n = {"n": points[runs_lib.IBLT_RUNS].n_users}
    rows += [dict(iblt_row(name, epsilon, iblt), **n),
             dict(triehh_row(name, epsilon, fast, tff), **n)]
  return rows, notes


def iblt_row(name: str, epsilon: float,
             runs: Sequence[records_lib.RunRecord]) -> dict:
  k = runs[0].k_anonymity
  return dict(
      data=name, epsilon=epsilon, algorithm=f"IBLT, 1 round, k={k}",
      clients=[r.num_participants for r in runs],
      ms=[r.seconds_per_client * 1e3 for r in runs],
      bytes=f"{runs[0].bytes_per_client:,}",
      truncated=[r.num_truncated for r in runs],
      scores=[r.metrics for r in runs],
      privacy=f"{k}-anonymity per round, not DP")


def triehh_row(name: str, epsilon: float,
               fast: Sequence[records_lib.RunRecord],
               tff: Sequence[records_lib.RunRecord]) -> dict:
  """TrieHH's row: utility and bytes of the fast engine's runs, time per
  client-round of the TFF engine's."""
  first = fast[0]
  votes = [r.vote_bytes_per_round for r in fast]
  return dict(
      data=name, epsilon=epsilon,
      algorithm=f"TrieHH, θ={first.theta}, m={first.batch_size:,}",
      clients=[r.num_participants for r in fast],
      ms=[r.seconds / r.num_participants * 1e3 for r in tff],
      bytes=(f"{np.mean([np.mean(v) for v in votes]):,.0f} per round "
             f"(max {max(max(v) for v in votes):,})"),
      truncated=[0], scores=[r.metrics for r in fast],
      privacy=(f"({first.epsilon:.2f}, {first.delta:.2g})-DP, one "
               "direction"))


# ---- (b) ---------------------------------------------------------------------


def passes_rows(part: runs_lib.Part, records: Recorded,
                refused: Mapping[str, str]) -> list[dict]:
  """(b)'s rows: recall per number of passes, or why they were refused.

  The composition used and the per-pass target are those the passes split
  the total into (:func:`triehh.discovery.passes.split_budget`); the total
  achieved is the records'.
  """
  rows = []
  for point in part.points:
    c = point.config
    row = dict(data=point.data, n=point.n_users, passes=c["num_passes"],
               scores=[], error=refused.get(point.key))
    runs = None if row["error"] else point_records(point, records)
    if runs is None:
      if row["error"]:
        rows.append(row)
      continue
    last = runs[-1]
    budget = passes_lib.split_budget(c["epsilon"], last.target_delta,
                                     c["num_passes"], c["composition"])
    rows.append(dict(row, scores=[r.metrics for r in runs],
                     composition=budget.composition,
                     pass_target_epsilon=budget.epsilon,
                     epsilon=last.epsilon, delta=last.delta))
  return rows


def passes_answer(rows: Sequence[Mapping]) -> str:
  """Does splitting the budget beat one pass? From the numbers."""
  lines = []
  for name in dict.fromkeys(r["data"] for r in rows):
    ok = [r for r in rows if r["data"] == name and not r["error"]]
    one = [r for r in ok if r["passes"] == 1]
    if not one:
      continue
    base = np.mean(metric(one[0], "recall@50"))
    best = max(ok, key=lambda r: np.mean(metric(r, "recall@50")))
    best_value = np.mean(metric(best, "recall@50"))
    if best["passes"] == 1 or best_value <= base:
      verdict = (f"one pass is best (recall@50 {base:.3f}; splitting the "
                 "budget lowers it)")
    else:
      verdict = (f"{best['passes']} passes beat one (recall@50 "
                 f"{best_value:.3f} against {base:.3f})")
    lines.append(f"**{name}**: {verdict}.")
  return "Answer: " + " ".join(lines) if lines else ""


# ---- (c) ---------------------------------------------------------------------


def availability_rows(part: runs_lib.Part, records: Recorded) -> list[dict]:
  """(c)'s rows: per calibration and fraction online, the worst online
  count, theta, m, the achieved epsilon of each run (``inf``: no
  guarantee), the epsilon at n and recall."""
  rows = []
  for point in part.points:
    runs = point_records(point, records)
    if runs is None:
      continue
    rows.append(dict(
        calibrate_to=point.config["calibrate_to"], n=point.n_users,
        fraction=point.config["availability"],
        scores=[r.metrics for r in runs],
        worst_online=min(runs[0].online_per_round),
        theta=runs[-1].theta, batch_size=runs[-1].batch_size,
        epsilons=[_inf_if_none(r.epsilon) for r in runs],
        nominal_epsilon=_inf_if_none(runs[0].nominal_epsilon)))
  return rows
