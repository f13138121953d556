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

Central privacy. :func:`sfp_discover` takes an :class:`SFPTarget`: the
central ``(epsilon, delta)`` TrieHH is run at (or a local epsilon) and the
parameters above, checked when it is built. SFP gets the local epsilon of
:func:`triehh.baselines.amplification.sfp_local_epsilon` (privacy
amplification by shuffling of the ``n`` one-message reports). An infinite
epsilon (reports without noise) needs ``allow_no_guarantee=True``, as in
:func:`triehh.discover`. The result is a :class:`triehh.core.release.
Release`: its ``guarantee`` is the central one of the shuffled reports, for
neighbours that replace one user's word (n is fixed: the shuffle bound
depends on it), with the local epsilon said in its ``covers``.

Several words per user. A user reports one word, drawn with probability
equal to its local frequency ``f_i(w)`` (seeded), as a TrieHH participant
votes with one word.

Randomness. One ``numpy.random.Generator(seed)`` draws, in order: the hash
seed (unless given), the word of each several-word user, every user's
position, then per position the CMS rows and noise, then the word sketch's.
The same seed gives the same result, whatever the number of threads.

Speed. Clients and aggregation are array operations over all users (see
:meth:`CountMeanSketch.collect` for the two simulations). With the
``"sketch"`` simulation, :mod:`triehh.baselines.sfp_clients` draws what
``collect`` draws, faster: a key byte every word shares is hashed once per
row, and the noise's binomial draws by inversion are looked up in tables of
the generator's own steps. The server's decode gathers whole rows of
partial hashes and adds them in 16-bit integers, on ``num_threads``
threads (:mod:`triehh.baselines.sfp_decode`). Neither changes a result.
:attr:`SFPResult.phase_seconds` times the encoding, the aggregation and the
decode.

Steps and modules. This module holds the public names (the defaults,
:class:`SFPTarget`, :class:`SFPParams`, :class:`SFPResult`, :func:`check`),
the option checks and :func:`sfp_discover`, which runs, in order:
:func:`triehh.baselines.sfp_privacy.calibrate` (central to local epsilon),
:func:`triehh.baselines.sfp_clients.client_reports` (words, positions and
the per-position sketches, over the strings and fragment keys of
:mod:`triehh.baselines.sfp_encoding`), then in
:mod:`triehh.baselines.sfp_decode` ``fragment_estimates`` (``f~_l`` of
every candidate tuple), ``top_fragments`` (the decode: ``Q_l``) and
``stitch`` (the Cartesian products), and ``word_counts`` when a word sketch
was sent. The checked options they share are
:class:`triehh.baselines.sfp_options.Options`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import statistics
import string
import time

import numpy as np

from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import moved
from triehh.baselines import sfp_clients
from triehh.baselines import sfp_decode
from triehh.baselines import sfp_encoding
from triehh.baselines import sfp_options
from triehh.baselines import sfp_privacy
from triehh.core import population as population_lib
from triehh.core import ranking
from triehh.core import release
from triehh.core import validation
from triehh.theory import coverage
from triehh.theory import limits
from triehh.theory import mechanism as mechanism_lib
from triehh.theory.adjacency import Adjacency

DEFAULT_LENGTH = 10
DEFAULT_NUM_BUCKETS = 256
DEFAULT_TOP_T = 20
DEFAULT_FRAGMENT_ALPHABET = string.ascii_lowercase
DEFAULT_STITCHING = "drop"
DEFAULT_MAX_CANDIDATES = 2_000_000
# The guarantee's parts (release_guarantee): the shuffle bound covers
# neighbours that replace one user's word (n is fixed); a user whose word is
# the empty one still sends a report.
ADJACENCIES = (Adjacency.REPLACE_ONE, Adjacency.REPLACE_SPECIAL)
ACCOUNTING = ("amplification by shuffling of one-message local reports "
              "(Balle et al. 2019, Theorem 5.3)")
NO_GUARANTEE = "none: the reports are sent without noise"
PUBLIC = ("the hash functions (hash_seed), k, m, T, length, num_buckets, "
          "the fragment alphabet, the word budget and n")
TRUST = ("no one with a raw word: each report is randomized on the device; "
         "a shuffler hides who sent which report (the central epsilon "
         "rests on it, the local one does not)")


@dataclasses.dataclass(frozen=True)
class SFPTarget:
  """An SFP run's privacy and parameters, checked when built.

  Everything that changes the law of the output is here (the run's seeds,
  simulation and threads are :func:`sfp_discover`'s keywords). Each field is
  checked once, here: a bad value raises naming it, and nothing below
  checks it again; what depends on the users (their number, a ``"data"``
  fragment alphabet) is checked when the run starts.

  Attributes:
    epsilon: the central epsilon the shuffled reports must meet; SFP's
      local epsilon follows from it (:func:`triehh.sfp_local_epsilon`).
    delta: the central delta; None: ``1/n^2`` (n read off the data).
    epsilon_local: run at this local epsilon instead of ``epsilon`` (give
      one of them); the central epsilon reported is then the shuffle
      bound's at ``delta``.
    top_t: T, the tuples kept per position (the paper: 20 and 80).
    k, m: CMS hash functions and width (``m`` a power of two).
    length: pad or truncate strings to this even number of characters.
    num_buckets: range of the puzzle hash, at most 256.
    fragment_alphabet: Omega (None: the 26 lowercase letters; ``"data"``:
      every character of the population's alphabet, which must have been
      given; ``"paper"``: the authors' ``a-z . # / '``); ``$`` is always
      added. Users whose word has other characters still report, but their
      word cannot be found: ``params.num_outside_alphabet`` counts them.
    word_budget: share of the local epsilon for a whole-word sketch used to
      count the discovered words, in ``[0, 1)``; 0 (the paper's setting)
      sends no word report.
    stitching: ``"drop"`` drops stitched strings with a character after a
      pad; ``"paper"`` keeps their part before the first pad, as the paper
      authors' code does.
    check_puzzle_hash: keep only stitched strings whose puzzle hash is
      their bucket (not in the paper).
    max_candidates: refuse to stitch more strings than this (a too large
      T).
    allow_no_guarantee: accept ``epsilon`` or ``epsilon_local`` = ``inf``
      (reports without noise, no privacy guarantee).
    allow_delta_above_1_over_n: run a delta above ``1/n``, which protects
      nobody, instead of refusing it; the guarantee then says so.
  """

  epsilon: float | None = None
  delta: float | None = None
  _: dataclasses.KW_ONLY
  epsilon_local: float | None = None
  top_t: int = DEFAULT_TOP_T
  k: int = cms_lib.DEFAULT_K
  m: int = cms_lib.DEFAULT_M
  length: int = DEFAULT_LENGTH
  num_buckets: int = DEFAULT_NUM_BUCKETS
  fragment_alphabet: str | None = None
  word_budget: float = 0.0
  stitching: str = DEFAULT_STITCHING
  check_puzzle_hash: bool = False
  max_candidates: int = DEFAULT_MAX_CANDIDATES
  allow_no_guarantee: bool = False
  allow_delta_above_1_over_n: bool = False

  def __post_init__(self):
    put = functools.partial(object.__setattr__, self)
    limits.check_opt_in(self.allow_delta_above_1_over_n)
    allow = sfp_options.check_switch("allow_no_guarantee",
                                     self.allow_no_guarantee)
    put("allow_no_guarantee", allow)
    if self.epsilon_local is None:
      if self.epsilon is None:
        raise ValueError("give the central epsilon (and optionally delta), "
                         "or epsilon_local")
      put("epsilon", sfp_privacy.check_epsilon("epsilon", self.epsilon,
                                               allow))
    else:
      if self.epsilon is not None:
        raise ValueError("give either the central epsilon or "
                         "epsilon_local, not both")
      put("epsilon_local", sfp_privacy.check_epsilon(
          "epsilon_local", self.epsilon_local, allow))
    if self.delta is not None:
      put("delta", limits.check_delta("delta", self.delta))
    put("top_t", validation.check_int("top_t (T)", self.top_t))
    put("k", validation.check_int("k (number of hash functions)", self.k, 1))
    put("m", cms_lib.check_width(self.m))
    length = validation.check_int("length", self.length, 2)
    if length % 2:
      raise ValueError(f"length must be even (2-character fragments), got "
                       f"{length}")
    put("length", length)
    put("num_buckets", validation.check_int("num_buckets", self.num_buckets,
                                            1, 256))
    if self.fragment_alphabet not in (
        None, sfp_options.FRAGMENT_ALPHABET_FROM_DATA,
        sfp_options.FRAGMENT_ALPHABET_PAPER):
      _check_alphabet(self.fragment_alphabet)
    word_budget = validation.check_real("word_budget", self.word_budget)
    if not 0.0 <= word_budget < 1.0:
      raise ValueError(f"word_budget must be in [0, 1), got "
                       f"{word_budget!r}")
    put("word_budget", float(word_budget))
    if self.stitching not in sfp_options.STITCHINGS:
      raise ValueError("stitching must be one of "
                       f"{', '.join(sfp_options.STITCHINGS)}, "
                       f"got {self.stitching!r}")
    put("check_puzzle_hash", sfp_options.check_switch(
        "check_puzzle_hash", self.check_puzzle_hash))
    put("max_candidates", validation.check_int("max_candidates",
                                               self.max_candidates))

  @property
  def n_source(self) -> str:
    """Where the n the run's parameters come from: |D| when the local
    epsilon or delta is derived from it, else none."""
    return coverage.n_source_of(
        False, uses_n=self.epsilon_local is None or self.delta is None)


# The keywords sfp_discover took before its target was typed.
MOVED = dict.fromkeys(
    ("epsilon", "delta", "epsilon_local", "top_t", "k", "m", "length",
     "num_buckets", "fragment_alphabet", "word_budget", "stitching",
     "check_puzzle_hash", "max_candidates", "allow_no_guarantee"),
    "a field of triehh.SFPTarget")
EXAMPLE = "sfp_discover(users, triehh.SFPTarget(epsilon=4.0))"


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
    stitching: how stitched strings become words (``sfp_options.STITCHINGS``).
    n_source: where the n the local epsilon (or delta) was derived from
      comes from: ``"data"`` (|D|) or ``"unused"`` (both given).
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
  n_source: str = coverage.N_FROM_DATA

  @property
  def T(self) -> int:  # pylint: disable=invalid-name
    """The paper's name for :attr:`top_t`."""
    return self.top_t

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


def release_guarantee(params: SFPParams) -> mechanism_lib.Guarantee:
  """The :class:`~triehh.theory.mechanism.Guarantee` of a run with
  ``params``: the central ``(epsilon, delta)`` of the shuffled reports,
  both directions, for neighbours that replace one user's word
  (:data:`ADJACENCIES`), with the local epsilon in its ``covers``; none for
  reports without noise."""
  if math.isinf(params.epsilon):
    return mechanism_lib.Guarantee(
        epsilon=math.inf, delta=1.0, adjacencies=(), two_sided=False,
        accounting=NO_GUARANTEE, n_source=params.n_source,
        covers="nothing: epsilon_local = inf sends every report as it is",
        public=PUBLIC, trust=TRUST)
  n_note = (". n = |D| is read off the data (the shuffle bound depends on "
            "it): only neighbours of the same size are covered"
            if params.n_source == coverage.N_FROM_DATA else
            ". n = |D| enters the bound only, as the number of reports "
            "shuffled: neighbours of the same size")
  covers = (
      "the released words, their estimated counts and the kept fragment "
      "tuples (all computed from the shuffled reports)"
      + coverage.BOTH_DIRECTIONS.format("; ".join(
          f"{a.value} ({a.meaning})" for a in ADJACENCIES))
      + n_note + f". Each user's report is also {params.epsilon_local:.6g}"
      "-LDP on its own (local epsilon), whether or not the shuffler is "
      "trusted")
  return mechanism_lib.Guarantee(
      epsilon=params.epsilon, delta=params.delta, adjacencies=ADJACENCIES,
      two_sided=True, accounting=ACCOUNTING, n_source=params.n_source,
      covers=covers, public=PUBLIC, trust=TRUST,
      caveat=limits.delta_above_1_over_n(params.delta,
                                         getattr(params, "n", None)))


@dataclasses.dataclass
class SFPResult:
  """The outcome of one SFP run (a :class:`triehh.core.release.Release`).

  Attributes:
    heavy_hitters: discovered word -> estimated count, largest first (ties
      by word).
    params: the :class:`SFPParams`.
    seed: the seed of the run (None: fresh entropy, recorded nowhere).
    seconds: wall time of clients plus server (population building
      excluded); ``client_seconds`` + ``server_seconds``.
    fragment_tops: per position, the kept tuples ``(bucket, fragment,
      estimate)``, largest estimate first.
    reports_per_position: ``n_l``, users that chose each position.
    num_stitched: strings formed by the Cartesian products (before dropping
      malformed ones).
    phase_seconds: wall time per phase: ``encode`` (the users' words,
      positions, rows and hashed cells) and ``aggregate`` (the sketches'
      cell counts and noise) split ``client_seconds`` (bar bookkeeping);
      ``decode`` is ``server_seconds``.
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
  phase_seconds: dict[str, float] = dataclasses.field(default_factory=dict)

  mechanism = "sfp"  # unannotated: not a field

  @property
  def words(self) -> tuple[str, ...]:
    """The discovered words, largest estimated count first."""
    return tuple(self.heavy_hitters)

  @property
  def guarantee(self) -> mechanism_lib.Guarantee:
    """What covers the output (:func:`release_guarantee`)."""
    return dataclasses.replace(release_guarantee(self.params),
                               randomness=release.randomness(self.seed))

  @property
  def notes(self) -> tuple[str, ...]:
    """One-line statements its public values explain: no word found,
    :func:`nothing_found`; empty otherwise."""
    return () if self.heavy_hitters else (
        nothing_found(self.params, self.reports_per_position),)

  @property
  def per_round(self) -> tuple[release.RoundStats, ...]:
    """One round: the strings stitched, and the words kept of them."""
    return (release.RoundStats(candidates=self.num_stitched,
                               kept=len(self.heavy_hitters)),)

  @property
  def unprotected(self) -> dict[str, object]:
    """What the run read off the raw words, which no report carries
    (simulation studies only): the users whose word has characters outside
    the fragment alphabet, and those characters."""
    return {"num_outside_alphabet": self.params.num_outside_alphabet,
            "outside_characters": self.params.outside_characters}


def decode_cut(params: SFPParams) -> tuple[int, float]:
  """``(tuples, z)``: the tuples ``(w, a)`` the decode ranks at a position
  (``B |Omega|^2``, the padding in ``Omega``) and about how many standard
  deviations of the fragment sketch's noise the ``T``-th largest of their
  estimates reaches when none is held, by the normal tail ``P(Z > z) =
  T / tuples`` (the estimates of absent tuples: about independent, each a
  sum of many reports); 0 when ``T`` keeps half of them or more."""
  tuples = params.num_buckets * (len(params.fragment_alphabet) + 1)**2
  share = min(params.top_t / tuples, 0.5)
  return tuples, -statistics.NormalDist().inv_cdf(share)


def holders_needed(params: SFPParams, reports_per_position
                   ) -> tuple[float, float]:
  """``(needed, std)``: about how many of the n users must hold a word for
  its fragment's expected estimate to reach the decode's cut, ``z`` noise
  standard deviations (:func:`decode_cut`), at every position, and that
  deviation where it is largest against the position's share of users.
  At a position of ``n_l`` reports the noise's variance is the count-mean
  sketch's (:meth:`~triehh.baselines.count_mean_sketch.CountMeanSketch.
  variance` of an absent item), and a word's holders report there about
  ``n_l / n`` of the time: ``needed = z max_l std_l n / n_l``. A word with
  fewer holders is kept only if the noise lifts its fragment past the cut
  at every position."""
  m = params.m
  c2 = cms_lib.c_epsilon(params.epsilon_fragment)**2
  needed, worst = 0.0, 0.0
  for n_l in reports_per_position:
    std = math.sqrt((m / (m - 1.0))**2 * n_l * (c2 - 1.0) / 4.0
                    + n_l / (m - 1.0))
    here = std * params.n / n_l if n_l else math.inf
    if here >= needed:
      needed, worst = here, std
  return decode_cut(params)[1] * needed, worst


def nothing_found(params: SFPParams, reports_per_position) -> str:
  """Why a run of ``params`` found no word, in one line: the decode's cut
  in standard deviations of the noise (:func:`decode_cut`) and the holders
  a word needs to reach it (:func:`holders_needed`) against the n users."""
  tuples, z = decode_cut(params)
  needed, std = holders_needed(params, reports_per_position)
  line = (f"no word found: the decode keeps the T={params.top_t:,} largest "
          f"of {tuples:,} fragment estimates at each of the "
          f"{len(reports_per_position)} positions, and noise alone "
          f"(standard deviation about {std:,.0f} at "
          f"{min(reports_per_position, default=0):,} to "
          f"{max(reports_per_position, default=0):,} reports a position, "
          f"epsilon_fragment={params.epsilon_fragment:.3g}, m={params.m}) "
          f"puts the T-th about {z:.1f} standard deviations up, at about "
          f"{z * std:,.0f}; a word's fragments reach that at every position "
          f"in expectation with about {needed:,.0f} holders among the "
          f"n={params.n:,} users")
  if needed > params.n:
    return (line + ": more than there are users, so no word can be "
            "expected; ask for a larger epsilon, or run on more users")
  return line + ": no word's fragments were kept at every position in this run"


# ---- option checks ----------------------------------------------------------


# Decode threads beyond this many per CPU add nothing but their stacks.
MAX_THREADS_PER_CPU = 8


def _check_alphabet(alphabet: str) -> str:
  if not isinstance(alphabet, str) or not alphabet:
    raise ValueError(f"fragment_alphabet must be a non-empty string, got "
                     f"{alphabet!r}")
  if len(set(alphabet)) != len(alphabet):
    raise ValueError(f"fragment_alphabet has repeated characters: "
                     f"{alphabet!r}")
  if sfp_encoding.PAD in alphabet:
    raise ValueError(f"fragment_alphabet must not contain the padding symbol "
                     f"{sfp_encoding.PAD!r} (it is always added)")
  return alphabet


def _check_options(pop: population_lib.Population, target: SFPTarget, *,
                   simulation: str, chunk_size: int,
                   num_threads: int | None) -> sfp_options.Options:
  """The target's non-privacy options against the population, with the
  run's simulation and threads."""
  length = target.length
  if pop.num_users < length // 2:
    raise ValueError(
        f"SFP needs at least {length // 2} users, one report for each of "
        f"the {length // 2} fragment positions (length={length}), got "
        f"n={pop.num_users}")
  fragment_alphabet = target.fragment_alphabet
  if fragment_alphabet is None:
    fragment_alphabet = DEFAULT_FRAGMENT_ALPHABET
  elif fragment_alphabet == sfp_options.FRAGMENT_ALPHABET_FROM_DATA:
    pop.check_public_alphabet(
        'fragment_alphabet="data"', "Give fragment_alphabet itself, or "
        "build the population with an alphabet (alphabet=...)")
    fragment_alphabet = "".join(c for c in pop.alphabet.characters
                                if c != sfp_encoding.PAD)
  elif fragment_alphabet == sfp_options.FRAGMENT_ALPHABET_PAPER:
    fragment_alphabet = sfp_options.PAPER_FRAGMENT_ALPHABET
  if simulation not in cms_lib.SIMULATIONS:
    raise ValueError(f"simulation must be one of {cms_lib.SIMULATIONS}, got "
                     f"{simulation!r}")
  if num_threads is None:
    num_threads = min(2, os.cpu_count() or 1)
  options = sfp_options.Options(
      top_t=target.top_t, length=length, num_buckets=target.num_buckets,
      fragment_alphabet=_check_alphabet(fragment_alphabet),
      word_budget=target.word_budget, simulation=simulation,
      chunk_size=chunk_size,
      num_threads=validation.check_int("num_threads", num_threads, 1,
                                       MAX_THREADS_PER_CPU
                                       * (os.cpu_count() or 1)),
      check_puzzle_hash=target.check_puzzle_hash,
      max_candidates=target.max_candidates, stitching=target.stitching)
  sfp_decode.check_decode_fits(options)
  return options


def _calibrate(n: int, target: SFPTarget) -> sfp_privacy.Privacy:
  """Step 1 on the target's privacy (:func:`sfp_privacy.calibrate`); a
  delta above ``1/n`` refused unless the target opts in."""
  limits.check_delta_for_n(target.delta, n,
                           allowed=target.allow_delta_above_1_over_n)
  return sfp_privacy.calibrate(n, target.epsilon, target.delta,
                               target.epsilon_local, target.word_budget,
                               target.allow_no_guarantee)


def check(population: population_lib.Population, target: SFPTarget, *,
          simulation: str = "sketch", num_threads: int | None = None
          ) -> None:
  """Checks an :func:`sfp_discover` run of ``target`` on ``population``
  without running it.

  The checks are the ones the run makes before any report is drawn: the
  target against the population (enough users for the fragment positions,
  a ``"data"`` fragment alphabet public, the decode in memory), the run's
  options, the privacy calibration (central to local epsilon), and the
  sketches of every fragment position (``length / 2``) in memory.

  Raises:
    ValueError, TypeError: what :func:`sfp_discover` raises for them.
    memory.InsufficientMemoryError: when the sketches or the decode would
      not fit.
  """
  moved.check_target("check", target, SFPTarget,
                     "check(population, triehh.SFPTarget(epsilon=4.0))")
  _check_options(population, target, simulation=simulation,
                 chunk_size=cms_lib.DEFAULT_CHUNK_SIZE,
                 num_threads=num_threads)
  _calibrate(population.num_users, target)
  sfp_decode.check_sketches_fit(target.k, target.m, target.length)


# ---- the run ----------------------------------------------------------------


def _as_population(user_words, alphabet, unknown
                   ) -> population_lib.Population:
  """``user_words`` as a Population (as :func:`triehh.discover` takes it)."""
  options = {}
  if alphabet is not None:
    options["alphabet"] = alphabet
  if unknown is not None:
    options["unknown"] = unknown
  max_length = (user_words.max_length
                if isinstance(user_words, population_lib.Population)
                else population_lib.DEFAULT_MAX_LENGTH)
  return population_lib.as_population(user_words, max_length, **options)


@dataclasses.dataclass(frozen=True)
class _Hashing:
  """The public hashing of a run: puzzle salt and the two sketches."""

  hash_seed: int
  puzzle_salt: bytes
  frag_cms: cms_lib.CountMeanSketch
  word_cms: cms_lib.CountMeanSketch | None


def _hashing(privacy: sfp_privacy.Privacy, hash_seed: int | None, k: int,
             m: int, rng: np.random.Generator) -> _Hashing:
  """The hash seed (drawn first from ``rng`` unless given), the puzzle salt
  and the fragment sketch (and the word sketch, when it has a budget)."""
  if hash_seed is None:
    used_hash_seed = int(rng.integers(0, 2**63 - 1))
  else:
    used_hash_seed = validation.check_int("hash_seed", hash_seed, 0)
  puzzle_salt, fragment_seed, word_seed = sfp_encoding.salts(used_hash_seed)
  frag_cms = cms_lib.CountMeanSketch.create(
      privacy.epsilon_fragment, k=k, m=m, key_bytes=sfp_encoding.KEY_BYTES,
      seed=fragment_seed)
  word_cms = (cms_lib.CountMeanSketch.create(
      privacy.epsilon_word, k=k, m=m, key_bytes=8, seed=word_seed)
              if privacy.epsilon_word is not None else None)
  return _Hashing(used_hash_seed, puzzle_salt, frag_cms, word_cms)


def _server(reports: sfp_clients.ClientReports, hashing: _Hashing,
            opts: sfp_options.Options
            ) -> tuple[dict[str, float], sfp_decode.FragmentTops, list[int],
                       int]:
  """Steps 3 to 5 (and the word counts): the heavy hitters, largest first;
  the kept tuples per position; the reports per position; the number of
  stitched strings."""
  estimates = sfp_decode.fragment_estimates(hashing.frag_cms,
                                            reports.sketches, opts)
  counts = [s.num_reports for s in reports.sketches]
  tops, per_bucket = sfp_decode.top_fragments(estimates, counts, opts)
  found, num_stitched = sfp_decode.stitch(per_bucket, opts,
                                          hashing.puzzle_salt)
  if reports.word_sketch is not None and found:
    found = sfp_decode.word_counts(hashing.word_cms, reports.word_sketch,
                                   found, opts.length)
  return ranking.by_count(found), tops, counts, num_stitched


def _params(privacy: sfp_privacy.Privacy, opts: sfp_options.Options,
            hashing: _Hashing, n: int, reports: sfp_clients.ClientReports,
            n_source: str) -> SFPParams:
  return SFPParams(
      epsilon=privacy.epsilon, delta=privacy.delta,
      epsilon_local=privacy.epsilon_local, top_t=opts.top_t,
      k=hashing.frag_cms.k, m=hashing.frag_cms.m, n=n, length=opts.length,
      num_buckets=opts.num_buckets, fragment_alphabet=opts.fragment_alphabet,
      word_budget=opts.word_budget, epsilon_fragment=privacy.epsilon_fragment,
      epsilon_word=privacy.epsilon_word, simulation=opts.simulation,
      hash_seed=hashing.hash_seed, check_puzzle_hash=opts.check_puzzle_hash,
      guarantee=privacy.guarantee,
      num_outside_alphabet=reports.num_outside_alphabet,
      outside_characters=reports.outside_characters,
      stitching=opts.stitching, n_source=n_source)


# Long function: its docstring documents its ten arguments; the body is
# the steps' calls.
def sfp_discover(user_words, target: SFPTarget | None = None, *,
                 seed: int | None = None, hash_seed: int | None = None,
                 simulation: str = "sketch",
                 chunk_size: int = cms_lib.DEFAULT_CHUNK_SIZE,
                 num_threads: int | None = None, alphabet=None,
                 unknown: str | None = None,
                 **moved_keywords) -> SFPResult:
  """Discovers heavy hitters with SFP at a central ``(epsilon, delta)``.

  Args:
    user_words: one entry per user, a ``str`` or a mapping word -> count, or
      a :class:`triehh.Population` (as for :func:`triehh.discover`).
    target: an :class:`SFPTarget`: the central privacy the shuffled reports
      must meet (or a local epsilon) and SFP's parameters (T, the sketch,
      the strings, the fragment alphabet, the word budget, the stitching).
    seed: None (the default): fresh entropy, kept nowhere; a whole number
      >= 0 seeds the ``numpy.random.Generator`` for a simulation (same
      seed, same result; whoever knows it can undo the noise).
    hash_seed: seed of the public hash functions; by default drawn from
      ``seed``.
    simulation: ``"sketch"`` (fast, exact law of the server's sums) or
      ``"reports"`` (every report materialised): the same law, other draws.
    chunk_size: users per chunk with ``simulation="reports"``.
    num_threads: decode threads (default: up to 2 cores); the result does
      not depend on them.
    alphabet, unknown: encoding options when ``user_words`` is not a
      Population (see :mod:`triehh.core.population`).
    **moved_keywords: none; a keyword the untyped call took (``epsilon=``,
      ``top_t=``, ...) is refused with a TypeError naming its
      :class:`SFPTarget` field.

  Returns:
    An :class:`SFPResult` (a :class:`triehh.core.release.Release`).

  Raises:
    TypeError: for a missing target or a moved keyword.
    ValueError: on a bad option; with fewer users than fragment positions,
      or when a position receives no report; when no word can be rebuilt
      from the fragment alphabet.
    memory.InsufficientMemoryError: before any report is drawn, when the
      ``k x m`` sketches of the ``length / 2`` fragment positions would not
      fit in memory.
  """
  moved.refuse("sfp_discover", moved_keywords, MOVED, EXAMPLE)
  moved.check_target("sfp_discover", target, SFPTarget, EXAMPLE)
  pop = _as_population(user_words, alphabet, unknown)
  opts = _check_options(pop, target, simulation=simulation,
                        chunk_size=chunk_size, num_threads=num_threads)
  privacy = _calibrate(pop.num_users, target)
  validation.check_seed(seed)
  sfp_decode.check_sketches_fit(target.k, target.m, opts.length)
  rng = np.random.default_rng(seed)
  hashing = _hashing(privacy, hash_seed, target.k, target.m, rng)

  start = time.perf_counter()
  reports = sfp_clients.client_reports(pop, opts, hashing.frag_cms,
                                       hashing.word_cms, hashing.puzzle_salt,
                                       rng)
  client_seconds = time.perf_counter() - start

  start = time.perf_counter()
  heavy, tops, counts, num_stitched = _server(reports, hashing, opts)
  server_seconds = time.perf_counter() - start

  return SFPResult(
      heavy_hitters=heavy,
      params=_params(privacy, opts, hashing, pop.num_users, reports,
                     target.n_source),
      seed=seed, seconds=client_seconds + server_seconds,
      client_seconds=client_seconds, server_seconds=server_seconds,
      fragment_tops=tops, reports_per_position=tuple(counts),
      num_stitched=num_stitched,
      phase_seconds={"encode": reports.encode_seconds,
                     "aggregate": reports.aggregate_seconds,
                     "decode": server_seconds})
