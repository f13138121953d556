"""TrieHH's rounds as an Apache Beam pipeline over user-partitioned data.

One word per user, Poisson sampling (the fast engine's ``sampling_rate``
mode, :func:`triehh.engines.fast.run`). Round ``d`` (1 .. L + 1):

1. user ``u`` takes part with probability q, decided by a keyed hash of
   ``(level, user)`` under the run's seed (:func:`sampled`: BLAKE2b keyed
   with the seed, its first 8 bytes as a uniform in [0, 1)), so that each
   user and level is an independent coin, the same on every worker and on
   every re-run;
2. a sampled user whose word's length-``(d - 1)`` prefix was kept at round
   ``d - 1`` (the trie so far, a side input; the root at ``d = 1``) emits
   ``(length-d prefix, 1)``;
3. the votes are summed per prefix (``CombinePerKey(sum)``) and the
   prefixes with at least theta votes are kept.

A word is a sequence as :class:`~triehh.core.population.Population`
encodes it (:func:`sequence`): lower-cased, with the end symbol after at
most L characters, truncated with none after more. The rounds are unrolled
in one pipeline, each reading the previous one's kept prefixes; once a
round keeps nothing, the following rounds receive no votes (the trie stops
growing, the fast engine's stopping rule). Several seeds run side by side
in one pipeline, each its own run (keys carry the seed).

The guarantee is the Poisson accountant's
(:data:`triehh.theory.accountants.POISSON`) for the same theta, rate, n and
L: the rounds are the mechanism it accounts for.
"""

from __future__ import annotations

import dataclasses
import hashlib
import numbers
import struct
from collections.abc import Callable, Iterable, Sequence

import apache_beam as beam

from triehh.core import alphabet as alphabet_lib
from triehh.core import choices
from triehh.core import validation
from triehh.theory import accountants
from triehh.theory import mechanism as mechanism_lib

_TWO_64 = float(2**64)


def sequence(word: str, max_length: int,
             end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL) -> str:
  """The symbols a user holding ``word`` votes with (module docstring)."""
  word = word.lower()
  return word + end_symbol if len(word) <= max_length else word[:max_length]


def uniform(seed: int, level: int, user) -> float:
  """A uniform in [0, 1) from a keyed hash of ``(level, user)``."""
  digest = hashlib.blake2b(repr((level, user)).encode("utf-8"),
                           digest_size=8,
                           key=str(int(seed)).encode("ascii")).digest()
  return struct.unpack("<Q", digest)[0] / _TWO_64


def sampled(seed: int, level: int, user, rate: float) -> bool:
  """Whether ``user`` takes part in round ``level`` of run ``seed``."""
  return uniform(seed, level, user) < rate


@dataclasses.dataclass(frozen=True)
class Rounds:
  """The options of a Beam run of TrieHH.

  Attributes:
    theta: the vote threshold.
    sampling_rate: q, each user's probability of taking part in a round.
    max_length: L.
    seeds: the runs' seeds (one run each).
    end_symbol: the end-of-word symbol.
  """

  theta: int
  sampling_rate: float
  max_length: int
  seeds: tuple[int, ...] = (0,)
  end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL

  def __post_init__(self):
    validation.check_int("theta", self.theta)
    choices.check_sampling_rate(self.sampling_rate)
    validation.check_int("max_length", self.max_length)
    object.__setattr__(self, "seeds", check_seeds(self.seeds))
    if not isinstance(self.end_symbol, str) or len(self.end_symbol) != 1:
      raise ValueError("end_symbol must be one character, got "
                       f"{self.end_symbol!r}")


def check_seeds(seeds) -> tuple[int, ...]:
  """``seeds`` as a tuple of Python ints (what Beam's coders encode), or a
  TypeError/ValueError unless they are a sequence of whole numbers >= 0,
  at least one."""
  if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
    raise TypeError("seeds must be a sequence (a list or tuple) of "
                    f"non-negative integers, got {type(seeds).__name__}")
  if not seeds:
    raise ValueError("seeds is empty: give at least one run's seed")
  for seed in seeds:
    if (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
        or seed < 0):
      raise ValueError(f"seeds must be non-negative integers, got {seed!r}")
  return tuple(int(seed) for seed in seeds)


def _checked_pair(user, word, end_symbol: str):
  """One ``(user, word)`` row, checked before Beam encodes it: a user id
  Beam's coders encode deterministically (:func:`_user_key`) and a
  non-empty word of valid Unicode without the end symbol; else a
  TypeError/ValueError naming the user."""
  user = _user_key(user)
  if not isinstance(word, str) or not word:
    raise TypeError(f"user {user!r}: a word must be a non-empty string, "
                    f"got {word!r:.40}")
  if end_symbol in word:
    raise ValueError(f"user {user!r}: the word {word!r:.40} holds the end "
                     f"symbol {end_symbol!r}")
  try:
    word.encode("utf-8")
  except UnicodeEncodeError:
    raise ValueError(f"user {user!r}: the word {word!r:.40} is not valid "
                     "Unicode (a lone surrogate)") from None
  return user, word


def _user_key(user):
  """``user`` as a key Beam's coders encode deterministically: a str, int
  (numpy integers become ints), bytes, or a tuple of them (the shard and
  row of a file's line); else a TypeError."""
  if isinstance(user, numbers.Integral) and not isinstance(user, bool):
    return int(user)
  if isinstance(user, (str, bytes)):
    return user
  if isinstance(user, tuple) and user:
    return tuple(_user_key(part) for part in user)
  raise TypeError(f"user ids must be strings, integers or bytes (or tuples "
                  f"of them), got {type(user).__name__} {user!r:.40}")


def checked_rows(user_words, end_symbol: str) -> list[tuple[object, str]]:
  """In-memory ``(user, word)`` pairs, each checked as the pipeline checks
  it (:func:`_checked_pair`), before ``beam.Create`` encodes them."""
  rows = []
  for row in user_words:
    if not isinstance(row, tuple) or len(row) != 2:
      raise TypeError(f"user_words must hold (user, word) pairs, got "
                      f"{row!r:.40}")
    rows.append(_checked_pair(*row, end_symbol))
  return rows


def one_word_per_user(users, end_symbol: str):
  """``users`` (``(user, word)`` pairs) checked (:func:`_checked_pair`),
  then each user once. A user given twice would vote twice a round,
  outside the guarantee: the pipeline fails naming the user."""

  def only(user, words):
    words = list(words)
    if len(words) != 1:
      raise ValueError(
          f"user {user!r} has {len(words)} rows: the Beam rounds take one "
          "word per user (a user voting twice a round is outside the "
          "guarantee)")
    return user, words[0]

  return (users
          | "CheckRows" >> beam.MapTuple(
              lambda user, word: _checked_pair(user, word, end_symbol))
          | "ByUser" >> beam.GroupByKey()
          | "OneWordPerUser" >> beam.MapTuple(only))


def _votes(user_word, level: int, kept: dict, rounds: Rounds):
  """The votes of one user in round ``level`` of every seed."""
  user, word = user_word
  seq = sequence(word, rounds.max_length, rounds.end_symbol)
  if len(seq) < level:
    return
  parent, prefix = seq[:level - 1], seq[:level]
  for seed in rounds.seeds:
    if (level == 1 or (seed, parent) in kept) and sampled(
        seed, level, user, rounds.sampling_rate):
      yield (seed, prefix), 1


def expand(users, rounds: Rounds):
  """The rounds on a PCollection of ``(user, word)``; returns the
  PCollection of kept ``(seed, level, prefix, votes)``."""
  users = one_word_per_user(users, rounds.end_symbol)
  kept_levels = []
  kept = None
  for level in range(1, rounds.max_length + 2):
    side = {} if kept is None else beam.pvalue.AsDict(kept)
    votes = users | f"Vote{level}" >> beam.FlatMap(
        _votes, level, side, rounds)
    kept = (votes | f"Sum{level}" >> beam.CombinePerKey(sum)
            | f"Threshold{level}" >> beam.Filter(
                lambda kv, theta: kv[1] >= theta, rounds.theta))
    kept_levels.append(kept | f"Level{level}" >> beam.MapTuple(
        lambda key, votes, level=level: (key[0], level, key[1], votes)))
  return tuple(kept_levels) | "Trie" >> beam.Flatten()


def read_users(p, spec, paths: Sequence[str]):
  """``single``: the ``(user, word)`` PCollection of the files ``paths``,
  each user's rows in one file, read by the in-memory loader's functions
  (:func:`triehh.beam.shards.read_user_words`)."""
  from triehh.beam import shards  # pylint: disable=g-import-not-at-top
  if spec.setting != "single":
    raise ValueError(f"the Beam rounds run one word per user: read the "
                     f"files with setting 'single', not {spec.setting!r}")
  return (p | "Shards" >> beam.Create(list(enumerate(paths)))
          | "Spread" >> beam.Reshuffle()
          | "UserWords" >> beam.FlatMapTuple(
              lambda index, path: shards.read_user_words(spec, index, path)))


def levels_by_seed(kept: Iterable[tuple[int, int, str, int]],
                   rounds: Rounds) -> dict[int, list[dict[str, int]]]:
  """Seed -> its trie's levels (prefix -> votes), up to the last kept."""
  out = {seed: [] for seed in rounds.seeds}
  for seed, level, prefix, votes in kept:
    levels = out[seed]
    while len(levels) < level:
      levels.append({})
    levels[level - 1][prefix] = votes
  return out


def heavy_hitters(levels: Sequence[dict[str, int]],
                  end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL
                  ) -> dict[str, int]:
  """The discovered words (kept prefixes ending in the end symbol) and the
  votes that found them."""
  return {prefix[:-1]: votes for level in levels
          for prefix, votes in level.items() if prefix.endswith(end_symbol)}


def collected(build: Callable[[beam.Pipeline], dict],
              pipeline_opts=None) -> dict[str, list]:
  """Runs one pipeline and reads its outputs back: ``build(pipeline)``
  returns name -> PCollection of JSON-able elements (small ones: a run's
  released words and statistics); each is written to a temporary JSON
  Lines file, read back as a list under its name once the pipeline has
  run (``pipeline_opts``: Beam's options, by default
  :func:`triehh.beam.ingest.options`)."""
  import json  # pylint: disable=g-import-not-at-top
  import os  # pylint: disable=g-import-not-at-top
  import tempfile  # pylint: disable=g-import-not-at-top
  from triehh.beam import ingest  # pylint: disable=g-import-not-at-top
  with tempfile.TemporaryDirectory() as tmp:
    paths = {}
    with beam.Pipeline(options=pipeline_opts or ingest.options()) as p:
      for name, pcoll in build(p).items():
        paths[name] = os.path.join(tmp, f"{name}.jsonl")
        _ = (pcoll | f"Format{name}" >> beam.Map(json.dumps)
             | f"Write{name}" >> beam.io.WriteToText(
                 paths[name], num_shards=1, shard_name_template=""))
    found = {}
    for name, path in paths.items():
      with open(path, encoding="utf-8") as f:
        found[name] = [json.loads(line) for line in f if line.strip()]
  return found


def run(user_words: Sequence[tuple[object, str]], rounds: Rounds, *,
        pipeline_opts=None) -> dict[int, list[dict[str, int]]]:
  """Runs the rounds on in-memory ``(user, word)`` pairs (tests, small
  data); seed -> the trie's levels."""

  def build(p):
    users = p | "Users" >> beam.Create(checked_rows(user_words,
                                                    rounds.end_symbol))
    return {"trie": expand(users, rounds)}

  found = collected(build, pipeline_opts)["trie"]
  return levels_by_seed([tuple(row) for row in found], rounds)


def guarantee(rounds: Rounds, num_users: int, *, delta: float | None = None,
              allow_no_guarantee: bool = False) -> mechanism_lib.Guarantee:
  """The Poisson accountant's guarantee for these rounds on ``num_users``
  users (a ValueError where it gives none, unless allowed)."""
  mechanism = mechanism_lib.Mechanism(
      theta=rounds.theta, sampling=choices.POISSON,
      sampling_rate=rounds.sampling_rate, delta=delta,
      allow_no_guarantee=allow_no_guarantee)
  return accountants.POISSON.guarantee(mechanism, num_users,
                                       rounds.max_length)
