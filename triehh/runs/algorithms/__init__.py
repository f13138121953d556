"""The algorithms a sweep runs: one adapter per algorithm, by name.

An adapter (:class:`Algorithm`) is everything the grid
(:mod:`triehh.runs.grid`), the runner (:mod:`triehh.runs.runner`) and the
summaries (:mod:`reports.summary`) need to know of one algorithm:
which of :func:`~triehh.runs.grid.expand`'s keywords it reads and the cells
they give, the ``config`` of a run, the checks before any run, the run, its
record, and the labels naming a cell and a summarised configuration.

:data:`ALGORITHMS` is the table, in the order summaries list the
algorithms (that of :data:`triehh.runs.records.ALGORITHMS`, the built-in
algorithms). Every other mechanism registered in :mod:`triehh.mechanisms`
is swept by the adapter built from its protocol
(:class:`~triehh.runs.algorithms.mechanism.Mechanism`): :func:`get` falls
back to it, and :func:`names` lists it. A mechanism needs an adapter of
its own only to sweep what its protocol does not say (TrieHH's counts,
IBLT's matched batch size): a module here, added to the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets
from triehh.runs import records as records_lib
from triehh.mechanisms import registry as mechanisms
from triehh.runs.algorithms import iblt
from triehh.runs.algorithms import mechanism
from triehh.runs.algorithms import partition_selection
from triehh.runs.algorithms import sfp
from triehh.runs.algorithms import triehh


class Algorithm(Protocol):
  """One algorithm, as sweeps and summaries see it.

  ``cell`` arguments are :class:`triehh.runs.grid.Cell` objects (``config``
  and ``engine_options``); ``config`` is a run's config, the records'
  ``config``.
  """

  # Its name: a record's and a config's "algorithm".
  name: str
  # The keywords of expand() its cells read, with their defaults. Names
  # shared with another algorithm share one value.
  grid_options: Mapping[str, Any]

  def grid_values(self, grid: Mapping[str, Any]
                  ) -> list[tuple[dict, dict]]:
    """``(values, engine_options)`` of its cells on each data set.

    ``grid`` holds expand()'s ``epsilons``, ``deltas`` and every adapter's
    ``grid_options`` (defaults filled in); a cell's config is
    ``config(data, **values)``.
    """

  def config(self, data: Mapping[str, Any], **values: Any) -> dict:
    """A run's config from a data set's options and the flag values."""

  def uses_tensorflow(self, config: Mapping[str, Any]) -> bool:
    """Whether its runs import TensorFlow (worker processes are spawned)."""

  def check(self, cell, population: population_lib.Population,
            seeds: Sequence[int] = (0,)) -> None:
    """Refuses a cell before any run (ValueError, TypeError, MemoryError)."""

  def call(self, population: population_lib.Population,
           config: Mapping[str, Any], seed: int,
           engine_options: Mapping[str, Any] | None = None) -> Any:
    """Runs it on ``population`` as ``config`` says, at ``seed``."""

  def record(self, result: Any, dataset: datasets.Dataset, run: int,
             seed: int, config: Mapping[str, Any],
             engine_options: Mapping[str, Any] | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS, *, config_key: str = ""
             ) -> records_lib.RunRecord:
    """The results.jsonl record of a run, scored at the top ``ks``.

    ``config_key``: ``config``'s key where the caller has it (a sweep's
    cell, :attr:`triehh.runs.grid.Cell.key`); else the record computes it.
    """

  def cell_label_parts(self, config: Mapping[str, Any]) -> list[str]:
    """A cell's label after its algorithm and data (privacy, options)."""

  def label(self, values: Mapping[str, Any]) -> str:
    """One line naming a summarised configuration.

    ``values``: a summary's configuration fields
    (:data:`reports.summary.CONFIG_FIELDS`) over the fields of its
    first record.
    """


ALGORITHMS: dict[str, Algorithm] = {
    adapter.name: adapter
    for adapter in (triehh.ADAPTER, sfp.ADAPTER, iblt.ADAPTER,
                    partition_selection.ADAPTER)}


# The keywords of expand() read by the adapter of the mechanisms without
# an adapter of their own, with their defaults.
MECHANISM_GRID_OPTIONS = mechanism.Mechanism.grid_options


def names() -> list[str]:
  """The algorithms a sweep runs: those of :data:`ALGORITHMS`, then every
  other registered mechanism (:func:`triehh.mechanisms.registry.names`)."""
  return list(ALGORITHMS) + [name for name in mechanisms.names()
                             if name not in ALGORITHMS]


def ranked(name: str) -> bool:
  """Whether algorithm ``name``'s words come ranked (False: a set, whose
  records and summaries carry no precision@K:
  :func:`triehh.core.metrics.set_metrics`); a name no mechanism is
  registered under is taken as ranked."""
  try:
    return bool(getattr(mechanisms.get(name), "ranked", True))
  except ValueError:
    return True


def get(name: str) -> Algorithm:
  """The adapter of algorithm ``name``: its own (:data:`ALGORITHMS`), else
  that of the registered mechanism ``name``
  (:class:`~triehh.runs.algorithms.mechanism.Mechanism`).

  Raises:
    ValueError: for an unknown algorithm.
  """
  if name in ALGORITHMS:
    return ALGORITHMS[name]
  if isinstance(name, str) and name in mechanisms.names():
    return mechanism.Mechanism(name)
  raise ValueError(f"unknown algorithm {name!r}; choose from "
                   f"{', '.join(names())}")
