"""Parquet files: any Parquet file with a user column and a text column.

The text column must hold strings or binary values, the user column one
value per user (not a nested type). A dictionary-encoded column (a pandas
categorical) is decoded, and a view type (``string_view``,
``binary_view``) is read as plain strings or bytes. A user that is null or
a floating-point NaN is a missing user (``user_texts.finish``).
"""

from __future__ import annotations

from triehh.data import report as report_lib
from triehh.data import user_texts


def _plain_type(data_type):
  """The type a column is read as: dictionaries decoded, views made plain."""
  pa = user_texts.import_pyarrow()
  if pa.types.is_dictionary(data_type):
    data_type = data_type.value_type
  if pa.types.is_string_view(data_type):
    return pa.string()
  if pa.types.is_binary_view(data_type):
    return pa.binary()
  return data_type


def _is_text(data_type) -> bool:
  pa = user_texts.import_pyarrow()
  return (pa.types.is_string(data_type) or pa.types.is_large_string(data_type)
          or pa.types.is_binary(data_type)
          or pa.types.is_large_binary(data_type))


def _check_schema(path: str, schema, user_column: str,
                  text_column: str) -> None:
  """Raises ``DataError`` when a column is absent or of an unusable type."""
  pa = user_texts.import_pyarrow()
  missing = [c for c in (user_column, text_column)
             if c not in schema.names]
  if missing:
    raise report_lib.DataError(
        f"{path} has no column {', '.join(map(repr, missing))}; its columns "
        f"are {', '.join(map(repr, schema.names))}")
  for column in (user_column, text_column):
    if schema.names.count(column) > 1:
      raise report_lib.DataError(
          f"{path} has {schema.names.count(column)} columns named "
          f"{column!r}: which one to read is ambiguous")
  user_type = schema.field(user_column).type
  if pa.types.is_nested(_plain_type(user_type)):
    raise report_lib.DataError(
        f"column {user_column!r} of {path} holds {user_type}, not one value "
        "per user: use a column of strings or numbers")
  text_type = schema.field(text_column).type
  if not _is_text(_plain_type(text_type)):
    raise report_lib.DataError(
        f"column {text_column!r} of {path} holds {text_type}, not text")


def read_parquet(path: str, report: report_lib.LoadReport, user_column: str,
                 text_column: str) -> user_texts.UserTexts:
  """Reads a Parquet file's two columns; rows are counted into ``report``."""
  pa = user_texts.import_pyarrow()
  import pyarrow.parquet as pq  # pylint: disable=g-import-not-at-top
  schema = pq.read_schema(path)
  _check_schema(path, schema, user_column, text_column)
  table = pq.read_table(path, columns=[user_column, text_column])
  report.rows_read = table.num_rows
  users, texts = table.column(user_column), table.column(text_column)
  user_type, text_type = _plain_type(users.type), _plain_type(texts.type)
  users, texts = users.cast(user_type), texts.cast(text_type)
  validated = pa.types.is_string(text_type) or pa.types.is_large_string(
      text_type)
  texts = texts.cast(pa.large_binary() if pa.types.is_large_string(text_type)
                     or pa.types.is_large_binary(text_type) else pa.binary())
  return user_texts.finish(users, texts, "utf-8", report, validated=validated)
