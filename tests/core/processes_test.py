"""Tests of triehh.core.processes: children that die with their parent.

Each test makes a parent (a spawned process) and its child, kills the parent
with SIGKILL, so that it runs no clean-up, and checks that the child is gone
within a few seconds; survivors are killed in a ``finally``.
"""

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from triehh.core import processes

_FORK = multiprocessing.get_context("fork")
# The parents are spawned: a test worker may have loaded TensorFlow or gRPC
# (another test ran in it), and a forked copy of such a process can crash
# when it starts a child.
_SPAWN = multiprocessing.get_context("spawn")
_LINUX = sys.platform.startswith("linux")
# How long a child may take to notice that its parent died.
_GRACE_SECONDS = 5.0


def _start_time(pid: int) -> int | None:
  """When ``pid`` started (clock ticks since boot), None without /proc."""
  try:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
      return int(f.read().rsplit(")", 1)[1].split()[19])
  except OSError:
    return None


def _running(pid: int, started: int | None = None) -> bool:
  """Whether ``pid`` runs (a zombie does not) and, given ``started`` (its
  :func:`_start_time`), is still that process: ids are reused, within a
  minute while TFF workers start threads."""
  try:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
      fields = f.read().rsplit(")", 1)[1].split()
    return fields[0] not in ("Z", "X") and started in (None, int(fields[19]))
  except FileNotFoundError:
    return False
  except OSError:  # no /proc
    try:
      os.kill(pid, 0)
    except ProcessLookupError:
      return False
    return True


def _gone_within(pid: int, started: int | None, seconds: float) -> bool:
  deadline = time.monotonic() + seconds
  while _running(pid, started):
    if time.monotonic() > deadline:
      return False
    time.sleep(0.02)
  return True


def _child(parent_pid: int, report) -> None:
  processes.die_with_parent(parent_pid, poll_seconds=0.05)
  report.send("armed")
  time.sleep(60)


def _parent(report) -> None:
  child = _FORK.Process(target=_child, args=(os.getpid(), report))
  child.start()
  report.send(child.pid)
  time.sleep(60)


def _exec_parent(report) -> None:
  sleeper = subprocess.Popen(  # pylint: disable=consider-using-with
      ["sleep", "60"], preexec_fn=processes.before_exec_die_with_parent())
  report.send(sleeper.pid)
  time.sleep(60)


def _kill_parent_then_check_child(parent_target, messages: int) -> None:
  """Starts ``parent_target``; once its child is ready, SIGKILLs the parent
  and asserts that the child ends."""
  receive, send = _SPAWN.Pipe(duplex=False)
  parent = _SPAWN.Process(target=parent_target, args=(send,))
  parent.start()
  child_pid = started = None
  try:
    assert receive.poll(60), "the parent did not start its child"
    child_pid = receive.recv()
    started = _start_time(child_pid)
    for _ in range(messages):  # the child says it is ready
      assert receive.poll(60), "the child did not get ready"
      receive.recv()
    os.kill(parent.pid, signal.SIGKILL)
    parent.join()
    assert _gone_within(child_pid, started, _GRACE_SECONDS), (
        f"the child {child_pid} outlived its parent")
  finally:
    if parent.is_alive():
      parent.kill()
      parent.join()
    if child_pid is not None and _running(child_pid, started):
      os.kill(child_pid, signal.SIGKILL)


@pytest.mark.skipif(not _LINUX, reason="prctl is Linux's")
def test_a_child_dies_with_its_killed_parent():
  _kill_parent_then_check_child(_parent, messages=1)


def test_without_prctl_a_watchdog_thread_ends_the_child(monkeypatch):
  monkeypatch.setattr(processes, "_prctl", lambda: None)  # forked children too
  assert not processes.set_parent_death_signal()
  _kill_parent_then_check_child(_parent, messages=1)


def _too_late(parent_pid: int) -> None:
  processes.die_with_parent(parent_pid)
  time.sleep(60)  # not reached


def test_a_child_whose_parent_died_before_it_asked_ends_at_once():
  # The expected parent is not this child's parent any more.
  child = _FORK.Process(target=_too_late, args=(os.getpid() + 10 ** 7,))
  child.start()
  try:
    child.join(_GRACE_SECONDS)
    assert child.exitcode == -signal.SIGTERM
  finally:
    if child.is_alive():
      child.kill()
      child.join()


@pytest.mark.skipif(not _LINUX, reason="prctl is Linux's")
def test_an_execed_child_dies_with_its_killed_parent():
  _kill_parent_then_check_child(_exec_parent, messages=0)


def test_terminate_raises_runs_the_clean_up_and_restores_the_default():
  code = (
      "import os, signal, sys\n"
      "from triehh.core import processes\n"
      "try:\n"
      "  with processes.terminate_raises():\n"
      "    try:\n"
      "      os.kill(os.getpid(), signal.SIGTERM)\n"
      "      signal.pause()\n"
      "    finally:\n"
      "      print('cleaned up', flush=True)\n"
      "except processes.Terminated as err:\n"
      "  print('raised', err.code, flush=True)\n"
      "print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n")
  root = os.path.dirname(os.path.dirname(os.path.dirname(
      os.path.abspath(__file__))))
  out = subprocess.run([sys.executable, "-c", code], cwd=root, check=True,
                       capture_output=True, text=True, timeout=60).stdout
  assert out.split("\n") == ["cleaned up", "raised 143", "True", ""]


def test_terminate_raises_leaves_a_handler_of_the_callers_alone():
  def mine(signum, frame):
    del signum, frame

  previous = signal.signal(signal.SIGTERM, mine)
  try:
    with processes.terminate_raises():
      assert signal.getsignal(signal.SIGTERM) is mine
    assert signal.getsignal(signal.SIGTERM) is mine
  finally:
    signal.signal(signal.SIGTERM, previous)
