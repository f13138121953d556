"""A vocabulary's words lower-cased, deduplicated and coded as symbols.

:func:`encode` applies the encoding rules of :mod:`triehh.core.population`
(written out in its module docstring) to the distinct words of a
population at once, vectorised: lower-casing, rejecting empty words and
words holding the end symbol, truncation to ``max_length`` characters, the
alphabet (given, or every character used) and the unknown-character
policy. :func:`factorize` numbers strings in order of first appearance.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from triehh.core import alphabet as alphabet_lib


# Symbol codes are int16: the end symbol's code, the alphabet's size, at most.
MAX_END_CODE = int(np.iinfo(np.int16).max)
# Fewer values than this are numbered by a dict: Arrow's first ``pa.array``
# of a list imports pandas (about 0.3 s), while a dict numbers 100,000
# strings in about 12 ms (Arrow, once loaded: about 9 ms).
ARROW_FROM_VALUES = 100_000


@dataclasses.dataclass
class EncodedVocabulary:
  """The distinct words kept, their codes and lengths, and where each input
  word went."""

  alphabet: alphabet_lib.Alphabet
  vocabulary: np.ndarray
  codes: np.ndarray
  word_lengths: np.ndarray
  old_to_new: np.ndarray  # input vocabulary index -> new index or -1


def factorize(words) -> tuple[np.ndarray, np.ndarray]:
  """Codes and uniques of a sequence of strings, in order of first appearance."""
  if not isinstance(words, (list, np.ndarray)):
    words = list(words)
  factorized = factorize_strings(words)
  if factorized is not None:
    return factorized
  return _numbered_by_dict(words, np.intp)


def _numbered_by_dict(words, dtype) -> tuple[np.ndarray, np.ndarray]:
  """Codes (``dtype``) and uniques of ``words``, in order of first appearance."""
  index: dict[str, int] = {}
  codes = np.fromiter((index.setdefault(w, len(index)) for w in words),
                      dtype=dtype, count=len(words))
  return codes, _object_array(list(index))


def factorize_strings(values) -> tuple[np.ndarray, np.ndarray] | None:
  """Codes (``int32``) and uniques of ``values``, in order of first
  appearance, if every value is a ``str``; else ``None``.

  One pass through Arrow's hash table (pyarrow, which pandas loads), whose
  strings are length-delimited: NUL is a character like any other; fewer
  than :data:`ARROW_FROM_VALUES` values, through a dict. Values
  Arrow cannot hold as one UTF-8 array (lone surrogates, 2 GiB of text or
  more) also give ``None``; :func:`factorize` then numbers them by a dict.
  """
  if not len(values):
    return None
  if not isinstance(values[0], str):
    # Users given as mappings, say: Arrow would infer a struct type with a
    # field per distinct word (24 s for 40,000 one-word users) only to give
    # None.
    return None
  if len(values) < ARROW_FROM_VALUES:
    if not all(map(isinstance, values, itertools.repeat(str))):
      return None
    return _numbered_by_dict(values, np.int32)
  import pyarrow as pa  # pylint: disable=g-import-not-at-top
  try:
    array = pa.array(values)
  except (pa.ArrowException, TypeError, ValueError, OverflowError):
    return None  # UnicodeEncodeError is a ValueError
  if (not isinstance(array, pa.Array) or array.null_count
      or array.type not in (pa.string(), pa.large_string())):
    return None  # chunked (too long), None among them, or not all str
  encoded = array.dictionary_encode()
  return (encoded.indices.to_numpy(),
          _object_array(encoded.dictionary.to_pylist()))


def _object_array(strings: list[str]) -> np.ndarray:
  """A 1-D object array of the given strings."""
  array = np.empty(len(strings), dtype=object)
  array[:] = strings
  return array


def encode(vocabulary, max_length, alphabet, end_symbol, unknown, *,
           distinct: bool = False) -> EncodedVocabulary:
  """Lower-cases, deduplicates and codes the vocabulary (vectorised).

  ``distinct``: the caller knows that no word is given twice (before
  lower-casing), which saves checking it.
  """
  if not isinstance(max_length, (int, np.integer)) or max_length < 1:
    raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
  policy = alphabet_lib.UnknownCharacterPolicy(unknown)
  old_to_new, uniq, lengths = _lowered_unique(vocabulary, distinct)
  if isinstance(alphabet, alphabet_lib.Alphabet):
    end_symbol = alphabet.end_symbol
  truncated = np.array(uniq, dtype=f"<U{max_length}")
  points = truncated.view(np.uint32).reshape(len(uniq), max_length)
  # Padding by position, not by value: a fixed-width array pads with NUL,
  # which is also a character a word (or the end symbol) may be.
  pad = np.arange(max_length) >= lengths[:, None]
  _check_end_symbol(uniq, points, pad, end_symbol)
  _check_unicode(uniq, points, pad)
  alpha = _alphabet(alphabet, points, pad, end_symbol)
  if alpha.end_code > MAX_END_CODE:
    raise ValueError(
        f"the alphabet has {alpha.size:,} characters, more than the "
        f"{MAX_END_CODE:,} that 16-bit symbol codes hold; give a smaller "
        "alphabet with unknown='drop'")
  symbol_codes, bad_rows = _symbol_codes(alpha, uniq, points, pad, policy)
  codes = np.empty((len(uniq), max_length + 1), dtype=np.int16)
  codes[:, max_length] = -1
  np.copyto(codes[:, :max_length], symbol_codes)
  np.copyto(codes[:, :max_length], -1, where=pad)
  fits = lengths <= max_length
  codes[np.flatnonzero(fits), lengths[fits]] = alpha.end_code
  if not bad_rows.any():
    return EncodedVocabulary(alphabet=alpha, vocabulary=uniq, codes=codes,
                             word_lengths=lengths, old_to_new=old_to_new)
  keep = ~bad_rows
  new_index = np.full(len(uniq), -1, dtype=np.int64)
  new_index[keep] = np.arange(int(keep.sum()))
  return EncodedVocabulary(
      alphabet=alpha, vocabulary=uniq[keep], codes=codes[keep],
      word_lengths=lengths[keep],
      old_to_new=new_index[old_to_new])


def _lowered_unique(vocabulary, distinct: bool
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """The lower-cased distinct words, each input word's index in them, and
  their lengths (``int32``); ``distinct``: no word is given twice."""
  words = (vocabulary.tolist() if isinstance(vocabulary, np.ndarray)
           else list(vocabulary))
  if not all(map(isinstance, words, itertools.repeat(str))):
    bad = next(w for w in words if not isinstance(w, str))
    raise TypeError(f"every word must be a str, got {bad!r}")
  lengths = np.fromiter(map(len, words), dtype=np.int32, count=len(words))
  if lengths.size and lengths.min() == 0:
    raise ValueError(
        f"empty word at vocabulary index {int(np.argmin(lengths))}; "
        "remove empty words before building a population")
  # Lower-casing maps characters one by one (a capital sigma, whose form
  # depends on its neighbours, never maps to itself), so the words are
  # unchanged exactly when their concatenation is.
  joined = "\x00".join(words)
  if joined.lower() != joined:
    words = [w.lower() for w in words]
    lengths = np.fromiter(map(len, words), dtype=np.int32, count=len(words))
    distinct = False
  if distinct or len(set(words)) == len(words):
    return np.arange(len(words)), _object_array(words), lengths
  old_to_new, uniq = factorize(words)
  return old_to_new, uniq, np.fromiter(map(len, uniq), dtype=np.int32,
                                       count=len(uniq))


def _check_end_symbol(uniq, points, pad, end_symbol) -> None:
  """Raises ``ValueError`` if a word's sent characters hold the end symbol."""
  end_point = ord(end_symbol)
  has_end = (points == end_point) & ~pad
  if np.any(has_end):
    row = int(np.flatnonzero(has_end.any(axis=1))[0])
    raise ValueError(
        f"word {uniq[row]!r} contains the end symbol {end_symbol!r}; pick "
        "another end_symbol or clean the data")


def _check_unicode(uniq, points, pad) -> None:
  """Raises ``ValueError`` if a word's sent characters hold a lone surrogate
  (not Unicode text: it would be published, and no file could hold it)."""
  lone = (points >= 0xD800) & (points <= 0xDFFF) & ~pad
  if np.any(lone):
    row = int(np.flatnonzero(lone.any(axis=1))[0])
    raise ValueError(
        f"word {uniq[row]!r} holds a lone surrogate, which is not Unicode "
        "text (bytes decoded with errors='surrogateescape'?): decode the "
        "data as its encoding, or clean it")


def _alphabet(alphabet, points, pad, end_symbol) -> alphabet_lib.Alphabet:
  """The alphabet given, or every character the words send."""
  if alphabet is None:
    sent = points[~pad]
    present = np.zeros(int(sent.max(initial=0)) + 1, dtype=bool)
    present[sent] = True
    return alphabet_lib.Alphabet(
        tuple(chr(c) for c in np.flatnonzero(present)), end_symbol)
  if isinstance(alphabet, alphabet_lib.Alphabet):
    return alphabet
  return alphabet_lib.Alphabet.of(alphabet, end_symbol)


def _symbol_codes(alpha, uniq, points, pad, policy):
  """Each character's code (``-1`` if unknown) and the words with an unknown
  one.

  Raises ``ValueError`` on an unknown character under policy ``"error"``.
  """
  alpha_points = np.array([ord(c) for c in alpha.characters], dtype=np.int64)
  table = np.full(max(int(points.max(initial=0)), int(alpha_points.max())) + 1,
                  -1, dtype=np.int16)
  table[alpha_points] = np.arange(alpha_points.size)
  symbol_codes = table[points]
  known = (symbol_codes >= 0) | pad
  bad_rows = ~known.all(axis=1)
  if bad_rows.any():
    if policy is alphabet_lib.UnknownCharacterPolicy.ERROR:
      row = int(np.flatnonzero(bad_rows)[0])
      col = int(np.flatnonzero(~known[row])[0])
      raise ValueError(
          f"word {uniq[row]!r} has character {chr(points[row, col])!r} "
          f"(U+{int(points[row, col]):04X}) outside the alphabet; "
          f"{int(bad_rows.sum())} distinct word(s) are affected. Extend the "
          "alphabet or pass unknown='drop'")
  return symbol_codes, bad_rows
