"""The two-sample test of one server's view: do two samples of keys (as bit
arrays, one row per key) have one law, bit position by bit position?"""

from __future__ import annotations

import numpy as np
from scipy import stats


def key_bits(raw: bytes, key_size: int) -> np.ndarray:
  """Serialised keys, each ``key_size`` bytes, as a (keys, bits) 0/1 array."""
  return np.unpackbits(np.frombuffer(raw, np.uint8).reshape(-1, key_size),
                       axis=1)


def p_value(first: np.ndarray, second: np.ndarray) -> float:
  """The p-value that every bit position has one law in both samples: the
  sum over positions (those not constant in both) of the 2x2 chi-square
  statistics, chi-square with one degree of freedom per position."""
  ones = np.stack([first.sum(axis=0), second.sum(axis=0)]).astype(float)
  sizes = np.array([[first.shape[0]], [second.shape[0]]], dtype=float)
  table = np.stack([ones, sizes - ones])  # (1/0, sample, position)
  varying = (table.sum(axis=1) > 0).all(axis=0)
  table = table[..., varying]
  expected = (table.sum(axis=1, keepdims=True) * table.sum(
      axis=0, keepdims=True) / table.sum(axis=(0, 1), keepdims=True))
  statistic = ((table - expected)**2 / expected).sum()
  return float(stats.chi2.sf(statistic, df=int(varying.sum())))
