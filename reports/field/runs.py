"""The field benchmark's grid, and running the runs not yet recorded.

A :class:`Cell` is a population, a mechanism and an epsilon (delta =
``1/n^2`` of the population's n), run at its seeds. :func:`plan` makes the
grid from :class:`Settings`:

* the English population at each n of ``users``: every mechanism at every
  epsilon of ``epsilons``, but past ``ps_full_grid_users`` users the
  thresholding strategies of partition selection only at
  ``side_epsilons``;
* the English population as word counts at each n of ``count_users``: the
  simulated mechanisms (TrieHH, the noisy trie, two servers) and the
  truncated geometric partition selection at every epsilon;
* the paper's single-word population and the Sentiment140 sample (one word
  and several words per user, when present): every mechanism but the slow
  baselines at ``side_epsilons``; the paper's OOV population (6M users):
  the simulated mechanisms and the truncated geometric partition selection
  at ``side_epsilons``;
* the slow baselines (SFP, IBLT) on the English population at
  ``sfp_users`` and ``iblt_users`` only, at ``side_epsilons``;
* the noisy trie in TensorFlow Federated (central and distributed noise)
  on the English population at ``tff_users`` and ``tff_epsilons``, beside
  the fast noisy trie and the best partition selection strategy there.

The simulated mechanisms run at ``num_seeds`` seeds, partition selection and
the baselines at ``ps_seeds``. :func:`run` appends a JSON line per run to
``<output_dir>/results.jsonl`` as it ends (a refused run with its
reason, :func:`refusal`) and skips the (cell, seed) pairs already there,
so that a second invocation resumes; two at once on one directory share
its cells as two sweeps do, each cell run by one (:func:`run`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable

from reports.field import mechanisms
from reports.field import populations
from triehh.data import datasets as datasets_lib
from triehh.runs import records as records_lib
from triehh.runs import runner as runner_lib

RESULTS = "results.jsonl"


@dataclasses.dataclass(frozen=True)
class Settings:
  """What to run (the defaults are the published report's).

  Attributes:
    users: n of the English population (every mechanism).
    count_users: n of the English population as word counts (simulated
      mechanisms only, at every epsilon).
    large_count_users: more n of the word counts, at ``side_epsilons``.
    sfp_users: n of the English population where SFP runs.
    iblt_users: n of the English population where IBLT runs.
    tff_users: n of the English population where the noisy trie runs in
      TensorFlow Federated.
    tff_epsilons: its epsilons.
    epsilons: the English populations' epsilons.
    side_epsilons: the other populations' epsilons, and the thresholding
      strategies' past ``ps_full_grid_users``.
    moonshot_epsilons: the epsilons of the moonshot ratios (at the largest
      n of ``users``).
    num_seeds: runs per cell of the simulated mechanisms.
    ps_seeds: runs per cell of partition selection.
    seed: the first seed.
    ps_full_grid_users: the most users at which every partition selection
      strategy runs every epsilon.
    others: whether to run the paper's (single-word and OOV) and the
      Sentiment140 populations.
    sample_path: the Sentiment140 sample; None: its populations are left
      out (with a note).
  """

  users: tuple[int, ...] = (10**4, 10**5, 10**6)
  count_users: tuple[int, ...] = (10**7,)
  large_count_users: tuple[int, ...] = (10**8, 10**9)
  sfp_users: tuple[int, ...] = (10**4, 10**5, 10**6)
  iblt_users: tuple[int, ...] = (10**4,)
  tff_users: tuple[int, ...] = (10**3,)
  tff_epsilons: tuple[float, ...] = (4.0,)
  epsilons: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
  side_epsilons: tuple[float, ...] = (1.0, 4.0)
  moonshot_epsilons: tuple[float, ...] = (4.0, 1.0)
  num_seeds: int = 5
  ps_seeds: int = 3
  seed: int = 0
  ps_full_grid_users: int = 10**6
  others: bool = True
  sample_path: str | None = None


@dataclasses.dataclass(frozen=True)
class Cell:
  """One row of the report: a mechanism on a population at one epsilon."""

  population: str
  n: int
  mechanism: str
  epsilon: float
  seeds: tuple[int, ...]

  @property
  def delta(self) -> float:
    return 1.0 / self.n**2

  @property
  def key(self) -> tuple:
    return (self.population, self.n, self.mechanism, float(self.epsilon))


@dataclasses.dataclass
class Plan:
  """The cells, the populations they run on (name and n -> data) and the
  notes the report prints about what is left out."""

  cells: list[Cell]
  data: dict[tuple[str, int], populations.Data]
  notes: list[str]


def record_key(record: dict) -> tuple:
  return (record["population"], record["n"], record["mechanism"],
          float(record["epsilon"]))


def _seeds(settings: Settings, name: str) -> tuple[int, ...]:
  count = settings.num_seeds if name in mechanisms.SIMULATED else (
      settings.ps_seeds)  # partition selection and the slow baselines
  return tuple(range(settings.seed, settings.seed + count))


def _names(settings: Settings, data: populations.Data) -> tuple[str, ...]:
  """The mechanisms that run on ``data``."""
  if data.name in (populations.ENGLISH_COUNTS, populations.PAPER_OOV):
    # Partition selection's best strategy only: drawn from its law by
    # word count (reports.field.mechanisms), no row per user.
    return mechanisms.SIMULATED + mechanisms.PS[:1]
  english = data.name == populations.ENGLISH
  if english and data.n not in settings.users:  # only for TFF's rows
    return ((mechanisms.NOISY_K1,) + tuple(mechanisms.TFF_NOISY)
            + mechanisms.PS[:1])
  slow = {mechanisms.SFP: settings.sfp_users,
          mechanisms.IBLT: settings.iblt_users,
          **{name: settings.tff_users for name in mechanisms.TFF_NOISY}}
  return tuple(name for name in mechanisms.MECHANISMS
               if name not in slow or (english and data.n in slow[name]))


def _cells(settings: Settings, data: populations.Data, names, epsilons
           ) -> list[Cell]:
  out = []
  if data.name == populations.ENGLISH and data.n not in settings.users:
    epsilons = settings.tff_epsilons  # the TFF rows' population
  for name in names:
    for epsilon in epsilons:
      if name in mechanisms.TFF_NOISY and epsilon not in settings.tff_epsilons:
        continue
      if (name in mechanisms.PS[1:] + mechanisms.BASELINES
          and data.name == populations.ENGLISH
          and (data.n > settings.ps_full_grid_users
               or name in mechanisms.BASELINES)
          and epsilon not in settings.side_epsilons):
        continue
      out.append(Cell(data.name, data.n, name, float(epsilon),
                      _seeds(settings, name)))
  return out


def plan(settings: Settings, datasets: datasets_lib.DataCache) -> Plan:
  """The grid of ``settings`` (module docstring); loads its populations."""
  result = Plan([], {}, [])
  todo = [(populations.ENGLISH, n) for n in sorted(
      set(settings.users) | set(settings.tff_users))]
  todo += [(populations.ENGLISH_COUNTS, n) for n in settings.count_users
           + settings.large_count_users]
  if settings.others:
    todo += [(populations.PAPER, populations.PAPER_USERS),
             (populations.PAPER_OOV, populations.PAPER_OOV_USERS)]
    if settings.sample_path is None:
      result.notes.append("The Sentiment140 sample is absent: its rows are "
                          "left out (pass --sentiment140_path).")
    else:
      todo += [(populations.S140_SINGLE, None), (populations.S140_MULTI, None)]
  for name, n in todo:
    data = populations.load(name, n, datasets, settings.sample_path)
    result.data[(name, data.n)] = data
    english = (name == populations.ENGLISH
               or (name == populations.ENGLISH_COUNTS
                   and n in settings.count_users))
    result.cells += _cells(settings, data, _names(settings, data),
                           settings.epsilons if english
                           else settings.side_epsilons)
  counts = settings.count_users + settings.large_count_users
  if counts or settings.others:
    sizes = ", ".join(f"{n:,}" for n in counts)
    where = ([f"the word-count populations ({sizes} users)"]
             if counts else []) + (
                 ["the paper's OOV population (6,000,000 users)"]
                 if settings.others else [])
    result.notes.append(
        f"On {' and '.join(where)} partition selection runs its best "
        "strategy only (truncated geometric), drawn from its law by word "
        "count.")
  if settings.tff_users:
    result.notes.append(
        "The noisy trie runs in TensorFlow Federated on the English "
        f"population at {', '.join(f'{n:,}' for n in settings.tff_users)} "
        f"users only, ε = {', '.join(f'{e:g}' for e in settings.tff_epsilons)}"
        ": seconds a run with central noise, about 40 s with distributed "
        "noise (every client's share rotated and summed in the TFF "
        "simulation), 30 s and 250 s at 10,000 users.")
  result.notes.append(
      "SFP runs on the English population at "
      f"{', '.join(f'{n:,}' for n in settings.sfp_users)} users and IBLT at "
      f"{', '.join(f'{n:,}' for n in settings.iblt_users)} (TensorFlow "
      "Federated, a few seconds a round), at the side epsilons.")
  return result


def refusal(cell: Cell, seed: int, reason: str) -> dict:
  """The record of a run the mechanism refused, with the reason."""
  return {"population": cell.population, "n": cell.n,
          "mechanism": cell.mechanism, "epsilon": cell.epsilon,
          "delta": cell.delta, "seed": seed, "refused": reason}


def recorded(output_dir: str) -> list[dict]:
  """The records of ``<output_dir>/results.jsonl`` (none if absent; an
  unfinished last line left out, :func:`triehh.runs.records.json_lines`).

  Raises:
    ValueError: naming the file and the line of a line that is no record.
  """
  return records_lib.json_lines(os.path.join(output_dir, RESULTS))


def recorded_runs(output_dir: str) -> set[tuple[tuple, int]]:
  """The (cell key, seed) pairs recorded in ``output_dir``."""
  return {(record_key(r), r["seed"]) for r in recorded(output_dir)}


def runs_left(cells: list[Cell], output_dir: str) -> int:
  done = recorded_runs(output_dir)
  return sum((c.key, s) not in done for c in cells for s in c.seeds)


def lock_key(cell: Cell) -> str:
  """The name of the cell's lock (:func:`triehh.runs.runner.cell_lock`)."""
  text = json.dumps(list(cell.key), ensure_ascii=True)
  return "field-" + hashlib.sha256(text.encode()).hexdigest()[:20]


def run(the_plan: Plan, output_dir: str, *,
        log: Callable[[str], None] = lambda text: None,
        ran: list[tuple[Cell, int]] | None = None) -> dict[str, float]:
  """Runs and records the runs of the plan not in ``output_dir``; the
  seconds each mechanism's runs took. ``ran``, if given, is appended the
  ``(cell, seed)`` of each run this call recorded.

  Two invocations on one ``output_dir`` share it as two sweeps do
  (:mod:`triehh.runs.runner`): each cell runs under its lock, its seeds
  recorded read again once the lock is held; a cell another process holds
  is put off, then waited for once every other cell has run. Each record
  is appended as one whole line under the file's lock
  (:func:`triehh.runs.records.append_line`), so no run is recorded twice
  and an unfinished last line (a full disk, a kill) is set aside.
  """
  seconds: dict[str, float] = {}
  path = os.path.join(output_dir, RESULTS)
  ran = [] if ran is None else ran
  put_off = []
  for cell in the_plan.cells:
    if not _run_cell(the_plan, cell, output_dir, path, seconds, log, ran,
                     blocking=False):
      put_off.append(cell)
  for cell in put_off:
    log(f"  {cell_label(cell)}: waiting for the other process running it")
    _run_cell(the_plan, cell, output_dir, path, seconds, log, ran,
              blocking=True)
  return seconds


def cell_label(cell: Cell) -> str:
  return (f"{cell.population} n={cell.n:,} {cell.mechanism} "
          f"eps={cell.epsilon:g}")


def _run_cell(the_plan: Plan, cell: Cell, output_dir: str, path: str,
              seconds: dict[str, float], log, ran: list, *,
              blocking: bool) -> bool:
  """Runs the cell's seeds not recorded, under its lock; False (nothing
  run) when another process holds it and not ``blocking``."""
  fd = runner_lib.cell_lock(output_dir, lock_key(cell), blocking=blocking)
  if fd is None:
    log(f"  {cell_label(cell)}: another process is running it; put off")
    return False
  try:
    done = recorded_runs(output_dir)
    seeds = [s for s in cell.seeds if (cell.key, s) not in done]
    if not seeds:
      return True
    start = time.perf_counter()
    for seed, record in cell_records(the_plan, cell, seeds):
      records_lib.append_line(path, json.dumps(record, sort_keys=True))
      ran.append((cell, seed))
    took = time.perf_counter() - start
    seconds[cell.mechanism] = seconds.get(cell.mechanism, 0.0) + took
    log(f"  {cell_label(cell)}: {len(seeds)} runs, {took:.1f} s")
  finally:
    os.close(fd)
  return True


def cell_records(the_plan: Plan, cell: Cell, seeds):
  """``(seed, record)`` of each of the cell's ``seeds``, run in turn (a
  refused run's record says why, :func:`refusal`). The cell's calibrations
  are made afresh (:func:`reports.field.mechanisms.forget_calibrations`),
  so that its records do not depend on which cells ran before it in this
  process."""
  mechanisms.forget_calibrations()
  data = the_plan.data[(cell.population, cell.n)]
  for seed in seeds:
    try:
      record = mechanisms.run(cell.mechanism, data, cell.epsilon,
                              cell.delta, seed)
    except mechanisms.Refused as err:
      record = refusal(cell, seed, str(err))
    yield seed, record
