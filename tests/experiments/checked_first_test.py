"""Every flag, file and directory is checked before any work or output, and a
refusal names the flag, the value and the real cause (``experiments.flags``,
``experiments.paths``). The drivers run in this process."""

import errno
import json
import os

import pandas as pd
import pytest

from experiments import audit_privacy
from experiments import beyond
from experiments import flags as shared_flags
from experiments import reproduce_paper
from experiments import run_triehh
from experiments import summarize
from experiments import sweep
from reports.beyond import runs as beyond_runs
from tests.experiments import drivers
from triehh.data import datasets as datasets_lib
from triehh.runs import records
from triehh.runs import runner

FLAGS = shared_flags.FLAGS
# A run of a few milliseconds.
SMALL = ("--num_users=3000", "--epsilon=8", "--cache_dir=")


@pytest.fixture(autouse=True)
def parsed_flags():
  if not FLAGS.is_parsed():
    FLAGS.mark_as_parsed()


@pytest.fixture
def no_work(monkeypatch):
  """Fails the test if a driver loads data or plans runs."""
  def refuse(*args, **kwargs):
    raise AssertionError("work started before the flags were checked")
  monkeypatch.setattr(shared_flags, "load_dataset", refuse)
  monkeypatch.setattr(datasets_lib.DataCache, "get", refuse)
  monkeypatch.setattr(beyond_runs, "plan", refuse)
  monkeypatch.setattr(reproduce_paper, "cells", refuse)
  monkeypatch.setattr(runner, "plan", refuse)


@pytest.fixture
def places(tmp_path):
  """A file, a symbolic-link loop and a folder whose ``.sweep-locks`` is a
  file."""
  a_file = tmp_path / "a_file"
  a_file.write_text("x\n")
  loop = tmp_path / "loop"
  loop.symlink_to(loop)
  locked = tmp_path / "locked"
  locked.mkdir()
  (locked / runner.LOCK_DIR).write_text("")
  return {"file": str(a_file), "loop": str(loop), "locked": str(locked),
          "absent": str(tmp_path / "absent.csv"), "out": str(tmp_path / "o")}


def refused(module, *flags):
  """The one error line of ``module`` run with ``flags``; nothing printed."""
  code, out, err = drivers.run_in_process(module, *flags)
  assert code == 1, err
  assert out == "", out
  lines = err.strip().splitlines()
  assert len(lines) == 1, err
  return lines[0]


def test_audit_refuses_a_variant_twice_before_its_table(no_work):
  assert refused(audit_privacy, "--variants=correct,correct",
                 "--runs_per_side=0") == (
                     "error: flag --variants=correct,correct: lists correct "
                     "twice")
  assert refused(audit_privacy, "--seed=-1") == (
      "error: flag --seed=-1: -1 is not a non-negative integer")


def test_beyond_checks_every_flag_and_path_before_any_run(no_work, places):
  out = f"--output_dir={places['out']}"
  cases = [
      (("--total_epsilon=nan",), "error: flag --total_epsilon=nan: "
       "--total_epsilon must be a positive finite number"),
      (("--pass_counts=0",), "error: flag --pass_counts=0: '0' is not a "
       "whole number >= 1"),
      (("--parts=",), "error: flag --parts=: is empty: give one value or "
       "more, comma separated"),
      ((f"--sentiment140_path={places['absent']}",),
       f"error: --sentiment140_path={places['absent']}: No such file or "
       "directory"),
      ((f"--report_dir={places['file']}",),
       f"error: --report_dir={places['file']}: Not a directory"),
  ]
  for flags, line in cases:
    assert refused(beyond, out, *flags) == line


@pytest.mark.parametrize("flag, line", [
    ("--counts_runs=3", "error: --counts_runs applies to --parts=counts "
     "only; add counts to --parts (now passes)"),
    ("--iblt_runs=3", "error: --iblt_runs applies to --parts=iblt only; add "
     "iblt to --parts (now passes)"),
    ("--fractions=0.5", "error: --fractions applies to --parts=availability "
     "only; add availability to --parts (now passes)"),
])
def test_beyond_refuses_flags_of_parts_left_out(no_work, places, flag, line):
  # They were accepted and did nothing.
  assert refused(beyond, f"--output_dir={places['out']}", "--parts=passes",
                 flag) == line


def test_reproduce_checks_every_flag_and_path_before_planning(no_work,
                                                              places):
  out = f"--output_dir={places['out']}"
  cases = [
      (("--epsilons=nan", out), "error: flag --epsilons=nan: 'nan' is not a "
       "positive finite number"),
      (("--epsilons=4,4", out), "error: flag --epsilons=4,4: lists 4 twice"),
      (("--epsilons=4,4.0,4e0", out), "error: flag --epsilons=4,4.0,4e0: "
       "lists 4.0 twice (4 and 4.0 are the same value)"),
      ((f"--report_dir={places['file']}", out),
       f"error: --report_dir={places['file']}: Not a directory"),
      (("--settings=multi", f"--data_path={places['absent']}", out),
       f"error: --data_path={places['absent']}: No such file or directory"),
      ((f"--output_dir={places['locked']}",),
       f"error: --output_dir={places['locked']}: {places['locked']}/"
       ".sweep-locks: Not a directory"),
  ]
  for flags, line in cases:
    assert refused(reproduce_paper, *flags) == line


def test_sweep_compares_list_values_not_their_text(no_work, places):
  assert refused(sweep, "--epsilons=4,4.0,4e0",
                 f"--output_dir={places['out']}") == (
                     "error: flag --epsilons=4,4.0,4e0: lists 4.0 twice (4 "
                     "and 4.0 are the same value)")
  assert refused(sweep, f"--output_dir={places['locked']}") == (
      f"error: --output_dir={places['locked']}: {places['locked']}/"
      ".sweep-locks: Not a directory")


def test_unreadable_data_files_name_the_real_cause(no_work, places,
                                                   monkeypatch):
  for path, reason in ((places["loop"], "Too many levels of symbolic links"),
                       (f"{places['file']}/x.csv", "Not a directory")):
    assert refused(run_triehh, "--dataset=file", f"--data_path={path}") == (
        f"error: --data_path={path}: {reason}")
  assert refused(summarize, f"--results={places['loop']}") == (
      f"error: --results={places['loop']}: Too many levels of symbolic links")
  csv_out = f"{places['file']}/x.csv"
  assert refused(summarize, f"--results={places['file']}",
                 f"--csv_out={csv_out}") == (
                     f"error: --csv_out={csv_out}: {places['file']}: Not a "
                     "directory")
  # A file in a folder without search permission.
  hidden = os.path.join(places["out"], "data.csv")
  drivers.deny_opening(monkeypatch, hidden)
  assert refused(run_triehh, "--dataset=file", f"--data_path={hidden}") == (
      f"error: --data_path={hidden}: Permission denied")


def _full_disk(*args, **kwargs):
  raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_names_the_results_file(tmp_path, monkeypatch):
  monkeypatch.setattr(records.ResultsWriter, "write", _full_disk)
  code, _, err = drivers.run_in_process(run_triehh, *SMALL, "--show=0",
                                        f"--output_dir={tmp_path}")
  assert code == 1
  assert err.strip() == (f"error: {tmp_path}/results.jsonl: No space left "
                         "on device")


def test_a_full_disk_leaves_no_partial_csv(tmp_path, monkeypatch):
  code, _, err = drivers.run_in_process(run_triehh, *SMALL, "--show=0",
                                        f"--output_dir={tmp_path}")
  assert code == 0, err
  csv_out = tmp_path / "report" / "summary.csv"
  csv_out.parent.mkdir()

  def half_written(table, path, **kwargs):
    with open(path, "w", encoding="utf-8") as f:
      f.write("config_id,algo")
    _full_disk()

  monkeypatch.setattr(pd.DataFrame, "to_csv", half_written)
  code, out, err = drivers.run_in_process(
      summarize, f"--results={tmp_path}", f"--csv_out={csv_out}")
  assert code == 1
  assert err.strip() == f"error: {csv_out}: No space left on device"
  assert os.listdir(csv_out.parent) == []
  assert "wrote" not in out
  # A summary written before is left whole.
  csv_out.write_text("an earlier summary\n")
  drivers.run_in_process(summarize, f"--results={tmp_path}",
                         f"--csv_out={csv_out}")
  assert os.listdir(csv_out.parent) == ["summary.csv"]
  assert csv_out.read_text() == "an earlier summary\n"


def test_show_zero_prints_no_words_and_no_ellipsis():
  code, out, err = drivers.run_in_process(run_triehh, *SMALL, "--show=0")
  assert code == 0, err
  assert not any(line.strip() in ("", "...") for line in out.splitlines())
  code, out, err = drivers.run_in_process(run_triehh, *SMALL, "--show=1")
  assert code == 0, err
  assert any(line.endswith(" ...") for line in out.splitlines())


def test_summarize_skips_metrics_out_of_range_with_a_warning(tmp_path):
  code, _, err = drivers.run_in_process(run_triehh, *SMALL, "--show=0",
                                        "--num_runs=2",
                                        f"--output_dir={tmp_path}")
  assert code == 0, err
  path = tmp_path / "results.jsonl"
  first, second = path.read_text().splitlines()
  broken = json.loads(second)
  broken["metrics"]["recall@10"] = float("nan")  # written as NaN
  path.write_text(f"{first}\n{json.dumps(broken)}\n")
  code, out, err = drivers.run_in_process(summarize, f"--results={path}")
  assert code == 0, err
  assert err.strip() == (f"warning: {path}:2: metrics['recall@10']: nan is "
                         "not in [0, 1]; record skipped")
  assert (f"{path}: 1 run records, 1 lines skipped (1 metric not finite or "
          "out of range; line 2)") in out
  assert ": 1 run\n" in out


def test_a_library_warning_is_one_line_in_a_driver(tmp_path):
  path = tmp_path / "mostly_bad.csv"
  path.write_text("\n".join(["user,text"]
                            + [f"u{i},hello world" for i in range(40)]
                            + [f"b{i},x,y,z" for i in range(60)]) + "\n")
  proc = drivers.run_module("experiments.run_triehh", "--dataset=file",
                            f"--data_path={path}", "--cache_dir=",
                            "--show=0")
  lines = proc.stderr.strip().splitlines()
  assert lines[0].startswith(f"warning: 60 of 100 rows (60.0%) of {path} "
                             "are malformed: check the file's format."), lines
  assert all(line.startswith(("warning: ", "error: ")) for line in lines)
  assert "UserWarning" not in proc.stderr and ".py:" not in proc.stderr


@pytest.mark.parametrize("module,flags,needle", [
    ("run_triehh", ("--num_users=200000",),
     "error: flag --num_users=200,000: num_users=200,000 users"),
    ("run_triehh", ("--dataset=synthetic", "--num_users=200000"),
     "error: flag --num_users=200,000: num_users=200,000 users"),
    ("run_sfp", ("--cms_k=4096", "--num_users=3000"),
     "error: flag --cms_k=4,096 --cms_m=1,024: a sketch of k=4,096"),
])
def test_a_size_that_does_not_fit_names_its_flag(monkeypatch, module, flags,
                                                 needle):
  from experiments import run_sfp  # pylint: disable=g-import-not-at-top
  from triehh.core import memory  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**20)
  driver = {"run_triehh": run_triehh, "run_sfp": run_sfp}[module]
  status, out, err = drivers.run_in_process(driver, *flags, "--cache_dir=")
  assert status == 1, (out, err)
  assert err.strip().startswith(needle), err
  assert "would need about" in err and len(err.strip().splitlines()) == 1
  assert "data:" not in out  # refused before a population was built


@pytest.mark.parametrize("module,flags", [
    ("run_sfp", ()),
    ("sweep", ("--algorithms=sfp", "--output_dir={tmp}", "--noprogress")),
])
def test_sketches_of_every_fragment_position_must_fit(tmp_path, monkeypatch,
                                                      module, flags):
  # One 2048 x 1024 sketch fits in 2 GiB; 500 of them (length 1000) do not.
  from experiments import run_sfp  # pylint: disable=g-import-not-at-top
  from triehh.core import memory  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**31)
  driver = {"run_sfp": run_sfp, "sweep": sweep}[module]
  status, out, err = drivers.run_in_process(
      driver, "--sfp_length=1000", "--num_users=3000", "--cache_dir=",
      *(f.format(tmp=tmp_path) for f in flags))
  assert (status, out) == (1, ""), (out, err)
  assert err.startswith(
      "error: flag --cms_k=2,048 --cms_m=1,024 --sfp_length=1,000: SFP's 500 "
      "fragment sketches"), err
  assert len(err.strip().splitlines()) == 1
