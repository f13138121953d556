"""Checks of a population cache entry read back, before it is used.

A cache directory may be shared by a team (see :mod:`triehh.data.cache`),
so an entry is input like any data file: whoever may write the directory
may leave a well-formed ``.npz`` whose arrays would crash an engine (a
symbol code past the alphabet, a user index past the vocabulary) or
exhaust memory. Each check raises :class:`InvalidCacheEntry` naming what is
wrong; the cache treats it as a damaged entry (a warning, then the
population is rebuilt and replaces it). In order:

1. members (:func:`check_members`), before any array is read: only ``.npy``
   members, stored uncompressed (as ``numpy.savez`` writes them), no
   object dtype, and a declared shape whose bytes fit in the member, so
   reading allocates no more than the file's size;
2. metadata (:func:`check_metadata`): the JSON fields and their types;
3. vocabulary (:func:`check_vocabulary`): its offsets;
4. population arrays (:func:`check_arrays`): which arrays are present (one
   word per user, or several in CSR form), their dtypes and shapes as
   :class:`~triehh.core.population.Population` documents them, and every
   value's range: each word's symbol codes (characters, then the end
   symbol at its length if it fits in ``max_length``, then ``-1``), user
   and word indices, offsets and counts.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Mapping

import numpy as np

VOCABULARY_ARRAYS = ("vocabulary_bytes", "vocabulary_offsets", "metadata")
ONE_WORD_ARRAYS = ("user_word",)
SEVERAL_WORD_ARRAYS = ("user_offsets", "entry_word", "entry_count")
_DTYPES = {"codes": np.int16, "word_lengths": np.int32,
           "user_word": np.int32, "user_offsets": np.int64,
           "entry_word": np.int32, "entry_count": np.int64,
           "vocabulary_bytes": np.uint8, "vocabulary_offsets": np.int64}
_KNOWN = frozenset(VOCABULARY_ARRAYS) | frozenset(_DTYPES)
_MAX_USERS = 2**62  # as Population.from_word_frequencies


class InvalidCacheEntry(ValueError):
  """A cache entry that reads, but does not hold a valid population."""


def _array_header(member) -> tuple[tuple[int, ...], np.dtype]:
  """The shape and dtype a ``.npy`` stream declares (nothing else read)."""
  fmt = np.lib.format
  version = fmt.read_magic(member)
  if version == (1, 0):
    shape, _, dtype = fmt.read_array_header_1_0(member)
  elif version == (2, 0):
    shape, _, dtype = fmt.read_array_header_2_0(member)
  else:
    raise InvalidCacheEntry(f"unsupported .npy version {version}")
  return shape, dtype


def check_members(path: str) -> None:
  """Step 1 of the module docstring: members, sizes, dtypes."""
  with zipfile.ZipFile(path) as zf:
    for info in zf.infolist():
      name = info.filename
      if not name.endswith(".npy") or name[:-4] not in _KNOWN:
        raise InvalidCacheEntry(f"unexpected member {name!r}")
      if info.compress_type != zipfile.ZIP_STORED:
        raise InvalidCacheEntry(f"member {name!r} is compressed")
      with zf.open(info) as member:
        shape, dtype = _array_header(member)
      if dtype.hasobject:
        raise InvalidCacheEntry(f"member {name!r} holds Python objects")
      size = math.prod(shape) * dtype.itemsize
      if size > info.file_size:
        raise InvalidCacheEntry(
            f"member {name!r} declares {size:,} bytes of data in "
            f"{info.file_size:,} bytes")


def _is_int(value) -> bool:
  return isinstance(value, int) and not isinstance(value, bool)


def check_metadata(meta) -> None:
  """Step 2 of the module docstring: the entry's own metadata fields."""
  if not isinstance(meta, Mapping):
    raise InvalidCacheEntry("the metadata is not an object")
  for field, kind in (("metadata", Mapping), ("alphabet", str),
                      ("end_symbol", str), ("alphabet_from_data", bool)):
    if not isinstance(meta.get(field), kind):
      raise InvalidCacheEntry(f"metadata field {field!r} is missing or of "
                              "the wrong type")
  for field, least in (("max_length", 1), ("num_dropped_users", 0)):
    if not _is_int(meta.get(field)) or meta[field] < least:
      raise InvalidCacheEntry(f"metadata field {field!r} is not an integer "
                              f">= {least}")


def _check_array(name: str, value, shape: tuple) -> np.ndarray:
  """``value`` if it has ``name``'s dtype and ``shape`` (None: any size)."""
  if value is None:
    raise InvalidCacheEntry(f"array {name!r} is missing")
  if value.dtype != np.dtype(_DTYPES[name]) or value.ndim != len(shape) or (
      any(want is not None and got != want
          for got, want in zip(value.shape, shape))):
    raise InvalidCacheEntry(
        f"array {name!r} is {value.dtype}{list(value.shape)}, not "
        f"{np.dtype(_DTYPES[name])}"
        f"{['n' if s is None else s for s in shape]}")
  return value


def _check_range(name: str, values: np.ndarray, low: int, high: int) -> None:
  """Every value in ``[low, high)``."""
  if values.size and (values.min() < low or values.max() >= high):
    raise InvalidCacheEntry(
        f"array {name!r} holds values outside [{low}, {high})")


def check_vocabulary(data: np.ndarray, offsets: np.ndarray) -> None:
  """Step 3 of the module docstring: the words' byte offsets."""
  _check_array("vocabulary_bytes", data, (None,))
  _check_array("vocabulary_offsets", offsets, (None,))
  if (offsets.size < 2 or offsets[0] != 0 or offsets[-1] != data.size
      or np.any(np.diff(offsets) <= 0)):
    raise InvalidCacheEntry(
        "the vocabulary's offsets do not cut its bytes into non-empty words")


def _check_codes(codes: np.ndarray, lengths: np.ndarray, num_symbols: int,
                 max_length: int) -> None:
  """Each row: characters, then the end symbol if it fits, then ``-1``."""
  _check_range("word_lengths", lengths, 1, np.iinfo(np.int32).max)
  end = num_symbols  # the end symbol's code
  for at in range(max_length + 1):
    column = codes[:, at]
    is_char = lengths > at if at < max_length else np.zeros_like(lengths,
                                                                  bool)
    is_end = lengths == at
    ok = np.where(is_char, (column >= 0) & (column < end),
                  np.where(is_end, column == end, column == -1))
    if not ok.all():
      word = int(np.flatnonzero(~ok)[0])
      raise InvalidCacheEntry(
          f"array 'codes' is not a valid code of word {word} at position "
          f"{at} (alphabet of {num_symbols} characters, word length "
          f"{int(lengths[word])}, max_length {max_length})")


def check_arrays(arrays: Mapping, num_words: int, num_symbols: int,
                 max_length: int) -> None:
  """Step 4 of the module docstring, for ``num_words`` words."""
  codes = _check_array("codes", arrays.get("codes"),
                       (num_words, max_length + 1))
  lengths = _check_array("word_lengths", arrays.get("word_lengths"),
                         (num_words,))
  _check_codes(codes, lengths, num_symbols, max_length)
  one = [arrays.get(n) is not None for n in ONE_WORD_ARRAYS]
  several = [arrays.get(n) is not None for n in SEVERAL_WORD_ARRAYS]
  if all(one) and not any(several):
    user_word = _check_array("user_word", arrays["user_word"], (None,))
    if not user_word.size:
      raise InvalidCacheEntry("array 'user_word' is empty: no user")
    _check_range("user_word", user_word, 0, num_words)
    return
  if any(one) or not all(several):
    raise InvalidCacheEntry(
        "the entry holds neither one word per user (user_word) nor several "
        "(user_offsets, entry_word, entry_count)")
  offsets = _check_array("user_offsets", arrays["user_offsets"], (None,))
  if offsets.size < 2 or offsets[0] != 0 or np.any(np.diff(offsets) <= 0):
    raise InvalidCacheEntry(
        "array 'user_offsets' does not start at 0 and increase")
  nnz = int(offsets[-1])
  entry_word = _check_array("entry_word", arrays["entry_word"], (nnz,))
  _check_range("entry_word", entry_word, 0, num_words)
  counts = _check_array("entry_count", arrays["entry_count"], (nnz,))
  _check_range("entry_count", counts, 1, _MAX_USERS)
  if counts.astype(np.float64).sum() >= _MAX_USERS:
    raise InvalidCacheEntry("array 'entry_count' sums to 2^62 or more")
