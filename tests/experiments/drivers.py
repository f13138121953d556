"""Runs an experiment driver as a user does: ``python -m <module> <flags>``."""

import contextlib
import io
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def interruptible(module: str, *flags: str) -> list[str]:
  """The command of a driver that a test interrupts with SIGINT.

  A small Python resets SIGINT to its default disposition and then execs the
  driver, so that the driver installs its Ctrl-C handler even when the suite
  runs with SIGINT ignored (a background job). Unlike a ``preexec_fn``, this
  does not run Python code in a forked copy of a test process that may hold
  gRPC threads (whose fork handlers can write to the child's stderr).
  """
  return [sys.executable, "-c", _RESET_SIGINT, "-m", module, *flags]


def interruptible_entry_point(entry_point: str, *flags: str) -> list[str]:
  """Like :func:`interruptible`, for a console entry point (``module:function``
  of pyproject.toml), run as its installed script runs it."""
  module, function = entry_point.split(":")
  code = f"import sys; from {module} import {function}; sys.exit({function}())"
  return [sys.executable, "-c", _RESET_SIGINT, "-c", code, *flags]


_RESET_SIGINT = ("import os, signal, sys; "
                 "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                 "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def run_module(module: str, *flags: str,
               timeout: float = 300) -> subprocess.CompletedProcess:
  """Runs ``module`` from the repository root; captures its text output."""
  return subprocess.run([sys.executable, "-m", module, *flags], cwd=ROOT,
                        capture_output=True, text=True, timeout=timeout)


def run_in_process(module, *flags: str,
                   on_interrupt=None) -> tuple[int, str, str]:
  """Parses ``flags`` and runs ``module.main`` here, as its entry point would
  (``on_interrupt``: what its entry point says on Ctrl-C).

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
      code = cli.call_main(module.main, argv, on_interrupt=on_interrupt)
    except SystemExit as exit_:
      code = exit_.code
  return code, out.getvalue(), err.getvalue()


def deny_opening(monkeypatch, path: str) -> None:
  """Makes ``os.open(path)`` fail as the system does for a file in a folder
  without search permission (EACCES), which a test run as root cannot
  make."""
  import errno  # pylint: disable=g-import-not-at-top
  real_open = os.open

  def fake_open(name, *args, **kwargs):
    if os.fspath(name) == path:
      raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
    return real_open(name, *args, **kwargs)

  monkeypatch.setattr(os, "open", fake_open)
