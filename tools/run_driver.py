"""Runs an experiment driver as a Bazel ``py_binary``.

Usage (as the ``main`` of a py_binary): run_driver.py <module> [flags...]

``bazel run`` starts a binary inside its runfiles tree; this launcher moves to
the directory ``bazel run`` was called from (``BUILD_WORKING_DIRECTORY``), so
relative paths in flags (``--output_dir=out``, ``--data_path=f.csv``) mean
what they mean under ``python -m``, then runs the driver module as
``__main__``.
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
  if len(sys.argv) < 2:
    sys.exit("usage: run_driver.py <module> [flags...]")
  module = sys.argv.pop(1)
  working_directory = os.environ.get("BUILD_WORKING_DIRECTORY")
  if working_directory:
    os.chdir(working_directory)
  runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
  main()
