"""The two server processes: they release what the in-process walk
releases, talk over 127.0.0.1 only, and end, even when one fails."""

from __future__ import annotations

import collections
import re
import socket
import subprocess
import sys
import textwrap

import numpy as np
import psutil
import pytest

from triehh.core import prefix_code
from triehh.engines import two_servers as engine
from triehh.secure import loopback
from triehh.secure import protocol
from triehh.secure import transport

# Server 1 of test_a_server_that_dies_...: it connects and takes its keys
# like a server, then says why it stops on stderr and exits with code 7.
_DYING_SERVER = textwrap.dedent("""
    import json, sys
    from triehh.secure import transport
    config = json.loads(sys.stdin.readline())
    channel = transport.connect(config["port"], config["token"], 5.0,
                                "the caller", {"party": config["party"]})
    channel.recv()
    print("RuntimeError: out of memory", file=sys.stderr)
    sys.exit(7)
""")


def _server_processes() -> list[psutil.Process]:
  return [child for child in psutil.Process().children(recursive=True)
          if "triehh.secure.server_process" in " ".join(child.cmdline())]


def test_the_processes_release_what_the_in_process_walk_releases():
  code = prefix_code.PrefixCode(tuple("abc"), 4)
  words = ["a", "ab", "ab", "abc", "abc", "abc", "cab", "cab", "b"] * 5
  ids, _ = code.encode(words)
  args = dict(hashes=ids, bits=code.bits, steps=[4, 8], sigmas=[0.5, 0.5],
              thresholds=[[3, 3, 3], 3], seed=1, noise="laplace", code=code,
              max_frontier=3)
  real = protocol.run_walk(transport="loopback", **args)
  local = protocol.run_walk(transport="inprocess", **args)
  assert real.frontiers == local.frontiers
  assert isinstance(real.frontiers, tuple) and all(
      isinstance(k, int) and isinstance(v, int)
      for frontier in real.frontiers for k, v in frontier.items())
  assert real.transport == "loopback"
  fast = engine.run_walk(dict(collections.Counter(ids.tolist())), code.bits,
                         [4, 8], [0.5, 0.5], [[3, 3, 3], 3],
                         np.random.default_rng(0), noise="laplace", code=code,
                         max_frontier=3)
  assert [type(f) for f in fast] == [type(f) for f in real.frontiers]
  assert {type(x) for f in fast for item in f.items() for x in item} == {
      type(x) for f in real.frontiers for item in f.items() for x in item
  } == {int}
  assert real.cost.candidates == local.cost.candidates
  # The shares (8 bytes per candidate each way) and the messages' headers.
  assert real.cost.exchanged_bytes < real.cost.measured_peer_bytes < (
      2 * real.cost.exchanged_bytes + 2000)
  assert not _server_processes()


def test_a_server_that_dies_is_named_in_one_line_and_both_end(monkeypatch):
  started = []
  start = loopback._start

  def start_one_dying(party, port, token, timeout, log):
    if party == 0:
      child = start(party, port, token, timeout, log)
    else:
      child = subprocess.Popen([sys.executable, "-c", _DYING_SERVER],
                               stdin=subprocess.PIPE, stderr=log,
                               env={"PYTHONPATH": loopback._ROOT})
      child.stdin.write(
          f'{{"party": 1, "port": {port}, "token": "{token}"}}\n'.encode())
      child.stdin.close()
    started.append(child)
    return child
  monkeypatch.setattr(loopback, "_start", start_one_dying)
  with pytest.raises(transport.ProtocolError) as raised:
    protocol.run_walk(np.arange(20) % 4, 4, [2, 4], [1.0, 1.0], [3, 3],
                      seed=0, timeout=20.0)
  message = str(raised.value)
  assert message == ("server 1 stopped (exit code 7): RuntimeError: out of "
                     "memory")
  assert all(child.poll() is not None for child in started)
  assert not _server_processes()


def test_no_port_to_bind_is_one_line_and_starts_nothing(monkeypatch):
  def refuse(*args, **kwargs):
    raise OSError(98, "Address already in use")
  monkeypatch.setattr(socket, "create_server", refuse)
  with pytest.raises(transport.ProtocolError,
                     match=r"^cannot bind a port on 127\.0\.0\.1 "):
    protocol.run_walk([1, 2], 4, [4], [1.0], [1], seed=0)
  assert not _server_processes()


def test_a_step_refused_by_a_server_keeps_the_steps_released_before():
  """Step 1 would evaluate 8 x 2^20 candidates (every prefix passes step 0),
  more than a server takes: the error says so, and what step 0 released
  comes with it."""
  with pytest.raises(transport.ProtocolError) as raised:
    protocol.run_walk([1, 2, 3], 23, [3, 23], [1.0, 1.0], [-100, 1], seed=0,
                      noise="gaussian", timeout=20.0)
  message = str(raised.value)
  assert re.match(r"server [01]: ValueError: step 1 would evaluate up to "
                  r"8,388,608 candidates \(8 live prefixes\)", message)
  assert message.endswith(": set max_frontier, or raise thresholds[0] (after "
                          "1 released step(s))")
  assert [sorted(f) for f in raised.value.frontiers] == [list(range(8))]
  assert not _server_processes()
