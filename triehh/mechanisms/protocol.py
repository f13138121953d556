"""What a mechanism is: :class:`MechanismType`, the one protocol.

A mechanism (TrieHH, the noisy trie, partition selection, SFP, IBLT, or one
of yours) is asked for by a frozen, self-checking privacy object (its
target: ``triehh.Target``, ``triehh.NoisyTarget``, ...) and implements:

* ``calibrate(privacy, population_size, shape) -> params``: the run's
  parameters for the target, at the n the guarantee is stated for (the
  declared, public population size, or the data's own) and the data's
  public :class:`Shape`;
* ``guarantee(params) -> Guarantee``: what those parameters guarantee
  (epsilon, delta, the neighbouring relations, what is public, whom to
  trust);
* ``dp_event(params)``: the run as a dp_accounting ``DpEvent``, to compose
  with other releases (None where there is no DP guarantee);
* ``run(population, params, rng, engine, **engine_options) -> Release``:
  one run, through an engine that serves the mechanism
  (:meth:`triehh.engines.registry.Engine.runner`).

:class:`BaseMechanism` gives every mechanism the one flow of
:func:`triehh.discover` (:meth:`BaseMechanism.release`): the population
built, the deny list applied, the parameters calibrated (a delta above
``1/n`` refused, :meth:`BaseMechanism.check_delta`), the run. A
mechanism with more (TrieHH's counts, passes and availability) overrides
``release``.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from dp_accounting import dp_event as dp_event_lib

from triehh.core import population as population_lib
from triehh.core import release as release_lib
from triehh.discovery import deny_list as deny_list_lib
from triehh.engines import registry as engines
from triehh.theory import limits


@dataclasses.dataclass(frozen=True)
class Shape:
  """The public shape of the data a mechanism is calibrated for.

  Attributes:
    max_length: L, the maximum characters per word.
    single_word: whether every user holds one word (several words change
      some accountants: TrieHH's per-round redraws).
    declared: whether the population size is the declared, public one
      (else it was read off the data: the guarantee then holds between
      neighbours of the same size only).
    alphabet_size: A, the characters of the population's alphabet (public
      where the mechanism checks it is: the noisy trie's); None: not said.
  """

  max_length: int
  single_word: bool = True
  declared: bool = False
  alphabet_size: int | None = None

  @classmethod
  def of(cls, population: population_lib.Population,
         declared: bool = False) -> "Shape":
    """The shape of ``population``."""
    return cls(population.max_length, population.is_single_word, declared,
               population.alphabet.size)


@dataclasses.dataclass(frozen=True)
class Request:
  """How :func:`triehh.discover` was asked to run, beyond the privacy.

  Attributes:
    max_length: L for a population built from plain words.
    seed: the run's seed (None: fresh entropy).
    engine: the engine's name.
    deny_list: words whose users abstain, or None.
    extras: options only some mechanisms take (TrieHH's ``counts``,
      ``passes``, ``availability``), name -> value, unset ones left out.
    engine_options: passed to the engine.
  """

  max_length: int
  seed: int | None
  engine: str
  deny_list: Iterable[str] | None = None
  extras: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  engine_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def privacy_field_types(kind: type) -> dict[str, Any]:
  """``typing.get_type_hints`` of a privacy object's class."""
  return typing.get_type_hints(kind)


class MechanismType(Protocol):
  """One mechanism (module docstring).

  Attributes:
    name: its name in records, sweeps and ``--mechanism``.
    privacy_types: the privacy objects that ask for it.
    default_engine: the engine it runs on when none is named.
    summary: one line saying what it is.
  """

  name: str
  privacy_types: tuple[type, ...]
  default_engine: str
  summary: str

  def calibrate(self, privacy, population_size: int, shape: Shape) -> Any:
    """The run's parameters for ``privacy`` at ``population_size``."""

  def guarantee(self, params) -> Any:
    """The :class:`~triehh.theory.mechanism.Guarantee` of ``params``."""

  def dp_event(self, params) -> Any:
    """The run as a dp_accounting ``DpEvent`` (None: no DP guarantee)."""

  def run(self, population: population_lib.Population, params, rng,
          engine: str, **engine_options) -> release_lib.Release:
    """One run on ``population``; a :class:`~triehh.core.release.Release`."""

  def release(self, user_words, privacy,
              request: Request) -> release_lib.Release:
    """:func:`triehh.discover`'s run of this mechanism."""


class BaseMechanism:
  """The flow every mechanism shares (:meth:`release`); subclasses give
  the protocol's ``calibrate``, ``guarantee``, ``dp_event`` and ``run``."""

  name = ""
  privacy_types: tuple[type, ...] = ()
  default_engine = engines.FAST
  summary = ""
  # Whether its words come ranked by a protected score (False: a set, in
  # an order that tells nothing: no top-K precision means anything).
  ranked = True
  # The extras of Request this mechanism takes.
  extras: frozenset[str] = frozenset()

  def population(self, user_words, request: Request
                 ) -> population_lib.Population:
    """The users as a population (``request.max_length`` for plain words),
    the deny list applied; a mechanism with a public candidate set checks
    its alphabet here."""
    population = population_lib.as_population(user_words,
                                              request.max_length)
    if request.deny_list is not None:
      population = deny_list_lib.apply(population, request.deny_list)
    return population

  def population_size(self, privacy,
                      population: population_lib.Population) -> int:
    """The n to calibrate for: the declared size if ``privacy`` has one
    (refusing data larger than it), else the data's."""
    declared = getattr(privacy, "population_size", None)
    if declared is None:
      return population.num_users
    if population.num_users > declared:
      raise ValueError(
          f"the data has {population.num_users:,} users, more than the "
          f"declared population_size={declared:,} the {self.name} "
          "mechanism is calibrated for: declare the true size")
    return declared

  def check_delta(self, privacy, n: int, params=None) -> None:
    """Refuses a delta above ``1/n`` (n: the declared size, else the
    data's), the target's or, with ``params``, the calibrated parameters',
    unless ``privacy`` opts in
    (:func:`triehh.theory.limits.check_delta_for_n`)."""
    allowed = getattr(privacy, limits.DELTA_OPT_IN, False)
    limits.check_delta_for_n(getattr(privacy, "delta", None), n,
                             allowed=allowed)
    if params is not None:
      limits.check_delta_for_n(getattr(params, "delta", None), n,
                               allowed=allowed,
                               source=f"the {self.name} parameters")

  def check_extras(self, request: Request) -> None:
    """Refuses the extras this mechanism does not take."""
    for name in request.extras:
      if name not in self.extras:
        raise ValueError(f"the {self.name} mechanism runs alone: {name}= "
                         "is for TrieHH (a triehh.Target)")

  def release(self, user_words, privacy,
              request: Request) -> release_lib.Release:
    """Builds the population, calibrates and runs (module docstring)."""
    self.check_extras(request)
    population = self.population(user_words, request)
    n = self.population_size(privacy, population)
    self.check_delta(privacy, n)
    declared = getattr(privacy, "population_size", None) is not None
    params = self.calibrate(privacy, n, Shape.of(population, declared))
    self.check_delta(privacy, n, params)
    return self.run(population, params, request.seed, request.engine,
                    **request.engine_options)


class TargetRunMechanism(BaseMechanism):
  """A mechanism whose engines run its privacy object itself (the
  baselines: ``runner(population, target, seed=...)``), its parameters a
  plan holding that ``target``, its accountant one dp_accounting has no
  event for."""

  def dp_event(self, params):
    """An ``UnsupportedDpEvent``, which accountants refuse to compose: the
    mechanism's accountant is not one of dp_accounting's events."""
    del params
    return dp_event_lib.UnsupportedDpEvent()

  def run(self, population: population_lib.Population, params, rng,
          engine: str, **engine_options) -> release_lib.Release:
    """The engine's runner of this mechanism on ``params.target``."""
    runner = engines.get(engine).runner(self.name)
    return runner(population, params.target, seed=rng, **engine_options)
