"""Every flag that two or more drivers read, defined once, and its helpers.

Each flag has one name, one default and one help text here; a driver
declares the flags it reads as its key flags (``flags.declare_key_flag``),
so its ``--help`` lists them, and ``experiments.cli`` refuses the others.
Where a driver's natural default differs from the flag's, the driver says
so in the flag's help and applies it when the flag is not given
(:func:`value_or`): e.g. ``reproduce_paper`` takes the paper's L when
``--max_length`` is not given, ``theory_tables`` epsilon 2.

The groups:

- ``DATA_FLAGS``: the data set (``--dataset``, ``--setting``, ...); what
  each data set is, which flags apply to it and the ``config["data"]`` it
  makes are ``triehh.data.datasets``' (:func:`check_data_flags`,
  :func:`data_options`, :func:`load_dataset`).
- ``RUN_FLAGS``: a run's privacy target, seeds and output (``--epsilon``,
  ``--delta``, ``--max_length``, ``--num_runs``, ``--seed``,
  ``--output_dir``, ``--ks``), and ``--show``.
- TrieHH's parameters given directly (``--theta``, ``--gamma``,
  ``--batch_size``), SFP's (``--top_t``, ``--top_ts``, ``--cms_k``).
- Grids and reports: ``--settings``, ``--epsilons``, ``--workers``,
  ``--report_dir``, ``--confidence``.

Every flag is checked when it is parsed (bounds, formats) and
:func:`check_data_flags` refuses data flags that do not apply to the chosen
data sets, so a mistake ends the driver with one ``error:`` line before any
data is read (see ``experiments.cli``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from absl import flags

from triehh import data as data_lib
from triehh.baselines import count_mean_sketch
from triehh.baselines import sfp
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib
from triehh.data import synthetic
from triehh.runs import records as records_lib

FLAGS = flags.FLAGS
MAX_LENGTH_LIMIT = 1000

# ---- the data set ------------------------------------------------------------

flags.DEFINE_enum("dataset", "default", list(datasets_lib.DATASETS),
                  "Data set: " + "; ".join(
                      f"'{kind.name}' {kind.description}"
                      for kind in datasets_lib.DATASETS.values()) + ".")
flags.DEFINE_integer("num_users", synthetic.DEFAULT_NUM_USERS,
                     "Users in the default and synthetic populations (and "
                     "in the paper population, default: its setting's n); "
                     "audit_privacy: n, users in the base population D "
                     "(default 10,000 there).", lower_bound=1)
flags.DEFINE_string("data_path", None,
                    "Input file of --dataset=sentiment140, file or "
                    "synthetic (paper: a Sentiment140 file for the tail or "
                    "multi); reproduce_paper: the Sentiment140 file of the "
                    "several-words setting (default: the sample, from "
                    "$TRIEHH_SENTIMENT140 or ../shared/data beside the "
                    "repository).")
flags.DEFINE_enum("data_format", "auto",
                  ["auto", "csv", "tsv", "jsonl", "parquet"],
                  "Format of --dataset=file; 'auto' goes by the extension.")
flags.DEFINE_string("data_encoding", None,
                    "Text encoding of the input: utf-8 or latin-1 (default: "
                    "latin-1 for sentiment140, utf-8 otherwise).")
flags.DEFINE_enum("setting", "single", list(datasets_lib.SETTINGS),
                  "The paper's setting: 'single' (each user's most frequent "
                  "word), 'oov' (out-of-vocabulary words, --oov_num_users "
                  "users drawn from their frequencies) or 'multi' (each "
                  "user's words with counts).")
flags.DEFINE_string("user_column", "user",
                    "Column naming the user (--dataset=file).")
flags.DEFINE_string("text_column", "text",
                    "Column holding the text (--dataset=file).")
flags.DEFINE_integer("min_word_length", data_lib.DEFAULT_MIN_LENGTH,
                     "Shortest word kept, in characters.", lower_bound=1)
flags.DEFINE_string("dictionary_path", None,
                    "oov: word-list file of in-vocabulary words (one per "
                    "line); default: the 50,000 most frequent English words "
                    "of wordfreq.")
flags.DEFINE_integer("oov_num_users", data_lib.DEFAULT_OOV_NUM_USERS,
                     "oov: users drawn from the OOV word frequencies "
                     "(reproduce_paper: users of the paper-calibrated OOV "
                     "population).", lower_bound=1)
flags.DEFINE_integer("data_seed", 0,
                     "Seed of the oov and synthetic draws.", lower_bound=0)
flags.DEFINE_float("zipf_exponent", None,
                   "synthetic: draw rank r with probability ~ 1/r^s instead "
                   "of by the table's weights.")
flags.DEFINE_string("cache_dir", data_lib.default_cache_dir(),
                    "Directory caching built populations keyed by their "
                    "inputs ('' for no cache).")

# ---- a run: privacy target, seeds, output ------------------------------------

flags.DEFINE_float("epsilon", 4.0,
                   "Target central epsilon (theory_tables: of the Table 1 "
                   "block, default 2 there; audit_privacy: the target to "
                   "calibrate (Corollary 1), default 2 there when no "
                   "--theta is given).")
flags.DEFINE_float("delta", None, "Target delta; default 1/n^2.")
flags.DEFINE_integer("max_length", population_lib.DEFAULT_MAX_LENGTH,
                     "L, the maximum characters per word (audit_privacy: "
                     "of the target word, max_length + 1 levels; "
                     "theory_tables: L of the theorem; reproduce_paper: "
                     "default the paper's 9, its 10 levels).",
                     lower_bound=1, upper_bound=MAX_LENGTH_LIMIT)
flags.DEFINE_integer("num_runs", 1, "Independent runs (seeds seed, seed+1, "
                     "...).", lower_bound=1)
flags.DEFINE_integer("seed", 0, "Seed of the first run.", lower_bound=0)
flags.DEFINE_string("output_dir", None,
                    "If set, append one JSON line per run to "
                    "<output_dir>/results.jsonl (sweep, reproduce_paper: "
                    "required; beyond: default results/beyond).")
flags.DEFINE_list("ks", ["10", "50", "100"], "K values for the metrics.")
flags.DEFINE_integer("show", 30, "Heavy hitters to print per run.",
                     lower_bound=0)

# ---- TrieHH's parameters given directly -------------------------------------

flags.DEFINE_integer("theta", None,
                     "Vote threshold given directly (with --gamma or "
                     "--batch_size) instead of calibrating from --epsilon.",
                     lower_bound=1)
flags.DEFINE_float("gamma", None, "Batch size factor: m = gamma * sqrt(n).")
flags.DEFINE_integer("batch_size", None, "Users sampled per round, m.",
                     lower_bound=1)

# ---- SFP ---------------------------------------------------------------------

flags.DEFINE_integer("top_t", sfp.DEFAULT_TOP_T,
                     "T, the tuples SFP keeps per fragment position (the "
                     "paper used 20 and 80).", lower_bound=1)
flags.DEFINE_list("top_ts", None,
                  "SFP's T values, tuples kept per fragment position (sweep: "
                  "default --top_t; reproduce_paper: T in the OOV setting, "
                  "default 20,80, and 20 in the single-word setting, as the "
                  "paper).")
flags.DEFINE_integer("cms_k", count_mean_sketch.DEFAULT_K,
                     "Count Mean Sketch hash functions (the paper: 2048).",
                     lower_bound=1)

# ---- grids and reports -------------------------------------------------------

flags.DEFINE_list("settings", None,
                  "Settings: single, oov, multi (sweep: default --setting; "
                  "oov and multi apply to the text data sets only; "
                  "reproduce_paper: the settings to run, default all "
                  "three).")
flags.DEFINE_list("epsilons", None,
                  "Target central epsilons (sweep: default --epsilon; "
                  "reproduce_paper: TrieHH's, default 1,2,4,8; "
                  "theory_tables: of the minimum-population table, default "
                  "1,2,4,8).")
flags.DEFINE_integer("workers", 1, "Processes running cells (reproduce_paper:"
                     " default 2).", lower_bound=1)
flags.DEFINE_string("report_dir", "docs/results",
                    "Where the report and its figures go (beyond: BEYOND.md; "
                    "reproduce_paper: REPORT.md, default --output_dir).")
flags.DEFINE_float("confidence", 0.95,
                   "Confidence level of the intervals (audit_privacy: the "
                   "simultaneous confidence of the Monte Carlo bound).")


def _is_positive_int_list(values) -> bool:
  return bool(values) and all(v.strip().isdigit() and int(v) >= 1
                              for v in values)


def _is_positive_finite(value) -> bool:
  return value is None or (math.isfinite(value) and value > 0)


def _all(check):
  """A list flag's check: None (not given) or a non-empty list of values
  that each pass ``check``."""
  return lambda values: values is None or bool(values) and all(
      check(v) for v in values)


def _is_positive_number(text: str) -> bool:
  try:
    value = float(text)
  except ValueError:
    return False
  return math.isfinite(value) and value > 0


flags.register_validator(
    "ks", _is_positive_int_list,
    "--ks must be positive integers separated by commas, e.g. --ks=10,50")
flags.register_validator(
    "epsilon", _is_positive_finite,
    "--epsilon must be a positive finite number (for runs without a privacy "
    "guarantee give --theta with --batch_size and --allow_no_guarantee)")
flags.register_validator(
    "delta", lambda v: v is None or 0 < v < 1,
    "--delta must be in the open interval (0, 1)")
flags.register_validator(
    "zipf_exponent", _is_positive_finite,
    "--zipf_exponent must be a positive finite number")
flags.register_validator(
    "gamma", lambda v: v is None or (math.isfinite(v) and v > 0),
    "--gamma must be a positive finite number")
flags.register_validator(
    "top_ts", _all(lambda v: v.strip().isdigit() and int(v) >= 1),
    "--top_ts must be positive integers, comma separated, e.g. "
    "--top_ts=20,80")
flags.register_validator(
    "settings", _all(lambda v: v in datasets_lib.SETTINGS),
    "--settings must be among single, oov, multi")
flags.register_validator(
    "epsilons", _all(_is_positive_number),
    "--epsilons must be positive finite numbers, comma separated, e.g. "
    "--epsilons=0.5,1,2,4,8")
flags.register_validator("confidence", lambda c: 0 < c < 1,
                         "--confidence must be in the open interval (0, 1)")

DATA_FLAGS = ("dataset", "num_users", "data_path", "data_format",
              "data_encoding", "setting", "user_column", "text_column",
              "min_word_length", "dictionary_path", "oov_num_users",
              "data_seed", "zipf_exponent", "cache_dir")
RUN_FLAGS = ("epsilon", "delta", "max_length", "num_runs", "seed",
             "output_dir", "ks")


# ---- reading them ------------------------------------------------------------


def given(name: str) -> bool:
  """Whether ``--name`` was given (on the command line or set)."""
  return FLAGS[name].present or not FLAGS[name].using_default_value


def value_or(name: str, default: Any) -> Any:
  """``--name``'s value if it was given, else the driver's ``default``."""
  return FLAGS[name].value if given(name) else default


# A population with its ground truth and a description.
Dataset = datasets_lib.Dataset


def _given_data_options() -> dict[str, Any]:
  return {name: FLAGS[name].value for name in datasets_lib.OPTIONS
          if given(name)}


def check_data_flags(datasets: Sequence[str] | None = None,
                     settings: Sequence[str] | None = None, *,
                     chosen: bool | None = None) -> list[tuple[str, str]]:
  """Refuses data flags that the data sets would silently ignore.

  Without arguments: ``--dataset`` and ``--setting``. A sweep gives its
  lists, and ``chosen`` (whether it was told which data sets); the messages
  then name ``--datasets`` and ``--settings``.

  Returns:
    The (data set, setting) pairs to build
    (``triehh.data.datasets.check_options``).

  Raises:
    ValueError: naming the flag and what it needs.
  """
  plural = datasets is not None
  return datasets_lib.check_options(
      list(datasets) if plural else [FLAGS.dataset],
      list(settings) if settings is not None else [FLAGS.setting],
      _given_data_options(),
      chosen=given("dataset") if chosen is None else chosen, plural=plural)


def data_options(dataset: str | None = None,
                 setting: str | None = None) -> dict:
  """The data flags that shape the population (a run's ``config["data"]``).

  ``dataset`` and ``setting`` replace ``--dataset`` and ``--setting``.
  """
  values = {name: FLAGS[name].value for name in datasets_lib.OPTIONS}
  values["num_users"] = FLAGS.num_users if given("num_users") else None
  values["max_length"] = FLAGS.max_length
  return datasets_lib.options(dataset or FLAGS.dataset,
                              setting or FLAGS.setting, values)


def load_dataset() -> Dataset:
  """Builds the population the dataset flags describe.

  File data sets print their load report (rows used, skipped and why).
  """
  check_data_flags()
  dataset = datasets_lib.load_data(data_options(), FLAGS.cache_dir or None)
  if dataset.report is not None:
    origin = (f" (cached population {dataset.cache_path})"
              if dataset.cache_path else "")
    print(f"data report: {dataset.report.summary()}{origin}")
  return dataset


def ks() -> list[int]:
  """The K values of ``--ks`` (checked when the flag is parsed)."""
  return [int(k) for k in FLAGS.ks]


def results_writer() -> records_lib.ResultsWriter:
  """The writer of ``--output_dir``; checks the directory before any work.

  Raises:
    ValueError: if ``--output_dir`` is a file or its results.jsonl is not a
      regular file or cannot be written.
  """
  return records_lib.ResultsWriter(FLAGS.output_dir)


def score(discovered, truth: Mapping[str, float]) -> dict[str, float]:
  """Precision, recall and F1 at each K of ``--ks``."""
  return metrics.precision_recall_f1(discovered, truth, ks())


def print_metrics(values: Mapping[str, float]) -> None:
  for k in ks():
    print(f"  K={k:<5d} precision={values[f'precision@{k}']:.3f}  "
          f"recall={values[f'recall@{k}']:.3f}  f1={values[f'f1@{k}']:.3f}")
