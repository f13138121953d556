"""Smoke test of the beyond-the-paper report, run tiny.

The driver runs in its own process: its flags (``seed``, ``cache_dir``...)
share names with other drivers'.
"""

from __future__ import annotations

import os
import re

from tests.experiments import drivers


def test_writes_the_report_and_figures(tmp_path):
  proc = drivers.run_module(
      "experiments.beyond", f"--report_dir={tmp_path}",
      "--parts=passes,availability", "--runs=2", "--default_users=50000",
      "--pass_counts=1,2", "--fractions=1,0.5",
      "--sentiment140_path=/nonexistent.csv", "--cache_dir=")
  assert proc.returncode == 0, proc.stderr
  assert "wrote" in proc.stdout
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
  for name in ("beyond-passes.png", "beyond-availability.png"):
    assert os.path.getsize(tmp_path / name) > 1000


def test_unknown_part(tmp_path):
  proc = drivers.run_module("experiments.beyond",
                            f"--report_dir={tmp_path}", "--parts=sketch")
  assert proc.returncode == 1
  assert "unknown part 'sketch'" in proc.stderr
