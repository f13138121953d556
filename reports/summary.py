"""Analysis of run records: per-file reports, de-duplication, grouping,
intervals and the discovery rate per frequency bin next to Proposition 2.

The library behind ``experiments.summarize`` (its flags and printing) and
any report over ``results.jsonl`` files (:mod:`triehh.runs.records`).

Reading. Records are read by :func:`triehh.runs.records.read` (the one
reader of ``results.jsonl``, which validates each line and refuses records
of earlier layouts) and analysed as :class:`triehh.runs.records.RunRecord`;
a record with a metric not finite or out of range, or whose K (``recall@K``)
is not a whole number of at most ``MAX_K``, is left out too. The
lines left out are counted per file and kind (:class:`FileReport`). A run
without guarantee (``epsilon`` None with ``has_guarantee`` false) is
grouped and shown at epsilon ``inf``.

De-duplication. Records with the same ``config_key`` and ``seed`` are one
run written twice (a rerun, a resumed sweep): the first is kept, the others
counted (:func:`deduplicate`).

Configurations. Runs are pooled only when every field in ``CONFIG_FIELDS``
agrees (so runs at another delta, L, batch size or sketch size are never
averaged together, nor counts at another share or sample rate; a field is
read at the top of a record or in its ``params``, :meth:`RunRecord.get`;
a registered mechanism's runs pool by the privacy fields their ``config``
asked for, ``options``); when two
configurations print alike, a ``variant`` names the fields in which they
differ. IBLT runs are their own algorithm: they have no epsilon
(k-anonymity is not differential privacy; their ``epsilon`` and ``delta``
fields are None here), are told apart by
``k_anonymity`` and the TrieHH target their batch size was matched to
(``matched_epsilon``, ``matched_delta``), and pool by the capacity and
number of rounds their ``config`` asked for (``iblt_capacity``,
``iblt_num_rounds``: ``"auto"`` when not given), since the capacity used
varies with the seed.

Confidence interval. For ``r`` runs of one configuration with metric values
``x_1..x_r``, their mean ``xbar`` and sample standard deviation ``s``
(``ddof=1``), the interval is ``xbar ± t_{(1+c)/2, r-1} * s / sqrt(r)`` with
``t`` the Student t quantile (``scipy.special.stdtrit``, what
``scipy.stats.t.ppf`` calls) and ``c`` the confidence level. One run has no interval (NaN half-width). The metrics
that are proportions (``PROPORTIONS``: precision, recall, F1, the paper's
F1, the counts' error and coverage) have their interval clipped to [0, 1]
(``ci_low``/``ci_high``, ``clipped`` true): clipping keeps the coverage.

Discovery rate and its bound. A word's rate is the share of the runs that
discovered it (``triehh.core.metrics.discovery_rates``); its frequency is its
ground-truth weight over n. Words longer than L characters are left out
(TrieHH cannot report them; the count is noted). The bound of a bin is
``triehh.theory.utility.discovery_rate(W, n, m, theta, levels)`` with the
run's n, batch size m and theta, ``W = floor(f n)`` and ``levels`` = the
record's ``levels`` (L + 1: L characters and the end symbol). A word of k
characters passes only k + 1 levels, so using L + 1 for every word is the
worst case over word lengths, as in Proposition 2 (whose L is the longest
sequence). Two bounds are given per bin: at the bin's geometric mid
frequency (the paper's dashed curve) and averaged over the bin's words
(each at its own count), which the bin's mean rate must exceed (up to
sampling error): the bound holds word by word. There is no bound for
several words per user (the paper's Section 6) nor under a
``max_num_prefixes`` cap (a capped prefix is dropped whatever its votes).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import special

from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.core import validation
from triehh.runs import algorithms as algorithms_lib
from triehh.runs import records as records_lib
from triehh.theory import utility

ALGORITHMS = records_lib.ALGORITHMS
# The results files named by --results and --output_dir.
results_paths = records_lib.results_paths

# Shown for every configuration, in this order.
DISPLAY_FIELDS = ("algorithm", "engine", "dataset", "setting", "n_users",
                  "epsilon", "top_t", "k_anonymity", "matched_epsilon",
                  "strategy")
# Runs are pooled only when all of these agree. "epsilon" here is the
# target epsilon (the achieved one for runs given theta directly; None for
# IBLT runs).
CONFIG_FIELDS = DISPLAY_FIELDS + (
    "delta", "theta", "gamma", "batch_size", "max_length", "levels",
    "num_sub_rounds", "max_num_prefixes", "k", "m", "length",
    "fragment_alphabet", "word_budget", "simulation", "check_puzzle_hash",
    "tff_secure_sum", "tff_max_user_contribution", "matched_delta",
    "iblt_capacity", "iblt_num_rounds", "string_max_bytes",
    "round_draw", "secure_sum_bitwidth", "repetitions", "sampling",
    "sampling_rate", "count_share", "count_sample_rate",
    "max_partitions_contributed", "options")
# IBLT fields read from the record's config (what was asked for): field ->
# config key.
_IBLT_CONFIG = {"iblt_capacity": "capacity", "iblt_num_rounds": "num_rounds"}
# A registered mechanism's configuration field: what its config asked for
# (its privacy object's fields) but these, as JSON; None for the built-in
# algorithms, whose fields above tell their configurations apart.
OPTIONS = "options"
_NOT_OPTIONS = ("algorithm", "engine", "data", "epsilon", "delta")
# CSV columns and variant labels that differ from the record field: SFP's
# sketch size (the flags --cms_k, --cms_m); "k" is the metrics' K.
_COLUMN = {"k": "cms_k", "m": "cms_m"}
_INTEGER_COLUMNS = ("n_users", "top_t", "theta", "batch_size",
                    "max_length", "levels", "num_sub_rounds",
                    "max_num_prefixes", "cms_k", "cms_m", "length", "k",
                    "k_anonymity", "string_max_bytes", "secure_sum_bitwidth",
                    "repetitions", "max_partitions_contributed")
# Metrics that are proportions in [0, 1] (triehh.runs.count_metrics' too):
# their intervals are clipped.
PROPORTIONS = ("precision", "recall", "f1", "f1_paper", "count_error",
               "count_coverage")
OUT_OF_RANGE = "metric not finite or out of range"
# The largest K of a metric ``<base>@<K>``: 2^53, the largest whole number
# every step of the metric table holds exactly (pandas builds its K column,
# blank for the metrics without K, as 64-bit floats before making it
# integers).
MAX_K = 2**53
# The most frequency bins of the discovery rates (a printed row per bin and
# configuration; a vocabulary of a few thousand words leaves most of them
# empty well before).
MAX_BINS = 10_000


@dataclasses.dataclass
class FileReport:
  """What was read from one results file: the number of run records and
  the lines left out (each naming its field)."""

  path: str
  records: int = 0
  bad: list[records_lib.BadLine] = dataclasses.field(default_factory=list)

  @property
  def skipped(self) -> collections.Counter:
    """Lines left out, per kind."""
    return collections.Counter(b.kind for b in self.bad)

  @property
  def skipped_lines(self) -> list[int]:
    return [b.line for b in self.bad]

  @property
  def num_skipped(self) -> int:
    return len(self.bad)

  def summary(self) -> str:
    text = f"{self.path}: {self.records} run records"
    if self.num_skipped:
      reasons = ", ".join(f"{v} {k}" for k, v in sorted(self.skipped.items()))
      shown = ", ".join(str(i) for i in self.skipped_lines[:10])
      more = ", ..." if len(self.skipped_lines) > 10 else ""
      text += (f", {self.num_skipped} lines skipped ({reasons}; line "
               f"{shown}{more})")
    return text


def deduplicate(records: Iterable[records_lib.RunRecord]
                ) -> tuple[list[records_lib.RunRecord], int]:
  """The first record of every ``(config_key, seed)``; how many were dropped.
  Runs that drew fresh entropy have no seed: each is its own run, and only
  a line appended twice (the same record) is dropped."""
  kept, seen, dropped = [], set(), 0
  for record in records:
    key = (record.config_key, json.dumps(record.seed) if record.seed
           is not None else record.to_json())
    if key in seen:
      dropped += 1
      continue
    seen.add(key)
    kept.append(record)
  return kept, dropped


def metric_k(name: str) -> int | None:
  """The K of a metric named ``<base>@<K>`` (ASCII digits), else None."""
  k = name.partition("@")[2]
  return int(k) if k.isascii() and k.isdigit() else None


def metric_problem(metrics: Mapping[str, float]) -> str | None:
  """Why ``metrics`` are no results (not finite, out of range, a K that is
  no whole number of at most ``MAX_K``), or None."""
  for name, value in metrics.items():
    k = name.partition("@")[2]
    if k.isdigit() and not (k.isascii() and len(k) <= len(str(MAX_K))
                            and int(k) <= MAX_K):
      shown = repr(name) if len(name) <= 60 else repr(name[:57] + "...")
      return (f"metrics[{shown}]: K must be a whole number (digits 0-9) "
              f"of at most {MAX_K:,}")
    number = records_lib.as_number(value)
    high = math.inf if name == "num_discovered" else 1
    if number is None or not (math.isfinite(number) and 0 <= number <= high):
      return f"metrics[{name!r}]: {value!r} is not in [0, {high:g}]"
  return None


def load_runs(paths: Iterable[str]
              ) -> tuple[list[records_lib.RunRecord], list[FileReport]]:
  """The run records of ``paths`` (:func:`records_lib.read`) but those with
  a :func:`metric_problem`; per file, what was read and left out."""
  records, reports = [], []
  for path in paths:
    numbered, bad = records_lib.read_numbered(path)
    problems = [records_lib.BadLine(path, line, OUT_OF_RANGE, problem)
                for line, r in numbered
                if (problem := metric_problem(r.metrics))]
    if problems:
      bad = sorted(bad + problems, key=lambda b: b.line)
      left_out = {b.line for b in problems}
      numbered = [(line, r) for line, r in numbered if line not in left_out]
    records += [r for _, r in numbered]
    reports.append(FileReport(path, len(numbered), bad))
  return records, reports


def _target_epsilon(record: records_lib.RunRecord) -> float:
  """The epsilon asked for, else the one achieved; ``inf`` without
  guarantee."""
  if record.target_epsilon is not None:
    return record.target_epsilon
  if not record.has_guarantee or record.epsilon is None:
    return math.inf
  return record.epsilon


def _target_delta(record: records_lib.RunRecord) -> float | None:
  return record.delta if record.target_delta is None else record.target_delta


def config_of(record: records_lib.RunRecord) -> tuple:
  """The values of ``CONFIG_FIELDS`` for a record (None where absent)."""
  values = []
  iblt = record.algorithm == "iblt"
  for field in CONFIG_FIELDS:
    if iblt and field in ("epsilon", "delta"):
      value = None  # k-anonymity: no (epsilon, delta)
    elif field in _IBLT_CONFIG:
      value = None
      if iblt:
        value = record.config.get(_IBLT_CONFIG[field])
        value = "auto" if value is None else value
    elif field == "epsilon":
      value = _target_epsilon(record)
    elif field == "delta":
      value = _target_delta(record)
    elif field == "n_users":
      value = int(record.n_users)
    elif field == "sampling":  # fixed-size runs, old and new, pool together
      value = "poisson" if record.get("sampling") == "poisson" else None
    elif field == OPTIONS:
      value = (None if record.algorithm in ALGORITHMS else json.dumps(
          {k: v for k, v in record.config.items() if k not in _NOT_OPTIONS},
          sort_keys=True, default=str))
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
  """Built-in algorithms in their order, then registered mechanisms by
  name; then the configuration's fields."""
  algorithm = config[0]
  order = (ALGORITHMS.index(algorithm) if algorithm in ALGORITHMS
           else len(ALGORITHMS))
  return (order, str(algorithm)) + tuple(_sort_value(v) for v in config[1:])


# A target epsilon the mechanism cannot use: its runs achieve less than
# this share of it (a calibration lands within a few percent of its target).
CEILING_SHARE = 0.9


@dataclasses.dataclass
class Group:
  """The runs of one configuration."""

  config: tuple
  records: list[records_lib.RunRecord]
  variant: str = ""

  def get(self, field: str):
    return self.config[CONFIG_FIELDS.index(field)]

  @property
  def label(self) -> str:
    """One line naming the configuration (its algorithm's adapter's label,
    :mod:`triehh.runs.algorithms`, then the ``variant``)."""
    first = self.records[0]
    values = dict(first.flat() if isinstance(first, records_lib.RunRecord)
                  else first)
    values.update(zip(CONFIG_FIELDS, self.config))
    parts = [algorithms_lib.get(self.get("algorithm")).label(values)]
    if ceiling(self) is not None:
      asked = f"epsilon={self.get('epsilon'):g}"
      parts[0] = (parts[0].replace(asked, f"epsilon={epsilon_text(self)}", 1)
                  if asked in parts[0] else
                  f"{parts[0]}, epsilon={epsilon_text(self)}")
    if self.variant:
      parts.append(self.variant)
    return ", ".join(parts)


def ceiling(group: Group) -> float | None:
  """The epsilon the runs of ``group`` achieve when it is clearly below
  the target they asked for (under ``CEILING_SHARE`` of it): the
  mechanism's ceiling there, which a larger target does not raise; else
  None (and for runs given their parameters, without a target)."""
  target = group.get("epsilon")
  if target is None or not math.isfinite(target):
    return None
  achieved = [r.epsilon for r in group.records
              if r.target_epsilon is not None and r.epsilon is not None]
  if not achieved or max(achieved) >= CEILING_SHARE * target:
    return None
  return max(achieved)


def epsilon_text(group: Group) -> str:
  """The target epsilon of ``group`` as tables and legends name it:
  ``8``, or at a :func:`ceiling` ``8 (ceiling: achieves 4.04)``."""
  target, reached = group.get("epsilon"), ceiling(group)
  text = "?" if target is None else f"{target:g}"
  return text if reached is None else (
      f"{text} (ceiling: achieves {reached:.3g})")


def ceiling_note(groups: Sequence[Group]) -> str | None:
  """One line under a table with a :func:`ceiling`, saying what it
  means; None without one."""
  hit = [g for g in groups if ceiling(g) is not None]
  if not hit:
    return None
  shown = "; ".join(f"{g.get('algorithm')} at n={g.get('n_users'):,} "
                    f"asked epsilon={g.get('epsilon'):g}, achieves "
                    f"{ceiling(g):.3g}" for g in hit)
  return (f"note: {shown}: the mechanism's ceiling there (a larger target "
          "does not raise it), so the row's guarantee is the achieved one.")


def group_runs(records: Iterable[records_lib.RunRecord]) -> list[Group]:
  """Records grouped by configuration, in a stable display order."""
  by_config: dict[tuple, list[records_lib.RunRecord]] = {}
  for record in records:
    by_config.setdefault(config_of(record), []).append(record)
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
  validation.check_probability("confidence", confidence)
  mean = float(x.mean())
  if x.size == 1:
    return mean, math.nan, math.nan
  std = float(x.std(ddof=1))
  t = float(special.stdtrit(x.size - 1, (1 + confidence) / 2))
  return mean, std, t * std / math.sqrt(x.size)


def relative_half_width(mean: float, half: float, c_mean: float,
                        c_half: float) -> float:
  """The relative half-width of ``mean / c_mean`` from both relative
  half-widths, added in quadrature (a zero mean adds nothing)."""
  return math.hypot(half / mean if mean else 0.0,
                    c_half / c_mean if c_mean else 0.0)


def _metric_order(name: str) -> tuple:
  base = name.partition("@")[0]
  k = metric_k(name)
  if k is not None:
    return (0, k, ("precision", "recall", "f1").index(base)
            if base in ("precision", "recall", "f1") else 3, base)
  return (1, 0, {"precision": 0, "num_discovered": 1}.get(name, 2), name)


def _config_columns(index: int, group: Group) -> dict:
  """CSV columns naming a configuration: its id, fields and variant."""
  fields = {_COLUMN.get(field, field): value
            for field, value in zip(CONFIG_FIELDS, group.config)}
  return {"config_id": index, **fields, "variant": group.variant}


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


def ranked(group: Group) -> bool:
  """Whether ``group``'s words come ranked (:func:`scored_metrics`)."""
  return algorithms_lib.ranked(group.get("algorithm"))


def scored_metrics(record: records_lib.RunRecord) -> dict[str, float]:
  """``record``'s metrics, but those that mean nothing for it: an
  unranked set's precision@K and F1@K (records written before they were
  dropped: :func:`triehh.core.metrics.set_metrics`)."""
  if algorithms_lib.ranked(record.algorithm):
    return dict(record.metrics)
  return metrics.set_metrics(record.metrics)


def _metric_values(groups: Sequence[Group]) -> pd.DataFrame:
  """One row per (configuration, run, metric): ``config_id, name, value``
  (:func:`scored_metrics`)."""
  rows = [(index, name, records_lib.as_number(value))
          for index, group in enumerate(groups) for r in group.records
          for name, value in scored_metrics(r).items()]
  return pd.DataFrame(rows, columns=["config_id", "name", "value"])


def metric_table(groups: Sequence[Group], confidence: float) -> pd.DataFrame:
  """One row per (configuration, metric): runs, mean, std and interval.

  ``ci_low``/``ci_high`` of the proportions are clipped to [0, 1]
  (``clipped`` says where); ``half_width`` is the unclipped one.
  """
  rows = []
  for (index, name), column in _metric_values(groups).groupby(
      ["config_id", "name"], sort=False)["value"]:
    mean, std, half = mean_interval(column.to_numpy(), confidence)
    base, k = name.partition("@")[0], metric_k(name)
    low, high = mean - half, mean + half
    clipped = False
    if base in PROPORTIONS and not math.isnan(half):
      clipped = low < 0 or high > 1
      low, high = max(low, 0.0), min(high, 1.0)
    rows.append((index, _metric_order(name), {
        **_config_columns(index, groups[index]), "runs": len(column),
        "metric": base, "k": k,
        "mean": mean, "std": std, "half_width": half,
        "ci_low": low, "ci_high": high, "clipped": clipped}))
  rows.sort(key=lambda row: row[:2])
  return _frame([row for _, _, row in rows])

# ---- discovery rate vs frequency -------------------------------------------


def frequency_bins(frequencies: np.ndarray, num_bins: int) -> np.ndarray:
  """``num_bins + 1`` log-spaced edges from the lowest to the highest value."""
  if not 1 <= num_bins <= MAX_BINS:
    raise ValueError(f"--num_bins must be from 1 to {MAX_BINS:,}, got "
                     f"{num_bins}")
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


def _other_population(group: Group, name: str, setting: str,
                      population: population_lib.Population) -> str | None:
  """The note leaving ``group`` out if its runs are not on ``population``."""
  facts = {"dataset": group.get("dataset"), "setting": group.get("setting"),
           "n": group.get("n_users"), "L": group.get("max_length")}
  rebuilt = {"dataset": name, "setting": setting, "n": population.num_users,
             "L": population.max_length}
  if facts == rebuilt:
    return None
  differ = ", ".join(f"{k}={facts[k]} (rebuilt: {rebuilt[k]})"
                     for k in facts if facts[k] != rebuilt[k])
  return (f"{group.label}: left out, its runs are on another population "
          f"({differ}); give the data-set flags the runs used")


def _bound(group: Group, n: int):
  """The bound on a word's discovery rate in ``group``'s runs, as a function
  of the word's count(s)."""
  theta, batch, levels = (int(group.get(field))
                          for field in ("theta", "batch_size", "levels"))
  rate = group.get("sampling_rate")
  if group.get("sampling") == "poisson":  # each user with probability q
    def bound(count):
      return utility.poisson_discovery_rate(count, rate, theta, levels)
  else:  # Proposition 2: a batch of m users
    def bound(count):
      return utility.discovery_rate(count, n, batch, theta, levels)
  return bound


def discovery_table(groups: Sequence[Group],
                    population: population_lib.Population,
                    truth: Mapping[str, float], name: str, setting: str,
                    num_bins: int) -> tuple[pd.DataFrame, list[str]]:
  """Per TrieHH group run on ``population``: binned discovery rates, bounds.

  Args:
    groups: the configurations (:func:`group_runs`).
    population, truth: the rebuilt population and its ground truth.
    name, setting: the data set's name and setting, as the records say.
    num_bins: log-spaced frequency bins.

  Returns:
    One row per (group, bin) and the notes to print (groups left out, words
    too long to be discovered).
  """
  n = population.num_users
  notes = []
  words_all = list(truth)
  weights_all = np.array([truth[w] for w in words_all])
  rows = []
  for index, group in enumerate(groups):
    if group.get("algorithm") != "triehh":
      continue
    note = _other_population(group, name, setting, population)
    if note:
      notes.append(note)
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
    rates = metrics.discovery_rates([r.discovered for r in group.records],
                                    words)
    reason = _bound_reason(group, population.is_single_word)
    if reason:
      notes.append(f"{group.label}: {reason}")
    bound = None if reason else _bound(group, n)
    word_bounds = (bound(np.floor(weights + 1e-9).astype(np.int64))
                   if bound else None)
    columns = {**_config_columns(index, group), "runs": len(group.records)}
    rows += _bin_rows(columns, edges, which, rates, n, bound, word_bounds)
  return _frame(rows), notes


def _bin_rows(columns: Mapping, edges: np.ndarray, which: np.ndarray,
              rates: np.ndarray, n: int, bound, word_bounds) -> list[dict]:
  """A group's row per bin: ``columns``, the bin, its words' mean rate and
  the bounds (NaN without ``bound``)."""
  rows = []
  for b in range(len(edges) - 1):
    inside = which == b
    lo, hi = float(edges[b]), float(edges[b + 1])
    mid = math.sqrt(lo * hi)
    row = {**columns, "bin": b, "freq_low": lo, "freq_high": hi,
           "freq_mid": mid, "words": int(inside.sum()),
           "rate": float(rates[inside].mean()) if inside.any() else math.nan,
           "bound_mid": math.nan, "bound_words": math.nan}
    if bound is not None:
      row["bound_mid"] = bound(math.floor(mid * n))
      if inside.any():
        row["bound_words"] = float(word_bounds[inside].mean())
    rows.append(row)
  return rows
