"""An on-disk cache of built populations, keyed by everything that built them.

A key is the SHA-256 of a JSON description of the inputs: each input file's
absolute path, size and modification time (so an edited or replaced file
misses), every option, and ``FORMAT_VERSION`` (bumped whenever the data
rules change). An entry is one uncompressed ``.npz`` file holding the
population's arrays and a JSON metadata string; it is written to a temporary
name and renamed, so a reader never sees half an entry.

Faults never stop a run:

* an unreadable entry (truncated, empty, bit-flipped: a bad zip, a CRC
  error, bad metadata) is a miss: a warning names it, and the rebuilt
  population replaces it;
* so is an entry that reads but is not a valid population (an array of the
  wrong dtype or shape, a symbol code past the alphabet, a user index past
  the vocabulary, a size that does not fit the file...): an entry is input,
  checked as :mod:`triehh.data.cache_checks` describes, since a shared
  directory lets others write entries;
* a cache directory that cannot be written (read-only, full) gives a
  warning and the run goes on without caching.

A cache directory that is a file, or an entry path that is a directory,
raises :class:`~triehh.data.report.DataError` before any work.

Sharing: an entry is readable by whoever may read the directory: it gets
the directory's group and other read bits (``chmod g+rx`` on the directory,
optionally ``g+s`` so entries keep its group, lets a team share one cache).

The default directory is ``$XDG_CACHE_HOME/triehh`` or ``~/.cache/triehh``
(:func:`triehh.core.files.default_cache_dir`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import warnings
import zipfile
import zlib
from collections.abc import Callable, Mapping

import numpy as np

from triehh.core import alphabet as alphabet_lib
from triehh.core import population as population_lib
from triehh.data import cache_checks
from triehh.data import report as report_lib

FORMAT_VERSION = 3
# What reading a damaged entry can raise.
_DAMAGED = (OSError, ValueError, KeyError, IndexError, TypeError, EOFError,
            UnicodeDecodeError, zipfile.BadZipFile, zlib.error)
_ARRAYS = ("codes", "word_lengths", "user_word", "user_offsets", "entry_word",
           "entry_count")


def file_identity(path: str) -> dict:
  """What identifies a file's content for the cache: path, size, mtime."""
  stat = os.stat(path)
  return {"path": os.path.abspath(path), "size": stat.st_size,
          "mtime_ns": stat.st_mtime_ns}


def make_key(description: Mapping) -> str:
  """The cache key of a JSON-able description of the inputs."""
  text = json.dumps({"format_version": FORMAT_VERSION, **description},
                    sort_keys=True, default=str)
  return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def entry_path(cache_dir: str, key: str) -> str:
  return os.path.join(cache_dir, f"population-{key}.npz")


def check_dir(cache_dir: str) -> None:
  """Raises ``DataError`` when ``cache_dir`` exists but is not a directory."""
  if os.path.exists(cache_dir) and not os.path.isdir(cache_dir):
    raise report_lib.DataError(
        f"the cache directory {cache_dir} is a file: pass a directory, or "
        "an empty value for no cache")


def check_entry(cache_dir: str, key: str) -> None:
  """Raises ``DataError`` when the entry's path is taken by a directory."""
  path = entry_path(cache_dir, key)
  if os.path.isdir(path):
    raise report_lib.DataError(
        f"the cache entry {path} is a directory: remove it, or use another "
        "cache directory")


def fetch(cache_dir: str | None, description: Mapping,
          build: Callable[[], tuple[population_lib.Population, Mapping]],
          check_metadata: Callable[[Mapping], None] | None = None
          ) -> tuple[population_lib.Population, dict, str | None, bool]:
  """The population ``description`` names, from ``cache_dir`` when an entry
  holds it, else ``build()`` (the population and its metadata), stored.

  Returns the population, its metadata, the entry's path (None when
  nothing is cached: no ``cache_dir``, or it cannot be written) and whether
  it came from the cache. ``check_metadata`` is :func:`load`'s.
  """
  if not cache_dir:
    pop, meta = build()
    return pop, dict(meta), None, False
  check_dir(cache_dir)
  key = make_key(description)
  check_entry(cache_dir, key)
  hit = load(cache_dir, key, check_metadata=check_metadata)
  if hit is not None:
    return hit[0], hit[1], entry_path(cache_dir, key), True
  pop, meta = build()
  return pop, dict(meta), try_save(cache_dir, key, pop, meta), False


def try_save(cache_dir: str, key: str,
             population: population_lib.Population,
             metadata: Mapping) -> str | None:
  """``save``, or a warning and None when the directory cannot be written."""
  try:
    return save(cache_dir, key, population, metadata)
  except OSError as err:
    warnings.warn(f"cannot write to the cache directory {cache_dir} "
                  f"({err.strerror or err}): going on without caching",
                  UserWarning, stacklevel=2)
    return None


def _shared_mode(cache_dir: str) -> int:
  """Owner read/write, plus the read bits the directory grants."""
  mode = os.stat(cache_dir).st_mode
  return (stat.S_IRUSR | stat.S_IWUSR
          | (mode & (stat.S_IRGRP | stat.S_IROTH)))


def save(cache_dir: str, key: str, population: population_lib.Population,
         metadata: Mapping) -> str:
  """Stores ``population`` and ``metadata`` under ``key``; returns the path."""
  os.makedirs(cache_dir, exist_ok=True)
  words = [w.encode("utf-8") for w in population.vocabulary]
  offsets = np.zeros(len(words) + 1, dtype=np.int64)
  np.cumsum([len(w) for w in words], out=offsets[1:])
  arrays = {
      "vocabulary_bytes": np.frombuffer(b"".join(words), dtype=np.uint8),
      "vocabulary_offsets": offsets,
      "metadata": np.array(json.dumps({
          "metadata": dict(metadata),
          "alphabet": "".join(population.alphabet.characters),
          "end_symbol": population.alphabet.end_symbol,
          "max_length": population.max_length,
          "num_dropped_users": population.num_dropped_users,
          "alphabet_from_data": population.alphabet_from_data,
      }, default=str)),
  }
  for name in _ARRAYS:
    value = getattr(population, name)
    if value is not None:
      arrays[name] = value
  path = entry_path(cache_dir, key)
  fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".tmp-", suffix=".npz")
  try:
    with os.fdopen(fd, "wb") as f:
      _write_npz(f, arrays)
    os.chmod(tmp, _shared_mode(cache_dir))
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise
  return path


def _write_npz(f, arrays: Mapping[str, np.ndarray]) -> None:
  """``np.savez(f, **arrays)``'s file, with the archive closed whatever
  happens: when ``np.savez`` fails part-way (a full disk), its open archive
  is left to the garbage collector, which writes to the closed file and
  prints a stray traceback."""
  with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED,
                       allowZip64=True) as archive:
    for name, value in arrays.items():
      with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array(member, np.asanyarray(value),
                                  allow_pickle=False)


def _read_entry(path: str) -> tuple[population_lib.Population, dict]:
  """The population and metadata of the entry at ``path``, checked."""
  cache_checks.check_members(path)
  with np.load(path, allow_pickle=False) as f:
    missing = [n for n in cache_checks.VOCABULARY_ARRAYS if n not in f.files]
    if missing:
      raise cache_checks.InvalidCacheEntry(f"array {missing[0]!r} is missing")
    meta = json.loads(str(f["metadata"]))
    cache_checks.check_metadata(meta)
    data, offsets = f["vocabulary_bytes"], f["vocabulary_offsets"]
    cache_checks.check_vocabulary(data, offsets)
    data = data.tobytes()
    vocabulary = np.array(
        [data[offsets[i]:offsets[i + 1]].decode("utf-8")
         for i in range(offsets.size - 1)], dtype=object)
    arrays = {name: f[name] if name in f.files else None
              for name in _ARRAYS}
  alphabet = alphabet_lib.Alphabet(tuple(meta["alphabet"]),
                                   meta["end_symbol"])
  cache_checks.check_arrays(arrays, vocabulary.size, alphabet.size,
                            meta["max_length"])
  pop = population_lib.Population(
      alphabet=alphabet, max_length=meta["max_length"], vocabulary=vocabulary,
      num_dropped_users=meta["num_dropped_users"],
      alphabet_from_data=meta["alphabet_from_data"], **arrays)
  return pop, meta["metadata"]


def load(cache_dir: str, key: str,
         check_metadata: Callable[[Mapping], None] | None = None
         ) -> tuple[population_lib.Population, dict] | None:
  """The population and metadata stored under ``key``, or None (a miss).

  A damaged or invalid entry is a miss, with a warning (module docstring);
  ``check_metadata`` raises ``ValueError`` (or ``KeyError``, ``TypeError``)
  when the caller's metadata is not what it stored.
  """
  path = entry_path(cache_dir, key)
  if not os.path.isfile(path):
    return None
  try:
    pop, meta = _read_entry(path)
    if check_metadata is not None:
      check_metadata(meta)
  except _DAMAGED as err:
    warnings.warn(f"the cache entry {path} is damaged ({type(err).__name__}: "
                  f"{err}); it is rebuilt", UserWarning, stacklevel=2)
    return None
  return pop, meta
