"""End-to-end ``triehh.discover`` on populations given as word frequencies.

For one-word Zipf populations of n users over the English vocabulary
(:meth:`Population.from_word_frequencies`, built and prepared once, outside
the timings), prints per size the median wall time of a whole
``discover(pop, Target(4, sampling=...), seed=s)`` call, and, side by side
on the same tries, the median time of turning the found words into the
result's dict (:meth:`Trie.heavy_hitters`, vectorised) against decoding
them one by one (the former method), with a check that both give the same
dict in the same order, and against its floor: the same dict built from the
words already decoded and in order (a numpy array of the strings and one of
the votes: ``tolist`` of each, then ``dict(zip(...))``), what is left once
decoding and ordering cost nothing. Where the package was built with its
compiled word votes (``triehh/core/_compiled_word_votes.pyx``) the
vectorised figure is theirs, and the numpy path's is printed beside it.
Both heavy_hitters and its floor are also timed in this thread's CPU time,
which leaves out what other processes on a shared machine take.

Each size runs under Poisson sampling (``discover``'s default) and the
paper's fixed-size batches (``--samplings``).

  python -m benchmarks.discover_benchmark --sizes=1e8,1e9 --repeats=9
"""

from __future__ import annotations

import statistics
import time

from absl import app
from absl import flags
import numpy as np

from benchmarks import scale_benchmark
from triehh.core import word_votes
from triehh.engines import fast as fast_engine
import triehh

# --sizes, --epsilon and --repeats are scale_benchmark's flags (its
# population is the one timed here), with defaults of their own.
FLAGS = flags.FLAGS
FLAGS.set_default("sizes", ["1e8", "1e9"])
FLAGS.set_default("repeats", 9)
flags.DEFINE_integer("floor_rounds", 5,
                     "Timings of heavy_hitters and of its floor per seed, "
                     "alternating.")
flags.DEFINE_list("samplings", ["poisson", "fixed"],
                  "Samplings timed: poisson (discover's default) and fixed "
                  "(the paper's batches of m users).")


def _median_ms(function, repeats: int, clock=time.perf_counter) -> float:
  times = []
  for _ in range(repeats):
    start = clock()
    function()
    times.append(clock() - start)
  return statistics.median(times) * 1e3


def _cpu_ms(function) -> float:
  """One call's CPU time in this thread (what other processes on the
  machine take is left out)."""
  return _median_ms(function, 1, time.thread_time)


def _numpy_path(trie):
  """``trie.heavy_hitters()`` with numpy's decoding, not the compiled pass."""
  def call():
    compiled, word_votes.compiled = word_votes.compiled, None
    try:
      return trie.heavy_hitters()
    finally:
      word_votes.compiled = compiled
  return call


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
  calls, vectorised, one_by_one, floors, numpy_path = [], [], [], [], []
  cpu = {"vectorised": [], "floor": []}
  for seed in range(FLAGS.repeats):
    start = time.perf_counter()
    result = triehh.discover(pop, privacy, seed=seed)
    calls.append(time.perf_counter() - start)
    trie = result.trie
    found = trie.heavy_hitters()
    if list(found.items()) != list(trie._heavy_hitters_one_by_one().items()):  # pylint: disable=protected-access
      raise AssertionError(f"the two decodings differ at n={n:.0e}")
    words, votes = np.array(list(found)), np.array(list(found.values()))
    floor = lambda w=words, v=votes: dict(zip(w.tolist(), v.tolist()))
    if list(floor().items()) != list(found.items()):
      raise AssertionError(f"the floor's dict differs at n={n:.0e}")
    if list(_numpy_path(trie)().items()) != list(found.items()):
      raise AssertionError(f"numpy's decoding differs at n={n:.0e}")
    for _ in range(FLAGS.floor_rounds):  # alternating, as the load varies
      vectorised.append(_median_ms(trie.heavy_hitters, 1))
      floors.append(_median_ms(floor, 1))
      cpu["vectorised"].append(_cpu_ms(trie.heavy_hitters))
      cpu["floor"].append(_cpu_ms(floor))
    # Apart: its large arrays would leave the next call pages to fault in.
    numpy_path.append(_median_ms(_numpy_path(trie), FLAGS.floor_rounds))
    one_by_one.append(_median_ms(trie._heavy_hitters_one_by_one, 3))  # pylint: disable=protected-access
  v, o, f, p = (statistics.median(x)
                for x in (vectorised, one_by_one, floors, numpy_path))
  cv, cf = (statistics.median(cpu[k]) for k in ("vectorised", "floor"))
  path = ("compiled pass" if word_votes.compiled is not None
          else "numpy, no compiled pass built")
  print(f"n={n:.0e}, {sampling} sampling: discover median "
        f"{statistics.median(calls) * 1e3:.1f} ms end to end "
        f"({len(result.heavy_hitters):,} words found); heavy_hitters "
        f"{v:.2f} ms vectorised ({path}) against {o:.2f} ms one by one "
        f"({o / v:.1f}x) and {f:.2f} ms for its floor ({v / f:.2f}x the "
        f"floor; numpy's decoding {p:.2f} ms, {p / f:.2f}x); in CPU time "
        f"{cv:.2f} ms against {cf:.2f} ms ({cv / cf:.2f}x the floor)",
        flush=True)


if __name__ == "__main__":
  app.run(main)
