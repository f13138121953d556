# cython: language_level=3, boundscheck=False, wraparound=False
"""The found words ranked, and their dict built, in compiled passes.

``ranked`` gives what :func:`triehh.core.word_votes.ranked`'s two numpy
sorts give (votes from the largest, then the words' keys) for keys that
come in increasing runs, a trie's levels: the runs are merged, then a
stable radix sort orders them by votes.

``votes_dict`` makes what :func:`triehh.core.word_votes.numpy_votes_dict`
makes with numpy (decode each row of codes, then ``dict(zip(words,
votes))``), value for value and in the same order: each word's string is
written from its codes straight into a new ``str`` and inserted, with its
votes, into a dict sized for all of them. What it saves is the numpy
path's padded string array, its two ``tolist`` lists and the dict's
resizing. The rows come in the dict's order (gathered by numpy first: a
sequential pass is faster than one that jumps between rows).

Built when the package is installed (``setup.py``; optional: without a C
compiler or Cython, :mod:`triehh.core.word_votes` uses numpy).
``tests/core/word_votes_test.py`` compares the two paths.
"""

import numpy as np

from cpython.dict cimport PyDict_SetItem
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t

# Codes as the trie's rows hold them: one byte each for small alphabets.
ctypedef fused code_t:
  int8_t
  int32_t


cdef extern from "Python.h":
  object _PyDict_NewPresized(Py_ssize_t minused)
  object PyUnicode_New(Py_ssize_t size, uint32_t maxchar)
  void *PyUnicode_DATA(object text)
  object PyUnicode_FromKindAndData(int kind, const void *buffer,
                                   Py_ssize_t size)
  int PyUnicode_4BYTE_KIND


def votes_dict(const uint32_t[::1] points, const code_t[:, ::1] rows,
               const int64_t[::1] lengths, const int64_t[::1] votes):
  """``{word(r): votes[r]}`` for the rows in their order, where ``word(r)``
  is the characters ``points[rows[r, j]]`` for ``j < lengths[r]``.

  Raises ValueError if a length or a code is outside its array, or the
  arrays disagree in length (checked as the words are written: the dict
  built so far is dropped).
  """
  cdef Py_ssize_t n = rows.shape[0], width = rows.shape[1]
  cdef Py_ssize_t size = points.shape[0], j, r, m
  cdef uint32_t top = 0
  if lengths.shape[0] != n or votes.shape[0] != n:
    raise ValueError("rows, lengths and votes must have one entry per word")
  for j in range(size):
    if points[j] > top:
      top = points[j]
  found = _PyDict_NewPresized(n)
  characters = np.empty(max(width, 1), dtype=np.uint32)
  cdef uint32_t[::1] buffer = characters
  for r in range(n):
    m = lengths[r]
    if m < 0 or m > width:
      raise ValueError(f"row {r} has length {m}, outside 0 .. {width}")
    if top < 128:  # ASCII: each character is one byte of the new str
      word = PyUnicode_New(m, 127)
      _write(<uint8_t *>PyUnicode_DATA(word), NULL, &points[0], size,
             &rows[r, 0] if width else NULL, m, r)
    else:
      _write(NULL, &buffer[0], &points[0], size,
             &rows[r, 0] if width else NULL, m, r)
      word = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, &buffer[0], m)
    if r == 0 or votes[r] != votes[r - 1]:  # equal votes share one int
      count = votes[r]
    PyDict_SetItem(found, word, count)
  return found


cdef inline int _write(uint8_t *ascii, uint32_t *ucs4, const uint32_t *points,
                       Py_ssize_t size, const code_t *codes, Py_ssize_t m,
                       Py_ssize_t r) except -1:
  """Writes the ``m`` characters of ``codes`` to ``ascii`` or else
  ``ucs4``; raises ValueError on a code outside the ``size`` symbols."""
  cdef Py_ssize_t j
  cdef int32_t code
  for j in range(m):
    code = codes[j]
    if code < 0 or code >= size:
      raise ValueError(f"row {r} holds code {code}, outside the {size} "
                       "symbols")
    if ascii != NULL:
      ascii[j] = <uint8_t>points[code]
    else:
      ucs4[j] = points[code]
  return 0


def ranked(const int64_t[::1] keys, const int64_t[::1] votes,
           const int64_t[::1] run_starts):
  """The indices by ``votes`` from the largest, ties by ``keys``: what
  :func:`triehh.core.word_votes.ranked`'s two numpy sorts give, for keys
  that come in runs ``[run_starts[i], run_starts[i + 1])``, each
  increasing (a trie's levels). The runs are merged, then a stable radix
  sort by votes keeps the keys' order among equal votes.

  Raises ValueError if the arrays disagree in length, a run is not
  increasing, or a vote is negative.
  """
  cdef Py_ssize_t n = keys.shape[0], i
  if votes.shape[0] != n or run_starts.shape[0] < 1 or run_starts[0] != 0:
    raise ValueError("keys and votes must have one entry per word, and "
                     "run_starts start at 0")
  for i in range(1, run_starts.shape[0]):
    if run_starts[i] < run_starts[i - 1] or run_starts[i] > n:
      raise ValueError("run_starts must be increasing and within the keys")
  first = np.arange(n, dtype=np.int64)
  second = np.empty(n, dtype=np.int64)
  cdef int64_t[::1] a = first
  cdef int64_t[::1] b = second
  starts = list(run_starts) + ([n] if run_starts[run_starts.shape[0] - 1] != n
                               else [])
  _check_runs(keys, starts)
  while len(starts) > 2:  # merge neighbouring runs, pass after pass
    merged = [0]
    for i in range(0, len(starts) - 1, 2):
      end = starts[i + 2] if i + 2 < len(starts) else starts[i + 1]
      _merge(keys, a, b, starts[i], starts[i + 1], end)
      merged.append(end)
    starts = merged
    a, b = b, a
  return _by_votes(votes, a)


cdef int _check_runs(const int64_t[::1] keys, list starts) except -1:
  cdef Py_ssize_t r, i, lo, hi
  for r in range(len(starts) - 1):
    lo, hi = starts[r], starts[r + 1]
    for i in range(lo + 1, hi):
      if keys[i] <= keys[i - 1]:
        raise ValueError(f"keys must increase within each run; position {i}"
                         " does not")
  return 0


cdef void _merge(const int64_t[::1] keys, int64_t[::1] src, int64_t[::1] dst,
                 Py_ssize_t lo, Py_ssize_t mid, Py_ssize_t hi):
  cdef Py_ssize_t i = lo, j = mid, k = lo
  while i < mid and j < hi:
    if keys[src[j]] < keys[src[i]]:
      dst[k] = src[j]
      j += 1
    else:
      dst[k] = src[i]
      i += 1
    k += 1
  while i < mid:
    dst[k] = src[i]
    i += 1
    k += 1
  while j < hi:
    dst[k] = src[j]
    j += 1
    k += 1


def _by_votes(const int64_t[::1] votes, int64_t[::1] order):
  """``order`` sorted stably by ``votes`` from the largest: an LSD radix
  sort on 11-bit digits of ``max - vote`` (a small count table: a few
  words cost little)."""
  cdef Py_ssize_t n = order.shape[0], i
  cdef int64_t top = 0
  for i in range(n):
    if votes[i] < 0:
      raise ValueError(f"votes must be >= 0, got {votes[i]} at {i}")
    if votes[i] > top:
      top = votes[i]
  out = np.empty(n, dtype=np.int64)
  cdef int64_t[::1] src = order, dst = out, swap
  cdef Py_ssize_t counts[2049]
  cdef int shift = 0
  cdef uint64_t digit
  while shift < 64 and (<uint64_t>top >> shift) != 0:
    for i in range(2049):
      counts[i] = 0
    for i in range(n):
      digit = ((<uint64_t>(top - votes[src[i]])) >> shift) & 0x7FF
      counts[digit + 1] += 1
    for i in range(1, 2049):
      counts[i] += counts[i - 1]
    for i in range(n):
      digit = ((<uint64_t>(top - votes[src[i]])) >> shift) & 0x7FF
      dst[counts[digit]] = src[i]
      counts[digit] += 1
    swap = src
    src = dst
    dst = swap
    shift += 11
  return np.asarray(src)
