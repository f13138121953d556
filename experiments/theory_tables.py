"""Prints the paper's theory as tables: Table 1 and Figure 2's data.

Table 1: theta and gamma (Corollary 1) for a target epsilon, with
delta <= 1/(300 n) and delta <= 1/n^2, for several n. Figure 2: the minimum
population n at which a sequence of frequency f is discovered with
worst-case probability >= p (Proposition 2), for several epsilon.

  python -m experiments.theory_tables --epsilon=2 --max_length=10
"""

from __future__ import annotations

from absl import app
from absl import flags

from triehh.theory import privacy
from triehh.theory import utility

FLAGS = flags.FLAGS
flags.DEFINE_float("epsilon", 2.0, "Target epsilon of the Table 1 block.")
flags.DEFINE_integer("max_length", 10, "L of the theorem (sequence length).")
flags.DEFINE_list("populations", ["1e4", "1e5", "1e6", "1e7"], "Values of n.")
flags.DEFINE_list("frequencies", ["1e-2", "3e-3", "1e-3", "3e-4", "1e-4"],
                  "Sequence frequencies for the minimum-population table.")
flags.DEFINE_list("epsilons", ["1", "2", "4", "8"],
                  "Epsilons for the minimum-population table.")
flags.DEFINE_float("probability", 0.9, "Target worst-case discovery rate.")


def main(argv):
  del argv
  length = FLAGS.max_length
  print(f"Table 1: epsilon = {FLAGS.epsilon}, L = {length}")
  print(f"{'n':>10} | {'theta':>5} {'gamma':>8} (delta<=1/300n) | "
        f"{'theta':>5} {'gamma':>8} (delta<=1/n^2)")
  for text in FLAGS.populations:
    n = int(float(text))
    cells = []
    for delta in (1 / (300 * n), 1 / n**2):
      try:
        cal = privacy.calibrate(n, length, FLAGS.epsilon, delta)
        cells.append(f"{cal.theta:>5} {cal.gamma:>8.4f}")
      except ValueError:
        cells.append(f"{'-':>5} {'-':>8}")
    print(f"{n:>10,} | {cells[0]}                 | {cells[1]}")
  print()
  print(f"Minimum n for worst-case discovery rate >= {FLAGS.probability} "
        f"(delta = 1/n^2, L = {length})")
  epsilons = [float(e) for e in FLAGS.epsilons]
  print(f"{'frequency':>10} | " + " ".join(f"{'eps=' + str(e):>14}"
                                           for e in epsilons))
  for text in FLAGS.frequencies:
    f = float(text)
    row = [utility.min_population(f, e, max_length=length,
                                  probability=FLAGS.probability)
           for e in epsilons]
    print(f"{f:>10.0e} | " + " ".join(f"{n:>14,}" for n in row))


if __name__ == "__main__":
  app.run(main)
