"""Reproduces the paper's tables and figures in one command.

  python -m experiments.reproduce_paper --output_dir=results/reproduce
  triehh-reproduce --output_dir=results/reproduce --settings=single,oov

Runs the sweeps behind every table and figure (``triehh.runs.runner``: records
in ``<output_dir>/results.jsonl``, so a second invocation resumes and skips
recorded runs), then writes the figures and ``<output_dir>/REPORT.md`` with
the paper's numbers beside ours (``triehh.analysis.reproduction``).

Settings (``triehh.data.paper_populations``): ``single`` and ``oov`` are the
paper-calibrated populations (the published top-100 with the shipped
Sentiment140 word counts as tail; no download); ``multi`` is the
Sentiment140 file ``--data_path`` (default: the sample, from
``$TRIEHH_SENTIMENT140`` or ``../shared/data`` beside the repository) as is,
and resampled to ``--multi_num_users``. Without the file, ``multi`` is left
out and the report says so.

Defaults of the shared flags here: ``--max_length`` the paper's L (9
characters and the end symbol: its 10 levels), ``--settings`` all three,
``--epsilons`` 1,2,4,8, ``--top_ts`` 20,80 (OOV; single: 20), ``--workers``
2, ``--report_dir`` the output directory. Every flag, file and directory is
checked before any cell is planned (``check_flags``).
"""

from __future__ import annotations

import shlex
import sys
import time

from absl import app
from absl import flags

from experiments import cli
from experiments import flags as shared_flags
from experiments import paths
from triehh.analysis import summary as analysis
from triehh.analysis.reproduction import markdown
from triehh.analysis.reproduction import numbers
from triehh.analysis.reproduction import two_sided
from triehh.data import datasets as datasets_lib
from triehh.data import paper_populations
from triehh.runs import grid
from triehh.runs import records as records_lib
from triehh.runs import runner
from triehh.runs.algorithms import sfp as sfp_algorithm

FLAGS = flags.FLAGS
# The reproduction's defaults of shared flags (experiments.flags).
EPSILONS = ["1", "2", "4", "8"]
TOP_TS = ["20", "80"]
WORKERS = 2
for _name in ("output_dir", "report_dir", "settings", "epsilons", "seed",
              "workers", "max_length", "oov_num_users", "data_path",
              "cache_dir", "cms_k", "top_ts"):
  flags.declare_key_flag(_name)

shared_flags.DEFINE_values(
    "sfp_epsilons", ["1", "4"], "SFP's epsilons (the paper reports SFP at 1 "
    "and 4).", shared_flags.number_item())
flags.DEFINE_integer("triehh_runs", 100, "TrieHH runs per cell.",
                     lower_bound=1)
flags.DEFINE_integer("multi_runs", 10, "TrieHH runs per cell in the several-"
                     "words setting (each redraws words over all users; the "
                     "paper's text mentions 10).", lower_bound=1)
flags.DEFINE_integer("sfp_runs", 5, "SFP runs per cell.", lower_bound=0)
shared_flags.DEFINE_count("single_num_users",
                          paper_populations.SINGLE_NUM_USERS,
                          "Users of the single-word population.",
                          lower_bound=2)
shared_flags.DEFINE_count("multi_num_users", paper_populations.SINGLE_NUM_USERS,
                          "Users resampled from the several-words file (0: "
                          "only the file's own users).", lower_bound=0)
flags.DEFINE_string("word_counts_path", None, "Word-count table of the "
                    "one-word tails (default: the shipped one).")
flags.DEFINE_bool("poisson", True, "Also run the cells beyond the paper: "
                  "TrieHH with Poisson sampling (two-sided guarantee) on the "
                  "same data, and the table of its calibration against "
                  "Corollary 1's.")
shared_flags.DEFINE_values(
    "poisson_table_ns", [str(n) for n in two_sided.TABLE_NS],
    "n of the table of the Poisson accountant against Corollary 1 (L = 11 "
    "levels, delta = 1/n^2), e.g. 1e4,1e6.", shared_flags.count_item(1))
shared_flags.DEFINE_values(
    "poisson_table_epsilons", [f"{e:g}" for e in two_sided.TABLE_EPSILONS],
    "epsilons of that table.", shared_flags.number_item())
flags.DEFINE_string("load_note", "", "A sentence on the machine's load, "
                    "printed beside the wall time.")


def settings() -> list[str]:
  """``--settings``; without it, all three."""
  return shared_flags.value_or("settings", list(datasets_lib.SETTINGS))


def max_length() -> int:
  """``--max_length``; without it, the paper's L."""
  return shared_flags.value_or("max_length",
                               paper_populations.PAPER_MAX_LENGTH)


def data_sets() -> dict[str, dict]:
  """Report setting name -> sweep data options."""
  out = {}
  paper = {"max_length": max_length(),
           "word_counts_path": FLAGS.word_counts_path}
  if "single" in settings():
    out["single"] = datasets_lib.options(
        "paper", "single", dict(paper, num_users=FLAGS.single_num_users))
  if "oov" in settings():
    out["oov"] = datasets_lib.options(
        "paper", "oov", dict(paper, num_users=FLAGS.oov_num_users))
  path = datasets_lib.sentiment140_sample(FLAGS.data_path)
  if "multi" in settings() and path:
    out["multi"] = datasets_lib.options(
        "paper", "multi", {"max_length": max_length(), "data_path": path})
    if FLAGS.multi_num_users:
      out["multi-n"] = datasets_lib.options(
          "paper", "multi", {"max_length": max_length(), "data_path": path,
                             "num_users": FLAGS.multi_num_users,
                             "data_seed": 0})
  return out


def cells(data: dict[str, dict], datasets: datasets_lib.DataCache
          ) -> list[tuple[str, grid.Cell, int]]:
  """(report setting, cell, runs) of every cell.

  One-word cells run at delta = 1/n^2 (the default); several-words cells at
  delta = 1/(300 n) (5.05e-9 at n = 659,775, just above the paper's "delta <
  5e-9"; the report prints the delta each run achieves). With
  ``--poisson``, the Poisson cells (``two_sided.CELLS``) come after all the
  paper's, with the runs of the fixed-size cell of their setting.
  """
  out, beyond = [], []
  epsilons = [float(e) for e in shared_flags.value_or("epsilons", EPSILONS)]
  for figure, options in data.items():
    deltas = [None]
    if figure.startswith("multi"):
      deltas = [1 / (300 * datasets.get(options).population.num_users)]
    runs = (FLAGS.multi_runs if figure.startswith("multi")
            else FLAGS.triehh_runs)
    for cell in grid.expand(algorithms=("triehh",), data=[options],
                            epsilons=epsilons, deltas=deltas):
      out.append((figure, cell, runs))
    poisson_epsilons = two_sided.poisson_epsilons(figure, epsilons)
    if FLAGS.poisson and poisson_epsilons:
      for cell in grid.expand(algorithms=("triehh",), data=[options],
                              epsilons=poisson_epsilons, deltas=deltas,
                              triehh_options={"sampling": "poisson"}):
        beyond.append((figure, cell, runs))
    if figure in ("single", "oov") and FLAGS.sfp_runs:
      top_ts = ([20] if figure == "single" else
                [int(t) for t in shared_flags.value_or("top_ts", TOP_TS)])
      for epsilon in FLAGS.sfp_epsilons:
        for t in top_ts:
          config = sfp_algorithm.sfp_config(
              options, epsilon=float(epsilon), top_t=t, k=FLAGS.cms_k,
              fragment_alphabet="paper")
          config["stitching"] = "paper"
          out.append((figure, grid.Cell(config), FLAGS.sfp_runs))
  return out + beyond


def _series(planned, data, datasets: datasets_lib.DataCache
            ) -> list[numbers.Series]:
  path = records_lib.results_path(FLAGS.output_dir)
  got, _ = records_lib.read(path)
  kept = [r.to_dict() for r in analysis.deduplicate(got)[0]]
  by_key: dict[str, list[dict]] = {}
  for record in kept:
    by_key.setdefault(record["config_key"], []).append(record)
  out = []
  for figure, cell, runs in planned:
    seeds = set(runner.seeds_of(FLAGS.seed, runs))
    records = sorted((r for r in by_key.get(cell.key, [])
                      if r["seed"] in seeds), key=lambda r: r["seed"])
    dataset = datasets.get(data[figure])
    config = cell.config
    out.append(numbers.Series(
        algorithm=config["algorithm"], figure=figure,
        epsilon=float(config["epsilon"]),
        top_t=config.get("top_t") if config["algorithm"] == "sfp" else None,
        records=records, truth=dataset.truth,
        n=dataset.population.num_users, data=_describe(figure, dataset),
        sampling=config.get("sampling", two_sided.FIXED)))
  return out


def _describe(figure: str, dataset: datasets_lib.Dataset) -> str:
  info = dataset.info
  n = dataset.population.num_users
  if figure in ("single", "oov"):
    return (f"paper-calibrated {figure}: n = {n:,}; head: {info['head']} "
            f"({info['head_mass']:.1%} of users); tail: "
            f"{info['tail_words']:,} words of {info['tail']} scaled to the "
            "rest; users per word rounded by largest remainders.")
  if figure == "multi":
    return (f"the Sentiment140 sample ({info['source']}) as is: n = {n:,} "
            "users with a kept word under the paper's tokenisation.")
  return (f"{n:,} users drawn with replacement (seed {info['seed']}) from "
          f"the {info['source_users']:,} users of the Sentiment140 sample "
          f"({info['source']}), each keeping its bag of words: a "
          "paper-size population, not the paper's data.")


def report_dir() -> str:
  """``--report_dir``; without it, ``--output_dir``."""
  return FLAGS.report_dir or FLAGS.output_dir


def check_flags() -> None:
  """What the flags' parsing cannot check: the output, report and lock
  directories and the input files, before any cell is planned.

  Raises:
    ValueError: naming the flag, its value and the reason.
  """
  if not FLAGS.output_dir:
    raise ValueError("the reproduction needs --output_dir (where "
                     "results.jsonl is kept and resumed from)")
  if FLAGS.oov_num_users < 2:
    raise ValueError(f"--oov_num_users must be >= 2 for the paper's OOV "
                     f"population, got {FLAGS.oov_num_users}")
  shared_flags.check_grid_output_dir()
  paths.check_dir("report_dir", report_dir(), create=True)
  shared_flags.check_data_paths()  # --data_path, --cache_dir
  if FLAGS.word_counts_path:
    paths.check_input_file("word_counts_path", FLAGS.word_counts_path)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  check_flags()
  data = data_sets()
  if not data:
    raise ValueError("nothing to run: the several-words setting needs the "
                     "Sentiment140 file (--data_path)")
  datasets = datasets_lib.DataCache(FLAGS.cache_dir or None)
  planned = cells(data, datasets)
  done = records_lib.completed(records_lib.results_path(FLAGS.output_dir))
  tasks = []
  for _, cell, runs in planned:
    tasks += runner.plan([cell], FLAGS.seed, runs, done)
  left = sum(len(t.seeds) for t in tasks)
  print(f"{len(planned)} cells, {left} runs left", flush=True)
  start = time.perf_counter()
  written = [0]

  def on_event(event: runner.Event) -> None:
    if event.kind == "run":
      written[0] += 1
    elif event.kind == "done":
      print(f"  {event.label}: {event.runs} runs", flush=True)

  _WRITTEN[:] = [records_lib.LineCount()]
  runner.run_plan(tasks, FLAGS.output_dir,
                  workers=shared_flags.value_or("workers", WORKERS),
                  cache_dir=FLAGS.cache_dir or None, on_event=on_event,
                  written=_WRITTEN[0])
  seconds = time.perf_counter() - start
  series = _series(planned, data, datasets)
  notes = {figure: _describe(figure, datasets.get(options))
           for figure, options in data.items()}
  if "multi" in settings() and "multi" not in data:
    notes["multi"] = ("not run: the Sentiment140 file was not found "
                      f"(--data_path or ${datasets_lib.SENTIMENT140_ENV}).")
  command = "python -m experiments.reproduce_paper " + " ".join(
      shlex.quote(a) for a in sys.argv[1:])
  context = markdown.Context(
      command=command.strip(), seconds=seconds, runs_written=written[0],
      triehh_runs=FLAGS.triehh_runs, sfp_runs=FLAGS.sfp_runs,
      multi_runs=FLAGS.multi_runs,
      data_notes=notes, load_note=FLAGS.load_note, beyond=FLAGS.poisson,
      table_ns=FLAGS.poisson_table_ns,
      table_epsilons=FLAGS.poisson_table_epsilons)
  try:
    path = markdown.write(report_dir(), series, context)
  except OSError as err:  # a full disk: name where it was writing
    raise paths.with_path(err, report_dir()) from None
  print(f"{written[0]} runs in {seconds:.0f} s; report: {path}")


# The lines the reproduction appended to results.jsonl, in every process.
_WRITTEN: list[records_lib.LineCount] = []


def _kept() -> str:
  """How many runs results.jsonl gained (said on Ctrl-C)."""
  if not _WRITTEN:
    return ""
  return (f"{_WRITTEN[0].value} finished runs kept in "
          f"{records_lib.results_path(FLAGS.output_dir)}")


def run():
  """Console-script entry point (``triehh-reproduce``)."""
  cli.run(main, sys.modules[__name__], on_interrupt=_kept)


if __name__ == "__main__":
  run()
