"""Tests of experiments.flags: loading and checking the data-set flags."""

import json
import re

import pytest
from absl.testing import flagsaver

from experiments import flags as shared_flags
from triehh import data as data_lib
from triehh.data import paper_populations

FLAGS = shared_flags.FLAGS


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
    single = shared_flags.load_dataset()
  assert (single.name, single.setting) == ("bad.jsonl", "single")
  # a: panic (twice), b: dont (first of a tie), c: "{broken".
  assert single.truth == {"panic": 1.0, "dont": 1.0, "{broken": 1.0}
  assert single.report.skipped == {data_lib.report.SKIP_BAD_JSON: 1}
  assert "1 malformed JSON line" in capsys.readouterr().out
  with flagsaver.flagsaver(**base, setting="multi"):
    multi = shared_flags.load_dataset()
  assert multi.truth["panic"] == pytest.approx(2 / 4)
  with flagsaver.flagsaver(**base, setting="oov", oov_num_users=1000,
                           data_seed=2):
    oov = shared_flags.load_dataset()
  # Only words outside the default English dictionary and made of OOV
  # characters remain ("{broken" has a "{").
  assert oov.population.num_users == 1000
  assert set(oov.truth) == {"#ff"}
  assert oov.info["seed"] == 2
  with flagsaver.flagsaver(**base, setting="single"):
    shared_flags.load_dataset()
  assert "cached population" in capsys.readouterr().out


def test_dataset_flag_errors(tmp_path):
  with flagsaver.flagsaver(dataset="sentiment140", data_path=None):
    with pytest.raises(ValueError, match="needs --data_path"):
      shared_flags.load_dataset()
  with flagsaver.flagsaver(dataset="default", setting="multi"):
    with pytest.raises(ValueError, match="needs a text data set"):
      shared_flags.load_dataset()
  with flagsaver.flagsaver(dataset="sentiment140", cache_dir="",
                           data_path=str(tmp_path / "missing.csv")):
    with pytest.raises(ValueError, match=re.escape(
        "missing.csv: No such file or directory")):
      shared_flags.load_dataset()


def test_synthetic_dataset(tmp_path):
  table = tmp_path / "t.tsv"
  table.write_text("hello\t3\nworld\t1\n")
  with flagsaver.flagsaver(dataset="synthetic", data_path=str(table),
                           num_users=4000, data_seed=1):
    ds = shared_flags.load_dataset()
  assert ds.name == "synthetic:t.tsv:weights"
  assert ds.population.num_users == 4000
  assert ds.truth["hello"] / 4000 == pytest.approx(0.75, abs=0.04)


def test_data_options_follow_the_flags_given():
  with flagsaver.flagsaver(num_users=5000):
    assert shared_flags.data_options() == {
        "dataset": "default", "setting": "single", "max_length": 10,
        "num_users": 5000}
  # The paper population keeps its setting's n unless --num_users is given.
  with flagsaver.flagsaver(dataset="paper", setting="oov"):
    assert shared_flags.check_data_flags() == [("paper", "oov")]
    assert shared_flags.data_options() == paper_populations.data_options(
        "oov", max_length=10)
  with flagsaver.flagsaver(dataset="paper", setting="oov", num_users=9000):
    assert shared_flags.data_options()["num_users"] == 9000


def test_a_sweep_checks_its_lists_with_the_same_rules(tmp_path):
  users = tmp_path / "u.csv"
  users.write_text("user,text\nu1,hello\n")
  with flagsaver.flagsaver(data_path=str(users), num_users=5000):
    assert shared_flags.check_data_flags(
        ["default", "file"], ["single", "multi"], chosen=True) == [
            ("default", "single"), ("file", "single"), ("file", "multi")]
    with pytest.raises(ValueError, match="given without --datasets"):
      shared_flags.check_data_flags(["file"], ["single"], chosen=False)
  with flagsaver.flagsaver(oov_num_users=5):
    with pytest.raises(ValueError, match=re.escape(
        "--oov_num_users applies to --settings=oov only")):
      shared_flags.check_data_flags(["default"], ["single"], chosen=False)
