"""How long each console command takes to print its ``--help``.

Runs ``<command> --help`` of every console script the package declares
(``pyproject.toml``'s ``[project.scripts]``, the executables beside this
Python) as a subprocess, ``--repeats`` times each, interleaved (one round
runs every command once), and prints each command's median wall time
against the target of issue 37, section 3 ("Starting": ``triehh-run
--help`` at most 0.3 s).

  python -m benchmarks.startup_benchmark --repeats=9
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import tomllib

from absl import app
from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 7, "Runs of each command's --help.",
                     lower_bound=1)
flags.DEFINE_list("commands", [], "Commands to time (default: every "
                  "console script of pyproject.toml).")

# Issue 37, section 3, "Starting": triehh-run --help at most 0.3 s.
TARGET_SECONDS = 0.3
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def console_scripts() -> list[str]:
  """The console scripts ``pyproject.toml`` declares, in its order."""
  with open(os.path.join(_ROOT, "pyproject.toml"), "rb") as f:
    return list(tomllib.load(f)["project"]["scripts"])


def help_seconds(command: str) -> float:
  """Wall time of one ``command --help`` (the script beside this Python);
  raises if it does not exit 0."""
  path = os.path.join(os.path.dirname(sys.executable), command)
  start = time.perf_counter()
  subprocess.run([path, "--help"], check=True, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
  return time.perf_counter() - start


def main(argv):
  del argv
  commands = FLAGS.commands or console_scripts()
  times = {command: [] for command in commands}
  for _ in range(FLAGS.repeats):
    for command in commands:
      times[command].append(help_seconds(command))
  print(f"median wall time of '<command> --help' over {FLAGS.repeats} runs "
        f"(target {TARGET_SECONDS} s for triehh-run: issue 37, section 3)")
  for command in commands:
    median = statistics.median(times[command])
    print(f"  {command:<28s} {median:6.3f} s  "
          f"({median / TARGET_SECONDS:.2f}x the target)")


if __name__ == "__main__":
  app.run(main)
