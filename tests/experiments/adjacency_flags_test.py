"""Tests of the neighbouring-relation flags (--adjacency, --population_size)
of run_triehh and sweep, and of results written before they existed."""

import json

import pytest

from experiments import audit_privacy
from experiments import run_triehh
from experiments import sweep
from tests.experiments import drivers
from triehh.runs import records

SMALL = ("--num_users=3000", "--max_length=4", "--show=0")

# A record as run_triehh wrote it (`--num_users=3000 --max_length=4
# --epsilon=4 --output_dir=...`) before records held adjacency, n_source and
# population_size: the same JSON, laid out over lines (OLD_LINE is the line).
_OLD = json.loads("""{
 "accounting": "Poisson accountant (two-sided)",
 "algorithm": "triehh", "batch_size": 1064,
 "config": {"algorithm": "triehh", "allow_no_guarantee": false,
  "batch_size": null, "data": {"dataset": "default", "max_length": 4,
  "num_users": 3000, "setting": "single"}, "delta": null, "engine": "fast",
  "epsilon": 4.0, "gamma": null, "max_num_prefixes": null,
  "num_sub_rounds": 1, "sampling": "poisson", "sampling_rate": null,
  "tff_max_user_contribution": null, "tff_secure_sum": null, "theta": null},
 "config_key": "1087690d599a1297", "dataset": "default",
 "delta": 1.1111111111111111e-07,
 "discovered": ["the", "to", "in", "and", "of", "a"], "engine": "fast",
 "epsilon": 3.529076670120528, "gamma": 19.42480947201487,
 "has_guarantee": true, "levels": 5, "max_length": 4,
 "max_num_prefixes": null,
 "metrics": {"f1@10": 0.7499999999999999, "f1@100": 0.11320754716981131,
  "f1@50": 0.21428571428571425, "f1_paper@10": 0.7499999999999999,
  "f1_paper@100": 0.11320754716981131, "f1_paper@50": 0.21428571428571425,
  "num_discovered": 6.0, "precision": 1.0, "precision@10": 1.0,
  "precision@100": 1.0, "precision@50": 1.0, "recall@10": 0.6,
  "recall@100": 0.06, "recall@50": 0.12},
 "n_users": 3000, "num_participants": 4340, "num_sub_rounds": 1,
 "reported_counts": [62, 38, 29, 28, 27, 25], "rounds": 4, "run": 0,
 "sampling": "poisson", "sampling_rate": 0.3546468774354187,
 "schema_version": 2, "seconds": 0.00020100000006095797, "seed": 0,
 "setting": "single", "target_delta": 1.1111111111111111e-07,
 "target_epsilon": 4.0, "tff_max_user_contribution": null,
 "tff_secure_sum": null, "tff_workers": null, "theta": 17,
 "votes_per_round": [1100, 1063, 359, 106], "word_choice": "per_round"}""")
_OLD["covers"] = (
    "the set of discovered words and prefixes (the output trie), not their "
    "vote counts; in both directions, for neighbours under REPLACE_SPECIAL "
    "(one user's words replaced by the empty word, the paper's adjacency). "
    "n = |D| is read off the data (the parameters depend on it) and treated "
    "as public: only neighbours of the same size are covered")
OLD_LINE = json.dumps(_OLD, sort_keys=True, allow_nan=False)


def _records(out) -> list[dict]:
  return [json.loads(line) for line in
          (out / "results.jsonl").read_text().splitlines()]


def test_default_run_covers_replace_special_with_n_read_off_the_data(
    tmp_path):
  code, out, err = drivers.run_in_process(run_triehh, *SMALL,
                                          f"--output_dir={tmp_path}")
  assert code == 0, err
  assert ("  covers: REPLACE_SPECIAL only (both directions): n = |D| = 3000 "
          "was read off the data (declare --population_size to cover "
          "ADD_OR_REMOVE_ONE)") in out
  # The rate is printed rounded down (safe_format.rate_down).
  (record,) = _records(tmp_path)
  own = record["params"]
  assert "rate q=0.3756 " in out and own["sampling_rate"] > 0.3756
  assert (record["adjacency"], record["n_source"],
          own["population_size"]) == ("REPLACE_SPECIAL", "data", None)
  assert "adjacency" not in record["config"]
  assert "population_size" not in record["config"]
  # The same flags as the run written before these fields: the same key.
  assert record["config_key"] == _OLD["config_key"]


def test_replace_one_with_a_declared_n_is_printed_and_recorded(tmp_path):
  code, out, err = drivers.run_in_process(
      run_triehh, *SMALL, "--adjacency=REPLACE_ONE",
      "--population_size=4000", f"--output_dir={tmp_path}")
  assert code == 0, err
  assert ("  covers: ADD_OR_REMOVE_ONE, REPLACE_ONE, REPLACE_SPECIAL (both "
          "directions); n=4000 declared public") in out
  (record,) = _records(tmp_path)
  assert record["adjacency"] == ("ADD_OR_REMOVE_ONE, REPLACE_ONE, "
                                 "REPLACE_SPECIAL")
  assert (record["n_source"], record["params"]["population_size"]) == (
      "declared", 4000)
  assert record["n_users"] == 3000
  assert record["delta"] == pytest.approx(1 / 4000**2)
  assert (record["config"]["adjacency"],
          record["config"]["population_size"]) == ("REPLACE_ONE", 4000)
  assert record["config_key"] != _OLD["config_key"]
  assert records.RunRecord.from_dict(record).population_size == 4000


@pytest.mark.parametrize("flags, needle", [
    (["--adjacency=ADD_OR_REMOVE_ONE"],
     "Declare a public population size (--population_size), or give --delta"),
    (["--adjacency=REPLACE_ONE", "--sampling=fixed"],
     "REPLACE_ONE needs --sampling=poisson"),
    # 'add' is the audit's family: a run takes dp_accounting's relations.
    (["--adjacency=add"], "error: flag --adjacency=add: value should be one "
     "of <ADD_OR_REMOVE_ONE|REPLACE_ONE|REPLACE_SPECIAL>"),
    (["--population_size=0"], "--population_size"),
])
def test_uncovered_relations_fail_naming_the_flags(flags, needle):
  code, out, err = drivers.run_in_process(run_triehh, *SMALL, *flags)
  assert code == 1, out
  assert needle in err
  assert err.startswith("error: ") and len(err.splitlines()) == 1


def test_add_or_remove_without_n_is_covered_by_parameters_free_of_n():
  code, out, err = drivers.run_in_process(
      run_triehh, *SMALL, "--adjacency=ADD_OR_REMOVE_ONE", "--delta=1e-8")
  assert code == 0, err
  assert ("covers: ADD_OR_REMOVE_ONE, REPLACE_SPECIAL (both directions); the "
          "parameters do not depend on n") in out


def test_fixed_size_runs_say_what_add_or_remove_needs():
  code, out, err = drivers.run_in_process(run_triehh, *SMALL,
                                          "--sampling=fixed")
  assert code == 0, err
  assert ("covers: REPLACE_SPECIAL only (one direction): n = |D| = 3000 was "
          "read off the data (ADD_OR_REMOVE_ONE needs --sampling=poisson and "
          "--population_size)") in out


def test_counts_print_sigma_rounded_up_and_the_rate_given(tmp_path):
  code, out, err = drivers.run_in_process(
      run_triehh, *SMALL, "--counts", "--count_sample_rate=0.7",
      f"--output_dir={tmp_path}")
  assert code == 0, err
  line = [l for l in out.splitlines() if "Gaussian noise sigma=" in l][0]
  assert line.endswith("sample rate q=0.7")
  sigma = float(line.split("sigma=")[1].split(",")[0])
  (record,) = _records(tmp_path)
  noise_std = record["params"]["count_noise_std"]
  assert noise_std <= sigma < noise_std * (1 + 1e-3)


def test_an_old_record_still_reads_and_its_runs_are_resumed(tmp_path):
  record = records.RunRecord.from_json(OLD_LINE)
  assert (record.adjacency, record.n_source, record.population_size) == (
      None, None, None)  # not recorded
  assert record.config_key == records.config_key(_OLD["config"])
  (tmp_path / "results.jsonl").write_text(OLD_LINE + "\n")
  flags = ("--num_users=3000", "--max_length=4", "--epsilons=4",
           "--num_runs=2", f"--output_dir={tmp_path}", "--noprogress")
  code, out, err = drivers.run_in_process(sweep, *flags)
  assert code == 0, err
  assert "1 already in" in out + err and "1 to run" in out + err
  got = _records(tmp_path)
  assert got[0] == _OLD and [r["seed"] for r in got] == [0, 1]
  assert got[1]["config_key"] == _OLD["config_key"]
  assert got[1]["adjacency"] == "REPLACE_SPECIAL"


def test_sweep_cells_take_the_flags_and_refuse_uncovered_ones(tmp_path):
  flags = ("--num_users=3000", "--max_length=4", "--epsilons=4",
           "--noprogress", "--adjacency=ADD_OR_REMOVE_ONE")
  code, out, err = drivers.run_in_process(
      sweep, *flags, f"--output_dir={tmp_path / 'refused'}")
  assert code == 1
  assert "ADD_OR_REMOVE_ONE" in err and "(--population_size)" in err
  code, out, err = drivers.run_in_process(
      sweep, *flags, "--population_size=3000", f"--output_dir={tmp_path}")
  assert code == 0, err
  (record,) = _records(tmp_path)
  assert record["adjacency"] == "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL"
  assert record["config"]["population_size"] == 3000
  code, _, err = drivers.run_in_process(
      sweep, "--algorithms=sfp", "--adjacency=REPLACE_ONE",
      f"--output_dir={tmp_path / 'sfp'}")
  assert code == 1 and "--adjacency applies to TrieHH cells only" in err


def test_the_audit_refuses_a_run_relation():
  code, _, err = drivers.run_in_process(
      audit_privacy, "--num_users=1000", "--theta=12", "--batch_size=32",
      "--max_length=1", "--runs_per_side=0", "--adjacency=REPLACE_ONE")
  assert code == 1
  assert err == ("error: flag --adjacency=REPLACE_ONE: value should be one "
                 "of <replace|add>\n")
