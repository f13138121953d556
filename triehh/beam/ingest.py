"""Populations built on Apache Beam from sharded user-keyed text.

:func:`ingest` reads every file of a glob (CSV, TSV, JSON Lines, Parquet,
Sentiment140; plain or compressed, as :mod:`triehh.data.readers` reads
them), one shard per element, with the in-memory loader's own functions
(:mod:`triehh.beam.shards`), and writes the population's tables
(:mod:`triehh.beam.tables`); :func:`ingest_read` also returns the
population it wrote, read back under the folder's lock. :func:`triehh.beam.tables.read_population` reads
them back into what :func:`triehh.data.loader.build` returns on the shards
concatenated in path order: the same population and the same report counts.

Two layouts:

* users may have rows in several shards (the default): each shard gives
  its users' word counts and first positions, grouped by user across
  shards (one shuffle of one element per user and shard) and merged;
* ``users_sharded=True``: each user's rows are in one shard (data
  partitioned by user, as Beam's own sharded writes leave it): each shard
  is built by the setting's own function (``settings.single_word`` or
  ``multi_word``) and only word tables are combined, so memory is bounded
  by a shard and the vocabulary, not by the rows or the users.

The tables are written to a new directory beside ``output_dir``, read
back (which refuses a mostly malformed input), listed in ``files.json``
and only then moved into ``output_dir`` in place of the files an earlier
ingestion listed there; no other file of the folder is touched. An
ingestion that fails, is interrupted (Ctrl-C) or terminated (SIGTERM:
:func:`triehh.core.processes.terminate_raises`) removes its new directory
and leaves the earlier population whole. One ingestion writes a folder at
a time: a second one started while the first runs raises BlockingIOError
naming the folder, having written nothing (:func:`lock_path`, the lock).
A full disk and an out-of-memory
shard are said in a line naming the folder and its free space, or the
shard, its size and the remedy.

Apache Beam is imported by this module only; ``import triehh`` does not
import it.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile

import apache_beam as beam
from apache_beam.options import pipeline_options

from triehh.beam import shards
from triehh.beam import tables
from triehh.core import files
from triehh.core import memory
from triehh.core import processes
from triehh.data import loader


def options(runner: str = "DirectRunner", **extra) -> (
    pipeline_options.PipelineOptions):
  """Pipeline options for ``runner`` (others as keyword flags)."""
  return pipeline_options.PipelineOptions(flags=[], runner=runner, **extra)


def ingest(spec: loader.DataSpec, output_dir: str, *,
           users_sharded: bool = False, split_bytes: int | None = None,
           pipeline_opts: pipeline_options.PipelineOptions | None = None
           ) -> list[str]:
  """Runs the ingestion of ``spec.path`` (a file or a glob) into
  ``output_dir``; returns the files read, in order (as
  :func:`ingest_read`, whose arguments and errors these are)."""
  return ingest_read(spec, output_dir, users_sharded=users_sharded,
                     split_bytes=split_bytes, pipeline_opts=pipeline_opts)[0]


def ingest_read(spec: loader.DataSpec, output_dir: str, *,
                users_sharded: bool = False, split_bytes: int | None = None,
                pipeline_opts: pipeline_options.PipelineOptions | None = None
                ) -> tuple[list[str], loader.LoadedData]:
  """Runs the ingestion of ``spec.path`` (a file or a glob) into
  ``output_dir``; returns the files read, in order, and the population
  written, read back from the tables this ingestion wrote while it held
  the folder's lock (never from the folder after the lock is released,
  which another ingestion may have rewritten by then).

  Args:
    spec: what to read and build (``spec.path`` a file or a glob).
    output_dir: where the tables are written (``triehh.beam.tables``).
    users_sharded: each user's rows are all in one file.
    split_bytes: cut plain text files larger than this into line-aligned
      pieces read in parallel (``triehh.beam.pieces``); None: whole files.
    pipeline_opts: the runner and its options (default: the DirectRunner).

  Raises:
    FileNotFoundError: no file matches ``spec.path``.
    ValueError: ``users_sharded`` with ``split_bytes`` (a cut may fall
      inside a user's rows).
    BlockingIOError: another ingestion is writing ``output_dir``.
  """
  if users_sharded and split_bytes:
    raise ValueError("users_sharded needs each user's rows in one shard, "
                     "but split_bytes cuts files between any two lines: "
                     "give one or the other")
  paths = shards.expand(spec.path)
  units = shards.split(spec, paths, split_bytes)
  parent = os.path.dirname(os.path.abspath(output_dir))
  os.makedirs(parent, exist_ok=True)
  with processes.terminate_raises():  # SIGTERM: the staging is removed too
    held = files.lock(lock_path(output_dir))
    if held is None:
      raise BlockingIOError(
          errno.EWOULDBLOCK, "another ingestion is writing this folder: "
          "wait for it to end or write to another folder (nothing was "
          "written)", output_dir)
    try:
      staging = tempfile.mkdtemp(
          prefix=f".{os.path.basename(os.path.abspath(output_dir))}"
          ".ingesting-", dir=parent)
    except BaseException:
      os.close(held)
      raise
    try:
      _build_tables(spec, units, staging, users_sharded, pipeline_opts)
      loaded = tables.read_population(staging)  # refuses what cannot be used
      tables.write_manifest(staging)
      _move_tables(staging, output_dir)
    except Exception as err:  # pylint: disable=broad-except
      said = _said(err, output_dir, users_sharded)
      if said is None:
        raise
      raise said from None
    finally:
      shutil.rmtree(staging, ignore_errors=True)
      os.close(held)  # releases the folder
  return paths, loaded


def _build_tables(spec: loader.DataSpec, units: list, staging: str,
                  users_sharded: bool,
                  pipeline_opts: pipeline_options.PipelineOptions | None
                  ) -> None:
  """Writes ``spec`` and the tables of ``units`` into ``staging`` (one
  Beam pipeline)."""
  tables.write_spec(spec, staging)
  with beam.Pipeline(options=pipeline_opts or options()) as p:
    inputs = (p | "Shards" >> beam.Create(list(enumerate(units)))
              | "Spread" >> beam.Reshuffle())
    if users_sharded:
      counts = _by_shard(spec, inputs, staging)
    else:
      counts = _by_user(spec, inputs, staging)
    _ = (counts | "AddCounts" >> beam.CombinePerKey(sum)
         | "FormatCounts" >> beam.MapTuple(lambda k, n: f"{k}\t{n}")
         | "WriteCounts" >> _write(staging, tables.COUNTS))


def lock_path(output_dir: str) -> str:
  """The lock file an ingestion into ``output_dir`` holds while it runs:
  ``.<name>.ingest.lock`` beside the folder (its real path, so that two
  names of one folder share it); never in it, so never taken for a table,
  and left in place, empty, for the next."""
  real = os.path.realpath(output_dir)
  return os.path.join(os.path.dirname(real),
                      f".{os.path.basename(real)}.ingest.lock")


def _causes(err: BaseException):
  """``err`` and the exceptions it was raised from or during (Beam wraps a
  worker's exception in a RuntimeError)."""
  seen = set()
  while err is not None and id(err) not in seen:
    seen.add(id(err))
    yield err
    err = err.__cause__ or err.__context__


def _said(err: Exception, output_dir: str, users_sharded: bool
          ) -> BaseException | None:
  """What a failed ingestion raises in place of ``err``: a SIGTERM, a full
  disk (naming ``output_dir`` and the space left there), an out-of-memory
  shard (naming it, its size and the remedy) or another OSError, as it
  is; None: ``err`` as it is."""
  for cause in _causes(err):
    if isinstance(cause, processes.Terminated):
      return cause
    if isinstance(cause, OSError) and cause.errno == errno.ENOSPC:
      return OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} writing "
                     f"the population ({_free(output_dir)} free there); "
                     "the earlier files are left as they were",
                     output_dir)
    if isinstance(cause, shards.ShardMemoryError):
      remedy = ("split the input into smaller files (users_sharded reads "
                "each file whole)" if users_sharded else
                "give split_bytes (64 KiB or more) to read plain text files "
                "in smaller pieces, or split the input into smaller files")
      return MemoryError(f"{cause}: {remedy}")
    if isinstance(cause, MemoryError):
      return MemoryError("out of memory building the population (not in "
                         "reading one shard): run on a machine or runner "
                         "with more memory")
    if isinstance(cause, OSError) and cause is not err and cause.strerror:
      return cause
  return None


def _free(output_dir: str) -> str:
  """The free space of the file system ``output_dir`` is written to."""
  try:
    free = shutil.disk_usage(os.path.dirname(os.path.abspath(output_dir)))
  except OSError:
    return "unknown space"
  return memory.format_bytes(free.free)


def _move_tables(staging: str, output_dir: str) -> None:
  """Replaces the files of an earlier ingestion in ``output_dir`` (made if
  needed; those its ``files.json`` lists) with those in ``staging``; other
  files there are left alone. The list goes first and comes back last, so
  that a folder caught in between is read as one without a list (the new
  tables, no stale bags)."""
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise NotADirectoryError(f"output_dir={output_dir} is a file, not a "
                             "directory")
  os.makedirs(output_dir, exist_ok=True)
  new = tables.output_files(staging)
  names = {os.path.basename(path) for path in new}
  for path in tables.output_files(output_dir):  # the list first
    if os.path.basename(path) not in names or path.endswith(tables.MANIFEST):
      os.remove(path)
  for path in new[1:] + new[:1]:  # the list last
    os.replace(path, os.path.join(output_dir, os.path.basename(path)))


def _write(output_dir: str, name: str):
  """One text file named ``name`` in ``output_dir``."""
  return beam.io.WriteToText(os.path.join(output_dir, name), num_shards=1,
                             shard_name_template="")


def _write_table(pairs, output_dir: str, name: str, label: str) -> None:
  _ = (pairs | f"Add{label}" >> beam.CombinePerKey(sum)
       | f"Format{label}" >> beam.MapTuple(lambda w, n: f"{w}\t{n}")
       | f"Write{label}" >> _write(output_dir, name))


def _write_bags(bags, output_dir: str) -> None:
  _ = (bags | "FormatBags" >> beam.Map(
      lambda bag: json.dumps({"first": list(bag[0]), "words": bag[1]},
                             sort_keys=True))
       | "WriteBags" >> beam.io.WriteToText(
           os.path.join(output_dir, tables.BAGS_PREFIX),
           file_name_suffix=tables.BAGS_SUFFIX))


def _by_shard(spec: loader.DataSpec, inputs, output_dir: str):
  """Users partitioned by shard: each shard built whole; the counts."""
  read = inputs | "Read" >> beam.Map(
      lambda item: shards.read_user_shard(spec, item[0], item[1]))
  counts = read | "Counts" >> beam.FlatMap(lambda r: r[0].items())
  if spec.setting == "multi":
    bags = read | "Bags" >> beam.FlatMap(
        lambda r: (((i, rank), bag) for i, rank, bag in r[1]))
    _write_bags(bags, output_dir)
  else:
    pairs = read | "Pairs" >> beam.FlatMap(lambda r: r[1].items())
    _write_table(pairs, output_dir,
                 tables.OOV_TOKENS if spec.setting == "oov"
                 else tables.WORD_USERS, "Table")
  return counts


def _by_user(spec: loader.DataSpec, inputs, output_dir: str):
  """Users across shards: grouped by user and merged; the counts."""
  read = inputs | "Read" >> beam.ParDo(_ReadShard(spec)).with_outputs(
      "counts", "tokens", main="users")
  shard_counts = read.counts | "ShardCounts" >> beam.FlatMap(dict.items)
  if spec.setting == "oov":
    _write_table(read.tokens, output_dir, tables.OOV_TOKENS, "Table")
    user_counts = (read.users | "UserKeys" >> beam.Keys()
                   | "Distinct" >> beam.Distinct()
                   | "CountUsers" >> beam.Map(lambda _: ("num_users", 1)))
  else:
    users = (read.users | "ByUser" >> beam.GroupByKey()
             | "Merge" >> beam.MapTuple(
                 lambda _, parts: shards.merge_parts(parts)))
    user_counts = users | "UserCounts" >> beam.FlatMap(
        shards.iter_user_counts)
    if spec.setting == "single":
      pairs = users | "BestWord" >> beam.FlatMap(
          lambda part: [] if not part.usable or not part.words
          else [(shards.best_word(part.words), 1)])
      _write_table(pairs, output_dir, tables.WORD_USERS, "Table")
    else:
      bags = users | "Bags" >> beam.FlatMap(
          lambda part: [(part.first, {w: c for w, (c, _) in
                                      part.words.items()})]
          if part.usable and part.words else [])
      _write_bags(bags, output_dir)
  return (shard_counts, user_counts) | "AllCounts" >> beam.Flatten()


class _ReadShard(beam.DoFn):
  """A shard's users (main output), report counts and ``oov`` tokens."""

  def __init__(self, spec: loader.DataSpec):
    super().__init__()
    self._spec = spec

  def process(self, item):
    index, path = item
    counts, parts, table = shards.read_shard(self._spec, index, path)
    yield beam.pvalue.TaggedOutput("counts", counts)
    for word, n in table.items():
      yield beam.pvalue.TaggedOutput("tokens", (word, n))
    yield from parts
