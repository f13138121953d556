"""experiments.single_run: --words_out, the one run's released words and
their guarantee in a file (triehh-run, triehh-sfp,
triehh-partition-selection)."""

from __future__ import annotations

import csv
import json
import os

import pytest

from experiments import run_partition_selection
from experiments import run_sfp
from experiments import run_triehh
from tests.experiments import drivers

SMALL = ("--num_users=20000", "--cache_dir=", "--show=0")


def _records(path) -> list[dict]:
  return [json.loads(line) for line in
          (path / "results.jsonl").read_text().splitlines()]


def _csv(path):
  """The ``#`` notes (name -> text) and the rows of a words file."""
  lines = path.read_text(encoding="utf-8").splitlines()
  notes = dict(line[2:].split(": ", 1) for line in lines
               if line.startswith("# "))
  rows = list(csv.reader(line for line in lines if not line.startswith("#")))
  return notes, rows


def test_triehh_run_writes_its_words_as_csv(tmp_path):
  path = tmp_path / "words.csv"
  code, out, err = drivers.run_in_process(
      run_triehh, *SMALL, f"--words_out={path}", f"--output_dir={tmp_path}")
  assert code == 0, err
  assert f"released words and their guarantee written to {path}" in out
  (record,) = _records(tmp_path)
  notes, rows = _csv(path)
  assert rows[0] == ["rank", "word"]
  # Ranked as TrieHH releases them: by the round that found them (shorter
  # first), then alphabetically; never by the (unprotected) vote counts.
  words = sorted(record["discovered"], key=lambda word: (len(word), word))
  assert rows[1:] == [[str(rank), word] for rank, word in
                      enumerate(words, 1)]
  assert len(rows) > 10
  assert notes["mechanism"] == "triehh"
  assert float(notes["epsilon"]) == pytest.approx(record["epsilon"])
  assert float(notes["delta"]) == pytest.approx(record["delta"])
  assert notes["adjacency"] == record["adjacency"] == "REPLACE_SPECIAL"
  assert notes["accounting"] == record["accounting"]
  assert notes["covers"] == " ".join(record["covers"].split())
  assert notes["two_sided"] == "true"
  # Only the temporary file's rename made it: nothing else is left.
  assert sorted(os.listdir(tmp_path)) == ["results.jsonl", "words.csv"]


def test_triehh_run_writes_words_guarantee_and_mechanism_as_json(tmp_path):
  path = tmp_path / "words.json"
  code, _, err = drivers.run_in_process(
      run_triehh, *SMALL, "--population_size=30000", "--seed=3",
      f"--words_out={path}", f"--output_dir={tmp_path}")
  assert code == 0, err
  (record,) = _records(tmp_path)
  got = json.loads(path.read_text(encoding="utf-8"))
  assert set(got) == {"mechanism", "guarantee", "words"}
  assert got["words"] == sorted(record["discovered"],
                                key=lambda word: (len(word), word))
  guarantee = got["guarantee"]
  assert guarantee["epsilon"] == pytest.approx(record["epsilon"])
  assert guarantee["delta"] == pytest.approx(30000**-2)
  assert guarantee["adjacency"] == ["ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL"]
  assert guarantee["n_source"] == "declared"
  assert guarantee["accounting"] == record["accounting"]
  assert guarantee["covers"] == record["covers"]
  mechanism = got["mechanism"]
  assert mechanism["name"] == "triehh"
  params = mechanism["parameters"]
  assert (params["sampling"], params["population_size"], params["n"]) == (
      "poisson", 30000, 20000)
  assert isinstance(params["theta"], int) and params["theta"] >= 1


def test_partition_selection_and_sfp_write_their_releases(tmp_path):
  path = tmp_path / "ps.json"
  code, _, err = drivers.run_in_process(
      run_partition_selection, "--num_users=2000", "--cache_dir=",
      "--show=0", f"--words_out={path}")
  assert code == 0, err
  got = json.loads(path.read_text())
  assert got["mechanism"]["name"] == "partition_selection"
  assert got["mechanism"]["parameters"]["strategy"] == "truncated_geometric"
  assert got["words"] == sorted(got["words"]) and "the" in got["words"]
  assert got["guarantee"]["epsilon"] == 4.0
  assert got["guarantee"]["adjacency"] == ["REPLACE_SPECIAL"]
  path = tmp_path / "sfp.csv"
  code, _, err = drivers.run_in_process(
      run_sfp, *SMALL, "--top_t=5", f"--words_out={path}")
  assert code == 0, err
  notes, rows = _csv(path)
  assert notes["mechanism"] == "sfp" and rows[0] == ["rank", "word"]
  assert float(notes["epsilon"]) == pytest.approx(4.0)


@pytest.mark.parametrize("name, more, said", [
    ("words.txt", (), "give a .csv or .json file (the extension chooses the "
     "format), not .txt"),
    ("words", (), "give a .csv or .json file (the extension chooses the "
     "format)"),
    ("words.csv", ("--num_runs=2",), "writes one run's release: give "
     "--num_runs=1, not 2"),
])
def test_a_words_file_that_cannot_be_written_is_refused_before_any_work(
    tmp_path, name, more, said):
  path = tmp_path / name
  where = "" if more else f"={path}"
  for driver in (run_triehh, run_sfp, run_partition_selection):
    code, out, err = drivers.run_in_process(driver, f"--words_out={path}",
                                            *more)
    assert (code, out) == (1, ""), (driver, err)
    assert err.startswith(f"error: --words_out{where}: {said}"
                          if where else f"error: --words_out {said}"), err
    assert len(err.splitlines()) == 1
  assert os.listdir(tmp_path) == []


def test_a_words_file_in_a_missing_folder_is_refused_before_any_work(
    tmp_path):
  path = tmp_path / "absent" / "words.csv"
  code, out, err = drivers.run_in_process(run_triehh,
                                          f"--words_out={path}")
  assert (code, out) == (1, "")
  assert err == (f"error: --words_out={path}: {tmp_path / 'absent'}: No such "
                 "file or directory\n")
