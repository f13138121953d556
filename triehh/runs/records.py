"""``results.jsonl``: one run record per line; this module is its only reader
and writer.

A line is a :class:`RunRecord` as JSON (its fields, each documented where
it is declared, are in :mod:`triehh.runs.schema`). ``experiments.run_triehh``,
``experiments.run_sfp`` and the sweeps append records with
:class:`ResultsWriter`; :func:`read` reads them back, validating each line
once (:meth:`RunRecord.from_dict`), for ``experiments.summarize``,
:mod:`reports.summary`, the reproduction and a sweep's resume
(:func:`completed`).

Writing: :class:`ResultsWriter` appends each record as one complete line
with a single ``os.write`` on an ``O_APPEND`` descriptor under an exclusive
``fcntl.flock``, so concurrent writers never interleave. A last line
without its newline (a writer killed mid-line) is moved to
``results.jsonl.partial-<UTC time>-<pid>`` before the next append, with a
message on stderr, and is never glued to the next record.

Counting: a writer counts the lines it appends (``written``), and can add
them to a :class:`LineCount` shared by the writers of several processes.
A line is counted as soon as it is written, before the lock is released and
before Ctrl-C may stop the writer, so a count said on interrupt is the
number of lines the file gained; :func:`write_lock` holds writers off (while
their processes are stopped, say).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import _signal
import fcntl
import json
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from triehh.data import input_files
from triehh.runs import schema

RESULTS_FILE = "results.jsonl"
# The record and its schema (:mod:`triehh.runs.schema`), for callers of
# this module.
RunRecord = schema.RunRecord
RecordError = schema.RecordError
SCHEMA_VERSION = schema.SCHEMA_VERSION
ALGORITHMS = schema.ALGORITHMS
algorithms = schema.algorithms
TrieHHParams = schema.TrieHHParams
SFPParams = schema.SFPParams
IBLTParams = schema.IBLTParams
PartitionSelectionParams = schema.PartitionSelectionParams
config_key = schema.config_key
schema_problem = schema.schema_problem
as_number = schema.as_number


def results_path(output_dir: str) -> str:
  return os.path.join(output_dir, RESULTS_FILE)


def _path(name: str, value) -> str:
  """``value``, a ``str`` or ``os.PathLike`` path, as a ``str``; else a
  TypeError naming ``name`` (bytes and ints are refused: ``open`` would take
  an int for a file descriptor)."""
  if isinstance(value, os.PathLike):
    value = os.fspath(value)
  if not isinstance(value, str):
    raise TypeError(f"{name} must be a path (a str or os.PathLike), got "
                    f"{type(value).__name__} {value!r:.60}")
  return value


def results_paths(results: Sequence[str], output_dirs: Sequence[str]
                  ) -> list[str]:
  """The results files named by ``--results`` and ``--output_dir``.

  Raises:
    FileNotFoundError: naming the first file that does not exist.
    IsADirectoryError, ValueError: naming one that is a directory or not a
      regular file; ValueError: if no file is named.
  """
  paths = []
  named = [os.path.join(given, RESULTS_FILE) if os.path.isdir(given)
           else given for given in results]
  for path in named + [os.path.join(d, RESULTS_FILE) for d in output_dirs]:
    if os.path.isdir(path):
      raise IsADirectoryError(f"{path} is a directory, not a results file")
    kind = file_kind(path)
    if kind is not None:
      raise ValueError(f"{path} is {kind}, not a results file")
    if not os.path.isfile(path):
      raise FileNotFoundError(f"results file not found: {path}")
    if os.path.realpath(path) not in {os.path.realpath(p) for p in paths}:
      paths.append(path)
  if not paths:
    raise ValueError("give the results to summarise: results=FILE[,FILE] "
                     "or output_dir=DIR[,DIR]")
  return paths


def file_kind(path: str) -> str | None:
  """What ``path`` is when it exists and is not a regular file (``"a named
  pipe (FIFO)"``, ``"a character device"``, ...; links followed), else
  None. Nothing is opened."""
  try:
    mode = os.stat(path).st_mode
  except (OSError, ValueError):
    return None
  return None if stat.S_ISREG(mode) else input_files.file_kind(mode)


# ---- writing ----------------------------------------------------------------


def check_output_dir(output_dir: str | os.PathLike) -> str:
  """Creates ``output_dir`` if needed; the path of its results file.

  Raises:
    TypeError: if ``output_dir`` is not a path (str or os.PathLike).
    ValueError: if ``output_dir`` is a file, its results file is not a
      regular file, or either cannot be written.
  """
  output_dir = _path("output_dir", output_dir)
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise ValueError(f"output_dir={output_dir} is a file, not a directory")
  try:
    os.makedirs(output_dir, exist_ok=True)
  except OSError as err:
    raise ValueError(f"output_dir={output_dir}: cannot create it "
                     f"({err.strerror})") from None
  path = results_path(output_dir)
  if os.path.exists(path) and not os.path.isfile(path):
    raise ValueError(f"output_dir={output_dir}: {path} is not a regular "
                     "file (a directory?); move it away or choose another "
                     "output_dir")
  target = path if os.path.exists(path) else output_dir
  if not os.access(target, os.W_OK):
    raise ValueError(f"output_dir={output_dir}: {target} is not writable")
  return path


def _partial_path(path: str) -> str:
  stamp = datetime.datetime.now(datetime.timezone.utc).strftime(
      "%Y%m%dT%H%M%S.%fZ")
  return f"{path}.partial-{stamp}-{os.getpid()}"


def _set_aside_partial_line(fd: int, path: str) -> str | None:
  """Moves an unterminated last line to a side file; its path, or None.

  The caller holds the file's lock.
  """
  size = os.fstat(fd).st_size
  if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
    return None
  end = size
  start = 0
  while end > 0:
    begin = max(0, end - 65536)
    chunk = os.pread(fd, end - begin, begin)
    newline = chunk.rfind(b"\n")
    if newline >= 0:
      start = begin + newline + 1
      break
    end = begin
  partial = os.pread(fd, size - start, start)
  side = _partial_path(path)
  with open(side, "xb") as f:
    f.write(partial)
    f.flush()
    os.fsync(f.fileno())
  os.ftruncate(fd, start)
  return side


class LineCount:
  """How many lines the writers given this count (``ResultsWriter(...,
  count=)``) appended.

  Made with a ``multiprocessing`` context, the count is kept in shared
  memory, for writers in the processes that context starts: pass the
  ``LineCount`` to them when they start (their ``args`` or a pool's
  ``initargs``). Without one, it counts in this process only.
  """

  def __init__(self, context: Any = None):
    self._shared = context.Value("q", 0) if context is not None else None
    self._here = 0

  def add(self, lines: int = 1) -> None:
    if self._shared is None:
      self._here += lines
      return
    with self._shared.get_lock():
      self._shared.value += lines

  @property
  def value(self) -> int:
    return self._here if self._shared is None else self._shared.value


class _ctrl_c_held:  # pylint: disable=invalid-name
  """Holds Ctrl-C (SIGINT) back until the ``with`` block ends.

  Python runs its SIGINT handler in the main thread whichever thread the
  signal reaches, so blocking the signal in this thread would not keep
  ``KeyboardInterrupt`` out; the handler is swapped for one that notes the
  signal instead, and the noted signal is handled after the block. In
  another thread there is nothing to hold back.

  The swap goes through ``_signal``, the C module under :mod:`signal`: its
  calls take and return the handlers as they are, where :mod:`signal`'s
  try to make an enum of each Python handler and raise and catch an
  exception doing so (a sweep holds Ctrl-C back once per run; that cost
  it 10 us a time against 1 us).
  """

  __slots__ = ("_previous", "_caught")

  def __enter__(self) -> None:
    self._caught = None
    self._previous = _signal.getsignal(signal.SIGINT)
    if (self._previous in (signal.SIG_IGN, None)
        or threading.current_thread() is not threading.main_thread()):
      self._previous = None  # nothing to hold back
      return
    _signal.signal(signal.SIGINT, self._note)

  def _note(self, signum, frame) -> None:
    del signum
    self._caught = [frame]

  def __exit__(self, *exc_info) -> None:
    previous, caught = self._previous, self._caught
    if previous is None:
      return
    _signal.signal(signal.SIGINT, previous)
    if caught and callable(previous):
      previous(signal.SIGINT, caught[0])
    elif caught:  # SIG_DFL: the signal ends the process
      signal.raise_signal(signal.SIGINT)


@contextlib.contextmanager
def write_lock(output_dir: str) -> Iterator[None]:
  """Holds the lock of ``<output_dir>/results.jsonl``: while it is held, no
  :class:`ResultsWriter` is appending a line, and none starts one."""
  output_dir = _path("output_dir", output_dir)
  try:
    fd = os.open(results_path(output_dir),
                 os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
  except FileNotFoundError:  # no directory yet: no writer either
    yield
    return
  try:
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield
  finally:
    os.close(fd)  # also releases the lock


class ResultsWriter:
  """Appends records to ``<output_dir>/results.jsonl``, one line each.

  Every append takes an exclusive ``flock`` on the file, sets aside an
  unterminated last line (see the module docstring), writes the record and
  its newline with one ``os.write`` on an ``O_APPEND`` descriptor, counts
  it (``written``, and ``count`` if given) and ``fsync``s, Ctrl-C held back
  until then. Without ``output_dir`` nothing is written.

  With ``sync_seconds`` > 0, a line is ``fsync``ed only when the last sync
  is that old, and :meth:`close` (or leaving a ``with`` block) syncs the
  rest: a sweep syncs every few seconds and when it ends
  (:mod:`triehh.runs.runner`). A line is on disk as soon as ``os.write``
  returns, so a killed process loses none either way; the sync guards
  against a crash of the machine.
  """

  def __init__(self, output_dir: str | os.PathLike | None, *, log=None,
               count: LineCount | None = None, sync_seconds: float = 0.0):
    self.path = (None if output_dir is None or output_dir == ""
                 else check_output_dir(output_dir))
    self._log = log or (lambda text: print(text, file=sys.stderr))
    self._count = count
    self._sync_seconds = sync_seconds
    self._synced_at = time.monotonic()
    self._unsynced = False
    self.written = 0

  def __enter__(self) -> "ResultsWriter":
    return self

  def __exit__(self, *exc_info) -> None:
    self.close()

  def close(self) -> None:
    """``fsync``s the lines not yet synced (see the class docstring)."""
    if self.path is None or not self._unsynced:
      return
    fd = os.open(self.path, os.O_RDONLY)
    try:
      os.fsync(fd)
    finally:
      os.close(fd)
    self._unsynced = False
    self._synced_at = time.monotonic()

  def write(self, record: RunRecord) -> None:
    """Appends ``record`` as one line (see the class docstring)."""
    if self.path is None:
      return
    line = (record.to_json() + "\n").encode("utf-8")
    with _locked_for_append(self.path, self._log) as fd:
      # Ctrl-C waits until the line is written, counted and synced, so that
      # the count said on interrupt is the number of lines kept.
      with _ctrl_c_held():
        _append_whole(fd, line, self.path)
        self.written += 1
        if self._count is not None:
          self._count.add()
        self._unsynced = True
        if time.monotonic() - self._synced_at >= self._sync_seconds:
          os.fsync(fd)
          self._unsynced = False
          self._synced_at = time.monotonic()


@contextlib.contextmanager
def _locked_for_append(path: str, log) -> Iterator[int]:
  """An ``O_APPEND`` descriptor of ``path`` (made if needed) under its
  exclusive lock, an unfinished last line set aside (said to ``log``)."""
  fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
  try:
    fcntl.flock(fd, fcntl.LOCK_EX)
    side = _set_aside_partial_line(fd, path)
    if side:
      log(f"warning: {path} ended in an unfinished line (a writer was "
          f"killed mid-line); moved it to {side}")
    yield fd
  finally:
    os.close(fd)  # also releases the lock


def append_line(path: str | os.PathLike, text: str, *, log=None) -> None:
  """Appends ``text`` and a newline to the JSON Lines file ``path`` as
  :class:`ResultsWriter` appends a record (one whole line, under the
  file's lock, an unfinished last line set aside first, synced): for a
  results file of records of another kind (the field benchmark's)."""
  path = _path("path", path)
  if "\n" in text:
    raise ValueError("text must be one line: it holds a newline")
  log = log or (lambda said: print(said, file=sys.stderr))
  with _locked_for_append(path, log) as fd:
    with _ctrl_c_held():
      _append_whole(fd, (text + "\n").encode("utf-8"), path)
      os.fsync(fd)


def _append_whole(fd: int, line: bytes, path: str) -> None:
  """Appends ``line`` to the locked ``fd``; if that fails part-way (a full
  disk), cuts the file back to where it was and raises ``OSError`` naming
  ``path``, so that no half line is left to be taken for a killed writer."""
  size = os.fstat(fd).st_size
  view = memoryview(line)
  try:
    while view:
      done = os.write(fd, view)
      view = view[done:]
  except OSError as err:
    try:
      os.ftruncate(fd, size)
    except OSError:
      pass  # the next writer sets the half line aside, as for a kill
    raise OSError(err.errno, err.strerror, path) from err


def repair(path: str, *, log=None) -> str | None:
  """Sets aside an unterminated last line of ``path``; the side file or None."""
  path = _path("path", path)
  log = log or (lambda text: print(text, file=sys.stderr))
  try:
    fd = os.open(path, os.O_RDWR)
  except FileNotFoundError:
    return None
  try:
    fcntl.flock(fd, fcntl.LOCK_EX)
    side = _set_aside_partial_line(fd, path)
  finally:
    os.close(fd)
  if side:
    log(f"warning: {path} ended in an unfinished line; moved it to {side}")
  return side


# ---- reading ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BadLine:
  """A line of a results file that is not a run record, and why.

  Attributes:
    path, line: the file and the line's number (from 1).
    kind: the kind of problem (``schema.NOT_JSON``, ``schema.FOREIGN``,
      ``schema.BAD_FIELDS`` or the text of :func:`schema_problem`), shared
      by many lines.
    message: what is wrong with this line, naming the field at fault.
    unfinished: the file's last line, without its newline (a writer killed
      mid-line, or still writing).
  """

  path: str
  line: int
  kind: str
  message: str
  unfinished: bool = False

  def __str__(self) -> str:
    return f"{self.path}:{self.line}: {self.message}"


# The byte order mark an editor may put before the first line.
UTF8_BOM = b"\xef\xbb\xbf"
# The longest line read as a record (a run's record at 10^9 users, 45,000
# words found, is about 2 MB); a longer line is skipped, never held whole.
MAX_RECORD_BYTES = 64 << 20
_TOO_LONG = b"\x00too long"
# What reading a line may raise: the line is then no record (RecordError,
# a ValueError, names why; the others are kept out of the reader's caller
# whatever the line holds).
_UNREADABLE = (ValueError, TypeError, ArithmeticError, RecursionError)


def _lines(path: str) -> Iterable[tuple[int, bytes, bool]]:
  """``(number, line, unfinished)`` of the non-blank lines of ``path``;
  ``unfinished`` for a last line without its newline. A byte order mark
  before the first line is dropped. A line longer than
  ``MAX_RECORD_BYTES`` is given as ``_TOO_LONG``, unread
  (:func:`triehh.data.input_files.lines`)."""
  with open(path, "rb") as f:
    for number, raw in input_files.lines(f, MAX_RECORD_BYTES):
      if raw is None:
        yield number, _TOO_LONG, _unfinished_end(f)
        continue
      if number == 1:  # an editor's byte order mark: not part of the line
        raw = raw.removeprefix(UTF8_BOM)
      if raw.strip():
        yield number, raw, not raw.endswith(b"\n")


def _unfinished_end(f) -> bool:
  """Whether ``f`` was read to its end and its last byte is no newline (the
  line just skipped was its unfinished last one)."""
  size = os.fstat(f.fileno()).st_size
  return (f.tell() >= size > 0
          and os.pread(f.fileno(), 1, size - 1) != b"\n")


def read(paths: str | os.PathLike | Iterable[str | os.PathLike], *,
         strict: bool = False) -> tuple[list[RunRecord], list[BadLine]]:
  """The run records of the results file(s) ``paths``, in order, and the
  lines that are not records.

  Blank lines are ignored. Every other line is validated once
  (:meth:`RunRecord.from_dict`): a line that is not JSON (or JSON nested
  too deeply to be read), not a run record,
  a record of another ``schema_version`` (earlier layouts are not read) or
  one with a missing or bad field is left out and returned as a
  :class:`BadLine` naming the file, the line and the field. An unfinished
  last line (no newline: a writer killed mid-line, or still writing) is
  left out the same way, and is never an error.

  Args:
    paths: a results file (a str or os.PathLike), or an iterable of them.
    strict: raise on the first line that is not a record (but an
      unfinished last line) instead of returning it.

  Raises:
    TypeError: if ``paths`` is neither a path nor an iterable of paths.
    FileNotFoundError: if a file does not exist.
    RecordError: with ``strict``, ``file:line: problem`` of the line.
  """
  records, bad = [], []
  for path in _paths(paths):
    numbered, left_out = read_numbered(path, strict=strict)
    records += [record for _, record in numbered]
    bad += left_out
  return records, bad


def read_numbered(path: str | os.PathLike, *, strict: bool = False
                  ) -> tuple[list[tuple[int, RunRecord]], list[BadLine]]:
  """:func:`read` of one file, each record with the number of its line
  (from 1), for a report that names the line of a record it leaves out."""
  path = _path("path", path)
  records, bad = [], []
  for number, raw, unfinished in _lines(path):
    try:
      if raw is _TOO_LONG:
        raise RecordError(schema.BAD_FIELDS, f"a line of more than "
                          f"{MAX_RECORD_BYTES:,} bytes: not a run record")
      records.append((number, RunRecord.from_json(raw)))
    except _UNREADABLE as err:
      kind = getattr(err, "kind", schema.BAD_FIELDS)
      message = str(err)
      if unfinished:
        message += (" (the last line, unfinished: a writer killed "
                    "mid-line, or still writing)")
      line = BadLine(path, number, kind, message, unfinished)
      if strict and not unfinished:
        raise RecordError(kind, str(line)) from None
      bad.append(line)
  return records, bad


def json_lines(path: str | os.PathLike) -> list[dict]:
  """The JSON objects of the lines of ``path``, for a results file of
  records of another kind than :class:`RunRecord` (the field benchmark's);
  none if it does not exist. An unfinished last line (a writer killed
  mid-line, say by a full disk) is left out, as :func:`read` leaves it
  (:func:`append_line` sets it aside).

  Raises:
    ValueError: ``path:line: ...`` of a line that is not a JSON object.
  """
  path = _path("path", path)
  out = []
  try:
    numbered = list(_lines(path))
  except FileNotFoundError:
    return []
  for number, raw, unfinished in numbered:
    if unfinished:
      continue
    try:
      if raw is _TOO_LONG:
        raise ValueError(f"longer than {MAX_RECORD_BYTES:,} bytes")
      value = json.loads(raw)
      if not isinstance(value, dict):
        raise ValueError(f"a JSON {type(value).__name__}, not an object")
    except (ValueError, RecursionError) as err:
      raise ValueError(
          f"{path}:{number}: not a record ({' '.join(str(err).split())}); "
          "correct or remove the line, or choose another output_dir"
          ) from None
    out.append(value)
  return out


def _paths(paths) -> list[str]:
  """:func:`read`'s ``paths`` as a list of ``str``, or a TypeError."""
  if isinstance(paths, (str, os.PathLike)):
    return [_path("paths", paths)]
  if isinstance(paths, (bytes, bytearray)) or not isinstance(paths,
                                                             Iterable):
    raise TypeError("paths must be a path (a str or os.PathLike) or an "
                    f"iterable of them, got {type(paths).__name__} "
                    f"{paths!r:.60}")
  return [_path("paths (each)", path) for path in paths]


def completed(path: str | os.PathLike) -> set[tuple[str, int]]:
  """``(config_key, seed)`` of every run recorded in ``path`` (may not exist)."""
  path = _path("path", path)
  try:
    records, _ = read(path)
  except FileNotFoundError:
    return set()
  return {(r.config_key, r.seed) for r in records}


class CompletedRuns:
  """:func:`completed` of one results file, kept up to date by reading only
  the lines appended since the last :meth:`update`.

  The file is read again from its start when it was replaced (another
  inode), cut shorter than what was read, or removed. Lines are read up to
  the last newline; an unfinished last line is read once it is finished
  (or set aside by the next writer, which cuts the file back to it).
  """

  def __init__(self, path: str | os.PathLike):
    self.path = _path("path", path)
    self._done: set[tuple[str, int]] = set()
    self._file: tuple[int, int] | None = None  # (device, inode)
    self._offset = 0

  def update(self) -> set[tuple[str, int]]:
    """The ``(config_key, seed)`` pairs recorded now (the set is kept, and
    changed by later updates)."""
    try:
      f = open(self.path, "rb")
    except FileNotFoundError:
      self._done.clear()
      self._file, self._offset = None, 0
      return self._done
    with f:
      stat = os.fstat(f.fileno())
      if ((stat.st_dev, stat.st_ino) != self._file
          or stat.st_size < self._offset):
        self._done.clear()
        self._file, self._offset = (stat.st_dev, stat.st_ino), 0
      f.seek(self._offset)
      # Whole lines only, none held past MAX_RECORD_BYTES; an unfinished
      # last line is read once it is finished.
      for _, raw in input_files.lines(f, MAX_RECORD_BYTES):
        if raw is None:  # too long: skipped, unless it is unfinished
          if _unfinished_end(f):
            break
          self._offset = f.tell()
          continue
        if not raw.endswith(b"\n"):
          break
        if self._offset == 0:  # the first line: without a byte order mark
          self._offset, raw = len(raw), raw.removeprefix(UTF8_BOM)
        else:
          self._offset += len(raw)
        if raw.strip():
          try:
            record = RunRecord.from_json(raw)
          except _UNREADABLE:
            continue  # not a record: read() names it
          self._done.add((record.config_key, record.seed))
    return self._done
