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
  dropped; the rest, with the padding removed, are the heavy hitters
  (``stitching="paper"``, the authors' code, keeps instead the part before
  the first ``$`` of every string; ``fragment_alphabet="paper"`` is their
  ``a-z . # / '``).
  ``T`` (``top_t``) trades recall for precision; the paper used 20 and
  80. Words with characters outside ``Omega`` cannot be rebuilt: the run
  counts their users (``SFPParams.num_outside_alphabet``) and refuses when
  no word can be.

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
amplification by shuffling of the ``n`` one-message reports). An infinite
epsilon (reports without noise) needs ``allow_no_guarantee=True``, as in
:func:`triehh.discover`.

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

Steps. :func:`sfp_discover` runs, in order: ``_privacy`` (central to local
epsilon), ``_client_reports`` (words, positions and the per-position
sketches), ``_fragment_estimates`` (``f~_l`` of every candidate tuple),
``_top_fragments`` (the decode: ``Q_l``) and ``_stitch`` (the Cartesian
products), then ``_word_counts`` when a word sketch was sent.
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

from triehh.baselines import amplification
from triehh.baselines import count_mean_sketch as cms_lib
from triehh.core import population as population_lib
from triehh.core import ranking
from triehh.core import validation
from triehh.engines import sampling

PAD = "$"
DEFAULT_LENGTH = 10
DEFAULT_NUM_BUCKETS = 256
DEFAULT_TOP_T = 20
DEFAULT_FRAGMENT_ALPHABET = string.ascii_lowercase
FRAGMENT_ALPHABET_FROM_DATA = "data"
# The paper authors' SFP: fragments over a-z . # / ' (plus the padding).
PAPER_FRAGMENT_ALPHABET = string.ascii_lowercase + ".#/'"
FRAGMENT_ALPHABET_PAPER = "paper"
# Stitching: "drop" strings with a character after a pad (a string no user
# typed); "paper" keeps the part before the first pad, as the authors' code.
STITCHINGS = ("drop", "paper")
DEFAULT_STITCHING = "drop"
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
    top_t: T, tuples kept per position.
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
    num_outside_alphabet: users whose reported word (its first ``length``
      characters) has a character outside ``fragment_alphabet``: they
      report, but their word cannot be rebuilt.
    outside_characters: those characters, sorted.
    stitching: how stitched strings become words (``STITCHINGS``).
  """

  epsilon: float
  delta: float
  epsilon_local: float
  top_t: int
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
  num_outside_alphabet: int = 0
  outside_characters: str = ""
  stitching: str = DEFAULT_STITCHING

  @property
  def T(self) -> int:  # pylint: disable=invalid-name
    """The paper's name for :attr:`top_t`."""
    return self.top_t

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


def _top_tuples(estimates: np.ndarray, top_t: int) -> np.ndarray:
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


# ---- the run, step by step ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Options:
  """The checked options of a run that are not about privacy."""

  top_t: int
  length: int
  num_buckets: int
  fragment_alphabet: str
  word_budget: float
  simulation: str
  chunk_size: int
  num_threads: int
  check_puzzle_hash: bool
  max_candidates: int
  stitching: str = DEFAULT_STITCHING

  @property
  def num_positions(self) -> int:
    return self.length // 2

  @property
  def omega(self) -> str:
    """The characters of candidate fragments, the padding symbol last."""
    return self.fragment_alphabet + PAD


@dataclasses.dataclass(frozen=True)
class _Privacy:
  """The privacy of a run: central guarantee and the local epsilons."""

  epsilon: float
  delta: float
  epsilon_local: float
  epsilon_fragment: float
  epsilon_word: float | None
  guarantee: str


@dataclasses.dataclass
class _ClientReports:
  """What the server receives: one sketch per position, and the word sketch."""

  sketches: list[cms_lib.Sketch]
  word_sketch: cms_lib.Sketch | None
  num_outside_alphabet: int
  outside_characters: str


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


def _check_options(pop: population_lib.Population, *, top_t: int,
                   length: int, num_buckets: int, fragment_alphabet,
                   word_budget: float, simulation: str, chunk_size: int,
                   num_threads: int | None, check_puzzle_hash: bool,
                   max_candidates: int,
                   stitching: str = DEFAULT_STITCHING) -> _Options:
  """Checks the non-privacy options against each other and the population."""
  top_t = validation.check_int("top_t (T)", top_t)
  length = validation.check_int("length", length, 2)
  if length % 2:
    raise ValueError(f"length must be even (2-character fragments), got "
                     f"{length}")
  if pop.num_users < length // 2:
    raise ValueError(
        f"SFP needs at least {length // 2} users, one report for each of "
        f"the {length // 2} fragment positions (length={length}), got "
        f"n={pop.num_users}")
  num_buckets = validation.check_int("num_buckets", num_buckets, 1, 256)
  max_candidates = validation.check_int("max_candidates", max_candidates)
  if fragment_alphabet is None:
    fragment_alphabet = DEFAULT_FRAGMENT_ALPHABET
  elif fragment_alphabet == FRAGMENT_ALPHABET_FROM_DATA:
    fragment_alphabet = "".join(c for c in pop.alphabet.characters
                                if c != PAD)
  elif fragment_alphabet == FRAGMENT_ALPHABET_PAPER:
    fragment_alphabet = PAPER_FRAGMENT_ALPHABET
  if stitching not in STITCHINGS:
    raise ValueError(f"stitching must be one of {', '.join(STITCHINGS)}, "
                     f"got {stitching!r}")
  if not 0.0 <= float(word_budget) < 1.0:
    raise ValueError(f"word_budget must be in [0, 1), got {word_budget!r}")
  if simulation not in cms_lib.SIMULATIONS:
    raise ValueError(f"simulation must be one of {cms_lib.SIMULATIONS}, got "
                     f"{simulation!r}")
  if num_threads is None:
    num_threads = min(2, os.cpu_count() or 1)
  return _Options(
      top_t=top_t, length=length, num_buckets=num_buckets,
      fragment_alphabet=_check_alphabet(fragment_alphabet),
      word_budget=float(word_budget), simulation=simulation,
      chunk_size=chunk_size,
      num_threads=validation.check_int("num_threads", num_threads),
      check_puzzle_hash=bool(check_puzzle_hash),
      max_candidates=max_candidates, stitching=stitching)


def _check_epsilon(name: str, value, allow_no_guarantee: bool) -> float:
  """An epsilon > 0; ``inf`` (reports without noise) only when allowed."""
  if (not isinstance(value, (bool, np.bool_))
      and isinstance(value, (int, float, np.integer, np.floating))
      and value == math.inf):
    if not allow_no_guarantee:
      raise ValueError(
          f"{name}=inf sends the reports without noise: no differential "
          "privacy guarantee. Pass allow_no_guarantee=True to run so")
    return math.inf
  return validation.check_positive(name, value)


def _privacy(n: int, epsilon: float | None, delta: float | None,
             epsilon_local: float | None, word_budget: float,
             allow_no_guarantee: bool) -> _Privacy:
  """Step 1: the local epsilon for a central ``(epsilon, delta)``, or the
  central epsilon of a given local one (amplification by shuffling), split
  between the fragment and word sketches."""
  target_delta = 1.0 / n**2 if delta is None else delta
  if epsilon_local is None:
    if epsilon is None:
      raise ValueError("give the central epsilon (and optionally delta), or "
                       "epsilon_local")
    central = _check_epsilon("epsilon", epsilon, allow_no_guarantee)
    eps_local = amplification.sfp_local_epsilon(central, target_delta, n)
    guarantee = ("central (epsilon, delta) by amplification by shuffling of "
                 f"n={n} one-message {eps_local:.4g}-LDP reports (Balle et "
                 "al. 2019, Theorem 5.3).")
  else:
    if epsilon is not None:
      raise ValueError("give either the central epsilon or epsilon_local, "
                       "not both")
    eps_local = _check_epsilon("epsilon_local", epsilon_local,
                               allow_no_guarantee)
    central = (math.inf if math.isinf(eps_local) else
               amplification.central_epsilon(eps_local, target_delta, n))
    guarantee = (f"local epsilon {eps_local:.4g} given; central epsilon from "
                 "the shuffle bound (Balle et al. 2019, Theorem 5.3).")
  if math.isinf(eps_local):
    guarantee = "no differential privacy guarantee: reports without noise."
  return _Privacy(
      epsilon=central, delta=float(target_delta), epsilon_local=eps_local,
      epsilon_fragment=eps_local * (1.0 - word_budget),
      epsilon_word=eps_local * word_budget if word_budget > 0 else None,
      guarantee=guarantee)


def check(population: population_lib.Population, *,
          epsilon: float | None = None, delta: float | None = None,
          top_t: int = DEFAULT_TOP_T, length: int = DEFAULT_LENGTH,
          num_buckets: int = DEFAULT_NUM_BUCKETS,
          fragment_alphabet: str | None = None, word_budget: float = 0.0,
          epsilon_local: float | None = None, simulation: str = "sketch",
          num_threads: int | None = None, check_puzzle_hash: bool = False,
          max_candidates: int = DEFAULT_MAX_CANDIDATES,
          allow_no_guarantee: bool = False,
          stitching: str = DEFAULT_STITCHING) -> None:
  """Checks :func:`sfp_discover`'s options on ``population`` without running.

  The options are those of :func:`sfp_discover`; the checks are the ones it
  makes before any report is drawn: the options against each other and the
  population, then the privacy calibration (central to local epsilon). The
  sketch's ``k`` and ``m`` are checked when the sketch is made.

  Raises:
    ValueError, TypeError: what :func:`sfp_discover` raises for them.
  """
  options = _check_options(
      population, top_t=top_t, length=length, num_buckets=num_buckets,
      fragment_alphabet=fragment_alphabet, word_budget=word_budget,
      simulation=simulation, chunk_size=cms_lib.DEFAULT_CHUNK_SIZE,
      num_threads=num_threads, check_puzzle_hash=check_puzzle_hash,
      max_candidates=max_candidates, stitching=stitching)
  _privacy(population.num_users, epsilon, delta, epsilon_local,
           options.word_budget, allow_no_guarantee)


def _outside_alphabet(padded: np.ndarray, omega: str
                      ) -> tuple[np.ndarray, str]:
  """Which padded words have a character outside ``omega`` (they cannot be
  rebuilt from fragments), and those characters, sorted."""
  length = padded.dtype.itemsize // 4
  points = padded.view(np.uint32).reshape(len(padded), length)
  inside = np.isin(points, np.array([ord(c) for c in omega], dtype=np.uint32))
  outside = "".join(chr(c) for c in np.unique(points[~inside]))
  return ~inside.all(axis=1), outside


def _reported_words(pop: population_lib.Population,
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


def _client_reports(pop: population_lib.Population, options: _Options,
                    frag_cms: cms_lib.CountMeanSketch,
                    word_cms: cms_lib.CountMeanSketch | None,
                    puzzle_salt: bytes,
                    rng: np.random.Generator) -> _ClientReports:
  """Step 2: every user picks a word and a position and reports the CMS of
  ``h(s) || s[l:l+2]`` (and of its word); the server sums them per position.

  Raises:
    ValueError: if no user's word can be rebuilt from the fragment
      alphabet, naming the characters outside it.
  """
  padded = pad_words(pop.vocabulary, options.length)
  bad_words, outside = _outside_alphabet(padded, options.omega)
  if bad_words.all():
    raise ValueError(
        f"every word has characters outside the fragment alphabet "
        f"{options.fragment_alphabet!r} (found {outside!r}), so SFP could "
        f"rebuild none; pass fragment_alphabet='{FRAGMENT_ALPHABET_FROM_DATA}'"
        " or one that includes them")
  keys = fragment_keys(padded, puzzle_buckets(padded, options.num_buckets,
                                              puzzle_salt))
  words = _reported_words(pop, rng)
  positions = rng.integers(0, options.num_positions, size=pop.num_users)
  sketches = [frag_cms.collect(keys[words[positions == l], l], rng,
                               simulation=options.simulation,
                               chunk_size=options.chunk_size)
              for l in range(options.num_positions)]
  word_sketch = None
  if word_cms is not None:
    word_keys = cms_lib.digest_keys(list(padded))
    word_sketch = word_cms.collect(word_keys[words], rng,
                                   simulation=options.simulation,
                                   chunk_size=options.chunk_size)
  return _ClientReports(sketches, word_sketch,
                        int(bad_words[words].sum()), outside)


def _fragment_estimates(frag_cms: cms_lib.CountMeanSketch,
                        sketches: Sequence[cms_lib.Sketch],
                        options: _Options) -> list[np.ndarray]:
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
  pair_bytes = np.concatenate([_code_point_bytes(first.reshape(-1)),
                               _code_point_bytes(second.reshape(-1))], axis=1)
  pair_part = frag_cms.hashes.partial(range(1, _KEY_BYTES), pair_bytes)
  bucket_part = frag_cms.hashes.partial(
      [0], np.arange(options.num_buckets, dtype=np.uint8)[:, None])
  hashed = _hashed_sums(np.stack([s.sums for s in sketches]), bucket_part,
                        pair_part, options.num_threads)
  return [frag_cms.debias(hashed[l], counts[l]) for l in range(len(counts))]


_BucketLists = dict[int, list[list[tuple[str, float]]]]


def _top_fragments(estimates: Sequence[np.ndarray],
                   counts: Sequence[int], options: _Options
                   ) -> tuple[tuple[tuple[tuple[int, str, float], ...], ...],
                              _BucketLists]:
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
  per_bucket: _BucketLists = {}
  for l, est_l in enumerate(estimates):
    scale = n / max(counts[l], 1)
    entries = []
    for flat in _top_tuples(est_l, options.top_t):
      bucket, pair = divmod(int(flat), len(pair_text))
      est = float(est_l[bucket, pair])
      entries.append((bucket, pair_text[pair], est))
      per_bucket.setdefault(bucket, [[] for _ in estimates])
      per_bucket[bucket][l].append((pair_text[pair], est * scale))
    tops.append(tuple(entries))
  return tuple(tops), per_bucket


def _stitch(per_bucket: _BucketLists, options: _Options,
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
        word = text.split(PAD, 1)[0]
      else:
        word = text.rstrip(PAD)
      if not word or PAD in word:
        continue  # only padding, or a character after a pad
      if options.check_puzzle_hash and puzzle_buckets(
          np.array([text]), options.num_buckets, puzzle_salt)[0] != bucket:
        continue
      count = min(est for _, est in combo)
      if count > found.get(word, -math.inf):
        found[word] = count
  return found, num_stitched


def _word_counts(word_cms: cms_lib.CountMeanSketch,
                 word_sketch: cms_lib.Sketch, words: Sequence[str],
                 length: int) -> dict[str, float]:
  """The whole-word sketch's count of every discovered word."""
  names = sorted(words)
  padded = [(w + PAD * length)[:length] for w in names]
  estimates = word_cms.estimate(word_sketch, cms_lib.digest_keys(padded))
  return {w: float(c) for w, c in zip(names, estimates)}


def sfp_discover(user_words, *, epsilon: float | None = None,
                 delta: float | None = None,
                 top_t: int = DEFAULT_TOP_T, seed: int | None = 0,
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
                 allow_no_guarantee: bool = False,
                 alphabet=None, unknown: str | None = None,
                 stitching: str = DEFAULT_STITCHING) -> SFPResult:
  """Discovers heavy hitters with SFP at a central ``(epsilon, delta)``.

  Args:
    user_words: one entry per user, a ``str`` or a mapping word -> count, or
      a :class:`triehh.Population` (as for :func:`triehh.discover`).
    epsilon, delta: the central privacy the shuffled reports must meet;
      ``delta`` defaults to ``1/n^2``. SFP's local epsilon follows from
      :func:`triehh.sfp_local_epsilon`.
    top_t: T, the tuples kept per position (the paper: 20 and 80; default
      20).
    seed: seed of the ``numpy.random.Generator`` (same seed, same result).
    k, m: CMS hash functions and width (``m`` a power of two).
    length: pad or truncate strings to this even number of characters.
    num_buckets: range of the puzzle hash, at most 256.
    fragment_alphabet: Omega (default the 26 lowercase letters; ``"data"``
      for every character of the population; ``"paper"`` for the authors'
      ``a-z . # / '``); ``$`` is always added. Users
      whose word has other characters still report, but their word cannot
      be found: ``params.num_outside_alphabet`` counts them.
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
    allow_no_guarantee: accept ``epsilon`` or ``epsilon_local`` = ``inf``
      (reports without noise, no privacy guarantee).
    alphabet, unknown: encoding options when ``user_words`` is not a
      Population (see :mod:`triehh.core.population`).
    stitching: ``"drop"`` (default) drops stitched strings with a character
      after a pad; ``"paper"`` keeps their part before the first pad, as
      the paper authors' code does.

  Returns:
    An :class:`SFPResult`.

  Raises:
    ValueError: on a bad option; with fewer users than fragment positions,
      or when a position receives no report; when no word can be rebuilt
      from the fragment alphabet.
  """
  options = {}
  if alphabet is not None:
    options["alphabet"] = alphabet
  if unknown is not None:
    options["unknown"] = unknown
  max_length = (user_words.max_length
                if isinstance(user_words, population_lib.Population)
                else population_lib.DEFAULT_MAX_LENGTH)
  pop = population_lib.as_population(user_words, max_length, **options)
  opts = _check_options(
      pop, top_t=top_t, length=length, num_buckets=num_buckets,
      fragment_alphabet=fragment_alphabet, word_budget=word_budget,
      simulation=simulation, chunk_size=chunk_size, num_threads=num_threads,
      check_puzzle_hash=check_puzzle_hash, max_candidates=max_candidates,
      stitching=stitching)
  privacy = _privacy(pop.num_users, epsilon, delta, epsilon_local,
                     opts.word_budget, allow_no_guarantee)

  rng = np.random.default_rng(seed)
  if hash_seed is None:
    used_hash_seed = int(rng.integers(0, 2**63 - 1))
  else:
    used_hash_seed = validation.check_int("hash_seed", hash_seed, 0)
  puzzle_salt, fragment_seed, word_seed = _salts(used_hash_seed)
  frag_cms = cms_lib.CountMeanSketch.create(
      privacy.epsilon_fragment, k=k, m=m, key_bytes=_KEY_BYTES,
      seed=fragment_seed)
  word_cms = (cms_lib.CountMeanSketch.create(
      privacy.epsilon_word, k=k, m=m, key_bytes=8, seed=word_seed)
              if privacy.epsilon_word is not None else None)

  start = time.perf_counter()
  reports = _client_reports(pop, opts, frag_cms, word_cms, puzzle_salt, rng)
  client_seconds = time.perf_counter() - start

  start = time.perf_counter()
  estimates = _fragment_estimates(frag_cms, reports.sketches, opts)
  counts = [s.num_reports for s in reports.sketches]
  tops, per_bucket = _top_fragments(estimates, counts, opts)
  found, num_stitched = _stitch(per_bucket, opts, puzzle_salt)
  if reports.word_sketch is not None and found:
    found = _word_counts(word_cms, reports.word_sketch, found, opts.length)
  heavy = ranking.by_count(found)
  server_seconds = time.perf_counter() - start

  params = SFPParams(
      epsilon=privacy.epsilon, delta=privacy.delta,
      epsilon_local=privacy.epsilon_local, top_t=opts.top_t, k=frag_cms.k,
      m=frag_cms.m, n=pop.num_users, length=opts.length,
      num_buckets=opts.num_buckets, fragment_alphabet=opts.fragment_alphabet,
      word_budget=opts.word_budget, epsilon_fragment=privacy.epsilon_fragment,
      epsilon_word=privacy.epsilon_word, simulation=opts.simulation,
      hash_seed=used_hash_seed, check_puzzle_hash=opts.check_puzzle_hash,
      guarantee=privacy.guarantee,
      num_outside_alphabet=reports.num_outside_alphabet,
      outside_characters=reports.outside_characters,
      stitching=opts.stitching)
  return SFPResult(
      heavy_hitters=heavy, params=params, seed=seed,
      seconds=client_seconds + server_seconds, client_seconds=client_seconds,
      server_seconds=server_seconds, fragment_tops=tops,
      reports_per_position=tuple(counts), num_stitched=num_stitched)
