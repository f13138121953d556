"""Prints the paper's theory as tables: Table 1 and Figure 2's data.

Table 1: theta and gamma (Corollary 1) for a target epsilon, with
delta <= 1/(300 n) and delta <= 1/n^2, for several n. Figure 2: the minimum
population n at which a sequence of frequency f is discovered with
worst-case probability >= p (Proposition 2), for several epsilon.

``--max_length`` is L in characters, as in every driver: the trie has
L + 1 levels (the end symbol), so the default 10 gives the 11 levels that
``triehh.discover`` runs and ``triehh.min_population`` assumes; the paper's
Table 1 (its L = 10 levels) is ``--max_length=9``.

  python -m experiments.theory_tables --epsilon=2 --max_length=9
  triehh-theory-tables --epsilons=1,4 --populations=1e4,1e6

Without ``--epsilon``: epsilon 2 (Table 1); without ``--epsilons``: 1, 2, 4
and 8 (the defaults its ``--help`` shows).

Errors print one line ``error: ...`` and exit 1.
"""

from __future__ import annotations

import sys

from absl import app
from absl import flags

from experiments import cli
from experiments import flags as shared_flags
from triehh.theory import privacy
from triehh.theory import utility

FLAGS = flags.FLAGS
MAX_POPULATION = 10**12
# The defaults of --epsilon and --epsilons here.
EPSILON = 2.0
EPSILONS = ["1", "2", "4", "8"]
shared_flags.declare(__name__, "max_length")
shared_flags.declare(__name__, "epsilon", default=EPSILON,
                     help_text="Target central epsilon of Table 1.")
shared_flags.declare(__name__, "epsilons", default=EPSILONS,
                     help_text="Target central epsilons of the "
                     "minimum-population table.")
shared_flags.DEFINE_values(
    "populations", ["1e4", "1e5", "1e6", "1e7"],
    "Values of n (whole numbers of users, 1 to 1e12), e.g. 1e4,1e6.",
    shared_flags.count_item(1, MAX_POPULATION))
shared_flags.DEFINE_values(
    "frequencies", ["1e-2", "3e-3", "1e-3", "3e-4", "1e-4"],
    "Sequence frequencies for the minimum-population table, each in (0, 1].",
    shared_flags.number_item(0, 1, high_included=True))
flags.DEFINE_float("probability", 0.9,
                   "Target worst-case discovery rate, in (0, 1).")
flags.register_validator(
    "probability", lambda p: 0 < p < 1,
    "--probability must be in the open interval (0, 1)")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  length = FLAGS.max_length
  levels = privacy.levels_for_length(length)
  lengths = f"L = {length} characters, {levels} levels"
  epsilon = FLAGS.epsilon
  print(f"Table 1: epsilon = {epsilon}, {lengths}")
  print(f"{'n':>10} | {'theta':>5} {'gamma':>8} (delta<=1/300n) | "
        f"{'theta':>5} {'gamma':>8} (delta<=1/n^2)")
  for n in FLAGS.populations:
    cells = []
    for delta in (1 / (300 * n), 1 / n**2):
      try:
        cal = privacy.calibrate(n, levels, epsilon, delta)
        cells.append(f"{cal.theta:>5} {cal.gamma_unrounded:>8.4f}")
      except ValueError:
        cells.append(f"{'-':>5} {'-':>8}")
    print(f"{n:>10,} | {cells[0]}                 | {cells[1]}")
  print()
  print(f"Minimum n for worst-case discovery rate >= {FLAGS.probability} "
        f"(delta = 1/n^2, {lengths})")
  epsilons = [float(e) for e in FLAGS.epsilons]
  print(f"{'frequency':>10} | " + " ".join(f"{'eps=' + str(e):>14}"
                                           for e in epsilons))
  for f in FLAGS.frequencies:
    row = [utility.min_population(f, e, num_levels=levels,
                                  probability=FLAGS.probability)
           for e in epsilons]
    print(f"{f:>10.0e} | " + " ".join(f"{n:>14,}" for n in row))


def run():
  """Console-script entry point (``triehh-theory-tables``)."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
