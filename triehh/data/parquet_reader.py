"""Parquet files: any Parquet file with a user column and a text column.

The text column must hold strings or binary values, the user column one
value per user (not a nested type); dictionary-encoded users are decoded.
"""

from __future__ import annotations

from triehh.data import report as report_lib
from triehh.data import user_texts


def read_parquet(path: str, report: report_lib.LoadReport, user_column: str,
                 text_column: str) -> user_texts.UserTexts:
  """Reads a Parquet file's two columns; rows are counted into ``report``."""
  pa = user_texts.import_pyarrow()
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
  return user_texts.finish(users, texts, "utf-8", report, validated=validated)
