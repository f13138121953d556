"""JSON Lines: one JSON object per line, holding the user and the text.

A line that is blank is ignored; a line that does not decode, does not
parse, is not an object, lacks a column, whose text is not a string or
whose user is empty is skipped and counted. A UTF-8 byte order mark on the
first line is ignored.
"""

from __future__ import annotations

import json

from triehh.data import report as report_lib
from triehh.data import user_texts

_UTF8_BOM = b"\xef\xbb\xbf"


def read_jsonl(path: str, report: report_lib.LoadReport, encoding: str,
               user_column: str, text_column: str) -> user_texts.UserTexts:
  """Reads a JSON Lines file; rows are counted into ``report``."""
  pa = user_texts.import_pyarrow()
  users: list = []
  texts: list[bytes] = []
  row = 0
  with user_texts.open_bytes(path) as f:
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
  return user_texts.finish(pa.chunked_array([pa.array(users, pa.string())]),
                           pa.chunked_array([pa.array(texts, pa.binary())]),
                           "utf-8", report, validated=True)
