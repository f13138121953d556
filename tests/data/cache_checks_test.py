"""Tests of triehh.data.cache_checks: a poisoned cache entry is rebuilt.

Each test builds a real entry through the loader, rewrites it as a
well-formed ``.npz`` whose content is wrong in one way, and loads again:
the load must warn that the entry is damaged, rebuild the population (the
same as the first), and replace the entry (the next load is a hit).
"""

import io
import json
import os
import zipfile

import numpy as np
import pytest

from tests.data import helpers
from triehh.data import cache_checks
from triehh.data import loader

ROWS = [("ann", "the cat and the hat"), ("bob", "cat nap"),
        ("cy", "hat trick"), ("dee", "sooo cat")]


def first_load(tmp_path, setting):
  data = b"".join(helpers.sentiment140_line(u, t) for u, t in ROWS)
  path = helpers.write(str(tmp_path / "s140.csv"), data)
  spec = loader.DataSpec(path, dataset="sentiment140", setting=setting)
  cache_dir = str(tmp_path / "cache")
  return spec, cache_dir, loader.load(spec, cache_dir)


def rewrite(path: str, change) -> None:
  """Saves the entry again (uncompressed, as the cache does) after
  ``change(arrays, meta)`` edited its arrays and metadata in place."""
  with np.load(path) as f:
    arrays = {name: f[name] for name in f.files}
  meta = json.loads(str(arrays["metadata"]))
  change(arrays, meta)
  arrays["metadata"] = np.array(json.dumps(meta))
  with open(path, "wb") as f:
    np.savez(f, **arrays)


def _set(name, value):
  def change(arrays, meta):
    del meta
    arrays[name] = value(arrays[name]) if callable(value) else value
  return change


def _drop(name):
  def change(arrays, meta):
    del meta
    del arrays[name]
  return change


def _meta(path, value):
  def change(arrays, meta):
    del arrays
    target = meta
    for key in path[:-1]:
      target = target[key]
    target[path[-1]] = value
  return change


def _code_past_alphabet(codes):
  codes = codes.copy()
  codes[0, 0] = 1000  # past the 67 characters: an IndexError in the trie
  return codes


def _end_symbol_moved(codes):
  codes = codes.copy()
  row = codes[0]
  end = int(row.max())
  at = int(np.flatnonzero(row == end)[0])
  row[at], row[at - 1] = row[at - 1], end
  return codes


ONE_WORD_POISONS = {
    "code past the alphabet": _set("codes", _code_past_alphabet),
    "negative code inside a word": _set("codes", lambda c: np.where(
        np.arange(c.shape[1]) == 0, -1, c).astype(np.int16)),
    "end symbol moved": _set("codes", _end_symbol_moved),
    "codes as int32": _set("codes", lambda c: c.astype(np.int32)),
    "codes one column short": _set("codes", lambda c: c[:, :-1]),
    "codes missing": _drop("codes"),
    "word length 0": _set("word_lengths", lambda w: w * 0),
    "user word past the vocabulary": _set(
        "user_word", lambda u: u + np.int32(100)),
    "negative user word": _set("user_word", lambda u: u - np.int32(100)),
    "no user": _set("user_word", np.zeros(0, np.int32)),
    "user_word missing": _drop("user_word"),
    "vocabulary offsets past its bytes": _set(
        "vocabulary_offsets", lambda o: o * 2),
    "an unknown array": _set("extra", np.zeros(3)),
    "max_length a float": _meta(("max_length",), 10.5),
    "max_length changed": _meta(("max_length",), 3),
    "alphabet not sorted": _meta(("alphabet",), "zyx"),
    "alphabet not a string": _meta(("alphabet",), ["a"]),
    "dropped users negative": _meta(("num_dropped_users",), -1),
    "report count a string": _meta(("metadata", "report", "rows_read"), "4"),
    "report skipped not a dict": _meta(("metadata", "report", "skipped"), 3),
    "report missing": _meta(("metadata",), {"info": {}}),
    "info not an object": _meta(("metadata", "info"), []),
}

SEVERAL_WORD_POISONS = {
    "entry word past the vocabulary": _set(
        "entry_word", lambda w: w + np.int32(100)),
    "entry count 0": _set("entry_count", lambda c: c * 0),
    "offsets not increasing": _set("user_offsets", lambda o: o[::-1].copy()),
    "offsets past the entries": _set("user_offsets", lambda o: o + 1),
    "user_word with several words": _set("user_word", np.zeros(4, np.int32)),
}


def assert_rebuilt(spec, cache_dir, first):
  with pytest.warns(UserWarning, match=r"cache entry .* is damaged"):
    again = loader.load(spec, cache_dir)
  assert not again.from_cache
  assert again.truth == first.truth and again.report == first.report
  fixed = loader.load(spec, cache_dir)
  assert fixed.from_cache and fixed.truth == first.truth


@pytest.mark.parametrize("poison", sorted(ONE_WORD_POISONS))
def test_poisoned_one_word_entry_is_rebuilt(tmp_path, poison):
  spec, cache_dir, first = first_load(tmp_path, "single")
  rewrite(first.cache_path, ONE_WORD_POISONS[poison])
  assert_rebuilt(spec, cache_dir, first)


@pytest.mark.parametrize("poison", sorted(SEVERAL_WORD_POISONS))
def test_poisoned_several_word_entry_is_rebuilt(tmp_path, poison):
  spec, cache_dir, first = first_load(tmp_path, "multi")
  rewrite(first.cache_path, SEVERAL_WORD_POISONS[poison])
  assert_rebuilt(spec, cache_dir, first)


def npy_bytes(shape: tuple, dtype, data: bytes) -> bytes:
  """A .npy stream declaring ``shape`` and ``dtype``, holding ``data``."""
  out = io.BytesIO()
  np.lib.format.write_array_header_1_0(out, {
      "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
      "fortran_order": False, "shape": shape})
  return out.getvalue() + data


def rezip(path: str, edit) -> None:
  """Rewrites the entry's zip members: ``edit(name, data) -> (data,
  compression)``."""
  with zipfile.ZipFile(path) as zf:
    members = {i.filename: zf.read(i) for i in zf.infolist()}
  with zipfile.ZipFile(path, "w") as zf:
    for name, data in members.items():
      data, compression = edit(name, data)
      zf.writestr(name, data, compress_type=compression)


def test_array_declaring_more_than_its_member_holds_is_not_allocated(
    tmp_path):
  """A header declaring 2^40 codes over a few bytes: refused from the
  header, before numpy allocates the array."""
  spec, cache_dir, first = first_load(tmp_path, "single")
  rezip(first.cache_path, lambda name, data: (
      npy_bytes((1 << 40,), np.int16, b"\0" * 16) if name == "codes.npy"
      else data, zipfile.ZIP_STORED))
  with pytest.raises(cache_checks.InvalidCacheEntry,
                     match=r"'codes\.npy' declares 2,199,023,255,552 bytes"):
    cache_checks.check_members(first.cache_path)
  assert_rebuilt(spec, cache_dir, first)


def test_compressed_member_is_refused(tmp_path):
  spec, cache_dir, first = first_load(tmp_path, "single")
  rezip(first.cache_path, lambda name, data: (data, zipfile.ZIP_DEFLATED))
  assert_rebuilt(spec, cache_dir, first)


def test_valid_entries_pass_every_check(tmp_path):
  for setting in ("single", "multi"):
    (tmp_path / setting).mkdir()
    spec, cache_dir, first = first_load(tmp_path / setting, setting)
    cache_checks.check_members(first.cache_path)
    hit = loader.load(spec, cache_dir)
    assert hit.from_cache and hit.truth == first.truth
    assert os.path.samefile(hit.cache_path, first.cache_path)
