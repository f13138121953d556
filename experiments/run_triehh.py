"""Runs TrieHH on a data set and reports privacy, heavy hitters and utility.

With no flags: a synthetic population of 1e6 users drawn from an English
word-frequency list, epsilon = 4, delta = 1/n^2, L = 10, the fast engine.

  python -m experiments.run_triehh --epsilon=1 --num_runs=5 --output_dir=out
  triehh-run --epsilon=1 --num_runs=5 --output_dir=out

With ``--counts`` a second, differentially private phase counts the users
of each discovered word (``docs/counts.md``): ``--epsilon``/``--delta`` are
then the total of both phases, ``--count_share`` of it goes to counting,
and each run prints the protected counts with their intervals.

The guarantee names the neighbouring populations it covers
(``docs/privacy.md``, "Which neighbours"): by default what the accountant
proves, ``REPLACE_SPECIAL`` when the parameters are derived from the data's
own n. ``--population_size`` declares a public n to derive them from (then
Poisson runs also cover ``ADD_OR_REMOVE_ONE``); ``--adjacency`` asks for a
relation and fails when the run does not cover it.

``--mechanism`` runs another registered mechanism on the same data
(``docs/mechanisms.md``): ``noisy_trie``, ``partition_selection``, ``sfp``,
``iblt``, or one registered in the process. Its flags are made from the
fields of its privacy object (``experiments.mechanism_flags``) and listed
below under ``--mechanism=NAME``; ``--epsilon``, ``--delta`` and
``--population_size`` are shared where its object has those fields. Each
run prints the released words and their guarantee, and ``--words_out``
writes them; results.jsonl records are TrieHH's (``--output_dir``).

  triehh-run --mechanism=noisy_trie --false_positive_rate=1e-6 \\
      --dataset=ingested --data_path=pop --words_out=words.csv

Errors print one line ``error: ...`` and exit 1; Ctrl-C exits 130 with the
finished runs kept in results.jsonl. The TFF engine is quiet unless
``--verbosity=0`` (or higher) asks for TensorFlow's INFO logs.
"""

from __future__ import annotations

import math
import re
import sys

from absl import app
from absl import flags

from experiments import flags as shared_flags
from experiments import mechanism_flags
from experiments import single_run
from triehh.core import safe_format
from triehh.core import validation
from triehh.engines import registry
from triehh.theory import coverage
from triehh.theory import mechanism
from triehh.theory.adjacency import Adjacency

FLAGS = flags.FLAGS
shared_flags.declare(__name__, *shared_flags.DATA_FLAGS,
                     *shared_flags.RUN_FLAGS, "show", "theta", "gamma",
                     "batch_size", "adjacency", "words_out")
shared_flags.declare(
    __name__, "population_size", help_text=(
        "A declared, public number of users (a number you state, not read "
        "off the data; 2e5 is taken): delta = 1/n^2 and the batch are "
        "derived from it instead of the data's own n, so Poisson runs also "
        "cover ADD_OR_REMOVE_ONE."))



class _Mechanisms(flags.EnumParser):
  """``--mechanism``'s values: the registered mechanisms' names when the
  flag is parsed (so a mechanism registered in the process before then is
  one of them)."""

  def __init__(self):
    super().__init__([mechanism_flags.TRIEHH])

  @property
  def enum_values(self) -> list[str]:
    from triehh.mechanisms import registry as mechanisms  # pylint: disable=g-import-not-at-top
    return mechanisms.names()

  @enum_values.setter
  def enum_values(self, values) -> None:
    del values  # read from the registry


shared_flags.declare(
    __name__, "mechanism", default=mechanism_flags.TRIEHH, help_text=(
        "The mechanism to run: triehh (TrieHH, read from the flags above), "
        "or another registered one, read from the flags listed under its "
        "heading below (made from its privacy object's fields); it runs on "
        "its default engine unless --engine names another that runs it."),
    parser=_Mechanisms())

# TrieHH's flags that the other mechanisms do not read (but where a
# mechanism's privacy object has a field of the same name:
# experiments.mechanism_flags.owners).
TRIEHH_FLAGS = ("epsilon", "delta", "population_size", "theta", "gamma",
                "batch_size", "adjacency", "sampling", "sampling_rate",
                "counts", "count_share", "count_sample_rate",
                "allow_no_guarantee", "allow_delta_above_1_over_n",
                "num_sub_rounds", "max_num_prefixes",
                "tff_secure_sum", "tff_max_user_contribution", "output_dir")
# What to do instead, said with the refusal of a TrieHH flag.
_INSTEAD = {"output_dir": "results.jsonl records are TrieHH's; write the "
                          "release with --words_out"}

# A string, checked against the registry when the flags are checked, so an
# engine registered before then (triehh.register_engine) can be chosen.
flags.DEFINE_string("engine", registry.FAST,
                    f"Engine: one of {', '.join(registry.names())} ('fast': "
                    "numpy; 'tff': TensorFlow Federated), or an engine "
                    "registered with triehh.register_engine.")
flags.DEFINE_integer("num_sub_rounds", 1,
                     "Batches per round whose votes are summed.",
                     lower_bound=1)
flags.DEFINE_integer("max_num_prefixes", None,
                     "Keep at most this many extensions per round.",
                     lower_bound=1)
flags.DEFINE_enum("sampling", None, ["poisson", "fixed"],
                  "'poisson': each user takes part in a round with a "
                  "probability (calibrated, or --sampling_rate), guarantee "
                  "proven in both directions; 'fixed': the paper's batch of "
                  "m users, Theorem 1 in the direction of its proof only. "
                  "Default: poisson, or fixed with --gamma/--batch_size (then "
                  "--sampling=poisson makes --batch_size the expected "
                  "batch).")
flags.DEFINE_float("sampling_rate", None,
                   "Poisson sampling with --theta: the probability q that a "
                   "user takes part in a round (or give --batch_size, the "
                   "expected users per round, or --gamma).")
flags.DEFINE_bool("counts", False,
                  "Also count the users of each discovered word with a "
                  "differentially private counting phase (docs/counts.md); "
                  "--epsilon/--delta are then the total of both phases.")
flags.DEFINE_float("count_share", None,
                   "With --counts: the share of epsilon and delta spent on "
                   "counting, in (0, 1) (default 0.1).")
flags.DEFINE_float("count_sample_rate", None,
                   "With --counts: the probability that a user joins the "
                   "counting sample, in (0, 1] (default 1).")
flags.DEFINE_bool("allow_no_guarantee", False,
                  "Run parameters outside Theorem 1 (reported as epsilon = "
                  "inf) instead of refusing them.")


def _address(text: str) -> str:
  """An item of --tff_workers: ``host:port`` (port 1-65535)."""
  host, sep, port = text.rpartition(":")
  if not (sep and host and port.isdigit() and 1 <= int(port) <= 65535):
    raise ValueError(f"{text!r} is not a host:port address (port 1-65535), "
                     "e.g. --tff_workers=localhost:8000,localhost:8001")
  return text


shared_flags.DEFINE_values(
    "tff_workers", [], "TFF engine: host:port of running TFF workers (start "
    "them with `python -m triehh.engines.tff.worker --port=N`); clients are "
    "split across them. Empty: one local worker.", _address,
    allow_empty=True)
flags.DEFINE_bool("tff_secure_sum", False,
                  "TFF engine: aggregate votes with "
                  "tff.federated_secure_sum_bitwidth.")
flags.DEFINE_integer("tff_max_user_contribution", None,
                     "TFF engine, several-word data: each sampled user votes "
                     "with its this many most frequent words (TFF reference "
                     "code) instead of one word drawn by frequency; > 1 is "
                     "outside Theorem 1.", lower_bound=1)
flags.DEFINE_float("tff_connect_timeout", 10.0,
                   "TFF engine: seconds to reach a worker.")
flags.DEFINE_float("tff_rpc_timeout", 300.0,
                   "TFF engine: seconds a worker may take for one call.")

# The noisy trie's noise: the flag -> its engines' option.
NOISY_TRIE_FLAGS = {"distributed_noise": "noise", "dropout": "dropout"}
flags.DEFINE_bool("distributed_noise", False,
                  "--mechanism=noisy_trie (fast and tff engines): each "
                  "client adds its Skellam share inside the secure sum, in "
                  "place of the server's noise (accounted as such, for "
                  "REPLACE_SPECIAL only; n must be the data's).")
flags.DEFINE_float("dropout", None,
                   "--mechanism=noisy_trie --distributed_noise: the bound "
                   "on a sampled client's chance of not delivering its "
                   "share, which the accountant assumes (unset: 0.1).")

for _name in ("tff_connect_timeout", "tff_rpc_timeout"):
  flags.register_validator(
      _name, lambda v: math.isfinite(v) and v > 0,
      f"--{_name} must be a positive finite number of seconds")

# The TFF engine's flags -> the engine option each sets
# (registry.TFF_OPTIONS).
TFF_FLAGS = {"tff_workers": "workers", "tff_secure_sum": "secure_sum",
             "tff_max_user_contribution": "max_user_contribution",
             "tff_connect_timeout": "connect_timeout",
             "tff_rpc_timeout": "rpc_timeout"}


def check_engine(engine: str, flag: str = "--engine") -> str:
  """``engine`` if the registry knows it, else a ValueError naming
  ``flag`` and the engines it knows."""
  if engine not in registry.names():
    raise ValueError(f"{flag}={engine}: unknown engine; choose from "
                     f"{', '.join(registry.names())}")
  return engine


def tff_flags_not_taken(takes: frozenset[str]) -> list[str]:
  """The TFF flags given whose option is not in ``takes``."""
  return [name for name, option in TFF_FLAGS.items()
          if option not in takes and not FLAGS[name].using_default_value]


def tff_options() -> dict:
  """The options the TFF flags set (workers and max_user_contribution
  only when given)."""
  options = {"secure_sum": FLAGS.tff_secure_sum,
             "connect_timeout": FLAGS.tff_connect_timeout,
             "rpc_timeout": FLAGS.tff_rpc_timeout}
  if FLAGS.tff_workers:
    options["workers"] = FLAGS.tff_workers
  if FLAGS.tff_max_user_contribution is not None:
    options["max_user_contribution"] = FLAGS.tff_max_user_contribution
  return options


def engine_options(engine: str | None = None) -> dict:
  """Extra keyword arguments for ``engine`` (default ``--engine``): the
  TFF flags' options it takes (:func:`triehh.engines.registry.options`).

  Raises:
    ValueError: for an unknown engine, or a TFF flag it does not take.
  """
  engine = check_engine(engine or FLAGS.engine)
  takes = registry.options(engine)
  given = tff_flags_not_taken(takes)
  if given:
    raise ValueError(f"TFF engine flags given without --engine={registry.TFF}"
                     f" (--engine={engine} does not take them): "
                     f"{', '.join('--' + name for name in given)}")
  return {k: v for k, v in tff_options().items() if k in takes}


def sampling_options() -> dict:
  """``--sampling`` and ``--sampling_rate``, checked together."""
  batch = [f"--{name}" for name in ("batch_size", "gamma")
           if getattr(FLAGS, name) is not None]
  if FLAGS.sampling_rate is not None and batch:
    raise ValueError(f"give one of --sampling_rate and {' and '.join(batch)}"
                     f" (--sampling_rate is Poisson sampling's rate, "
                     f"{batch[0]} sets the batch), not both")
  sampling = mechanism.default_sampling(FLAGS.sampling,
                                       batch_size=FLAGS.batch_size,
                                       gamma=FLAGS.gamma)
  if FLAGS.sampling_rate is not None:
    if sampling != "poisson":
      raise ValueError("--sampling_rate is for --sampling=poisson")
    if FLAGS.theta is None:
      raise ValueError("--sampling_rate needs --theta (with --epsilon the "
                       "rate is calibrated)")
    validation.check_rate("--sampling_rate", FLAGS.sampling_rate)
  return {"sampling": sampling, "sampling_rate": FLAGS.sampling_rate}


def counting_options() -> dict:
  """``--counts``, ``--count_share`` and ``--count_sample_rate``, checked
  together as ``discover`` checks its arguments (``count_share`` and
  ``count_sample_rate`` None: the defaults)."""
  if FLAGS.counts and FLAGS.theta is not None:
    raise ValueError("--counts needs --epsilon (the total budget split "
                     "between discovery and counting), not --theta")
  from triehh.discovery import discover as discover_lib  # pylint: disable=g-import-not-at-top
  try:
    request = discover_lib.check_counting(
        FLAGS.counts, FLAGS.count_share, FLAGS.count_sample_rate,
        epsilon=FLAGS.epsilon, allow_no_guarantee=FLAGS.allow_no_guarantee,
        adjacency=FLAGS.adjacency)
  except ValueError as err:
    raise counting_in_flag_terms(err) from err
  if request is None:
    return {}
  return {"counts": True, "count_share": FLAGS.count_share,
          "count_sample_rate": FLAGS.count_sample_rate}


def neighbour_options() -> dict:
  """``--adjacency`` (one of dp_accounting's names) and
  ``--population_size`` (None: not given)."""
  return {"adjacency": FLAGS.adjacency,
          "population_size": FLAGS.population_size}


# The library's words for what a flag sets -> the flag (the errors of
# triehh.theory.policy.resolve, said in the drivers' terms).
_FLAG_TERMS = (
    (re.compile(r"(?<![-\w])population_size\b"), "--population_size"),
    (re.compile(r"(?<![-\w])allow_no_guarantee=True"), "--allow_no_guarantee"),
    (re.compile(r"(?<![-\w])allow_delta_above_1_over_n=True"),
     "--allow_delta_above_1_over_n"),
    # limits.check_delta_for_n's refusals: the delta asked for, or theta's.
    (re.compile(r"(?<![-\w])delta=(?=[\d.e+-]+ is above 1/n)"), "--delta="),
    (re.compile(r"(?<![-\w])theta=(?=\d+ and its sampling as given)"),
     "--theta="),
    (re.compile(r"(?<![-\w])give delta at most"), "give --delta at most"),
    (re.compile(r"(?<![-\w])sampling='poisson'"), "--sampling=poisson"),
    (re.compile(r"(?<![-\w])sampling=[\"']fixed[\"']"), "--sampling=fixed"),
    (re.compile(r"(?<![-\w])max_length <="), "--max_length <="),
    (re.compile(r"give delta and the rate explicitly"),
     "give --delta (and --sampling_rate with --theta)"),
)


# The counting arguments' names -> their flags (check_counting's errors).
_COUNTING_TERMS = (
    (re.compile(r"(?<![-\w])counts=True"), "--counts"),
    (re.compile(r"(?<![-\w])allow_no_guarantee=True"), "--allow_no_guarantee"),
    (re.compile(r"(?<![-\w])(count_share|count_sample_rate)\b"), r"--\1"),
    # epsilon as an argument (not in "the share of epsilon and delta").
    (re.compile(r"(?<![-\w])epsilon(?==| \(the total)"), "--epsilon"),
)


def counting_in_flag_terms(err: ValueError) -> ValueError:
  """A counting argument's error (:func:`triehh.discovery.discover.
  check_counting`) said in the flags that set them."""
  return ValueError(_said_as_flags(str(err), _COUNTING_TERMS))


def in_flag_terms(err: ValueError) -> ValueError:
  """``err`` with the library's argument names said as the flags that set
  them (``population_size`` -> ``--population_size``)."""
  text = _said_as_flags(str(err), _FLAG_TERMS)
  return err if text == str(err) else ValueError(text)


def _said_as_flags(text: str, terms) -> str:
  """``text`` with each of ``terms``' patterns replaced by its flag."""
  for pattern, flag in terms:
    text = pattern.sub(flag, text)
  return text


def call(population, config: dict, seed: int | None, options: dict):
  """:func:`~triehh.runs.algorithms.triehh.call_triehh`; its refusals name
  the flags (:func:`in_flag_terms`)."""
  try:
    return _algorithm().call_triehh(population, config, seed, options)
  except ValueError as err:
    raise in_flag_terms(err) from err


def privacy_options() -> dict:
  """``(epsilon, delta)`` to calibrate, or theta with gamma / batch size."""
  if FLAGS.theta is None:
    if FLAGS.gamma is not None or FLAGS.batch_size is not None:
      raise ValueError("--gamma and --batch_size need --theta")
    return {"epsilon": FLAGS.epsilon, "delta": FLAGS.delta}
  if FLAGS.sampling_rate is not None:
    if FLAGS.gamma is not None or FLAGS.batch_size is not None:
      raise ValueError("give one of --sampling_rate, --gamma and "
                       "--batch_size with --theta")
    if not FLAGS["epsilon"].using_default_value or FLAGS.delta is not None:
      raise ValueError("give --epsilon/--delta, or --theta with "
                       "--sampling_rate, not both")
    return {"theta": FLAGS.theta}
  if not FLAGS["epsilon"].using_default_value or FLAGS.delta is not None:
    raise ValueError("give --epsilon/--delta, or --theta with --gamma or "
                     "--batch_size, not both")
  return {"theta": FLAGS.theta, "gamma": FLAGS.gamma,
          "batch_size": FLAGS.batch_size}


def run_config(privacy: dict, options: dict) -> dict:
  """A run's ``config`` (everything but the seed that changes its result)."""
  return _algorithm().ADAPTER.config(
      shared_flags.data_options(), engine=FLAGS.engine, **privacy,
      num_sub_rounds=FLAGS.num_sub_rounds,
      max_num_prefixes=FLAGS.max_num_prefixes,
      allow_no_guarantee=FLAGS.allow_no_guarantee,
      allow_delta_above_1_over_n=FLAGS.allow_delta_above_1_over_n,
      tff_secure_sum=options.get("secure_sum"),
      tff_max_user_contribution=options.get("max_user_contribution"),
      **sampling_options(), **counting_options(), **neighbour_options())


def check_flags() -> tuple[dict, dict]:
  """Engine and privacy options; every combination checked before any work.

  Raises:
    ValueError: naming the flags that do not go together.
  """
  shared_flags.check_data_flags()
  sampling_options()
  counting_options()
  neighbour_options()
  return engine_options(), privacy_options()


def _algorithm():
  """The TrieHH algorithm of runs and records, imported when a run starts
  (``--help`` and the flags' checks need neither it nor the discovery)."""
  from triehh.runs.algorithms import triehh as triehh_algorithm  # pylint: disable=g-import-not-at-top
  return triehh_algorithm


def check_population(n: int) -> None:
  """:func:`~triehh.runs.algorithms.triehh.check_triehh_population`."""
  _algorithm().check_triehh_population(n)


def record(*args, **kwargs):
  """:func:`~triehh.runs.algorithms.triehh.triehh_record`."""
  return _algorithm().triehh_record(*args, **kwargs)


def _prepare(data: shared_flags.Dataset) -> None:
  check_population(data.population.num_users)
  data.population.encode()


def _describe(result) -> list[str]:
  """The privacy lines printed once."""
  p = result.params
  target = (f"target epsilon={p.target_epsilon}, delta="
            f"{p.target_delta:.3g}" if p.target_epsilon is not None
            else "theta and batch size given")
  sides = ("both directions" if p.two_sided else
           "one direction: Theorem 1's proof")
  if p.has_guarantee:
    phase = " of discovery" if result.counts is not None else ""
    lines = [f"privacy{phase}: ({p.epsilon:.4f}, {p.delta:.3g})-DP, {sides} "
             f"[{target}]"]
  else:
    lines = [f"privacy: NONE [{target}]"]
  if p.sampling == "poisson":
    rate = safe_format.rate_down(p.sampling_rate)  # meets the target
    batch = (f"Poisson sampling, rate q={rate} (about "
             f"{p.sampling_rate * p.n:,.0f} users per round)")
  else:
    batch = f"batch size m={p.batch_size}"
  lines += [f"  theta={p.theta}, {batch} of n={p.n}, L={p.max_length} "
            f"characters + end symbol = {p.levels} levels",
            f"  {p.guarantee}"]
  if p.has_guarantee:
    lines.append(_neighbours_line(p))
  caveat = getattr(result.guarantee, "caveat", "")
  if caveat:  # a delta above 1/n, opted in to
    lines.insert(1, f"  WEAK: {caveat}")
  return lines + _count_lines(result)


def _neighbours_line(p) -> str:
  """Which neighbours the guarantee covers, and what is public."""
  sides = "both directions" if p.two_sided else "one direction"
  names = p.adjacencies
  only = " only" if len(names) == 1 else ""
  line = f"  covers: {p.adjacency}{only} ({sides})"
  if p.n_source == coverage.N_DECLARED:
    return f"{line}; n={p.population_size} declared public"
  if p.n_source == coverage.N_UNUSED:
    return f"{line}; the parameters do not depend on n"
  line += f": n = |D| = {p.n} was read off the data"
  add = Adjacency.ADD_OR_REMOVE_ONE.value
  if add in names:
    return line
  if p.sampling == "poisson":
    return f"{line} (declare --population_size to cover {add})"
  return f"{line} ({add} needs --sampling=poisson and --population_size)"


def _count_lines(result) -> list[str]:
  """The privacy of discovery followed by counting, when it counted."""
  c = result.counts
  if c is None:
    return []
  return [f"privacy in total (discovery, then counting): ({c.epsilon:.4f}, "
          f"{c.delta:.3g})-DP [{c.accounting}]",
          f"  discovery: ({c.discovery_epsilon:.4f}, "
          f"{c.discovery_delta:.3g})-DP (above); counting: "
          f"({c.counting_epsilon:.4f}, {c.counting_delta:.3g})-DP, Gaussian "
          f"noise sigma={safe_format.scale_up(c.noise_std)}, sample rate "
          f"q={c.sample_rate:g}"]  # as given (--count_sample_rate)


def _run_line(run: int, seed: int | None, result, found: int) -> str:
  line = (f"run {run} ({single_run.seed_said(seed)}, {result.engine} "
          f"engine): {found} heavy hitters in {result.rounds} rounds, "
          f"{result.num_votes} votes from {result.num_participants} sampled "
          f"users, {result.seconds*1e3:.1f} ms")
  c = result.counts
  if c is None or not FLAGS.show:
    return line
  ranked = sorted(zip(c.words, c.estimate, c.lower, c.upper),
                  key=lambda item: -item[1])  # most users first
  shown = ", ".join(f"{w}:{e:.1f} [{lo:.1f}, {up:.1f}]"
                    for w, e, lo, up in ranked[:FLAGS.show])
  more = " ..." if len(c.words) > FLAGS.show else ""
  return (f"{line}\n  protected counts, word:estimate [{c.confidence:.0%} "
          f"interval], covered by the total ({c.epsilon:.4f}, "
          f"{c.delta:.3g}):\n  {shown}{more}")


# ---- another registered mechanism --------------------------------------------


def prepare_flags() -> None:
  """Makes every registered mechanism's flags, as the command line is
  parsed (``experiments.cli``; ``experiments.mechanism_flags``)."""
  mechanism_flags.generate(__name__)


def chosen_mechanism() -> str:
  """``--mechanism`` (TrieHH where the flags were not parsed as this
  driver reads them)."""
  return FLAGS.mechanism or mechanism_flags.TRIEHH


def mechanism_engine(mechanism) -> str:
  """``--engine`` if given, else the mechanism's default; it must run the
  mechanism.

  Raises:
    ValueError: naming the engines that run it.
  """
  engine = (check_engine(FLAGS.engine) if shared_flags.given("engine")
            else mechanism.default_engine)
  serving = registry.engines_for(mechanism.name)
  if engine not in serving:
    raise ValueError(f"--engine={engine} does not run --mechanism="
                     f"{mechanism.name}; {', '.join(serving) or 'none'} "
                     f"{'does' if len(serving) == 1 else 'do'}")
  return engine


def mechanism_engine_options(name: str, engine: str) -> dict:
  """The TFF flags given, as the options of ``name``'s runner on
  ``engine`` (those it takes: ``experiments.mechanism_flags``), and the
  noisy trie's ``--distributed_noise`` and ``--dropout`` when given.

  Raises:
    ValueError: naming a TFF flag the engine does not take for it, or a
      noisy-trie flag given to another mechanism.
  """
  taken = mechanism_flags.engine_options_taken(name, engine)
  options = {}
  for flag, option in TFF_FLAGS.items():
    if not shared_flags.given(flag):
      continue
    if engine != registry.TFF:
      raise ValueError(f"--{flag} is a flag of the TFF engine, and "
                       f"--mechanism={name} runs on --engine={engine}")
    if option not in taken:
      takes = [f"--{other}" for other, o in TFF_FLAGS.items() if o in taken]
      raise ValueError(
          f"--{flag} is not read by --mechanism={name} on the TFF engine ("
          + (f"it reads {', '.join(takes)} only)" if takes
             else "it reads no TFF flag)"))
    options[option] = FLAGS[flag].value
  for flag, option in NOISY_TRIE_FLAGS.items():
    if not shared_flags.given(flag):
      continue
    if name != "noisy_trie":
      raise ValueError(f"--{flag} is a flag of --mechanism=noisy_trie, not "
                       f"of --mechanism={name}")
    value = FLAGS[flag].value
    options[option] = (("distributed" if value else "central")
                       if flag == "distributed_noise" else value)
  if "dropout" in options and options.get("noise") != "distributed":
    raise ValueError("--dropout is the bound of --distributed_noise; give "
                     "both, or neither")
  return options


def _check_population(mechanism, made, engine: str,
                      data: shared_flags.Dataset) -> None:
  """The mechanism takes the data's population (the noisy trie needs its
  alphabet fixed before the data), said in flag terms."""
  from triehh.mechanisms import protocol  # pylint: disable=g-import-not-at-top
  check = getattr(mechanism, "population", None)
  if check is None:
    return
  population = data.population
  try:
    check(population, protocol.Request(max_length=population.max_length,
                                       seed=None, engine=engine))
  except ValueError as err:
    if population.alphabet_from_data and "public alphabet" in str(err):
      raise ValueError(
          f"--mechanism={mechanism.name} needs a public alphabet, fixed "
          f"before the data is seen, and --dataset={FLAGS.dataset} reads its "
          "alphabet off the users' words (a candidate built from it can "
          "release a character only one user types): run it on a data set "
          "whose alphabet is fixed, as the default one's and an ingested "
          "folder's are") from None
    raise ValueError(_mechanism_terms(err, made)) from None


def _mechanism_terms(err: Exception, made) -> str:
  """A mechanism's refusal with its fields and the run's arguments said as
  flags."""
  return mechanism_flags.in_flag_terms(str(in_flag_terms(ValueError(err))),
                                       made)


def _release(made, population, privacy, seed: int | None, engine: str,
             options: dict):
  """One run: ``triehh.discover`` of the privacy object."""
  import triehh  # pylint: disable=g-import-not-at-top
  try:
    return triehh.discover(population, privacy,
                           max_length=population.max_length, seed=seed,
                           engine=engine, **options)
  except ValueError as err:
    raise ValueError(_mechanism_terms(err, made)) from None


def _release_lines(mechanism, privacy, engine: str, release) -> list[str]:
  """The lines printed after the first run: the mechanism, its privacy
  object, its guarantee."""
  guarantee = release.guarantee
  describe = getattr(guarantee, "describe", None)
  said = describe() if describe is not None else str(guarantee)
  summary = f": {mechanism.summary}" if mechanism.summary else ""
  return [f"mechanism: {mechanism.name} ({engine} engine){summary}",
          f"  {privacy!r}",
          f"privacy: {said}"]


# Rounds shown on a run's line.
_ROUNDS_SHOWN = 12


def _release_run_line(run: int, seed: int | None, release,
                      found: int) -> str:
  """A run's line, and its rounds: candidates -> kept (users sampled)."""
  rounds = tuple(release.per_round)
  line = (f"run {run} ({single_run.seed_said(seed)}): {found} word"
          f"{'' if found == 1 else 's'} released in {len(rounds)} round"
          f"{'' if len(rounds) == 1 else 's'}, "
          f"{release.seconds * 1e3:.1f} ms")
  if not rounds:
    return line
  said = []
  for stats in rounds[:_ROUNDS_SHOWN]:
    text = (f"{'?' if stats.candidates is None else f'{stats.candidates:,}'}"
            f" -> {stats.kept:,}")
    if stats.sampled is not None:
      text += f" ({stats.sampled:,} users)"
    said.append(text)
  more = " ..." if len(rounds) > _ROUNDS_SHOWN else ""
  return (f"{line}\n  per round, candidates -> kept: {', '.join(said)}"
          f"{more}{_upload_line(release)}")


def _upload_line(release) -> str:
  """The bytes a client uploaded per round (with the round's sampling rate
  where below 1) and per run (in expectation under sampling), where the
  release says them (the planned noisy trie); empty otherwise."""
  per_round = getattr(release, "upload_bytes_per_round", None)
  if per_round is None:
    return ""
  rates = release.sampling_rates
  more = " ..." if len(per_round) > _ROUNDS_SHOWN else ""
  shown = ", ".join(f"{b:,}" + (f" (q={q:.2g})" if q < 1.0 else "")
                    for b, q in zip(per_round[:_ROUNDS_SHOWN], rates))
  expected = " in expectation" if min(rates, default=1.0) < 1.0 else ""
  return (f"\n  a client uploaded, per round: {shown}{more} bytes; per run: "
          f"{release.upload_bytes:,} bytes{expected}")


def run_mechanism(name: str) -> None:
  """Runs the registered mechanism ``name`` from its flags: its privacy
  object built and checked, then ``--num_runs`` runs of ``triehh.discover``
  on the data, each printing its words (and ``--words_out``)."""
  from triehh.mechanisms import registry as mechanisms  # pylint: disable=g-import-not-at-top
  mechanism = mechanisms.get(name)
  made = mechanism_flags.current().get(name)
  if made is None:
    raise ValueError(f"--mechanism={name} has no privacy object the flags "
                     "can build (none of its privacy types is a dataclass)")
  engine = mechanism_engine(mechanism)
  options = mechanism_engine_options(name, engine)
  shared_flags.check_data_flags()
  privacy = mechanism_flags.privacy_object(made)
  single_run.run_all(single_run.Algorithm(
      prepare=lambda data: _check_population(mechanism, made, engine, data),
      built="built", config=dict,
      call=lambda pop, config, seed: _release(made, pop, privacy, seed,
                                              engine, options),
      describe=lambda release: _release_lines(mechanism, privacy, engine,
                                              release),
      run_line=_release_run_line, word=lambda word, _: word, record=None,
      found=lambda release: tuple(release.words),
      ranked=getattr(mechanism, "ranked", True)))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  name = chosen_mechanism()
  mechanism_flags.check_given(name, TRIEHH_FLAGS, instead=_INSTEAD)
  if name != mechanism_flags.TRIEHH:
    run_mechanism(name)
    return
  options, privacy = check_flags()
  single_run.run_all(single_run.Algorithm(
      prepare=_prepare, built="built and encoded",
      config=lambda: run_config(privacy, options),
      call=lambda pop, config, seed: call(pop, config, seed, options),
      describe=_describe, run_line=_run_line,
      word=lambda word, votes: f"{word}:{votes}",
      note="  (word:votes; the guarantee covers the words, not the vote "
           "counts)",
      record=lambda result, data, run, seed, values, config: record(
          result, data, run, seed, values, config, options)))


def run():
  """Console-script entry point (``triehh-run``)."""
  single_run.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
