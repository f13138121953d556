"""Tests of triehh.core.files: files written whole or not at all, and the
cache directory."""

import os
import stat

import pytest

from triehh.core import files


def test_write_text_replaces_the_file_whole(tmp_path):
  path = str(tmp_path / "REPORT.md")
  files.write_text(path, "old\n")
  files.write_text(path, "new ü\n")
  assert open(path, encoding="utf-8").read() == "new ü\n"
  assert os.listdir(tmp_path) == ["REPORT.md"]  # no temporary file left
  mask = os.umask(0)
  os.umask(mask)
  assert os.stat(path).st_mode & 0o777 == 0o666 & ~mask


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
  path = str(tmp_path / "figure.png")
  files.write_text(path, "old")
  with pytest.raises(OSError, match="No space left"):
    with files.replacing(path, suffix=".png") as tmp:
      assert tmp.endswith(".png") and os.path.dirname(tmp) == str(tmp_path)
      with open(tmp, "w", encoding="utf-8") as f:
        f.write("half")
      raise OSError(28, "No space left on device")
  assert open(path, encoding="utf-8").read() == "old"
  assert os.listdir(tmp_path) == ["figure.png"]


def test_default_cache_dir_follows_xdg_cache_home(monkeypatch):
  monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
  assert files.default_cache_dir() == os.path.join("/somewhere", "triehh")
  monkeypatch.delenv("XDG_CACHE_HOME")
  assert files.default_cache_dir() == os.path.join(
      os.path.expanduser("~"), ".cache", "triehh")


def test_writing_through_a_symbolic_link_keeps_the_link(tmp_path):
  target = tmp_path / "target.txt"
  target.write_text("old")
  link = tmp_path / "link.csv"
  link.symlink_to(target)
  files.write_text(str(link), "new")
  assert link.is_symlink() and target.read_text() == "new"


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_special_file_is_refused_not_replaced(tmp_path, kind):
  # A named pipe or a device was replaced by a plain file ("wrote ...").
  path = {"directory": tmp_path, "device": "/dev/null",
          "fifo": tmp_path / "fifo"}[kind]
  if kind == "fifo":
    os.mkfifo(path)
  with pytest.raises(ValueError, match="not a file: give the path of a"):
    files.write_text(str(path), "text")
  assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
  if kind == "fifo":
    assert stat.S_ISFIFO(os.stat(path).st_mode)


def test_a_held_lock_is_refused_until_its_fd_is_closed(tmp_path):
  path = str(tmp_path / "x.lock")
  first = files.lock(path)
  assert first is not None and os.path.isfile(path)
  assert files.lock(path) is None  # another open file: refused, not waited
  os.close(first)
  again = files.lock(path, blocking=True)
  assert again is not None
  os.close(again)
  with pytest.raises(FileNotFoundError):
    files.lock(str(tmp_path / "no-dir" / "x.lock"))
