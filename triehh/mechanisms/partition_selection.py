"""Central DP partition selection as a mechanism (PipelineDP): the server
sees every user's words and releases those a DP selection keeps; what
federated discovery is measured against.

In one place, what makes it up:

* privacy object and parameters:
  :class:`triehh.baselines.partition_selection.PartitionSelectionTarget`
  (epsilon, delta, the strategy, words per user, a declared population
  size), with delta resolved for the population (:class:`Plan`);
* accountant: PipelineDP's own (truncated geometric, Laplace or Gaussian
  thresholding); its guarantee
  (:func:`triehh.baselines.partition_selection.release_guarantee`);
  dp_accounting has no event for it (``UnsupportedDpEvent``);
* engines: ``"fast"`` (PipelineDP's local backend,
  :func:`triehh.baselines.partition_selection.select_words`) and
  ``"beam"`` (its Beam backend, :func:`triehh.beam.partition_selection.
  select_words`).
"""

from __future__ import annotations

import dataclasses

from triehh.baselines import partition_selection as ps_lib
from triehh.core import population as population_lib
from triehh.engines import registry as engines
from triehh.mechanisms import protocol
from triehh.theory import coverage

NAME = "partition_selection"
BEAM = engines.BEAM


@dataclasses.dataclass(frozen=True)
class Plan:
  """A selection's parameters before it runs: the target, with delta
  resolved for the population and where its n came from."""

  target: ps_lib.PartitionSelectionTarget
  delta: float
  n_source: str

  @property
  def epsilon(self) -> float:
    return self.target.epsilon

  @property
  def max_partitions_contributed(self) -> int:
    return self.target.max_partitions_contributed

  @property
  def accounting(self) -> str:
    return ps_lib.ACCOUNTING


class PartitionSelection(protocol.TargetRunMechanism):
  """Partition selection (module docstring)."""

  name = NAME
  privacy_types = (ps_lib.PartitionSelectionTarget,)
  summary = ("central DP partition selection (PipelineDP): the server "
             "sees the raw words")
  ranked = False  # a set, alphabetically

  def population_size(self, privacy, population: population_lib.Population
                      ) -> int:
    ps_lib.check(population, privacy)  # names the declared-size problem
    return super().population_size(privacy, population)

  def calibrate(self, privacy: ps_lib.PartitionSelectionTarget,
                population_size: int, shape: protocol.Shape) -> Plan:
    delta = (coverage.default_delta(population_size)
             if privacy.delta is None else privacy.delta)
    return Plan(privacy, delta, privacy.n_source)

  def guarantee(self, params: Plan):
    return ps_lib.release_guarantee(params)


engines.serve(engines.FAST, NAME,
              "triehh.baselines.partition_selection:select_words")
engines.serve(BEAM, NAME, "triehh.beam.partition_selection:select_words")
MECHANISM = PartitionSelection()
