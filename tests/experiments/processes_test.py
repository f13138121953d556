"""The drivers' processes: workers that die with their sweep, Ctrl-C while
a driver is still importing, and the runs said kept on Ctrl-C."""

import collections
import os
import signal
import subprocess
import sys
import time

import pytest

from experiments import sweep
from tests.experiments import drivers
from triehh.runs import records

# Small, quick cells (fixed-size sampling needs no calibration).
_GRID = ("--num_users=20000", "--sampling=fixed")
# Ends the import it is part of with Ctrl-C, as a user pressing it in the
# first second would (a stand-in for scipy, which every driver imports).
_CTRL_C_IN_IMPORT = """
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)
time.sleep(60)
"""


def _with_ctrl_c_in_import(tmp_path) -> dict[str, str]:
  """An environment where importing scipy is interrupted by Ctrl-C."""
  package = tmp_path / "stand_in" / "scipy"
  package.mkdir(parents=True)
  (package / "__init__.py").write_text(_CTRL_C_IN_IMPORT)
  path = os.environ.get("PYTHONPATH")
  return dict(os.environ, PYTHONPATH=str(package.parent) + (
      os.pathsep + path if path else ""))


@pytest.mark.parametrize("command", [
    drivers.interruptible("experiments.sweep", "--output_dir=unused"),
    drivers.interruptible_entry_point("experiments.reproduce_paper:run",
                                      "--output_dir=unused"),
], ids=["python -m", "console script"])
def test_ctrl_c_while_importing_says_interrupted_in_one_line(tmp_path,
                                                             command):
  done = subprocess.run(command, cwd=drivers.ROOT, capture_output=True,
                        text=True, timeout=300, check=False,
                        env=_with_ctrl_c_in_import(tmp_path))
  assert (done.returncode, done.stderr, done.stdout) == (
      130, "interrupted\n", "")


def test_the_runs_said_kept_are_the_lines_in_the_file(tmp_path, monkeypatch):
  def interrupted(self, event):
    del self
    if event.kind == "run":  # after the line, before its progress
      raise KeyboardInterrupt

  monkeypatch.setattr(sweep.Progress, "__call__", interrupted)
  code, _, err = drivers.run_in_process(
      sweep, *_GRID, "--epsilons=8", "--num_runs=5",
      f"--output_dir={tmp_path}", "--noprogress",
      on_interrupt=sweep._kept)  # pylint: disable=protected-access
  lines = (tmp_path / "results.jsonl").read_text().splitlines()
  assert code == 130 and len(lines) == 1
  assert err.strip() == ("interrupted: 1 finished runs kept in "
                         f"{tmp_path / 'results.jsonl'}")


def _stat(pid: int) -> tuple[str, int, int] | None:
  """(state, parent pid, start time in clock ticks) of a process, or None
  if there is none. Ids are reused (32,768 of them wrap within a minute
  while TFF workers start threads), so a process is known by its id and
  start time together."""
  try:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
      fields = f.read().rsplit(")", 1)[1].split()
  except (FileNotFoundError, ProcessLookupError):
    return None
  return fields[0], int(fields[1]), int(fields[19])


def _pids() -> list[int]:
  return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _survivors(children: dict[int, int], marker: str) -> list[int]:
  """The running processes among ``children`` (pid: start time) or whose
  command line holds ``marker``."""
  out = []
  for pid in set(children) | set(_pids()):
    stat = _stat(pid)
    if stat is None or stat[0] in ("Z", "X") or pid == os.getpid():
      continue
    try:
      with open(f"/proc/{pid}/cmdline", "rb") as f:
        marked = marker.encode() in f.read()
    except OSError:
      marked = False
    if children.get(pid) == stat[2] or marked:
      out.append(pid)
  return out


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_killed_sweep_leaves_no_worker_and_resumes(tmp_path):
  output_dir = str(tmp_path / "killed-sweep-out")
  sweep_process = subprocess.Popen(  # pylint: disable=consider-using-with
      [sys.executable, "-m", "experiments.sweep", *_GRID, "--epsilons=1,2",
       "--num_runs=100000", f"--output_dir={output_dir}", "--noprogress",
       "--workers=2"], cwd=drivers.ROOT,
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  results = os.path.join(output_dir, "results.jsonl")
  children = {}
  try:
    deadline = time.monotonic() + 600  # start-up is slow on a loaded machine
    while time.monotonic() < deadline and not (
        os.path.exists(results) and os.path.getsize(results)):
      assert sweep_process.poll() is None, "the sweep ended early"
      time.sleep(0.05)
    children = {pid: stat[2] for pid, stat in
                ((pid, _stat(pid)) for pid in _pids())
                if stat is not None and stat[1] == sweep_process.pid}
    assert len(children) >= 2  # the workers (and the event relay)
    sweep_process.kill()
    sweep_process.wait()
    deadline = time.monotonic() + 10
    while _survivors(children, output_dir) and time.monotonic() < deadline:
      time.sleep(0.05)
    assert not _survivors(children, output_dir)
  finally:
    if sweep_process.poll() is None:
      sweep_process.kill()
    for pid in _survivors(children, output_dir):
      os.kill(pid, signal.SIGKILL)
  _check_resume(output_dir)


def _check_resume(output_dir: str) -> None:
  """A resumed sweep runs the runs missing, once each."""
  got, bad = records.read(os.path.join(output_dir, "results.jsonl"))
  assert all(line.unfinished for line in bad)
  seeds = collections.Counter((r.config_key, r.seed) for r in got)
  assert max(seeds.values()) == 1
  num_runs = max(seed for _, seed in seeds) + 2
  code, _, err = drivers.run_in_process(
      sweep, *_GRID, "--epsilons=1,2", f"--num_runs={num_runs}",
      f"--output_dir={output_dir}", "--noprogress")
  assert code == 0, err
  got, bad = records.read(os.path.join(output_dir, "results.jsonl"))
  kept = collections.Counter((r.config_key, r.seed) for r in got
                             if r.seed < num_runs)
  assert bad == [] and len(kept) == 2 * num_runs
  assert set(kept.values()) == {1}
