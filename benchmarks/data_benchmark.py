"""Benchmark of the data layer: time and peak memory to build populations.

Each measurement runs in a fresh subprocess (so peak RSS is its own) and is
repeated; the table shows the median wall time (min-max), the peak RSS of
the process, and the peak above the RSS after imports. Measured:

* the Sentiment140 sample in the three settings (OOV: 6M users drawn),
* the full-size file (1.6M rows) in the single and OOV settings (and
  multi with ``--full_settings``), and a load of the single population
  from the cache. Without ``--full_path``, a
  1.6M-row file in the official layout is synthesised in a temporary
  directory by repeating the sample's rows (users renamed per pair of
  copies: about 654k users, the real file has about 660k) and deleted at
  the end,
* a synthetic scale-test population (``synthetic.scale_population``).

Targets (issue "Real data"): the full file in the single setting in <= 10 s
and <= 2 GB.

  python -m benchmarks.data_benchmark --repeats=3
"""

from __future__ import annotations

import gzip
import json
import os
import re
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
flags.DEFINE_string("sample", None,
                    "Sentiment140 sample (default: $TRIEHH_SENTIMENT140, else "
                    "../shared/data/sentiment140_sample.csv.gz beside the "
                    "repository).")
flags.DEFINE_string("full_path", None,
                    "The real 1.6M-row file (csv, csv.gz or zip); default: "
                    "synthesise one from the sample.")
flags.DEFINE_integer("full_rows", 1_600_000, "Rows of the synthesised file.")
flags.DEFINE_integer("repeats", 3, "Runs of each measurement.")
flags.DEFINE_list("full_settings", ["single", "oov"],
                  "Settings measured on the 1.6M-row file (single, oov, "
                  "multi).")
flags.DEFINE_integer("oov_num_users", 6_000_000, "Users of the OOV draws.")
flags.DEFINE_integer("scale_users", 10_000_000,
                     "Users of the synthetic scale population (0: skip).")
flags.DEFINE_string("baseline", None,
                    "A checkout of another revision (e.g. from git archive): "
                    "every line is measured there too, alternating runs, so "
                    "before and after share one run's machine load.")
flags.DEFINE_string("child", None, "Internal: run one measurement.")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_USER_FIELD = re.compile(rb'^((?:"[^"]*",){4}")([^"]*)(".*)$', re.S)


def synthesise_full(sample: str, rows: int, out_path: str) -> int:
  """Writes ``rows`` rows made of the sample's rows; returns distinct users."""
  opener = gzip.open if sample.endswith(".gz") else open
  with opener(sample, "rb") as f:
    lines = [l for l in f.read().split(b"\n") if l]
  users = set()
  written = 0
  with open(out_path, "wb") as out:
    copy = 0
    while written < rows:
      suffix = b"" if copy < 2 else b"_%d" % (copy // 2)
      chunk = []
      for line in lines[:rows - written]:
        m = _USER_FIELD.match(line)
        if m is None:
          chunk.append(line)
          continue
        user = m.group(2) + suffix
        users.add(user)
        chunk.append(m.group(1) + user + m.group(3))
      out.write(b"\n".join(chunk) + b"\n")
      written += len(chunk)
      copy += 1
  return len(users)


# ---- one measurement (in a child process) ------------------------------------


def child(task: dict) -> dict:
  """Runs one measurement; returns seconds and memory figures."""
  from triehh import data  # pylint: disable=g-import-not-at-top
  from triehh.data import dictionary  # pylint: disable=g-import-not-at-top
  from triehh.data import synthetic  # pylint: disable=g-import-not-at-top
  import pyarrow  # pylint: disable=g-import-not-at-top,unused-import
  if task.get("setting") == "oov":
    dictionary.default_words(dictionary.DEFAULT_SIZE)  # warm wordfreq
  base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  start = time.perf_counter()
  if task["kind"] == "scale":
    pop = synthetic.scale_population(task["users"], zipf_exponent=1.0)
    facts = {"n": pop.num_users, "V": pop.num_words}
  else:
    spec = data.DataSpec(task["path"], dataset="sentiment140",
                         setting=task["setting"],
                         oov_num_users=task.get("oov_users", 6_000_000))
    loaded = data.load(spec, cache_dir=task.get("cache_dir"))
    pop = loaded.population
    facts = {"n": pop.num_users, "V": pop.num_words,
             "rows": loaded.report.rows_read,
             "cached": loaded.from_cache}
  seconds = time.perf_counter() - start
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  return {"seconds": seconds, "peak_mb": peak / 1024,
          "base_mb": base_rss / 1024, **facts}


def run_child(task: dict, root: str) -> dict:
  """One measurement in a fresh process of the tree at ``root``."""
  proc = subprocess.run(
      [sys.executable, "-m", "benchmarks.data_benchmark",
       f"--child={json.dumps(task)}"],
      cwd=root, capture_output=True, text=True, check=False)
  if proc.returncode != 0:
    raise RuntimeError(f"measurement {task} in {root} failed:\n"
                       f"{proc.stderr}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


_BASELINE_RESULTS: dict[int, list[dict]] = {}  # id(results) -> baseline


def measure(task: dict, repeats: int) -> list[dict]:
  """``repeats`` runs of ``task``; with ``--baseline``, as many there,
  alternating (kept in ``_BASELINE_RESULTS`` for ``row``)."""
  out, base = [], []
  for _ in range(repeats):
    if FLAGS.baseline:
      base.append(run_child(task, FLAGS.baseline))
    out.append(run_child(task, ROOT))
  if base:
    _BASELINE_RESULTS[id(out)] = base
  return out


def row(label: str, results: list[dict]) -> str:
  """One table line; under it the baseline's, when measured."""
  line = _row(label, results)
  if id(results) in _BASELINE_RESULTS:
    line += "\n" + _row("  baseline", _BASELINE_RESULTS[id(results)])
  return line


def _row(label: str, results: list[dict]) -> str:
  times = [r["seconds"] for r in results]
  peak = max(r["peak_mb"] for r in results)
  base = min(r["base_mb"] for r in results)
  facts = results[0]
  what = f"n={facts['n']:,} V={facts['V']:,}"
  return (f"{label:<44s} {statistics.median(times):7.2f} s "
          f"({min(times):.2f}-{max(times):.2f})  peak {peak:7.0f} MB "
          f"(+{peak - base:5.0f} over imports)  {what}")


def _full_file(sample: str, work: str) -> str:
  """The 1.6M-row file: ``--full_path``, else one synthesised in ``work``
  from the sample."""
  full = FLAGS.full_path
  if not full:
    full = os.path.join(work, "training.1600000.processed.noemoticon.csv")
    t0 = time.perf_counter()
    users = synthesise_full(sample, FLAGS.full_rows, full)
    print(f"synthesised {FLAGS.full_rows:,} rows ({users:,} users, "
          f"{os.path.getsize(full) / 2**20:.0f} MiB) from the sample in "
          f"{time.perf_counter() - t0:.1f} s")
  return full


def _sample_lines(sample: str) -> tuple[list[str], list[dict]]:
  """The sample's lines in the three settings, and its single-setting
  runs."""
  lines = []
  sample_single = measure({"kind": "load", "path": sample,
                           "setting": "single"}, FLAGS.repeats)
  lines.append(row("sample, single", sample_single))
  lines.append(row("sample, multi", measure(
      {"kind": "load", "path": sample, "setting": "multi"},
      FLAGS.repeats)))
  lines.append(row(f"sample, oov ({FLAGS.oov_num_users:,} users)", measure(
      {"kind": "load", "path": sample, "setting": "oov",
       "oov_users": FLAGS.oov_num_users}, FLAGS.repeats)))
  return lines, sample_single


def _full_lines(full: str, work: str
                ) -> tuple[list[str], list[dict] | None]:
  """The full file's lines (its settings, then a load from the cache) and
  the synthetic scale population's; and the full file's single-setting
  runs, if measured."""
  lines = []
  full_single = None
  for setting in FLAGS.full_settings:
    results = measure({"kind": "load", "path": full, "setting": setting,
                       "oov_users": FLAGS.oov_num_users}, FLAGS.repeats)
    label = f"1.6M rows, {setting}" + (
        f" ({FLAGS.oov_num_users:,} users)" if setting == "oov" else "")
    lines.append(row(label, results))
    if setting == "single":
      full_single = results
  cache_dir = os.path.join(work, "cache")
  measure({"kind": "load", "path": full, "setting": "single",
           "cache_dir": cache_dir}, 1)  # fills the cache
  lines.append(row("1.6M rows, single, from the cache", measure(
      {"kind": "load", "path": full, "setting": "single",
       "cache_dir": cache_dir}, FLAGS.repeats)))
  if FLAGS.scale_users:
    lines.append(row(f"synthetic zipf, {FLAGS.scale_users:,} users",
                     measure({"kind": "scale", "users": FLAGS.scale_users},
                             FLAGS.repeats)))
  return lines, full_single


def _print_extrapolation(sample_single: list[dict],
                         full_single: list[dict]) -> None:
  """The sample's single-setting time scaled to the full file's rows, next
  to the time measured."""
  rows_sample = sample_single[0]["rows"]
  rows_full = full_single[0]["rows"]
  extrapolated = statistics.median(r["seconds"] for r in sample_single) * (
      rows_full / rows_sample)
  print(f"linear extrapolation of the sample's single-setting time to "
        f"{rows_full:,} rows: {extrapolated:.2f} s (measured: "
        f"{statistics.median(r['seconds'] for r in full_single):.2f} s); "
        f"target <= 10 s and <= 2048 MB")


def main(argv):
  del argv
  if FLAGS.child:
    print(json.dumps(child(json.loads(FLAGS.child))))
    return
  from triehh.data import datasets  # pylint: disable=g-import-not-at-top
  sample = datasets.sentiment140_sample(FLAGS.sample)
  if not sample:
    raise app.UsageError("no Sentiment140 sample: pass --sample or set "
                         "TRIEHH_SENTIMENT140")
  print(f"load average at start: {os.getloadavg()[0]:.2f} "
        f"({os.cpu_count()} cores); {FLAGS.repeats} runs per line, each in "
        "a fresh process")
  work = tempfile.mkdtemp(prefix="triehh-data-bench-")
  try:
    full = _full_file(sample, work)
    lines, sample_single = _sample_lines(sample)
    full_lines, full_single = _full_lines(full, work)
    print("\n".join(lines + full_lines))
    if full_single is not None:
      _print_extrapolation(sample_single, full_single)
  finally:
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
  app.run(main)
