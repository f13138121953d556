"""Apple's Sequence Fragment Puzzle (SFP) as a mechanism: each user sends
one locally private report (Count Mean Sketches of a fragment and of the
word); a shuffler hides who sent what, and the central ``(epsilon, delta)``
comes from amplification by shuffling. The paper's baseline.

In one place, what makes it up:

* privacy object and parameters: :class:`triehh.baselines.sfp.SFPTarget`
  (central epsilon and delta, or a local epsilon; the sketches' and
  puzzle's parameters), calibrated to local epsilons
  (:func:`triehh.baselines.sfp_privacy.calibrate`, :class:`Plan`);
* accountant: the shuffle bound of Balle et al. 2019
  (:mod:`triehh.baselines.amplification`), said by
  :func:`triehh.baselines.sfp.release_guarantee`; dp_accounting has no
  event for it (``UnsupportedDpEvent``);
* engine: ``"fast"`` (:func:`triehh.baselines.sfp.sfp_discover`, its
  options ``simulation``, ``chunk_size``, ``num_threads``, ``hash_seed``).
"""

from __future__ import annotations

import dataclasses

from triehh.baselines import sfp as sfp_lib
from triehh.baselines import sfp_privacy
from triehh.core import population as population_lib
from triehh.engines import registry as engines
from triehh.mechanisms import protocol

NAME = "sfp"


@dataclasses.dataclass(frozen=True)
class Plan:
  """An SFP run's parameters before it runs: the target and its
  calibrated privacy (the local epsilons for the central target)."""

  target: sfp_lib.SFPTarget
  privacy: sfp_privacy.Privacy
  n_source: str

  @property
  def epsilon(self) -> float:
    return self.privacy.epsilon

  @property
  def delta(self) -> float:
    return self.privacy.delta

  @property
  def epsilon_local(self) -> float:
    return self.privacy.epsilon_local


class SFP(protocol.TargetRunMechanism):
  """SFP (module docstring)."""

  name = NAME
  privacy_types = (sfp_lib.SFPTarget,)
  summary = ("local DP reports of a fragment and the word, shuffled "
             "(Apple's Sequence Fragment Puzzle)")

  def calibrate(self, privacy: sfp_lib.SFPTarget, population_size: int,
                shape: protocol.Shape) -> Plan:
    del shape  # SFP pads or cuts words to the target's own length
    return Plan(privacy, sfp_privacy.calibrate(
        population_size, privacy.epsilon, privacy.delta,
        privacy.epsilon_local, privacy.word_budget,
        privacy.allow_no_guarantee), privacy.n_source)

  def guarantee(self, params: Plan):
    return sfp_lib.release_guarantee(params)


engines.serve(engines.FAST, NAME, "triehh.baselines.sfp:sfp_discover")
MECHANISM = SFP()
