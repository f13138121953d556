"""The Beam ingestion equals the in-memory loader on the same files."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os

import numpy as np
import pytest

pytest.importorskip("apache_beam", reason="apache-beam is not installed")

from tests.beam import held_ingestion  # pylint: disable=g-import-not-at-top
from triehh.beam import ingest  # pylint: disable=g-import-not-at-top
from triehh.beam import pieces  # pylint: disable=g-import-not-at-top
from triehh.beam import shards  # pylint: disable=g-import-not-at-top
from triehh.beam import tables  # pylint: disable=g-import-not-at-top
from triehh.data import loader  # pylint: disable=g-import-not-at-top
from triehh.data import report as report_lib  # pylint: disable=g-import-not-at-top

WORDS = ("apple", "banana", "cherry", "dates", "elder", "fig!", "grape",
         "Hello", "hello", "ab", "\u00e9clair", "http://x.io", "it.", "p.s")
NUM_SHARDS = 3


def _rows(seed: int, num_rows: int = 240, num_users: int = 30):
  """(user, text) rows; some users in several shards, ties, bad rows."""
  rng = np.random.default_rng(seed)
  rows = []
  for _ in range(num_rows):
    text = " ".join(rng.choice(WORDS, size=int(rng.integers(0, 4))))
    rows.append((f"u{int(rng.integers(num_users))}", text))
  rows[3] = ("", "an empty user")
  return rows


def _shard_rows(rows, users_sharded: bool):
  """The rows split into shards: by position, or by user."""
  if users_sharded:
    return [[r for r in rows if int(r[0][1:] or 0) % NUM_SHARDS == k]
            for k in range(NUM_SHARDS)]
  size = -(-len(rows) // NUM_SHARDS)
  return [rows[k * size:(k + 1) * size] for k in range(NUM_SHARDS)]


def _write_text(path: str, fmt: str, rows, bad_line: bool) -> None:
  """One shard (header, rows, maybe a malformed line) in ``fmt``."""
  opener = gzip.open if path.endswith(".gz") else open
  with opener(path, "wt", encoding="utf-8") as f:
    if fmt == "jsonl":
      for user, text in rows:
        f.write(json.dumps({"user": user, "text": text}) + "\n")
      if bad_line:
        f.write("{not json\n")
      return
    sep = "," if fmt == "csv" else "\t"
    f.write(f"user{sep}text\n")
    for user, text in rows:
      f.write(f"{user}{sep}{text}\n")
    if bad_line:
      f.write(f"x{sep}y{sep}z\n")


def _write_parquet(path: str, rows) -> None:
  import pyarrow as pa  # pylint: disable=g-import-not-at-top
  import pyarrow.parquet as pq  # pylint: disable=g-import-not-at-top
  pq.write_table(pa.table({"user": [u for u, _ in rows],
                           "text": [t for _, t in rows]}), path)


def _files(tmp_path, fmt: str, suffix: str, users_sharded: bool):
  """The shards (a glob) and the one file of them concatenated in order."""
  parts = _shard_rows(_rows(7), users_sharded)
  whole = str(tmp_path / f"whole.{fmt}{suffix}")
  for k, part in enumerate(parts):
    path = str(tmp_path / f"part-{k}.{fmt}{suffix}")
    if fmt == "parquet":
      _write_parquet(path, part)
    else:
      _write_text(path, fmt, part, bad_line=k == 1)
  everything = []
  if fmt == "parquet":
    _write_parquet(whole, [r for part in parts for r in part])
  else:
    # The concatenation, with the bad line where its shard had it.
    opener = gzip.open if suffix == ".gz" else open
    with opener(whole, "wt", encoding="utf-8") as f:
      for k, part in enumerate(parts):
        shard = str(tmp_path / f"part-{k}.{fmt}{suffix}")
        with opener(shard, "rt", encoding="utf-8") as g:
          lines = g.readlines()
        everything += lines if fmt == "jsonl" or k == 0 else lines[1:]
      f.writelines(everything)
  return str(tmp_path / f"part-*.{fmt}{suffix}"), whole


def _user_bags(pop):
  """A several-word population's users, each a word -> count dict."""
  vocab = pop.vocabulary
  return [dict(zip(vocab[pop.entry_word[lo:hi]].tolist(),
                   pop.entry_count[lo:hi].tolist()))
          for lo, hi in zip(pop.user_offsets[:-1], pop.user_offsets[1:])]


def _assert_same(got: loader.LoadedData, want: loader.LoadedData) -> None:
  g, w = got.population, want.population
  assert g.num_users == w.num_users
  assert g.alphabet == w.alphabet
  assert g.max_length == w.max_length
  assert g.num_dropped_users == w.num_dropped_users
  assert got.population.ground_truth() == want.population.ground_truth()
  if not w.is_single_word:
    assert _user_bags(g) == _user_bags(w)
  assert got.info == want.info
  assert got.report.rows_read == want.report.rows_read
  assert got.report.skipped == want.report.skipped
  assert got.report.num_users == want.report.num_users
  assert got.report.users_without_words == want.report.users_without_words


def _both(tmp_path, spec: loader.DataSpec, whole: str, users_sharded: bool):
  out = str(tmp_path / "out")
  paths, got = ingest.ingest_read(spec, out, users_sharded=users_sharded)
  assert paths == shards.expand(spec.path)
  _assert_same(got, tables.read_population(out))  # what it read back
  want = loader.build(dataclasses.replace(spec, path=whole))
  return got, want


@pytest.mark.parametrize("users_sharded", [False, True])
@pytest.mark.parametrize("setting", ["single", "multi", "oov"])
def test_csv_shards_equal_the_concatenated_file(tmp_path, setting,
                                                users_sharded):
  pattern, whole = _files(tmp_path, "csv", "", users_sharded)
  spec = loader.DataSpec(path=pattern, setting=setting, oov_num_users=500,
                         dictionary_size=2000, seed=3)
  got, want = _both(tmp_path, spec, whole, users_sharded)
  assert want.report.skipped[report_lib.SKIP_COLUMN_COUNT] == 1
  assert want.report.skipped[report_lib.SKIP_EMPTY_USER] == 1
  _assert_same(got, want)


@pytest.mark.parametrize("fmt,suffix", [("tsv", ".gz"), ("jsonl", ""),
                                        ("parquet", "")])
def test_other_formats_equal_the_concatenated_file(tmp_path, fmt, suffix):
  pattern, whole = _files(tmp_path, fmt, suffix, False)
  spec = loader.DataSpec(path=pattern, setting="multi", tokenizer="paper")
  got, want = _both(tmp_path, spec, whole, False)
  _assert_same(got, want)


def test_a_user_across_shards_is_one_user(tmp_path):
  # u1 writes "bbb" twice in shard 0 and "aaa" three times in shard 1: the
  # merged counts choose "aaa", which neither shard alone would for u2.
  for k, lines in enumerate((["u1,bbb bbb", "u2,ccc"], ["u1,aaa aaa aaa",
                                                         "u2,ddd"])):
    (tmp_path / f"s-{k}.csv").write_text("user,text\n" + "\n".join(lines)
                                         + "\n")
  (tmp_path / "whole.csv").write_text(
      "user,text\nu1,bbb bbb\nu2,ccc\nu1,aaa aaa aaa\nu2,ddd\n")
  spec = loader.DataSpec(path=str(tmp_path / "s-*.csv"))
  got, want = _both(tmp_path, spec, str(tmp_path / "whole.csv"), False)
  assert got.population.ground_truth() == {"aaa": 1, "ccc": 1}
  _assert_same(got, want)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_one_file_cut_into_pieces_equals_the_file(tmp_path, fmt):
  # Pieces of 97 bytes: rows straddle the cuts, and a malformed line is in
  # one of them.
  _, whole = _files(tmp_path, fmt, "", False)
  spec = loader.DataSpec(path=whole, setting="multi")
  out = str(tmp_path / "out")
  ingest.ingest(spec, out, split_bytes=97)
  got = tables.read_population(out)
  want = loader.build(spec)
  _assert_same(got, want)
  assert len(shards.split(spec, [whole], 97)) > 30


def test_pieces_hold_every_line_once(tmp_path):
  # Lines of 26 to 75 bytes in pieces of 64: some pieces hold no line start.
  path = tmp_path / "lines.jsonl"
  lines = [f'{{"user": "u{i}", "text": "{"x" * (i % 50)}"}}\n'
           for i in range(300)]
  path.write_text("".join(lines))
  got = []
  for piece in pieces.split(str(path), "jsonl", 64):
    with pieces.as_file(piece, "jsonl") as name:
      if name is not None:
        with open(name, encoding="utf-8") as f:
          got += f.readlines()
  assert got == lines


def test_a_piece_with_no_usable_row_is_named(tmp_path):
  path = tmp_path / "bad.csv"
  # The whole file is usable (3 of 43 rows); the piece of bytes 32 to 64
  # holds only rows with an empty user, which the readers refuse.
  path.write_text("user,text\n" + "u1,hello\n" * 3 + ",hello\n" * 40)
  spec = loader.DataSpec(path=str(path))
  assert loader.build(spec).population.num_users == 1
  with pytest.raises(report_lib.DataError,
                     match=r"no usable row in .*bad\.csv \(bytes 32 to 64\)"):
    ingest.ingest(spec, str(tmp_path / "out"), split_bytes=32)


def test_users_sharded_with_pieces_is_refused(tmp_path):
  spec = loader.DataSpec(path=str(tmp_path / "x.csv"))
  with pytest.raises(ValueError, match="users_sharded needs"):
    ingest.ingest(spec, str(tmp_path / "out"), users_sharded=True,
                  split_bytes=100)


def test_no_matching_file_is_named(tmp_path):
  spec = loader.DataSpec(path=str(tmp_path / "none-*.csv"))
  with pytest.raises(FileNotFoundError, match="no data file matches"):
    ingest.ingest(spec, str(tmp_path / "out"))


def test_reading_a_directory_that_is_no_output_says_so(tmp_path):
  with pytest.raises(FileNotFoundError, match="not the output"):
    tables.read_population(str(tmp_path))


def test_importing_triehh_and_the_tables_does_not_import_beam():
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  code = ("import sys, triehh, triehh.beam, triehh.beam.shards, "
          "triehh.beam.tables; print('apache_beam' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], check=True,
                       capture_output=True, text=True).stdout
  assert out.strip() == "False"


@pytest.mark.filterwarnings("ignore:.*are malformed:UserWarning")
@pytest.mark.parametrize("failure", ["malformed", "unreadable_shard",
                                     "interrupted"])
def test_a_failed_ingestion_leaves_the_earlier_one_whole(tmp_path, failure,
                                                         monkeypatch):
  pattern, _ = _files(tmp_path, "csv", "", False)
  spec = loader.DataSpec(path=pattern, setting="multi")
  out = tmp_path / "out"
  out.mkdir()
  (out / "notes.txt").write_text("the user's own file")
  ingest.ingest(spec, str(out))
  before = {p: open(p, "rb").read() for p in tables.output_files(str(out))}
  if failure == "malformed":  # every row of the new input is refused
    bad = tmp_path / "bad.csv"
    bad.write_text("user,text\n" + "x,y,z\n" * 50)
    again = dataclasses.replace(spec, path=str(bad))
    expected = report_lib.DataError
  elif failure == "unreadable_shard":
    (tmp_path / "part-9.csv").write_bytes(b"\x1f\x8b broken gzip")
    again, expected = dataclasses.replace(
        spec, path=str(tmp_path / "part-*.csv")), Exception
  else:  # Ctrl-C once the pipeline has written its tables
    def interrupt(directory):
      raise KeyboardInterrupt
    monkeypatch.setattr(tables, "read_population", interrupt)
    again, expected = spec, KeyboardInterrupt
  with pytest.raises(expected):
    ingest.ingest(again, str(out))
  monkeypatch.undo()
  assert {p: open(p, "rb").read()
          for p in tables.output_files(str(out))} == before
  assert sorted(os.listdir(out)) == sorted(
      ["notes.txt"] + [os.path.basename(p) for p in before])
  assert not [n for n in os.listdir(tmp_path) if ".ingesting-" in n]
  tables.read_population(str(out))


def test_a_mostly_malformed_piece_is_said_of_the_input_file(tmp_path):
  # The warning named the piece's temporary copy, not the input file.
  path = tmp_path / "quoted.csv"
  path.write_text("user,text\n" + "u1,hello\n" * 10 + 'u2,"open\n'
                  + "u3,x,y\n" * 20)
  spec = loader.DataSpec(path=str(path))
  piece = pieces.Piece(str(path), 40, path.stat().st_size)
  with pytest.warns(UserWarning) as said:
    shards.read_shard(spec, 0, piece)
  messages = [str(w.message) for w in said]
  assert any(f"of {piece.describe()} are malformed" in m for m in messages)
  assert all(str(path) + " (bytes 40 to" in m for m in messages), messages


def test_a_rerun_touches_only_the_files_it_wrote(tmp_path):
  # A rerun deleted the user's bags-notes.jsonl (it matched bags*.jsonl).
  pattern, _ = _files(tmp_path, "csv", "", False)
  spec = loader.DataSpec(path=pattern, setting="multi")
  out = tmp_path / "out"
  ingest.ingest(spec, str(out))
  first = tables.read_population(str(out)).population
  (out / "bags-notes.jsonl").write_text("the user's own notes\n")
  (out / "notes.txt").write_text("the user's own file")
  ingest.ingest(spec, str(out))
  assert (out / "bags-notes.jsonl").read_text() == "the user's own notes\n"
  assert (out / "notes.txt").read_text() == "the user's own file"
  listed = json.loads((out / tables.MANIFEST).read_text())["files"]
  assert tables.SPEC in listed and tables.COUNTS in listed
  assert [n for n in listed if n.startswith("bags")]
  assert sorted(os.listdir(out)) == sorted(
      listed + [tables.MANIFEST, "bags-notes.jsonl", "notes.txt"])
  again = tables.read_population(str(out)).population
  assert again.ground_truth() == first.ground_truth()
  # A single-word rerun replaces the multi tables it listed, no more.
  ingest.ingest(dataclasses.replace(spec, setting="single"), str(out))
  assert sorted(os.listdir(out)) == sorted(
      [tables.MANIFEST, tables.SPEC, tables.COUNTS, tables.WORD_USERS,
       "bags-notes.jsonl", "notes.txt"])


def _staging_left(tmp_path) -> list[str]:
  return [n for n in os.listdir(tmp_path) if ".ingesting-" in n]


def test_a_full_disk_names_the_folder_and_leaves_the_earlier_one(
    tmp_path, monkeypatch):
  # ENOSPC inside Beam ended the ingestion with a traceback.
  import errno  # pylint: disable=g-import-not-at-top
  from apache_beam.io import textio  # pylint: disable=g-import-not-at-top
  pattern, _ = _files(tmp_path, "csv", "", False)
  spec = loader.DataSpec(path=pattern, setting="multi")
  out = tmp_path / "out"
  ingest.ingest(spec, str(out))
  before = {p: open(p, "rb").read() for p in tables.output_files(str(out))}

  def full(self, file_handle, encoded):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

  sink = textio._TextSink  # pylint: disable=protected-access
  monkeypatch.setattr(sink, "write_encoded_record", full)
  with pytest.raises(OSError) as caught:
    ingest.ingest(spec, str(out))
  monkeypatch.undo()
  assert caught.value.errno == errno.ENOSPC
  assert caught.value.filename == str(out)
  assert caught.value.strerror.startswith(
      "No space left on device writing the population (")
  assert " free there); the earlier files are left as they were" in (
      caught.value.strerror)
  assert {p: open(p, "rb").read()
          for p in tables.output_files(str(out))} == before
  assert not _staging_left(tmp_path)


@pytest.mark.parametrize("users_sharded", [False, True])
def test_an_out_of_memory_shard_is_named_with_its_size(tmp_path, monkeypatch,
                                                       users_sharded):
  # A 916 MiB allocation in a shard ended the ingestion with a traceback.
  pattern, _ = _files(tmp_path, "csv", "", users_sharded)
  spec = loader.DataSpec(path=pattern, setting="single")
  read = shards._read  # pylint: disable=protected-access

  def big(spec, shard):
    if "part-1.csv" in str(shard):
      raise MemoryError
    return read(spec, shard)

  monkeypatch.setattr(shards, "_read", big)
  with pytest.raises(MemoryError) as caught:
    ingest.ingest(spec, str(tmp_path / "out"), users_sharded=users_sharded)
  shard = tmp_path / "part-1.csv"
  remedy = ("split the input into smaller files (users_sharded reads each "
            "file whole)" if users_sharded else "give split_bytes (64 KiB "
            "or more) to read plain text files in smaller pieces, or split "
            "the input into smaller files")
  assert str(caught.value) == (
      f"out of memory reading the shard {shard} "
      f"({os.path.getsize(shard):,} bytes): {remedy}")
  assert not _staging_left(tmp_path)
  assert not os.path.exists(tmp_path / "out")


def test_sigterm_removes_the_staging_directory(tmp_path):
  # SIGTERM (the default action) left .out.ingesting-* behind.
  import signal  # pylint: disable=g-import-not-at-top
  pattern, _ = _files(tmp_path, "csv", "", False)
  reading = tmp_path / "reading"
  code = held_ingestion.slow_shard_reads(str(reading)) + (
      "from triehh.beam import ingest\n"
      "from triehh.data import loader\n"
      f"spec = loader.DataSpec(path={pattern!r}, setting='multi')\n"
      f"ingest.ingest(spec, {str(tmp_path / 'out')!r})\n")
  with held_ingestion.reading_a_shard(code, str(reading)) as proc:
    assert _staging_left(tmp_path)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
  assert proc.returncode == 128 + signal.SIGTERM
  assert not _staging_left(tmp_path)
  assert not os.path.exists(tmp_path / "out")


def test_a_second_ingestion_into_a_held_folder_is_refused(tmp_path):
  # Two ingestions into one folder were not locked against each other.
  from triehh.core import files  # pylint: disable=g-import-not-at-top
  pattern, _ = _files(tmp_path, "csv", "", False)
  spec = loader.DataSpec(path=pattern, setting="multi")
  out = tmp_path / "out"
  ingest.ingest(spec, str(out))
  before = {p: open(p, "rb").read() for p in tables.output_files(str(out))}
  (tmp_path / "link").symlink_to(out)
  held = files.lock(ingest.lock_path(str(out)))  # as a running ingestion
  assert held is not None
  try:
    for name in (out, tmp_path / "link"):  # one folder, two names
      with pytest.raises(BlockingIOError) as said:
        ingest.ingest(dataclasses.replace(spec, setting="single"), str(name))
      assert said.value.filename == str(name)
      assert said.value.strerror.startswith(
          "another ingestion is writing this folder")
  finally:
    os.close(held)
  assert {p: open(p, "rb").read()
          for p in tables.output_files(str(out))} == before
  assert not _staging_left(tmp_path)
  # Released, the lock file stays beside the folder, not in it, and a
  # rerun takes it again.
  lock = ingest.lock_path(str(out))
  assert os.path.dirname(lock) == str(tmp_path) and os.path.isfile(lock)
  ingest.ingest(dataclasses.replace(spec, setting="single"), str(out))
  assert sorted(os.listdir(out)) == sorted(
      [tables.MANIFEST, tables.SPEC, tables.COUNTS, tables.WORD_USERS])
  assert sorted(tables.output_files(str(out))) == sorted(
      str(out / n) for n in os.listdir(out))
  assert tables.read_population(str(out)).population.num_users > 0
