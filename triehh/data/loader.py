"""Load a data file into a population for one of the paper's settings.

``load(DataSpec(...))`` reads the file (``readers``), splits texts into
words (``tokenize``), builds the setting's population (``settings``) and
returns it with its ground truth and a report of skipped rows. With a cache
directory, the built population is stored keyed by every input (``cache``)
and later loads of the same inputs skip all of that.
"""

from __future__ import annotations

import dataclasses
import functools
import os

import numpy as np

from triehh.core import population as population_lib
from triehh.core import validation
from triehh.data import cache as cache_lib
from triehh.data import dictionary as dictionary_lib
from triehh.data import input_files
from triehh.data import readers
from triehh.data import report as report_lib
from triehh.data import settings as settings_lib
from triehh.data import tokenize as tokenize_lib
from triehh.data import user_texts

# The data sets of triehh.data.datasets that a DataSpec reads (the others
# are built without reading user text).
FILE_DATASETS = ("sentiment140", "file")


@dataclasses.dataclass(frozen=True)
class DataSpec:
  """Everything that determines a loaded population.

  Attributes:
    path: the data file.
    dataset: ``"sentiment140"`` (official layout, see ``readers``) or
      ``"file"`` (generic user-keyed text).
    setting: ``"single"``, ``"oov"`` or ``"multi"`` (see ``settings``).
    file_format: for ``"file"``: ``"auto"`` (by extension), ``"csv"``,
      ``"tsv"``, ``"jsonl"`` or ``"parquet"``.
    user_column: column naming the user (``"file"`` only).
    text_column: column holding the text (``"file"`` only).
    encoding: ``"utf-8"`` or ``"latin-1"``; None for the format's default.
    tokenizer: ``"simple"`` (default) or ``"paper"``, the paper authors'
      preprocessing (``settings`` module docstring); it sets the defaults of
      ``characters`` and ``strip`` and drops links.
    min_length: shortest word kept, in characters.
    max_length: L, the population's maximum word length.
    characters: allowed characters of words; None for the setting's and
      tokenizer's default (``tokenize.DEFAULT_CHARACTERS``,
      ``settings.OOV_CHARACTERS`` or ``settings.PAPER_CHARACTERS``).
    strip: characters removed from both ends of tokens; None for the
      setting's and tokenizer's default (none, ``settings.OOV_STRIP`` or
      ``settings.PAPER_STRIP``).
    unknown: a word with a character outside ``characters`` is dropped
      (``"drop"``) or stops the load naming it and its row (``"error"``).
    dictionary_path: ``oov``: a word-list file of in-vocabulary words; None
      for the default (``dictionary.default_words``).
    dictionary_size: ``oov``: size of the default dictionary.
    oov_num_users: ``oov``: users drawn.
    seed: ``oov``: seed of the draw.
    max_malformed_share: refuse a file with a larger share of malformed rows
      (``report.check_malformed``; it warns above half).
  """

  path: str
  dataset: str = "file"
  setting: str = "single"
  file_format: str = "auto"
  user_column: str = "user"
  text_column: str = "text"
  encoding: str | None = None
  tokenizer: str = settings_lib.DEFAULT_TOKENIZER
  min_length: int = tokenize_lib.DEFAULT_MIN_LENGTH
  max_length: int = population_lib.DEFAULT_MAX_LENGTH
  characters: str | None = None
  strip: str | None = None
  unknown: str = "drop"
  dictionary_path: str | None = None
  dictionary_size: int = dictionary_lib.DEFAULT_SIZE
  oov_num_users: int = settings_lib.DEFAULT_OOV_NUM_USERS
  seed: int = 0
  max_malformed_share: float = report_lib.MAX_MALFORMED_SHARE

  def __post_init__(self):
    if not isinstance(self.path, (str, os.PathLike)):
      # An int would be read as an open file descriptor.
      raise TypeError(f"path must be a file path (a string), got "
                      f"{self.path!r:.60}")
    if self.dataset not in FILE_DATASETS:
      raise ValueError(f"unknown dataset {self.dataset!r}: use one of "
                       f"{', '.join(FILE_DATASETS)}")
    settings_lib.check_setting(self.setting)
    settings_lib.check_tokenizer(self.tokenizer)
    validation.check_choice("unknown", self.unknown, ("drop", "error"))
    validation.check_int("min_length", self.min_length)
    validation.check_int("max_length", self.max_length)
    if not 0 <= self.max_malformed_share <= 1:
      raise ValueError(f"max_malformed_share must be in [0, 1], got "
                       f"{self.max_malformed_share}")
    if self.setting == "oov":
      validation.check_int("oov_num_users", self.oov_num_users)

  @property
  def allowed_characters(self) -> str:
    return (self.characters if self.characters is not None
            else settings_lib.characters_for(self.setting, self.tokenizer))

  @property
  def strip_characters(self) -> str:
    return (self.strip if self.strip is not None
            else settings_lib.strip_for(self.setting, self.tokenizer))

  @property
  def drop_prefixes(self) -> tuple[str, ...]:
    return settings_lib.drop_prefixes_for(self.tokenizer)

  @property
  def name(self) -> str:
    if self.dataset == "sentiment140":
      return "sentiment140"
    return os.path.basename(self.path)


@dataclasses.dataclass
class LoadedData:
  """A population ready for the engines, with its provenance.

  Attributes:
    population: the users and their words.
    name: data set name.
    setting: ``single``, ``oov`` or ``multi``.
    report: rows read and skipped, users without words.
    info: setting facts (see ``settings.SettingResult.info``).
    from_cache: whether the population came from the cache.
    cache_path: the cache entry read or written, if any.
  """

  population: population_lib.Population
  name: str
  setting: str
  report: report_lib.LoadReport
  info: dict
  from_cache: bool = False
  cache_path: str | None = None

  @functools.cached_property
  def truth(self) -> dict[str, float]:
    """Word -> ground-truth weight (``Population.ground_truth``)."""
    return self.population.ground_truth()

  def frequencies(self) -> dict[str, float]:
    """Word -> true frequency: the weight over the number of users."""
    n = self.population.num_users
    return {w: v / n for w, v in self.truth.items()}


def cache_description(spec: DataSpec) -> dict:
  """Every input of ``spec``, as the cache key sees it."""
  description = {"spec": dataclasses.asdict(spec),
                 "data": cache_lib.file_identity(spec.path),
                 # Resolved defaults, so a change of a default is a miss.
                 "characters": spec.allowed_characters,
                 "strip": spec.strip_characters,
                 "drop_prefixes": list(spec.drop_prefixes)}
  # Refusing a file or not never changes a population that was built.
  description["spec"].pop("max_malformed_share")
  if spec.setting == "oov":
    description["dictionary"] = (
        cache_lib.file_identity(spec.dictionary_path) if spec.dictionary_path
        else dictionary_lib.default_name(spec.dictionary_size))
  else:  # These options do not change single / multi populations.
    for unused in ("dictionary_path", "dictionary_size", "oov_num_users",
                   "seed"):
      description["spec"].pop(unused)
  return description


def load(spec: DataSpec, cache_dir: str | None = None) -> LoadedData:
  """Builds (or fetches from ``cache_dir``) the population ``spec`` names.

  Args:
    spec: the inputs.
    cache_dir: directory of the on-disk cache; None or ``""`` for none.

  Raises:
    FileNotFoundError: the data or dictionary file does not exist.
    report.DataError: a file is not a regular file (a pipe, a device...),
      cannot be read, or holds nothing usable.
  """
  input_files.check_regular_file(spec.path, "data file")
  if spec.dictionary_path:
    input_files.check_regular_file(spec.dictionary_path, "dictionary file")
  built: list[LoadedData] = []

  def make():
    built.append(build(spec))
    return built[0].population, {"report": built[0].report.to_dict(),
                                 "info": built[0].info}

  pop, meta, path, from_cache = cache_lib.fetch(
      cache_dir, cache_description(spec), make, _check_metadata)
  if not from_cache:
    built[0].cache_path = path
    return built[0]
  return LoadedData(
      population=pop, name=spec.name, setting=spec.setting,
      report=report_lib.LoadReport.from_dict(meta["report"]),
      info=meta.get("info", {}), from_cache=True, cache_path=path)


def _check_metadata(meta: dict) -> None:
  """Raises ``ValueError`` unless a cache entry holds what ``load`` stored."""
  if not isinstance(meta.get("info"), dict):
    raise ValueError("the entry's 'info' is not an object")
  report_lib.LoadReport.from_dict(meta["report"])


def build(spec: DataSpec) -> LoadedData:
  """Reads, tokenises and builds the population (no cache)."""
  texts = readers.read(
      spec.path, "sentiment140" if spec.dataset == "sentiment140"
      else spec.file_format, user_column=spec.user_column,
      text_column=spec.text_column, encoding=spec.encoding,
      max_malformed_share=spec.max_malformed_share)
  report = texts.report
  row_user, num_users = user_codes(texts)
  report.num_users = num_users
  characters = spec.allowed_characters
  tokens = tokenize_lib.tokenize(texts, min_length=spec.min_length,
                                 characters=characters,
                                 strip=spec.strip_characters,
                                 unknown=spec.unknown,
                                 drop_prefixes=spec.drop_prefixes)
  del texts
  if tokens.num_tokens == 0:
    raise report_lib.DataError(
        f"no usable word in {spec.path} (words of at least "
        f"{spec.min_length} characters from the allowed set): "
        f"{report.summary()}")
  if spec.setting == "single":
    result = settings_lib.single_word(tokens, row_user, num_users,
                                      characters=characters,
                                      max_length=spec.max_length)
  elif spec.setting == "multi":
    result = settings_lib.multi_word(tokens, row_user, num_users,
                                     characters=characters,
                                     max_length=spec.max_length)
  else:
    result = settings_lib.oov(tokens, dictionary_words(spec),
                              num_users=spec.oov_num_users,
                              seed=spec.seed, max_length=spec.max_length,
                              characters=characters)
    result.users_without_words = 0
  report.users_without_words = result.users_without_words
  return LoadedData(population=result.population, name=spec.name,
                    setting=spec.setting, report=report, info=result.info)


def dictionary_words(spec: DataSpec):
  """``oov``: the in-vocabulary words ``spec`` names."""
  return (dictionary_lib.load_words(spec.dictionary_path)
          if spec.dictionary_path
          else dictionary_lib.default_words(spec.dictionary_size))


def user_codes(texts: user_texts.UserTexts) -> tuple[np.ndarray, int]:
  """``int32 [rows]`` user index of each row (-1 if invalid), and #users."""
  pa = user_texts.import_pyarrow()
  encoded = pa.compute.dictionary_encode(texts.users)
  codes = np.concatenate(
      [c.indices.fill_null(-1).to_numpy(zero_copy_only=False)
       for c in encoded.chunks]) if encoded.num_chunks else np.zeros(
           0, np.int32)
  codes = codes.astype(np.int32, copy=False)
  if texts.valid is None:
    num = len(encoded.chunks[0].dictionary) if encoded.num_chunks else 0
    return codes, num
  uniq, inverse = np.unique(codes[texts.valid], return_inverse=True)
  out = np.full(codes.size, -1, dtype=np.int32)
  out[texts.valid] = inverse
  return out, int(uniq.size)
