"""The folder an ingestion writes (:mod:`triehh.beam.ingest`), and the
population read back from it, with no Apache Beam.

A folder holds:

* ``spec.json``: the :class:`~triehh.data.loader.DataSpec` (its ``path`` the
  input glob);
* ``counts.tsv``: ``name<TAB>count`` lines, the load report's counts summed
  over the shards (``rows_read``, ``skipped:<reason>``, ``num_users``,
  ``users_without_words``);
* ``single``: ``word_users.tsv``, ``word<TAB>users`` lines: the
  word-frequency table :meth:`Population.from_word_frequencies
  <triehh.core.population.Population.from_word_frequencies>` reads;
* ``multi``: ``bags-*.jsonl``, one user a line, ``{"first": [shard, index],
  "words": {word: count}}``: the users' bags the several-words engine runs
  on (users in the order of their first row, as the in-memory loader
  numbers them);
* ``oov``: ``oov_tokens.tsv``, ``word<TAB>tokens`` over every token; the
  dictionary's words are removed and the users drawn when it is read back
  (:func:`triehh.data.settings.oov_table`, ``oov_from_counts``);
* ``files.json``: ``{"files": [names]}``, the files above the ingestion
  wrote, the only ones a later ingestion into the folder replaces or
  removes and the only bags read: a file of the user's there is never
  touched, even one named ``bags-*.jsonl``. (A folder written before the
  list was kept: the names above, the bags as Beam names its shards,
  ``bags-00000-of-00002.jsonl``.)

Words never hold whitespace (the tokenizer splits on it), so the tables
need no quoting. :func:`read_population` is what the data set ``ingested``
(:mod:`triehh.data.datasets`) loads; :mod:`triehh.beam.tables` writes the
spec.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np

from triehh.core import alphabet as alphabet_lib
from triehh.core import population as population_lib
from triehh.data import loader
from triehh.data import report as report_lib
from triehh.data import settings as settings_lib

SPEC = "spec.json"
COUNTS = "counts.tsv"
WORD_USERS = "word_users.tsv"
OOV_TOKENS = "oov_tokens.tsv"
BAGS_PREFIX = "bags"
BAGS_SUFFIX = ".jsonl"
MANIFEST = "files.json"
# The bags' files as Beam names its shards (a folder without MANIFEST).
_BAGS_SHARD = re.compile(re.escape(BAGS_PREFIX) + r"-\d{5}-of-\d{5}"
                         + re.escape(BAGS_SUFFIX))


def output_files(output_dir: str) -> list[str]:
  """The files an ingestion wrote in ``output_dir`` (its ``files.json``
  and those it lists; without it, the tables' names and Beam's shards of
  bags), the list first, then sorted by name."""
  manifest = os.path.join(output_dir, MANIFEST)
  if os.path.isfile(manifest):
    names = [n for n in read_manifest(output_dir) if n != MANIFEST]
    first = [manifest]
  else:
    names = [SPEC, COUNTS, WORD_USERS, OOV_TOKENS] + [
        n for n in _listing(output_dir) if _BAGS_SHARD.fullmatch(n)]
    first = []
  return first + sorted(os.path.join(output_dir, n) for n in set(names)
                        if os.path.isfile(os.path.join(output_dir, n)))


def _listing(output_dir: str) -> list[str]:
  try:
    return os.listdir(output_dir)
  except FileNotFoundError:
    return []


def read_manifest(output_dir: str) -> list[str]:
  """The names ``<output_dir>/files.json`` lists.

  Raises:
    report.DataError: naming the file, if it is not such a list.
  """
  path = os.path.join(output_dir, MANIFEST)
  with open(path, encoding="utf-8") as f:
    try:
      names = json.load(f)["files"]
    except (ValueError, KeyError, TypeError) as err:
      raise report_lib.DataError(
          f"{path}: not the list of an ingestion's files ({err})") from None
  if not isinstance(names, list) or not all(
      isinstance(n, str) and n and os.path.basename(n) == n
      and n not in (".", "..") for n in names):
    raise report_lib.DataError(f"{path}: not the list of an ingestion's "
                               "files (file names in this folder)")
  return names


def is_bags(path: str) -> bool:
  """Whether ``path``, a file of an ingestion, holds users' bags."""
  name = os.path.basename(path)
  return name.startswith(BAGS_PREFIX) and name.endswith(BAGS_SUFFIX)


def read_spec(output_dir: str) -> loader.DataSpec:
  """The spec an output directory was written for."""
  path = os.path.join(output_dir, SPEC)
  if not os.path.isfile(path):
    raise FileNotFoundError(f"{output_dir} holds no {SPEC}: not the output "
                            "of an ingestion")
  with open(path, encoding="utf-8") as f:
    return loader.DataSpec(**json.load(f))


def read_pairs(path: str) -> tuple[list[str], list[int]]:
  """The ``name<TAB>count`` lines of a table file."""
  names, counts = [], []
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
      line = line.rstrip("\n")
      if not line:
        continue
      name, tab, count = line.rpartition("\t")
      if not tab or not count.isdigit():
        raise report_lib.DataError(
            f"{path} line {number}: expected 'name<TAB>count', got "
            f"{line[:60]!r}")
      names.append(name)
      counts.append(int(count))
  return names, counts


def report_of(counts: dict[str, int], source: str) -> report_lib.LoadReport:
  """The :class:`LoadReport` of summed counts (no example places: those
  are per shard)."""
  report = report_lib.LoadReport(source=source,
                                 rows_read=counts.get("rows_read", 0))
  for key, n in sorted(counts.items()):
    if key.startswith("skipped:") and n:
      report.skipped[key[len("skipped:"):]] = n
  report.num_users = counts.get("num_users", 0)
  report.users_without_words = counts.get("users_without_words", 0)
  return report


def read_report(output_dir: str) -> report_lib.LoadReport:
  """The summed load report (no example places: those are per shard)."""
  spec = read_spec(output_dir)
  names, counts = read_pairs(os.path.join(output_dir, COUNTS))
  return report_of(dict(zip(names, counts)), spec.path)


def read_bags(output_dir: str) -> list[dict[str, int]]:
  """``multi``: the users' bags, in the order of their first row."""
  paths = [p for p in output_files(output_dir) if is_bags(p)]
  users = []
  for path in paths:
    with open(path, encoding="utf-8") as f:
      for line in f:
        if line.strip():
          bag = json.loads(line)
          users.append((tuple(bag["first"]), bag["words"]))
  users.sort(key=lambda user: user[0])
  return [words for _, words in users]


def read_population(output_dir: str) -> loader.LoadedData:
  """The population an ingestion wrote, as ``loader.build`` returns it.

  Raises:
    report.DataError: no usable word, or a mostly malformed input (the
      share of ``spec.max_malformed_share``, on the summed report).
  """
  spec = read_spec(output_dir)
  report = read_report(output_dir)
  report_lib.check_malformed(report, spec.max_malformed_share, "")
  characters = spec.allowed_characters
  alphabet = alphabet_lib.Alphabet.of(characters)
  info: dict = {}
  if spec.setting == "single":
    words, users = read_pairs(os.path.join(output_dir, WORD_USERS))
    _check_words(words, spec, report)
    pop = population_lib.Population.from_word_frequencies(
        words, np.asarray(users, dtype=np.int64),
        max_length=spec.max_length, alphabet=alphabet)
  elif spec.setting == "multi":
    bags = read_bags(output_dir)
    _check_words(bags, spec, report)
    pop = population_lib.Population.from_user_words(
        bags, max_length=spec.max_length, alphabet=alphabet)
  else:
    words, tokens = read_pairs(os.path.join(output_dir, OOV_TOKENS))
    _check_words(words, spec, report)
    table = settings_lib.oov_table(np.asarray(words, dtype=object),
                                   np.asarray(tokens, dtype=np.int64),
                                   loader.dictionary_words(spec))
    result = settings_lib.oov_from_counts(
        *table, num_users=spec.oov_num_users, seed=spec.seed,
        max_length=spec.max_length, characters=characters)
    pop, info = result.population, result.info
    report.users_without_words = 0
  return loader.LoadedData(population=pop, name=spec.name,
                           setting=spec.setting, report=report, info=info)


def _check_words(words, spec: loader.DataSpec,
                 report: report_lib.LoadReport) -> None:
  """``loader.build``'s refusal of an input with no usable word."""
  if not words:
    raise report_lib.DataError(
        f"no usable word in {spec.path} (words of at least "
        f"{spec.min_length} characters from the allowed set): "
        f"{report.summary()}")
