"""Tests of triehh.data.input_files: file kinds refused, lines bounded."""

import io
import os
import random
import re
import socket
import threading

import pytest

from tests.data import helpers
from triehh.data import dictionary
from triehh.data import input_files
from triehh.data import loader
from triehh.data import readers
from triehh.data import report as report_lib

# Long enough for a thread stuck in open() to be told from a slow one.
FIFO_WAIT_S = 10


def read_guarded(path: str, read, release) -> BaseException | None:
  """Runs ``read(path)`` in a thread; what it raised, or None.

  A reader that opens a FIFO blocks until a writer appears, and one that
  reads a pipe blocks until its write end closes: if the thread is still
  running after FIFO_WAIT_S, ``release()`` unblocks it (opens and closes
  the FIFO's write end, or closes the pipe's) and the test fails, never
  hangs.
  """
  outcome: list[BaseException | None] = []

  def target():
    try:
      read(path)
      outcome.append(None)
    except BaseException as err:  # pylint: disable=broad-except
      outcome.append(err)

  thread = threading.Thread(target=target, daemon=True)
  thread.start()
  thread.join(FIFO_WAIT_S)
  if thread.is_alive():
    release()
    thread.join(FIFO_WAIT_S)
    pytest.fail(f"reading {path} blocked: it was opened")
  return outcome[0]


READS = {
    "readers.read": lambda p: readers.read(p, "csv"),
    "readers.read auto": readers.read,
    "loader.load": lambda p: loader.load(loader.DataSpec(p, file_format="csv")),
    "dictionary.load_words": dictionary.load_words,
}


@pytest.mark.parametrize("how", sorted(READS))
def test_fifo_is_refused_by_kind_without_blocking(tmp_path, how):
  path = str(tmp_path / "f.csv")
  os.mkfifo(path)
  err = read_guarded(path, READS[how], lambda: os.close(
      os.open(path, os.O_WRONLY | os.O_NONBLOCK)))
  assert isinstance(err, report_lib.DataError), err
  assert str(err).endswith(f"{path} is a named pipe (FIFO), not a regular "
                           "file: save what the pipe carries to a file first")


def test_anonymous_pipe_is_refused_by_kind(tmp_path):
  """What a shell's <(...) passes: /dev/fd/N, the read end of a pipe."""
  read_end, write_end = os.pipe()
  try:
    path = f"/proc/self/fd/{read_end}"
    if not os.path.exists(path):
      pytest.skip("no /proc/self/fd on this system")
    os.write(write_end, b"user,text\nu1,hello world\n")
    err = read_guarded(path, lambda p: readers.read(p, "csv"),
                       lambda: os.close(write_end))
    assert isinstance(err, report_lib.DataError), err
    assert str(err).startswith(f"the data file {path} is a named pipe "
                               "(FIFO), not a regular file")
    os.set_blocking(read_end, False)
    assert os.read(read_end, 100).startswith(b"user,text")  # not consumed
  finally:
    os.close(read_end)
    try:
      os.close(write_end)
    except OSError:
      pass  # closed by the release of a blocked read


def test_directory_device_and_socket_are_refused_by_kind(tmp_path):
  sock_path = str(tmp_path / "s.csv")
  server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  server.bind(sock_path)
  try:
    cases = [(str(tmp_path), "a directory, not a regular file: pass a file "
              "in it"),
             (sock_path, "a socket, not a regular file")]
    # /dev/null ends at once: a regression fails here instead of reading
    # forever, as it would from /dev/zero (refused the same way).
    if os.path.exists("/dev/null"):
      cases.append(("/dev/null", "a character device, not a regular file"))
    for path, kind in cases:
      for read in READS.values():
        with pytest.raises(report_lib.DataError,
                           match=re.escape(f"{path} is {kind}")):
          read(path)
  finally:
    server.close()


def test_missing_file_is_still_file_not_found(tmp_path):
  path = str(tmp_path / "none.csv")
  with pytest.raises(FileNotFoundError, match=f"data file not found: {path}"):
    readers.read(path)
  with pytest.raises(FileNotFoundError, match="dictionary file not found"):
    dictionary.load_words(path)


# ---- bounded lines ----------------------------------------------------------


def test_lines_skips_a_long_line_without_holding_it():
  data = b"ok\n" + b"x" * 50 + b"\nfits\r\n" + b"y" * 11 + b"\nend"
  stream = io.BytesIO(data)
  reads = []
  readline = stream.readline
  stream.readline = lambda n=-1: reads.append(n) or readline(n)
  got = list(input_files.lines(stream, limit=10))
  assert got == [(1, b"ok\n"), (2, None), (3, b"fits\r\n"), (4, None),
                 (5, b"end")]
  assert all(0 < n <= 12 or n == input_files._CHUNK for n in reads)


def test_first_line_ends_at_cr_lf_or_crlf_and_is_bounded():
  for data in (b"a,b\rc,d\r", b"a,b\nc", b"a,b\r\nc", b"a,b"):
    assert input_files.first_line(io.BytesIO(data), "x.csv") == b"a,b"
  assert input_files.first_line(io.BytesIO(b"x" * 8 + b"\n"), "x.csv",
                                8) == b"x" * 8
  with pytest.raises(report_lib.DataError, match=re.escape(
      "line 1 of x.csv is longer than 8 bytes, the bound on one line")):
    input_files.first_line(io.BytesIO(b"x" * 9 + b"\r"), "x.csv", 8)


def reference_blanked(data: bytes, limit: int) -> tuple[bytes, list[int]]:
  """BlankedLongLines' output and long line numbers, by a regex."""
  out, long_lines = [], []
  pieces = re.findall(rb"([^\r\n]*)(\r\n|\r|\n|$)", data)
  if pieces and pieces[-1] == (b"", b""):
    pieces.pop()  # the empty match at the very end
  for number, (content, brk) in enumerate(pieces, start=1):
    if len(content) > limit:
      long_lines.append(number)
      content = b""
    out.append(content + brk)
  return b"".join(out), long_lines


def test_blanked_long_lines_matches_a_line_by_line_reference():
  """Random lines and breaks (CR, LF, CRLF) across random chunk and read
  sizes: the same bytes and line numbers as splitting the whole file."""
  rng = random.Random(7)
  for _ in range(2000):
    limit = rng.randint(0, 5)
    data = bytes(rng.choice(b"ab\r\n") for _ in range(rng.randint(0, 30)))
    stream = input_files.BlankedLongLines(io.BytesIO(data), limit,
                                          chunk_size=rng.randint(1, 6))
    got = b""
    while piece := stream.read(rng.randint(1, 8)):
      got += piece
    assert (got, stream.long_lines) == reference_blanked(data, limit), data


def test_text_lines_names_file_and_line(tmp_path, monkeypatch):
  monkeypatch.setattr(input_files, "MAX_LINE_BYTES", 16)
  path = helpers.write(str(tmp_path / "w.txt.gz"),
                       b"\xef\xbb\xbffirst\r\nsecond\n" + b"z" * 17 + b"\n")
  lines = input_files.text_lines(path, "word list")
  assert next(lines) == (1, "first") and next(lines) == (2, "second")
  with pytest.raises(report_lib.DataError, match=re.escape(
      f"line 3 of {path} is longer than 16 bytes")):
    next(lines)
  bad = helpers.write(str(tmp_path / "b.txt"), b"ok\n\xff\n")
  with pytest.raises(report_lib.DataError,
                     match=r"line 2 of the word list .*b\.txt is not valid"):
    list(input_files.text_lines(bad, "word list"))


def test_dictionary_line_over_the_bound_is_an_error(tmp_path, monkeypatch):
  monkeypatch.setattr(input_files, "MAX_LINE_BYTES", 16)
  path = helpers.write(str(tmp_path / "d.txt"), b"the\n" + b"w" * 40 + b"\n")
  with pytest.raises(report_lib.DataError,
                     match=r"line 2 of .*d\.txt is longer than 16 bytes"):
    dictionary.load_words(path)
