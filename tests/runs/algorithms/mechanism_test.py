"""Tests of a registered mechanism in a sweep: the noisy trie's upload
budget in its cells' configs and its uploads in the records."""

import json

from triehh.data import datasets
from triehh.runs import grid
from triehh.runs import records
import triehh

_DATA = {"dataset": "default", "setting": "single", "max_length": 10,
         "num_users": 5000}
_BUDGET = triehh.UploadBudget(200_000, bytes_per_round=60_000)


def _cells(budget):
  options = {} if budget is None else {"upload_budget": budget}
  return grid.expand(algorithms=("noisy_trie",), data=(_DATA,),
                     epsilons=(4.0,),
                     mechanism_options={"noisy_trie": options})


def test_a_budget_in_a_config_comes_back_as_the_budget_from_json():
  (cell,) = _cells(_BUDGET)
  config = json.loads(json.dumps(cell.config))
  assert config["upload_budget"] == {"bytes_per_run": 200_000,
                                     "bytes_per_round": 60_000,
                                     "sampling_rate": None}
  privacy = cell.adapter.privacy(config)
  assert privacy == triehh.NoisyTarget(4.0, upload_budget=_BUDGET)
  (classic,) = _cells(None)
  assert classic.key != cell.key
  assert cell.adapter.privacy(classic.config).upload_budget is None


def test_a_planned_run_records_its_uploads_and_a_classic_one_none():
  dataset = datasets.DataCache().get(_DATA)
  for budget in (_BUDGET, None):
    (cell,) = _cells(budget)
    result = cell.adapter.call(dataset.population, cell.config, 1)
    record = cell.adapter.record(result, dataset, 0, 1, cell.config,
                                 ks=(10,))
    back = records.RunRecord.from_json(record.to_json())
    if budget is None:
      assert back.get("upload_bytes_per_round") is None
      continue
    per_round = back.get("upload_bytes_per_round")
    assert per_round == list(result.upload_bytes_per_round)
    assert max(per_round) <= 60_000
    q = result.params.sampling_rate
    assert back.get("upload_bytes_per_run") == result.upload_bytes == round(
        q * sum(per_round))
    assert back.params["budget"] == {"bytes_per_run": 200_000,
                                     "bytes_per_round": 60_000,
                                     "sampling_rate": q}  # the chosen
