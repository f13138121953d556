"""The two-server walk: clients' keys, two server processes, the release.

:func:`run_walk` plays every party of one run. The clients each make the two
IDPF keys of their hash (:func:`client_keys`, with an optional last-level
payload); two server processes (``transport="loopback"``: started by the
call, on 127.0.0.1 sockets, stopped by it whatever happens) each receive
their keys, evaluate them at the candidates of each step, add their own
discrete Gaussian noise, exchange shares and keep the candidates whose
noisy count reaches the step's threshold (:mod:`triehh.secure.server`).
``transport="inprocess"`` runs the same two :class:`~triehh.secure.server.
Server` objects in this process, exchanging the same shares, for tests.

Trust model: either server may collude with any set of clients; the two
servers do not collude with each other. The servers are honest but curious
(they follow the protocol); the clients are assumed honest (this prototype
has no check of malformed keys, such as Poplar's sketching). Against a
server and any clients, the other server's noise alone protects a client.

Research prototype: no audited constant-time code; the loopback connections
are not encrypted (between two real servers, use TLS); the servers' noise
comes from numpy's PCG64 seeded by the operating system (a deployment would
use a CSPRNG; the keys' seeds do, through `secrets`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np

from triehh.secure import idpf
from triehh.secure import loopback
from triehh.secure import plan as plan_lib
from triehh.secure import server as server_lib
from triehh.secure import transport

PROTOTYPE = ("research prototype: no audited constant-time code; loopback "
             "connections are not encrypted; noise from numpy's PCG64, not a "
             "CSPRNG")
TRUST_MODEL = ("either server may collude with any set of clients; the "
               "servers do not collude with each other; honest-but-curious "
               "servers; honest clients (no check of malformed keys)")
TRANSPORTS = ("loopback", "inprocess")
# Seconds any one wait of the loopback transport may last.
DEFAULT_TIMEOUT = 60.0


@dataclasses.dataclass(frozen=True)
class WalkCost:
  """What one walk cost: bytes each client uploads (its two keys), the
  candidates of each step, the bytes the two servers exchanged (their
  shares: 8 bytes per candidate each way, and per payload element), the
  clients' key generation and the servers' evaluation time (seconds, the
  slower server), and the bytes measured on the servers' socket (None in
  process)."""

  clients: int
  key_bytes: int
  upload_bytes_per_client: int
  candidates: tuple[int, ...]
  exchanged_bytes: int
  keygen_seconds: float
  server_seconds: float
  measured_peer_bytes: int | None


@dataclasses.dataclass(frozen=True)
class WalkRelease:
  """One walk's release: per step, ``{prefix: noisy count}`` of the kept
  prefixes (``frontiers``); with payloads, ``{released hash: noisy payload
  sums}``; the cost; and what the run is (``prototype``, ``trust_model``)."""

  frontiers: tuple[dict[int, int], ...]
  payloads: dict[int, list[int]] | None
  cost: WalkCost
  transport: str
  prototype: str = PROTOTYPE
  trust_model: str = TRUST_MODEL


def client_keys(hashes: np.ndarray, bits: int, payloads=None,
                rng: np.random.Generator | None = None
                ) -> tuple[idpf.Keys, idpf.Keys]:
  """Each client's two keys (server 0's, server 1's): an IDPF of its hash
  with 1 at every level and its payload row (if any) at the leaf. ``rng``
  None draws the seeds from the operating system's CSPRNG."""
  return idpf.gen_many(hashes, bits, payloads=payloads, rng=rng)


def _check_hashes(hashes, bits: int) -> np.ndarray:
  array = np.asarray(hashes)
  if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
    raise ValueError(f"hashes must be a 1-d array of integers (one per "
                     f"client), got shape {array.shape} of {array.dtype}")
  if not array.size:
    raise ValueError("hashes must hold at least one client's point")
  if array.size and (array.min() < 0 or (
      bits < 64 and array.astype(np.uint64).max() >> np.uint64(bits))):
    raise ValueError(f"hashes must be in [0, 2^bits) with bits={bits}: "
                     "hash with hashing.hash_words(words, salt, bits)")
  return array.astype(np.uint64)


# Long function: the argument checks of the entry point, then the one flow.
def run_walk(hashes, bits: int, steps: Sequence[int],
             sigmas: Sequence[float], thresholds: Sequence, seed: int | None,
             payloads=None, transport: str = "loopback", *,
             noise: str = "laplace", code=None,
             max_frontier: int | None = None,
             payload_sigma: float | None = None,
             verify_sigma: float | None = None,
             verify_cap: int | None = None,
             verify_thresholds: Sequence = (),
             timeout: float = DEFAULT_TIMEOUT) -> WalkRelease:
  """One two-server walk over the clients' points (``bits`` bits each).

  Args:
    hashes: one point per client, integers in [0, 2^bits): salted hashes
      (:func:`triehh.secure.hashing.hash_words`) or, with ``code``, word ids
      (``code.encode``).
    bits, steps, sigmas, thresholds, noise, code, max_frontier: the public
      plan (:class:`~triehh.secure.plan.WalkPlan`): ``sigmas[r]`` is each
      server's noise parameter at step r (the scale b_r for "laplace",
      sigma_r for "gaussian"); ``thresholds[r]`` an integer or, with ``code``,
      one per count of trailing end codes.
    seed: None (keys from the operating system's CSPRNG, fresh noise) or an
      integer: reproducible keys and noise, for tests and measurements.
    payloads: None, or ``(clients, d)`` elements of Z_2^64 each client
      shares at its leaf; their noisy sums at every point released at the
      last step are released, each server adding noise of ``payload_sigma``.
    transport: "loopback" (two server processes on 127.0.0.1) or
      "inprocess".
    verify_sigma, verify_cap, verify_thresholds: a verification step after
      the steps (:class:`~triehh.secure.plan.WalkPlan`; None: none): its
      noise parameter, the most candidates, and ``(threshold, most
      candidates it serves)`` pairs.
    timeout: seconds any one wait of the loopback transport may last.

  Returns:
    A :class:`WalkRelease`: per step (and the verification step, last),
    ``{candidate: noisy count}`` of the kept candidates (``frontiers``: what the fast engine,
    ``triehh.engines.two_servers.run_walk``, returns), the payload sums,
    the cost.
  """
  plan = plan_lib.WalkPlan(bits, tuple(steps), tuple(sigmas),
                           tuple(thresholds), noise, code, max_frontier,
                           verify_sigma, verify_cap, tuple(verify_thresholds))
  hashes = _check_hashes(hashes, plan.bits)
  if transport not in TRANSPORTS:
    raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, got "
                     f"{transport!r}")
  if payloads is not None and plan.verifies:
    raise ValueError("payloads are summed at the last step's points; a walk "
                     "with a verification step takes none")
  if payloads is not None and payload_sigma is None:
    raise ValueError("payloads need payload_sigma, the noise each server "
                     "adds to each payload sum")
  if payload_sigma is not None and not (
      plan_lib.MIN_SIGMA <= payload_sigma <= plan_lib.MAX_SIGMA):
    raise ValueError(f"payload_sigma must be in [2^-10, 2^40], got "
                     f"{payload_sigma}")
  if isinstance(seed, bool) or (seed is not None and not (
      isinstance(seed, (int, np.integer)) and seed >= 0)):
    raise ValueError(f"seed must be None or an integer >= 0, got {seed!r}")
  clients_seed, *server_seeds = np.random.SeedSequence(seed).spawn(3)
  start = time.perf_counter()
  keys = client_keys(hashes, plan.bits, payloads,
                     None if seed is None else np.random.default_rng(
                         clients_seed))
  keygen = time.perf_counter() - start
  entropy = [None if seed is None else (s.entropy, list(s.spawn_key))
             for s in server_seeds]
  if transport == "inprocess":
    outcome = _inprocess(keys, plan, entropy, payload_sigma)
  else:
    outcome = loopback.run_servers(keys, plan, entropy, payload_sigma,
                                   float(timeout))
  frontiers, sums, candidates, server_seconds, peer_bytes = outcome
  return WalkRelease(frontiers, sums, _cost(
      plan, keys, candidates, sums, keygen, server_seconds, peer_bytes),
      transport)


def _cost(plan, keys, candidates, sums, keygen, server_seconds, peer_bytes
          ) -> WalkCost:
  """The walk's :class:`WalkCost`."""
  d = keys[0].d
  exchanged = 2 * 8 * (sum(candidates) + (len(sums) * d if sums else 0))
  return WalkCost(
      clients=len(keys[0]), key_bytes=idpf.key_bytes(plan.bits, d),
      upload_bytes_per_client=2 * idpf.key_bytes(plan.bits, d),
      candidates=tuple(candidates), exchanged_bytes=exchanged,
      keygen_seconds=keygen, server_seconds=server_seconds,
      measured_peer_bytes=peer_bytes)


def _rng(entropy) -> np.random.Generator:
  """A server's noise generator: fresh, or from its spawned seed."""
  if entropy is None:
    return np.random.default_rng()
  return np.random.default_rng(np.random.SeedSequence(
      entropy[0], spawn_key=tuple(entropy[1])))


def _inprocess(keys, plan, entropy, payload_sigma):
  """Both servers in this process, exchanging the same shares."""
  servers = [server_lib.Server(keys[party], plan, _rng(entropy[party]),
                               payload_sigma) for party in (0, 1)]
  frontiers, busy = [], 0.0
  while not servers[0].done:
    start = time.perf_counter()
    try:
      shares = [server.share() for server in servers]
    except ValueError as error:  # the steps done stay released
      said = f" (after {len(frontiers)} released step(s))" if frontiers else ""
      raise transport.ProtocolError(f"{error}{said}", frontiers) from None
    busy += (time.perf_counter() - start) / 2
    released = [server.finish(shares[1 - server.party]) for server in servers]
    if released[0] != released[1]:
      raise transport.ProtocolError("the two servers released different "
                                    "frontiers")
    frontiers.append(released[0])
  sums = None
  if payload_sigma is not None and keys[0].d:
    shares = [server.payload_share() for server in servers]
    sums = servers[0].finish_payload(shares[1])
  return (tuple(frontiers), sums, tuple(servers[0].candidate_counts), busy,
          None)
