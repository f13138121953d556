"""triehh-ingest: a population built on Beam, said in a few lines."""

from __future__ import annotations

import pytest

pytest.importorskip("apache_beam", reason="apache-beam is not installed")

from experiments import ingest  # pylint: disable=g-import-not-at-top
from tests.beam import held_ingestion  # pylint: disable=g-import-not-at-top
from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
from triehh.beam import tables  # pylint: disable=g-import-not-at-top


def test_ingest_writes_the_population_and_says_its_report(tmp_path):
  (tmp_path / "in-0.csv").write_text("user,text\nu1,hello world hello\n"
                                     "u2,apple pie\n")
  (tmp_path / "in-1.csv").write_text("user,text\nu3,hello there\nu1,x,y\n")
  out = tmp_path / "out"
  code, stdout, err = drivers.run_in_process(
      ingest, f"--input={tmp_path / 'in-*.csv'}", f"--output_dir={out}")
  assert code in (0, None), err
  assert "2 file(s) read on DirectRunner" in stdout
  assert "4 rows read, 3 used, 1 skipped: 1 wrong column count" in stdout
  assert "population (single): 3 users, 2 distinct words" in stdout
  pop = tables.read_population(str(out)).population
  assert pop.ground_truth() == {"hello": 2, "apple": 1}


def test_the_population_said_is_read_back_under_the_lock(tmp_path,
                                                        monkeypatch):
  # The driver read the folder again after the ingestion had released its
  # lock: a second ingestion could rewrite it in between, and the lines
  # said another population than the one written.
  import fcntl  # pylint: disable=g-import-not-at-top
  import os  # pylint: disable=g-import-not-at-top
  given = _two_shards(tmp_path)
  out = tmp_path / "out"
  read, reads = tables.read_population, []

  def probed(path):
    # A second writer tries the lock (.out.ingest.lock beside the folder).
    with open(tmp_path / ".out.ingest.lock", "a") as probe:
      try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held = False
      except BlockingIOError:
        held = True
    reads.append((os.path.basename(path), held))
    return read(path)

  monkeypatch.setattr(tables, "read_population", probed)
  code, stdout, err = drivers.run_in_process(ingest, given,
                                             f"--output_dir={out}")
  assert code in (0, None), err
  assert reads and all(held for _, held in reads), reads
  assert "population (single): 2 users, 1 distinct words" in stdout


def test_missing_input_is_one_error_line(tmp_path):
  code, _, err = drivers.run_in_process(
      ingest, f"--input={tmp_path / 'none-*.csv'}",
      f"--output_dir={tmp_path / 'out'}")
  assert code == 1
  assert err.strip().splitlines() == [
      f"error: no data file matches {tmp_path / 'none-*.csv'}"]


def test_input_is_required(tmp_path):
  code, _, err = drivers.run_in_process(
      ingest, f"--output_dir={tmp_path / 'out'}")
  assert code == 1
  assert "error: --input is required" in err


@pytest.mark.parametrize("flag, said", [
    ("--beam_arg=notaflag", "error: --beam_arg=notaflag: not an Apache Beam "
     "pipeline option (give --beam_arg=--name=value)"),
    ("--beam_arg=--bogus_opt=1", "error: --beam_arg=--bogus_opt=1: not an "
     "Apache Beam pipeline option (give --beam_arg=--name=value)"),
    ("--data_encoding=bogus", "error: --data_encoding=bogus: not a text "
     "encoding Python knows (e.g. utf-8, latin-1)")])
def test_options_beam_would_drop_or_fail_on_are_named(tmp_path, flag, said):
  # Beam dropped unknown options with a log warning and ran (exit 0).
  (tmp_path / "in.csv").write_text("user,text\nu1,hello\n")
  code, _, err = drivers.run_in_process(
      ingest, f"--input={tmp_path / 'in.csv'}",
      f"--output_dir={tmp_path / 'out'}", flag)
  assert code == 1
  assert err.strip().splitlines() == [said]


def test_a_failing_shard_is_one_error_line(tmp_path):
  # Beam's worker log printed the error and its traceback before it.
  (tmp_path / "in-0.csv").write_text("user,text\nu1,hello\n")
  (tmp_path / "in-1.csv").write_text("user,text\n")
  code, _, err = drivers.run_in_process(
      ingest, f"--input={tmp_path / 'in-*.csv'}",
      f"--output_dir={tmp_path / 'out'}")
  assert code == 1
  assert len(err.strip().splitlines()) == 1, err
  assert err.startswith(f"error: {tmp_path / 'in-1.csv'} holds no data row")


@pytest.mark.parametrize("flag, said", [
    # It read for 31 s, then: "good.csv (bytes 0 to 1) holds no data row".
    ("--split_bytes=1", "error: --split_bytes=1: give 0 (each file whole) "
     "or at least 65,536 bytes (64 KiB)"),
    # Beam's runner raised IndexError.
    ("--beam_arg=--direct_num_workers=-3", "error: --beam_arg="
     "--direct_num_workers=-3: must be >= 0 (0: one worker per core)"),
    # Beam's argument parser printed its whole usage and exited 2.
    ("--beam_arg=--direct_num_workers=abc", "error: --beam_arg="
     "--direct_num_workers=abc: argument --direct_num_workers: invalid int "
     "value: 'abc'"),
    # A Beam worker's error, after the pipeline had started.
    ("--data_encoding=utf-16", "error: --data_encoding=utf-16: the readers "
     "read utf-8 or latin-1 only")])
def test_flags_refused_before_the_pipeline_name_themselves(tmp_path, flag,
                                                           said):
  (tmp_path / "good.csv").write_text("user,text\nu1,hello\n")
  code, _, err = drivers.run_in_process(
      ingest, f"--input={tmp_path / 'good.csv'}",
      f"--output_dir={tmp_path / 'out'}", flag)
  assert code == 1
  assert err.strip().splitlines() == [said]
  assert not (tmp_path / "out").exists()


def _two_shards(tmp_path):
  (tmp_path / "in-0.csv").write_text("user,text\nu1,hello world hello\n")
  (tmp_path / "in-1.csv").write_text("user,text\nu3,hello there\n")
  return f"--input={tmp_path / 'in-*.csv'}"


def test_a_full_disk_is_one_line_and_the_earlier_population_stays(
    tmp_path, monkeypatch):
  # ENOSPC in Beam's writer ended triehh-ingest with a traceback.
  import errno  # pylint: disable=g-import-not-at-top
  from apache_beam.io import textio  # pylint: disable=g-import-not-at-top
  given = _two_shards(tmp_path)
  out = tmp_path / "out"
  code, _, err = drivers.run_in_process(ingest, given, f"--output_dir={out}")
  assert code in (0, None), err
  before = {p: open(p, "rb").read() for p in tables.output_files(str(out))}

  def full(self, file_handle, encoded):
    raise OSError(errno.ENOSPC, "No space left on device")

  sink = textio._TextSink  # pylint: disable=protected-access
  monkeypatch.setattr(sink, "write_encoded_record", full)
  code, _, err = drivers.run_in_process(ingest, given, f"--output_dir={out}")
  assert code == 1
  lines = err.strip().splitlines()
  assert len(lines) == 1, err
  assert lines[0].startswith(f"error: {out}: No space left on device "
                             "writing the population (")
  assert lines[0].endswith(" free there); the earlier files are left as "
                           "they were")
  assert {p: open(p, "rb").read()
          for p in tables.output_files(str(out))} == before


def test_an_out_of_memory_shard_is_one_line_naming_split_bytes(
    tmp_path, monkeypatch):
  # A 916 MiB allocation reading a shard ended it with a traceback.
  from triehh.beam import shards  # pylint: disable=g-import-not-at-top
  given = _two_shards(tmp_path)

  def big(spec, shard):
    raise MemoryError

  monkeypatch.setattr(shards, "_read", big)
  code, _, err = drivers.run_in_process(
      ingest, given, f"--output_dir={tmp_path / 'out'}")
  assert code == 1
  lines = err.strip().splitlines()
  assert len(lines) == 1, err
  assert lines[0].startswith("error: out of memory reading the shard "
                             f"{tmp_path}/in-")
  assert lines[0].endswith(" bytes): give --split_bytes (64 KiB or more) to "
                           "read plain text files in smaller pieces, or "
                           "split the input into smaller files")
  assert not (tmp_path / "out").exists()


def test_sigterm_says_one_line_and_leaves_no_staging(tmp_path):
  import os  # pylint: disable=g-import-not-at-top
  import signal  # pylint: disable=g-import-not-at-top
  given = _two_shards(tmp_path)
  out, reading = tmp_path / "out", tmp_path / "reading"
  code = held_ingestion.slow_shard_reads(str(reading)) + (
      "from experiments import ingest\n"
      f"sys.argv = ['triehh-ingest', {given!r}, '--output_dir={out}']\n"
      "ingest.run()\n")
  with held_ingestion.reading_a_shard(code, str(reading)) as proc:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
  assert proc.returncode == 128 + signal.SIGTERM
  assert err.strip().splitlines() == [
      f"terminated: nothing written to {out}; its earlier files are as "
      "they were"]
  assert not [n for n in os.listdir(tmp_path) if ".ingesting-" in n]
  assert not out.exists()


def test_a_second_ingestion_into_a_busy_folder_is_one_line(tmp_path):
  # Two triehh-ingest into one folder at once were not locked against
  # each other; the second now stops, and the first ends as it would have.
  import os  # pylint: disable=g-import-not-at-top
  given = _two_shards(tmp_path)
  out, reading, go = tmp_path / "out", tmp_path / "reading", tmp_path / "go"
  code = held_ingestion.slow_shard_reads(str(reading), release=str(go)) + (
      "from experiments import ingest\n"
      f"sys.argv = ['triehh-ingest', {given!r}, '--output_dir={out}']\n"
      "ingest.run()\n")
  with held_ingestion.reading_a_shard(code, str(reading)) as first:
    (tmp_path / "in-2.csv").write_text("user,text\nu9,other\n")
    code2, _, err = drivers.run_in_process(ingest, given,
                                           f"--output_dir={out}")
    go.touch()
    stdout, first_err = first.communicate(timeout=120)
  assert code2 == 1
  assert err.strip().splitlines() == [
      f"error: {out}: another ingestion is writing this folder: wait for it "
      "to end or write to another folder (nothing was written)"]
  assert first.returncode == 0, first_err[-2000:]
  assert "population (single): 2 users, 1 distinct words" in stdout
  pop = tables.read_population(str(out)).population
  assert pop.ground_truth() == {"hello": 2}
  assert not [n for n in os.listdir(tmp_path) if ".ingesting-" in n]
