"""(d) Protected counts: how close the counts of the discovered words are.

TrieHH with its counting phase (``triehh.discover(..., counts=True)``,
``docs/counts.md``; Poisson sampling, counting sample rate 1) at a total
(epsilon, delta = 1/n^2): against epsilon at the default budget split, and
against the split at ``settings.total_epsilon``. Next to it, at the same
total (epsilon, delta), SFP's count-mean-sketch estimates (its reported
counts, covered by its guarantee), and IBLT's exact counts of one round on
TrieHH's first-round users scaled by n / (users in the round) to estimate
the population's (k-anonymity, not DP).

Per run (``triehh.runs.count_metrics``): the median over the true top-K
words of the relative error ``min(1, |estimate - truth| / truth)`` (1 for a
word not found), and for TrieHH the share of the found top-K words whose
interval holds the truth (in TrieHH's records; SFP's and IBLT's reported
counts are scored when their rows are made). Per point: their mean and 95%
interval over the seeds.

Data: the default data (``settings.default_users`` users), the
paper-calibrated single-word population
(:mod:`triehh.data.paper_populations`, 659,775 users) and the Sentiment140
sample (one word per user), when present.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reports.beyond import rows as rows_lib
from reports.beyond import runs as runs_lib
from triehh.data import datasets as datasets_lib
from triehh.data import paper_populations
from triehh.discovery import counts as counts_lib
from triehh.runs import algorithms
from triehh.runs import count_metrics
from triehh.runs import records as records_lib
from triehh.runs.algorithms import iblt as iblt_algorithm
from triehh.runs.algorithms import sfp as sfp_algorithm
from triehh.runs.algorithms import triehh as triehh_algorithm
from triehh.theory import mechanism

COUNTS = "counts"
ROLES = TRIEHH_COUNTS, SFP_COUNTS, IBLT_COUNTS = (
    "counts: triehh", "counts: sfp", "counts: iblt")
KS = runs_lib.KS


def data_sets(settings: runs_lib.Settings) -> list[tuple[str, dict]]:
  """(d)'s data: name in the report and options."""
  out = [("default data", runs_lib.default_data(settings.default_users,
                                                 settings.max_length)),
         ("paper's single-word population",
          paper_populations.data_options("single"))]
  if settings.sample_path is not None:
    out.append(("Sentiment140 sample (default tokenizer), one word per user",
                runs_lib.sample_data(settings.sample_path, "single",
                                     settings.max_length)))
  return out


def grid(settings: runs_lib.Settings) -> list[tuple[float, float]]:
  """TrieHH's (total epsilon, count share) points: every epsilon at the
  default share, then every other share at ``total_epsilon``."""
  share = counts_lib.DEFAULT_COUNT_SHARE
  wanted = settings.counts
  out = [(e, share) for e in wanted.epsilons]
  out += [(settings.total_epsilon, s) for s in wanted.shares
          if (settings.total_epsilon, s) not in out]
  return out


def counts_part(settings: runs_lib.Settings,
                datasets: datasets_lib.DataCache) -> runs_lib.Part:
  """(d)'s points: per data set, TrieHH over :func:`grid`, SFP per
  epsilon, IBLT at ``total_epsilon``."""
  part = runs_lib.Part(COUNTS, [])
  wanted = settings.counts
  if settings.sample_path is None:
    part.notes.append("The Sentiment140 sample is absent: its rows are "
                      "skipped (pass --sentiment140_path).")
  seeds = tuple(range(settings.seed, settings.seed + wanted.runs))
  for name, options in data_sets(settings):
    pop = datasets.get(options).population
    part.truths[name] = datasets.get(options).truth
    n = pop.num_users
    for epsilon, share in grid(settings):
      part.points.append(runs_lib.Point(
          COUNTS, TRIEHH_COUNTS, name, n, triehh_algorithm.triehh_config(
              options, mechanism.Target(epsilon, sampling="poisson"),
              counting=counts_lib.Counting(share=share)), seeds))
    for epsilon in wanted.epsilons if wanted.sfp_runs else ():
      part.points.append(runs_lib.Point(
          COUNTS, SFP_COUNTS, name, n,
          sfp_algorithm.sfp_config(options, epsilon=epsilon),
          seeds[:wanted.sfp_runs]))
    if wanted.iblt_runs and not pop.has_user_array:
      part.notes.append(f"{name}: no IBLT row (IBLT sends each user's word; "
                        "this population is given by word frequencies)")
    elif wanted.iblt_runs:
      config = iblt_algorithm.iblt_config(options,
                                          epsilon=settings.total_epsilon)
      m = iblt_algorithm.matched_triehh_params(pop, config).batch_size
      config["capacity"] = runs_lib.first_round_capacity(
          pop, m, seeds[:wanted.iblt_runs], config["string_max_bytes"])
      part.points.append(runs_lib.Point(COUNTS, IBLT_COUNTS, name, n, config,
                                        seeds[:wanted.iblt_runs]))
  return part


# ---- running -----------------------------------------------------------------


def _run(config, dataset, seed: int, run_index: int):
  """A run of the config's algorithm and its record, scored at ``KS``.

  TrieHH's record holds its protected counts' metrics; SFP's and IBLT's
  reported counts are scored in their rows (:func:`counts_rows`), so that a
  record of the same cell run by part (a) is scored alike.
  """
  adapter = algorithms.get(config["algorithm"])
  result = adapter.call(dataset.population, config, seed)
  return adapter.record(result, dataset, run_index, seed, config, None, KS)


def _scored(record: records_lib.RunRecord, truth: Mapping[str, float],
            scale: float) -> records_lib.RunRecord:
  """``record`` with the count metrics of its reported counts (times
  ``scale``)."""
  estimates = {w: c * scale for w, c in zip(record.discovered,
                                            record.reported_counts)}
  record.metrics.update(count_metrics.count_metrics(estimates, truth, KS))
  return record


def _scale(role: str, record: records_lib.RunRecord) -> float:
  """IBLT counts one round: n over the users in it; SFP estimates n."""
  if role == IBLT_COUNTS:
    return record.n_users / max(1, record.num_participants)
  return 1.0


# role -> (its run's record, the error that refuses the point before it runs)
RUNS = {TRIEHH_COUNTS: (_run, ()), SFP_COUNTS: (_run, ()),
        IBLT_COUNTS: (_run, (MemoryError, ImportError))}


runs_lib.register_part(COUNTS, counts_part, RUNS)


# ---- rows and section --------------------------------------------------------


def counts_rows(part: runs_lib.Part, records: rows_lib.Recorded,
                refused: Mapping[str, str]) -> tuple[list[dict], list[str]]:
  """(d)'s rows, one per recorded point, and its notes (refusals)."""
  rows, notes = [], list(part.notes)
  for point in part.points:
    if point.key in refused:
      notes.append(f"{point.data}: {point.role.split(': ')[1]} refused: "
                   f"{refused[point.key]}")
      continue
    got = rows_lib.point_records(point, records)
    if got is None:
      continue
    if point.role != TRIEHH_COUNTS and point.data in part.truths:
      got = [_scored(r, part.truths[point.data], _scale(point.role, r))
             for r in got]
    c = point.config
    first = got[0]
    rows.append(dict(
        data=point.data, n=point.n_users, role=point.role,
        epsilon=c["epsilon"], share=c.get("count_share"), runs=len(got),
        scores=[r.metrics for r in got],
        total_epsilon=[r.epsilon for r in got],
        count_epsilon=first.count_epsilon, noise_std=first.count_noise_std,
        discovery_epsilon=first.discovery_epsilon))
  return rows, notes


def _number(value: float) -> str:
  """Three decimals, or two significant digits below 0.01."""
  if value == 0 or abs(value) >= 0.01:
    return f"{value:.3f}"
  return f"{value:.1e}"


def _cell(row: Mapping, name: str) -> str:
  """``mean ± half`` of a metric over a row's runs (the runs that have it);
  the mean alone for one run, "–" for none."""
  values = [s[name] for s in row["scores"] if name in s]
  if not values:
    return "–"
  mean, half = rows_lib.mean_half(values)
  if len(values) == 1:
    return _number(mean)
  return f"{_number(mean)} ± {_number(half)}"


def counts_section(rows: Sequence[Mapping], notes: Sequence[str],
                   settings: runs_lib.Settings) -> list[str]:
  """(d)'s section: what was run, its table."""
  wanted = settings.counts
  out = ["## (d) Protected counts of the discovered words", "",
         "TrieHH followed by its counting phase (`triehh.discover(..., "
         "counts=True)`, `docs/counts.md`: Poisson sampling, every user in "
         "the counting sample, Gaussian noise calibrated so that both "
         "phases together are (ε, δ)-DP by PLD composition, δ = 1/n²), "
         "against ε at the default split (count share "
         f"{counts_lib.DEFAULT_COUNT_SHARE:g}) and against the split at "
         f"ε = {settings.total_epsilon:g}; {wanted.runs} seeds per TrieHH "
         f"row. SFP: its count-mean-sketch estimates at the same total "
         f"(ε, δ), {wanted.sfp_runs} seeds per row (about 1–5 s a run). "
         f"IBLT: the exact counts of one round on TrieHH's first-round "
         f"users (matched at ε = {settings.total_epsilon:g}), scaled by n / "
         f"users in the round; k-anonymity, not DP; {wanted.iblt_runs} "
         "seed(s) (it runs TensorFlow Federated).", "",
         "Error@K: the median over the true top-K words of min(1, |estimate "
         "− truth| / truth), 1 for a word not found; coverage@K: the share "
         "of the found top-K words whose 95% interval holds the truth "
         "(TrieHH only); recall@K: the share of the true top-K found (the "
         "mean). Mean ± 95% CI over the seeds.", ""]
  out += [f"- {n}" for n in notes] + ([""] if notes else [])
  out += ["| data | algorithm | total ε | count share | counting ε | σ | "
          "recall@10/50/100 | error@10 | error@50 | error@100 | coverage@10 "
          "| coverage@50 | coverage@100 |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
  for row in rows:
    triehh = row["role"] == TRIEHH_COUNTS
    name = {TRIEHH_COUNTS: "TrieHH + counts", SFP_COUNTS: "SFP (CMS)",
            IBLT_COUNTS: "IBLT (scaled, not DP)"}[row["role"]]
    eps = (f"{max(row['total_epsilon']):.3f}" if triehh
           else f"{row['epsilon']:g}")
    out.append(
        f"| {row['data']} | {name} | {eps} | "
        f"{row['share']:g} | {row['count_epsilon']:.3f} | "
        f"{row['noise_std']:.3g} | " if triehh else
        f"| {row['data']} | {name} | {eps} | – | – | – | ")
    recall = "/".join(
        f"{rows_lib.mean_half(rows_lib.metric(row, f'recall@{k}'))[0]:.2f}"
        for k in KS)
    out[-1] += " | ".join(
        [recall] + [_cell(row, f"count_error@{k}") for k in KS]
        + [_cell(row, f"count_coverage@{k}") for k in KS]) + " |"
  out.append("")
  return out
