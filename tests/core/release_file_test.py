"""triehh.core.release_file: a release's words and guarantee, whole, as .csv
or .json."""

from __future__ import annotations

import csv
import dataclasses
import enum
import json
import math
import os

import numpy as np
import pytest

from triehh.core import release_file


class _Relation(enum.Enum):
  ADD = "ADD_OR_REMOVE_ONE"
  SPECIAL = "REPLACE_SPECIAL"


@dataclasses.dataclass(frozen=True)
class _Guarantee:
  epsilon: float
  delta: float
  adjacencies: tuple
  two_sided: bool
  accounting: str
  n_source: str
  covers: str
  public: str = "the alphabet"
  trust: str = "the server"


@dataclasses.dataclass(frozen=True)
class _Params:
  theta: int
  rate: float
  n: np.int64
  sampling: str


@dataclasses.dataclass(frozen=True)
class _Release:
  mechanism: str
  words: tuple
  guarantee: object
  params: object
  unprotected: object = None


def _release(epsilon=1.5, words=("the", "a,b", "\"q\"", "#x")):
  return _Release(
      mechanism="triehh", words=words,
      guarantee=_Guarantee(epsilon, 1e-9, (_Relation.ADD, _Relation.SPECIAL),
                           True, "Poisson accountant (two-sided)", "declared",
                           "the set of words,\n  both directions"),
      params=_Params(theta=12, rate=0.25, n=np.int64(5000),
                     sampling="poisson"),
      unprotected={"votes": [9, 8, 7]})


def test_csv_states_the_guarantee_then_ranks_the_words(tmp_path):
  path = tmp_path / "words.csv"
  assert release_file.write(str(path), _release()) == str(path)
  lines = path.read_text(encoding="utf-8").splitlines()
  notes = [line for line in lines if line.startswith("#")]
  assert notes[:9] == [
      "# mechanism: triehh", "# epsilon: 1.5", "# delta: 1e-09",
      "# adjacency: ADD_OR_REMOVE_ONE, REPLACE_SPECIAL",
      "# two_sided: true", "# accounting: Poisson accountant (two-sided)",
      "# covers: the set of words, both directions",
      "# public: the alphabet", "# trust: the server"]
  rows = list(csv.reader(line for line in lines if not line.startswith("#")))
  # Words with a comma, a quote or a leading '#' survive as CSV fields.
  assert rows == [["rank", "word"], ["1", "the"], ["2", "a,b"],
                  ["3", "\"q\""], ["4", "#x"]]
  assert "votes" not in path.read_text()  # what the guarantee does not cover


def test_json_holds_words_guarantee_and_the_mechanism(tmp_path):
  path = tmp_path / "words.json"
  release_file.write(str(path), _release())
  got = json.loads(path.read_text(encoding="utf-8"))
  assert got == {
      "mechanism": {"name": "triehh",
                    "parameters": {"theta": 12, "rate": 0.25, "n": 5000,
                                   "sampling": "poisson"}},
      "guarantee": {"epsilon": 1.5, "delta": 1e-9,
                    "adjacency": ["ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL"],
                    "two_sided": True,
                    "accounting": "Poisson accountant (two-sided)",
                    "covers": "the set of words,\n  both directions",
                    "public": "the alphabet", "trust": "the server",
                    "n_source": "declared"},
      "words": ["the", "a,b", "\"q\"", "#x"]}
  assert list(got["guarantee"])[:8] == ["epsilon", "delta", "adjacency",
                                        "two_sided", "accounting", "covers",
                                        "public", "trust"]


def test_no_guarantee_is_written_as_the_text_inf(tmp_path):
  path = tmp_path / "words.JSON"  # the extension is read case-blind
  release_file.write(str(path), _release(epsilon=math.inf, words=()))
  got = json.loads(path.read_text())
  assert got["guarantee"]["epsilon"] == "inf" and got["words"] == []
  csv_path = tmp_path / "words.csv"
  release_file.write(str(csv_path), _release(epsilon=math.inf, words=()))
  text = csv_path.read_text()
  assert "# epsilon: inf\n" in text and text.endswith("rank,word\n")


@pytest.mark.parametrize("name", ["words.txt", "words", "words.csv.gz",
                                  "words.jsonl"])
def test_other_extensions_are_refused_before_writing(tmp_path, name):
  path = tmp_path / name
  with pytest.raises(ValueError, match="written as .csv or .json"):
    release_file.write(str(path), _release())
  assert not path.exists() and os.listdir(tmp_path) == []


def test_a_release_without_a_guarantee_object_is_refused(tmp_path):
  release = dataclasses.replace(_release(), guarantee=None)
  with pytest.raises(ValueError, match="carries no guarantee"):
    release_file.write(str(tmp_path / "w.csv"), release)


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path,
                                                       monkeypatch):
  path = tmp_path / "words.json"
  path.write_text("previous\n")

  def fail(src, dst):
    raise OSError(28, "No space left on device", dst)

  monkeypatch.setattr(os, "replace", fail)
  with pytest.raises(OSError, match="No space left"):
    release_file.write(str(path), _release())
  assert path.read_text() == "previous\n"
  assert os.listdir(tmp_path) == ["words.json"]  # no temporary file left


def test_a_directory_is_not_replaced(tmp_path):
  (tmp_path / "words.csv").mkdir()
  with pytest.raises(ValueError, match="is a directory"):
    release_file.write(str(tmp_path / "words.csv"), _release())
