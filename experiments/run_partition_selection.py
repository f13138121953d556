"""Runs pipeline_dp's DP partition selection on a data set at TrieHH's
central (epsilon, delta).

The field's central baseline: a server that sees every user's raw words
releases those held by enough users, with noise
(``triehh.baselines.partition_selection``). Same data, privacy and output
flags as ``experiments.run_triehh``. Each run appends one
``triehh.runs.records`` record to ``<output_dir>/results.jsonl``, with
``"algorithm": "partition_selection"``, its ``strategy``,
``max_partitions_contributed`` and its guarantee (``adjacency``
ADD_OR_REMOVE_ONE, both directions, central). The noise is python-dp's and
takes no seed: runs are not reproducible by ``--seed``.

  python -m experiments.run_partition_selection --epsilon=4 \\
      --partition_strategy=truncated_geometric --output_dir=out
  triehh-partition-selection --epsilon=4 --output_dir=out

Errors print one line ``error: ...`` and exit 1; Ctrl-C exits 130 with the
finished runs kept in results.jsonl.
"""

from __future__ import annotations

import sys

from absl import app
from absl import flags

from experiments import flags as shared_flags
from experiments import single_run
from triehh.baselines import partition_selection

FLAGS = flags.FLAGS
for _name in shared_flags.DATA_FLAGS + shared_flags.RUN_FLAGS + ("show",):
  flags.declare_key_flag(_name)

flags.DEFINE_enum("partition_strategy", partition_selection.DEFAULT_STRATEGY,
                  list(partition_selection.STRATEGIES),
                  "pipeline_dp's partition selection strategy.")
flags.DEFINE_integer("max_partitions_contributed", 1,
                     "Words a user counts towards, at most (a user with more "
                     "distinct words contributes a seeded uniform choice).",
                     lower_bound=1)


def run_config(strategy: str) -> dict:
  """A run's ``config`` (everything but the seed that changes its result)."""
  return _algorithm().partition_selection_config(
      shared_flags.data_options(), epsilon=FLAGS.epsilon, delta=FLAGS.delta,
      strategy=strategy,
      max_partitions_contributed=FLAGS.max_partitions_contributed)


def _algorithm():
  """Partition selection's algorithm of runs and records, imported when a
  run starts (``--help`` and the flags' checks do not need the runs'
  algorithms)."""
  from triehh.runs.algorithms import partition_selection as ps_algorithm  # pylint: disable=g-import-not-at-top
  return ps_algorithm


def record(*args, **kwargs):
  """:func:`~triehh.runs.algorithms.partition_selection.
  partition_selection_record`."""
  return _algorithm().partition_selection_record(*args, **kwargs)


def _describe(result) -> list[str]:
  """The privacy lines printed once."""
  p = result.params
  k = p.max_partitions_contributed
  return [f"privacy: ({p.epsilon:g}, {p.delta:.3g})-DP, {p.adjacency}, "
          f"{p.covers}; {p.privacy}",
          f"  {p.strategy}, at most {k} word{'' if k == 1 else 's'} per "
          f"user, {p.num_rows:,} (user, word) rows, {p.num_candidates:,} "
          f"distinct words, n={p.n:,}; {p.accounting}"]


def _run_line(run: int, seed: int, result, found: int) -> str:
  return (f"run {run} (seed {seed}): {found} words released in "
          f"{result.seconds:.2f} s")


def check_flags() -> None:
  """Refuses a flag partition selection does not use: ``--max_length``
  (the words are released whole, with no length cap)."""
  if shared_flags.given("max_length"):
    raise ValueError(
        f"--max_length={FLAGS.max_length} does not apply to partition "
        "selection: it releases whole words, with no length cap")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  check_flags()
  shared_flags.check_data_flags()
  single_run.run_all(single_run.Algorithm(
      prepare=lambda data: None, built="built",
      config=lambda: run_config(FLAGS.partition_strategy),
      call=_algorithm().call_partition_selection, describe=_describe,
      run_line=_run_line, word=lambda word, count: word, record=record,
      note="  (alphabetical: partition selection releases no counts)"))


def run():
  """Console-script entry point (``triehh-partition-selection``)."""
  single_run.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
