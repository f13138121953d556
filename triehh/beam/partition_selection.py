"""PipelineDP's partition selection on Apache Beam, the field's anchor at scale.

The same selection as :func:`triehh.baselines.partition_selection.select_words`
(pipeline_dp's ``DPEngine.select_partitions``, the same strategies, the same
:class:`~triehh.baselines.partition_selection.PartitionSelectionTarget` and
labels: :func:`~triehh.baselines.partition_selection.select_partitions`
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

import dataclasses
import time

import apache_beam as beam
import numpy as np

from triehh.baselines import moved
from triehh.baselines import partition_selection as ps_lib
from triehh.beam import protocol
from triehh.core import population as population_lib


def select(rows, target: ps_lib.PartitionSelectionTarget):
  """The selected words of a PCollection of ``(user, word)`` rows, with the
  budget accountant whose ``compute_budgets()`` must run before the
  pipeline does. The rows' number of users is not read, so the target
  gives delta, or a declared ``population_size`` whose ``1/N^2`` it is."""
  import pipeline_dp  # pylint: disable=g-import-not-at-top
  if not isinstance(target, ps_lib.PartitionSelectionTarget):
    raise TypeError("select takes a triehh.PartitionSelectionTarget, got "
                    f"{target!r:.60}")
  delta = target.delta
  if delta is None:
    if target.population_size is None:
      raise ValueError(
          "select on a PCollection needs the target's delta, or a declared "
          "population_size (delta = 1/N^2): the rows' users are not counted")
    delta = 1.0 / target.population_size**2
  return ps_lib.select_partitions(
      rows, pipeline_dp.BeamBackend(), epsilon=target.epsilon, delta=delta,
      strategy=target.strategy,
      max_partitions_contributed=target.max_partitions_contributed)


def select_words(population: population_lib.Population,
                 target: ps_lib.PartitionSelectionTarget | None = None, *,
                 seed: int | None = None, pipeline_opts=None,
                 **moved_keywords) -> ps_lib.PartitionSelectionResult:
  """:func:`triehh.baselines.partition_selection.select_words` on Beam: the
  population's rows as a PCollection, selected by the ``BeamBackend``; the
  same target, checks and labels (``pipeline_opts``: Beam's options, by
  default :func:`triehh.beam.ingest.options`). ``seed`` is taken for the
  engines' common signature and unused: every distinct word of a user is a
  row, and pipeline_dp bounds them with its own (unseeded) noise."""
  del seed
  moved.refuse("select_words", moved_keywords, ps_lib.MOVED,
               ps_lib.EXAMPLE)
  moved.check_target("select_words", target,
                     ps_lib.PartitionSelectionTarget, ps_lib.EXAMPLE)
  delta = ps_lib.check(population, target)
  start = time.perf_counter()
  # Every distinct word of a user; pipeline_dp bounds them (module doc).
  rows = ps_lib.user_word_rows(population, max(population.num_words, 1),
                               np.random.default_rng(0))

  def build(p):
    selected, accountant = select(p | "Rows" >> beam.Create(rows),
                                  dataclasses.replace(target, delta=delta))
    accountant.compute_budgets()  # before the pipeline runs
    return {"words": selected}

  words = tuple(sorted(protocol.collected(build, pipeline_opts)["words"]))
  return ps_lib.PartitionSelectionResult(
      words=words, seed=None, seconds=time.perf_counter() - start,
      params=ps_lib.release_params(target, delta=delta,
                                   n=population.num_users, rows=rows))
