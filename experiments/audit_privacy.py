"""Audits Theorem 1 empirically for one configuration (and broken variants).

Neighbouring populations D and D' of one family (by default D' is D with one
user's word replaced by the target word, same n; ``--adjacency=add``: D plus
one user holding it); the exact privacy loss on the target's trie path and a
Monte Carlo lower bound from runs of the fast engine (see
:mod:`checks.audit`). Both are lower bounds over that family of
populations, not certificates: only Theorem 1 proves an epsilon.

  python -m experiments.audit_privacy --num_users=10000 --epsilon=2 \\
      --runs_per_side=4000 --variants=correct,theta_one
  python -m experiments.audit_privacy --num_users=1000 --theta=12 \\
      --batch_size=32 --max_length=1 --runs_per_side=0 --variants=double_vote
  triehh-audit --num_users=10000 --epsilon=2 --runs_per_side=0
  python -m experiments.audit_privacy --mechanism=several_words \\
      --num_users=659775

Without ``--num_users``: n = 10,000; without ``--epsilon`` and ``--theta``:
epsilon 2.

``--mechanism=several_words`` audits several words per user redrawn every
round (:mod:`checks.audit_several_words`, exact only) on the
Sentiment140 sample's users under the paper's tokenizer (``--data_path``,
else the sample found as the other drivers find it), resampled to
``--num_users`` if given (seed ``--data_seed``, as the report does), at
the paper's 9 characters (10 levels) unless ``--max_length``, epsilon 4
and the paper's delta bound 5e-9 (which the report's several-words runs
target) unless given. It prints one row per
accounting: ours (per-round composition, L * delta_1) and the paper's
(Corollary 2, delta_1), with theta and m as the library calibrates each.

Bad input prints one ``error: ...`` line and exits 1; Ctrl-C exits 130.
"""

from __future__ import annotations

import math
import os
import sys

from absl import app
from absl import flags

from checks import audit as privacy_audit
from checks import audit_several_words as several_words
from experiments import cli
from experiments import flags as shared_flags
from reports.reproduction import numbers as reproduction_numbers
from triehh.data import datasets as datasets_lib
from triehh.data import paper_populations
from triehh.theory import mechanism

FLAGS = flags.FLAGS
NUM_USERS = 10_000
EPSILON = 2.0
SEVERAL_WORDS_EPSILON = 4.0
shared_flags.declare(__name__, "theta", "batch_size", "gamma", "delta",
                     "data_seed")
shared_flags.declare_simulation_seed(__name__)
shared_flags.declare(
    __name__, "num_users", default=None, help_text=(
        f"n, users in the base population D, e.g. 1e4 (default "
        f"{NUM_USERS:,}); --mechanism=several_words: the sample's users "
        "resampled to n (default: as they are)."))
shared_flags.declare(
    __name__, "max_length", help_text=(
        "L, the maximum characters of the target word; the trie has "
        "max_length + 1 levels (--mechanism=several_words: default the "
        "paper's 9, its 10 levels)."))
shared_flags.declare(
    __name__, "epsilon", default=None, help_text=(
        f"Target epsilon to calibrate (Corollary 1); default {EPSILON:g} "
        "without --theta (--mechanism=several_words: "
        f"{SEVERAL_WORDS_EPSILON:g})."))
shared_flags.declare(
    __name__, "confidence", help_text="The simultaneous confidence of the "
    "Monte Carlo bound.")
shared_flags.declare(
    __name__, "data_path", help_text="--mechanism=several_words: the "
    "Sentiment140 file (default: the sample, from $TRIEHH_SENTIMENT140 or "
    "../shared/data beside the repository).")
shared_flags.declare(
    __name__, "adjacency", default="replace",
    parser=flags.EnumParser(list(privacy_audit.ADJACENCIES)),
    help_text="The audited family of neighbours: 'replace' (D' replaces "
    "one user's word by the target, same n) or 'add' (D plus a user "
    "holding it).")
flags.DEFINE_integer("runs_per_side", 2000, "Engine runs per population and "
                     "side for the Monte Carlo bound (0: exact path only; "
                     "else at least 2).", lower_bound=0)
shared_flags.DEFINE_values(
    "variants", ["correct"], "Mechanisms to audit, of "
    f"{', '.join(privacy_audit.VARIANTS)}.",
    shared_flags.choice_item(privacy_audit.VARIANTS))
flags.register_validator("runs_per_side", lambda runs: runs != 1,
                         "--runs_per_side must be 0 or at least 2")
shared_flags.declare(
    __name__, "mechanism", default="one_word", help_text=(
        "one_word: Theorem 1's mechanism on the audit's built populations; "
        "several_words: users' bags of words redrawn every round, on the "
        "Sentiment140 sample (exact only)."),
    parser=flags.EnumParser(["one_word", "several_words"]))
flags.DEFINE_integer("audit_words", 40, "--mechanism=several_words: how many "
                     "words nearest the threshold to audit.", lower_bound=1)
ONE_WORD_ONLY = ("runs_per_side", "variants", "adjacency", "gamma",
                 "confidence", "seed")
HEADER = ("exact eps: exact loss (a lower bound over the audited family of "
          "populations, not a certificate); thm eps: Theorem 1's epsilon.")


def _fmt(value: float) -> str:
  return "inf" if math.isinf(value) else f"{value:.4f}"


# Flags only the several-word audit reads (the Sentiment140 sample, and the
# number of its words audited), with why the one-word audit has no use for
# them.
SEVERAL_WORDS_ONLY = {
    "data_path": "the one-word audit draws its own tiny populations",
    "data_seed": "the one-word audit draws its own tiny populations",
    "audit_words": "the one-word audit has one target word",
}


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if FLAGS.mechanism == "several_words":
    _several_words()
    return
  for name, why in SEVERAL_WORDS_ONLY.items():
    if shared_flags.given(name):
      raise ValueError(f"--{name} is for --mechanism=several_words ({why})")
  num_users = shared_flags.value_or("num_users", NUM_USERS)
  epsilon = shared_flags.value_or("epsilon", None)
  if FLAGS.theta is None and epsilon is None:
    epsilon = EPSILON
  runs = FLAGS.runs_per_side
  adjacency = FLAGS.adjacency
  # The flags are checked when parsed; the parameters before any output.
  privacy = mechanism.from_options({
      "epsilon": epsilon, "delta": FLAGS.delta, "theta": FLAGS.theta,
      "batch_size": FLAGS.batch_size, "gamma": FLAGS.gamma,
      "sampling": "fixed"})
  for variant in FLAGS.variants:
    privacy_audit.make_setup(num_users, FLAGS.max_length, privacy,
                             variant=variant, adjacency=adjacency)
  print(f"adjacency: {adjacency}. {HEADER}")
  print(f"{'variant':>16} {'n':>7} {'L':>3} {'theta':>5} {'m':>5} "
        f"{'thm eps':>8} {'thm delta':>9} {'exact eps':>9} "
        f"{'MC lower':>8} {'MC interval':>19} {'k':>5} {'seconds':>7}  "
        "worst event")
  for variant in FLAGS.variants:
    exact, mc = privacy_audit.audit(
        num_users, FLAGS.max_length, privacy, variant=variant,
        adjacency=adjacency, num_runs=runs, confidence=FLAGS.confidence,
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


def _several_words_population():
  """The Sentiment140 sample's several-word users (resampled if asked)."""
  for name in ONE_WORD_ONLY:
    if shared_flags.given(name):
      raise ValueError(f"--{name} is for --mechanism=one_word")
  if FLAGS.theta is not None and FLAGS.batch_size is None:
    raise ValueError("--theta needs --batch_size for --mechanism="
                     "several_words")
  if FLAGS.data_path is not None and not os.path.exists(FLAGS.data_path):
    raise ValueError(f"--data_path={FLAGS.data_path}: no such file")
  path = datasets_lib.sentiment140_sample(FLAGS.data_path)
  if path is None:
    raise ValueError("--mechanism=several_words needs the Sentiment140 "
                     "sample: give --data_path (or set $"
                     f"{datasets_lib.SENTIMENT140_ENV})")
  num_users = shared_flags.value_or("num_users", None)
  max_length = shared_flags.value_or("max_length",
                                     paper_populations.PAPER_MAX_LENGTH)
  data = paper_populations.paper_population(
      "multi", num_users=num_users, max_length=max_length, data_path=path,
      seed=FLAGS.data_seed)
  return data, max_length


def _several_words_setups(n: int, max_length: int):
  theta = FLAGS.theta
  if theta is not None:
    given = mechanism.Mechanism(theta=theta, batch_size=FLAGS.batch_size,
                                sampling="fixed")
    return [several_words.make_setup(n, max_length, given, accounting=a)
            for a in several_words.ACCOUNTINGS], None
  epsilon = shared_flags.value_or("epsilon", SEVERAL_WORDS_EPSILON)
  delta = (FLAGS.delta if FLAGS.delta is not None
           else reproduction_numbers.PAPER_MULTI_DELTA)
  target = mechanism.Target(epsilon, delta=delta, sampling="fixed")
  return [several_words.make_setup(n, max_length, target, accounting=a)
          for a in several_words.ACCOUNTINGS], (epsilon, delta)


def _several_words():
  """``--mechanism=several_words``: one row per accounting."""
  data, max_length = _several_words_population()
  pop = data.population
  setups, target = _several_words_setups(pop.num_users, max_length)
  source = data.info.get("source", "")
  drawn = (f", resampled to n = {pop.num_users:,} (seed "
           f"{data.info['seed']})" if "resampled" in data.info else
           f", as is (n = {pop.num_users:,})")
  print(f"several words per user, redrawn every round (word_choice="
        f"'per_round'); data: the Sentiment140 sample {source} under the "
        f"paper's tokenizer{drawn}; L = {max_length + 1} levels "
        f"({max_length} characters)"
        + (f"; target epsilon {target[0]:g}, delta {target[1]:.3g}"
           if target else "") + ".")
  print("exact eps: the exact loss on the audited words' trie paths (u: "
        "the word's top holder, with its own bag or the word alone, and its "
        "top holder with other words too, against the empty bag; a lower "
        "bound over this family of neighbouring "
        "populations, not a certificate); delta(eps): its hockey-stick "
        "divergence at the claimed epsilon; L*delta_1 and delta_1 (the "
        "paper's delta) at the row's theta.")
  print(f"{'accounting':>22} {'theta':>5} {'m':>6} {'claim eps':>9} "
        f"{'claim delta':>11} {'L*delta_1':>9} {'delta_1':>9} "
        f"{'exact eps':>9} {'(reverse)':>9} {'delta(eps)':>10} "
        f"{'(reverse)':>9} {'bag>1 eps':>9} {'pairs':>5} {'seconds':>7}  "
        "worst")
  shares = several_words.PrefixShares(pop)
  for setup in setups:
    result = several_words.audit(pop, setup, num_words=FLAGS.audit_words,
                                 shares=shares)
    eps, at_eps = result.epsilon, result.delta_at_epsilon
    w, several = result.worst, result.worst_several
    name = {"per_round": "ours (L*delta_1)",
            "paper": "paper's (Corollary 2)"}[setup.accounting]
    print(f"{name:>22} {setup.theta:>5} {setup.batch_size:>6} "
          f"{_fmt(setup.epsilon):>9} {setup.delta:>11.3g} "
          f"{setup.levels * setup.delta_one:>9.3g} {setup.delta_one:>9.3g} "
          f"{_fmt(eps[FORWARD]):>9} {_fmt(eps[REVERSE]):>9} "
          f"{at_eps[FORWARD]:>10.3g} {at_eps[REVERSE]:>9.3g} "
          f"{_fmt(max(several.epsilon.values())) if several else '-':>9} "
          f"{len(result.pairs):>5} {result.seconds:>7.1f}  {w.word!r} "
          f"(user {w.user}, bag {w.bag}, share {w.share:.3f}, "
          f"{w.expected_votes:.1f} expected votes): {w.event}")
    if several is not None and several is not w:
      print(f"{'':>22} bag>1: {several.word!r} (user {several.user}, share "
            f"{several.share:.3f}, {several.expected_votes:.1f} expected "
            f"votes): {several.event}")
  print(f"exact eps: {FORWARD}; (reverse): {REVERSE}; bag>1 eps: the "
        "largest loss where u's bag holds other words too (share < 1). The "
        "paper's accounting is not covered by a proof for per-round redraws "
        "(docs/privacy.md, 'Several words per user').")


FORWARD, REVERSE = "D vs D'", "D' vs D"


def run():
  """Console-script entry point (``triehh-audit``)."""
  cli.run(main, sys.modules[__name__])


if __name__ == "__main__":
  run()
