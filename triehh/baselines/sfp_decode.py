"""SFP's server: fragment estimates, the decode and the stitching.

Steps 3 to 5 of :func:`triehh.baselines.sfp.sfp_discover`, on the sketches
the clients sent (:mod:`triehh.baselines.sfp_clients`):

* :func:`fragment_estimates`: for each position ``l``, the frequency oracle
  ``f~_l(w || a)`` of every bucket ``w`` and fragment ``a`` over
  ``Omega^2``.
* :func:`top_fragments` (the decode): ``Q_l``, the ``T`` tuples ``(w, a)``
  with the largest ``f~_l(w || a)``.
* :func:`stitch`: for every bucket ``w``, the Cartesian product
  ``{a_0 || a_2 || ... : (w, a_l) in Q_l}``; strings that are not a padded
  word are dropped (or, with stitching ``"paper"``, cut at their first pad).
  A word's count is the smallest, over the positions, of
  ``f~_l(w || a_l) * n / n_l``.
* :func:`word_counts`: with a whole-word sketch, the discovered words'
  counts from it instead.

Speed. The decode evaluates ``B * |Omega|^2`` candidates under ``k`` hash
functions at each position. A candidate's hash is the xor of a bucket part
and a part per character (tabulation hashing), so :func:`hashed_sums`, row
by row, looks every cell up once per second character for all positions,
then gathers whole rows of that table at the (bucket, first character)
parts and adds them in 16-bit integers, exactly, on ``num_threads``
threads.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import math
from collections.abc import Sequence

import numpy as np

from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import sfp_encoding
from triehh.baselines import sfp_options
from triehh.core import memory

# Pieces the gathered rows are cut into, so that each stays in cache.
_CHUNKS = 4

# Per bucket, per position, the kept (fragment, scaled estimate).
BucketLists = dict[int, list[list[tuple[str, float]]]]
# Per position, the kept (bucket, fragment, estimate), largest first.
FragmentTops = tuple[tuple[tuple[int, str, float], ...], ...]


# Bytes per candidate (position, bucket, fragment) the decode holds at
# once: its exact sum (int32) and its estimate (float64).
DECODE_BYTES_PER_CANDIDATE = 4 + 8


def decode_bytes(options: sfp_options.Options) -> int:
  """The memory the decode needs for every candidate tuple of every
  position: ``length / 2 x B x |Omega|^2`` sums and estimates."""
  return (options.num_positions * options.num_buckets * len(options.omega)**2
          * DECODE_BYTES_PER_CANDIDATE)


def check_decode_fits(options: sfp_options.Options) -> None:
  """Raises :class:`~triehh.core.memory.InsufficientMemoryError` naming the
  fragment alphabet when the decode's candidates would not fit in memory
  (their number grows as the square of the alphabet and with the length),
  before any report is drawn, with the largest alphabet and length that
  fit."""
  per_pair = (options.num_positions * options.num_buckets
              * DECODE_BYTES_PER_CANDIDATE)
  per_position = decode_bytes(options) // options.num_positions

  def hint(available: int) -> str:
    most = math.isqrt(memory.most_that_fit(per_pair, available)) - 1
    positions = memory.most_that_fit(per_position, available)
    return (f"use a fragment_alphabet of at most {max(most, 0):,} characters "
            f"(besides the padding), or length <= {2 * positions:,} (now "
            f"{options.length:,})")

  memory.check_fits(
      f"SFP's decode over fragment_alphabet of {len(options.omega) - 1:,} "
      f"characters ({options.num_positions} positions x "
      f"{options.num_buckets} buckets x {len(options.omega):,}^2 fragments)",
      decode_bytes(options), hint)


# Bytes per sketch cell per fragment position held at the decode's peak
# (measured): every position's int32 sums, their int32 stack, and the
# stack's absolute values or its transposed table.
SKETCH_BYTES_PER_CELL = 12


def sketches_bytes(k: int, m: int, length: int) -> int:
  """The memory of SFP's fragment sketches, one of ``k x m`` cells per
  position (``length / 2`` of them), at the decode's peak, with the hash
  tables and a position's collection."""
  per_k = (cms_lib.table_bytes(1, sfp_encoding.KEY_BYTES)
           + cms_lib.collect_bytes(1, m)
           + length // 2 * m * SKETCH_BYTES_PER_CELL)
  return k * per_k


def check_sketches_fit(k: int, m: int, length: int) -> None:
  """Raises :class:`~triehh.core.memory.InsufficientMemoryError` naming
  ``k``, ``m`` and ``length`` when the fragment sketches of every position
  would not fit in memory, before any report is drawn, with the largest
  ``k`` and ``length`` that fit."""
  positions = length // 2

  def hint(available: int) -> str:
    most_k = memory.most_that_fit(sketches_bytes(1, m, length), available)
    fixed = k * (cms_lib.table_bytes(1, sfp_encoding.KEY_BYTES)
                 + cms_lib.collect_bytes(1, m))
    most_positions = memory.most_that_fit(k * m * SKETCH_BYTES_PER_CELL,
                                          available, fixed)
    return (f"use k <= {most_k:,} at length={length:,}, or length <= "
            f"{2 * most_positions:,} at k={k:,}, or a smaller m")

  memory.check_fits(
      f"SFP's {positions:,} fragment sketches (length={length:,} / 2 "
      f"positions) of k={k:,} x m={m:,} cells",
      sketches_bytes(k, m, length), hint)


def _row_blocks(bounds: np.ndarray, limit: int) -> list[int]:
  """Starts of consecutive blocks of rows whose ``bounds`` sum to at most
  ``limit`` (a row over the limit gets a block of its own)."""
  starts, total = [], limit + 1
  for j, b in enumerate(bounds.tolist()):
    if total + b > limit:
      starts.append(j)
      total = 0
    total += b
  return starts


def _accumulate(table: np.ndarray, bucket: np.ndarray, first: np.ndarray,
                second: np.ndarray, rows: range, flushes: frozenset,
                chunks: list[slice]) -> np.ndarray:
  """``sum over rows j of table[j, bucket[j, w] ^ first[j, a1] ^
  second[j, a2]]``, as ``int32 [B * A1, A2 * P]``; the partial sums live in
  ``table``'s dtype and go to the result at every row in ``flushes``."""
  m, width = table.shape[1], second.shape[1] * table.shape[2]
  outer = bucket.shape[1] * first.shape[1]
  total = np.zeros((outer, width), dtype=np.int32)
  acc = np.zeros((outer, width), dtype=table.dtype)
  buf = np.empty_like(acc)
  cells = np.arange(m, dtype=np.intp)[:, None]
  for j in rows:
    if j in flushes and j != rows.start:
      total += acc
      acc[...] = 0
    lookup = np.take(table[j], cells ^ second[j], axis=0,
                     mode="clip").reshape(m, width)
    at = (bucket[j][:, None] ^ first[j][None, :]).reshape(-1)
    for part in chunks:
      np.take(lookup, at[part], axis=0, out=buf[part], mode="clip")
      np.add(acc[part], buf[part], out=acc[part])
  total += acc
  return total


def hashed_sums(sums: np.ndarray, bucket_part: np.ndarray,
                first_part: np.ndarray, second_part: np.ndarray,
                num_threads: int) -> np.ndarray:
  """``int32 [P, B, A1 * A2]``: ``sum_j S_l[j, b[j, w] ^ f[j, a1] ^
  s[j, a2]]`` for every position, bucket and fragment ``(a1, a2)``.

  Row by row, the server looks each cell ``c ^ s[j, a2]`` up once for all
  positions (a ``m x A2 x P`` table), then gathers that table's rows at
  ``b[j, w] ^ f[j, a1]`` and adds them up. The sums are exact: partial
  sums stay in 16 bits over blocks of rows whose largest ``|S_l[j, x]|``
  add up to less than ``2^15`` (32 bits if a row alone does not).

  Args:
    sums: ``[P, k, m]`` sketch sums per position.
    bucket_part: ``uint16 [k, B]`` hash part of the bucket byte.
    first_part, second_part: ``uint16 [k, A1]``, ``[k, A2]`` hash parts of
      the fragment's first and second character.
    num_threads: worker threads over contiguous ranges of rows.
  """
  num_pos, k, _ = sums.shape
  nb, n1, n2 = bucket_part.shape[1], first_part.shape[1], second_part.shape[1]
  row_bounds = np.abs(sums).max(axis=(0, 2), initial=0)
  small = int(row_bounds.max(initial=0)) < 2**15
  table = np.ascontiguousarray(
      sums.transpose(1, 2, 0).astype(np.int16 if small else np.int32))
  parts = [part.astype(np.intp) for part in (bucket_part, first_part,
                                              second_part)]
  flushes = frozenset(_row_blocks(row_bounds, 2**15 - 1) if small else [0])
  step = max(1, -(-nb * n1 // _CHUNKS))
  chunks = [slice(i, i + step) for i in range(0, nb * n1, step)]
  cuts = np.linspace(0, k, min(num_threads, k) + 1).astype(int)
  ranges = [range(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
  if len(ranges) == 1:
    total = _accumulate(table, *parts, ranges[0], flushes, chunks)
  else:
    with concurrent.futures.ThreadPoolExecutor(len(ranges)) as pool:
      total = sum(pool.map(lambda rows: _accumulate(
          table, *parts, rows, flushes, chunks), ranges))
  return np.ascontiguousarray(total.reshape(nb, n1, n2, num_pos).transpose(
      3, 0, 1, 2)).reshape(num_pos, nb, n1 * n2)


def top_tuples(estimates: np.ndarray, top_t: int) -> np.ndarray:
  """Flat indices of the ``top_t`` largest estimates (ties: low index)."""
  flat = estimates.reshape(-1)
  t = min(top_t, flat.size)
  if t < flat.size:
    cut = np.partition(flat, flat.size - t)[flat.size - t]
    pool = np.flatnonzero(flat >= cut)
  else:
    pool = np.arange(flat.size)
  order = np.lexsort((pool, -flat[pool]))
  return pool[order[:t]]


def fragment_estimates(frag_cms: cms_lib.CountMeanSketch,
                       sketches: Sequence[cms_lib.Sketch],
                       options: sfp_options.Options) -> list[np.ndarray]:
  """Step 3: the frequency oracle ``f~_l(w || a)`` of every bucket ``w`` and
  fragment ``a`` over ``Omega^2``: per position, ``float64 [B, |Omega|^2]``.

  Raises:
    ValueError: if a position received no reports (too few users).
  """
  counts = [s.num_reports for s in sketches]
  empty = [2 * l for l, c in enumerate(counts) if c == 0]
  if empty:
    raise ValueError(
        f"no user reported a fragment at character position(s) {empty} "
        f"(n={sum(counts)} users over {len(counts)} positions): too few "
        "users for SFP, every word needs a fragment at each position; use "
        "more users or a shorter length")
  points = np.array([ord(c) for c in options.omega], dtype=np.uint32)
  char_bytes = sfp_encoding.code_point_bytes(points)
  width = sfp_encoding.CHAR_BYTES
  first_part = frag_cms.hashes.partial(range(1, 1 + width), char_bytes)
  second_part = frag_cms.hashes.partial(
      range(1 + width, sfp_encoding.KEY_BYTES), char_bytes)
  bucket_part = frag_cms.hashes.partial(
      [0], np.arange(options.num_buckets, dtype=np.uint8)[:, None])
  hashed = hashed_sums(np.stack([s.sums for s in sketches]), bucket_part,
                       first_part, second_part, options.num_threads)
  return [frag_cms.debias(hashed[l], counts[l]) for l in range(len(counts))]


def top_fragments(estimates: Sequence[np.ndarray], counts: Sequence[int],
                  options: sfp_options.Options
                  ) -> tuple[FragmentTops, BucketLists]:
  """Step 4 (decode): ``Q_l``, the ``T`` largest tuples of each position.

  Returns:
    Per position the kept ``(bucket, fragment, estimate)``, largest first;
    and per bucket, per position, the kept ``(fragment, estimate * n /
    n_l)`` (the estimate scaled to all users).
  """
  omega = options.omega
  n = sum(counts)
  pair_text = [a + b for a in omega for b in omega]
  tops = []
  per_bucket: BucketLists = {}
  for l, est_l in enumerate(estimates):
    scale = n / max(counts[l], 1)
    entries = []
    for flat in top_tuples(est_l, options.top_t):
      bucket, pair = divmod(int(flat), len(pair_text))
      est = float(est_l[bucket, pair])
      entries.append((bucket, pair_text[pair], est))
      per_bucket.setdefault(bucket, [[] for _ in estimates])
      per_bucket[bucket][l].append((pair_text[pair], est * scale))
    tops.append(tuple(entries))
  return tuple(tops), per_bucket


def stitch(per_bucket: BucketLists, options: sfp_options.Options,
           puzzle_salt: bytes) -> tuple[dict[str, float], int]:
  """Step 5: every bucket's Cartesian product of its kept fragments.

  Strings that are only padding are dropped; so are, with stitching
  "drop", those with a character after a pad, while stitching "paper" keeps
  their part before the first pad. A word's count is its smallest scaled
  fragment estimate (over the strings giving it, the largest).

  Returns:
    word -> count, and the number of strings formed.

  Raises:
    ValueError: if more than ``max_candidates`` strings would be formed.
  """
  pad = sfp_encoding.PAD
  sizes = {w: math.prod(len(q) for q in lists)
           for w, lists in per_bucket.items()}
  num_stitched = sum(sizes.values())
  if num_stitched > options.max_candidates:
    worst = max(sizes, key=sizes.get)
    raise ValueError(
        f"stitching would form {num_stitched} strings (bucket {worst} alone "
        f"{sizes[worst]}), more than max_candidates={options.max_candidates}; "
        f"lower top_t (T={options.top_t}) or raise max_candidates")
  found: dict[str, float] = {}
  for bucket in sorted(per_bucket):
    if not sizes[bucket]:
      continue
    for combo in itertools.product(*per_bucket[bucket]):
      text = "".join(frag for frag, _ in combo)
      if options.stitching == "paper":
        word = text.split(pad, 1)[0]
      else:
        word = text.rstrip(pad)
      if not word or pad in word:
        continue  # only padding, or a character after a pad
      if options.check_puzzle_hash and sfp_encoding.puzzle_buckets(
          np.array([text]), options.num_buckets, puzzle_salt)[0] != bucket:
        continue
      count = min(est for _, est in combo)
      if count > found.get(word, -math.inf):
        found[word] = count
  return found, num_stitched


def word_counts(word_cms: cms_lib.CountMeanSketch,
                word_sketch: cms_lib.Sketch, words: Sequence[str],
                length: int) -> dict[str, float]:
  """The whole-word sketch's count of every discovered word."""
  names = sorted(words)
  pad = sfp_encoding.PAD
  padded = [(w + pad * length)[:length] for w in names]
  estimates = word_cms.estimate(word_sketch, cms_lib.digest_keys(padded))
  return {w: float(c) for w, c in zip(names, estimates)}
