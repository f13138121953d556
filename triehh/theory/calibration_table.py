"""The grid of Poisson calibrations shipped with the package, and its entries.

``triehh/theory/calibrations.json`` holds the search's answers
(:func:`triehh.theory.poisson_calibration.search`) at :func:`targets`:
L = 11 levels (words of at most 10 characters, the default ``max_length``),
the default discretisation, theta searched; epsilon in ``EPSILONS`` and
delta = 1/n^2 for n in ``POPULATION_SIZES`` (the default delta of a
population of that size), each both as asked and as the discovery share of
``discover(counts=True)`` at the default count share; under both
adjacencies the Poisson accountant proves. ``python -m
tools.make_calibration_table`` writes it; :mod:`calibration_store` reads it
and the caller checks each answer with the accountant before use.
"""

from __future__ import annotations

import itertools

from triehh.core import population
from triehh.theory import calibration_store
from triehh.theory import counting
from triehh.theory import poisson_calibration
from triehh.theory.adjacency import Adjacency

NUM_LEVELS = population.DEFAULT_MAX_LENGTH + 1
EPSILONS = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
POPULATION_SIZES = tuple(10**k for k in range(3, 10))
ADJACENCIES = (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_ONE)
# counts=True's default share of the budget (triehh.discovery.counts).
COUNT_SHARE = 0.1


def targets() -> list[tuple[float, float, Adjacency]]:
  """The grid's ``(epsilon, delta, adjacency)``, computed as the library
  computes them (delta = ``1.0 / n**2``; the discovery share by
  :func:`triehh.theory.counting.split_budget`), so that the keys match."""
  found = []
  for epsilon, n, adjacency in itertools.product(EPSILONS, POPULATION_SIZES,
                                                 ADJACENCIES):
    delta = 1.0 / n**2
    share = counting.split_budget(epsilon, delta, COUNT_SHARE)
    found.append((epsilon, delta, adjacency))
    found.append((share.discovery_epsilon, share.discovery_delta, adjacency))
  return found


def arguments(epsilon: float, delta: float, adjacency: Adjacency) -> dict:
  """The store's arguments of a target of the grid."""
  return poisson_calibration.search_arguments(
      NUM_LEVELS, epsilon, delta, None,
      poisson_calibration.DEFAULT_DISCRETIZATION, adjacency)


def searched_entry(target: tuple[float, float, Adjacency]) -> dict | None:
  """The table's entry for ``target``, searched; None if no rate meets it."""
  epsilon, delta, adjacency = target
  theta, rate = poisson_calibration.search(
      NUM_LEVELS, epsilon, delta, None,
      poisson_calibration.DEFAULT_DISCRETIZATION, adjacency)
  if rate <= 0:
    return None
  return calibration_store.table_entry(
      "poisson", arguments(epsilon, delta, adjacency),
      poisson_calibration.SOURCES, {"theta": theta, "rate": rate})
