"""PipelineDP's partition selection on Apache Beam, the field's anchor at scale.

The same selection as :func:`triehh.baselines.partition_selection.select_words`
(pipeline_dp's ``DPEngine.select_partitions``, the same strategies, the same
``(epsilon, delta)`` and labels: :func:`~triehh.baselines.partition_selection.select_partitions`
and :func:`~triehh.baselines.partition_selection.release_params`), run by
pipeline_dp's ``BeamBackend`` on a PCollection of ``(user, word)`` rows: the
PCollection TrieHH's Beam rounds read (:mod:`triehh.beam.protocol`), so both
run on the same data in the same pipeline.

Several words per user: every distinct (user, word) row is given, and
pipeline_dp's own contribution bounding keeps at most
``max_partitions_contributed`` words of a user (its own unseeded choice; the
local path chooses them with a seeded generator first).
"""

from __future__ import annotations

import json
import os
import tempfile
import time

import apache_beam as beam

from triehh.baselines import partition_selection as ps_lib
from triehh.core import population as population_lib
from triehh.theory import coverage

import numpy as np


def select(rows, *, epsilon: float, delta: float,
           strategy: str = ps_lib.DEFAULT_STRATEGY,
           max_partitions_contributed: int = 1):
  """The selected words of a PCollection of ``(user, word)`` rows, with the
  budget accountant whose ``compute_budgets()`` must run before the
  pipeline does."""
  import pipeline_dp  # pylint: disable=g-import-not-at-top
  return ps_lib.select_partitions(
      rows, pipeline_dp.BeamBackend(), epsilon=epsilon, delta=delta,
      strategy=strategy,
      max_partitions_contributed=max_partitions_contributed)


def select_words(population: population_lib.Population, *, epsilon: float,
                 delta: float | None = None,
                 strategy: str = ps_lib.DEFAULT_STRATEGY,
                 max_partitions_contributed: int = 1,
                 pipeline_opts=None) -> ps_lib.PartitionSelectionResult:
  """:func:`triehh.baselines.partition_selection.select_words` on Beam: the
  population's rows as a PCollection, selected by the ``BeamBackend``."""
  from triehh.beam import ingest  # pylint: disable=g-import-not-at-top
  n_source = coverage.n_source_of(False, uses_n=delta is None)
  delta = ps_lib.check(population, epsilon=epsilon, delta=delta,
                       strategy=strategy,
                       max_partitions_contributed=max_partitions_contributed)
  start = time.perf_counter()
  # Every distinct word of a user; pipeline_dp bounds them (module doc).
  rows = ps_lib.user_word_rows(population, max(population.num_words, 1),
                               np.random.default_rng(0))
  with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "words.jsonl")
    with beam.Pipeline(options=pipeline_opts or ingest.options()) as p:
      pcoll = p | "Rows" >> beam.Create(rows)
      selected, accountant = select(
          pcoll, epsilon=epsilon, delta=delta, strategy=strategy,
          max_partitions_contributed=int(max_partitions_contributed))
      accountant.compute_budgets()
      _ = (selected | "Format" >> beam.Map(json.dumps)
           | "Write" >> beam.io.WriteToText(path, num_shards=1,
                                            shard_name_template=""))
    with open(path, encoding="utf-8") as f:
      words = tuple(sorted(json.loads(line) for line in f if line.strip()))
  return ps_lib.PartitionSelectionResult(
      words=words, seed=None, seconds=time.perf_counter() - start,
      params=ps_lib.release_params(
          epsilon=epsilon, delta=delta, strategy=strategy,
          max_partitions_contributed=int(max_partitions_contributed),
          n=population.num_users, num_rows=len(rows),
          num_candidates=len({word for _, word in rows}),
          n_source=n_source))
