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


# ---- --dataset=ingested: the folder triehh-ingest writes ---------------------

EXAMPLE = "data/example_users.csv"


def _ingest(tmp_path, setting: str = "single") -> str:
  """The folder the ingestion (Apache Beam) writes for the example file."""
  pytest.importorskip("apache_beam", reason="apache-beam is not installed")
  import os  # pylint: disable=g-import-not-at-top
  from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
  from triehh.beam import ingest  # pylint: disable=g-import-not-at-top
  from triehh.data import loader  # pylint: disable=g-import-not-at-top
  out = str(tmp_path / f"ingested-{setting}")
  ingest.ingest(loader.DataSpec(os.path.join(drivers.ROOT, EXAMPLE),
                                setting=setting), out)
  return out


def _records(path) -> list[dict]:
  return [json.loads(line) for line in
          (path / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("setting", ["single", "multi"])
def test_triehh_runs_on_an_ingested_folder_as_on_its_file(tmp_path,
                                                          setting):
  import os  # pylint: disable=g-import-not-at-top
  from experiments import run_triehh  # pylint: disable=g-import-not-at-top
  from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
  folder = _ingest(tmp_path, setting)
  run = ("--theta=3", "--batch_size=200", "--allow_no_guarantee",
         "--num_runs=2", "--cache_dir=", f"--setting={setting}", "--show=5",
         "--seed=0")  # a simulation: the same draws from both
  code, out, err = drivers.run_in_process(
      run_triehh, "--dataset=ingested", f"--data_path={folder}", *run,
      f"--output_dir={tmp_path / 'ingested'}")
  assert code == 0, err
  assert f"data: ingested:example_users.csv ({setting})" in out
  code, _, err = drivers.run_in_process(
      run_triehh, "--dataset=file",
      f"--data_path={os.path.join(drivers.ROOT, EXAMPLE)}", *run,
      f"--output_dir={tmp_path / 'file'}")
  assert code == 0, err
  ingested, read = _records(tmp_path / "ingested"), _records(tmp_path / "file")
  assert [r["n_users"] for r in ingested] == [r["n_users"] for r in read]
  assert ingested[0]["discovered"]
  if setting == "single":
    # The same users: the same words for the same seeds. (Several-word
    # users hold the same bags, their words numbered in another order, so
    # the draws differ.)
    assert [r["discovered"] for r in ingested] == [r["discovered"]
                                                   for r in read]
  assert ingested[0]["config"]["data"] == {
      "dataset": "ingested", "setting": setting, "max_length": 10,
      "data_path": folder}


def test_an_ingested_folder_is_read_at_its_setting_and_length(tmp_path):
  from experiments import run_triehh  # pylint: disable=g-import-not-at-top
  from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
  folder = _ingest(tmp_path)
  for flag, said in (("--setting=multi", "ingested with --setting=single, "
                      "not --setting=multi: read it with --setting=single"),
                     ("--max_length=6", "ingested with --max_length=10, "
                      "not --max_length=6: read it with --max_length=10")):
    code, out, err = drivers.run_in_process(
        run_triehh, "--dataset=ingested", f"--data_path={folder}", flag)
    assert (code, out) == (1, "")
    assert err == f"error: {folder} holds a population {said}\n"


def test_a_missing_or_malformed_ingested_folder_is_one_line(tmp_path):
  from experiments import run_triehh  # pylint: disable=g-import-not-at-top
  from experiments import run_sfp  # pylint: disable=g-import-not-at-top
  from tests.experiments import drivers  # pylint: disable=g-import-not-at-top
  (tmp_path / "empty").mkdir()
  (tmp_path / "file.csv").write_text("user,text\n")
  broken = tmp_path / "broken"
  broken.mkdir()
  (broken / "spec.json").write_text("{not json")
  cases = [
      (tmp_path / "absent", f"error: --data_path={tmp_path / 'absent'}: No "
       "such file or directory"),
      (tmp_path / "file.csv", f"error: --data_path={tmp_path / 'file.csv'}: "
       "Not a directory"),
      (tmp_path / "empty", f"error: {tmp_path / 'empty'} holds no spec.json: "
       "not the output of an ingestion"),
      (broken, f"error: {broken} is not a folder an ingestion wrote, or it "
       f"is damaged: {broken / 'spec.json'}: Expecting property name"),
  ]
  for driver in (run_triehh, run_sfp):
    for path, said in cases:
      code, out, err = drivers.run_in_process(
          driver, "--dataset=ingested", f"--data_path={path}")
      assert (code, out) == (1, ""), (driver, path)
      assert err.startswith(said) and len(err.splitlines()) == 1, err
  code, _, err = drivers.run_in_process(run_triehh, "--dataset=ingested")
  assert err == "error: --dataset=ingested needs --data_path\n"
  code, _, err = drivers.run_in_process(
      run_triehh, "--dataset=ingested", f"--data_path={broken}",
      "--data_format=csv")
  assert err == ("error: --data_format applies to --dataset=file only, not "
                 "--dataset=ingested\n")
