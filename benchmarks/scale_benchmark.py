"""Benchmark of count-level TrieHH alone, from 10^6 to 10^12 users.

For one-word Zipf populations given by per-word user counts
(:meth:`Population.from_word_frequencies`: no per-user array, O(V) memory),
it prints at epsilon = 4 and delta = 1/n^2: the time to build the
population's count-level tables once, then the median wall and CPU time of
one full TrieHH run of the fast engine (:func:`triehh.engines.fast.run`,
whose rounds draw the sampled users per cell, see
:mod:`triehh.engines.vote_counts`), the cells drawn per run and the heavy
hitters found; then the scaling exponent of the run time in n.
:mod:`benchmarks.fast_engine_benchmark` compares the same runs with
user-level sampling at the sizes where a per-user array fits in memory.

  python -m benchmarks.scale_benchmark --sizes=1e6,1e8,1e10,1e12 --repeats=7
"""

from __future__ import annotations

import statistics
import time

from absl import app
from absl import flags
import numpy as np

from triehh.core import population as population_lib
from triehh.data import synthetic
from triehh.engines import fast as fast_engine
from triehh.engines import vote_counts
from triehh.theory import mechanism
from triehh.theory import policy

FLAGS = flags.FLAGS
flags.DEFINE_list("sizes", ["1e6", "1e8", "1e10", "1e12"],
                  "Population sizes n.")
flags.DEFINE_float("epsilon", 4.0, "Target epsilon.")
flags.DEFINE_float("zipf_exponent", 1.0, "Zipf exponent s of the word law.")
flags.DEFINE_integer("repeats", 7, "Timed runs per size.")


def zipf_word_population(num_users: int, exponent: float, seed: int = 0
                         ) -> population_lib.Population:
  """The English vocabulary with ``num_users`` users drawn from a Zipf law."""
  words, freqs = synthetic.english_words()
  probs = synthetic.word_probabilities(freqs, "zipf", exponent)
  users = np.random.default_rng(seed).multinomial(num_users, probs)
  return population_lib.Population.from_word_frequencies(words, users)


def _cells_per_run(pop: population_lib.Population, theta: int,
                   batch_size: int) -> int:
  """Cells whose counts one run draws (seed 0)."""
  tables = vote_counts.tables_of(pop)
  cells = 0
  trie_run = fast_engine.run(pop, theta=theta, batch_size=batch_size,
                             rng=np.random.default_rng(0))
  frontier = np.zeros(1, dtype=np.int64)
  for depth, level in enumerate(trie_run.levels, start=1):
    round_cells = vote_counts.round_cells(tables, depth, frontier)
    cells += round_cells.users.size
    # The next frontier: the kept non-terminated cells, in vote order.
    keep = np.isin(round_cells.vote_index,
                   level.parents * pop.alphabet.num_extensions
                   + level.prefixes[:, -1])
    frontier = round_cells.child_ids[keep]
  return cells


def main(argv):
  del argv
  synthetic.english_words()  # load the word list outside the timings
  rows = []
  for n in (int(float(v)) for v in FLAGS.sizes):
    pop = zipf_word_population(n, FLAGS.zipf_exponent).encode()
    start = time.perf_counter()
    fast_engine.prepare(pop)
    prepared = time.perf_counter() - start
    params = policy.resolve(n, pop.max_length,
                            mechanism.Target(FLAGS.epsilon, sampling="fixed"))
    walls, cpus, found = [], [], []
    for seed in range(FLAGS.repeats):
      t0, c0 = time.perf_counter(), time.process_time()
      trie = fast_engine.run(pop, theta=params.theta,
                             batch_size=params.batch_size,
                             rng=np.random.default_rng(seed))
      walls.append(time.perf_counter() - t0)
      cpus.append(time.process_time() - c0)
      found.append(len(trie.heavy_hitters()))
    cells = _cells_per_run(pop, params.theta, params.batch_size)
    print(f"n={n:.0e}: m={params.batch_size:,}, theta={params.theta}; tables "
          f"{prepared:.2f} s; run median {statistics.median(walls) * 1e3:.2f}"
          f" ms wall, {statistics.median(cpus) * 1e3:.2f} ms CPU; "
          f"{cells:,} cells drawn (seed 0); heavy hitters median "
          f"{statistics.median(found)}", flush=True)
    rows.append((n, statistics.median(cpus)))
  if len(rows) >= 2:
    x, y = np.log(np.array(rows, dtype=float)).T
    print(f"scaling exponent (CPU time ~ n^k over {len(rows)} sizes): "
          f"k = {np.polyfit(x, y, 1)[0]:.2f}")


if __name__ == "__main__":
  app.run(main)
