"""Runs an experiment driver as a user does: ``python -m <module> <flags>``."""

import contextlib
import io
import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_sigint() -> None:
  """``preexec_fn`` of a driver that a test interrupts with SIGINT: the
  default disposition, so that the driver's Python installs its Ctrl-C
  handler even when the suite runs with SIGINT ignored (a background job)."""
  signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_module(module: str, *flags: str,
               timeout: float = 300) -> subprocess.CompletedProcess:
  """Runs ``module`` from the repository root; captures its text output."""
  return subprocess.run([sys.executable, "-m", module, *flags], cwd=ROOT,
                        capture_output=True, text=True, timeout=timeout)


def run_in_process(module, *flags: str) -> tuple[int, str, str]:
  """Parses ``flags`` and runs ``module.main`` here, as its entry point would.

  Returns the exit status and what was printed on stdout and stderr; every
  flag is restored afterwards.
  """
  from absl.testing import flagsaver  # pylint: disable=g-import-not-at-top
  from experiments import cli  # pylint: disable=g-import-not-at-top
  out, err = io.StringIO(), io.StringIO()
  with flagsaver.flagsaver(), contextlib.redirect_stdout(out), (
      contextlib.redirect_stderr(err)):
    try:
      argv = cli.parse_flags([module.__name__, *flags], module)
      code = cli.call_main(module.main, argv)
    except SystemExit as exit_:
      code = exit_.code
  return code, out.getvalue(), err.getvalue()
