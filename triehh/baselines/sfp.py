"""Apple's Sequence Fragment Puzzle (SFP) over Count Mean Sketches.

SFP (Apple, "Learning with Privacy at Scale", 2017) is the locally private
heavy-hitter discovery the TrieHH paper compares with. This module follows
the paper's appendix "Implementation of SFP" (the 1-based positions there
are 0-based here):

* Strings. A word is padded with ``$`` to ``length = 10`` characters, or
  truncated to its first 10 (a longer word can only be found as its
  truncation, a string no user typed).
* Puzzle hash. ``h(s)`` maps the padded string to one of ``256`` buckets;
  clients and server share it (BLAKE2b of the string, salted by the hash
  seed).
* Client. A user holding ``s`` draws a position ``l`` uniformly from
  ``{0, 2, 4, 6, 8}`` and sends ``l`` and the Count Mean Sketch report
  (:mod:`triehh.baselines.count_mean_sketch`, ``k = 2048``, ``m = 1024``)
  of the record ``r = h(s) || s[l:l+2]``.
* Server. For each position ``l`` it builds the sketch ``M_l`` of the
  reports with that position and its frequency oracle ``f~_l``, keeps
  ``Q_l``, the ``T`` tuples ``(w, a)`` over ``[256] x Omega^2`` with the
  largest ``f~_l(w || a)`` (``Omega``: the 26 lowercase letters, extendable,
  plus the padding ``$`` without which no word shorter than 10 could be
  rebuilt), and returns, for every bucket ``w``, the Cartesian product
  ``{a_0 || a_2 || ... || a_8 : (w, a_l) in Q_l}``. Stitched strings that
  are not a padded word (a character after a ``$``, or only ``$``) are
  dropped; the rest, with the padding removed, are the heavy hitters.
  ``T`` (``threshold``) trades recall for precision; the paper used 20 and
  80.

Estimated counts. The paper's comparison runs only SFP's discovery stage.
A discovered word's count is estimated from its fragments as the smallest,
over the positions, of ``f~_l(w || a_l) * n / n_l`` (``n_l`` users chose
``l``; words sharing a bucket and a fragment only add to an estimate, so the
smallest is the tightest). Apple's deployed SFP also privatises the whole
word in a second sketch to count the candidates; ``word_budget = b > 0``
does that: every user also sends a CMS report of its padded word, with
``b * eps_local`` going to it and ``(1 - b) * eps_local`` to the fragment
report (one message, ``eps_local``-LDP by composition), and counts come from
the word sketch. The default ``word_budget = 0`` is the paper's setting:
the whole local budget goes to the fragment-and-position sketch.

Central privacy. :func:`sfp_discover` takes the central ``(epsilon,
delta)`` TrieHH is run at and gives SFP the local epsilon of
:func:`triehh.baselines.amplification.sfp_local_epsilon` (privacy
amplification by shuffling of the ``n`` one-message reports).

Several words per user. A user reports one word, drawn with probability
equal to its local frequency ``f_i(w)`` (seeded), as a TrieHH participant
votes with one word.

Randomness. One ``numpy.random.Generator(seed)`` draws, in order: the hash
seed (unless given), the word of each several-word user, every user's
position, then per position the CMS rows and noise, then the word sketch's.
The same seed gives the same result, whatever the number of threads.

Speed. Clients and aggregation are array operations over all users (see
:meth:`CountMeanSketch.collect` for the two simulations). The server's
decode evaluates ``256 * |Omega|^2`` candidates under ``k`` hash functions
at each of the 5 positions; the candidates' hashes are the xor of a bucket
part and a fragment part (tabulation hashing), so they are formed by
broadcasting, ``k`` rows at a time, on ``num_threads`` threads.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import itertools
import math
import os
import string
import time
from collections.abc import Sequence

import numpy as np

from triehh import api
from triehh import population as population_lib
from triehh import ranking
from triehh import sampling
from triehh import validation
from triehh.baselines import amplification
from triehh.baselines import count_mean_sketch as cms_lib

PAD = "$"
DEFAULT_LENGTH = 10
DEFAULT_NUM_BUCKETS = 256
DEFAULT_THRESHOLD = 20
DEFAULT_FRAGMENT_ALPHABET = string.ascii_lowercase
FRAGMENT_ALPHABET_FROM_DATA = "data"
DEFAULT_MAX_CANDIDATES = 2_000_000
# A fragment record's key: the bucket byte, then 3 bytes per code point.
_KEY_BYTES = 7
_ROW_BLOCK = 8


@dataclasses.dataclass(frozen=True)
class SFPParams:
  """The parameters of an SFP run and its privacy.

  Attributes:
    epsilon, delta: the central guarantee of the shuffled reports.
    epsilon_local: the local epsilon of a user's whole message.
    threshold: T, tuples kept per position.
    k, m: CMS hash functions and width.
    n: number of users.
    length: strings are padded or truncated to this many characters.
    num_buckets: range of the puzzle hash.
    fragment_alphabet: Omega, the characters of candidate fragments (the
      padding symbol is added to it).
    word_budget: share of ``epsilon_local`` spent on the whole-word sketch.
    epsilon_fragment, epsilon_word: the two sketches' local epsilons.
    simulation: ``"sketch"`` or ``"reports"`` (see the CMS module).
    hash_seed: seed of the hash family and puzzle hash.
    check_puzzle_hash: whether stitched strings must hash to their bucket.
    guarantee: how the privacy figures were obtained, in words.
  """

  epsilon: float
  delta: float
  epsilon_local: float
  threshold: int
  k: int
  m: int
  n: int
  length: int = DEFAULT_LENGTH
  num_buckets: int = DEFAULT_NUM_BUCKETS
  fragment_alphabet: str = DEFAULT_FRAGMENT_ALPHABET
  word_budget: float = 0.0
  epsilon_fragment: float = math.nan
  epsilon_word: float | None = None
  simulation: str = "sketch"
  hash_seed: int | None = None
  check_puzzle_hash: bool = False
  guarantee: str = ""

  @property
  def T(self) -> int:  # pylint: disable=invalid-name
    """The paper's name for :attr:`threshold`."""
    return self.threshold

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


@dataclasses.dataclass
class SFPResult:
  """The outcome of one SFP run.

  Attributes:
    heavy_hitters: discovered word -> estimated count, largest first (ties
      by word).
    params: the :class:`SFPParams`.
    seed: the seed of the run.
    seconds: wall time of clients plus server (population building
      excluded); ``client_seconds`` + ``server_seconds``.
    fragment_tops: per position, the kept tuples ``(bucket, fragment,
      estimate)``, largest estimate first.
    reports_per_position: ``n_l``, users that chose each position.
    num_stitched: strings formed by the Cartesian products (before dropping
      malformed ones).
  """

  heavy_hitters: dict[str, float]
  params: SFPParams
  seed: int | None
  seconds: float
  client_seconds: float
  server_seconds: float
  fragment_tops: tuple[tuple[tuple[int, str, float], ...], ...]
  reports_per_position: tuple[int, ...]
  num_stitched: int


# ---- strings and keys -------------------------------------------------------


def pad_words(words: Sequence[str], length: int = DEFAULT_LENGTH,
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


def _code_point_bytes(code_points: np.ndarray) -> np.ndarray:
  """``uint8 [..., 3]``: a code point as 3 big-endian bytes (exact)."""
  cp = np.asarray(code_points, dtype=np.uint32)
  return np.stack([(cp >> 16) & 255, (cp >> 8) & 255, cp & 255],
                  axis=-1).astype(np.uint8)


def fragment_keys(padded: np.ndarray, buckets: np.ndarray) -> np.ndarray:
  """``uint8 [V, length // 2, 7]``: the key of ``h(s) || s[l:l+2]``."""
  length = padded.dtype.itemsize // 4
  points = padded.view(np.uint32).reshape(len(padded), length)
  pairs = points.reshape(len(padded), length // 2, 2)
  keys = np.empty((len(padded), length // 2, _KEY_BYTES), dtype=np.uint8)
  keys[:, :, 0] = np.asarray(buckets, dtype=np.uint8)[:, None]
  keys[:, :, 1:4] = _code_point_bytes(pairs[:, :, 0])
  keys[:, :, 4:7] = _code_point_bytes(pairs[:, :, 1])
  return keys


def _salts(hash_seed: int) -> tuple[bytes, list[int], list[int]]:
  salt = (hash_seed % 2**64).to_bytes(8, "little") + b"sfp-puzz"
  return salt, [hash_seed, 1], [hash_seed, 2]


# ---- server decode ----------------------------------------------------------


def _hashed_sums(sums: np.ndarray, bucket_part: np.ndarray,
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


def _top_tuples(estimates: np.ndarray, threshold: int) -> np.ndarray:
  """Flat indices of the ``threshold`` largest estimates (ties: low index)."""
  flat = estimates.reshape(-1)
  t = min(threshold, flat.size)
  if t < flat.size:
    cut = np.partition(flat, flat.size - t)[flat.size - t]
    pool = np.flatnonzero(flat >= cut)
  else:
    pool = np.arange(flat.size)
  order = np.lexsort((pool, -flat[pool]))
  return pool[order[:t]]


# ---- the run ----------------------------------------------------------------


def _check_alphabet(alphabet: str) -> str:
  if not isinstance(alphabet, str) or not alphabet:
    raise ValueError(f"fragment_alphabet must be a non-empty string, got "
                     f"{alphabet!r}")
  if len(set(alphabet)) != len(alphabet):
    raise ValueError(f"fragment_alphabet has repeated characters: "
                     f"{alphabet!r}")
  if PAD in alphabet:
    raise ValueError(f"fragment_alphabet must not contain the padding symbol "
                     f"{PAD!r} (it is always added)")
  return alphabet


def sfp_discover(user_words, *, epsilon: float | None = None,
                 delta: float | None = None,
                 threshold: int = DEFAULT_THRESHOLD, seed: int | None = 0,
                 k: int = cms_lib.DEFAULT_K, m: int = cms_lib.DEFAULT_M,
                 length: int = DEFAULT_LENGTH,
                 num_buckets: int = DEFAULT_NUM_BUCKETS,
                 fragment_alphabet: str | None = None,
                 word_budget: float = 0.0,
                 epsilon_local: float | None = None,
                 hash_seed: int | None = None,
                 simulation: str = "sketch",
                 chunk_size: int = cms_lib.DEFAULT_CHUNK_SIZE,
                 num_threads: int | None = None,
                 check_puzzle_hash: bool = False,
                 max_candidates: int = DEFAULT_MAX_CANDIDATES,
                 alphabet=None, unknown: str | None = None) -> SFPResult:
  """Discovers heavy hitters with SFP at a central ``(epsilon, delta)``.

  Args:
    user_words: one entry per user, a ``str`` or a mapping word -> count, or
      a :class:`triehh.Population` (as for :func:`triehh.discover`).
    epsilon, delta: the central privacy the shuffled reports must meet;
      ``delta`` defaults to ``1/n^2``. SFP's local epsilon follows from
      :func:`triehh.sfp_local_epsilon`.
    threshold: T, the tuples kept per position (the paper: 20 and 80).
    seed: seed of the ``numpy.random.Generator`` (same seed, same result).
    k, m: CMS hash functions and width (``m`` a power of two).
    length: pad or truncate strings to this even number of characters.
    num_buckets: range of the puzzle hash, at most 256.
    fragment_alphabet: Omega (default the 26 lowercase letters; ``"data"``
      for every character of the population); ``$`` is always added.
    word_budget: share of the local epsilon for a whole-word sketch used to
      count the discovered words, in ``[0, 1)``; 0 (the paper's setting)
      sends no word report.
    epsilon_local: run at this local epsilon instead; the central epsilon
      reported is then the shuffle bound's at ``delta``.
    hash_seed: seed of the public hash functions; by default drawn from
      ``seed``.
    simulation: ``"sketch"`` (fast, exact law of the server's sums) or
      ``"reports"`` (every report materialised).
    chunk_size: users per chunk with ``simulation="reports"``.
    num_threads: decode threads (default: up to 2 cores).
    check_puzzle_hash: keep only stitched strings whose puzzle hash is
      their bucket (not in the paper; off by default).
    max_candidates: refuse to stitch more strings than this (a too large
      T); raises ``ValueError``.
    alphabet, unknown: encoding options when ``user_words`` is not a
      Population (see :mod:`triehh.population`).

  Returns:
    An :class:`SFPResult`.
  """
  options = {}
  if alphabet is not None:
    options["alphabet"] = alphabet
  if unknown is not None:
    options["unknown"] = unknown
  max_length = (user_words.max_length
                if isinstance(user_words, population_lib.Population)
                else population_lib.DEFAULT_MAX_LENGTH)
  pop = api.as_population(user_words, max_length, **options)
  n = pop.num_users

  threshold = validation.check_int("threshold (T)", threshold)
  length = validation.check_int("length", length, 2)
  if length % 2:
    raise ValueError(f"length must be even (2-character fragments), got "
                     f"{length}")
  num_buckets = validation.check_int("num_buckets", num_buckets, 1, 256)
  max_candidates = validation.check_int("max_candidates", max_candidates)
  if fragment_alphabet is None:
    fragment_alphabet = DEFAULT_FRAGMENT_ALPHABET
  elif fragment_alphabet == FRAGMENT_ALPHABET_FROM_DATA:
    fragment_alphabet = "".join(c for c in pop.alphabet.characters
                                if c != PAD)
  fragment_alphabet = _check_alphabet(fragment_alphabet)
  if not 0.0 <= float(word_budget) < 1.0:
    raise ValueError(f"word_budget must be in [0, 1), got {word_budget!r}")
  word_budget = float(word_budget)
  if simulation not in cms_lib.SIMULATIONS:
    raise ValueError(f"simulation must be one of {cms_lib.SIMULATIONS}, got "
                     f"{simulation!r}")
  if num_threads is None:
    num_threads = min(2, os.cpu_count() or 1)
  num_threads = validation.check_int("num_threads", num_threads)

  target_delta = 1.0 / n**2 if delta is None else delta
  if epsilon_local is None:
    if epsilon is None:
      raise ValueError("give the central epsilon (and optionally delta), or "
                       "epsilon_local")
    eps_local = amplification.sfp_local_epsilon(epsilon, target_delta, n)
    central = float(epsilon)
    guarantee = ("central (epsilon, delta) by amplification by shuffling of "
                 f"n={n} one-message {eps_local:.4g}-LDP reports (Balle et "
                 "al. 2019, Theorem 5.3).")
  else:
    if epsilon is not None:
      raise ValueError("give either the central epsilon or epsilon_local, "
                       "not both")
    eps_local = float(epsilon_local)
    if math.isnan(eps_local) or eps_local <= 0:
      raise ValueError(f"epsilon_local must be > 0, got {epsilon_local!r}")
    central = (math.inf if math.isinf(eps_local) else
               amplification.central_epsilon(eps_local, target_delta, n))
    guarantee = (f"local epsilon {eps_local:.4g} given; central epsilon from "
                 "the shuffle bound (Balle et al. 2019, Theorem 5.3).")
  eps_fragment = eps_local * (1.0 - word_budget)
  eps_word = eps_local * word_budget if word_budget > 0 else None

  rng = np.random.default_rng(seed)
  if hash_seed is None:
    used_hash_seed = int(rng.integers(0, 2**63 - 1))
  else:
    used_hash_seed = validation.check_int("hash_seed", hash_seed, 0)
  puzzle_salt, fragment_seed, word_seed = _salts(used_hash_seed)
  frag_cms = cms_lib.CountMeanSketch.create(
      eps_fragment, k=k, m=m, key_bytes=_KEY_BYTES, seed=fragment_seed)
  word_cms = (cms_lib.CountMeanSketch.create(
      eps_word, k=k, m=m, key_bytes=8, seed=word_seed)
              if eps_word is not None else None)
  params = SFPParams(
      epsilon=central, delta=float(target_delta), epsilon_local=eps_local,
      threshold=threshold, k=frag_cms.k, m=frag_cms.m, n=n, length=length,
      num_buckets=num_buckets, fragment_alphabet=fragment_alphabet,
      word_budget=word_budget, epsilon_fragment=eps_fragment,
      epsilon_word=eps_word, simulation=simulation, hash_seed=used_hash_seed,
      check_puzzle_hash=bool(check_puzzle_hash), guarantee=guarantee)

  # ---- clients ----
  start = time.perf_counter()
  padded = pad_words(pop.vocabulary, length)
  buckets = puzzle_buckets(padded, num_buckets, puzzle_salt)
  keys = fragment_keys(padded, buckets)
  if pop.is_single_word:
    words = pop.user_word.astype(np.intp)
  else:
    users = np.arange(n)
    words = sampling.words_of(pop, users,
                              sampling.draw_word_ranks(rng, pop, users))
  num_positions = length // 2
  positions = rng.integers(0, num_positions, size=n)
  sketches = []
  for l in range(num_positions):
    chosen = words[positions == l]
    sketches.append(frag_cms.collect(keys[chosen, l], rng,
                                     simulation=simulation,
                                     chunk_size=chunk_size))
  word_sketch = None
  if word_cms is not None:
    word_keys = cms_lib.digest_keys(list(padded))
    word_sketch = word_cms.collect(word_keys[words], rng,
                                   simulation=simulation,
                                   chunk_size=chunk_size)
  client_seconds = time.perf_counter() - start

  # ---- server ----
  start = time.perf_counter()
  omega = fragment_alphabet + PAD
  omega_points = np.array([ord(c) for c in omega], dtype=np.uint32)
  first, second = np.meshgrid(omega_points, omega_points, indexing="ij")
  pair_bytes = np.concatenate([_code_point_bytes(first.reshape(-1)),
                               _code_point_bytes(second.reshape(-1))], axis=1)
  pair_part = frag_cms.hashes.partial(range(1, _KEY_BYTES), pair_bytes)
  bucket_part = frag_cms.hashes.partial(
      [0], np.arange(num_buckets, dtype=np.uint8)[:, None])
  sums = np.stack([s.sums for s in sketches])
  hashed = _hashed_sums(sums, bucket_part, pair_part, num_threads)
  counts_l = [s.num_reports for s in sketches]
  estimates = [frag_cms.debias(hashed[l], counts_l[l])
               for l in range(num_positions)]
  num_pairs = len(omega)**2
  pair_text = [a + b for a in omega for b in omega]
  tops = []
  per_bucket: dict[int, list[list[tuple[str, float]]]] = {}
  for l in range(num_positions):
    chosen = _top_tuples(estimates[l], threshold)
    scale = n / max(counts_l[l], 1)
    entries = []
    for flat in chosen:
      bucket, pair = divmod(int(flat), num_pairs)
      est = float(estimates[l][bucket, pair])
      entries.append((bucket, pair_text[pair], est))
      per_bucket.setdefault(bucket, [[] for _ in range(num_positions)])
      per_bucket[bucket][l].append((pair_text[pair], est * scale))
    tops.append(tuple(entries))

  sizes = {w: math.prod(len(q) for q in lists)
           for w, lists in per_bucket.items()}
  num_stitched = sum(sizes.values())
  if num_stitched > max_candidates:
    worst = max(sizes, key=sizes.get)
    raise ValueError(
        f"stitching would form {num_stitched} strings (bucket {worst} alone "
        f"{sizes[worst]}), more than max_candidates={max_candidates}; lower "
        f"the threshold T={threshold} or raise max_candidates")
  found: dict[str, float] = {}
  for bucket in sorted(per_bucket):
    lists = per_bucket[bucket]
    if not sizes[bucket]:
      continue
    for combo in itertools.product(*lists):
      text = "".join(frag for frag, _ in combo)
      word = text.rstrip(PAD)
      if not word or PAD in word:
        continue  # only padding, or a character after a pad
      if check_puzzle_hash and puzzle_buckets(
          np.array([text]), num_buckets, puzzle_salt)[0] != bucket:
        continue
      count = min(est for _, est in combo)
      if count > found.get(word, -math.inf):
        found[word] = count
  if word_sketch is not None and found:
    names = sorted(found)
    padded_found = [(w + PAD * length)[:length] for w in names]
    word_est = word_cms.estimate(word_sketch,
                                 cms_lib.digest_keys(padded_found))
    found = {w: float(c) for w, c in zip(names, word_est)}
  heavy = ranking.by_count(found)
  server_seconds = time.perf_counter() - start
  return SFPResult(
      heavy_hitters=heavy, params=params, seed=seed,
      seconds=client_seconds + server_seconds, client_seconds=client_seconds,
      server_seconds=server_seconds, fragment_tops=tuple(tops),
      reports_per_position=tuple(counts_l), num_stitched=num_stitched)
