"""Runs the SFP baseline on a data set at TrieHH's central (epsilon, delta).

Same data, privacy and output flags as ``experiments.run_triehh``; SFP's
local epsilon follows from the central target by amplification by shuffling
(``triehh.sfp_local_epsilon``). Each run appends one JSON line to
``<output_dir>/results.jsonl`` in the run_triehh format, with
``"algorithm": "sfp"``, ``"threshold"`` (T) and ``"epsilon_local"``.

  python -m experiments.run_sfp --epsilon=1 --threshold=80 --output_dir=out
"""

from __future__ import annotations


from absl import app
from absl import flags

import triehh
from experiments import common
from triehh.baselines import count_mean_sketch
from triehh.baselines import sfp

FLAGS = flags.FLAGS

flags.DEFINE_integer("threshold", sfp.DEFAULT_THRESHOLD,
                     "T, the tuples SFP keeps per fragment position (the "
                     "paper used 20 and 80).")
flags.DEFINE_integer("cms_k", count_mean_sketch.DEFAULT_K,
                     "Count Mean Sketch hash functions.")
flags.DEFINE_integer("cms_m", count_mean_sketch.DEFAULT_M,
                     "Count Mean Sketch width (a power of two).")
flags.DEFINE_integer("sfp_length", sfp.DEFAULT_LENGTH,
                     "Strings are padded with '$' or truncated to this length.")
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
flags.DEFINE_integer("sfp_show", 30, "Heavy hitters to print per run.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  with common.Timer() as load:
    data = common.load_dataset()
  pop = data.population
  print(f"data: {data.name} ({data.setting}), {pop!r}, built in "
        f"{load.seconds:.2f} s")
  writer = common.ResultsWriter(FLAGS.output_dir)
  for run in range(FLAGS.num_runs):
    seed = FLAGS.seed + run
    result = triehh.sfp_discover(
        pop, epsilon=FLAGS.epsilon, delta=FLAGS.delta,
        threshold=FLAGS.threshold, seed=seed, k=FLAGS.cms_k, m=FLAGS.cms_m,
        length=FLAGS.sfp_length, fragment_alphabet=FLAGS.fragment_alphabet,
        word_budget=FLAGS.word_budget, simulation=FLAGS.simulation,
        check_puzzle_hash=FLAGS.check_puzzle_hash)
    p = result.params
    if run == 0:
      print(f"privacy: ({p.epsilon:.4f}, {p.delta:.3g})-DP central, local "
            f"epsilon {p.epsilon_local:.4f} (fragment sketch "
            f"{p.epsilon_fragment:.4f}"
            + (f", word sketch {p.epsilon_word:.4f})" if p.epsilon_word
               else ")"))
      print(f"  T={p.threshold}, k={p.k}, m={p.m}, length={p.length}, "
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
    writer.write({
        "algorithm": "sfp", "dataset": data.name, "setting": data.setting,
        "epsilon": p.epsilon, "delta": p.delta,
        "target_epsilon": FLAGS.epsilon, "target_delta": p.delta,
        "epsilon_local": p.epsilon_local,
        "epsilon_fragment": p.epsilon_fragment,
        "epsilon_word": p.epsilon_word, "n_users": p.n,
        "threshold": p.threshold, "k": p.k, "m": p.m, "length": p.length,
        "num_buckets": p.num_buckets,
        "fragment_alphabet": p.fragment_alphabet,
        "word_budget": p.word_budget, "simulation": p.simulation,
        "check_puzzle_hash": p.check_puzzle_hash, "hash_seed": p.hash_seed,
        "run": run, "seed": seed,
        "reports_per_position": list(result.reports_per_position),
        "num_stitched": result.num_stitched,
        "discovered": list(result.heavy_hitters),
        "counts": list(result.heavy_hitters.values()),
        "metrics": values, "seconds": result.seconds,
        "client_seconds": result.client_seconds,
        "server_seconds": result.server_seconds,
    })
  if writer.path:
    print(f"results appended to {writer.path}")


def run():
  """Console-script entry point."""
  common.run_with_errors(main)


if __name__ == "__main__":
  run()
