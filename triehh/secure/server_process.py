"""The program of one server process of the two-server walk.

``python -m triehh.secure.server_process`` reads one JSON line on its
standard input (the caller's control port and token, its party, the
timeout), connects to the caller on 127.0.0.1, receives the public plan,
its noise seed and its clients' keys, walks with the other server (server 0
listens on a free loopback port, server 1 connects to it), and sends the
caller the released frontiers, then ends. Any failure is sent to the caller
as one line and ends the process with exit code 1.

Research prototype: no audited constant-time code.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from triehh.secure import idpf
from triehh.secure import plan as plan_lib
from triehh.secure import server as server_lib
from triehh.secure import transport

CALLER = "the protocol's caller"


def exchange(peer: transport.Channel, party: int, own: np.ndarray
             ) -> np.ndarray:
  """Sends ``own`` (uint64) to the other server and returns its share:
  server 0 sends first, server 1 receives first (neither waits on a full
  buffer while the other does)."""
  payload = np.ascontiguousarray(own, dtype="<u8").tobytes()
  if party == 0:
    peer.send({"share": own.size}, [payload])
  _, parts = peer.recv()
  if party == 1:
    peer.send({"share": own.size}, [payload])
  return np.frombuffer(parts[0], dtype="<u8").astype(np.uint64)


def walk(server: server_lib.Server, peer: transport.Channel,
         control: transport.Channel) -> tuple[dict, list[bytes]]:
  """The walk with the other server: the message for the caller (a header
  and parts: per step the kept prefixes and their noisy counts, then the
  payload sums if any). Each step done is said to the caller at once."""
  parts, busy = [], 0.0
  while not server.done:
    start = time.perf_counter()
    own = server.share()
    busy += time.perf_counter() - start
    released = server.finish(exchange(peer, server.party, own))
    step_parts = [np.array(list(released), dtype="<u8").tobytes(),
                  np.array(list(released.values()), dtype="<i8").tobytes()]
    parts += step_parts
    control.send({"progress": server.step}, step_parts)
  header = {"steps": server.plan.num_releases, "payload": False}
  if server.payload_sigma is not None and server.keys.d:
    start = time.perf_counter()
    own = server.payload_share()
    busy += time.perf_counter() - start
    sums = server.finish_payload(exchange(peer, server.party, own))
    header["payload"] = True
    parts.append(np.array(list(sums.values()), dtype="<i8").reshape(
        -1, server.keys.d).tobytes())
  header.update(server_seconds=busy, peer_bytes=peer.sent + peer.received,
                candidates=server.candidate_counts)
  return header, parts


def serve(config: dict) -> None:
  """One server's whole run, from its configuration line."""
  party, timeout = int(config["party"]), float(config["timeout"])
  listener = transport.listen(timeout) if party == 0 else None
  hello = {"party": party}
  if listener is not None:
    hello["peer_port"] = listener.getsockname()[1]
  control = transport.connect(int(config["port"]), config["token"], timeout,
                              CALLER, hello)
  try:
    header, parts = control.recv()
    keys = idpf.Keys.from_bytes(parts[0])
    if keys.party != party:
      raise ValueError(f"server {party} got the keys of server {keys.party}")
    plan = plan_lib.WalkPlan.from_json(header["plan"])
    entropy = header["entropy"]
    rng = np.random.default_rng(None if entropy is None else np.random
                                .SeedSequence(entropy[0],
                                              spawn_key=tuple(entropy[1])))
    other = f"server {1 - party}"
    if listener is not None:
      peer, _ = transport.accept(listener, header["peer_token"], timeout,
                                 other)
    else:
      peer = transport.connect(int(header["peer_port"]),
                               header["peer_token"], timeout, other)
    server = server_lib.Server(keys, plan, rng, header["payload_sigma"])
    control.send(*walk(server, peer, control))
  except Exception as error:  # pylint: disable=broad-except
    message = " ".join(f"{type(error).__name__}: {error}".split())
    print(message, file=sys.stderr)
    try:
      control.send({"error": message})
    finally:
      sys.exit(1)


def main() -> None:
  serve(json.loads(sys.stdin.readline()))


if __name__ == "__main__":
  main()
