"""Benchmark of the Beam pipelines: rows per second per worker, and memory.

A sharded CSV file (``--rows_per_shard`` rows a shard, users partitioned by
shard, about 10 rows per user, 1 to 3 words a row drawn from a Zipf law
over 10,000 made-up words) is generated, seeded, in a temporary directory
under ``--tmp_dir`` for each size of ``--rows`` and deleted after. Each
measurement runs in a fresh subprocess (its peak RSS is its own) on one
worker (the DirectRunner in memory, one process):

* ``loader``: the in-memory loader (``loader.build``) on the same rows in
  one file (the shards concatenated), sizes up to ``--loader_max_rows``;
* ``beam_sharded``: ``triehh.beam.ingest`` with ``users_sharded=True``
  (each shard built whole, word tables combined);
* ``beam_by_user``: the same without it (every user's parts grouped across
  shards), sizes up to ``--by_user_max_rows`` (the local runner holds the
  grouping in memory);
* ``protocol``: TrieHH's Beam rounds (``triehh.beam.protocol``) on the
  users read from the shards (``protocol.read_users``), at
  ``--sampling_rate`` and ``--theta``, L = 10; sizes up to
  ``--protocol_max_rows``.

The table gives per measurement the median wall time and CPU time (user
and system, every thread of the process: on a shared machine the wall
time grows with the others' load, the CPU time much less), rows per wall
second and per CPU second, the ratio of each Beam line's rows per CPU
second to the loader's at the same size, the peak RSS and the peak above
the RSS after imports.

  python -m benchmarks.beam_benchmark --rows=1e6,1e7
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_list("rows", ["1e6", "1e7"], "Input sizes, in rows.")
flags.DEFINE_integer("rows_per_shard", 1_000_000, "Rows of one shard.")
flags.DEFINE_list("measure", ["loader", "beam_sharded", "beam_by_user",
                              "protocol"], "What to measure.")
flags.DEFINE_float("loader_max_rows", 1e7, "Largest input of the loader.")
flags.DEFINE_float("by_user_max_rows", 1e6,
                   "Largest input of beam_by_user.")
flags.DEFINE_float("protocol_max_rows", 1e6, "Largest input of protocol.")
flags.DEFINE_float("sampling_rate", 0.1, "q of the protocol's rounds.")
flags.DEFINE_integer("theta", 50, "theta of the protocol's rounds.")
flags.DEFINE_integer("repeats", 1, "Runs of each measurement.")
flags.DEFINE_string("tmp_dir", tempfile.gettempdir(),
                    "Where the generated input is written (and deleted).")
flags.DEFINE_string("child", None, "Internal: run one measurement.")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCABULARY_SIZE = 10_000
ROWS_PER_USER = 10
MAX_LENGTH = 10


def _vocabulary(rng):
  """VOCABULARY_SIZE distinct made-up lower-case words of 3-8 letters."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  words = set()
  while len(words) < VOCABULARY_SIZE:
    length = int(rng.integers(3, 9))
    words.add("".join(chr(97 + c) for c in rng.integers(0, 26, length)))
  return np.array(sorted(words), dtype=object)


def generate(directory: str, rows: int, rows_per_shard: int,
             seed: int = 0, whole_file: bool = True
             ) -> tuple[list[str], str | None]:
  """Writes the shards (and, with ``whole_file``, their concatenation) of
  ``rows`` rows; returns the shard paths and the whole file's path."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import pyarrow as pa  # pylint: disable=g-import-not-at-top
  import pyarrow.csv as pa_csv  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(seed)
  vocab = _vocabulary(rng)
  weights = 1.0 / np.arange(1, VOCABULARY_SIZE + 1) ** 1.1
  weights /= weights.sum()
  paths = []
  whole = os.path.join(directory, "whole.csv") if whole_file else None
  with open(whole or os.devnull, "wb") as out:
    out.write(b"user,text\n")
    for shard, start in enumerate(range(0, rows, rows_per_shard)):
      n = min(rows_per_shard, rows - start)
      users = shard * 10**9 + rng.integers(0, max(n // ROWS_PER_USER, 1), n)
      picks = rng.choice(VOCABULARY_SIZE, size=(n, 3), p=weights)
      count = rng.integers(1, 4, n)
      text = vocab[picks[:, 0]]
      for k in (1, 2):
        more = count > k
        text[more] = text[more] + " " + vocab[picks[more, k]]
      table = pa.table({"user": users, "text": pa.array(text, pa.string())})
      path = os.path.join(directory, f"part-{shard:05d}.csv")
      pa_csv.write_csv(table, path)
      paths.append(path)
      if whole_file:
        with open(path, "rb") as f:
          f.readline()  # the header, once in the whole file
          shutil.copyfileobj(f, out)
  return paths, whole


# ---- one measurement (in a child process) ------------------------------------


def child(task: dict) -> dict:
  """Runs one measurement here; returns its time and memory."""
  from triehh.data import loader  # pylint: disable=g-import-not-at-top
  kind = task["kind"]
  if kind != "loader":
    from triehh.beam import ingest  # pylint: disable=g-import-not-at-top,unused-import
    from triehh.beam import protocol  # pylint: disable=g-import-not-at-top,unused-import
  base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  cpu_start = _cpu_seconds()
  start = time.perf_counter()
  extra = {}
  if kind == "loader":
    loaded = loader.build(loader.DataSpec(path=task["whole"]))
    extra["users"] = loaded.population.num_users
  elif kind in ("beam_sharded", "beam_by_user"):
    from triehh.beam import tables  # pylint: disable=g-import-not-at-top
    spec = loader.DataSpec(path=task["pattern"])
    ingest.ingest(spec, task["out"], users_sharded=kind == "beam_sharded")
    extra["users"] = tables.read_report(task["out"]).num_users
  else:
    extra.update(_protocol(task))
  seconds = time.perf_counter() - start
  cpu = _cpu_seconds() - cpu_start
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  return {"seconds": seconds, "cpu": cpu, "peak_mb": peak / 1024,
          "above_mb": (peak - base_rss) / 1024, **extra}


def _cpu_seconds() -> float:
  """User and system CPU time of this process (every thread)."""
  usage = resource.getrusage(resource.RUSAGE_SELF)
  return usage.ru_utime + usage.ru_stime


def _protocol(task: dict) -> dict:
  """The rounds on the users of the shards; the levels that kept a
  prefix."""
  import apache_beam as beam  # pylint: disable=g-import-not-at-top
  from triehh.beam import ingest  # pylint: disable=g-import-not-at-top
  from triehh.beam import protocol  # pylint: disable=g-import-not-at-top
  from triehh.beam import shards  # pylint: disable=g-import-not-at-top
  from triehh.data import loader  # pylint: disable=g-import-not-at-top
  spec = loader.DataSpec(path=task["pattern"], max_length=MAX_LENGTH)
  rounds = protocol.Rounds(theta=task["theta"],
                           sampling_rate=task["sampling_rate"],
                           max_length=MAX_LENGTH)
  out = os.path.join(task["out"], "trie")
  with beam.Pipeline(options=ingest.options()) as p:
    users = protocol.read_users(p, spec, shards.expand(task["pattern"]))
    _ = (protocol.expand(users, rounds) | beam.Map(json.dumps)
         | beam.io.WriteToText(out, num_shards=1, shard_name_template=""))
    _ = (users | beam.combiners.Count.Globally() | beam.Map(str)
         | "Users" >> beam.io.WriteToText(out + ".users", num_shards=1,
                                          shard_name_template=""))
  with open(out, encoding="utf-8") as f:
    kept = [tuple(json.loads(line)) for line in f]
  with open(out + ".users", encoding="utf-8") as f:
    num_users = int(f.read())
  levels = protocol.levels_by_seed(kept, rounds)[0]
  return {"users": num_users, "levels": len(levels),
          "words": len(protocol.heavy_hitters(levels))}


def run_child(task: dict) -> dict:
  proc = subprocess.run(
      [sys.executable, "-m", "benchmarks.beam_benchmark",
       f"--child={json.dumps(task)}"], cwd=ROOT, capture_output=True,
      text=True, check=False)
  if proc.returncode:
    raise RuntimeError(f"{task['kind']} failed: {proc.stderr[-2000:]}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- the table ---------------------------------------------------------------


def _wanted(kind: str, rows: int) -> bool:
  limits = {"loader": FLAGS.loader_max_rows,
            "beam_by_user": FLAGS.by_user_max_rows,
            "protocol": FLAGS.protocol_max_rows}
  return kind in FLAGS.measure and rows <= limits.get(kind, float("inf"))


def measure_size(rows: int) -> list[tuple[str, dict]]:
  """Every wanted measurement at one input size."""
  directory = tempfile.mkdtemp(prefix="beam_benchmark_", dir=FLAGS.tmp_dir)
  try:
    start = time.perf_counter()
    paths, whole = generate(directory, rows, FLAGS.rows_per_shard,
                            whole_file=_wanted("loader", rows))
    print(f"# {rows:,} rows in {len(paths)} shard(s) generated in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    task = {"whole": whole, "pattern": os.path.join(directory, "part-*.csv"),
            "out": os.path.join(directory, "out"), "rows": rows,
            "theta": FLAGS.theta, "sampling_rate": FLAGS.sampling_rate}
    results = []
    for kind in ("loader", "beam_sharded", "beam_by_user", "protocol"):
      if not _wanted(kind, rows):
        continue
      runs = [run_child({**task, "kind": kind})
              for _ in range(FLAGS.repeats)]
      result = dict(runs[0])
      result["seconds"] = statistics.median(r["seconds"] for r in runs)
      result["cpu"] = statistics.median(r["cpu"] for r in runs)
      result["peak_mb"] = max(r["peak_mb"] for r in runs)
      result["above_mb"] = max(r["above_mb"] for r in runs)
      results.append((kind, result))
      _print_line(kind, rows, result, results)
    return results
  finally:
    shutil.rmtree(directory, ignore_errors=True)


def _print_line(kind: str, rows: int, result: dict, results) -> None:
  """One line of the table; the ratio is of rows per CPU second."""
  rate = rows / result["seconds"]
  cpu_rate = rows / result["cpu"]
  loader_rate = next((rows / r["cpu"] for k, r in results
                      if k == "loader"), None)
  ratio = (f"{cpu_rate / loader_rate:6.3f}"
           if loader_rate and kind != "loader" else "     -")
  facts = ", ".join(f"{k} {v:,}" for k, v in result.items()
                    if k not in ("seconds", "cpu", "peak_mb", "above_mb"))
  print(f"{kind:<13} {rows:>12,} {result['seconds']:>8.1f} "
        f"{result['cpu']:>8.1f} {rate:>10,.0f} {cpu_rate:>10,.0f} {ratio} "
        f"{result['peak_mb']:>8,.0f} {result['above_mb']:>8,.0f}  {facts}",
        flush=True)


def main(argv):
  del argv
  if FLAGS.child:
    print(json.dumps(child(json.loads(FLAGS.child))))
    return
  print(f"one worker (DirectRunner, in memory); {FLAGS.repeats} run(s) per "
        f"line, median time; {os.cpu_count()} cores shared")
  print(f"{'measure':<13} {'rows':>12} {'wall s':>8} {'CPU s':>8} "
        f"{'rows/s':>10} {'rows/CPUs':>10} {'ratio':>6} {'peak MB':>8} "
        f"{'above MB':>8}  facts")
  for rows in [int(float(r)) for r in FLAGS.rows]:
    measure_size(rows)


if __name__ == "__main__":
  app.run(main)
