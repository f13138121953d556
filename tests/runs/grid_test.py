"""Tests of triehh.runs.grid: cells, their keys and labels, their checks."""

import math
import re

import pytest

from triehh.data import datasets
from triehh.runs import grid
from triehh.runs.algorithms import iblt as iblt_algorithm

DATA = {"dataset": "default", "setting": "single", "max_length": 10,
        "num_users": 20000}


def test_expand_crosses_every_axis_with_one_key_per_cell():
  cells = grid.expand(algorithms=("triehh", "sfp"), data=(DATA,),
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
  # TFF-engine cells import TensorFlow, fast-engine and SFP cells do not.
  assert {c.uses_tensorflow for c in cells if c.algorithm == "sfp"} == {
      False}
  assert {(c.config["engine"], c.uses_tensorflow) for c in triehh_cells} == {
      ("fast", False), ("tff", True)}


def test_cells_are_in_data_then_algorithm_then_axis_order():
  other = dict(DATA, num_users=30000)
  cells = grid.expand(algorithms=("sfp", "triehh"), data=(DATA, other),
                      epsilons=(1.0, 2.0), top_ts=(20, 80))
  expected = []
  for n in (20000, 30000):
    expected += [(n, "sfp", e, t) for e in (1.0, 2.0) for t in (20, 80)]
    expected += [(n, "triehh", e, None) for e in (1.0, 2.0)]
  assert [(c.config["data"]["num_users"], c.algorithm, c.config["epsilon"],
           c.config.get("top_t")) for c in cells] == expected


def test_cells_given_theta_do_not_vary_with_epsilon():
  cells = grid.expand(algorithms=("triehh", "sfp"), data=(DATA,),
                      epsilons=(1.0, 2.0, 4.0),
                      theta={"theta": 5, "gamma": None, "batch_size": 100})
  assert [c.algorithm for c in cells].count("triehh") == 1
  assert [c.algorithm for c in cells].count("sfp") == 3
  (only,) = [c for c in cells if c.algorithm == "triehh"]
  assert only.config["epsilon"] is None and only.config["theta"] == 5


@pytest.mark.parametrize("kwargs, message", [
    ({"algorithms": ("triehh", "x")}, "unknown algorithm 'x'"),
    ({"engines": ("slow",)}, "unknown engine 'slow'"),
    # Every algorithm's values are checked, in the grid or not.
    ({"algorithms": ("sfp",), "engines": ("slow",)}, "unknown engine"),
    ({"algorithms": ()}, "no cells"),
])
def test_expand_refuses_bad_grids(kwargs, message):
  with pytest.raises(ValueError, match=message):
    grid.expand(data=(DATA,), **kwargs)


def test_expand_refuses_a_keyword_no_algorithm_declares():
  with pytest.raises(TypeError, match="unexpected keyword argument 'top_t'"):
    grid.expand(data=(DATA,), top_t=(20,))


def test_cell_labels_name_algorithm_data_and_options():
  triehh_cell, sfp_cell = grid.expand(
      algorithms=("triehh", "sfp"), data=(DATA,), epsilons=(2.0,),
      deltas=(1e-9,))
  assert triehh_cell.label == "triehh/fast default/single eps=2 delta=1e-09"
  assert sfp_cell.label == "sfp default/single eps=2 delta=1e-09 T=20"
  (given,) = grid.expand(data=(dict(DATA, data_path="/x/words.csv"),),
                         theta={"theta": 5, "gamma": None,
                                "batch_size": 100})
  assert given.label == "triehh/fast default:words.csv/single theta=5"
  (poisson,) = grid.expand(data=(DATA,), theta={"theta": 15},
                           triehh_options={"sampling": "poisson",
                                           "sampling_rate": 0.01})
  assert poisson.label == ("triehh/fast default/single theta=15 poisson "
                           "q=0.01")
  # A rate is calibrated from (epsilon, delta): such a cell is refused.
  with pytest.raises(ValueError, match="give either .* sampling_rate"):
    grid.expand(data=(DATA,), triehh_options={"sampling": "poisson",
                                              "sampling_rate": 0.01})


def test_iblt_cells_cross_epsilons_deltas_and_k_anonymities():
  cells = grid.expand(algorithms=("triehh", "iblt"), data=(DATA,),
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


def test_iblt_cells_given_theta_for_triehh_still_vary_with_epsilon():
  cells = grid.expand(algorithms=("triehh", "iblt"), data=(DATA,),
                      epsilons=(1.0, 4.0),
                      theta={"theta": 5, "gamma": None, "batch_size": 100})
  assert [c.algorithm for c in cells] == ["triehh", "iblt", "iblt"]


@pytest.mark.parametrize("options, k, message", [
    ({}, 0, "k_anonymity must be in [1, 2147483647], got 0"),
    ({"capacity": 2}, None, "capacity=2 is below the"),
    ({"rounds": "all"}, None, "rounds must be one of"),
    ({"secure_sum_bitwidth": 63}, None, "secure_sum_bitwidth must be in"),
    ({"string_max_bytes": 0}, None, "string_max_bytes must be >= 1"),
    ({"num_rounds": 0}, None, "num_rounds must be >= 1"),
])
def test_a_bad_iblt_cell_is_named_before_any_run(options, k, message):
  cells = grid.expand(algorithms=("triehh", "iblt"), data=(DATA,),
                      epsilons=(2.0,), k_anonymities=(k,),
                      iblt_options=options)
  with pytest.raises(ValueError) as raised:
    grid.check_cells(cells, datasets.DataCache(), seeds=(0, 1))
  text = str(raised.value)
  assert text.startswith(f"cell [{cells[1].label}]: ")
  assert message in text


@pytest.mark.parametrize("kwargs, message", [
    ({"sfp_options": {"length": 9}}, "length must be even"),
    ({"sfp_options": {"word_budget": 1.0}}, "word_budget must be in"),
    ({"deltas": (2.0,)}, "delta"),
])
def test_a_bad_sfp_cell_is_named_before_any_run(kwargs, message):
  cells = grid.expand(algorithms=("sfp",), data=(DATA,), **kwargs)
  with pytest.raises(ValueError) as raised:
    grid.check_cells(cells, datasets.DataCache())
  assert str(raised.value).startswith(f"cell [{cells[0].label}]: ")
  assert message in str(raised.value)


def test_a_triehh_cell_outside_theorem_1_is_named_before_any_run():
  (cell,) = grid.expand(data=(DATA,), theta={"theta": 1, "gamma": None,
                                             "batch_size": 100})
  with pytest.raises(ValueError, match=(
      rf"^cell \[{re.escape(cell.label)}\]: ")):
    grid.check_cells([cell], datasets.DataCache())


def test_an_iblt_cell_that_would_not_fit_in_memory_is_refused(monkeypatch):
  pytest.importorskip("tensorflow_federated")
  from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
  (cell,) = grid.expand(algorithms=("iblt",), data=(DATA,), epsilons=(2.0,))
  cache = datasets.DataCache()
  grid.check_cells([cell], cache, seeds=(0,))  # fits in this machine
  # The seed's round, as the run would draw it, with the capacity it needs.
  pop = cache.get(DATA).population
  plan = iblt.plan_run(pop, seed=0,
                       **iblt_algorithm.iblt_arguments(pop, cell.config))
  needed = plan.batch_size * plan.bytes_per_client * (
      iblt.WORKER_BYTES_PER_SKETCH_BYTE)
  assert plan.memory_estimate_bytes == math.ceil(needed)
  monkeypatch.setattr(iblt, "physical_memory", lambda: int(needed))
  with pytest.raises(ValueError, match=(
      rf"^cell \[{re.escape(cell.label)}\]: an IBLT round of "
      rf"{plan.batch_size} clients needs about {needed / 1e9:.3g} GB.* \(here "
      r"the batch size is TrieHH's at epsilon=2: a smaller epsilon")):
    grid.check_cells([cell], cache, seeds=(0,))
