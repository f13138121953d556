"""What ``discover`` costs around the engine's run, per call.

On a one-word Zipf population of each of ``--sizes`` users (built, encoded and
prepared once, outside the timings; warm: the parameters resolved by a
first call), for each sampling of ``--samplings``, runs alternating with
the same seeds:

* ``discover(population, Target(epsilon, sampling=...), seed=s)``;
* the fast engine's run alone (:func:`triehh.engines.fast.run` with the
  parameters discover resolved, its generator made in the timing as
  discover makes it);
* that run followed by :meth:`Trie.heavy_hitters` (discover's output).

It prints the medians and the ratio of discover to each (target of issue
37, section 3, "Per call": discover at most 1.3x the engine's run at
10^6, warm). Then the first call on a new population of the same size
(its engine tables and, for a new n, its parameters built), for scale.

  python -m benchmarks.per_call_benchmark --sizes=1e6 --repeats=301
"""

from __future__ import annotations

import statistics
import time

from absl import app
from absl import flags
import numpy as np

from benchmarks import scale_benchmark
from triehh.engines import fast as fast_engine
import triehh

# --sizes, --epsilon and --repeats are scale_benchmark's flags (its
# population is the one timed here), with defaults of their own.
FLAGS = flags.FLAGS
FLAGS.set_default("sizes", ["1e6"])
FLAGS.set_default("repeats", 301)
flags.DEFINE_list("samplings", ["poisson", "fixed"],
                  "Samplings: poisson (discover's default) and fixed.")

# Issue 37, section 3, "Per call": discover at most 1.3x the engine's run.
TARGET_RATIO = 1.3


def _seconds(function) -> float:
  start = time.perf_counter()
  function()
  return time.perf_counter() - start


def compare(population, sampling: str) -> None:
  """discover against the engine's run, alternating, same seeds."""
  target = triehh.Target(FLAGS.epsilon, sampling=sampling)
  params = triehh.discover(population, target, seed=0).params  # warm
  options = ({} if params.sampling_rate is None
             else {"sampling_rate": params.sampling_rate})

  def engine(seed: int):
    return fast_engine.run(
        population, theta=params.theta, batch_size=params.batch_size,
        rng=np.random.default_rng(seed), num_sub_rounds=params.num_sub_rounds,
        max_num_prefixes=params.max_num_prefixes, schedule=None, **options)

  times = {"discover": [], "run": [], "run+output": []}
  for seed in range(FLAGS.repeats):
    times["discover"].append(_seconds(
        lambda s=seed: triehh.discover(population, target, seed=s)))
    times["run"].append(_seconds(lambda s=seed: engine(s)))
    times["run+output"].append(_seconds(
        lambda s=seed: engine(s).heavy_hitters()))
  med = {name: statistics.median(t) * 1e3 for name, t in times.items()}
  print(f"n={population.num_users:,} {sampling}, warm, medians over "
        f"{FLAGS.repeats}: discover {med['discover']:.3f} ms, engine run "
        f"{med['run']:.3f} ms ({med['discover'] / med['run']:.2f}x; target "
        f"{TARGET_RATIO}x, issue 37 section 3), run + heavy_hitters "
        f"{med['run+output']:.3f} ms "
        f"({med['discover'] / med['run+output']:.2f}x)")


def first_calls(size: int) -> None:
  """The first call on a new population, same n then a new n."""
  for label, n, seed in (("same n", size, 11), ("new n", size + 1, 12)):
    population = scale_benchmark.zipf_word_population(n, 1.0, seed=seed)
    for sampling in FLAGS.samplings:
      target = triehh.Target(FLAGS.epsilon, sampling=sampling)
      first = _seconds(lambda p=population, t=target: triehh.discover(p, t))
      print(f"first discover on a new population ({label}, n={n:,}, "
            f"{sampling}): {first * 1e3:.1f} ms")


def main(argv):
  del argv
  for size in (int(float(v)) for v in FLAGS.sizes):
    population = scale_benchmark.zipf_word_population(size, 1.0).encode()
    fast_engine.prepare(population)
    for sampling in FLAGS.samplings:
      compare(population, sampling)
    first_calls(size)


if __name__ == "__main__":
  app.run(main)
