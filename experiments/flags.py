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
data is read (see ``experiments.cli``). Two parsers serve every driver:
user counts (:func:`DEFINE_count`) take integer-valued scientific notation
(``--num_users=1e5``), and a list flag (:func:`DEFINE_values`) is parsed
into its values, each checked, and refused when it names one value twice
(``--epsilons=4,4.0`` lists epsilon 4 twice). The paths the flags name are
checked by ``experiments.paths``.

Long file: every flag two drivers share is defined here once, with its
help, next to the parsers and readers they share.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
import typing
from typing import Any

from absl import flags

from experiments import paths
from triehh import data as data_lib
from triehh.baselines import count_mean_sketch
from triehh.baselines import sfp
from triehh.core import memory
from triehh.core import metrics
from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib
from triehh.data import synthetic
from triehh.theory.adjacency import Adjacency

if typing.TYPE_CHECKING:
  from triehh.runs import records as records_lib

FLAGS = flags.FLAGS
MAX_LENGTH_LIMIT = 1000

# ---- the parsers of counts and lists -----------------------------------------


def parse_count(text: str) -> int:
  """A whole number, also in scientific notation: ``100000``, ``1e5``.

  Raises:
    ValueError: for anything else (``1.5``, ``1e-3``, ``inf``, ``x``).
  """
  text = text.strip()
  try:
    return int(text)
  except ValueError:
    pass
  try:
    value = float(text)
  except ValueError:
    value = math.nan
  if not math.isfinite(value) or value != math.floor(value):
    raise ValueError(f"{text!r} is not a whole number (e.g. 20000 or 2e4)")
  return int(value)


class CountParser(flags.IntegerParser):
  """An integer flag that also takes integer-valued scientific notation."""

  def convert(self, argument):
    if isinstance(argument, str):
      return parse_count(argument)
    return super().convert(argument)


def count_item(low: int = 1, high: int | None = None) -> Callable[[str], int]:
  """A list item: a whole number (:func:`parse_count`) in [low, high]."""
  def parse(text: str) -> int:
    value = parse_count(text)
    if value < low or (high is not None and value > high):
      bounds = f">= {low:,}" if high is None else f"from {low:,} to {high:,}"
      raise ValueError(f"{text!r} is not a whole number {bounds}")
    return value
  return parse


def number_item(low: float = 0.0, high: float = math.inf, *,
                high_included: bool = False) -> Callable[[str], float]:
  """A list item: a finite number above ``low`` and below ``high`` (or up
  to it, ``high_included``)."""
  if math.isinf(high):
    what = "a positive finite number" if low == 0 else f"a number > {low:g}"
  else:
    what = f"a number in ({low:g}, {high:g}{']' if high_included else ')'}"

  def parse(text: str) -> float:
    try:
      value = float(text)
    except ValueError:
      value = math.nan
    if not (math.isfinite(value) and low < value and (
        value <= high if high_included else value < high)):
      raise ValueError(f"{text!r} is not {what}")
    return value
  return parse


def choice_item(choices: Sequence[str]) -> Callable[[str], str]:
  """A list item: one of ``choices``."""
  def parse(text: str) -> str:
    if text not in choices:
      raise ValueError(f"unknown value {text!r}: use {', '.join(choices)}")
    return text
  return parse


def path_item(text: str) -> str:
  """A list item: a path (not empty)."""
  if not text:
    raise ValueError("an empty path (two commas in a row?)")
  return text


class ValuesParser(flags.ArgumentParser):
  """A comma-separated list, parsed into values: each item by ``item`` (which
  raises ValueError for a bad one), and no value twice (``4`` and ``4.0``
  are one epsilon). Empty only with ``allow_empty``."""

  syntactic_help = "a comma separated list"

  def __init__(self, item: Callable[[str], Any], *,
               allow_empty: bool = False):
    super().__init__()
    self.item = item
    self.allow_empty = allow_empty

  def parse(self, argument) -> list:
    if isinstance(argument, (list, tuple)):
      texts = [str(a).strip() for a in argument]
    else:
      texts = ([t.strip() for t in argument.split(",")]
               if argument.strip() else [])
    if not texts and not self.allow_empty:
      raise ValueError("is empty: give one value or more, comma separated")
    values, first = [], {}
    for text in texts:
      value = self.item(text)
      if value in first:
        same = ("" if first[value] == text else
                f" ({first[value]} and {text} are the same value)")
        raise ValueError(f"lists {text} twice{same}")
      first[value] = text
      values.append(value)
    return values

  def flag_type(self) -> str:
    return "list"


# pylint: disable=invalid-name
def DEFINE_values(name: str, default: list[str] | None, help_text: str,
                  item: Callable[[str], Any], *, allow_empty: bool = False
                  ) -> flags.FlagHolder:
  """A list flag parsed by :class:`ValuesParser`; the module calling this
  defines it (as with ``flags.DEFINE_list``)."""
  return flags.DEFINE(ValuesParser(item, allow_empty=allow_empty), name,
                      default, help_text,
                      serializer=flags.CsvListSerializer(","))


def DEFINE_count(name: str, default: int | None, help_text: str, *,
                 lower_bound: int = 1, upper_bound: int | None = None
                 ) -> flags.FlagHolder:
  """An integer flag that also takes ``1e5`` (:class:`CountParser`): every
  count of users."""
  return flags.DEFINE(CountParser(lower_bound, upper_bound), name, default,
                      help_text, serializer=flags.ArgumentSerializer())
# pylint: enable=invalid-name


# ---- the data set ------------------------------------------------------------

flags.DEFINE_enum("dataset", "default", list(datasets_lib.DATASETS),
                  "Data set: " + "; ".join(
                      f"'{kind.name}' {kind.description}"
                      for kind in datasets_lib.DATASETS.values()) + ".")
DEFINE_count("num_users", synthetic.DEFAULT_NUM_USERS,
             "Users in the default and synthetic populations (and in the "
             "paper population, default: its setting's n), e.g. 200000 or "
             "2e5; audit_privacy: n, users in the base population D "
             "(default 10,000 there).")
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
DEFINE_count("oov_num_users", data_lib.DEFAULT_OOV_NUM_USERS,
             "oov: users drawn from the OOV word frequencies "
             "(reproduce_paper: users of the paper-calibrated OOV "
             "population).")
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
                     "L, the maximum characters per word; the trie has "
                     "max_length + 1 levels (the end symbol) in every "
                     "driver (audit_privacy: of the target word; "
                     "reproduce_paper: default the paper's 9, its 10 "
                     "levels).",
                     lower_bound=1, upper_bound=MAX_LENGTH_LIMIT)
flags.DEFINE_integer("num_runs", 1, "Independent runs (seeds seed, seed+1, "
                     "...).", lower_bound=1)
flags.DEFINE_integer("seed", 0, "Seed of the first run.", lower_bound=0)
flags.DEFINE_string("output_dir", None,
                    "If set, append one JSON line per run to "
                    "<output_dir>/results.jsonl (sweep, reproduce_paper: "
                    "required; beyond: default results/beyond; field: "
                    "default results/field).")
DEFINE_values("ks", ["10", "50", "100"], "K values for the metrics.",
              count_item(1))
flags.DEFINE_integer("show", 30, "Heavy hitters to print per run.",
                     lower_bound=0)

# ---- TrieHH's parameters given directly -------------------------------------

flags.DEFINE_integer("theta", None,
                     "Vote threshold given directly (with --gamma or "
                     "--batch_size) instead of calibrating from --epsilon.",
                     lower_bound=1)
flags.DEFINE_float("gamma", None, "Batch size factor: m = gamma * sqrt(n).")
DEFINE_count("batch_size", None, "Users sampled per round, m.")
# The audit's families of neighbours (triehh.analysis.audit.ADJACENCIES).
AUDIT_ADJACENCIES = ("replace", "add")
flags.DEFINE_enum(
    "adjacency", None, list(Adjacency.__members__) + list(AUDIT_ADJACENCIES),
    "The neighbouring populations. run_triehh, sweep: the relation the "
    "guarantee must cover, in dp_accounting's names: ADD_OR_REMOVE_ONE (one "
    "user added or removed; needs --population_size, or --delta with "
    "parameters that do not depend on n), REPLACE_ONE (one user's words "
    "replaced by any others; Poisson sampling's replace-one accountant) or "
    "REPLACE_SPECIAL (by the empty word, the paper's); default: what the "
    "accountant proves. audit_privacy: the audited family, 'replace' (D' "
    "replaces one user's word by the target, same n; default there) or "
    "'add' (D plus a user holding it).")

# ---- SFP ---------------------------------------------------------------------

flags.DEFINE_integer("top_t", sfp.DEFAULT_TOP_T,
                     "T, the tuples SFP keeps per fragment position (the "
                     "paper used 20 and 80).", lower_bound=1)
DEFINE_values("top_ts", None,
              "SFP's T values, tuples kept per fragment position (sweep: "
              "default --top_t; reproduce_paper: T in the OOV setting, "
              "default 20,80, and 20 in the single-word setting, as the "
              "paper).", count_item(1))
flags.DEFINE_integer("cms_k", count_mean_sketch.DEFAULT_K,
                     "Count Mean Sketch hash functions (the paper: 2048).",
                     lower_bound=1)

# ---- grids and reports -------------------------------------------------------

DEFINE_values("settings", None,
              "Settings: single, oov, multi (sweep: default --setting; "
              "oov and multi apply to the text data sets only; "
              "reproduce_paper: the settings to run, default all three).",
              choice_item(list(datasets_lib.SETTINGS)))
DEFINE_values("epsilons", None,
              "Target central epsilons (sweep: default --epsilon; "
              "reproduce_paper: TrieHH's, default 1,2,4,8; theory_tables: "
              "of the minimum-population table, default 1,2,4,8; field: "
              "of the English populations, default 0.5,1,2,4,8).",
              number_item())
flags.DEFINE_integer("workers", 1, "Processes running cells (reproduce_paper:"
                     " default 2).", lower_bound=1)
flags.DEFINE_string("report_dir", None,
                    "Where the report and its figures go (beyond: BEYOND.md; "
                    "field: FIELD.md; reproduce_paper: REPORT.md; default: "
                    "--output_dir, beyond's results/beyond, field's "
                    "results/field).")
flags.DEFINE_string("sentiment140_path", None,
                    "Sentiment140 file of beyond and field (default: "
                    "$TRIEHH_SENTIMENT140, else the sample "
                    "../shared/data/sentiment140_sample.csv.gz beside the "
                    "repository; its parts are skipped when it is absent).")
flags.DEFINE_float("confidence", 0.95,
                   "Confidence level of the intervals (audit_privacy: the "
                   "simultaneous confidence of the Monte Carlo bound).")


def _is_positive_finite(value) -> bool:
  return value is None or (math.isfinite(value) and value > 0)


flags.register_validator(
    "epsilon", _is_positive_finite,
    "--epsilon must be a positive finite number (a TrieHH run without a "
    "privacy guarantee: triehh-run's --theta with --batch_size and "
    "--allow_no_guarantee)")
flags.register_validator(
    "delta", lambda v: v is None or 0 < v < 1,
    "--delta must be in the open interval (0, 1)")
flags.register_validator(
    "zipf_exponent", _is_positive_finite,
    "--zipf_exponent must be a positive finite number")
flags.register_validator(
    "gamma", lambda v: v is None or (math.isfinite(v) and v > 0),
    "--gamma must be a positive finite number")
flags.register_validator("confidence", lambda c: 0 < c < 1,
                         "--confidence must be in the open interval (0, 1)")
# The flags above are this module's; those that drivers define with
# DEFINE_values and DEFINE_count are the drivers'.
flags.disclaim_key_flags()

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


def sentiment140_sample() -> str | None:
  """``--sentiment140_path`` (an error if it cannot be read), else
  ``$TRIEHH_SENTIMENT140``, else the shared sample; None if absent."""
  if FLAGS.sentiment140_path:
    paths.check_input_file("sentiment140_path", FLAGS.sentiment140_path)
  return datasets_lib.sentiment140_sample(FLAGS.sentiment140_path)


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
  pairs = datasets_lib.check_options(
      list(datasets) if plural else [FLAGS.dataset],
      list(settings) if settings is not None else [FLAGS.setting],
      _given_data_options(),
      chosen=given("dataset") if chosen is None else chosen, plural=plural)
  check_data_paths()
  return pairs


def check_data_paths() -> None:
  """Refuses a ``--data_path`` or ``--dictionary_path`` that cannot be read
  and a ``--cache_dir`` that is not a directory, with the system's reason.

  Raises:
    ValueError: ``--flag=path: reason`` (``experiments.paths``).
  """
  for name in ("data_path", "dictionary_path"):
    if FLAGS[name].value:
      paths.check_input_file(name, FLAGS[name].value)
  if FLAGS.cache_dir:  # made when needed; unwritable: no caching, a warning
    paths.check_dir("cache_dir", FLAGS.cache_dir, writable=False)


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
  try:
    dataset = datasets_lib.load_data(data_options(), FLAGS.cache_dir or None)
  except memory.InsufficientMemoryError as err:
    raise memory.InsufficientMemoryError(
        f"flag {_size_flag(str(err))}: {err}") from err
  if dataset.report is not None:
    origin = (f" (cached population {dataset.cache_path})"
              if dataset.cache_path else "")
    print(f"data report: {dataset.report.summary()}{origin}")
  return dataset


def _size_flag(message: str) -> str:
  """The flag behind a library's memory refusal, which names its argument
  first (``num_users=...``, ``max_length=...``)."""
  argument = message.split("=", 1)[0]
  if argument == "num_users" and FLAGS.setting == "oov":
    return f"--oov_num_users={FLAGS.oov_num_users:,}"
  if argument in ("num_users", "max_length"):
    return f"--{argument}={FLAGS[argument].value:,}"
  return "--dataset"


def ks() -> list[int]:
  """The K values of ``--ks`` (checked when the flag is parsed)."""
  return [int(k) for k in FLAGS.ks]


def results_writer() -> records_lib.ResultsWriter:
  """The writer of ``--output_dir``; checks the directory before any work.

  Raises:
    ValueError: if ``--output_dir`` is not a directory one can write into
      (the system's reason, ``experiments.paths``) or its results.jsonl is
      not a regular file or cannot be written.
  """
  from triehh.runs import records as records_lib  # pylint: disable=g-import-not-at-top
  if FLAGS.output_dir:
    paths.check_dir("output_dir", FLAGS.output_dir, create=True)
  return records_lib.ResultsWriter(FLAGS.output_dir)


def check_grid_output_dir() -> str:
  """``--output_dir`` of a sweep or the reproduction, before any work: a
  directory one can write into (made if needed), its results file and the
  folder of its cell locks (``.sweep-locks``); the results file's path.

  Raises:
    ValueError: naming the flag, the path and the system's reason.
  """
  # Imported here: --help needs neither (the sweep's runner loads its grid).
  from triehh.runs import records as records_lib  # pylint: disable=g-import-not-at-top
  from triehh.runs import runner  # pylint: disable=g-import-not-at-top
  paths.check_dir("output_dir", FLAGS.output_dir, create=True)
  path = records_lib.check_output_dir(FLAGS.output_dir)
  paths.check_dir("output_dir",
                  os.path.join(FLAGS.output_dir, runner.LOCK_DIR),
                  value=FLAGS.output_dir)
  return path


def score(discovered, truth: Mapping[str, float]) -> dict[str, float]:
  """Precision, recall and F1 at each K of ``--ks``."""
  return metrics.precision_recall_f1(discovered, truth, ks())


def print_metrics(values: Mapping[str, float]) -> None:
  for k in ks():
    print(f"  K={k:<5d} precision={values[f'precision@{k}']:.3f}  "
          f"recall={values[f'recall@{k}']:.3f}  f1={values[f'f1@{k}']:.3f}")
