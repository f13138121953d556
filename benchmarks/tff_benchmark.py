"""Benchmark of the tff engine on the Sentiment140 sample.

Single-word setting (each user's most frequent lower-cased whitespace token of
3+ characters, ties by first occurrence: ``triehh.data``), epsilon = 4,
delta = 1/n^2. Prints, side by side:

* cost per client per round of the TFF engine: the median time of one TFF
  round (``next`` over the batch of m sampled clients, with the frontier of a
  real run's second level) divided by m; next to it the C++ runtime's floor,
  a ``federated_map`` of an identity over the same client tensors plus a
  ``federated_sum`` (target: <= 0.4 ms; the floor is about 0.3 ms on an idle
  2-core machine), and the fixed cost of a round (one client);
* the wall time of one full run: the first run (compiling the computations)
  and the median of warm runs, next to the fast engine's median for the same
  seeds, with a check that both engines found the same trie;
* optionally the same full runs split across local loopback workers
  (``--num_local_workers``; on a shared 2-core machine this shows the cost of
  distribution, not a speed-up), and the per-client cost in the several-words
  setting (``--multi``).

  python -m benchmarks.tff_benchmark --repeats=5
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from absl import app
from absl import flags
import numpy as np

FLAGS = flags.FLAGS
flags.DEFINE_string("sample", None,
                    "Sentiment140 sample (default: $TRIEHH_SENTIMENT140, else "
                    "../shared/data/sentiment140_sample.csv.gz beside the "
                    "repository).")
flags.DEFINE_float("epsilon", 4.0, "Target epsilon (delta = 1/n^2).")
flags.DEFINE_integer("repeats", 5, "Timed repetitions of each measurement.")
flags.DEFINE_integer("num_local_workers", 2,
                     "Also time full runs split across this many loopback "
                     "workers (0: skip).")
flags.DEFINE_bool("multi", True,
                  "Also time a round in the several-words setting.")

def median_seconds(fn, repeats: int) -> tuple[float, float]:
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    fn()
    times.append(time.perf_counter() - start)
  return statistics.median(times), min(times)


def _floor_computation(client_type):
  """Map (identity) + federated_sum over tensor client data, else None."""
  import tensorflow_federated as tff  # pylint: disable=g-import-not-at-top
  if None in client_type.shape:
    return None  # federated_sum needs fully defined shapes

  @tff.tensorflow.computation(tff.TensorType(np.int32, [None, None]),
                              client_type)
  def identity(unused_frontier, value):
    return value

  @tff.federated_computation(
      tff.FederatedType(tff.TensorType(np.int32, [None, None]), tff.SERVER),
      tff.FederatedType(client_type, tff.CLIENTS))
  def floor(frontier_at_server, client_data):
    return tff.federated_sum(tff.federated_map(
        identity, (tff.federated_broadcast(frontier_at_server), client_data)))

  return floor


def round_costs(pop, params, runtime_lib, computations, engine, fast_engine,
                repeats: int) -> dict:
  """Seconds of one TFF round over m clients, its floor and its fixed cost."""
  from triehh.engines import sampling  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  trie = fast_engine.run(pop, theta=params.theta, batch_size=params.batch_size,
                         rng=np.random.default_rng(0))
  level = trie.levels[1] if trie.depth > 1 else trie.levels[0]
  frontier = level.prefixes
  users = sampling.sample_users(rng, pop.num_users, params.batch_size)
  ranks = sampling.draw_word_ranks(rng, pop, users)
  mode = (computations.ONE_WORD if pop.is_single_word
          else computations.SAMPLED_WORD)
  data = engine._client_data(pop, engine._codes32(pop), users, ranks, mode)  # pylint: disable=protected-access
  capacity = 1 << (frontier.shape[0] - 1).bit_length()
  spec = computations.ProcessSpec(
      pop.alphabet.num_extensions, pop.max_length, capacity, client_mode=mode)
  next_fn = computations.next_computation(spec)
  state = computations.ServerState(
      frontier=frontier.astype(np.int32),
      heavy_hitters=np.zeros((0, pop.max_length + 1), np.int32),
      heavy_hitter_counts=np.zeros(0, np.int32),
      accumulated_votes=np.zeros(0, np.int32), round_num=0,
      theta=params.theta, max_num_prefixes=0, num_sub_rounds=1)
  floor = _floor_computation(computations.client_data_type(spec))
  with runtime_lib.get_runtime().install():
    next_fn(state, data[:2])  # compile
    if floor is not None:
      floor(state.frontier, data[:2])
    m = len(data)
    out = {"m": m, "frontier": frontier.shape[0], "capacity": capacity}
    out["round"] = median_seconds(lambda: next_fn(state, data), repeats)
    out["fixed"] = median_seconds(lambda: next_fn(state, data[:1]), repeats)
    if floor is not None:
      out["floor"] = median_seconds(lambda: floor(state.frontier, data),
                                    repeats)
  return out


def _print_round_costs(costs: dict, repeats: int) -> None:
  """The cost per client of a TFF round, its runtime floor and fixed cost."""
  m = costs["m"]
  per = costs["round"][0] / m * 1e3
  print(f"\ncost per client per round (median of {repeats} rounds of "
        f"m={m} clients, frontier of {costs['frontier']} prefixes, vote "
        f"capacity {costs['capacity']}):")
  print(f"  tff engine round:          {per:.3f} ms/client "
        f"(min {costs['round'][1] / m * 1e3:.3f}; target <= 0.4)")
  print(f"  runtime floor (map + sum): "
        f"{costs['floor'][0] / m * 1e3:.3f} ms/client "
        f"(min {costs['floor'][1] / m * 1e3:.3f})")
  print(f"  fixed cost of a round:     {costs['fixed'][0] * 1e3:.1f} ms "
        f"(one client)")


def _full_runs(pop, params, engine, fast_engine, seeds: list[int]) -> None:
  """Full runs of both engines per seed: times, and whether they agree."""
  fast_times, tff_times, same, rounds = [], [], True, []
  first = None
  for seed in seeds:
    t0 = time.perf_counter()
    want = fast_engine.run(pop, theta=params.theta,
                           batch_size=params.batch_size,
                           rng=np.random.default_rng(seed))
    fast_times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    got = engine.run(pop, theta=params.theta, batch_size=params.batch_size,
                     rng=np.random.default_rng(seed))
    elapsed = time.perf_counter() - t0
    if first is None:
      first = elapsed  # includes compiling each vote capacity's process
    tff_times.append(elapsed)
    same &= got.to_dict() == want.to_dict()
    rounds.append(got.depth)
  warm = tff_times[1:] or tff_times
  client_rounds = statistics.median(rounds) * params.batch_size
  print(f"\none full run ({len(seeds)} seeds; results equal to the fast "
        f"engine's: {same}; rounds median {statistics.median(rounds)}):")
  print(f"  tff engine:  first {first:.2f} s (compiles), warm median "
        f"{statistics.median(warm):.2f} s (min {min(warm):.2f}) = "
        f"{statistics.median(warm) / client_rounds * 1e3:.3f} ms per "
        f"client-round")
  print(f"  fast engine: median {statistics.median(fast_times) * 1e3:.2f} ms "
        f"(min {min(fast_times) * 1e3:.2f})")


def _loopback_runs(pop, params, engine, fast_engine, worker,
                   seeds: list[int], num_workers: int) -> None:
  """Full TFF runs split across ``num_workers`` loopback workers."""
  workers = [worker.WorkerProcess() for _ in range(num_workers)]
  try:
    addresses = ",".join(w.address for w in workers)
    times, same = [], True
    for seed in seeds:
      t0 = time.perf_counter()
      got = engine.run(pop, theta=params.theta,
                       batch_size=params.batch_size,
                       rng=np.random.default_rng(seed), workers=addresses)
      times.append(time.perf_counter() - t0)
      want = fast_engine.run(pop, theta=params.theta,
                             batch_size=params.batch_size,
                             rng=np.random.default_rng(seed))
      same &= got.to_dict() == want.to_dict()
    warm = times[1:] or times
    print(f"  tff engine on {len(workers)} loopback workers: first "
          f"{times[0]:.2f} s, warm median {statistics.median(warm):.2f} s "
          f"(equal to the fast engine: {same})")
  finally:
    for w in workers:
      w.stop()


def main(argv):
  del argv
  from triehh.data import datasets  # pylint: disable=g-import-not-at-top
  path = datasets.sentiment140_sample(FLAGS.sample)
  if path is None:
    sys.exit("the Sentiment140 sample is absent: pass --sample or set "
             "TRIEHH_SENTIMENT140")
  from triehh import data  # pylint: disable=g-import-not-at-top
  from triehh.engines import fast as fast_engine  # pylint: disable=g-import-not-at-top
  from triehh.theory import mechanism  # pylint: disable=g-import-not-at-top
  from triehh.theory import policy  # pylint: disable=g-import-not-at-top
  start = time.perf_counter()
  from triehh.engines.tff import computations  # pylint: disable=g-import-not-at-top
  from triehh.engines.tff import engine  # pylint: disable=g-import-not-at-top
  from triehh.engines.tff import runtime as runtime_lib  # pylint: disable=g-import-not-at-top
  from triehh.engines.tff import worker  # pylint: disable=g-import-not-at-top
  imported = time.perf_counter() - start
  loaded = data.load(data.DataSpec(path, dataset="sentiment140",
                                   setting="single"))
  pop = loaded.population.encode()
  params = policy.resolve(pop.num_users, pop.max_length,
                          mechanism.Target(FLAGS.epsilon, sampling="fixed"))
  start = time.perf_counter()
  runtime_lib.get_runtime()
  started = time.perf_counter() - start
  print(f"data: Sentiment140 sample, single word, {pop!r}")
  print(f"privacy: epsilon={params.epsilon:.4f} (target {FLAGS.epsilon}), "
        f"delta={params.delta:.3g}, theta={params.theta}, batch size "
        f"m={params.batch_size}, {params.levels} levels")
  print(f"setup: import TensorFlow + TFF {imported:.1f} s, start a local "
        f"worker {started:.1f} s")

  costs = round_costs(pop, params, runtime_lib, computations, engine,
                      fast_engine, FLAGS.repeats)
  _print_round_costs(costs, FLAGS.repeats)

  seeds = list(range(FLAGS.repeats))
  _full_runs(pop, params, engine, fast_engine, seeds)
  if FLAGS.num_local_workers > 1:
    _loopback_runs(pop, params, engine, fast_engine, worker, seeds,
                   FLAGS.num_local_workers)

  if FLAGS.multi:
    multi = data.load(data.DataSpec(path, dataset="sentiment140",
                                    setting="multi")).population.encode()
    multi_params = policy.resolve(
        multi.num_users, multi.max_length,
        mechanism.Target(FLAGS.epsilon, sampling="fixed"))
    costs = round_costs(multi, multi_params, runtime_lib, computations, engine,
                        fast_engine, FLAGS.repeats)
    print(f"\nseveral words per user ({multi!r}, m={costs['m']}): tff engine "
          f"round {costs['round'][0] / costs['m'] * 1e3:.3f} ms/client (min "
          f"{costs['round'][1] / costs['m'] * 1e3:.3f})")


if __name__ == "__main__":
  app.run(main)
