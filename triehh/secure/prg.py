"""A length-doubling pseudorandom generator from fixed-key AES-128.

The tree of a distributed point function expands a 128-bit seed into its two
children's seeds, each with a control bit, and converts a seed into group
elements of Z_2^64. Each output block is a correlation-robust hash of the
seed, as in the DPF libraries built on fixed-key AES (Guo, Katz, Wang, Yu,
"Efficient and secure multiparty computation from fixed-key block ciphers",
IEEE S&P 2020): ``H_k(x) = AES_k(sigma(x)) xor sigma(x)`` (Matyas-Meyer-Oseas
over the orthomorphism ``sigma(xL || xR) = (xL xor xR) || xL``), with one
public fixed key per use (left child, right child, value). AES itself is the
`cryptography` package's (OpenSSL); nothing here implements it.

Every function takes many seeds at once, an array ``(..., 16)`` of uint8,
and calls AES once for the whole array.

Research prototype: no audited constant-time code (numpy does the rest).
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

SEED_BYTES = 16
# The public fixed keys: the first 16 bytes of SHA-256 of a label (nothing
# chosen), one per use, so that the outputs for different uses are
# independent hashes of the same seed.
_LABELS = {"left": b"left child", "right": b"right child", "value": b"value"}


@functools.lru_cache(maxsize=None)
def _encryptor(use: str):
  """The AES-128-ECB encryptor of the fixed key for ``use`` (ECB on
  independent blocks: one call encrypts every block of an array)."""
  key = hashlib.sha256(b"triehh.secure.prg " + _LABELS[use]).digest()[:16]
  return Cipher(algorithms.AES(key), modes.ECB()).encryptor()


def _sigma(blocks: np.ndarray) -> np.ndarray:
  """``(xL xor xR) || xL`` for each 16-byte block (halves of 8 bytes),
  ``blocks`` C-contiguous."""
  halves = blocks.view(np.uint64)  # (..., 2): the two halves of each block
  out = np.empty_like(halves)
  np.bitwise_xor(halves[..., 0], halves[..., 1], out=out[..., 0])
  out[..., 1] = halves[..., 0]
  return out.view(np.uint8)


def hash_blocks(use: str, blocks: np.ndarray) -> np.ndarray:
  """``AES_k(sigma(x)) xor sigma(x)`` for every block ``x`` of ``blocks``
  (uint8, last axis 16), with the fixed key of ``use``."""
  blocks = np.ascontiguousarray(blocks, dtype=np.uint8)
  if blocks.shape[-1:] != (SEED_BYTES,):
    raise ValueError(f"blocks must have a last axis of {SEED_BYTES} bytes, "
                     f"got shape {blocks.shape}")
  mixed = _sigma(blocks)
  encrypted = _encryptor(use).update(mixed.tobytes())
  return np.frombuffer(encrypted, dtype=np.uint8).reshape(blocks.shape) ^ mixed


def _split_control(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """A child's seed (the block with its lowest bit cleared) and its control
  bit (that lowest bit, of the last byte)."""
  control = blocks[..., -1] & 1
  seeds = blocks.copy()
  seeds[..., -1] &= 0xFE
  return seeds, control


def expand(seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                       np.ndarray]:
  """``(left seeds, left control bits, right seeds, right control bits)``
  of every seed of ``seeds`` (uint8, ``(..., 16)``): two AES blocks each."""
  left, left_control = _split_control(hash_blocks("left", seeds))
  right, right_control = _split_control(hash_blocks("right", seeds))
  return left, left_control, right, right_control


def convert(seeds: np.ndarray, words: int, first_word: int = 0) -> np.ndarray:
  """``words`` pseudorandom elements of Z_2^64 per seed, uint64 ``(...,
  words)``: words ``first_word, ..., first_word + words - 1`` of the seed's
  value stream (block j hashes the seed with j xored into its first 8 bytes;
  each block gives two words), so ranges that do not overlap are independent.
  """
  if words == 0:
    return np.zeros(seeds.shape[:-1] + (0,), dtype=np.uint64)
  first_block, last_block = first_word // 2, (first_word + words - 1) // 2
  counters = np.arange(first_block, last_block + 1, dtype=np.uint64)
  tweaks = np.zeros((counters.size, SEED_BYTES), dtype=np.uint8)
  tweaks[:, :8] = counters.astype("<u8").view(np.uint8).reshape(-1, 8)
  blocks = seeds[..., None, :] ^ tweaks  # (..., blocks, 16)
  stream = hash_blocks("value", blocks).reshape(
      seeds.shape[:-1] + (counters.size * SEED_BYTES,))
  values = stream.view("<u8").astype(np.uint64)
  start = first_word - 2 * first_block
  return values[..., start:start + words]
