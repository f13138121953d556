"""Any registered mechanism in a sweep, from its protocol alone.

A mechanism registered in :mod:`triehh.mechanisms` without an adapter of
its own (the noisy trie, one of yours) is swept by :class:`Mechanism`,
built from the mechanism (:class:`~triehh.mechanisms.protocol.
MechanismType`): its privacy object is a frozen dataclass, and a cell's
configuration is that object.

* Cells: the privacy type's ``epsilon`` and ``delta`` fields (those it has)
  take the sweep's epsilons and deltas; its other fields keep their
  defaults, or take the values of ``expand(mechanism_options={name:
  {field: value}})``; ``"engine"`` there names the engine (default: the
  mechanism's). Each cell's privacy object is built, and so checked, when
  the grid is expanded.
* Config: ``{"algorithm": name, "engine": engine, "data": {...}}`` and the
  privacy object's fields beside them, as ``dataclasses.asdict`` gives
  them (tuples as JSON arrays); the object is rebuilt from them with
  ``type(**fields)`` (:func:`privacy_of`, arrays as tuples, objects as
  the dataclass their field's type names: the noisy trie's
  ``UploadBudget``).
* Check: the engine serves the mechanism, and the mechanism calibrates the
  object on the population (``calibrate`` and ``guarantee``).
* Run: :func:`triehh.discover` with the object, on the population.
* Record: the release's guarantee (epsilon, delta, accounting, covers,
  adjacencies, n_source), its words and their metrics, seconds, rounds and
  users sampled (``per_round``), and as ``params`` the JSON object of its
  parameters (``dataclasses.asdict(result.params)``), with the bytes a
  client uploaded in each round and over the run where the release says
  them (the planned noisy trie's ``upload_bytes_per_round``):
  ``upload_bytes_per_round`` and ``upload_bytes_per_run`` there.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import math
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets
from triehh.engines import registry as engines
from triehh.mechanisms import discover as discover_lib
from triehh.mechanisms import protocol
from triehh.mechanisms import registry as mechanisms
from triehh.runs import records as records_lib
from triehh.runs.algorithms import labels

# The keys of a config besides the privacy object's fields.
RESERVED = ("algorithm", "engine", "data")
# The privacy fields that take the sweep's axes.
EPSILON, DELTA = "epsilon", "delta"


def privacy_type(mechanism) -> type:
  """The privacy object a sweep builds for ``mechanism``: the first of its
  ``privacy_types`` that is a dataclass.

  Raises:
    TypeError: if none is (the mechanism cannot be swept).
  """
  for kind in mechanism.privacy_types:
    if dataclasses.is_dataclass(kind):
      names = {f.name for f in dataclasses.fields(kind)}
      clash = names & set(RESERVED)
      if clash:
        raise TypeError(f"{kind.__name__} has field(s) "
                        f"{', '.join(sorted(clash))}, which a sweep's config "
                        "holds for itself")
      return kind
  raise TypeError(f"the {mechanism.name} mechanism has no privacy object "
                  "that is a dataclass: a sweep cannot build its cells")


def _fields(kind: type) -> list[dataclasses.Field]:
  return [f for f in dataclasses.fields(kind) if f.init]


def privacy_fields(privacy) -> dict[str, Any]:
  """The privacy object's fields, ``dataclasses.asdict``-style."""
  fields = dataclasses.asdict(privacy)
  return {f.name: fields[f.name] for f in _fields(type(privacy))}


def _from_json(value):
  """A config value as the privacy object takes it: arrays as tuples."""
  if isinstance(value, list):
    return tuple(_from_json(v) for v in value)
  return value


def _dataclass_of(hint: Any) -> type | None:
  """The dataclass a field's type names (``X`` or ``X | None``), or None."""
  for kind in (hint, *typing.get_args(hint)):
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
      return kind
  return None


def privacy_of(kind: type, config: Mapping[str, Any]):
  """The privacy object of a cell's ``config``: ``kind(**fields)``, its
  fields read from the config (JSON arrays as tuples, a JSON object as the
  dataclass its field's type names)."""
  hints = protocol.privacy_field_types(kind)
  fields = {}
  for f in _fields(kind):
    if f.name not in config:
      continue
    value, nested = config[f.name], _dataclass_of(hints.get(f.name))
    if nested is not None and isinstance(value, Mapping):
      value = privacy_of(nested, value)
    fields[f.name] = _from_json(value)
  return kind(**fields)


def _params_of(result) -> Any:
  """A record's params: the release's parameters as JSON, with its upload
  (:func:`upload_fields`) when it says one."""
  params = jsonable(result.params)
  upload = upload_fields(result)
  if upload and isinstance(params, dict):
    return {**params, **upload}
  return params


def upload_fields(result) -> dict[str, Any]:
  """The bytes a client uploads in each round it takes part in and over
  the run (in expectation: the release's ``upload_bytes``, q times the
  rounds' sum), where the release says them (``upload_bytes_per_round``);
  empty otherwise."""
  per_round = getattr(result, "upload_bytes_per_round", None)
  if per_round is None:
    return {}
  per_round = [int(b) for b in per_round]
  return {"upload_bytes_per_round": per_round,
          "upload_bytes_per_run": int(getattr(result, "upload_bytes",
                                              sum(per_round)))}


def jsonable(value):
  """A mechanism's parameters (or any value) as JSON: dataclasses as
  objects, enums by their value, tuples and sets as arrays, numpy scalars
  as numbers, anything else by its text."""
  if dataclasses.is_dataclass(value) and not isinstance(value, type):
    return {f.name: jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)}
  if isinstance(value, enum.Enum):
    return jsonable(value.value)
  if value is None or isinstance(value, (bool, int, float, str)):
    return value
  if isinstance(value, Mapping):
    return {str(k): jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [jsonable(v) for v in value]
  if isinstance(value, (set, frozenset)):
    return sorted((jsonable(v) for v in value), key=repr)
  if hasattr(value, "item"):  # numpy scalars
    return jsonable(value.item())
  return str(value)


def guarantee_fields(guarantee) -> dict[str, Any]:
  """A record's fields of a release's guarantee
  (:class:`~triehh.theory.mechanism.Guarantee`) but epsilon and delta:
  its accounting, what it covers, its adjacencies and where its n came
  from."""
  return dict(
      accounting=getattr(guarantee, "accounting", None),
      covers=getattr(guarantee, "covers", None),
      adjacency=", ".join(
          a.value for a in getattr(guarantee, "adjacencies", ())),
      n_source=getattr(guarantee, "n_source", None) or None)


class Mechanism:
  """The adapter of one registered mechanism
  (:class:`triehh.runs.algorithms.Algorithm`; module docstring)."""

  # mechanism_options: name -> {privacy field: value, "engine": engine}
  # for each registered mechanism swept by this adapter.
  grid_options = {"mechanism_options": None}

  def __init__(self, name: str):
    self.name = name
    self.kind = privacy_type(self.mechanism)

  @property
  def mechanism(self):
    """The registered mechanism (looked up each time: a test may register
    another of the same name)."""
    return mechanisms.get(self.name)

  def _options(self, grid: Mapping[str, Any]) -> dict[str, Any]:
    given = grid.get("mechanism_options") or {}
    options = dict(given.get(self.name) or {})
    known = {f.name for f in _fields(self.kind)} | {"engine"}
    unknown = sorted(set(options) - known)
    if unknown:
      raise ValueError(f"mechanism_options[{self.name!r}]: "
                       f"{', '.join(unknown)} is no field of "
                       f"{self.kind.__name__} (nor the engine)")
    return options

  def grid_values(self, grid: Mapping[str, Any]) -> list[tuple[dict, dict]]:
    options = self._options(grid)
    engine = options.pop("engine", self.mechanism.default_engine)
    names = {f.name for f in _fields(self.kind)}
    axes = [[(EPSILON, e) for e in grid["epsilons"]] if EPSILON in names
            else [()],
            [(DELTA, d) for d in grid["deltas"]] if DELTA in names
            else [()]]
    out = []
    for point in itertools.product(*axes):
      fields = dict(options, **dict(p for p in point if p))
      out.append((dict(privacy=self.kind(**fields), engine=engine), {}))
    return out

  def config(self, data: Mapping[str, Any], *, privacy,
             engine: str | None = None) -> dict:
    """A run's config: the algorithm, its engine, the data set's options
    and the privacy object's fields."""
    if not isinstance(privacy, self.kind):
      raise TypeError(f"the {self.name} mechanism's cells take a "
                      f"{self.kind.__name__}, got {type(privacy).__name__}")
    engine = self.mechanism.default_engine if engine is None else engine
    return {"algorithm": self.name, "engine": engine, "data": dict(data),
            **privacy_fields(privacy)}

  def privacy(self, config: Mapping[str, Any]):
    """The privacy object of a cell's ``config`` (:func:`privacy_of`)."""
    return privacy_of(self.kind, config)

  def uses_tensorflow(self, config: Mapping[str, Any]) -> bool:
    return engines.uses_tensorflow(config["engine"])

  def check(self, cell, population: population_lib.Population,
            seeds: Sequence[int] = (0,)) -> None:
    """The engine serves the mechanism; its privacy object is rebuilt and
    calibrated on the population (``calibrate``, ``guarantee``)."""
    config = cell.config
    engine = config["engine"]
    if engine not in engines.engines_for(self.name):
      raise ValueError(f"engine {engine!r} does not run the {self.name} "
                       f"mechanism; these do: "
                       f"{', '.join(engines.engines_for(self.name))}")
    mechanism, privacy = self.mechanism, self.privacy(config)
    request = protocol.Request(max_length=population.max_length,
                               seed=seeds[0] if seeds else 0, engine=engine)
    if hasattr(mechanism, "population"):
      population = mechanism.population(population, request)
    n = (mechanism.population_size(privacy, population)
         if hasattr(mechanism, "population_size") else population.num_users)
    declared = getattr(privacy, "population_size", None) is not None
    params = mechanism.calibrate(privacy, n,
                                 protocol.Shape.of(population, declared))
    mechanism.guarantee(params)

  def call(self, population: population_lib.Population,
           config: Mapping[str, Any], seed: int,
           engine_options: Mapping[str, Any] | None = None):
    """:func:`triehh.discover` of the cell's privacy object on
    ``population`` at ``seed``."""
    return discover_lib.discover(
        population, self.privacy(config), max_length=population.max_length,
        seed=seed, engine=config["engine"], **dict(engine_options or {}))

  def record(self, result, dataset: datasets.Dataset, run: int, seed: int,
             config: Mapping[str, Any],
             engine_options: Mapping[str, Any] | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS, *, config_key: str = ""
             ) -> records_lib.RunRecord:
    """The record of a release (module docstring)."""
    del engine_options  # they do not change the result
    words = list(result.words)
    guarantee = result.guarantee
    epsilon = getattr(guarantee, "epsilon", math.inf)
    adjacencies = tuple(getattr(guarantee, "adjacencies", ()))
    has_guarantee = bool(adjacencies) and math.isfinite(epsilon)
    sampled = [r.sampled for r in result.per_round if r.sampled is not None]
    return records_lib.RunRecord(
        algorithm=self.name, engine=config["engine"], dataset=dataset.name,
        setting=dataset.setting, n_users=dataset.population.num_users,
        run=run, seed=seed, epsilon=epsilon,
        delta=getattr(guarantee, "delta", None), has_guarantee=has_guarantee,
        target_epsilon=config.get(EPSILON),
        target_delta=(getattr(guarantee, "delta", None)
                      if config.get(DELTA) is None else config[DELTA]),
        **guarantee_fields(guarantee), discovered=words, reported_counts=[],
        metrics=metrics.precision_recall_f1(words, dataset.truth, ks),
        seconds=result.seconds, rounds=len(result.per_round),
        num_participants=sum(sampled) if sampled else None,
        params=_params_of(result), config=dict(config),
        config_key=config_key)

  def _options_text(self, config: Mapping[str, Any]) -> list[str]:
    """``field=value`` of the privacy fields not at their defaults, but
    epsilon and delta."""
    parts = []
    for f in _fields(self.kind):
      if f.name in (EPSILON, DELTA) or f.name not in config:
        continue
      default = (f.default if f.default is not dataclasses.MISSING else
                 f.default_factory() if f.default_factory
                 is not dataclasses.MISSING else dataclasses.MISSING)
      if jsonable(default) != jsonable(config[f.name]):
        parts.append(f"{f.name}={config[f.name]}")
    return parts

  def cell_label_parts(self, config: Mapping[str, Any]) -> list[str]:
    return labels.privacy_parts(config) + self._options_text(config)

  def label(self, values: Mapping[str, Any]) -> str:
    parts = [f"{self.name} ({values['engine']} engine)"
             if values.get("engine") else self.name,
             f"{values['dataset']} {values['setting']}",
             f"n={values['n_users']:,}"]
    eps = values.get("epsilon")
    parts.append(f"epsilon={eps:g}" if eps is not None else "epsilon=?")
    if values.get("delta") is not None:
      parts.append(f"delta={values['delta']:.3g}")
    config = values.get("config")
    if isinstance(config, Mapping):
      parts += self._options_text(config)
    return ", ".join(parts)
