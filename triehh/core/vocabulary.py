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

import numpy as np

from triehh.core import alphabet as alphabet_lib


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
  """Codes and uniques of a sequence of strings, in order of first appearance.

  pandas hashes strings up to their first NUL, so it would merge "a" and
  "a\\x00b"; strings holding a NUL are factorized by a dict instead.
  """
  words = list(words)
  if "\x00" not in "".join(words):
    import pandas as pd  # pylint: disable=g-import-not-at-top
    codes, uniques = pd.factorize(pd.Series(words, dtype=object))
    return codes, np.asarray(uniques, dtype=object)
  index: dict[str, int] = {}
  codes = np.fromiter((index.setdefault(w, len(index)) for w in words),
                      dtype=np.intp, count=len(words))
  uniques = np.empty(len(index), dtype=object)
  uniques[:] = list(index)
  return codes, uniques


def encode(vocabulary, max_length, alphabet, end_symbol,
           unknown) -> EncodedVocabulary:
  """Lower-cases, deduplicates and codes the vocabulary (vectorised)."""
  if not isinstance(max_length, (int, np.integer)) or max_length < 1:
    raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
  policy = alphabet_lib.UnknownCharacterPolicy(unknown)
  old_to_new, uniq = _lowered_unique(vocabulary)
  lengths = np.fromiter((len(w) for w in uniq), dtype=np.int32, count=len(uniq))
  if isinstance(alphabet, alphabet_lib.Alphabet):
    end_symbol = alphabet.end_symbol
  truncated = np.array(uniq, dtype=f"<U{max_length}")
  points = truncated.view(np.uint32).reshape(len(uniq), max_length)
  # Padding by position, not by value: a fixed-width array pads with NUL,
  # which is also a character a word (or the end symbol) may be.
  pad = np.arange(max_length) >= lengths[:, None]
  _check_end_symbol(uniq, points, pad, end_symbol)
  alpha = _alphabet(alphabet, points, pad, end_symbol)
  clipped, bad_rows = _symbol_codes(alpha, uniq, points, pad, policy)
  codes = np.full((len(uniq), max_length + 1), -1, dtype=np.int16)
  codes[:, :max_length] = np.where(pad, -1, clipped)
  fits = lengths <= max_length
  codes[np.flatnonzero(fits), lengths[fits]] = alpha.end_code
  keep = ~bad_rows
  new_index = np.full(len(uniq), -1, dtype=np.int64)
  new_index[keep] = np.arange(int(keep.sum()))
  return EncodedVocabulary(
      alphabet=alpha, vocabulary=uniq[keep], codes=codes[keep],
      word_lengths=lengths[keep],
      old_to_new=new_index[old_to_new])


def _lowered_unique(vocabulary) -> tuple[np.ndarray, np.ndarray]:
  """The lower-cased distinct words, and each input word's index in them."""
  import pandas as pd  # pylint: disable=g-import-not-at-top
  raw = pd.Series(np.asarray(vocabulary, dtype=object), dtype=object)
  not_str = raw.map(lambda w: not isinstance(w, str))
  if not_str.any():
    bad = raw[not_str].iloc[0]
    raise TypeError(f"every word must be a str, got {bad!r}")
  lowered = raw.str.lower()
  empty = lowered.str.len() == 0
  if empty.any():
    raise ValueError(
        f"empty word at vocabulary index {int(np.flatnonzero(empty)[0])}; "
        "remove empty words before building a population")
  old_to_new, uniq = factorize(lowered)
  return old_to_new, np.asarray(uniq, dtype=object)


def _check_end_symbol(uniq, points, pad, end_symbol) -> None:
  """Raises ``ValueError`` if a word's sent characters hold the end symbol."""
  end_point = ord(end_symbol)
  has_end = (points == end_point) & ~pad
  if np.any(has_end):
    row = int(np.flatnonzero(has_end.any(axis=1))[0])
    raise ValueError(
        f"word {uniq[row]!r} contains the end symbol {end_symbol!r}; pick "
        "another end_symbol or clean the data")


def _alphabet(alphabet, points, pad, end_symbol) -> alphabet_lib.Alphabet:
  """The alphabet given, or every character the words send."""
  if alphabet is None:
    return alphabet_lib.Alphabet(
        tuple(chr(c) for c in np.unique(points[~pad])), end_symbol)
  if isinstance(alphabet, alphabet_lib.Alphabet):
    return alphabet
  return alphabet_lib.Alphabet.of(alphabet, end_symbol)


def _symbol_codes(alpha, uniq, points, pad, policy):
  """Each character's code (clipped) and the words with an unknown one.

  Raises ``ValueError`` on an unknown character under policy ``"error"``.
  """
  alpha_points = np.array([ord(c) for c in alpha.characters], dtype=np.uint32)
  idx = np.searchsorted(alpha_points, points)
  clipped = np.minimum(idx, len(alpha_points) - 1)
  known = (alpha_points[clipped] == points) | pad
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
  return clipped, bad_rows
