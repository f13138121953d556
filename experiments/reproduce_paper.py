"""Reproduces the paper's tables and figures in one command.

  python -m experiments.reproduce_paper --output_dir=results/reproduce
  triehh-reproduce --output_dir=results/reproduce --settings=single,oov

Runs the sweeps behind every table and figure (``triehh.runs.runner``: records
in ``<output_dir>/results.jsonl``, so a second invocation resumes and skips
recorded runs), then writes the figures and ``<output_dir>/REPORT.md`` with
the paper's numbers beside ours (``reports.reproduction``).

Settings (``triehh.data.paper_populations``): ``single`` and ``oov`` are the
paper-calibrated populations (the published top-100 with the shipped
Sentiment140 word counts as tail; no download); ``multi`` is the
Sentiment140 file ``--data_path`` (default: the sample, from
``$TRIEHH_SENTIMENT140`` or ``../shared/data`` beside the repository) as is,
and resampled to ``--multi_num_users`` (and ``--multi_large_num_users``,
for the ablation of n). Without the file, ``multi`` is left out and the
report says so.

Ablations (``reports.reproduction.ablations``): the one-word cells'
SFP runs and TrieHH's at epsilon 1 and 4 also run on the other tails of
``--tails`` (``triehh.data.paper_populations.TAILS``), and the several-words
cells at epsilon 4 under the paper's accounting and ``word_choice=
"per_run"`` beside ours, all at the paper's delta = 5e-9. The report prints
the wall and CPU time, memory and load this invocation measured, and how
many runs it wrote against how many it read from earlier records.

Defaults of the shared flags here: ``--max_length`` the paper's L (9
characters and the end symbol: its 10 levels), ``--settings`` all three,
``--epsilons`` 1,2,4,8, ``--top_ts`` 20,80 (OOV; single: 20), ``--workers``
2, ``--report_dir`` the output directory. Every flag, file and directory is
checked before any cell is planned (``check_flags``).
"""

from __future__ import annotations

import os
import resource
import sys
import time
import typing
from collections.abc import Sequence

from absl import app
from absl import flags

from experiments import cli
from experiments import flags as shared_flags
from experiments import paths
from reports import summary as analysis
from reports.reproduction import markdown
from reports.reproduction import numbers
from reports.reproduction import two_sided
from triehh.data import datasets as datasets_lib
from triehh.data import paper_populations
from triehh.runs import grid
from triehh.runs import records as records_lib
from triehh.runs import runner
from triehh.runs.algorithms import sfp as sfp_algorithm
from triehh.theory import privacy

FLAGS = flags.FLAGS
# The reproduction's defaults of shared flags (experiments.flags).
EPSILONS = ["1", "2", "4", "8"]
TOP_TS = ["20", "80"]
WORKERS = 2
shared_flags.declare(__name__, "cache_dir", "cms_k")
shared_flags.declare_simulation_seed(__name__)
shared_flags.declare(
    __name__, "output_dir", help_text="Where results.jsonl is kept and "
    "resumed from (required).")
shared_flags.declare(
    __name__, "report_dir", help_text="Where REPORT.md and its figures go "
    "(default: --output_dir).")
shared_flags.declare(
    __name__, "settings", default=list(datasets_lib.SETTINGS),
    help_text="The settings to run: single, oov, multi.")
shared_flags.declare(__name__, "epsilons", default=EPSILONS,
                     help_text="TrieHH's target central epsilons.")
shared_flags.declare(__name__, "workers", default=WORKERS,
                     help_text="Processes running cells.")
shared_flags.declare(
    __name__, "max_length", default=paper_populations.PAPER_MAX_LENGTH,
    help_text="L, the maximum characters per word; the trie has "
    "max_length + 1 levels (the end symbol): the paper's 9 characters, its "
    "10 levels.")
shared_flags.declare(
    __name__, "oov_num_users", help_text="Users of the paper-calibrated OOV "
    "population.")
shared_flags.declare(
    __name__, "data_path", help_text="The Sentiment140 file of the "
    "several-words setting (default: the sample, from $TRIEHH_SENTIMENT140 "
    "or ../shared/data beside the repository).")
shared_flags.declare(
    __name__, "top_ts", default=TOP_TS, help_text="SFP's T in the OOV "
    "setting, tuples kept per fragment position (the single-word setting "
    "runs T = 20, as the paper).")

shared_flags.DEFINE_values(
    "sfp_epsilons", ["1", "4"], "SFP's epsilons (the paper reports SFP at 1 "
    "and 4).", shared_flags.number_item())
flags.DEFINE_integer("triehh_runs", 100, "TrieHH runs per cell.",
                     lower_bound=1)
flags.DEFINE_integer("multi_runs", 10, "TrieHH runs per cell in the several-"
                     "words setting (each redraws words over all users; the "
                     "paper's text mentions 10).", lower_bound=1)
flags.DEFINE_integer("sfp_runs", 20, "SFP runs per cell (on each tail).",
                     lower_bound=0)
shared_flags.DEFINE_values(
    "tails", list(paper_populations.TAILS), "Tails of the one-word "
    "populations below the published top 100 (triehh.data."
    "paper_populations.TAILS): the first is the paper rows' tail; SFP's "
    "cells and TrieHH's at epsilon 1 and 4 run on the others too, as an "
    "ablation of the part of the population we built.",
    shared_flags.choice_item(paper_populations.TAILS))
shared_flags.DEFINE_count("multi_large_num_users", 1_600_000,
                          "Users of an extra several-words resample for the "
                          "ablation of n, run at epsilon 4 only (0: none; "
                          "the default is the full data's 1.6M tweets).",
                          lower_bound=0)
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
flags.DEFINE_string("load_note", "", "Optional: a sentence printed beside "
                    "the provenance the run measures itself.")
# The several-words cells' target delta: the paper's bound "delta < 5e-9".
MULTI_DELTA = 5e-9
# The epsilon of the several-words claim and of its ablation.
MULTI_EPSILON = 4.0


def settings() -> list[str]:
  """``--settings``; without it, all three."""
  return shared_flags.value_or("settings", list(datasets_lib.SETTINGS))


def max_length() -> int:
  """``--max_length``; without it, the paper's L."""
  return shared_flags.value_or("max_length",
                               paper_populations.PAPER_MAX_LENGTH)


def tails() -> list[str]:
  """``--tails``: the paper rows' tail first, then the ablation's."""
  return list(dict.fromkeys(shared_flags.value_or(
      "tails", list(paper_populations.TAILS))))


def data_sets() -> dict[str, dict]:
  """Report data key -> sweep data options.

  Keys: ``single``, ``oov`` (on the first of ``--tails``), ``single@<tail>``
  and ``oov@<tail>`` for the other tails, ``multi`` (the file's users),
  ``multi-n`` (resampled to ``--multi_num_users``) and ``multi-large``
  (``--multi_large_num_users``).
  """
  out = {}
  first = tails()[0]
  for figure, num_users in (("single", FLAGS.single_num_users),
                            ("oov", FLAGS.oov_num_users)):
    if figure not in settings():
      continue
    for tail in tails():
      key = figure if tail == first else f"{figure}@{tail}"
      out[key] = paper_populations.data_options(
          figure, max_length=max_length(), num_users=num_users,
          word_counts_path=FLAGS.word_counts_path, tail=tail)
  path = datasets_lib.sentiment140_sample(FLAGS.data_path)
  if "multi" in settings() and path:
    out["multi"] = datasets_lib.options(
        "paper", "multi", {"max_length": max_length(), "data_path": path})
    for key, num_users in (("multi-n", FLAGS.multi_num_users),
                           ("multi-large", FLAGS.multi_large_num_users)):
      if num_users:
        out[key] = datasets_lib.options(
            "paper", "multi", {"max_length": max_length(), "data_path": path,
                               "num_users": num_users, "data_seed": 0})
  return out


class Planned(typing.NamedTuple):
  """A cell of the plan with where the report shows it.

  ``figure`` is the report setting (``single``, ``oov``, ``multi``,
  ``multi-n``, ``multi-large``); ``tail`` the one-word population's tail;
  ``variant`` the several-words accounting of the ablation (``""`` ours,
  ``numbers.PAPER_ACCOUNTING``, ``numbers.PER_RUN``).
  """

  figure: str
  cell: grid.Cell
  runs: int
  tail: str = paper_populations.DEFAULT_TAIL
  variant: str = ""


def cells(data: dict[str, dict], datasets: datasets_lib.DataCache
          ) -> list[Planned]:
  """Every cell: the paper's, then the ablations, then (``--poisson``) the
  Poisson cells beyond the paper (``two_sided.CELLS``).

  One-word cells run at delta = 1/n^2 (the default), on every tail of
  ``--tails`` (TrieHH at epsilon 1 and 4 only on the ablation's tails).
  Several-words cells run at the paper's delta = 5e-9 (``MULTI_DELTA``) with
  our accounting; at epsilon 4 the ablation adds the paper's accounting and
  ``word_choice="per_run"`` (:func:`_multi_ablation`).
  """
  out, ablation, beyond = [], [], []
  epsilons = [float(e) for e in shared_flags.value_or("epsilons", EPSILONS)]
  first = tails()[0]
  for key, options in data.items():
    figure, _, tail = key.partition("@")
    tail = tail or first
    several = figure.startswith("multi")
    deltas = [MULTI_DELTA] if several else [None]
    runs = FLAGS.multi_runs if several else FLAGS.triehh_runs
    into = out if tail == first and figure != "multi-large" else ablation
    wanted = (epsilons if into is out else [
        e for e in epsilons if e in ((MULTI_EPSILON,) if several
                                     else (1.0, 4.0))])
    if figure == "multi-large":
      wanted = [MULTI_EPSILON]
    for cell in grid.expand(algorithms=("triehh",), data=[options],
                            epsilons=wanted, deltas=deltas):
      into.append(Planned(figure, cell, runs, tail))
    if several:
      n = datasets.get(options).population.num_users
      ablation += _multi_ablation(figure, options, n, runs)
    poisson_epsilons = two_sided.poisson_epsilons(figure, epsilons)
    if FLAGS.poisson and poisson_epsilons and into is out:
      for cell in grid.expand(algorithms=("triehh",), data=[options],
                              epsilons=poisson_epsilons, deltas=deltas,
                              triehh_options={"sampling": "poisson"}):
        beyond.append(Planned(figure, cell, runs, tail))
    if figure in ("single", "oov") and FLAGS.sfp_runs:
      top_ts = ([20] if figure == "single" else
                [int(t) for t in shared_flags.value_or("top_ts", TOP_TS)])
      sfp_epsilons = [float(e) for e in FLAGS.sfp_epsilons]
      if tail != first and figure == "single":  # only the claim's epsilon
        sfp_epsilons = [e for e in sfp_epsilons if e == MULTI_EPSILON]
      for epsilon in sfp_epsilons:
        for t in top_ts:
          config = sfp_algorithm.sfp_config(
              options, epsilon=float(epsilon), top_t=t, k=FLAGS.cms_k,
              fragment_alphabet="paper")
          config["stitching"] = "paper"
          (out if tail == first else ablation).append(
              Planned(figure, grid.Cell(config), FLAGS.sfp_runs, tail))
  return out + ablation + beyond


def _multi_ablation(figure: str, options: dict, n: int, runs: int
                    ) -> list[Planned]:
  """The several-words accountings at epsilon 4 and the paper's delta.

  Ours is the setting's own cell (per-round redraws, theta from Corollary 1
  at delta/L). The paper's accounting (Corollary 2: Theorem 1's delta for
  per-round redraws, which its proof does not cover) is expressed as the
  theta and batch size Corollary 1 gives at the full delta, run with
  per-round redraws; ``per_run`` is calibrated at the full delta and
  covered by Theorem 2.
  """
  cal = privacy.calibrate(n, max_length() + 1, MULTI_EPSILON, MULTI_DELTA)
  paper = grid.expand(algorithms=("triehh",), data=[options], theta={
      "theta": cal.theta, "gamma": None, "batch_size": cal.batch_size})
  per_run = grid.expand(algorithms=("triehh",), data=[options],
                        epsilons=[MULTI_EPSILON], deltas=[MULTI_DELTA],
                        triehh_options={"word_choice": "per_run"})
  return [Planned(figure, paper[0], runs, variant=numbers.PAPER_ACCOUNTING),
          Planned(figure, per_run[0], runs, variant=numbers.PER_RUN)]


def _series(planned: Sequence[Planned], data: dict[str, dict],
            datasets: datasets_lib.DataCache) -> list[numbers.Series]:
  path = records_lib.results_path(FLAGS.output_dir)
  got, _ = records_lib.read(path)
  kept = [r.flat() for r in analysis.deduplicate(got)[0]]
  by_key: dict[str, list[dict]] = {}
  for record in kept:
    by_key.setdefault(record["config_key"], []).append(record)
  first = tails()[0]
  out = []
  for p in planned:
    seeds = set(runner.seeds_of(FLAGS.seed, p.runs))
    records = sorted((r for r in by_key.get(p.cell.key, [])
                      if r["seed"] in seeds), key=lambda r: r["seed"])
    key = p.figure if p.tail == first else f"{p.figure}@{p.tail}"
    dataset = datasets.get(data[key])
    config = p.cell.config
    out.append(numbers.Series(
        algorithm=config["algorithm"], figure=p.figure,
        epsilon=(float(config["epsilon"]) if config["epsilon"] is not None
                 else MULTI_EPSILON),
        top_t=config.get("top_t") if config["algorithm"] == "sfp" else None,
        records=records, truth=dataset.truth,
        n=dataset.population.num_users, data=_describe(p.figure, dataset),
        sampling=config.get("sampling", two_sided.FIXED), tail=p.tail,
        variant=p.variant))
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
  size = ("a paper-size population" if figure == "multi-n" else
          "a larger population (the full data has 1.6M tweets)")
  return (f"{n:,} users drawn with replacement (seed {info['seed']}) from "
          f"the {info['source_users']:,} users of the Sentiment140 sample "
          f"({info['source']}), each keeping its bag of words: {size}, not "
          "the paper's data.")


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
    try:  # a small table: read before any work
      paper_populations.read_word_counts(FLAGS.word_counts_path)
    except ValueError as err:
      raise ValueError(f"--word_counts_path: {err}") from None


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  start, load_start = time.perf_counter(), os.getloadavg()
  check_flags()
  data = data_sets()
  if not data:
    raise ValueError("nothing to run: the several-words setting needs the "
                     "Sentiment140 file (--data_path)")
  datasets = datasets_lib.DataCache(FLAGS.cache_dir or None)
  planned = cells(data, datasets)
  done = records_lib.completed(records_lib.results_path(FLAGS.output_dir))
  tasks = []
  for p in planned:
    tasks += runner.plan([p.cell], FLAGS.seed, p.runs, done)
  left = sum(len(t.seeds) for t in tasks)
  print(f"{len(planned)} cells, {left} runs left", flush=True)
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
  series = _series(planned, data, datasets)
  notes = {figure: _describe(figure.partition("@")[0], datasets.get(options))
           for figure, options in data.items()}
  if "multi" in settings() and "multi" not in data:
    notes["multi"] = ("not run: the Sentiment140 file was not found "
                      f"(--data_path or ${datasets_lib.SENTIMENT140_ENV}).")
  command = cli.command_line("experiments.reproduce_paper")
  used = {(r["config_key"], r["seed"]) for s in series for r in s.records}
  provenance = measured(start, load_start, written[0], len(used))
  context = markdown.Context(
      command=command, seconds=provenance.wall_seconds,
      runs_written=written[0], triehh_runs=FLAGS.triehh_runs,
      sfp_runs=FLAGS.sfp_runs, multi_runs=FLAGS.multi_runs,
      data_notes=notes, load_note=FLAGS.load_note, beyond=FLAGS.poisson,
      table_ns=FLAGS.poisson_table_ns,
      table_epsilons=FLAGS.poisson_table_epsilons, provenance=provenance,
      main_tail=tails()[0])
  try:
    path = markdown.write(report_dir(), series, context)
  except OSError as err:  # a full disk: name where it was writing
    raise paths.with_path(err, report_dir()) from None
  print(f"{written[0]} runs written, {provenance.runs_read} read from "
        f"earlier records; {provenance.describe()}; report: {path} "
        f"({time.perf_counter() - start:.0f} s wall in all)")


def measured(start: float, load_start: tuple[float, float, float],
             runs_written: int, runs_used: int) -> markdown.Provenance:
  """What this invocation measured of itself, from ``start`` (its
  ``time.perf_counter()``) to now: wall and CPU time (this process and its
  finished children, ``resource.getrusage``), peak memory, the load
  average at ``start`` and now, and the runs written against those used."""
  me = resource.getrusage(resource.RUSAGE_SELF)
  kids = resource.getrusage(resource.RUSAGE_CHILDREN)
  return markdown.Provenance(
      wall_seconds=time.perf_counter() - start,
      cpu_self=me.ru_utime + me.ru_stime,
      cpu_children=kids.ru_utime + kids.ru_stime,
      peak_self_mib=me.ru_maxrss / 1024, peak_children_mib=kids.ru_maxrss / 1024,
      load_start=tuple(load_start), load_end=tuple(os.getloadavg()),
      runs_written=runs_written,
      runs_read=max(0, runs_used - runs_written), cpus=os.cpu_count() or 0)


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
