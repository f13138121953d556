"""Tests of the protected-count flags of run_triehh, sweep and summarize
(--counts, --count_share, --count_sample_rate, --count_shares)."""

import json

import pytest

from experiments import run_triehh
from experiments import summarize
from experiments import sweep
from tests.experiments import drivers
from triehh.discovery import discover as discover_lib


def _records(out) -> list[dict]:
  return [json.loads(line) for line in
          (out / "results.jsonl").read_text().splitlines()]


def test_run_triehh_prints_and_records_the_protected_counts(tmp_path):
  code, out, err = drivers.run_in_process(
      run_triehh, "--num_users=5000", "--counts", "--count_share=0.2",
      "--show=3", f"--output_dir={tmp_path}")
  assert code == 0, err
  assert "privacy of discovery: (" in out
  assert "privacy in total (discovery, then counting): (" in out
  assert "protected counts, word:estimate [95% interval]" in out
  (record,) = _records(tmp_path)
  assert record["schema_version"] == 3
  assert record["epsilon"] <= 4.0 and record["target_epsilon"] == 4.0
  assert record["delta"] == pytest.approx(1 / 5000**2)
  assert record["params"]["discovery_epsilon"] < record["epsilon"]
  assert record["params"]["count_share"] == 0.2
  assert record["params"]["count_sample_rate"] == 1.0
  assert record["config"]["counts"] is True
  assert record["config"]["count_share"] == 0.2
  assert set(record["params"]["protected_counts"]) == set(record["discovered"])
  for estimate, lower, upper in record["params"]["protected_counts"].values():
    assert lower < estimate < upper
  assert {"count_error@10", "count_coverage@10"} <= set(record["metrics"])


@pytest.mark.parametrize("module, flags, needle", [
    (run_triehh, ["--count_share=0.2"],
     "error: --count_share=0.2 is for --counts; pass --counts to count"),
    (run_triehh, ["--count_sample_rate=0.5"],
     "error: --count_sample_rate=0.5 is for --counts; pass --counts"),
    (run_triehh, ["--counts", "--count_share=1"],
     "error: --count_share must be in (0, 1) (the share of epsilon and delta "
     "spent on counting), got --count_share=1.0"),
    (run_triehh, ["--counts", "--count_sample_rate=1.5"],
     "error: --count_sample_rate must be in (0, 1] (the probability that a "
     "user joins the counting sample), got --count_sample_rate=1.5"),
    (run_triehh, ["--counts", "--theta=5", "--batch_size=100"],
     "error: --counts needs --epsilon"),
    (run_triehh, ["--counts", "--allow_no_guarantee"],
     "error: --counts cannot go with --allow_no_guarantee: the counts'"),
    (sweep, ["--count_shares=0.2", "--output_dir=x"],
     "error: --count_shares is for --counts"),
    (sweep, ["--counts", "--count_shares=0.2", "--count_share=0.1",
             "--output_dir=x"],
     "error: give --count_shares or --count_share, not both"),
    (sweep, ["--counts", "--count_shares=0.2,1", "--output_dir=x"],
     "error: flag --count_shares=0.2,1: '1' is not a number in (0, 1)"),
    (sweep, ["--algorithms=sfp", "--counts", "--output_dir=x"],
     "error: --counts applies to TrieHH cells only"),
])
def test_count_flags_that_do_not_go_together_are_one_error_line(
    module, flags, needle):
  code, out, err = drivers.run_in_process(module, "--num_users=2000", *flags)
  assert code == 1
  lines = err.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith(needle), err
  assert out == ""


def test_a_sweep_over_count_shares_is_summarized_per_share(tmp_path):
  code, _, err = drivers.run_in_process(
      sweep, "--num_users=5000", "--counts", "--count_shares=0.1,0.3",
      "--num_runs=2", "--noprogress", f"--output_dir={tmp_path}")
  assert code == 0, err
  got = _records(tmp_path)
  assert sorted((r["params"]["count_share"], r["seed"]) for r in got) == [
      (0.1, 0), (0.1, 1), (0.3, 0), (0.3, 1)]
  assert len({r["config_key"] for r in got}) == 2
  code, out, err = drivers.run_in_process(summarize,
                                          f"--output_dir={tmp_path}")
  assert code == 0, err
  assert out.count("counts (share 0.1, sample rate 1)") == 1
  assert out.count("counts (share 0.3, sample rate 1)") == 1
  assert out.count("count_error@K   count_coverage@K") == 2


@pytest.mark.parametrize("args, kwargs, message", [
    ((False, 0.3, None), {},
     "--count_share=0.3 is for --counts; pass --counts to count the "
     "discovered words"),
    ((True, None, None), dict(allow_no_guarantee=True),
     "--counts cannot go with --allow_no_guarantee: the counts' guarantee "
     "is composed with discovery's"),
    ((True, None, None), dict(epsilon=None),
     "--counts needs --epsilon (the total budget split between discovery and "
     "counting), got --epsilon=None"),
    ((True, 1.0, None), {},
     "--count_share must be in (0, 1) (the share of epsilon and delta spent "
     "on counting), got --count_share=1.0"),
    ((True, None, 0.0), {},
     "--count_sample_rate must be in (0, 1] (the probability that a user "
     "joins the counting sample), got --count_sample_rate=0.0"),
])
def test_check_counting_said_as_the_drivers_flags(args, kwargs, message):
  # The library names its arguments; the driver says them as flags.
  kwargs = {"epsilon": 4.0, "allow_no_guarantee": False, **kwargs}
  with pytest.raises(ValueError) as raised:
    discover_lib.check_counting(*args, **kwargs)
  assert "--" not in str(raised.value)
  assert str(run_triehh.counting_in_flag_terms(raised.value)) == message
  assert discover_lib.check_counting(
      True, 0.25, 0.5, epsilon=4.0, allow_no_guarantee=False) == (0.25, 0.5)
