"""Input files: refused by kind before they are opened, read in bounded lines.

Kind. Every file the data layer reads must be a regular file (or a link to
one). :func:`check_regular_file` refuses a directory, a named pipe (a FIFO,
also the ``/dev/fd/N`` of a shell's ``<(...)``), a character or block device
(``/dev/zero``) or a socket from ``os.stat`` alone, without opening it:
opening a FIFO blocks until a writer appears, a device may never end, and a
pipe can be read only once while the readers look at a file several times
(its magic bytes, its header, its rows).

Lines. No line is read whole past ``MAX_LINE_BYTES`` (4 MiB of the
decompressed file, line break excluded; a row of Sentiment140 is about 150
bytes). What a longer line means depends on where it is:

* a data row (CSV, TSV, Sentiment140, JSON Lines) is a malformed row: it is
  skipped and counted under ``report.SKIP_TOO_LONG``, read in bounded pieces
  and never held whole (:func:`lines`, :class:`BlankedLongLines`);
* a header line, or a line of a word list or a table
  (:func:`text_lines`), cannot be skipped: it raises
  :class:`~triehh.data.report.DataError` naming the file, the line number
  and the bound (:func:`too_long`).

The bound is read when a file is opened, so tests can lower it.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from triehh.data import report as report_lib
from triehh.data import user_texts

# The longest line read, in bytes (module docstring). Arrow's CSV blocks
# (csv_reader) are kept at least four times larger, so a line within the
# bound always fits, even once latin-1 is transcoded to UTF-8.
MAX_LINE_BYTES = 4 << 20
_CHUNK = 1 << 20  # read size while a long line is skipped
_FIRST_BREAK = re.compile(rb"\r\n|\r|\n")
# Kinds other than a regular file, and what to pass instead.
_KINDS = ((stat.S_ISDIR, "a directory", "pass a file in it"),
          (stat.S_ISFIFO, "a named pipe (FIFO)",
           "save what the pipe carries to a file first"),
          (stat.S_ISCHR, "a character device", "pass a regular file"),
          (stat.S_ISBLK, "a block device", "pass a regular file"),
          (stat.S_ISSOCK, "a socket", "pass a regular file"))


def file_kind(mode: int) -> str:
  """What a ``st_mode`` is, as a noun phrase (``"a directory"``...)."""
  return _kind_and_hint(mode)[0]


def _kind_and_hint(mode: int) -> tuple[str, str]:
  if stat.S_ISREG(mode):
    return "a regular file", ""
  for test, kind, hint in _KINDS:
    if test(mode):
      return kind, hint
  return "not a regular file", "pass a regular file"


def check_regular_file(path: str, what: str = "data file") -> None:
  """Raises unless ``path`` is a regular file; never opens it.

  Raises:
    FileNotFoundError: ``path`` does not exist (``"<what> not found"``).
    report.DataError: ``path`` is a directory, a pipe, a device or a socket.
  """
  try:
    mode = os.stat(path).st_mode
  except FileNotFoundError as err:
    raise FileNotFoundError(f"{what} not found: {path}") from err
  if not stat.S_ISREG(mode):
    kind, hint = _kind_and_hint(mode)
    raise report_lib.DataError(
        f"the {what} {path} is {kind}, not a regular file: {hint}")


def too_long(path: str, line: int, limit: int, what: str = "line"
             ) -> report_lib.DataError:
  """The error for a line that cannot be skipped and is over ``limit``."""
  return report_lib.DataError(
      f"{what} {line} of {path} is longer than {limit:,} bytes, the bound on "
      "one line (input_files.MAX_LINE_BYTES): is it a text file in the "
      "format asked for?")


def too_long_place(line: int, limit: int) -> str:
  """How a skipped over-long line is named in a report's examples."""
  return f"line {line} (over {limit:,} bytes)"


def first_line(stream: BinaryIO, path: str, limit: int | None = None
               ) -> bytes:
  """The first line of ``stream`` without its break (CR, LF or CRLF).

  Raises ``DataError`` (:func:`too_long`) when it is over ``limit`` bytes.
  """
  limit = MAX_LINE_BYTES if limit is None else limit
  raw = stream.readline(limit + 2)
  found = _FIRST_BREAK.search(raw)
  line = raw[:found.start()] if found else raw
  if len(line) > limit:
    raise too_long(path, 1, limit)
  return line


def lines(stream: BinaryIO, limit: int | None = None
          ) -> Iterator[tuple[int, bytes | None]]:
  """``(line number, line)`` for each LF-ended line of ``stream``.

  A line keeps its break. A line over ``limit`` bytes (break excluded) is
  ``None``: its rest is read in pieces and dropped, never held whole.
  """
  limit = MAX_LINE_BYTES if limit is None else limit
  number = 0
  while True:
    raw = stream.readline(limit + 2)
    if not raw:
      return
    number += 1
    ended = raw.endswith(b"\n")
    size = len(raw) - (2 if raw.endswith(b"\r\n") else 1 if ended else 0)
    if size <= limit:
      yield number, raw
      continue
    while not ended:
      piece = stream.readline(_CHUNK)
      ended = not piece or piece.endswith(b"\n")
    yield number, None


def text_lines(path: str, what: str, limit: int | None = None
               ) -> Iterator[tuple[int, str]]:
  """``(line number, line)`` of a UTF-8 text file, its break removed.

  For word lists and tables: the file is checked (:func:`check_regular_file`,
  ``what`` names it), decompressed by its suffix (``.gz``, ``.bz2``,
  ``.zip``), a byte order mark dropped. A line over ``limit`` bytes or not
  valid UTF-8 raises ``DataError`` naming the file and the line.
  """
  check_regular_file(path, what)
  limit = MAX_LINE_BYTES if limit is None else limit
  with user_texts.open_bytes(path) as f:
    for number, raw in lines(f, limit):
      if raw is None:
        raise too_long(path, number, limit)
      if number == 1:
        raw = raw.removeprefix(b"\xef\xbb\xbf")
      try:
        yield number, raw.decode("utf-8").rstrip("\r\n")
      except UnicodeDecodeError as err:
        raise report_lib.DataError(
            f"line {number} of the {what} {path} is not valid UTF-8: "
            f"{err}") from err


class BlankedLongLines(io.RawIOBase):
  """``stream`` with every line over ``limit`` bytes emptied.

  A line ends at LF, CR or CRLF (Arrow's line breaks). An over-long line
  keeps its break, so the lines after it keep their numbers, and loses its
  bytes, so a parser that ignores empty lines never sees it; its number is
  added to ``long_lines``. At most ``limit`` bytes of a line are held.
  """

  def __init__(self, stream: BinaryIO, limit: int | None = None,
               chunk_size: int = 4 << 20):
    super().__init__()
    self._stream = stream
    self._limit = MAX_LINE_BYTES if limit is None else limit
    self._chunk_size = chunk_size
    self._carry = b""  # the start of a line not yet ended
    self._skipping = False  # inside an over-long line
    self._lines = 0  # lines ended so far
    self._out = b""
    self._at = 0  # bytes of _out already returned
    self._eof = False
    self.long_lines: list[int] = []

  def readable(self) -> bool:
    return True

  def read(self, size: int = -1) -> bytes:
    """Up to ``size`` bytes (all with ``size < 0``); ``b""`` at the end."""
    if self._at == len(self._out):
      self._out, self._at = b"", 0
      while not self._eof and not self._out:
        self._fill()
    if size < 0:
      while not self._eof:
        self._fill()
      size = len(self._out)
    out = self._out[self._at:self._at + size]
    self._at += len(out)
    return out

  def readinto(self, buffer) -> int:
    data = self.read(len(buffer))
    buffer[:len(data)] = data
    return len(data)

  def close(self) -> None:
    self._stream.close()
    super().close()

  def _fill(self) -> None:
    """Reads one chunk; appends its ended lines (long ones emptied)."""
    chunk = self._stream.read(self._chunk_size)
    if not chunk:  # the last line, ended by the end of the file
      self._eof, self._lines = True, self._lines + 1
      self._out, self._carry = self._out + self._carry, b""
      return
    buf = self._carry + chunk
    ends, sizes = _line_ends(buf)
    self._out += self._ended_lines(buf, ends, sizes)
    rest = buf[int(ends[-1]) + 1:] if ends.size else buf
    if not self._skipping and len(rest.rstrip(b"\r")) > self._limit:
      self.long_lines.append(self._lines + 1)
      self._skipping = True
    if self._skipping:  # keep a CR: it may be the long line's break
      rest = rest[-1:] if rest.endswith(b"\r") else b""
    self._carry = rest

  def _ended_lines(self, buf: bytes, ends: np.ndarray,
                   sizes: np.ndarray) -> bytes:
    """The lines of ``buf`` ending at ``ends``, the long ones emptied."""
    if not ends.size:
      return b""
    long = sizes > self._limit
    continued, self._skipping = self._skipping, False
    long[0] |= continued  # its start was dropped with an earlier chunk
    first = self._lines + 1
    self._lines += int(ends.size)
    new = np.flatnonzero(long)[1 if continued else 0:]
    self.long_lines.extend(int(first + i) for i in new)
    if not long.any():
      return buf[:int(ends[-1]) + 1]
    starts = np.r_[0, ends[:-1] + 1]
    breaks = ends + 1 - _break_sizes(buf, ends)
    pieces, at = [], 0
    for i in np.flatnonzero(long):
      pieces.append(buf[at:int(starts[i])])
      at = int(breaks[i])
    pieces.append(buf[at:int(ends[-1]) + 1])
    return b"".join(pieces)


def _line_ends(buf: bytes) -> tuple[np.ndarray, np.ndarray]:
  """Last byte of each line break in ``buf``, and each line's size.

  A CR as the last byte is left for the next chunk (it may start a CRLF).
  """
  data = np.frombuffer(buf, dtype=np.uint8)
  lf = data == 10
  lone_cr = data == 13
  lone_cr[:-1] &= ~lf[1:]
  lone_cr[-1:] = False
  ends = np.flatnonzero(lf | lone_cr)
  starts = np.r_[0, ends[:-1] + 1]
  sizes = ends + 1 - _break_sizes(buf, ends) - starts
  return ends, sizes


def _break_sizes(buf: bytes, ends: np.ndarray) -> np.ndarray:
  """1 for a lone LF or CR ending at ``ends``, 2 for a CRLF."""
  data = np.frombuffer(buf, dtype=np.uint8)
  before = np.maximum(ends - 1, 0)
  crlf = (data[ends] == 10) & (ends > 0) & (data[before] == 13)
  return 1 + crlf.astype(np.int64)
