"""Draws per second of the exact discrete samplers.

Times :func:`triehh.core.discrete_noise.discrete_gaussian` and
:func:`~triehh.core.discrete_noise.discrete_laplace` drawing ``--draws``
values at each parameter of ``--sigmas`` (a scale for the Laplace law),
and :func:`~triehh.core.discrete_noise.skellam` (whose cost grows with its
mean) at each mean of ``--means``, the best of ``--repeats`` runs each, and
prints draws per second beside numpy's floating-point ``standard_normal``
(not exact; for scale).

  python -m benchmarks.discrete_noise_benchmark --draws=1000000
"""

from __future__ import annotations

import time

import numpy as np
from absl import app
from absl import flags

from triehh.core import discrete_noise

FLAGS = flags.FLAGS
flags.DEFINE_integer("draws", 1_000_000, "Values drawn per timing.",
                     lower_bound=1)
flags.DEFINE_list("sigmas", ["1", "10", "100", "10000"],
                  "Parameters (sigma, or the Laplace scale) timed.")
flags.DEFINE_list("means", ["0.001", "1", "10", "50"],
                  "Skellam means timed (variance twice the mean).")
flags.DEFINE_integer("repeats", 3, "Timings of each; the best is printed.",
                     lower_bound=1)


def best_seconds(draw, repeats: int) -> float:
  """The least wall time of ``repeats`` calls of ``draw()``."""
  best = float("inf")
  for _ in range(repeats):
    start = time.perf_counter()
    draw()
    best = min(best, time.perf_counter() - start)
  return best


def main(argv: list[str]) -> None:
  del argv
  n, rng = FLAGS.draws, np.random.default_rng(0)
  print(f"{n:,} draws per timing, best of {FLAGS.repeats}")
  print(f"{'law':<22}{'parameter':>10}{'seconds':>10}{'draws/s':>14}")
  laws = (("discrete Gaussian", discrete_noise.discrete_gaussian),
          ("discrete Laplace", discrete_noise.discrete_laplace))
  for text in FLAGS.sigmas:
    value = float(text)
    for name, sampler in laws:
      seconds = best_seconds(lambda s=sampler: s(rng, value, n),
                             FLAGS.repeats)
      print(f"{name:<22}{value:>10g}{seconds:>10.3f}{n / seconds:>14,.0f}")
  for text in FLAGS.means:
    value = float(text)
    seconds = best_seconds(
        lambda v=value: discrete_noise.skellam(rng, v, n), FLAGS.repeats)
    print(f"{'Skellam (mean)':<22}{value:>10g}{seconds:>10.3f}"
          f"{n / seconds:>14,.0f}")
  seconds = best_seconds(lambda: rng.standard_normal(n), FLAGS.repeats)
  print(f"{'float normal (inexact)':<22}{'1':>10}{seconds:>10.3f}"
        f"{n / seconds:>14,.0f}")


if __name__ == "__main__":
  app.run(main)
