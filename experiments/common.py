"""Flags and helpers shared by the experiment drivers.

Every driver builds a population from the dataset flags, runs its algorithm
``--num_runs`` times and, with ``--output_dir``, appends one JSON object per
run to ``results.jsonl`` as soon as the run ends (so an interrupted sweep
keeps every finished run).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from collections.abc import Mapping

from absl import app
from absl import flags

from triehh import data as data_lib
from triehh import metrics
from triehh import population as population_lib
from triehh import synthetic

FLAGS = flags.FLAGS

flags.DEFINE_enum("dataset", "default",
                  ["default", "sentiment140", "file", "synthetic"],
                  "Data set: 'default' is a synthetic population drawn from "
                  "the wordfreq English word list (no download); "
                  "'sentiment140' reads --data_path in the official "
                  "Sentiment140 layout (csv, csv.gz or "
                  "trainingandtestdata.zip); 'file' reads user-keyed text "
                  "(CSV/TSV with a header, JSON Lines, Parquet) from "
                  "--data_path; 'synthetic' draws --num_users users from the "
                  "frequency table --data_path (word<TAB>weight lines) or, "
                  "without it, from the English list (scale tests).")
flags.DEFINE_integer("num_users", synthetic.DEFAULT_NUM_USERS,
                     "Users in the default and synthetic populations.")
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
                     "Shortest word kept, in characters.")
flags.DEFINE_string("dictionary_path", None,
                    "oov: word-list file of in-vocabulary words (one per "
                    "line); default: the 50,000 most frequent English words "
                    "of wordfreq.")
flags.DEFINE_integer("oov_num_users", data_lib.DEFAULT_OOV_NUM_USERS,
                     "oov: users drawn from the OOV word frequencies.")
flags.DEFINE_integer("data_seed", 0,
                     "Seed of the oov and synthetic draws.")
flags.DEFINE_float("zipf_exponent", None,
                   "synthetic: draw rank r with probability ~ 1/r^s instead "
                   "of by the table's weights.")
flags.DEFINE_string("cache_dir", data_lib.default_cache_dir(),
                    "Directory caching built populations keyed by their "
                    "inputs ('' for no cache).")
flags.DEFINE_float("epsilon", 4.0, "Target central epsilon.")
flags.DEFINE_float("delta", None, "Target delta; default 1/n^2.")
flags.DEFINE_integer("max_length", population_lib.DEFAULT_MAX_LENGTH,
                     "L, the maximum characters per word.")
flags.DEFINE_integer("num_runs", 1, "Independent runs (seeds seed, seed+1, ...).")
flags.DEFINE_integer("seed", 0, "Seed of the first run.")
flags.DEFINE_string("output_dir", None,
                    "If set, append one JSON line per run to "
                    "<output_dir>/results.jsonl.")
flags.DEFINE_list("ks", ["10", "50", "100"], "K values for the metrics.")


@dataclasses.dataclass
class Dataset:
  """A population with its ground truth and a description.

  ``report`` (rows read and skipped) and ``info`` (setting facts) are set
  for data read from a file.
  """

  population: population_lib.Population
  truth: dict[str, float]
  name: str
  setting: str
  report: data_lib.LoadReport | None = None
  info: dict = dataclasses.field(default_factory=dict)


def load_dataset() -> Dataset:
  """Builds the population the dataset flags describe.

  File data sets print their load report (rows used, skipped and why).
  """
  if FLAGS.dataset in ("default", "synthetic") and FLAGS.setting != "single":
    raise ValueError(f"--setting={FLAGS.setting} needs a text data set "
                     "(--dataset=sentiment140 or file)")
  if FLAGS.dataset == "default":
    pop = synthetic.english_population(
        FLAGS.num_users, seed=0, max_length=FLAGS.max_length)
    return Dataset(pop, pop.ground_truth(), "default", "single")
  if FLAGS.dataset == "synthetic":
    pop = synthetic.scale_population(
        FLAGS.num_users, table_path=FLAGS.data_path,
        zipf_exponent=FLAGS.zipf_exponent, seed=FLAGS.data_seed,
        max_length=FLAGS.max_length)
    source = os.path.basename(FLAGS.data_path) if FLAGS.data_path else (
        "english")
    law = f"zipf{FLAGS.zipf_exponent:g}" if FLAGS.zipf_exponent else "weights"
    return Dataset(pop, pop.ground_truth(), f"synthetic:{source}:{law}",
                   "single")
  if FLAGS.dataset in data_lib.DATASETS:
    if not FLAGS.data_path:
      raise ValueError(f"--dataset={FLAGS.dataset} needs --data_path")
    spec = data_lib.DataSpec(
        FLAGS.data_path, dataset=FLAGS.dataset, setting=FLAGS.setting,
        file_format=FLAGS.data_format, user_column=FLAGS.user_column,
        text_column=FLAGS.text_column, encoding=FLAGS.data_encoding,
        min_length=FLAGS.min_word_length, max_length=FLAGS.max_length,
        dictionary_path=FLAGS.dictionary_path,
        oov_num_users=FLAGS.oov_num_users, seed=FLAGS.data_seed)
    loaded = data_lib.load(spec, cache_dir=FLAGS.cache_dir or None)
    origin = (f" (cached population {loaded.cache_path})" if loaded.from_cache
              else "")
    print(f"data report: {loaded.report.summary()}{origin}")
    return Dataset(loaded.population, loaded.truth, loaded.name,
                   loaded.setting, report=loaded.report, info=loaded.info)
  raise ValueError(f"unknown dataset {FLAGS.dataset!r}")


def ks() -> list[int]:
  try:
    values = [int(k) for k in FLAGS.ks]
  except ValueError:
    raise ValueError(f"--ks must be integers, got {FLAGS.ks}") from None
  if not values or min(values) < 1:
    raise ValueError(f"--ks must be positive integers, got {FLAGS.ks}")
  return values


class ResultsWriter:
  """Appends one JSON object per run to ``<output_dir>/results.jsonl``."""

  def __init__(self, output_dir: str | None):
    self.path = None
    if output_dir:
      os.makedirs(output_dir, exist_ok=True)
      self.path = os.path.join(output_dir, "results.jsonl")

  def write(self, record: Mapping) -> None:
    if self.path is None:
      return
    with open(self.path, "a", encoding="utf-8") as f:
      f.write(json.dumps(_jsonable(record), sort_keys=True) + "\n")
      f.flush()
      os.fsync(f.fileno())


def _jsonable(value):
  if isinstance(value, float) and not math.isfinite(value):
    return str(value)
  if isinstance(value, Mapping):
    return {str(k): _jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_jsonable(v) for v in value]
  if hasattr(value, "item"):  # numpy scalars
    return value.item()
  return value


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


def run_with_errors(main) -> None:
  """Runs an absl ``main``; bad input ends the program with its message.

  A ``ValueError`` (bad parameters, unusable data), a missing or unreadable
  file, or a ``ConnectionError`` (e.g. an unreachable or failed TFF worker)
  prints ``error: ...`` and exits with status 1. Runs that finished before
  the error are already in results.jsonl.
  """
  def checked_main(argv):
    try:
      return main(argv)
    except (ValueError, FileNotFoundError, PermissionError,
            ConnectionError) as err:
      print(f"error: {err}", file=sys.stderr)
      return 1
  app.run(checked_main)
