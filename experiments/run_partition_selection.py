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

import re
import sys

from absl import app
from absl import flags

from experiments import flags as shared_flags
from experiments import single_run

FLAGS = flags.FLAGS
shared_flags.declare(
    __name__, *shared_flags.DATA_FLAGS,
    *[name for name in shared_flags.RUN_FLAGS if name != "max_length"],
    "show", "population_size", "max_partitions_contributed",
    "partition_strategy", "words_out")
shared_flags.refuse(__name__, ["max_length"], "partition selection releases "
                    "whole words, with no length cap")



def run_config(strategy: str) -> dict:
  """A run's ``config`` (everything but the seed that changes its result)."""
  return _algorithm().partition_selection_config(
      shared_flags.data_options(), epsilon=FLAGS.epsilon, delta=FLAGS.delta,
      strategy=strategy,
      max_partitions_contributed=FLAGS.max_partitions_contributed,
      population_size=FLAGS.population_size,
      allow_delta_above_1_over_n=FLAGS.allow_delta_above_1_over_n)


def check_target() -> None:
  """Refuses, before any data is read, a target the library refuses (a
  declared ``--population_size`` too small for the default delta), naming
  the flags."""
  try:
    _algorithm().partition_selection_target(
        run_config(FLAGS.partition_strategy))
  except ValueError as err:
    raise ValueError(re.sub(r"(?<![-\w])(population_size|delta)\b", r"--\1",
                            str(err))) from None


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
          f"distinct words, n={p.n:,}; {p.accounting}"] + (
              [f"  WEAK: {result.guarantee.caveat}"]
              if result.guarantee.caveat else [])


def _run_line(run: int, seed: int | None, result, found: int) -> str:
  return (f"run {run} ({single_run.seed_said(seed)}): {found} words "
          f"released in {result.seconds:.2f} s")


def _call(population, config, seed):
  """One selection; a delta refused above 1/n is said in the flags."""
  try:
    return _algorithm().call_partition_selection(population, config, seed)
  except ValueError as err:
    raise ValueError(shared_flags.delta_in_flag_terms(str(err))) from None


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  shared_flags.check_data_flags()
  check_target()
  single_run.run_all(single_run.Algorithm(
      prepare=lambda data: None, built="built",
      config=lambda: run_config(FLAGS.partition_strategy),
      call=_call, describe=_describe,
      run_line=_run_line, word=lambda word, count: word, record=record,
      note="  (alphabetical: partition selection releases no counts)",
      ranked=False))


def run():
  """Console-script entry point (``triehh-partition-selection``)."""
  single_run.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
