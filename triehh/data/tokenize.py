"""Tokenisation: texts to words, with Arrow's string kernels.

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
5. A token starting with one of ``drop_prefixes`` (none by default; the
   paper's tokenizer drops links, see ``settings``) is dropped.

The default allowed set is printable ASCII without upper-case letters (which
lower-casing removes) and without ``$``, the population's end symbol: 67
characters, so e.g. ``i'm``, ``@mileycyrus``, ``#ff``, ``b/c`` and ``:-)``
stay words while a token with an accented letter or an emoji is dropped.

How: per chunk of texts, ``ascii_split_whitespace`` (after
``replace_substring_regex`` turns U+001C..U+001F, which it does not split
on, into spaces), ``list_flatten`` / ``list_parent_indices`` for the rows,
``ascii_trim`` for ``strip`` (ASCII, so the same as ``utf8_trim``),
``ascii_lower`` (ASCII-only sets) or ``utf8_lower``, ``utf8_length`` and
``match_substring_regex`` against the allowed set, ``starts_with`` for the
prefixes, and ``dictionary_encode`` for the vocabulary. With an ASCII-only
allowed set (the default, and the out-of-vocabulary set) only ASCII letters
are lower-cased, so a token with any non-ASCII character stays outside the
set (the one character this treats differently from ``str.lower`` is U+212A
KELVIN SIGN, which lower-cases to ASCII ``k``). A non-ASCII set uses
``utf8_lower``, whose one-to-one case mapping differs from ``str.lower``
only for U+0130 (which becomes ``i``, not ``i`` + U+0307). Readers hand over
UTF-8 (latin-1 files are transcoded while parsed); ``UserTexts`` built by
hand in latin-1 are decoded here, row by row.

This replaced a hand-written byte-level tokenizer (numpy over the raw text
bytes) and latin-1 transcoder. Measured side by side in one run on the
Sentiment140 sample (111,196 rows, medians of 5, tokenisation alone, 2
shared cores under load): single setting 0.93 s by bytes, 1.11 s here; OOV
0.82 s and 1.10 s; identical tokens. End to end (``benchmarks.data_benchmark
--baseline``, medians of 3, load average 15 on 2 cores, so every figure is
inflated): sample single 7.0 s against 6.5 s, multi 4.8 s against 3.2 s,
OOV (1M users) 10.2 s against 6.7 s, an 800k-row file single 28.4 s
against 25.7 s; peak memory within 5 %. The kernels are kept for the
shorter code; should the full file's 10 s budget be missed on an idle
machine, the byte-level path is the one to bring back.
"""

from __future__ import annotations

import dataclasses
import re
import string

import numpy as np

from triehh.core import alphabet as alphabet_lib
from triehh.data import report as report_lib
from triehh.data import user_texts

WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
# Whitespace of the rule that Arrow's ascii_split_whitespace does not split on.
_RARE_WHITESPACE = "[\x1c-\x1f]"
DEFAULT_MIN_LENGTH = 3
DEFAULT_CHARACTERS = "".join(
    sorted(set(string.printable) - set(string.whitespace)
           - set(string.ascii_uppercase) - {alphabet_lib.DEFAULT_END_SYMBOL}))


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
                    characters: str = DEFAULT_CHARACTERS, strip: str = "",
                    drop_prefixes: tuple[str, ...] = ()) -> list[str]:
  """The kept words of one text, by the rule of the module docstring."""
  allowed = set(characters)
  words = []
  for token in re.split(f"[{re.escape(WHITESPACE)}]+", text):
    word = token.strip(strip).lower() if strip else token.lower()
    if (word and len(word) >= min_length and set(word) <= allowed
        and not word.startswith(tuple(drop_prefixes))):
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


def tokenize(texts: user_texts.UserTexts, *,
             min_length: int = DEFAULT_MIN_LENGTH,
             characters: str = DEFAULT_CHARACTERS, strip: str = "",
             unknown: str = "drop",
             drop_prefixes: tuple[str, ...] = ()) -> Tokens:
  """Splits every valid row of ``texts`` into kept words (module docstring).

  Rows whose text has no token at all (empty or blank) are counted in
  ``texts.report`` as empty texts.
  """
  rule = make_rule(min_length=min_length, characters=characters, strip=strip,
                   unknown=unknown, drop_prefixes=drop_prefixes)
  words, rows, empty = [], [], []
  base = 0
  for chunk in texts.texts.chunks:
    valid = (None if texts.valid is None
             else texts.valid[base:base + len(chunk)])
    chunk_words, chunk_rows, chunk_empty = _chunk_words(
        chunk, valid, texts.encoding, rule, base)
    words.append(chunk_words)
    rows.append(chunk_rows + base)
    empty.append(chunk_empty + base)
    base += len(chunk)
  empty_rows = np.concatenate(empty) if empty else np.zeros(0, np.int64)
  texts.report.skip(
      report_lib.SKIP_EMPTY_TEXT, empty_rows.size,
      (f"row {r + 1}" for r in empty_rows[:report_lib.MAX_EXAMPLES]))
  return _encode(words, rows, texts.num_rows)


@dataclasses.dataclass(frozen=True)
class Rule:
  """A validated tokenisation rule (see the module docstring)."""

  min_length: int
  characters: str
  strip: str
  policy: alphabet_lib.UnknownCharacterPolicy
  drop_prefixes: tuple[str, ...] = ()

  @property
  def ascii_only(self) -> bool:
    return max(map(ord, self.characters)) < 0x80

  @property
  def pattern(self) -> str:
    """A regular expression matching words made of allowed characters."""
    return "^[" + "".join(_regex_char(c) for c in self.characters) + "]+$"


def make_rule(*, min_length: int = DEFAULT_MIN_LENGTH,
              characters: str = DEFAULT_CHARACTERS, strip: str = "",
              unknown: str = "drop",
              drop_prefixes: tuple[str, ...] = ()) -> Rule:
  """Checks tokenisation options; raises ``ValueError`` naming a bad one."""
  if any(not p or p != p.lower() for p in drop_prefixes):
    raise ValueError(f"drop_prefixes must be non-empty lower-case strings, "
                     f"got {drop_prefixes!r}")
  if min_length < 1:
    raise ValueError(f"min_length must be >= 1, got {min_length}")
  if any(ord(c) >= 0x80 or c in WHITESPACE for c in strip):
    raise ValueError(f"strip characters must be ASCII and not whitespace, "
                     f"got {strip!r}")
  return Rule(min_length=min_length, characters=check_characters(characters),
              strip=strip,
              policy=alphabet_lib.UnknownCharacterPolicy(unknown),
              drop_prefixes=tuple(drop_prefixes))


def _chunk_words(chunk, valid: np.ndarray | None, encoding: str, rule: Rule,
                 row_base: int) -> tuple[object, np.ndarray, np.ndarray]:
  """The kept words of one chunk, their rows, and its rows with no token."""
  pc = user_texts.import_pyarrow().compute
  tokens, rows, per_row = _split(_as_text(chunk, valid, encoding))
  empty = per_row == 0
  if valid is not None:
    empty &= valid
  if rule.strip:
    tokens = pc.ascii_trim(tokens, rule.strip)
  tokens = (pc.ascii_lower(tokens) if rule.ascii_only
            else pc.utf8_lower(tokens))
  long_enough = pc.greater_equal(pc.utf8_length(tokens), rule.min_length)
  inside = pc.match_substring_regex(tokens, rule.pattern)
  if rule.policy is alphabet_lib.UnknownCharacterPolicy.ERROR:
    _raise_on_unknown(tokens, pc.and_not(long_enough, inside), rows,
                      row_base, rule.characters)
  keep = pc.and_(long_enough, inside)
  for prefix in rule.drop_prefixes:
    keep = pc.and_not(keep, pc.starts_with(tokens, prefix))
  return (tokens.filter(keep),
          rows[np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool)],
          np.flatnonzero(empty))


def _as_text(chunk, valid: np.ndarray | None, encoding: str):
  """The chunk as Arrow strings; rows not ``valid`` become empty."""
  pa = user_texts.import_pyarrow()
  if valid is not None and not valid.all():
    chunk = pa.compute.if_else(pa.array(valid), chunk,
                               pa.scalar(b"", chunk.type))
  large = pa.types.is_large_binary(chunk.type) or pa.types.is_large_string(
      chunk.type)
  string_type = pa.large_string() if large else pa.string()
  if encoding == "latin-1":
    return pa.array([None if b is None else b.decode("latin-1")
                     for b in chunk.to_pylist()], string_type)
  return chunk.cast(string_type)


def _split(text) -> tuple[object, np.ndarray, np.ndarray]:
  """Non-empty whitespace-separated tokens, their rows, and tokens per row."""
  pc = user_texts.import_pyarrow().compute
  if pc.any(pc.match_substring_regex(text, _RARE_WHITESPACE)).as_py():
    text = pc.replace_substring_regex(text, _RARE_WHITESPACE, " ")
  lists = pc.ascii_split_whitespace(text)
  tokens = pc.list_flatten(lists)
  rows = pc.list_parent_indices(lists)
  present = pc.greater(pc.binary_length(tokens), 0)
  tokens = tokens.filter(present)
  rows = rows.filter(present).to_numpy().astype(np.int32)
  return tokens, rows, np.bincount(rows, minlength=len(text))


def _raise_on_unknown(tokens, suspects, rows: np.ndarray, row_base: int,
                      characters: str) -> None:
  """Raises ``ValueError`` for the first long-enough word with a character
  outside ``characters`` (``unknown="error"``)."""
  pc = user_texts.import_pyarrow().compute
  if not pc.any(suspects).as_py():
    return
  t = int(pc.index(suspects, True).as_py())
  word = tokens[t].as_py()
  bad = next(c for c in word if c not in set(characters))
  raise ValueError(
      f"row {row_base + int(rows[t]) + 1}: word {word!r} has character "
      f"{bad!r} (U+{ord(bad):04X}) outside the allowed characters; allow it "
      "or drop such words (unknown='drop')")


def _encode(words: list, rows: list[np.ndarray], num_rows: int) -> Tokens:
  """Word indices of the kept tokens, vocabulary in order of appearance."""
  pa = user_texts.import_pyarrow()
  words = [w for w in words if len(w)]
  if not words:
    return Tokens(np.zeros(0, dtype=object), np.zeros(0, np.int32),
                  np.zeros(0, np.int32), num_rows)
  if len({w.type for w in words}) > 1:  # some chunk needed 64-bit offsets
    words = [w.cast(pa.large_string()) for w in words]
  encoded = pa.compute.dictionary_encode(pa.chunked_array(words))
  token_word = np.concatenate(
      [c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks]
  ).astype(np.int32, copy=False)
  vocabulary = np.asarray(
      encoded.chunks[0].dictionary.to_numpy(zero_copy_only=False),
      dtype=object)
  return Tokens(vocabulary=vocabulary, token_word=token_word,
                token_row=np.concatenate(rows).astype(np.int32, copy=False),
                num_rows=num_rows)


def _regex_char(c: str) -> str:
  if c in "\\]^-[":
    return "\\" + c
  return c
