"""Where a mechanism's words are lost: the population's words by their
number of users and by their length, how many central partition selection
releases (truncated geometric, one word per user, as in ``FIELD.md``) and
how many each mechanism releases, means over seeded runs.

Each mechanism runs through the field benchmark's own runner
(``reports.field.mechanisms``, the same targets as ``FIELD.md``); cells as
in ``benchmarks.field_cells`` (``n:epsilon`` of the English population,
``paper-single:4``, ``prior@1e6:4``, ...). Nothing is tuned: this reads
where the words of a fixed plan go.

  python -m benchmarks.losses_by_count --cells=1e6:4 \
      --mechanisms=two-servers-wide-verified,two-servers
"""

from __future__ import annotations

import collections
import time

import numpy as np
from absl import app
from absl import flags

from benchmarks import field_cells
from reports.field import mechanisms as field_mechanisms
from triehh.data import datasets as datasets_lib

FLAGS = flags.FLAGS
flags.DEFINE_list("cells", ["1e6:4"], "Cells, as benchmarks.field_cells "
                  "reads them.")
flags.DEFINE_list("mechanisms", [field_mechanisms.TWO_SERVERS_VERIFIED],
                  "Mechanisms of reports.field.mechanisms to break down "
                  "beside central partition selection.")
flags.DEFINE_integer("runs", 3, "Seeded runs per mechanism and cell.",
                     lower_bound=1)
flags.DEFINE_string("cache_dir", None, "The data sets' cache.")

# Upper ends of the user-count rows (the last row: more users).
USER_BINS = (7, 8, 9, 10, 12, 15, 20, 30, 50, 100)


def user_row(users: int) -> str:
  """The row of a word held by ``users`` users."""
  low = 1
  for high in USER_BINS:
    if users <= high:
      return str(high) if low == high else f"{low}–{high}"
    low = high + 1
  return f"> {USER_BINS[-1]}"


def breakdown(truth: dict, released_runs, key) -> dict:
  """Per row (``key(word, users)``): [words held, mean released per run]
  for each list of released word sets in ``released_runs``."""
  table = collections.defaultdict(lambda: [0] + [0.0] * len(released_runs))
  for word, users in truth.items():
    if users > 0:
      table[key(word, users)][0] += 1
  for j, runs in enumerate(released_runs):
    for words in runs:
      for word in words:
        users = truth.get(word, 0)
        if users > 0:
          table[key(word, users)][j + 1] += 1.0 / len(runs)
  return dict(table)


def _print(title: str, rows: dict, order, names) -> None:
  print(f"\n{title}\n")
  print("| " + " | ".join(["row", "words held"] + names) + " |")
  print("|" + "---|" * (len(names) + 2))
  totals = np.zeros(len(names) + 1)
  for row in order:
    if row not in rows:
      continue
    values = rows[row]
    totals += values
    print(f"| {row} | {values[0]:,} | " + " | ".join(
        f"{v:,.1f}" for v in values[1:]) + " |")
  print(f"| all | {int(totals[0]):,} | " + " | ".join(
      f"{v:,.1f}" for v in totals[1:]) + " |", flush=True)


def main(argv):
  del argv
  datasets = datasets_lib.DataCache(FLAGS.cache_dir)
  names = [field_cells.PS] + list(FLAGS.mechanisms)
  unknown = [n for n in names if n not in field_mechanisms.MECHANISMS]
  if unknown:
    raise app.UsageError(f"unknown --mechanisms {', '.join(unknown)}: use "
                         f"{', '.join(field_mechanisms.MECHANISMS)}")
  for cell in FLAGS.cells:
    start = time.perf_counter()
    loaded = field_cells.load(cell, datasets)
    data = loaded.data
    length = data.population.max_length
    released = [[set(field_mechanisms.run_with_words(
        name, data, loaded.epsilon, loaded.delta, seed)[1])
                 for seed in range(FLAGS.runs)] for name in names]
    labels = [field_mechanisms.LABELS[name] for name in names]
    print(f"\n## {data.name}, n = {data.n:,}, ε = {loaded.epsilon:g}, "
          f"δ = {loaded.delta:.2g}, L = {length}: words released, mean of "
          f"{FLAGS.runs} runs")
    by_users = breakdown(data.truth, released, lambda w, u: user_row(u))
    order = [user_row(h) for h in USER_BINS] + [user_row(USER_BINS[-1] + 1)]
    _print("By users holding the word:", by_users, order, labels)
    by_length = breakdown(data.truth, released,
                          lambda w, u: str(len(w)) if len(w) <= length
                          else f"> {length}")
    _print("By length (characters):", by_length,
           [str(i) for i in range(1, length + 1)] + [f"> {length}"], labels)
    print(f"\n<!-- {cell}: {time.perf_counter() - start:.0f} s -->",
          flush=True)


if __name__ == "__main__":
  app.run(main)
