# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A round's draws and cells in compiled code, value for value.

``thinned_counts`` makes the draws of ``kept = rng.binomial(users, p)``
followed by :func:`triehh.engines.thinning.top_up` (a fixed-size round,
contract step 1a), ``binomial_counts`` those of ``rng.binomial(users, p)``
alone (a Poisson round, step 1c), from the same generator: numpy's own C
functions (``random_binomial``, and ``random_bounded_uint64`` as
``Generator.choice`` calls it in Floyd's algorithm) on the generator's bit
generator, under its lock. What numpy's Python-level calls add around them
(argument conversion, the broadcasting iterator, the hash set's
allocation) is what this saves: the draws of a run at 10^6 users cost
0.83x ``rng.binomial`` over the occupied cells alone, against 1.45x for
the two numpy calls (docs/engines.md). ``round_cell_users`` gathers a
round's cells as :func:`triehh.engines.vote_counts.round_cell_users` does.

Built when the package is installed (``setup.py``; optional: without a C
compiler or Cython, :mod:`triehh.engines.thinning` and
:mod:`triehh.engines.vote_counts` make the numpy calls, which give the same
counts). ``tests/engines/compiled_draws_test.py`` compares the two paths.
"""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport binomial_t, random_binomial
from numpy.random.c_distributions cimport random_bounded_uint64


cdef inline Py_ssize_t _cell_of(const int64_t *cum, Py_ssize_t c,
                                int64_t rank) noexcept nogil:
  """The first cell whose cumulative pool count exceeds ``rank``."""
  cdef Py_ssize_t lo = 0, hi = c, mid
  while lo < hi:
    mid = (lo + hi) >> 1
    if cum[mid] > rank:
      hi = mid
    else:
      lo = mid + 1
  return lo


cdef bitgen_t *_bitgen(bit_generator) except NULL:
  """The C bit generator of a numpy ``BitGenerator``."""
  return <bitgen_t *>PyCapsule_GetPointer(bit_generator.capsule,
                                          "BitGenerator")


cdef int64_t _binomials(bitgen_t *bitgen, const int64_t[::1] users, double p,
                        int64_t[::1] kept) noexcept nogil:
  """``kept[i] = Binomial(users[i], p)`` as ``rng.binomial(users, p)`` draws
  them, in order; returns their sum."""
  cdef binomial_t state
  cdef Py_ssize_t i
  cdef int64_t t = 0
  memset(&state, 0, sizeof(binomial_t))
  for i in range(users.shape[0]):
    kept[i] = random_binomial(bitgen, p, users[i], &state)
    t += kept[i]
  return t


def thinned_counts(rng, const int64_t[::1] users, int64_t total, double p,
                   int64_t m):
  """``(kept, done)``: ``kept = rng.binomial(users, p)`` (``total`` users in
  all) and, when ``done``, its exact top-up to ``m`` (``thinning.top_up``)
  drawn too. ``done`` is False when ``Generator.choice`` would take its
  other branch (a tail shuffle, for more than a twentieth of a pool above
  10,000): the caller then tops up with numpy, from the generator as this
  call left it.
  """
  bit_generator = rng.bit_generator
  cdef bitgen_t *bitgen = _bitgen(bit_generator)
  cdef Py_ssize_t c = users.shape[0], i
  out = np.empty(c, dtype=np.int64)
  cdef int64_t[::1] kept = out
  cdef int64_t t, pool, size, j, value, cum_count
  cdef int sign
  cdef uint64_t mask, loc, empty = <uint64_t>-1
  cdef uint64_t *seen = NULL
  cdef int64_t *cum = NULL
  with bit_generator.lock:
    with nogil:
      t = _binomials(bitgen, users, p, kept)
    if t == m:
      return out, True
    if t > m:  # drop kept users
      pool, size, sign = t, t - m, -1
    else:  # add users that were not kept
      pool, size, sign = total - t, m - t, 1
    if pool > 10000 and size > pool // 20:
      return out, False
    # Floyd's algorithm, as Generator.choice(pool, size, replace=False,
    # shuffle=False) runs it: the same draws, the same values.
    mask = <uint64_t>(1.2 * size)
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    seen = <uint64_t *>malloc((mask + 1) * sizeof(uint64_t))
    cum = <int64_t *>malloc(c * sizeof(int64_t))
    if seen == NULL or cum == NULL:
      free(seen)
      free(cum)
      raise MemoryError()
    with nogil:
      memset(seen, 0xff, (mask + 1) * sizeof(uint64_t))
      cum_count = 0
      for i in range(c):
        cum_count += kept[i] if sign < 0 else users[i] - kept[i]
        cum[i] = cum_count
      for j in range(pool - size, pool):
        value = <int64_t>random_bounded_uint64(bitgen, 0, <uint64_t>j, 0, 0)
        loc = (<uint64_t>value) & mask
        while seen[loc] != empty and seen[loc] != <uint64_t>value:
          loc = (loc + 1) & mask
        if seen[loc] == empty:
          seen[loc] = <uint64_t>value
        else:  # drawn before: j itself, which no earlier step could draw
          loc = (<uint64_t>j) & mask
          while seen[loc] != empty:
            loc = (loc + 1) & mask
          seen[loc] = <uint64_t>j
          value = j
        kept[_cell_of(cum, c, value)] += sign
    free(seen)
    free(cum)
  return out, True


def binomial_counts(rng, const int64_t[::1] users, double p):
  """``rng.binomial(users, p)``: the same draws, the same counts (``users``
  non-negative and ``p`` in [0, 1], as the callers check)."""
  bit_generator = rng.bit_generator
  cdef bitgen_t *bitgen = _bitgen(bit_generator)
  out = np.empty(users.shape[0], dtype=np.int64)
  cdef int64_t[::1] kept = out
  with bit_generator.lock, nogil:
    _binomials(bitgen, users, p, kept)
  return out


def round_cell_users(const int64_t[:, ::1] parents,
                     const int64_t[::1] level_users,
                     const int64_t[::1] frontier_ids, int64_t num_users):
  """``vote_counts._cells``: ``(children, bounds, users)`` of a round past
  the first, the same arrays (``parents`` and ``level_users`` are a
  :class:`~triehh.engines.vote_counts.CountLevel`'s, whose columns are
  FIRST_CHILD, NUM_CHILDREN, END_CHILD, NO_SYMBOL and USERS)."""
  cdef Py_ssize_t k = frontier_ids.shape[0], i
  cdef int64_t num_cells = 0, pos = 0, first, count, j, q, users_on = 0
  bounds_out = np.empty(k, dtype=np.int64)
  cdef int64_t[::1] bounds = bounds_out
  for i in range(k):
    num_cells += parents[frontier_ids[i], 1]
    bounds[i] = num_cells
  children_out = np.empty(num_cells, dtype=np.int64)
  users_out = np.empty(num_cells + k + 1, dtype=np.int64)
  cdef int64_t[::1] children = children_out
  cdef int64_t[::1] users = users_out
  with nogil:
    for i in range(k):
      q = frontier_ids[i]
      first = parents[q, 0]
      count = parents[q, 1]
      for j in range(first, first + count):
        children[pos] = j
        users[pos] = level_users[j]
        pos += 1
      users[num_cells + i] = parents[q, 3]
      users_on += parents[q, 4]
    users[num_cells + k] = num_users - users_on
  return children_out, bounds_out, users_out
