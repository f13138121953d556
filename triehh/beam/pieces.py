"""Line-aligned byte ranges of one large text file, read as files of their own.

A plain (uncompressed) CSV, TSV, JSON Lines or Sentiment140 file larger
than the split size is cut into pieces of about that many bytes: a piece
``[start, end)`` holds the lines that begin in it (a line begins at byte 0
or after a line feed), so every line is in exactly one piece, in file
order. A piece is read by copying its bytes, after the file's header for
CSV and TSV, to a temporary file beside nothing else, which the loader's
readers read like any file (``triehh.beam.shards``): memory stays bounded
by the piece, whatever the file's size.

Lines are cut at line feeds only: a file whose lines end with a lone CR is
not cut (it is one piece), and a quoted CSV field left open at the end of
a piece ends there instead of swallowing the next piece's lines.
Compressed files and Parquet are never cut.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Iterator

from triehh.data import readers
from triehh.data import report as report_lib

_CHUNK = 1 << 20
_HEADER_FORMATS = ("csv", "tsv")
_TEXT_FORMATS = ("csv", "tsv", "jsonl", "sentiment140")


@dataclasses.dataclass(frozen=True)
class Piece:
  """Bytes ``[start, end)`` of ``path`` (``end`` None: the whole file)."""

  path: str
  start: int = 0
  end: int | None = None

  def describe(self) -> str:
    if self.end is None:
      return self.path
    return f"{self.path} (bytes {self.start:,} to {self.end:,})"


def file_format(path: str, dataset: str, fmt: str) -> str:
  """The format the readers will read ``path`` as."""
  if dataset == "sentiment140":
    return "sentiment140"
  return readers.detect_format(path) if fmt == "auto" else fmt


def split(path: str, fmt: str, split_bytes: int | None) -> list[Piece]:
  """``path`` as pieces of about ``split_bytes`` (module docstring); one
  piece when it is small, compressed, Parquet, or ``split_bytes`` None."""
  if split_bytes is not None and split_bytes < 1:
    raise ValueError(f"split_bytes must be >= 1, got {split_bytes}")
  size = os.path.getsize(path)
  compressed = path.lower().endswith((".gz", ".bz2", ".zip"))
  if (split_bytes is None or size <= split_bytes or compressed
      or fmt not in _TEXT_FORMATS):
    return [Piece(path)]
  starts = list(range(0, size, split_bytes))
  return [Piece(path, s, min(s + split_bytes, size)) for s in starts]


def _line_start(f, position: int) -> int:
  """The first line beginning at or after ``position``."""
  if position == 0:
    return 0
  f.seek(position - 1)
  if f.read(1) == b"\n":
    return position
  while True:
    chunk = f.readline(_CHUNK)
    if not chunk or chunk.endswith(b"\n"):
      return f.tell()


@contextlib.contextmanager
def as_file(piece: Piece, fmt: str) -> Iterator[str | None]:
  """A path holding the piece's lines (the file itself if it is whole);
  None when no line begins in the piece."""
  if piece.end is None:
    yield piece.path
    return
  with open(piece.path, "rb") as f:
    begin = _line_start(f, piece.start)
    end = _line_start(f, piece.end)
  if begin >= end:
    yield None
    return
  suffix = "_" + os.path.basename(piece.path)
  handle, temp = tempfile.mkstemp(suffix=suffix)
  try:
    with open(piece.path, "rb") as f, os.fdopen(handle, "wb") as out:
      if piece.start > 0 and fmt in _HEADER_FORMATS:
        f.seek(0)
        out.write(f.readline())
      f.seek(begin)
      _copy(f, out, max(end - begin, 0))
    yield temp
  finally:
    os.remove(temp)


def _copy(source, target, size: int) -> None:
  while size > 0:
    chunk = source.read(min(size, _CHUNK))
    if not chunk:
      return
    target.write(chunk)
    size -= len(chunk)


def renamed(err: report_lib.DataError, temp: str,
            piece: Piece) -> report_lib.DataError:
  """A reader's error about the temporary file, said of the piece."""
  return report_lib.DataError(str(err).replace(temp, piece.describe()))
