"""Tests of triehh.data.readers: formats, malformed rows, clear failures."""

import json
import re
import warnings
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.data import helpers
from triehh.data import readers
from triehh.data import report as report_lib
from triehh.data import user_texts

S140_ROWS = [("alice", "Hello world"), ("bob", "caf\xe9 time"),
             ("alice", "the the cat"), ("carol", "x")]


def s140_bytes(rows=S140_ROWS) -> bytes:
  return b"".join(helpers.sentiment140_line(u, t) for u, t in rows)


def rows_of(texts: user_texts.UserTexts) -> list[tuple[bytes, bytes]]:
  users = texts.users.to_pylist()
  values = texts.texts.to_pylist()
  valid = (texts.valid if texts.valid is not None
           else np.ones(len(values), dtype=bool))
  return [(u if isinstance(u, bytes) else str(u).encode(), t)
          for u, t, ok in zip(users, values, valid) if ok]


def expected_rows(rows=S140_ROWS):
  """The rows as UTF-8 bytes (readers transcode latin-1 files)."""
  return [(u.encode("utf-8"), t.encode("utf-8")) for u, t in rows]


@pytest.mark.parametrize("name", ["training.csv", "training.csv.gz",
                                  "training.csv.zip"])
def test_sentiment140_plain_gzip_and_zip_read_the_same(tmp_path, name):
  path = helpers.write(str(tmp_path / name), s140_bytes())
  texts = readers.read(path, "sentiment140")
  assert texts.encoding == "utf-8"
  assert rows_of(texts) == expected_rows()
  assert texts.report.rows_read == 4 and texts.report.rows_skipped == 0


def test_official_zip_reads_the_training_member(tmp_path):
  test_rows = [("zed", "only in the test file")]
  path = helpers.official_zip(str(tmp_path / "trainingandtestdata.zip"),
                              s140_bytes(), s140_bytes(test_rows))
  texts = readers.read(path, "sentiment140")
  assert rows_of(texts) == expected_rows()


def test_zip_with_several_unknown_members_fails_naming_them(tmp_path):
  path = str(tmp_path / "many.zip")
  with zipfile.ZipFile(path, "w") as z:
    z.writestr("a.csv", s140_bytes())
    z.writestr("b.csv", s140_bytes())
  with pytest.raises(report_lib.DataError, match=r"many\.zip.*a\.csv, b\.csv"):
    readers.read(path, "sentiment140")


def test_malformed_sentiment140_rows_are_skipped_and_counted(tmp_path):
  good = s140_bytes()
  data = (good + b'"0","2","date","NO_QUERY","dave"\n'  # 5 columns
          + b'"0","3","date","NO_QUERY","erin","hi","extra"\n'  # 7 columns
          + helpers.sentiment140_line("frank", "")  # empty text
          + helpers.sentiment140_line("grace", "   ")  # blank text
          + helpers.sentiment140_line("", "no user here"))  # empty user
  path = helpers.write(str(tmp_path / "bad.csv"), data)
  texts = readers.read(path, "sentiment140")
  report = texts.report
  assert report.rows_read == 9
  assert report.skipped[report_lib.SKIP_COLUMN_COUNT] == 2
  examples = report.examples[report_lib.SKIP_COLUMN_COUNT]
  assert len(examples) == 2
  assert any("dave" in e or e == "line 5" for e in examples)
  assert any(e.startswith("7 fields") or e == "line 6" for e in examples)
  assert report.skipped[report_lib.SKIP_EMPTY_USER] == 1
  # Empty and blank texts are counted by the tokenizer (see tokenize_test);
  # the reader keeps them as rows.
  assert len(texts.texts) == 7
  assert rows_of(texts)[:4] == expected_rows()


def test_latin1_bytes_are_transcoded_to_utf8(tmp_path):
  path = helpers.write(str(tmp_path / "l.csv"),
                       helpers.sentiment140_line("u", "na\xefve \xa3"))
  texts = readers.read(path, "sentiment140")
  # i-diaeresis is C3 AF in UTF-8, the pound sign C2 A3.
  assert texts.texts.to_pylist() == [b"na\xc3\xafve \xc2\xa3"]


def test_generic_csv_with_named_columns_and_invalid_utf8(tmp_path):
  data = ("who,when,says\n"
          "u1,1,hello there\n"
          'u2,2,"quoted, with comma"\n').encode() + b"u3,3,bad \xff byte\n" + (
              b"u4,4\n" + "u5,5,caf\xe9\n".encode("utf-8"))
  path = helpers.write(str(tmp_path / "d.csv"), data)
  texts = readers.read(path, user_column="who", text_column="says")
  assert texts.encoding == "utf-8"
  assert rows_of(texts) == [(b"u1", b"hello there"),
                            (b"u2", b"quoted, with comma"),
                            (b"u5", "caf\xe9".encode("utf-8"))]
  assert texts.report.skipped == {report_lib.SKIP_UNDECODABLE: 1,
                                  report_lib.SKIP_COLUMN_COUNT: 1}
  assert texts.report.examples[report_lib.SKIP_UNDECODABLE] == ["row 3"]


def test_generic_csv_latin1_encoding_flag(tmp_path):
  path = helpers.write(str(tmp_path / "d.csv"),
                       "user,text\nu1,caf\xe9\n".encode("latin-1"))
  texts = readers.read(path, encoding="latin1")
  assert texts.encoding == "utf-8" and texts.valid is None
  assert rows_of(texts) == [(b"u1", b"caf\xc3\xa9")]


def test_missing_column_names_the_header(tmp_path):
  path = helpers.write(str(tmp_path / "d.csv"), b"name,body\nu,t\n")
  with pytest.raises(report_lib.DataError,
                     match=r"d\.csv has no column 'user'.*'name', 'body'"):
    readers.read(path)


def test_tsv_fields_are_not_quoted(tmp_path):
  data = b'user\ttext\nu1\tshe said "hi" twice\n"u2\t"quote\n'
  path = helpers.write(str(tmp_path / "d.tsv.gz"), data)
  texts = readers.read(path)
  assert rows_of(texts) == [(b"u1", b'she said "hi" twice'),
                            (b'"u2', b'"quote')]


def test_jsonl_skips_and_counts_each_malformed_line(tmp_path):
  lines = [
      json.dumps({"user": "u1", "text": "first text"}).encode(),
      b"{not json",
      json.dumps(["a", "list"]).encode(),
      json.dumps({"user": "u2"}).encode(),
      json.dumps({"user": "u3", "text": 42}).encode(),
      b'{"user": "u4", "text": "bad \xff"}',
      json.dumps({"user": 7, "text": "numeric user"}).encode(),
      b"",
      json.dumps({"user": "", "text": "no user"}).encode(),
      json.dumps({"user": "u5", "text": None}).encode(),
  ]
  path = helpers.write(str(tmp_path / "d.jsonl"), b"\n".join(lines) + b"\n")
  with pytest.warns(UserWarning, match=r"5 of 9 rows \(55\.6%\).*malformed"):
    texts = readers.read(path)
  assert rows_of(texts) == [(b"u1", b"first text"), (b"7", b"numeric user"),
                            (b"u5", b"")]
  report = texts.report
  assert report.rows_read == 9
  assert report.skipped == {report_lib.SKIP_BAD_JSON: 3,
                            report_lib.SKIP_BAD_TYPE: 1,
                            report_lib.SKIP_UNDECODABLE: 1,
                            report_lib.SKIP_EMPTY_USER: 1}
  assert report.examples[report_lib.SKIP_BAD_JSON] == ["line 2", "line 3",
                                                       "line 4"]


def test_parquet_with_nulls(tmp_path):
  table = pa.table({"uid": pa.array([1, 2, None, 4]),
                    "body": pa.array(["a b c", None, "x", "caf\xe9"])})
  path = str(tmp_path / "d.parquet")
  pq.write_table(table, path)
  texts = readers.read(path, user_column="uid", text_column="body")
  assert rows_of(texts) == [(b"1", b"a b c"),
                            (b"4", "caf\xe9".encode("utf-8"))]
  assert texts.report.skipped == {report_lib.SKIP_EMPTY_USER: 1,
                                  report_lib.SKIP_EMPTY_TEXT: 1}


def test_parquet_text_column_must_hold_text(tmp_path):
  path = str(tmp_path / "d.parquet")
  pq.write_table(pa.table({"user": ["a"], "text": [3]}), path)
  with pytest.raises(report_lib.DataError, match="holds int64, not text"):
    readers.read(path)


def test_missing_file_is_named(tmp_path):
  path = str(tmp_path / "nope.csv")
  with pytest.raises(FileNotFoundError, match=r"nope\.csv"):
    readers.read(path, "sentiment140")


def test_unreadable_files_fail_clearly(tmp_path):
  corrupt = helpers.write(str(tmp_path / "c.csv.gz"), b"")
  with open(corrupt, "wb") as f:
    f.write(b"\x1f\x8b this is not gzip")
  with pytest.raises(report_lib.DataError, match=r"cannot read .*c\.csv\.gz"):
    readers.read(corrupt, "sentiment140")
  with pytest.raises(report_lib.DataError, match="is a directory"):
    readers.read(str(tmp_path), "sentiment140")
  odd = helpers.write(str(tmp_path / "d.xyz"), b"user,text\n")
  with pytest.raises(report_lib.DataError, match="cannot tell the format"):
    readers.read(odd)
  with pytest.raises(ValueError, match="unsupported encoding"):
    readers.read(odd, "csv", encoding="cp1252")


def test_a_file_with_only_bad_rows_fails(tmp_path):
  path = helpers.write(str(tmp_path / "d.csv"),
                       b"user,text\n,hello\n,world\n")
  with pytest.raises(report_lib.DataError, match=r"no usable row in .*d\.csv"):
    readers.read(path)


def test_detect_format():
  assert readers.detect_format("x/a.CSV.gz") == "csv"
  assert readers.detect_format("a.tsv.bz2") == "tsv"
  assert readers.detect_format("a.ndjson") == "jsonl"
  assert readers.detect_format("a.pq") == "parquet"
  assert readers.detect_format("a.jsonl.zip") == "jsonl"


# ---- hostile input (regressions) --------------------------------------------


def test_short_junk_row_with_a_non_utf8_byte_is_skipped(tmp_path):
  path = helpers.write(str(tmp_path / "f.csv"),
                       b"user,text\nu1,hello world\nbad\xffline\n"
                       b"u2,more words\n")
  texts = readers.read(path)
  assert rows_of(texts) == [(b"u1", b"hello world"), (b"u2", b"more words")]
  assert texts.report.rows_read == 3
  assert texts.report.skipped == {report_lib.SKIP_COLUMN_COUNT: 1}


def test_junk_row_with_a_non_utf8_byte_keeps_other_rows_bytes(tmp_path):
  path = helpers.write(str(tmp_path / "f.tsv"),
                       "user\ttext\nu1\tcaf\xe9 ok\n".encode("utf-8")
                       + b"junk\xff\nu2\tbad \xfe byte\n")
  with pytest.warns(UserWarning, match=r"2 of 3 rows"):
    texts = readers.read(path)
  assert rows_of(texts) == [(b"u1", "caf\xe9 ok".encode("utf-8"))]
  assert texts.report.skipped == {report_lib.SKIP_COLUMN_COUNT: 1,
                                  report_lib.SKIP_UNDECODABLE: 1}


def test_sentiment140_garbage_row_with_a_high_byte_is_skipped(tmp_path):
  data = (helpers.sentiment140_line("u1", "hello world") + b"garbage\xff,x\n"
          + helpers.sentiment140_line("u2", "more words"))
  texts = readers.read(helpers.write(str(tmp_path / "s.csv"), data),
                       "sentiment140")
  assert rows_of(texts) == [(b"u1", b"hello world"), (b"u2", b"more words")]
  assert texts.report.skipped == {report_lib.SKIP_COLUMN_COUNT: 1}


def test_parquet_given_as_sentiment140_fails_in_one_line(tmp_path):
  path = str(tmp_path / "t.parquet")
  pq.write_table(pa.table({"user": ["a"], "text": ["hi there"]}), path)
  with pytest.raises(report_lib.DataError,
                     match=r"t\.parquet is a Parquet file") as err:
    readers.read(path, "sentiment140")
  assert "\n" not in str(err.value)


@pytest.mark.parametrize("user_type,values,shown", [
    (pa.list_(pa.string()), [["a"], ["b"]], "list<element: string>"),
    (pa.struct([("id", pa.int64())]), [{"id": 1}, {"id": 2}],
     "struct<id: int64>")])
def test_parquet_nested_user_column_names_column_and_type(tmp_path, user_type,
                                                          values, shown):
  path = str(tmp_path / "n.parquet")
  pq.write_table(pa.table({"user": pa.array(values, user_type),
                           "text": ["one", "two"]}), path)
  with pytest.raises(report_lib.DataError,
                     match=rf"column 'user' of .*n\.parquet holds "
                     rf"{re.escape(shown)}, not one value") as err:
    readers.read(path)
  assert "\n" not in str(err.value)


def test_parquet_dictionary_user_column_is_read_by_value(tmp_path):
  path = str(tmp_path / "d.parquet")
  users = pa.array(["a", "b", "a"]).dictionary_encode()
  pq.write_table(pa.table({"user": users, "text": ["x y", "z", "w"]}), path)
  texts = readers.read(path)
  assert texts.users.to_pylist() == ["a", "b", "a"]


def test_header_only_sentiment140_file_has_no_data_row(tmp_path):
  header = b'"polarity","id","date","query","user","text"\n'
  with pytest.raises(report_lib.DataError, match="holds no data row"):
    readers.read(helpers.write(str(tmp_path / "h.csv"), header),
                 "sentiment140")
  both = header + helpers.sentiment140_line("u1", "hello")
  texts = readers.read(helpers.write(str(tmp_path / "h2.csv"), both),
                       "sentiment140")
  assert rows_of(texts) == [(b"u1", b"hello")]
  assert texts.report.rows_read == 1


def test_jsonl_given_as_sentiment140_is_refused_with_a_hint(tmp_path):
  lines = [json.dumps({"user": f"u{i}", "text": "a, b"}) for i in range(500)]
  path = helpers.write(str(tmp_path / "d.jsonl"),
                       ("\n".join(lines) + "\n").encode())
  with pytest.raises(report_lib.DataError,
                     match=r"500 of 500 rows \(100\.0%\).*looks like JSON "
                     r"Lines.*more than 90%"):
    readers.read(path, "sentiment140")


@pytest.mark.parametrize("bad,good,outcome", [
    (6, 4, "warn"), (95, 5, "refuse"), (4, 6, "quiet")])
def test_mostly_malformed_files_warn_or_are_refused(tmp_path, bad, good,
                                                     outcome):
  data = b"user,text\n" + b"".join(b"u%d,word here\n" % i
                                   for i in range(good)) + b"x\n" * bad
  path = helpers.write(str(tmp_path / "m.csv"), data)
  if outcome == "refuse":
    with pytest.raises(report_lib.DataError, match="95 of 100 rows"):
      readers.read(path)
    with pytest.warns(UserWarning, match="95 of 100 rows"):
      texts = readers.read(path, max_malformed_share=1.0)  # the override
    assert texts.report.rows_used == 5
  elif outcome == "warn":
    with pytest.warns(UserWarning, match=r"6 of 10 rows \(60\.0%\)") as got:
      readers.read(path)
    # Users are not counted yet: the warning gives no count of them.
    assert "users" not in str(got[0].message), got[0].message
  else:
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      readers.read(path)


def test_jsonl_byte_order_mark_keeps_the_first_record(tmp_path):
  data = b"\xef\xbb\xbf" + b'{"user": "u1", "text": "first"}\n' + (
      b'{"user": "u2", "text": "second"}\n')
  texts = readers.read(helpers.write(str(tmp_path / "b.jsonl"), data))
  assert rows_of(texts) == [(b"u1", b"first"), (b"u2", b"second")]
  assert texts.report.rows_skipped == 0


def test_unbalanced_quote_counts_the_rows_it_swallowed(tmp_path):
  data = (b'user,text\nu1,fine words\nu2,"open quote\nu3,swallowed\n'
          b'u4,also swallowed"\nu5,after\n')
  with pytest.warns(UserWarning, match=r"3 of 5 rows"):
    texts = readers.read(helpers.write(str(tmp_path / "q.csv"), data))
  assert rows_of(texts) == [(b"u1", b"fine words"), (b"u5", b"after")]
  report = texts.report
  # Five data lines: two used, the quoted row and the two it hid skipped.
  assert report.rows_read == 5
  assert report.skipped == {report_lib.SKIP_UNBALANCED_QUOTE: 3}
  assert report.rows_used == 2
