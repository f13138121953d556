"""Files written whole or not at all, and where triehh caches things.

A report or figure is written to a temporary file beside its target and
renamed over it (``os.replace``, atomic on one file system), so a full disk
or a kill leaves the previous version whole, or no file, never half of one.

One writer at a time: :func:`lock` takes an exclusive, non-blocking (or
waiting) ``fcntl.flock`` on a lock file, released when its fd is closed or
the process ends, even killed; the sweeps' cells
(:func:`triehh.runs.runner.cell_lock`) and an ingestion's output folder
(:func:`triehh.beam.ingest.ingest`) take theirs here.

Every cache of the project (built populations, calibrations, the TFF
worker's loopback wrapper) lives under :func:`default_cache_dir` unless told
otherwise.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator


def default_cache_dir() -> str:
  """``$XDG_CACHE_HOME/triehh``, else ``~/.cache/triehh``."""
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
      os.path.expanduser("~"), ".cache")
  return os.path.join(base, "triehh")


def lock(path: str, blocking: bool = False) -> int | None:
  """An fd holding the exclusive ``flock`` of the file ``path`` (made,
  empty, if missing; its folder must exist), or None if another process
  holds it and not ``blocking``; closing the fd releases it."""
  fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
  try:
    fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
  except OSError as err:
    os.close(fd)
    if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
      return None
    raise
  return fd


@functools.lru_cache(maxsize=32)
def source_digest(path: str) -> str | None:
  """The SHA-256 of the file at ``path`` (a module's source, so that a cache
  entry made by other code is never read), or None if it cannot be read."""
  try:
    with open(path, "rb") as f:
      return hashlib.sha256(f.read()).hexdigest()
  except OSError:
    return None


@contextlib.contextmanager
def replacing(path: str, suffix: str = "") -> Iterator[str]:
  """The path of a temporary file to write; renamed to ``path`` when the
  block ends without an exception, removed otherwise. ``suffix`` keeps a
  file type that a writer infers from the name (``.png``).

  A symbolic link is kept and its target written; a path that is a
  directory, a device, a named pipe or a socket is refused (``ValueError``
  naming it) rather than replaced by a file.
  """
  path = writable_path(path)
  directory = os.path.dirname(os.path.abspath(path))
  fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.",
                             suffix=suffix, dir=directory)
  os.close(fd)
  mask = os.umask(0)
  os.umask(mask)
  os.chmod(tmp, 0o666 & ~mask)  # as open() would make it, not mkstemp's 0600
  try:
    yield tmp
    os.replace(tmp, path)
  except BaseException:
    with contextlib.suppress(OSError):
      os.remove(tmp)
    raise


def writable_path(path: str) -> str:
  """Where writing ``path`` whole goes: ``path``, or the target of the
  symbolic link it is; ``ValueError`` if that exists and is not a regular
  file."""
  if os.path.islink(path):
    path = os.path.realpath(path)
  try:
    mode = os.stat(path).st_mode
  except FileNotFoundError:
    return path
  except OSError:
    return path  # the write names the problem
  if stat.S_ISREG(mode):
    return path
  kind = ("a directory" if stat.S_ISDIR(mode) else
          "a named pipe" if stat.S_ISFIFO(mode) else "a device or socket")
  raise ValueError(f"{path} is {kind}, not a file: give the path of a file "
                   "to write")


def write_text(path: str, text: str) -> str:
  """Writes ``text`` (UTF-8) to ``path`` whole or not at all; its path."""
  with replacing(path) as tmp:
    with open(tmp, "w", encoding="utf-8") as f:
      f.write(text)
  return path
