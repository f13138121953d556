"""Partition selection's law drawn directly: a fast engine for simulation.

pipeline_dp's partition selection (:func:`triehh.baselines.
partition_selection.select_words`) keeps each word independently with a
probability that depends on its user count alone: python-dp's strategy
object (the one pipeline_dp builds from its budget accountant's
``(epsilon, delta)``) has ``should_keep(count)`` draw a Bernoulli of
``probability_of_keep(count)``, the truncated geometric's optimal
probability (Desfontaines et al., PoPETs 2022), or the chance that the
count plus Laplace (Gaussian) noise passes the strategy's threshold.

:func:`select_words_by_law` counts each word's users with numpy (the same
rows as the PipelineDP path: one per user and kept word, a several-word
user's words chosen by the same seeded draw,
:func:`~triehh.baselines.partition_selection.user_word_indices`), asks the
same python-dp strategy for ``probability_of_keep`` once per distinct
count, and keeps each word with that probability by a seeded
``numpy.random.Generator``: the same law as the PipelineDP path, a
thousand times faster (10^6 users in milliseconds against 5-20 s), and
reproducible. It is for simulation only: numpy's generator is no secure
randomness, and the guarantee's label says so. The PipelineDP path stays
the library's release path (``select_words``).
"""

from __future__ import annotations

import dataclasses
import importlib
from importlib import metadata
import time

import numpy as np

from triehh.baselines import moved
from triehh.baselines import partition_selection as ps_lib
from triehh.core import population as population_lib
from triehh.core import validation
from triehh.theory import adjacency as adjacency_lib
from triehh.theory import coverage

ENGINE = "partition selection's law (numpy)"
ACCOUNTING = (ps_lib.ACCOUNTING + ": python-dp's keep probability per "
              "user count, drawn with numpy (simulation)")
EXAMPLE = ("select_words_by_law(population, "
           "triehh.PartitionSelectionTarget(epsilon=4.0), seed=0)")


# Strategy name -> python-dp's name of it (pipeline_dp's mapping,
# pipeline_dp.partition_selection.PARTITION_STRATEGY_ENUM_TO_STR).
PYDP_NAMES = {"truncated_geometric": "truncated_geometric",
              "laplace_thresholding": "laplace",
              "gaussian_thresholding": "gaussian"}


def strategy_object(epsilon: float, delta: float, strategy: str,
                    max_partitions_contributed: int):
  """python-dp's selection strategy that pipeline_dp's ``select_partitions``
  builds for a ``(epsilon, delta)`` budget (its one mechanism gets all of
  the ``NaiveBudgetAccountant``'s budget): ``pydp.algorithms.
  partition_selection.create_partition_strategy``, as pipeline_dp calls
  it. python-dp alone, without pipeline_dp's import of Beam (and gRPC)."""
  validation.check_choice("strategy", strategy, ps_lib.STRATEGIES)
  selection = importlib.import_module("pydp.algorithms.partition_selection")
  return selection.create_partition_strategy(
      PYDP_NAMES[strategy], float(epsilon), float(delta),
      int(max_partitions_contributed))


def keep_probabilities(counts: np.ndarray, epsilon: float, delta: float,
                       strategy: str, max_partitions_contributed: int = 1
                       ) -> np.ndarray:
  """``float64`` python-dp's ``probability_of_keep`` of each user count
  (asked once per distinct count)."""
  counts = np.asarray(counts)
  if counts.size and (counts.min() < 0
                      or not np.issubdtype(counts.dtype, np.integer)):
    raise ValueError("counts must be non-negative integers")
  selector = strategy_object(epsilon, delta, strategy,
                             max_partitions_contributed)
  distinct, where = np.unique(counts, return_inverse=True)
  table = np.array([selector.probability_of_keep(int(c)) for c in distinct],
                   dtype=np.float64)
  return table[where].reshape(counts.shape)


def word_counts(population: population_lib.Population,
                max_partitions_contributed: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, int]:
  """``int64 [V]`` users counted towards each word (the PipelineDP path's
  rows, :func:`~triehh.baselines.partition_selection.user_word_indices`),
  and the number of rows."""
  if population.is_single_word:
    counts = population.users_per_word.astype(np.int64)
  else:
    _, words = ps_lib.user_word_indices(population,
                                        max_partitions_contributed, rng)
    counts = np.bincount(words, minlength=population.num_words).astype(
        np.int64)
  return counts, int(counts.sum())


def randomness(seed: int | None) -> str:
  """How a law-drawn selection drew its randomness, in words."""
  source = ("fresh entropy (not recorded)" if seed is None
            else f"seed {int(seed)}")
  return (f"{source} for the word choice and the keep draws (numpy; a "
          "simulation of the law, not secure randomness)")


@dataclasses.dataclass(frozen=True)
class LawSelectionResult(ps_lib.PartitionSelectionResult):
  """A :class:`~triehh.baselines.partition_selection.
  PartitionSelectionResult` drawn by :func:`select_words_by_law`."""

  @property
  def guarantee(self):
    """The PipelineDP path's guarantee (the same law), its randomness the
    seeded numpy draws of this simulation."""
    return dataclasses.replace(ps_lib.release_guarantee(self.params),
                               randomness=randomness(self.seed))


def select_words_by_law(population: population_lib.Population,
                        target: ps_lib.PartitionSelectionTarget, *,
                        seed: int | None = None) -> LawSelectionResult:
  """The words pipeline_dp's partition selection would release, drawn from
  its law (module docstring): for simulation, not for a release.

  Raises:
    TypeError, ValueError: as :func:`~triehh.baselines.partition_selection.
      select_words`.
  """
  seed = validation.check_seed(seed)
  moved.check_target("select_words_by_law", target,
                     ps_lib.PartitionSelectionTarget, EXAMPLE)
  delta = ps_lib.check(population, target)
  start = time.perf_counter()
  rng = np.random.default_rng(seed)
  k = target.max_partitions_contributed
  counts, num_rows = word_counts(population, k, rng)
  present = np.flatnonzero(counts)
  keep = rng.random(present.size) < keep_probabilities(
      counts[present], target.epsilon, delta, target.strategy, k)
  words = tuple(sorted(population.vocabulary[present[keep]].tolist()))
  n_source = target.n_source
  params = ps_lib.PartitionSelectionParams(
      epsilon=float(target.epsilon), delta=float(delta),
      strategy=target.strategy, max_partitions_contributed=k,
      n=population.num_users, num_rows=num_rows,
      num_candidates=int(present.size), n_source=n_source,
      adjacency=adjacency_lib.names(coverage.add_or_remove(n_source)),
      accounting=(f"{ACCOUNTING} (pipeline-dp {_version('pipeline-dp')}, "
                  f"python-dp {_version('python-dp')})"),
      population_size=target.population_size)
  return LawSelectionResult(words=words, params=params, seed=seed,
                            seconds=time.perf_counter() - start)


def _version(package: str) -> str:
  try:
    return metadata.version(package)
  except metadata.PackageNotFoundError:
    return "not installed"
