"""An ingestion run in a child process, held while it reads a shard."""

import contextlib
import os
import subprocess
import sys
import time
from typing import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def slow_shard_reads(reading: str, release: str | None = None) -> str:
  """Python source making a child's shard reads (``triehh.beam.shards``)
  first touch the file ``reading``, then wait 60 s, or until the file
  ``release`` exists."""
  waiting = f"not os.path.exists({release!r})" if release else "True"
  return ("import os, sys, time\n"
          "from triehh.beam import shards\n"
          "read = shards._read\n"
          "def slow(spec, shard):\n"
          f"  open({reading!r}, 'w').close()\n"
          "  deadline = time.monotonic() + 60\n"
          f"  while {waiting} and time.monotonic() < deadline:\n"
          "    time.sleep(0.05)\n"
          "  return read(spec, shard)\n"
          "shards._read = slow\n")


@contextlib.contextmanager
def reading_a_shard(code: str, reading: str,
                    timeout: float = 120) -> Iterator[subprocess.Popen]:
  """Runs ``python -c code`` from the repository root (stdout and stderr
  piped, as text) and yields it once the file ``reading`` exists (see
  :func:`slow_shard_reads`); kills it if it still runs afterwards."""
  with subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, text=True,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE) as proc:
    try:
      deadline = time.monotonic() + timeout
      while not os.path.exists(reading):
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        assert time.monotonic() < deadline, "the shard was never read"
        time.sleep(0.1)
      yield proc
    finally:
      if proc.poll() is None:
        proc.kill()
