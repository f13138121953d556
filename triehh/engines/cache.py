"""Per-population caches that live exactly as long as their population.

An engine derives lookup tables from a :class:`~triehh.core.population.Population`
once and reuses them on every run. Keying the cache on a weak reference to
the population (populations compare and hash by identity) frees the tables
with the population, instead of keeping the last few populations alive as a
``functools.lru_cache`` would.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import TypeVar

from triehh.core import population as population_lib

_T = TypeVar("_T")


def per_population(
    build: Callable[[population_lib.Population], _T]
) -> Callable[[population_lib.Population], _T]:
  """Caches ``build(population)`` for as long as the population lives."""
  cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  @functools.wraps(build)
  def cached(population: population_lib.Population) -> _T:
    if population not in cache:
      cache[population] = build(population)
    return cache[population]

  cached.cache = cache  # for tests
  return cached
