"""Summarises run_triehh / run_sfp / sweep results as the paper reports them.

Reads the ``results.jsonl`` files the drivers write and prints:

1. Per configuration (algorithm, engine, data set, setting, n, target
   epsilon, SFP's T, IBLT's k-anonymity): the number of runs and, for
   every metric in the records (``precision@K``, ``recall@K``, ``f1@K``,
   ``precision``, ``num_discovered``), the mean over runs with a
   confidence interval (the F1-vs-K figures and Table 2 of the paper as a
   table); for TrieHH runs with protected counts (``--counts``), per K the
   median relative error of the true top-K words' counts and the coverage
   of their intervals (``count_error@K``, ``count_coverage@K``); then
   Table 2's compact view (recall at ``--table_k`` and precision). IBLT
   runs (from a sweep) are their own rows, with epsilon ``none``: their
   k-anonymity is not differential privacy.
2. With ``--truth_from_dataset``: the population is rebuilt from the same
   data-set flags the runs used (``flags.load_dataset``, from the cache when
   there is one) and, per TrieHH configuration, the discovery rate of each
   true word over the runs is averaged within log-spaced frequency bins and
   printed next to Proposition 2's worst-case rate (the paper's "frequency
   vs. discovery rate with the theoretical lower bound" figure).
3. With ``--plot_dir=DIR``: the figures of the results, each a PNG with
   its data as CSV beside it (same basename), one line each saying what
   was drawn and where (``reports.plots``): ``recall_vs_epsilon``
   and ``f1_vs_epsilon`` (one panel per K, a line per algorithm and its
   options, means with the intervals above), ``f1_vs_k`` (F1@K and the
   paper's F1@K against K, a line per configuration coloured by epsilon),
   ``discovery_vs_frequency`` (with ``--truth_from_dataset``: these rates,
   Proposition 2's bound dashed) and ``cost_vs_epsilon`` (rounds,
   users sampled and seconds per run). Only what the records hold is drawn
   (SFP has no rounds; one epsilon gives points).

  python -m experiments.summarize --output_dir=out_eps1,out_eps4
  triehh-summarize --results=out/results.jsonl \
      --truth_from_dataset --num_users=200000 --csv_out=summary.csv
  triehh-summarize --output_dir=out --plot_dir=out/plots

Reading, de-duplication (the same ``config_key`` and seed twice: one run,
the others dropped and counted), grouping, the Student t intervals (clipped
to [0, 1] for proportions) and the discovery-rate bins are
``reports.summary``'s; its docstring defines each. This driver keeps the
flags and the printing. Errors print one line ``error: ...`` and exit 1; an
output (``--csv_out``, its discovery CSV, a file of ``--plot_dir``) that is
one of the results files read is refused before anything is read.
Matplotlib is imported only with ``--plot_dir``.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import sys
import time
from collections.abc import Sequence

from absl import app
from absl import flags
import pandas as pd

from experiments import cli
from experiments import flags as shared_flags
from experiments import paths
from reports import summary as analysis
from triehh.runs import records as records_lib

FLAGS = flags.FLAGS
# Flags of the run drivers that mean nothing to the summariser.
_RUN_FLAGS = ("epsilon", "delta", "num_runs", "seed", "ks")
shared_flags.declare(__name__, *shared_flags.DATA_FLAGS, "max_length",
                     "confidence")
shared_flags.declare(
    __name__, "output_dir", help_text="Directories of results to read (each "
    "its results.jsonl), comma separated.")
shared_flags.refuse(__name__, _RUN_FLAGS, "a flag of the run drivers; the "
                    "summariser reports every configuration in the results")

shared_flags.DEFINE_values(
    "results", [], "results.jsonl files to read (a directory stands for its "
    "results.jsonl). --output_dir also accepts directories, comma "
    "separated.", shared_flags.path_item, allow_empty=True)
flags.DEFINE_bool("truth_from_dataset", False,
                  "Rebuild the population from the data-set flags the runs "
                  "used (e.g. --num_users, --dataset, --data_path) and print "
                  "the discovery rate per frequency bin next to "
                  "Proposition 2's bound (TrieHH runs).")
shared_flags.DEFINE_count(
    "num_bins", 12, "Log-spaced word-frequency bins of the discovery rates "
    f"(at most {analysis.MAX_BINS:,}).", lower_bound=1,
    upper_bound=analysis.MAX_BINS)
flags.DEFINE_integer("table_k", 50,
                     "K of the compact recall@K / precision table (Table 2).",
                     lower_bound=1)
flags.DEFINE_string("csv_out", None,
                    "Write the metric table as CSV (one row per configuration "
                    "and metric) to this path, and the discovery rates to "
                    "<stem>_discovery<ext> next to it.")
flags.DEFINE_string("plot_dir", None,
                    "Draw the figures of the results into this directory "
                    "(made if needed): recall_vs_epsilon, f1_vs_epsilon, "
                    "f1_vs_k, discovery_vs_frequency (with "
                    "--truth_from_dataset) and cost_vs_epsilon, each a PNG "
                    "with its data as CSV beside it.")

Group = analysis.Group

def _cell(mean: float, half: float, digits: int = 3, clipped: bool = False,
          low: float = math.nan, high: float = math.nan) -> str:
  """``mean ± half``; a clipped interval as ``mean [low, high]``."""
  if math.isnan(half):
    return f"{mean:.{digits}f}"
  if clipped:
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
  return f"{mean:.{digits}f} ± {half:.{digits}f}"


def _row_cell(row, digits: int = 3) -> str:
  """The cell of one metric_table row (a Series or a one-row frame)."""
  get = (lambda c: row[c].iloc[0]) if isinstance(row, pd.DataFrame) else (
      lambda c: row[c])
  return _cell(get("mean"), get("half_width"), digits, bool(get("clipped")),
               get("ci_low"), get("ci_high"))


def print_metric_table(groups: Sequence[Group], table: pd.DataFrame,
                       confidence: float) -> None:
  """The per-configuration blocks: K rows of precision, recall and F1."""
  level = f"{confidence:.0%}"
  print(f"Mean over runs ± half-width of the {level} Student t interval, "
        f"t((1+{confidence:g})/2, r-1) * s / sqrt(r)\n(s: sample standard "
        "deviation, r: runs; one run: no interval).")
  if table["clipped"].any():
    print("Intervals of proportions (precision, recall, F1) reaching past 0 "
          "or 1 are clipped to [0, 1]\nand shown as mean [low, high].")
  for index, group in enumerate(groups):
    rows = table[table["config_id"] == index]
    runs = int(rows["runs"].max())
    seeded = [r.get("seed") for r in group.records
              if r.get("seed") is not None]  # fresh entropy: no seed
    seeds = set(seeded)
    note = ""
    if len(seeds) < len(seeded):
      which = "" if len(seeded) == len(group.records) else "seeded "
      note = (f"  [warning: {len(seeded)} {which}records but "
              f"{len(seeds)} distinct seeds: runs appended twice?]")
    print()
    print(f"{group.label}: {runs} run{'s' if runs != 1 else ''}{note}")
    per_k = rows[rows["k"].notna()]
    if not analysis.ranked(group):
      print("  unranked: no top-K precision (nor F1@K); set precision "
            "below (share of the released words some user holds)")
    if not per_k.empty:
      _print_k_rows(per_k, ("precision", "recall", "f1"))
    print_count_rows(per_k)
    for _, row in rows[rows["k"].isna()].iterrows():
      digits = 1 if row["metric"] == "num_discovered" else 3
      cell = _row_cell(row, digits)
      print(f"  {row['metric']}: {cell}"
            + (f" ({row['runs']} runs)" if row["runs"] != runs else ""))


def print_count_rows(per_k: pd.DataFrame) -> None:
  """A configuration's protected-count metrics per K, if it has any
  (:mod:`triehh.runs.count_metrics`)."""
  counted = per_k[per_k["metric"].isin(("count_error", "count_coverage"))]
  if counted.empty:
    return
  print("  protected counts of the true top-K words: median relative error "
        "(capped at 1,\n  1 for a word not found) and interval coverage "
        "(share of the found ones whose\n  interval holds the truth)")
  _print_k_rows(counted, ("count_error", "count_coverage"), digits=4)


def _print_k_rows(per_k: pd.DataFrame, bases: Sequence[str],
                  digits: int = 3) -> None:
  """A header and one row per K of the metrics ``bases`` (``-`` where a K
  has none)."""
  print(f"  {'K':>5}  " + "  ".join(f"{b + '@K':>17}" for b in bases))
  for k, at_k in per_k.groupby("k", sort=True):
    cells = []
    for base in bases:
      hit = at_k[at_k["metric"] == base]
      cells.append(_row_cell(hit, digits) if not hit.empty else "-")
    print(f"  {int(k):>5}  " + "  ".join(f"{c:>17}" for c in cells))


def print_compact_table(groups: Sequence[Group], table: pd.DataFrame,
                        k: int) -> None:
  """Table 2 of the paper: recall@k and precision per configuration."""
  rows = []
  for index, group in enumerate(groups):
    mine = table[table["config_id"] == index]
    recall = mine[(mine["metric"] == "recall") & (mine["k"] == k)]
    precision = mine[(mine["metric"] == "precision") & mine["k"].isna()]
    if recall.empty or precision.empty:
      continue
    name = group.get("algorithm")
    if group.get("top_t") is not None:
      name += f" (T={group.get('top_t')})"
    if group.get("strategy") is not None:
      name += f" ({group.get('strategy')})"
    eps = group.get("epsilon")
    if name == "iblt":  # k-anonymity, no epsilon
      name += f" (k={group.get('k_anonymity')})"
      eps = "none"
    elif eps is not None:
      eps = analysis.epsilon_text(group)
    rows.append((name, f"{group.get('dataset')} {group.get('setting')}",
                 f"{group.get('n_users'):,}", eps or "?",
                 str(int(recall["runs"].iloc[0])),
                 _row_cell(recall), _row_cell(precision),
                 group.variant))
  if not rows:
    ks = sorted({int(v) for v in table.loc[table["metric"] == "recall", "k"]
                 .dropna()})
    if ks and k not in ks:  # say why the table is missing
      print(f"\nno Table 2: the records hold recall at K in "
            f"{', '.join(map(str, ks))}, not --table_k={k}", file=sys.stderr)
    return
  header = ("algorithm", "data", "n", "epsilon", "runs", f"recall@{k}",
            "precision", "")
  widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
  print()
  print(f"Recall at K={k} and precision (the paper's Table 2):")
  for r in [header] + rows:
    print("  " + "  ".join(c.ljust(w) if i < 2 or i == 7 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))).rstrip())
  note = analysis.ceiling_note(groups)
  if note:
    print(f"  {note}")


def print_discovery_table(groups: Sequence[Group], table: pd.DataFrame,
                          notes: Sequence[str]) -> None:
  """The binned discovery rates next to Proposition 2's bounds."""
  print()
  print("Discovery rate per true word over the runs, averaged per frequency "
        "bin, next to\nProposition 2's worst-case rate (levels = L + 1, the "
        "worst case over word lengths)\nat the bin's mid frequency and "
        "averaged over the bin's words:")
  for note in notes:
    print(f"  note: {note}")
  if table.empty:
    return
  for index, group in enumerate(groups):
    rows = table[table["config_id"] == index]
    if rows.empty:
      continue
    first = rows.iloc[0]
    print()
    print(f"{group.label}: {first['runs']} runs, {first['levels']} levels")
    print(f"  {'frequency bin':>21}  {'mid':>8}  {'words':>6}  {'rate':>6}  "
          f"{'bound(mid)':>10}  {'bound(words)':>12}")
    for _, row in rows.iterrows():
      def fmt(v, width):
        return f"{'-':>{width}}" if math.isnan(v) else f"{v:>{width}.3f}"
      print(f"  [{row['freq_low']:.2e}, {row['freq_high']:.2e}]  "
            f"{row['freq_mid']:>8.2e}  {row['words']:>6}  "
            f"{fmt(row['rate'], 6)}  {fmt(row['bound_mid'], 10)}  "
            f"{fmt(row['bound_words'], 12)}")


# ---- driver ----------------------------------------------------------------

def _discovery_csv_path(path: str) -> str:
  stem, ext = os.path.splitext(path)
  return f"{stem}_discovery{ext or '.csv'}"


def check_csv_out(path: str | None) -> None:
  """Refuses a ``--csv_out`` that cannot be written, before any printing.

  Raises:
    ValueError: naming the path and the reason (``experiments.paths``): it
      or its discovery CSV is a directory, or its folder cannot be written.
  """
  if not path:
    return
  paths.check_output_file("csv_out", path)
  discovery = _discovery_csv_path(path)
  if os.path.isdir(discovery):
    raise paths.flag_error("csv_out", path,
                           paths.os_error(errno.EISDIR, discovery))


def _plots():
  """:mod:`reports.plots`, imported (with matplotlib) when asked."""
  from reports import plots  # pylint: disable=g-import-not-at-top
  return plots


def check_plot_dir(path: str | None) -> None:
  """Makes ``--plot_dir`` if needed and refuses one that cannot hold the
  figures (not a folder, not writable, a figure's name taken by a folder).

  Raises:
    ValueError: naming the flag, the path and the reason.
  """
  if not path:
    return
  paths.check_dir("plot_dir", path, create=True)
  for name in _plots().FIGURES:
    for ext in (".png", ".csv"):
      target = os.path.join(path, name + ext)
      if os.path.isdir(target):
        raise paths.flag_error("plot_dir", path,
                               paths.os_error(errno.EISDIR, target))


def _output_dirs() -> list[str]:
  return ([d for d in FLAGS.output_dir.split(",") if d]
          if FLAGS.output_dir else [])


def _inputs() -> list[tuple[str, str, str]]:
  """``(flag, value, results file)`` of each results file the flags name
  (a directory stands for its results.jsonl)."""
  named = ([("results", p) for p in FLAGS.results]
           + [("output_dir", d) for d in _output_dirs()])
  return [(flag, given, records_lib.results_path(given)
           if flag == "output_dir" or os.path.isdir(given) else given)
          for flag, given in named]


def check_results() -> None:
  """Refuses a results file or directory the system cannot reach (absent,
  unreadable folder, symbolic-link loop) or that is no regular file (a
  directory, a named pipe, a device), naming the reason.

  Raises:
    ValueError: ``--results=path: reason`` or ``--output_dir=...``.
  """
  for flag, given, path in _inputs():
    try:
      os.stat(path)
    except OSError as err:
      raise paths.flag_error(flag, given, err) from None
    kind = records_lib.file_kind(path)
    if kind is not None:
      raise ValueError(f"--{flag}={given}: {path} is {kind}, not a "
                       "results file")


def _outputs() -> list[tuple[str, str]]:
  """``(flag, file)`` of each file the flags have written."""
  named = []
  if FLAGS.csv_out:
    named += [("csv_out", FLAGS.csv_out),
              ("csv_out", _discovery_csv_path(FLAGS.csv_out))]
  if FLAGS.plot_dir:
    named += [("plot_dir", os.path.join(FLAGS.plot_dir, name + ext))
              for name in _plots().FIGURES for ext in (".png", ".csv")]
  return named


def _same_file(a: str, b: str) -> bool:
  """Whether ``a`` and ``b`` name one file (the same path once links are
  resolved, or the same inode: a hard link)."""
  if os.path.realpath(a) == os.path.realpath(b):
    return True
  try:
    return os.path.samefile(a, b)
  except (OSError, ValueError):  # one is absent: not the other
    return False


def check_outputs_are_not_inputs() -> None:
  """Refuses an output file (``--csv_out``, its discovery CSV, a figure or
  its CSV under ``--plot_dir``) that is one of the results files read:
  writing it would replace the runs.

  Raises:
    ValueError: naming both flags and the file.
  """
  inputs = _inputs()
  for out_flag, out in _outputs():
    for flag, given, path in inputs:
      if _same_file(out, path):
        also = "" if path in (out, given) else f" ({path})"
        raise ValueError(
            f"--{out_flag}={FLAGS[out_flag].value}: {out} is the results "
            f"file read from --{flag}={given}{also}; writing it would "
            f"replace its runs: choose another --{out_flag}")


def check_flags() -> None:
  """Flag combinations, checked before anything is read or printed."""
  if not FLAGS.truth_from_dataset:
    data = [f"--{name}" for name in shared_flags.DATA_FLAGS
            if name != "cache_dir" and not FLAGS[name].using_default_value]
    if data:
      raise ValueError(f"{', '.join(data)}: data-set flags are read only "
                       "with --truth_from_dataset")
  else:
    shared_flags.check_data_flags()
  check_results()
  check_outputs_are_not_inputs()
  check_csv_out(FLAGS.csv_out)
  check_plot_dir(FLAGS.plot_dir)


def _warn_out_of_range(report: analysis.FileReport, shown: int = 5) -> None:
  """One ``warning:`` line per record skipped for its metric values (the
  first ``shown``), naming the file and line."""
  skipped = [b for b in report.bad if b.kind == analysis.OUT_OF_RANGE]
  for line in skipped[:shown]:
    print(f"warning: {line}; record skipped", file=sys.stderr)
  if len(skipped) > shown:
    print(f"warning: skipped {len(skipped) - shown} more records of "
          f"{report.path} for their metric values", file=sys.stderr)


def _write_csv(table: pd.DataFrame, path: str) -> None:
  """Writes ``table`` to ``path`` whole, or not at all: through a side
  file, removed if the write fails (a full disk), whose error names
  ``path``."""
  partial = f"{path}.partial-{os.getpid()}"
  try:
    table.to_csv(partial, index=False)
    os.replace(partial, path)
  except OSError as err:
    with contextlib.suppress(OSError):
      os.remove(partial)
    if not err.strerror:
      raise
    raise OSError(err.errno, err.strerror, path) from None
  print(f"wrote {path}")


def _discovery(groups: Sequence[Group]) -> pd.DataFrame:
  """``--truth_from_dataset``: the discovery rates per bin, printed (and
  written with ``--csv_out``)."""
  if not any(g.get("algorithm") == "triehh" for g in groups):
    raise ValueError("--truth_from_dataset: no TrieHH runs in the results "
                     "(discovery rates and their bound are TrieHH's)")
  start = time.perf_counter()
  dataset = shared_flags.load_dataset()
  print(f"\ndata: {dataset.name} ({dataset.setting}), "
        f"{dataset.population!r}, rebuilt in "
        f"{time.perf_counter() - start:.2f} s")
  rates, notes = analysis.discovery_table(
      groups, dataset.population, dataset.truth, dataset.name,
      dataset.setting, FLAGS.num_bins)
  print_discovery_table(groups, rates, notes)
  if rates.empty:
    # Say why the runs were left out (another population, often another
    # --num_users), not only that none is left.
    why = f": {notes[0]}" if notes else ""
    raise ValueError("--truth_from_dataset: no TrieHH runs on the rebuilt "
                     f"population{why}")
  if FLAGS.csv_out:
    _write_csv(rates, _discovery_csv_path(FLAGS.csv_out))
  return rates


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  check_flags()
  files = analysis.results_paths(FLAGS.results, _output_dirs())
  records, reports = analysis.load_runs(files)
  for report in reports:
    print(report.summary())
    _warn_out_of_range(report)
  skipped = sum(r.num_skipped for r in reports)
  if skipped:
    print(f"skipped {skipped} line{'s' if skipped != 1 else ''} in total "
          "(malformed, foreign, or a record whose metrics are not finite or "
          "out of range)")
  if not records:
    raise ValueError(f"no run records in {', '.join(files)}")
  records, dropped = analysis.deduplicate(records)
  if dropped:
    print(f"dropped {dropped} duplicate run{'s' if dropped != 1 else ''} "
          "(same config_key and seed as an earlier record)")
  groups = analysis.group_runs(records)
  table = analysis.metric_table(groups, FLAGS.confidence)
  print()
  print_metric_table(groups, table, FLAGS.confidence)
  print_compact_table(groups, table, FLAGS.table_k)
  if FLAGS.csv_out:
    _write_csv(table, FLAGS.csv_out)
  rates = _discovery(groups) if FLAGS.truth_from_dataset else None
  if FLAGS.plot_dir:
    print()
    try:
      lines = _plots().draw(FLAGS.plot_dir, groups, table, rates,
                            FLAGS.confidence)
    except OSError as err:  # a full disk: name where it was writing
      raise paths.with_path(err, FLAGS.plot_dir) from None
    print("\n".join(lines))


def run():
  """Console-script entry point (``triehh-summarize``)."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
