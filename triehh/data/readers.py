"""Readers of user-keyed text: Sentiment140 and generic CSV/TSV/JSONL/Parquet.

Every reader returns :class:`UserTexts`: one user value and one text per
row, the texts as UTF-8 bytes (a latin-1 file is transcoded while it is
parsed, by Arrow's ``ReadOptions(encoding=...)``). Malformed rows are
skipped and counted in a :class:`~triehh.data.report.LoadReport`:

* a row with the wrong number of columns (CSV/TSV, Sentiment140), also when
  it holds bytes that are not UTF-8 (Arrow cannot hand such a row to the
  row handler, so the file is parsed again as latin-1, in which every byte
  is a character, and the bytes of the rows are restored),
* a quoted field running past the end of its line (an unbalanced quote):
  the row and every line it swallowed (each record is one line),
* a text (or user) that is not valid in the file's encoding (UTF-8 only:
  every byte sequence is valid latin-1),
* an empty or missing text, or an empty or missing user,
* a JSON line that does not parse, is not an object, lacks a column, or
  whose text is not a string,
* a line longer than ``input_files.MAX_LINE_BYTES`` (4 MiB): it is never
  held whole (CSV/TSV, Sentiment140, JSON Lines).

The path must be a regular file: a directory, a named pipe (also a shell's
``<(...)``), a device or a socket is refused by its kind, before it is
opened (``input_files.check_regular_file``). A missing file raises
``FileNotFoundError``; a file that cannot be read at all (corrupt archive,
unknown format, absent column or one named twice, a user column of a nested
type, a header line over the bound, no data row, a Parquet file read as
text) raises :class:`~triehh.data.report.DataError`; both name the file. A
file whose rows are mostly malformed warns, and above a share (90 % by
default) is refused (``report.check_malformed``).

Formats:

* ``sentiment140``: the official layout of
  ``training.1600000.processed.noemoticon.csv``: no header, latin-1, six
  quoted columns ``polarity,id,date,query,user,text``. Plain, ``.gz``,
  ``.bz2``, or the official ``trainingandtestdata.zip`` (its training file is
  read).
* ``csv`` / ``tsv``: a header row naming the columns. CSV fields may be
  quoted (``"``, doubled inside); TSV fields are never quoted. Lines end
  with LF, CRLF or a lone CR.
* ``jsonl``: one JSON object per line (a UTF-8 byte order mark is ignored).
* ``parquet``: any Parquet file with the two columns (text as strings or
  bytes, also dictionary-encoded or of a view type).

Text files (all but Parquet) may be compressed as ``.gz`` or ``.bz2``, or be
the only member (or the ``training.*`` member) of a ``.zip``.
"""

from __future__ import annotations

import os
import zipfile
import zlib

from triehh.data import csv_reader
from triehh.data import input_files
from triehh.data import jsonl_reader
from triehh.data import parquet_reader
from triehh.data import report as report_lib
from triehh.data import user_texts

SENTIMENT140_COLUMNS = ("polarity", "id", "date", "query", "user", "text")
SENTIMENT140_USER = "user"
SENTIMENT140_TEXT = "text"
SENTIMENT140_ENCODING = "latin-1"

FORMATS = ("sentiment140", "csv", "tsv", "jsonl", "parquet")
# The formats of user-keyed files, told by extension or data_format.
FILE_FORMATS = ("csv", "tsv", "jsonl", "parquet")
ENCODINGS = ("utf-8", "latin-1")
_ENCODING_ALIASES = {
    "utf-8": "utf-8", "utf8": "utf-8", "latin-1": "latin-1",
    "latin1": "latin-1", "iso-8859-1": "latin-1", "iso8859-1": "latin-1",
}
_EXTENSIONS = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
    ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet",
    ".pq": "parquet",
}
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2"}


def normalise_encoding(encoding: str) -> str:
  """``"utf-8"`` or ``"latin-1"`` for any of their usual spellings."""
  key = encoding.strip().lower().replace("_", "-")
  if key not in _ENCODING_ALIASES:
    raise ValueError(f"unsupported encoding {encoding!r} (data_encoding): "
                     f"use one of {', '.join(ENCODINGS)}")
  return _ENCODING_ALIASES[key]


def detect_format(path: str) -> str:
  """The format named by a file's extension (after any compression suffix)."""
  name = os.path.basename(path).lower()
  for ext in (".zip", *_COMPRESSIONS):
    if name.endswith(ext):
      name = name[:-len(ext)]
      break
  for ext, fmt in _EXTENSIONS.items():
    if name.endswith(ext):
      return fmt
  raise report_lib.DataError(
      f"cannot tell the format of {path} from its name: give "
      f"data_format (one of {', '.join(FILE_FORMATS)})")


def read(path: str, file_format: str = "auto", *,
         user_column: str = "user", text_column: str = "text",
         encoding: str | None = None,
         max_malformed_share: float = report_lib.MAX_MALFORMED_SHARE
         ) -> user_texts.UserTexts:
  """Reads ``path`` as user-keyed text (see the module docstring).

  Args:
    path: the file.
    file_format: one of ``FORMATS``, or ``"auto"`` to use the extension.
    user_column: name of the column holding the user (ignored for
      ``sentiment140``).
    text_column: name of the column holding the text (ignored for
      ``sentiment140``).
    encoding: ``"utf-8"`` or ``"latin-1"``; default latin-1 for
      ``sentiment140`` and UTF-8 otherwise.
    max_malformed_share: refuse the file when more than this share of its
      rows is malformed (``report.check_malformed``).
  """
  input_files.check_regular_file(path, "data file")
  fmt = detect_format(path) if file_format == "auto" else file_format
  if fmt not in FORMATS:
    raise ValueError(f"unknown data format {file_format!r}: use one of "
                     f"auto, {', '.join(FORMATS)}")
  if encoding:
    encoding = normalise_encoding(encoding)
  else:
    encoding = SENTIMENT140_ENCODING if fmt == "sentiment140" else "utf-8"
  report = report_lib.LoadReport(source=path)
  try:
    texts = _read_format(path, fmt, report, encoding, user_column,
                         text_column)
  except (report_lib.DataError, FileNotFoundError, ImportError):
    raise
  except (OSError, zipfile.BadZipFile, EOFError, zlib.error) as err:
    raise report_lib.DataError(f"cannot read {path}: {err}") from err
  except Exception as err:  # pyarrow raises ArrowInvalid and friends.
    if type(err).__module__.startswith("pyarrow"):
      raise report_lib.DataError(f"cannot read {path}: {err}") from err
    raise
  if not report.rows_read:
    raise report_lib.DataError(f"{path} holds no data row")
  report_lib.check_malformed(report, max_malformed_share,
                             _looks_like(path, fmt))
  return texts


def _read_format(path: str, fmt: str, report: report_lib.LoadReport,
                 encoding: str, user_column: str,
                 text_column: str) -> user_texts.UserTexts:
  """Dispatches to the reader of ``fmt``."""
  if fmt != "parquet" and _is_parquet(path):
    raise report_lib.DataError(
        f"{path} is a Parquet file, not {fmt}: read it as parquet "
        "(dataset=file)")
  if fmt == "sentiment140":
    return csv_reader.read_csv(
        path, report, encoding=encoding, delimiter=",", quoted=True,
        column_names=SENTIMENT140_COLUMNS, user_column=SENTIMENT140_USER,
        text_column=SENTIMENT140_TEXT)
  if fmt in ("csv", "tsv"):
    return csv_reader.read_csv(
        path, report, encoding=encoding,
        delimiter="," if fmt == "csv" else "\t", quoted=fmt == "csv",
        column_names=None, user_column=user_column, text_column=text_column)
  if fmt == "jsonl":
    return jsonl_reader.read_jsonl(path, report, encoding, user_column,
                                   text_column)
  return parquet_reader.read_parquet(path, report, user_column, text_column)


def _is_parquet(path: str) -> bool:
  """Whether the file starts with Parquet's magic bytes."""
  with open(path, "rb") as f:
    return f.read(4) == b"PAR1"


def _looks_like(path: str, fmt: str) -> str:
  """A hint on a mostly malformed file's real format, or ``""``."""
  try:
    with user_texts.open_bytes(path) as f:
      start = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
  except (OSError, zipfile.BadZipFile, EOFError, zlib.error,
          report_lib.DataError):
    return ""
  if fmt != "jsonl" and start.startswith(b"{"):
    return (" (it looks like JSON Lines: read it as jsonl, e.g. "
            "dataset=file)")
  if fmt in ("csv", "sentiment140") and b"\t" in start and b"," not in start:
    return " (it looks tab-separated: read it as tsv, e.g. dataset=file)"
  return ""
