"""An incremental distributed point function (IDPF) over Z_2^64.

A client with a ``bits``-bit string ``alpha`` makes two keys (:func:`gen`),
one per server. Evaluated at a prefix ``p`` of length ``level`` (1 to
``bits``), the two keys' outputs are additive shares mod 2^64 of
``values[level - 1]`` if ``p`` is the first ``level`` bits of ``alpha``, and
of 0 otherwise; at the last level, an optional payload of ``d`` elements of
Z_2^64 is shared the same way (``payload`` on ``alpha``'s leaf, 0 elsewhere).
Either key alone is pseudorandom: it says nothing of ``alpha``, the values or
the payload.

The construction is the tree of Boyle, Gilboa and Ishai (CCS 2016), with a
value correction word at every level as in Boneh, Boyle, Corrigan-Gibbs,
Gilboa and Ishai, "Lightweight techniques for private heavy hitters" (IEEE
S&P 2021): each node of the binary tree has, for each server, a 128-bit seed
and a control bit; the seeds of the two servers agree off ``alpha``'s path
(so their shares cancel) and differ on it, where the control bits differ and
the correction words make the shares add up to the value. The PRG is
:mod:`triehh.secure.prg` (fixed-key AES-128).

A key is ``key_bytes(bits, d) = 24 + 25 * bits + 8 * d`` bytes: an 8-byte
header, the 16-byte root seed, per level a 16-byte seed correction, one byte
of two control-bit corrections and an 8-byte value correction, and 8 bytes
per payload element (824 bytes at ``bits = 32``, ``d = 0``).

:class:`Keys` holds many clients' keys of one server as arrays; evaluation
walks a :class:`Frontier` (the seeds of a set of prefixes, for every client)
down the tree level by level, so a node's seed is computed once from its
parent's: one PRG call (three AES blocks) per node visited per client.

Research prototype: no audited constant-time code.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Sequence

import numpy as np

from triehh.secure import prg

SEED_BYTES = prg.SEED_BYTES
HEADER_BYTES = 8
LEVEL_BYTES = SEED_BYTES + 1 + 8
MAGIC = b"IK"
VERSION = 1
MAX_BITS = 64
MAX_PAYLOAD = 2**16 - 1


def key_bytes(bits: int, d: int = 0) -> int:
  """The size in bytes of one serialised key of ``bits`` levels with a
  payload of ``d`` elements."""
  return HEADER_BYTES + SEED_BYTES + LEVEL_BYTES * bits + 8 * d


def _negate(values: np.ndarray) -> np.ndarray:
  return np.uint64(0) - values


@dataclasses.dataclass(frozen=True, eq=False)
class Keys:
  """The keys of ``n`` clients for one server (``party`` 0 or 1).

  Arrays, first axis the client: ``seed`` (n, 16) uint8, ``seed_cw``
  (n, bits, 16) uint8, ``control_cw`` (n, bits, 2) uint8 (left, right),
  ``value_cw`` (n, bits) uint64 and ``payload_cw`` (n, d) uint64.
  """

  party: int
  bits: int
  seed: np.ndarray
  seed_cw: np.ndarray
  control_cw: np.ndarray
  value_cw: np.ndarray
  payload_cw: np.ndarray

  def __len__(self) -> int:
    return self.seed.shape[0]

  @property
  def d(self) -> int:
    """The payload's length (0 without a payload)."""
    return self.payload_cw.shape[1]

  def select(self, clients) -> Keys:
    """The keys of the clients ``clients`` (indices or a slice)."""
    return dataclasses.replace(
        self, seed=self.seed[clients], seed_cw=self.seed_cw[clients],
        control_cw=self.control_cw[clients], value_cw=self.value_cw[clients],
        payload_cw=self.payload_cw[clients])

  def to_bytes(self) -> bytes:
    """Every key serialised, one after the other, each
    :func:`key_bytes` long."""
    n = len(self)
    header = np.frombuffer(
        MAGIC + bytes([VERSION, self.party, self.bits, 0])
        + self.d.to_bytes(2, "little"), dtype=np.uint8)
    levels = np.concatenate([
        self.seed_cw,
        (self.control_cw[..., :1] | (self.control_cw[..., 1:] << 1)),
        self.value_cw.astype("<u8").view(np.uint8).reshape(n, self.bits, 8),
    ], axis=2).reshape(n, -1)
    rows = np.concatenate([
        np.broadcast_to(header, (n, HEADER_BYTES)), self.seed, levels,
        self.payload_cw.astype("<u8").view(np.uint8).reshape(n, -1)], axis=1)
    return rows.tobytes()

  @classmethod
  def from_bytes(cls, data: bytes) -> Keys:
    """The keys :meth:`to_bytes` wrote (all of one server, bits and d)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size < HEADER_BYTES or bytes(raw[:2]) != MAGIC:
      raise ValueError("data does not start with an IDPF key")
    if raw[2] != VERSION:
      raise ValueError(f"IDPF key version {raw[2]}; this reads {VERSION}")
    party, bits = int(raw[3]), int(raw[4])
    if party not in (0, 1) or not 1 <= bits <= MAX_BITS:
      raise ValueError(f"an IDPF key of party {party} and {bits} bits: the "
                       f"party is 0 or 1, the bits 1 to {MAX_BITS}")
    d = int.from_bytes(bytes(raw[6:8]), "little")
    size = key_bytes(bits, d)
    if raw.size % size:
      raise ValueError(f"data of {raw.size} bytes is not a whole number of "
                       f"keys of {size} bytes")
    rows = raw.reshape(-1, size)
    if np.any(rows[:, :HEADER_BYTES] != rows[0, :HEADER_BYTES]):
      raise ValueError("the keys are not all of one server, bits and d")
    n = rows.shape[0]
    body = HEADER_BYTES + SEED_BYTES
    levels = rows[:, body:body + LEVEL_BYTES * bits].reshape(
        n, bits, LEVEL_BYTES)
    controls = levels[..., SEED_BYTES]
    payload = rows[:, body + LEVEL_BYTES * bits:]
    return cls(
        party=party, bits=bits, seed=rows[:, HEADER_BYTES:body].copy(),
        seed_cw=levels[..., :SEED_BYTES].copy(),
        control_cw=np.stack([controls & 1, controls >> 1], axis=-1),
        value_cw=_words(levels[..., SEED_BYTES + 1:])[..., 0],
        payload_cw=_words(payload).reshape(n, d))


def _words(raw: np.ndarray) -> np.ndarray:
  """The little-endian 8-byte words of the last axis of ``raw`` (uint8),
  as uint64 of shape ``raw.shape[:-1] + (-1,)``."""
  raw = np.ascontiguousarray(raw)
  return raw.view("<u8").astype(np.uint64)


def _random_bytes(size: int, rng: np.random.Generator | None) -> bytes:
  """``size`` random bytes: from the operating system's CSPRNG, or from
  ``rng`` (reproducible, for tests and measurements only)."""
  return secrets.token_bytes(size) if rng is None else rng.bytes(size)


def _as_elements(name: str, values, shape: tuple[int, ...]) -> np.ndarray:
  """``values`` as elements of Z_2^64 (Python or numpy integers, negative
  ones taken mod 2^64), broadcast to ``shape``."""
  array = np.asarray(values)
  if array.dtype == object or array.dtype.kind not in "iu":
    array = np.asarray([int(v) % 2**64 for v in np.ravel(array)],
                       dtype=np.uint64).reshape(array.shape)
  try:
    return np.broadcast_to(array.astype(np.uint64), shape)
  except ValueError:
    raise ValueError(f"{name} has shape {np.shape(values)}, which does not "
                     f"fit {shape}") from None


# Long function: the key generation is one loop over the levels, each step
# of the construction beside the one it corrects.
def gen_many(alphas, bits: int, *, values=None, payloads=None,
             rng: np.random.Generator | None = None) -> tuple[Keys, Keys]:
  """The two servers' keys of one IDPF per element of ``alphas``.

  Args:
    alphas: the clients' points, integers in [0, 2^bits).
    bits: the tree's depth, 1 to 64.
    values: per level, the value shared on the point's prefix (length
      ``bits``, or ``(n, bits)``); 1 at every level by default.
    payloads: ``(n, d)`` elements shared on the point's leaf, or None.
    rng: None (seeds from the operating system's CSPRNG) or a numpy
      Generator (reproducible keys, for tests and measurements only).
  """
  if not 1 <= bits <= MAX_BITS:
    raise ValueError(f"bits must be in [1, {MAX_BITS}], got {bits}")
  alphas = np.asarray(alphas, dtype=np.uint64).reshape(-1)
  n = alphas.size
  if bits < 64 and np.any(alphas >> np.uint64(bits)):
    raise ValueError(f"alphas must be below 2^bits = {2**bits}")
  values = _as_elements("values", 1 if values is None else values, (n, bits))
  if payloads is None:
    payloads = np.zeros((n, 0), dtype=np.uint64)
  else:
    payloads = np.atleast_2d(np.asarray(payloads, dtype=object))
    if payloads.shape[0] != n or payloads.shape[1] > MAX_PAYLOAD:
      raise ValueError(f"payloads must have one row per alpha ({n}) of at "
                       f"most {MAX_PAYLOAD} elements, got shape "
                       f"{payloads.shape}")
    payloads = _as_elements("payloads", payloads, payloads.shape)
  d = payloads.shape[1]
  roots = np.frombuffer(_random_bytes(2 * n * SEED_BYTES, rng),
                        dtype=np.uint8).reshape(2, n, SEED_BYTES)
  seeds = roots.copy()
  control = np.stack([np.zeros(n, np.uint8), np.ones(n, np.uint8)])
  seed_cw = np.empty((n, bits, SEED_BYTES), dtype=np.uint8)
  control_cw = np.empty((n, bits, 2), dtype=np.uint8)
  value_cw = np.empty((n, bits), dtype=np.uint64)
  for level in range(bits):
    bit = ((alphas >> np.uint64(bits - 1 - level)) & np.uint64(1)).astype(
        np.uint8)
    left, left_control, right, right_control = prg.expand(seeds)
    right_kept = bit.astype(bool)[None, :, None]
    lose = np.where(right_kept, left, right)
    keep = np.where(right_kept, right, left)
    seed_cw[:, level] = lose[0] ^ lose[1]
    control_cw[:, level, 0] = left_control[0] ^ left_control[1] ^ bit ^ 1
    control_cw[:, level, 1] = right_control[0] ^ right_control[1] ^ bit
    keep_control = np.where(bit.astype(bool), right_control, left_control)
    keep_cw = np.where(bit.astype(bool), control_cw[:, level, 1],
                       control_cw[:, level, 0])
    seeds = keep ^ (control[..., None] * seed_cw[None, :, level])
    control = keep_control ^ (control & keep_cw)
    value_cw[:, level] = _correction(seeds, control, values[:, level], 1,
                                     0)[..., 0]
  payload_cw = _correction(seeds, control, payloads, d, 1)
  keys = tuple(
      Keys(party=party, bits=bits, seed=roots[party].copy(),
           seed_cw=seed_cw, control_cw=control_cw, value_cw=value_cw,
           payload_cw=payload_cw) for party in (0, 1))
  return keys


def _correction(seeds: np.ndarray, control: np.ndarray, targets: np.ndarray,
                words: int, first_word: int) -> np.ndarray:
  """The correction words that make the two servers' shares at the node
  of ``seeds`` (2, n, 16) and ``control`` (2, n) add up to ``targets``
  (n, words): ``(-1)^t1 * (target - convert(s0) + convert(s1))``."""
  converted = prg.convert(seeds, words, first_word)  # (2, n, words)
  correction = (targets.reshape(converted.shape[1:]) - converted[0]
                + converted[1])
  return np.where(control[1][:, None].astype(bool), _negate(correction),
                  correction)


def gen(alpha: int, bits: int, *, values: Sequence[int] | None = None,
        payload: Sequence[int] | None = None,
        rng: np.random.Generator | None = None) -> tuple[Keys, Keys]:
  """The two keys (each a :class:`Keys` of one client) of one IDPF: point
  ``alpha`` of ``bits`` bits, ``values`` per level (1 by default), an
  optional last-level ``payload``; ``rng`` as in :func:`gen_many`."""
  return gen_many([alpha], bits, values=None if values is None else [values],
                  payloads=None if payload is None else [payload], rng=rng)


@dataclasses.dataclass(frozen=True, eq=False)
class Frontier:
  """One server's seeds at a set of prefixes of one level, for every
  client of its :class:`Keys`.

  ``prefixes`` (m,) uint64 are the prefixes (of ``level`` bits), ``seeds``
  (n, m, 16) and ``control`` (n, m) each client's seed and control bit there.
  """

  keys: Keys
  level: int
  prefixes: np.ndarray
  seeds: np.ndarray
  control: np.ndarray

  @classmethod
  def root(cls, keys: Keys) -> Frontier:
    """The empty prefix (level 0) of every client of ``keys``."""
    n = len(keys)
    return cls(keys, 0, np.zeros(1, dtype=np.uint64), keys.seed[:, None, :],
               np.full((n, 1), keys.party, dtype=np.uint8))

  def _children(self) -> tuple[np.ndarray, np.ndarray]:
    """Seeds (n, m, 2, 16) and control bits (n, m, 2) of both children of
    every prefix, corrected with this level's correction words."""
    left, left_control, right, right_control = prg.expand(self.seeds)
    seeds = np.stack([left, right], axis=2)
    control = np.stack([left_control, right_control], axis=2)
    # XOR the correction words where the parent's control bit is 1, on
    # 8-byte words: seeds (n, m, 2, 2) ^= cw (n, 1, 1, 2) * bit (n, m, 1, 1).
    seed_cw = self.keys.seed_cw[:, self.level].view(np.uint64)
    mask = self.control.astype(np.uint64)[..., None, None]
    seeds.view(np.uint64).__ixor__(seed_cw[:, None, None, :] * mask)
    control ^= self.control[..., None] & self.keys.control_cw[:, self.level][
        :, None, :]
    return seeds, control

  def expand(self, levels: int) -> Frontier:
    """Every extension of these prefixes by ``levels`` bits (children in
    order: prefix * 2^levels + suffix)."""
    if self.level + levels > self.keys.bits:
      raise ValueError(f"levels={levels} goes below the tree's {self.keys.bits}"
                       f" levels from level {self.level}")
    frontier = self
    for _ in range(levels):
      seeds, control = frontier._children()
      n = seeds.shape[0]
      prefixes = (frontier.prefixes[:, None] * np.uint64(2)
                  + np.arange(2, dtype=np.uint64)).reshape(-1)
      frontier = Frontier(self.keys, frontier.level + 1, prefixes,
                          seeds.reshape(n, -1, SEED_BYTES),
                          control.reshape(n, -1))
    return frontier

  def descend(self, prefixes, level: int) -> Frontier:
    """The frontier at ``prefixes`` of ``level`` bits (each extending one
    of these prefixes), reached along their own paths only."""
    if not self.level <= level <= self.keys.bits:
      raise ValueError(f"level must be in [{self.level}, {self.keys.bits}], "
                       f"got {level}")
    targets = np.asarray(prefixes, dtype=np.uint64).reshape(-1)
    if targets.size == 0:
      n = len(self.keys)
      return Frontier(self.keys, level, targets,
                      np.zeros((n, 0, SEED_BYTES), np.uint8),
                      np.zeros((n, 0), np.uint8))
    shift = np.uint64(level - self.level)
    heads = targets >> shift
    parents = np.minimum(np.searchsorted(self.prefixes, heads),
                         self.prefixes.size - 1)
    if np.any(self.prefixes[parents] != heads) or (
        level < 64 and np.any(targets >> np.uint64(level))):
      raise ValueError(f"prefixes must be of {level} bits, each extending a "
                       "prefix of this frontier")
    frontier = Frontier(self.keys, self.level, heads,
                        self.seeds[:, parents], self.control[:, parents])
    picked = np.arange(targets.size)
    for depth in range(self.level + 1, level + 1):
      children, child_control = frontier._children()
      path = targets >> np.uint64(level - depth)
      bit = (path & np.uint64(1)).astype(np.intp)
      frontier = Frontier(self.keys, depth, path, children[:, picked, bit],
                          child_control[:, picked, bit])
    return frontier

  def shares(self) -> np.ndarray:
    """This server's shares (n, m) uint64 of the level's values at every
    prefix: ``(-1)^party * (convert(seed) + control * value_cw)``."""
    if self.level == 0:
      raise ValueError("the empty prefix (level 0) has no value")
    correction = self.keys.value_cw[:, self.level - 1][:, None]
    return self._signed(prg.convert(self.seeds, 1, 0)[..., 0], correction)

  def payload_shares(self) -> np.ndarray:
    """This server's shares (n, m, d) uint64 of the payload at every prefix
    of the last level."""
    if self.level != self.keys.bits:
      raise ValueError(f"the payload is at level {self.keys.bits} (the last),"
                       f" not at level {self.level}")
    d = self.keys.d
    correction = self.keys.payload_cw[:, None, :]
    return self._signed(prg.convert(self.seeds, d, 1), correction,
                        self.control[..., None])

  def _signed(self, converted: np.ndarray, correction: np.ndarray,
              control: np.ndarray | None = None) -> np.ndarray:
    control = self.control if control is None else control
    share = converted + np.where(control.astype(bool), correction,
                                 np.uint64(0))
    return _negate(share) if self.keys.party else share


def eval_prefixes(keys: Keys, prefixes, level: int) -> np.ndarray:
  """Shares (n, m) uint64 of every client of ``keys`` at ``prefixes`` (each
  of ``level`` bits), each reached from the root along its own path."""
  return Frontier.root(keys).descend(prefixes, level).shares()


def eval(key: Keys, prefix: int, level: int) -> int:  # pylint: disable=redefined-builtin
  """One key's share (an int in [0, 2^64)) at ``prefix`` of ``level`` bits."""
  if len(key) != 1:
    raise ValueError(f"key must hold one client's key, got {len(key)}")
  return int(eval_prefixes(key, [prefix], level)[0, 0])
