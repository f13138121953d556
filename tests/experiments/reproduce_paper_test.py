"""reproduce_paper on a tiny configuration: report, figures, resuming."""

import json
import os

from tests.experiments import drivers

TINY = ("--settings=single,oov", "--epsilons=1,4", "--triehh_runs=2",
        "--sfp_runs=1", "--sfp_k=16", "--single_num_users=20000",
        "--oov_num_users=20000", "--workers=1", "--cache_dir=")


def test_tiny_reproduction_writes_the_report_and_resumes(tmp_path):
  out, report = tmp_path / "runs", tmp_path / "report"
  flags = (*TINY, f"--output_dir={out}", f"--report_dir={report}")
  proc = drivers.run_module("experiments.reproduce_paper", *flags)
  assert proc.returncode == 0, proc.stderr
  # TrieHH: 2 settings x 2 epsilons x 2 runs; SFP: single T=20 and oov
  # T=20, 80, at 2 epsilons, 1 run each.
  assert "10 cells, 14 runs left" in proc.stdout
  with open(out / "results.jsonl", encoding="utf-8") as f:
    records = [json.loads(line) for line in f]
  assert len(records) == 14
  sfp = [r for r in records if r["algorithm"] == "sfp"]
  assert {r["fragment_alphabet"] for r in sfp} == {
      "abcdefghijklmnopqrstuvwxyz.#/'"}
  assert {r["config"]["stitching"] for r in sfp} == {"paper"}
  assert {r["config"]["data"]["max_length"] for r in records} == {9}
  assert all("f1_paper@50" in r["metrics"] for r in records)
  text = (report / "REPORT.md").read_text(encoding="utf-8")
  for needle in ("## Table 1", "## Table 2", "| TrieHH | 1 | 0.65 |",
                 "| SFP (T=80) | 4 | 0.325 |", "| oov | 4 | 5.99 |",
                 "fig-f1-single-oov.png", "paper-calibrated oov: n = 20,000"):
    assert needle in text, needle
  for name in ("fig-fix-prob", "fig-freq-single", "fig-recall-single",
               "fig-f1-single-oov"):
    with open(report / f"{name}.png", "rb") as f:
      assert f.read(8) == b"\x89PNG\r\n\x1a\n", name
  assert not os.path.exists(report / "fig-recall-multi.png")
  # A second invocation finds every run recorded.
  again = drivers.run_module("experiments.reproduce_paper", *flags)
  assert again.returncode == 0, again.stderr
  assert "10 cells, 0 runs left" in again.stdout
  with open(out / "results.jsonl", encoding="utf-8") as f:
    assert len(f.readlines()) == 14


def test_several_words_without_the_file_is_refused(tmp_path):
  proc = drivers.run_module(
      "experiments.reproduce_paper", "--settings=multi",
      f"--data_path={tmp_path / 'missing.csv'}",
      f"--output_dir={tmp_path}")
  assert proc.returncode == 1
  assert proc.stderr.strip().splitlines()[-1].startswith(
      "error: nothing to run")
