"""Count Mean Sketch (CMS): Apple's locally private frequency oracle.

From Apple's "Learning with Privacy at Scale" (2017), as the TrieHH paper's
appendix ("Implementation of SFP") describes it, with its defaults
``k = 2048`` hash functions into ``m = 1024`` cells.

Client (one report per user holding item ``d``):

1. draw a row ``j`` uniformly from ``[k]``;
2. build ``v`` in ``{-1, +1}^m`` with ``v[h_j(d)] = +1`` and ``-1`` elsewhere;
3. flip every coordinate independently with probability
   ``q = 1 / (e^{eps/2} + 1)`` and send ``(j, v~)``.

Two inputs change ``v`` in at most two coordinates, each flipped with odds
``e^{eps/2}``, so a report is ``eps``-locally differentially private. (The
appendix writes ``v[h_j(d)] = -1`` and ``+1`` elsewhere: the mirror image,
with the same privacy; Apple's paper and this module put ``+1`` at the
item, which makes the debiased rows below indicators in expectation.)

Server: with ``c = (e^{eps/2} + 1) / (e^{eps/2} - 1)``, every report adds
``k (c/2 v~ + 1/2)`` to row ``j`` of the sketch matrix ``M`` (``k x m``).
The frequency oracle for an item ``d`` over ``n`` reports is::

    f~(d) = m / (m - 1) * (1/k * sum_j M[j, h_j(d)] - n / m)

It is unbiased over the reports' noise and the random choice of the hash
family (pairwise collision probability ``1/m``), with variance::

    Var f~(d) = (m / (m - 1))^2 * n (c^2 - 1) / 4
                + (n - f(d)) / (m - 1)
                + sum_{x != d} f(x) (f(x) - 1) / (k (m - 1))

where ``f(x)`` is the number of reports of ``x``. The first term is the
privacy noise; the other two are the hash collisions (all that is left when
``eps = inf``, i.e. no noise): one per report, and one per pair of reports
of a same other item, whose collisions with ``d`` coincide when they chose
the same row (probability ``1/k``). Collisions of reports of two different
items are uncorrelated because the family is 3-wise independent. Given one
fixed hash family, the noise alone has variance the first two terms (up to
``O(1/m)`` corrections) around a family-dependent mean.

Storage: :class:`Sketch` keeps the integer sums ``S[j] = sum of v~`` over
the reports of row ``j`` and the report count per row; ``M`` is an affine
function of them (:meth:`Sketch.matrix`).

Hash family (:class:`HashFamily`): keys are fixed-width byte strings; the
``k`` functions are simple tabulation hashes, ``h_j(x) = T_0[j, x_0] xor ...
xor T_{B-1}[j, x_{B-1}]`` with independent uniform tables of values in
``[0, m)`` drawn from a seeded ``numpy`` generator. Simple tabulation is
3-wise independent (Patrascu and Thorup, "The power of simple tabulation
hashing", 2012), which is what the appendix asks of the CMS hashes;
``m`` must hence be a power of two. Strings become keys either by an exact
byte layout (SFP's fragments) or by an 8-byte BLAKE2b digest
(:func:`digest_keys`; two distinct strings share a digest with probability
``2^-64``).

Simulation (:meth:`CountMeanSketch.collect`), both vectorised over users:

* ``"reports"``: every user's ``m``-coordinate report is materialised (in
  chunks of users) and summed per row: the literal protocol.
* ``"sketch"`` (fast): the sums are drawn from their exact joint law. For a
  cell ``(j, t)`` with ``N_j`` reports in row ``j`` of which ``C_jt`` put
  ``+1`` at ``t`` before noise, the sum of the noisy coordinates is
  ``(C - 2 X) - (N - C - 2 Y)`` with independent ``X ~ Bin(C, q)`` flips of
  the ``+1`` entries and ``Y ~ Bin(N - C, q)`` flips of the ``-1`` entries,
  independently over cells, since every coordinate of every report flips
  independently. The server only ever uses these sums, so this draws
  exactly the sketch the literal protocol would produce, at a cost of
  ``O(n + k m)`` instead of ``O(n m)``.

Both draw the rows ``j`` first (``rng.integers``), then the noise; with
``eps = inf`` they give the same sketch for the same seed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sys
from collections.abc import Sequence

import numpy as np

from triehh.core import memory
from triehh.core import validation

DEFAULT_K = 2048
DEFAULT_M = 1024
DEFAULT_CHUNK_SIZE = 8192
SIMULATIONS = ("sketch", "reports")
# Peak bytes (measured) of collect per sketch cell (the k x m cell counts
# and their noise draws) and per report (rows and hashed cells), and of
# estimate per (hash function, key) of a chunk.
COLLECT_BYTES_PER_CELL = 32
COLLECT_BYTES_PER_REPORT = 24
ESTIMATE_BYTES_PER_HASH = 16
# The largest x with math.exp(x) finite.
_MAX_EXP = math.log(sys.float_info.max)


def _check_epsilon(epsilon: float) -> float:
  try:
    eps = float(epsilon)
  except (TypeError, ValueError):
    raise TypeError(f"epsilon must be a number, got {epsilon!r}") from None
  if math.isnan(eps) or eps <= 0:
    raise ValueError(f"the local epsilon must be > 0 (math.inf for no "
                     f"noise), got {epsilon!r}")
  return eps


def flip_probability(epsilon: float) -> float:
  """``q = 1 / (e^{eps/2} + 1)``, the per-coordinate flip probability."""
  eps = _check_epsilon(epsilon)
  if eps / 2.0 > _MAX_EXP:
    return math.exp(-eps / 2.0)  # e^{eps/2} + 1 overflows; q is e^{-eps/2}
  return 1.0 / (math.exp(eps / 2.0) + 1.0)


def c_epsilon(epsilon: float) -> float:
  """``c = (e^{eps/2} + 1) / (e^{eps/2} - 1)`` (1 when ``eps = inf``)."""
  eps = _check_epsilon(epsilon)
  return 1.0 if math.isinf(eps) else 1.0 / math.tanh(eps / 4.0)


def digest_keys(strings: Sequence[str], num_bytes: int = 8,
                salt: bytes = b"") -> np.ndarray:
  """``uint8 [N, num_bytes]`` BLAKE2b digests of the UTF-8 strings.

  ``salt`` (at most 16 bytes) separates the key spaces of different uses.
  """
  num_bytes = validation.check_int("num_bytes", num_bytes, 1, 64)
  out = np.empty((len(strings), num_bytes), dtype=np.uint8)
  for i, s in enumerate(strings):
    out[i] = np.frombuffer(
        hashlib.blake2b(s.encode("utf-8"), digest_size=num_bytes,
                        salt=salt).digest(), dtype=np.uint8)
  return out


def table_bytes(k: int, num_bytes: int) -> int:
  """Memory of the ``uint16 [num_bytes, k, 256]`` tabulation tables."""
  return num_bytes * k * 256 * 2


def collect_bytes(k: int, m: int, num_reports: int = 0) -> int:
  """Estimated peak memory of :meth:`CountMeanSketch.collect`."""
  return k * m * COLLECT_BYTES_PER_CELL + num_reports * COLLECT_BYTES_PER_REPORT


def check_width(m: int, name: str = "m (sketch width)") -> int:
  """``m`` if it is a power of two in [2, 2^16] (tabulation hashing), else
  an error naming it as ``name``."""
  m = validation.check_int(name, m, 2, 1 << 16)
  if m & (m - 1):
    below = 1 << (m.bit_length() - 1)
    raise ValueError(f"{name} must be a power of two for tabulation "
                     f"hashing, got {m}; the nearest are {below} and "
                     f"{2 * below}")
  return m


def check_sketch_fits(k: int, m: int, key_bytes: int,
                      num_reports: int = 0) -> None:
  """Raises :class:`~triehh.core.memory.InsufficientMemoryError` naming
  ``k`` and ``m`` if the hash tables and a sketch's collection (its ``k x
  m`` cells) would not fit in memory, with the largest ``k`` that fits."""
  def hint(available: int) -> str:
    fit = memory.most_that_fit(table_bytes(1, key_bytes) + collect_bytes(1, m),
                               available, num_reports * COLLECT_BYTES_PER_REPORT)
    return (f"use k <= {fit:,} at m={m:,}, or a smaller m (the default is "
            f"k={DEFAULT_K}, m={DEFAULT_M})")

  memory.check_fits(
      f"a sketch of k={k:,} hash functions and m={m:,} cells ({k * m:,} "
      f"cells, {key_bytes}-byte keys)",
      table_bytes(k, key_bytes) + collect_bytes(k, m, num_reports), hint)


@dataclasses.dataclass(frozen=True, eq=False)
class HashFamily:
  """``k`` simple tabulation hash functions from ``B``-byte keys to ``[m]``.

  Attributes:
    tables: ``uint16 [B, k, 256]``; ``h_j(x) = xor_b tables[b, j, x_b]``.
    m: the range ``[0, m)`` of the table values (a power of two).
  """

  tables: np.ndarray
  m: int

  @classmethod
  def from_seed(cls, k: int, m: int, num_bytes: int,
                seed: int | np.random.Generator | None) -> "HashFamily":
    """Draws the tables from ``numpy.random.default_rng(seed)``."""
    k = validation.check_int("k (number of hash functions)", k, 1)
    m = check_width(m)
    num_bytes = validation.check_int("num_bytes", num_bytes, 1, 64)
    memory.check_fits(
        f"k={k:,} hash functions on {num_bytes}-byte keys (tables of "
        f"{num_bytes} x k x 256 entries)", table_bytes(k, num_bytes),
        lambda available: "use k <= "
        f"{memory.most_that_fit(table_bytes(1, num_bytes), available):,}")
    rng = np.random.default_rng(seed)
    tables = rng.integers(0, m, size=(num_bytes, k, 256), dtype=np.uint16)
    return cls(tables, m)

  @property
  def k(self) -> int:
    return int(self.tables.shape[1])

  @property
  def num_bytes(self) -> int:
    return int(self.tables.shape[0])

  def _keys(self, keys: np.ndarray) -> np.ndarray:
    keys = np.asarray(keys)
    if keys.dtype != np.uint8 or keys.ndim != 2:
      raise TypeError(f"keys must be a uint8 array [N, {self.num_bytes}], "
                      f"got {keys.dtype} with shape {keys.shape}")
    if keys.shape[1] != self.num_bytes:
      raise ValueError(f"keys have {keys.shape[1]} bytes, the hash family "
                       f"takes {self.num_bytes}")
    return keys

  def __call__(self, keys: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``h_{rows[i]}(keys[i])`` for every ``i``: ``intp [N]``."""
    keys = self._keys(keys)
    rows = np.asarray(rows, dtype=np.intp)
    if rows.shape != (keys.shape[0],):
      raise ValueError("rows must hold one hash index per key")
    out = self.tables[0][rows, keys[:, 0]].astype(np.intp)
    for b in range(1, self.num_bytes):
      out ^= self.tables[b][rows, keys[:, b]]
    return out

  def partial(self, byte_positions: Sequence[int],
              values: np.ndarray) -> np.ndarray:
    """``uint16 [k, V]``: the xor of the tables at ``byte_positions`` only.

    ``h_j`` of a key is the xor of :meth:`partial` over any partition of its
    bytes, which lets structured candidate sets be hashed by broadcasting.
    """
    values = np.asarray(values, dtype=np.uint8)
    if values.ndim != 2 or values.shape[1] != len(byte_positions):
      raise ValueError("values must be [V, len(byte_positions)]")
    out = np.zeros((self.k, values.shape[0]), dtype=np.uint16)
    for col, b in enumerate(byte_positions):
      out ^= self.tables[b][:, values[:, col]]
    return out

  def all_rows(self, keys: np.ndarray) -> np.ndarray:
    """``uint16 [k, N]``: every hash function on every key."""
    keys = self._keys(keys)
    return self.partial(range(self.num_bytes), keys)


@dataclasses.dataclass(frozen=True)
class Reports:
  """Client reports: the row ``j`` and the noisy vector of every user."""

  rows: np.ndarray     # int64 [n]
  vectors: np.ndarray  # int8 [n, m], entries -1 / +1


@dataclasses.dataclass(frozen=True, eq=False)
class Sketch:
  """What the server aggregates from ``num_reports`` reports.

  Attributes:
    sums: ``int32 [k, m]``, per row the sum of its reports' noisy vectors.
    row_counts: ``int64 [k]``, reports per row.
  """

  sums: np.ndarray
  row_counts: np.ndarray

  @property
  def num_reports(self) -> int:
    return int(self.row_counts.sum())

  def matrix(self, epsilon: float) -> np.ndarray:
    """Apple's sketch matrix ``M[j] = sum over row j of k (c/2 v~ + 1/2)``."""
    k = self.sums.shape[0]
    return k * (c_epsilon(epsilon) / 2.0 * self.sums
                + self.row_counts[:, None] / 2.0)


@dataclasses.dataclass(frozen=True, eq=False)
class CountMeanSketch:
  """A CMS configuration: local epsilon and hash family (see module doc)."""

  epsilon: float
  hashes: HashFamily

  def __post_init__(self):
    object.__setattr__(self, "epsilon", _check_epsilon(self.epsilon))

  @classmethod
  def create(cls, epsilon: float, *, k: int = DEFAULT_K, m: int = DEFAULT_M,
             key_bytes: int = 8,
             seed: int | np.random.Generator | None = 0) -> "CountMeanSketch":
    """A CMS whose hash family is drawn from ``seed``.

    Raises:
      memory.InsufficientMemoryError: before anything is drawn, if the hash
        tables and the ``k x m`` sketch would not fit in memory.
    """
    epsilon = _check_epsilon(epsilon)
    k = validation.check_int("k (number of hash functions)", k, 1)
    m = validation.check_int("m (sketch width)", m, 2, 1 << 16)
    key_bytes = validation.check_int("key_bytes", key_bytes, 1, 64)
    check_sketch_fits(k, m, key_bytes)
    return cls(epsilon, HashFamily.from_seed(k, m, key_bytes, seed))

  @property
  def k(self) -> int:
    return self.hashes.k

  @property
  def m(self) -> int:
    return self.hashes.m

  @property
  def flip_probability(self) -> float:
    return flip_probability(self.epsilon)

  @property
  def c_epsilon(self) -> float:
    return c_epsilon(self.epsilon)

  # ---- clients -------------------------------------------------------------

  def encode(self, keys: np.ndarray, rng: np.random.Generator) -> Reports:
    """Every client's report, materialised: ``n x m`` int8 (small ``n``)."""
    keys = self.hashes._keys(keys)  # pylint: disable=protected-access
    rows = rng.integers(0, self.k, size=keys.shape[0])
    cells = self.hashes(keys, rows)
    return Reports(rows, self._noisy_vectors(cells, rng))

  def _noisy_vectors(self, cells: np.ndarray,
                     rng: np.random.Generator) -> np.ndarray:
    q = self.flip_probability
    n = cells.shape[0]
    if q > 0:
      flips = rng.random((n, self.m)) < q
      vectors = flips.view(np.int8) * np.int8(2) - np.int8(1)
    else:
      vectors = np.full((n, self.m), -1, dtype=np.int8)
    vectors[np.arange(n), cells] *= -1
    return vectors

  def aggregate(self, reports: Reports) -> Sketch:
    """The server's sketch of materialised reports."""
    rows = np.asarray(reports.rows)
    vectors = np.asarray(reports.vectors)
    if vectors.shape != (rows.shape[0], self.m):
      raise ValueError(f"reports must be [n, m={self.m}] vectors with one row"
                       " index each")
    if rows.size and (rows.min() < 0 or rows.max() >= self.k):
      raise ValueError(f"report rows must be in [0, k={self.k})")
    sums = np.zeros((self.k, self.m), dtype=np.int32)
    self._add_rows(sums, rows, vectors)
    return Sketch(sums, np.bincount(rows, minlength=self.k).astype(np.int64))

  @staticmethod
  def _add_rows(sums: np.ndarray, rows: np.ndarray,
                vectors: np.ndarray) -> None:
    if rows.size == 0:
      return
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    uniq, starts = np.unique(sorted_rows, return_index=True)
    sums[uniq] += np.add.reduceat(vectors[order], starts, axis=0,
                                  dtype=np.int32)

  def collect(self, keys: np.ndarray, rng: np.random.Generator, *,
              simulation: str = "sketch",
              chunk_size: int = DEFAULT_CHUNK_SIZE) -> Sketch:
    """Simulates every client and returns the server's sketch.

    Args:
      keys: ``uint8 [n, B]``, the item of every client.
      rng: the generator (rows first, then noise).
      simulation: ``"sketch"`` (exact law of the sums, fast) or
        ``"reports"`` (materialise reports ``chunk_size`` users at a time).
      chunk_size: users per chunk for ``"reports"``.
    """
    keys = self.hashes._keys(keys)  # pylint: disable=protected-access
    n = keys.shape[0]
    if simulation not in SIMULATIONS:
      raise ValueError(f"simulation must be one of {SIMULATIONS}, got "
                       f"{simulation!r}")
    if n >= 2**31:
      raise ValueError(f"at most 2^31 - 1 reports per sketch, got {n}")
    memory.check_fits(
        f"collecting {n:,} reports into k={self.k:,} x m={self.m:,} cells",
        collect_bytes(self.k, self.m, n),
        "use a smaller k or m (CountMeanSketch.create)")
    rows = rng.integers(0, self.k, size=n)
    cells = self.hashes(keys, rows)
    row_counts = np.bincount(rows, minlength=self.k).astype(np.int64)
    if simulation == "reports":
      chunk_size = validation.check_int("chunk_size", chunk_size, 1)
      sums = np.zeros((self.k, self.m), dtype=np.int32)
      for start in range(0, n, chunk_size):
        part = slice(start, start + chunk_size)
        self._add_rows(sums, rows[part], self._noisy_vectors(cells[part], rng))
      return Sketch(sums, row_counts)
    plus = np.bincount(rows * self.m + cells,
                       minlength=self.k * self.m).reshape(self.k, self.m)
    minus = row_counts[:, None] - plus
    q = self.flip_probability
    sums = plus - minus
    if q > 0:
      sums -= 2 * rng.binomial(plus, q)
      sums += 2 * rng.binomial(minus, q)
    return Sketch(sums.astype(np.int32), row_counts)

  # ---- server --------------------------------------------------------------

  def debias(self, hashed_sums: np.ndarray, num_reports: int) -> np.ndarray:
    """``f~`` from ``sum_j S[j, h_j(d)]`` (see the module docstring)."""
    m = self.m
    n = float(num_reports)
    a = self.c_epsilon / 2.0 * np.asarray(hashed_sums, dtype=np.float64) + n / 2
    return m / (m - 1.0) * (a - n / m)

  def estimate(self, sketch: Sketch, keys: np.ndarray,
               chunk_size: int = 4096) -> np.ndarray:
    """The frequency oracle ``f~`` for every key: ``float64 [N]``.

    Keys are hashed ``chunk_size`` at a time, or fewer where ``k`` hashes
    of that many keys would not fit in memory (the result is the same).
    """
    if sketch.sums.shape != (self.k, self.m):
      raise ValueError(f"the sketch is {sketch.sums.shape}, this CMS is "
                       f"({self.k}, {self.m})")
    keys = self.hashes._keys(keys)  # pylint: disable=protected-access
    chunk_size = validation.check_int("chunk_size", chunk_size)
    available = memory.available_bytes()
    if available is not None:
      chunk_size = max(1, min(chunk_size, memory.most_that_fit(
          self.k * ESTIMATE_BYTES_PER_HASH, available)))
    out = np.empty(keys.shape[0], dtype=np.int64)
    for start in range(0, keys.shape[0], chunk_size):
      part = slice(start, start + chunk_size)
      cells = self.hashes.all_rows(keys[part]).astype(np.intp)
      out[part] = np.take_along_axis(sketch.sums, cells, axis=1).sum(
          axis=0, dtype=np.int64)
    return self.debias(out, sketch.num_reports)

  def variance(self, num_reports: int, count: float = 0.0,
               other_pairs: float = 0.0) -> float:
    """``Var f~(d)`` (module docstring) over noise and hash family.

    Args:
      num_reports: n, the reports in the sketch.
      count: f(d), how many of them report ``d``.
      other_pairs: ``sum_{x != d} f(x) (f(x) - 1)`` over the other items (0
        when each is reported once).
    """
    m = self.m
    c2 = self.c_epsilon**2
    return ((m / (m - 1.0))**2 * num_reports * (c2 - 1.0) / 4.0
            + (num_reports - count) / (m - 1.0)
            + other_pairs / (self.k * (m - 1.0)))
