"""A run's DpEvent read under REPLACE_SPECIAL, for the label tests of the
noisy trie's Skellam shares: dp_accounting's PLD accountant composes the
event's rounds, not the composition that labelled the run. Each round's
PLD is the same code's (``distributed_noise.round_pld``), whose own
independent check, against the hockey-stick divergence summed from
scipy's pmfs, is ``tests/theory/distributed_noise_test.py``: so this
checks that the event carries the rounds the label accounts for."""

import dp_accounting

from triehh.theory import distributed_noise
from triehh.theory import dp_events


def epsilon(event, delta: float) -> float:
  """epsilon at ``delta`` of ``event`` composed by a REPLACE_SPECIAL PLD
  accountant at the Skellam accountant's discretization."""
  accountant = dp_events.PLDAccountant(
      neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL,
      value_discretization_interval=distributed_noise.DEFAULT_DISCRETIZATION)
  accountant.compose(event)
  return accountant.get_epsilon(delta)
