"""TFF's IBLT heavy hitters next to TrieHH's TFF engine, on the same users.

For each data set (the Sentiment140 sample, single-word setting, and the
default synthetic population, subsampled when one IBLT round over its
TrieHH batch would not fit in memory) and each epsilon of ``--epsilons``
(delta = 1/n^2): TrieHH's batch size m and threshold theta come from
Corollary 1; IBLT runs one round on TrieHH's first-round sample (the same
seed, the same ``triehh.engines.sampling`` draw) with ``k_anonymity = theta``
(unless ``--k_anonymity``), and TrieHH runs in full on the TFF engine with
the same seed. Prints, per data set, a table of

* time per client: IBLT's TFF round over its m clients divided by m, warm
  (the computation compiled by a first run); TrieHH's full TFF run divided
  by its client-rounds (sum over rounds of the users sampled), warm;
* communication per client: the IBLT sketch and count tensors each client
  sends (int64); TrieHH's vote vector per client per round (int32, the
  frontier's power-of-two capacity times the alphabet + ``$``), mean and
  largest over the rounds;
* recall@10, recall@50, F1@10, F1@50, F1@100 against the truth (users per
  word); IBLT's truncated outputs (strings cut at ``string_max_bytes``) are
  counted as false positives;
* the privacy each gives: TrieHH (epsilon, delta)-DP by Theorem 1; IBLT
  k-anonymity, not differential privacy.

Figures are medians over ``--num_seeds`` seeds (with min-max). Also printed:
the IBLT's memory estimate and the worker's peak resident memory before and
after the IBLT rounds.

  python -m benchmarks.iblt_benchmark --num_seeds=3
"""

from __future__ import annotations

import statistics
import sys
import time

from absl import app
from absl import flags
import numpy as np

FLAGS = flags.FLAGS
flags.DEFINE_string("sample", None,
                    "Sentiment140 sample (default: $TRIEHH_SENTIMENT140, else "
                    "../shared/data/sentiment140_sample.csv.gz beside the "
                    "repository; skipped when absent).")
flags.DEFINE_list("datasets", ["sentiment140", "default"],
                  "Data sets: sentiment140 and/or default.")
flags.DEFINE_list("epsilons", ["4"], "TrieHH's target epsilons.")
flags.DEFINE_integer("num_seeds", 3, "Seeds 0..num_seeds-1.")
flags.DEFINE_integer("k_anonymity", None,
                     "IBLT's threshold (default: TrieHH's theta).")
flags.DEFINE_integer("string_max_bytes", 10,
                     "IBLT cuts strings to this many bytes (TrieHH's L=10).")
flags.DEFINE_integer("num_users", 1_000_000,
                     "Users of the default synthetic population.")
flags.DEFINE_integer("subsample", 100_000,
                     "Users of the default population's subsample, used when "
                     "the full population's IBLT round does not fit.")
flags.DEFINE_float("max_memory_fraction", 0.25,
                   "Refuse IBLT rounds estimated above this share of the "
                   "physical memory (the library's default is 0.5; lower on "
                   "a shared machine).")

KS = (10, 50, 100)


def _median_range(values, fmt: str = ".3g") -> str:
  values = list(values)
  med = statistics.median(values)
  if len(values) == 1 or max(values) == min(values):
    return f"{med:{fmt}}"
  return f"{med:{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


def _peak_rss_mb(pid: int) -> float:
  with open(f"/proc/{pid}/status") as f:
    for line in f:
      if line.startswith("VmHWM:"):
        return int(line.split()[1]) / 1024
  return float("nan")


def _iblt_row(pop, k: int, m: int, capacity: int, seeds, truth) -> dict:
  """IBLT's row: a first run (compiling), then one run per seed; prints its
  sketch, memory and outputs."""
  from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
  from triehh.engines.tff import runtime as runtime_lib  # pylint: disable=g-import-not-at-top
  import triehh  # pylint: disable=g-import-not-at-top
  runtime = runtime_lib.get_runtime()
  pid = runtime._processes[0].pid  # pylint: disable=protected-access
  rss_before = _peak_rss_mb(pid)
  target = iblt.IBLTTarget(k, m, capacity=capacity,
                           string_max_bytes=FLAGS.string_max_bytes)
  options = dict(max_memory_fraction=FLAGS.max_memory_fraction)
  start = time.perf_counter()
  iblt.iblt_discover(pop, target, seed=seeds[0], **options)  # compiles
  first = time.perf_counter() - start
  iblt_runs = [iblt.iblt_discover(pop, target, seed=s, **options)
               for s in seeds]
  rss_after = _peak_rss_mb(pid)
  p = iblt_runs[0].params
  print(f"  IBLT: first run {first:.1f} s (compiles); sketch {p.sketch_shape}"
        f" + counts, {p.bytes_per_client} bytes per client; memory estimate "
        f"{p.memory_estimate_bytes / 1e6:.0f} MB; worker peak RSS "
        f"{rss_before:.0f} -> {rss_after:.0f} MB "
        f"({(rss_after - rss_before) / m * 1e3:.0f} kB per client of a "
        "round); truncated outputs per run "
        f"{[r.params.num_truncated for r in iblt_runs]}, not decoded "
        f"{[r.params.num_not_decoded for r in iblt_runs]}")
  iblt_scores = [triehh.precision_recall_f1(r.scored(), truth, KS)
                 for r in iblt_runs]
  return dict(
      algorithm=f"IBLT (1 round, k={k})",
      ms=[r.seconds_per_client * 1e3 for r in iblt_runs],
      bytes=f"{p.bytes_per_client}",
      clients=[r.params.users_sampled for r in iblt_runs],
      scores=iblt_scores, privacy=f"{k}-anonymity, not DP")


def _triehh_row(pop, epsilon: float, params, seeds, truth) -> dict:
  """TrieHH's row on the TFF engine: a first run (compiling), then one run
  per seed."""
  import triehh  # pylint: disable=g-import-not-at-top
  from reports.beyond import runs as beyond_runs  # pylint: disable=g-import-not-at-top
  triehh.discover(pop, triehh.Target(epsilon, sampling="fixed"), engine="tff",
                  seed=seeds[0])  # compiles
  trie_runs = [triehh.discover(
      pop, triehh.Target(epsilon, sampling="fixed"), engine="tff", seed=s)
               for s in seeds]
  trie_scores = [triehh.precision_recall_f1(r.heavy_hitters, truth, KS)
                 for r in trie_runs]
  votes = [beyond_runs.vote_bytes(r.trie) for r in trie_runs]
  return dict(
      algorithm=f"TrieHH tff (theta={params.theta})",
      ms=[r.seconds / r.num_participants * 1e3 for r in trie_runs],
      bytes=(f"{statistics.median(statistics.mean(v) for v in votes):.0f} "
             f"(max {max(max(v) for v in votes)})"),
      clients=[r.num_participants for r in trie_runs],
      scores=trie_scores,
      privacy=f"({params.epsilon:.2f}, {params.delta:.2g})-DP")


def compare(name: str, pop, epsilon: float, seeds) -> list[dict]:
  """IBLT and TrieHH rows for one data set and epsilon."""
  from reports.beyond import runs as beyond_runs  # pylint: disable=g-import-not-at-top
  from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
  from triehh.theory import mechanism  # pylint: disable=g-import-not-at-top
  from triehh.theory import policy  # pylint: disable=g-import-not-at-top
  params = policy.resolve(pop.num_users, pop.max_length,
                          mechanism.Target(epsilon, sampling="fixed"))
  k = FLAGS.k_anonymity or params.theta
  m = params.batch_size
  truth = pop.ground_truth()
  capacity = beyond_runs.first_round_capacity(pop, m, seeds,
                                              FLAGS.string_max_bytes)
  shape = iblt.sketch_shape(capacity, FLAGS.string_max_bytes)
  iblt.check_memory(m, iblt.client_bytes(shape),
                    max_memory_fraction=FLAGS.max_memory_fraction)
  print(f"\n{name}: {pop!r}; epsilon={params.epsilon:.4f} (target "
        f"{epsilon}), delta={params.delta:.3g}, theta={params.theta}, "
        f"m={m}; IBLT k_anonymity={k}, capacity={capacity}, "
        f"string_max_bytes={FLAGS.string_max_bytes}")
  return [_iblt_row(pop, k, m, capacity, seeds, truth),
          _triehh_row(pop, epsilon, params, seeds, truth)]


def print_table(rows: list[dict]) -> None:
  header = (f"  {'algorithm':<26} {'ms/client':>18} {'bytes/client':>18} "
            f"{'clients':>14} {'recall@10':>15} {'recall@50':>15} "
            f"{'F1@10':>15} {'F1@50':>15} {'F1@100':>15}  privacy")
  print(header)
  for row in rows:
    s = row["scores"]
    print(f"  {row['algorithm']:<26} {_median_range(row['ms']):>18} "
          f"{row['bytes']:>18} {_median_range(row['clients'], '.0f'):>14} "
          f"{_median_range(x['recall@10'] for x in s):>15} "
          f"{_median_range(x['recall@50'] for x in s):>15} "
          f"{_median_range(x['f1@10'] for x in s):>15} "
          f"{_median_range(x['f1@50'] for x in s):>15} "
          f"{_median_range(x['f1@100'] for x in s):>15}  {row['privacy']}")


def _default_population(epsilon: float, seeds):
  """The default population, or its subsample if IBLT's round cannot fit."""
  from reports.beyond import runs as beyond_runs  # pylint: disable=g-import-not-at-top
  from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
  from triehh.data import synthetic  # pylint: disable=g-import-not-at-top
  from triehh.theory import mechanism  # pylint: disable=g-import-not-at-top
  from triehh.theory import policy  # pylint: disable=g-import-not-at-top
  pop = synthetic.english_population(FLAGS.num_users).encode()
  params = policy.resolve(pop.num_users, pop.max_length,
                          mechanism.Target(epsilon, sampling="fixed"))
  capacity = beyond_runs.first_round_capacity(pop, params.batch_size, seeds,
                                              FLAGS.string_max_bytes)
  try:
    iblt.check_memory(params.batch_size, iblt.client_bytes(
        iblt.sketch_shape(capacity, FLAGS.string_max_bytes)),
                      max_memory_fraction=FLAGS.max_memory_fraction)
    return "default", pop
  except MemoryError as err:
    print(f"\ndefault ({FLAGS.num_users} users, m={params.batch_size}, "
          f"capacity {capacity}): refused: {err}")
  sub = synthetic.english_population(FLAGS.subsample).encode()
  return f"default, subsample of {FLAGS.subsample} users", sub


def main(argv):
  del argv
  seeds = list(range(FLAGS.num_seeds))
  start = time.perf_counter()
  from triehh import data  # pylint: disable=g-import-not-at-top
  from triehh.data import datasets  # pylint: disable=g-import-not-at-top
  from triehh.engines.tff import runtime as runtime_lib  # pylint: disable=g-import-not-at-top
  runtime_lib.get_runtime()
  print(f"setup: import TensorFlow + TFF and start a local worker "
        f"{time.perf_counter() - start:.1f} s; seeds {seeds}")
  for dataset in FLAGS.datasets:
    for epsilon in (float(e) for e in FLAGS.epsilons):
      if dataset == "sentiment140":
        path = datasets.sentiment140_sample(FLAGS.sample)
        if path is None:
          print("\nsentiment140: the sample is absent (pass --sample or set "
                "TRIEHH_SENTIMENT140); skipped")
          continue
        pop = data.load(data.DataSpec(path, dataset="sentiment140",
                                      setting="single")).population.encode()
        name = "Sentiment140 sample, single word"
      elif dataset == "default":
        name, pop = _default_population(epsilon, seeds)
      else:
        sys.exit(f"unknown data set {dataset!r}: use sentiment140 or default")
      print_table(compare(name, pop, epsilon, seeds))
  print("\nIBLT releases every string sent by k clients of a round with its "
        "exact count: k-anonymity, not (epsilon, delta)-differential privacy."
        " Its truncated outputs count as false positives.")


if __name__ == "__main__":
  app.run(main)
