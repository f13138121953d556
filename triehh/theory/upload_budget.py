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
# The sampling rates a planned run chooses among (None: chosen): these
# always, then halved while the rule finds more on the prior, down to
# SMALLEST_SAMPLING_RATE (triehh.mechanisms.plan_choice).
SAMPLING_RATES = (1.0, 0.5, 0.25)
SMALLEST_SAMPLING_RATE = 2.0**-10


@dataclasses.dataclass(frozen=True)
class UploadBudget:
  """A client's upload budget: bytes per run and (None: no cap but the
  run's) per round.

  ``sampling_rate`` q: each user takes part in each round with
  probability q (Poisson sampling), so ``bytes_per_run`` bounds a
  client's *expected* bytes over the run (q times the rounds' vectors) and
  a round's vector may be 1/q times larger; ``bytes_per_round`` still caps
  any one round a client takes part in. The cost: each count is thinned
  to about q of its users, against noise that sampling amplification
  lowers less. None (the default): the planned run chooses q (among
  ``SAMPLING_RATES``, and halved further while that finds more), and its
  rule, on a public prior before the data is read
  (:mod:`triehh.mechanisms.plan_choice`, ``docs/noisy-trie.md``)."""

  bytes_per_run: int = DEFAULT_BYTES_PER_RUN
  bytes_per_round: int | None = None
  sampling_rate: float | None = None

  def __post_init__(self):
    validation.check_int("bytes_per_run", self.bytes_per_run)
    if self.bytes_per_round is not None:
      validation.check_int("bytes_per_round", self.bytes_per_round)
    if self.sampling_rate is not None:
      validation.check_rate("sampling_rate", self.sampling_rate,
                            "the probability a user takes part in a round")

  @property
  def rate(self) -> float:
    """q as given, 1 when it is left to be chosen (a plan computed
    directly, without the choice, takes every user)."""
    return 1.0 if self.sampling_rate is None else float(self.sampling_rate)
