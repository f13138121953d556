"""``results.jsonl``: one run record per line; this module is its only reader
and writer.

A line is a :class:`RunRecord` as JSON (its fields, each documented where
it is declared, are in :mod:`triehh.runs.schema`). ``experiments.run_triehh``,
``experiments.run_sfp`` and the sweeps append records with
:class:`ResultsWriter`; :func:`read` reads them back, validating each line
once (:meth:`RunRecord.from_dict`), for ``experiments.summarize``,
:mod:`triehh.analysis.summary`, the reproduction and a sweep's resume
(:func:`completed`).

Writing: :class:`ResultsWriter` appends each record as one complete line
with a single ``os.write`` on an ``O_APPEND`` descriptor under an exclusive
``fcntl.flock``, so concurrent writers never interleave. A last line
without its newline (a writer killed mid-line) is moved to
``results.jsonl.partial-<UTC time>-<pid>`` before the next append, with a
message on stderr, and is never glued to the next record.
"""

from __future__ import annotations

import dataclasses
import datetime
import fcntl
import os
import signal
import sys
from collections.abc import Iterable, Sequence

from triehh.runs import schema

RESULTS_FILE = "results.jsonl"
# The record and its schema (:mod:`triehh.runs.schema`), for callers of
# this module.
RunRecord = schema.RunRecord
RecordError = schema.RecordError
SCHEMA_VERSION = schema.SCHEMA_VERSION
ALGORITHMS = schema.ALGORITHMS
config_key = schema.config_key
schema_problem = schema.schema_problem
as_number = schema.as_number


def results_path(output_dir: str) -> str:
  return os.path.join(output_dir, RESULTS_FILE)


def results_paths(results: Sequence[str], output_dirs: Sequence[str]
                  ) -> list[str]:
  """The results files named by ``--results`` and ``--output_dir``.

  Raises:
    FileNotFoundError: naming the first file that does not exist.
    ValueError: if no file is named.
  """
  paths = []
  for given in list(results) + [os.path.join(d, RESULTS_FILE)
                                for d in output_dirs]:
    path = os.path.join(given, RESULTS_FILE) if os.path.isdir(given) else given
    if not os.path.isfile(path):
      raise FileNotFoundError(f"results file not found: {path}")
    if os.path.realpath(path) not in {os.path.realpath(p) for p in paths}:
      paths.append(path)
  if not paths:
    raise ValueError("give the results to summarise: --results=FILE[,FILE] "
                     "or --output_dir=DIR[,DIR]")
  return paths


# ---- writing ----------------------------------------------------------------


def check_output_dir(output_dir: str) -> str:
  """Creates ``output_dir`` if needed; the path of its results file.

  Raises:
    ValueError: if ``output_dir`` is a file, its results file is not a
      regular file, or either cannot be written.
  """
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise ValueError(f"--output_dir={output_dir} is a file, not a directory")
  try:
    os.makedirs(output_dir, exist_ok=True)
  except OSError as err:
    raise ValueError(f"--output_dir={output_dir}: cannot create it "
                     f"({err.strerror})") from None
  path = results_path(output_dir)
  if os.path.exists(path) and not os.path.isfile(path):
    raise ValueError(f"--output_dir={output_dir}: {path} is not a regular "
                     "file (a directory?); move it away or choose another "
                     "--output_dir")
  target = path if os.path.exists(path) else output_dir
  if not os.access(target, os.W_OK):
    raise ValueError(f"--output_dir={output_dir}: {target} is not writable")
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


class ResultsWriter:
  """Appends records to ``<output_dir>/results.jsonl``, one line each.

  Every append takes an exclusive ``flock`` on the file, sets aside an
  unterminated last line (see the module docstring) and writes the record
  and its newline with one ``os.write`` on an ``O_APPEND`` descriptor, then
  ``fsync``s. Without ``output_dir`` nothing is written.
  """

  def __init__(self, output_dir: str | None, *, log=None):
    self.path = check_output_dir(output_dir) if output_dir else None
    self._log = log or (lambda text: print(text, file=sys.stderr))
    self.written = 0

  def write(self, record: RunRecord) -> None:
    if self.path is None:
      return
    line = (record.to_json() + "\n").encode("utf-8")
    fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
      fcntl.flock(fd, fcntl.LOCK_EX)
      side = _set_aside_partial_line(fd, self.path)
      if side:
        self._log(f"warning: {self.path} ended in an unfinished line (a "
                  f"writer was killed mid-line); moved it to {side}")
      # Ctrl-C waits until the line is written and counted, so that the
      # count said on interrupt is the number of lines kept.
      mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
      try:
        view = memoryview(line)
        while view:
          done = os.write(fd, view)
          view = view[done:]
        self.written += 1
      finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
      os.fsync(fd)
    finally:
      os.close(fd)  # also releases the lock


def repair(path: str, *, log=None) -> str | None:
  """Sets aside an unterminated last line of ``path``; the side file or None."""
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


def _lines(path: str) -> Iterable[tuple[int, bytes, bool]]:
  """``(number, line, unfinished)`` of the non-blank lines of ``path``;
  ``unfinished`` for a last line without its newline."""
  with open(path, "rb") as f:
    for number, raw in enumerate(f, start=1):
      if raw.strip():
        yield number, raw, not raw.endswith(b"\n")


def read(paths: str | Iterable[str], *, strict: bool = False
         ) -> tuple[list[RunRecord], list[BadLine]]:
  """The run records of the results file(s) ``paths``, in order, and the
  lines that are not records.

  Blank lines are ignored. Every other line is validated once
  (:meth:`RunRecord.from_dict`): a line that is not JSON, not a run record,
  a record of another ``schema_version`` (earlier layouts are not read) or
  one with a missing or bad field is left out and returned as a
  :class:`BadLine` naming the file, the line and the field. An unfinished
  last line (no newline: a writer killed mid-line, or still writing) is
  left out the same way, and is never an error.

  Args:
    paths: a results file, or several.
    strict: raise on the first line that is not a record (but an
      unfinished last line) instead of returning it.

  Raises:
    FileNotFoundError: if a file does not exist.
    RecordError: with ``strict``, ``file:line: problem`` of the line.
  """
  records, bad = [], []
  for path in [paths] if isinstance(paths, str) else paths:
    for number, raw, unfinished in _lines(path):
      try:
        records.append(RunRecord.from_json(raw))
      except (ValueError, TypeError) as err:
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


def completed(path: str) -> set[tuple[str, int]]:
  """``(config_key, seed)`` of every run recorded in ``path`` (may not exist)."""
  try:
    records, _ = read(path)
  except FileNotFoundError:
    return set()
  return {(r.config_key, r.seed) for r in records}
