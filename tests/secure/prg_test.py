"""The fixed-key AES PRG: deterministic, its uses independent, balanced."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from triehh.secure import prg


def _seeds(count: int, seed: int = 0) -> np.ndarray:
  rng = np.random.default_rng(seed)
  return rng.integers(0, 256, size=(count, 16), dtype=np.uint8)


def test_a_block_is_the_mmo_hash_of_its_orthomorphism():
  block = bytes(range(16))
  mixed = bytes(a ^ b for a, b in zip(block[:8], block[8:])) + block[:8]
  key = hashlib.sha256(b"triehh.secure.prg left child").digest()[:16]
  encrypted = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(
      mixed)
  expected = bytes(a ^ b for a, b in zip(encrypted, mixed))
  got = prg.hash_blocks("left", np.frombuffer(block, np.uint8)[None])
  assert got.tobytes() == expected


def test_expand_is_deterministic_and_clears_the_control_bit():
  seeds = _seeds(64)
  first, second = prg.expand(seeds), prg.expand(seeds.copy())
  for a, b in zip(first, second):
    np.testing.assert_array_equal(a, b)
  left, left_control, right, right_control = first
  assert not np.any(left[:, -1] & 1) and not np.any(right[:, -1] & 1)
  assert set(np.unique(left_control)) <= {0, 1}
  assert not np.array_equal(left, right)


def test_batched_calls_equal_one_seed_at_a_time():
  seeds = _seeds(5).reshape(5, 1, 16)
  together = prg.convert(seeds, 5, 3)
  for i in range(5):
    np.testing.assert_array_equal(prg.convert(seeds[i], 5, 3), together[i])


def test_convert_ranges_are_one_stream():
  seeds = _seeds(7)
  whole = prg.convert(seeds, 9)
  np.testing.assert_array_equal(prg.convert(seeds, 4, 3), whole[:, 3:7])
  np.testing.assert_array_equal(prg.convert(seeds, 1, 0), whole[:, :1])
  assert prg.convert(seeds, 0).shape == (7, 0)
  assert prg.convert(seeds[:0], 3).shape == (0, 3)


def test_outputs_are_balanced_bits():
  """Each output bit of each use is 1 about half the time, and the lowest
  bit of every child seed (its control bit, cleared) is 0."""
  seeds = _seeds(4000, seed=3)
  left, left_control, right, right_control = prg.expand(seeds)
  value = prg.convert(seeds, 2).view(np.uint8)
  for stream in (left[:, :15], right[:, :15], value):
    ones = np.unpackbits(stream, axis=1).mean(axis=0)
    assert np.all(np.abs(ones - 0.5) < 5 * 0.5 / np.sqrt(4000))
  for control in (left_control, right_control):
    assert abs(control.mean() - 0.5) < 5 * 0.5 / np.sqrt(4000)
  assert np.unpackbits(left[:, 15:], axis=1)[:, 7].mean() == 0


def test_blocks_of_another_width_are_refused():
  with pytest.raises(ValueError, match="last axis of 16 bytes"):
    prg.hash_blocks("value", np.zeros((3, 8), np.uint8))
