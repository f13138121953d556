"""Runs TrieHH on a data set and reports privacy, heavy hitters and utility.

With no flags: a synthetic population of 1e6 users drawn from an English
word-frequency list, epsilon = 4, delta = 1/n^2, L = 10, the fast engine.

  python -m experiments.run_triehh --epsilon=1 --num_runs=5 --output_dir=out
"""

from __future__ import annotations


from absl import app
from absl import flags

import triehh
from experiments import common

FLAGS = flags.FLAGS

flags.DEFINE_string("engine", "fast", "Engine: 'fast' (numpy) or 'tff'.")
flags.DEFINE_integer("num_sub_rounds", 1,
                     "Batches per round whose votes are summed.")
flags.DEFINE_integer("max_num_prefixes", None,
                     "Keep at most this many extensions per round.")
flags.DEFINE_integer("show", 30, "Heavy hitters to print per run.")
flags.DEFINE_integer("theta", None,
                     "Vote threshold given directly (with --gamma or "
                     "--batch_size) instead of calibrating from --epsilon.")
flags.DEFINE_float("gamma", None, "Batch size factor: m = gamma * sqrt(n).")
flags.DEFINE_integer("batch_size", None, "Users sampled per round, m.")
flags.DEFINE_bool("allow_no_guarantee", False,
                  "Run parameters outside Theorem 1 (reported as epsilon = "
                  "inf) instead of refusing them.")
flags.DEFINE_list("tff_workers", [],
                  "TFF engine: host:port of running TFF workers (start them "
                  "with `python -m triehh.engines.tff.worker --port=N`); clients are "
                  "split across them. Empty: one local worker.")
flags.DEFINE_bool("tff_secure_sum", False,
                  "TFF engine: aggregate votes with "
                  "tff.federated_secure_sum_bitwidth.")
flags.DEFINE_integer("tff_max_user_contribution", None,
                     "TFF engine, several-word data: each sampled user votes "
                     "with its this many most frequent words (TFF reference "
                     "code) instead of one word drawn by frequency; > 1 is "
                     "outside Theorem 1.")
flags.DEFINE_float("tff_connect_timeout", 10.0,
                   "TFF engine: seconds to reach a worker.")
flags.DEFINE_float("tff_rpc_timeout", 300.0,
                   "TFF engine: seconds a worker may take for one call.")

_TFF_FLAGS = ("tff_workers", "tff_secure_sum", "tff_max_user_contribution",
              "tff_connect_timeout", "tff_rpc_timeout")


def engine_options() -> dict:
  """Extra keyword arguments for the chosen engine."""
  if FLAGS.engine != "tff":
    given = [f"--{name}" for name in _TFF_FLAGS
             if not FLAGS[name].using_default_value]
    if given:
      raise ValueError(f"TFF engine flags given without --engine=tff: "
                       f"{', '.join(given)}")
    return {}
  options = {"secure_sum": FLAGS.tff_secure_sum,
             "connect_timeout": FLAGS.tff_connect_timeout,
             "rpc_timeout": FLAGS.tff_rpc_timeout}
  if FLAGS.tff_workers:
    options["workers"] = FLAGS.tff_workers
  if FLAGS.tff_max_user_contribution is not None:
    options["max_user_contribution"] = FLAGS.tff_max_user_contribution
  return options


def privacy_options() -> dict:
  """``(epsilon, delta)`` to calibrate, or theta with gamma / batch size."""
  if FLAGS.theta is None:
    if FLAGS.gamma is not None or FLAGS.batch_size is not None:
      raise ValueError("--gamma and --batch_size need --theta")
    return {"epsilon": FLAGS.epsilon, "delta": FLAGS.delta}
  if not FLAGS["epsilon"].using_default_value or FLAGS.delta is not None:
    raise ValueError("give --epsilon/--delta, or --theta with --gamma or "
                     "--batch_size, not both")
  return {"theta": FLAGS.theta, "gamma": FLAGS.gamma,
          "batch_size": FLAGS.batch_size}


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  with common.Timer() as load:
    data = common.load_dataset()
    data.population.encode()
  pop = data.population
  print(f"data: {data.name} ({data.setting}), {pop!r}, built and encoded in "
        f"{load.seconds:.2f} s")
  writer = common.ResultsWriter(FLAGS.output_dir)
  options = engine_options()
  privacy = privacy_options()
  for run in range(FLAGS.num_runs):
    seed = FLAGS.seed + run
    result = triehh.discover(
        pop, max_length=FLAGS.max_length, seed=seed, engine=FLAGS.engine,
        num_sub_rounds=FLAGS.num_sub_rounds,
        max_num_prefixes=FLAGS.max_num_prefixes,
        allow_no_guarantee=FLAGS.allow_no_guarantee, **privacy, **options)
    p = result.params
    if run == 0:
      target = (f"target epsilon={p.target_epsilon}, delta="
                f"{p.target_delta:.3g}" if p.target_epsilon is not None
                else "theta and batch size given")
      if p.has_guarantee:
        print(f"privacy: ({p.epsilon:.4f}, {p.delta:.3g})-DP [{target}]")
      else:
        print(f"privacy: NONE [{target}]")
      print(f"  theta={p.theta}, gamma={p.gamma:.4f}, batch size m={p.batch_size}"
            f" of n={p.n}, L={p.max_length} characters + end symbol = "
            f"{p.levels} levels")
      print(f"  {p.guarantee}")
    values = common.score(result.heavy_hitters, data.truth)
    hh = list(result.heavy_hitters.items())
    print(f"run {run} (seed {seed}, {result.engine} engine): {len(hh)} heavy "
          f"hitters in {result.rounds} rounds, {result.num_votes} votes from "
          f"{result.num_participants} sampled users, {result.seconds*1e3:.1f} ms")
    shown = ", ".join(f"{w}:{v}" for w, v in hh[:FLAGS.show])
    print(f"  {shown}{' ...' if len(hh) > FLAGS.show else ''}")
    common.print_metrics(values)
    writer.write({
        "algorithm": "triehh", "engine": result.engine,
        "dataset": data.name, "setting": data.setting,
        "epsilon": p.epsilon, "delta": p.delta,
        "target_epsilon": p.target_epsilon, "target_delta": p.target_delta,
        "n_users": p.n, "theta": p.theta, "gamma": p.gamma,
        "batch_size": p.batch_size, "max_length": p.max_length,
        "levels": p.levels, "num_sub_rounds": p.num_sub_rounds,
        "max_num_prefixes": p.max_num_prefixes, "run": run, "seed": seed,
        "tff_secure_sum": options.get("secure_sum"),
        "tff_max_user_contribution": options.get("max_user_contribution"),
        "tff_workers": len(options.get("workers", [])) or None,
        "rounds": result.rounds, "votes_per_round": result.votes_per_round,
        "num_participants": result.num_participants,
        "discovered": list(result.heavy_hitters),
        "counts": list(result.heavy_hitters.values()),
        "metrics": values, "seconds": result.seconds,
    })
  if writer.path:
    print(f"results appended to {writer.path}")


def run():
  """Console-script entry point."""
  common.run_with_errors(main)


if __name__ == "__main__":
  run()
