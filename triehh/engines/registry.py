"""The engines by name, each imported only when it is asked for.

An engine is a module with ``run(population, *, theta, batch_size, rng,
num_sub_rounds, max_num_prefixes, schedule, **options) -> Trie`` (see
:func:`triehh.engines.fast.run`) and, optionally, ``prepare(population)``,
which builds what the engine caches per population before a timed run.
Looking up a name imports its module then, so an unknown name fails at once
and the ``tff`` engine imports TensorFlow only when it is used.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib


@dataclasses.dataclass(frozen=True)
class Engine:
  """What the facade needs of an engine: its run and optional prepare."""

  run: Callable[..., trie_lib.Trie]
  prepare: Callable[[population_lib.Population], object] | None = None


# Built-in engines: name -> module imported on first use.
_MODULES: dict[str, str] = {
    "fast": "triehh.engines.fast",
    "tff": "triehh.engines.tff.engine",
}
# What to install when a built-in engine's module cannot be imported.
_REQUIREMENTS: dict[str, str] = {"tff": "TensorFlow Federated"}
# Engines loaded or registered so far.
_ENGINES: dict[str, Engine] = {}


def register(name: str, run: Callable[..., trie_lib.Trie],
             prepare: Callable[[population_lib.Population], object]
             | None = None) -> None:
  """Makes ``name`` run ``run`` (replacing any engine of that name)."""
  _ENGINES[name] = Engine(run, prepare)


def names() -> list[str]:
  """The engine names :func:`get` knows, built-in or registered."""
  return sorted(set(_MODULES) | set(_ENGINES))


def get(name: str) -> Engine:
  """The engine called ``name``, importing its module on first use.

  Raises:
    ValueError: the name is unknown (naming the available ones), or its
      module cannot be imported (naming what to install).
  """
  if name in _ENGINES:
    return _ENGINES[name]
  if name not in _MODULES:
    raise ValueError(f"unknown engine {name!r}; available: {names()}")
  try:
    module = importlib.import_module(_MODULES[name])
  except ImportError as err:
    needs = _REQUIREMENTS.get(name, "its dependencies")
    raise ValueError(
        f"engine {name!r} could not be loaded ({err}); it needs {needs}: "
        "install the project's requirements.txt") from err
  engine = Engine(module.run, getattr(module, "prepare", None))
  _ENGINES[name] = engine
  return engine
