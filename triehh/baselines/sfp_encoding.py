"""SFP's strings and records: padding, the puzzle hash, fragment keys.

What SFP's clients and server (:mod:`triehh.baselines.sfp`) share:

* Strings. A word is padded with :data:`PAD` to ``length`` characters, or
  truncated to its first ``length`` (:func:`pad_words`).
* Puzzle hash. ``h(s)`` maps the padded string to one of ``num_buckets``
  buckets (:func:`puzzle_buckets`: BLAKE2b of the string, salted by the hash
  seed).
* Fragment records. The record ``h(s) || s[l:l+2]`` of the fragment at
  character position ``l`` is keyed by :data:`KEY_BYTES` bytes: the bucket
  byte, then 3 big-endian bytes per code point (:func:`fragment_keys`).
* Seeds. One hash seed gives the puzzle hash's salt and the seeds of the
  fragment and word sketches' hash families (:func:`salts`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

PAD = "$"
# A fragment record's key: the bucket byte, then 3 bytes per code point.
CHAR_BYTES = 3
KEY_BYTES = 1 + 2 * CHAR_BYTES


def pad_words(words: Sequence[str], length: int,
              pad: str = PAD) -> np.ndarray:
  """Each word padded with ``pad`` to ``length`` characters or truncated."""
  out = []
  for w in words:
    if pad in w:
      raise ValueError(f"word {w!r} contains the padding symbol {pad!r}; "
                       "remove it from the data")
    out.append((w + pad * length)[:length])
  return np.array(out, dtype=f"<U{length}")


def puzzle_buckets(padded: np.ndarray, num_buckets: int,
                   salt: bytes) -> np.ndarray:
  """The shared puzzle hash ``h(s)`` of every padded string: ``int64 [V]``."""
  out = np.empty(len(padded), dtype=np.int64)
  for i, s in enumerate(padded):
    digest = hashlib.blake2b(str(s).encode("utf-8"), digest_size=8,
                             salt=salt).digest()
    out[i] = int.from_bytes(digest, "little") % num_buckets
  return out


def code_point_bytes(code_points: np.ndarray) -> np.ndarray:
  """``uint8 [..., 3]``: a code point as 3 big-endian bytes (exact)."""
  cp = np.asarray(code_points, dtype=np.uint32)
  return np.stack([(cp >> 16) & 255, (cp >> 8) & 255, cp & 255],
                  axis=-1).astype(np.uint8)


def fragment_keys(padded: np.ndarray, buckets: np.ndarray) -> np.ndarray:
  """``uint8 [V, length // 2, 7]``: the key of ``h(s) || s[l:l+2]``."""
  length = padded.dtype.itemsize // 4
  points = padded.view(np.uint32).reshape(len(padded), length)
  pairs = points.reshape(len(padded), length // 2, 2)
  keys = np.empty((len(padded), length // 2, KEY_BYTES), dtype=np.uint8)
  keys[:, :, 0] = np.asarray(buckets, dtype=np.uint8)[:, None]
  keys[:, :, 1:4] = code_point_bytes(pairs[:, :, 0])
  keys[:, :, 4:7] = code_point_bytes(pairs[:, :, 1])
  return keys


def salts(hash_seed: int) -> tuple[bytes, list[int], list[int]]:
  """The puzzle hash's salt, and the seeds of the fragment and word sketches'
  hash families, from one hash seed."""
  salt = (hash_seed % 2**64).to_bytes(8, "little") + b"sfp-puzz"
  return salt, [hash_seed, 1], [hash_seed, 2]


def outside_alphabet(padded: np.ndarray, omega: str
                     ) -> tuple[np.ndarray, str]:
  """Which padded words have a character outside ``omega`` (they cannot be
  rebuilt from fragments), and those characters, sorted."""
  length = padded.dtype.itemsize // 4
  points = padded.view(np.uint32).reshape(len(padded), length)
  inside = np.isin(points, np.array([ord(c) for c in omega], dtype=np.uint32))
  outside = "".join(chr(c) for c in np.unique(points[~inside]))
  return ~inside.all(axis=1), outside
