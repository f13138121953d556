"""TFF's IBLT as a mechanism: each round's sampled users send their word in
an invertible Bloom lookup table, summed by ``tff.federated_sum``; the
server releases the strings at least k clients of a round sent. It is
k-anonymity, NOT differential privacy: its guarantee says so (epsilon
``inf``, no neighbouring relation), and it has no DpEvent.

In one place, what makes it up:

* privacy object and parameters: :class:`triehh.baselines.iblt.IBLTTarget`
  (k, the batch: a size, or a TrieHH ``Target`` whose fixed-size
  calibration sizes the rounds; the sketch's parameters), with the round
  size resolved for the population (:class:`Plan`);
* no accountant: :func:`triehh.baselines.iblt.release_guarantee` says what
  k-anonymity covers here;
* engine: ``"tff"`` (:func:`triehh.baselines.iblt.iblt_discover`, its
  options the memory bounds and TFF workers).
"""

from __future__ import annotations

import dataclasses

from triehh.baselines import iblt as iblt_lib
from triehh.baselines import iblt_rounds
from triehh.core import population as population_lib
from triehh.engines import registry as engines
from triehh.mechanisms import protocol

NAME = "iblt"


@dataclasses.dataclass(frozen=True)
class Plan:
  """An IBLT run's parameters before it runs: the target, its users per
  round, and where the n behind them came from."""

  target: iblt_lib.IBLTTarget
  batch_size: int
  n_source: str

  @property
  def k_anonymity(self) -> int:
    return self.target.k_anonymity


class IBLT(protocol.TargetRunMechanism):
  """IBLT (module docstring)."""

  name = NAME
  privacy_types = (iblt_lib.IBLTTarget,)
  default_engine = engines.TFF
  summary = ("TFF's IBLT on TrieHH's sampled users: strings of at least k "
             "clients released (k-anonymity, not differential privacy)")

  def calibrate(self, privacy: iblt_lib.IBLTTarget, population_size: int,
                shape: protocol.Shape) -> Plan:
    """The users per round: the batch given, or TrieHH's for the data."""
    batch_size, n_source = iblt_rounds.round_size_for(
        population_size, shape.single_word, shape.max_length, privacy.batch)
    return Plan(privacy, batch_size, n_source)

  def guarantee(self, params: Plan):
    return iblt_lib.release_guarantee(params)

  def dp_event(self, params: Plan):
    """None: k-anonymity is no differential privacy."""
    del params

  def run(self, population: population_lib.Population, params: Plan, rng,
          engine: str, **engine_options) -> iblt_lib.IBLTResult:
    """The engine's IBLT on ``params.target``, at the population's L."""
    runner = engines.get(engine).runner(NAME)
    return runner(population, params.target, seed=rng,
                  max_length=population.max_length, **engine_options)


engines.serve(engines.TFF, NAME, "triehh.baselines.iblt:iblt_discover")
MECHANISM = IBLT()
