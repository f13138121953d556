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
  whose text is not a string.

A missing file raises ``FileNotFoundError``; a file that cannot be read at
all (corrupt archive, unknown format, absent column, a user column of a
nested type, no data row, a Parquet file read as text) raises
:class:`~triehh.data.report.DataError`; both name the file. A file whose
rows are mostly malformed warns, and above a share (90 % by default) is
refused (``report.check_malformed``).

Formats:

* ``sentiment140``: the official layout of
  ``training.1600000.processed.noemoticon.csv``: no header, latin-1, six
  quoted columns ``polarity,id,date,query,user,text``. Plain, ``.gz``,
  ``.bz2``, or the official ``trainingandtestdata.zip`` (its training file is
  read).
* ``csv`` / ``tsv``: a header row naming the columns. CSV fields may be
  quoted (``"``, doubled inside); TSV fields are never quoted.
* ``jsonl``: one JSON object per line (a UTF-8 byte order mark is ignored).
* ``parquet``: any Parquet file with the two columns.

Text files (all but Parquet) may be compressed as ``.gz`` or ``.bz2``, or be
the only member (or the ``training.*`` member) of a ``.zip``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import os
import re
import sys
import zipfile
import zlib
from collections.abc import Sequence

import numpy as np

from triehh.data import report as report_lib

SENTIMENT140_COLUMNS = ("polarity", "id", "date", "query", "user", "text")
SENTIMENT140_USER = "user"
SENTIMENT140_TEXT = "text"
SENTIMENT140_ENCODING = "latin-1"

FORMATS = ("sentiment140", "csv", "tsv", "jsonl", "parquet")
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
_UTF8_BOM = b"\xef\xbb\xbf"
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_BLOCK_SIZE = 16 << 20  # CSV parse block: large blocks keep numpy work fast.


def _pyarrow():
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


def normalise_encoding(encoding: str) -> str:
  """``"utf-8"`` or ``"latin-1"`` for any of their usual spellings."""
  key = encoding.strip().lower().replace("_", "-")
  if key not in _ENCODING_ALIASES:
    raise ValueError(f"unsupported encoding {encoding!r}: use one of "
                     f"{', '.join(ENCODINGS)}")
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
      f"cannot tell the format of {path} from its name: pass the format "
      f"explicitly (one of {', '.join(FORMATS)})")


def read(path: str, file_format: str = "auto", *,
         user_column: str = "user", text_column: str = "text",
         encoding: str | None = None,
         max_malformed_share: float = report_lib.MAX_MALFORMED_SHARE
         ) -> UserTexts:
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
  if not os.path.exists(path):
    raise FileNotFoundError(f"data file not found: {path}")
  if os.path.isdir(path):
    raise report_lib.DataError(f"{path} is a directory, not a data file")
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
                 text_column: str) -> UserTexts:
  """Dispatches to the reader of ``fmt``."""
  if fmt != "parquet" and _is_parquet(path):
    raise report_lib.DataError(
        f"{path} is a Parquet file, not {fmt}: read it as parquet "
        "(--dataset=file)")
  if fmt == "sentiment140":
    return _read_csv(path, report, encoding=encoding, delimiter=",",
                     quoted=True, column_names=SENTIMENT140_COLUMNS,
                     user_column=SENTIMENT140_USER,
                     text_column=SENTIMENT140_TEXT)
  if fmt in ("csv", "tsv"):
    return _read_csv(path, report, encoding=encoding,
                     delimiter="," if fmt == "csv" else "\t",
                     quoted=fmt == "csv", column_names=None,
                     user_column=user_column, text_column=text_column)
  if fmt == "jsonl":
    return _read_jsonl(path, report, encoding, user_column, text_column)
  return _read_parquet(path, report, user_column, text_column)


def _is_parquet(path: str) -> bool:
  """Whether the file starts with Parquet's magic bytes."""
  with open(path, "rb") as f:
    return f.read(4) == b"PAR1"


def _looks_like(path: str, fmt: str) -> str:
  """A hint on a mostly malformed file's real format, or ``""``."""
  try:
    with _open_bytes(path) as f:
      start = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
  except (OSError, zipfile.BadZipFile, EOFError, zlib.error,
          report_lib.DataError):
    return ""
  if fmt != "jsonl" and start.startswith(b"{"):
    return (" (it looks like JSON Lines: read it as jsonl, e.g. "
            "--dataset=file)")
  if fmt in ("csv", "sentiment140") and b"\t" in start and b"," not in start:
    return " (it looks tab-separated: read it as tsv, e.g. --dataset=file)"
  return ""


# ---- opening ----------------------------------------------------------------


def _zip_member(path: str, zf: zipfile.ZipFile) -> str:
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


def _open_input(path: str):
  """A pyarrow-readable source: a path (compression by suffix) or a stream."""
  if path.lower().endswith(".zip"):
    zf = zipfile.ZipFile(path)
    return zf.open(_zip_member(path, zf))
  return path


def _open_bytes(path: str) -> io.BufferedIOBase:
  """A binary stream of the decompressed file."""
  lower = path.lower()
  if lower.endswith(".zip"):
    zf = zipfile.ZipFile(path)
    return zf.open(_zip_member(path, zf))
  if lower.endswith(".gz"):
    import gzip  # pylint: disable=g-import-not-at-top
    return gzip.open(path, "rb")
  if lower.endswith(".bz2"):
    import bz2  # pylint: disable=g-import-not-at-top
    return bz2.open(path, "rb")
  return open(path, "rb")


# ---- CSV / TSV / Sentiment140 ---------------------------------------------


def _read_csv(path: str, report: report_lib.LoadReport, *, encoding: str,
              delimiter: str, quoted: bool,
              column_names: Sequence[str] | None, user_column: str,
              text_column: str) -> UserTexts:
  """Reads a delimited file; rows are counted into ``report``."""
  if column_names is None:
    _check_header(path, delimiter, quoted, encoding, user_column,
                  text_column)
  if user_column == text_column:
    raise ValueError("the user and text columns must differ")
  parse = functools.partial(
      _parse_csv, path, delimiter=delimiter, quoted=quoted,
      column_names=column_names, columns=(user_column, text_column))
  try:
    with _quiet_row_handler_errors():
      table, bad_rows, bad_count = parse(encoding)
  except _pyarrow().ArrowInvalid as err:
    if encoding != "utf-8" or "columns, got" not in str(err):
      raise
    # A malformed row holding bytes that are not UTF-8 (module docstring).
    table, bad_rows, bad_count = parse("latin-1")
    table = _restore_latin1(table)
  if column_names is not None and _is_header_row(table, user_column,
                                                 text_column):
    table = table.slice(1)
  report.rows_read = table.num_rows + bad_count
  report.skip(report_lib.SKIP_COLUMN_COUNT, bad_count, bad_rows)
  users, texts = table.column(user_column), table.column(text_column)
  swallowed = _unbalanced_quotes(users, texts, report)
  return _finish(users, texts, "utf-8", report,
                 validated=encoding == "latin-1", malformed=swallowed)


def _parse_csv(path: str, encoding: str, *, delimiter: str, quoted: bool,
               column_names: Sequence[str] | None,
               columns: tuple[str, str]):
  """Arrow's CSV parse of two binary columns (UTF-8 out); bad rows counted.

  Returns the table, example places of rows with a wrong column count, and
  their number.
  """
  pa = _pyarrow()
  bad_rows: list[str] = []
  bad_count = [0]

  def on_invalid_row(row) -> str:
    bad_count[0] += 1
    if len(bad_rows) < report_lib.MAX_EXAMPLES:
      # The parser knows line numbers only when reading on one thread.
      bad_rows.append(f"line {row.number}" if row.number is not None else
                      f"{row.actual_columns} fields: {row.text[:40]!r}")
    return "skip"

  read_options = pa.csv.ReadOptions(
      column_names=column_names, block_size=_BLOCK_SIZE,
      encoding="utf8" if encoding == "utf-8" else encoding)
  parse_options = pa.csv.ParseOptions(
      delimiter=delimiter, quote_char='"' if quoted else False,
      invalid_row_handler=on_invalid_row)
  convert_options = pa.csv.ConvertOptions(
      include_columns=list(columns),
      column_types={c: pa.binary() for c in columns},
      strings_can_be_null=False, quoted_strings_can_be_null=False)
  source = _open_input(path)
  try:
    table = pa.csv.read_csv(source, read_options=read_options,
                            parse_options=parse_options,
                            convert_options=convert_options)
  finally:
    if not isinstance(source, str):
      source.close()
  return table, bad_rows, bad_count[0]


@contextlib.contextmanager
def _quiet_row_handler_errors():
  """Keeps Arrow's failed hand-over of a non-UTF-8 row off stderr.

  Arrow reports the ``UnicodeDecodeError`` as unraisable, then fails the
  parse; the caller parses again.
  """
  previous = sys.unraisablehook

  def hook(unraisable):
    if not isinstance(unraisable.exc_value, UnicodeDecodeError):
      previous(unraisable)

  sys.unraisablehook = hook
  try:
    yield
  finally:
    sys.unraisablehook = previous


def _restore_latin1(table):
  """Undoes a latin-1 transcoding: each row's bytes as they were in the file.

  Only rows with a non-ASCII character changed; those are re-encoded.
  """
  pa = _pyarrow()
  pc = pa.compute
  columns = []
  for column in table.columns:
    column = column.combine_chunks() if column.num_chunks else pa.array(
        [], pa.binary())
    changed = pc.invert(pc.string_is_ascii(column.cast(pa.string())))
    changed = changed.fill_null(False)
    if pc.any(changed).as_py():
      original = [v.decode("utf-8").encode("latin-1")
                  for v in column.filter(changed).to_pylist()]
      column = pc.replace_with_mask(column, changed,
                                    pa.array(original, pa.binary()))
    columns.append(column)
  return pa.table(columns, names=table.column_names)


def _is_header_row(table, user_column: str, text_column: str) -> bool:
  """Whether the first row names the columns (a header in a headerless
  layout)."""
  if not table.num_rows:
    return False
  first = table.slice(0, 1)
  return (first.column(user_column)[0].as_py() == user_column.encode()
          and first.column(text_column)[0].as_py() == text_column.encode())


def _unbalanced_quotes(users, texts,
                       report: report_lib.LoadReport) -> np.ndarray | None:
  """Rows whose quoted field ran past its line, counted with what they hid.

  Each line a row swallowed is a row read and skipped. Returns the rows'
  mask, or None when there are none.
  """
  pa = _pyarrow()
  pc = pa.compute
  mask = np.zeros(len(texts), dtype=bool)
  for column in (users, texts):
    for pattern in ("\n", "\r"):
      hit = pc.match_substring(column, pattern).fill_null(False)
      mask |= np.asarray(hit.to_numpy(zero_copy_only=False), dtype=bool)
  if not mask.any():
    return None
  where = np.flatnonzero(mask)
  extra = 0
  for r in where:
    for value in (users[int(r)].as_py(), texts[int(r)].as_py()):
      extra += len(_LINE_BREAK.findall(value))
  report.rows_read += extra
  report.skip(report_lib.SKIP_UNBALANCED_QUOTE, where.size + extra,
              (f"row {r + 1}" for r in where[:report_lib.MAX_EXAMPLES]))
  return mask


def _check_header(path: str, delimiter: str, quoted: bool, encoding: str,
                  user_column: str, text_column: str) -> None:
  """Raises ``DataError`` when the header lacks a needed column."""
  header = _read_header(path, delimiter, quoted, encoding)
  missing = [c for c in (user_column, text_column) if c not in header]
  if missing:
    raise report_lib.DataError(
        f"{path} has no column {', '.join(map(repr, missing))}; its header "
        f"names {', '.join(map(repr, header))} (set the user and text "
        "column names)")


def _read_header(path: str, delimiter: str, quoted: bool,
                 encoding: str) -> list[str]:
  import csv  # pylint: disable=g-import-not-at-top
  with _open_bytes(path) as f:
    first = f.readline()
  if not first.strip():
    raise report_lib.DataError(f"{path} is empty: it needs a header row")
  try:
    line = first.decode(encoding).lstrip("\ufeff").rstrip("\r\n")
  except UnicodeDecodeError as err:
    raise report_lib.DataError(
        f"the header of {path} is not valid {encoding}: {err}") from err
  if not quoted:
    return line.split(delimiter)
  try:
    return next(csv.reader([line], delimiter=delimiter))
  except csv.Error as err:
    raise report_lib.DataError(
        f"the header of {path} cannot be parsed: {err}") from err


# ---- JSON Lines -------------------------------------------------------------


def _read_jsonl(path: str, report: report_lib.LoadReport, encoding: str,
                user_column: str, text_column: str) -> UserTexts:
  pa = _pyarrow()
  users: list = []
  texts: list[bytes] = []
  row = 0
  with _open_bytes(path) as f:
    for line_number, raw in enumerate(f, start=1):
      if not raw.strip():
        continue
      row += 1
      if line_number == 1 and raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM):]
      try:
        line = raw.decode(encoding)
      except UnicodeDecodeError:
        report.skip(report_lib.SKIP_UNDECODABLE, 1, [f"line {line_number}"])
        continue
      try:
        obj = json.loads(line)
      except ValueError:
        report.skip(report_lib.SKIP_BAD_JSON, 1, [f"line {line_number}"])
        continue
      if (not isinstance(obj, dict) or user_column not in obj
          or text_column not in obj):
        report.skip(report_lib.SKIP_BAD_JSON, 1, [f"line {line_number}"])
        continue
      text, user = obj[text_column], obj[user_column]
      if text is None:
        text = ""
      if not isinstance(text, str):
        report.skip(report_lib.SKIP_BAD_TYPE, 1, [f"line {line_number}"])
        continue
      if user is None or isinstance(user, (dict, list)) or user == "":
        report.skip(report_lib.SKIP_EMPTY_USER, 1, [f"line {line_number}"])
        continue
      try:
        encoded = text.encode("utf-8")
      except UnicodeEncodeError:  # lone surrogates from \ud800 escapes
        report.skip(report_lib.SKIP_UNDECODABLE, 1, [f"line {line_number}"])
        continue
      users.append(str(user))
      texts.append(encoded)
  report.rows_read = row
  return _finish(pa.chunked_array([pa.array(users, pa.string())]),
                 pa.chunked_array([pa.array(texts, pa.binary())]), "utf-8",
                 report, validated=True)


# ---- Parquet ----------------------------------------------------------------


def _read_parquet(path: str, report: report_lib.LoadReport, user_column: str,
                  text_column: str) -> UserTexts:
  pa = _pyarrow()
  import pyarrow.parquet as pq  # pylint: disable=g-import-not-at-top
  schema = pq.read_schema(path)
  missing = [c for c in (user_column, text_column)
             if c not in schema.names]
  if missing:
    raise report_lib.DataError(
        f"{path} has no column {', '.join(map(repr, missing))}; its columns "
        f"are {', '.join(map(repr, schema.names))}")
  user_type = schema.field(user_column).type
  if pa.types.is_nested(user_type):
    raise report_lib.DataError(
        f"column {user_column!r} of {path} holds {user_type}, not one value "
        "per user: use a column of strings or numbers")
  text_type = schema.field(text_column).type
  if not (pa.types.is_string(text_type) or pa.types.is_large_string(text_type)
          or pa.types.is_binary(text_type)
          or pa.types.is_large_binary(text_type)):
    raise report_lib.DataError(
        f"column {text_column!r} of {path} holds {text_type}, not text")
  table = pq.read_table(path, columns=[user_column, text_column])
  report.rows_read = table.num_rows
  texts = table.column(text_column)
  validated = pa.types.is_string(text_type) or pa.types.is_large_string(
      text_type)
  texts = texts.cast(pa.large_binary() if pa.types.is_large_string(text_type)
                     or pa.types.is_large_binary(text_type) else pa.binary())
  users = table.column(user_column)
  if pa.types.is_dictionary(user_type):
    users = users.cast(user_type.value_type)
  return _finish(users, texts, "utf-8", report, validated=validated)


# ---- common checks ----------------------------------------------------------


def _finish(users, texts, encoding: str, report: report_lib.LoadReport, *,
            validated: bool = False,
            malformed: np.ndarray | None = None) -> UserTexts:
  """Marks rows with a null/empty user, or text not valid in ``encoding``.

  Rows flagged in ``malformed`` are already counted as skipped.
  """
  pa = _pyarrow()
  pc = pa.compute
  num_rows = len(texts)
  invalid = (np.zeros(num_rows, dtype=bool) if malformed is None
             else malformed.copy())
  # Null or empty users.
  if pa.types.is_binary(users.type) or pa.types.is_string(users.type) or (
      pa.types.is_large_binary(users.type)
      or pa.types.is_large_string(users.type)):
    empty_user = pc.fill_null(pc.equal(pc.binary_length(users), 0), True)
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
  pa = _pyarrow()
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
  pa = _pyarrow()
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
