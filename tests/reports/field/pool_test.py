"""reports.field.pool: the grid in worker processes, the parent the only
writer; the same records as one process, resumed, sharing cells with
another invocation, a failing run named."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from reports.field import mechanisms
from reports.field import pool
from reports.field import runs
from triehh.data import datasets as datasets_lib
from triehh.runs import runner

N = 2000
SETTINGS = runs.Settings(users=(N,), count_users=(), large_count_users=(),
                         sfp_users=(), iblt_users=(), tff_users=(),
                         epsilons=(1.0, 4.0), side_epsilons=(4.0,),
                         moonshot_epsilons=(4.0,), num_seeds=2, ps_seeds=2,
                         others=False)
# Mechanisms whose records a seed fixes (and a calibration cache could
# change: the noisy tries).
SEEDED = (mechanisms.POISSON, mechanisms.NOISY_K1, mechanisms.NOISY_K2,
          mechanisms.NOISY_PLANNED, mechanisms.TWO_SERVERS, "ps-laplace_"
          "thresholding")


@pytest.fixture(autouse=True)
def fixture_fork(monkeypatch):
  """Forks regardless of what other tests of this process imported (gRPC,
  by pipeline_dp's import of Beam): these tests open no channel."""
  monkeypatch.setattr(pool, "_FORK_UNSAFE", ())


def _fake_plan(cells: int = 4, seeds: int = 3) -> runs.Plan:
  return runs.Plan(
      cells=[runs.Cell("english", 100, mechanisms.MECHANISMS[i], 4.0,
                       tuple(range(seeds))) for i in range(cells)],
      data={("english", 100): None}, notes=[])


def _fake(name, data, epsilon, delta, seed) -> dict:
  del data
  return {"population": "english", "n": 100, "mechanism": name,
          "epsilon": epsilon, "delta": delta, "seed": seed, "words": seed,
          "pid": os.getpid()}


def _pairs(records) -> list[tuple]:
  return sorted((runs.record_key(r), r["seed"]) for r in records)


def _without_seconds(records) -> dict:
  return {(runs.record_key(r), r["seed"]): {k: v for k, v in r.items()
                                            if k != "seconds"}
          for r in records}


@pytest.fixture(name="real_plan", scope="module")
def fixture_real_plan():
  plan = runs.plan(SETTINGS, datasets_lib.DataCache(None))
  plan.cells[:] = [c for c in plan.cells if c.mechanism in SEEDED]
  return plan


def test_two_workers_record_what_one_process_records(real_plan, tmp_path):
  one, two = tmp_path / "one", tmp_path / "two"
  one.mkdir()
  two.mkdir()
  # Serial first, so the calibrations of one process would leak into the
  # workers' forks were they not made afresh per cell.
  runs.run(real_plan, str(one))
  ran = []
  pool.run(real_plan, str(two), workers=2, ran=ran)
  serial, parallel = runs.recorded(str(one)), runs.recorded(str(two))
  assert len(serial) == len(parallel) == len(ran) == 2 * len(real_plan.cells)
  assert len(set(_pairs(parallel))) == len(parallel)
  assert _without_seconds(serial) == _without_seconds(parallel)
  assert any(r["calibrated"] for r in parallel)


def test_only_the_parent_writes_whole_lines_and_a_rerun_runs_nothing(
    tmp_path, monkeypatch):
  monkeypatch.setattr(mechanisms, "run", _fake)  # inherited by the forks
  writers = []
  append = runs.records_lib.append_line

  def spy(path, text, **kwargs):
    writers.append(os.getpid())
    append(path, text, **kwargs)

  monkeypatch.setattr(runs.records_lib, "append_line", spy)
  plan = _fake_plan()
  said = []
  pool.run(plan, str(tmp_path), workers=2, log=said.append)
  records = runs.recorded(str(tmp_path))
  assert len(records) == 12 and len(set(_pairs(records))) == 12
  assert set(writers) == {os.getpid()}
  assert os.getpid() not in {r["pid"] for r in records}  # workers ran
  assert sum("3 runs" in s for s in said) == 4
  again = []
  pool.run(plan, str(tmp_path), workers=2, ran=again)
  assert not again and len(runs.recorded(str(tmp_path))) == 12


def test_recorded_seeds_are_not_run_again(tmp_path, monkeypatch):
  monkeypatch.setattr(mechanisms, "run", _fake)
  plan = _fake_plan(cells=2)
  first = plan.cells[0]
  runs.records_lib.append_line(
      tmp_path / runs.RESULTS,
      json.dumps(_fake(first.mechanism, None, 4.0, 1e-4, 1)))
  ran = []
  pool.run(plan, str(tmp_path), workers=2, ran=ran)
  assert (first, 1) not in ran and len(ran) == 5
  assert len(set(_pairs(runs.recorded(str(tmp_path))))) == 6


_HOLDER = ("import fcntl, sys\n"
           "f = open(sys.argv[1], 'a')\n"
           "fcntl.flock(f, fcntl.LOCK_EX)\n"
           "print('held', flush=True)\n"
           "sys.stdin.read()\n")


def test_a_cell_another_process_holds_is_put_off_then_waited_for(
    tmp_path, monkeypatch):
  monkeypatch.setattr(mechanisms, "run", _fake)
  plan = _fake_plan(cells=2)
  held_cell = plan.cells[0]
  os.makedirs(tmp_path / runner.LOCK_DIR)
  holder = subprocess.Popen(  # another invocation holding the cell
      [sys.executable, "-c", _HOLDER,
       runner.lock_path(str(tmp_path), runs.lock_key(held_cell))],
      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
  try:
    assert holder.stdout.readline() == "held\n"
    # It records the cell's seeds, and ends once this one has put the
    # cell off.
    for seed in held_cell.seeds:
      runs.records_lib.append_line(
          tmp_path / runs.RESULTS,
          json.dumps(_fake(held_cell.mechanism, None, 4.0, 1e-4, seed)))
    said, ran = [], []

    def log(text):
      said.append(text)
      if "put off" in text:  # (the forked workers hold its stdin open)
        holder.kill()
        holder.wait(timeout=60)

    pool.run(plan, str(tmp_path), workers=2, log=log, ran=ran)
  finally:
    holder.kill()
    holder.wait()
  assert [c for c, _ in ran] == [plan.cells[1]] * 3
  assert len(set(_pairs(runs.recorded(str(tmp_path))))) == 6
  assert any("another process is running it; put off" in s for s in said)


def _failing(name, data, epsilon, delta, seed):
  if seed == 1:
    raise ArithmeticError("a run went wrong")
  return _fake(name, data, epsilon, delta, seed)


def test_a_failing_run_is_named_and_its_cell_left_to_resume(
    tmp_path, monkeypatch):
  monkeypatch.setattr(mechanisms, "run", _failing)
  plan = _fake_plan(cells=1)
  with pytest.raises(RuntimeError, match=(
      r"english n=100 triehh-fixed eps=4 failed in a field worker:\n"
      r"(.|\n)*ArithmeticError: a run went wrong")):
    pool.run(plan, str(tmp_path), workers=2)
  assert [r["seed"] for r in runs.recorded(str(tmp_path))] == [0]
  # Its lock is free again: the cell resumes.
  monkeypatch.setattr(mechanisms, "run", _fake)
  pool.run(plan, str(tmp_path), workers=2)
  assert [r["seed"] for r in runs.recorded(str(tmp_path))] == [0, 1, 2]


def test_the_slow_cells_are_handed_out_first():
  cells = [runs.Cell("english", 100, name, 4.0, (0,)) for name in
           (mechanisms.NOISY_K1, mechanisms.SFP, mechanisms.FIXED,
            mechanisms.TFF_DISTRIBUTED)]
  assert pool.order(cells) == [3, 1, 0, 2]


@pytest.mark.parametrize("workers, error", [(0, ValueError),
                                            (1.5, TypeError),
                                            (True, TypeError)])
def test_a_bad_number_of_workers_is_named(workers, error):
  with pytest.raises(error, match="^workers must be"):
    pool.run(_fake_plan(), "unused", workers=workers)


def test_the_default_is_one_worker_per_cpu_capped():
  assert 1 <= pool.default_workers() <= pool.MAX_DEFAULT_WORKERS
  assert pool.default_workers() <= runner.cpu_count()


def test_with_a_fork_unsafe_library_loaded_the_grid_runs_here(
    tmp_path, monkeypatch):
  monkeypatch.setattr(mechanisms, "run", _fake)
  monkeypatch.setattr(pool, "_FORK_UNSAFE", ("json",))  # loaded
  said, ran = [], []
  pool.run(_fake_plan(cells=2), str(tmp_path), workers=2, log=said.append,
           ran=ran)
  assert len(ran) == 6
  assert {r["pid"] for r in runs.recorded(str(tmp_path))} == {os.getpid()}
  assert said[0] == ("  one process: json is loaded here, and a forked "
                     "worker would inherit it broken")
