"""SFP's clients: every user's word, position and Count Mean Sketch report.

Step 2 of :func:`triehh.baselines.sfp.sfp_discover`. A user holding ``s``
draws a position ``l`` uniformly from ``{0, 2, ..., length - 2}`` and sends
``l`` and the Count Mean Sketch report
(:mod:`triehh.baselines.count_mean_sketch`) of the record
``h(s) || s[l:l+2]`` (:mod:`triehh.baselines.sfp_encoding`); with a word
budget, also the report of its padded word. A user holding several words
reports one, drawn with probability equal to its local frequency ``f_i(w)``,
as a TrieHH participant votes with one word. The server receives the sums
of the reports, one sketch per position (and the word sketch).

Randomness, from the run's generator, in order: the word of each
several-word user, every user's position, then per position the CMS rows
and noise, then the word sketch's. Users whose word has a character outside
the fragment alphabet still report, and are counted.

Speed. With the ``"sketch"`` simulation, :func:`encode` and
:func:`aggregate` draw exactly what :meth:`CountMeanSketch.collect` draws:
the rows and hashed cells (a key byte every word shares is looked up once
per row), then the cell counts and the noise, whose binomial draws
:func:`binomial` looks up instead of iterating (the generator's own draws,
and its state after them).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time

import numpy as np

from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import sfp_encoding
from triehh.baselines import sfp_options
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.engines import sampling


@dataclasses.dataclass
class ClientReports:
  """What the server receives: one sketch per position, and the word sketch."""

  sketches: list[cms_lib.Sketch]
  word_sketch: cms_lib.Sketch | None
  num_outside_alphabet: int
  outside_characters: str
  # Wall time of the reports' encoding (words, positions, rows and hashed
  # cells) and of their aggregation into sketches (cell counts and noise;
  # all of a "reports" simulation).
  encode_seconds: float = 0.0
  aggregate_seconds: float = 0.0


def reported_words(pop: population_lib.Population,
                   rng: np.random.Generator) -> np.ndarray:
  """Step 2a: each user's reported word (vocabulary index); a several-word
  user draws one by its local frequency."""
  if pop.is_single_word:
    if pop.user_word is None:  # users per word: users sorted by word
      return np.repeat(np.arange(pop.num_words, dtype=np.intp),
                       pop.word_users)
    return pop.user_word.astype(np.intp)
  users = np.arange(pop.num_users)
  return sampling.words_of(pop, users,
                           sampling.draw_word_ranks(rng, pop, users))


# ---- exact binomial draws ----------------------------------------------------
# ``Generator.binomial(n, p)`` (p <= 1/2) draws every entry in turn: nothing
# when n = 0; when n * p <= 30, inversion: one uniform U (a multiple of
# 2^-53) and the smallest x with U minus the running pmf terms at most the
# next term (redrawn if x passes a bound, a 10-standard-deviation event);
# otherwise a rejection sampler (BTPE). The inversion draw is a
# non-decreasing step function of U, so with its steps found once per n it
# is a table lookup: :func:`binomial` gives the same draws and leaves the
# generator in the same state, far faster for the CMS noise, whose counts
# are small.

# U is bucketed by its top bits; a bucket with no step has a single draw.
_BUCKET_BITS = 12
_SHIFT = 53 - _BUCKET_BITS
# Shorter runs of inversion draws, and arrays whose draws average less than
# _MIN_MEAN, are drawn by the generator: it is as fast there.
_MIN_RUN = 64
_MIN_MEAN = 2.0
# Counts spanning fewer values than this get a table row per value.
_DENSE_RANGE = 512
# Marks a bucket of U whose draw is not the same throughout.
_UNSURE = 255
# Steps per (p, n), shared by runs at the same flip probability.
_STEPS: dict[tuple[float, int], np.ndarray] = {}
_MAX_STEPS = 20_000


def _inversion_terms(ns: np.ndarray, p: float) -> tuple[np.ndarray,
                                                        np.ndarray]:
  """The pmf terms the inversion subtracts, ``float64 [N, T + 1]``, and its
  bound on the draw per n (the terms past it are not used)."""
  q = 1.0 - p
  log_q = math.log(q)
  bounds = np.array([int(min(float(n), n * p + 10.0 * math.sqrt(n * p * q
                                                                + 1)))
                     for n in ns.tolist()], dtype=np.int64)
  terms = np.empty((ns.size, int(bounds.max()) + 1), dtype=np.float64)
  terms[:, 0] = [math.exp(n * log_q) for n in ns.tolist()]
  for x in range(1, terms.shape[1]):
    terms[:, x] = (ns - x + 1).astype(np.float64) * p * terms[:, x - 1] / (
        x * q)
  return terms, bounds


def _passes(terms: np.ndarray, u: np.ndarray) -> np.ndarray:
  """Whether the draw from ``U = u 2^-53`` passes each step: ``U - terms[0]
  - ... - terms[x - 1] > terms[x]``, subtracted in that order."""
  rest = u * 2.0**-53
  for x in range(terms.shape[1] - 1):
    rest[:, x + 1:] -= terms[:, x, None]
  return rest > terms


def _steps(ns: np.ndarray, p: float) -> np.ndarray:
  """Per n, the largest ``u`` whose draw stops at or before each step x
  (``int64 [N, T + 1]``; ``2^53`` past n's bound): the draw from ``u`` is
  the number of steps below ``u``."""
  terms, bounds = _inversion_terms(ns, p)
  unused = np.arange(terms.shape[1]) > bounds[:, None]
  terms[unused] = math.inf  # never passed
  guess = np.floor(np.minimum(np.cumsum(terms, axis=1), 1.0) * 2.0**53)
  width = 64 * (terms.shape[1] + 2)
  lo = np.clip(guess - width, 0, 2**53).astype(np.int64)
  hi = np.clip(guess + width, 0, 2**53).astype(np.int64)
  # lo must stop and hi pass (u = 2^53 stands for "passes"), else search
  # all of [0, 2^53]. The search bisects: the steps are exact.
  bad = _passes(terms, lo) | ~(_passes(terms, np.minimum(hi, 2**53 - 1))
                               | (hi == 2**53))
  lo[bad], hi[bad] = 0, 2**53
  lo[unused], hi[unused] = 2**53 - 1, 2**53
  while (hi - lo > 1).any():
    mid = (lo + hi) // 2
    passed = _passes(terms, mid)
    hi = np.where(passed, mid, hi)
    lo = np.where(passed, lo, mid)
  lo[unused] = 2**53
  return lo


def _step_table(ns: np.ndarray, p: float) -> np.ndarray:
  """``_steps`` of ``ns``, cached per (p, n), padded to a common width."""
  known = {n: _STEPS.get((p, n)) for n in ns.tolist()}
  missing = [n for n, row in known.items() if row is None]
  if missing:
    if len(_STEPS) > _MAX_STEPS:
      _STEPS.clear()
    found = _steps(np.array(missing, dtype=np.int64), p)
    for n, row in zip(missing, found):
      known[n] = _STEPS[(p, n)] = row[row < 2**53]
  rows = [known[n] for n in ns.tolist()]
  table = np.full((len(rows), max(r.size for r in rows) + 1), 2**53,
                  dtype=np.int64)
  for i, r in enumerate(rows):
    table[i, :r.size] = r
  return table


def _rows_of(ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Distinct values covering ``ns`` (a whole range when it is short), and
  the index of each of ``ns`` among them."""
  low, high = int(ns.min()), int(ns.max())
  if high - low < _DENSE_RANGE:
    return np.arange(low, high + 1), (ns - low).astype(np.intp)
  if high <= 4 * ns.size + 2**16:
    present = np.flatnonzero(np.bincount(ns))
    index = np.zeros(high + 1, dtype=np.intp)
    index[present] = np.arange(present.size)
    return present, index[ns]
  return np.unique(ns, return_inverse=True)


def _inversion_draws(ns: np.ndarray, uniforms: np.ndarray, p: float
                     ) -> np.ndarray | None:
  """The inversion draws of ``Bin(ns, p)`` from their uniforms, or None if
  one would have been redrawn (past its bound)."""
  distinct, which = _rows_of(ns)
  steps = _step_table(distinct, p)
  bounds = (steps < 2**53).sum(axis=1) - 1
  # Per (n, bucket of u): the draw at the bucket's start, or _UNSURE if a
  # step falls inside the bucket or the draw passes the bound.
  num_buckets = 2**_BUCKET_BITS
  rows = np.broadcast_to(np.arange(distinct.size)[:, None], steps.shape)
  inside = np.bincount((rows * (num_buckets + 1) + (steps >> _SHIFT)).ravel(),
                       minlength=distinct.size * (num_buckets + 1))
  inside = inside.reshape(distinct.size, num_buckets + 1)[:, :num_buckets]
  first = np.cumsum(inside, axis=1) - inside
  first[(inside > 0) | (first > bounds[:, None])] = _UNSURE
  # u >> _SHIFT, from U = u 2^-53 (scaling by a power of two is exact).
  bucket = (uniforms * float(num_buckets)).astype(np.intp)
  draws = first.astype(np.uint8).reshape(-1)[which * num_buckets + bucket]
  odd = np.flatnonzero(draws == _UNSURE)
  if odd.size:
    u = (uniforms[odd] * 2.0**53).astype(np.int64)
    exact = (steps[which[odd]] < u[:, None]).sum(axis=1)
    if (exact > bounds[which[odd]]).any():
      return None
    draws[odd] = exact
  return draws


def _segments(inversion: np.ndarray) -> list[tuple[int, int, bool]]:
  """``(start, stop, look_up)``: runs of at least ``_MIN_RUN`` inversion
  draws, looked up, and the stretches between them, which the generator
  draws itself."""
  cuts = np.flatnonzero(np.diff(inversion)) + 1
  starts, stops = np.r_[0, cuts], np.r_[cuts, inversion.size]
  long = inversion[starts] & (stops - starts >= _MIN_RUN)
  segments, done = [], 0
  for start, stop in zip(starts[long].tolist(), stops[long].tolist()):
    if start > done:
      segments.append((done, start, False))
    segments.append((start, stop, True))
    done = stop
  if done < inversion.size:
    segments.append((done, inversion.size, False))
  return segments


def binomial(rng: np.random.Generator, counts: np.ndarray,
             p: float) -> np.ndarray:
  """``rng.binomial(counts, p)``: the same draws, and ``rng`` left in the
  same state, with most inversion draws looked up in step tables."""
  if not _lookup_is_exact():
    return rng.binomial(counts, p)
  return _binomial(rng, counts, p)


@functools.cache
def _lookup_is_exact() -> bool:
  """Whether this numpy draws binomials as the lookup expects: checked
  once, on runs of inversion (n <= 100 at p = 0.3) and rejection draws."""
  counts = np.tile(np.arange(30, 130), 20)
  ours, theirs = np.random.default_rng(7), np.random.default_rng(7)
  return (np.array_equal(_binomial(ours, counts, 0.3),
                         theirs.binomial(counts, 0.3))
          and ours.random() == theirs.random())


def _binomial(rng: np.random.Generator, counts: np.ndarray,
              p: float) -> np.ndarray:
  """:func:`binomial`, assuming the lookup is exact."""
  flat = np.asarray(counts).reshape(-1)
  if not 0.0 < p <= 0.5 or flat.dtype.kind not in "iu" or not flat.size:
    return rng.binomial(counts, p)
  low = int(flat.min())
  if (low < 0 or low * p > 30.0
      or int(flat.sum()) * p < _MIN_MEAN * flat.size):
    return rng.binomial(counts, p)  # an error, or no draw worth a lookup
  # Zeros draw nothing: keep the others, in order.
  active = None if low > 0 else np.flatnonzero(flat)
  ns = (flat if active is None else flat[active]).astype(np.int64,
                                                         copy=False)
  inversion = ns * p <= 30.0
  segments = _segments(inversion)
  if not any(look_up for _, _, look_up in segments):
    return rng.binomial(counts, p)
  state = rng.bit_generator.state
  out = np.zeros(flat.size, dtype=np.int64)
  looked_up = np.zeros(ns.size, dtype=bool)
  uniforms = []
  for start, stop, look_up in segments:
    if look_up:
      uniforms.append(rng.random(stop - start))
      looked_up[start:stop] = True
    else:
      where = slice(start, stop) if active is None else active[start:stop]
      out[where] = rng.binomial(ns[start:stop], p)
  draws = _inversion_draws(ns[looked_up], np.concatenate(uniforms), p)
  if draws is None:  # a redraw: let the generator draw everything
    rng.bit_generator.state = state
    return rng.binomial(counts, p)
  out[looked_up if active is None else active[looked_up]] = draws
  return out.reshape(np.shape(counts))


# ---- clients -----------------------------------------------------------------


def _cells(hashes: cms_lib.HashFamily, keys: np.ndarray,
           reporters: np.ndarray, rows: np.ndarray) -> np.ndarray:
  """``hashes(keys[reporters], rows)``: a byte all keys share adds one
  value per row; the others are looked up by flat index."""
  tables = hashes.tables
  shared = np.zeros(hashes.k, dtype=np.uint16)
  out = None
  offsets = rows * tables.shape[2]
  for b in range(hashes.num_bytes):
    column = np.ascontiguousarray(keys[:, b])
    if column.size and (column == column[0]).all():
      shared ^= tables[b][:, column[0]]
      continue
    part = np.take(tables[b].reshape(-1), offsets + column[reporters])
    out = part if out is None else np.bitwise_xor(out, part, out=out)
  shared = shared[rows]
  return (shared if out is None else out ^ shared).astype(np.intp)


def encode(cms: cms_lib.CountMeanSketch, keys: np.ndarray,
           reporters: np.ndarray, rng: np.random.Generator
           ) -> tuple[np.ndarray, np.ndarray]:
  """Every report's row ``j`` (drawn in user order) and hashed cell
  ``h_j(keys[reporter])``, as :meth:`CountMeanSketch.collect` draws them."""
  n = reporters.size
  if n >= 2**31:
    raise ValueError(f"at most 2^31 - 1 reports per sketch, got {n}")
  rows = rng.integers(0, cms.k, size=n)
  return rows, _cells(cms.hashes, keys, reporters, rows)


def aggregate(cms: cms_lib.CountMeanSketch, rows: np.ndarray,
              cells: np.ndarray, rng: np.random.Generator) -> cms_lib.Sketch:
  """The server's sketch of the reports ``(rows, cells)``: the
  ``"sketch"`` simulation of :meth:`CountMeanSketch.collect`, the same
  draws (the noise by :func:`binomial`) and the same sums."""
  row_counts = np.bincount(rows, minlength=cms.k).astype(np.int64)
  plus = np.bincount(rows * cms.m + cells,
                     minlength=cms.k * cms.m).reshape(cms.k, cms.m)
  # With X ~ Bin(plus, q) of the +1 entries flipped, then Y ~ Bin(minus, q)
  # of the -1 entries, a cell holds ones = plus - X + Y noisy +1 entries and
  # sums to 2 ones - N_j (= plus - minus - 2 X + 2 Y).
  ones = plus.copy()
  q = cms.flip_probability
  if q > 0:
    ones -= binomial(rng, plus, q)
    ones += binomial(rng, row_counts[:, None] - plus, q)
  ones *= 2
  ones -= row_counts[:, None]
  return cms_lib.Sketch(ones.astype(np.int32), row_counts)


def _sketch(cms: cms_lib.CountMeanSketch, keys: np.ndarray,
            reporters: np.ndarray, rng: np.random.Generator,
            options: sfp_options.Options, clock: dict[str, float]
            ) -> cms_lib.Sketch:
  """The sketch of the reports of ``keys[reporters]``, timing its phases."""
  start = time.perf_counter()
  if options.simulation != "sketch":
    sketch = cms.collect(keys[reporters], rng, simulation=options.simulation,
                         chunk_size=options.chunk_size)
    clock["aggregate"] += time.perf_counter() - start
    return sketch
  rows, cells = encode(cms, keys, reporters, rng)
  middle = time.perf_counter()
  sketch = aggregate(cms, rows, cells, rng)
  clock["encode"] += middle - start
  clock["aggregate"] += time.perf_counter() - middle
  return sketch


def _by_position(words: np.ndarray, positions: np.ndarray,
                 num_positions: int) -> list[np.ndarray]:
  """The words of the users that chose each position, in user order."""
  small = positions.astype(np.uint8 if num_positions <= 256 else np.int64)
  ordered = words[np.argsort(small, kind="stable")]
  ends = np.cumsum(np.bincount(small, minlength=num_positions))
  return np.split(ordered, ends[:-1])


# Bytes per user of the reports (its word, position, sketch row and cell,
# 8 bytes each, and the word sketch's row and cell), at the least.
_BYTES_PER_REPORT = 48


def client_reports(pop: population_lib.Population,
                   options: sfp_options.Options,
                   frag_cms: cms_lib.CountMeanSketch,
                   word_cms: cms_lib.CountMeanSketch | None,
                   puzzle_salt: bytes,
                   rng: np.random.Generator) -> ClientReports:
  """Step 2: every user picks a word and a position and reports the CMS of
  ``h(s) || s[l:l+2]`` (and of its word); the server sums them per position.

  Raises:
    ValueError: if no user's word can be rebuilt from the fragment
      alphabet, naming the characters outside it.
  """
  start = time.perf_counter()
  memory.check_fits(
      f"SFP's reports of n={pop.num_users:,} users", pop.num_users
      * _BYTES_PER_REPORT, lambda available: (
          "each user's report is simulated; at most about "
          f"{memory.most_that_fit(_BYTES_PER_REPORT, available):,} users "
          "fit"))
  padded = sfp_encoding.pad_words(pop.vocabulary, options.length)
  bad_words, outside = sfp_encoding.outside_alphabet(padded, options.omega)
  if bad_words.all():
    raise ValueError(
        f"every word has characters outside the fragment alphabet "
        f"{options.fragment_alphabet!r} (found {outside!r}), so SFP could "
        "rebuild none; pass fragment_alphabet="
        f"'{sfp_options.FRAGMENT_ALPHABET_FROM_DATA}' or one that includes "
        "them")
  keys = sfp_encoding.fragment_keys(
      padded, sfp_encoding.puzzle_buckets(padded, options.num_buckets,
                                          puzzle_salt))
  words = reported_words(pop, rng)
  positions = rng.integers(0, options.num_positions, size=pop.num_users)
  by_position = _by_position(words, positions, options.num_positions)
  clock = {"encode": time.perf_counter() - start, "aggregate": 0.0}
  sketches = [_sketch(frag_cms, keys[:, l], reporters, rng, options, clock)
              for l, reporters in enumerate(by_position)]
  word_sketch = None
  if word_cms is not None:
    word_sketch = _sketch(word_cms, cms_lib.digest_keys(list(padded)), words,
                          rng, options, clock)
  return ClientReports(sketches, word_sketch, int(bad_words[words].sum()),
                       outside, clock["encode"], clock["aggregate"])
