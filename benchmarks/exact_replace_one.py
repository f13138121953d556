"""The Poisson accountant's replace-one claim checked against exact laws.

Draws ``--num_populations`` Poisson-sampled populations (the even numbers
of :func:`checks.exact_validation.case_for`'s sequence; the families
of :data:`~checks.exact_validation.FAMILIES` take turns), each with
the differing user's replacement drawn to be hard
(:func:`~checks.exact_validation._replacement`). For every kind of
user that votes, as the differing user (its words replaced by the case's
replacement, or by the first differing user's words where it holds the
replacement already), compares the exact hockey-stick divergences of D and
D' (both directions, float64 laws) with
:func:`triehh.theory.poisson.delta_for_epsilon` for ``REPLACE_ONE`` at
epsilon 0, 0.1, 0.3, 1 and 2, and with the delta given to
:func:`~triehh.theory.poisson.epsilon_for_delta` (0.1, 0.01, 0.001) at the
epsilon it returns. A check is one (pair, epsilon).

Prints the populations, pairs and checks, per family and in all; the
largest exact/claimed ratio (the claim holds iff it is <= 1, up to the
module's float tolerance) and the case achieving it; the largest ratio at
each epsilon; and how many checks exceed the add/remove claim at the same
epsilon (pairs only the replace-one product covers). Exits with status 1
if the replace-one claim is violated (each violation is printed).

  python -m benchmarks.exact_replace_one --num_populations=10000
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import time

from absl import app
from absl import flags

from benchmarks import exact_checks as checks
from benchmarks.exact_checks import Worst
from triehh.theory import exact
from checks import exact_validation as ev

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_populations", 10_000,
                     "Poisson populations to draw.")
flags.DEFINE_integer("seed", 0, "Seed of the population sequence.")
flags.DEFINE_integer("num_workers", None,
                     "Worker processes (default: up to 2 cores).")
flags.DEFINE_integer("max_differing", None,
                     "Differing users checked per population (default: one "
                     "per kind of user that votes).")
flags.DEFINE_integer("chunk", 50, "Populations per work unit.")


@dataclasses.dataclass
class Tally:
  """Per family."""

  populations: int = 0
  pairs: int = 0
  checks: int = 0
  nonzero: int = 0  # checks with a divergence above 1e-12
  over_add_remove: int = 0  # checks above the add/remove claim
  pairs_over_add_remove: int = 0
  seconds: float = 0.0
  worst: Worst = dataclasses.field(default_factory=Worst)
  worst_side: Worst = dataclasses.field(default_factory=Worst)
  worst_add_remove: Worst = dataclasses.field(default_factory=Worst)
  by_point: dict = dataclasses.field(
      default_factory=lambda: collections.defaultdict(Worst))
  violations: list = dataclasses.field(default_factory=list)

  def merge(self, other: "Tally") -> None:
    for name in ("populations", "pairs", "checks", "nonzero",
                 "over_add_remove", "pairs_over_add_remove", "seconds"):
      setattr(self, name, getattr(self, name) + getattr(other, name))
    self.worst.merge(other.worst)
    self.worst_side.merge(other.worst_side)
    self.worst_add_remove.merge(other.worst_add_remove)
    for point, worst in other.by_point.items():
      self.by_point[point].merge(worst)
    self.violations += other.violations


def run_chunk(args: tuple[int, int, int, int | None]) -> dict[str, Tally]:
  """Checks Poisson populations ``start .. stop - 1`` (case numbers
  ``2 * start ..``) of the seed's sequence."""
  seed, start, stop, max_differing = args
  tallies: dict[str, Tally] = collections.defaultdict(Tally)
  for population in range(start, stop):
    began = time.perf_counter()
    case = ev.case_for(seed, 2 * population)
    tally = tallies[case.family]
    tally.populations += 1
    for index in case.differing_indices(max_differing):
      pair = case.with_index(index)
      records = ev.check_poisson(pair, adjacencies=(exact.REPLACE,))
      tally.pairs += 1
      tally.checks += len(records)
      tally.pairs_over_add_remove += any(r.exceeds_add_remove
                                         for r in records)
      for record in records:
        tally.nonzero += max(record.forward, record.reverse) > 1e-12
        tally.over_add_remove += record.exceeds_add_remove
        tally.worst.offer(record.ratio, pair, record)
        tally.worst_side.offer(record.side_ratio, pair, record)
        tally.worst_add_remove.offer(record.add_remove_ratio, pair, record)
        tally.by_point[checks.point(record)].offer(record.ratio, pair, record)
        if record.violated:
          tally.violations.append((2 * population, pair.describe(), record))
    tally.seconds += time.perf_counter() - began
  return dict(tallies)


def show(record: ev.Record) -> str:
  return (f"epsilon={record.epsilon:.6g} ({record.source}): "
          f"forward={record.forward:.6g}, reverse={record.reverse:.6g}, "
          f"replace-one claim={record.claimed:.6g}, add/remove claim="
          f"{record.add_remove_claimed:.6g}")


def _print(rows: list[tuple[str, Tally]], total: Tally) -> None:
  """The table, the worst cases and the worst per epsilon."""
  print(f"  {'family':<17s}{'populations':>12s}{'pairs':>8s}{'checks':>8s}"
        f"{'nonzero':>9s}{'max ratio':>11s}{'max/side':>10s}"
        f"{'> a/r':>7s}{'max/(a/r)':>11s}{'seconds':>9s}")
  for family, t in rows + [("all", total)]:
    print(f"  {family:<17s}{t.populations:>12d}{t.pairs:>8d}{t.checks:>8d}"
          f"{t.nonzero:>9d}{t.worst.ratio:>11.6f}{t.worst_side.ratio:>10.6f}"
          f"{t.over_add_remove:>7d}{t.worst_add_remove.ratio:>11.6f}"
          f"{t.seconds:>9.1f}")
  print("  (max/side: exact over the accountant's own delta of the same "
        "direction; > a/r: checks above the add/remove claim at the same "
        "epsilon; max/(a/r): the largest exact over it)")
  holds = total.worst.ratio <= 1 + ev.RELATIVE_TOLERANCE
  print(f"  largest exact/claimed: {total.worst.ratio:.6f} "
        f"({'<= 1: holds' if holds else 'VIOLATED'})")
  print(f"    {total.worst.case}")
  print(f"    {show(total.worst.record)}")
  print("  largest exact/claimed at each epsilon:")
  for point in sorted(total.by_point, key=checks.point_order):
    worst = total.by_point[point]
    print(f"    {point:<28s}{worst.ratio:9.6f}   {worst.case}")
  print(f"  above the add/remove claim at the same epsilon: "
        f"{total.over_add_remove} of {total.checks} checks, "
        f"{total.pairs_over_add_remove} of {total.pairs} pairs; largest "
        f"exact/(add/remove claim): {total.worst_add_remove.ratio:.6f}")
  print(f"    {total.worst_add_remove.case}")
  print(f"    {show(total.worst_add_remove.record)}")


def main(argv):
  del argv
  workers = checks.default_workers(FLAGS.num_workers)
  n = FLAGS.num_populations
  work = checks.chunks(FLAGS.seed, n, FLAGS.chunk, FLAGS.max_differing)
  print(f"{n} Poisson populations (seed {FLAGS.seed}, case numbers 0, 2, "
        f"..., {2 * (n - 1)}), {workers} worker(s); adjacency replace-one "
        f"against REPLACE_ONE's delta_for_epsilon at epsilon "
        f"{', '.join(f'{e:g}' for e in ev.POISSON_EPSILONS)} and "
        f"epsilon_for_delta at delta "
        f"{', '.join(f'{d:g}' for d in ev.POISSON_DELTAS)}, both "
        f"directions; float64 laws, a bound holds when exact <= claimed * "
        f"(1 + {ev.RELATIVE_TOLERANCE:g}) + {ev.ABSOLUTE_TOLERANCE:g}")
  began = time.perf_counter()
  tallies = checks.merged_tallies(run_chunk, work, workers, Tally)
  wall = time.perf_counter() - began
  rows = [(f, tallies[f]) for f in ev.FAMILIES if f in tallies]
  total = Tally()
  for _, tally in rows:
    total.merge(tally)
  print()
  _print(rows, total)
  print()
  print(f"wall time {wall:.1f} s; checking time summed over workers "
        f"{total.seconds:.1f} s")
  if total.violations:
    violations = sorted(total.violations, key=lambda v: v[0])
    print(f"\n{len(violations)} REPLACE-ONE CLAIM(S) VIOLATED:")
    for number, case, record in violations[:50]:
      print(f"  case {number}: {case}")
      print(f"    {show(record)}; ratio {record.ratio:.9g}")
    sys.exit(1)
  print("the replace-one claim is not violated")


if __name__ == "__main__":
  app.run(main)
