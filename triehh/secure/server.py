"""One server of the two-server walk: its keys, its noise, its view.

Each step, the server evaluates every client's key at every candidate prefix
(walking its frontier of seeds down the tree), sums the shares over the
clients mod 2^64 (:meth:`Server.sums`), adds its own discrete Gaussian noise
of parameter ``sigmas[r]`` to each candidate (:meth:`Server.share`), and,
given the other server's share, reconstructs the noisy counts ``true + Z_0 +
Z_1`` and keeps the candidates at or above ``thresholds[r]``
(:meth:`Server.finish`). Its frontier then holds the seeds of the kept
prefixes only. A plan that verifies has one more step: every key evaluated
at the full points of the words the steps discovered
(:func:`triehh.secure.plan.verification_points`), each along its own path,
noised at ``verify_sigma`` and kept at the threshold for their number. The
same object serves both transports: in one process, or in a server process
that sends its share over a socket.

What it sees: its clients' keys (pseudorandom), the other server's noisy
shares of the counts, and the public plan. Research prototype: no audited
constant-time code.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from triehh.core import discrete_noise
from triehh.secure import idpf
from triehh.secure import plan as plan_lib

# Bytes of seeds one chunk of clients expands at once (its candidates' seeds
# at the deepest level, about twice that over the step's levels).
CHUNK_BYTES = 2**25
# The most candidates one step evaluates (each costs every client a PRG
# call; the fast engine, triehh.engines.two_servers, runs larger plans).
MAX_CANDIDATES = 2**22


def signed(values: np.ndarray) -> np.ndarray:
  """Elements of Z_2^64 (uint64) as the integers in [-2^63, 2^63) they
  stand for (int64)."""
  return np.asarray(values, dtype=np.uint64).view(np.int64)


def noise(rng: np.random.Generator, law: str, scale: float, size
          ) -> np.ndarray:
  """Discrete noise as elements of Z_2^64, drawn by the exact samplers of
  :mod:`triehh.core.discrete_noise`: ``law`` "gaussian" (``scale`` is
  sigma) or "laplace" (``scale`` is b)."""
  draw = (discrete_noise.discrete_gaussian if law == "gaussian" else
          discrete_noise.discrete_laplace)
  return draw(rng, scale, size).astype(np.int64).view(np.uint64)


@dataclasses.dataclass
class Server:
  """Server ``keys.party`` of a walk along ``plan``, adding noise drawn from
  ``rng``; ``payload_sigma`` is the noise parameter of the payload sums."""

  keys: idpf.Keys
  plan: plan_lib.WalkPlan
  rng: np.random.Generator
  payload_sigma: float | None = None

  def __post_init__(self):
    self.frontier = idpf.Frontier.root(self.keys)
    self.step = 0
    self.candidates = np.zeros(0, dtype=np.uint64)
    self._own = np.zeros(0, dtype=np.uint64)
    self.candidate_counts: list[int] = []  # per step done or begun
    self.released: list[dict[int, int]] = []  # per step done

  @property
  def party(self) -> int:
    return self.keys.party

  @property
  def verifying(self) -> bool:
    """Whether the current step is the verification step."""
    return self.plan.verifies and self.step == len(self.plan.steps)

  def sums(self) -> np.ndarray:
    """The sums mod 2^64 over the clients of this server's shares at every
    candidate of the current step (no noise); sets ``candidates``."""
    del self.candidate_counts[self.step:]
    if self.verifying:
      plan = self.plan
      self.candidates = plan_lib.verification_points(
          plan.code, plan.steps, self.released, plan.verify_cap)
      self.candidate_counts.append(self.candidates.size)
      if self.candidates.size > MAX_CANDIDATES:
        raise ValueError(f"the verification step would evaluate "
                         f"{self.candidates.size:,} points, more than "
                         f"{MAX_CANDIDATES:,}: lower verify_cap")
      if not self.candidates.size:
        return np.zeros(0, dtype=np.uint64)
      return idpf.eval_prefixes(self.keys, self.candidates, plan.bits).sum(
          axis=0, dtype=np.uint64)
    added = self.plan.added_bits(self.step)
    live = self.frontier.prefixes.size
    if live * 2**added > MAX_CANDIDATES:
      raise ValueError(
          f"step {self.step} would evaluate up to {live * 2**added:,} "
          f"candidates ({live:,} live prefixes), more than {MAX_CANDIDATES:,}"
          f": set max_frontier, or raise thresholds[{self.step - 1}]")
    self.candidates = self.plan.candidates(self.step, self.frontier.prefixes)
    self.candidate_counts.append(self.candidates.size)
    every = plan_lib.extensions(self.frontier.prefixes, added)
    columns = np.searchsorted(every, self.candidates)
    total = np.zeros(self.candidates.size, dtype=np.uint64)
    n = len(self.keys)
    chunk = max(1, CHUNK_BYTES // max(1, 16 * every.size))
    for start in range(0, n, chunk):
      part = slice(start, min(n, start + chunk))
      sub = idpf.Frontier(self.keys.select(part), self.frontier.level,
                          self.frontier.prefixes, self.frontier.seeds[part],
                          self.frontier.control[part])
      below = sub.expand(added)
      below = idpf.Frontier(below.keys, below.level, self.candidates,
                            below.seeds[:, columns], below.control[:, columns])
      total += below.shares().sum(axis=0, dtype=np.uint64)
    return total

  def share(self) -> np.ndarray:
    """What this server sends the other at the current step: its sums plus
    its own noise, one element of Z_2^64 per candidate."""
    scale = (self.plan.verify_sigma if self.verifying else
             self.plan.sigmas[self.step])
    self._own = self.sums() + noise(self.rng, self.plan.noise, scale,
                                    self.candidates.size)
    return self._own

  def finish(self, other: np.ndarray) -> dict[int, int]:
    """The step's released candidates ``{candidate: noisy count}`` from the
    other server's share; moves the frontier to the live kept prefixes."""
    other = np.asarray(other, dtype=np.uint64)
    if other.shape != self._own.shape:
      raise ValueError(f"the other server's share has {other.size} "
                       f"candidates, this one {self._own.size}")
    counts = signed(self._own + other)
    if self.verifying:
      cut = plan_lib.verification_threshold(self.plan.verify_thresholds,
                                            self.candidates.size)
      kept = counts >= cut
      self.step += 1
      self.released.append(dict(zip(self.candidates[kept].tolist(),
                                     counts[kept].tolist())))
      return self.released[-1]
    kept = counts >= self.plan.thresholds_of(self.step, self.candidates)
    live = self.plan.live(self.step, self.candidates[kept], counts[kept])
    if self.step == len(self.plan.steps) - 1:  # the leaves, for the payload
      live = self.candidates[kept]
    self.frontier = self.frontier.descend(live, self.plan.steps[self.step])
    self.step += 1
    self.released.append(dict(zip(self.candidates[kept].tolist(),
                                  counts[kept].tolist())))
    return self.released[-1]

  @property
  def done(self) -> bool:
    return self.step == self.plan.num_releases

  def payload_share(self) -> np.ndarray:
    """At the end of the walk: this server's sums of the payloads at each
    point released at the last step, plus its noise of ``payload_sigma``, (m, d) uint64."""
    if not self.done or self.plan.verifies:
      raise ValueError("the payload is summed after the walk's last step, "
                       "of a walk without a verification step")
    shares = self.frontier.payload_shares().sum(axis=0, dtype=np.uint64)
    if self.payload_sigma is None:
      raise ValueError("payload_sigma is needed to release payload sums")
    self._own = shares + noise(self.rng, self.plan.noise, self.payload_sigma,
                               shares.shape)
    return self._own

  def finish_payload(self, other: np.ndarray) -> dict[int, list[int]]:
    """``{point released at the last step: noisy payload sums}`` from the other server's
    payload share."""
    other = np.asarray(other, dtype=np.uint64).reshape(self._own.shape)
    sums = signed(self._own + other)
    return {prefix: row.tolist()
            for prefix, row in zip(self.frontier.prefixes.tolist(), sums)}
