"""End-to-end ``triehh.discover`` on populations given as word frequencies.

For one-word Zipf populations of n users over the English vocabulary
(:meth:`Population.from_word_frequencies`, built and prepared once, outside
the timings), prints per size the median wall time of a whole
``discover(pop, Target(4, sampling=...), seed=s)`` call, and, side by side
on the same tries, the median time of turning the found words into the
result's dict (:meth:`Trie.heavy_hitters`, vectorised) against decoding
them one by one (the former method), with a check that both give the same
dict in the same order.

Each size runs under Poisson sampling (``discover``'s default) and the
paper's fixed-size batches (``--samplings``).

  python -m benchmarks.discover_benchmark --sizes=1e8,1e9 --repeats=9
"""

from __future__ import annotations

import statistics
import time

from absl import app
from absl import flags

from benchmarks import scale_benchmark
from triehh.engines import fast as fast_engine
import triehh

# --sizes, --epsilon and --repeats are scale_benchmark's flags (its
# population is the one timed here), with defaults of their own.
FLAGS = flags.FLAGS
FLAGS.set_default("sizes", ["1e8", "1e9"])
FLAGS.set_default("repeats", 9)
flags.DEFINE_list("samplings", ["poisson", "fixed"],
                  "Samplings timed: poisson (discover's default) and fixed "
                  "(the paper's batches of m users).")


def _median_ms(function, repeats: int) -> float:
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    function()
    times.append(time.perf_counter() - start)
  return statistics.median(times) * 1e3


def main(argv):
  del argv
  for n in (int(float(v)) for v in FLAGS.sizes):
    pop = scale_benchmark.zipf_word_population(n, 1.0).encode()
    fast_engine.prepare(pop)
    for sampling in FLAGS.samplings:
      _row(pop, n, sampling)


def _row(pop, n: int, sampling: str) -> None:
  """One size and sampling: ``discover`` end to end, and its decoding."""
  privacy = triehh.Target(FLAGS.epsilon, sampling=sampling)
  triehh.discover(pop, privacy, seed=0)  # warm caches
  calls, vectorised, one_by_one = [], [], []
  for seed in range(FLAGS.repeats):
    start = time.perf_counter()
    result = triehh.discover(pop, privacy, seed=seed)
    calls.append(time.perf_counter() - start)
    trie = result.trie
    if (list(trie.heavy_hitters().items())
        != list(trie._heavy_hitters_one_by_one().items())):  # pylint: disable=protected-access
      raise AssertionError(f"the two decodings differ at n={n:.0e}")
    vectorised.append(_median_ms(trie.heavy_hitters, 3))
    one_by_one.append(_median_ms(trie._heavy_hitters_one_by_one, 3))  # pylint: disable=protected-access
  v, o = statistics.median(vectorised), statistics.median(one_by_one)
  print(f"n={n:.0e}, {sampling} sampling: discover median "
        f"{statistics.median(calls) * 1e3:.1f} ms end to end "
        f"({len(result.heavy_hitters):,} words found); heavy_hitters "
        f"{v:.2f} ms vectorised against {o:.2f} ms one by one "
        f"({o / v:.1f}x)", flush=True)


if __name__ == "__main__":
  app.run(main)
