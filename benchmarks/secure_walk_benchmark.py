"""What the real two-server protocol costs, per client and per candidate.

Measures, for ``--clients`` clients of ``--bits``-bit points (salted hashes
of a Zipf population of ``--words`` words):

- the key: bytes per key (one per server) and per client (both);
- client key generation: seconds per client, one key pair at a time (what
  a client does), and per client in one batch;
- server evaluation: seconds per client per candidate, one server summing
  its shares at every candidate of one step (``--frontier`` live prefixes
  extended by ``--step_bits`` bits), without the noise;
- one whole walk on two loopback server processes (``--steps``,
  ``--sigma``, ``--threshold``): wall time, candidates, bytes between the
  servers (measured on their socket) and the release's size.

Research prototype: no audited constant-time code; the figures are for
planning, from this machine.

  python -m benchmarks.secure_walk_benchmark --clients=1000,10000
"""

from __future__ import annotations

import time

import numpy as np
from absl import app
from absl import flags

from triehh.secure import hashing
from triehh.secure import idpf
from triehh.secure import protocol
from triehh.secure import server as server_lib
from triehh.secure import plan as plan_lib

FLAGS = flags.FLAGS
flags.DEFINE_list("clients", ["1000", "10000"], "Client counts measured.")
flags.DEFINE_integer("bits", 32, "Bits of a point (hash).", lower_bound=1,
                     upper_bound=64)
flags.DEFINE_integer("words", 2000, "Distinct words of the Zipf population.",
                     lower_bound=1)
flags.DEFINE_integer("frontier", 16, "Live prefixes of the timed step.",
                     lower_bound=1)
flags.DEFINE_integer("step_bits", 4, "Bits the timed step adds.",
                     lower_bound=1, upper_bound=16)
flags.DEFINE_list("steps", ["4", "8", "12", "16", "20", "24", "28", "32"],
                  "The whole walk's steps (prefix lengths in bits).")
flags.DEFINE_integer("verify_points", 1000, "Points of the timed "
                     "verification step (each key evaluated along each "
                     "point's own path).", lower_bound=1)
flags.DEFINE_float("sigma", 2.0, "Each server's discrete Gaussian sigma.")
flags.DEFINE_integer("threshold", 20, "Every step's threshold.")
flags.DEFINE_integer("walk_clients", 1000,
                     "Clients of the whole loopback walk (0: none).",
                     lower_bound=0)


def population(n: int, rng: np.random.Generator) -> np.ndarray:
  """``n`` clients' hashes of Zipf(1.1) words out of FLAGS.words."""
  ranks = np.arange(1, FLAGS.words + 1)
  weights = ranks**-1.1
  words = rng.choice(FLAGS.words, size=n, p=weights / weights.sum())
  vocabulary = [f"word{i}" for i in range(FLAGS.words)]
  hashes = hashing.hash_words(vocabulary, b"benchmark salt", FLAGS.bits)
  return hashes[words]


def keygen_seconds(hashes: np.ndarray) -> tuple[float, float]:
  """Seconds per client: one key pair at a time (200 clients), and in one
  batch of all."""
  start = time.perf_counter()
  singles = hashes[:200]
  for point in singles:
    idpf.gen(int(point), FLAGS.bits)
  single = (time.perf_counter() - start) / singles.size
  start = time.perf_counter()
  idpf.gen_many(hashes, FLAGS.bits)
  return single, (time.perf_counter() - start) / hashes.size


def eval_seconds(hashes: np.ndarray) -> tuple[float, int]:
  """Seconds per client per candidate of one server's sums at one step,
  and the step's candidates."""
  first = FLAGS.bits - FLAGS.step_bits
  live = np.unique(hashes >> np.uint64(FLAGS.bits - first))[:FLAGS.frontier]
  steps = [FLAGS.bits, first] + list(range(first - 20, 0, -20))
  steps = tuple(sorted(steps))
  plan = plan_lib.WalkPlan(FLAGS.bits, steps, (1.0,) * len(steps),
                           (0,) * len(steps))
  keys = idpf.gen_many(hashes, FLAGS.bits)[0]
  server = server_lib.Server(keys, plan, np.random.default_rng(0))
  server.frontier = server.frontier.descend(np.sort(live), first)
  server.step = len(steps) - 1
  start = time.perf_counter()
  server.sums()
  seconds = time.perf_counter() - start
  return seconds / (hashes.size * server.candidates.size), int(
      server.candidates.size)


def verify_seconds(hashes: np.ndarray) -> float:
  """Seconds per client per point of one server's sums at a verification
  step (``idpf.eval_prefixes`` at full points, as the server evaluates
  them)."""
  points = np.sort(np.unique(hashes))[:FLAGS.verify_points]
  keys = idpf.gen_many(hashes, FLAGS.bits)[0]
  start = time.perf_counter()
  idpf.eval_prefixes(keys, points, FLAGS.bits).sum(axis=0, dtype=np.uint64)
  return (time.perf_counter() - start) / (hashes.size * points.size)


def walk(hashes: np.ndarray) -> None:
  steps = [int(s) for s in FLAGS.steps]
  start = time.perf_counter()
  release = protocol.run_walk(hashes, FLAGS.bits, steps,
                              [FLAGS.sigma] * len(steps),
                              [FLAGS.threshold] * len(steps), seed=0,
                              noise="gaussian", timeout=600.0)
  wall = time.perf_counter() - start
  cost = release.cost
  print(f"\nwhole walk, {hashes.size:,} clients, steps {steps}, sigma "
        f"{FLAGS.sigma:g} per server, threshold {FLAGS.threshold}: "
        f"{wall:.1f} s wall (2 server processes on loopback)")
  print(f"  candidates per step {list(cost.candidates)} "
        f"(total {sum(cost.candidates):,})")
  print(f"  server time (the slower, evaluation and noise) "
        f"{cost.server_seconds:.2f} s; "
        f"{cost.server_seconds / (hashes.size * sum(cost.candidates)) * 1e6:.2f}"
        " us per client per candidate")
  print(f"  between the servers: {cost.exchanged_bytes:,} bytes of shares, "
        f"{cost.measured_peer_bytes:,} on the socket "
        f"({cost.measured_peer_bytes / hashes.size:.1f} per client)")
  print(f"  released at the last step: {len(release.frontiers[-1])} hashes")


def main(argv: list[str]) -> None:
  del argv
  rng = np.random.default_rng(0)
  bits = FLAGS.bits
  print(f"key: {idpf.key_bytes(bits)} bytes per server "
        f"(24 + 25 x {bits} bits), {2 * idpf.key_bytes(bits)} per client")
  print(f"{'clients':>9}{'keygen one (ms)':>17}{'keygen batch (us)':>19}"
        f"{'candidates':>12}{'eval (us/client/cand)':>23}"
        f"{'verify (us/client/point)':>26}")
  for n in (int(c) for c in FLAGS.clients):
    hashes = population(n, rng)
    single, batch = keygen_seconds(hashes)
    per, candidates = eval_seconds(hashes)
    point = verify_seconds(hashes)
    print(f"{n:>9,}{single * 1e3:>17.2f}{batch * 1e6:>19.1f}"
          f"{candidates:>12,}{per * 1e6:>23.3f}{point * 1e6:>26.3f}")
  if FLAGS.walk_clients:
    walk(population(FLAGS.walk_clients, rng))


if __name__ == "__main__":
  app.run(main)
