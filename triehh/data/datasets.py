"""The data sets: what each one is, how its options are checked and built,
how it is loaded, and keeping it once loaded.

A data set is described by its options (the records' ``config["data"]``):
``dataset`` (a name of :data:`DATASETS`), ``setting``, ``max_length`` and
the options of that data set. :data:`DATASETS` maps each name to its
:class:`DataSetKind`: a description, whether it reads a file
(``data_path``), whether it holds text (the settings ``oov`` and ``multi``
need text), the options that apply to it, how its options are built
(:func:`options`) and how it is loaded (:func:`load_data`).
:func:`check_options` refuses options that a list of data sets and
settings would silently ignore; :class:`DataCache` loads each data set once
per process and encodes its population once (file data sets are also
cached on disk across processes by :mod:`triehh.data.loader`). The data
set ``ingested`` is the folder an ingestion wrote
(:mod:`triehh.data.ingested`): read as written, at the setting and L it
was ingested with.

The options carry the names of the drivers' flags; the messages of
:func:`check_options` name them as the library's arguments (``data_path``,
``dataset=file``), which the drivers say as flags.
:func:`sentiment140_sample` finds the Sentiment140 sample.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from triehh.core import files
from triehh.core import population as population_lib
from triehh.core import ranking
from triehh.data import cache as cache_lib
from triehh.data import ingested as ingested_lib
from triehh.data import loader
from triehh.data import paper_populations
from triehh.data import report as report_lib
from triehh.data import settings as settings_lib
from triehh.data import synthetic
from triehh.data import tokenize

SETTINGS = settings_lib.SETTINGS
# The options a data set may take besides dataset, setting and max_length,
# in the order check_options looks at them.
OPTIONS = ("num_users", "data_path", "data_format", "user_column",
           "text_column", "data_encoding", "min_word_length",
           "zipf_exponent", "dictionary_path", "oov_num_users", "data_seed")

SENTIMENT140_ENV = "TRIEHH_SENTIMENT140"
_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SENTIMENT140_SAMPLE = os.path.join(os.path.dirname(_REPOSITORY), "shared",
                                   "data", "sentiment140_sample.csv.gz")


def sentiment140_sample(explicit: str | None = None) -> str | None:
  """The Sentiment140 sample: ``explicit``, else ``$TRIEHH_SENTIMENT140``,
  else ``../shared/data/sentiment140_sample.csv.gz`` beside the repository;
  None if that file is absent."""
  path = explicit or os.environ.get(SENTIMENT140_ENV) or SENTIMENT140_SAMPLE
  return path if os.path.exists(path) else None


@dataclasses.dataclass
class Dataset:
  """A population with its ground truth and a description.

  ``report`` (rows read and skipped) and ``info`` (setting facts) are set
  for data read from a file; ``cache_path`` when it came from the cache.
  """

  population: population_lib.Population
  truth: dict[str, float]  # a ranking.RankedCounts once built
  name: str
  setting: str
  report: report_lib.LoadReport | None = None
  info: dict = dataclasses.field(default_factory=dict)
  cache_path: str | None = None

  def __post_init__(self):
    # Every run of a cell is scored against this truth: rank it once.
    if not isinstance(self.truth, ranking.RankedCounts):
      self.truth = ranking.RankedCounts(self.truth)


Options = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class DataSetKind:
  """What a data set is.

  Attributes:
    name: its ``dataset`` option.
    description: what it is, a phrase after its quoted name (flag help).
    file: what its ``data_path`` holds; empty if it reads no file.
    needs_file: whether it cannot do without ``data_path``.
    text: whether it holds words from text, so that every setting applies
      (``oov`` and ``multi`` need text); the others are ``single`` only.
    options: the options of :data:`OPTIONS` (but ``data_path``) that apply
      to it in every setting.
    setting_options: setting -> the further options of that setting.
    build: ``(setting, values) -> options`` (see :func:`options`).
    load: ``(options, cache_dir) -> Dataset``.
  """

  name: str
  description: str
  file: str
  needs_file: bool
  text: bool
  options: tuple[str, ...]
  setting_options: Mapping[str, tuple[str, ...]]
  build: Callable[[str, Options], dict]
  load: Callable[[Options, str | None], Dataset]

  @property
  def settings(self) -> tuple[str, ...]:
    return SETTINGS if self.text else ("single",)

  def takes(self, option: str, setting: str) -> bool:
    """Whether ``option`` applies to this data set in ``setting``."""
    if option == "data_path":
      return bool(self.file)
    return option in self.options + self.setting_options.get(setting, ())


def _base(name: str, setting: str, values: Options) -> dict:
  return {"dataset": name, "setting": setting,
          "max_length": values.get("max_length",
                                   population_lib.DEFAULT_MAX_LENGTH)}


def _num_users(values: Options) -> int:
  num_users = values.get("num_users")
  return synthetic.DEFAULT_NUM_USERS if num_users is None else num_users


def _build_default(setting: str, values: Options) -> dict:
  return dict(_base("default", setting, values),
              num_users=_num_users(values))


# The default data set is cached up to this many users (an entry holds about
# 5.5 bytes per user: 55 MB here); larger ones are drawn every time.
MAX_CACHED_DEFAULT_USERS = 10**7


def _load_default(options: Options, cache_dir: str | None) -> Dataset:
  """The default population, from the population cache when it holds it
  (keyed by the options, the wordfreq version and the code that draws and
  encodes it; drawing the word list alone takes 0.5 s)."""
  codes = [files.source_digest(m.__file__) for m in (synthetic, population_lib)]
  description = {"dataset": "default", "num_users": options["num_users"],
                 "max_length": options["max_length"], "seed": 0,
                 "wordfreq": synthetic.word_list_version(), "code": codes}
  cached = (None not in codes
            and options["num_users"] <= MAX_CACHED_DEFAULT_USERS)
  pop, _, path, from_cache = cache_lib.fetch(
      cache_dir if cached else None, description,
      lambda: (synthetic.english_population(
          options["num_users"], seed=0, max_length=options["max_length"]), {}))
  return Dataset(pop, pop.ground_truth(), "default", "single",
                 cache_path=path if from_cache else None)


def _build_synthetic(setting: str, values: Options) -> dict:
  options = _base("synthetic", setting, values)
  if values.get("data_path"):
    options["data_path"] = os.path.abspath(values["data_path"])
  options["num_users"] = _num_users(values)
  options.update(zipf_exponent=values.get("zipf_exponent"),
                 data_seed=values.get("data_seed", 0))
  return options


def _load_synthetic(options: Options, cache_dir: str | None) -> Dataset:
  del cache_dir
  path = options.get("data_path")
  exponent = options.get("zipf_exponent")
  pop = synthetic.scale_population(
      options["num_users"], table_path=path, zipf_exponent=exponent,
      seed=options.get("data_seed", 0), max_length=options["max_length"])
  source = os.path.basename(path) if path else "english"
  law = f"zipf{exponent:g}" if exponent else "weights"
  return Dataset(pop, pop.ground_truth(), f"synthetic:{source}:{law}",
                 "single")


def _text_builder(name: str) -> Callable[[str, Options], dict]:
  """The builder of a data set read by :mod:`triehh.data.loader`."""
  def build(setting: str, values: Options) -> dict:
    options = _base(name, setting, values)
    if values.get("data_path"):
      options["data_path"] = os.path.abspath(values["data_path"])
    options.update(data_format=values.get("data_format", "auto"),
                   data_encoding=values.get("data_encoding"),
                   min_word_length=values.get("min_word_length",
                                              tokenize.DEFAULT_MIN_LENGTH))
    if name == "sentiment140":
      options["tokenizer"] = "paper"
    if name == "file":
      options.update(user_column=values.get("user_column", "user"),
                     text_column=values.get("text_column", "text"))
    if setting == "oov":
      dictionary = values.get("dictionary_path")
      options.update(
          dictionary_path=os.path.abspath(dictionary) if dictionary else None,
          oov_num_users=values.get("oov_num_users",
                                   settings_lib.DEFAULT_OOV_NUM_USERS),
          data_seed=values.get("data_seed", 0))
    return options
  return build


def _load_text(options: Options, cache_dir: str | None) -> Dataset:
  spec = loader.DataSpec(
      options["data_path"], dataset=options["dataset"],
      setting=options["setting"],
      file_format=options.get("data_format", "auto"),
      user_column=options.get("user_column", "user"),
      text_column=options.get("text_column", "text"),
      encoding=options.get("data_encoding"),
      tokenizer=options.get("tokenizer", settings_lib.DEFAULT_TOKENIZER),
      min_length=options.get("min_word_length", tokenize.DEFAULT_MIN_LENGTH),
      max_length=options["max_length"],
      dictionary_path=options.get("dictionary_path"),
      oov_num_users=options.get("oov_num_users",
                                settings_lib.DEFAULT_OOV_NUM_USERS),
      seed=options.get("data_seed", 0))
  loaded = loader.load(spec, cache_dir=cache_dir)
  return Dataset(loaded.population, loaded.truth, loaded.name,
                 loaded.setting, report=loaded.report, info=loaded.info,
                 cache_path=loaded.cache_path if loaded.from_cache else None)


def _build_paper(setting: str, values: Options) -> dict:
  return paper_populations.data_options(
      setting, max_length=values.get("max_length",
                                     paper_populations.PAPER_MAX_LENGTH),
      num_users=values.get("num_users"), data_path=values.get("data_path"),
      word_counts_path=values.get("word_counts_path"),
      seed=values.get("data_seed", 0))


def _build_ingested(setting: str, values: Options) -> dict:
  options = _base("ingested", setting, values)
  if values.get("data_path"):
    options["data_path"] = os.path.abspath(values["data_path"])
  return options


def _load_ingested(options: Options, cache_dir: str | None) -> Dataset:
  """The population an ingestion wrote to the folder ``data_path``
  (:func:`triehh.data.ingested.read_population`), which must have been
  written for the options' setting and L.

  Raises:
    report.DataError: naming the folder: not an ingestion's, unreadable,
      malformed, or written for another setting or L.
  """
  del cache_dir  # read as written: the folder is the population
  path = options["data_path"]
  try:
    spec = ingested_lib.read_spec(path)
  except (OSError, ValueError, TypeError) as err:
    raise report_lib.DataError(_unreadable(
        path, err, os.path.join(path, ingested_lib.SPEC))) from err
  for name, want, got in (("setting", options["setting"], spec.setting),
                          ("max_length", options["max_length"],
                           spec.max_length)):
    if want != got:
      raise report_lib.DataError(
          f"{path} holds a population ingested with {name}={got}, not "
          f"{name}={want}: read it with {name}={got}")
  try:
    loaded = ingested_lib.read_population(path)
  except (OSError, ValueError, TypeError, KeyError) as err:
    raise report_lib.DataError(_unreadable(path, err)) from err
  return Dataset(loaded.population, loaded.truth, f"ingested:{loaded.name}",
                 loaded.setting, report=loaded.report, info=loaded.info)


def _unreadable(path: str, err: Exception, file: str | None = None) -> str:
  """Why the folder ``path`` is no ingestion one can read, on one line
  (``file``: the file a message that names none is about)."""
  reason = " ".join(str(err).split()) or type(err).__name__
  if isinstance(err, FileNotFoundError) and not err.strerror:
    return reason  # read_spec's: the folder is no ingestion's
  if isinstance(err, OSError) and err.strerror:
    where = os.fsdecode(err.filename) if err.filename is not None else path
    reason = f"{where}: {err.strerror}"
  elif file is not None and file not in reason:
    reason = f"{file}: {reason}"
  return (f"{path} is not a folder an ingestion wrote, or it is damaged: "
          f"{reason}")


def _load_paper(options: Options, cache_dir: str | None) -> Dataset:
  paper = paper_populations.from_options(options, cache_dir)
  return Dataset(paper.population, paper.truth, paper.name, paper.setting,
                 info=paper.info)


_TEXT_OPTIONS = ("data_encoding", "min_word_length")
_OOV_OPTIONS = {"oov": ("dictionary_path", "oov_num_users", "data_seed")}

DATASETS: dict[str, DataSetKind] = {kind.name: kind for kind in (
    DataSetKind(
        "default", "is a synthetic population drawn from the wordfreq "
        "English word list (no download)", file="", needs_file=False,
        text=False, options=("num_users",), setting_options={},
        build=_build_default, load=_load_default),
    DataSetKind(
        "sentiment140", "reads data_path in the official Sentiment140 "
        "layout (csv, csv.gz or trainingandtestdata.zip) with the paper's "
        "tokenizer", file="the Sentiment140 layout", needs_file=True,
        text=True, options=_TEXT_OPTIONS, setting_options=_OOV_OPTIONS,
        build=_text_builder("sentiment140"), load=_load_text),
    DataSetKind(
        "file", "reads user-keyed text (CSV/TSV with a header, JSON Lines, "
        "Parquet) from data_path",
        file="user-keyed CSV/TSV/JSON Lines/Parquet", needs_file=True,
        text=True, options=("data_format", "user_column", "text_column")
        + _TEXT_OPTIONS, setting_options=_OOV_OPTIONS,
        build=_text_builder("file"), load=_load_text),
    DataSetKind(
        "synthetic", "draws num_users users from the frequency table "
        "data_path (word<TAB>weight lines) or, without it, from the "
        "English list (scale tests)", file="a word<TAB>weight table",
        needs_file=False, text=False,
        options=("num_users", "zipf_exponent", "data_seed"),
        setting_options={}, build=_build_synthetic, load=_load_synthetic),
    DataSetKind(
        "paper", "is the paper-calibrated population of the setting "
        "(triehh.data.paper_populations: the published top-100 over shipped "
        "Sentiment140 word counts; multi needs data_path)",
        file="a Sentiment140 file: the tail's counts, or multi's users",
        needs_file=False, text=True, options=("num_users", "data_seed"),
        setting_options={}, build=_build_paper, load=_load_paper),
    DataSetKind(
        "ingested", "reads the folder data_path an ingestion wrote "
        "(triehh.beam.ingest), at the setting and max_length it was "
        "ingested with", file="a folder an ingestion wrote",
        needs_file=True, text=True, options=(), setting_options={},
        build=_build_ingested, load=_load_ingested),
)}


def kind(name: str) -> DataSetKind:
  """The data set called ``name``.

  Raises:
    ValueError: for an unknown name.
  """
  if name not in DATASETS:
    raise ValueError(f"unknown dataset {name!r}: use one of "
                     f"{', '.join(DATASETS)}")
  return DATASETS[name]


def options(name: str, setting: str, values: Options) -> dict:
  """The options (a record's ``config["data"]``) of data set ``name``.

  ``values`` holds ``max_length`` and the values of :data:`OPTIONS` (and
  ``word_counts_path`` for ``paper``); a value left out, and a
  ``num_users`` of None, stand for the data set's default (for ``paper``,
  its setting's n).
  """
  return kind(name).build(setting, values)


def _either(names: Sequence[str]) -> str:
  names = list(names)
  return (names[0] if len(names) == 1
          else f"{', '.join(names[:-1])} or {names[-1]}")


def _scope(option: str, datasets: Sequence[str], settings: Sequence[str],
           ds: str, st: str) -> str:
  """Why ``option`` applies to no (data set, setting) pair given."""
  everywhere = [k.name for k in DATASETS.values() if option in k.options]
  by_setting: dict[str, list[str]] = {}
  for k in DATASETS.values():
    for setting, names in k.setting_options.items():
      if option in names:
        by_setting.setdefault(setting, []).append(k.name)
  these = f"not {ds}={','.join(datasets)}"
  if not by_setting:
    return f"{option} applies to {ds}={_either(everywhere)} only, {these}"
  if not everywhere:
    if not set(by_setting) & set(settings):
      return f"{option} applies to {st}={_either(list(by_setting))} only"
    owners = sorted({n for names in by_setting.values() for n in names},
                    key=list(DATASETS).index)
    return f"{option} applies to {ds}={_either(owners)} only, {these}"
  return (f"{option} applies to {ds}={_either(everywhere)} and "
          f"{st}={_either(list(by_setting))} only")


def check_options(datasets: Sequence[str], settings: Sequence[str],
                  given: Options, *, chosen: bool = True,
                  plural: bool = False) -> list[tuple[str, str]]:
  """Checks data sets x settings against the options given for them.

  Args:
    datasets: names of :data:`DATASETS` (one, or a sweep's list).
    settings: settings (one, or a list).
    given: the options given explicitly (name -> value); names outside
      :data:`OPTIONS` are not looked at.
    chosen: whether the data sets were named explicitly (a ``data_path``
      without them is ambiguous).
    plural: the messages name the lists ``datasets`` and ``settings``
      instead of ``dataset`` and ``setting``.

  Returns:
    The (data set, setting) pairs to build: each data set with each of the
    settings it holds (every setting for text, ``single`` otherwise).

  Raises:
    ValueError: naming an option that no pair would read, a data set
      without the file it needs, or a setting that no data set holds.
  """
  ds, st = ("datasets", "settings") if plural else ("dataset", "setting")
  kinds = [kind(name) for name in datasets]
  for setting in settings:
    settings_lib.check_setting(setting)
  path = given.get("data_path")
  readers = [k.name for k in DATASETS.values() if k.file]
  if "data_path" in given and not chosen:
    ways = [f"{ds}={k.name} ({k.file})" for k in DATASETS.values() if k.file]
    raise ValueError(f"data_path={path} given without {ds}: say how to "
                     f"read it: {_either(ways)}")
  needs = [k.name for k in kinds if k.needs_file]
  if needs and not path:
    raise ValueError(f"{ds}={','.join(needs)} needs data_path")
  if path and not any(k.file for k in kinds):
    raise ValueError(f"{ds}={','.join(datasets)} reads no file; drop "
                     f"data_path or choose {ds}={_either(readers)}")
  pairs = [(k.name, s) for k in kinds for s in settings if s in k.settings]
  if not pairs:
    text = [k.name for k in DATASETS.values() if k.text]
    raise ValueError(f"{st}={','.join(settings)} needs a text data set "
                     f"({ds}={_either(text)})")
  unused = sorted(set(settings) - {s for _, s in pairs})
  if unused:
    raise ValueError(f"{st}={','.join(unused)} applies to no data set of "
                     f"{ds}={','.join(datasets)} (oov and multi need text "
                     "data)")
  for option in OPTIONS:
    if option in given and option != "data_path" and not any(
        DATASETS[d].takes(option, s) for d, s in pairs):
      raise ValueError(_scope(option, datasets, settings, ds, st))
  return pairs


def load_data(options: Options, cache_dir: str | None = None) -> Dataset:
  """The data set ``options`` describe (a record's ``config["data"]``).

  ``options`` holds ``dataset`` (a name of :data:`DATASETS`), ``setting``
  and ``max_length``, and the options of that data set as :func:`options`
  builds them; ``cache_dir`` caches populations built from files (None: no
  cache).
  """
  return kind(options["dataset"]).load(options, cache_dir)


def _canonical(value: Any) -> str:
  return json.dumps(value, sort_keys=True, separators=(",", ":"))


class DataCache:
  """Loads each data set once and encodes its population once."""

  def __init__(self, cache_dir: str | None = None):
    self.cache_dir = cache_dir
    self._loaded: dict[str, Dataset] = {}
    self.loads = 0

  def get(self, options: Options) -> Dataset:
    name = _canonical(options)
    if name not in self._loaded:
      dataset = load_data(options, self.cache_dir)
      dataset.population.encode()
      self._loaded[name] = dataset
      self.loads += 1
    return self._loaded[name]
