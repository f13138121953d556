"""A client's upload budget for the noisy trie's planned rounds
(:mod:`triehh.theory.noisy_plan`, ``docs/noisy-trie.md``).

Its own module so that the privacy targets
(:class:`triehh.theory.mechanism.NoisyTarget`) can hold one without
importing the plan, which imports them through the accountant.
"""

from __future__ import annotations

import dataclasses

from triehh.core import validation

DEFAULT_BYTES_PER_RUN = 1_000_000


@dataclasses.dataclass(frozen=True)
class UploadBudget:
  """A client's upload budget: bytes per run and (None: no cap but the
  run's) per round."""

  bytes_per_run: int = DEFAULT_BYTES_PER_RUN
  bytes_per_round: int | None = None

  def __post_init__(self):
    validation.check_int("bytes_per_run", self.bytes_per_run)
    if self.bytes_per_round is not None:
      validation.check_int("bytes_per_round", self.bytes_per_round)
