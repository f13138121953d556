"""What a TrieHH run reports: its parameters and its result."""

from __future__ import annotations

import dataclasses
import math

from triehh import trie as trie_lib


@dataclasses.dataclass(frozen=True)
class RunParams:
  """The parameters of a run and the privacy guarantee they give.

  Attributes:
    theta: vote threshold.
    gamma: ``batch_size / sqrt(n)``, the factor actually used.
    batch_size: m, users sampled per round (over all sub-rounds).
    epsilon, delta: the guarantee of Theorem 1 for these parameters
      (``inf`` and 1 when ``guarantee`` says there is none).
    n: number of users.
    max_length: L, the maximum characters per word.
    levels: trie levels accounted for privacy: ``max_length + 1`` (the end
      symbol is a level too).
    num_sub_rounds: batches per round.
    max_num_prefixes: cap on extensions kept per round, or None.
    target_epsilon, target_delta: what the caller asked for, if calibrated.
    guarantee: how epsilon and delta were obtained, in words.
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

  @property
  def has_guarantee(self) -> bool:
    return math.isfinite(self.epsilon)

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


@dataclasses.dataclass
class DiscoveryResult:
  """The outcome of one TrieHH run.

  Attributes:
    heavy_hitters: discovered word -> votes in the round that completed it,
      most voted first.
    params: the :class:`RunParams`.
    trie: the grown :class:`~triehh.trie.Trie` (one level per round).
    engine: the engine that ran ("fast" or "tff").
    seed: the seed of the run.
    seconds: wall time of the run, population encoding excluded.
  """

  heavy_hitters: dict[str, int]
  params: RunParams
  trie: trie_lib.Trie
  engine: str
  seed: int | None
  seconds: float

  @property
  def rounds(self) -> int:
    """Rounds run (each grows at most one level)."""
    return self.trie.depth

  @property
  def votes_per_round(self) -> list[int]:
    return [lv.num_votes for lv in self.trie.levels]

  @property
  def sampled_per_round(self) -> list[int]:
    return [lv.num_sampled for lv in self.trie.levels]

  @property
  def num_participants(self) -> int:
    """User-rounds sampled over the run (a user sampled twice counts twice)."""
    return sum(self.sampled_per_round)

  @property
  def num_votes(self) -> int:
    """Votes cast over the run (sampled users whose prefix was on the trie)."""
    return sum(self.votes_per_round)

  @property
  def frequent_prefixes(self) -> dict[str, int]:
    """Frequent prefixes that never became complete words."""
    return self.trie.frequent_prefixes()
