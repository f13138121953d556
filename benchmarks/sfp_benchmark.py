"""Benchmark of the SFP baseline next to TrieHH's fast engine.

For each population, at central epsilon = 1 and 4 with delta = 1/n^2, prints
the median (min-max) wall time of one SFP run (client reports + server
decode, population already built) and of one TrieHH run (``triehh.discover``,
fast engine), and their mean precision@K and recall@K (K = 50) over the
repeats (seeds 0..repeats-1). Populations:

* ``english``: ``triehh.data.synthetic.english_population`` (1e6 users, one word
  each, drawn from the wordfreq English list);
* ``sentiment140``: the Sentiment140 sample in the single-word setting of
  ``triehh.data`` (each user's most frequent word of 3+ characters), read
  from ``$TRIEHH_SENTIMENT140`` or
  ``../shared/data/sentiment140_sample.csv.gz`` next to the checkout;
  skipped with a message when absent.

  python -m benchmarks.sfp_benchmark --repeats=3 --top_ts=20,80
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
from triehh.data import synthetic

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_users", 1_000_000, "Users of the english population.")
flags.DEFINE_list("epsilons", ["1", "4"], "Central epsilons.")
flags.DEFINE_list("top_ts", ["20"], "SFP top-T counts: tuples kept per "
                  "position.")
flags.DEFINE_integer("repeats", 3, "Timed runs per cell (seeds 0..repeats-1).")
flags.DEFINE_integer("k_metric", 50, "K of precision@K and recall@K.")
flags.DEFINE_list("populations", ["english", "sentiment140"],
                  "Populations to run.")
flags.DEFINE_boolean("with_reports", False,
                     "Also time one SFP run that materialises every client "
                     "report (simulation='reports').")
flags.DEFINE_integer("num_threads", None,
                     "SFP decode threads (default: up to 2 cores).")

def populations():
  for name in FLAGS.populations:
    if name == "english":
      start = time.perf_counter()
      pop = synthetic.english_population(FLAGS.num_users, seed=0)
      yield name, pop, time.perf_counter() - start
    elif name == "sentiment140":
      path = datasets.sentiment140_sample()
      if path is None:
        print(f"sentiment140: skipped, no sample at "
              f"${datasets.SENTIMENT140_ENV} or "
              f"{os.path.normpath(datasets.SENTIMENT140_SAMPLE)}")
        continue
      start = time.perf_counter()
      pop = data.load(data.DataSpec(path, dataset="sentiment140",
                                    setting="single")).population
      yield name, pop, time.perf_counter() - start
    else:
      raise ValueError(f"unknown population {name!r}")


def summary(times: list[float]) -> str:
  return (f"{statistics.median(times):7.2f} s "
          f"({min(times):.2f}-{max(times):.2f})")


def main(argv):
  del argv
  k = FLAGS.k_metric
  epsilons = [float(e) for e in FLAGS.epsilons]
  top_ts = [int(t) for t in FLAGS.top_ts]
  print(f"median wall time of one run over {FLAGS.repeats} seeds (min-max); "
        f"mean precision@{k} / recall@{k}; delta = 1/n^2; population "
        "building excluded")
  for name, pop, build_seconds in populations():
    pop.encode()
    truth = pop.ground_truth()
    print(f"\n{name}: {pop!r}, built in {build_seconds:.1f} s")
    for eps in epsilons:
      rows = []
      times, scores = [], []
      for seed in range(FLAGS.repeats):
        result = triehh.discover(pop, epsilon=eps, seed=seed, sampling="fixed")
        times.append(result.seconds)
        scores.append(triehh.precision_recall_f1(result.heavy_hitters, truth,
                                                 [k]))
      rows.append(("TrieHH (fast engine)", times, scores, ""))
      for t in top_ts:
        times, scores, parts = [], [], []
        for seed in range(FLAGS.repeats):
          result = triehh.sfp_discover(pop, epsilon=eps, top_t=t,
                                       seed=seed,
                                       num_threads=FLAGS.num_threads)
          times.append(result.seconds)
          parts.append((result.client_seconds, result.server_seconds))
          scores.append(triehh.precision_recall_f1(result.heavy_hitters,
                                                   truth, [k]))
        clients = statistics.median(c for c, _ in parts)
        server = statistics.median(s for _, s in parts)
        note = (f"eps_local={result.params.epsilon_local:.2f}; clients "
                f"{clients:.2f} s + server {server:.2f} s")
        rows.append((f"SFP T={t}", times, scores, note))
        if FLAGS.with_reports:
          result = triehh.sfp_discover(pop, epsilon=eps, top_t=t, seed=0,
                                       simulation="reports",
                                       num_threads=FLAGS.num_threads)
          score = triehh.precision_recall_f1(result.heavy_hitters, truth, [k])
          rows.append((f"SFP T={t} reports", [result.seconds], [score],
                       f"clients {result.client_seconds:.2f} s + server "
                       f"{result.server_seconds:.2f} s (seed 0 only)"))
      print(f"  epsilon = {eps:g}")
      for label, times, scores, note in rows:
        precision = statistics.mean(s[f"precision@{k}"] for s in scores)
        recall = statistics.mean(s[f"recall@{k}"] for s in scores)
        print(f"    {label:<22s} {summary(times)}   P@{k}={precision:.3f} "
              f"R@{k}={recall:.3f}   {note}")


if __name__ == "__main__":
  app.run(main)
