"""Calibrations remembered on disk, so that a command does not search again.

Calibrating Poisson sampling (:func:`triehh.theory.poisson_calibration.calibrate`)
searches theta and the rate: about 120 evaluations of the accountant, 1-2 s,
paid by every command that runs at a target ``(epsilon, delta)``. The answer
depends only on the arguments of the search and on the code that computes
it, so it is kept here, one small JSON file per search.

An entry is a hint, never a label. The caller checks it with the accountant
before using it (for the Poisson search: the rate meets the target and a
rate ``1 + tolerance`` times larger does not), and computes every reported
number (epsilon, delta) afresh. A wrong or tampered entry can therefore cost
utility at worst, never privacy, and a failed check means searching again.

The key is the SHA-256 of the arguments, the source of the module that
searches (so a changed accountant never reads an old answer) and the numpy
and scipy versions (its numerics). Entries are written to a temporary file
and renamed, so concurrent writers and readers never see half an entry.

The noisy trie's calibration (:func:`triehh.theory.noisy_trie.calibrate`,
about a second of CPU at 11 rounds) is kept here too (kind ``noisy_trie``):
its sigma must meet the target and sigma / 1.001 must not; the rate's
optimality is taken as the search's. So is the planned noisy trie's choice
of rule and sampling rate on the public prior
(:func:`triehh.mechanisms.plan_choice.choose`, kind ``plan_choice``,
20-75 s at 10^7 users and more): the plan is rebuilt from it by the
accountant, and a stored choice that is no candidate is ignored.

Faults never stop a calibration: an unreadable, malformed or mistyped entry
is a miss, and a directory that cannot be made or written means no caching.

Where: ``<cache>/calibrations``, ``<cache>`` being
:func:`triehh.core.files.default_cache_dir` (``$XDG_CACHE_HOME/triehh`` or
``~/.cache/triehh``) unless :func:`configure` names another;
``configure(None)`` turns the store off. The drivers' ``--cache_dir`` is the
populations' cache only: entries here hold no data, just two numbers per
privacy target.

The package also ships a table of answers searched ahead of time for common
targets (``calibrations.json`` beside this module, written by
``python -m tools.make_calibration_table``; grid:
:mod:`triehh.theory.calibration_table`), read by
:func:`shipped`. Its entries have the same keys, so an entry made by other
code or other numpy or scipy versions is never read
(``tests/theory/calibration_table_test.py`` fails when the table is stale).
They are the search's own answers, shipped with the code that made them:
the caller checks the privacy of each with the accountant, as a disk
entry's, but may take its optimality as the search's (for the Poisson
search: the larger rate is not re-checked), so that a first calibration at
a common target costs one evaluation of the accountant, not a search.
``configure(..., table=False)`` leaves the table unread.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence

import numpy as np
import scipy

from triehh.core import files

_UNSET = object()
_directory: object = _UNSET
# The table shipped with the package (module docstring).
TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "calibrations.json")
_read_table = True


def configure(cache_dir: str | None, *, table: bool = True) -> None:
  """Keeps calibrations in ``cache_dir``'s ``calibrations`` folder from now
  on (None or ``""``: nowhere); ``table``: read the shipped table too."""
  global _directory, _read_table
  if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
    raise TypeError(f"cache_dir must be a directory path or None, got "
                    f"{cache_dir!r:.40}")
  if not isinstance(table, bool):
    raise TypeError(f"table must be True or False, got {table!r:.40}")
  _directory = os.path.join(cache_dir, "calibrations") if cache_dir else None
  _read_table = table


def directory() -> str | None:
  """Where calibrations are kept now (None: the store is off)."""
  if _directory is _UNSET:
    return os.path.join(files.default_cache_dir(), "calibrations")
  return _directory  # type: ignore[return-value]


def key(kind: str, arguments: Mapping,
        source_path: str | Sequence[str]) -> str | None:
  """The key of ``arguments``' entry: a digest of them, of the code that
  answers (``source_path``, a file or several) and of the numpy and scipy
  versions; None if a source cannot be read."""
  paths = [source_path] if isinstance(source_path, str) else source_path
  digests = [files.source_digest(path) for path in paths]
  if None in digests:
    return None
  code = digests[0] if len(digests) == 1 else digests
  text = json.dumps({"kind": kind, "arguments": dict(arguments),
                     "code": code, "numpy": np.__version__,
                     "scipy": scipy.__version__}, sort_keys=True)
  return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def _path(kind: str, arguments: Mapping,
          source_path: str | Sequence[str]) -> str | None:
  where = directory()
  found = None if where is None else key(kind, arguments, source_path)
  return None if found is None else os.path.join(where, f"{kind}-{found}.json")


def load(kind: str, arguments: Mapping,
         source_path: str | Sequence[str]) -> dict | None:
  """The entry stored on disk for ``arguments`` (a JSON object), or None.

  ``source_path`` is the file of the code whose answer is stored (or a
  sequence of files: the search and the code it calls).
  """
  path = _path(kind, arguments, source_path)
  if path is None:
    return None
  try:
    with open(path, encoding="utf-8") as f:
      return _answer(json.load(f), arguments)
  except (OSError, ValueError):
    return None


def shipped(kind: str, arguments: Mapping,
            source_path: str | Sequence[str]) -> dict | None:
  """The shipped table's answer for ``arguments``, made by the same code
  (``source_path``) and numpy and scipy versions, or None."""
  if not _read_table:
    return None
  found = key(kind, arguments, source_path)
  return None if found is None else _answer(table().get(found), arguments)


def _answer(entry: object, arguments: Mapping) -> dict | None:
  """``entry``'s answer if it is an entry for ``arguments``, else None."""
  if not isinstance(entry, dict) or entry.get("arguments") != dict(arguments):
    return None
  answer = entry.get("answer")
  return answer if isinstance(answer, dict) else None


@functools.lru_cache(maxsize=1)
def table() -> dict[str, dict]:
  """The shipped table's entries by key; empty if it cannot be read."""
  try:
    with open(TABLE_PATH, encoding="utf-8") as f:
      entries = json.load(f).get("entries")
  except (OSError, ValueError, AttributeError):
    return {}
  if not isinstance(entries, list):
    return {}
  return {entry["key"]: entry for entry in entries
          if isinstance(entry, dict) and isinstance(entry.get("key"), str)}


def table_entry(kind: str, arguments: Mapping,
                source_path: str | Sequence[str], answer: Mapping) -> dict:
  """An entry of the shipped table (``tools/make_calibration_table.py``)."""
  return {"key": key(kind, arguments, source_path), "kind": kind,
          "arguments": dict(arguments), "answer": dict(answer)}


def save(kind: str, arguments: Mapping, source_path: str | Sequence[str],
         answer: Mapping) -> None:
  """Stores ``answer`` (JSON-able) for ``arguments``; silently does
  nothing where the directory cannot be written."""
  path = _path(kind, arguments, source_path)
  if path is None:
    return
  text = json.dumps({"arguments": dict(arguments), "answer": dict(answer)},
                    sort_keys=True)
  with contextlib.suppress(OSError):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    files.write_text(path, text)


def finite_float(value: object) -> float | None:
  """``value`` as a finite float if it is a JSON number, else None."""
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    return None
  value = float(value)
  return value if math.isfinite(value) else None
