"""The engines by name, each imported only when it is asked for.

An engine runs one or more mechanisms (:mod:`triehh.mechanisms`):
:attr:`Engine.mechanisms` maps a mechanism's name to the function that
runs it there (the fast engine and the TFF engine run TrieHH and the noisy
trie; a mechanism's own module adds the engines that run it,
:func:`serve`), and :meth:`Engine.runner` is the one lookup every run goes
through. TrieHH's runner is :attr:`Engine.run`. A TrieHH engine is a module
with ``run(population, *, theta, batch_size, rng,
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
from collections.abc import Callable, Iterable

import numpy as np

from triehh.core import extras
from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.engines import counting

# The built-in engines' names: the numpy simulation and TensorFlow Federated.
FAST = "fast"
TFF = "tff"
# Apache Beam (triehh.beam): serves mechanisms other than TrieHH.
BEAM = "beam"
# The mechanism an engine's ``run`` runs (:mod:`triehh.mechanisms`).
TRIEHH = "triehh"
# The keyword options of the TFF engine's run that the drivers set (with
# flags of their own): where it runs and how it sums the votes.
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
    mechanisms: mechanism name -> the function that runs it on this engine,
      or ``"module:function"`` imported when first used; TrieHH's is
      ``run`` (None: the engine does not run TrieHH).
  """

  run: Callable[..., trie_lib.Trie] | None
  prepare: Callable[[population_lib.Population], object] | None = None
  count: Callable[..., np.ndarray] = counting.noisy_sums
  options: frozenset[str] = frozenset()
  uses_tensorflow: bool = False
  mechanisms: dict[str, Callable | str] = dataclasses.field(
      default_factory=dict)
  name: str = ""

  def runs(self, mechanism: str) -> bool:
    """Whether this engine runs ``mechanism``."""
    return mechanism in self.served()

  def served(self) -> tuple[str, ...]:
    """The mechanisms this engine runs, sorted."""
    own = (TRIEHH,) if self.run is not None else ()
    return tuple(sorted(set(own) | set(self.mechanisms)))

  def runner(self, mechanism: str) -> Callable:
    """The function that runs ``mechanism`` here.

    Raises:
      ValueError: naming the mechanisms the engine runs, if not this one.
    """
    if mechanism == TRIEHH and self.run is not None:
      return self.run
    if mechanism not in self.mechanisms:
      raise ValueError(
          f"engine {self.name or '?'!r} does not run the {mechanism} "
          f"mechanism; it runs {', '.join(self.served()) or 'nothing'}")
    found = self.mechanisms[mechanism]
    if isinstance(found, str):
      module_name, function = found.split(":")
      found = getattr(extras.import_module(
          module_name, f"the {mechanism} mechanism on engine "
          f"{self.name or '?'!r}"), function)
      self.mechanisms[mechanism] = found
    return found


# Built-in engines: name -> module imported on first use.
_MODULES: dict[str, str] = {
    FAST: "triehh.engines.fast",
    TFF: "triehh.engines.tff.engine",
}
# The built-in engines' runners of mechanisms other than TrieHH, imported
# when first used.
_SERVED: dict[str, dict[str, str]] = {
    FAST: {"noisy_trie": "triehh.engines.noisy:run"},
    TFF: {"noisy_trie": "triehh.engines.tff.noisy_engine:run"},
}
# A built-in engine's Engine fields other than its module's functions.
_TRAITS: dict[str, dict] = {
    TFF: {"options": TFF_OPTIONS, "uses_tensorflow": True},
}
# What to install when a built-in engine's module cannot be imported.
_REQUIREMENTS: dict[str, str] = {TFF: "TensorFlow Federated"}
# Engines loaded or registered so far.
_ENGINES: dict[str, Engine] = {}


def register(name: str, run: Callable[..., trie_lib.Trie] | None,
             prepare: Callable[[population_lib.Population], object]
             | None = None, count: Callable[..., np.ndarray] | None = None,
             *, options: Iterable[str] = (),
             uses_tensorflow: bool = False,
             mechanisms: dict[str, Callable] | None = None) -> None:
  """Makes ``name`` run TrieHH by ``run`` (None: not TrieHH) and the
  ``mechanisms`` given (name -> runner), replacing any engine of that name;
  with no ``count`` it counts by
  :func:`triehh.engines.counting.noisy_sums`."""
  _ENGINES[name] = Engine(run, prepare, count or counting.noisy_sums,
                          frozenset(options), bool(uses_tensorflow),
                          dict(mechanisms or {}), name)


def serve(engine: str, mechanism: str, runner: Callable | str) -> None:
  """Makes engine ``engine`` run ``mechanism`` by ``runner`` (a function,
  or ``"module:function"`` imported when first used): a mechanism's module
  declares the engines it runs on this way."""
  _SERVED.setdefault(engine, {})[mechanism] = runner
  if engine in _ENGINES:
    _ENGINES[engine].mechanisms[mechanism] = runner


def engines_for(mechanism: str) -> list[str]:
  """The engine names that run ``mechanism``, without importing any."""
  found = {name for name, served in _SERVED.items() if mechanism in served}
  found |= {name for name, engine in _ENGINES.items()
            if engine.runs(mechanism)}
  if mechanism == TRIEHH:
    found |= set(_MODULES)
  return sorted(found)


def is_built_in(name: str) -> bool:
  """Whether ``name`` is one of the project's own engines."""
  return name in _MODULES or name in _SERVED


def names() -> list[str]:
  """The engine names :func:`get` knows, built-in or registered."""
  return sorted(set(_MODULES) | set(_ENGINES) | set(_SERVED))


def _check_name(name: str) -> None:
  if name not in _ENGINES and name not in _MODULES and name not in _SERVED:
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
  if name not in _MODULES:  # serves mechanisms other than TrieHH only
    engine = Engine(None, mechanisms=dict(_SERVED[name]), name=name)
    _ENGINES[name] = engine
    return engine
  try:
    module = extras.import_module(_MODULES[name], f"engine {name!r}")
  except extras.MissingExtra:
    raise
  except ImportError as err:
    needs = _REQUIREMENTS.get(name, "its dependencies")
    raise ValueError(
        f"engine {name!r} could not be loaded ({err}); it needs {needs}: "
        "install the project's requirements.txt") from err
  engine = Engine(module.run, getattr(module, "prepare", None),
                  getattr(module, "count", counting.noisy_sums),
                  **_TRAITS.get(name, {}),
                  mechanisms=dict(_SERVED.get(name, {})), name=name)
  _ENGINES[name] = engine
  return engine
