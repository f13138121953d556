"""Flags and helpers shared by the experiment drivers.

Every driver builds a population from the dataset flags, runs its algorithm
``--num_runs`` times and, with ``--output_dir``, appends one JSON object per
run to ``results.jsonl`` as soon as the run ends (so an interrupted sweep
keeps every finished run); the record is ``triehh.runs.records.RunRecord``.

Every flag is checked when it is parsed (bounds, formats) and
:func:`check_data_flags` refuses flags that do not apply to the chosen data
set, so a mistake ends the driver with one ``error:`` line before any data
is read (see ``experiments.cli``).
"""

from __future__ import annotations

import math
import os
import time
import types
from collections.abc import Callable, Mapping

from absl import flags

from experiments import cli
from triehh import data as data_lib
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib
from triehh.data import paper_populations
from triehh.data import synthetic
from triehh.runs import records as records_lib

FLAGS = flags.FLAGS
MAX_LENGTH_LIMIT = 1000

flags.DEFINE_enum("dataset", "default",
                  ["default", "sentiment140", "file", "synthetic", "paper"],
                  "Data set: 'default' is a synthetic population drawn from "
                  "the wordfreq English word list (no download); "
                  "'sentiment140' reads --data_path in the official "
                  "Sentiment140 layout (csv, csv.gz or "
                  "trainingandtestdata.zip); 'file' reads user-keyed text "
                  "(CSV/TSV with a header, JSON Lines, Parquet) from "
                  "--data_path; 'synthetic' draws --num_users users from the "
                  "frequency table --data_path (word<TAB>weight lines) or, "
                  "without it, from the English list (scale tests); "
                  "'paper' is the paper-calibrated population of --setting "
                  "(triehh.data.paper_populations: the published top-100 "
                  "over shipped Sentiment140 word counts; multi needs "
                  "--data_path). Sentiment140 uses the paper's tokenizer.")
flags.DEFINE_integer("num_users", synthetic.DEFAULT_NUM_USERS,
                     "Users in the default and synthetic populations.",
                     lower_bound=1)
flags.DEFINE_string("data_path", None,
                    "Input file of --dataset=sentiment140, file or synthetic.")
flags.DEFINE_enum("data_format", "auto",
                  ["auto", "csv", "tsv", "jsonl", "parquet"],
                  "Format of --dataset=file; 'auto' goes by the extension.")
flags.DEFINE_string("data_encoding", None,
                    "Text encoding of the input: utf-8 or latin-1 (default: "
                    "latin-1 for sentiment140, utf-8 otherwise).")
flags.DEFINE_enum("setting", "single", list(data_lib.SETTINGS),
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
                     "oov: users drawn from the OOV word frequencies.",
                     lower_bound=1)
flags.DEFINE_integer("data_seed", 0,
                     "Seed of the oov and synthetic draws.", lower_bound=0)
flags.DEFINE_float("zipf_exponent", None,
                   "synthetic: draw rank r with probability ~ 1/r^s instead "
                   "of by the table's weights.")
flags.DEFINE_string("cache_dir", data_lib.default_cache_dir(),
                    "Directory caching built populations keyed by their "
                    "inputs ('' for no cache).")
flags.DEFINE_float("epsilon", 4.0, "Target central epsilon.")
flags.DEFINE_float("delta", None, "Target delta; default 1/n^2.")
flags.DEFINE_integer("max_length", population_lib.DEFAULT_MAX_LENGTH,
                     "L, the maximum characters per word.", lower_bound=1,
                     upper_bound=MAX_LENGTH_LIMIT)
flags.DEFINE_integer("num_runs", 1, "Independent runs (seeds seed, seed+1, "
                     "...).", lower_bound=1)
flags.DEFINE_integer("seed", 0, "Seed of the first run.", lower_bound=0)
flags.DEFINE_string("output_dir", None,
                    "If set, append one JSON line per run to "
                    "<output_dir>/results.jsonl.")
flags.DEFINE_list("ks", ["10", "50", "100"], "K values for the metrics.")


def _is_positive_int_list(values) -> bool:
  return bool(values) and all(v.strip().isdigit() and int(v) >= 1
                              for v in values)


def _is_positive_finite(value) -> bool:
  return value is None or (math.isfinite(value) and value > 0)


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


# A population with its ground truth and a description.
Dataset = datasets_lib.Dataset


# Data flags and the data sets (or settings) they apply to.
DATA_FLAG_SCOPE = {
    "num_users": ("default", "synthetic", "paper"),
    "data_format": ("file",),
    "user_column": ("file",),
    "text_column": ("file",),
    "data_encoding": ("sentiment140", "file"),
    "min_word_length": ("sentiment140", "file"),
    "zipf_exponent": ("synthetic",),
}
OOV_FLAGS = ("dictionary_path", "oov_num_users")
DATA_FLAGS = ("dataset", "num_users", "data_path", "data_format",
              "data_encoding", "setting", "user_column", "text_column",
              "min_word_length", "dictionary_path", "oov_num_users",
              "data_seed", "zipf_exponent", "cache_dir")


def given(name: str) -> bool:
  """Whether ``--name`` was given (on the command line or set)."""
  return FLAGS[name].present or not FLAGS[name].using_default_value


def check_data_flags() -> None:
  """Refuses data flags that the chosen data set would silently ignore.

  Raises:
    ValueError: naming the flag and what it needs.
  """
  dataset = FLAGS.dataset
  if given("data_path") and not given("dataset"):
    raise ValueError(
        f"--data_path={FLAGS.data_path} given without --dataset: say how to "
        "read it: --dataset=file (user-keyed CSV/TSV/JSON Lines/Parquet), "
        "--dataset=sentiment140 (the Sentiment140 layout) or "
        "--dataset=synthetic (a word<TAB>weight table)")
  if dataset in data_lib.DATASETS and not FLAGS.data_path:
    raise ValueError(f"--dataset={dataset} needs --data_path")
  if dataset == "default" and FLAGS.data_path:
    raise ValueError("--dataset=default reads no file; drop --data_path or "
                     "choose --dataset=file, sentiment140 or synthetic")
  if dataset in ("default", "synthetic") and FLAGS.setting != "single":
    raise ValueError(f"--setting={FLAGS.setting} needs a text data set "
                     "(--dataset=sentiment140 or file)")
  for name, scope in DATA_FLAG_SCOPE.items():
    if given(name) and dataset not in scope:
      raise ValueError(f"--{name} applies to --dataset="
                       f"{' or '.join(scope)} only, not --dataset={dataset}")
  for name in OOV_FLAGS:
    if given(name) and FLAGS.setting != "oov":
      raise ValueError(f"--{name} applies to --setting=oov only")
  if (given("data_seed") and dataset not in ("synthetic", "paper")
      and FLAGS.setting != "oov"):
    raise ValueError("--data_seed applies to --dataset=synthetic and "
                     "--setting=oov only")


def data_options(dataset: str | None = None,
                 setting: str | None = None) -> dict:
  """The data flags that shape the population (a run's ``config["data"]``).

  ``dataset`` and ``setting`` replace ``--dataset`` and ``--setting``.
  """
  dataset = dataset or FLAGS.dataset
  setting = setting or FLAGS.setting
  if dataset == "paper":
    return paper_populations.data_options(
        setting, max_length=FLAGS.max_length,
        num_users=FLAGS.num_users if given("num_users") else None,
        data_path=FLAGS.data_path, seed=FLAGS.data_seed)
  options = {"dataset": dataset, "setting": setting,
             "max_length": FLAGS.max_length}
  if FLAGS.data_path and dataset != "default":
    options["data_path"] = os.path.abspath(FLAGS.data_path)
  if dataset in ("default", "synthetic"):
    options["num_users"] = FLAGS.num_users
  if dataset == "synthetic":
    options.update(zipf_exponent=FLAGS.zipf_exponent,
                   data_seed=FLAGS.data_seed)
  if dataset in data_lib.DATASETS:
    options.update(data_format=FLAGS.data_format,
                   data_encoding=FLAGS.data_encoding,
                   min_word_length=FLAGS.min_word_length)
    if dataset == "sentiment140":
      options["tokenizer"] = "paper"
    if dataset == "file":
      options.update(user_column=FLAGS.user_column,
                     text_column=FLAGS.text_column)
    if setting == "oov":
      options.update(
          dictionary_path=(os.path.abspath(FLAGS.dictionary_path)
                           if FLAGS.dictionary_path else None),
          oov_num_users=FLAGS.oov_num_users, data_seed=FLAGS.data_seed)
  return options


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
  return metrics.precision_recall_f1(discovered, truth, ks())


def print_metrics(values: Mapping[str, float]) -> None:
  for k in ks():
    print(f"  K={k:<5d} precision={values[f'precision@{k}']:.3f}  "
          f"recall={values[f'recall@{k}']:.3f}  f1={values[f'f1@{k}']:.3f}")


class Timer:
  def __enter__(self):
    self.start = time.perf_counter()
    return self

  def __exit__(self, *exc):
    self.seconds = time.perf_counter() - self.start


def run_with_errors(main: Callable[[list[str]], object],
                    module: types.ModuleType,
                    writer: Callable[[], records_lib.ResultsWriter | None]
                    | None = None) -> None:
  """Runs a driver's ``main`` under the convention of ``experiments.cli``.

  Bad input prints ``error: ...`` and exits 1; Ctrl-C exits 130 saying how
  many finished runs ``writer()`` (if given) kept. Runs that finished
  before either are already in results.jsonl.
  """
  def kept() -> str:
    current = writer() if writer else None
    if current is None or current.path is None:
      return ""
    return f"{current.written} finished runs kept in {current.path}"
  cli.run(main, module, on_interrupt=kept)
