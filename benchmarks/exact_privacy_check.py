"""The privacy claims of TrieHH checked against exact output laws.

Draws ``--num_populations`` small populations
(:func:`checks.exact_validation.case_for`: even numbers Poisson
sampling, odd numbers fixed-size sampling inside Theorem 1's conditions;
the families of :data:`~checks.exact_validation.FAMILIES` take
turns), and for every kind of user of each population that votes, as the
differing user, compares the exact hockey-stick divergences of the
neighbouring populations (:mod:`triehh.theory.exact`, float64) with the
claims:

* Poisson: :func:`triehh.theory.poisson.delta_for_epsilon` at epsilon 0,
  0.1, 0.3, 1 and 2, and the delta given to
  :func:`~triehh.theory.poisson.epsilon_for_delta` (0.1, 0.01, 0.001) at the
  epsilon it returns; both directions, adjacency "remove" (D' without the
  user) and "empty" (the user's word replaced by the empty word). A pair is
  (population, differing user, adjacency).
* Theorem 1: its delta (``L * delta_1`` for several words per user picked
  per round) at its epsilon, in the direction it proves (D holding the
  word, D' the empty word); the reverse direction is not claimed, and the
  pairs where it exceeds delta are counted. A pair is (population,
  differing user).

Prints, per accountant and family, the populations and pairs checked and
the largest exact/claimed ratio (a claimed bound holds iff it is <= 1, up
to a 1e-9 relative float tolerance), the worst cases, and the timings.
Exits with status 1 if a claimed bound is violated (each violation is
printed).

  python -m benchmarks.exact_privacy_check --num_populations=10000
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
from checks import exact_validation as ev

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_populations", 10_000, "Populations to draw.")
flags.DEFINE_integer("seed", 0, "Seed of the population sequence.")
flags.DEFINE_integer("num_workers", None,
                     "Worker processes (default: up to 2 cores).")
flags.DEFINE_integer("max_differing", None,
                     "Differing users checked per population (default: one "
                     "per kind of user that votes).")
flags.DEFINE_integer("chunk", 50, "Populations per work unit.")


@dataclasses.dataclass
class Tally:
  """Per (accountant, family)."""

  populations: int = 0
  pairs: int = 0
  records: int = 0
  nonzero: int = 0  # records with a divergence above 1e-12
  seconds: float = 0.0
  worst: Worst = dataclasses.field(default_factory=Worst)
  worst_side: Worst = dataclasses.field(default_factory=Worst)
  by_source: dict = dataclasses.field(
      default_factory=lambda: collections.defaultdict(Worst))
  reverse_pairs: int = 0  # Theorem 1: pairs whose reverse exceeds delta
  worst_reverse: Worst = dataclasses.field(default_factory=Worst)
  violations: list = dataclasses.field(default_factory=list)

  def merge(self, other: "Tally") -> None:
    for name in ("populations", "pairs", "records", "nonzero", "seconds",
                 "reverse_pairs"):
      setattr(self, name, getattr(self, name) + getattr(other, name))
    self.worst.merge(other.worst)
    self.worst_side.merge(other.worst_side)
    self.worst_reverse.merge(other.worst_reverse)
    for source, worst in other.by_source.items():
      self.by_source[source].merge(worst)
    self.violations += other.violations


def run_chunk(args: tuple[int, int, int, int | None]
              ) -> dict[tuple[str, str], Tally]:
  """Checks populations ``start .. stop - 1`` of the seed's sequence."""
  seed, start, stop, max_differing = args
  tallies: dict[tuple[str, str], Tally] = collections.defaultdict(Tally)
  for number in range(start, stop):
    began = time.perf_counter()
    case = ev.case_for(seed, number)
    tally = tallies[(case.accountant, case.family)]
    tally.populations += 1
    for index in case.differing_indices(max_differing):
      pair = case.with_index(index)
      records = ev.check(pair)
      tally.records += len(records)
      tally.pairs += len({r.adjacency for r in records})
      exceeded = set()
      for record in records:
        tally.nonzero += max(record.forward, record.reverse) > 1e-12
        tally.worst.offer(record.ratio, pair, record)
        tally.by_source[checks.point(record)].offer(record.ratio, pair, record)
        if record.side_ratio is not None:
          tally.worst_side.offer(record.side_ratio, pair, record)
        if record.violated:
          tally.violations.append((number, pair.describe(), record))
        if not record.claims_reverse:
          tally.worst_reverse.offer(record.reverse_ratio, pair, record)
          if record.reverse_exceeds:
            exceeded.add(record.adjacency)
      tally.reverse_pairs += len(exceeded)
    tally.seconds += time.perf_counter() - began
  return dict(tallies)


def show(record: ev.Record) -> str:
  return (f"adjacency={record.adjacency}, epsilon={record.epsilon:.6g} "
          f"({record.source}): forward={record.forward:.6g}, "
          f"reverse={record.reverse:.6g}, claimed delta={record.claimed:.6g}")


def _print_poisson(rows: list[tuple[str, Tally]], total: Tally) -> None:
  """The Poisson accountant's table, worst cases and worst per epsilon."""
  print("Poisson accountant (delta_for_epsilon at epsilon "
        f"{', '.join(f'{e:g}' for e in ev.POISSON_EPSILONS)}; "
        "epsilon_for_delta at delta "
        f"{', '.join(f'{d:g}' for d in ev.POISSON_DELTAS)}), both "
        "directions, adjacency remove and empty")
  print(f"  {'family':<17s}{'populations':>12s}{'pairs':>8s}"
        f"{'records':>9s}{'nonzero':>9s}{'max ratio':>11s}"
        f"{'max/side':>10s}{'seconds':>9s}")
  for family, t in rows + [("all", total)]:
    print(f"  {family:<17s}{t.populations:>12d}{t.pairs:>8d}"
          f"{t.records:>9d}{t.nonzero:>9d}{t.worst.ratio:>11.6f}"
          f"{t.worst_side.ratio:>10.6f}{t.seconds:>9.1f}")
  print("  (max/side: exact over the accountant's own delta of the same "
        "direction, its dominating pair's)")
  print(f"  largest exact/claimed: {total.worst.ratio:.6f} "
        f"({'<= 1: holds' if total.worst.ratio <= 1 + 1e-9 else 'VIOLATED'})")
  print(f"    {total.worst.case}")
  print(f"    {show(total.worst.record)}")
  print("  largest exact/claimed at each epsilon:")
  for point in sorted(total.by_source, key=checks.point_order):
    worst = total.by_source[point]
    print(f"    {point:<28s}{worst.ratio:9.6f}   {worst.case}")
  side = total.worst_side
  print(f"  largest exact/same-direction bound: {side.ratio:.6f}")
  print(f"    {side.case}")
  print(f"    {show(side.record)}; forward bound "
        f"{side.record.forward_bound:.6g}, reverse bound "
        f"{side.record.reverse_bound:.6g}")


def _print_theorem1(rows: list[tuple[str, Tally]], total: Tally) -> None:
  """Theorem 1's table: the proven direction, then the reverse one."""
  print("Theorem 1 (fixed-size sampling, adjacency empty, at Theorem 1's "
        "epsilon; delta_1, or L * delta_1 for several words picked per "
        "round)")
  print(f"  {'family':<17s}{'populations':>12s}{'pairs':>8s}"
        f"{'nonzero':>9s}{'max fwd ratio':>15s}{'rev > delta':>13s}"
        f"{'max rev ratio':>15s}{'seconds':>9s}")
  for family, t in rows + [("all", total)]:
    print(f"  {family:<17s}{t.populations:>12d}{t.pairs:>8d}"
          f"{t.nonzero:>9d}{t.worst.ratio:>15.6f}{t.reverse_pairs:>13d}"
          f"{t.worst_reverse.ratio:>15.4f}{t.seconds:>9.1f}")
  ok = total.worst.ratio <= 1 + 1e-9
  print(f"  proven direction, largest exact/claimed: "
        f"{total.worst.ratio:.6f} ({'<= 1: holds' if ok else 'VIOLATED'})")
  print(f"    {total.worst.case}")
  print(f"    {show(total.worst.record)}")
  share = total.reverse_pairs / total.pairs if total.pairs else 0.0
  print(f"  reverse direction (not claimed): {total.reverse_pairs} of "
        f"{total.pairs} pairs ({100 * share:.2f} %) exceed delta; worst "
        f"reverse/delta = {total.worst_reverse.ratio:.4f}")
  print(f"    {total.worst_reverse.case}")
  print(f"    {show(total.worst_reverse.record)}")


def main(argv):
  del argv
  workers = checks.default_workers(FLAGS.num_workers)
  n = FLAGS.num_populations
  work = checks.chunks(FLAGS.seed, n, FLAGS.chunk, FLAGS.max_differing)
  print(f"{n} populations (seed {FLAGS.seed}), {workers} worker(s); float64 "
        f"laws, a bound holds when exact <= claimed * (1 + "
        f"{ev.RELATIVE_TOLERANCE:g}) + {ev.ABSOLUTE_TOLERANCE:g}")
  began = time.perf_counter()
  tallies = checks.merged_tallies(run_chunk, work, workers, Tally)
  wall = time.perf_counter() - began

  violations = []
  for accountant in ev.ACCOUNTANTS:
    rows = [(f, tallies[(accountant, f)]) for f in ev.FAMILIES
            if (accountant, f) in tallies]
    total = Tally()
    for _, tally in rows:
      total.merge(tally)
    violations += sorted(total.violations, key=lambda v: v[0])
    print()
    if accountant == ev.POISSON:
      _print_poisson(rows, total)
    else:
      _print_theorem1(rows, total)

  print()
  print(f"wall time {wall:.1f} s; checking time summed over workers "
        f"{sum(t.seconds for t in tallies.values()):.1f} s")
  if violations:
    print(f"\n{len(violations)} CLAIMED BOUND(S) VIOLATED:")
    for number, case, record in violations[:50]:
      print(f"  population {number}: {case}")
      print(f"    {show(record)}; ratio {record.ratio:.9g}")
    sys.exit(1)
  print("no claimed bound is violated")


if __name__ == "__main__":
  app.run(main)
