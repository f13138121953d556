"""Tests of triehh.runs.sweep: cells, plans, per-cell locks and running cells."""

import fcntl
import math
import os
import re

import pytest

from triehh.core import metrics
from triehh.data import synthetic
from triehh.runs import records
from triehh.runs import sweep
import triehh

DATA = {"dataset": "default", "setting": "single", "max_length": 10,
        "num_users": 20000}


def test_expand_crosses_every_axis_with_one_key_per_cell():
  cells = sweep.expand(algorithms=("triehh", "sfp"), data=(DATA,),
                       engines=("fast", "tff"), epsilons=(1.0, 4.0),
                       deltas=(None, 1e-9), top_ts=(20, 80))
  # triehh: 2 engines x 2 epsilons x 2 deltas; sfp: 2 x 2 x 2 T.
  assert len(cells) == 8 + 8
  assert len({c.key for c in cells}) == 16
  triehh_cells = [c for c in cells if c.algorithm == "triehh"]
  assert {(c.config["engine"], c.config["epsilon"], c.config["delta"])
          for c in triehh_cells} == {
              (e, eps, d) for e in ("fast", "tff") for eps in (1.0, 4.0)
              for d in (None, 1e-9)}
  assert all("top_t" not in c.config for c in triehh_cells)
  assert {c.config["top_t"] for c in cells if c.algorithm == "sfp"} == {
      20, 80}
  # The fast engine records no secure-sum choice, the TFF engine does.
  assert {c.config["tff_secure_sum"] for c in triehh_cells
          if c.config["engine"] == "fast"} == {None}


def test_cells_given_theta_do_not_vary_with_epsilon():
  cells = sweep.expand(algorithms=("triehh", "sfp"), data=(DATA,),
                       epsilons=(1.0, 2.0, 4.0),
                       theta={"theta": 5, "gamma": None, "batch_size": 100})
  assert [c.algorithm for c in cells].count("triehh") == 1
  assert [c.algorithm for c in cells].count("sfp") == 3
  (only,) = [c for c in cells if c.algorithm == "triehh"]
  assert only.config["epsilon"] is None and only.config["theta"] == 5


@pytest.mark.parametrize("kwargs, message", [
    ({"algorithms": ("triehh", "x")}, "unknown algorithm 'x'"),
    ({"engines": ("slow",)}, "unknown engine 'slow'"),
    ({"algorithms": ()}, "no cells"),
])
def test_expand_refuses_bad_grids(kwargs, message):
  with pytest.raises(ValueError, match=message):
    sweep.expand(data=(DATA,), **kwargs)


def test_plan_leaves_out_recorded_runs():
  a, b = sweep.expand(data=(DATA,), epsilons=(2.0, 4.0))
  done = {(a.key, 3), (a.key, 5), (b.key, 3), (b.key, 4), (b.key, 5),
          ("another", 4)}
  tasks = sweep.plan([a, b], seed=3, num_runs=3, done=done)
  assert [(t.cell.key, t.seeds, t.first_seed) for t in tasks] == [
      (a.key, (4,), 3)]
  assert sweep.seeds_of(3, 3) == (3, 4, 5)


def _events():
  seen = []
  return seen, seen.append


def test_run_cell_writes_the_runs_discover_gives(tmp_path):
  (cell,) = sweep.expand(data=(DATA,), epsilons=(2.0,))
  datasets = sweep.DataCache()
  seen, on_event = _events()
  task = sweep.Task(cell, (7, 8), first_seed=6)
  assert sweep.run_cell(task, str(tmp_path), datasets=datasets, ks=(10,),
                        on_event=on_event)
  got, bad = records.read(str(tmp_path / "results.jsonl"))
  assert not bad and [(r.seed, r.run) for r in got] == [(7, 1), (8, 2)]
  pop = synthetic.english_population(20000, seed=0)
  truth = pop.ground_truth()
  for record in got:
    direct = triehh.discover(pop, epsilon=2.0, seed=record.seed,
                             sampling="fixed")  # the library's cell default
    assert record.discovered == list(direct.heavy_hitters)
    assert record.counts == list(direct.heavy_hitters.values())
    assert record.metrics == metrics.precision_recall_f1(
        direct.heavy_hitters, truth, (10,))
    assert record.config_key == cell.key
  assert [e.kind for e in seen] == ["start", "run", "run", "done"]
  assert seen[-1].runs == 2


def test_run_cell_skips_seeds_recorded_since_the_plan(tmp_path):
  (cell,) = sweep.expand(data=(DATA,), epsilons=(4.0,))
  datasets = sweep.DataCache()
  sweep.run_cell(sweep.Task(cell, (0,), 0), str(tmp_path), datasets=datasets)
  # A plan made before seed 0 was recorded still lists it.
  sweep.run_cell(sweep.Task(cell, (0, 1), 0), str(tmp_path),
                 datasets=datasets)
  got, _ = records.read(str(tmp_path / "results.jsonl"))
  assert sorted(r.seed for r in got) == [0, 1]
  assert datasets.loads == 1


def _hold(output_dir, key) -> int:
  os.makedirs(os.path.join(output_dir, sweep.LOCK_DIR), exist_ok=True)
  fd = os.open(sweep.lock_path(output_dir, key), os.O_RDWR | os.O_CREAT)
  fcntl.flock(fd, fcntl.LOCK_EX)
  return fd


def test_a_locked_cell_is_not_run(tmp_path):
  (cell,) = sweep.expand(data=(DATA,), epsilons=(4.0,))
  fd = _hold(str(tmp_path), cell.key)
  try:
    seen, on_event = _events()
    ran = sweep.run_cell(sweep.Task(cell, (0, 1), 0), str(tmp_path),
                         datasets=sweep.DataCache(), on_event=on_event)
  finally:
    os.close(fd)
  assert ran is False
  assert [e.kind for e in seen] == ["locked"]
  assert not (tmp_path / "results.jsonl").exists()


def test_run_plan_runs_locked_cells_last(tmp_path):
  first, second = sweep.expand(data=(DATA,), epsilons=(2.0, 4.0))
  output_dir = str(tmp_path)
  held = [_hold(output_dir, first.key)]
  seen = []

  def on_event(event):
    seen.append((event.kind, event.key))
    if event.kind == "wait":  # the other sweep finishes the cell now
      os.close(held.pop())

  tasks = sweep.plan([first, second], 0, 2)
  sweep.run_plan(tasks, output_dir, on_event=on_event)
  assert seen[0] == ("locked", first.key)
  assert [k for kind, k in seen if kind == "done"] == [second.key, first.key]
  assert ("wait", first.key) in seen and not held
  got, _ = records.read(str(tmp_path / "results.jsonl"))
  assert sorted((r.config_key, r.seed) for r in got) == sorted(
      (c.key, s) for c in (first, second) for s in (0, 1))


def test_load_data_describes_the_default_population():
  data = sweep.load_data(DATA)
  assert data.population.num_users == 20000
  assert (data.name, data.setting) == ("default", "single")
  assert data.truth == synthetic.english_population(
      20000, seed=0).ground_truth()


def test_iblt_cells_cross_epsilons_deltas_and_k_anonymities():
  cells = sweep.expand(algorithms=("triehh", "iblt"), data=(DATA,),
                       epsilons=(1.0, 4.0), k_anonymities=(None, 5),
                       iblt_options={"capacity": 300})
  iblt_cells = [c for c in cells if c.algorithm == "iblt"]
  assert len(cells) == 2 + 4 and len({c.key for c in cells}) == 6
  assert {(c.config["epsilon"], c.config["k_anonymity"])
          for c in iblt_cells} == {(e, k) for e in (1.0, 4.0)
                                   for k in (None, 5)}
  # Unset options take the defaults; strings are cut at the data's L.
  assert all(c.config["capacity"] == 300 and c.config["string_max_bytes"]
             == DATA["max_length"] and c.config["rounds"] == "sampled"
             for c in iblt_cells)
  # IBLT cells import TensorFlow: worker processes are spawned for them.
  assert all(c.uses_tensorflow for c in iblt_cells)
  assert not any(c.uses_tensorflow for c in cells if c.algorithm == "triehh")
  labels = {c.label for c in iblt_cells}
  assert "iblt default/single k=theta m at eps=1" in labels
  assert "iblt default/single k=5 m at eps=4" in labels


def test_poisson_cells_record_their_sampling_and_keep_fixed_keys(tmp_path):
  (fixed,) = sweep.expand(data=(DATA,), epsilons=(2.0,))
  (plain,) = sweep.expand(data=(DATA,), epsilons=(2.0,),
                          triehh_options={"sampling": "fixed"})
  assert "sampling" not in fixed.config and fixed.key == plain.key
  (cell,) = sweep.expand(data=(DATA,), epsilons=(2.0,),
                         triehh_options={"sampling": "poisson"})
  assert cell.config["sampling"] == "poisson" and cell.key != fixed.key
  assert "poisson" in cell.label
  task = sweep.Task(cell, (3,), first_seed=3)
  assert sweep.run_cell(task, str(tmp_path), datasets=sweep.DataCache(),
                        ks=(10,), on_event=lambda e: None)
  (record,), bad = records.read(str(tmp_path / "results.jsonl"))
  assert not bad
  pop = synthetic.english_population(20000, seed=0)
  direct = triehh.discover(pop, epsilon=2.0, seed=3)
  assert direct.params.sampling == "poisson"
  assert record.discovered == list(direct.heavy_hitters)
  assert (record.sampling, record.sampling_rate) == (
      "poisson", direct.params.sampling_rate)
  assert record.accounting == "Poisson accountant (two-sided, add/remove)"


def test_iblt_cells_given_theta_for_triehh_still_vary_with_epsilon():
  cells = sweep.expand(algorithms=("triehh", "iblt"), data=(DATA,),
                       epsilons=(1.0, 4.0),
                       theta={"theta": 5, "gamma": None, "batch_size": 100})
  assert [c.algorithm for c in cells] == ["triehh", "iblt", "iblt"]


def test_iblt_arguments_are_triehh_batch_size_and_theta():
  (cell,) = sweep.expand(algorithms=("iblt",), data=(DATA,), epsilons=(2.0,))
  pop = sweep.load_data(DATA).population
  params = triehh.discover(pop, epsilon=2.0, seed=0, sampling="fixed").params
  arguments = sweep.iblt_arguments(pop, cell.config)
  assert (arguments["batch_size"], arguments["k_anonymity"]) == (
      params.batch_size, params.theta)
  (given,) = sweep.expand(algorithms=("iblt",), data=(DATA,),
                          epsilons=(2.0,), k_anonymities=(3,))
  assert sweep.iblt_arguments(pop, given.config)["k_anonymity"] == 3


@pytest.mark.parametrize("options, k, message", [
    ({}, 0, "k_anonymity must be >= 1"),
    ({"capacity": 2}, None, "capacity=2 is below the"),
    ({"rounds": "all"}, None, "rounds must be one of"),
    ({"secure_sum_bitwidth": 63}, None, "secure_sum_bitwidth must be in"),
    ({"string_max_bytes": 0}, None, "string_max_bytes must be >= 1"),
    ({"num_rounds": 0}, None, "num_rounds must be >= 1"),
])
def test_a_bad_iblt_cell_is_named_before_any_run(options, k, message):
  cells = sweep.expand(algorithms=("triehh", "iblt"), data=(DATA,),
                       epsilons=(2.0,), k_anonymities=(k,),
                       iblt_options=options)
  with pytest.raises(ValueError) as raised:
    sweep.check_cells(cells, sweep.DataCache(), seeds=(0, 1))
  text = str(raised.value)
  assert text.startswith(f"cell [{cells[1].label}]: ")
  assert message in text


def test_an_iblt_cell_that_would_not_fit_in_memory_is_refused(monkeypatch):
  pytest.importorskip("tensorflow_federated")
  from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
  (cell,) = sweep.expand(algorithms=("iblt",), data=(DATA,), epsilons=(2.0,))
  datasets = sweep.DataCache()
  sweep.check_cells([cell], datasets, seeds=(0,))  # fits in this machine
  # The seed's round, as the run would draw it, with the capacity it needs.
  pop = datasets.get(DATA).population
  plan = iblt.plan_run(pop, seed=0, **sweep.iblt_arguments(pop, cell.config))
  needed = plan.batch_size * plan.bytes_per_client * (
      iblt.WORKER_BYTES_PER_SKETCH_BYTE)
  assert plan.memory_estimate_bytes == math.ceil(needed)
  monkeypatch.setattr(iblt, "physical_memory", lambda: int(needed))
  with pytest.raises(ValueError, match=(
      rf"^cell \[{re.escape(cell.label)}\]: an IBLT round of "
      rf"{plan.batch_size} clients needs about {needed / 1e9:.3g} GB.* \(here "
      r"the batch size is TrieHH's at epsilon=2: a smaller epsilon")):
    sweep.check_cells([cell], datasets, seeds=(0,))
