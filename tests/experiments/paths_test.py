"""Paths named by the flags: each refusal says the system's own reason, and
an OSError or a warning escaping a driver is one line (experiments.paths,
experiments.cli)."""

import errno
import os
import warnings

import pytest

from experiments import cli
from experiments import paths
from tests.experiments import drivers


@pytest.fixture
def loop(tmp_path):
  """A symbolic link to itself."""
  path = tmp_path / "loop"
  path.symlink_to(path)
  return str(path)


@pytest.fixture
def a_file(tmp_path):
  path = tmp_path / "a_file"
  path.write_text("x\n")
  return str(path)


def test_an_input_file_is_refused_with_the_systems_reason(tmp_path, loop,
                                                          a_file):
  paths.check_input_file("data_path", a_file)  # readable: no error
  for path, reason in ((loop, "Too many levels of symbolic links"),
                       (f"{a_file}/x.csv", "Not a directory"),
                       (str(tmp_path / "absent.csv"),
                        "No such file or directory"),
                       (str(tmp_path), "Is a directory")):
    with pytest.raises(ValueError) as caught:
      paths.check_input_file("data_path", path)
    assert str(caught.value) == f"--data_path={path}: {reason}"


def test_a_file_in_an_unreadable_folder_is_not_called_missing(monkeypatch,
                                                              tmp_path):
  # A file in a folder without search permission.
  hidden = str(tmp_path / "locked" / "data.csv")
  drivers.deny_opening(monkeypatch, hidden)
  with pytest.raises(ValueError,
                     match="^--data_path=.*data.csv: Permission denied$"):
    paths.check_input_file("data_path", hidden)


def test_directories_are_refused_with_the_systems_reason(tmp_path, loop,
                                                         a_file):
  made = tmp_path / "new" / "dir"
  paths.check_dir("report_dir", str(made), create=True)
  assert made.is_dir()
  paths.check_dir("cache_dir", str(tmp_path / "absent"))  # made when needed
  assert not (tmp_path / "absent").exists()
  for path, create, reason in ((a_file, True, "Not a directory"),
                               (a_file, False, "Not a directory"),
                               (f"{a_file}/sub", True, "Not a directory"),
                               (loop, False,
                                "Too many levels of symbolic links"),
                               (loop, True,
                                "Too many levels of symbolic links")):
    with pytest.raises(ValueError) as caught:
      paths.check_dir("report_dir", path, create=create)
    assert str(caught.value) == f"--report_dir={path}: {reason}", create
  # A folder inside the flag's value names both.
  with pytest.raises(ValueError) as caught:
    paths.check_dir("output_dir", os.path.join(a_file), value="out")
  assert str(caught.value) == f"--output_dir=out: {a_file}: Not a directory"


def test_an_output_file_names_its_folder_and_the_reason(tmp_path, a_file):
  paths.check_output_file("csv_out", str(tmp_path / "s.csv"))
  for path, where, reason in (
      (f"{a_file}/x.csv", a_file, "Not a directory"),
      (str(tmp_path / "no" / "s.csv"), str(tmp_path / "no"),
       "No such file or directory"),
      (str(tmp_path), str(tmp_path), "Is a directory")):
    with pytest.raises(ValueError) as caught:
      paths.check_output_file("csv_out", path)
    expected = (f"--csv_out={path}: {reason}" if where == path
                else f"--csv_out={path}: {where}: {reason}")
    assert str(caught.value) == expected


def test_an_os_error_is_one_line_naming_its_path():
  full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
  assert cli.error_line(full) == "error: No space left on device"
  named = paths.with_path(full, "out/results.jsonl")
  assert cli.error_line(named) == (
      "error: out/results.jsonl: No space left on device")
  # An error that names its own path keeps it; a message of the project's
  # is said as it is.
  assert paths.with_path(named, "elsewhere") is named
  assert cli.error_line(FileNotFoundError("results file not found: x")) == (
      "error: results file not found: x")
  moved = OSError(errno.EXDEV, os.strerror(errno.EXDEV), "a", None, "b")
  assert cli.error_line(moved) == "error: a -> b: Invalid cross-device link"


def test_a_warning_is_one_line_without_the_source(monkeypatch, capsys):
  monkeypatch.setattr(warnings, "showwarning", cli.show_warning)
  with warnings.catch_warnings():
    warnings.simplefilter("always")
    warnings.warn("900 of 1,700 rows\n are malformed", UserWarning)
    warnings.warn("old", DeprecationWarning)
  assert capsys.readouterr().err.splitlines() == [
      "warning: 900 of 1,700 rows are malformed",
      "warning: DeprecationWarning: old"]
