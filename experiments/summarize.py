"""Summarises run_triehh / run_sfp results as the paper reports them.

Reads the ``results.jsonl`` files the drivers write and prints:

1. Per configuration (algorithm, engine, data set, setting, n, target
   epsilon, SFP's threshold T): the number of runs and, for every metric in
   the records (``precision@K``, ``recall@K``, ``f1@K``, ``precision``,
   ``num_discovered``), the mean over runs with a confidence interval (the
   F1-vs-K figures and Table 2 of the paper as a table), then Table 2's
   compact view (recall at ``--table_k`` and precision).
2. With ``--truth_from_dataset``: the population is rebuilt from the same
   data-set flags the runs used (``common.load_dataset``, from the cache when
   there is one) and, per TrieHH configuration, the discovery rate of each
   true word over the runs is averaged within log-spaced frequency bins and
   printed next to Proposition 2's worst-case rate (the paper's "frequency
   vs. discovery rate with the theoretical lower bound" figure).

  python -m experiments.summarize --output_dir=out_eps1,out_eps4
  python -m experiments.summarize --results=out/results.jsonl \
      --truth_from_dataset --num_users=200000 --csv_out=summary.csv

Confidence interval. For ``r`` runs of one configuration with metric values
``x_1..x_r``, their mean ``xbar`` and sample standard deviation ``s``
(``ddof=1``), the interval is ``xbar ± t_{(1+c)/2, r-1} * s / sqrt(r)`` with
``t`` the Student t quantile (``scipy.stats.t.ppf``) and ``c`` =
``--confidence`` (0.95).
One run has no interval (its half-width is NaN in the CSV).

Configurations. Runs are pooled only when every field in ``CONFIG_FIELDS``
agrees (so runs at another delta, L, batch size or sketch size are never
averaged together); when two configurations print alike, a ``variant``
column names the fields in which they differ.

Discovery rate and its bound. A word's rate is the share of the runs that
discovered it (``triehh.metrics.discovery_rates``); its frequency is its
ground-truth weight over n. Words longer than L characters are left out
(TrieHH cannot report them; the count is printed). The bound of a bin is
``triehh.theory.utility.discovery_rate(W, n, m, theta, levels)`` with the run's n,
batch size m and theta, ``W = floor(f n)`` and ``levels`` = the record's
``levels`` (L + 1: L characters and the end symbol). A word of k characters
passes only k + 1 levels, so using L + 1 for every word is the worst case
over word lengths, as in Proposition 2 (whose L is the longest sequence).
Two bounds are printed per bin: at the bin's geometric mid frequency (the
paper's dashed curve) and averaged over the bin's words (each at its own
count); the bin's mean rate must exceed the latter, up to sampling error,
because the bound holds word by word. There is no bound for several words
per user (the paper's Section 6) nor under a ``max_num_prefixes`` cap (a
capped prefix is dropped however many votes it has).

Input lines that are not JSON, or JSON that is not a run record of
run_triehh/run_sfp, are skipped and counted per file; blank lines are
ignored. A missing file or a directory without results.jsonl is an error.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence

from absl import app
from absl import flags
import numpy as np
import pandas as pd
from scipy import stats

from experiments import common
from triehh import metrics
from triehh.theory import utility

FLAGS = flags.FLAGS

flags.DEFINE_list("results", [],
                  "results.jsonl files to read (a directory stands for its "
                  "results.jsonl). --output_dir also accepts directories, "
                  "comma separated.")
flags.DEFINE_bool("truth_from_dataset", False,
                  "Rebuild the population from the data-set flags the runs "
                  "used (e.g. --num_users, --dataset, --data_path) and print "
                  "the discovery rate per frequency bin next to "
                  "Proposition 2's bound (TrieHH runs).")
flags.DEFINE_integer("num_bins", 12,
                     "Log-spaced word-frequency bins of the discovery rates.")
flags.DEFINE_float("confidence", 0.95, "Confidence level of the intervals.")
flags.DEFINE_integer("table_k", 50,
                     "K of the compact recall@K / precision table (Table 2).")
flags.DEFINE_string("csv_out", None,
                    "Write the metric table as CSV (one row per configuration "
                    "and metric) to this path, and the discovery rates to "
                    "<stem>_discovery<ext> next to it.")

RESULTS_FILE = "results.jsonl"
ALGORITHMS = ("triehh", "sfp")

# Shown for every configuration, in this order.
DISPLAY_FIELDS = ("algorithm", "engine", "dataset", "setting", "n_users",
                  "epsilon", "threshold")
# Runs are pooled only when all of these agree. "epsilon" here is the
# target epsilon (the achieved one for runs given theta directly).
CONFIG_FIELDS = DISPLAY_FIELDS + (
    "delta", "theta", "gamma", "batch_size", "max_length", "levels",
    "num_sub_rounds", "max_num_prefixes", "k", "m", "length",
    "fragment_alphabet", "word_budget", "simulation", "check_puzzle_hash",
    "tff_secure_sum", "tff_max_user_contribution")
# CSV columns and variant labels that differ from the record field: SFP's
# sketch size (the flags --cms_k, --cms_m); "k" is the metrics' K.
_COLUMN = {"k": "cms_k", "m": "cms_m"}
_INTEGER_COLUMNS = ("n_users", "threshold", "theta", "batch_size",
                    "max_length", "levels", "num_sub_rounds",
                    "max_num_prefixes", "cms_k", "cms_m", "length", "k")
# What a run_triehh / run_sfp record must hold to be summarised.
_REQUIRED = {"triehh": ("n_users", "theta", "batch_size", "levels",
                        "max_length"),
             "sfp": ("n_users", "threshold")}

_SKIP_JSON = "not JSON"
_SKIP_FOREIGN = "not a run_triehh/run_sfp record"
_SKIP_FIELDS = "run record with missing or bad fields"


@dataclasses.dataclass
class FileReport:
  """What was read from one results file."""

  path: str
  records: int = 0
  skipped: collections.Counter = dataclasses.field(
      default_factory=collections.Counter)
  skipped_lines: list[int] = dataclasses.field(default_factory=list)

  @property
  def num_skipped(self) -> int:
    return sum(self.skipped.values())

  def summary(self) -> str:
    text = f"{self.path}: {self.records} run records"
    if self.num_skipped:
      reasons = ", ".join(f"{v} {k}" for k, v in sorted(self.skipped.items()))
      shown = ", ".join(str(i) for i in self.skipped_lines[:10])
      more = ", ..." if len(self.skipped_lines) > 10 else ""
      text += (f", {self.num_skipped} lines skipped ({reasons}; line "
               f"{shown}{more})")
    return text


def _number(value) -> float | None:
  """A JSON number, or a float written as a string ("inf", "nan"); else None."""
  if isinstance(value, bool):
    return None
  if isinstance(value, (int, float)):
    return float(value)
  if isinstance(value, str):
    try:
      return float(value)
    except ValueError:
      return None
  return None


def _check_record(record) -> str | None:
  """Why ``record`` cannot be summarised, or None if it can."""
  if not isinstance(record, dict) or record.get("algorithm") not in ALGORITHMS:
    return _SKIP_FOREIGN
  values = record.get("metrics")
  if not isinstance(values, dict) or not values or any(
      _number(v) is None for v in values.values()):
    return _SKIP_FIELDS
  discovered = record.get("discovered")
  if not isinstance(discovered, list) or not all(
      isinstance(w, str) for w in discovered):
    return _SKIP_FIELDS
  for field in _REQUIRED[record["algorithm"]]:
    if _number(record.get(field)) is None:
      return _SKIP_FIELDS
  return None


def results_paths(results: Sequence[str], output_dirs: Sequence[str]
                  ) -> list[str]:
  """The results files named by ``--results`` and ``--output_dir``.

  Raises:
    FileNotFoundError: naming the first file that does not exist.
    ValueError: if no file is named.
  """
  paths = []
  for given in list(results) + [os.path.join(d, RESULTS_FILE)
                                for d in output_dirs]:
    path = os.path.join(given, RESULTS_FILE) if os.path.isdir(given) else given
    if not os.path.isfile(path):
      raise FileNotFoundError(f"results file not found: {path}")
    if os.path.realpath(path) not in {os.path.realpath(p) for p in paths}:
      paths.append(path)
  if not paths:
    raise ValueError("give the results to summarise: --results=FILE[,FILE] "
                     "or --output_dir=DIR[,DIR]")
  return paths


def read_records(paths: Iterable[str]) -> tuple[list[dict], list[FileReport]]:
  """The run records of ``paths`` and, per file, what was read and skipped."""
  records, reports = [], []
  for path in paths:
    report = FileReport(path)
    with open(path, "rb") as f:
      for number, raw in enumerate(f, start=1):
        if not raw.strip():
          continue
        try:
          record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
          reason = _SKIP_JSON
        else:
          reason = _check_record(record)
        if reason is None:
          records.append(record)
          report.records += 1
        else:
          report.skipped[reason] += 1
          report.skipped_lines.append(number)
    reports.append(report)
  return records, reports


def _target_epsilon(record: Mapping) -> float | None:
  target = _number(record.get("target_epsilon"))
  return target if target is not None else _number(record.get("epsilon"))


def _target_delta(record: Mapping) -> float | None:
  target = _number(record.get("target_delta"))
  return target if target is not None else _number(record.get("delta"))


def config_of(record: Mapping) -> tuple:
  """The values of ``CONFIG_FIELDS`` for a record (None where absent)."""
  values = []
  for field in CONFIG_FIELDS:
    if field == "epsilon":
      value = _target_epsilon(record)
    elif field == "delta":
      value = _target_delta(record)
    elif field == "n_users":
      value = int(_number(record[field]))
    else:
      value = record.get(field)
      if isinstance(value, (list, dict)):
        value = json.dumps(value, sort_keys=True)
    values.append(value)
  return tuple(values)


def _sort_value(value):
  if value is None:
    return (2, 0, "")
  if isinstance(value, (int, float)) and not isinstance(value, bool):
    return (0, value, "")
  return (1, 0, str(value))


def _config_sort_key(config: tuple) -> tuple:
  algorithm = config[0]
  order = ALGORITHMS.index(algorithm) if algorithm in ALGORITHMS else 99
  return (order,) + tuple(_sort_value(v) for v in config[1:])


@dataclasses.dataclass
class Group:
  """The runs of one configuration."""

  config: tuple
  records: list[dict]
  variant: str = ""

  def get(self, field: str):
    return self.config[CONFIG_FIELDS.index(field)]

  @property
  def label(self) -> str:
    """One line naming the configuration."""
    parts = [self.get("algorithm")]
    if self.get("engine") is not None:
      parts[0] += f" ({self.get('engine')} engine)"
    parts.append(f"{self.get('dataset')} {self.get('setting')}")
    parts.append(f"n={self.get('n_users'):,}")
    eps = self.get("epsilon")
    parts.append(f"epsilon={eps:g}" if eps is not None else "epsilon=?")
    delta = self.get("delta")
    if delta is not None:
      parts.append(f"delta={delta:.3g}")
    if self.get("threshold") is not None:
      parts.append(f"T={self.get('threshold')}")
    if self.get("theta") is not None:
      parts.append(f"theta={self.get('theta')}, m={self.get('batch_size')}")
    local = _number(self.records[0].get("epsilon_local"))
    if local is not None:
      parts.append(f"local epsilon={local:.3f}")
    if self.variant:
      parts.append(self.variant)
    return ", ".join(parts)


def group_runs(records: Iterable[Mapping]) -> list[Group]:
  """Records grouped by configuration, in a stable display order."""
  by_config: dict[tuple, list[dict]] = {}
  for record in records:
    by_config.setdefault(config_of(record), []).append(dict(record))
  groups = [Group(c, by_config[c])
            for c in sorted(by_config, key=_config_sort_key)]
  shown = len(DISPLAY_FIELDS)
  by_display = collections.defaultdict(list)
  for group in groups:
    by_display[group.config[:shown]].append(group)
  for alike in by_display.values():
    if len(alike) < 2:
      continue
    differ = [i for i in range(shown, len(CONFIG_FIELDS))
              if len({g.config[i] for g in alike}) > 1]
    names = [_COLUMN.get(CONFIG_FIELDS[i], CONFIG_FIELDS[i]) for i in differ]
    for group in alike:
      group.variant = " ".join(f"{name}={group.config[i]}"
                               for name, i in zip(names, differ))
  return groups


def mean_interval(values: Sequence[float], confidence: float = 0.95
                  ) -> tuple[float, float, float]:
  """Mean, sample standard deviation and Student-t interval half-width.

  Half-width ``t.ppf((1 + confidence) / 2, r - 1) * s / sqrt(r)`` for ``r``
  values with sample standard deviation ``s``; NaN (with ``s``) for r = 1.
  """
  x = np.asarray(values, dtype=np.float64)
  if x.size == 0:
    raise ValueError("no values")
  if not 0 < confidence < 1:
    raise ValueError(f"confidence must be in (0, 1), got {confidence}")
  mean = float(x.mean())
  if x.size == 1:
    return mean, math.nan, math.nan
  std = float(x.std(ddof=1))
  t = float(stats.t.ppf((1 + confidence) / 2, x.size - 1))
  return mean, std, t * std / math.sqrt(x.size)


def _metric_order(name: str) -> tuple:
  base, _, k = name.partition("@")
  if k.isdigit():
    return (0, int(k), ("precision", "recall", "f1").index(base)
            if base in ("precision", "recall", "f1") else 3, base)
  return (1, 0, {"precision": 0, "num_discovered": 1}.get(name, 2), name)


def _config_columns(index: int, group: Group) -> dict:
  """CSV columns naming a configuration: its id, fields and variant."""
  row = {"config_id": index}
  for field, value in zip(CONFIG_FIELDS, group.config):
    row[_COLUMN.get(field, field)] = value
  row["variant"] = group.variant
  return row


def _frame(rows: Sequence[Mapping]) -> pd.DataFrame:
  """Rows as a table whose integer columns stay integers next to blanks."""
  table = pd.DataFrame(rows)
  for column in _INTEGER_COLUMNS:
    if column in table:
      try:
        table[column] = table[column].astype("Int64")
      except (TypeError, ValueError):  # a non-integer value: keep it as is
        pass
  return table


def metric_table(groups: Sequence[Group], confidence: float) -> pd.DataFrame:
  """One row per (configuration, metric): runs, mean, std and interval."""
  rows = []
  for index, group in enumerate(groups):
    names = sorted({m for r in group.records for m in r["metrics"]},
                   key=_metric_order)
    for name in names:
      values = [_number(r["metrics"][name]) for r in group.records
                if name in r["metrics"]]
      mean, std, half = mean_interval(values, confidence)
      base, _, k = name.partition("@")
      rows.append({**_config_columns(index, group), "runs": len(values),
                   "metric": base, "k": int(k) if k.isdigit() else None,
                   "mean": mean, "std": std, "half_width": half,
                   "ci_low": mean - half, "ci_high": mean + half})
  return _frame(rows)


def _cell(mean: float, half: float, digits: int = 3) -> str:
  if math.isnan(half):
    return f"{mean:.{digits}f}"
  return f"{mean:.{digits}f} ± {half:.{digits}f}"


def print_metric_table(groups: Sequence[Group], table: pd.DataFrame,
                       confidence: float) -> None:
  """The per-configuration blocks: K rows of precision, recall and F1."""
  level = f"{confidence:.0%}"
  print(f"Mean over runs ± half-width of the {level} Student t interval, "
        f"t((1+{confidence:g})/2, r-1) * s / sqrt(r)\n(s: sample standard "
        "deviation, r: runs; one run: no interval).")
  for index, group in enumerate(groups):
    rows = table[table["config_id"] == index]
    runs = int(rows["runs"].max())
    seeds = {r.get("seed") for r in group.records}
    note = ""
    if len(seeds) < len(group.records):
      note = (f"  [warning: {len(group.records)} records but "
              f"{len(seeds)} distinct seeds: runs appended twice?]")
    print()
    print(f"{group.label}: {runs} run{'s' if runs != 1 else ''}{note}")
    per_k = rows[rows["k"].notna()]
    if not per_k.empty:
      print(f"  {'K':>5}  {'precision@K':>17}  {'recall@K':>17}  "
            f"{'f1@K':>17}")
      for k, at_k in per_k.groupby("k", sort=True):
        cells = []
        for base in ("precision", "recall", "f1"):
          hit = at_k[at_k["metric"] == base]
          cells.append(_cell(hit["mean"].iloc[0], hit["half_width"].iloc[0])
                       if not hit.empty else "-")
        print(f"  {int(k):>5}  " + "  ".join(f"{c:>17}" for c in cells))
    for _, row in rows[rows["k"].isna()].iterrows():
      digits = 1 if row["metric"] == "num_discovered" else 3
      cell = _cell(row["mean"], row["half_width"], digits)
      print(f"  {row['metric']}: {cell}"
            + (f" ({row['runs']} runs)" if row["runs"] != runs else ""))


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
    if group.get("threshold") is not None:
      name += f" (T={group.get('threshold')})"
    eps = group.get("epsilon")
    rows.append((name, f"{group.get('dataset')} {group.get('setting')}",
                 f"{group.get('n_users'):,}",
                 f"{eps:g}" if eps is not None else "?",
                 str(int(recall["runs"].iloc[0])),
                 _cell(recall["mean"].iloc[0], recall["half_width"].iloc[0]),
                 _cell(precision["mean"].iloc[0],
                       precision["half_width"].iloc[0]),
                 group.variant))
  if not rows:
    return
  header = ("algorithm", "data", "n", "epsilon", "runs", f"recall@{k}",
            "precision", "")
  widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
  print()
  print(f"Recall at K={k} and precision (the paper's Table 2):")
  for r in [header] + rows:
    print("  " + "  ".join(c.ljust(w) if i < 2 or i == 7 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))).rstrip())


# ---- discovery rate vs frequency ------------------------------------------


def frequency_bins(frequencies: np.ndarray, num_bins: int) -> np.ndarray:
  """``num_bins + 1`` log-spaced edges from the lowest to the highest value."""
  if num_bins < 1:
    raise ValueError(f"--num_bins must be >= 1, got {num_bins}")
  positive = frequencies[frequencies > 0]
  if positive.size == 0:
    raise ValueError("no word with a positive frequency")
  lo, hi = float(positive.min()), float(positive.max())
  if hi <= lo:
    hi = lo * 1.0001
  return np.geomspace(lo, hi, num_bins + 1)


def _bound_reason(group: Group, single_word: bool) -> str | None:
  """Why Proposition 2 gives no bound for this group, or None."""
  if not single_word:
    return "no worst-case bound for several words per user"
  if group.get("max_num_prefixes") is not None:
    return "no worst-case bound under a max_num_prefixes cap"
  return None


def discovery_table(groups: Sequence[Group], dataset: common.Dataset,
                    num_bins: int) -> tuple[pd.DataFrame, list[str]]:
  """Per TrieHH group matching ``dataset``: binned discovery rates and bounds.

  Returns:
    One row per (group, bin) and the notes to print (groups left out, words
    too long to be discovered).
  """
  pop = dataset.population
  n = pop.num_users
  single_word = pop.is_single_word
  notes = []
  words_all = list(dataset.truth)
  weights_all = np.array([dataset.truth[w] for w in words_all])
  rows = []
  for index, group in enumerate(groups):
    if group.get("algorithm") != "triehh":
      continue
    facts = {"dataset": group.get("dataset"), "setting": group.get("setting"),
             "n": group.get("n_users"), "L": group.get("max_length")}
    rebuilt = {"dataset": dataset.name, "setting": dataset.setting, "n": n,
               "L": pop.max_length}
    if facts != rebuilt:
      differ = ", ".join(f"{k}={facts[k]} (rebuilt: {rebuilt[k]})"
                         for k in facts if facts[k] != rebuilt[k])
      notes.append(f"{group.label}: left out, its runs are on another "
                   f"population ({differ}); give the data-set flags the runs "
                   "used")
      continue
    max_length = int(group.get("max_length"))
    keep = np.array([len(w) <= max_length for w in words_all], dtype=bool)
    if not keep.all():
      notes.append(f"{group.label}: {int((~keep).sum())} words longer than "
                   f"L={max_length} left out (TrieHH cannot report them)")
    words = [w for w, k in zip(words_all, keep) if k]
    weights = weights_all[keep]
    freqs = weights / n
    edges = frequency_bins(freqs, num_bins)
    which = np.clip(np.searchsorted(edges, freqs, side="right") - 1, 0,
                    num_bins - 1)
    rates = metrics.discovery_rates([r["discovered"] for r in group.records],
                                    words)
    reason = _bound_reason(group, single_word)
    if reason:
      notes.append(f"{group.label}: {reason}")
    theta = int(group.get("theta"))
    batch = int(group.get("batch_size"))
    levels = int(group.get("levels"))
    word_bounds = None
    if reason is None:
      counts = np.floor(weights + 1e-9).astype(np.int64)
      word_bounds = utility.discovery_rate(counts, n, batch, theta, levels)
    for b in range(num_bins):
      inside = which == b
      lo, hi = float(edges[b]), float(edges[b + 1])
      mid = math.sqrt(lo * hi)
      row = {**_config_columns(index, group), "runs": len(group.records),
             "bin": b, "freq_low": lo, "freq_high": hi, "freq_mid": mid,
             "words": int(inside.sum()),
             "rate": float(rates[inside].mean()) if inside.any() else math.nan,
             "bound_mid": math.nan, "bound_words": math.nan}
      if reason is None:
        row["bound_mid"] = utility.discovery_rate(
            math.floor(mid * n), n, batch, theta, levels)
        if inside.any():
          row["bound_words"] = float(word_bounds[inside].mean())
      rows.append(row)
  return _frame(rows), notes


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

# Flags of the run drivers that mean nothing to the summariser.
_RUN_FLAGS = ("epsilon", "delta", "num_runs", "seed", "ks")


def _discovery_csv_path(path: str) -> str:
  stem, ext = os.path.splitext(path)
  return f"{stem}_discovery{ext or '.csv'}"


def _write_csv(table: pd.DataFrame, path: str) -> None:
  table.to_csv(path, index=False)
  print(f"wrote {path}")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  given = [f"--{name}" for name in _RUN_FLAGS
           if not FLAGS[name].using_default_value]
  if given:
    raise ValueError(f"{', '.join(given)}: flags of the run drivers; the "
                     "summariser reports every configuration in the results")
  if not 0 < FLAGS.confidence < 1:
    raise ValueError(f"--confidence must be in (0, 1), got {FLAGS.confidence}")
  if FLAGS.num_bins < 1:
    raise ValueError(f"--num_bins must be >= 1, got {FLAGS.num_bins}")
  output_dirs = ([d for d in FLAGS.output_dir.split(",") if d]
                 if FLAGS.output_dir else [])
  paths = results_paths(FLAGS.results, output_dirs)
  records, reports = read_records(paths)
  for report in reports:
    print(report.summary())
  skipped = sum(r.num_skipped for r in reports)
  if skipped:
    print(f"skipped {skipped} malformed or foreign line"
          f"{'s' if skipped != 1 else ''} in total")
  if not records:
    raise ValueError(f"no run records in {', '.join(paths)}")
  groups = group_runs(records)
  table = metric_table(groups, FLAGS.confidence)
  print()
  print_metric_table(groups, table, FLAGS.confidence)
  print_compact_table(groups, table, FLAGS.table_k)
  if FLAGS.csv_out:
    _write_csv(table, FLAGS.csv_out)
  if FLAGS.truth_from_dataset:
    if not any(g.get("algorithm") == "triehh" for g in groups):
      raise ValueError("--truth_from_dataset: no TrieHH runs in the results "
                       "(discovery rates and their bound are TrieHH's)")
    with common.Timer() as load:
      dataset = common.load_dataset()
    print(f"\ndata: {dataset.name} ({dataset.setting}), "
          f"{dataset.population!r}, rebuilt in {load.seconds:.2f} s")
    rates, notes = discovery_table(groups, dataset, FLAGS.num_bins)
    print_discovery_table(groups, rates, notes)
    if rates.empty:
      raise ValueError("--truth_from_dataset: no TrieHH runs on the rebuilt "
                       "population")
    if FLAGS.csv_out:
      _write_csv(rates, _discovery_csv_path(FLAGS.csv_out))


def run():
  """Console-script entry point."""
  common.run_with_errors(main)


if __name__ == "__main__":
  run()
