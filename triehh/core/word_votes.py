"""The found words and their votes as a dict, ranked, without a Python loop.

A trie's words arrive as rows of symbol codes (one row per word, padded with
-1 past its length), their lengths and their votes. :func:`ranked` orders
them by votes from the largest, then alphabetically (the order of
:func:`triehh.core.ranking.by_count`), with numpy sorts; :func:`votes_dict`
decodes them into ``{word: votes}`` in that order.

Where the package was built with it (``setup.py``, ``make setup``),
``triehh/core/_compiled_word_votes.pyx`` ranks runs of words already in
alphabetical order (a trie's levels) and builds the dict in compiled
passes: at 10^9 users (44,919 words) the whole of
:meth:`Trie.heavy_hitters <triehh.core.trie.Trie.heavy_hitters>` then
costs 1.08-1.15x what building the same dict from words already decoded
and ranked costs in numpy (``python -m benchmarks.discover_benchmark``). Elsewhere (no C compiler or
Cython, Bazel's sandbox) numpy decodes the words into a string array and
the dict is built from its ``tolist``: the same dict.
"""

from __future__ import annotations

import numpy as np

from triehh.core import compiled_extensions


def ranked(rows: np.ndarray, votes: np.ndarray, num_symbols: int,
           run_starts: np.ndarray | None = None) -> np.ndarray:
  """The row indices by ``votes`` from the largest, then alphabetically.

  ``rows`` holds codes ``0 .. num_symbols - 1`` whose order is the
  characters' order, padded with -1 past each row's length, so that a
  word sorts before its extensions. Ties in votes keep the
  alphabetical order (two stable sorts). ``run_starts``, if given, starts
  runs of rows in alphabetical order already (a trie's levels): the
  compiled pass then merges them and sorts by votes in one call.
  """
  keys = _alphabetical_keys(rows, num_symbols)
  if compiled is not None and run_starts is not None:
    return compiled.ranked(keys, votes, run_starts)
  alphabetical = np.argsort(keys, kind="stable")
  return alphabetical[_descending(votes[alphabetical])]


def _alphabetical_keys(rows: np.ndarray, num_symbols: int) -> np.ndarray:
  """One sortable key per row: its codes + 1 as base ``num_symbols + 1``
  digits when they fit in 63 bits, else the rows' lexicographic rank."""
  base = num_symbols + 1
  if base ** rows.shape[1] < 2**63:
    if rows.shape[0] < _FEW_ROWS:  # one call; an int64 copy costs nothing
      powers = base ** np.arange(rows.shape[1] - 1, -1, -1, dtype=np.int64)
      return rows @ powers + powers.sum()  # (rows + 1) @ powers: -1 adds 0
    keys = np.zeros(rows.shape[0], dtype=np.int64)
    for column in rows.T:  # no int64 copy of the rows
      keys *= base
      keys += column
      keys += 1
    return keys
  rank = np.empty(rows.shape[0], dtype=np.int64)
  rank[np.lexsort(rows.T[::-1])] = np.arange(rows.shape[0])
  return rank


# Below this many rows, keys come from one matrix product.
_FEW_ROWS = 4096


def _descending(values: np.ndarray) -> np.ndarray:
  """The stable order of ``int64`` ``values`` from the largest down.

  Values within 2^16 of the smallest are ordered by a radix sort (numpy's
  stable sort of 16-bit keys); the few above them by a merge sort.
  """
  low = values.min() if values.size else 0
  near = values - low < 2**16
  keys = (low + (2**16 - 1) - values[near]).astype(np.uint16)
  if near.all():
    return np.argsort(keys, kind="stable")
  near_at, far_at = np.flatnonzero(near), np.flatnonzero(~near)
  return np.concatenate([far_at[np.argsort(-values[far_at], kind="stable")],
                         near_at[np.argsort(keys, kind="stable")]])


def votes_dict(points: np.ndarray, rows: np.ndarray, lengths: np.ndarray,
               votes: np.ndarray, order: np.ndarray) -> dict[str, int]:
  """``{word: votes}`` of the rows in ``order``.

  A row's word is the characters of code points ``points[code]`` (``uint32``,
  none of them 0) over its first ``lengths`` codes; ``rows`` (``int32``) is
  padded with -1 past them, and ``lengths``, ``votes`` and ``order`` are
  ``int64``. The compiled pass builds
  it where the package has it, else numpy; both give the same dict.
  """
  if compiled is not None:
    return compiled.votes_dict(points, rows[order], lengths[order],
                               votes[order])
  return numpy_votes_dict(points, rows, lengths, votes, order)


def numpy_votes_dict(points: np.ndarray, rows: np.ndarray,
                     lengths: np.ndarray, votes: np.ndarray,
                     order: np.ndarray) -> dict[str, int]:
  """:func:`votes_dict` in numpy: the words as one padded string array
  (the -1 padding becomes code point 0, which ``tolist`` drops), then a
  dict."""
  del lengths  # the -1 padding carries them
  if rows.shape[1] == 0:
    rows = np.full((rows.shape[0], 1), -1, dtype=np.int32)
  padded = np.append(points, np.uint32(0))  # code -1 -> code point 0
  words = padded[rows[order]].view(f"<U{rows.shape[1]}")[:, 0]
  return dict(zip(words.tolist(), votes[order].tolist()))


# The compiled pass's module, or None where the package was installed without
# it (no C compiler or Cython; Bazel's sandbox).
compiled = compiled_extensions.load("triehh.core._compiled_word_votes")
