"""Words to salted hashes of a few bits: the strings the two servers walk.

A run draws a fresh public salt; each client hashes its word to the first
``bits`` bits of SHA-256(salt || utf-8 word). With ``bits`` about
2 log2(n) bits, two words of a population of n rarely share a hash, and the
tree of hashes has ``bits`` levels whatever the words' length.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

import numpy as np

SALT_BYTES = 16
MAX_BITS = 64


def new_salt() -> bytes:
  """A fresh public salt of SALT_BYTES random bytes (one per run)."""
  return secrets.token_bytes(SALT_BYTES)


def hash_word(word: str, salt: bytes, bits: int) -> int:
  """The first ``bits`` bits of SHA-256(salt || utf-8 word), as an int."""
  digest = hashlib.sha256(salt + word.encode("utf-8")).digest()
  return int.from_bytes(digest[:8], "big") >> (64 - bits)


def hash_words(words: Sequence[str], salt: bytes, bits: int) -> np.ndarray:
  """The hash of every word of ``words`` (uint64, in order): the first
  ``bits`` bits (1 to 64) of SHA-256(salt || utf-8 word) as an integer."""
  if isinstance(salt, str) or not isinstance(salt, (bytes, bytearray)):
    raise TypeError(f"salt must be bytes (new_salt() draws one), got "
                    f"{type(salt).__name__}")
  if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not (
      1 <= bits <= MAX_BITS):
    raise ValueError(f"bits must be an integer in [1, {MAX_BITS}], got "
                     f"{bits!r}")
  if isinstance(words, str):
    raise TypeError("words must be a sequence of words, got one str: pass "
                    "[word]")
  salt, bits = bytes(salt), int(bits)
  out = np.empty(len(words), dtype=np.uint64)
  for i, word in enumerate(words):
    if not isinstance(word, str):
      raise TypeError(f"words[{i}] must be a str, got {type(word).__name__}")
    out[i] = hash_word(word, salt, bits)
  return out
