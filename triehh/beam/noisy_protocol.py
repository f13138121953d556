"""The noisy trie as an Apache Beam pipeline over user-partitioned data.

The mechanism is :mod:`triehh.theory.noisy_trie`'s, the law
:func:`triehh.engines.noisy.run`'s. One word per user (several words per
user are not supported), k symbols per round, the alphabet given (it fixes
the public candidate set). Round r (r = 0, 1, ...), on prefixes of
``p = r * k`` symbols:

1. user ``u`` takes part with probability q, decided by
   :func:`triehh.beam.protocol.sampled` on ``(r + 1, u)`` under the run's
   seed (everyone at q = 1);
2. a taking-part user whose sequence's length-p prefix is on the frontier
   (a side input: the root at r = 0) emits ``(candidate, 1)``, the
   candidate numbered as the fast engine's (frontier position ``f``,
   :class:`~triehh.engines.noisy.Extensions` number ``e``: ``f * E + e``);
3. the votes are summed per candidate (``CombinePerKey(sum)``);
4. one step per seed sees the round's voted candidates and their sums (at
   most the vocabulary's size) with the frontier, and draws by
   :func:`triehh.engines.noisy.draw_passing` with round r's sigma and
   threshold (``params.at_round(r)``): a normal draw for each voted
   candidate, the others (no vote, ``F * E`` minus the voted) as a
   Binomial count of a uniform subset with values from the normal law
   above the threshold. Its generator is seeded from ``(seed, r)``. The
   passing candidates ending in ``$`` are released words (the empty word
   dropped), the others, false positives included, the next frontier.

The fast engine gives a normal draw to the candidates some word extends,
zero votes included; here those with no vote are among the others. Each
candidate passes independently either way, at ``alpha`` with no vote:
equal in law, not draw for draw. A seed's rounds stop when its frontier is
empty or after ``ceil((L + 1) / k)`` rounds. Several seeds run side by side
in one pipeline (keys carry the seed). The guarantee is
:func:`triehh.theory.noisy_trie.guarantee`'s, the fast engine's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import apache_beam as beam
import numpy as np

from triehh.beam import protocol
from triehh.core import alphabet as alphabet_lib
from triehh.core import population as population_lib
from triehh.core import validation
from triehh.engines import noisy
from triehh.theory import noisy_plan
from triehh.theory import noisy_trie


@dataclasses.dataclass(frozen=True)
class NoisyRounds:
  """The options of a Beam run of the noisy trie.

  Attributes:
    params: sigma, threshold, sampling rate, rounds, characters per round
      (a :class:`triehh.theory.noisy_trie.NoisyTrieParams`).
    alphabet: the characters words may use (with the end symbol).
    max_length: L.
    seeds: the runs' seeds (one run each, non-negative).
  """

  params: noisy_trie.NoisyTrieParams
  alphabet: alphabet_lib.Alphabet
  max_length: int
  seeds: tuple[int, ...] = (0,)

  def __post_init__(self):
    if isinstance(self.params, noisy_plan.NoisyPlan):
      raise ValueError("params: a plan of the noisy trie for an "
                       "upload_budget runs on the fast engine only (Beam "
                       "runs the classic rounds: NoisyTrieParams)")
    if not isinstance(self.params, noisy_trie.NoisyTrieParams):
      raise ValueError(f"params must be NoisyTrieParams, got "
                       f"{type(self.params).__name__}")
    if not isinstance(self.alphabet, alphabet_lib.Alphabet):
      raise ValueError(f"alphabet must be an Alphabet, got "
                       f"{type(self.alphabet).__name__}")
    validation.check_int("max_length", self.max_length)
    object.__setattr__(self, "seeds", protocol.check_seeds(self.seeds))
    noisy.checked_rounds(self.params, self.max_length)

  @property
  def num_rounds(self) -> int:
    """``ceil((L + 1) / k)``: the rounds a run may take."""
    return noisy_trie.rounds_for(self.max_length, self.params.chars_per_level)

  def extensions(self, r: int) -> noisy.Extensions:
    """Round r's extensions (numbered as the fast engine's)."""
    k = self.params.chars_per_level
    return noisy.Extensions.of(self.alphabet.size, k, self.max_length, r * k)


@dataclasses.dataclass(frozen=True)
class RoundStats:
  """One round of a run, as the mechanism sees it.

  Attributes:
    prefix_length: p, symbols of the frontier prefixes the round extends.
    num_frontier: F, frontier prefixes.
    num_candidates: ``F * E``.
    num_voted: candidates with at least one vote.
    num_passing: candidates whose noisy sum reached the threshold.
    num_released: passing candidates ending in ``$`` (the empty word too).
    expected_false_positives: ``alpha * F * E``.
    num_zero_vote_passing: passing candidates with no vote.
  """

  prefix_length: int
  num_frontier: int
  num_candidates: int
  num_voted: int
  num_passing: int
  num_released: int
  expected_false_positives: float
  num_zero_vote_passing: int


@dataclasses.dataclass(frozen=True)
class NoisyRun:
  """One seed's run.

  Attributes:
    words: the released words, by round, each round's by noisy sum (largest
      first).
    noisy_counts: ``float64 [len(words)]`` their noisy sums.
    levels: per round, its :class:`RoundStats`.
    guarantee: what the parameters guarantee (None unless a delta is given).
    passing: per round, its passing candidates (prefixes, and words with
      their ``$``).
  """

  words: tuple[str, ...]
  noisy_counts: np.ndarray
  levels: tuple[RoundStats, ...]
  guarantee: object = None
  passing: tuple[tuple[str, ...], ...] = ()


def codes_of(word: str, rounds: NoisyRounds) -> tuple[str, list[int]]:
  """A word's sequence (:func:`triehh.beam.protocol.sequence`) and its
  symbols' codes; a ValueError names a character outside the alphabet."""
  return sequence_codes(word, rounds.alphabet, rounds.max_length)


def sequence_codes(word: str, alphabet: alphabet_lib.Alphabet,
                   max_length: int) -> tuple[str, list[int]]:
  """:func:`codes_of` for an alphabet and L given."""
  seq = protocol.sequence(word, max_length, alphabet.end_symbol)
  table = alphabet.code_table()
  table[alphabet.end_symbol] = alphabet.end_code
  try:
    return seq, [table[c] for c in seq]
  except KeyError as e:
    raise ValueError(f"word {word!r} has the character {e.args[0]!r}, "
                     f"which is not in the alphabet") from None


def _votes(user_word, r: int, frontiers: dict, rounds: NoisyRounds):
  """The votes of one user in round r of every seed."""
  user, word = user_word
  seq, codes = codes_of(word, rounds)
  ext = rounds.extensions(r)
  p = r * ext.chars
  if len(seq) <= p:
    return
  e = extension(codes, p, ext, rounds.alphabet.end_code)
  if e < 0:
    return
  prefix = seq[:p]
  rate = rounds.params.sampling_rate
  for seed in rounds.seeds:
    position = frontiers.get(seed, {}).get(prefix)
    if position is not None and (rate >= 1.0 or protocol.sampled(
        seed, r + 1, user, rate)):
      yield (seed, position * ext.size + e), 1


def extension(codes, p: int, ext: noisy.Extensions, end_code: int) -> int:
  """The number of the extension ``codes[p:p + k]`` of a sequence's
  length-p prefix (symbols past its end padded), as the fast engine
  numbers it; -1 if it has none here."""
  chunk = list(codes[p:p + ext.chars])
  chunk += [-1] * (ext.chars - len(chunk))
  return int(ext.encode(np.array([chunk]), end_code)[0])


def _positions(seed_prefixes):
  """``(seed, {prefix: frontier position})`` for the votes' side input."""
  seed, prefixes = seed_prefixes
  return seed, {prefix: f for f, prefix in enumerate(prefixes)}


def _noisy_round(seed_joined, r: int, rounds: NoisyRounds):
  """Step 4 for one seed: released words (main output), the next frontier
  and the round's stats (tagged)."""
  seed, joined = seed_joined
  frontiers = list(joined["frontier"])
  if not frontiers:
    return
  frontier = frontiers[0]
  voted = sorted(joined["votes"])
  params = rounds.params.at_round(r)
  ext = rounds.extensions(r)
  explicit = np.array([c for c, _ in voted], dtype=np.int64)
  votes = np.array([v for _, v in voted], dtype=np.int64)
  num_candidates = len(frontier) * ext.size
  rng = np.random.default_rng([int(seed), r])
  candidates, values, source = noisy.draw_passing(
      explicit, votes, num_candidates, params, rng)
  fpos, e = np.divmod(candidates, ext.size)
  alphabet = rounds.alphabet
  texts = [frontier[f] + alphabet.decode(row) for f, row in
           zip(fpos, ext.decode(e, alphabet.end_code))]
  ends = ext.ends(e)
  for i in np.argsort(-values, kind="stable"):
    if ends[i] and len(texts[i]) > 1:
      yield seed, r, texts[i][:-1], float(values[i])
  nxt = tuple(t for t, end in zip(texts, ends) if not end)
  if nxt:
    yield beam.pvalue.TaggedOutput("frontier", (seed, nxt))
  yield beam.pvalue.TaggedOutput("passing", (seed, r, tuple(texts)))
  stats = RoundStats(
      prefix_length=r * ext.chars, num_frontier=len(frontier),
      num_candidates=num_candidates, num_voted=len(voted),
      num_passing=int(candidates.size), num_released=int(ends.sum()),
      expected_false_positives=params.false_positive_rate * num_candidates,
      num_zero_vote_passing=int((source < 0).sum()))
  yield beam.pvalue.TaggedOutput("stats",
                                 (seed, r, dataclasses.astuple(stats)))


def expand(users, rounds: NoisyRounds):
  """The rounds on a PCollection of ``(user, word)``; returns the
  PCollections of released ``(seed, round, word, noisy sum)``, of
  ``(seed, round, RoundStats fields)`` and of ``(seed, round, the passing
  candidates)`` (prefixes, and words with their ``$``)."""
  users = protocol.one_word_per_user(users, rounds.alphabet.end_symbol)
  frontier = users.pipeline | "Root" >> beam.Create(
      [(seed, ("",)) for seed in rounds.seeds])
  words, stats, passing = [], [], []
  for r in range(rounds.num_rounds):
    side = beam.pvalue.AsDict(frontier | f"Positions{r}" >> beam.Map(
        _positions))
    votes = (users | f"Vote{r}" >> beam.FlatMap(_votes, r, side, rounds)
             | f"Sum{r}" >> beam.CombinePerKey(sum)
             | f"BySeed{r}" >> beam.MapTuple(
                 lambda key, votes: (key[0], (key[1], votes))))
    out = ({"votes": votes, "frontier": frontier}
           | f"Join{r}" >> beam.CoGroupByKey()
           | f"Noise{r}" >> beam.FlatMap(
               _noisy_round, r, rounds).with_outputs(
                   "frontier", "stats", "passing", main="words"))
    frontier = out.frontier
    words.append(out.words)
    stats.append(out.stats)
    passing.append(out.passing)
  return (tuple(words) | "Words" >> beam.Flatten(),
          tuple(stats) | "Stats" >> beam.Flatten(),
          tuple(passing) | "Passing" >> beam.Flatten())


def check_user_words(user_words: Sequence[tuple[object, str]],
                     rounds: NoisyRounds) -> None:
  """A ValueError naming a user with several words or a word outside the
  alphabet."""
  seen = set()
  for user, word in user_words:
    if user in seen:
      raise ValueError(f"user {user!r} has several words; the noisy trie "
                       f"on Beam takes one word per user")
    seen.add(user)
    codes_of(word, rounds)


def runs_by_seed(words, stats, rounds: NoisyRounds, guarantee=None,
                 passing=()) -> dict[int, NoisyRun]:
  """Seed -> its :class:`NoisyRun`, from the pipeline's outputs."""
  released = {seed: {} for seed in rounds.seeds}
  for seed, r, word, value in words:
    released[seed].setdefault(r, []).append((word, value))
  levels = {seed: {} for seed in rounds.seeds}
  for seed, r, fields in stats:
    levels[seed][r] = RoundStats(*fields)
  passed = {seed: {} for seed in rounds.seeds}
  for seed, r, texts in passing:
    passed[seed][r] = tuple(texts)
  out = {}
  for seed in rounds.seeds:
    pairs = [pair for r in sorted(released[seed]) for pair in sorted(
        released[seed][r], key=lambda wv: -wv[1])]
    out[seed] = NoisyRun(
        words=tuple(w for w, _ in pairs),
        noisy_counts=np.array([v for _, v in pairs], dtype=np.float64),
        levels=tuple(levels[seed][r] for r in sorted(levels[seed])),
        guarantee=guarantee,
        passing=tuple(passed[seed][r] for r in sorted(passed[seed])))
  return out


def run(user_words: Sequence[tuple[object, str]], rounds: NoisyRounds, *,
        delta: float | None = None, pipeline_opts=None
        ) -> dict[int, NoisyRun]:
  """Runs the noisy trie on in-memory ``(user, word)`` pairs (tests, small
  data); seed -> its run, carrying :func:`guarantee` at ``delta`` if
  given."""
  user_words = list(user_words)
  check_user_words(user_words, rounds)
  promise = None if delta is None else guarantee(rounds, delta)

  def build(p):
    users = p | "Users" >> beam.Create(protocol.checked_rows(
        user_words, rounds.alphabet.end_symbol))
    return dict(zip(("words", "stats", "passing"), expand(users, rounds)))

  found = protocol.collected(build, pipeline_opts)
  return runs_by_seed(found["words"], found["stats"], rounds, promise,
                      found["passing"])


def run_noisy(population: population_lib.Population,
              params: noisy_trie.NoisyTrieParams,
              rng: np.random.Generator | int | None = None, *,
              pipeline_opts=None) -> noisy.NoisyTrieResult:
  """The noisy trie's runner on the ``"beam"`` engine
  (``triehh.discover(users, NoisyTarget(...), engine="beam")``): the
  population's ``(user, word)`` rows through :func:`run`, one run whose
  seed (the users' sampling hash and the rounds' noise) is drawn from
  ``rng`` (fresh entropy when :func:`triehh.discover` is given no seed),
  as the fast engine's :class:`~triehh.engines.noisy.NoisyTrieResult`.
  Which released words and passing candidates no user's word makes
  (``false_words``, each round's ``num_phantom`` and
  ``num_false_positives``) is read off the population afterwards
  (simulation only). One word per user (a ValueError otherwise)."""
  if not population.is_single_word:
    raise ValueError("the noisy trie on Beam takes one word per user; this "
                     "population has several: use engine='fast' or 'tff'")
  seed = int(np.random.default_rng(rng).integers(0, 2**62))
  rounds = NoisyRounds(params, population.alphabet, population.max_length,
                       seeds=(seed,))
  vocabulary = [str(w) for w in population.vocabulary]
  rows = [(user, vocabulary[w]) for user, w in enumerate(population.user_word)]
  one = run(rows, rounds, pipeline_opts=pipeline_opts)[seed]
  end = population.alphabet.end_symbol
  held = {seq[:i] for seq in (protocol.sequence(w, population.max_length, end)
                              for w in vocabulary)
          for i in range(len(seq) + 1)}
  levels, frontier = [], ("",)
  for stats, passing in zip(one.levels, one.passing):
    levels.append(noisy.LevelStats(
        prefix_length=stats.prefix_length, num_frontier=stats.num_frontier,
        num_phantom=sum(1 for t in frontier if t not in held),
        num_candidates=stats.num_candidates, num_voted=stats.num_voted,
        num_passing=stats.num_passing, num_released=stats.num_released,
        expected_false_positives=stats.expected_false_positives,
        num_zero_vote=stats.num_candidates - stats.num_voted,
        num_zero_vote_passing=stats.num_zero_vote_passing,
        num_false_positives=sum(1 for t in passing if t not in held)))
    frontier = tuple(t for t in passing if not t.endswith(end))
  false = np.array([protocol.sequence(w, population.max_length, end)
                    not in held for w in one.words], dtype=bool)
  return noisy.NoisyTrieResult(
      words=one.words, noisy_counts=one.noisy_counts.astype(np.int64),
      false_words=false, levels=tuple(levels))


def guarantee(rounds: NoisyRounds, delta: float):
  """What the rounds guarantee at ``delta``: the fast engine's
  (:func:`triehh.theory.noisy_trie.guarantee`)."""
  return noisy_trie.guarantee(rounds.params, delta)
