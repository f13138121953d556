"""Smoke test of the field benchmark's driver, run tiny, then resumed.

The driver runs in its own process: its flags (``seed``, ``cache_dir``...)
share names with other drivers'.
"""

from __future__ import annotations

import pytest

from tests.experiments import drivers

_FLAGS = ("--num_users=2000", "--count_users=5e4", "--epsilons=4",
          "--side_epsilons=4", "--moonshot_epsilons=4", "--num_runs=2",
          "--ps_runs=2", "--noothers", "--cache_dir=",
          "--large_count_users=", "--sfp_users=2000", "--iblt_users=",
          "--tff_users=")


def _run(report_dir, output_dir):
  proc = drivers.run_module("experiments.field", f"--report_dir={report_dir}",
                            f"--output_dir={output_dir}", *_FLAGS)
  assert proc.returncode == 0, proc.stderr
  return proc


def test_writes_the_report_then_resumes(tmp_path):
  out = tmp_path / "runs"
  proc = _run(tmp_path, out)
  # 13 mechanisms (SFP, not IBLT) at n = 2,000 and 10 at 5e4 word counts
  # (the simulated ones and partition selection drawn from its law); 2
  # seeds each.
  assert "46 runs left" in proc.stdout and "wrote" in proc.stdout
  assert len((out / "results.jsonl").read_text().splitlines()) == 46
  text = (tmp_path / "FIELD.md").read_text()
  assert "| 50,000 | 4 | noisy trie, k = 1, α = 1e-5 |" in text
  assert ("| 50,000 | 4 | partition selection, truncated geometric |"
          in text)
  assert "| english-counts | 50,000 | 4 | " in text  # the every-cell table
  assert ("| 2,000 | 4 | two servers, widest first step, then steps of 2, "
          "10^7 candidates a step, then verified" in text)
  # The planned noisy trie wherever the noisy trie runs, with its bytes
  # per client per round (max) and per run, within its 1 MB.
  for n in ("2,000", "50,000"):
    (row,) = [line for line in text.splitlines() if line.startswith(
        f"| {n} | 4 | noisy trie, planned rounds, 1 MB per client per run |")]
    cells = [cell.strip() for cell in row.split("|")]
    per_round, per_run = (float(c.replace(",", "")) for c in cells[13:15])
    assert 0 < per_round <= per_run <= 1_000_000
  assert "**Within an upload budget** (n = 2,000, ε = 4)" in text
  assert "over the best partition selection's: " in text
  assert text.splitlines()[-1].startswith("Wall time")
  proc = _run(tmp_path / "again", out)
  assert "0 runs left" in proc.stdout
  again = (tmp_path / "again" / "FIELD.md").read_text()
  assert "46 runs were recorded by an earlier invocation" in again


@pytest.mark.parametrize("flags_given, said", [
    (("--large_count_users=1e19",), "error: flag --large_count_users=1e19: "
     "'1e19' is not a whole number from 2 to 4,611,686,018,427,387,903"),
    (("--num_users=1e3", "--sfp_users=1e10"), "error: --sfp_users: "
     "10,000,000,000 is not one of --num_users (1,000); these runs use the "
     "populations --num_users builds"),
])
def test_user_counts_the_field_cannot_run_are_named(tmp_path, flags_given,
                                                    said):
  # 1e19 ended in multinomial's OverflowError; an --sfp_users outside
  # --num_users ran no SFP row and said nothing.
  from experiments import field  # pylint: disable=g-import-not-at-top
  code, _, err = drivers.run_in_process(
      field, *flags_given, f"--output_dir={tmp_path}")
  assert code == 1
  assert err.strip().splitlines()[-1] == said


def test_a_malformed_results_line_is_named_by_file_and_line(tmp_path):
  # It was said as a bare JSON error: "Expecting ',' delimiter: line 1...".
  from experiments import field  # pylint: disable=g-import-not-at-top
  results = tmp_path / "results.jsonl"
  results.write_text('{"seed": 0}\n{"seed": 1 "n": 2}\n')
  code, _, err = drivers.run_in_process(
      field, f"--output_dir={tmp_path}", "--num_users=2000",
      "--count_users=", "--large_count_users=", "--sfp_users=",
      "--iblt_users=", "--tff_users=", "--noothers", "--cache_dir=")
  assert code == 1
  assert err.strip().splitlines()[-1] == (
      f"error: {results}:2: not a record (Expecting ',' delimiter: line 1 "
      "column 12 (char 11)); correct or remove the line, or choose another "
      "--output_dir")
