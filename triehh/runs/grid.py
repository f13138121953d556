"""The cells of an experiment grid, and their checks before any run.

A *cell* is one configuration (algorithm, engine, data set and setting,
privacy target, SFP's T, IBLT's k-anonymity and every other option; a
registered mechanism's privacy object): its
``config`` is the ``config`` of the :class:`triehh.runs.records.RunRecord`
its runs write, and its ``key`` the record's ``config_key``. What a cell of
each algorithm holds, how it is checked and run, is that algorithm's
adapter's (:mod:`triehh.runs.algorithms`); :mod:`triehh.runs.runner` runs
the cells.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib
from triehh.data import synthetic
from triehh.runs import algorithms as algorithms_lib
from triehh.runs import records as records_lib

DEFAULT_DATA = {"dataset": "default", "setting": "single",
                "max_length": population_lib.DEFAULT_MAX_LENGTH,
                "num_users": synthetic.DEFAULT_NUM_USERS}


@dataclasses.dataclass(frozen=True)
class Cell:
  """One configuration of a sweep.

  ``config`` is the records' ``config``; ``engine_options`` are the TFF
  engine's options that do not change the result (workers, timeouts), as
  ``triehh.discover`` takes them.
  """

  config: Mapping[str, Any]
  engine_options: Mapping[str, Any] = dataclasses.field(
      default_factory=dict)

  @property
  def key(self) -> str:
    return records_lib.config_key(self.config)

  @property
  def algorithm(self) -> str:
    return self.config["algorithm"]

  @property
  def adapter(self) -> algorithms_lib.Algorithm:
    return algorithms_lib.get(self.algorithm)

  @property
  def uses_tensorflow(self) -> bool:
    return self.adapter.uses_tensorflow(self.config)

  @property
  def label(self) -> str:
    """A short description: algorithm, engine, data, then the adapter's
    parts (epsilon, delta, T, k, ...)."""
    c = self.config
    data = c["data"]
    source = data["dataset"]
    if data.get("data_path"):
      source += f":{os.path.basename(data['data_path'])}"
    parts = [c["algorithm"] + (f"/{c['engine']}" if "engine" in c else ""),
             f"{source}/{data['setting']}"]
    parts += self.adapter.cell_label_parts(c)
    return " ".join(parts)


def _grid(epsilons: Sequence[float], deltas: Sequence[float | None],
          options: Mapping[str, Any]) -> dict[str, Any]:
  """expand()'s axes and options, every adapter's defaults filled in."""
  defaults: dict[str, Any] = {}
  for declared in [adapter.grid_options
                   for adapter in algorithms_lib.ALGORITHMS.values()] + [
                       algorithms_lib.MECHANISM_GRID_OPTIONS]:
    for name, value in declared.items():
      defaults.setdefault(name, value)
  for name in options:
    if name not in defaults:
      raise TypeError(f"expand() got an unexpected keyword argument "
                      f"{name!r}")
  return dict(defaults, **options, epsilons=epsilons, deltas=deltas)


def expand(*, algorithms: Sequence[str] = ("triehh",),
           data: Sequence[Mapping[str, Any]] = (DEFAULT_DATA,),
           epsilons: Sequence[float] = (4.0,),
           deltas: Sequence[float | None] = (None,),
           **options: Any) -> list[Cell]:
  """The cells of a grid, data set by data set.

  Args:
    algorithms: names of :func:`triehh.runs.algorithms.names`
      ("triehh", "sfp", "iblt", "partition_selection", or any registered
      mechanism, swept by its protocol:
      :mod:`triehh.runs.algorithms.mechanism`).
    data: data-set options, one per data set and setting.
    epsilons, deltas: central privacy targets (delta None: 1/n^2).
    **options: the algorithms' own keywords, each declared with its default
      and documented by an adapter (``grid_options``), e.g. TrieHH's
      ``engines`` and ``theta``, SFP's ``top_ts``, IBLT's ``k_anonymities``,
      a registered mechanism's ``mechanism_options={name: {field:
      value}}``. Each built-in algorithm's values are checked whether or
      not it is in ``algorithms``; a mechanism's options name a registered
      mechanism.

  Raises:
    ValueError: for an unknown algorithm or engine, or an empty grid.
    TypeError: for a keyword no algorithm declares.
  """
  grid = _grid(epsilons, deltas, options)
  adapters = [algorithms_lib.get(name) for name in algorithms]
  for name in grid["mechanism_options"] or {}:
    algorithms_lib.get(name)  # a registered mechanism
  # Every algorithm's values, so that a bad one is refused in any grid.
  values = {name: adapter.grid_values(grid)
            for name, adapter in algorithms_lib.ALGORITHMS.items()}
  values.update((adapter.name, adapter.grid_values(grid))
                for adapter in adapters if adapter.name not in values)
  cells = []
  for data_options in data:
    for adapter in adapters:
      for cell_values, engine_options in values[adapter.name]:
        cells.append(Cell(adapter.config(data_options, **cell_values),
                          engine_options))
  if not cells:
    raise ValueError("the sweep has no cells")
  return cells


def check_cell(cell: Cell, population: population_lib.Population,
               seeds: Sequence[int] = (0,)) -> None:
  """Checks ``cell``'s parameters on its population without running it
  (its adapter's ``check``; IBLT cells at each of ``seeds``).

  Raises:
    ValueError, TypeError: what ``discover``, ``sfp_discover`` or
      ``iblt_discover`` would raise on a bad option.
    MemoryError: an IBLT round that would not fit in memory.
  """
  cell.adapter.check(cell, population, seeds)


def check_cells(cells: Iterable[Cell], datasets: datasets_lib.DataCache,
                seeds: Sequence[int] = (0,),
                on_checked: Callable[[int], None] = lambda checked: None
                ) -> None:
  """Checks every cell on its data set before any cell runs.

  Each data set is loaded once (through ``datasets``, which keeps it for
  the runs); IBLT cells are checked at each of ``seeds`` (their rounds, and
  so the capacity and memory they need, depend on the seed). After each
  cell, ``on_checked`` gets the number checked so far (a grid of many cells,
  each calibrated, takes a while).

  Raises:
    ValueError: ``cell [<label>]: <problem>`` for the first bad cell.
  """
  for checked, cell in enumerate(cells, 1):
    population = datasets.get(cell.config["data"]).population
    try:
      check_cell(cell, population, seeds)
    except (ValueError, TypeError, MemoryError) as err:
      raise ValueError(f"cell [{cell.label}]: {err}") from err
    on_checked(checked)
