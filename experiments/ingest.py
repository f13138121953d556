"""Builds a population on Apache Beam from sharded user-keyed text files.

Every file ``--input`` names (a path or a glob: CSV, TSV, JSON Lines,
Parquet, Sentiment140's layout; plain, .gz, .bz2 or .zip) is read with the
in-memory loader's readers, tokenizer and setting (``triehh.beam.ingest``),
and the population is written to ``--output_dir``: the word-frequency
table ``word_users.tsv`` (single), the users' bags ``bags-*.jsonl``
(multi) or the OOV token table ``oov_tokens.tsv`` (oov), with the summed
load report ``counts.tsv`` and ``spec.json`` (``triehh.beam.tables``
reads them back: ``tables.read_population(output_dir)``). It equals what
the in-memory loader builds from the files concatenated in path order.
The drivers that read data sets run on the folder with
``--dataset=ingested --data_path=<output_dir>`` (and the same
``--setting`` and ``--max_length``).

  python -m experiments.ingest --input='logs/part-*.csv' --output_dir=pop
  triehh-ingest --input='logs/part-*.jsonl.gz' --setting=multi \\
      --output_dir=pop --runner=DirectRunner --users_sharded
  triehh-run --dataset=ingested --data_path=pop --setting=multi

``--users_sharded`` says each user's rows are all in one file: shards are
then built whole and only word tables are combined (memory bounded by a
shard, not by the rows). ``--beam_arg`` (repeatable) passes a further
Beam pipeline option (e.g. ``--direct_num_workers=2``, or a cluster
runner's).

Only the files an ingestion lists in ``<output_dir>/files.json`` are
replaced by the next one into that folder; the user's own files there are
left alone. The tables are written to a new folder beside ``--output_dir``
and moved in once whole: a failure, Ctrl-C or SIGTERM removes it and leaves
the earlier population as it was. One ingestion writes a folder at a
time: a second one into it meanwhile exits 1 with one line, having written
nothing (the lock is ``.<name>.ingest.lock`` beside the folder).

Errors print one line ``error: ...`` and exit 1 (a full disk names the
folder and its free space; an out-of-memory shard names it, its size and
``--split_bytes``); SIGTERM exits 143 after one line ``terminated: ...``.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import logging
import sys
import time

from absl import app
from absl import flags

from experiments import cli
from experiments import flags as shared_flags
from triehh.core import beam_import
from triehh.core import extras
from triehh.core import processes
from triehh.data import loader
from triehh.data import readers
from triehh.data import settings as settings_lib

FLAGS = flags.FLAGS
shared_flags.declare(__name__, "data_encoding", "setting", "min_word_length",
                     "dictionary_path", "oov_num_users", "data_seed",
                     "max_length")
shared_flags.declare(
    __name__, "data_format", help_text="Format of the --input files "
    "(--layout=file); 'auto' goes by the extension.")
shared_flags.declare(__name__, "user_column", help_text="Column naming the "
                     "user (--layout=file).")
shared_flags.declare(__name__, "text_column", help_text="Column holding the "
                     "text (--layout=file).")
shared_flags.declare(
    __name__, "output_dir", help_text="The folder the population is written "
    "to (required); the drivers read it with --dataset=ingested "
    "--data_path=<output_dir>.")
flags.DEFINE_string("input", None,
                    "The input files: a path or a glob (quote it), e.g. "
                    "'logs/part-*.csv'.")
flags.DEFINE_enum("layout", "file", ["file", "sentiment140"],
                  "'file': user-keyed text with a user and a text column "
                  "(--data_format); 'sentiment140': the official "
                  "Sentiment140 CSV layout.")
flags.DEFINE_enum("tokenizer", settings_lib.DEFAULT_TOKENIZER,
                  list(settings_lib.TOKENIZERS),
                  "'simple' or 'paper' (the paper authors' preprocessing).")
flags.DEFINE_string("runner", "DirectRunner",
                    "The Beam runner (DirectRunner here; a cluster's, such "
                    "as FlinkRunner, SparkRunner or DataflowRunner, with "
                    "its options in --beam_arg).")
flags.DEFINE_bool("users_sharded", False,
                  "Each user's rows are all in one input file.")
# The least --split_bytes: pieces smaller than this only multiply the
# shards (and a CSV piece may hold its header alone).
MIN_SPLIT_BYTES = 64 << 10
flags.DEFINE_integer("split_bytes", 0,
                     "Cut plain text files larger than this many bytes into "
                     "line-aligned pieces read in parallel (0: read each "
                     f"file whole; else at least {MIN_SPLIT_BYTES:,}, 64 "
                     "KiB; not with --users_sharded).", lower_bound=0)
flags.DEFINE_multi_string("beam_arg", [],
                          "A further Beam pipeline option (repeatable), "
                          "e.g. --beam_arg=--direct_num_workers=2.")


def spec_from_flags() -> loader.DataSpec:
  """The data spec the flags describe (``--input`` as its path)."""
  if not FLAGS.input:
    raise ValueError("--input is required: the files to read (a glob)")
  if not FLAGS.output_dir:
    raise ValueError("--output_dir is required: where to write the "
                     "population")
  if 0 < FLAGS.split_bytes < MIN_SPLIT_BYTES:
    raise ValueError(f"--split_bytes={FLAGS.split_bytes:,}: give 0 (each "
                     f"file whole) or at least {MIN_SPLIT_BYTES:,} bytes "
                     "(64 KiB)")
  if FLAGS.data_encoding:
    try:
      codecs.lookup(FLAGS.data_encoding)
    except LookupError:
      raise ValueError(f"--data_encoding={FLAGS.data_encoding}: not a text "
                       "encoding Python knows (e.g. utf-8, latin-1)"
                       ) from None
    try:
      readers.normalise_encoding(FLAGS.data_encoding)
    except ValueError:
      raise ValueError(f"--data_encoding={FLAGS.data_encoding}: the readers "
                       f"read {' or '.join(readers.ENCODINGS)} only"
                       ) from None
  return loader.DataSpec(
      path=FLAGS.input, dataset=FLAGS.layout, setting=FLAGS.setting,
      file_format=FLAGS.data_format, user_column=FLAGS.user_column,
      text_column=FLAGS.text_column, encoding=FLAGS.data_encoding,
      tokenizer=FLAGS.tokenizer, min_length=FLAGS.min_word_length,
      max_length=FLAGS.max_length, dictionary_path=FLAGS.dictionary_path,
      oov_num_users=FLAGS.oov_num_users, seed=FLAGS.data_seed)


def _import_beam():
  """The Beam modules, imported only by the command that runs them; without
  Apache Beam, one line naming the extra that installs it."""
  try:
    with beam_import.quiet():
      from apache_beam.options import pipeline_options  # pylint: disable=g-import-not-at-top
      from triehh.beam import ingest  # pylint: disable=g-import-not-at-top
  except ImportError as err:
    raise extras.missing("triehh-ingest", err) from err
  return pipeline_options, ingest


def beam_options(pipeline_options):
  """The pipeline options of ``--runner`` and ``--beam_arg``, checked:
  unknown names, values Beam's parser refuses, and a
  ``--direct_num_workers`` below 0 (0: one per core)."""
  options = pipeline_options.PipelineOptions(
      flags=list(FLAGS.beam_arg), runner=FLAGS.runner)
  said = io.StringIO()
  try:
    with contextlib.redirect_stderr(said):  # argparse's usage text
      known = options.get_all_options(retain_unknown_options=False)
  except SystemExit:
    reason = said.getvalue().strip().splitlines()[-1:] or ["refused"]
    reason = reason[0].split("error: ", 1)[-1]
    named = [a for a in FLAGS.beam_arg
             if a.lstrip("-").split("=", 1)[0] in reason] or FLAGS.beam_arg
    raise ValueError(f"--beam_arg={named[0]}: {reason}") from None
  for arg in FLAGS.beam_arg:
    name = arg.lstrip("-").split("=", 1)[0]
    if not arg.startswith("--") or name not in known:
      raise ValueError(f"--beam_arg={arg}: not an Apache Beam pipeline "
                       "option (give --beam_arg=--name=value)")
    if name == "direct_num_workers" and known[name] < 0:
      raise ValueError(f"--beam_arg={arg}: must be >= 0 (0: one worker per "
                       "core)")
  return options


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  spec = spec_from_flags()
  pipeline_options, ingest = _import_beam()
  if not (FLAGS["verbosity"].present and FLAGS.verbosity >= 0):
    # A failing shard or a bad option is said once, by the error line: not
    # also by Beam's log (with a traceback).
    logging.getLogger("apache_beam").setLevel(logging.CRITICAL)
  options = beam_options(pipeline_options)
  start = time.perf_counter()
  try:
    # The population said is the one this run wrote, read back while it
    # held the folder's lock: another ingestion may rewrite the folder as
    # soon as the lock is released.
    paths, loaded = ingest.ingest_read(spec, FLAGS.output_dir,
                                       users_sharded=FLAGS.users_sharded,
                                       split_bytes=FLAGS.split_bytes or None,
                                       pipeline_opts=options)
  except RuntimeError as err:  # Beam wraps a Ctrl-C in its workers
    if (isinstance(err.__context__, KeyboardInterrupt)
        or str(err).startswith("KeyboardInterrupt")):
      raise KeyboardInterrupt from None
    raise
  except MemoryError as err:  # a shard too large: one line, its remedy
    raise ValueError(str(err)) from None
  except processes.Terminated:
    print(f"terminated: nothing written to {FLAGS.output_dir}; its earlier "
          "files are as they were", file=sys.stderr)
    raise
  seconds = time.perf_counter() - start
  report = loaded.report
  print(f"{len(paths):,} file(s) read on {FLAGS.runner} in {seconds:.1f} s "
        f"({report.rows_read / max(seconds, 1e-9):,.0f} rows/s)")
  print(report.summary())
  pop = loaded.population
  print(f"population ({spec.setting}): {pop.num_users:,} users, "
        f"{pop.num_words:,} distinct words; written to {FLAGS.output_dir}")


def run():
  """Console-script entry point (``triehh-ingest``)."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
