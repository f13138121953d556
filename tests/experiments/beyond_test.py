"""Smoke test of the beyond-the-paper report, run tiny, then resumed.

The report runs in its own process: its flags (``seed``, ``cache_dir``...)
share names with other drivers'.
"""

from __future__ import annotations

import os
import re

from experiments import beyond
from experiments import flags as shared_flags
from tests.experiments import drivers
from triehh.data import datasets as datasets_lib


_FLAGS = ("--parts=passes,availability", "--num_runs=2", "--default_users=5e4",
          "--pass_counts=1,2", "--fractions=1,0.5", "--cache_dir=")
_FIGURES = ("beyond-passes.png", "beyond-availability.png")


def _run(report_dir, output_dir):
  proc = drivers.run_module("experiments.beyond", f"--report_dir={report_dir}",
                            f"--output_dir={output_dir}", *_FLAGS)
  assert proc.returncode == 0, proc.stderr
  assert "wrote" in proc.stdout
  return proc


def _but_wall_time_and_command(text: str) -> list[str]:
  return [line for line in text.splitlines()
          if not line.startswith(("Wall time", "Produced by"))]


def test_writes_the_report_and_figures_then_resumes(tmp_path, monkeypatch):
  # Without the sample (a --sentiment140_path that cannot be read is an
  # error; an absent default is a note).
  monkeypatch.setenv(datasets_lib.SENTIMENT140_ENV, str(tmp_path / "no.csv"))
  out = tmp_path / "runs"
  proc = _run(tmp_path, out)
  # (b): 2 numbers of passes, (c): 2 calibrations x 2 fractions; 2 seeds.
  assert "12 runs left" in proc.stdout and "12 runs run" in proc.stdout
  lines = (out / "results.jsonl").read_text().splitlines()
  assert len(lines) == 12
  text = (tmp_path / "BEYOND.md").read_text()
  assert "Sentiment140 sample is absent" in text
  rows = [line for line in text.splitlines()
          if line.startswith("| default data (n = 50,000) |")]
  assert [r.split("|")[2].strip() for r in rows] == ["1", "2"]
  for row in rows:  # the achieved total never exceeds the requested 4
    assert 0 < float(row.split("|")[5]) <= 4.0
  assert re.search(r"Answer: \*\*default data", text)
  online = [line for line in text.splitlines()
            if line.startswith("| online | 0.5 |")]
  assert online and online[0].split("|")[3].strip() == "25,000"
  nominal = [line for line in text.splitlines()
             if line.startswith("| nominal | 0.5 |")]
  assert float(nominal[0].split("|")[6]) > 4.0  # theta, m for n: larger eps
  for name in _FIGURES:
    assert os.path.getsize(tmp_path / name) > 1000
  # Again, into another report directory: nothing is run, the report and
  # its figures are the same.
  again = tmp_path / "again"
  proc = _run(again, out)
  assert "0 runs left" in proc.stdout and "0 runs run" in proc.stdout
  assert (out / "results.jsonl").read_text().splitlines() == lines
  assert _but_wall_time_and_command((again / "BEYOND.md").read_text()) == (
      _but_wall_time_and_command(text))
  for name in _FIGURES:
    assert (again / name).read_bytes() == (tmp_path / name).read_bytes()


def test_unknown_part(tmp_path):
  if not shared_flags.FLAGS.is_parsed():
    shared_flags.FLAGS.mark_as_parsed()
  code, out, err = drivers.run_in_process(
      beyond, f"--report_dir={tmp_path}", f"--output_dir={tmp_path}",
      "--parts=sketch")
  assert code == 1 and out == ""
  assert err.strip() == ("error: flag --parts=sketch: unknown value "
                         "'sketch': use iblt, passes, availability, "
                         "counts")


def test_user_counts_beyond_memory_name_their_flag(tmp_path, monkeypatch):
  # The library's check said "num_users" for --default_users.
  from triehh.core import memory  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(memory, "available_bytes", lambda: 10**9)
  for flag in ("default_users", "iblt_default_users"):
    code, _, err = drivers.run_in_process(
        beyond, f"--{flag}=1e12", f"--output_dir={tmp_path}")
    assert code == 1
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"error: --{flag}=1,000,000,000,000 users drawn")
    assert f"use --{flag} <= 26,315,789" in line
