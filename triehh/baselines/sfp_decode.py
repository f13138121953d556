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
functions at each position; the candidates' hashes are the xor of a bucket
part and a fragment part (tabulation hashing), so they are formed by
broadcasting, ``k`` rows at a time, on ``num_threads`` threads
(:func:`hashed_sums`).
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

_ROW_BLOCK = 8

# Per bucket, per position, the kept (fragment, scaled estimate).
BucketLists = dict[int, list[list[tuple[str, float]]]]
# Per position, the kept (bucket, fragment, estimate), largest first.
FragmentTops = tuple[tuple[tuple[int, str, float], ...], ...]


def hashed_sums(sums: np.ndarray, bucket_part: np.ndarray,
                pair_part: np.ndarray, num_threads: int) -> np.ndarray:
  """``int32 [P, B, A]``: ``sum_j S_l[j, b_part[j, w] ^ a_part[j, a]]``.

  Args:
    sums: ``[P, k, m]`` sketch sums per position.
    bucket_part: ``uint16 [k, B]`` hash part of the bucket byte.
    pair_part: ``uint16 [k, A]`` hash part of the fragment bytes.
    num_threads: worker threads over blocks of rows.
  """
  num_pos, k, m = sums.shape
  nb, na = bucket_part.shape[1], pair_part.shape[1]
  dtype = np.int16 if np.abs(sums).max(initial=0) < 2**15 else np.int32
  sums = sums.astype(dtype)
  block = _ROW_BLOCK
  offset = (np.arange(k, dtype=np.intp) % block * m)[:, None]
  bucket_idx = bucket_part.astype(np.intp) | offset
  pair_idx = pair_part.astype(np.intp)
  starts = list(range(0, k, block))

  def work(my_starts):
    acc = np.zeros((num_pos, nb * na), dtype=np.int32)
    idx = np.empty((block, nb, na), dtype=np.intp)
    gathered = np.empty((block, nb * na), dtype=dtype)
    for j0 in my_starts:
      rows = min(block, k - j0)
      cur = idx[:rows]
      np.bitwise_xor(bucket_idx[j0:j0 + rows, :, None],
                     pair_idx[j0:j0 + rows, None, :], out=cur)
      flat = cur.reshape(-1)
      out = gathered[:rows].reshape(-1)
      for l in range(num_pos):
        np.take(sums[l, j0:j0 + rows].reshape(-1), flat, out=out)
        acc[l] += gathered[:rows].sum(axis=0, dtype=np.int32)
    return acc

  if num_threads <= 1 or len(starts) < 2:
    total = work(starts)
  else:
    parts = [starts[i::num_threads] for i in range(num_threads)]
    with concurrent.futures.ThreadPoolExecutor(num_threads) as pool:
      total = sum(pool.map(work, parts))
  return total.reshape(num_pos, nb, na)


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
  omega_points = np.array([ord(c) for c in options.omega], dtype=np.uint32)
  first, second = np.meshgrid(omega_points, omega_points, indexing="ij")
  pair_bytes = np.concatenate(
      [sfp_encoding.code_point_bytes(first.reshape(-1)),
       sfp_encoding.code_point_bytes(second.reshape(-1))], axis=1)
  pair_part = frag_cms.hashes.partial(range(1, sfp_encoding.KEY_BYTES),
                                      pair_bytes)
  bucket_part = frag_cms.hashes.partial(
      [0], np.arange(options.num_buckets, dtype=np.uint8)[:, None])
  hashed = hashed_sums(np.stack([s.sums for s in sketches]), bucket_part,
                       pair_part, options.num_threads)
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
