"""Property-based tests: malformed files never crash a reader or lose a row.

Every reader (CSV, TSV, JSON Lines, Sentiment140, Parquet; plain, ``.gz``,
``.bz2`` and ``.zip``) is given generated files, then damaged ones: random
bytes inserted, truncation, rows with the wrong number of columns, bytes
that are not UTF-8, byte order marks, stray quotes, NULs and huge lines.
Each must either raise the project's ``DataError`` (one line) or return
rows whose accounting adds up: rows used + rows skipped == rows read, and
the rows handed on are exactly the rows used. Where the number of records
is known without parsing (line-based formats without quoting), rows read
must equal it.

The examples are derandomized (the same on every run) and bounded.
"""

import csv
import io
import json
import re
import warnings

import hypothesis
from hypothesis import strategies as st
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.data import helpers
from triehh.data import readers
from triehh.data import report as report_lib
from triehh.data import tokenize

FUZZ = hypothesis.settings(max_examples=60, deadline=None, derandomize=True,
                           suppress_health_check=list(
                               hypothesis.HealthCheck),
                           database=None)
FUZZ_PARQUET = hypothesis.settings(FUZZ, max_examples=40)  # slower writes

# Characters that stress parsers: delimiters, quotes, line breaks, NUL, a
# byte order mark, non-ASCII letters, an emoji, a Unicode line separator.
TRICKY = list("ab xyz,;\"'\t\n\r\\{}[]:") + [
    "\x00", "\ufeff", "\xe9", "\xff", "\u2028", "\U0001F600", "\x1c"]
USERS = st.text(alphabet=st.sampled_from(list("uvw01_") + TRICKY),
                max_size=6)
TEXTS = st.text(alphabet=st.sampled_from(TRICKY), max_size=30)
ROWS = st.lists(st.tuples(USERS, TEXTS), max_size=12)
SUFFIXES = ["", ".gz", ".bz2", ".zip"]


@st.composite
def damage(draw, data: bytes) -> bytes:
  """``data`` after a few random edits of the kinds the module lists."""
  for _ in range(draw(st.integers(0, 3))):
    kind = draw(st.sampled_from(["insert", "truncate", "bom", "nul",
                                 "quote", "huge", "latin1", "columns"]))
    at = draw(st.integers(0, len(data)))
    if kind == "insert":
      data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    elif kind == "truncate":
      data = data[:at]
    elif kind == "bom":
      data = b"\xef\xbb\xbf" + data
    elif kind == "nul":
      data = data[:at] + b"\x00" + data[at:]
    elif kind == "quote":
      data = data[:at] + b'"' + data[at:]
    elif kind == "huge":
      data = data[:at] + b"w" * 200_000 + data[at:]
    elif kind == "latin1":
      data = data[:at] + b"\xe9\xff\xfe" + data[at:]
    else:
      data += draw(st.sampled_from([b"only\n", b"a,b,c,d\n", b"a\tb\tc\n",
                                    b"\n\n", b"x" * 10 + b"\n"]))
  return data


def encode_rows(rows, fmt: str) -> bytes:
  """Well-formed bytes of ``rows`` in ``fmt`` (before any damage)."""
  if fmt == "jsonl":
    return "".join(json.dumps({"user": u, "text": t}) + "\n"
                   for u, t in rows).encode("utf-8", "surrogatepass")
  if fmt == "sentiment140":
    return b"".join(helpers.sentiment140_line(
        u, t, encoding="utf-8") for u, t in rows)
  out = io.StringIO()
  if fmt == "tsv":
    out.write("user\ttext\n")
    for u, t in rows:
      out.write(re.sub(r"[\t\r\n]", " ", u) + "\t"
                + re.sub(r"[\t\r\n]", " ", t) + "\n")
  else:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["user", "text"])
    writer.writerows(rows)
  return out.getvalue().encode("utf-8")


def check_read(path: str, fmt: str):
  """Reads ``path``: a ``DataError`` or rows that add up (module docstring).

  Returns the result, or None for a ``DataError``.
  """
  try:
    texts = readers.read(path, fmt, max_malformed_share=1.0)
  except report_lib.DataError as err:
    assert "\n" not in str(err), str(err)
    return None
  report = texts.report
  assert all(count > 0 for count in report.skipped.values())
  assert 0 <= report.rows_used <= report.rows_read
  valid = (np.ones(texts.num_rows, dtype=bool) if texts.valid is None
           else texts.valid)
  assert int(valid.sum()) == report.rows_used
  assert texts.num_rows <= report.rows_read
  # The tokenizer counts blank texts among the rows handed on, and only
  # those.
  handed_on = report.rows_used
  tokens = tokenize.tokenize(texts)
  assert 0 <= report.rows_used <= handed_on
  assert set(np.unique(tokens.token_row)) <= set(np.flatnonzero(valid))
  return texts


def lines_of(data: bytes, breaks: bytes) -> list[bytes]:
  return re.split(breaks, data)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "sentiment140"])
@pytest.mark.parametrize("suffix", SUFFIXES)
@FUZZ
@hypothesis.given(data=st.data(), rows=ROWS)
def test_text_readers_never_crash_and_count_every_row(tmp_path_factory, fmt,
                                                      suffix, data, rows):
  raw = data.draw(damage(encode_rows(rows, fmt)))
  ext = {"sentiment140": ".csv"}.get(fmt, "." + fmt)
  path = helpers.write(str(tmp_path_factory.mktemp("f") / f"d{ext}{suffix}"),
                       raw)
  texts = check_read(path, fmt)
  if texts is None:
    return
  if fmt == "tsv":  # never quoted: one record per non-empty line
    lines = [l for l in lines_of(raw, rb"\r\n|\n|\r") if l]
    assert texts.report.rows_read == len(lines) - 1
  elif fmt == "jsonl":  # one record per line with something on it
    lines = [l for l in raw.split(b"\n") if l.strip()]
    assert texts.report.rows_read == len(lines)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "sentiment140"])
@FUZZ
@hypothesis.given(rows=ROWS.filter(lambda r: all(
    "\n" not in u + t and "\r" not in u + t for u, t in r)))
def test_well_formed_rows_are_all_read(tmp_path_factory, fmt, rows):
  path = helpers.write(
      str(tmp_path_factory.mktemp("f") /
          ("d.csv" if fmt == "sentiment140" else f"d.{fmt}")),
      encode_rows(rows, fmt))
  texts = check_read(path, fmt)
  if texts is None:  # nothing usable at all
    assert all(u == "" for u, _ in rows) or not rows or fmt == "sentiment140"
    return
  assert texts.report.rows_read == len(rows)
  malformed = texts.report.rows_malformed
  if fmt != "sentiment140":  # its latin-1 reading never fails on bytes
    assert malformed == 0


@pytest.mark.parametrize("suffix", [s for s in SUFFIXES if s])
@FUZZ
@hypothesis.given(data=st.data(), rows=ROWS)
def test_damaged_archives_fail_cleanly(tmp_path_factory, suffix, data, rows):
  clean = helpers.write(str(tmp_path_factory.mktemp("f") / f"d.csv{suffix}"),
                        encode_rows(rows, "csv"))
  with open(clean, "rb") as f:
    raw = f.read()
  with open(clean, "wb") as f:
    f.write(data.draw(damage(raw)))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # a damaged file may well warn
    check_read(clean, "csv")


PARQUET_USERS = st.one_of(st.none(), st.text(max_size=5),
                          st.integers(-3, 3).map(str))


@st.composite
def parquet_tables(draw):
  n = draw(st.integers(0, 8))
  users = draw(st.lists(PARQUET_USERS, min_size=n, max_size=n))
  binary = draw(st.booleans())
  if binary:
    texts = draw(st.lists(st.one_of(st.none(), st.binary(max_size=20)),
                          min_size=n, max_size=n))
    text_array = pa.array(texts, pa.binary())
  else:
    texts = draw(st.lists(st.one_of(st.none(), TEXTS.map(
        lambda t: t.encode("utf-8", "replace").decode("utf-8"))),
                          min_size=n, max_size=n))
    text_array = pa.array(texts, pa.string())
  return pa.table({"user": pa.array(users, pa.string()), "text": text_array})


@FUZZ_PARQUET
@hypothesis.given(table=parquet_tables(), data=st.data())
def test_parquet_never_crashes_and_counts_every_row(tmp_path_factory, table,
                                                    data):
  path = str(tmp_path_factory.mktemp("f") / "d.parquet")
  pq.write_table(table, path)
  damaged = data.draw(st.booleans())
  if damaged:
    with open(path, "rb") as f:
      raw = f.read()
    with open(path, "wb") as f:
      f.write(data.draw(damage(raw)))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # a damaged file may well warn
    texts = check_read(path, "parquet")
  if not damaged and table.num_rows:
    assert texts is None or texts.report.rows_read == table.num_rows
