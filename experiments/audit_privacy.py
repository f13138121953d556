"""Audits Theorem 1 empirically for one configuration (and broken variants).

Neighbouring populations D and D' of one family (by default D' is D with one
user's word replaced by the target word, same n; ``--adjacency=add``: D plus
one user holding it); the exact privacy loss on the target's trie path and a
Monte Carlo lower bound from runs of the fast engine (see
:mod:`triehh.analysis.audit`). Both are lower bounds over that family of
populations, not certificates: only Theorem 1 proves an epsilon.

  python -m experiments.audit_privacy --num_users=10000 --epsilon=2 \\
      --runs_per_side=4000 --variants=correct,theta_one
  python -m experiments.audit_privacy --num_users=1000 --theta=12 \\
      --batch_size=32 --max_length=1 --runs_per_side=0 --variants=double_vote
  triehh-audit --num_users=10000 --epsilon=2 --runs_per_side=0

Without ``--num_users``: n = 10,000; without ``--epsilon`` and ``--theta``:
epsilon 2.

Bad input prints one ``error: ...`` line and exits 1; Ctrl-C exits 130.
"""

from __future__ import annotations

import math
import sys

from absl import app
from absl import flags

from experiments import cli
from experiments import flags as shared_flags
from triehh.analysis import audit as privacy_audit

FLAGS = flags.FLAGS
NUM_USERS = 10_000
EPSILON = 2.0
for _name in ("num_users", "max_length", "theta", "batch_size", "gamma",
              "epsilon", "delta", "confidence", "seed"):
  flags.declare_key_flag(_name)
flags.DEFINE_integer("runs_per_side", 2000, "Engine runs per population and "
                     "side for the Monte Carlo bound (0: exact path only; "
                     "else at least 2).", lower_bound=0)
shared_flags.DEFINE_values(
    "variants", ["correct"], "Mechanisms to audit, of "
    f"{', '.join(privacy_audit.VARIANTS)}.",
    shared_flags.choice_item(privacy_audit.VARIANTS))
flags.register_validator("runs_per_side", lambda runs: runs != 1,
                         "--runs_per_side must be 0 or at least 2")
flags.DEFINE_enum("adjacency", "replace", list(privacy_audit.ADJACENCIES),
                  "D' replaces one user's word by the target (same n, the "
                  "paper's adjacency) or adds a user holding it ('add').")
HEADER = ("exact eps: exact loss (a lower bound over the audited family of "
          "populations, not a certificate); thm eps: Theorem 1's epsilon.")


def _fmt(value: float) -> str:
  return "inf" if math.isinf(value) else f"{value:.4f}"


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  num_users = shared_flags.value_or("num_users", NUM_USERS)
  epsilon = shared_flags.value_or("epsilon", None)
  if FLAGS.theta is None and epsilon is None:
    epsilon = EPSILON
  runs = FLAGS.runs_per_side
  # The flags are checked when parsed; the parameters before any output.
  for variant in FLAGS.variants:
    privacy_audit.make_setup(
        num_users, FLAGS.max_length, theta=FLAGS.theta,
        batch_size=FLAGS.batch_size, gamma=FLAGS.gamma, epsilon=epsilon,
        delta=FLAGS.delta, variant=variant, adjacency=FLAGS.adjacency)
  print(f"adjacency: {FLAGS.adjacency}. {HEADER}")
  print(f"{'variant':>16} {'n':>7} {'L':>3} {'theta':>5} {'m':>5} "
        f"{'thm eps':>8} {'thm delta':>9} {'exact eps':>9} "
        f"{'MC lower':>8} {'MC interval':>19} {'k':>5} {'seconds':>7}  "
        "worst event")
  for variant in FLAGS.variants:
    exact, mc = privacy_audit.audit(
        num_users, FLAGS.max_length, theta=FLAGS.theta,
        batch_size=FLAGS.batch_size, gamma=FLAGS.gamma, epsilon=epsilon,
        delta=FLAGS.delta, variant=variant, adjacency=FLAGS.adjacency,
        num_runs=runs, confidence=FLAGS.confidence,
        seed=FLAGS.seed)
    s = exact.setup
    shown = mc if mc is not None else exact
    interval = (f"[{_fmt(mc.lower)}, {_fmt(mc.upper)}]" if mc is not None
                else "-")
    seconds = exact.seconds + (mc.seconds if mc is not None else 0.0)
    print(f"{variant:>16} {s.n:>7} {s.levels:>3} {s.theta:>5} "
          f"{s.batch_size:>5} {_fmt(s.epsilon):>8} {s.delta:>9.2e} "
          f"{_fmt(exact.epsilon):>9} "
          f"{_fmt(mc.lower) if mc is not None else '-':>8} {interval:>19} "
          f"{shown.worst.k:>5} {seconds:>7.1f}  "
          f"{shown.worst.event} ({shown.worst.direction})")
  if runs:
    print(f"MC lower: empirical lower bound on epsilon at "
          f"{FLAGS.confidence:.0%} confidence (all events at once), "
          f"{runs} runs per population and side; MC interval: "
          "its worst event's bounds. L: levels (max_length + 1).")


def run():
  """Console-script entry point (``triehh-audit``)."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
