"""Prints the paper's theory as tables: Table 1 and Figure 2's data.

Table 1: theta and gamma (Corollary 1) for a target epsilon, with
delta <= 1/(300 n) and delta <= 1/n^2, for several n. Figure 2: the minimum
population n at which a sequence of frequency f is discovered with
worst-case probability >= p (Proposition 2), for several epsilon.

  python -m experiments.theory_tables --epsilon=2 --max_length=10
  triehh-theory-tables --epsilon=2 --max_length=10

Without ``--epsilon``: epsilon 2 (Table 1); without ``--epsilons``: 1, 2, 4
and 8.

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
for _name in ("epsilon", "max_length", "epsilons"):
  flags.declare_key_flag(_name)
flags.DEFINE_list("populations", ["1e4", "1e5", "1e6", "1e7"],
                  "Values of n (whole numbers of users, 1 to 1e12).")
flags.DEFINE_list("frequencies", ["1e-2", "3e-3", "1e-3", "3e-4", "1e-4"],
                  "Sequence frequencies for the minimum-population table, "
                  "each in (0, 1].")
flags.DEFINE_float("probability", 0.9,
                   "Target worst-case discovery rate, in (0, 1).")


def _float(text: str) -> float | None:
  try:
    return float(text)
  except ValueError:
    return None


def _all(values, ok) -> bool:
  numbers = [_float(v) for v in values]
  return bool(numbers) and all(x is not None and ok(x) for x in numbers)


flags.register_validator(
    "populations",
    lambda v: _all(v, lambda x: 1 <= x <= MAX_POPULATION and x == int(x)),
    "--populations must be whole numbers of users from 1 to 1e12, comma "
    "separated, e.g. --populations=1e4,1e6")
flags.register_validator(
    "frequencies", lambda v: _all(v, lambda x: 0 < x <= 1),
    "--frequencies must be numbers in (0, 1], comma separated, e.g. "
    "--frequencies=1e-2,1e-3")
flags.register_validator(
    "probability", lambda p: 0 < p < 1,
    "--probability must be in the open interval (0, 1)")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  length = FLAGS.max_length
  epsilon = shared_flags.value_or("epsilon", EPSILON)
  print(f"Table 1: epsilon = {epsilon}, L = {length}")
  print(f"{'n':>10} | {'theta':>5} {'gamma':>8} (delta<=1/300n) | "
        f"{'theta':>5} {'gamma':>8} (delta<=1/n^2)")
  for text in FLAGS.populations:
    n = int(float(text))
    cells = []
    for delta in (1 / (300 * n), 1 / n**2):
      try:
        cal = privacy.calibrate(n, length, epsilon, delta)
        cells.append(f"{cal.theta:>5} {cal.gamma_unrounded:>8.4f}")
      except ValueError:
        cells.append(f"{'-':>5} {'-':>8}")
    print(f"{n:>10,} | {cells[0]}                 | {cells[1]}")
  print()
  print(f"Minimum n for worst-case discovery rate >= {FLAGS.probability} "
        f"(delta = 1/n^2, L = {length})")
  epsilons = [float(e) for e in shared_flags.value_or("epsilons", EPSILONS)]
  print(f"{'frequency':>10} | " + " ".join(f"{'eps=' + str(e):>14}"
                                           for e in epsilons))
  for text in FLAGS.frequencies:
    f = float(text)
    row = [utility.min_population(f, e, num_levels=length,
                                  probability=FLAGS.probability)
           for e in epsilons]
    print(f"{f:>10.0e} | " + " ".join(f"{n:>14,}" for n in row))


def run():
  """Console-script entry point (``triehh-theory-tables``)."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
