"""What the grouping server learns from a pseudonym's multiplicity, when
the other server hides it with copies: the epsilon of that view alone.

A two-server design of the pseudonym kind (``docs/two-servers.md``, *Why
one step*): server 1 blinds every client's word into a pseudonym and
shuffles; server 2 groups equal pseudonyms, so it sees each group's size.
Server 1 cannot add noise to a group it cannot see; it can copy records
(each record sent ``K = 1 + G`` times, ``G`` geometric of mean ``mu``, the
copies indistinguishable). A released word's group then shows server 2 a
multiplicity ``m = N + NB(N)`` for its N users against ``N + 1 + NB(N +
1)`` for a neighbour with one user more (``NB(k)``: the sum of k such
``G``). This prints, for each N and mu, the least epsilon at which that
pair of laws meets delta, both directions, their pmfs summed exactly
(scipy's negative binomial): what such a design spends, at least, on the
multiplicity of each word it releases, before the counts' own noise.
``inf``: no epsilon (a multiplicity of exactly N, which only the smaller
group shows, is more likely than delta).

  python -m benchmarks.pseudonym_multiplicity --users=10,30,100
"""

from __future__ import annotations

import math

import numpy as np
from absl import app
from absl import flags
from scipy import stats

FLAGS = flags.FLAGS
flags.DEFINE_list("users", ["10", "30", "100"], "N: a group's users.")
flags.DEFINE_list("copies", ["0.5", "1", "3", "10", "30", "100"],
                  "mu: the mean extra copies of a record.")
flags.DEFINE_float("delta", 1e-12, "delta.", lower_bound=0.0)


def multiplicity_pmfs(users: int, copies: float
                      ) -> tuple[np.ndarray, np.ndarray]:
  """The pmfs of the multiplicity of a group of ``users`` and of ``users
  + 1`` records, each copied ``1 + Geometric(mean copies)`` times, on
  ``0 .. top`` (the mass beyond it below 1e-30 for both)."""
  p = 1.0 / (1.0 + copies)
  top = users + 1 + int(stats.nbinom.isf(1e-30, users + 1, p)) + 1
  m = np.arange(top + 1)
  smaller = np.where(m >= users, stats.nbinom.pmf(m - users, users, p), 0.0)
  larger = np.where(m >= users + 1,
                    stats.nbinom.pmf(m - users - 1, users + 1, p), 0.0)
  return smaller, larger


def epsilon(users: int, copies: float, delta: float) -> float:
  """The least epsilon (to 1e-6) at which both directions of the pair
  meet ``delta``; inf if none."""
  worst = 0.0
  for first, second in zip(multiplicity_pmfs(users, copies),
                           reversed(multiplicity_pmfs(users, copies))):

    def excess(eps: float, first=first, second=second) -> float:
      return float(np.maximum(first - math.exp(eps) * second, 0.0).sum())

    if excess(700.0) > delta:
      return math.inf
    lo, hi = 0.0, 700.0
    while hi - lo > 1e-6:
      mid = 0.5 * (lo + hi)
      lo, hi = (lo, mid) if excess(mid) <= delta else (mid, hi)
    worst = max(worst, hi)
  return worst


def main(argv):
  del argv
  copies = [float(c) for c in FLAGS.copies]
  print(f"| users N | {' | '.join(f'mu = {c:g}' for c in copies)} |")
  print("|---" * (len(copies) + 1) + "|")
  for users in (int(u) for u in FLAGS.users):
    cells = [epsilon(users, c, FLAGS.delta) for c in copies]
    print(f"| {users} | "
          + " | ".join("inf" if math.isinf(e) else f"{e:.2f}"
                       for e in cells) + " |", flush=True)


if __name__ == "__main__":
  app.run(main)
