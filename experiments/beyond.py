"""Beyond the paper: TFF's IBLT, repeated passes with a deny list, users
who are not always online, and protected counts, with their guarantees.

  python -m experiments.beyond --output_dir=results/beyond
  triehh-beyond --parts=passes,availability --num_runs=3

Appends each run's record to ``<output_dir>/results.jsonl`` as it ends
(:mod:`reports.beyond.runs`), so that a second invocation with the
same ``--output_dir`` skips the runs recorded (by config and seed), then
writes ``<report_dir>/BEYOND.md`` and its figures (``beyond-*.png``) from
the records (:mod:`reports.beyond.report`); both directories
default to ``results/beyond``. Every flag, file and directory is checked
before the first run:

(a) TFF's IBLT heavy hitters (:mod:`triehh.baselines.iblt`) next to TrieHH
    at epsilon 1 and 4 (delta = 1/n^2) on the Sentiment140 sample (one word
    per user) and the default data (its subsample of
    ``--iblt_default_users`` users, where one IBLT round fits in memory):
    IBLT runs one round on TrieHH's first-round users (the same seed, the
    same draw) with ``k_anonymity = theta``. Utility (F1@K with IBLT's
    truncated outputs as false positives), bytes and time per client (the
    TFF engine for TrieHH), and the privacy each gives.
(b) recall@10/50/100 vs the number of passes (:mod:`triehh.discovery.passes`) at a
    total epsilon ``--total_epsilon``, on the default data and the
    Sentiment140 sample (several words per user: a denied user picks among
    its other words).
(c) recall@K and the achieved epsilon vs the fraction of users online
    (:mod:`triehh.discovery.availability`) on the default data, theta and m
    calibrated to the online count and to n.
(d) protected counts (``triehh.discover(..., counts=True)``): the median
    relative error of the top-10/50/100 counts and their intervals'
    coverage vs epsilon (``--counts_epsilons``) and the budget split
    (``--counts_shares``) on the default data, the paper-calibrated
    single-word population and the Sentiment140 sample, next to SFP's
    count-mean-sketch estimates and IBLT's exact counts
    (:mod:`reports.beyond.counts`; ``--counts_runs``,
    ``--counts_sfp_runs``, ``--counts_iblt_runs`` seeds).

Every point of (a)-(c) is ``--num_runs`` seeded runs (seeds ``--seed``
on), shown as mean ± 95% Student-t interval. Without the Sentiment140
sample (``--sentiment140_path``, ``$TRIEHH_SENTIMENT140`` or
``../shared/data`` beside the repository) its parts are skipped with a
note (a ``--sentiment140_path`` that cannot be read is an error);
``--iblt_runs=0`` skips (a) (it needs TensorFlow Federated).
"""

from __future__ import annotations

import math
import sys
import time

from absl import flags

from experiments import cli
from experiments import flags as shared_flags  # the flags declared below
from experiments import paths
from reports.beyond import report as beyond_report
from reports.beyond import runs as beyond_runs
from triehh.data import datasets as datasets_lib
from triehh.data import synthetic
from triehh.runs import records as records_lib

FLAGS = flags.FLAGS
DEFAULT_OUTPUT_DIR = "results/beyond"
shared_flags.declare(__name__, "cache_dir", "sentiment140_path")
shared_flags.declare_simulation_seed(__name__)
shared_flags.declare(
    __name__, "output_dir", default=DEFAULT_OUTPUT_DIR,
    help_text="Where results.jsonl is kept and resumed from.")
shared_flags.declare(
    __name__, "report_dir", help_text="Where BEYOND.md and its figures go "
    "(default: --output_dir).")
shared_flags.declare(
    __name__, "num_runs", default=10, help_text="Seeded runs per point of "
    "(b) and (c), and TrieHH's runs per point of (a).")
shared_flags.DEFINE_count("default_users", synthetic.DEFAULT_NUM_USERS,
                          "Users of the default data (b, c, d).",
                          lower_bound=100)
shared_flags.DEFINE_count("iblt_default_users", 100_000,
                          "Users of the default data's subsample in (a).",
                          lower_bound=100)
flags.DEFINE_integer("iblt_runs", 1, "IBLT runs (seeds) per point of (a); 0 "
                     "skips (a).", lower_bound=0)
shared_flags.DEFINE_values("iblt_epsilons", ["1", "4"],
                           "TrieHH's epsilons in (a).",
                           shared_flags.number_item())
shared_flags.DEFINE_values("pass_counts", ["1", "2", "3", "4"],
                           "Passes in (b), whole numbers >= 1.",
                           shared_flags.count_item(1))
flags.DEFINE_float("total_epsilon", 4.0, "Total epsilon of (b), the "
                   "target of (c) and the epsilon of (d)'s budget splits.")
shared_flags.DEFINE_values("fractions", ["1.0", "0.5", "0.2", "0.05"],
                           "Fractions of users online in (c), in (0, 1].",
                           shared_flags.number_item(0, 1,
                                                    high_included=True))
shared_flags.DEFINE_values("parts", list(beyond_runs.PARTS),
                           "Parts to run: iblt, passes, availability, "
                           "counts.",
                           shared_flags.choice_item(beyond_runs.PARTS))
_COUNTS = beyond_runs.CountSettings()
flags.DEFINE_integer("counts_runs", _COUNTS.runs,
                     "TrieHH's seeded runs per point of (d).", lower_bound=1)
flags.DEFINE_integer("counts_sfp_runs", _COUNTS.sfp_runs,
                     "SFP's runs per epsilon in (d); 0: no SFP rows.",
                     lower_bound=0)
flags.DEFINE_integer("counts_iblt_runs", _COUNTS.iblt_runs,
                     "IBLT's runs in (d) (TensorFlow Federated); 0: no IBLT "
                     "rows.", lower_bound=0)
shared_flags.DEFINE_values("counts_epsilons",
                           [f"{e:g}" for e in _COUNTS.epsilons],
                           "Total epsilons of (d), at the default budget "
                           "split.", shared_flags.number_item())
shared_flags.DEFINE_values("counts_shares",
                           [f"{s:g}" for s in _COUNTS.shares],
                           "Budget splits (count shares) of (d), each in "
                           "(0, 1), at --total_epsilon.",
                           shared_flags.number_item(0, 1))
flags.register_validator(
    "total_epsilon", lambda e: math.isfinite(e) and e > 0,
    "--total_epsilon must be a positive finite number")


# The parts each part-specific flag applies to; given with none of them in
# --parts, it would do nothing and is refused.
_PART_FLAGS = {
    "num_runs": ("iblt", "passes", "availability"),
    "iblt_runs": ("iblt",),
    "iblt_default_users": ("iblt",),
    "iblt_epsilons": ("iblt",),
    "pass_counts": ("passes",),
    "fractions": ("availability",),
    "total_epsilon": ("passes", "availability", "counts"),
    "default_users": ("passes", "availability", "counts"),
    "sentiment140_path": ("iblt", "passes", "counts"),
    "counts_runs": ("counts",),
    "counts_sfp_runs": ("counts",),
    "counts_iblt_runs": ("counts",),
    "counts_epsilons": ("counts",),
    "counts_shares": ("counts",),
}


def check_part_flags() -> None:
  """Refuses a flag given for parts that ``--parts`` leaves out."""
  for name, parts in _PART_FLAGS.items():
    if shared_flags.given(name) and not set(parts) & set(FLAGS.parts):
      raise ValueError(
          f"--{name} applies to --parts={','.join(parts)} only; add "
          f"{' or '.join(parts)} to --parts (now {','.join(FLAGS.parts)})")


def sample_path() -> str | None:
  """``--sentiment140_path`` (an error if it cannot be read), else
  ``$TRIEHH_SENTIMENT140``, else the shared sample; None if absent."""
  return shared_flags.sentiment140_sample()


def report_dir() -> str:
  """``--report_dir``, else the records' directory (``results/beyond``)."""
  return FLAGS.report_dir or FLAGS.output_dir or DEFAULT_OUTPUT_DIR


def settings() -> beyond_runs.Settings:
  """The runs the flags ask for."""
  check_part_flags()
  for name in ("default_users", "iblt_default_users"):  # before any run
    try:
      synthetic.check_num_users(FLAGS[name].value,
                                synthetic.ENGLISH_BYTES_PER_USER)
    except ValueError as err:  # named by the flag, not the library's name
      raise type(err)(str(err).replace("num_users", f"--{name}")) from None
  return beyond_runs.Settings(
      parts=tuple(FLAGS.parts), runs=FLAGS.num_runs, iblt_runs=FLAGS.iblt_runs,
      seed=FLAGS.seed, default_users=FLAGS.default_users,
      iblt_default_users=FLAGS.iblt_default_users,
      iblt_epsilons=tuple(float(e) for e in FLAGS.iblt_epsilons),
      pass_counts=tuple(int(p) for p in FLAGS.pass_counts),
      total_epsilon=FLAGS.total_epsilon,
      fractions=tuple(float(f) for f in FLAGS.fractions),
      sample_path=sample_path(),
      counts=beyond_runs.CountSettings(
          runs=FLAGS.counts_runs, sfp_runs=FLAGS.counts_sfp_runs,
          iblt_runs=FLAGS.counts_iblt_runs,
          epsilons=tuple(float(e) for e in FLAGS.counts_epsilons),
          shares=tuple(float(s) for s in FLAGS.counts_shares)))


def main(argv):
  if len(argv) > 1:
    raise ValueError(f"unexpected arguments: {argv[1:]}")
  start = time.perf_counter()
  wanted = settings()
  output_dir = FLAGS.output_dir or DEFAULT_OUTPUT_DIR
  paths.check_dir("output_dir", output_dir, create=True)
  records_lib.check_output_dir(output_dir)
  paths.check_dir("report_dir", report_dir(), create=True)
  shared_flags.check_data_paths()  # --cache_dir
  datasets = datasets_lib.DataCache(FLAGS.cache_dir or None)
  parts = beyond_runs.plan(wanted, datasets)
  print(f"{beyond_runs.runs_left(parts, output_dir)} runs left", flush=True)
  outcome = beyond_runs.run(wanted, parts, output_dir, datasets,
                            log=lambda text: print(text, flush=True))
  command = cli.command_line("experiments.beyond")
  context = beyond_report.Context(command=command,
                                  seconds=time.perf_counter() - start,
                                  outcome=outcome)
  try:
    path = beyond_report.write(report_dir(), output_dir, wanted, parts,
                               context)
  except OSError as err:  # a full disk: name where it was writing
    raise paths.with_path(err, report_dir()) from None
  print(f"{outcome.written} runs run (the others read from "
        f"{records_lib.results_path(output_dir)}); wrote {path}")


def run():
  """Entry point."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
