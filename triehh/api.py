"""The facade: ``triehh.discover`` and the engine registry.

:func:`discover` is :func:`triehh.discovery.discover.discover` and
:func:`count_words` :func:`triehh.discovery.counts.count_words`; engines are
registered by name (:mod:`triehh.engines.registry`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.discovery.counts import count_words
from triehh.mechanisms.discover import discover
from triehh.engines import registry

__all__ = ["count_words", "discover", "engine_names", "register_engine"]


def register_engine(
    name: str, run: Callable[..., trie_lib.Trie] | None = None,
    prepare: Callable[[population_lib.Population], object] | None = None,
    count: Callable[..., np.ndarray] | None = None, *,
    mechanisms: dict[str, Callable] | None = None) -> None:
  """Makes ``engine=name`` available to :func:`discover` and
  :func:`count_words`.

  ``run`` runs TrieHH, with the signature of
  :func:`triehh.engines.fast.run`; ``prepare``, if given, builds what the
  engine caches per population, before the run's clock starts; ``count``,
  if given, is its counting phase, with the signature of
  :func:`triehh.engines.counting.noisy_sums` (which counts for an engine
  without its own). ``mechanisms``: other mechanisms it runs, name ->
  runner with the signature of that mechanism's built-in one (the noisy
  trie's: :func:`triehh.engines.noisy.run`).

  Raises:
    TypeError, ValueError: naming the argument that is not a non-empty
      string (``name``) or a function (``run``, ``prepare``, ``count``, a
      runner), or an engine that runs nothing.
  """
  if not isinstance(name, str):
    raise TypeError(f"name must be a string, got {name!r}")
  if not name:
    raise ValueError("name must be a non-empty string")
  if registry.is_built_in(name):
    raise ValueError(f"{name!r} is a built-in engine, which every run "
                     "named so would lose: register yours under another "
                     "name")
  if run is None and not mechanisms:
    raise ValueError("an engine must run something: give run (TrieHH) or "
                     "mechanisms")
  if run is not None and not callable(run):
    raise TypeError(f"run must be a function, got {run!r}")
  for mechanism, runner in (mechanisms or {}).items():
    if not callable(runner):
      raise TypeError(f"mechanisms[{mechanism!r}] must be a function, got "
                      f"{runner!r}")
  if prepare is not None and not callable(prepare):
    raise TypeError(f"prepare must be a function or None, got {prepare!r}")
  if count is not None and not callable(count):
    raise TypeError(f"count must be a function or None, got {count!r}")
  registry.register(name, run, prepare, count, mechanisms=mechanisms)


def engine_names() -> list[str]:
  """The names :func:`discover` accepts as ``engine`` (none is imported)."""
  return registry.names()
