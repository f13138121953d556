"""The tensor-encoded trie that TrieHH grows one level per round.

Level ``l`` of the trie holds the discovered length-``l`` prefixes as an
integer array of symbol codes, ``[k, l]``, in lexicographic order of codes
(the end symbol has the largest code). The non-terminated prefixes of the
deepest level are the *frontier*: the only prefixes users can extend next.

Vote layout. In the round that grows level ``l + 1``, the candidate
extensions are every frontier prefix times every symbol (alphabet plus end
symbol). A vote for extension ``e`` of frontier prefix ``p`` goes to index
``p * (A + 1) + e``, so the vote vector has ``k * (A + 1)`` entries and
keeping the indices in increasing order keeps the next level lexicographic.

Thresholding keeps every extension with at least ``theta`` votes. Kept
extensions whose symbol is the end symbol are heavy hitters (recorded with
the votes of the round that found them); the others form the new frontier.
With ``max_num_prefixes`` set, at most that many *non-terminated*
extensions are kept (the most voted, ties broken by the smaller vote index,
i.e. lexicographically first); extensions ending in the end symbol
(finished words) are thresholded, never capped. These are the semantics of
TFF's reference TrieHH: the cap bounds the next round's frontier, and so its
vote vector, which finished words do not enter.

These functions are shared by every engine, so that all of them grow the
very same trie from the same votes. The one exception is the fast engine's
uncapped rounds on count-level populations, which build each level from
their own tables (``triehh.engines.rounds.CountVotes``); tests check that
they give the same levels as :meth:`Trie.grow_at`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from triehh.core import alphabet as alphabet_lib
from triehh.core import ranking
from triehh.core import validation
from triehh.core import word_votes


def select_extensions(votes: np.ndarray, theta: int,
                      max_num_prefixes: int | None = None, *,
                      num_extensions: int) -> np.ndarray:
  """Vote indices kept by thresholding at ``theta`` and the optional cap.

  Args:
    votes: the round's vote vector (layout of the module docstring).
    theta: the vote threshold.
    max_num_prefixes: optional cap on the kept non-terminated extensions
      (most voted first, ties to the smaller index); extensions ending in
      the end symbol are never capped.
    num_extensions: ``A + 1``; index ``i`` ends in the end symbol iff
      ``i % (A + 1) == A``.

  Returns:
    The kept indices in increasing order.
  """
  kept = np.flatnonzero(votes >= theta)
  if max_num_prefixes is None:
    return kept
  return _capped(kept, votes[kept], max_num_prefixes, num_extensions)


def _capped(above: np.ndarray, above_votes: np.ndarray, max_num_prefixes: int,
            num_extensions: int) -> np.ndarray:
  """The cap of :func:`select_extensions` on the indices over the threshold."""
  is_end = above % num_extensions == num_extensions - 1
  unfinished = above[~is_end]
  if unfinished.size <= max_num_prefixes:
    return above
  order = np.lexsort((unfinished, -above_votes[~is_end]))
  return np.sort(np.concatenate([above[is_end],
                                 unfinished[order[:max_num_prefixes]]]))


def _extended(frontier: np.ndarray, parents: np.ndarray,
              symbols: np.ndarray) -> np.ndarray:
  """``int32 [k, depth + 1]`` frontier prefixes ``parents`` + ``symbols``."""
  return np.concatenate([np.take(frontier, parents, axis=0),
                         symbols.astype(np.int32)[:, None]], axis=1)


@dataclasses.dataclass(frozen=True)
class TrieLevel:
  """What one round added to the trie.

  Attributes:
    depth: the prefix length of this level (1 for the first round).
    prefixes: ``int32 [k, depth]`` codes of the new non-terminated prefixes.
    prefix_votes: ``int64 [k]`` their votes.
    parents: ``int32 [k]`` index of each prefix's parent in the previous
      level's ``prefixes`` (0 for depth 1: the root).
    terminated: ``int32 [h, depth]`` codes of the sequences that reached the
      end symbol in this round (the heavy hitters found now).
    terminated_votes: ``int64 [h]`` their votes.
    terminated_parents: ``int32 [h]`` parent index of each, as ``parents``.
    num_candidates: length of the vote vector (frontier size times A + 1).
    num_sampled: users sampled in this round (all sub-rounds).
    num_votes: votes cast (sampled users whose prefix was on the frontier).
    num_capped: non-terminated extensions over the threshold removed by the
      cap.
  """

  depth: int
  prefixes: np.ndarray
  prefix_votes: np.ndarray
  parents: np.ndarray
  terminated: np.ndarray
  terminated_votes: np.ndarray
  terminated_parents: np.ndarray
  num_candidates: int
  num_sampled: int
  num_votes: int
  num_capped: int = 0

  @property
  def grew(self) -> bool:
    """Whether this round added anything to the trie."""
    return bool(self.prefixes.shape[0] or self.terminated.shape[0])


def _word_rows(found: list[tuple[int, TrieLevel]], dtype=np.int32
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """The words of levels ``(depth, level)`` as one matrix of codes
  (``dtype``; end symbol dropped, -1 past each word), their lengths, their
  votes and where each level's rows start: what
  :mod:`triehh.core.word_votes` ranks and decodes at once."""
  sizes = [level.terminated.shape[0] for _, level in found]
  starts = np.cumsum([0] + sizes[:-1], dtype=np.int64)
  rows = np.full((sum(sizes), max(found[-1][0] - 1, 1)), -1, dtype=dtype)
  lengths = np.empty(rows.shape[0], dtype=np.int64)
  for (depth, level), at, k in zip(found, starts, sizes):
    rows[at:at + k, :depth - 1] = level.terminated[:, :depth - 1]
    lengths[at:at + k] = depth - 1
  votes = np.concatenate([level.terminated_votes for _, level in found])
  return rows, lengths, votes.astype(np.int64, copy=False), starts


class Trie:
  """A trie of discovered prefixes, one :class:`TrieLevel` per round.

  The last level may be empty: the round that found nothing to add, after
  which the algorithm stops.
  """

  def __init__(self, alphabet: alphabet_lib.Alphabet):
    if not isinstance(alphabet, alphabet_lib.Alphabet):
      raise TypeError("alphabet must be a triehh.Alphabet "
                      f"(e.g. Alphabet.of('abc')), got {alphabet!r}")
    self.alphabet = alphabet
    self.levels: list[TrieLevel] = []

  @property
  def depth(self) -> int:
    return len(self.levels)

  @property
  def frontier(self) -> np.ndarray:
    """``int32 [k, depth]`` the prefixes users may extend next round."""
    if not self.levels:
      return np.zeros((1, 0), dtype=np.int32)  # the root
    return self.levels[-1].prefixes

  @property
  def num_candidates(self) -> int:
    """Length of the next round's vote vector."""
    return self.frontier.shape[0] * self.alphabet.num_extensions

  def candidate_extensions(self) -> np.ndarray:
    """``int32 [k * (A + 1), depth + 1]`` the next round's candidates.

    Row ``i`` is the extension that vote index ``i`` counts: frontier prefix
    ``i // (A + 1)`` followed by symbol ``i % (A + 1)``.
    """
    a1 = self.alphabet.num_extensions
    frontier = self.frontier
    return np.concatenate(
        [np.repeat(frontier, a1, axis=0),
         np.tile(np.arange(a1, dtype=np.int32), frontier.shape[0])[:, None]],
        axis=1).astype(np.int32)

  def grow(self, votes: np.ndarray, theta: int,
           max_num_prefixes: int | None = None, *, num_sampled: int = 0,
           support: np.ndarray | None = None
           ) -> tuple[TrieLevel, np.ndarray]:
    """Adds one level from the vote vector of a round.

    ``support``, if given, holds increasing vote indices outside which every
    vote is zero (for example the cells that hold users); only those entries
    are read, which gives the same level as reading them all.

    Returns the new level and the vote indices that became frontier
    prefixes (in the order of ``level.prefixes``).
    """
    votes = np.asarray(votes)
    expected = self.num_candidates
    if votes.shape != (expected,):
      raise ValueError(f"vote vector has shape {votes.shape}, expected "
                       f"({expected},) for a frontier of "
                       f"{self.frontier.shape[0]} prefixes")
    if support is None:
      support = np.arange(expected)
    level, new = self.grow_at(support, votes[support], theta,
                              max_num_prefixes, num_sampled=num_sampled)
    return level, support[new]

  def grow_at(self, index: np.ndarray, votes: np.ndarray, theta: int,
              max_num_prefixes: int | None = None, *, num_sampled: int = 0
              ) -> tuple[TrieLevel, np.ndarray]:
    """Adds one level from the votes at some entries of the vote vector.

    The sparse form of :meth:`grow`: ``index`` holds increasing vote indices
    (in ``[0, num_candidates)``, not checked) and ``votes`` the votes there;
    every other entry of the round's vote vector is zero.

    Returns the new level and the positions in ``index`` of the entries that
    became frontier prefixes (in the order of ``level.prefixes``).
    """
    a1 = self.alphabet.num_extensions
    at = np.flatnonzero(votes >= theta)
    if max_num_prefixes is not None:
      capped = _capped(index[at], votes[at], max_num_prefixes, a1)
      num_capped = at.size - capped.size
      at = at[np.isin(index[at], capped, assume_unique=True)]
    else:
      num_capped = 0
    kept_votes = votes[at].astype(np.int64)
    parents, ext = np.divmod(index[at], a1)
    is_end = ext == self.alphabet.end_code
    new = ~is_end
    frontier = self.frontier
    level = TrieLevel(
        depth=self.depth + 1,
        prefixes=_extended(frontier, parents[new], ext[new]),
        prefix_votes=kept_votes[new],
        parents=parents[new].astype(np.int32),
        terminated=_extended(frontier, parents[is_end], ext[is_end]),
        terminated_votes=kept_votes[is_end],
        terminated_parents=parents[is_end].astype(np.int32),
        num_candidates=frontier.shape[0] * a1, num_sampled=int(num_sampled),
        num_votes=int(votes.sum()), num_capped=num_capped)
    self.levels.append(level)
    return level, at[new]

  def heavy_hitters(self) -> dict[str, int]:
    """Discovered words (paths ending in the end symbol) -> their votes.

    The vote count is that of the round that found the end symbol. Words
    are ordered by votes (descending), then alphabetically.
    """
    symbols = self.alphabet.symbols()
    found = [(depth, level) for depth, level in enumerate(self.levels, 1)
             if level.terminated.shape[0]]
    if not found:
      return {}
    # One byte a code where the symbols allow: less memory to fill, sort
    # and gather.
    rows, lengths, votes, starts = _word_rows(
        found, np.int8 if len(symbols) <= 127 else np.int32)
    if "\x00" in symbols or np.count_nonzero(rows < 0) != (
        rows.size - lengths.sum()):
      return self._heavy_hitters_one_by_one()  # not one character per code
    order = word_votes.ranked(rows, votes, len(symbols), starts)
    points = np.array([ord(c) for c in symbols], dtype=np.uint32)
    return word_votes.votes_dict(points, rows, lengths, votes, order)

  def _heavy_hitters_one_by_one(self) -> dict[str, int]:
    found = {}
    for level in self.levels:
      for codes, v in zip(level.terminated, level.terminated_votes):
        found[self.alphabet.decode_word(codes)] = int(v)
    return ranking.by_count(found)

  def frequent_prefixes(self) -> dict[str, int]:
    """Discovered prefixes that no later round extended -> their votes.

    These are the non-terminated leaves: frequent prefixes that did not (or
    not yet, at L) become complete words.
    """
    leaves = {}
    for i, level in enumerate(self.levels):
      extended = np.zeros(level.prefixes.shape[0], dtype=bool)
      if i + 1 < len(self.levels):
        nxt = self.levels[i + 1]
        extended[nxt.parents] = True
        extended[nxt.terminated_parents] = True
      for codes, v in zip(level.prefixes[~extended],
                          level.prefix_votes[~extended]):
        leaves[self.alphabet.decode(codes)] = int(v)
    return ranking.by_count(leaves)

  def prefixes(self, depth: int) -> list[str]:
    """The non-terminated prefixes of a level, as strings."""
    depth = validation.check_int("depth", depth)
    if depth > self.depth:
      raise ValueError(f"depth must be at most the trie's depth, {self.depth}, "
                       f"got {depth}")
    level = self.levels[depth - 1]
    return [self.alphabet.decode(c) for c in level.prefixes]

  def __contains__(self, prefix: str) -> bool:
    """Whether ``prefix`` (may end in the end symbol) is in the trie; never
    a non-string."""
    if not isinstance(prefix, str):
      return False
    depth = len(prefix)
    if depth == 0:
      return True
    if depth > self.depth:
      return False
    level = self.levels[depth - 1]
    strings = {self.alphabet.decode(c) for c in level.prefixes}
    strings.update(self.alphabet.decode(c) for c in level.terminated)
    return prefix in strings

  def to_dict(self) -> list[dict]:
    """A JSON-friendly view: per level, prefixes and heavy hitters with votes."""
    return [{
        "depth": lv.depth,
        "prefixes": {self.alphabet.decode(c): int(v)
                     for c, v in zip(lv.prefixes, lv.prefix_votes)},
        "terminated": {self.alphabet.decode_word(c): int(v)
                       for c, v in zip(lv.terminated, lv.terminated_votes)},
        "num_sampled": lv.num_sampled,
        "num_votes": lv.num_votes,
        "num_capped": lv.num_capped,
    } for lv in self.levels]

