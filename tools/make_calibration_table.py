"""Writes triehh/theory/calibrations.json: Poisson calibrations searched ahead.

  python -m tools.make_calibration_table

The grid is :mod:`triehh.theory.calibration_table`'s (its docstring says
which targets); every entry is the search's own answer. A change to the
accountant's code makes the table stale: tests/theory/calibration_table_test.py
then fails until it is written again with this command.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time

from absl import app
from absl import flags

from triehh.core import files
from triehh.theory import calibration_store
from triehh.theory import calibration_table

FLAGS = flags.FLAGS
flags.DEFINE_string("output", calibration_store.TABLE_PATH,
                    "The table to write.")
flags.DEFINE_integer("workers", os.cpu_count() or 1,
                     "Processes that search.", lower_bound=1)


def main(argv):
  del argv
  start = time.perf_counter()
  grid = calibration_table.targets()
  with multiprocessing.Pool(FLAGS.workers) as pool:
    found = pool.map(calibration_table.searched_entry, grid, chunksize=1)
  entries = [entry for entry in found if entry is not None]
  table = {
      "about": ("Poisson calibrations searched ahead of time, checked by the "
                "accountant before use; written by python -m "
                "tools.make_calibration_table, grid in "
                "triehh/theory/calibration_table.py."),
      "entries": entries,
  }
  lines = ",\n".join(json.dumps(entry, sort_keys=True) for entry in entries)
  files.write_text(FLAGS.output,
                   '{"about": %s,\n"entries": [\n%s\n]}\n'
                   % (json.dumps(table["about"]), lines))
  print(f"{len(entries)} of {len(grid)} targets written to "
        f"{os.path.relpath(FLAGS.output)} in "
        f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
  app.run(main)
