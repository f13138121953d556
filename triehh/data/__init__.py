"""Real data: user-keyed text files into populations for the paper's settings.

  from triehh import data
  loaded = data.load(data.DataSpec("training.1600000.processed.noemoticon.csv",
                                   dataset="sentiment140", setting="single"),
                     cache_dir=data.default_cache_dir())
  loaded.population, loaded.truth, loaded.report.summary()

Modules: ``readers`` (file formats), ``tokenize`` (words), ``settings``
(single / oov / multi, and the ``simple`` / ``paper`` tokenizers),
``dictionary`` (OOV dictionaries), ``cache`` (on-disk cache), ``report``
(skipped rows, the malformed-share refusal), ``loader`` (all of it).
"""

import typing

from triehh.core import lazy_names

if typing.TYPE_CHECKING:  # the same names, for type checkers and import checks
  from triehh.core.files import default_cache_dir
  from triehh.data.loader import build
  from triehh.data.loader import DataSpec
  from triehh.data.loader import FILE_DATASETS
  from triehh.data.loader import load
  from triehh.data.loader import LoadedData
  from triehh.data.report import DataError
  from triehh.data.report import LoadReport
  from triehh.data.report import MAX_MALFORMED_SHARE
  from triehh.data.settings import DEFAULT_OOV_NUM_USERS
  from triehh.data.settings import DEFAULT_TOKENIZER
  from triehh.data.settings import SETTINGS
  from triehh.data.settings import TOKENIZERS
  from triehh.data.tokenize import DEFAULT_MIN_LENGTH

# Imported on first use: a driver reading the data flags' defaults does not
# load the readers.
_PUBLIC = {
    "default_cache_dir": "triehh.core.files",
    "build": "triehh.data.loader",
    "DataSpec": "triehh.data.loader",
    "FILE_DATASETS": "triehh.data.loader",
    "load": "triehh.data.loader",
    "LoadedData": "triehh.data.loader",
    "DataError": "triehh.data.report",
    "LoadReport": "triehh.data.report",
    "MAX_MALFORMED_SHARE": "triehh.data.report",
    "DEFAULT_OOV_NUM_USERS": "triehh.data.settings",
    "DEFAULT_TOKENIZER": "triehh.data.settings",
    "SETTINGS": "triehh.data.settings",
    "TOKENIZERS": "triehh.data.settings",
    "DEFAULT_MIN_LENGTH": "triehh.data.tokenize",
}

__all__ = [
    "DEFAULT_MIN_LENGTH", "DEFAULT_OOV_NUM_USERS", "DEFAULT_TOKENIZER",
    "DataError", "DataSpec", "FILE_DATASETS", "LoadReport", "LoadedData",
    "MAX_MALFORMED_SHARE", "SETTINGS", "TOKENIZERS", "build",
    "default_cache_dir", "load",
]

__getattr__, __dir__ = lazy_names.attribute_functions(
    __name__, globals(), _PUBLIC)
