"""Child processes that die with the process that started them.

A sweep's worker processes, the process that relays their progress and a
TFF ``worker_binary`` must not outlive their parent: killed with SIGKILL,
the parent runs no clean-up, and a child left running would go on with work
nobody reads, then block forever on a pipe to the dead parent.

On Linux, ``prctl(PR_SET_PDEATHSIG, sig)`` has the kernel send ``sig`` to a
child when the thread that started it ends (so start children from a thread
that lives as long as the process, as the main thread does). The parent may
die before the child asks: the child then checks that its parent is still
the expected process, and stops at once if not. Where there is no ``prctl``,
a daemon thread polls ``os.getppid()`` instead.

A process ended by SIGTERM (the default action) runs no ``finally`` block
either: :func:`terminate_raises` turns it into an exception
(:class:`Terminated`) for the length of a block, so that the block's
clean-up runs (an ingestion's staging directory, say).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
POLL_SECONDS = 0.5


def _prctl() -> Callable[..., int] | None:
  """libc's ``prctl``, or None where there is none (not Linux)."""
  if not sys.platform.startswith("linux"):
    return None
  try:
    prctl = ctypes.CDLL(None, use_errno=True).prctl
  except (OSError, AttributeError):
    return None
  prctl.restype = ctypes.c_int
  return prctl


def _ask(prctl: Callable[..., int] | None, sig: int) -> bool:
  """Sets this process's parent-death signal; False if that failed."""
  if prctl is None:
    return False
  return prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(int(sig)), ctypes.c_ulong(0),
               ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0


def set_parent_death_signal(sig: int = signal.SIGTERM) -> bool:
  """Has the kernel send ``sig`` to this process when its parent ends.

  Returns False where that is not possible (no ``prctl``: not Linux).
  """
  return _ask(_prctl(), sig)


def _end(sig: int) -> None:
  """Sends ``sig`` to this process's main thread (which ends it, unless
  handled); a thread-directed signal waits while that thread blocks it."""
  signal.pthread_kill(threading.main_thread().ident, sig)


def _watch(parent_pid: int, sig: int, poll_seconds: float) -> None:
  while os.getppid() == parent_pid:
    time.sleep(poll_seconds)
  _end(sig)


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM, *,
                    poll_seconds: float = POLL_SECONDS) -> None:
  """Ends this process with ``sig`` when ``parent_pid``, its parent, ends.

  Call it first thing in a child process (a pool's initializer), with the
  pid the parent had when it started the child. If the parent is already
  gone (this process has another parent by now), ``sig`` is sent at once.
  Without ``prctl``, a daemon thread checks ``os.getppid()`` every
  ``poll_seconds``.
  """
  asked = set_parent_death_signal(sig)
  if os.getppid() != parent_pid:  # the parent died before we asked
    _end(sig)
    return
  if not asked:
    threading.Thread(target=_watch, args=(parent_pid, sig, poll_seconds),
                     name="die-with-parent", daemon=True).start()


def before_exec_die_with_parent(sig: int = signal.SIGTERM
                                ) -> Callable[[], None]:
  """A ``preexec_fn`` for ``subprocess.Popen``: the child gets ``sig`` when
  this process ends (Linux; elsewhere it does nothing, as no thread of ours
  survives the ``exec``).

  ``prctl`` is looked up here, in the parent, so that the child, between
  ``fork`` and ``exec``, only calls it.
  """
  prctl = _prctl()
  parent_pid = os.getpid()

  def hook() -> None:
    if _ask(prctl, sig) and os.getppid() != parent_pid:
      os.kill(os.getpid(), sig)

  return hook


class Terminated(SystemExit):
  """SIGTERM, raised by :func:`terminate_raises`; left uncaught, the process
  exits with the status a kill by SIGTERM gives a shell (143)."""

  def __init__(self, signum: int = signal.SIGTERM):
    super().__init__(128 + signum)
    self.signum = signum


@contextlib.contextmanager
def terminate_raises() -> Iterator[None]:
  """While the block runs, SIGTERM raises :class:`Terminated` in the main
  thread (once: a second SIGTERM is ignored while the first is cleaned up
  after), where the signal's action is the default; it is restored after.
  Elsewhere (another thread, a handler of the caller's) nothing changes."""
  if (threading.current_thread() is not threading.main_thread()
      or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
    yield
    return

  def handler(signum, frame):
    del frame
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated(signum)

  signal.signal(signal.SIGTERM, handler)
  try:
    yield
  finally:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
