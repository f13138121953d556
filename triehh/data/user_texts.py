"""What every reader of user-keyed text returns, and what they share.

:class:`UserTexts` holds one user value and one text per row, the texts as
bytes in the file's encoding; :func:`finish` marks the rows every format
skips after parsing (an empty or missing user, a missing text, bytes that
are not valid UTF-8) and counts them in the
:class:`~triehh.data.report.LoadReport`. The file is opened through
:func:`open_bytes` (a binary stream of the decompressed file);
:func:`chunk_buffers` exposes the bytes of a binary Arrow array without
copying. The formats themselves are read by :mod:`triehh.data.csv_reader`,
:mod:`triehh.data.jsonl_reader` and :mod:`triehh.data.parquet_reader`,
dispatched by :mod:`triehh.data.readers`.
"""

from __future__ import annotations

import dataclasses
import io
import os
import zipfile

import numpy as np

from triehh.data import report as report_lib


def import_pyarrow():
  """Imports pyarrow with a clear message when it is missing or broken."""
  try:
    import pyarrow  # pylint: disable=g-import-not-at-top
    import pyarrow.compute  # pylint: disable=g-import-not-at-top,unused-import
    import pyarrow.csv  # pylint: disable=g-import-not-at-top,unused-import
  except ImportError as err:
    raise ImportError(
        "reading data files needs a working 'pyarrow' (with numpy < 2 use "
        f"pyarrow < 26): {err}") from err
  return pyarrow


@dataclasses.dataclass
class UserTexts:
  """Rows of (user, text) as read from one file.

  Attributes:
    users: one value per row (any Arrow type; compared by value).
    texts: ``binary`` chunks, one text per row, in ``encoding``.
    encoding: ``"utf-8"`` or ``"latin-1"``.
    valid: ``bool [rows]``, False for rows skipped after parsing (bad bytes,
      empty user); their texts are ignored. ``None`` when every row is valid.
    report: the rows read and skipped.
  """

  users: object
  texts: object
  encoding: str
  valid: np.ndarray | None
  report: report_lib.LoadReport

  @property
  def num_rows(self) -> int:
    return len(self.texts)


# ---- opening ----------------------------------------------------------------


def zip_member(path: str, zf: zipfile.ZipFile) -> str:
  """The member of a ``.zip`` to read: its only file, or its ``training.*``."""
  names = [i.filename for i in zf.infolist() if not i.is_dir()]
  if len(names) == 1:
    return names[0]
  training = [n for n in names
              if os.path.basename(n).lower().startswith("training.")]
  if len(training) == 1:
    return training[0]
  raise report_lib.DataError(
      f"{path} holds {len(names)} files ({', '.join(names[:6])}"
      f"{', ...' if len(names) > 6 else ''}): extract the one to read")


def open_bytes(path: str) -> io.BufferedIOBase:
  """A binary stream of the decompressed file."""
  lower = path.lower()
  if lower.endswith(".zip"):
    zf = zipfile.ZipFile(path)
    return zf.open(zip_member(path, zf))
  if lower.endswith(".gz"):
    import gzip  # pylint: disable=g-import-not-at-top
    return gzip.open(path, "rb")
  if lower.endswith(".bz2"):
    import bz2  # pylint: disable=g-import-not-at-top
    return bz2.open(path, "rb")
  return open(path, "rb")


# ---- common checks ----------------------------------------------------------


def finish(users, texts, encoding: str, report: report_lib.LoadReport, *,
           validated: bool = False,
           malformed: np.ndarray | None = None) -> UserTexts:
  """Marks rows with a missing user, or text not valid in ``encoding``.

  A user is missing when it is null, empty, or a floating-point NaN (a
  missing number as numpy holds it). Rows flagged in ``malformed`` are
  already counted as skipped.
  """
  pa = import_pyarrow()
  pc = pa.compute
  num_rows = len(texts)
  invalid = (np.zeros(num_rows, dtype=bool) if malformed is None
             else malformed.copy())
  # Null or empty users.
  if pa.types.is_binary(users.type) or pa.types.is_string(users.type) or (
      pa.types.is_large_binary(users.type)
      or pa.types.is_large_string(users.type)):
    empty_user = pc.fill_null(pc.equal(pc.binary_length(users), 0), True)
  elif pa.types.is_floating(users.type):
    empty_user = pc.fill_null(pc.is_nan(users), True)
  else:
    empty_user = pc.is_null(users)
  empty_user = np.asarray(empty_user.to_numpy(zero_copy_only=False),
                          dtype=bool)
  _mark(report, invalid, empty_user & ~invalid, report_lib.SKIP_EMPTY_USER)
  # Null texts count as empty texts (the tokenizer counts the rest).
  null_text = np.asarray(pc.is_null(texts).to_numpy(zero_copy_only=False),
                         dtype=bool)
  _mark(report, invalid, null_text & ~invalid, report_lib.SKIP_EMPTY_TEXT)
  if encoding == "utf-8" and not validated:
    bad = _invalid_utf8_rows(texts) | _invalid_utf8_rows(users)
    _mark(report, invalid, bad & ~invalid, report_lib.SKIP_UNDECODABLE)
  if num_rows and invalid.all():
    raise report_lib.DataError(
        f"no usable row in {report.source}: {report.summary()}")
  return UserTexts(users=users, texts=texts, encoding=encoding,
                   valid=~invalid if invalid.any() else None, report=report)


def _mark(report: report_lib.LoadReport, invalid: np.ndarray,
          rows: np.ndarray, reason: str) -> None:
  where = np.flatnonzero(rows)
  if where.size:
    invalid[where] = True
    report.skip(reason, where.size,
                (f"row {r + 1}" for r in where[:report_lib.MAX_EXAMPLES]))


def _invalid_utf8_rows(values) -> np.ndarray:
  """``bool [rows]``: rows whose bytes are not valid UTF-8.

  Only rows holding a byte >= 0x80 can be invalid; those few are decoded.
  """
  pa = import_pyarrow()
  out = np.zeros(len(values), dtype=bool)
  if not (pa.types.is_binary(values.type)
          or pa.types.is_large_binary(values.type)):
    return out
  start = 0
  for chunk in values.chunks:
    data, offsets = chunk_buffers(chunk)
    high = np.flatnonzero(data >= 0x80)
    if high.size:
      rows = np.unique(np.searchsorted(offsets, high, side="right") - 1)
      for r in rows:
        try:
          data[offsets[r]:offsets[r + 1]].tobytes().decode("utf-8")
        except UnicodeDecodeError:
          out[start + r] = True
    start += len(chunk)
  return out


def chunk_buffers(chunk) -> tuple[np.ndarray, np.ndarray]:
  """The bytes and row offsets of a binary Arrow array (zero copy).

  Returns ``(data, offsets)`` with row ``r`` at
  ``data[offsets[r]:offsets[r + 1]]`` and ``offsets[0] == 0``. Null rows
  are empty.
  """
  pa = import_pyarrow()
  n = len(chunk)
  large = pa.types.is_large_binary(chunk.type) or pa.types.is_large_string(
      chunk.type)
  bufs = chunk.buffers()
  off_type = np.int64 if large else np.int32
  if bufs[1] is None:
    return np.zeros(0, np.uint8), np.zeros(n + 1, dtype=np.int64)
  offsets = np.frombuffer(bufs[1], dtype=off_type)[
      chunk.offset:chunk.offset + n + 1]
  data = (np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None
          and bufs[2].size else np.zeros(0, np.uint8))
  begin = int(offsets[0]) if n else 0
  end = int(offsets[-1]) if n else 0
  return data[begin:end], (offsets - begin).astype(np.int64)
