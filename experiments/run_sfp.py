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

import math
import sys

from absl import app
from absl import flags

from experiments import common
from triehh.baselines import count_mean_sketch
from triehh.baselines import sfp
from triehh.runs import records
from triehh.runs.algorithms import sfp as sfp_algorithm

FLAGS = flags.FLAGS
flags.adopt_module_key_flags(common)

flags.DEFINE_integer("top_t", sfp.DEFAULT_TOP_T,
                     "T, the tuples SFP keeps per fragment position (the "
                     "paper used 20 and 80).", lower_bound=1)
flags.DEFINE_integer("cms_k", count_mean_sketch.DEFAULT_K,
                     "Count Mean Sketch hash functions.", lower_bound=1)
flags.DEFINE_integer("cms_m", count_mean_sketch.DEFAULT_M,
                     "Count Mean Sketch width (a power of two).",
                     lower_bound=1)
flags.DEFINE_integer("sfp_length", sfp.DEFAULT_LENGTH,
                     "Strings are padded with '$' or truncated to this length.",
                     lower_bound=2)
flags.DEFINE_string("fragment_alphabet", None,
                    "Omega, the characters of candidate fragments: default "
                    "the 26 lowercase letters, 'data' for every character of "
                    "the data, or the characters themselves.")
flags.DEFINE_float("word_budget", 0.0,
                   "Share of the local epsilon for a whole-word sketch that "
                   "counts the discovered words (0: discovery only, as in "
                   "the paper).")
flags.DEFINE_enum("simulation", "sketch", list(count_mean_sketch.SIMULATIONS),
                  "'sketch': draw the server's sums from their exact law; "
                  "'reports': materialise every client report.")
flags.DEFINE_boolean("check_puzzle_hash", False,
                     "Keep only stitched strings whose puzzle hash is their "
                     "bucket (not in the paper).")
flags.DEFINE_integer("sfp_show", 30, "Heavy hitters to print per run.",
                     lower_bound=0)
flags.register_validator(
    "word_budget", lambda v: math.isfinite(v) and 0 <= v < 1,
    "--word_budget must be in [0, 1)")


def run_config(t: int) -> dict:
  """A run's ``config`` (everything but the seed that changes its result)."""
  return sfp_algorithm.sfp_config(
      common.data_options(), epsilon=FLAGS.epsilon, delta=FLAGS.delta,
      top_t=t, k=FLAGS.cms_k, m=FLAGS.cms_m, length=FLAGS.sfp_length,
      fragment_alphabet=FLAGS.fragment_alphabet,
      word_budget=FLAGS.word_budget, simulation=FLAGS.simulation,
      check_puzzle_hash=FLAGS.check_puzzle_hash)


record = sfp_algorithm.sfp_record


_WRITER: list[records.ResultsWriter] = []


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  common.check_data_flags()
  writer = common.results_writer()
  _WRITER[:] = [writer]
  with common.Timer() as load:
    data = common.load_dataset()
  pop = data.population
  print(f"data: {data.name} ({data.setting}), {pop!r}, built in "
        f"{load.seconds:.2f} s")
  config = run_config(FLAGS.top_t)
  for run in range(FLAGS.num_runs):
    seed = FLAGS.seed + run
    result = sfp_algorithm.call_sfp(pop, config, seed)
    p = result.params
    if run == 0:
      print(f"privacy: ({p.epsilon:.4f}, {p.delta:.3g})-DP central, local "
            f"epsilon {p.epsilon_local:.4f} (fragment sketch "
            f"{p.epsilon_fragment:.4f}"
            + (f", word sketch {p.epsilon_word:.4f})" if p.epsilon_word
               else ")"))
      print(f"  T={p.top_t}, k={p.k}, m={p.m}, length={p.length}, "
            f"{p.num_buckets} puzzle buckets, |Omega|={len(p.fragment_alphabet)}"
            f" + '{sfp.PAD}', n={p.n}")
      print(f"  {p.guarantee}")
    values = common.score(result.heavy_hitters, data.truth)
    hh = list(result.heavy_hitters.items())
    print(f"run {run} (seed {seed}): {len(hh)} heavy hitters from "
          f"{result.num_stitched} stitched strings, clients "
          f"{result.client_seconds:.2f} s + server "
          f"{result.server_seconds:.2f} s")
    shown = ", ".join(f"{w}:{v:.0f}" for w, v in hh[:FLAGS.sfp_show])
    print(f"  {shown}{' ...' if len(hh) > FLAGS.sfp_show else ''}")
    common.print_metrics(values)
    writer.write(record(result, data, run, seed, values, config))
    sys.stdout.flush()
  if writer.path:
    print(f"results appended to {writer.path}")


def run():
  """Console-script entry point (``triehh-sfp``)."""
  common.run_with_errors(main, sys.modules[__name__],
                         lambda: _WRITER[0] if _WRITER else None)


if __name__ == "__main__":
  run()
