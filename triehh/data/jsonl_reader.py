"""JSON Lines: one JSON object per line, holding the user and the text.

A line that is blank is ignored; a line that does not decode, does not
parse, is not an object, lacks a column, whose text is not a string, whose
user is missing (null, empty, NaN) or not an id (an object or a list: its
own reason), whose user or text
holds a lone surrogate (a ``\\ud800`` escape, which no UTF-8 can hold), or
that is longer than ``input_files.MAX_LINE_BYTES`` is skipped and counted;
so is a line nested too deeply for the parser (``[[[...``). A file none of
whose JSON objects holds the user or the text field is refused, naming the
fields its objects hold. A UTF-8 byte order mark on the first line is
ignored.
"""

from __future__ import annotations

import json
import math

from triehh.data import input_files
from triehh.data import report as report_lib
from triehh.data import user_texts

_UTF8_BOM = b"\xef\xbb\xbf"


class _Fields:
  """The fields the file's JSON objects hold, and how many hold each of the
  user and text fields."""

  MAX_NAMES = 20

  def __init__(self, columns: tuple[str, str]):
    self.columns = columns
    self.objects = 0
    self.holding = dict.fromkeys(columns, 0)
    self.names: dict[str, None] = {}

  def add(self, obj: dict) -> None:
    self.objects += 1
    for column in self.columns:
      self.holding[column] += column in obj
    for name in obj:
      if len(self.names) >= self.MAX_NAMES:
        break
      self.names.setdefault(str(name))

  def check(self, path: str) -> None:
    """Refuses a file none of whose objects holds a field asked for."""
    missing = [c for c in self.columns if self.objects and
               not self.holding[c]]
    if missing:
      names = ", ".join(repr(n) for n in self.names) or "none"
      more = ", ..." if len(self.names) >= self.MAX_NAMES else ""
      raise report_lib.DataError(
          f"{path} has no field {missing[0]!r} in any of its "
          f"{self.objects:,} JSON objects; their fields are {names}{more} "
          "(set the user and text column names)")


def _row(raw: bytes, encoding: str, fields: _Fields
         ) -> tuple[bytes, bytes] | str:
  """A line's (user, text) as UTF-8, or the reason it is skipped."""
  user_column, text_column = fields.columns
  try:
    obj = json.loads(raw.decode(encoding))
  except UnicodeDecodeError:
    return report_lib.SKIP_UNDECODABLE
  except (ValueError, RecursionError):  # RecursionError: nested too deeply
    return report_lib.SKIP_BAD_JSON
  if not isinstance(obj, dict):
    return report_lib.SKIP_BAD_JSON
  fields.add(obj)
  if user_column not in obj or text_column not in obj:
    return report_lib.SKIP_BAD_JSON
  text, user = obj[text_column], obj[user_column]
  if text is None:
    text = ""
  if not isinstance(text, str):
    return report_lib.SKIP_BAD_TYPE
  if isinstance(user, (dict, list)):
    return report_lib.SKIP_BAD_USER
  if (user is None or user == ""
      or (isinstance(user, float) and math.isnan(user))):
    return report_lib.SKIP_EMPTY_USER
  try:  # lone surrogates from \ud800 escapes, in either column
    return str(user).encode("utf-8"), text.encode("utf-8")
  except UnicodeEncodeError:
    return report_lib.SKIP_UNDECODABLE


def read_jsonl(path: str, report: report_lib.LoadReport, encoding: str,
               user_column: str, text_column: str) -> user_texts.UserTexts:
  """Reads a JSON Lines file; rows are counted into ``report``."""
  pa = user_texts.import_pyarrow()
  limit = input_files.MAX_LINE_BYTES
  users: list[bytes] = []
  texts: list[bytes] = []
  row = 0
  fields = _Fields((user_column, text_column))
  with user_texts.open_bytes(path) as f:
    for line_number, raw in input_files.lines(f, limit):
      if raw is None:
        row += 1
        report.skip(report_lib.SKIP_TOO_LONG, 1,
                    [input_files.too_long_place(line_number, limit)])
        continue
      if not raw.strip():
        continue
      row += 1
      if line_number == 1 and raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM):]
      parsed = _row(raw, encoding, fields)
      if isinstance(parsed, str):
        report.skip(parsed, 1, [f"line {line_number}"])
        continue
      users.append(parsed[0])
      texts.append(parsed[1])
  report.rows_read = row
  fields.check(path)
  # Every user and text was encoded from a str: valid UTF-8.
  return user_texts.finish(
      pa.chunked_array([pa.array(users, pa.binary()).cast(pa.string())]),
      pa.chunked_array([pa.array(texts, pa.binary())]), "utf-8", report,
      validated=True)
