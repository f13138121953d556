"""Benchmark of the fast engine on a synthetic Zipf population.

Prints, for n users (default 1e6) each holding one word drawn from a Zipf
law over the English word list, at epsilon = 4 and delta = 1/n^2:
the one-time cost of building and encoding the population, the median (and
min/max) time of one full TrieHH run with the data already encoded, and
peak memory (traced numpy/Python allocations, and the process's max RSS).

  python -m benchmarks.fast_engine_benchmark --num_users=1000000 --repeats=50
"""

from __future__ import annotations

import resource
import statistics
import time
import tracemalloc

from absl import app
from absl import flags
import numpy as np

from triehh import api
from triehh.engines import fast as fast_engine
from triehh import synthetic

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_users", 1_000_000, "Population size n.")
flags.DEFINE_float("epsilon", 4.0, "Target epsilon.")
flags.DEFINE_float("zipf_exponent", 1.0, "Zipf exponent of the word law.")
flags.DEFINE_integer("repeats", 50, "Timed runs (seeds 0..repeats-1).")


def main(argv):
  del argv
  n = FLAGS.num_users
  synthetic.english_words()  # load the word list outside the timings
  tracemalloc.start()
  start = time.perf_counter()
  pop = synthetic.english_population(
      n, seed=0, distribution="zipf", exponent=FLAGS.zipf_exponent)
  built = time.perf_counter()
  pop.encode()
  fast_engine.prepare(pop)
  encoded = time.perf_counter()
  _, build_peak = tracemalloc.get_traced_memory()
  tracemalloc.stop()  # tracing slows allocations: time without it
  params = api.resolve_params(n, pop.max_length, epsilon=FLAGS.epsilon)
  times, cpu_times, rounds, found = [], [], [], []
  for seed in range(FLAGS.repeats):
    rng = np.random.default_rng(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    trie = fast_engine.run(pop, theta=params.theta,
                           batch_size=params.batch_size, rng=rng)
    times.append(time.perf_counter() - t0)
    cpu_times.append(time.process_time() - c0)
    rounds.append(trie.depth)
    found.append(len(trie.heavy_hitters()))
  tracemalloc.start()
  fast_engine.run(pop, theta=params.theta, batch_size=params.batch_size,
                  rng=np.random.default_rng(0))
  _, run_peak = tracemalloc.get_traced_memory()
  tracemalloc.stop()
  rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
  print(f"population: n={n:,}, V={pop.num_words:,} distinct words, Zipf "
        f"exponent {FLAGS.zipf_exponent}, |alphabet|={pop.alphabet.size}")
  print(f"privacy: epsilon={params.epsilon:.4f} (target {FLAGS.epsilon}), "
        f"delta={params.delta:.3g}, theta={params.theta}, "
        f"batch size={params.batch_size:,}, {params.levels} levels")
  print(f"build population: {built - start:.3f} s; encode (prefix tables): "
        f"{encoded - built:.3f} s")
  ms = [t * 1e3 for t in times]
  print(f"one full run ({FLAGS.repeats} seeds): median {statistics.median(ms):.2f}"
        f" ms, min {min(ms):.2f} ms, max {max(ms):.2f} ms; rounds median "
        f"{statistics.median(rounds)}, heavy hitters median "
        f"{statistics.median(found)}")
  cpu = [t * 1e3 for t in cpu_times]
  print(f"  CPU time of one run: median {statistics.median(cpu):.2f} ms, min "
        f"{min(cpu):.2f} ms (less sensitive to other load on the machine)")
  print(f"peak traced memory: build+encode {build_peak / 2**20:.1f} MiB, "
        f"per run {run_peak / 2**20:.2f} MiB; process max RSS {rss:.0f} MiB")


if __name__ == "__main__":
  app.run(main)
