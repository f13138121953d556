"""The facade: ``triehh.discover`` and the engine registry.

:func:`discover` is :func:`triehh.discovery.discover.discover`; engines are
registered by name (:mod:`triehh.engines.registry`).
"""

from __future__ import annotations

from collections.abc import Callable

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.discovery.discover import discover
from triehh.engines import registry

__all__ = ["discover", "engine_names", "register_engine"]


def register_engine(
    name: str, run: Callable[..., trie_lib.Trie],
    prepare: Callable[[population_lib.Population], object] | None = None
) -> None:
  """Makes ``engine=name`` available to :func:`discover`.

  ``run`` has the signature of :func:`triehh.engines.fast.run`; ``prepare``,
  if given, builds what the engine caches per population, before the run's
  clock starts.
  """
  registry.register(name, run, prepare)


def engine_names() -> list[str]:
  """The names :func:`discover` accepts as ``engine`` (none is imported)."""
  return registry.names()
