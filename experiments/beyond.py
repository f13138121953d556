"""Beyond the paper: TFF's IBLT, repeated passes with a deny list, and users
who are not always online, on the same users, with their guarantees.

  python -m experiments.beyond --report_dir=docs/results
  triehh-beyond --parts=passes,availability --runs=3

Writes ``<report_dir>/BEYOND.md`` and its figures (``beyond-*.png``):

(a) TFF's IBLT heavy hitters (:mod:`triehh.baselines.iblt`) next to TrieHH
    at epsilon 1 and 4 (delta = 1/n^2) on the Sentiment140 sample (one word
    per user) and the default data (its subsample of
    ``--iblt_default_users`` users, where one IBLT round fits in memory):
    IBLT runs one round on TrieHH's first-round users (the same seed, the
    same draw) with ``k_anonymity = theta``. Utility (F1@K with IBLT's
    truncated outputs as false positives), bytes and time per client (the
    TFF engine for TrieHH), and the privacy each gives.
(b) recall@10/50/100 vs the number of passes (:mod:`triehh.discovery.passes`) at a
    total epsilon ``--total_epsilon``, on the default data and the
    Sentiment140 sample (several words per user: a denied user picks among
    its other words).
(c) recall@K and the achieved epsilon vs the fraction of users online
    (:mod:`triehh.discovery.availability`) on the default data, theta and m
    calibrated to the online count and to n.

Every point is ``--runs`` seeded runs (seeds ``--seed`` on), shown as
mean ± 95% Student-t interval. Without the Sentiment140 sample (``--
sentiment140_path``, ``$TRIEHH_SENTIMENT140`` or ``../shared/data`` beside
the repository) its parts are skipped with a note; ``--iblt_runs=0`` skips
(a) (it needs TensorFlow Federated).
"""

from __future__ import annotations

import math
import os
import shlex
import sys
import time

from absl import flags
import numpy as np

from experiments import cli
from triehh import data as data_lib
from triehh.analysis import summary as analysis
from triehh.analysis.reproduction import numbers
from triehh.core import metrics
from triehh.data import synthetic
from triehh.discovery import availability as availability_lib
from triehh.discovery import passes as passes_lib
from triehh.theory import policy

FLAGS = flags.FLAGS
SAMPLE_ENV = "TRIEHH_SENTIMENT140"
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SAMPLE = os.path.join(os.path.dirname(_REPO), "shared", "data",
                              "sentiment140_sample.csv.gz")
REPORT = "BEYOND.md"
KS = (10, 50, 100)
F1_KS = (5, 10, 20, 30, 50, 75, 100, 150, 200)

flags.DEFINE_string("report_dir", "docs/results",
                    "Where BEYOND.md and its figures go.")
flags.DEFINE_string("sentiment140_path", None,
                    "Sentiment140 file (default: the sample, see the module "
                    "docstring).")
flags.DEFINE_integer("default_users", synthetic.DEFAULT_NUM_USERS,
                     "Users of the default data (b, c).", lower_bound=100)
flags.DEFINE_integer("iblt_default_users", 100_000,
                     "Users of the default data's subsample in (a).",
                     lower_bound=100)
flags.DEFINE_integer("runs", 10, "Seeded runs per point of (b) and (c), "
                     "and TrieHH's runs per point of (a).", lower_bound=1)
flags.DEFINE_integer("iblt_runs", 1, "IBLT runs (seeds) per point of (a); 0 "
                     "skips (a).", lower_bound=0)
flags.DEFINE_list("iblt_epsilons", ["1", "4"], "TrieHH's epsilons in (a).")
flags.DEFINE_list("pass_counts", ["1", "2", "3", "4"], "Passes in (b).")
flags.DEFINE_float("total_epsilon", 4.0, "Total epsilon of (b) and the "
                   "target of (c).")
flags.DEFINE_list("fractions", ["1.0", "0.5", "0.2", "0.05"],
                  "Fractions of users online in (c).")
flags.DEFINE_list("parts", ["iblt", "passes", "availability"],
                  "Parts to run: iblt, passes, availability.")
flags.DEFINE_integer("seed", 0, "Seed of the first run.", lower_bound=0)
flags.DEFINE_string("cache_dir", data_lib.default_cache_dir(),
                    "Cache of populations read from files ('' for none).")


def sample_path() -> str | None:
  """``--sentiment140_path``, else ``$TRIEHH_SENTIMENT140``, else the shared
  sample; None if absent."""
  path = (FLAGS.sentiment140_path or os.environ.get(SAMPLE_ENV)
          or DEFAULT_SAMPLE)
  return path if os.path.exists(path) else None


def _sentiment140(setting: str):
  path = sample_path()
  if path is None:
    return None
  loaded = data_lib.load(
      data_lib.DataSpec(path, dataset="sentiment140", setting=setting),
      cache_dir=FLAGS.cache_dir or None)
  return loaded.population.encode(), loaded.truth


def _default(num_users: int):
  pop = synthetic.english_population(num_users).encode()
  return pop, pop.ground_truth()


def _seeds() -> list[int]:
  return list(range(FLAGS.seed, FLAGS.seed + FLAGS.runs))


def _ci(values) -> str:
  """``mean ± half`` of the values (95% Student t)."""
  mean, _, half = analysis.mean_interval(list(values))
  return numbers.fmt(mean, half)


def _eps(value: float) -> str:
  return "∞ (no guarantee)" if not math.isfinite(value) else f"{value:.3f}"


# ---- (b) passes --------------------------------------------------------------


def passes_rows(name: str, pop, truth) -> list[dict]:
  """Recall@K per number of passes at the total epsilon."""
  rows = []
  for count in (int(p) for p in FLAGS.pass_counts):
    scores, params, error = [], None, None
    for seed in _seeds():
      try:
        result = passes_lib.discover_passes(
            pop, num_passes=count, epsilon=FLAGS.total_epsilon, seed=seed,
            max_length=pop.max_length)
      except ValueError as err:
        error = str(err)
        break
      scores.append(metrics.precision_recall_f1(result.words, truth, KS))
      params = result.params
    rows.append(dict(data=name, passes=count, scores=scores, params=params,
                     error=error))
  return rows


def passes_section(rows: list[dict], notes: list[str]) -> list[str]:
  out = ["## (b) Repeated passes with a deny list",
         "",
         f"P passes at a total ε = {FLAGS.total_epsilon:g} (δ = 1/n²), "
         "pass p denying the words found by passes before it "
         "(`triehh.discovery.passes.discover_passes`, composition \"best\": the "
         "larger per-pass ε of basic and advanced composition). Recall of "
         "the union of the passes' words; mean ± 95% CI over "
         f"{FLAGS.runs} seeds.", ""]
  out += notes
  out += ["| data | passes | composition | per-pass ε target | total ε "
          "(achieved) | total δ | recall@10 | recall@50 | recall@100 | "
          "words found |",
          "|---|---|---|---|---|---|---|---|---|---|"]
  for row in rows:
    if row["error"]:
      out.append(f"| {row['data']} | {row['passes']} | refused: "
                 f"{row['error'][:160]}… | | | | | | | |")
      continue
    p, s = row["params"], row["scores"]
    out.append(
        f"| {row['data']} | {row['passes']} | {p.composition} | "
        f"{p.pass_target_epsilon:.3f} | {p.epsilon:.3f} | {p.delta:.2g} | "
        f"{_ci(x['recall@10'] for x in s)} | "
        f"{_ci(x['recall@50'] for x in s)} | "
        f"{_ci(x['recall@100'] for x in s)} | "
        f"{numbers.fmt(*_mean_half(x['num_discovered'] for x in s), 1)} |")
  out += ["", _passes_answer(rows), ""]
  return out


def _passes_answer(rows: list[dict]) -> str:
  """Does splitting the budget beat one pass? From the numbers."""
  lines = []
  for name in dict.fromkeys(r["data"] for r in rows):
    ok = [r for r in rows if r["data"] == name and not r["error"]]
    if not ok:
      continue
    one = [r for r in ok if r["passes"] == 1]
    if not one:
      continue
    base = np.mean([x["recall@50"] for x in one[0]["scores"]])
    best = max(ok, key=lambda r: np.mean([x["recall@50"]
                                          for x in r["scores"]]))
    best_value = np.mean([x["recall@50"] for x in best["scores"]])
    if best["passes"] == 1 or best_value <= base:
      verdict = (f"one pass is best (recall@50 {base:.3f}; splitting the "
                 "budget lowers it)")
    else:
      verdict = (f"{best['passes']} passes beat one (recall@50 "
                 f"{best_value:.3f} against {base:.3f})")
    lines.append(f"**{name}**: {verdict}.")
  return "Answer: " + " ".join(lines) if lines else ""


# ---- (c) availability --------------------------------------------------------


def availability_rows(pop, truth) -> list[dict]:
  rows = []
  for calibrate_to in availability_lib.CALIBRATIONS:
    for fraction in (float(f) for f in FLAGS.fractions):
      scores, infos, params = [], [], None
      for seed in _seeds():
        result = availability_lib.discover_online(
            pop, availability=fraction, epsilon=FLAGS.total_epsilon,
            calibrate_to=calibrate_to, seed=seed, max_length=pop.max_length,
            allow_no_guarantee=True)
        scores.append(metrics.precision_recall_f1(result.words, truth, KS))
        infos.append(result.availability)
        params = result.params
      rows.append(dict(calibrate_to=calibrate_to, fraction=fraction,
                       scores=scores, infos=infos, params=params))
  return rows


def availability_section(rows: list[dict], pop) -> list[str]:
  out = ["## (c) Users who are not always online",
         "",
         f"Default data (n = {pop.num_users:,}); every round a uniform "
         "random subset of round(f·n) users is online and the batch is "
         "drawn from it (`triehh.discovery.availability.discover_online`). The "
         "accounting is Theorem 1 at the worst round's online count (an "
         "adversary who knows who is online). \"online\": θ and m "
         f"calibrated for ε = {FLAGS.total_epsilon:g} at the online count; "
         "\"nominal\": θ and m calibrated for n, as a deployment planned "
         "for n users would, and the ε they really give. \"ε if n\" is the "
         "label one would print ignoring availability. Mean ± 95% CI over "
         f"{FLAGS.runs} seeds.", "",
         "| calibrated to | online fraction | worst online count | θ | m | "
         "achieved ε | ε if n | recall@10 | recall@50 | recall@100 |",
         "|---|---|---|---|---|---|---|---|---|---|"]
  for row in rows:
    s, info, p = row["scores"], row["infos"][0], row["params"]
    out.append(
        f"| {row['calibrate_to']} | {row['fraction']:g} | "
        f"{info.worst_online:,} | {p.theta} | {p.batch_size:,} | "
        f"{_eps(max(i.epsilon for i in row['infos']))} | "
        f"{_eps(info.nominal_epsilon)} | "
        f"{_ci(x['recall@10'] for x in s)} | "
        f"{_ci(x['recall@50'] for x in s)} | "
        f"{_ci(x['recall@100'] for x in s)} |")
  out.append("")
  return out


# ---- (a) IBLT -----------------------------------------------------------------


def iblt_rows(name: str, pop, truth) -> tuple[list[dict], list[str]]:
  """TrieHH and IBLT at each epsilon of ``--iblt_epsilons``."""
  from benchmarks import iblt_benchmark  # pylint: disable=g-import-not-at-top
  from triehh import api  # pylint: disable=g-import-not-at-top
  from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
  rows, notes = [], []
  iblt_seeds = _seeds()[:FLAGS.iblt_runs]
  string_max_bytes = pop.max_length
  for epsilon in (float(e) for e in FLAGS.iblt_epsilons):
    params = policy.resolve_params(pop.num_users, pop.max_length,
                                   epsilon=epsilon)
    k, m = params.theta, params.batch_size
    capacity = iblt_benchmark._first_round_capacity(  # pylint: disable=protected-access
        pop, m, iblt_seeds, string_max_bytes)
    options = dict(k_anonymity=k, batch_size=m, capacity=capacity,
                   string_max_bytes=string_max_bytes, max_length=pop.max_length)
    try:  # its seconds exclude building the computation
      runs = [iblt.iblt_discover(pop, seed=s, **options) for s in iblt_seeds]
    except MemoryError as err:
      notes.append(f"{name}, ε={epsilon:g}: IBLT refused: {err}")
      continue
    iblt_scores = [metrics.precision_recall_f1(
        r.scored(), truth, F1_KS) for r in runs]
    # TrieHH with the paper's fixed-size batch, whose size the IBLT rounds
    # use.
    fast = [api.discover(pop, epsilon=epsilon, seed=s, sampling="fixed")
            for s in _seeds()]
    # The TFF engine grows the same trie from the same seed; timed warm.
    api.discover(pop, epsilon=epsilon, engine="tff", seed=iblt_seeds[0],
                 sampling="fixed")
    tff = [api.discover(pop, epsilon=epsilon, engine="tff",
                        seed=iblt_seeds[0], sampling="fixed")]
    votes = [iblt_benchmark._vote_bytes(r.trie) for r in fast]  # pylint: disable=protected-access
    rows.append(dict(
        data=name, epsilon=epsilon, algorithm=f"IBLT, 1 round, k={k}",
        clients=[r.params.users_sampled for r in runs],
        ms=[r.seconds_per_client * 1e3 for r in runs],
        bytes=f"{runs[0].params.bytes_per_client:,}",
        truncated=[r.params.num_truncated for r in runs],
        scores=iblt_scores, privacy=f"{k}-anonymity per round, not DP"))
    rows.append(dict(
        data=name, epsilon=epsilon, algorithm=f"TrieHH, θ={k}, m={m:,}",
        clients=[r.num_participants for r in fast],
        ms=[r.seconds / r.num_participants * 1e3 for r in tff],
        bytes=(f"{np.mean([np.mean(v) for v in votes]):,.0f} per round "
               f"(max {max(max(v) for v in votes):,})"),
        truncated=[0],
        scores=[metrics.precision_recall_f1(r.heavy_hitters, truth, F1_KS)
                for r in fast],
        privacy=(f"({params.epsilon:.2f}, {params.delta:.2g})-DP, one "
                 "direction")))
  return rows, notes


def iblt_section(rows: list[dict], notes: list[str]) -> list[str]:
  out = ["## (a) TFF's IBLT heavy hitters next to TrieHH", "",
         "IBLT (`tff.analytics.heavy_hitters.iblt`, via "
         "`triehh.baselines.iblt.iblt_discover`) runs one round on TrieHH's "
         "first-round users (same seed, same `triehh.engines.sampling` draw: m "
         "users) with k_anonymity = TrieHH's θ; TrieHH runs all its rounds "
         "(≈ L·m client-rounds). Time per client: IBLT's TFF round over its "
         "clients (building the computation excluded), TrieHH's TFF engine "
         "per client-round (one seed, run warm: a first run compiles). Bytes per client: IBLT's sketch and count tensors "
         "(int64); TrieHH's vote vector (int32) per client per round. "
         "IBLT's outputs cut at `string_max_bytes` are false positives "
         "(TrieHH never reports a truncated word). Utility: mean ± 95% CI "
         f"over {FLAGS.runs} TrieHH seeds and {FLAGS.iblt_runs} IBLT "
         "seeds.", "",
         "**Privacy.** TrieHH's label is (ε, δ)-differential privacy "
         "(Theorem 1, whose proof covers one direction: P[M(D) ∈ S] ≤ "
         "e^ε P[M(D′) ∈ S] + δ with D′ holding the empty word in place of "
         "the user's; `docs/privacy.md`). IBLT's k-anonymity is **not** "
         "(ε, δ)-DP: every "
         "string sent by at least k clients of the round is released with "
         "its exact count, so whether a word of exactly k users is "
         "released depends on each one of them.", ""]
  out += [f"- {n}" for n in notes]
  out += ["| data | ε | algorithm | clients | ms per client | bytes per "
          "client | truncated outputs | recall@10 | recall@50 | F1@10 | "
          "F1@50 | F1@100 | privacy |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
  for row in rows:
    s = row["scores"]
    out.append(
        f"| {row['data']} | {row['epsilon']:g} | {row['algorithm']} | "
        f"{np.mean(row['clients']):,.0f} | {np.median(row['ms']):.3f} | "
        f"{row['bytes']} | {np.mean(row['truncated']):.1f} | "
        f"{_ci(x['recall@10'] for x in s)} | "
        f"{_ci(x['recall@50'] for x in s)} | "
        f"{_ci(x['f1@10'] for x in s)} | {_ci(x['f1@50'] for x in s)} | "
        f"{_ci(x['f1@100'] for x in s)} | {row['privacy']} |")
  out.append("")
  return out


def _iblt_missing(err: BaseException) -> list[str]:
  return ["## (a) TFF's IBLT heavy hitters next to TrieHH", "",
          f"**Not produced in this run** ({type(err).__name__}: {err}). "
          "It needs TensorFlow Federated and `triehh.baselines.iblt`; run "
          "`python -m experiments.beyond --parts=iblt` (or `python -m "
          "benchmarks.iblt_benchmark`) where they are available.", ""]


# ---- figures -------------------------------------------------------------------


def _plt():
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  return plt


def _mean_half(values) -> tuple[float, float]:
  mean, _, half = analysis.mean_interval(list(values))
  return mean, 0.0 if math.isnan(half) else half


def f1_figure(rows: list[dict], path: str) -> str:
  """F1@K vs K, TrieHH and IBLT, one panel per data set."""
  plt = _plt()
  names = list(dict.fromkeys(r["data"] for r in rows))
  fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 3.8),
                           squeeze=False)
  for ax, name in zip(axes[0], names):
    for row in (r for r in rows if r["data"] == name):
      stats = [_mean_half(x[f"f1@{k}"] for x in row["scores"]) for k in F1_KS]
      mean = np.array([s[0] for s in stats])
      half = np.array([s[1] for s in stats])
      style = "--" if row["algorithm"].startswith("IBLT") else "-"
      label = f"{row['algorithm'].split(',')[0]} (ε={row['epsilon']:g}" + (
          f", k={row['algorithm'].split('k=')[1]})" if style == "--" else ")")
      color = "tab:red" if row["epsilon"] == 1 else "tab:blue"
      ax.plot(F1_KS, mean, style, color=color, label=label, marker="o", ms=3)
      ax.fill_between(F1_KS, np.clip(mean - half, 0, 1),
                      np.clip(mean + half, 0, 1), color=color, alpha=0.15,
                      lw=0)
    ax.set_xlabel("K")
    ax.set_ylabel("F1@K")
    ax.set_ylim(0, 1.02)
    ax.set_title(name, fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
  return _save(fig, path)


def passes_figure(rows: list[dict], path: str) -> str:
  plt = _plt()
  fig, ax = plt.subplots(figsize=(5.2, 3.8))
  colors = {10: "tab:green", 50: "tab:blue", 100: "tab:purple"}
  for name, style in zip(dict.fromkeys(r["data"] for r in rows), ("-", "--")):
    ok = [r for r in rows if r["data"] == name and not r["error"]]
    for k in KS:
      stats = [_mean_half(x[f"recall@{k}"] for x in r["scores"]) for r in ok]
      ax.errorbar([r["passes"] for r in ok], [s[0] for s in stats],
                  yerr=[s[1] for s in stats], fmt="o" + style,
                  color=colors[k], ms=3, capsize=2,
                  label=f"{name.split(' (')[0]}, recall@{k}")
  ax.set_xlabel("passes (total ε fixed)")
  ax.set_ylabel("recall@K")
  ax.set_ylim(0, 1.02)
  ax.set_title(f"Recall vs passes at total ε = {FLAGS.total_epsilon:g}",
               fontsize=9)
  ax.grid(True, alpha=0.3)
  ax.legend(fontsize=6)
  return _save(fig, path)


def availability_figure(rows: list[dict], path: str) -> str:
  plt = _plt()
  fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.8))
  for calibrate_to, color in zip(availability_lib.CALIBRATIONS,
                                 ("tab:blue", "tab:orange")):
    mine = [r for r in rows if r["calibrate_to"] == calibrate_to]
    x = [r["fraction"] for r in mine]
    stats = [_mean_half(s["recall@50"] for s in r["scores"]) for r in mine]
    left.errorbar(x, [s[0] for s in stats], yerr=[s[1] for s in stats],
                  fmt="o-", color=color, ms=3, capsize=2,
                  label=f"calibrated to {calibrate_to}")
    eps = [max(i.epsilon for i in r["infos"]) for r in mine]
    finite = [(f, e) for f, e in zip(x, eps) if math.isfinite(e)]
    right.plot([f for f, _ in finite], [e for _, e in finite], "o-",
               color=color, ms=3, label=f"calibrated to {calibrate_to}")
    for f, e in zip(x, eps):
      if not math.isfinite(e):
        right.annotate("no guarantee", (f, 0.95), xycoords=("data",
                                                            "axes fraction"),
                       fontsize=7, color=color, rotation=90, ha="center",
                       va="top")
  for ax in (left, right):
    ax.set_xscale("log")
    ax.set_xlabel("fraction of users online per round")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=7)
  left.set_ylabel("recall@50")
  left.set_ylim(0, 1.02)
  right.set_ylabel("achieved ε (worst round)")
  right.axhline(FLAGS.total_epsilon, color="gray", lw=0.8, ls=":")
  fig.suptitle("Default data, target ε = "
               f"{FLAGS.total_epsilon:g}", fontsize=9)
  return _save(fig, path)


def _save(fig, path: str) -> str:
  fig.tight_layout()
  fig.savefig(path, dpi=110)
  _plt().close(fig)
  return path


# ---- main -----------------------------------------------------------------------


def _figure(lines: list[str], draw, rows, name: str, alt: str) -> None:
  path = os.path.join(FLAGS.report_dir, name)
  try:
    draw(rows, path)
  except ImportError as err:  # matplotlib missing: tables only
    lines += [f"(figure {name} not drawn: {err})", ""]
    return
  lines += [f"![{alt}]({name})", ""]


def main(argv):
  if len(argv) > 1:
    raise ValueError(f"unexpected arguments: {argv[1:]}")
  for name in FLAGS.parts:
    if name not in ("iblt", "passes", "availability"):
      raise ValueError(f"--parts: unknown part {name!r}; use iblt, passes, "
                       "availability")
  os.makedirs(FLAGS.report_dir, exist_ok=True)
  start = time.perf_counter()
  lines = ["# Beyond the paper: IBLT, repeated passes, users offline", "",
           "Produced by `python -m experiments.beyond "
           + " ".join(shlex.quote(a) for a in sys.argv[1:]) + "`.", ""]
  sample = sample_path()
  default = _default(FLAGS.default_users)
  timings = []
  if "iblt" in FLAGS.parts and FLAGS.iblt_runs:
    t0 = time.perf_counter()
    try:
      rows, notes = [], []
      datasets = []
      single = _sentiment140("single")
      if single is None:
        notes.append("Sentiment140 sample absent: its rows are skipped.")
      else:
        datasets.append(("Sentiment140 sample, one word per user", single))
      datasets.append((f"default data, {FLAGS.iblt_default_users:,} users",
                       _default(FLAGS.iblt_default_users)))
      for name, (pop, truth) in datasets:
        more_rows, more_notes = iblt_rows(name, pop, truth)
        rows += more_rows
        notes += more_notes
      lines += iblt_section(rows, notes)
      if rows:
        _figure(lines, f1_figure, rows, "beyond-iblt-f1.png",
                "F1@K vs K, TrieHH and IBLT")
    except ImportError as err:
      lines += _iblt_missing(err)
    timings.append(f"(a) {time.perf_counter() - t0:.0f} s")
  if "passes" in FLAGS.parts:
    t0 = time.perf_counter()
    notes = []
    rows = passes_rows(f"default data (n = {default[0].num_users:,})",
                       *default)
    multi = _sentiment140("multi")
    if multi is None:
      notes.append("The Sentiment140 sample is absent: its rows are "
                   "skipped (pass --sentiment140_path).")
    else:
      rows += passes_rows(f"Sentiment140 sample, several words per user "
                          f"(n = {multi[0].num_users:,})", *multi)
    lines += passes_section(rows, notes)
    _figure(lines, passes_figure, rows, "beyond-passes.png",
            "recall@K vs passes")
    timings.append(f"(b) {time.perf_counter() - t0:.0f} s")
  if "availability" in FLAGS.parts:
    t0 = time.perf_counter()
    rows = availability_rows(*default)
    lines += availability_section(rows, default[0])
    _figure(lines, availability_figure, rows, "beyond-availability.png",
            "recall@50 and achieved epsilon vs fraction online")
    timings.append(f"(c) {time.perf_counter() - t0:.0f} s")
  lines += [f"Wall time {time.perf_counter() - start:.0f} s "
            f"({', '.join(timings)}) on a shared 2-core machine.", ""]
  path = os.path.join(FLAGS.report_dir, REPORT)
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(lines))
  print(f"wrote {path}")


def run():
  """Entry point."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
