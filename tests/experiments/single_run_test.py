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


# ---- randomness: fresh entropy by default, --seed for a simulation ----------


def _without_seconds(record):
  """``record`` without its wall times (at any depth)."""
  if not isinstance(record, dict):
    return record
  return {k: _without_seconds(v) for k, v in record.items()
          if "seconds" not in k}


@pytest.fixture
def known_entropy(monkeypatch):
  """The entropy every fresh ``numpy.random.SeedSequence()`` draws, fixed
  to a number a test can look for (numpy reads it from the module's
  ``randbits``), so that a leak of it can be seen."""
  import numpy.random.bit_generator as bit_generator  # pylint: disable=g-import-not-at-top
  entropy = 0x9F3B_51C7_2E84_D6A0_17C5_8B3E_44F2_9D61
  monkeypatch.setattr(bit_generator, "randbits", lambda bits: entropy)
  return entropy


def _leaks(text: str, entropy: int) -> bool:
  """Whether ``text`` holds ``entropy`` in decimal or hex, or any number
  the entropy seeds (the first state word of numpy's default generator)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  state = np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0]
  return any(str(v) in text.lower() for v in (
      entropy, f"{entropy:x}", f"{entropy:#x}", int(state)))


@pytest.mark.parametrize("module, more, files", [
    (run_triehh, ("--words_out=words.csv", "--output_dir=."),
     ["results.jsonl", "words.csv"]),
    # Another mechanism's runs are not recorded: its words file alone.
    (run_triehh, ("--mechanism=noisy_trie", "--words_out=words.json"),
     ["words.json"]),
    (run_sfp, ("--top_t=5", "--words_out=words.json", "--output_dir=."),
     ["results.jsonl", "words.json"]),
])
def test_without_a_seed_nothing_written_or_printed_holds_the_entropy(
    module, more, files, tmp_path, monkeypatch, known_entropy):
  monkeypatch.chdir(tmp_path)
  code, out, err = drivers.run_in_process(module, *SMALL, *more)
  assert code == 0, err
  assert out.count("randomness: each run draws fresh entropy, recorded "
                   "nowhere (--seed=N makes a reproducible simulation") == 1
  assert "(fresh entropy" in out and "(seed " not in out
  assert sorted(os.listdir(tmp_path)) == files
  written = {name: (tmp_path / name).read_text(encoding="utf-8")
             for name in files}
  for name, text in {**written, "stdout": out, "stderr": err}.items():
    assert not _leaks(text, known_entropy), name
  words = [text for name, text in written.items() if name.startswith("words")]
  assert "fresh entropy (not recorded)" in words[0]
  for record in (_records(tmp_path) if "results.jsonl" in written else ()):
    assert (record["seed"], record["randomness"]) == (None, "fresh")


def test_the_leak_check_finds_a_seed_that_is_written(known_entropy):
  # _leaks can fail: the entropy, or the state it seeds, written is found.
  import numpy as np  # pylint: disable=g-import-not-at-top
  seq = np.random.default_rng().bit_generator.seed_seq
  assert _leaks(f"seed={seq.entropy}", known_entropy)
  assert _leaks(hex(known_entropy), known_entropy)
  assert not _leaks("seed=12345", known_entropy)


def test_runs_without_a_seed_differ(tmp_path):
  # Two unseeded runs of the same flags: Poisson sampling of 20,000 users
  # gives each discovered word thousands of votes, equal in both runs with
  # a chance far below 1e-6 per word.
  for name in ("a", "b"):
    code, _, err = drivers.run_in_process(
        run_triehh, *SMALL, f"--output_dir={tmp_path / name}")
    assert code == 0, err
  (a,), (b,) = _records(tmp_path / "a"), _records(tmp_path / "b")
  assert a["config_key"] == b["config_key"] and a["discovered"]
  assert (a["discovered"], a["reported_counts"]) != (
      b["discovered"], b["reported_counts"])


@pytest.mark.parametrize("module, more", [
    (run_triehh, ()), (run_sfp, ("--top_t=5",)),
    (run_partition_selection, ())])
def test_a_seed_makes_a_reproducible_simulation(module, more, tmp_path):
  outs = []
  for name in ("a", "b"):
    code, out, err = drivers.run_in_process(
        module, *SMALL, *more, "--num_runs=2", "--seed=7",
        f"--output_dir={tmp_path / name}")
    assert code == 0, err
    assert "fresh entropy" not in out and "run 1 (seed 8" in out
    outs.append([_without_seconds(r) for r in _records(tmp_path / name)])
  assert [(r["seed"], r["randomness"]) for r in outs[0]] == [
      (7, "seed"), (8, "seed")]
  if module is not run_partition_selection:  # python-dp's noise is unseeded
    assert outs[0] == outs[1]
