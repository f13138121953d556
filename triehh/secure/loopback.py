"""The two server processes of a walk, started and stopped on 127.0.0.1.

:func:`run_servers` starts two ``python -m triehh.secure.server_process``
children (each dies with this process, :mod:`triehh.core.processes`),
accepts their control connections on a loopback port, tells server 1 where
server 0 listens, sends each its plan, noise seed and keys, and reads back
what each released. It stops both processes whatever happens (terminate,
then kill), and says in one line which server stopped, and why, when one
does. Research prototype: no audited constant-time code.
"""

from __future__ import annotations

import json
import os
import pathlib
import select
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

from triehh.core import processes
from triehh.secure import transport

_ROOT = str(pathlib.Path(__file__).resolve().parent.parent.parent)
# Seconds a server process gets to end after the walk, then after SIGTERM.
_END_SECONDS = 5.0


def _start(party: int, port: int, token: str, timeout: float, log
           ) -> subprocess.Popen:
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      [_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
  child = subprocess.Popen(
      [sys.executable, "-m", "triehh.secure.server_process"],
      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log, env=env,
      preexec_fn=processes.before_exec_die_with_parent())
  line = json.dumps({"party": party, "port": port, "token": token,
                     "timeout": timeout})
  child.stdin.write(line.encode("utf-8") + b"\n")
  child.stdin.close()
  return child


def _why(party: int, child: subprocess.Popen, log) -> str:
  """What ended server ``party``: its exit code and its last stderr line."""
  try:
    child.wait(timeout=_END_SECONDS)
  except subprocess.TimeoutExpired:
    return f"server {party} is still running"
  log.seek(0)
  lines = [line.strip() for line in log.read().decode("utf-8", "replace")
           .splitlines() if line.strip()]
  said = f": {lines[-1]}" if lines else ""
  return f"server {party} stopped (exit code {child.returncode}){said}"


def _accept_both(control: socket.socket, token: str, children, logs,
                 timeout: float) -> dict:
  """The two servers' control channels and hellos, by party; fails as soon
  as a server process ends without connecting."""
  found, deadline = {}, time.monotonic() + timeout
  control.settimeout(0.1)
  while len(found) < 2:
    for party, child in enumerate(children):
      if child.poll() is not None and party not in found:
        raise transport.ProtocolError(_why(party, child, logs[party]))
    if time.monotonic() > deadline:
      raise transport.ProtocolError(
          f"a server did not connect within {timeout:g} s")
    try:
      channel, hello = transport.accept(control, token, timeout, "a server")
    except transport.ProtocolError as error:
      if "did not connect" in str(error):
        continue
      raise
    party = hello.get("party")
    if party not in (0, 1) or party in found:
      channel.close()
      raise transport.ProtocolError(f"a server said it was party {party!r}")
    channel.peer = f"server {party}"
    found[party] = (channel, hello)
  return found


def _released(header: dict, parts: list[bytes], d: int):
  """A server's message as (frontiers, payload sums or None)."""
  frontiers = [_frontier(parts[2 * r:2 * r + 2])
               for r in range(int(header["steps"]))]
  sums = None
  if header.get("payload"):
    rows = np.frombuffer(parts[-1], dtype="<i8").reshape(-1, d).tolist()
    sums = dict(zip(frontiers[-1], rows))
  return tuple(frontiers), sums


def _frontier(parts: list[bytes]) -> dict[int, int]:
  """One step's release from its two parts (prefixes, noisy counts)."""
  return dict(zip(np.frombuffer(parts[0], dtype="<u8").tolist(),
                  np.frombuffer(parts[1], dtype="<i8").tolist()))


def _outcomes(channels, children, logs, timeout: float) -> list:
  """Each server's last message (header, parts), read as they come; fails
  at once, naming it, when a server process ends without sending it, with
  the steps released before (``ProtocolError.frontiers``)."""
  outcomes, deadline = {}, time.monotonic() + timeout
  done = {0: [], 1: []}  # the steps each server said it released

  def failed(message: str) -> transport.ProtocolError:
    # Both servers release the same steps; either's word is enough.
    released = max(done.values(), key=len)
    said = f" (after {len(released)} released step(s))" if released else ""
    return transport.ProtocolError(message + said, released)
  while len(outcomes) < 2:
    waiting = [party for party in (0, 1) if party not in outcomes]
    ready, _, _ = select.select([channels[p] for p in waiting], [], [], 0.1)
    for channel in ready:
      party = next(p for p in waiting if channels[p] is channel)
      try:
        header, parts = channel.recv()
      except transport.ProtocolError:
        raise failed(_why(party, children[party], logs[party])) from None
      if "progress" in header:  # a step done: the wait starts again
        done[party].append(_frontier(parts))
      elif "error" in header:
        # A broken connection to the other server: name the other's end.
        other = children[1 - party]
        if header["error"].startswith("ProtocolError") and other.poll() not in (
            None, 0):
          raise failed(_why(1 - party, other, logs[1 - party]))
        raise failed(f"server {party}: {header['error']}")
      else:
        outcomes[party] = (header, parts)
    for party in waiting:
      if party not in outcomes and children[party].poll() is not None:
        raise failed(_why(party, children[party], logs[party]))
    if ready:
      deadline = time.monotonic() + timeout
    elif time.monotonic() > deadline:
      raise failed(f"the servers sent nothing for {timeout:g} s")
  return [outcomes[0], outcomes[1]]


# Long function: the one conversation with the two servers, in order.
def run_servers(keys, plan, entropy, payload_sigma: float | None,
                timeout: float):
  """Runs the walk on two server processes over loopback sockets:
  ``(frontiers, payload sums, candidates per step, server seconds, bytes
  between the servers)``."""
  token, peer_token = transport.new_token(), transport.new_token()
  control = transport.listen(timeout)
  logs = [tempfile.TemporaryFile() for _ in (0, 1)]
  children, channels, finished = [], {}, False
  try:
    port = control.getsockname()[1]
    children = [_start(party, port, token, timeout, logs[party])
                for party in (0, 1)]
    found = _accept_both(control, token, children, logs, timeout)
    channels = {party: channel for party, (channel, _) in found.items()}
    for party in (0, 1):
      header = {"plan": plan.to_json(), "entropy": entropy[party],
                "payload_sigma": payload_sigma, "peer_token": peer_token,
                "peer_port": found[0][1]["peer_port"]}
      channels[party].send(header, [keys[party].to_bytes()])
    outcomes = _outcomes(channels, children, logs, timeout)
    released = [_released(header, parts, keys[0].d)
                for header, parts in outcomes]
    if released[0] != released[1]:
      raise transport.ProtocolError("the two servers released different "
                                    "frontiers")
    seconds = max(header["server_seconds"] for header, _ in outcomes)
    finished = True
    return (*released[0], tuple(outcomes[0][0]["candidates"]), seconds,
            outcomes[0][0]["peer_bytes"])
  finally:
    for channel in channels.values():
      channel.close()
    control.close()
    _stop(children, wait=_END_SECONDS if finished else 0.0)
    for log in logs:
      log.close()


def _stop(children, wait: float) -> None:
  """Ends every child: waits ``wait`` seconds for it to end, then SIGTERM,
  then (after _END_SECONDS) SIGKILL."""
  for child in children:
    try:
      child.wait(timeout=wait)
    except subprocess.TimeoutExpired:
      child.terminate()
      try:
        child.wait(timeout=_END_SECONDS)
      except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
