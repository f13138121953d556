"""An independent reading of a run's DpEvent under REPLACE_SPECIAL: the
project's dp_accounting PLD accountant composing it (not the accountant
that labelled the run), for the label tests of the noisy trie's Skellam
shares."""

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
