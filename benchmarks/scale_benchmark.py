"""Benchmark of count-level sampling against user-level sampling, by scale.

For one-word Zipf populations (each user holds one word of the English list,
with probability proportional to rank^-s), built from per-word user counts
(one multinomial draw, O(V) memory), it prints at epsilon = 4 and
delta = 1/n^2 the median time of one full TrieHH run:

* count level: each round is one multivariate hypergeometric draw over the
  frontier's cells (:mod:`triehh.engines.vote_counts`), no per-user array;
* user level: the fast engine as it is (:func:`triehh.engines.fast.run`,
  which draws the users), on the same population given as a shuffled
  per-user array (only for the sizes in ``--sizes``).

Runs alternate between the two (same seeds), so both see the same machine
load. Sizes in ``--count_only_sizes`` are run at count level only.

  python -m benchmarks.scale_benchmark --sizes=1e6,1e7,1e8 --repeats=7
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time

from absl import app
from absl import flags
import numpy as np

from triehh import policy
from triehh import population as population_lib
from triehh import synthetic
from triehh import trie as trie_lib
from triehh.engines import fast as fast_engine
from triehh.engines import vote_counts

FLAGS = flags.FLAGS
flags.DEFINE_list("sizes", ["1e6", "1e7", "1e8"],
                  "Population sizes n run at both levels.")
flags.DEFINE_list("count_only_sizes", ["1e9", "1e12"],
                  "Population sizes n run at count level only.")
flags.DEFINE_float("epsilon", 4.0, "Target epsilon.")
flags.DEFINE_float("zipf_exponent", 1.0, "Zipf exponent s of the word law.")
flags.DEFINE_integer("repeats", 7, "Timed runs per size and sampler.")


def zipf_word_population(num_users: int, exponent: float, seed: int = 0
                         ) -> tuple[population_lib.Population, np.ndarray]:
  """The encoded English vocabulary and the users holding each word.

  The population's own ``user_word`` lists one user per word (only its
  encoding is used); the second result counts the real users per word.
  """
  words, freqs = synthetic.english_words()
  probs = synthetic.word_probabilities(freqs, "zipf", exponent)
  per_word = np.random.default_rng(seed).multinomial(num_users, probs)
  vocab = population_lib.Population.from_word_indices(
      np.asarray(words, dtype=object), np.arange(len(words)))
  # Words that coincide after lower-casing share an index: add their users.
  users_per_word = np.zeros(vocab.num_words, dtype=np.int64)
  np.add.at(users_per_word, vocab.user_word, per_word)
  return vocab, users_per_word


def with_user_array(vocab: population_lib.Population,
                    users_per_word: np.ndarray,
                    seed: int = 0) -> population_lib.Population:
  """The same population with a shuffled per-user word array."""
  user_word = np.repeat(np.arange(vocab.num_words, dtype=np.int32),
                        users_per_word)
  np.random.default_rng(seed).shuffle(user_word)
  return dataclasses.replace(vocab, user_word=user_word)


def count_level_run(tables: vote_counts.PrefixUsers,
                    alphabet, num_levels: int, *, theta: int,
                    batch_size: int, rng: np.random.Generator
                    ) -> trie_lib.Trie:
  """One TrieHH run whose rounds draw vote counts, not users."""
  trie = trie_lib.Trie(alphabet)
  frontier = np.zeros(1, dtype=np.int64)  # the root
  for depth in range(1, num_levels + 1):
    if frontier.size == 0:
      break
    votes, cells, _ = vote_counts.sample_votes(tables, depth, frontier,
                                               batch_size, rng)
    level, kept = trie.grow(votes, theta, num_sampled=batch_size)
    if not level.grew:
      break
    frontier = vote_counts.next_frontier(cells, kept)
  return trie


def _parse_sizes(values: list[str]) -> list[int]:
  return [int(float(v)) for v in values]


def _median_ms(times: list[float]) -> float:
  return statistics.median(times) * 1e3


def main(argv):
  del argv
  synthetic.english_words()  # load the word list outside the timings
  rows = []
  for n in _parse_sizes(FLAGS.sizes) + _parse_sizes(FLAGS.count_only_sizes):
    both = n in _parse_sizes(FLAGS.sizes)
    start = time.perf_counter()
    vocab, users_per_word = zipf_word_population(n, FLAGS.zipf_exponent)
    tables = vote_counts.prefix_users(vocab, users_per_word)
    prepared = time.perf_counter() - start
    params = policy.resolve_params(n, vocab.max_length, epsilon=FLAGS.epsilon)
    pop = None
    if both:
      pop = with_user_array(vocab, users_per_word)
      pop.encode()
      fast_engine.prepare(pop)
    count_times, user_times, count_cpu, user_cpu = [], [], [], []
    count_found, user_found = [], []
    for seed in range(FLAGS.repeats):
      t0, c0 = time.perf_counter(), time.process_time()
      trie = count_level_run(tables, vocab.alphabet, vocab.num_levels,
                             theta=params.theta, batch_size=params.batch_size,
                             rng=np.random.default_rng(seed))
      count_times.append(time.perf_counter() - t0)
      count_cpu.append(time.process_time() - c0)
      count_found.append(len(trie.heavy_hitters()))
      if both:
        t0, c0 = time.perf_counter(), time.process_time()
        trie = fast_engine.run(pop, theta=params.theta,
                               batch_size=params.batch_size,
                               rng=np.random.default_rng(seed))
        user_times.append(time.perf_counter() - t0)
        user_cpu.append(time.process_time() - c0)
        user_found.append(len(trie.heavy_hitters()))
    del pop
    line = (f"n={n:.0e}: m={params.batch_size:,}, theta={params.theta}; "
            f"tables {prepared:.2f} s; count level median "
            f"{_median_ms(count_times):.2f} ms (CPU {_median_ms(count_cpu):.2f}"
            f" ms; heavy hitters median {statistics.median(count_found)})")
    if both:
      line += (f"; user level median {_median_ms(user_times):.2f} ms (CPU "
               f"{_median_ms(user_cpu):.2f} ms; heavy hitters median "
               f"{statistics.median(user_found)}); speed-up "
               f"{statistics.median(user_times) / statistics.median(count_times):.1f}x")
    print(line, flush=True)
    rows.append((n, statistics.median(count_times),
                 statistics.median(user_times) if both else None))
  _print_exponents(rows)


def _print_exponents(rows: list[tuple[int, float, float | None]]) -> None:
  """Least-squares slope of log(time) against log(n), per sampler."""
  for name, column in (("count level", 1), ("user level", 2)):
    points = [(math.log(r[0]), math.log(r[column])) for r in rows
              if r[column] is not None]
    if len(points) < 2:
      continue
    x, y = np.array(points).T
    slope = np.polyfit(x, y, 1)[0]
    print(f"scaling exponent ({name}, time ~ n^k over "
          f"{len(points)} sizes): k = {slope:.2f}")


if __name__ == "__main__":
  app.run(main)
