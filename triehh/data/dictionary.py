"""Dictionaries of in-vocabulary words, for the out-of-vocabulary setting.

The paper removed the words of "a highly tuned dictionary of over 260k
words", which it does not publish. Two sources are offered here:

* a word-list file (``--dictionary_path``): one word per line, the first
  whitespace-separated field of each line taken (so ``word<TAB>count``
  tables work), lower-cased; blank lines and lines starting with ``#`` are
  ignored. UTF-8, optionally ``.gz``; a regular file whose lines are at
  most ``input_files.MAX_LINE_BYTES`` long (a longer line is an error naming
  it).
* the default: the ``DEFAULT_SIZE`` most frequent English words of the
  ``wordfreq`` package (its ``top_n_list("en", ...)``: frequencies from
  web, subtitle, news, book and social-media text). It is a frequency list,
  not a spelling dictionary, so common informal spellings (``dont``,
  ``thats``, ``sooo``) are in it when frequent enough and count as
  in-vocabulary; the smaller ``DEFAULT_SIZE``, the more of them stay OOV but
  the more rare real words do too. 50,000 gave the out-of-vocabulary head
  closest to the paper's list on a Sentiment140 sample (about half of the
  top 100 in common, against a third with 20,000 or 200,000 words).
"""

from __future__ import annotations

import typing
import zipfile
import zlib

if typing.TYPE_CHECKING:
  import pandas as pd

from triehh.data import input_files
from triehh.data import report as report_lib

DEFAULT_SIZE = 50_000


def default_name(size: int = DEFAULT_SIZE) -> str:
  """A description of the default dictionary (its identity for caching)."""
  try:
    import wordfreq  # pylint: disable=g-import-not-at-top
    version = getattr(wordfreq, "__version__", None)
    if version is None:
      from importlib import metadata  # pylint: disable=g-import-not-at-top
      version = metadata.version("wordfreq")
  except ImportError:
    version = "missing"
  return f"wordfreq-{version}-en-top{size}"


def default_words(size: int = DEFAULT_SIZE) -> pd.Index:
  """The ``size`` most frequent English words of ``wordfreq``, lower-cased."""
  import pandas as pd  # pylint: disable=g-import-not-at-top
  if size < 1:
    raise ValueError(f"the dictionary size must be >= 1, got {size}")
  try:
    import wordfreq  # pylint: disable=g-import-not-at-top
  except ImportError as err:
    raise ImportError("the default OOV dictionary needs the 'wordfreq' "
                      "package (or pass a dictionary file)") from err
  return pd.Index(sorted({w.lower() for w in wordfreq.top_n_list("en", size)}))


def load_words(path: str) -> pd.Index:
  """The words of a word-list file (see the module docstring)."""
  import pandas as pd  # pylint: disable=g-import-not-at-top
  words = set()
  try:
    for _, line in input_files.text_lines(path, "dictionary file"):
      fields = line.split(maxsplit=1)
      if fields and not fields[0].startswith("#"):
        words.add(fields[0].lower())
  except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as err:
    if isinstance(err, FileNotFoundError):
      raise
    raise report_lib.DataError(
        f"cannot read dictionary {path}: {err}") from err
  if not words:
    raise report_lib.DataError(f"dictionary {path} holds no word")
  return pd.Index(sorted(words))
