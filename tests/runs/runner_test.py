"""Tests of triehh.runs.runner: plans, per-cell locks and running cells."""

import fcntl
import json
import multiprocessing
import os
import sys
import types

import pytest

from triehh.core import memory
from triehh.core import metrics
from triehh.data import datasets
from triehh.data import synthetic
from triehh.runs import grid
from triehh.runs import records
from triehh.runs import runner
import triehh

DATA = {"dataset": "default", "setting": "single", "max_length": 10,
        "num_users": 20000}


def test_plan_leaves_out_recorded_runs():
  a, b = grid.expand(data=(DATA,), epsilons=(2.0, 4.0))
  done = {(a.key, 3), (a.key, 5), (b.key, 3), (b.key, 4), (b.key, 5),
          ("another", 4)}
  tasks = runner.plan([a, b], seed=3, num_runs=3, done=done)
  assert [(t.cell.key, t.seeds, t.first_seed) for t in tasks] == [
      (a.key, (4,), 3)]
  assert runner.seeds_of(3, 3) == (3, 4, 5)


def _events():
  seen = []
  return seen, seen.append


def test_a_plan_that_would_not_fit_is_refused_before_it_is_built(
    monkeypatch):
  cells = grid.expand(data=(DATA,), epsilons=(2.0, 4.0))
  monkeypatch.setattr(memory, "available_bytes", lambda: 10**6)
  # 100 bytes per run: 2 cells x 5,000 runs fit in 10^6 bytes, 5,001 do not.
  assert len(runner.plan(cells, 0, 5000)) == 2
  with pytest.raises(memory.InsufficientMemoryError) as refused:
    runner.plan(cells, 0, 5001)
  assert str(refused.value) == (
      "num_runs=5,001 runs of each of 2 cells (100 bytes of plan per run) "
      "would need about 976.8 KiB of memory, more than the 976.6 KiB "
      "available; use num_runs <= 5,000 (or fewer cells); the rest can run "
      "later from the next seed")


def _tasks(num_cells: int) -> list[runner.Task]:
  epsilons = tuple(float(e) for e in range(1, num_cells + 1))
  return runner.plan(grid.expand(data=(DATA,), epsilons=epsilons), 0, 1)


@pytest.mark.parametrize("cpus, fit, tasks, workers, capped, why", [
    (2, 64, 10, 2, True, "2 CPUs"),
    (64, 3, 10, 3, True, "memory for 3 workers of about 330.0 MiB each"),
    (1, 1, 10, 1, True, "1 CPU and memory for 1 workers of about 330.0 MiB "
     "each"),
    (64, 64, 4, 4, False, ""),  # a worker per cell: no cap to say
])
def test_workers_are_capped_at_the_cpus_and_memory(monkeypatch, cpus, fit,
                                                   tasks, workers, capped,
                                                   why):
  monkeypatch.setattr(runner, "cpu_count", lambda: cpus)
  monkeypatch.setattr(memory, "available_bytes",
                      lambda: fit * runner.WORKER_BYTES + 1)
  limit = runner.worker_limit(_tasks(tasks), 1000)
  assert (limit.workers, limit.capped, limit.why if capped else "") == (
      workers, capped, why)
  assert not runner.worker_limit(_tasks(tasks), 1).capped


def test_cpu_count_is_the_cpus_this_process_may_use(monkeypatch):
  monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5},
                      raising=False)
  assert runner.cpu_count() == 3


def test_run_cell_writes_the_runs_discover_gives(tmp_path):
  (cell,) = grid.expand(data=(DATA,), epsilons=(2.0,))
  cache = datasets.DataCache()
  seen, on_event = _events()
  task = runner.Task(cell, (7, 8), first_seed=6)
  assert runner.run_cell(task, str(tmp_path), datasets=cache, ks=(10,),
                         on_event=on_event)
  got, bad = records.read(str(tmp_path / "results.jsonl"))
  assert not bad and [(r.seed, r.run) for r in got] == [(7, 1), (8, 2)]
  pop = synthetic.english_population(20000, seed=0)
  truth = pop.ground_truth()
  for record in got:
    direct = triehh.discover(pop, triehh.Target(2.0, sampling="fixed"),
                             seed=record.seed)  # the library's cell default
    assert record.discovered == list(direct.heavy_hitters)
    assert record.reported_counts == list(direct.heavy_hitters.values())
    assert record.metrics == metrics.precision_recall_f1(
        direct.heavy_hitters, truth, (10,))
    # The cell's key, handed to the record, is its config's own.
    assert record.config_key == cell.key == records.config_key(record.config)
  assert [e.kind for e in seen] == ["start", "run", "run", "done"]
  assert seen[-1].runs == 2


def test_run_cell_skips_seeds_recorded_since_the_plan(tmp_path):
  (cell,) = grid.expand(data=(DATA,), epsilons=(4.0,))
  cache = datasets.DataCache()
  runner.run_cell(runner.Task(cell, (0,), 0), str(tmp_path), datasets=cache)
  # A plan made before seed 0 was recorded still lists it.
  runner.run_cell(runner.Task(cell, (0, 1), 0), str(tmp_path),
                  datasets=cache)
  got, _ = records.read(str(tmp_path / "results.jsonl"))
  assert sorted(r.seed for r in got) == [0, 1]
  assert cache.loads == 1


@pytest.mark.parametrize("version", [1, 2])
def test_a_sweep_resumes_over_records_of_an_earlier_version(tmp_path,
                                                            version):
  # A results.jsonl written by versions 1 and 2 (every field at the top;
  # version 1's reported counts as "counts") is read, upgraded, and its
  # runs are not run again: their config_key is the cell's.
  cells = grid.expand(data=(DATA,), epsilons=(4.0,))
  cache = datasets.DataCache()
  runner.run_plan(runner.plan(cells, 0, 2), str(tmp_path), datasets=cache)
  path = tmp_path / records.RESULTS_FILE
  new, _ = records.read(str(path))
  lines = []
  for line in path.read_text().splitlines():
    raw = json.loads(line)
    raw.update(raw.pop("params"), schema_version=version)
    if version == 1:
      raw["counts"] = raw.pop("reported_counts")
    lines.append(json.dumps(raw))
  path.write_text("\n".join(lines) + "\n")
  old, bad = records.read(str(path))
  assert bad == [] and old == new
  done = records.completed(str(path))
  assert done == {(cells[0].key, 0), (cells[0].key, 1)}
  assert runner.plan(cells, 0, 2, done=done) == []
  # One more seed: only it runs, and the file then holds both versions.
  runner.run_plan(runner.plan(cells, 0, 3, done=done), str(tmp_path),
                  datasets=cache)
  got, bad = records.read(str(path))
  assert bad == [] and [r.seed for r in got] == [0, 1, 2]
  assert json.loads(path.read_text().splitlines()[-1])["schema_version"] == 3


def test_a_triehh_cell_on_one_user_writes_nothing(tmp_path):
  (cell,) = grid.expand(data=(DATA,), epsilons=(4.0,))
  cache = datasets.DataCache()
  cache.get(DATA).population = triehh.Population.from_user_words(["word"])
  seen, on_event = _events()
  with pytest.raises(ValueError, match="the population has 1 user: TrieHH "
                     "needs at least 2"):
    runner.run_cell(runner.Task(cell, (0, 1), 0), str(tmp_path),
                    datasets=cache, on_event=on_event)
  assert [e.kind for e in seen] == ["start"]
  assert records.completed(str(tmp_path / "results.jsonl")) == set()


def _hold(output_dir, key) -> int:
  os.makedirs(os.path.join(output_dir, runner.LOCK_DIR), exist_ok=True)
  fd = os.open(runner.lock_path(output_dir, key), os.O_RDWR | os.O_CREAT)
  fcntl.flock(fd, fcntl.LOCK_EX)
  return fd


def test_a_locked_cell_is_not_run(tmp_path):
  (cell,) = grid.expand(data=(DATA,), epsilons=(4.0,))
  fd = _hold(str(tmp_path), cell.key)
  try:
    seen, on_event = _events()
    ran = runner.run_cell(runner.Task(cell, (0, 1), 0), str(tmp_path),
                          datasets=datasets.DataCache(), on_event=on_event)
  finally:
    os.close(fd)
  assert ran is False
  assert [e.kind for e in seen] == ["locked"]
  assert not (tmp_path / "results.jsonl").exists()


def test_run_plan_runs_locked_cells_last(tmp_path):
  first, second = grid.expand(data=(DATA,), epsilons=(2.0, 4.0))
  output_dir = str(tmp_path)
  held = [_hold(output_dir, first.key)]
  seen = []

  def on_event(event):
    seen.append((event.kind, event.key))
    if event.kind == "wait":  # the other sweep finishes the cell now
      os.close(held.pop())

  tasks = runner.plan([first, second], 0, 2)
  runner.run_plan(tasks, output_dir, on_event=on_event)
  assert seen[0] == ("locked", first.key)
  assert [k for kind, k in seen if kind == "done"] == [second.key, first.key]
  assert ("wait", first.key) in seen and not held
  got, _ = records.read(str(tmp_path / "results.jsonl"))
  assert sorted((r.config_key, r.seed) for r in got) == sorted(
      (c.key, s) for c in (first, second) for s in (0, 1))


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_plan_counts_every_line_it_wrote(tmp_path, workers):
  cells = grid.expand(data=(DATA,), epsilons=(2.0, 4.0))
  written = records.LineCount()

  def on_event(event):
    if event.kind == "run":  # a line is written, its progress not counted
      raise KeyboardInterrupt

  with pytest.raises(KeyboardInterrupt):
    runner.run_plan(runner.plan(cells, 0, 200), str(tmp_path),
                    workers=workers, on_event=on_event, written=written)
  # The workers and the process relaying their events are stopped, none of
  # them in the middle of a line, and every line they wrote is counted.
  assert not multiprocessing.active_children()
  got, bad = records.read(str(tmp_path / "results.jsonl"))
  assert bad == [] and written.value == len(got) >= 1
  if workers == 1:
    assert len(got) == 1


def test_poisson_cells_record_their_sampling_and_keep_fixed_keys(tmp_path):
  (fixed,) = grid.expand(data=(DATA,), epsilons=(2.0,))
  (plain,) = grid.expand(data=(DATA,), epsilons=(2.0,),
                         triehh_options={"sampling": "fixed"})
  assert "sampling" not in fixed.config and fixed.key == plain.key
  (cell,) = grid.expand(data=(DATA,), epsilons=(2.0,),
                        triehh_options={"sampling": "poisson"})
  assert cell.config["sampling"] == "poisson" and cell.key != fixed.key
  assert "poisson" in cell.label
  task = runner.Task(cell, (3,), first_seed=3)
  assert runner.run_cell(task, str(tmp_path), datasets=datasets.DataCache(),
                         ks=(10,), on_event=lambda e: None)
  (record,), bad = records.read(str(tmp_path / "results.jsonl"))
  assert not bad
  pop = synthetic.english_population(20000, seed=0)
  direct = triehh.discover(pop, triehh.Target(2.0), seed=3)
  assert direct.params.sampling == "poisson"
  assert record.discovered == list(direct.heavy_hitters)
  assert (record.sampling, record.sampling_rate) == (
      "poisson", direct.params.sampling_rate)
  assert record.accounting == "Poisson accountant (two-sided)"


def test_workers_are_spawned_once_a_fork_unsafe_library_is_loaded(
    monkeypatch):
  cells = grid.expand(data=(DATA,), epsilons=(2.0,))
  tasks = runner.plan(cells, 0, 1)
  for name in ("tensorflow", "grpc"):
    monkeypatch.delitem(sys.modules, name, raising=False)
  assert runner._start_method(tasks) == "fork"  # pylint: disable=protected-access
  monkeypatch.setitem(sys.modules, "grpc", types.ModuleType("grpc"))
  assert runner._start_method(tasks) == "spawn"  # pylint: disable=protected-access
