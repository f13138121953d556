# cython: language_level=3, boundscheck=False, wraparound=False
"""The found words' dict, decoded and built in one compiled pass.

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
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

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
