"""Running the cells of a sweep: plans, per-cell locks, resume, workers.

A *run* is a (cell, seed) pair (:mod:`triehh.runs.grid`); a sweep of
``num_runs`` runs from ``seed`` gives run ``i`` the seed ``seed + i``, as
``experiments.run_triehh`` and ``experiments.run_sfp`` do, and writes the
same record they would (``seconds`` aside): each cell's algorithm runs and
records it through its adapter (:mod:`triehh.runs.algorithms`).

Resuming. :func:`plan` leaves out the (key, seed) pairs already recorded in
``results.jsonl`` (:func:`triehh.runs.records.completed`). Records are appended
by :class:`triehh.runs.records.ResultsWriter`, one whole line per finished run,
so a sweep killed at any moment loses only the run in progress.

Two sweeps on one directory. Before running a cell, :func:`run_cell` takes
a non-blocking ``fcntl.flock`` on ``<output_dir>/.sweep-locks/<key>.lock``
and, holding it, reads again which of the cell's seeds are recorded (the
other sweep may have run them since the plan was made): the lines appended
to ``results.jsonl`` since the last cell (:class:`~triehh.runs.records.
CompletedRuns`; all of it after a file was replaced or cut). A cell locked by
another process is put off: :func:`run_plan` runs every other cell first,
then comes back to it and waits for the lock, by which time the other sweep
has usually finished it. So two sweeps never run the same cell at the same
time and never write a run twice. Lock files are left in place (removing
them would race with a sweep opening them).

Data. Each cell's data set comes from a
:class:`triehh.data.datasets.DataCache`, which loads it once per process
and encodes its population once.

Processes. ``run_plan(..., workers=N)`` runs cells in ``N`` processes
(``concurrent.futures.ProcessPoolExecutor``; 'fork' for cells without
TensorFlow, 'spawn' when a cell uses it, TFF-engine and IBLT cells, or when
this process has already loaded TensorFlow or gRPC), each
writing through its own
``ResultsWriter``; progress comes back as :class:`Event` objects (through a
``multiprocessing`` manager process). Those processes die with the one that
started them (:func:`triehh.core.processes.die_with_parent`), even killed
with SIGKILL. :func:`worker_limit` says how many the machine holds: one per
cell to run, per CPU and per worker's memory at most. Stopped early
(Ctrl-C, or a cell that fails), :func:`run_plan`
takes the results file's lock (:func:`triehh.runs.records.write_lock`), so
that no worker is in the middle of a line, stops the workers and waits for
them, then lets the exception through.

Counting. Given a :class:`triehh.runs.records.LineCount`, :func:`run_plan`
adds to it every line written, in every process, even when stopped early:
the number of lines the file gained.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import multiprocessing
from multiprocessing import managers
import os
import queue
import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from triehh.core import files
from triehh.core import memory
from triehh.core import metrics
from triehh.core import processes
from triehh.data import datasets as datasets_lib
from triehh.runs import grid
from triehh.runs import records as records_lib

LOCK_DIR = ".sweep-locks"


# ---- planning ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Task:
  """A cell and the seeds of its runs; ``first_seed`` is run 0's seed."""

  cell: grid.Cell
  seeds: tuple[int, ...]
  first_seed: int


def seeds_of(seed: int, num_runs: int) -> tuple[int, ...]:
  """The seeds of ``num_runs`` runs from ``seed`` (run i has seed + i)."""
  return tuple(range(seed, seed + num_runs))


# Peak bytes per planned run (one cell, one seed), measured with tracemalloc
# over 10^6 runs: the seeds of plan()'s tasks at its peak (48: a tuple slot
# and an int object, and the generator building it), the seeds checked
# before any run (seeds_of, 36) and a cell's seeds left when it starts (8),
# rounded up.
PLAN_BYTES_PER_RUN = 100


def check_plan_fits(num_cells: int, num_runs: int) -> None:
  """Refuses a plan of ``num_runs`` runs of each of ``num_cells`` cells
  whose seeds would not fit in memory, before it is built.

  Raises:
    memory.InsufficientMemoryError: with the estimate and the largest
      ``num_runs`` that fits.
  """
  per_run = PLAN_BYTES_PER_RUN * max(num_cells, 1)

  def hint(available: int) -> str:
    fit = memory.most_that_fit(per_run, available)
    return (f"use num_runs <= {fit:,} (or fewer cells); the rest can run "
            "later from the next seed")

  memory.check_fits(
      f"num_runs={num_runs:,} runs of each of {num_cells:,} "
      f"cell{'s' if num_cells != 1 else ''} "
      f"({PLAN_BYTES_PER_RUN} bytes of plan per run)", per_run * num_runs,
      hint)


def plan(cells: Iterable[grid.Cell], seed: int, num_runs: int,
         done: set[tuple[str, int]] = frozenset()) -> list[Task]:
  """The runs left: one task per cell with seeds not in ``done``.

  ``done`` holds recorded ``(config_key, seed)`` pairs
  (:func:`triehh.runs.records.completed`); fully recorded cells are left out.

  Raises:
    memory.InsufficientMemoryError: for a plan that would not fit in memory
      (:func:`check_plan_fits`), before any of it is built.
  """
  cells = list(cells)
  check_plan_fits(len(cells), num_runs)
  tasks = []
  for cell in cells:
    key = cell.key
    left = tuple(s for s in seeds_of(seed, num_runs) if (key, s) not in done)
    if left:
      tasks.append(Task(cell, left, seed))
  return tasks


# ---- running ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Event:
  """Progress of a sweep.

  ``kind``: "start" (a cell begins; ``runs`` = its runs left), "run" (one
  run written; ``seed``, ``seconds``), "done" (the cell's runs are
  recorded; ``runs`` = how many this process wrote), "locked" (another
  process holds the cell; it is put off) or "wait" (waiting for that lock).
  """

  kind: str
  key: str
  label: str
  runs: int = 0
  seed: int | None = None
  seconds: float = 0.0
  pid: int = 0


def lock_path(output_dir: str, key: str) -> str:
  return os.path.join(output_dir, LOCK_DIR, f"{key}.lock")


def cell_lock(output_dir: str, key: str, blocking: bool) -> int | None:
  """An fd holding the lock of the cell ``key`` (a file name's worth of
  text), or None if another process holds it (not ``blocking``); closing
  the fd releases it. The sweeps' and the field benchmark's."""
  os.makedirs(os.path.join(output_dir, LOCK_DIR), exist_ok=True)
  return files.lock(lock_path(output_dir, key), blocking)


# Records are synced to disk when the last sync is this old, and when the
# plan ends in this process (one writer for all its cells) or a worker's cell
# ends (records.ResultsWriter). Each line is written whole as its run ends,
# so a killed sweep loses none; the sync guards against a crash of the
# machine, which loses at most this many seconds of runs.
SYNC_SECONDS = 2.0


def run_cell(task: Task, output_dir: str, *,
             datasets: datasets_lib.DataCache,
             ks: Sequence[int] = metrics.DEFAULT_KS, blocking: bool = False,
             on_event: Callable[[Event], None] = lambda event: None,
             written: records_lib.LineCount | None = None,
             writer: records_lib.ResultsWriter | None = None,
             recorded: records_lib.CompletedRuns | None = None) -> bool:
  """Runs the task's seeds not yet recorded, under the cell's lock.

  Returns False, having run nothing, when ``blocking`` is false and another
  process holds the cell's lock; True once every seed is recorded. Each
  line written is added to ``written``.

  ``writer``: the plan's writer (its lines are synced every
  ``SYNC_SECONDS`` and when the plan ends), else one of the cell's own,
  synced when the cell ends. ``recorded``: the results file's recorded
  runs, read since the last cell (else read whole).
  """
  cell = task.cell
  key, label = cell.key, cell.label
  fd = cell_lock(output_dir, key, blocking=False)
  if fd is None:
    on_event(Event("locked", key, label, pid=os.getpid()))
    if not blocking:
      return False
    on_event(Event("wait", key, label, pid=os.getpid()))
    fd = cell_lock(output_dir, key, blocking=True)
  try:
    done = (recorded.update() if recorded is not None else
            records_lib.completed(records_lib.results_path(output_dir)))
    seeds = [s for s in task.seeds if (key, s) not in done]
    on_event(Event("start", key, label, runs=len(seeds), pid=os.getpid()))
    dataset = datasets.get(cell.config["data"]) if seeds else None
    with contextlib.ExitStack() as stack:
      if writer is None:
        writer = stack.enter_context(records_lib.ResultsWriter(
            output_dir, count=written, sync_seconds=SYNC_SECONDS))
      before = writer.written
      for seed in seeds:
        record = run_one(cell, dataset, seed, seed - task.first_seed, ks,
                         key=key)
        writer.write(record)
        on_event(Event("run", key, label, seed=seed, seconds=record.seconds,
                       pid=os.getpid()))
    on_event(Event("done", key, label, runs=writer.written - before,
                   pid=os.getpid()))
  finally:
    os.close(fd)
  return True


def run_one(cell: grid.Cell, dataset: datasets_lib.Dataset, seed: int,
            run: int, ks: Sequence[int] = metrics.DEFAULT_KS, *,
            key: str = "") -> records_lib.RunRecord:
  """The record of one run of ``cell`` on ``dataset`` at ``seed``;
  ``key``: ``cell.key`` where the caller has it (else the record computes
  it)."""
  adapter = cell.adapter
  result = adapter.call(dataset.population, cell.config, seed,
                        cell.engine_options)
  return adapter.record(result, dataset, run, seed, cell.config,
                        cell.engine_options, ks, config_key=key)


# Per-process state of a worker of run_plan.
_WORKER: dict[str, Any] = {}
# How long stopped workers get to end before SIGKILL.
STOP_SECONDS = 10.0


def _init_worker(parent_pid: int, events, cache_dir: str | None,
                 written: records_lib.LineCount) -> None:
  processes.die_with_parent(parent_pid)
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the sweep
  _WORKER.update(events=events, datasets=datasets_lib.DataCache(cache_dir),
                 written=written)


def _worker_task(task: Task, output_dir: str, ks: Sequence[int],
                 blocking: bool) -> bool:
  recorded = _WORKER.setdefault("recorded", {})
  if output_dir not in recorded:
    recorded[output_dir] = records_lib.CompletedRuns(
        records_lib.results_path(output_dir))
  return run_cell(task, output_dir, datasets=_WORKER["datasets"], ks=ks,
                  blocking=blocking, on_event=_WORKER["events"].put,
                  written=_WORKER["written"], recorded=recorded[output_dir])


def run_plan(tasks: Sequence[Task], output_dir: str, *, workers: int = 1,
             cache_dir: str | None = None,
             ks: Sequence[int] = metrics.DEFAULT_KS,
             on_event: Callable[[Event], None] = lambda event: None,
             datasets: datasets_lib.DataCache | None = None,
             written: records_lib.LineCount | None = None) -> None:
  """Runs ``tasks``, cells locked by another sweep last (see module doc).

  With ``workers`` > 1, cells run in that many processes and their events
  are passed to ``on_event`` in this one. Every line written is added to
  ``written``, also when an exception (Ctrl-C) stops the plan.
  """
  if workers < 1:
    raise ValueError(f"workers must be >= 1, got {workers}")
  if workers == 1 or len(tasks) <= 1:
    if tasks:
      _run_here(tasks, output_dir, datasets or datasets_lib.DataCache(
          cache_dir), ks, on_event, written)
    return
  context = multiprocessing.get_context(_start_method(tasks))
  shared = records_lib.LineCount(context)
  try:
    _run_in_processes(tasks, output_dir, workers, cache_dir, ks, on_event,
                      context, shared)
  finally:
    if written is not None:
      written.add(shared.value)


def _run_here(tasks, output_dir, datasets, ks, on_event, written) -> None:
  """The tasks in this process, through one writer: its lines are synced
  every ``SYNC_SECONDS`` and at the end (also when stopped early)."""
  recorded = records_lib.CompletedRuns(records_lib.results_path(output_dir))
  with records_lib.ResultsWriter(output_dir, count=written,
                                 sync_seconds=SYNC_SECONDS) as writer:
    options = dict(datasets=datasets, ks=ks, on_event=on_event,
                   written=written, writer=writer, recorded=recorded)
    put_off = [t for t in tasks if not run_cell(t, output_dir, **options)]
    for task in put_off:
      run_cell(task, output_dir, blocking=True, **options)


# Memory a worker process of run_plan holds, on the safe side. A forked
# worker running the default data's cells measured 92 MiB resident (55 MiB
# of it its own), and 43 workers of a sweep on 2 CPUs held about 14 GB
# (330 MiB each); a spawned worker that loads TensorFlow and the TFF engine
# (TFF-engine and IBLT cells) is 656 MiB resident before any run.
WORKER_BYTES = 330 * 2**20
TENSORFLOW_WORKER_BYTES = 1024 * 2**20


@dataclasses.dataclass(frozen=True)
class WorkerLimit:
  """How many processes run a plan: the workers asked for, capped at the
  cells to run, the CPUs this process may use and the workers that fit in
  the available memory (``fit``; None when it is unknown)."""

  workers: int
  requested: int
  cpus: int
  fit: int | None
  bytes_each: int

  @property
  def capped(self) -> bool:
    """Whether the CPUs or the memory allow fewer than requested (the cells
    to run are no cap: a worker per cell at most goes without saying)."""
    return self.workers < self.requested and (
        self.workers == self.cpus or self.workers == self.fit)

  @property
  def why(self) -> str:
    """What caps the workers, e.g. ``2 CPUs``."""
    parts = []
    if self.workers == self.cpus:
      parts.append(f"{self.cpus} CPU{'s' if self.cpus != 1 else ''}")
    if self.workers == self.fit:
      parts.append(f"memory for {self.fit} workers of about "
                   f"{memory.format_bytes(self.bytes_each)} each")
    return " and ".join(parts)


def cpu_count() -> int:
  """The CPUs this process may run on (its affinity), at least 1."""
  try:
    return max(1, len(os.sched_getaffinity(0)))
  except (AttributeError, OSError):
    return max(1, os.cpu_count() or 1)


def worker_limit(tasks: Sequence[Task], workers: int) -> WorkerLimit:
  """How many of ``workers`` processes :func:`run_plan` should start for
  ``tasks``: at most one per task, per CPU (:func:`cpu_count`) and per
  worker's memory (``WORKER_BYTES``, or ``TENSORFLOW_WORKER_BYTES`` when a
  cell uses TensorFlow) in the available memory; at least 1."""
  if workers < 1:
    raise ValueError(f"workers must be >= 1, got {workers}")
  cpus = cpu_count()
  each = (TENSORFLOW_WORKER_BYTES
          if any(t.cell.uses_tensorflow for t in tasks) else WORKER_BYTES)
  available = memory.available_bytes()
  fit = None if available is None else max(
      1, memory.most_that_fit(each, available))
  allowed = min(workers, max(1, len(tasks)), cpus, fit or workers)
  return WorkerLimit(workers=allowed, requested=workers, cpus=cpus, fit=fit,
                     bytes_each=each)


# Libraries whose threads make a forked child unsafe once they are loaded
# (a fork copies one thread; gRPC's and TensorFlow's state is left broken).
_FORK_UNSAFE = ("tensorflow", "grpc")


def _start_method(tasks: Sequence[Task]) -> str:
  """'fork' (fast: the parent's imports and caches are shared), unless a
  cell uses TensorFlow or this process has already loaded a library that
  does not survive a fork (a notebook that ran the TFF engine): 'spawn'."""
  if any(t.cell.uses_tensorflow for t in tasks) or any(
      name in sys.modules for name in _FORK_UNSAFE):
    return "spawn"
  return "fork"


def _run_in_processes(tasks, output_dir, workers, cache_dir, ks, on_event,
                      context, written):
  parent_pid = os.getpid()
  manager = managers.SyncManager(ctx=context)
  manager.start(processes.die_with_parent, (parent_pid,))
  with manager:
    events = manager.Queue()
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)), mp_context=context,
        initializer=_init_worker,
        initargs=(parent_pid, events, cache_dir, written))
    try:
      pending = {pool.submit(_worker_task, t, output_dir, ks, False): t
                 for t in tasks}
      while pending:
        finished, _ = concurrent.futures.wait(
            pending, timeout=0.2,
            return_when=concurrent.futures.FIRST_COMPLETED)
        _drain(events, on_event)
        for future in finished:
          task = pending.pop(future)
          if not future.result():  # locked elsewhere: come back to it
            pending[pool.submit(_worker_task, task, output_dir, ks,
                                True)] = task
      _drain(events, on_event)
      pool.shutdown()
    except BaseException:
      _stop(pool, output_dir)
      raise


def _stop(pool: concurrent.futures.ProcessPoolExecutor,
          output_dir: str) -> None:
  """Stops the pool's workers, none of them in the middle of a line."""
  workers = list((getattr(pool, "_processes", None) or {}).values())
  with records_lib.write_lock(output_dir):
    for process in workers:
      process.terminate()
    for process in workers:
      process.join(STOP_SECONDS)
      if process.is_alive():
        process.kill()
        process.join()
  pool.shutdown(wait=False, cancel_futures=True)


def _drain(events, on_event) -> None:
  while True:
    try:
      event = events.get_nowait()
    except queue.Empty:
      return
    on_event(event)
