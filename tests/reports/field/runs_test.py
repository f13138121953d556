"""reports.field.runs on one output directory: resumed, shared by two
invocations, repaired after a torn line; mechanisms faked (the real runs
are tests/reports/field_test.py's)."""

from __future__ import annotations

import json
import os

import pytest

from reports.field import mechanisms
from reports.field import runs
from triehh.runs import runner


def _plan(cells: int = 2, seeds: int = 3) -> runs.Plan:
  return runs.Plan(
      cells=[runs.Cell("english", 100, mechanisms.MECHANISMS[i], 4.0,
                       tuple(range(seeds))) for i in range(cells)],
      data={("english", 100): None}, notes=[])


def _record(name, data, epsilon, delta, seed) -> dict:
  del data
  return {"population": "english", "n": 100, "mechanism": name,
          "epsilon": epsilon, "delta": delta, "seed": seed, "words": 1}


def _lines(out) -> list[dict]:
  with open(os.path.join(out, runs.RESULTS), encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def _pairs(records) -> list[tuple]:
  return sorted((runs.record_key(r), r["seed"]) for r in records)


def test_a_cell_another_process_runs_is_put_off_and_not_run_twice(
    tmp_path, monkeypatch):
  # Two triehh-field on one directory wrote every run of the grid twice.
  plan = _plan()
  first, second = plan.cells
  held = runner.cell_lock(str(tmp_path), runs.lock_key(first), False)
  assert held is not None
  calls = []

  def fake(name, data, epsilon, delta, seed):
    calls.append((name, seed))
    if name == second.mechanism and seed == second.seeds[-1]:
      # Meanwhile, the other process ends the first cell, then its lock.
      for s in first.seeds:
        runs.records_lib.append_line(
            tmp_path / runs.RESULTS,
            json.dumps(_record(first.mechanism, None, 4.0, 1e-4, s)))
      os.close(held)
    return _record(name, data, epsilon, delta, seed)

  monkeypatch.setattr(mechanisms, "run", fake)
  said, ran = [], []
  runs.run(plan, str(tmp_path), log=said.append, ran=ran)
  assert calls == [(second.mechanism, s) for s in second.seeds]
  assert ran == [(second, s) for s in second.seeds]
  records = _lines(tmp_path)
  assert len(records) == 6
  assert len(set(_pairs(records))) == 6
  assert any("another process is running it; put off" in s for s in said)
  assert any("waiting for the other process" in s for s in said)


def test_two_runs_at_once_record_each_run_once(tmp_path, monkeypatch):
  import threading  # pylint: disable=g-import-not-at-top
  plan = _plan(cells=4, seeds=2)

  def slow(*args):
    threading.Event().wait(0.02)
    return _record(*args)

  monkeypatch.setattr(mechanisms, "run", slow)
  threads = [threading.Thread(target=runs.run, args=(plan, str(tmp_path)))
             for _ in range(2)]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join(timeout=60)
  assert not any(thread.is_alive() for thread in threads)
  pairs = _pairs(_lines(tmp_path))
  assert len(pairs) == 8 and len(set(pairs)) == 8


def test_a_torn_last_line_is_set_aside_and_its_run_run_again(
    tmp_path, monkeypatch, capsys):
  # A rerun after a full disk failed: "Unterminated string starting at...".
  monkeypatch.setattr(mechanisms, "run", _record)
  plan = _plan(cells=1)
  cell = plan.cells[0]
  whole = json.dumps(_record(cell.mechanism, None, 4.0, 1e-4, 0))
  torn = json.dumps(_record(cell.mechanism, None, 4.0, 1e-4, 1))[:30]
  (tmp_path / runs.RESULTS).write_text(whole + "\n" + torn)
  assert runs.runs_left(plan.cells, str(tmp_path)) == 2
  runs.run(plan, str(tmp_path))
  records = _lines(tmp_path)
  assert [r["seed"] for r in records] == [0, 1, 2]
  side = [n for n in os.listdir(tmp_path) if ".partial-" in n]
  assert len(side) == 1
  assert (tmp_path / side[0]).read_text() == torn
  assert f"moved it to {tmp_path / side[0]}" in capsys.readouterr().err


def test_a_malformed_line_is_named_by_file_and_line(tmp_path):
  path = tmp_path / runs.RESULTS
  path.write_text('{"seed": 0}\n{"seed": 1,,}\n{"seed": 2}\n')
  with pytest.raises(ValueError, match=(
      rf"^{path}:2: not a record \(Expecting property name.*correct or "
      r"remove the line, or choose another output_dir$")):
    runs.recorded(str(tmp_path))
  path.write_text('{"seed": 0}\n[1, 2]\n')
  with pytest.raises(ValueError, match=rf"^{path}:2: not a record \(a JSON "
                     r"list, not an object\)"):
    runs.recorded(str(tmp_path))
