"""Tests of one run on a built population (triehh/discovery/discover.py)."""

import pytest

from triehh.core import population as population_lib
from triehh.discovery import discover
from triehh.theory import mechanism
from triehh.theory import privacy

# 400 users: theta=4 with a batch of 40 (gamma = 2) is inside Theorem 1,
# at a delta above 1/n (opted in where a test is about something else).
USERS = ["ab"] * 200 + ["ba"] * 150 + ["c"] * 50


@pytest.mark.parametrize("max_length", [2, 5])
def test_run_once_accounts_for_the_populations_own_max_length(max_length):
  population = population_lib.as_population(USERS, max_length)
  result = discover.run_once(
      population, mechanism.Mechanism(theta=4, batch_size=40,
                                      sampling="fixed",
                                      allow_delta_above_1_over_n=True),
      seed=0, engine="fast")
  assert result.params.max_length == max_length
  assert result.params.levels == max_length + 1
  epsilon, _ = privacy.guarantee(400, max_length + 1, 4, 2.0)
  assert result.params.epsilon == pytest.approx(epsilon)


def test_run_once_needs_its_sampling_named():
  population = population_lib.as_population(USERS, 2)
  with pytest.raises(ValueError, match="sampling must be named"):
    discover.run_once(population, mechanism.Mechanism(theta=4, batch_size=40),
                      seed=0, engine="fast")
