"""Every flag that two or more drivers read, defined once, and its helpers.

Each flag has one name here, and one meaning across the drivers (a count
of users is ``--num_users``, of seeded runs ``--num_runs``, a declared
public n ``--population_size``). A driver declares the shared flags it
reads (:func:`declare`: they become its key flags), and where it reads one
differently from its definition, how: its own default, its own help and
its own parser (the values it takes; the audit's ``--adjacency`` names its
families, the field's ``--num_users`` is a list). ``experiments.cli``
applies the running driver's declarations before its flags are parsed
(:func:`apply_uses`), so that its ``--help`` shows only the flags it reads,
each with its default, help and values, and refuses every other flag of
the project (:func:`refuse` says why, where a user would expect the
driver to read it). A default that depends on other flags (the audit's
epsilon) is said in the help and applied when the flag is not given
(:func:`value_or`). A renamed flag is refused naming its new name
(:data:`RENAMED`).

The groups:

- ``DATA_FLAGS``: the data set (``--dataset``, ``--setting``, ...); what
  each data set is, which flags apply to it and the ``config["data"]`` it
  makes are ``triehh.data.datasets``' (:func:`check_data_flags`,
  :func:`data_options`, :func:`load_dataset`).
- ``RUN_FLAGS``: a run's privacy target, seeds and output (``--epsilon``,
  ``--delta``, ``--max_length``, ``--num_runs``, ``--seed``,
  ``--output_dir``, ``--ks``), and ``--show``.
- TrieHH's parameters given directly (``--theta``, ``--gamma``,
  ``--batch_size``), SFP's (``--top_t``, ``--top_ts``, ``--cms_k``,
  ``--fragment_alphabet``, ``--word_budget``, ``--check_puzzle_hash``),
  partition selection's (``--max_partitions_contributed``), and
  ``--mechanism``, whose values each driver that reads it declares.
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

import dataclasses
import math
import os
import re
import sys
import types
from collections.abc import Callable, Mapping, Sequence
import typing
from typing import Any

from absl import flags

from experiments import paths
from triehh import data as data_lib
from triehh.baselines import count_mean_sketch
from triehh.baselines import partition_selection
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


# ---- the library's argument names, said as flags -----------------------------

# The library names its own arguments in its messages (``data_path``,
# ``dataset=file``, ``output_dir``), never a command-line flag: this is the
# one table that says them as the flags that set them (:func:`said_as_flags`,
# applied to every error a driver prints, ``experiments.cli``). An option of
# a data set named alone is its flag; ``dataset=``, ``setting=`` and the
# others below, followed by a value, are the flag given that value (and
# ``dataset`` alone where it is missing: "given without dataset"). A
# ``num_users=`` or ``max_length=`` with its value is left as it is: the
# library states an argument's value after the flag that set it (the memory
# refusals of :func:`load_dataset`). A name inside a word, a path, a
# placeholder (``<output_dir>``) or before a quoted Python value
# (``setting='single'``) is not an argument's.
_ALONE = ("output_dir", "split_bytes", "users_sharded") + datasets_lib.OPTIONS
_WITH_VALUE = ("dataset", "datasets", "setting", "settings", "data_path",
               "data_format", "output_dir", "results")
_ARGUMENT_FLAGS = (
    (re.compile(r"(?<![-\w./\\<])(" + "|".join(_ALONE)
                + r")\b(?![=/\\]|\.\w)"), r"--\1"),
    (re.compile(r"(?<![-\w./\\<])(" + "|".join(_WITH_VALUE)
                + r")=(?![\'\"(\[{])"), r"--\1="),
    # A data set option missing: "given without dataset".
    (re.compile(r"(?<=without )(datasets?|settings?)\b(?!=)"), r"--\1"),
)


def said_as_flags(text: str) -> str:
  """``text``, a library's message, with the arguments it names said as
  the flags that set them (``data_path`` -> ``--data_path``,
  ``dataset=file`` -> ``--dataset=file``); a flag already said as one is
  left as it is."""
  for pattern, flag in _ARGUMENT_FLAGS:
    text = pattern.sub(flag, text)
  return text


# ---- the data set ------------------------------------------------------------

flags.DEFINE_enum("dataset", "default", list(datasets_lib.DATASETS),
                  "Data set: " + said_as_flags("; ".join(
                      f"'{kind.name}' {kind.description}"
                      for kind in datasets_lib.DATASETS.values())) + ".")
DEFINE_count("num_users", synthetic.DEFAULT_NUM_USERS,
             "Users in the default and synthetic populations (and in the "
             "paper population, default: its setting's n), e.g. 200000 or "
             "2e5.")
flags.DEFINE_string("data_path", None,
                    "Input of --dataset=sentiment140, file or synthetic (a "
                    "file), or of --dataset=ingested (the folder "
                    "triehh-ingest wrote); paper: a Sentiment140 file for "
                    "the tail or multi.")
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
             "oov: users drawn from the OOV word frequencies.")
flags.DEFINE_integer("data_seed", 0,
                     "Seed of the oov and synthetic draws.", lower_bound=0)
flags.DEFINE_float("zipf_exponent", None,
                   "synthetic: draw rank r with probability ~ 1/r^s instead "
                   "of by the table's weights.")
flags.DEFINE_string("cache_dir", data_lib.default_cache_dir(),
                    "Directory caching built populations keyed by their "
                    "inputs ('' for no cache).")

# ---- a run: privacy target, seeds, output ------------------------------------

flags.DEFINE_float("epsilon", 4.0, "Target central epsilon.")
flags.DEFINE_float("delta", None, "Target delta; default 1/n^2.")
flags.DEFINE_boolean(
    "allow_delta_above_1_over_n", False,
    "Run a delta above 1/n (n: --population_size, else the data's users), "
    "which protects nobody (publishing one user's data at random meets "
    "it), instead of refusing it; the guarantee then says so.")
flags.DEFINE_integer("max_length", population_lib.DEFAULT_MAX_LENGTH,
                     "L, the maximum characters per word; the trie has "
                     "max_length + 1 levels (the end symbol).",
                     lower_bound=1, upper_bound=MAX_LENGTH_LIMIT)
flags.DEFINE_integer("num_runs", 1, "Independent runs (with --seed: seeds "
                     "seed, seed+1, ...).", lower_bound=1)
flags.DEFINE_integer("seed", None, "Seed of the first run (run r: seed + r) "
                     "for a reproducible simulation: whoever knows it can "
                     "undo the noise. Unset: each run draws fresh entropy, "
                     "recorded nowhere.", lower_bound=0)
flags.DEFINE_string("output_dir", None,
                    "If set, append one JSON line per run to "
                    "<output_dir>/results.jsonl.")
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
# A run's relations are dp_accounting's; the audit reads the flag as its
# own families of neighbours (experiments.audit_privacy declares them).
flags.DEFINE_enum(
    "adjacency", None, list(Adjacency.__members__),
    "The neighbouring populations the guarantee must cover, in "
    "dp_accounting's names: ADD_OR_REMOVE_ONE (one user added or removed; "
    "needs --population_size, or --delta with parameters that do not "
    "depend on n), REPLACE_ONE (one user's words replaced by any others; "
    "Poisson sampling's replace-one accountant) or REPLACE_SPECIAL (by the "
    "empty word, the paper's); default: what the accountant proves.")
DEFINE_count(
    "population_size", None,
    "A declared, public number of users (a number you state, not read off "
    "the data; 2e5 is taken): delta = 1/n^2 is derived from it instead of "
    "the data's own n, so that the guarantee also covers "
    "ADD_OR_REMOVE_ONE.")
flags.DEFINE_string(
    "words_out", None,
    "Write the released words to this file once the run ends (whole: a "
    "file is never left half-written): .csv, rank,word rows under '#' lines "
    "stating the guarantee, or .json, the words with the guarantee "
    "(epsilon, delta, adjacency, accounting, covers) and the mechanism's "
    "name and parameters. One run's release: needs --num_runs=1.")

# ---- SFP ---------------------------------------------------------------------

flags.DEFINE_integer("top_t", sfp.DEFAULT_TOP_T,
                     "T, the tuples SFP keeps per fragment position (the "
                     "paper used 20 and 80).", lower_bound=1)
DEFINE_values("top_ts", None,
              "SFP's T values, tuples kept per fragment position.",
              count_item(1))
flags.DEFINE_integer("cms_k", count_mean_sketch.DEFAULT_K,
                     "Count Mean Sketch hash functions (the paper: 2048).",
                     lower_bound=1)
flags.DEFINE_integer("cms_m", count_mean_sketch.DEFAULT_M,
                     "Count Mean Sketch width (a power of two).",
                     lower_bound=1)
flags.DEFINE_integer("sfp_length", sfp.DEFAULT_LENGTH,
                     "Strings are padded with '$' or truncated to this length.",
                     lower_bound=2)
flags.DEFINE_string("fragment_alphabet", None,
                    "Omega, the characters of candidate fragments: default "
                    "the 26 lowercase letters, 'data' for every character of "
                    "the data, or the characters themselves.")
flags.DEFINE_float("word_budget", 0.0,
                   "Share of the local epsilon for a whole-word sketch that "
                   "counts the discovered words (0: discovery only, as in "
                   "the paper).")
flags.DEFINE_boolean("check_puzzle_hash", False,
                     "Keep only stitched strings whose puzzle hash is their "
                     "bucket (not in the paper).")

# ---- partition selection -----------------------------------------------------

flags.DEFINE_enum("partition_strategy", partition_selection.DEFAULT_STRATEGY,
                  list(partition_selection.STRATEGIES),
                  "pipeline_dp's partition selection strategy.")
flags.DEFINE_integer("max_partitions_contributed", 1,
                     "Words a user counts towards, at most (a user with more "
                     "distinct words contributes a seeded uniform choice).",
                     lower_bound=1)

# ---- the mechanism -----------------------------------------------------------

# Each driver that reads it declares the values it takes (its parser), its
# default and its help: triehh-run's registered mechanisms, the audit's
# families of TrieHH.
flags.DEFINE_string("mechanism", None,
                    "The mechanism to run (each driver says its values).")

# ---- grids and reports -------------------------------------------------------

DEFINE_values("settings", None, "Settings: single, oov, multi.",
              choice_item(list(datasets_lib.SETTINGS)))
DEFINE_values("epsilons", None, "Target central epsilons.", number_item())
flags.DEFINE_integer("workers", 1, "Processes running cells.", lower_bound=1)
flags.DEFINE_string("report_dir", None,
                    "Where the report and its figures go (default: "
                    "--output_dir).")
flags.DEFINE_string("sentiment140_path", None,
                    "The Sentiment140 file (default: $TRIEHH_SENTIMENT140, "
                    "else the sample ../shared/data/sentiment140_sample.csv.gz"
                    " beside the repository; its parts are skipped when it "
                    "is absent).")
flags.DEFINE_float("confidence", 0.95,
                   "Confidence level of the intervals.")


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
flags.register_validator(
    "word_budget", lambda v: math.isfinite(v) and 0 <= v < 1,
    "--word_budget must be in [0, 1)")
# The flags above are this module's; those that drivers define with
# DEFINE_values and DEFINE_count are the drivers'.
flags.disclaim_key_flags()

DATA_FLAGS = ("dataset", "num_users", "data_path", "data_format",
              "data_encoding", "setting", "user_column", "text_column",
              "min_word_length", "dictionary_path", "oov_num_users",
              "data_seed", "zipf_exponent", "cache_dir")
RUN_FLAGS = ("epsilon", "delta", "allow_delta_above_1_over_n",
             "max_length", "num_runs", "seed", "output_dir", "ks")

# Flags renamed so that one idea has one name: the old name -> the new one.
# An old name given is refused naming the new one (experiments.cli).
RENAMED = {"users": "num_users", "runs": "num_runs", "num_seeds": "num_runs",
           "ps_seeds": "ps_runs"}


# ---- which shared flags a driver reads, and how ------------------------------


class _AsDefined:
  """The value of a :class:`Use` field the driver leaves as defined."""

  def __repr__(self) -> str:
    return "AS_DEFINED"


AS_DEFINED: Any = _AsDefined()


@dataclasses.dataclass(frozen=True)
class Use:
  """How one driver reads a shared flag, where it differs from the flag's
  definition.

  Attributes:
    default: the driver's default (a value or its command-line text, parsed
      by the flag's parser); :data:`AS_DEFINED`: the flag's.
    help_text: the driver's help text; None: the flag's.
    parser: the driver's parser (the values it takes; a list instead of one
      value); None: the flag's.
  """

  default: Any = AS_DEFINED
  help_text: str | None = None
  parser: flags.ArgumentParser | None = None


# Driver module name -> flag name -> its Use; -> refused flag -> why.
_USES: dict[str, dict[str, Use]] = {}
_REFUSED: dict[str, dict[str, str]] = {}


def _key(module_name: str) -> str:
  """The name absl files a module's key flags under: a driver run as
  ``python -m`` (``__main__``) under ``sys.argv[0]``, as absl does."""
  return sys.argv[0] if module_name == "__main__" else module_name


def declare(module_name: str, *names: str, default: Any = AS_DEFINED,
            help_text: str | None = None,
            parser: flags.ArgumentParser | None = None) -> None:
  """Declares that the driver ``module_name`` (its ``__name__``) reads the
  shared flags ``names``: they become its key flags, which its ``--help``
  lists and ``experiments.cli`` accepts. ``default``, ``help_text`` and
  ``parser`` (one flag only) say how the driver reads it where it differs
  from the definition (:class:`Use`)."""
  use = Use(default, help_text, parser)
  if use != Use() and len(names) != 1:
    raise ValueError("a driver's own default, help or parser is declared "
                     "for one flag at a time")
  module_name = _key(module_name)
  for name in names:
    FLAGS.register_key_flag_for_module(module_name, FLAGS[name])
    if use != Use():
      _USES.setdefault(module_name, {})[name] = use


# --seed of the drivers that are simulations by nature (a sweep, a report):
# repeatable by default.
SIMULATION_SEED = 0
SIMULATION_SEED_HELP = ("Seed of the first run (run r: seed + r): these "
                        "runs are a simulation, repeatable.")


def declare_simulation_seed(module_name: str) -> None:
  """Declares that the driver ``module_name``, a simulation by nature (a
  sweep, a report's runs), reads ``--seed`` with the default
  :data:`SIMULATION_SEED`, where a run's driver draws fresh entropy."""
  declare(module_name, "seed", default=SIMULATION_SEED,
          help_text=SIMULATION_SEED_HELP)


def adopt(module_name: str, driver: types.ModuleType, *,
          leave_out: Sequence[str] = ()) -> None:
  """Declares that ``module_name`` reads the flags of the driver ``driver``
  (its own and the shared ones it declares, read as it reads them), but
  ``leave_out``. A flag two adopted drivers read differently is read as
  the first adopted reads it; ``module_name``'s own :func:`declare`
  overrides both."""
  module_name = _key(module_name)
  for flag in FLAGS.get_key_flags_for_module(driver):
    if flag.name not in leave_out:
      FLAGS.register_key_flag_for_module(module_name, flag)
  for name, use in _USES.get(_key(driver.__name__), {}).items():
    if name not in leave_out:
      _USES.setdefault(module_name, {}).setdefault(name, use)


def refuse(module_name: str, names: Sequence[str], why: str) -> None:
  """Says why the driver ``module_name`` does not read ``names``, flags of
  other drivers that a user might give it: its refusal
  (``experiments.cli``) adds ``why``."""
  for name in names:
    if name not in FLAGS:
      raise KeyError(f"no flag --{name}")
    _REFUSED.setdefault(_key(module_name), {})[name] = why


def refused(module_name: str) -> dict[str, str]:
  """The flags ``module_name`` refuses with a reason (:func:`refuse`)."""
  return dict(_REFUSED.get(_key(module_name), {}))


def uses(module_name: str) -> dict[str, Use]:
  """How ``module_name`` reads the shared flags it reads differently."""
  return dict(_USES.get(_key(module_name), {}))


def key(module_name: str) -> str:
  """The name absl files the key flags of the driver ``module_name`` (its
  ``__name__``) under."""
  return _key(module_name)


# Driver module name -> its help's headings of flags -> the note under each.
_SECTIONS: dict[str, dict[str, str]] = {}


def add_section(module_name: str, section: str, names: Sequence[str],
                note: str = "") -> None:
  """Declares that the driver ``module_name`` also reads the flags
  ``names``, listed in its ``--help`` under the heading ``section`` with
  ``note`` beneath it (``experiments.cli``): triehh-run's flags of one
  mechanism (``experiments.mechanism_flags``)."""
  for name in names:
    FLAGS.register_key_flag_for_module(section, FLAGS[name])
  _SECTIONS.setdefault(_key(module_name), {})[section] = note


def clear_sections(module_name: str) -> None:
  """Forgets the headings :func:`add_section` gave ``module_name``."""
  _SECTIONS.pop(_key(module_name), None)


def sections(module_name: str) -> dict[str, str]:
  """The driver's headings of flags (:func:`add_section`) -> their
  notes."""
  return dict(_SECTIONS.get(_key(module_name), {}))


# absl's EnumFlag begins its help with its values: "<a|b>: ".
_ENUM_VALUES = re.compile(r"^<[^>]*>: ")


def apply_uses(module_name: str) -> None:
  """Makes the shared flags read as the driver ``module_name`` declared
  (:func:`declare`): its defaults, help texts and parsers, so that parsing
  the command line, ``--help`` and the values read are the driver's.

  ``experiments.cli`` calls this once per process, for the driver that
  runs, before its flags are parsed (``absl.testing.flagsaver`` undoes it).
  """
  for name, use in uses(module_name).items():
    flag = FLAGS[name]
    if use.parser is not None:
      flag.parser = use.parser
      flag.serializer = (flags.CsvListSerializer(",")
                         if isinstance(use.parser, ValuesParser)
                         else flags.ArgumentSerializer())
    text = flag.help if use.help_text is None else use.help_text
    if isinstance(flag.parser, flags.EnumParser):
      text = (f"<{'|'.join(flag.parser.enum_values)}>: "
              + _ENUM_VALUES.sub("", text))
    flag.help = text
    if use.default is not AS_DEFINED:
      FLAGS.set_default(name, use.default)
    elif use.parser is not None and flag.default is not None:
      FLAGS.set_default(name, flag.default_unparsed)


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
  names = list(datasets) if plural else [FLAGS.dataset]
  try:
    pairs = datasets_lib.check_options(
        names, list(settings) if settings is not None else [FLAGS.setting],
        _given_data_options(),
        chosen=given("dataset") if chosen is None else chosen, plural=plural)
  except ValueError as err:
    raise ValueError(said_as_flags(str(err))) from None
  check_data_paths(names)
  return pairs


# The data set whose --data_path is a folder (the others read a file).
INGESTED = "ingested"


def check_data_paths(datasets: Sequence[str] = ()) -> None:
  """Refuses a ``--data_path`` or ``--dictionary_path`` that cannot be read
  and a ``--cache_dir`` that is not a directory, with the system's reason.
  ``--data_path`` is a folder for the data set ``ingested`` (when it is
  one of ``datasets``) and a file for the others.

  Raises:
    ValueError: ``--flag=path: reason`` (``experiments.paths``).
  """
  folder = INGESTED in datasets
  if folder and FLAGS.data_path:
    files = [d for d in datasets
             if d != INGESTED and datasets_lib.kind(d).file]
    if files:
      raise ValueError(f"--data_path is a folder for --dataset={INGESTED} "
                       f"and a file for {', '.join(files)}: give them in "
                       "separate runs")
    paths.check_input_dir("data_path", FLAGS.data_path)
  for name in ("dictionary_path",) if folder else ("data_path",
                                                   "dictionary_path"):
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
  except data_lib.DataError as err:
    text = said_as_flags(str(err))
    if FLAGS.dataset == INGESTED:
      # The L an ingested folder was written for, as a flag.
      text = re.sub(r"(?<![-\w])max_length=", "--max_length=", text)
    if text == str(err):
      raise
    raise data_lib.DataError(text) from err
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


# A delta refused above 1/n (triehh.theory.limits.check_delta_for_n), said
# as the flags that set it.
_DELTA_TERMS = ((re.compile(r"(?<![-\w])delta=(?=[\d.e+-]+ is above 1/n)"),
                 "--delta="),
                (re.compile(r"(?<![-\w])give delta at most"),
                 "give --delta at most"),
                (re.compile(r"(?<![-\w])allow_delta_above_1_over_n=True"),
                 "--allow_delta_above_1_over_n"))


def delta_in_flag_terms(text: str) -> str:
  """``text``, a library's refusal of a delta above 1/n, with ``delta``
  and the opt-in said as ``--delta`` and ``--allow_delta_above_1_over_n``."""
  for pattern, flag in _DELTA_TERMS:
    text = pattern.sub(flag, text)
  return text


def score(discovered, truth: Mapping[str, float]) -> dict[str, float]:
  """Precision, recall and F1 at each K of ``--ks``."""
  return metrics.precision_recall_f1(discovered, truth, ks())


def print_metrics(values: Mapping[str, float], *, ranked: bool = True,
                  released: int | None = None) -> None:
  """The metrics at each K of ``--ks``. ``ranked`` False: the words are
  a set in an order that tells nothing (partition selection's), so
  precision@K, and F1 with it, mean nothing: the set's precision (share
  of its ``released`` words some user holds) and recall@K instead."""
  if not ranked and not released:
    print("  unranked: no top-K precision; no word released, so no set "
          "precision")
  elif not ranked:
    print(f"  unranked: no top-K precision; set precision="
          f"{values['precision']:.3f} (share of the {released:,} words "
          "released that some user holds)")
  if not ranked:
    for k in ks():
      print(f"  K={k:<5d} recall={values[f'recall@{k}']:.3f} (share of "
            f"the true top {k} in the set)")
    return
  for k in ks():
    print(f"  K={k:<5d} precision={values[f'precision@{k}']:.3f}  "
          f"recall={values[f'recall@{k}']:.3f}  f1={values[f'f1@{k}']:.3f}")
