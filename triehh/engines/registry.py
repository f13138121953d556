"""The engines by name, each imported only when it is asked for.

An engine is a module with ``run(population, *, theta, batch_size, rng,
num_sub_rounds, max_num_prefixes, schedule, **options) -> Trie`` (see
:func:`triehh.engines.fast.run`) and, optionally, ``prepare(population)``,
which builds what the engine caches per population before a timed run, and
``count(population, words, sample_rate, noise_std, rng)``, its counting
phase (:func:`triehh.engines.counting.noisy_sums`, which an engine without
its own uses). Looking up a name imports its module then, so an unknown name
fails at once and the ``tff`` engine imports TensorFlow only when it is
used. What a driver needs to know of an engine before running it (the
options it takes, whether it runs TensorFlow) is known without importing
it: :func:`options`, :func:`uses_tensorflow`.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable

import numpy as np

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.engines import counting

# The built-in engines' names: the numpy simulation and TensorFlow Federated.
FAST = "fast"
TFF = "tff"
# The keyword options of the TFF engine's run that the drivers set (its
# --tff_* flags): where it runs and how it sums the votes.
TFF_OPTIONS = frozenset({"secure_sum", "workers", "connect_timeout",
                         "rpc_timeout", "max_user_contribution"})


@dataclasses.dataclass(frozen=True)
class Engine:
  """What the facade needs of an engine.

  Attributes:
    run: grows the trie (:func:`triehh.engines.fast.run`'s signature).
    prepare: builds the engine's per-population cache before a timed run.
    count: the counting phase, ``(population, words, sample_rate,
      noise_std, rng) -> float64 [K + 1]`` noisy sums; by default
      :func:`triehh.engines.counting.noisy_sums`, the exact law every
      engine's counting follows.
    options: the keyword options of ``run`` beyond the common ones that
      the drivers may set (the TFF engine's: :data:`TFF_OPTIONS`).
    uses_tensorflow: whether a run imports TensorFlow (sweeps keep such
      runs apart).
  """

  run: Callable[..., trie_lib.Trie]
  prepare: Callable[[population_lib.Population], object] | None = None
  count: Callable[..., np.ndarray] = counting.noisy_sums
  options: frozenset[str] = frozenset()
  uses_tensorflow: bool = False


# Built-in engines: name -> module imported on first use.
_MODULES: dict[str, str] = {
    FAST: "triehh.engines.fast",
    TFF: "triehh.engines.tff.engine",
}
# A built-in engine's Engine fields other than its module's functions.
_TRAITS: dict[str, dict] = {
    TFF: {"options": TFF_OPTIONS, "uses_tensorflow": True},
}
# What to install when a built-in engine's module cannot be imported.
_REQUIREMENTS: dict[str, str] = {TFF: "TensorFlow Federated"}
# Engines loaded or registered so far.
_ENGINES: dict[str, Engine] = {}


def register(name: str, run: Callable[..., trie_lib.Trie],
             prepare: Callable[[population_lib.Population], object]
             | None = None, count: Callable[..., np.ndarray] | None = None,
             *, options: Iterable[str] = (),
             uses_tensorflow: bool = False) -> None:
  """Makes ``name`` run ``run`` (replacing any engine of that name); with
  no ``count`` it counts by :func:`triehh.engines.counting.noisy_sums`."""
  _ENGINES[name] = Engine(run, prepare, count or counting.noisy_sums,
                          frozenset(options), bool(uses_tensorflow))


def is_built_in(name: str) -> bool:
  """Whether ``name`` is one of the project's own engines."""
  return name in _MODULES


def names() -> list[str]:
  """The engine names :func:`get` knows, built-in or registered."""
  return sorted(set(_MODULES) | set(_ENGINES))


def _check_name(name: str) -> None:
  if name not in _ENGINES and name not in _MODULES:
    raise ValueError(f"unknown engine {name!r}; available: {names()}")


def options(name: str) -> frozenset[str]:
  """The options engine ``name`` takes (:attr:`Engine.options`), without
  importing a built-in engine; ValueError for an unknown name."""
  _check_name(name)
  if name in _ENGINES:
    return _ENGINES[name].options
  return _TRAITS.get(name, {}).get("options", frozenset())


def uses_tensorflow(name: str) -> bool:
  """Whether engine ``name`` runs TensorFlow, without importing a built-in
  engine; ValueError for an unknown name."""
  _check_name(name)
  if name in _ENGINES:
    return _ENGINES[name].uses_tensorflow
  return _TRAITS.get(name, {}).get("uses_tensorflow", False)


def get(name: str) -> Engine:
  """The engine called ``name``, importing its module on first use.

  Raises:
    ValueError: the name is unknown (naming the available ones), or its
      module cannot be imported (naming what to install).
  """
  _check_name(name)
  if name in _ENGINES:
    return _ENGINES[name]
  try:
    module = importlib.import_module(_MODULES[name])
  except ImportError as err:
    needs = _REQUIREMENTS.get(name, "its dependencies")
    raise ValueError(
        f"engine {name!r} could not be loaded ({err}); it needs {needs}: "
        "install the project's requirements.txt") from err
  engine = Engine(module.run, getattr(module, "prepare", None),
                  getattr(module, "count", counting.noisy_sums),
                  **_TRAITS.get(name, {}))
  _ENGINES[name] = engine
  return engine
