"""The noisy trie, simulated fast: discrete Gaussian noise on a public
candidate set.

The mechanism and its privacy are :mod:`triehh.theory.noisy_trie`'s; this
module runs it on a :class:`~triehh.core.population.Population`. Round r
(r = 0, 1, ...) extends the frontier prefixes, all of ``p = r * k``
symbols, by k symbols at a time (:class:`Extensions`: every string of k
characters, or fewer than k followed by ``$``, within L characters).
Candidate ``f * E + e`` is frontier prefix f extended by extension e, E
extensions per prefix, ``F * E`` candidates in all.

A round, from the run's generator, in this order:

1. *Votes.* One-word populations: each candidate some word extends gets
   its users, thinned under Poisson sampling by one
   :func:`triehh.engines.sampling.poisson_cell_counts` (a binomial per
   candidate: the counts of independent participation). Several words per
   user: the round's users (all, or :func:`~triehh.engines.sampling.
   poisson_users`), each voting with one word drawn by local frequency
   (:func:`~triehh.engines.sampling.draw_word_ranks`,
   :func:`~triehh.engines.sampling.words_of`), as the other engines do.
   q = 1 draws nothing here.
2. *Noise on the candidates some word extends* (the explicit ones, with
   zero votes or not): ``discrete_gaussian(rng, sigma, m)``
   (:mod:`triehh.core.discrete_noise`), exact: integer votes plus integer
   noise, against the integer threshold tau.
3. *The other candidates*, which no user can vote for, all ``F * E - m`` of
   them: each would pass independently with probability alpha =
   ``P[Z >= tau]``, Z discrete Gaussian (its tail summed in double
   precision). Instead of a draw for each (``F * E`` reaches 10^14 at k =
   11), the number passing is drawn as ``rng.binomial(F * E - m, alpha)``,
   which of them as a uniform subset (``rng.choice``), and their noisy sums
   from the discrete Gaussian given that it reaches tau
   (``discrete_gaussian_above``, exact). Equal in law: the passing set of
   i.i.d. Bernoulli(alpha) indicators is a uniform subset of a Binomial
   size, and a value given that it passes has that law.

What is exact, and what is not. The noise on every count a user can change
(step 2: every candidate some word extends, voted for this round or not)
and the values released for the other candidates (step 3's noisy sums) are
drawn exactly, with integer arithmetic. Step 3's *how many and which* of
the other candidates pass is drawn in floating point (alpha in double
precision, numpy's binomial and choice), for candidates no user's word
extends: their sums are 0 whatever the data. The data enters that draw only
through how many such candidates there are, ``F * E - m`` (m, the explicit
candidates, moves by at most a user's number of words when the user is
added or removed), never through a value, so no released value carries a
float's low-order bits. Its law differs from the exact one (the same
Bernoulli(exact tail) indicators drawn one by one) only by alpha's double
rounding and the 53-bit uniforms of numpy's samplers: a total variation we
estimate near 2^-50 per round (not proven), outside the accounted
mechanism; docs/noisy-trie.md says so.

Distributed noise (``run(..., distributed=...)``, a
:class:`triehh.theory.distributed_noise.DistributedNoise`): each sampled
user delivers its vote and its Skellam share with probability ``1 -
dropout``, so votes are thinned at ``q (1 - dropout)``; m, the delivering
clients, is those voting plus a binomial of the others; a round with ``m -
1 < h`` is not released and the run stops; else the noise on every
candidate is ``Skellam(m s_r)``, the sum of m shares, exactly
(:func:`~triehh.core.discrete_noise.skellam`, and
:func:`~triehh.core.discrete_noise.skellam_above` for step 3, whose alpha
is the Skellam tail at that mean). The secure sum's wrap-around (modulo
``2^bits``, probability at most ``DistributedNoise.wrap_probability`` per
candidate) is not drawn here.

Passing candidates ending in ``$`` are released words; the others are the
next frontier. A frontier prefix no user holds (a false positive) stays on
it like any other: its extensions are candidates of the next round, all
"other" candidates. The run stops when the frontier is empty or after R
rounds. The population's n is never read by the mechanism.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol

import numpy as np

from triehh.core import discrete_noise
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.core import release
from triehh.engines import sampling
from triehh.theory import noise_laws
from triehh.theory import noisy_plan
from triehh.theory import verification_thresholds


class NoisyParams(Protocol):
  """What a run reads of :class:`triehh.theory.noisy_trie.NoisyTrieParams`."""

  sigma: float
  threshold: float
  sampling_rate: float
  false_positive_rate: float
  num_levels: int
  chars_per_level: int

  def at_round(self, r: int) -> "NoisyParams":
    """Round r's sigma and threshold (the noise may differ by round)."""


@dataclasses.dataclass(frozen=True)
class LevelStats:
  """One round of a run.

  Attributes:
    prefix_length: p, symbols of the frontier prefixes the round extends.
    num_frontier: F, frontier prefixes (``num_phantom`` of them no user
      holds: earlier false positives).
    num_candidates: ``|C| = F * E``.
    num_voted: candidates with at least one vote.
    num_passing: candidates whose noisy sum reached the threshold.
    num_released: passing candidates ending in ``$`` (words).
    expected_false_positives: ``alpha * |C|``, the passing candidates
      expected if no candidate had a vote (public, an upper bound).
    num_zero_vote, num_zero_vote_passing: candidates with no vote this
      round, and how many passed (their ratio estimates alpha).
    num_false_positives: passing candidates that no user's word extends
      (simulation only: the mechanism cannot tell).
  """

  prefix_length: int
  num_frontier: int
  num_phantom: int
  num_candidates: int
  num_voted: int
  num_passing: int
  num_released: int
  expected_false_positives: float
  num_zero_vote: int
  num_zero_vote_passing: int
  num_false_positives: int


@dataclasses.dataclass(frozen=True)
class NoisyTrieResult:
  """A run's output.

  Attributes:
    words: the released words, by round, each round's by noisy sum (largest
      first). The empty word (``$`` alone, which no user holds) is dropped.
    noisy_counts: ``int64 [len(words)]`` their noisy sums (votes plus
      discrete Gaussian noise).
    false_words: ``bool [len(words)]`` whether no user holds the word
      (simulation only).
    levels: per round, its :class:`LevelStats`.
    params: the parameters it ran with, and guarantee: what they guarantee
      (set by :func:`triehh.discover`; None from :func:`run`).
    seconds: wall time of the run (set by :func:`triehh.discover`).

  A :class:`~triehh.core.release.Release`: the noisy counts are covered by
  the guarantee; which words are false is not (:attr:`unprotected`).
  """

  mechanism = "noisy_trie"

  words: tuple[str, ...]
  noisy_counts: np.ndarray
  false_words: np.ndarray
  levels: tuple[LevelStats, ...]
  params: object = None
  guarantee: object = None
  seconds: float = 0.0

  @property
  def num_false_words(self) -> int:
    """Released words no user holds."""
    return int(self.false_words.sum())

  @property
  def per_round(self) -> tuple[release.RoundStats, ...]:
    """Each round's candidates and the prefixes and words it kept."""
    return tuple(release.RoundStats(candidates=level.num_candidates,
                                    kept=level.num_passing)
                 for level in self.levels)

  @property
  def unprotected(self) -> dict[str, tuple[str, ...]]:
    """``{"false_words": ...}``: the released words no user holds
    (simulation only: NOT covered by the guarantee, which the mechanism
    cannot know)."""
    return {"false_words": tuple(
        w for w, false in zip(self.words, self.false_words) if false)}


@dataclasses.dataclass(frozen=True)
class Extensions:
  """The extensions of a round's prefixes of ``p`` symbols, numbered.

  Extension ``offsets[j] + v`` (j < k) is the j characters of base-A value
  v followed by ``$``; ``offsets[k] + v`` the k characters of value v. Only
  those within L characters exist, which are the first ``size``.
  """

  num_characters: int  # A
  chars: int  # k
  offsets: np.ndarray  # int64 [k + 1]
  size: int  # E

  @classmethod
  def of(cls, num_characters: int, chars: int, max_length: int,
         prefix_length: int) -> "Extensions":
    powers = num_characters ** np.arange(chars + 1, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(powers[:-1])])
    if prefix_length + chars <= max_length:
      size = int(offsets[chars] + powers[chars])
    else:  # only the words that end within L characters
      size = int(offsets[min(chars - 1, max_length - prefix_length) + 1])
    return cls(num_characters, chars, offsets, size)

  def encode(self, chunk: np.ndarray, end_code: int) -> np.ndarray:
    """``int64 [V]`` the extension of each row of symbols (``-1``: none,
    the word is truncated or ended before)."""
    a, k = self.num_characters, self.chars
    chunk = chunk.astype(np.int64)
    values = np.zeros((chunk.shape[0], k + 1), dtype=np.int64)
    for i in range(k):
      values[:, i + 1] = values[:, i] * a + np.maximum(chunk[:, i], 0)
    is_end = chunk == end_code
    has_end = is_end.any(axis=1)
    ends_at = np.where(has_end, is_end.argmax(axis=1), k)
    full = ~has_end & (chunk >= 0).all(axis=1)
    rows = np.arange(chunk.shape[0])
    ext = self.offsets[ends_at] + values[rows, ends_at]
    ext[~has_end & ~full] = -1
    ext[ext >= self.size] = -1
    return ext

  def decode(self, ext: np.ndarray, end_code: int) -> np.ndarray:
    """``int16 [c, k]`` the symbols of each extension (``-1`` after ``$``)."""
    ext = np.asarray(ext, dtype=np.int64)
    j = np.searchsorted(self.offsets, ext, side="right") - 1  # characters
    values = ext - self.offsets[j]
    out = np.full((ext.size, self.chars), -1, dtype=np.int16)
    for i in range(self.chars):  # character i of j, from the most significant
      digit = (values // self.num_characters ** np.maximum(j - 1 - i, 0)
               ) % self.num_characters
      out[:, i] = np.where(i < j, digit, np.where(i == j, end_code, -1))
    return out

  def ends(self, ext: np.ndarray) -> np.ndarray:
    """Whether each extension ends in ``$``."""
    return ext < self.offsets[self.chars]

  def word_groups(self, by_class: bool) -> list[tuple[int, int]]:
    """The word extensions' ranges ``[start, end)`` that share a
    threshold: all of them, or (``by_class``) each class of the words
    that end after j of the k characters, A^j a prefix."""
    w = int(self.offsets[self.chars])
    if not by_class:
      return [(0, w)]
    return [(int(self.offsets[j]), int(self.offsets[j + 1]))
            for j in range(self.chars) if self.offsets[j] < min(w, self.size)]


@dataclasses.dataclass(frozen=True)
class _Frontier:
  codes: np.ndarray  # int16 [F, p]
  real: np.ndarray  # int64 [F] population prefix id at depth p, -1: none
  # A planned round's blocks: the modulus of each prefix's secure sum.
  moduli: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class Window:
  """How a planned round's secure sums are read: each block's modulo its
  ``moduli[f]`` into ``[low, low + moduli[f])`` (``NoisyPlan.window_low``,
  ``NoisyPlan.block_moduli``)."""

  low: int
  moduli: np.ndarray  # int64 [F]


def round_window(plan, r: int, frontier: _Frontier) -> Window | None:
  """How round r's secure sums are read with the server's noise
  (:class:`Window`: each block modulo its modulus); None: as
  integers (no moduli, or Skellam shares, whose one modulus has its
  wrap-around bounded, ``DistributedNoise.wrap_probability``, not
  drawn)."""
  if frontier.moduli is None or plan.distributed is not None:
    return None
  return Window(plan.window_low(r), frontier.moduli)


def _draw_windowed(voted: _Voted, fpos: np.ndarray, e: np.ndarray,
                   mask: np.ndarray, layout: tuple[int, int, int], params,
                   rng: np.random.Generator, window: Window) -> list:
  """:func:`draw_passing` for one group of a round's candidates (``mask``
  of the explicit ones; ``layout``: the group's first extension, its
  width, the extensions a block), each block's sums read modulo its
  modulus: the explicit ones' noise at once, the others' together, each
  read modulo its own block's.
  ``(candidate ids, values, explicit index or -1)`` parts."""
  base, width, e_size = layout
  moduli = np.asarray(window.moduli, dtype=np.int64)
  idx = np.flatnonzero(mask)
  noisy = wrapped(voted.votes[idx] + _noise(params, idx.size, rng),
                  window.low, moduli[fpos[idx]])
  keep = noisy >= params.threshold
  local = fpos[idx] * width + (e[idx] - base)
  pool, values = _other_passing_wrapped(
      local, moduli.size * width, params, rng, window.low,
      lambda positions: moduli[positions // width])
  f, rest = np.divmod(pool, width)
  return [(voted.candidates[idx[keep]], noisy[keep], idx[keep]),
          (f * e_size + base + rest, values,
           np.full(pool.size, -1, dtype=np.int64))]


@dataclasses.dataclass(frozen=True)
class _Voted:
  """The explicit candidates of a round: those some word extends."""

  candidates: np.ndarray  # int64 [m], increasing
  votes: np.ndarray  # int64 [m]
  words: np.ndarray  # a word extending each
  # The round's clients (sampled): those drawn, and the users not drawn
  # one by one (each a client with probability the sampling rate).
  clients: int = 0
  clients_outside: int = 0


def checked_rounds(params: NoisyParams, max_length: int) -> int:
  """``ceil((L + 1) / k)``, the rounds words of at most ``max_length``
  characters (and ``$``) need at ``params.chars_per_level`` symbols a round;
  ValueError if ``params`` account for fewer."""
  k = params.chars_per_level
  from triehh.theory import noisy_trie  # pylint: disable=g-import-not-at-top
  rounds = noisy_trie.rounds_for(max_length, k)
  if params.num_levels < rounds:
    raise ValueError(
        f"params account for {params.num_levels} rounds, but words of up to "
        f"{max_length} characters at {k} per round need {rounds}")
  return rounds


# Peak bytes of a round per word and symbol of its k-symbol chunk: the
# chunk padded (int16) and as int64, its base-A values (int64 [V, k + 1]),
# the end and validity masks.
_BYTES_PER_WORD_SYMBOL = 24


def check_round_memory(num_words: int, num_characters: int, chars: int,
                       max_length: int) -> None:
  """Refuses, before anything is allocated, a ``chars_per_level`` whose
  round arrays (every word's k-symbol chunk, ``int64 [V, k + 1]`` among
  them) would not fit in memory, or whose extensions (``A^k``) overflow
  int64: one line naming the size, the limit and what to lower."""
  useful = max_length + 1
  if chars * math.log2(max(num_characters, 2)) >= 62:
    raise ValueError(
        f"chars_per_level={chars} gives {num_characters}^{chars} extensions "
        "per prefix, beyond 2^62 (int64 candidate ids); lower "
        f"chars_per_level (at most {useful} is ever useful for words of "
        f"{max_length} characters)")
  memory.check_fits(
      f"chars_per_level={chars} over {num_words:,} words (a round's arrays "
      f"of {num_words:,} x {chars + 1} symbols)",
      num_words * (chars + 1) * _BYTES_PER_WORD_SYMBOL,
      f"lower chars_per_level (at most {useful} is ever useful for words of "
      f"{max_length} characters)")


def run(population: population_lib.Population, params: NoisyParams,
        rng: np.random.Generator | int, *,
        distributed=None) -> NoisyTrieResult:
  """Runs the noisy trie (module docstring) on ``population``.

  Args:
    population: the users; one or several words each.
    params: sigma, threshold, sampling rate, false-positive rate, rounds
      and characters per round (a
      :class:`triehh.theory.noisy_trie.NoisyTrieParams`).
    rng: the run's generator, or a seed for one.
    distributed: a :class:`triehh.theory.distributed_noise.DistributedNoise`
      for Skellam shares in place of the discrete Gaussian
      (:func:`skellam_round`): each sampled user delivers with probability
      ``1 - dropout``; the noise is the delivered shares' sum, and a round
      short of its clients stops the run.

  Raises:
    ValueError: if ``params.num_levels`` accounts for fewer rounds than
      words of ``population.max_length`` characters need.
  """
  rng = np.random.default_rng(rng)
  k, max_length = params.chars_per_level, population.max_length
  rounds = checked_rounds(params, max_length)
  check_round_memory(population.codes.shape[0], population.alphabet.size,
                     k, max_length)
  frontier = _Frontier(np.zeros((1, 0), dtype=np.int16),
                       np.zeros(1, dtype=np.int64))
  words, counts, false_words, levels = [], [], [], []
  for r in range(rounds):
    if not frontier.real.size:
      break
    ext = Extensions.of(population.alphabet.size, k, max_length, r * k)
    at_round = (params.at_round(r) if distributed is None
                else SkellamShares.of(params, distributed, r))
    done = _round(population, at_round, rng, frontier, ext, r * k)
    if done is None:  # fewer than h shares besides one: not released
      break
    frontier, released, stats = done
    levels.append(stats)
    words.extend(released[0])
    counts.append(released[1])
    false_words.append(released[2])
  return NoisyTrieResult(words=tuple(words), levels=tuple(levels),
                         **_joined(counts, false_words))


def _joined(counts: list[np.ndarray], false_words: list[np.ndarray]
            ) -> dict[str, np.ndarray]:
  """The rounds' released noisy counts and false-word flags, each joined
  into one array (empty ones of their dtypes when no round released)."""
  return dict(
      noisy_counts=(np.concatenate(counts) if counts
                    else np.zeros(0, dtype=np.int64)),
      false_words=(np.concatenate(false_words) if false_words
                   else np.zeros(0, dtype=bool)))


def _round(population: population_lib.Population, params: NoisyParams,
           rng: np.random.Generator, frontier: _Frontier, ext: Extensions,
           p: int) -> tuple[_Frontier, tuple, LevelStats] | None:
  """One round: the next frontier, the released (words, noisy sums, false)
  and the round's stats; None if a :class:`SkellamShares` round is short
  of its clients."""
  voted = _votes(population, params.sampling_rate, rng, frontier, ext, p)
  if isinstance(params, SkellamShares):
    params = params.delivered(voted.clients + int(rng.binomial(
        voted.clients_outside, min(params.sampling_rate, 1.0))))
    if params is None:
      return None
  num_candidates = frontier.real.size * ext.size
  candidates, values, source = draw_passing(
      voted.candidates, voted.votes, num_candidates, params, rng)
  real_words, codes, ends = _passing_codes(population, frontier, ext, voted,
                                           candidates, source)
  explicit = source >= 0
  zero = voted.votes == 0
  stats = LevelStats(
      prefix_length=p, num_frontier=frontier.real.size,
      num_phantom=int((frontier.real < 0).sum()),
      num_candidates=num_candidates,
      num_voted=int((~zero).sum()), num_passing=int(candidates.size),
      num_released=int(ends.sum()),
      expected_false_positives=params.false_positive_rate * num_candidates,
      num_zero_vote=int(num_candidates - (~zero).sum()),
      num_zero_vote_passing=int(
          (~explicit).sum() + zero[source[explicit]].sum()),
      num_false_positives=int((~explicit).sum()))
  nxt = _next_frontier(population, codes[~ends], real_words[~ends], p + ext.chars)
  return nxt, _released(population, codes[ends], values[ends],
                        real_words[ends] < 0), stats


def _next_frontier(population: population_lib.Population, codes: np.ndarray,
                   real_words: np.ndarray, depth: int) -> _Frontier:
  """The passing candidates that do not end in ``$``: their codes and, for
  those some word extends, their prefix ids at ``depth``."""
  if not real_words.size:
    return _Frontier(np.zeros((0, depth), dtype=np.int16),
                     np.zeros(0, dtype=np.int64))
  ids = population.prefix_ids[depth]
  real = np.where(real_words >= 0, ids[np.maximum(real_words, 0)], -1)
  return _Frontier(codes[:, :depth], real.astype(np.int64))


def _passing_codes(population, frontier: _Frontier, ext: Extensions, voted,
                   candidates: np.ndarray, source: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """The passing candidates' real word ids (-1: no user's word), their
  codes (frontier prefix then extension) and which of them end a word."""
  explicit = source >= 0
  real_words = np.full(candidates.size, -1, dtype=np.int64)
  real_words[explicit] = voted.words[source[explicit]]
  fpos, e = np.divmod(candidates, ext.size)
  codes = np.concatenate(
      [frontier.codes[fpos], ext.decode(e, population.alphabet.end_code)],
      axis=1)
  return real_words, codes, ext.ends(e)


def _released(population: population_lib.Population, codes: np.ndarray,
              values: np.ndarray, false: np.ndarray) -> tuple:
  """The round's released words by noisy sum, without the empty word."""
  order = np.argsort(-values, kind="stable")
  words, kept = [], []
  for i in order:
    word = population.alphabet.decode_word(codes[i])
    if word:
      words.append(word)
      kept.append(i)
  kept = np.asarray(kept, dtype=np.int64)
  return words, values[kept], false[kept]


def _votes(population: population_lib.Population, rate: float,
           rng: np.random.Generator, frontier: _Frontier, ext: Extensions,
           p: int) -> _Voted:
  """The explicit candidates of the round and their votes (step 1)."""
  cand = _word_candidates(population, frontier, ext, p)
  if population.is_single_word:
    voted = _votes_for(population, cand, rng, rate)
    held = int(population.users_per_word[cand >= 0].sum())
    return dataclasses.replace(voted, clients=int(voted.votes.sum()),
                               clients_outside=population.num_users - held)
  _, candidates, words, _ = _explicit(cand)
  voters = (np.arange(population.num_users) if rate >= 1.0
            else sampling.poisson_users(rng, population.num_users, rate))
  ranks = sampling.draw_word_ranks(rng, population, voters)
  chosen = cand[sampling.words_of(population, voters, ranks)]
  chosen = chosen[chosen >= 0]
  votes = np.bincount(np.searchsorted(candidates, chosen),
                      minlength=candidates.size).astype(np.int64)
  return _Voted(candidates, votes, words, clients=int(voters.size))


def _word_candidates(population: population_lib.Population,
                     frontier: _Frontier, ext: Extensions,
                     p: int) -> np.ndarray:
  """``int64 [V]`` the candidate each word votes for (``-1``: none, its
  prefix is not on the frontier or it has no extension here)."""
  ids = population.prefix_ids[p]
  position = np.full(population.num_prefixes[p], -1, dtype=np.int64)
  real = frontier.real >= 0
  position[frontier.real[real]] = np.flatnonzero(real)
  if position.size:
    fpos = np.where(ids >= 0, position[np.maximum(ids, 0)], -1)
  else:  # no word is this long: a frontier of noise alone
    fpos = np.full(ids.shape, -1, dtype=np.int64)
  chunk = population.codes[:, p:p + ext.chars]
  if chunk.shape[1] < ext.chars:  # past the codes' width: nothing there
    pad = np.full((chunk.shape[0], ext.chars - chunk.shape[1]), -1,
                  dtype=chunk.dtype)
    chunk = np.concatenate([chunk, pad], axis=1)
  e = ext.encode(chunk, population.alphabet.end_code)
  return np.where((fpos >= 0) & (e >= 0), fpos * ext.size + e, -1)


def draw_each(explicit: np.ndarray, votes: np.ndarray, plan,
              taus: np.ndarray, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """The verification round at a threshold per candidate (``taus[i]``:
  candidate i's, of ``taus.size``): the server's noise drawn on every
  candidate (:func:`central_noise`); the passing candidates (increasing),
  their noisy sums and which explicit candidate each is (-1: none), as
  :func:`draw_passing` returns them."""
  full = np.zeros(taus.size, dtype=np.int64)
  full[explicit] = votes
  noisy_sums = full + central_noise(plan, plan.num_levels - 1, rng,
                                    taus.size)
  passing = np.flatnonzero(noisy_sums >= taus)
  return passing, noisy_sums[passing], explicit_index(explicit, passing)


def draw_passing(explicit: np.ndarray, votes: np.ndarray,
                 num_candidates: int, params: NoisyParams,
                 rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """Steps 2 and 3 of a round of ``num_candidates`` candidates, given the
  explicit ones (increasing ids) and their votes: the passing candidates
  (increasing), their noisy sums, and which explicit candidate each is
  (its index, ``-1``: one of the others)."""
  noisy = votes + _noise(params, explicit.size, rng)
  keep = noisy >= params.threshold
  pool, pool_noisy = _other_passing(explicit, num_candidates, params, rng)
  candidates = np.concatenate([explicit[keep], pool])
  values = np.concatenate([noisy[keep], pool_noisy])
  source = np.concatenate([np.flatnonzero(keep),
                           np.full(pool.size, -1, dtype=np.int64)])
  order = np.argsort(candidates, kind="stable")
  return candidates[order], values[order], source[order]


# Peak bytes of a round per candidate passing by noise alone: its id, value,
# rank and source, the sort, its codes and their decoding (int64 digits).
_BYTES_PER_PASSING = 512


def _other_passing(voted: np.ndarray, num_candidates: int,
                   params: NoisyParams, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray]:
  """Step 3: the passing candidates outside ``voted`` (increasing), and
  their noisy sums, drawn in law (module docstring)."""
  others = num_candidates - voted.size
  alpha = params.false_positive_rate
  size = int(rng.binomial(others, alpha)) if others > 0 else 0
  if not size:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
  _check_passing_fits(params, num_candidates, size,
                      "passing by noise alone")
  picked = _outside(voted, others, size, rng)
  return picked, _noise_above(params, int(params.threshold), size, rng)


def _check_passing_fits(params: NoisyParams, num_candidates: int, size: int,
                        what: str) -> None:
  """MemoryError naming the rate unless ``size`` noise-only candidates
  (``what``) of one round fit in memory."""
  memory.check_fits(
      f"false_positive_rate={params.false_positive_rate:g} over "
      f"{num_candidates:,} candidates ({size:,} {what} in one round)",
      size * _BYTES_PER_PASSING,
      "lower false_positive_rate or chars_per_level: each candidate that "
      "passes is kept, extended and drawn again in the next round")


def _noise(params: NoisyParams, size: int,
           rng: np.random.Generator) -> np.ndarray:
  """``size`` draws of the round's noise."""
  if isinstance(params, SkellamRound):
    return discrete_noise.skellam(rng, params.noise_mean, size)
  if getattr(params, "laplace", False):
    return discrete_noise.discrete_laplace(rng, params.sigma, size)
  return discrete_noise.discrete_gaussian(rng, params.sigma, size)


def _outside(voted: np.ndarray, others: int, size: int,
             rng: np.random.Generator) -> np.ndarray:
  """``size`` distinct candidates outside ``voted`` (increasing ids), drawn
  uniformly, increasing."""
  ranks = np.sort(rng.choice(others, size=size, replace=False,
                             shuffle=False)).astype(np.int64)
  # The rank-j candidate outside voted is j plus the voted ones below it.
  below = voted - np.arange(voted.size, dtype=np.int64)
  return ranks + np.searchsorted(below, ranks, side="right")


def _noise_above(params: NoisyParams, threshold: int, size: int,
                 rng: np.random.Generator) -> np.ndarray:
  """``size`` draws of the round's noise conditioned on at least
  ``threshold``."""
  if isinstance(params, SkellamRound):
    return discrete_noise.skellam_above(rng, params.noise_mean, threshold,
                                        size)
  if getattr(params, "laplace", False):
    return discrete_noise.discrete_laplace_above(rng, params.sigma,
                                                 threshold, size)
  return discrete_noise.discrete_gaussian_above(rng, params.sigma, threshold,
                                                size)


def wrapped(values: np.ndarray, low: int, modulus: int) -> np.ndarray:
  """``values`` read modulo ``modulus`` into ``[low, low + modulus)``."""
  return low + np.mod(np.asarray(values, dtype=np.int64) - low, modulus)


def _noise_tail(params: NoisyParams, threshold: int) -> float:
  """``P[Z >= threshold]`` of the round's server noise."""
  law = (noise_laws.LAPLACE if getattr(params, "laplace", False)
         else noise_laws.GAUSSIAN)
  return noise_laws.tail(law, params.sigma, threshold)


def _other_passing_wrapped(voted: np.ndarray, num_candidates: int,
                           params: NoisyParams, rng: np.random.Generator,
                           low: int, moduli_of
                           ) -> tuple[np.ndarray, np.ndarray]:
  """:func:`_other_passing` when each noisy sum (the noise alone, no vote)
  at position i is read modulo ``moduli_of(i)`` into ``[low, low +
  modulus)``: it passes iff that reading is at least tau. A draw in the
  window reads as itself, so only ``Z >= max(tau, low)`` and ``Z < low``
  can pass, whatever the modulus: how many of the others fall in each
  (binomials, the second given the first), their draws from the noise's
  tails (symmetric: below ``low`` is minus above ``1 - low``), each read
  modulo its position's modulus, those reading at least tau kept."""
  low = int(low)
  tau = int(params.threshold)
  others = num_candidates - voted.size
  if others <= 0:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
  start = max(tau, low)
  above, below = _noise_tail(params, start), _noise_tail(params, 1 - low)
  high = int(rng.binomial(others, above))
  rest = others - high
  under = (int(rng.binomial(rest, min(below / (1.0 - above), 1.0)))
           if rest and below > 0 else 0)
  size = high + under
  if not size:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
  _check_passing_fits(params, num_candidates, size,
                      "drawn outside the window or above the threshold")
  values = np.concatenate([
      _noise_above(params, start, high, rng),
      -_noise_above(params, 1 - low, under, rng)])
  picked = _outside(voted, others, size, rng)
  # The positions are exchangeable: the k-th drawn value goes to a uniform
  # one of them, and is read modulo that position's modulus.
  values = wrapped(values[rng.permutation(size)], low, moduli_of(picked))
  keep = values >= tau
  return picked[keep], values[keep]


@dataclasses.dataclass(frozen=True)
class SkellamRound:
  """A round of distributed noise (:class:`SkellamShares` once the
  delivering clients are known): the delivered shares' Skellam mean ``m
  s_r``, the threshold, and the pass rate of a candidate no one votes for
  at that mean."""

  noise_mean: object  # fractions.Fraction
  threshold: int
  false_positive_rate: float
  sampling_rate: float
  chars_per_level: int


@dataclasses.dataclass(frozen=True)
class SkellamShares:
  """Round r of distributed noise before its clients deliver: each user
  delivers (its vote and share) with probability ``sampling_rate = q (1 -
  dropout)``."""

  distributed: object  # triehh.theory.distributed_noise.DistributedNoise
  round_index: int
  sampling_rate: float
  chars_per_level: int

  @classmethod
  def of(cls, params: NoisyParams, distributed, r: int) -> "SkellamShares":
    return cls(distributed, r,
               params.sampling_rate * (1.0 - distributed.dropout),
               params.chars_per_level)

  def delivered(self, delivered: int) -> SkellamRound | None:
    """The round given m delivered shares: None (not released) when
    ``m - 1 < h``; else the sum of m shares of mean s_r, Skellam of mean
    ``m s_r`` exactly."""
    if not self.distributed.releases(delivered):
      return None
    mean = self.distributed.noise_mean(self.round_index, delivered)
    tau = self.distributed.thresholds[self.round_index]
    return SkellamRound(
        noise_mean=mean, threshold=tau,
        false_positive_rate=discrete_noise.skellam_tail(float(mean), tau),
        sampling_rate=self.sampling_rate,
        chars_per_level=self.chars_per_level)


# ---- the planned run: rounds shaped by an upload budget -------------------


@dataclasses.dataclass(frozen=True)
class PlannedLevel:
  """One round of a planned run: its :class:`LevelStats`, its characters
  k_r, the frontier prefixes dropped to fit the budget, and its bytes per
  client."""

  stats: LevelStats
  chars: int
  num_dropped: int
  upload_bytes: int
  verification: bool = False
  sampling_rate: float = 1.0  # q_r: a client's chance of uploading them


@dataclasses.dataclass(frozen=True)
class PlannedResult:
  """A planned run's output: the released words (by round, each round's
  by noisy sum), their noisy sums, which are false (simulation only), and
  the rounds."""

  words: tuple[str, ...]
  noisy_counts: np.ndarray
  false_words: np.ndarray
  levels: tuple[PlannedLevel, ...]

  @property
  def num_false_words(self) -> int:
    """Released words no user holds."""
    return int(self.false_words.sum())

  @property
  def upload_bytes(self) -> int:
    """Bytes a client taking part in every round uploads over the run
    (:attr:`expected_upload_bytes`: in expectation under sampling)."""
    return sum(level.upload_bytes for level in self.levels)

  @property
  def expected_upload_bytes(self) -> float:
    """A client's expected bytes over the run (:func:`expected_bytes`)."""
    return expected_bytes(self.levels)


def expected_bytes(levels) -> float:
  """A client's expected bytes over planned rounds: each round's vector
  times its sampling rate q_r."""
  return sum(level.sampling_rate * level.upload_bytes for level in levels)


@dataclasses.dataclass(frozen=True)
class _Thresholds:
  """A round's noise and threshold: ``sigma`` the discrete Gaussian's, or
  with ``laplace`` the discrete Laplace's scale."""

  sigma: float
  threshold: float
  false_positive_rate: float
  laplace: bool = False


class FastVoter:
  """How the fast engine votes and draws a planned run's rounds: the votes
  counted in numpy (sampling as a binomial per candidate for one word per
  user), the noise drawn only on the candidates some word extends, the
  others' passes drawn at once (:func:`draw_passing`). Other engines (TFF)
  give :func:`run_planned` their own voter with the same two methods and
  the same law. The server's discrete Gaussian; :class:`SkellamVoter`
  draws the clients' Skellam shares instead."""

  def __init__(self, frontier_votes: bool = True):
    self.frontier_votes = frontier_votes

  def thresholds(self, plan, r: int, voted: _Voted,
                 rng: np.random.Generator):
    """Round r's ``thresholds(word, num_candidates, num_blocks)`` given its votes
    (:func:`central_thresholds`); None: the round is not released."""
    del voted, rng  # the server's noise does not depend on the clients
    return central_thresholds(plan, r)

  def planned_round(self, population: population_lib.Population, plan,
                    r: int, frontier: _Frontier, ext: Extensions, p: int,
                    rng: np.random.Generator):
    """Round r's votes (:class:`_Voted`) and its passing candidates, their
    noisy sums and which explicit candidate each is (-1: none), words at
    the word threshold and prefixes at the prefix threshold; None if the
    round is not released."""
    q = plan.delivery_rate
    voted = (_planned_votes(population, rng, frontier, ext, p, q)
             if self.frontier_votes else
             _votes(population, q, rng, frontier, ext, p))
    thresholds = self.thresholds(plan, r, voted, rng)
    if thresholds is None:
      return None
    return (voted, *_draw_two(voted, frontier.real.size, ext, thresholds,
                              rng, plan.words_by_class(r),
                              self.window(plan, r, frontier)))

  def window(self, plan, r: int, frontier: _Frontier) -> Window | None:
    """:func:`round_window`."""
    return round_window(plan, r, frontier)

  def verification_round(self, population: population_lib.Population, plan,
                         cand: np.ndarray, priority: np.ndarray,
                         codes: list, rng: np.random.Generator,
                         taus: np.ndarray | None = None):
    """The verification round's votes and its passing candidates (of the
    ``len(codes)`` words of V, ``cand[w]``: word w's candidate, -1: none),
    their noisy sums and explicit indices; None if it is not released.
    ``taus`` (the server's noise): each word's threshold
    (:mod:`triehh.theory.verification_thresholds`); None: the plan's one
    word threshold for ``|V|`` candidates."""
    kept = len(codes)
    voted = _votes_for(population, cand, rng, plan.delivery_rate,
                       priority=priority)
    if taus is not None:
      return (voted, *draw_each(voted.candidates, voted.votes, plan, taus,
                                rng))
    thresholds = self.thresholds(plan, plan.num_levels - 1, voted, rng)
    if thresholds is None:
      return None
    return (voted, *draw_passing(voted.candidates, voted.votes, kept,
                                 thresholds(True, max(kept, 1)), rng))


class SkellamVoter(FastVoter):
  """The fast engine's law for a plan with Skellam shares
  (``plan.distributed``, :func:`triehh.theory.noisy_plan.with_distributed`):
  each sampled user delivers its vote and its share with probability ``1 -
  dropout``; a round's noise on every candidate is ``Sk(m s_r)``, the sum
  of the m delivered shares, exactly; its thresholds are the plan's
  false-positive rates on that law (public: the server sees m); a round
  whose delivered shares minus one are fewer than h is not released, and
  the run stops there. ``exact=False`` (a plan's choice on a public prior,
  never a release): the same votes, delivered count and thresholds, the
  noise drawn as the discrete Gaussian of the shares' variance ``2 m s_r``
  (compiled, where the exact Skellam sampler costs time in proportion to
  its mean)."""

  def __init__(self, frontier_votes: bool = True, exact: bool = True):
    super().__init__(frontier_votes)
    self.exact = exact

  def thresholds(self, plan, r: int, voted: _Voted,
                 rng: np.random.Generator):
    delivered = voted.clients + int(rng.binomial(
        voted.clients_outside, min(plan.delivery_rate, 1.0)))
    of = skellam_thresholds(plan, r, delivered)
    if of is None or self.exact:
      return of

    def simulated(word: bool, num_candidates: int,
                  num_blocks: int | None = None) -> _Thresholds:
      shares = of(word, num_candidates, num_blocks)
      return _Thresholds(math.sqrt(2.0 * float(shares.noise_mean)),
                         shares.threshold, shares.false_positive_rate)

    return simulated


def skellam_thresholds(plan, r: int, delivered: int):
  """Round r's ``thresholds(word, num_candidates, num_blocks)`` with ``delivered``
  Skellam shares (``plan.distributed``): the noise ``Sk(m s_r)``, each
  kind's threshold the smallest whose tail there is at most the plan's
  rate (public: the server sees m); None when ``m - 1 < h`` (the round is
  not released)."""
  from triehh.theory import distributed_noise  # pylint: disable=g-import-not-at-top
  shares = plan.distributed
  if not shares.releases(delivered):
    return None
  mean = shares.noise_mean(r, delivered)

  def of(word: bool, num_candidates: int,
         num_blocks: int | None = None) -> SkellamRound:
    alpha = plan.params(r, word, num_candidates,
                        num_blocks).false_positive_rate
    tau, tail = distributed_noise.threshold_and_tail(float(mean), alpha)
    return SkellamRound(noise_mean=mean, threshold=tau,
                        false_positive_rate=tail,
                        sampling_rate=plan.delivery_rate, chars_per_level=0)

  return of


# Long function: a round's steps in order (plan, votes, noise, release,
# next frontier), which would otherwise pass a dozen arrays between helpers.
def run_planned(population: population_lib.Population, plan,
                rng: np.random.Generator | int, *,
                frontier_votes: bool = True,
                voter=None) -> PlannedResult:
  """Runs the noisy trie on ``plan``
  (:class:`triehh.theory.noisy_plan.NoisyPlan`): each round's characters
  from the public frontier and the budget, separate thresholds for words
  and prefixes, and, with several words per user, each participant's vote
  for one of its words whose prefix is on the frontier
  (:mod:`triehh.theory.noisy_plan`; ``frontier_votes=False``: by local
  frequency over all of its words, as :func:`run` draws them, for
  comparison). A plan that verifies keeps the words its discovery rounds
  pass as candidates and releases only those its verification round
  passes (:func:`_verification_round`). ``voter`` (None: the fast
  engine's, :class:`FastVoter`) counts the votes and draws the passes."""
  rng = np.random.default_rng(rng)
  if voter is None:
    voter = (FastVoter(frontier_votes) if plan.distributed is None
             else SkellamVoter(frontier_votes))
  max_length, a = population.max_length, population.alphabet.size
  frontier = _Frontier(np.zeros((1, 0), dtype=np.int16),
                       np.zeros(1, dtype=np.int64))
  parent = [None]  # public noisy count of each frontier prefix (root: none)
  words, counts, false_words, levels = [], [], [], []
  spent, p = 0, 0
  found = _Found()
  parent_rate = plan.sampling_rate
  for r in range(plan.discovery_rounds):
    if not frontier.real.size:
      break
    at, moduli, k, kept = round_plan(plan, parent, r, p, spent,
                                     parent_rate)
    if not k:
      break
    dropped = frontier.real.size - kept
    moduli = moduli[:kept]  # the prefixes of largest noisy count come first
    frontier = _Frontier(frontier.codes[:kept], frontier.real[:kept],
                         np.asarray(moduli, dtype=np.int64))
    upload = at.round_bytes(moduli, k, p)
    check_round_memory(population.codes.shape[0], a, k, max_length)
    ext = Extensions.of(a, k, max_length, p)
    q = parent_rate = at.sampling_rate
    drawn = voter.planned_round(population, at, r, frontier, ext, p, rng)
    if drawn is None:  # fewer than h other shares: not released, stop
      found = None
      break
    voted, candidates, values, source = drawn
    real_words, codes, ends = _passing_codes(population, frontier, ext,
                                             voted, candidates, source)
    stats = _planned_stats(at, r, frontier, ext, p, voted, candidates,
                           source, ends)
    levels.append(PlannedLevel(stats, k, dropped, upload, sampling_rate=q))
    spent += upload * q  # a client's expected bytes
    if plan.verify:
      found.add(codes[ends], values[ends], real_words[ends],
                at.round_sigma(r))
    else:
      released = _released(population, codes[ends], values[ends],
                           real_words[ends] < 0)
      words.extend(released[0])
      counts.append(released[1])
      false_words.append(released[2])
    p += k
    order = np.argsort(-values[~ends], kind="stable")
    frontier = _next_frontier(population, codes[~ends][order],
                              real_words[~ends][order], p)
    parent = [float(v) for v in values[~ends][order]]
  if plan.verify and found is not None:
    level, released = _verification_round(population, plan, found, spent,
                                          rng, voter)
    levels.extend([] if level is None else [level])
    words.extend(released[0])
    counts.append(released[1])
    false_words.append(released[2])
  return PlannedResult(words=tuple(words), levels=tuple(levels),
                       **_joined(counts, false_words))


def round_plan(plan, parent: list, r: int, prefix_length: int, spent: float,
               parent_rate: float):
  """(plan_r, moduli, k_r, kept): round r's plan, its blocks' moduli, its
  characters and kept frontier prefixes, from public values only: the
  plan at q (its parents' counts sampled at ``parent_rate``), or, when
  the rates adapt (:meth:`~triehh.theory.noisy_plan.NoisyPlan.
  rate_options`), the largest rate at which the round keeps every prefix
  and at least as many characters."""
  at = (plan if parent_rate == plan.sampling_rate
        else dataclasses.replace(plan, parent_rate=parent_rate))
  moduli = at.block_moduli(parent, r)
  k, kept = at.chars_for_round(moduli, r, prefix_length, spent)
  for option in plan.rate_options(r):
    option = dataclasses.replace(option, parent_rate=parent_rate)
    option_moduli = option.block_moduli(parent, r)
    option_k, option_kept = option.chars_for_round(option_moduli, r,
                                                   prefix_length, spent)
    if option_k >= max(k, 1) and option_kept == len(option_moduli):
      return option, option_moduli, option_k, option_kept
  return at, moduli, k, kept


@dataclasses.dataclass
class _Found:
  """The word candidates the discovery rounds passed: their codes (with
  ``$``), noisy counts, real word ids (-1: no user's word) and the sigma
  each was measured at."""

  codes: list = dataclasses.field(default_factory=list)
  values: list = dataclasses.field(default_factory=list)
  real: list = dataclasses.field(default_factory=list)
  sigmas: list = dataclasses.field(default_factory=list)

  def add(self, codes, values, real, sigma: float) -> None:
    for code, value, word in zip(codes, values, real):
      self.codes.append(code)
      self.values.append(float(value))
      self.real.append(int(word))
      self.sigmas.append(sigma)


def _verification_round(population: population_lib.Population, plan,
                        found: _Found, spent: int, rng: np.random.Generator,
                        voter: FastVoter | None = None
                        ) -> tuple[PlannedLevel | None, tuple]:
  """The last round of a plan that verifies: the discovered word
  candidates, largest noisy count first, as many as the run's remaining
  bytes hold; each user votes for its word among them (several words: the
  one of its words among them with the smallest discovery count, ties by
  local frequency); noise at the round's sigma; released at the word
  threshold for ``|V|`` candidates."""
  r = plan.num_levels - 1
  measured = np.asarray(found.values, dtype=np.float64)
  order = np.argsort(-measured, kind="stable")
  bits = [noisy_plan.packed_bits(m, 1) for m in plan.verification_moduli(
      measured[order].tolist(), [found.sigmas[i] for i in order])]
  allowance = 8 * plan.round_allowance(r, spent)
  kept = int(np.searchsorted(np.cumsum(bits), allowance, side="right"))
  order, bits = order[:kept], bits[:kept]
  real = np.asarray([found.real[i] for i in order], dtype=np.int64)
  cand = np.full(population.num_words, -1, dtype=np.int64)
  cand[real[real >= 0]] = np.flatnonzero(real >= 0)
  # Several words: the vote goes to the user's word of V that discovery
  # measured lowest (public), where one vote counts most.
  voter = FastVoter() if voter is None else voter
  taus = None
  if plan.weighted_verification:
    taus = verification_thresholds.thresholds(
        plan.noise_law, plan.round_sigma(r), measured[order],
        [found.sigmas[i] for i in order], plan.false_words)
  drawn = voter.verification_round(population, plan, cand, measured[order],
                                   [found.codes[i] for i in order], rng,
                                   taus=taus)
  if drawn is None:  # fewer than h other shares: nothing is released
    return None, _released(population, [], np.zeros(0, dtype=np.int64),
                           np.zeros(0, dtype=bool))
  voted, passing, values, source = drawn
  params = plan.params(r, True, max(kept, 1))
  zero = voted.votes == 0
  explicit = source >= 0
  stats = LevelStats(
      prefix_length=0, num_frontier=kept, num_phantom=int((real < 0).sum()),
      num_candidates=kept, num_voted=int((~zero).sum()),
      num_passing=int(passing.size), num_released=int(passing.size),
      expected_false_positives=(
          params.false_positive_rate * kept if taus is None else
          verification_thresholds.spent(plan.noise_law, plan.round_sigma(r),
                                        taus)),
      num_zero_vote=int(kept - (~zero).sum()),
      num_zero_vote_passing=int(
          (~explicit).sum() + zero[source[explicit]].sum()),
      num_false_positives=int((real[passing] < 0).sum()))
  level = PlannedLevel(stats, 0, len(found.values) - kept,
                       math.ceil(sum(bits) / 8), verification=True,
                       sampling_rate=plan.sampling_rate)
  codes = [found.codes[i] for i in order[passing]]  # lengths differ
  return level, _released(population, codes, values, real[passing] < 0)


def _planned_stats(plan, r: int, frontier: _Frontier, ext: Extensions,
                   p: int, voted: _Voted, candidates: np.ndarray,
                   source: np.ndarray, ends: np.ndarray) -> LevelStats:
  """A planned round's :class:`LevelStats` (expected false positives at
  the word and prefix rates)."""
  explicit = source >= 0
  zero = voted.votes == 0
  num_words = frontier.real.size * int(ext.offsets[ext.chars])
  w_rate = plan.params(r, True, num_words,
                       frontier.real.size).false_positive_rate
  p_rate = plan.params(r, False).false_positive_rate
  num_candidates = frontier.real.size * ext.size
  return LevelStats(
      prefix_length=p, num_frontier=frontier.real.size,
      num_phantom=int((frontier.real < 0).sum()),
      num_candidates=num_candidates, num_voted=int((~zero).sum()),
      num_passing=int(candidates.size), num_released=int(ends.sum()),
      expected_false_positives=(w_rate * num_words + p_rate * (
          num_candidates - num_words)),
      num_zero_vote=int(num_candidates - (~zero).sum()),
      num_zero_vote_passing=int(
          (~explicit).sum() + zero[source[explicit]].sum()),
      num_false_positives=int((~explicit).sum()))


def _draw_two(voted: _Voted, num_frontier: int, ext: Extensions,
              thresholds, rng: np.random.Generator, by_class: bool = False,
              window: Window | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """:func:`draw_passing` for the word candidates (ending in ``$``) at the
  word threshold (``by_class``: each class of :meth:`Extensions.
  word_groups` at its own) and the prefix candidates at the prefix
  threshold, each renumbered within its own group; the union, by
  candidate id. ``thresholds(word, num_candidates, num_blocks)`` gives
  each group's noise and threshold (:class:`_Thresholds` or
  :class:`SkellamRound`). ``window``: each block's sums read modulo its
  modulus (:class:`Window`, :func:`_draw_windowed`)."""
  e_size, w = ext.size, int(ext.offsets[ext.chars])
  fpos, e = np.divmod(voted.candidates, e_size)
  parts = []
  groups = [(True, start, end) for start, end in ext.word_groups(by_class)]
  for word, base, end in groups + [(False, w, e_size)]:
    width = end - base
    if width <= 0:
      continue
    params = thresholds(word, num_frontier * width, num_frontier)
    mask = (e >= base) & (e < end)
    if window is not None:
      parts += _draw_windowed(voted, fpos, e, mask, (base, width, e_size),
                              params, rng, window)
      continue
    local = fpos[mask] * width + (e[mask] - base)
    cand, values, source = draw_passing(
        local, voted.votes[mask], num_frontier * width, params, rng)
    f, rest = np.divmod(cand, width)
    mapped = np.full(source.size, -1, dtype=np.int64)
    mapped[source >= 0] = np.flatnonzero(mask)[source[source >= 0]]
    parts.append((f * e_size + base + rest, values, mapped))
  candidates = np.concatenate([x[0] for x in parts])
  values = np.concatenate([x[1] for x in parts])
  source = np.concatenate([x[2] for x in parts])
  order = np.argsort(candidates, kind="stable")
  return candidates[order], values[order], source[order]


def central_thresholds(plan, r: int):
  """Round r's ``thresholds(word, num_candidates, num_blocks)`` with the server's
  discrete Gaussian or Laplace
  (:meth:`~triehh.theory.noisy_plan.NoisyPlan.params`)."""

  def of(word: bool, num_candidates: int,
         num_blocks: int | None = None) -> _Thresholds:
    params = plan.params(r, word, num_candidates, num_blocks)
    return _Thresholds(params.sigma, params.threshold,
                       params.false_positive_rate, plan.laplace)

  return of


def central_noise(plan, r: int, rng: np.random.Generator,
                  size: int) -> np.ndarray:
  """``size`` draws of round r's server noise: the discrete Gaussian of
  sigma_r, or the discrete Laplace of scale b_r."""
  draw = (discrete_noise.discrete_laplace if plan.laplace
          else discrete_noise.discrete_gaussian)
  return draw(rng, plan.round_sigma(r), size)


def _least_per_user(population: population_lib.Population,
                    key: np.ndarray) -> np.ndarray:
  """Whether each (user, word) entry has its user's smallest ``key``."""
  starts = population.user_offsets[:-1]
  filled = starts < population.user_offsets[1:]
  least = np.full(starts.size, np.inf)
  if key.size:
    least[filled] = np.minimum.reduceat(key, starts[filled])
  return key == least[population.entry_users]


def _planned_votes(population: population_lib.Population,
                   rng: np.random.Generator, frontier: _Frontier,
                   ext: Extensions, p: int, rate: float = 1.0) -> _Voted:
  """The explicit candidates and their votes, every user taking part: one
  word per user votes as in :func:`_votes`; with several words, each user
  votes for one of its words whose candidate exists this round (its prefix
  on the frontier), drawn by local frequency among those; a user with none
  abstains. Each user takes part with probability ``rate``."""
  if population.is_single_word:
    return _votes(population, rate, rng, frontier, ext, p)
  return _votes_for(population, _word_candidates(population, frontier, ext,
                                                 p), rng, rate)


def explicit_index(explicit: np.ndarray, ids: np.ndarray) -> np.ndarray:
  """``int64``: each candidate id's position in ``explicit`` (increasing
  ids), -1 where it is not there."""
  position = np.searchsorted(explicit, ids)
  inside = position < explicit.size
  inside[inside] = explicit[position[inside]] == ids[inside]
  return np.where(inside, position, -1).astype(np.int64)


def _explicit(cand: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """The words with a candidate (``cand[w] >= 0``), the distinct
  candidates (increasing), a word voting for each, and each such word's
  candidate's index."""
  valid = np.flatnonzero(cand >= 0)
  candidates, first, inverse = np.unique(cand[valid], return_index=True,
                                         return_inverse=True)
  return valid, candidates, valid[first].astype(np.int64), inverse


def entry_weights(population: population_lib.Population, cand: np.ndarray,
                  priority: np.ndarray | None = None) -> np.ndarray:
  """``int64 [nnz]`` each (user, word) entry's weight in its user's vote
  (several words per user): its local count if word w has a candidate
  (``cand[w] >= 0``) and, with ``priority`` (public, per candidate index),
  the smallest priority among its user's words with one; else 0. A user
  votes for one entry drawn in proportion to these weights."""
  entry_ok = cand[population.entry_word] >= 0
  if priority is not None and entry_ok.any():  # none: no candidate at all
    entry_ok &= _least_per_user(population, np.where(
        entry_ok, np.asarray(priority, dtype=np.float64)[
            np.maximum(cand[population.entry_word], 0)], np.inf))
  return np.where(entry_ok, population.entry_count, 0)


def _votes_for(population: population_lib.Population, cand: np.ndarray,
               rng: np.random.Generator, rate: float = 1.0,
               priority: np.ndarray | None = None) -> _Voted:
  """The explicit candidates and their votes when word w votes for
  candidate ``cand[w]`` (-1: none), each user taking part with
  probability ``rate``: one word per user, its word's; several, one of its
  words with a candidate, drawn by local frequency among those (none: it
  abstains). ``priority`` (public, per candidate index): several words
  draw only among a user's words whose candidate has the smallest. Its
  clients: the users drawn who vote, and those with no candidate (each a
  client with probability ``rate``, drawn by whoever needs them)."""
  valid, candidates, words, inverse = _explicit(cand)
  if population.is_single_word:
    users = np.bincount(inverse, weights=population.users_per_word[valid],
                        minlength=candidates.size).astype(np.int64)
    votes = (users if rate >= 1.0
             else sampling.poisson_cell_counts(users, rate, rng))
    return _Voted(candidates, votes, words, clients=int(votes.sum()),
                  clients_outside=population.num_users - int(users.sum()))
  cum = np.cumsum(entry_weights(population, cand, priority))
  starts = population.user_offsets[:-1]
  ends = population.user_offsets[1:]
  before = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0)
  totals = np.where(ends > starts, cum[np.maximum(ends - 1, 0)], 0) - before
  voters = np.flatnonzero(totals > 0)
  if rate < 1.0:  # Poisson sampling: each user independently
    voters = voters[rng.random(voters.size) < rate]
  target = before[voters] + rng.integers(0, totals[voters])
  entries = np.searchsorted(cum, target, side="right")
  chosen = cand[population.entry_word[entries]]
  votes = np.bincount(np.searchsorted(candidates, chosen),
                      minlength=candidates.size).astype(np.int64)
  holders = int((totals > 0).sum())
  return _Voted(candidates, votes, words, clients=int(voters.size),
                clients_outside=population.num_users - holders)
