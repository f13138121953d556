"""Small data files for the data-layer tests, written into temporary dirs."""

from __future__ import annotations

import csv
import gzip
import io
import os
import zipfile

from triehh.data import datasets


def sentiment140_line(user: str, text: str, polarity: str = "0",
                      tweet_id: str = "1", encoding: str = "latin-1") -> bytes:
  """One row in the official layout: six quoted fields."""
  fields = [polarity, tweet_id, "Mon Apr 06 22:19:45 PDT 2009", "NO_QUERY",
            user, text]
  out = io.StringIO()
  csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(fields)
  return out.getvalue().encode(encoding)


def write(path: str, data: bytes) -> str:
  """Writes bytes, compressing by the file's suffix (.gz, .zip)."""
  if path.endswith(".gz"):
    with gzip.open(path, "wb") as f:
      f.write(data)
  elif path.endswith(".zip"):
    with zipfile.ZipFile(path, "w") as z:
      z.writestr(os.path.basename(path)[:-len(".zip")], data)
  else:
    with open(path, "wb") as f:
      f.write(data)
  return path


def official_zip(path: str, training: bytes, test: bytes) -> str:
  """A trainingandtestdata.zip look-alike: training and test members."""
  with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
    z.writestr("testdata.manual.2009.06.14.csv", test)
    z.writestr("training.1600000.processed.noemoticon.csv", training)
  return path


def sentiment140_sample_path() -> str | None:
  """The real Sentiment140 sample, or None when it is not available."""
  return datasets.sentiment140_sample()
