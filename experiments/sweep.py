"""Runs a grid of TrieHH, SFP, IBLT and partition-selection experiments,
resumably, with progress.

One cell per algorithm x engine (TrieHH) x data set x setting x epsilon x
delta x T (SFP) x k-anonymity (IBLT) x strategy (partition selection),
``--num_runs`` runs per cell with the seeds ``--seed``,
``--seed`` + 1, ... as ``run_triehh`` and ``run_sfp`` use them, each run
appended to ``<output_dir>/results.jsonl`` as the record those drivers
write. With only ``--algorithms``, ``--epsilons``, ``--num_runs`` and
``--output_dir``: the fast engine on the default data.

  python -m experiments.sweep --algorithms=triehh,sfp --epsilons=1,2,4,8 \\
      --num_runs=20 --output_dir=out
  triehh-sweep --epsilons=1,4 --num_runs=3 --output_dir=out

Every other flag of run_triehh and run_sfp applies to the cells it
concerns (TrieHH's to TrieHH cells, the TFF flags to ``--engines=tff``,
SFP's to SFP cells, each data flag to the data sets it describes); a flag
that applies to no cell is an error. A singular flag (``--epsilon``,
``--engine``, ...) is a list of one.

``--algorithms=iblt`` adds cells of TFF's IBLT heavy hitters
(``triehh.baselines.iblt``) on the users TrieHH samples for the same seed:
rounds of TrieHH's batch size at each (``--epsilons``, ``--deltas``), with
``--k_anonymities`` (default: TrieHH's theta there) and the ``--iblt_*``
flags. Their records have no (epsilon, delta): k-anonymity is not
differential privacy (``privacy``, ``matched_epsilon`` say so).

  python -m experiments.sweep --algorithms=triehh,iblt --epsilons=1 \
      --num_users=100000 --num_runs=3 --output_dir=out

``--algorithms=partition_selection`` adds cells of pipeline_dp's central
DP partition selection (``triehh.baselines.partition_selection``) at each
(``--epsilons``, ``--deltas``), one per ``--partition_strategies`` (default
``--partition_strategy``), with ``--max_partitions_contributed``, as
``run_partition_selection`` runs them.

  python -m experiments.sweep --algorithms=triehh,partition_selection \
      --partition_strategies=truncated_geometric,gaussian_thresholding \
      --epsilons=4 --num_runs=3 --output_dir=out

Any other registered mechanism (``--algorithms=noisy_trie``, ...) is swept
by its protocol (``triehh.runs.algorithms.mechanism``): a cell per
(``--epsilons``, ``--deltas``), its privacy object's other fields at their
defaults, run through ``triehh.discover`` on its default engine.

``--counts`` makes TrieHH cells count their discovered words too
(``docs/counts.md``; ``--epsilons``/``--deltas`` are then the total of
both phases), a cell per ``--count_shares`` value (default ``--count_share``).

  python -m experiments.sweep --epsilons=1,4 --counts \
      --count_shares=0.05,0.1,0.25 --num_runs=10 --output_dir=out

Before any run, every cell's parameters are checked on its data set (each
data set loaded once): a cell outside Theorem 1, one whose calibration
cannot be met on its n users or with SFP options that do not fit stops the
sweep with one ``error: cell [...]: ...`` line naming it.

Started again with the same flags, a sweep skips the runs already recorded
(a half-written last line left by a kill is set aside with a message). Two
sweeps may share ``--output_dir``: a cell is run by one of them at a time
(a lock file per cell under ``.sweep-locks/``), the other runs other cells
first and comes back to it. ``--workers=N`` runs cells in N processes, at
most one per CPU and per worker that fits in memory (a cap is said). A
plan whose seeds would not fit in memory is refused before it is built;
building the grid and checking its cells say what they are doing once they
take over two seconds (or the environment's ``TRIEHH_PROGRESS_AFTER``,
``inf``: never, as a script that parses stderr should set it).
Progress: a bar on stderr (off with ``--noprogress`` or when stderr is not a
terminal: then one line per cell).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import time

from absl import app
from absl import flags
import tqdm

from experiments import cli
from experiments import flags as shared_flags
from experiments import run_partition_selection
from experiments import run_sfp
from experiments import run_triehh
from triehh.baselines import iblt
from triehh.baselines import partition_selection
from triehh.core import progress as progress_lib
from triehh.data import datasets as datasets_lib
from triehh.engines import registry
from triehh.runs import grid
from triehh.runs import algorithms as algorithms_lib
from triehh.runs import records
from triehh.runs import runner
from triehh.theory import limits

FLAGS = flags.FLAGS
# Flags that print or write a single run's words: a sweep's runs are in
# results.jsonl.
_PRINT_FLAGS = ("show", "words_out")
for _driver in (run_triehh, run_sfp, run_partition_selection):
  # A sweep's mechanisms are its algorithms' cells, not triehh-run's
  # --mechanism.
  shared_flags.adopt(__name__, _driver,
                     leave_out=_PRINT_FLAGS + ("mechanism",))
shared_flags.refuse(__name__, _PRINT_FLAGS, "a sweep prints and writes no "
                    "words (its runs are in <output_dir>/results.jsonl)")
shared_flags.declare(__name__, "workers")
shared_flags.declare_simulation_seed(__name__)
shared_flags.declare(
    __name__, "settings", help_text="Settings: single, oov, multi (default: "
    "--setting; oov and multi apply to the text data sets only).")
shared_flags.declare(
    __name__, "epsilons",
    help_text="Target central epsilons (default: --epsilon).")
shared_flags.declare(
    __name__, "top_ts", help_text="SFP's T values, tuples kept per fragment "
    "position (default: --top_t).")
shared_flags.declare(
    __name__, "output_dir", help_text="Where results.jsonl is kept and "
    "resumed from (required).")
shared_flags.declare(
    __name__, "population_size", help_text="A declared, public number of "
    "users (2e5 is taken) for the TrieHH and partition-selection cells: "
    "delta = 1/n^2 (and TrieHH's batch) are derived from it instead of the "
    "data's own n, so that Poisson TrieHH and partition selection also "
    "cover ADD_OR_REMOVE_ONE.")


def _k_anonymity(text: str) -> int | str:
  """An item of --k_anonymities: ``theta`` or a whole number from 1 to
  IBLT's largest."""
  return text if text == "theta" else shared_flags.count_item(
      1, iblt.MAX_K_ANONYMITY)(text)


def _engine_item(text: str) -> str:
  """An item of --engines: a name, checked against the engine registry
  with the other flags (so engines registered by then are known)."""
  if not text:
    raise ValueError("an empty engine name (two commas in a row?)")
  return text


def _algorithm_item(text: str) -> str:
  """An item of --algorithms: a built-in algorithm or a registered
  mechanism (:func:`triehh.runs.algorithms.names`)."""
  return shared_flags.choice_item(algorithms_lib.names())(text)


shared_flags.DEFINE_values(
    "algorithms", ["triehh"], "Algorithms: triehh, sfp, iblt (TFF's IBLT "
    "heavy hitters on TrieHH's sampled users; k-anonymity, not DP), "
    "partition_selection (pipeline_dp's central DP partition selection) "
    "and/or any registered mechanism (noisy_trie, ...: a cell per epsilon "
    "and delta, its privacy object's other fields at their defaults).",
    _algorithm_item)
shared_flags.DEFINE_values(
    "engines", None, f"TrieHH engines: {' and/or '.join(registry.names())} "
    "or engines registered with triehh.register_engine (default: --engine).",
    _engine_item)
shared_flags.DEFINE_values(
    "datasets", None, f"Data sets: {', '.join(datasets_lib.DATASETS)} "
    "(default: --dataset). --data_path is read by each one that reads a "
    "file.", shared_flags.choice_item(list(datasets_lib.DATASETS)))
shared_flags.DEFINE_values(
    "deltas", None, "Target deltas, in (0, 1) (default: --delta, i.e. "
    "1/n^2).", shared_flags.number_item(0, 1))
shared_flags.DEFINE_values(
    "k_anonymities", None, "IBLT's k-anonymity thresholds, integers >= 1 "
    "or 'theta' (TrieHH's theta at the cell's epsilon and delta; the "
    "default).", _k_anonymity)
flags.DEFINE_integer("iblt_capacity", None,
                     "IBLT: distinct strings a sketch holds (default: the "
                     "most distinct strings of a round's participants).",
                     lower_bound=1)
flags.DEFINE_integer("iblt_string_max_bytes", None,
                     "IBLT: strings are cut to this many UTF-8 bytes "
                     "(default: --max_length); cut outputs count as false "
                     "positives.", lower_bound=1)
flags.DEFINE_integer("iblt_num_rounds", None,
                     "IBLT rounds per run (default: 1 with "
                     "--iblt_round_draw=sampled, every user once with "
                     "disjoint).", lower_bound=1)
flags.DEFINE_enum("iblt_round_draw", "sampled", list(iblt.ROUNDS),
                  "IBLT: each round a fresh TrieHH-style sample (the first "
                  "is TrieHH's first round), or disjoint passes.")
flags.DEFINE_integer("iblt_secure_sum_bitwidth", None,
                     "IBLT: sum sketches with TFF's secure sum at this bit "
                     "width (1 to 62; default: plain sum).", lower_bound=1,
                     upper_bound=62)
shared_flags.DEFINE_values(
    "partition_strategies", None, "Partition selection strategies: "
    f"{', '.join(partition_selection.STRATEGIES)} (default: "
    "--partition_strategy).",
    shared_flags.choice_item(list(partition_selection.STRATEGIES)))
shared_flags.DEFINE_values(
    "count_shares", None, "With --counts: TrieHH cells per share of the "
    "budget spent on counting, each in (0, 1) (default: --count_share).",
    shared_flags.number_item(0, 1))
flags.DEFINE_bool("progress", True,
                  "Show a progress bar on stderr (when it is a terminal).")


# Flags of one algorithm's cells (the lists are checked separately).
_TRIEHH_FLAGS = ("engine", "engines", "num_sub_rounds", "max_num_prefixes",
                 "theta", "gamma", "batch_size", "allow_no_guarantee",
                 "counts", "count_share", "count_sample_rate", "count_shares",
                 "adjacency")
_TFF_FLAGS = tuple(run_triehh.TFF_FLAGS)
_SFP_FLAGS = ("top_t", "top_ts", "cms_k", "cms_m", "sfp_length",
              "fragment_alphabet", "word_budget", "simulation",
              "check_puzzle_hash")
_IBLT_FLAGS = ("k_anonymities", "iblt_capacity", "iblt_string_max_bytes",
               "iblt_num_rounds", "iblt_round_draw",
               "iblt_secure_sum_bitwidth")
_PARTITION_FLAGS = ("partition_strategy", "partition_strategies",
                    "max_partitions_contributed")
# Plural flag -> the singular flag it replaces.
_LISTS = {"engines": "engine", "datasets": "dataset", "settings": "setting",
          "epsilons": "epsilon", "deltas": "delta"}


def _list(plural: str) -> list:
  """The values of a list flag (parsed, none twice: experiments.flags), or
  its singular flag as a list of one."""
  singular = _LISTS[plural]
  if FLAGS[plural].value is not None:
    if shared_flags.given(singular):
      raise ValueError(f"give --{plural} or --{singular}, not both")
    return list(FLAGS[plural].value)
  value = FLAGS[singular].value
  return [value] if value is not None else [None]


def _top_ts() -> list[int]:
  if FLAGS.top_ts is not None:
    if shared_flags.given("top_t"):
      raise ValueError("give --top_ts or --top_t, not both")
    return list(FLAGS.top_ts)
  return [FLAGS.top_t]


def _partition_strategies() -> list[str]:
  if FLAGS.partition_strategies is not None:
    if shared_flags.given("partition_strategy"):
      raise ValueError("give --partition_strategies or --partition_strategy, "
                       "not both")
    return list(FLAGS.partition_strategies)
  return [FLAGS.partition_strategy]


def _k_anonymities() -> list[int | None]:
  """IBLT's thresholds; None stands for TrieHH's theta."""
  if FLAGS.k_anonymities is None:
    return [None]
  return [None if v == "theta" else v for v in FLAGS.k_anonymities]


def _refuse(names, why: str) -> None:
  given = [f"--{n}" for n in names if shared_flags.given(n)]
  if given:
    raise ValueError(f"{', '.join(given)} {why}")


def _data_options(datasets: list[str], settings: list[str]) -> list[dict]:
  """Data options per (data set, setting) cell; flags checked against them.

  Raises:
    ValueError: for a flag that applies to none of them, or a data set
      without the file it reads.
  """
  pairs = shared_flags.check_data_flags(
      datasets, settings,
      chosen=shared_flags.given("dataset") or FLAGS.datasets is not None)
  return [shared_flags.data_options(d, s) for d, s in pairs]


def _refuse_flags_of_absent_algorithms(algorithms: list[str]) -> None:
  """Refuses the flags of an algorithm the sweep has no cell of."""
  if "triehh" not in algorithms:
    _refuse(_TRIEHH_FLAGS + _TFF_FLAGS, "applies to TrieHH cells only; add "
            "triehh to --algorithms")
  if "sfp" not in algorithms:
    _refuse(_SFP_FLAGS, "applies to SFP cells only; add sfp to --algorithms")
  if "iblt" not in algorithms:
    _refuse(_IBLT_FLAGS, "applies to IBLT cells only; add iblt to "
            "--algorithms")
  if "partition_selection" not in algorithms:
    _refuse(_PARTITION_FLAGS, "applies to partition-selection cells only; "
            "add partition_selection to --algorithms")
  if not {"triehh", "partition_selection"} & set(algorithms):
    _refuse(("population_size",), "applies to TrieHH and "
            "partition-selection cells only; add triehh or "
            "partition_selection to --algorithms")


def _theta(algorithms: list[str]) -> dict | None:
  """TrieHH's theta with gamma or batch size, when given directly."""
  if "triehh" in algorithms and FLAGS.theta is not None:
    if not {"sfp", "iblt", "partition_selection"} & set(algorithms):
      _refuse(("epsilon", "epsilons", "delta", "deltas"),
              "applies to no cell: TrieHH cells given --theta are not "
              "calibrated from epsilon (add sfp or iblt to --algorithms?)")
    return {"theta": FLAGS.theta, "gamma": FLAGS.gamma,
            "batch_size": FLAGS.batch_size}
  if FLAGS.gamma is not None or FLAGS.batch_size is not None:
    raise ValueError("--gamma and --batch_size need --theta")
  return None


def _counting(algorithms: list[str]) -> tuple[dict, list[float] | None]:
  """TrieHH's counting options and ``--count_shares``, checked."""
  if "triehh" not in algorithms:
    return {}, None
  counting = run_triehh.counting_options()
  if FLAGS.count_shares is None:
    return counting, None
  if not FLAGS.counts:
    raise ValueError("--count_shares is for --counts; pass --counts to count "
                     "the discovered words")
  if FLAGS.count_share is not None:
    raise ValueError("give --count_shares or --count_share, not both")
  return counting, list(FLAGS.count_shares)


# The algorithms whose cells refuse a delta above 1/n unless opted in:
# the built-in ones but IBLT (its m is TrieHH's at the same delta), and the
# registered mechanisms whose privacy object has the opt-in field.
_DELTA_REFUSERS = ("triehh", "sfp", "partition_selection")


def _opts_in(name: str) -> bool:
  """Whether the registered mechanism ``name``'s privacy object has the
  opt-in field."""
  adapter = algorithms_lib.get(name)
  kind = getattr(adapter, "kind", None)
  return kind is not None and limits.DELTA_OPT_IN in {
      f.name for f in dataclasses.fields(kind)}


def _delta_opt_in(algorithms: list[str]) -> dict[str, bool]:
  """``--allow_delta_above_1_over_n`` as the cells' option (a key only
  when given, so that the cells' configs stay as they were), refused when
  no cell refuses such a delta."""
  if not FLAGS.allow_delta_above_1_over_n:
    return {}
  if not any(a in _DELTA_REFUSERS or _opts_in(a) for a in algorithms):
    raise ValueError("--allow_delta_above_1_over_n applies to no cell: "
                     "only TrieHH, SFP, partition-selection and the noisy "
                     "trie's cells refuse a delta above 1/n")
  return {limits.DELTA_OPT_IN: True}


def _mechanism_opt_in(algorithms: list[str], opt_in: dict) -> dict | None:
  """The opt-in for each registered mechanism's cells that takes it."""
  chosen = {a: dict(opt_in) for a in algorithms if opt_in
            and a not in _DELTA_REFUSERS and a != "iblt" and _opts_in(a)}
  return chosen or None


def check_flags() -> list[grid.Cell]:
  """The sweep's cells; every flag checked before any data is read.

  Raises:
    ValueError: naming a flag that applies to no cell or flags that do not
      go together.
  """
  if not FLAGS.output_dir:
    raise ValueError("a sweep needs --output_dir (where results.jsonl is "
                     "kept and resumed from)")
  algorithms = list(FLAGS.algorithms)
  _refuse_flags_of_absent_algorithms(algorithms)
  if "sfp" in algorithms:
    run_sfp.check_sketch_flags()
  engines = ([run_triehh.check_engine(e, "--engines")
              for e in _list("engines")] if "triehh" in algorithms
             else [registry.FAST])
  takes = frozenset().union(*map(registry.options, engines))
  _refuse(run_triehh.tff_flags_not_taken(takes),
          f"applies to --engines={registry.TFF} only")
  theta = _theta(algorithms)
  epsilons = [float(e) for e in _list("epsilons")]
  deltas = [None if d is None else float(d) for d in _list("deltas")]
  top_ts = _top_ts() if "sfp" in algorithms else [run_sfp.FLAGS.top_t]
  k_anonymities = _k_anonymities() if "iblt" in algorithms else [None]
  data = _data_options(_list("datasets"), _list("settings"))
  tff = run_triehh.tff_options() if takes else {}
  counting, count_shares = _counting(algorithms)
  opt_in = _delta_opt_in(algorithms)
  return grid.expand(
      algorithms=algorithms, data=data, engines=engines, epsilons=epsilons,
      deltas=deltas, top_ts=top_ts, k_anonymities=k_anonymities,
      partition_strategies=_partition_strategies(),
      partition_options={"max_partitions_contributed":
                         FLAGS.max_partitions_contributed,
                         "population_size": FLAGS.population_size,
                         **opt_in},
      triehh_options={"num_sub_rounds": FLAGS.num_sub_rounds,
                      "max_num_prefixes": FLAGS.max_num_prefixes,
                      "allow_no_guarantee": FLAGS.allow_no_guarantee,
                      **run_triehh.sampling_options(), **counting,
                      **run_triehh.neighbour_options(), **opt_in},
      mechanism_options=_mechanism_opt_in(algorithms, opt_in),
      theta=theta, tff_options=tff, count_shares=count_shares,
      sfp_options={"k": FLAGS.cms_k, "m": FLAGS.cms_m,
                   "length": FLAGS.sfp_length,
                   "fragment_alphabet": FLAGS.fragment_alphabet,
                   "word_budget": FLAGS.word_budget,
                   "simulation": FLAGS.simulation,
                   "check_puzzle_hash": FLAGS.check_puzzle_hash,
                   **opt_in},
      iblt_options={"capacity": FLAGS.iblt_capacity,
                    "string_max_bytes": FLAGS.iblt_string_max_bytes,
                    "num_rounds": FLAGS.iblt_num_rounds,
                    "rounds": FLAGS.iblt_round_draw,
                    "secure_sum_bitwidth": FLAGS.iblt_secure_sum_bitwidth})


def _clock(seconds: float) -> str:
  seconds = int(round(seconds))
  return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
  """Turns sweep events into a tqdm bar or one line per cell (stderr)."""

  def __init__(self, tasks: list[runner.Task], bar: bool):
    self.planned = {t.cell.key: len(t.seeds) for t in tasks}
    self.total = sum(self.planned.values())
    self.cells = len(tasks)
    self.done = 0
    self.cells_done = 0
    self.start = time.monotonic()
    self.cell_start: dict[str, float] = {}
    self.bar = tqdm.tqdm(total=self.total, unit="run", file=sys.stderr,
                         dynamic_ncols=True) if bar else None

  def _say(self, text: str) -> None:
    if self.bar is not None:
      self.bar.write(text, file=sys.stderr)
    else:
      print(text, file=sys.stderr, flush=True)

  def __call__(self, event: runner.Event) -> None:
    if event.kind == "start":
      skipped = self.planned.get(event.key, event.runs) - event.runs
      if skipped:  # recorded by another sweep since the plan was made
        self.total -= skipped
        if self.bar is not None:
          self.bar.total = self.total
          self.bar.refresh()
      self.cell_start[event.key] = time.monotonic()
      if self.bar is not None:
        self.bar.set_postfix_str(event.label)
    elif event.kind == "run":
      self.done += 1
      if self.bar is not None:
        self.bar.update(1)
    elif event.kind == "done":
      self.cells_done += 1
      if self.bar is None:
        elapsed = time.monotonic() - self.start
        left = self.total - self.done
        eta = elapsed / self.done * left if self.done else 0.0
        took = time.monotonic() - self.cell_start.get(event.key, self.start)
        self._say(f"cell {self.cells_done}/{self.cells} [{event.label}] "
                  f"{event.runs} runs in {took:.1f} s; {self.done}/"
                  f"{self.total} runs done, {left} left, elapsed "
                  f"{_clock(elapsed)}, eta {_clock(eta)}")
    elif event.kind == "locked":
      self._say(f"cell [{event.label}] is being run by another sweep; "
                "coming back to it at the end")
    elif event.kind == "wait":
      self._say(f"waiting for another sweep to finish cell [{event.label}]")

  def close(self) -> None:
    if self.bar is not None:
      self.bar.close()


_PROGRESS: list[Progress] = []
_PATH: list[str] = []
# The lines this sweep appended to results.jsonl, in every process.
_WRITTEN: list[records.LineCount] = []


# Seconds a step before the first run may take before the sweep says what
# it is doing, and then between its progress lines; None: the library's
# (triehh.core.progress.slow_seconds: 2 s, or TRIEHH_PROGRESS_AFTER).
SLOW_SECONDS: float | None = None


def _slow_seconds() -> float:
  return (progress_lib.slow_seconds() if SLOW_SECONDS is None
          else SLOW_SECONDS)


class CheckProgress:
  """Says how far the check of the cells is, on stderr, once it takes over
  ``SLOW_SECONDS`` (each new cell is calibrated: seconds each), then at
  twice the last interval, at most a minute apart."""

  def __init__(self, cells: int):
    self.cells = cells
    self.start = self.said = time.monotonic()
    self.every = _slow_seconds()

  def __call__(self, checked: int) -> None:
    now = time.monotonic()
    if now - self.said < self.every or checked == self.cells:
      return
    self.said, self.every = now, min(2 * self.every, 60.0)
    elapsed = now - self.start
    eta = elapsed / checked * (self.cells - checked)
    print(f"sweep: checked {checked:,}/{self.cells:,} cells before any run, "
          f"elapsed {_clock(elapsed)}, eta {_clock(eta)}", file=sys.stderr,
          flush=True)


def in_flag_terms(err: ValueError) -> ValueError:
  """``err``, a library's refusal, in the sweep's flags: triehh-run's
  terms (:func:`experiments.run_triehh.in_flag_terms`), a delta as the
  ``--deltas`` value it is when the sweep was given ``--deltas``."""
  text = shared_flags.delta_in_flag_terms(
      str(run_triehh.in_flag_terms(err)))
  if FLAGS.deltas is not None:
    text = text.replace("--delta=", "the --deltas value ").replace(
        "give --delta at most", "give each of --deltas at most")
  return err if text == str(err) else ValueError(text)


def _plan(cells: list[grid.Cell], done) -> list[runner.Task]:
  """runner.plan, its memory refusal in the flags' terms."""
  try:
    return runner.plan(cells, FLAGS.seed, FLAGS.num_runs, done)
  except ValueError as err:
    raise ValueError(re.sub(r"(?<![-\w])num_runs\b", "--num_runs",
                            str(err))) from err


def _workers(tasks: list[runner.Task]) -> int:
  """--workers, capped at what the machine holds, said in one line."""
  limit = runner.worker_limit(tasks, FLAGS.workers)
  if limit.capped:
    print(f"sweep: --workers={FLAGS.workers} capped at {limit.workers}: "
          f"{limit.why}")
  return limit.workers


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  with progress_lib.said_if_slow("building the grid's cells and the plan",
                                 prefix="sweep", after=_slow_seconds()):
    cells = check_flags()
    path = shared_flags.check_grid_output_dir()
    _PATH[:] = [path]
    records.repair(path)
    done = records.completed(path)
    tasks = _plan(cells, done)
  left = sum(len(t.seeds) for t in tasks)
  total = len(cells) * FLAGS.num_runs
  workers = _workers(tasks)
  print(f"sweep: {len(cells)} cells x {FLAGS.num_runs} runs = {total} runs; "
        f"{total - left} already in {path}, {left} to run"
        + (f" in {workers} processes" if workers > 1 else ""))
  sys.stdout.flush()
  # Each data set loaded once, and every cell checked on it, before any run.
  datasets = datasets_lib.DataCache(FLAGS.cache_dir or None)
  try:
    grid.check_cells([t.cell for t in tasks], datasets,
                     runner.seeds_of(FLAGS.seed, FLAGS.num_runs),
                     on_checked=CheckProgress(len(tasks)))
  except ValueError as err:  # the library's refusals, in the flags' terms
    raise in_flag_terms(err) from err
  progress = Progress(tasks, bar=FLAGS.progress and sys.stderr.isatty())
  _PROGRESS[:] = [progress]
  _WRITTEN[:] = [records.LineCount()]
  start = time.monotonic()
  try:
    runner.run_plan(tasks, FLAGS.output_dir, workers=workers,
                    cache_dir=FLAGS.cache_dir or None, ks=shared_flags.ks(),
                    on_event=progress, datasets=datasets,
                    written=_WRITTEN[0])
  except ValueError as err:  # the runs' refusals (the records kept)
    raise in_flag_terms(err) from err
  finally:
    progress.close()
  print(f"sweep done: {progress.done} runs in "
        f"{time.monotonic() - start:.1f} s, results in {path}")


def _kept() -> str:
  """How many runs results.jsonl gained: the writers' count, not the
  progress (Ctrl-C may come between a line and its progress event)."""
  if not _WRITTEN:
    return ""
  return f"{_WRITTEN[0].value} finished runs kept in {_PATH[0]}"


def run():
  """Console-script entry point (``triehh-sweep``)."""
  cli.run(main, sys.modules[__name__], on_interrupt=_kept)


if __name__ == "__main__":
  run()
