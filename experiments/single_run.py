"""The loop of the drivers that run one algorithm (run_triehh, run_sfp,
run_partition_selection).

Build the population of the data flags, then ``--num_runs`` runs, each
drawing fresh entropy (recorded nowhere, as the line printed before them
says) or, with ``--seed``, seeded ``--seed``, ``--seed`` + 1, ... (a
reproducible simulation): each prints its heavy hitters and
metrics and, with ``--output_dir``, appends its record to results.jsonl as
soon as it ends (``triehh.runs.records.RunRecord``). With ``--words_out``
the one run's released words and their guarantee are written to a file
(``triehh.core.release_file``: .csv or .json, written whole). The algorithm
supplies what differs (:class:`Algorithm`). On Ctrl-C the driver exits 130
saying how many finished runs were kept (``experiments.cli``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import types
from collections.abc import Callable, Mapping
from typing import Any

from absl import flags

from experiments import cli
from experiments import flags as shared_flags
from experiments import paths
from triehh.core import population as population_lib
from triehh.core import release_file
from triehh.runs import records

FLAGS = flags.FLAGS


class Timer:
  def __enter__(self):
    self.start = time.perf_counter()
    return self

  def __exit__(self, *exc):
    self.seconds = time.perf_counter() - self.start


@dataclasses.dataclass(frozen=True)
class Algorithm:
  """What one algorithm brings to the loop.

  Attributes:
    prepare: checks and prepares the loaded data set (timed with the load).
    built: how the data line says the population was made ready.
    config: the runs' ``config``, made once the data line is printed.
    call: ``(population, config, seed) -> result`` (seed None: fresh
      entropy); the result has
      ``heavy_hitters`` (word -> count, or the words alone for an algorithm
      that releases no counts, scored in their order; ``found`` says
      otherwise) and ``params``.
    describe: the lines printed after the first run (its parameters).
    run_line: ``(run, seed, result, number of heavy hitters) -> line``
      (:func:`seed_said` says the seed).
    word: how one shown heavy hitter is printed, from its word and count.
    record: ``(result, data, run, seed, metrics, config) -> RunRecord``;
      None: the runs are not recorded (``--output_dir`` is not read).
    note: a line printed under the shown words when there are any.
    found: ``result -> its heavy hitters`` (None: ``result.heavy_hitters``).
    ranked: whether the words come ranked (False: a set, scored as one,
      with no top-K precision: ``experiments.flags.print_metrics``).
  """

  prepare: Callable[[shared_flags.Dataset], None]
  built: str
  config: Callable[[], dict]
  call: Callable[[population_lib.Population, dict, int | None], Any]
  describe: Callable[[Any], list[str]]
  run_line: Callable[[int, int | None, Any, int], str]
  word: Callable[[str, Any], str]
  record: Callable[..., records.RunRecord] | None
  note: str | None = None
  found: Callable[[Any], Any] | None = None
  ranked: bool = True


_WRITER: list[records.ResultsWriter] = []

# Printed before the runs of a driver given no --seed.
FRESH_LINE = ("randomness: each run draws fresh entropy, recorded nowhere "
              "(--seed=N makes a reproducible simulation: run r uses seed "
              "N + r, and whoever knows it can undo the noise)")


def run_seed(run: int) -> int | None:
  """The seed of run ``run``: ``--seed`` + ``run``, or None (fresh
  entropy) without ``--seed``."""
  return None if FLAGS.seed is None else FLAGS.seed + run


def seed_said(seed: int | None) -> str:
  """A run's seed on its line: ``seed 3``, or ``fresh entropy``."""
  return "fresh entropy" if seed is None else f"seed {seed}"



def check_words_out() -> str | None:
  """``--words_out``, checked before any work: a .csv or .json file that
  can be written, and one run to write (each run is another release of
  the same users, which one run's guarantee does not cover).

  Raises:
    ValueError: naming the flag.
  """
  path = FLAGS.words_out
  if not path:
    return None
  try:
    release_file.file_format(path)
  except ValueError:
    ext = os.path.splitext(path)[1]
    raise ValueError(f"--words_out={path}: give a .csv or .json file (the "
                     "extension chooses the format)"
                     + (f", not {ext}" if ext else "")) from None
  if FLAGS.num_runs != 1:
    raise ValueError(f"--words_out writes one run's release: give "
                     f"--num_runs=1, not {FLAGS.num_runs} (each run releases "
                     "the same users' words again; one run's guarantee does "
                     "not cover several)")
  paths.check_output_file("words_out", path)
  return path


def write_words(path: str, result) -> None:
  """Writes ``result``'s words and guarantee to ``path`` (``--words_out``);
  a failed write names the file."""
  try:
    release_file.write(path, result)
  except OSError as err:
    raise paths.with_path(err, path) from None
  except ValueError as err:
    raise ValueError(f"--words_out={path}: {err}") from None
  print(f"released words and their guarantee written to {path}")


def run_all(algorithm: Algorithm) -> None:
  """Loads the data set and runs ``algorithm`` ``--num_runs`` times."""
  words_out = check_words_out()
  writer = shared_flags.results_writer()
  _WRITER[:] = [writer]
  with Timer() as load:
    data = shared_flags.load_dataset()
    algorithm.prepare(data)
  pop = data.population
  how = "read from the cache" if data.cache_path else algorithm.built
  print(f"data: {data.name} ({data.setting}), {pop!r}, {how} "
        f"in {load.seconds:.2f} s")
  config = algorithm.config()
  if FLAGS.seed is None:
    print(FRESH_LINE)
  for run in range(FLAGS.num_runs):
    seed = run_seed(run)
    result = algorithm.call(pop, config, seed)
    if run == 0:
      for line in algorithm.describe(result):
        print(line)
    found = (result.heavy_hitters if algorithm.found is None
             else algorithm.found(result))
    values = shared_flags.score(found, data.truth)
    hh = (list(found.items()) if isinstance(found, Mapping)
          else [(word, None) for word in found])
    print(algorithm.run_line(run, seed, result, len(hh)))
    for note in getattr(result, "notes", ()):  # no word found: why
      print(f"  note: {note}")
    if FLAGS.show:  # --show=0: no words, no ellipsis
      shown = ", ".join(algorithm.word(w, v) for w, v in hh[:FLAGS.show])
      print(f"  {shown}{' ...' if len(hh) > FLAGS.show else ''}")
      if hh and algorithm.note:
        print(algorithm.note)
    shared_flags.print_metrics(values, ranked=algorithm.ranked,
                               released=len(hh))
    if algorithm.record is not None:
      _write(writer, algorithm.record(result, data, run, seed, values,
                                      config))
    if words_out:
      write_words(words_out, result)
    sys.stdout.flush()
  if writer.path:
    print(f"results appended to {writer.path}")


def _write(writer: records.ResultsWriter, record: records.RunRecord) -> None:
  """Appends ``record``; a failed write (a full disk) names the file."""
  try:
    writer.write(record)
  except OSError as err:
    raise paths.with_path(err, writer.path) from None


def _kept() -> str:
  current = _WRITER[0] if _WRITER else None
  if current is None or current.path is None:
    return ""
  return f"{current.written} finished runs kept in {current.path}"


def run(main: Callable[[list[str]], object],
        module: types.ModuleType) -> None:
  """The entry point of a single-run driver (``experiments.cli.run``):
  Ctrl-C says how many finished runs results.jsonl kept."""
  cli.run(main, module, on_interrupt=_kept)
