"""Runs an experiment driver as a user does: ``python -m <module> <flags>``."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_module(module: str, *flags: str,
               timeout: float = 300) -> subprocess.CompletedProcess:
  """Runs ``module`` from the repository root; captures its text output."""
  return subprocess.run([sys.executable, "-m", module, *flags], cwd=ROOT,
                        capture_output=True, text=True, timeout=timeout)
