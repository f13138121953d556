"""Tests of experiments.common.load_dataset with the data-set flags."""

import json

import pytest
from absl.testing import flagsaver

from experiments import common
from triehh import data as data_lib

FLAGS = common.FLAGS


@pytest.fixture(autouse=True)
def parsed_flags():
  if not FLAGS.is_parsed():
    FLAGS.mark_as_parsed()


def write_jsonl(path, rows):
  path.write_text("".join(json.dumps({"who": u, "body": t}) + "\n"
                          for u, t in rows))
  return str(path)


ROWS = [("a", "dont panic"), ("b", "dont stop #ff"), ("a", "panic room"),
        ("c", "{broken")]


def test_file_dataset_in_each_setting(tmp_path, capsys):
  path = write_jsonl(tmp_path / "posts.jsonl", ROWS)
  path_bad = tmp_path / "bad.jsonl"
  path_bad.write_text(open(path).read() + "{oops\n")
  base = dict(dataset="file", data_path=str(path_bad), user_column="who",
              text_column="body", cache_dir=str(tmp_path / "cache"))
  with flagsaver.flagsaver(**base, setting="single"):
    single = common.load_dataset()
  assert (single.name, single.setting) == ("bad.jsonl", "single")
  # a: panic (twice), b: dont (first of a tie), c: "{broken".
  assert single.truth == {"panic": 1.0, "dont": 1.0, "{broken": 1.0}
  assert single.report.skipped == {data_lib.report.SKIP_BAD_JSON: 1}
  assert "1 malformed JSON line" in capsys.readouterr().out
  with flagsaver.flagsaver(**base, setting="multi"):
    multi = common.load_dataset()
  assert multi.truth["panic"] == pytest.approx(2 / 4)
  with flagsaver.flagsaver(**base, setting="oov", oov_num_users=1000,
                           data_seed=2):
    oov = common.load_dataset()
  # Only words outside the default English dictionary and made of OOV
  # characters remain ("{broken" has a "{").
  assert oov.population.num_users == 1000
  assert set(oov.truth) == {"#ff"}
  assert oov.info["seed"] == 2
  with flagsaver.flagsaver(**base, setting="single"):
    common.load_dataset()
  assert "cached population" in capsys.readouterr().out


def test_dataset_flag_errors(tmp_path):
  with flagsaver.flagsaver(dataset="sentiment140", data_path=None):
    with pytest.raises(ValueError, match="needs --data_path"):
      common.load_dataset()
  with flagsaver.flagsaver(dataset="default", setting="multi"):
    with pytest.raises(ValueError, match="needs a text data set"):
      common.load_dataset()
  with flagsaver.flagsaver(dataset="sentiment140", cache_dir="",
                           data_path=str(tmp_path / "missing.csv")):
    with pytest.raises(FileNotFoundError, match="missing.csv"):
      common.load_dataset()


def test_synthetic_dataset(tmp_path):
  table = tmp_path / "t.tsv"
  table.write_text("hello\t3\nworld\t1\n")
  with flagsaver.flagsaver(dataset="synthetic", data_path=str(table),
                           num_users=4000, data_seed=1):
    ds = common.load_dataset()
  assert ds.name == "synthetic:t.tsv:weights"
  assert ds.population.num_users == 4000
  assert ds.truth["hello"] / 4000 == pytest.approx(0.75, abs=0.04)
