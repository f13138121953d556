"""reproduce_paper on a tiny configuration: report, figures, resuming."""

import json
import os
import subprocess

import pytest

from experiments import flags as shared_flags
from experiments import reproduce_paper
from tests.data import helpers as data_helpers
from tests.experiments import drivers

TINY = ("--settings=single,oov", "--epsilons=1,4", "--triehh_runs=2",
        "--sfp_runs=1", "--cms_k=16", "--single_num_users=20000",
        "--oov_num_users=20000", "--workers=1", "--cache_dir=",
        "--tails=sample", "--multi_large_num_users=0")
# The table beyond the paper at one n (its default n reach 10^8, ~1 min).
TABLE = ("--poisson_table_ns=10000", "--poisson_table_epsilons=1,4")
BEYOND = ("## Beyond the paper: Poisson sampling, a guarantee proven in both "
          "directions")


def run(*flags: str) -> subprocess.CompletedProcess:
  """The driver run in this process, as its entry point would run it."""
  status, out, err = drivers.run_in_process(reproduce_paper, *flags)
  return subprocess.CompletedProcess(flags, status, out, err)


def test_tiny_reproduction_writes_the_report_and_resumes(tmp_path):
  out, report = tmp_path / "runs", tmp_path / "report"
  flags = (*TINY, *TABLE, f"--output_dir={out}", f"--report_dir={report}")
  proc = run(*flags)
  assert proc.returncode == 0, proc.stderr
  # TrieHH: 2 settings x 2 epsilons x 2 runs; SFP: single T=20 and oov
  # T=20, 80, at 2 epsilons, 1 run each; beyond the paper, TrieHH with
  # Poisson sampling: 2 settings x 2 epsilons x 2 runs.
  assert "14 cells, 22 runs left" in proc.stdout
  with open(out / "results.jsonl", encoding="utf-8") as f:
    records = [json.loads(line) for line in f]
  assert len(records) == 22
  poisson = [r for r in records if r["params"].get("sampling") == "poisson"]
  assert len(poisson) == 8
  assert all(0 < r["params"]["sampling_rate"] < 1
             and r["config"]["sampling"] == "poisson" for r in poisson)
  assert {(r["setting"], r["target_epsilon"], r["seed"]) for r in poisson} == {
      (s, e, seed) for s in ("single", "oov") for e in (1.0, 4.0)
      for seed in (0, 1)}
  # The paper's cells are fixed-size, with the configs they always had.
  assert not any("sampling" in r["config"] for r in records
                 if r not in poisson)
  sfp = [r for r in records if r["algorithm"] == "sfp"]
  assert {r["params"]["fragment_alphabet"] for r in sfp} == {
      "abcdefghijklmnopqrstuvwxyz.#/'"}
  assert {r["config"]["stitching"] for r in sfp} == {"paper"}
  assert {r["config"]["data"]["max_length"] for r in records} == {9}
  assert all("f1_paper@50" in r["metrics"] for r in records)
  text = (report / "REPORT.md").read_text(encoding="utf-8")
  assert ("It wrote all 22 runs the report uses (none resumed from earlier "
          "records).") in text
  for needle in ("## Table 1", "## Table 2", "| TrieHH | 1 | 0.65 |",
                 "| SFP (T=80) | 4 | 0.325 |", "| oov | 4 | 5.99 |",
                 "fig-f1-single-oov.png", "paper-calibrated oov: n = 20,000"):
    assert needle in text, needle
  # The section beyond the paper, before the figures: the table at n = 10^4
  # and one labelled row per Poisson cell, on the data of the paper's rows.
  section = text[text.index(BEYOND):text.index("## Figures")]
  assert "| 10^4 | 1 | cannot be calibrated: " in section
  assert "| 10^4 | 4 | 12, 254 | 21, 0.3711, 3,711 † | 14.6 | 8.3 |" in section
  rows = [line for line in section.splitlines()
          if line.startswith("| beyond the paper (Poisson sampling, "
                             "two-sided) |")]
  assert len(rows) == 4
  assert rows[0].startswith("| beyond the paper (Poisson sampling, "
                            "two-sided) | Table 2: TrieHH recall@50, OOV, "
                            "δ = 1/n² | 1 | 0.65 | ")
  assert all("| 2, 2 |" in row for row in rows)
  assert all(row.endswith("users per word rounded by largest remainders. |")
             and "paper-calibrated " in row for row in rows)
  for name in ("fig-fix-prob", "fig-freq-single", "fig-recall-single",
               "fig-f1-single-oov"):
    with open(report / f"{name}.png", "rb") as f:
      assert f.read(8) == b"\x89PNG\r\n\x1a\n", name
  assert not os.path.exists(report / "fig-recall-multi.png")
  # A second invocation finds every run recorded.
  again = run(*flags)
  assert again.returncode == 0, again.stderr
  assert "14 cells, 0 runs left" in again.stdout
  with open(out / "results.jsonl", encoding="utf-8") as f:
    assert len(f.readlines()) == 22
  again_text = (report / "REPORT.md").read_text(encoding="utf-8")
  assert again_text.split("\n")[10:] == text.split("\n")[10:]
  assert ("It wrote 0 runs and read 22 from the records of earlier "
          "invocations") in again_text


def test_other_tails_run_as_an_ablation_of_table_2(tmp_path):
  out = tmp_path / "runs"
  proc = run(*TINY, "--settings=oov", "--epsilons=4", "--sfp_epsilons=4",
             "--top_ts=20", "--tails=sample,zipf", "--nopoisson",
             f"--output_dir={out}")
  assert proc.returncode == 0, proc.stderr
  # TrieHH and SFP at epsilon 4 on the sample's tail, then on the Zipf one.
  assert "4 cells, 6 runs left" in proc.stdout
  with open(out / "results.jsonl", encoding="utf-8") as f:
    records = [json.loads(line) for line in f]
  tails = [r["config"]["data"].get("tail") for r in records]
  assert tails.count("zipf") == 3 and tails.count(None) == 3
  text = (out / "REPORT.md").read_text(encoding="utf-8")
  assert "### Table 2 on 2 tails (ablation of the tail we built)" in text
  assert "| SFP (T=20) | 4 | a Zipf law fitted to the published top 100, " \
         "extrapolated | 0.19 | " in text
  assert "- **oov@zipf** (semi-synthetic OOV population: " in text


@pytest.mark.skipif(data_helpers.sentiment140_sample_path() is None,
                    reason="the Sentiment140 sample is not available")
def test_several_words_run_the_three_accountings(tmp_path):
  out = tmp_path / "runs"
  proc = run("--settings=multi", "--epsilons=4", "--multi_runs=1",
             "--multi_num_users=0", "--multi_large_num_users=0",
             "--nopoisson", "--workers=1", "--cache_dir=",
             f"--output_dir={out}")
  assert proc.returncode == 0, proc.stderr
  assert "3 cells, 3 runs left" in proc.stdout
  with open(out / "results.jsonl", encoding="utf-8") as f:
    records = {(r["params"]["word_choice"], r["config"]["epsilon"]): r
               for r in map(json.loads, f)}
  ours = records[("per_round", 4.0)]
  paper = records[("per_round", None)]
  per_run = records[("per_run", 4.0)]
  assert ours["target_delta"] == per_run["target_delta"] == 5e-9
  # The paper's accounting: theta and m of Corollary 1 at the full delta,
  # the same as per_run's, run with per-round redraws (accounted L * delta).
  assert (paper["params"]["theta"], paper["params"]["batch_size"]) == (
      per_run["params"]["theta"], per_run["params"]["batch_size"])
  assert paper["params"]["theta"] == ours["params"]["theta"] - 1
  assert paper["delta"] == pytest.approx(10 * per_run["delta"])
  assert ours["delta"] <= 5e-9 and per_run["delta"] <= 5e-9
  text = (out / "REPORT.md").read_text(encoding="utf-8")
  assert ("| the paper's accounting, not covered by a proof for per-round "
          "redraws") in text


def test_without_poisson_the_report_has_no_section_beyond_the_paper(
    tmp_path):
  out = tmp_path / "runs"
  proc = run(*TINY, "--settings=oov", "--epsilons=4", "--sfp_runs=0",
             "--nopoisson", f"--output_dir={out}")
  assert proc.returncode == 0, proc.stderr
  assert "1 cells, 2 runs left" in proc.stdout
  assert BEYOND not in (out / "REPORT.md").read_text(encoding="utf-8")


def test_a_bad_table_n_is_refused(tmp_path):
  if not shared_flags.FLAGS.is_parsed():
    shared_flags.FLAGS.mark_as_parsed()
  code, out, err = drivers.run_in_process(
      reproduce_paper, *TINY, "--poisson_table_ns=1e4,2.5",
      f"--output_dir={tmp_path}")
  assert code == 1 and out == ""
  assert err.strip() == ("error: flag --poisson_table_ns=1e4,2.5: '2.5' is "
                         "not a whole number (e.g. 20000 or 2e4)")


def test_several_words_without_the_sample_is_refused(tmp_path, monkeypatch):
  if not shared_flags.FLAGS.is_parsed():
    shared_flags.FLAGS.mark_as_parsed()
  monkeypatch.setenv("TRIEHH_SENTIMENT140", str(tmp_path / "missing.csv"))
  code, out, err = drivers.run_in_process(
      reproduce_paper, "--settings=multi", f"--output_dir={tmp_path}")
  assert code == 1 and out == ""
  assert err.strip().startswith("error: nothing to run: the several-words "
                                "setting needs the Sentiment140 file")
