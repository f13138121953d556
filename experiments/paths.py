"""The paths the flags name: checked before any work, and every OSError said
in one line naming the path and the operating system's reason.

The reason is the system's own (``strerror``): "No such file or directory",
"Permission denied", "Not a directory", "Is a directory", "Too many levels
of symbolic links", "No space left on device", ...; a check never guesses
("not found" for a file that is there but cannot be read). Each check
raises ``ValueError("--flag=value: <path>: <reason>")`` (the path is left
out when it is the flag's value); ``experiments.cli`` prints an OSError that
escapes a driver as ``error: <path>: <reason>`` (:func:`describe`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat


def describe(err: OSError) -> str:
  """``<path>: <reason>`` of ``err`` (``<reason>`` when it names no path);
  its message as it is when it has no ``strerror`` (a message of the
  project's, e.g. ``FileNotFoundError("results file not found: ...")``).
  """
  if not err.strerror:
    return " ".join(str(err).split()) or type(err).__name__
  if err.filename is None:
    return err.strerror
  where = os.fsdecode(err.filename)
  if err.filename2 is not None:
    where += f" -> {os.fsdecode(err.filename2)}"
  return f"{where}: {err.strerror}"


def os_error(code: int, path: str) -> OSError:
  """The OSError of ``code`` (an ``errno``) for ``path``, with the system's
  reason."""
  return OSError(code, os.strerror(code), path)


def with_path(err: OSError, path: str) -> OSError:
  """``err``, naming ``path`` when it names none (a failed write on an open
  file: the disk is full)."""
  if err.filename is not None or not err.strerror:
    return err
  return OSError(err.errno, err.strerror, path)


def flag_error(flag: str, value: str, err: OSError) -> ValueError:
  """``--flag=value: <path>: <reason>``, the path left out when it is
  ``value``."""
  text = describe(err)
  if err.filename is not None and os.fsdecode(err.filename) == value:
    text = err.strerror
  return ValueError(f"--{flag}={value}: {text}")


def check_input_file(flag: str, path: str) -> None:
  """Refuses ``path`` unless it can be opened for reading and is not a
  directory (a pipe is not waited for).

  Raises:
    ValueError: naming the flag, the path and the reason.
  """
  try:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
      if stat.S_ISDIR(os.fstat(fd).st_mode):
        raise os_error(errno.EISDIR, path)
    finally:
      os.close(fd)
  except OSError as err:
    raise flag_error(flag, path, err) from None


def check_input_dir(flag: str, path: str) -> None:
  """Refuses ``path`` unless it is a directory whose files can be listed
  and read.

  Raises:
    ValueError: naming the flag, the path and the reason.
  """
  try:
    mode = os.stat(path).st_mode
    if not stat.S_ISDIR(mode):
      raise os_error(errno.ENOTDIR, path)
    if not os.access(path, os.R_OK | os.X_OK):
      raise os_error(errno.EACCES, path)
  except OSError as err:
    raise flag_error(flag, path, err) from None


def check_dir(flag: str, path: str, *, create: bool = False,
              writable: bool = True, value: str | None = None) -> None:
  """Refuses ``path`` unless it is a directory (that one can write into,
  with ``writable``). With ``create`` it is made first; without, an absent
  ``path`` passes (it is made when needed). ``value``: the flag's value
  when ``path`` is a folder inside it (default ``path``).

  Raises:
    ValueError: naming the flag, the path and the reason.
  """
  value = path if value is None else value
  try:
    if create:
      with contextlib.suppress(FileExistsError):  # os.stat says what it is
        os.makedirs(path, exist_ok=True)
    mode = os.stat(path).st_mode
  except FileNotFoundError as err:
    if create:
      raise flag_error(flag, value, err) from None
    return
  except OSError as err:
    raise flag_error(flag, value, err) from None
  if not stat.S_ISDIR(mode):
    raise flag_error(flag, value, os_error(errno.ENOTDIR, path))
  if writable and not os.access(path, os.W_OK | os.X_OK):
    raise flag_error(flag, value, os_error(errno.EACCES, path))


def check_output_file(flag: str, path: str) -> None:
  """Refuses ``path`` unless a file can be written there: it is not a
  directory, and its folder exists and can be written into.

  Raises:
    ValueError: naming the flag, the path and the reason.
  """
  try:
    if os.path.isdir(path):
      raise os_error(errno.EISDIR, path)
    _check_writable_dir(os.path.dirname(os.path.abspath(path)))
  except OSError as err:
    raise flag_error(flag, path, err) from None


def _check_writable_dir(path: str) -> None:
  """Raises the OSError of a path that is not a writable directory."""
  mode = os.stat(path).st_mode
  if not stat.S_ISDIR(mode):
    raise os_error(errno.ENOTDIR, path)
  if not os.access(path, os.W_OK | os.X_OK):
    raise os_error(errno.EACCES, path)
