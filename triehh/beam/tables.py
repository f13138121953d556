"""The files an ingestion writes, and the population read back from them.

The folder's layout and its reading are :mod:`triehh.data.ingested`'s (no
Beam: the drivers' data set ``ingested`` reads it); its names are used here
as they are there. :func:`write_spec` starts an ingestion's folder; the
pipeline (:mod:`triehh.beam.ingest`) writes the tables. Nothing here
imports Apache Beam.
"""

from __future__ import annotations

import dataclasses
import json
import os

from triehh.data import loader
from triehh.data.ingested import BAGS_PREFIX
from triehh.data.ingested import BAGS_SUFFIX
from triehh.data.ingested import COUNTS
from triehh.data.ingested import MANIFEST
from triehh.data.ingested import OOV_TOKENS
from triehh.data.ingested import output_files
from triehh.data.ingested import read_bags
from triehh.data.ingested import read_pairs
from triehh.data.ingested import read_population
from triehh.data.ingested import read_report
from triehh.data.ingested import read_spec
from triehh.data.ingested import SPEC
from triehh.data.ingested import WORD_USERS

__all__ = ["BAGS_PREFIX", "BAGS_SUFFIX", "COUNTS", "MANIFEST", "OOV_TOKENS",
           "SPEC", "WORD_USERS", "output_files", "read_bags", "read_pairs",
           "read_population", "read_report", "read_spec", "write_manifest",
           "write_spec"]


def write_spec(spec: loader.DataSpec, output_dir: str) -> None:
  """Writes ``spec.json`` (creating ``output_dir``), after removing the
  files of an earlier ingestion there (a stale shard of bags would be read
  back with the new ones)."""
  os.makedirs(output_dir, exist_ok=True)
  for path in output_files(output_dir):
    os.remove(path)
  with open(os.path.join(output_dir, SPEC), "w", encoding="utf-8") as f:
    json.dump(dataclasses.asdict(spec), f, indent=1, sort_keys=True)


def write_manifest(output_dir: str) -> list[str]:
  """Writes ``files.json``, the list of the files in ``output_dir`` (an
  ingestion's own folder, holding nothing else: its staging directory);
  the names listed."""
  names = sorted(n for n in os.listdir(output_dir)
                 if n != MANIFEST
                 and os.path.isfile(os.path.join(output_dir, n)))
  with open(os.path.join(output_dir, MANIFEST), "w", encoding="utf-8") as f:
    json.dump({"files": names}, f, indent=1)
  return names
