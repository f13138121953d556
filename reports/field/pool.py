"""The field benchmark's grid in worker processes, one writer.

:func:`run` runs the cells of a plan (:func:`reports.field.runs.plan`) in
``workers`` processes forked from this one (they share its populations).
This process alone writes ``results.jsonl``: a worker sends each run's
record back as the run ends, and this process appends it as one whole line
under the file's lock (:func:`triehh.runs.records.append_line`), so the
file resumes as with one process (a kill loses only the runs in progress).
Each cell is run by one worker, its seeds in turn, under the cell's lock
held by this process (:func:`triehh.runs.runner.cell_lock`), so two
invocations on one output directory still share its cells, each run
recorded once; a cell another process holds is put off and come back to.
A run's record depends on its cell and seed only (a cell's calibrations
are its own, :func:`reports.field.runs.cell_records`), not on which worker
ran it or what ran before. The slowest cells (TensorFlow Federated's, the
slow baselines) are handed out first, so that the rest fill the other
workers meanwhile.

Workers are forked, so this process must not have loaded TensorFlow or
gRPC (a fork copies one thread of theirs, and leaves them broken): then
the grid runs here, in one process, and :func:`run` says so.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import signal
import sys
import time
import traceback
from collections.abc import Callable

from reports.field import mechanisms
from reports.field import runs as runs_lib
from triehh.core import processes
from triehh.runs import records as records_lib
from triehh.runs import runner as runner_lib

# The default number of workers: one per CPU, at most this many.
MAX_DEFAULT_WORKERS = 4
# Cells handed out first, slowest first (a cell's seeds run in one worker):
# the noisy trie in TFF with distributed noise (about a minute a run at
# 1,000 users), IBLT and the noisy trie in TFF with central noise, SFP.
FIRST = (mechanisms.TFF_DISTRIBUTED, mechanisms.IBLT, mechanisms.TFF_CENTRAL,
         mechanisms.SFP)
# Libraries whose threads make a forked child unsafe once loaded.
_FORK_UNSAFE = ("tensorflow", "grpc")
# Seconds between checks that the workers are alive.
POLL_SECONDS = 0.5


def default_workers() -> int:
  """One worker per CPU this process may use, at most
  ``MAX_DEFAULT_WORKERS``."""
  return min(runner_lib.cpu_count(), MAX_DEFAULT_WORKERS)


def order(cells: list[runs_lib.Cell]) -> list[int]:
  """The cells' indices in the order they are handed out: those of
  :data:`FIRST` first (in its order), then the plan's order."""
  rank = {name: i for i, name in enumerate(FIRST)}
  return sorted(range(len(cells)),
                key=lambda i: (rank.get(cells[i].mechanism, len(FIRST)), i))


def run(the_plan: runs_lib.Plan, output_dir: str, *, workers: int,
        log: Callable[[str], None] = lambda text: None,
        ran: list | None = None) -> dict[str, float]:
  """Runs and records the plan's runs not in ``output_dir`` in ``workers``
  processes (module docstring); the seconds each mechanism's runs took
  (summed over the workers). ``ran``, if given, is appended the ``(cell,
  seed)`` of each run recorded.

  Raises:
    ValueError: ``workers`` below 1.
    RuntimeError: a worker's run raised (its traceback quoted), or a
      worker ended before its cell did.
  """
  if isinstance(workers, bool) or not isinstance(workers, int):
    raise TypeError(f"workers must be an integer, got {workers!r}")
  if workers < 1:
    raise ValueError(f"workers must be >= 1, got {workers}")
  ran = [] if ran is None else ran
  unsafe = [name for name in _FORK_UNSAFE if name in sys.modules]
  if workers == 1 or unsafe:
    if workers > 1:
      log(f"  one process: {', '.join(unsafe)} is loaded here, and a "
          "forked worker would inherit it broken")
    return runs_lib.run(the_plan, output_dir, log=log, ran=ran)
  return _Pool(the_plan, output_dir, workers, log, ran).run()


class _Pool:
  """The parent's side: hands out cells, writes the records."""

  def __init__(self, the_plan, output_dir, workers, log, ran):
    self.plan, self.output_dir, self.log, self.ran = (
        the_plan, output_dir, log, ran)
    self.path = os.path.join(output_dir, runs_lib.RESULTS)
    context = multiprocessing.get_context("fork")
    self.tasks, self.results = context.Queue(), context.Queue()
    self.processes = [
        context.Process(target=_work, name=f"field-worker-{i}",
                        args=(os.getpid(), the_plan, self.tasks,
                              self.results))
        for i in range(workers)]
    self.pending = order(the_plan.cells)
    self.put_off: list[int] = []
    self.running: dict[int, int] = {}  # cell index -> its lock's fd
    self.seconds: dict[str, float] = {}

  def run(self) -> dict[str, float]:
    for process in self.processes:
      process.start()
    finished = False
    try:
      while self.pending or self.put_off or self.running:
        self._hand_out()
        if self.running:
          self._receive()
      finished = True
    finally:
      self._stop(finished)
    return self.seconds

  def _hand_out(self) -> None:
    """Hands out cells while a worker is free: the next one, else one put
    off whose lock is free (waited for when nothing else runs)."""
    while len(self.running) < len(self.processes):
      if self.pending:
        index = self.pending.pop(0)
        fd = self._lock(index, blocking=False)
        if fd is None:
          self.log(f"  {self._label(index)}: another process is running "
                   "it; put off")
          self.put_off.append(index)
          continue
      elif self.put_off:
        index, fd = self._first_free()
        if fd is None:
          if self.running:
            return  # tried again after the next message
          index = self.put_off[0]
          self.log(f"  {self._label(index)}: waiting for the other process "
                   "running it")
          fd = self._lock(index, blocking=True)
        self.put_off.remove(index)
      else:
        return
      self._start(index, fd)

  def _lock(self, index: int, blocking: bool) -> int | None:
    return runner_lib.cell_lock(
        self.output_dir, runs_lib.lock_key(self.plan.cells[index]),
        blocking=blocking)

  def _first_free(self) -> tuple[int | None, int | None]:
    """The first cell put off whose lock is free now, and its fd."""
    for index in self.put_off:
      fd = self._lock(index, blocking=False)
      if fd is not None:
        return index, fd
    return None, None

  def _start(self, index: int, fd: int) -> None:
    cell = self.plan.cells[index]
    done = runs_lib.recorded_runs(self.output_dir)
    seeds = [s for s in cell.seeds if (cell.key, s) not in done]
    if not seeds:
      os.close(fd)
      return
    self.running[index] = fd
    self.tasks.put((index, seeds))

  def _receive(self) -> None:
    """Handles one message of a worker (a run's record, a cell's end, a
    failure), or checks that the workers live."""
    try:
      message = self.results.get(timeout=POLL_SECONDS)
    except queue.Empty:
      dead = [p for p in self.processes if not p.is_alive()]
      if dead:
        raise RuntimeError(
            f"a field worker ended (exit code {dead[0].exitcode}) while "
            f"running {', '.join(map(self._label, self.running))}") from None
      return
    kind, index = message[0], message[1]
    cell = self.plan.cells[index]
    if kind == "run":
      records_lib.append_line(self.path, message[3])
      self.ran.append((cell, message[2]))
    elif kind == "done":
      os.close(self.running.pop(index))
      took, runs = message[2], message[3]
      self.seconds[cell.mechanism] = (
          self.seconds.get(cell.mechanism, 0.0) + took)
      self.log(f"  {self._label(index)}: {runs} runs, {took:.1f} s")
    else:
      raise RuntimeError(f"{self._label(index)} failed in a field worker:"
                         f"\n{message[2]}")

  def _label(self, index: int) -> str:
    return runs_lib.cell_label(self.plan.cells[index])

  def _stop(self, finished: bool) -> None:
    """Ends the workers (at once unless ``finished``) and lets go of the
    cells' locks."""
    if finished:
      for _ in self.processes:
        self.tasks.put(None)
    for process in self.processes:
      if not finished:
        process.terminate()
      process.join()
    for fd in self.running.values():
      os.close(fd)
    self.running.clear()
    for channel in (self.tasks, self.results):
      channel.close()
      channel.cancel_join_thread()


def _work(parent_pid: int, the_plan: runs_lib.Plan, tasks, results) -> None:
  """A worker: runs the cells handed to it, each run's record sent back as
  one JSON line as it ends; None ends it."""
  processes.die_with_parent(parent_pid)
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the grid
  while (task := tasks.get()) is not None:
    index, seeds = task
    start = time.perf_counter()
    try:
      for seed, record in runs_lib.cell_records(
          the_plan, the_plan.cells[index], seeds):
        results.put(("run", index, seed, json.dumps(record, sort_keys=True)))
    except BaseException:  # pylint: disable=broad-except
      results.put(("error", index, traceback.format_exc()))
      return
    results.put(("done", index, time.perf_counter() - start, len(seeds)))
