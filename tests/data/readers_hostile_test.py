"""Tests of the readers on hostile but legal input.

Over-long lines (skipped and counted, never held whole; a header over the
bound is an error), CR-only line breaks, a header naming a column twice, a
lone surrogate in a JSON user, missing (NaN) user ids, and Parquet text
that is dictionary-encoded or of a view type. Bounds are lowered with
monkeypatch so the files stay small; the gzip cases hold one line of tens
of MiB, written and read in pieces.
"""

import gzip
import json
import re
import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.data import helpers
from triehh.data import csv_reader
from triehh.data import input_files
from triehh.data import readers
from triehh.data import report as report_lib

LIMIT = 100  # the lowered bound on one line (a Sentiment140 row: ~70)


def used_rows(texts) -> list[tuple[str, bytes]]:
  users = texts.users.to_pylist()
  values = texts.texts.to_pylist()
  valid = (texts.valid if texts.valid is not None
           else np.ones(len(values), dtype=bool))
  return [(u.decode() if isinstance(u, bytes) else str(u), t)
          for u, t, ok in zip(users, values, valid) if ok]


LONG_TEXT = "z" * (2 * LIMIT)
ROWS = [("u1", "hello world"), ("u2", LONG_TEXT), ("u3", "bye now")]


def encode(fmt: str, rows) -> bytes:
  if fmt == "jsonl":
    return "".join(json.dumps({"user": u, "text": t}) + "\n"
                   for u, t in rows).encode()
  if fmt == "sentiment140":
    return b"".join(helpers.sentiment140_line(u, t) for u, t in rows)
  sep = "," if fmt == "csv" else "\t"
  return ("user" + sep + "text\n" + "".join(u + sep + t + "\n"
                                            for u, t in rows)).encode()


@pytest.mark.parametrize("suffix", ["", ".gz", ".zip"])
@pytest.mark.parametrize("fmt", ["csv", "tsv", "sentiment140", "jsonl"])
def test_a_line_over_the_bound_is_a_skipped_malformed_row(
    tmp_path, monkeypatch, fmt, suffix):
  monkeypatch.setattr(input_files, "MAX_LINE_BYTES", LIMIT)
  ext = {"sentiment140": "csv"}.get(fmt, fmt)
  path = helpers.write(str(tmp_path / f"d.{ext}{suffix}"), encode(fmt, ROWS))
  texts = readers.read(path, fmt, max_malformed_share=1.0)
  assert used_rows(texts) == [("u1", b"hello world"), ("u3", b"bye now")]
  report = texts.report
  assert report.rows_read == 3 and report.rows_used == 2
  line = 2 if fmt in ("jsonl", "sentiment140") else 3  # after a header
  assert report.skipped == {report_lib.SKIP_TOO_LONG: 1}
  assert report.examples[report_lib.SKIP_TOO_LONG] == [
      f"line {line} (over {LIMIT} bytes)"]
  assert report.rows_malformed == 1


def test_a_row_longer_than_arrows_block_is_skipped_not_fatal(
    tmp_path, monkeypatch):
  """Arrow refuses a row straddling two block boundaries ("straddling
  object straddles two block boundaries"); the reader skips it first.
  Blocks and bound are scaled down together (16 MiB blocks in use)."""
  monkeypatch.setattr(csv_reader, "_BLOCK_SIZE", 1024)
  monkeypatch.setattr(input_files, "MAX_LINE_BYTES", 256)
  rows = [(f"u{i}", f"word{i} again") for i in range(40)]
  rows[20] = ("big", "x" * 5000)
  path = helpers.write(str(tmp_path / "d.csv"), encode("csv", rows))
  texts = readers.read(path)
  assert len(used_rows(texts)) == 39
  assert texts.report.examples[report_lib.SKIP_TOO_LONG] == [
      "line 22 (over 256 bytes)"]


def write_gzip_with_a_long_line(path: str, head: bytes, size: int,
                                tail: bytes) -> str:
  """``head``, ``size`` bytes of ``a``, ``tail``; written in 1 MiB pieces."""
  piece = b"a" * (1 << 20)
  with gzip.open(path, "wb", compresslevel=1) as f:
    f.write(head)
    for _ in range(size >> 20):
      f.write(piece)
    f.write(tail)
  return path


def peak_python_memory(read) -> tuple[object, int]:
  """``read()``'s result (or error) and the peak Python heap it used."""
  tracemalloc.start()
  try:
    try:
      result = read()
    except report_lib.DataError as err:
      result = err
    return result, tracemalloc.get_traced_memory()[1]
  finally:
    tracemalloc.stop()


def test_gzip_jsonl_with_a_32_mib_line_is_read_in_bounded_memory(
    tmp_path, monkeypatch):
  monkeypatch.setattr(input_files, "MAX_LINE_BYTES", 1 << 20)
  path = write_gzip_with_a_long_line(
      str(tmp_path / "one.jsonl.gz"), b'{"user": "u1", "text": "hi there"}\n'
      b'{"user": "u2", "text": "', 32 << 20,
      b'"}\n{"user": "u3", "text": "bye now"}\n')
  texts, peak = peak_python_memory(
      lambda: readers.read(path, max_malformed_share=1.0))
  assert peak < 8 << 20, f"{peak:,} bytes held"
  assert [u for u, _ in used_rows(texts)] == ["u1", "u3"]
  assert texts.report.examples[report_lib.SKIP_TOO_LONG] == [
      "line 2 (over 1,048,576 bytes)"]


def test_gzip_csv_with_a_32_mib_header_is_refused_naming_line_and_bound(
    tmp_path):
  path = write_gzip_with_a_long_line(str(tmp_path / "h.csv.gz"), b"user,",
                                     32 << 20, b"\nu1,hi\n")
  err, peak = peak_python_memory(lambda: readers.read(path))
  assert peak < 2 * input_files.MAX_LINE_BYTES + (4 << 20)
  assert isinstance(err, report_lib.DataError)
  assert str(err).startswith(
      f"line 1 of {path} is longer than {input_files.MAX_LINE_BYTES:,} bytes")


def test_a_file_of_only_long_lines_is_refused_naming_the_bound(
    tmp_path, monkeypatch):
  monkeypatch.setattr(input_files, "MAX_LINE_BYTES", LIMIT)
  path = helpers.write(str(tmp_path / "d.jsonl"),
                       encode("jsonl", [("u", LONG_TEXT)] * 2))
  with pytest.raises(report_lib.DataError, match=re.escape(
      f"2 line too long (e.g. line 1 (over {LIMIT} bytes), line 2 (over "
      f"{LIMIT} bytes))")):
    readers.read(path)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_cr_only_line_breaks_are_read(tmp_path, fmt):
  data = encode(fmt, [("u1", "hello world"), ("u2", "bye now")])
  path = helpers.write(str(tmp_path / f"d.{fmt}"), data.replace(b"\n", b"\r"))
  texts = readers.read(path)
  assert used_rows(texts) == [("u1", b"hello world"), ("u2", b"bye now")]
  assert texts.report.rows_read == 2 and not texts.report.skipped


@pytest.mark.parametrize("header,column,places", [
    ("user,text,text", "text", "columns 2 and 3"),
    ("user,when,user,text,user", "user", "columns 1, 3 and 5")])
def test_a_header_naming_a_column_to_read_twice_is_refused(
    tmp_path, header, column, places):
  path = helpers.write(str(tmp_path / "d.csv"),
                       (header + "\n" + ",".join(["a b"] * header.count(",")
                                                 + ["c"]) + "\n").encode())
  with pytest.raises(report_lib.DataError, match=re.escape(
      f"the header of {path} names column {column!r} "
      f"{header.split(',').count(column)} times ({places}): which one to "
      "read is ambiguous")):
    readers.read(path)


def test_other_repeated_header_names_are_fine(tmp_path):
  path = helpers.write(str(tmp_path / "d.csv"),
                       b"x,user,x,text\n1,u1,2,hello world\n")
  assert used_rows(readers.read(path)) == [("u1", b"hello world")]


def test_jsonl_lone_surrogate_in_user_or_text_is_skipped_and_counted(
    tmp_path):
  lines = [r'{"user": "u1", "text": "fine words"}',
           r'{"user": "bad\ud800", "text": "hidden"}',
           r'{"user": "u3", "text": "bad\udfff text"}',
           r'{"user": NaN, "text": "no user"}',
           r'{"user": 4, "text": "a number is a user"}']
  path = helpers.write(str(tmp_path / "d.jsonl"),
                       ("\n".join(lines) + "\n").encode())
  texts = readers.read(path)
  assert used_rows(texts) == [("u1", b"fine words"),
                              ("4", b"a number is a user")]
  assert texts.report.skipped == {report_lib.SKIP_UNDECODABLE: 2,
                                  report_lib.SKIP_EMPTY_USER: 1}
  assert texts.report.examples[report_lib.SKIP_UNDECODABLE] == [
      "line 2", "line 3"]


@pytest.mark.parametrize("nan_as", ["NaN", "null"])
def test_parquet_nan_user_ids_are_missing_users(tmp_path, nan_as):
  """A float user column may hold NaN itself (pyarrow from numpy) or null
  (pandas' to_parquet): both are a missing user, not one user "nan"."""
  users = np.array([1.0, np.nan, 2.0, np.nan, 1.0])
  path = str(tmp_path / "d.parquet")
  pq.write_table(pa.table({
      "user": pa.array(users, from_pandas=nan_as == "null"),
      "text": [f"w{i} x" for i in range(5)]}), path)
  assert pq.read_table(path).column("user").null_count == (
      2 if nan_as == "null" else 0)
  texts = readers.read(path)
  assert used_rows(texts) == [("1.0", b"w0 x"), ("2.0", b"w2 x"),
                              ("1.0", b"w4 x")]
  assert texts.report.skipped == {report_lib.SKIP_EMPTY_USER: 2}
  assert texts.report.examples[report_lib.SKIP_EMPTY_USER] == ["row 2",
                                                               "row 4"]


@pytest.mark.parametrize("kind", ["categorical", "string_view",
                                  "binary_view"])
def test_parquet_dictionary_and_view_text_is_read(tmp_path, kind):
  users, words = ["a", "b", "a"], ["hello world", "bye now", "hello world"]
  if kind == "categorical":
    table = pa.Table.from_pandas(pd.DataFrame(
        {"user": pd.Categorical(users), "text": pd.Categorical(words)}))
  else:
    view = pa.string_view() if kind == "string_view" else pa.binary_view()
    table = pa.table({"user": pa.array(users).cast(pa.string_view()),
                      "text": pa.array(words).cast(view)})
  path = str(tmp_path / "d.parquet")
  pq.write_table(table, path)
  texts = readers.read(path)
  assert used_rows(texts) == [(u, w.encode()) for u, w in zip(users, words)]
  assert texts.report.rows_read == 3 and not texts.report.skipped


def test_jsonl_object_and_list_user_ids_are_named_not_empty(tmp_path):
  lines = [r'{"user": "u1", "text": "fine words"}',
           r'{"user": {"id": 0}, "text": "an object"}',
           r'{"user": [1], "text": "a list"}',
           r'{"user": "", "text": "empty"}']
  path = helpers.write(str(tmp_path / "d.jsonl"),
                       ("\n".join(lines) + "\n").encode())
  texts = readers.read(path)
  assert used_rows(texts) == [("u1", b"fine words")]
  assert texts.report.skipped == {report_lib.SKIP_BAD_USER: 2,
                                  report_lib.SKIP_EMPTY_USER: 1}
  assert texts.report.examples[report_lib.SKIP_BAD_USER] == ["line 2",
                                                            "line 3"]


def test_jsonl_nested_too_deeply_is_a_malformed_line(tmp_path):
  # json.loads raised RecursionError: a traceback instead of a skipped line.
  lines = [json.dumps({"user": f"u{i}", "text": "hi"}) for i in range(9)]
  path = helpers.write(str(tmp_path / "d.jsonl"),
                       ("\n".join(lines) + "\n" + "[" * 100_000 + "\n"
                        ).encode())
  texts = readers.read(path)
  assert texts.report.skipped == {report_lib.SKIP_BAD_JSON: 1}
  assert texts.report.examples[report_lib.SKIP_BAD_JSON] == ["line 10"]


def test_jsonl_without_the_text_field_names_the_fields_it_has(tmp_path):
  # It said "malformed JSON line ... more than 90% malformed rows".
  lines = [json.dumps({"user": f"u{i}", "text": "hi"}) for i in range(30)]
  path = helpers.write(str(tmp_path / "d.jsonl"),
                       ("\n".join(lines) + "\n[1]\n").encode())
  with pytest.raises(report_lib.DataError,
                     match=r"d\.jsonl has no field 'msg' in any of its 30 "
                           r"JSON objects; their fields are 'user', 'text' "
                           r"\(set the user and text column names\)$"):
    readers.read(path, text_column="msg")


def test_format_and_encoding_errors_name_their_arguments(tmp_path):
  # A .zip said "one of sentiment140, ...", not a data_format value; the
  # library names its arguments (the drivers say them as flags).
  path = helpers.write(str(tmp_path / "d.zip"), b"user,text\n")
  with pytest.raises(report_lib.DataError,
                     match=r"give data_format \(one of csv, tsv, jsonl, "
                           r"parquet\)$"):
    readers.read(path)
  with pytest.raises(ValueError, match=r"unsupported encoding 'utf-16' "
                                       r"\(data_encoding\): use one of"):
    readers.read(path, "csv", encoding="utf-16")
