"""Tokenisation: texts to words, vectorised over raw bytes.

The rule, exactly (and what ``reference_words`` computes one text at a
time, for tests):

1. A text is split into tokens at runs of ASCII whitespace: tab, line feed,
   vertical tab, form feed, carriage return, the separators U+001C..U+001F
   and space (the characters Python's ``str.split()`` splits on, limited to
   ASCII; a non-ASCII space such as U+00A0 is an ordinary character).
2. The characters in ``strip`` (ASCII; none by default) are removed from
   both ends of each token (``str.strip``), then it is lower-cased
   (``str.lower``).
3. A token shorter than ``min_length`` characters is dropped.
4. A token holding a character outside the allowed set is dropped
   (``unknown="drop"``) or raises ``ValueError`` naming it and its row
   (``unknown="error"``).

The default allowed set is printable ASCII without upper-case letters (which
lower-casing removes) and without ``$``, the population's end symbol: 67
characters, so e.g. ``i'm``, ``@mileycyrus``, ``#ff``, ``b/c`` and ``:-)``
stay words while a token with an accented letter or an emoji is dropped.

With an ASCII-only allowed set (the default, and the out-of-vocabulary set)
no text is ever decoded: a token with any byte >= 0x80 is outside the set.
(The one character this shortcut treats differently from ``str.lower`` is
U+212A KELVIN SIGN, which lower-cases to ASCII ``k``.) An allowed set with
non-ASCII characters takes a slower path that decodes and lower-cases the
texts with Arrow, whose one-to-one case mapping differs from ``str.lower``
only for U+0130 (which becomes ``i``, not ``i`` + U+0307).
"""

from __future__ import annotations

import dataclasses
import re
import string

import numpy as np

from triehh import alphabet as alphabet_lib
from triehh.data import readers
from triehh.data import report as report_lib

WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
DEFAULT_MIN_LENGTH = 3
DEFAULT_CHARACTERS = "".join(
    sorted(set(string.printable) - set(string.whitespace)
           - set(string.ascii_uppercase) - {alphabet_lib.DEFAULT_END_SYMBOL}))

_CLS_OK, _CLS_SPACE, _CLS_OUTSIDE, _CLS_HIGH = 0, 1, 2, 3


@dataclasses.dataclass
class Tokens:
  """The kept tokens of every row, as word indices.

  Attributes:
    vocabulary: ``object [V]`` the distinct words (``str``), in order of
      first appearance.
    token_word: ``int32 [T]`` the word of each kept token, in text order
      (rows in file order, tokens left to right).
    token_row: ``int32 [T]`` the row of each kept token.
    num_rows: rows in the input.
  """

  vocabulary: np.ndarray
  token_word: np.ndarray
  token_row: np.ndarray
  num_rows: int

  @property
  def num_tokens(self) -> int:
    return int(self.token_word.size)


def reference_words(text: str, *, min_length: int = DEFAULT_MIN_LENGTH,
                    characters: str = DEFAULT_CHARACTERS,
                    strip: str = "") -> list[str]:
  """The kept words of one text, by the rule of the module docstring."""
  allowed = set(characters)
  words = []
  for token in re.split(f"[{re.escape(WHITESPACE)}]+", text):
    word = token.strip(strip).lower() if strip else token.lower()
    if word and len(word) >= min_length and set(word) <= allowed:
      words.append(word)
  return words


def check_characters(characters: str) -> str:
  """Validates an allowed character set (no whitespace, no duplicates)."""
  if not characters:
    raise ValueError("the allowed character set is empty")
  bad = sorted(set(characters) & set(WHITESPACE))
  if bad:
    raise ValueError(f"the allowed characters include whitespace {bad!r}, "
                     "which separates words")
  return "".join(sorted(set(characters)))


def tokenize(texts: readers.UserTexts, *,
             min_length: int = DEFAULT_MIN_LENGTH,
             characters: str = DEFAULT_CHARACTERS, strip: str = "",
             unknown: str = "drop") -> Tokens:
  """Splits every valid row of ``texts`` into kept words (module docstring).

  Rows whose text has no token at all (empty or blank) are counted in
  ``texts.report`` as empty texts.
  """
  pa = readers._pyarrow()  # pylint: disable=protected-access
  pc = pa.compute
  if min_length < 1:
    raise ValueError(f"min_length must be >= 1, got {min_length}")
  policy = alphabet_lib.UnknownCharacterPolicy(unknown)
  characters = check_characters(characters)
  ascii_only = max(map(ord, characters)) < 0x80
  if any(ord(c) >= 0x80 or c in WHITESPACE for c in strip):
    raise ValueError(f"strip characters must be ASCII and not whitespace, "
                     f"got {strip!r}")
  strip_table = np.zeros(256, dtype=bool)
  strip_table[[ord(c) for c in strip]] = True
  classes = _class_table(characters)
  is_word = classes != _CLS_SPACE
  is_bad = classes == _CLS_OUTSIDE
  if ascii_only:
    is_bad |= classes == _CLS_HIGH
  kept_chunks = []
  row_chunks = []
  empty_rows: list[np.ndarray] = []
  row_base = 0
  for chunk in texts.texts.chunks:
    n = len(chunk)
    valid = (texts.valid[row_base:row_base + n] if texts.valid is not None
             else None)
    if not ascii_only:
      chunk = _lowered_utf8(chunk, texts.encoding, valid)
    # A line feed after every text keeps tokens from running across rows.
    chunk = pc.binary_join_element_wise(
        chunk, pa.scalar(b"", chunk.type), pa.scalar(b"\n", chunk.type))
    data, offsets = readers.chunk_buffers(chunk)
    starts, ends, rows, per_row = _split(data, offsets, is_word)
    if strip:
      starts, ends = _strip(data, starts, ends, strip_table)
    empty = per_row == 0
    if valid is not None:
      empty &= valid
    empty_rows.append(np.flatnonzero(empty) + row_base)
    keep = (ends - starts) >= min_length
    if valid is not None:
      keep &= valid[rows]
    outside = _tokens_with(data, starts, ends, is_bad)
    if policy is alphabet_lib.UnknownCharacterPolicy.ERROR:
      _raise_on_unknown(data, starts, ends, rows, keep & outside, row_base,
                        texts.encoding, min_length, characters)
    keep &= ~outside
    del outside
    index = np.flatnonzero(keep)
    del keep
    if not index.size:
      row_base += n
      continue
    large = data.size >= 2**31 - 1
    segments = np.empty(2 * starts.size + 2,
                        dtype=np.int64 if large else np.int32)
    segments[0] = 0
    segments[1:-1:2] = starts
    segments[2:-1:2] = ends
    segments[-1] = data.size
    del starts, ends
    arrow_type = pa.large_binary() if large else pa.binary()
    everything = pa.Array.from_buffers(
        arrow_type, segments.size - 1,
        [None, pa.py_buffer(segments), pa.py_buffer(data)])
    picks = index.astype(np.int64 if large else np.int32)
    picks *= 2
    picks += 1
    kept = everything.take(pa.array(picks)).cast(
        pa.large_string() if large else pa.string())
    del everything, segments, picks
    if ascii_only:
      kept = pc.ascii_lower(kept)
    else:
      kept, index = _check_unicode(kept, index, rows, row_base, min_length,
                                   characters, policy)
    kept_chunks.append(kept)
    kept_rows = rows[index]
    kept_rows += row_base
    row_chunks.append(kept_rows)
    row_base += n
  empty = np.concatenate(empty_rows) if empty_rows else np.zeros(0, np.int64)
  texts.report.skip(report_lib.SKIP_EMPTY_TEXT, empty.size,
                    (f"row {r + 1}" for r in empty[:report_lib.MAX_EXAMPLES]))
  if not kept_chunks:
    return Tokens(np.zeros(0, dtype=object), np.zeros(0, np.int32),
                  np.zeros(0, np.int32), texts.num_rows)
  if len({c.type for c in kept_chunks}) > 1:  # some chunk needed 64-bit
    kept_chunks = [c.cast(pa.large_string()) for c in kept_chunks]
  encoded = pc.dictionary_encode(pa.chunked_array(kept_chunks))
  token_word = np.concatenate(
      [c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks]
  ).astype(np.int32, copy=False)
  vocabulary = np.asarray(
      encoded.chunks[0].dictionary.to_numpy(zero_copy_only=False),
      dtype=object)
  return Tokens(vocabulary=vocabulary, token_word=token_word,
                token_row=np.concatenate(row_chunks), num_rows=texts.num_rows)


# ---- byte-level machinery ---------------------------------------------------


def _class_table(characters: str) -> np.ndarray:
  """Byte -> class: allowed, whitespace, outside, or non-ASCII (to check)."""
  table = np.full(256, _CLS_OUTSIDE, dtype=np.uint8)
  table[0x80:] = _CLS_HIGH
  allowed = set(characters)
  for b in range(0x80):
    c = chr(b)
    if c in WHITESPACE:
      table[b] = _CLS_SPACE
    elif c.lower() in allowed:
      table[b] = _CLS_OK
  return table


def _split(data: np.ndarray, offsets: np.ndarray, is_word: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """Tokens of one chunk whose every row ends with whitespace.

  Returns the ``[start, end)`` byte range and the row (``int32``) of each
  token, and the number of tokens of each row.
  """
  nbytes = data.size
  num_rows = offsets.size - 1
  if nbytes == 0:
    empty = np.zeros(0, np.int64)
    return empty, empty, empty.astype(np.int32), np.zeros(num_rows, np.int64)
  word = is_word[data].view(np.int8)
  edges = np.empty(nbytes + 1, dtype=np.int8)
  edges[0] = word[0]
  np.subtract(word[1:], word[:-1], out=edges[1:nbytes])
  edges[nbytes] = -word[nbytes - 1]
  del word
  flips = np.flatnonzero(edges)
  del edges
  starts, ends = flips[0::2], flips[1::2]
  per_row = np.diff(np.searchsorted(starts, offsets))
  rows = np.repeat(np.arange(num_rows, dtype=np.int32), per_row)
  return starts, ends, rows, per_row


def _strip(data: np.ndarray, starts: np.ndarray, ends: np.ndarray,
           strip_table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Moves token bounds inwards past bytes flagged in ``strip_table``."""
  starts = starts.copy()
  ends = ends.copy()
  active = np.flatnonzero(strip_table[data[starts]])
  while active.size:
    starts[active] += 1
    active = active[starts[active] < ends[active]]
    active = active[strip_table[data[starts[active]]]]
  active = np.flatnonzero((starts < ends) & strip_table[data[ends - 1]])
  while active.size:
    ends[active] -= 1
    active = active[starts[active] < ends[active]]
    active = active[strip_table[data[ends[active] - 1]]]
  return starts, ends


def _tokens_with(data: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 is_bad: np.ndarray) -> np.ndarray:
  """``bool [T]``: tokens holding a byte flagged in ``is_bad``."""
  out = np.zeros(starts.size, dtype=bool)
  where = np.flatnonzero(is_bad[data])
  if where.size:
    token = np.searchsorted(starts, where, side="right") - 1
    inside = (token >= 0) & (where < ends[np.maximum(token, 0)])
    out[token[inside]] = True
  return out


def _decode(data: np.ndarray, start: int, end: int, encoding: str) -> str:
  return data[start:end].tobytes().decode(encoding, errors="replace")


def _raise_on_unknown(data, starts, ends, rows, suspects, row_base, encoding,
                      min_length, characters) -> None:
  allowed = set(characters)
  for t in np.flatnonzero(suspects):
    word = _decode(data, starts[t], ends[t], encoding).lower()
    if len(word) < min_length:
      continue
    bad = next((c for c in word if c not in allowed), None)
    if bad is not None:
      raise ValueError(
          f"row {row_base + int(rows[t]) + 1}: word {word!r} has character "
          f"{bad!r} (U+{ord(bad):04X}) outside the allowed characters; allow "
          "it or drop such words (unknown='drop')")


def _lowered_utf8(chunk, encoding: str, valid: np.ndarray | None):
  """The chunk as lower-cased UTF-8 (Arrow), transcoding latin-1 first.

  Invalid rows (possibly undecodable) become empty.
  """
  pa = readers._pyarrow()  # pylint: disable=protected-access
  if valid is not None and not valid.all():
    chunk = pa.compute.if_else(pa.array(valid), chunk,
                               pa.scalar(b"", chunk.type))
  if encoding == "latin-1":
    chunk = _latin1_to_utf8(chunk)
  as_text = chunk.cast(pa.large_string() if pa.types.is_large_binary(
      chunk.type) else pa.string())
  return pa.compute.utf8_lower(as_text).cast(
      pa.large_binary() if pa.types.is_large_binary(chunk.type)
      else pa.binary())


def _latin1_to_utf8(chunk):
  """Transcodes a latin-1 binary array to UTF-8 bytes (vectorised)."""
  pa = readers._pyarrow()  # pylint: disable=protected-access
  data, offsets = readers.chunk_buffers(chunk)
  high = np.flatnonzero(data >= 0x80)
  if not high.size:
    return chunk
  lead = (0xC0 | (data[high] >> 6)).astype(np.uint8)
  follow = (0x80 | (data[high] & 0x3F)).astype(np.uint8)
  out = data.copy()
  out[high] = lead
  out = np.insert(out, high + 1, follow)
  new_offsets = offsets + np.searchsorted(high, offsets, side="left")
  return pa.Array.from_buffers(
      pa.large_binary(), len(chunk),
      [None, pa.py_buffer(new_offsets.astype(np.int64)), pa.py_buffer(out)])


def _check_unicode(kept, index, rows, row_base, min_length, characters,
                   policy):
  """Length and character checks of decoded words (non-ASCII sets)."""
  pa = readers._pyarrow()  # pylint: disable=protected-access
  pc = pa.compute
  long_enough = pc.greater_equal(pc.utf8_length(kept), min_length)
  pattern = "^[" + "".join(_regex_char(c) for c in characters) + "]+$"
  inside = pc.match_substring_regex(kept, pattern)
  if policy is alphabet_lib.UnknownCharacterPolicy.ERROR:
    bad = pc.and_(long_enough, pc.invert(inside))
    if pc.any(bad).as_py():
      t = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
      word = kept[t].as_py()
      char = next(c for c in word if c not in set(characters))
      raise ValueError(
          f"row {row_base + int(rows[index[t]]) + 1}: word {word!r} has "
          f"character {char!r} (U+{ord(char):04X}) outside the allowed "
          "characters; allow it or drop such words (unknown='drop')")
  mask = pc.and_(long_enough, inside)
  return kept.filter(mask), index[mask.to_numpy(zero_copy_only=False)]


def _regex_char(c: str) -> str:
  if c in "\\]^-[":
    return "\\" + c
  return c
