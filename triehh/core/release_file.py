"""A release's words and guarantee in a file one can hand on.

:func:`write` puts the words a mechanism released
(:class:`~triehh.core.release.Release`) in a file, with the guarantee that
covers them, in one of two formats chosen by the file's extension
(:data:`FORMATS`):

* ``.csv``: ``#`` lines stating the mechanism and the guarantee (epsilon,
  delta, adjacency, accounting, covers), then a ``rank,word`` header and
  one row per word, ranked in the release's order (``Release.words``: by a
  protected score where the mechanism ranks, else an order that depends on
  the set of words only);
* ``.json``: one object, ``{"mechanism": {"name", "parameters"},
  "guarantee": {...}, "words": [...]}``; the guarantee's fields are those
  of :class:`~triehh.theory.mechanism.Guarantee`, its relations under
  ``"adjacency"`` (a list of names), and a number that is not finite (the
  epsilon of a run without a guarantee) is the string ``"inf"``.

Nothing the guarantee does not cover (vote counts: ``Release.unprotected``)
is written. The file is written whole or not at all
(:func:`triehh.core.files.write_text`: a temporary file beside it, renamed
over it).
"""

from __future__ import annotations

import csv
import dataclasses
import enum
import io
import json
import math
import os
from collections.abc import Mapping
from typing import Any

from triehh.core import files

FORMATS = (".csv", ".json")
# The guarantee's fields in the order a reader looks for them (the
# ``.csv`` file's ``#`` lines: what is public, whom it trusts and how the
# run drew its randomness too).
_FIRST = ("epsilon", "delta", "adjacency", "two_sided", "accounting",
          "covers", "public", "trust", "randomness")


def file_format(path: str) -> str:
  """The format of ``path``, its extension: ``.csv`` or ``.json``
  (case-insensitive).

  Raises:
    ValueError: for any other extension.
  """
  ext = os.path.splitext(os.fspath(path))[1].lower()
  if ext not in FORMATS:
    raise ValueError(f"{path}: the released words are written as .csv or "
                     f".json (chosen by the extension), not "
                     f"{ext or 'a file without an extension'}")
  return ext


def write(path: str, release: Any) -> str:
  """Writes ``release``'s words and guarantee to ``path`` whole, in the
  format of its extension (:func:`file_format`); returns ``path``.

  Args:
    path: a ``.csv`` or ``.json`` file (replaced if it exists).
    release: a :class:`~triehh.core.release.Release`: its ``mechanism``,
      ``words``, ``guarantee`` and ``params``.

  Raises:
    ValueError: for another extension, a release without a guarantee
      object, or a ``path`` that is a directory.
    OSError: when the file cannot be written (the previous one, if any,
      is left whole).
  """
  fmt = file_format(path)
  if release.guarantee is None:
    raise ValueError(f"the {release.mechanism} release carries no guarantee "
                     "to write beside its words")
  content = {"mechanism": {"name": release.mechanism,
                           "parameters": _plain(release.params)},
             "guarantee": guarantee_fields(release.guarantee),
             "words": [str(word) for word in release.words]}
  text = _csv(content) if fmt == ".csv" else json.dumps(
      content, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
  return files.write_text(path, text)


def guarantee_fields(guarantee: Any) -> dict[str, Any]:
  """A guarantee's fields as plain values: ``adjacency`` the names of its
  relations (``adjacencies``), the others as they are, ``epsilon``,
  ``delta``, ``adjacency``, ``two_sided``, ``accounting`` and ``covers``
  first."""
  fields = _plain(guarantee)
  if not isinstance(fields, dict):
    raise TypeError(f"a guarantee has fields, got {guarantee!r:.60}")
  if "adjacencies" in fields:
    fields["adjacency"] = fields.pop("adjacencies")
  return {**{k: fields[k] for k in _FIRST if k in fields},
          **{k: v for k, v in fields.items() if k not in _FIRST}}


def _plain(value: Any) -> Any:
  """``value`` as JSON's values: a dataclass or mapping a dict, a tuple a
  list, an enum its value, a numpy scalar its Python value, a number that
  is not finite its text (``"inf"``)."""
  if dataclasses.is_dataclass(value) and not isinstance(value, type):
    value = {f.name: getattr(value, f.name)
             for f in dataclasses.fields(value)}
  if isinstance(value, Mapping):
    return {str(k): _plain(v) for k, v in value.items()}
  if isinstance(value, (list, tuple, set, frozenset)):
    items = sorted(value, key=str) if isinstance(
        value, (set, frozenset)) else value
    return [_plain(v) for v in items]
  if isinstance(value, enum.Enum):
    return _plain(value.value)
  if hasattr(value, "item") and callable(value.item):  # a numpy scalar
    value = value.item()
  if isinstance(value, float) and not math.isfinite(value):
    return str(value)
  if value is None or isinstance(value, (bool, int, float, str)):
    return value
  return str(value)


def _csv(content: Mapping[str, Any]) -> str:
  """The ``.csv`` text: ``#`` lines, then ``rank,word`` rows."""
  out = io.StringIO()
  guarantee = content["guarantee"]
  notes = [("mechanism", content["mechanism"]["name"])]
  for key, value in guarantee.items():
    if key in _FIRST:
      notes.append((key, ", ".join(map(str, value))
                    if isinstance(value, list) else value))
  notes.append(("order", "rank 1 first, in the order the mechanism "
                "releases the words"))
  for key, value in notes:
    text = " ".join(str(value).split())
    if isinstance(value, bool):
      text = str(value).lower()
    out.write(f"# {key}: {text}\n")
  writer = csv.writer(out, lineterminator="\n")
  writer.writerow(("rank", "word"))
  for rank, word in enumerate(content["words"], 1):
    writer.writerow((rank, word))
  return out.getvalue()
