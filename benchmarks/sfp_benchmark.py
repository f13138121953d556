"""Benchmark of the SFP baseline next to TrieHH's fast engine.

For each population, at the central epsilons given (delta = 1/n^2), prints
the median (min-max) wall time of one SFP run (population already built)
with the median of each of its phases side by side: ``encode`` (the users'
words, positions, sketch rows and hashed cells), ``aggregate`` (the
sketches' cell counts and noise) and ``decode`` (the server: fragment
estimates, top T, stitching); then the median time of one TrieHH run
(``triehh.discover``, fast engine) unless ``--notriehh``; and their mean
precision@K and recall@K (K = 50) over the repeats (seeds 0..repeats-1).
Populations:

* ``english``: ``triehh.data.synthetic.english_population`` (1e6 users, one
  word each, drawn from the wordfreq English list);
* ``sentiment140``: the Sentiment140 sample in the single-word setting of
  ``triehh.data`` (each user's most frequent word of 3+ characters), read
  from ``$TRIEHH_SENTIMENT140`` or
  ``../shared/data/sentiment140_sample.csv.gz`` next to the checkout;
  skipped with a message when absent;
* ``paper_oov``: the paper reproduction's OOV population
  (``triehh.data.paper_populations``, 6M users by default) run with the
  reproduction's SFP options: the authors' fragment alphabet and stitching
  (``fragment_alphabet="paper"``, ``stitching="paper"``).

  python -m benchmarks.sfp_benchmark --repeats=3 --top_ts=20,80
  python -m benchmarks.sfp_benchmark --populations=paper_oov --notriehh \\
      --repeats=5 --top_ts=20,80
"""

from __future__ import annotations

import os
import statistics
import time

from absl import app
from absl import flags

import triehh
from triehh import data
from triehh.data import datasets
from triehh.data import paper_populations
from triehh.data import synthetic

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_users", 1_000_000, "Users of the english population.")
flags.DEFINE_integer("oov_num_users", paper_populations.OOV_NUM_USERS,
                     "Users of the paper_oov population.")
flags.DEFINE_list("epsilons", ["1", "4"], "Central epsilons.")
flags.DEFINE_list("top_ts", ["20"], "SFP top-T counts: tuples kept per "
                  "position.")
flags.DEFINE_integer("repeats", 3, "Timed runs per cell (seeds 0..repeats-1).")
flags.DEFINE_integer("k_metric", 50, "K of precision@K and recall@K.")
flags.DEFINE_list("populations", ["english", "sentiment140"],
                  "Populations to run: english, sentiment140, paper_oov.")
flags.DEFINE_boolean("triehh", True, "Also time TrieHH's fast engine.")
flags.DEFINE_boolean("with_reports", False,
                     "Also time one SFP run that materialises every client "
                     "report (simulation='reports').")
flags.DEFINE_integer("num_threads", None,
                     "SFP decode threads (default: up to 2 cores).")

PHASES = ("encode", "aggregate", "decode")
# SFP options per population (the reproduction's, for its population).
SFP_OPTIONS = {"paper_oov": {"fragment_alphabet": "paper",
                             "stitching": "paper"}}


def populations():
  for name in FLAGS.populations:
    start = time.perf_counter()
    if name == "english":
      pop = synthetic.english_population(FLAGS.num_users, seed=0)
    elif name == "sentiment140":
      path = datasets.sentiment140_sample()
      if path is None:
        print(f"sentiment140: skipped, no sample at "
              f"${datasets.SENTIMENT140_ENV} or "
              f"{os.path.normpath(datasets.SENTIMENT140_SAMPLE)}")
        continue
      pop = data.load(data.DataSpec(path, dataset="sentiment140",
                                    setting="single")).population
    elif name == "paper_oov":
      pop = paper_populations.paper_population(
          "oov", num_users=FLAGS.oov_num_users).population
    else:
      raise ValueError(f"unknown population {name!r}")
    yield name, pop, time.perf_counter() - start


def summary(times: list[float]) -> str:
  return (f"{statistics.median(times):7.2f} s "
          f"({min(times):.2f}-{max(times):.2f})")


def scores_of(result, truth) -> dict[str, float]:
  return triehh.precision_recall_f1(result.heavy_hitters, truth,
                                    [FLAGS.k_metric])


def sfp_rows(name: str, pop, truth, eps: float, top_t: int) -> list[tuple]:
  """The rows of SFP at ``top_t``: label, times, scores, note."""
  target = triehh.SFPTarget(eps, top_t=top_t, **SFP_OPTIONS.get(name, {}))
  times, scores, phases = [], [], {p: [] for p in PHASES}
  for seed in range(FLAGS.repeats):
    result = triehh.sfp_discover(pop, target, seed=seed,
                                 num_threads=FLAGS.num_threads)
    times.append(result.seconds)
    scores.append(scores_of(result, truth))
    for phase in PHASES:
      phases[phase].append(result.phase_seconds[phase])
  note = "  ".join(f"{p} {statistics.median(phases[p]):5.2f} s"
                   for p in PHASES)
  rows = [(f"SFP T={top_t}", times, scores,
           f"{note}   eps_local={result.params.epsilon_local:.2f}")]
  if FLAGS.with_reports:
    result = triehh.sfp_discover(pop, target, seed=0, simulation="reports",
                                 num_threads=FLAGS.num_threads)
    rows.append((f"SFP T={top_t} reports", [result.seconds],
                 [scores_of(result, truth)],
                 f"clients {result.client_seconds:.2f} s + server "
                 f"{result.server_seconds:.2f} s (seed 0 only)"))
  return rows


def triehh_row(pop, truth, eps: float) -> tuple:
  times, scores = [], []
  for seed in range(FLAGS.repeats):
    result = triehh.discover(pop, triehh.Target(eps, sampling="fixed"),
                             seed=seed)
    times.append(result.seconds)
    scores.append(scores_of(result, truth))
  return ("TrieHH (fast engine)", times, scores, "")


def main(argv):
  del argv
  k = FLAGS.k_metric
  print(f"median wall time of one run over {FLAGS.repeats} seeds (min-max), "
        f"SFP's phases (medians); mean precision@{k} / recall@{k}; delta = "
        f"1/n^2; population building excluded; load average "
        f"{os.getloadavg()[0]:.1f}")
  for name, pop, build_seconds in populations():
    pop.encode()
    truth = pop.ground_truth()
    print(f"\n{name}: {pop!r}, built in {build_seconds:.1f} s")
    for eps in (float(e) for e in FLAGS.epsilons):
      rows = [triehh_row(pop, truth, eps)] if FLAGS.triehh else []
      for t in (int(t) for t in FLAGS.top_ts):
        rows += sfp_rows(name, pop, truth, eps, t)
      print(f"  epsilon = {eps:g}")
      for label, times, scores, note in rows:
        precision = statistics.mean(s[f"precision@{k}"] for s in scores)
        recall = statistics.mean(s[f"recall@{k}"] for s in scores)
        print(f"    {label:<22s} {summary(times)}   P@{k}={precision:.3f} "
              f"R@{k}={recall:.3f}   {note}")
  print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
  app.run(main)
