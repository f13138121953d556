"""One input shard read by the in-memory loader's own functions.

The Beam pipelines of this package never parse a row themselves: each shard
(one file of a glob) is read by :func:`triehh.data.readers.read`, split into
words by :func:`triehh.data.tokenize.tokenize` with the spec's rule, and its
(user, word) pairs counted by :func:`triehh.data.settings.user_word_counts`,
exactly as :func:`triehh.data.loader.build` does for one file. What a shard
gives (:func:`read_shard`) is what the merge across shards needs to equal
``loader.build`` on the shards concatenated in path order:

* per user (keyed by its value as read, so the same user in two shards is
  one user): its first position, whether it has a usable row, and per word
  its count and first position;
* the shard's :class:`~triehh.data.report.LoadReport` counts;
* for ``oov``: the token count of every word (the draw needs no users).

A position is ``(shard, index)``: compared as a tuple, it orders rows and
tokens as the concatenated file would. Nothing here imports Apache Beam.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import os
import warnings
from collections.abc import Iterable, Iterator

import numpy as np

from triehh.beam import pieces as pieces_lib
from triehh.data import loader
from triehh.data import readers
from triehh.data import report as report_lib
from triehh.data import settings as settings_lib
from triehh.data import tokenize as tokenize_lib

Position = tuple[int, int]
# A user's words in one shard or merged: word -> [count, first position].
Words = dict[str, list]


@dataclasses.dataclass
class UserPart:
  """What one shard knows of one user.

  Attributes:
    first: the user's first row (usable or not), ``(shard, row)``.
    usable: whether one of its rows is usable (the user counts as a user).
    words: word -> ``[count, (shard, first token)]``.
  """

  first: Position
  usable: bool
  words: Words


class ShardMemoryError(MemoryError):
  """Out of memory reading or building one shard; names it and its size.

  Attributes:
    shard: the shard, as :meth:`~triehh.beam.pieces.Piece.describe` says it.
    size: its bytes (None if unknown).
  """

  def __init__(self, shard: str, size: int | None):
    said = f" ({size:,} bytes)" if size is not None else ""
    super().__init__(f"out of memory reading the shard {shard}{said}")
    self.shard, self.size = shard, size


def _shard_size(piece: pieces_lib.Piece) -> int | None:
  if piece.end is not None:
    return piece.end - piece.start
  try:
    return os.path.getsize(piece.path) - piece.start
  except OSError:
    return None


def _memory_named(read):
  """``read(spec, index, path)``, a MemoryError raised as a
  :class:`ShardMemoryError` naming the shard."""

  @functools.wraps(read)
  def wrapped(spec, index, path):
    try:
      return read(spec, index, path)
    except ShardMemoryError:
      raise
    except MemoryError:
      piece = _as_piece(path)
      raise ShardMemoryError(piece.describe(), _shard_size(piece)) from None

  return wrapped


def expand(pattern: str) -> list[str]:
  """The files a path or glob names, sorted; a clear error when none."""
  if any(c in pattern for c in "*?["):
    paths = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
    if not paths:
      raise FileNotFoundError(f"no data file matches {pattern}")
    return paths
  if not os.path.exists(pattern):
    raise FileNotFoundError(f"data file not found: {pattern}")
  return [pattern]


def split(spec: loader.DataSpec, paths: list[str],
          split_bytes: int | None = None) -> list[pieces_lib.Piece]:
  """The shards of ``paths``: each file, or its pieces of about
  ``split_bytes`` (:mod:`triehh.beam.pieces`), in order."""
  return [piece for path in paths for piece in pieces_lib.split(
      path, pieces_lib.file_format(path, spec.dataset, spec.file_format),
      split_bytes)]


def _as_piece(shard) -> pieces_lib.Piece:
  return shard if isinstance(shard, pieces_lib.Piece) else pieces_lib.Piece(
      shard)


def _read(spec: loader.DataSpec, shard):
  """A shard (a path or a :class:`~triehh.beam.pieces.Piece`) read and
  tokenised as ``loader.build`` does it: the texts, the usable rows' users,
  their number, and the tokens; None for a piece holding no line."""
  piece = _as_piece(shard)
  fmt = pieces_lib.file_format(piece.path, spec.dataset, spec.file_format)
  with pieces_lib.as_file(piece, fmt) as path:
    if path is None:
      return None
    try:
      with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        texts = readers.read(
            path, fmt, user_column=spec.user_column,
            text_column=spec.text_column, encoding=spec.encoding,
            max_malformed_share=1.0)
    except report_lib.DataError as err:
      raise pieces_lib.renamed(err, path, piece) from err
    for warning in said:  # said of the piece, not of its temporary copy
      warnings.warn(str(warning.message).replace(path, piece.describe()),
                    warning.category, stacklevel=2)
  row_user, num_users = loader.user_codes(texts)
  tokens = tokenize_lib.tokenize(
      texts, min_length=spec.min_length, characters=spec.allowed_characters,
      strip=spec.strip_characters, unknown=spec.unknown,
      drop_prefixes=spec.drop_prefixes)
  return texts, row_user, num_users, tokens


@_memory_named
def read_shard(spec: loader.DataSpec, index: int, path
               ) -> tuple[dict[str, int], list[tuple[object, UserPart]],
                          dict[str, int]]:
  """Reads shard ``index`` (at ``path``) as ``loader.build`` reads a file,
  for users that may have rows in other shards too.

  Returns the report's counts (``rows_read`` and ``skipped:<reason>``),
  ``(user, UserPart)`` per user of the shard (``oov``: ``(user, None)`` per
  usable user), and (``oov``) word -> tokens.
  """
  read = _read(spec, path)
  if read is None:
    return {}, [], {}
  texts, row_user, _, tokens = read
  # Users in order of first appearance over every row, usable or not (the
  # order loader.user_codes gives them).
  any_row_user, _ = loader.user_codes(dataclasses.replace(texts, valid=None))
  counts = report_counts(texts.report)
  keys = _user_keys(texts.users, any_row_user)
  if spec.setting == "oov":
    usable = np.unique(any_row_user[row_user >= 0])
    return counts, [(keys[u], None) for u in usable.tolist()], _token_table(
        tokens)
  parts = _user_parts(index, tokens, row_user, any_row_user, keys)
  return counts, parts, {}


@_memory_named
def read_user_shard(spec: loader.DataSpec, index: int, path
                    ) -> tuple[dict[str, int], object]:
  """Reads shard ``index`` whose users have no row in any other shard, with
  the setting's own function (``settings.single_word`` or ``multi_word``).

  Returns the report's counts with ``num_users`` and
  ``users_without_words``, and: ``single``, word -> users; ``multi``, the
  users' bags ``(index, rank, {word: count})`` in the shard's user order;
  ``oov``, word -> tokens.
  """
  read = _read(spec, path)
  if read is None:
    return {}, [] if spec.setting == "multi" else {}
  texts, row_user, num_users, tokens = read
  counts = report_counts(texts.report)
  counts["num_users"] = num_users
  if spec.setting == "oov":
    return counts, _token_table(tokens)
  if not tokens.num_tokens:
    counts["users_without_words"] = num_users
    return counts, {} if spec.setting == "single" else []
  build = (settings_lib.single_word if spec.setting == "single"
           else settings_lib.multi_word)
  result = build(tokens, row_user, num_users,
                 characters=spec.allowed_characters,
                 max_length=spec.max_length)
  counts["users_without_words"] = result.users_without_words
  pop = result.population
  vocabulary = [str(w) for w in pop.vocabulary]
  if spec.setting == "single":
    users = np.bincount(pop.user_word, minlength=len(vocabulary))
    return counts, {w: int(c) for w, c in zip(vocabulary, users) if c}
  bags = []
  for rank in range(pop.num_users):
    lo, hi = pop.user_offsets[rank], pop.user_offsets[rank + 1]
    bags.append((index, rank, {vocabulary[w]: int(c) for w, c in zip(
        pop.entry_word[lo:hi].tolist(), pop.entry_count[lo:hi].tolist())}))
  return counts, bags


@_memory_named
def read_user_words(spec: loader.DataSpec, index: int, path
                    ) -> list[tuple[tuple[int, int], str]]:
  """``single``: each user's word, ``((index, rank), word)``, of shard
  ``index`` whose users have no row in any other shard (the user's rank
  in the shard, as ``settings.single_word`` numbers them, names it)."""
  read = _read(spec, path)
  if read is None:
    return []
  _, row_user, num_users, tokens = read
  if not tokens.num_tokens:
    return []
  pop = settings_lib.single_word(tokens, row_user, num_users,
                                 characters=spec.allowed_characters,
                                 max_length=spec.max_length).population
  words = [str(w) for w in pop.vocabulary]
  return [((index, rank), words[w])
          for rank, w in enumerate(pop.user_word.tolist())]


def _token_table(tokens: tokenize_lib.Tokens) -> dict[str, int]:
  """Word -> its tokens (``oov`` counts every token of every user)."""
  counts = np.bincount(tokens.token_word, minlength=tokens.vocabulary.size)
  return {str(w): int(c) for w, c in zip(tokens.vocabulary, counts) if c}


def _user_keys(users, any_row_user: np.ndarray) -> dict[int, object]:
  """Code (``any_row_user``) -> the user's value, as Python."""
  codes, rows = np.unique(any_row_user, return_index=True)
  keep = codes >= 0
  values = users.take(rows[keep]).to_pylist()
  return dict(zip(codes[keep].tolist(), values))


def _user_parts(index: int, tokens: tokenize_lib.Tokens,
                row_user: np.ndarray, any_row_user: np.ndarray,
                keys: dict[int, object]) -> list[tuple[object, UserPart]]:
  """``(user, UserPart)`` for every user of the shard."""
  codes, first_rows = np.unique(any_row_user, return_index=True)
  parts = {}
  for code, row in zip(codes.tolist(), first_rows.tolist()):
    if code >= 0:
      parts[code] = UserPart(first=(index, row), usable=False, words={})
  # The usable users, by their code over every row.
  usable_rows = np.flatnonzero(row_user >= 0)
  usable_codes = np.unique(any_row_user[usable_rows])
  for code in usable_codes.tolist():
    parts[code].usable = True
  if tokens.num_tokens:
    # Pairs are counted on the codes over every row (a user's usable rows
    # share its code there), then mapped back.
    pair_user, pair_word, pair_count, first = settings_lib.user_word_counts(
        tokens, np.where(row_user >= 0, any_row_user, -1))
    vocabulary = tokens.vocabulary
    for u, w, c, f in zip(pair_user.tolist(), pair_word.tolist(),
                          pair_count.tolist(), first.tolist()):
      parts[u].words[str(vocabulary[w])] = [c, (index, f)]
  return [(keys[code], part) for code, part in parts.items()]


def merge_parts(parts: Iterable[UserPart]) -> UserPart:
  """One user's parts from every shard, merged: counts added, the first
  positions the earliest."""
  merged = None
  for part in parts:
    if merged is None:
      merged = UserPart(first=tuple(part.first), usable=part.usable,
                        words={w: [c, tuple(f)]
                               for w, (c, f) in part.words.items()})
      continue
    merged.first = min(merged.first, tuple(part.first))
    merged.usable = merged.usable or part.usable
    for word, (count, first) in part.words.items():
      if word in merged.words:
        merged.words[word][0] += count
        merged.words[word][1] = min(merged.words[word][1], tuple(first))
      else:
        merged.words[word] = [count, tuple(first)]
  if merged is None:
    raise ValueError("a user needs at least one part to merge")
  return merged


def best_word(words: Words) -> str | None:
  """The ``single`` setting's word of a user: the most frequent, ties to
  the first written (``settings.single_word``); None without words."""
  if not words:
    return None
  return min(words.items(), key=lambda item: (-item[1][0], item[1][1]))[0]


def report_counts(report: report_lib.LoadReport) -> dict[str, int]:
  """A report's counts as one flat dict (summed across shards)."""
  counts = {"rows_read": report.rows_read}
  for reason, n in report.skipped.items():
    counts["skipped:" + reason] = n
  return counts


def add_counts(many: Iterable[dict[str, int]]) -> dict[str, int]:
  """Counts summed key by key."""
  total: dict[str, int] = {}
  for counts in many:
    for key, n in counts.items():
      total[key] = total.get(key, 0) + n
  return total


def iter_user_counts(part: UserPart) -> Iterator[tuple[str, int]]:
  """The report counts one merged user adds."""
  if part.usable:
    yield "num_users", 1
    if not part.words:
      yield "users_without_words", 1
