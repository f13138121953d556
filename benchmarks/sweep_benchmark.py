"""Overhead of the sweep machinery per run, next to bare ``discover`` calls.

On one default population (built and encoded once, outside every timing),
each repeat times side by side:

- bare: ``triehh.discover(pop, triehh.Target(...), seed=s)`` for N seeds;
- metrics: ``triehh.precision_recall_f1`` of those N results (what every
  recorded run also computes);
- sweep: ``triehh.runs.runner.run_plan`` of one cell of N fast-engine runs into
  a fresh directory (plan, per-cell lock, the runs recorded in
  results.jsonl, metrics, record, locked append of each line; synced every
  few seconds and when the plan ends).

Prints the median seconds per run of each and the overhead per run, sweep
minus bare, with and without the metrics; then the sweep's marginal cost
per run, in this process's CPU time: a plan of N runs minus one of N/5,
per extra run (what a sweep's set-up costs once, its lock, the results
file read, the final sync, left out), against bare ``discover``.

  python -m benchmarks.sweep_benchmark --num_users=1000000 --num_runs=20
"""

from __future__ import annotations

import statistics
import tempfile
import time

from absl import app
from absl import flags

from triehh.data import datasets as datasets_lib
from triehh.runs import grid
from triehh.runs import runner
import triehh

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_users", 1_000_000, "Users in the population.")
flags.DEFINE_integer("num_runs", 50, "Runs N per measurement.")
flags.DEFINE_integer("repeats", 11, "Measurements of each kind.")
flags.DEFINE_float("epsilon", 4.0, "Target epsilon.")


def main(argv):
  del argv
  data = dict(grid.DEFAULT_DATA, num_users=FLAGS.num_users)
  (cell,) = grid.expand(data=(data,), epsilons=(FLAGS.epsilon,))
  datasets = datasets_lib.DataCache()
  start = time.perf_counter()
  dataset = datasets.get(data)
  print(f"population: {dataset.population!r}, built and encoded in "
        f"{time.perf_counter() - start:.2f} s (not timed below)")
  n = FLAGS.num_runs
  # The population's first run fills its tables (not what is compared).
  triehh.discover(dataset.population,
                  triehh.Target(FLAGS.epsilon, sampling="fixed"),
                  seed=FLAGS.repeats * n)
  bare, scoring, swept, cpu = [], [], [], {"bare": [], "sweep": []}
  marginal, short = [], max(1, n // 5)
  for repeat in range(FLAGS.repeats):
    seeds = range(repeat * n, repeat * n + n)
    if repeat % 2:  # the two contenders take turns going first
      swept.append(_sweep(cell, datasets, seeds, cpu["sweep"]))
    bare.append(_bare(dataset, seeds, scoring, cpu["bare"]))
    if not repeat % 2:
      swept.append(_sweep(cell, datasets, seeds, cpu["sweep"]))
    few = []
    _sweep(cell, datasets, range(10**6 + repeat * n, 10**6 + repeat * n +
                                 short), few)
    marginal.append((cpu["sweep"][-1] * n - few[0] * short) / (n - short))
  b, m, s = (statistics.median(x) for x in (bare, scoring, swept))
  cb, cs = (statistics.median(cpu[k]) for k in ("bare", "sweep"))
  print(f"{n} runs x {FLAGS.repeats} repeats, median seconds per run:")
  print(f"  bare discover        {b * 1e3:9.2f} ms")
  print(f"  metrics of a run     {m * 1e3:9.2f} ms")
  print(f"  sweep (run_plan)     {s * 1e3:9.2f} ms")
  print(f"  overhead per run     {(s - b) * 1e3:9.2f} ms "
        f"({(s - b - m) * 1e3:.2f} ms without the metrics)")
  print(f"  sweep / bare         {s / b:9.2f}x (median of the repeats' "
        f"ratios {statistics.median(x / y for x, y in zip(swept, bare)):.2f}x)")
  # This process's CPU time: what other processes on the machine take is
  # left out (and so is the time spent waiting for the disk's fsync).
  print(f"  CPU time per run     bare {cb * 1e3:.2f} ms, sweep "
        f"{cs * 1e3:.2f} ms: {cs / cb:.2f}x")
  mc = statistics.median(marginal)
  paired = statistics.median(m / b for m, b in zip(marginal, cpu["bare"]))
  print(f"  marginal CPU per run {mc * 1e3:9.2f} ms ({n} runs against {short}):"
        f" {mc / cb:.2f}x bare discover (median of the repeats' ratios "
        f"{paired:.2f}x)")


def _bare(dataset, seeds: range, scoring: list[float],
          cpu: list[float]) -> float:
  """Seconds per run of ``discover`` over ``seeds`` (CPU seconds to
  ``cpu``); the metrics of those runs, timed after them, go to
  ``scoring``."""
  start, start_cpu = time.perf_counter(), time.process_time()
  results = [triehh.discover(
      dataset.population, triehh.Target(FLAGS.epsilon, sampling="fixed"),
      seed=s) for s in seeds]
  seconds = (time.perf_counter() - start) / len(seeds)
  cpu.append((time.process_time() - start_cpu) / len(seeds))
  start = time.perf_counter()
  for result in results:
    triehh.precision_recall_f1(result.heavy_hitters, dataset.truth)
  scoring.append((time.perf_counter() - start) / len(seeds))
  return seconds


def _sweep(cell, datasets, seeds: range, cpu: list[float]) -> float:
  """Seconds per run of ``run_plan`` over ``seeds``, into a fresh
  directory (CPU seconds to ``cpu``)."""
  with tempfile.TemporaryDirectory() as output_dir:
    start, start_cpu = time.perf_counter(), time.process_time()
    tasks = runner.plan([cell], seeds.start, len(seeds))
    runner.run_plan(tasks, output_dir, datasets=datasets)
    cpu.append((time.process_time() - start_cpu) / len(seeds))
    return (time.perf_counter() - start) / len(seeds)


if __name__ == "__main__":
  app.run(main)
