"""What a TrieHH run reports: its parameters and its result.

The ``(epsilon, delta)`` of a run covers the *set* of discovered words and
prefixes (:attr:`DiscoveryResult.words`, the trie's prefixes), never how
many votes they got: vote counts are in :attr:`DiscoveryResult.unprotected`,
for simulation studies only (``docs/privacy.md``). Protected counts of the
discovered words come from a separate counting phase, :class:`WordCounts`
(``docs/counts.md``).
"""

from __future__ import annotations

import dataclasses
import math

from triehh.core import release
from triehh.core import trie as trie_lib


@dataclasses.dataclass(frozen=True)
class RunParams:
  """The parameters of a run and the privacy guarantee they give.

  Attributes:
    theta: vote threshold.
    gamma: ``batch_size / sqrt(n)``, the factor actually used.
    batch_size: m, users sampled per round (over all sub-rounds); under
      Poisson sampling the expected number, ``round(sampling_rate * n)``.
    epsilon, delta: the guarantee for these parameters, obtained as
      ``accounting`` says (``inf`` and 1 when ``guarantee`` says there is
      none).
    n: number of users.
    max_length: L, the maximum characters per word.
    levels: trie levels accounted for privacy: ``max_length + 1`` (the end
      symbol is a level too).
    num_sub_rounds: batches per round.
    max_num_prefixes: cap on unfinished extensions kept per round, or None.
    target_epsilon, target_delta: what the caller asked for, if calibrated.
    guarantee: how epsilon and delta were obtained, in words.
    word_choice: when users with several words choose the word they vote
      with: ``"per_round"`` or ``"per_run"`` (:mod:`triehh.discovery.word_choice`).
    accounting: the proof ``(epsilon, delta)`` come from:
      ``"Theorem 1 (one direction)"``, ``"per-round composition (L*delta),
      one direction"`` (several words redrawn every round), ``"Poisson
      accountant (two-sided)"``, ``"Poisson accountant (two-sided,
      replace-one)"`` or ``"none"``; the relations it covers are in
      :attr:`adjacency`.
    covers: which outputs the guarantee covers (never the vote counts) and
      in which direction(s).
    sampling: ``"fixed"`` (m users per round, the paper's) or ``"poisson"``
      (each user takes part with probability ``sampling_rate``).
    sampling_rate: q under Poisson sampling, else None.
    adjacency: the neighbouring relations the guarantee covers, as
      dp_accounting names them, comma-separated (``"ADD_OR_REMOVE_ONE,
      REPLACE_SPECIAL"``; :mod:`triehh.theory.adjacency`); empty without a
      guarantee, or in a record written before it was named.
    n_source: where the n the parameters were derived from comes from:
      ``"declared"`` (the caller's public population size),
      ``"data"`` (read off the population, |D|: the guarantee then holds
      only between neighbours of the same size) or ``"unused"`` (the
      parameters do not depend on n).
    population_size: the declared (public) population size, if any.
  """

  theta: int
  gamma: float
  batch_size: int
  epsilon: float
  delta: float
  n: int
  max_length: int
  levels: int
  num_sub_rounds: int = 1
  max_num_prefixes: int | None = None
  target_epsilon: float | None = None
  target_delta: float | None = None
  guarantee: str = ""
  word_choice: str = "per_round"
  accounting: str = ""
  covers: str = ""
  sampling: str = "fixed"
  sampling_rate: float | None = None
  adjacency: str = ""
  n_source: str = ""
  population_size: int | None = None

  @property
  def has_guarantee(self) -> bool:
    return math.isfinite(self.epsilon)

  @property
  def adjacencies(self) -> tuple[str, ...]:
    """The names in :attr:`adjacency`, in order."""
    return tuple(a.strip() for a in self.adjacency.split(",") if a.strip())

  @property
  def two_sided(self) -> bool:
    """Whether the guarantee is proven in both directions (Poisson
    sampling); fixed-size runs are covered in the direction of the paper's
    proof only (``docs/privacy.md``)."""
    return self.has_guarantee and self.sampling == "poisson"

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Unprotected:
  """Vote counts of a run: NOT covered by the (epsilon, delta) guarantee.

  Theorem 1 covers which words and prefixes are output, not how many votes
  they got (the paper: frequencies need a separate DP mechanism). Use these
  for simulation studies only; never release them as private.

  Attributes:
    votes: discovered word -> votes in the round that found it, most voted
      first (ties alphabetically).
    prefix_votes: discovered unfinished prefix -> votes in its round, by
      depth, then as the trie orders them.
    votes_per_round: votes cast per round (including votes below theta).
    sampled_per_round: users sampled per round (all sub-rounds).
    num_votes: votes cast over the run.
  """

  votes: dict[str, int]
  prefix_votes: dict[str, int]
  votes_per_round: tuple[int, ...]
  sampled_per_round: tuple[int, ...]
  num_votes: int

  @classmethod
  def of(cls, trie: trie_lib.Trie) -> "Unprotected":
    """The vote counts recorded in ``trie``."""
    prefix_votes = {}
    for depth in range(1, trie.depth + 1):
      level = trie.levels[depth - 1]
      prefix_votes.update(zip(trie.prefixes(depth),
                              (int(v) for v in level.prefix_votes)))
    per_round = tuple(lv.num_votes for lv in trie.levels)
    return cls(votes=trie.heavy_hitters(), prefix_votes=prefix_votes,
               votes_per_round=per_round,
               sampled_per_round=tuple(lv.num_sampled for lv in trie.levels),
               num_votes=sum(per_round))


@dataclasses.dataclass(frozen=True)
class WordCounts:
  """Differentially private counts of published words (``docs/counts.md``).

  Slot ``k < K`` is ``words[k]``; the "other" slot holds the users whose
  word is not among them. Estimates and intervals are users (not votes):
  ``estimate[k] = noisy_sums[k] / sample_rate``; shares divide by ``n``.
  The interval is a normal approximation covering both the Gaussian noise
  and the sampling error (:mod:`triehh.discovery.counts`).

  Attributes:
    words: the published words counted, in the order given.
    estimate, lower, upper: per word, the estimated users holding it and
      its ``confidence`` interval.
    other_estimate, other_lower, other_upper: the same for "other".
    noisy_sums: the K + 1 released noisy sums (words, then "other").
    n: the population size the shares divide by.
    confidence: the intervals' nominal coverage.
    noise_std, sample_rate: sigma and q of the counting phase.
    epsilon, delta: the guarantee covering these counts, and the
      discovered words when they come from a run (then the total).
    counting_epsilon, counting_delta: the counting phase alone.
    discovery_epsilon, discovery_delta: the discovery phase (None for
      counts of a given list).
    accounting: how ``(epsilon, delta)`` were obtained, and in which
      direction(s).
  """

  words: tuple[str, ...]
  estimate: tuple[float, ...]
  lower: tuple[float, ...]
  upper: tuple[float, ...]
  other_estimate: float
  other_lower: float
  other_upper: float
  noisy_sums: tuple[float, ...]
  n: int
  confidence: float
  noise_std: float
  sample_rate: float
  epsilon: float
  delta: float
  counting_epsilon: float
  counting_delta: float
  discovery_epsilon: float | None = None
  discovery_delta: float | None = None
  accounting: str = ""

  @property
  def shares(self) -> tuple[float, ...]:
    """Estimated share of the n users holding each word."""
    return tuple(e / self.n for e in self.estimate)

  @property
  def share_lower(self) -> tuple[float, ...]:
    return tuple(e / self.n for e in self.lower)

  @property
  def share_upper(self) -> tuple[float, ...]:
    return tuple(e / self.n for e in self.upper)

  def as_dict(self) -> dict[str, float]:
    """Word -> estimated users, in the order of :attr:`words`."""
    return dict(zip(self.words, self.estimate))

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


@dataclasses.dataclass
class DiscoveryResult:
  """The outcome of one TrieHH run.

  The privacy guarantee in ``params`` covers :attr:`words` and the set of
  prefixes in ``trie`` (``params.covers``). Every vote count (in
  :attr:`unprotected`, ``heavy_hitters``' values, ``trie``'s ``*_votes``,
  :attr:`votes_per_round`, :attr:`num_votes`, the values of
  :attr:`frequent_prefixes`) is not covered: simulation studies only.

  Attributes:
    heavy_hitters: discovered word -> votes in the round that completed it,
      most voted first. Its values (and order) are unprotected vote counts,
      not covered by the (epsilon, delta) guarantee; release :attr:`words`.
    params: the :class:`RunParams`.
    trie: the grown :class:`~triehh.core.trie.Trie` (one level per round; its
      vote counts are unprotected).
    engine: the engine that ran ("fast" or "tff").
    seed: the seed of the run (None: fresh entropy, recorded nowhere).
    seconds: wall time of the run, population encoding excluded.
    counts: the protected counts of :attr:`words`
      (:class:`WordCounts`, whose ``epsilon, delta`` are the total of both
      phases), or None when counts were not requested.
    guarantee: the :class:`~triehh.theory.mechanism.Guarantee` covering
      :attr:`words` (and :attr:`counts`, when counted: then the total).
    notes: one-line statements about the result that its public values
      explain (no word found: how many holders a word needs against n);
      empty when there is nothing to say.

  A :class:`~triehh.core.release.Release` of the ``"triehh"`` mechanism.
  """

  mechanism = "triehh"

  heavy_hitters: dict[str, int]
  params: RunParams
  trie: trie_lib.Trie
  engine: str
  seed: int | None
  seconds: float
  counts: WordCounts | None = None
  guarantee: object = None
  notes: tuple[str, ...] = ()

  @property
  def words(self) -> tuple[str, ...]:
    """The discovered words, covered by the guarantee.

    Ordered by the round that found them (shorter words first), then
    alphabetically: an order that depends only on the output set, never on
    vote counts.
    """
    found = []
    for level in self.trie.levels:
      found.extend(sorted(self.trie.alphabet.decode_word(c)
                          for c in level.terminated))
    return tuple(found)

  @property
  def unprotected(self) -> Unprotected:
    """The run's vote counts: NOT covered by the (epsilon, delta) guarantee;
    simulation studies only."""
    return Unprotected.of(self.trie)

  @property
  def rounds(self) -> int:
    """Rounds run (each grows at most one level)."""
    return self.trie.depth

  @property
  def per_round(self) -> tuple[release.RoundStats, ...]:
    """Each round's candidates, the prefixes and words it kept, and the
    users it sampled."""
    return tuple(release.RoundStats(
        candidates=level.num_candidates,
        kept=level.prefixes.shape[0] + level.terminated.shape[0],
        sampled=level.num_sampled) for level in self.trie.levels)

  @property
  def votes_per_round(self) -> list[int]:
    """Votes cast per round: unprotected (see :attr:`unprotected`)."""
    return [lv.num_votes for lv in self.trie.levels]

  @property
  def sampled_per_round(self) -> list[int]:
    """Users sampled per round (also in :attr:`unprotected`)."""
    return [lv.num_sampled for lv in self.trie.levels]

  @property
  def num_participants(self) -> int:
    """User-rounds sampled over the run (a user sampled twice counts twice)."""
    return sum(self.sampled_per_round)

  @property
  def num_votes(self) -> int:
    """Votes cast over the run (sampled users whose prefix was on the trie),
    votes below theta included: unprotected (see :attr:`unprotected`)."""
    return sum(self.votes_per_round)

  @property
  def frequent_prefixes(self) -> dict[str, int]:
    """Frequent prefixes that never became complete words -> their votes.

    The set of keys is covered by the guarantee; the values are unprotected
    vote counts.
    """
    return self.trie.frequent_prefixes()
