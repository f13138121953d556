"""Where TrieHH stands in the field: TrieHH (fixed and Poisson sampling),
the noisy trie and central partition selection on the same populations.

  python -m experiments.field --output_dir=results/field
  triehh-field --num_users=1e4,1e5 --count_users= --num_runs=3

The grid (:mod:`reports.field.runs`): the English population at
``--num_users`` (every mechanism at every ``--epsilons``; past 10^6 users
partition selection's thresholding strategies only at
``--side_epsilons``), the English population as word counts at
``--count_users`` (TrieHH and the noisy trie; ``--large_count_users`` at
``--side_epsilons``), SFP at ``--sfp_users`` and IBLT at ``--iblt_users``
(English, ``--side_epsilons``), the noisy trie in TensorFlow Federated at
``--tff_users`` and ``--tff_epsilons``, and, with ``--others``, the paper's
single-word and OOV populations and the Sentiment140 sample (one word and
several words per user) at ``--side_epsilons``; delta = 1/n^2 everywhere.
TrieHH and the noisy trie run ``--num_runs`` seeds (``--seed`` on),
partition selection ``--ps_runs`` runs. The moonshot ratios (noisy trie,
TrieHH Poisson over the best partition selection strategy, words released)
are taken at the largest ``--num_users`` and ``--moonshot_epsilons``.

Cells run in ``--workers`` processes (default: one per CPU, at most
4; :mod:`reports.field.pool`), this one alone writing the records.
Appends each run to ``<output_dir>/results.jsonl`` as it ends, so that a
second invocation with the same ``--output_dir`` runs only what is
missing (two at once on one ``--output_dir`` share its cells as two
sweeps do, each run recorded once; a half-written last line is set aside:
docs/sweeps.md), then writes ``<report_dir>/FIELD.md`` and its figures
(``field-*.png``); both directories default to ``results/field``. Without
the Sentiment140 sample (``--sentiment140_path``, ``$TRIEHH_SENTIMENT140``
or ``../shared/data`` beside the repository) its rows are left out with a
note. The published report: ``--report_dir=docs/results``, about 4
minutes on 2 cores in 2 workers (6 in one process).
"""

from __future__ import annotations

import sys
import time

from absl import flags

from experiments import cli
from experiments import flags as shared_flags  # the flags declared below
from experiments import paths
from reports.field import pool as field_pool
from reports.field import report as field_report
from reports.field import runs as field_runs
from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib

FLAGS = flags.FLAGS
DEFAULT_OUTPUT_DIR = "results/field"
_DEFAULTS = field_runs.Settings()


def _counts(name: str) -> list[str]:
  """The default of a list-of-n flag: the Settings field ``name``."""
  return [f"{n:.0e}" for n in getattr(_DEFAULTS, name)]


def _count_item():
  return shared_flags.count_item(2, population_lib.MAX_USERS)


shared_flags.declare(__name__, "cache_dir", "sentiment140_path")
shared_flags.declare_simulation_seed(__name__)
shared_flags.declare(
    __name__, "output_dir", default=DEFAULT_OUTPUT_DIR,
    help_text="Where results.jsonl is kept and resumed from.")
shared_flags.declare(
    __name__, "report_dir", help_text="Where FIELD.md and its figures go "
    "(default: --output_dir).")
shared_flags.declare(
    __name__, "epsilons", default=[f"{e:g}" for e in _DEFAULTS.epsilons],
    help_text="Target central epsilons of the English populations.")
shared_flags.declare(
    __name__, "num_users", default=_counts("users"),
    parser=shared_flags.ValuesParser(_count_item()),
    help_text="n of the English population (every mechanism), a list.")
shared_flags.declare(
    __name__, "num_runs", default=_DEFAULTS.num_seeds,
    help_text="Seeded runs per cell of TrieHH and the noisy trie.")


def _define_counts(name: str, help_text: str, allow_empty: bool = True):
  """A list-of-n flag whose default is the Settings field of its name."""
  shared_flags.DEFINE_values(name, _counts(name), help_text, _count_item(),
                             allow_empty=allow_empty)


def _define_epsilons(name: str, help_text: str):
  """A list-of-epsilon flag whose default is the Settings field of its
  name."""
  shared_flags.DEFINE_values(
      name, [f"{e:g}" for e in getattr(_DEFAULTS, name)], help_text,
      shared_flags.number_item())


_define_counts("count_users", "n of the English population as word counts "
               "(TrieHH and the noisy trie only); empty: none.")
_define_counts("large_count_users", "More n of the word counts, at "
               "--side_epsilons; empty: none.")
_define_counts("sfp_users", "n of the English population where SFP runs (at "
               "--side_epsilons); empty: nowhere.")
_define_counts("iblt_users", "n of the English population where IBLT runs "
               "(TensorFlow Federated; at --side_epsilons); empty: nowhere.")
_define_counts("tff_users", "n of the English population where the noisy "
               "trie runs in TensorFlow Federated; empty: nowhere.")
_define_epsilons("tff_epsilons",
                 "Epsilons of the noisy trie in TensorFlow Federated.")
_define_epsilons("side_epsilons", "Epsilons of the paper's and Sentiment140 "
                 "populations, and of the thresholding strategies past 10^6 "
                 "users.")
_define_epsilons("moonshot_epsilons", "Epsilons of the moonshot ratios.")
shared_flags.declare(
    __name__, "workers", default=field_pool.default_workers(),
    help_text="Processes running cells (default: one per CPU, at most "
    f"{field_pool.MAX_DEFAULT_WORKERS}); this one alone writes "
    "results.jsonl.")
flags.DEFINE_integer("ps_runs", _DEFAULTS.ps_seeds,
                     "Runs per cell of partition selection.", lower_bound=1)
flags.DEFINE_boolean("others", True, "Run the paper's single-word "
                     "population and the Sentiment140 sample too.")


def settings() -> field_runs.Settings:
  """The grid the flags ask for."""
  epsilons = FLAGS.epsilons
  users = {int(n) for n in FLAGS.num_users}
  for name in ("sfp_users", "iblt_users"):  # (tff_users: their own)
    outside = [n for n in FLAGS[name].value if int(n) not in users]
    if outside and FLAGS[name].present:  # they pick among --num_users':
      # a value given outside them would run nowhere (defaults may)
      raise ValueError(
          f"--{name}: {int(outside[0]):,} is not one of --num_users "
          f"({', '.join(f'{n:,}' for n in sorted(users))}); these runs use "
          "the populations --num_users builds")
  return field_runs.Settings(
      users=tuple(int(n) for n in FLAGS.num_users),
      count_users=tuple(int(n) for n in FLAGS.count_users),
      large_count_users=tuple(int(n) for n in FLAGS.large_count_users),
      sfp_users=tuple(int(n) for n in FLAGS.sfp_users),
      iblt_users=tuple(int(n) for n in FLAGS.iblt_users),
      tff_users=tuple(int(n) for n in FLAGS.tff_users),
      tff_epsilons=tuple(float(e) for e in FLAGS.tff_epsilons),
      epsilons=tuple(float(e) for e in epsilons),
      side_epsilons=tuple(float(e) for e in FLAGS.side_epsilons),
      moonshot_epsilons=tuple(float(e) for e in FLAGS.moonshot_epsilons),
      num_seeds=FLAGS.num_runs, ps_seeds=FLAGS.ps_runs, seed=FLAGS.seed,
      others=FLAGS.others,
      sample_path=shared_flags.sentiment140_sample() if FLAGS.others
      else None)


def main(argv):
  if len(argv) > 1:
    raise ValueError(f"unexpected arguments: {argv[1:]}")
  start = time.perf_counter()
  wanted = settings()
  output_dir = FLAGS.output_dir or DEFAULT_OUTPUT_DIR
  report_dir = FLAGS.report_dir or output_dir
  paths.check_dir("output_dir", output_dir, create=True)
  paths.check_dir("report_dir", report_dir, create=True)
  shared_flags.check_data_paths()  # --cache_dir
  datasets = datasets_lib.DataCache(FLAGS.cache_dir or None)
  plan = field_runs.plan(wanted, datasets)
  left = field_runs.runs_left(plan.cells, output_dir)
  print(f"{left} runs left", flush=True)
  ran = []  # fewer than left when another invocation shares output_dir
  workers = shared_flags.value_or("workers", field_pool.default_workers())
  seconds = field_pool.run(plan, output_dir, workers=workers,
                           log=lambda text: print(text, flush=True), ran=ran)
  command = cli.command_line("experiments.field")
  context = field_report.Context(
      command=command, seconds=time.perf_counter() - start,
      mechanism_seconds=seconds, written=len(ran), workers=workers)
  try:
    path = field_report.write(report_dir, output_dir, wanted, plan, context)
  except OSError as err:  # a full disk: name where it was writing
    raise paths.with_path(err, report_dir) from None
  print(f"{len(ran)} runs run (the others read from {output_dir}/"
        f"{field_runs.RESULTS}); wrote {path} in "
        f"{time.perf_counter() - start:.0f} s")


def run():
  """Entry point."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
