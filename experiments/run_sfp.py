"""Runs the SFP baseline on a data set at TrieHH's central (epsilon, delta).

Same data, privacy and output flags as ``experiments.run_triehh``; SFP's
local epsilon follows from the central target by amplification by shuffling
(``triehh.sfp_local_epsilon``). Each run appends one ``triehh.runs.records``
record to ``<output_dir>/results.jsonl``, with ``"algorithm": "sfp"``,
``"top_t"`` (T) and ``"epsilon_local"``.

  python -m experiments.run_sfp --epsilon=1 --top_t=80 --output_dir=out
  triehh-sfp --epsilon=1 --top_t=80 --output_dir=out

Errors print one line ``error: ...`` and exit 1; Ctrl-C exits 130 with the
finished runs kept in results.jsonl.
"""

from __future__ import annotations

import sys

from absl import app
from absl import flags

from experiments import flags as shared_flags
from experiments import single_run
from triehh.baselines import count_mean_sketch
from triehh.baselines import sfp
from triehh.baselines import sfp_decode
from triehh.baselines import sfp_encoding
from triehh.core import memory

FLAGS = flags.FLAGS
shared_flags.declare(__name__, *shared_flags.DATA_FLAGS,
                     *shared_flags.RUN_FLAGS, "show", "top_t", "cms_k",
                     "cms_m", "sfp_length", "fragment_alphabet",
                     "word_budget", "check_puzzle_hash", "words_out")

flags.DEFINE_enum("simulation", "sketch", list(count_mean_sketch.SIMULATIONS),
                  "'sketch': draw the server's sums from their exact law; "
                  "'reports': materialise every client report.")


def run_config(t: int) -> dict:
  """A run's ``config`` (everything but the seed that changes its result)."""
  return _algorithm().sfp_config(
      shared_flags.data_options(), epsilon=FLAGS.epsilon, delta=FLAGS.delta,
      top_t=t, k=FLAGS.cms_k, m=FLAGS.cms_m, length=FLAGS.sfp_length,
      fragment_alphabet=FLAGS.fragment_alphabet,
      word_budget=FLAGS.word_budget, simulation=FLAGS.simulation,
      check_puzzle_hash=FLAGS.check_puzzle_hash,
      allow_delta_above_1_over_n=FLAGS.allow_delta_above_1_over_n)


def _algorithm():
  """SFP's algorithm of runs and records, imported when a run starts
  (``--help`` and the flags' checks do not need the runs' algorithms)."""
  from triehh.runs.algorithms import sfp as sfp_algorithm  # pylint: disable=g-import-not-at-top
  return sfp_algorithm


def record(*args, **kwargs):
  """:func:`~triehh.runs.algorithms.sfp.sfp_record`."""
  return _algorithm().sfp_record(*args, **kwargs)


def _describe(result) -> list[str]:
  """The privacy and sketch lines printed once."""
  p = result.params
  return [f"privacy: ({p.epsilon:.4f}, {p.delta:.3g})-DP central, local "
          f"epsilon {p.epsilon_local:.4f} (fragment sketch "
          f"{p.epsilon_fragment:.4f}"
          + (f", word sketch {p.epsilon_word:.4f})" if p.epsilon_word
             else ")"),
          f"  T={p.top_t}, k={p.k}, m={p.m}, length={p.length}, "
          f"{p.num_buckets} puzzle buckets, |Omega|={len(p.fragment_alphabet)}"
          f" + '{sfp_encoding.PAD}', n={p.n}",
          f"  {p.guarantee}"] + _caveat_lines(result)


def _caveat_lines(result) -> list[str]:
  """What makes the guarantee weak (a delta above 1/n, opted in to)."""
  caveat = result.guarantee.caveat
  return [f"  WEAK: {caveat}"] if caveat else []


def _run_line(run: int, seed: int | None, result, found: int) -> str:
  return (f"run {run} ({single_run.seed_said(seed)}): {found} heavy "
          f"hitters from {result.num_stitched} stitched strings, clients "
          f"{result.client_seconds:.2f} s + server "
          f"{result.server_seconds:.2f} s")


def check_sketch_flags() -> None:
  """Refuses, before any data is built, a ``--cms_m`` that is not a power
  of two, ``--cms_k`` and ``--cms_m`` whose sketches (one per fragment
  position of ``--sfp_length``) would not fit in memory, an odd
  ``--sfp_length`` and a ``--fragment_alphabet`` holding the padding
  symbol, each naming its flag."""
  if FLAGS.sfp_length % 2:
    raise ValueError(f"flag --sfp_length={FLAGS.sfp_length}: must be even "
                     "(SFP's fragments are 2 characters)")
  if FLAGS.fragment_alphabet and sfp_encoding.PAD in FLAGS.fragment_alphabet:
    raise ValueError(f"flag --fragment_alphabet={FLAGS.fragment_alphabet!r}: "
                     f"must not contain the padding symbol "
                     f"{sfp_encoding.PAD!r} (it is always added)")
  count_mean_sketch.check_width(FLAGS.cms_m, "--cms_m (sketch width)")
  try:
    count_mean_sketch.check_sketch_fits(FLAGS.cms_k, FLAGS.cms_m,
                                        sfp_encoding.KEY_BYTES)
  except memory.InsufficientMemoryError as err:
    raise memory.InsufficientMemoryError(
        f"flag --cms_k={FLAGS.cms_k:,} --cms_m={FLAGS.cms_m:,}: {err}") from err
  try:
    sfp_decode.check_sketches_fit(FLAGS.cms_k, FLAGS.cms_m, FLAGS.sfp_length)
  except memory.InsufficientMemoryError as err:
    raise memory.InsufficientMemoryError(
        f"flag --cms_k={FLAGS.cms_k:,} --cms_m={FLAGS.cms_m:,} "
        f"--sfp_length={FLAGS.sfp_length:,}: {err}") from err


def _call(population, config, seed):
  """One SFP run; a stitching too large for the library's candidate bound,
  and a delta above 1/n, are said in the flags' terms."""
  try:
    return _algorithm().call_sfp(population, config, seed)
  except ValueError as err:
    if "1/n" in str(err):
      raise ValueError(shared_flags.delta_in_flag_terms(str(err))) from None
    if "max_candidates" not in str(err):
      raise
    raise ValueError(f"flag --top_t={FLAGS.top_t}: {err} (triehh-sfp keeps "
                     "sfp_discover's max_candidates at its default: lower "
                     "--top_t)") from None


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  shared_flags.check_data_flags()
  check_sketch_flags()
  single_run.run_all(single_run.Algorithm(
      prepare=lambda data: None, built="built",
      config=lambda: run_config(FLAGS.top_t), call=_call,
      describe=_describe, run_line=_run_line,
      word=lambda word, count: f"{word}:{count:.0f}", record=record))


def run():
  """Console-script entry point (``triehh-sfp``)."""
  single_run.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
