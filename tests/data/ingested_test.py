"""triehh.data.ingested and the data set ``ingested``: the folder an
ingestion writes, read back with no Apache Beam."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from triehh.data import datasets
from triehh.data import ingested
from triehh.data import loader
from triehh.data import report as report_lib

WORDS = {"hello": 3, "world": 2, "peace": 1}


def write_folder(folder, *, setting="single", max_length=10,
                 words=WORDS) -> str:
  """A single-word ingestion's folder, as triehh.beam.ingest writes it."""
  os.makedirs(folder, exist_ok=True)
  spec = loader.DataSpec(path=os.path.join(folder, "in-*.csv"),
                         setting=setting, max_length=max_length)
  with open(os.path.join(folder, ingested.SPEC), "w", encoding="utf-8") as f:
    json.dump(dataclasses.asdict(spec), f)
  n = sum(words.values())
  with open(os.path.join(folder, ingested.COUNTS), "w",
            encoding="utf-8") as f:
    f.write(f"rows_read\t{n}\nnum_users\t{n}\nusers_without_words\t0\n")
  with open(os.path.join(folder, ingested.WORD_USERS), "w",
            encoding="utf-8") as f:
    f.writelines(f"{word}\t{users}\n" for word, users in words.items())
  return str(folder)


def _options(path, setting="single", max_length=10):
  return datasets.options("ingested", setting,
                          {"data_path": path, "max_length": max_length})


def test_the_folder_is_read_back_as_written(tmp_path):
  # (triehh.data imports nothing of Beam: tests/imports_test.py.)
  folder = write_folder(tmp_path / "pop")
  loaded = ingested.read_population(folder)
  assert loaded.population.ground_truth() == WORDS
  assert loaded.report.rows_read == 6 and loaded.setting == "single"


def test_the_ingested_data_set_is_the_folder_as_written(tmp_path):
  folder = write_folder(tmp_path / "pop")
  options = _options(folder)
  assert options == {"dataset": "ingested", "setting": "single",
                     "max_length": 10, "data_path": os.path.abspath(folder)}
  data = datasets.load_data(options, str(tmp_path / "cache"))
  assert data.name == "ingested:in-*.csv" and data.setting == "single"
  assert data.truth == WORDS and data.population.num_users == 6
  assert not os.path.exists(tmp_path / "cache")  # read, never cached


@pytest.mark.parametrize("setting, max_length, said", [
    ("multi", 10, "holds a population ingested with setting=single, not "
     "setting=multi: read it with setting=single"),
    ("single", 4, "holds a population ingested with max_length=10, not "
     "max_length=4: read it with max_length=10"),
])
def test_another_setting_or_length_is_refused_naming_the_folder(
    tmp_path, setting, max_length, said):
  folder = write_folder(tmp_path / "pop")
  with pytest.raises(report_lib.DataError) as caught:
    datasets.load_data(_options(folder, setting, max_length))
  assert str(caught.value) == f"{os.path.abspath(folder)} {said}"


def _damage(folder: str, how: str) -> None:
  if how == "no spec":
    os.remove(os.path.join(folder, ingested.SPEC))
  elif how == "bad spec":
    with open(os.path.join(folder, ingested.SPEC), "w") as f:
      f.write("{not json")
  elif how == "odd spec":
    with open(os.path.join(folder, ingested.SPEC), "w") as f:
      f.write('{"path": "x", "bogus": 1}')
  elif how == "no counts":
    os.remove(os.path.join(folder, ingested.COUNTS))
  elif how == "bad table":
    with open(os.path.join(folder, ingested.WORD_USERS), "w") as f:
      f.write("hello\tmany\n")


@pytest.mark.parametrize("how, said", [
    ("no spec", "{folder} holds no spec.json: not the output of an "
     "ingestion"),
    ("bad spec", "{folder} is not a folder an ingestion wrote, or it is "
     "damaged: {folder}/spec.json: Expecting property name"),
    ("odd spec", "{folder} is not a folder an ingestion wrote, or it is "
     "damaged: {folder}/spec.json: "),
    ("no counts", "{folder} is not a folder an ingestion wrote, or it is "
     "damaged: {folder}/counts.tsv: No such file or directory"),
    ("bad table", "{folder} is not a folder an ingestion wrote, or it is "
     "damaged: {folder}/word_users.tsv line 1: expected 'name<TAB>count'"),
])
def test_a_damaged_folder_is_one_line_naming_it(tmp_path, how, said):
  folder = os.path.abspath(write_folder(tmp_path / "pop"))
  _damage(folder, how)
  with pytest.raises(report_lib.DataError) as caught:
    datasets.load_data(_options(folder))
  message = str(caught.value)
  assert message.startswith(said.format(folder=folder)), message
  assert "\n" not in message


def _bags(path, *users) -> None:
  with open(path, "w", encoding="utf-8") as f:
    for k, words in enumerate(users):
      f.write(json.dumps({"first": [0, k], "words": words}) + "\n")


def test_only_the_ingestions_own_bags_are_read(tmp_path):
  # A user's bags-notes.jsonl beside the tables was read as users' bags.
  folder = tmp_path / "pop"
  write_folder(folder, setting="multi")
  os.remove(folder / ingested.WORD_USERS)
  _bags(folder / "bags-00000-of-00001.jsonl", {"hello": 2}, {"world": 1})
  (folder / "bags-notes.jsonl").write_text("the user's notes\n")
  # A folder without files.json: Beam's shard names only.
  assert [os.path.basename(p) for p in ingested.output_files(str(folder))
          ] == ["bags-00000-of-00001.jsonl", ingested.COUNTS, ingested.SPEC]
  assert ingested.read_bags(str(folder)) == [{"hello": 2}, {"world": 1}]
  # With files.json: the files it lists.
  _bags(folder / "bags-x.jsonl", {"peace": 1})
  (folder / ingested.MANIFEST).write_text(json.dumps({"files": [
      ingested.SPEC, ingested.COUNTS, "bags-x.jsonl"]}))
  assert [os.path.basename(p) for p in ingested.output_files(str(folder))
          ] == [ingested.MANIFEST, "bags-x.jsonl", ingested.COUNTS,
                ingested.SPEC]
  assert ingested.read_bags(str(folder)) == [{"peace": 1}]


@pytest.mark.parametrize("listing", ['{"files": ["../x"]}', '["spec.json"]',
                                     "{"])
def test_a_damaged_file_list_is_named(tmp_path, listing):
  folder = write_folder(tmp_path / "pop")
  path = os.path.join(folder, ingested.MANIFEST)
  with open(path, "w", encoding="utf-8") as f:
    f.write(listing)
  with pytest.raises(report_lib.DataError,
                     match=rf"^{path}: not the list of an ingestion's files"):
    ingested.output_files(folder)
