"""Delimited files: CSV, TSV and Sentiment140's official layout.

Arrow's CSV reader parses two binary columns (user and text). A row with the
wrong number of columns is skipped and counted, also when it holds bytes
that are not UTF-8: Arrow cannot hand such a row to the row handler, so the
file is parsed again as latin-1 (in which every byte is a character) and
the bytes of the rows are restored. A quoted field running past the end of
its line (an unbalanced quote) is skipped with every line it swallowed.
Arrow reads the file through :class:`~triehh.data.input_files.BlankedLongLines`,
so a line over ``input_files.MAX_LINE_BYTES`` is skipped and counted (it
never reaches Arrow, whose blocks it could straddle). Lines end at LF, CRLF
or CR alone, in the header as in the rows. A header naming a column to read
twice is refused. The layouts are described in :mod:`triehh.data.readers`.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections.abc import Sequence

import numpy as np

from triehh.data import input_files
from triehh.data import report as report_lib
from triehh.data import user_texts

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_BLOCK_SIZE = 16 << 20  # CSV parse block: large blocks keep numpy work fast.


def _block_size(line_limit: int) -> int:
  """Arrow's block: at least four lines of the bound (input_files)."""
  return max(_BLOCK_SIZE, 4 * line_limit)


def read_csv(path: str, report: report_lib.LoadReport, *, encoding: str,
             delimiter: str, quoted: bool,
             column_names: Sequence[str] | None, user_column: str,
             text_column: str) -> user_texts.UserTexts:
  """Reads a delimited file; rows are counted into ``report``."""
  if column_names is None:
    _check_header(path, delimiter, quoted, encoding, user_column,
                  text_column)
  if user_column == text_column:
    raise ValueError("the user and text columns must differ")
  limit = input_files.MAX_LINE_BYTES
  parse = functools.partial(
      _parse_csv, path, delimiter=delimiter, quoted=quoted,
      column_names=column_names, columns=(user_column, text_column),
      line_limit=limit)
  try:
    with _quiet_row_handler_errors():
      table, bad_rows, bad_count, long_lines = parse(encoding)
  except user_texts.import_pyarrow().ArrowInvalid as err:
    if encoding != "utf-8" or "columns, got" not in str(err):
      raise
    # A malformed row holding bytes that are not UTF-8 (module docstring).
    table, bad_rows, bad_count, long_lines = parse("latin-1")
    table = _restore_latin1(table)
  if column_names is not None and _is_header_row(table, user_column,
                                                 text_column):
    table = table.slice(1)
  report.rows_read = table.num_rows + bad_count + len(long_lines)
  report.skip(report_lib.SKIP_COLUMN_COUNT, bad_count, bad_rows)
  report.skip(report_lib.SKIP_TOO_LONG, len(long_lines),
              (input_files.too_long_place(n, limit)
               for n in long_lines[:report_lib.MAX_EXAMPLES]))
  users, texts = table.column(user_column), table.column(text_column)
  swallowed = _unbalanced_quotes(users, texts, report)
  return user_texts.finish(users, texts, "utf-8", report,
                           validated=encoding == "latin-1",
                           malformed=swallowed)


def _parse_csv(path: str, encoding: str, *, delimiter: str, quoted: bool,
               column_names: Sequence[str] | None,
               columns: tuple[str, str], line_limit: int):
  """Arrow's CSV parse of two binary columns (UTF-8 out); bad rows counted.

  Returns the table, example places of rows with a wrong column count,
  their number, and the numbers of the lines skipped as over-long.
  """
  pa = user_texts.import_pyarrow()
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
      column_names=column_names, block_size=_block_size(line_limit),
      encoding="utf8" if encoding == "utf-8" else encoding)
  parse_options = pa.csv.ParseOptions(
      delimiter=delimiter, quote_char='"' if quoted else False,
      invalid_row_handler=on_invalid_row)
  convert_options = pa.csv.ConvertOptions(
      include_columns=list(columns),
      column_types={c: pa.binary() for c in columns},
      strings_can_be_null=False, quoted_strings_can_be_null=False)
  with input_files.BlankedLongLines(user_texts.open_bytes(path),
                                   line_limit) as source:
    table = pa.csv.read_csv(source, read_options=read_options,
                            parse_options=parse_options,
                            convert_options=convert_options)
  return table, bad_rows, bad_count[0], source.long_lines


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
  pa = user_texts.import_pyarrow()
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
  pa = user_texts.import_pyarrow()
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
  """Raises ``DataError`` when the header lacks a needed column, or names
  one twice (which of the two to read would be a guess)."""
  header = _read_header(path, delimiter, quoted, encoding)
  missing = [c for c in (user_column, text_column) if c not in header]
  if missing:
    raise report_lib.DataError(
        f"{path} has no column {', '.join(map(repr, missing))}; its header "
        f"names {', '.join(map(repr, header))} (set the user and text "
        "column names)")
  for column in (user_column, text_column):
    places = [str(i + 1) for i, name in enumerate(header) if name == column]
    if len(places) > 1:
      raise report_lib.DataError(
          f"the header of {path} names column {column!r} {len(places)} times "
          f"(columns {', '.join(places[:-1])} and {places[-1]}): which one "
          "to read is ambiguous; rename the others or read another column")


def _read_header(path: str, delimiter: str, quoted: bool,
                 encoding: str) -> list[str]:
  """The header's fields (line 1, bounded; see input_files)."""
  import csv  # pylint: disable=g-import-not-at-top
  with user_texts.open_bytes(path) as f:
    first = input_files.first_line(f, path)
  if not first.strip():
    raise report_lib.DataError(f"{path} is empty: it needs a header row")
  try:
    line = first.decode(encoding).lstrip("\ufeff")
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
