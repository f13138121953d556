"""The planned noisy trie against central partition selection: true words
released under a per-client upload budget, no setting tuned on the
population, each rule of ``--rules`` on the same seeds.

For each cell of ``--cells`` (``n:epsilon`` of the English population, or
``population:epsilon`` for ``paper-single``, ``paper-oov`` and
``s140-multi`` at their own n; :mod:`benchmarks.field_cells`), delta =
1/n^2 and n declared: for each rule (``chosen``: the rule and sampling
rate chosen on the public prior, :func:`triehh.mechanisms.plan_choice.
choose`, as ``triehh.discover`` plans; ``verified``, ``fixed``, ``prior``:
:func:`triehh.theory.noisy_plan.plan`'s ``rule``, at each noise law of
``--noise_laws``: the discrete Gaussian or Laplace; the budget of
``--bytes_per_run``, a Zipf prior of exponent 1, at most one false word
per run in expectation) the plan, computed once from (n, L, A, epsilon,
delta) before the population is read, then ``--runs`` seeded runs of
:func:`triehh.engines.noisy.run_planned` (seeds 0, 1, ...: the same for
every rule), and as many of central partition selection (truncated
geometric, one word per user). Printed, a row per rule: mean ± 95%
Student-t half-width of the true words and false words, the ratio of the
means (its interval from both relative half-widths), the bytes a client
uploads per round (largest) and per run (mean), the characters per round
of seed 0, the plan's choices and epsilon, and the seconds the plan took
(the chosen plan's: about a second when the calibration store remembers
the choice from an earlier command; set ``XDG_CACHE_HOME`` to a new folder
to time the choice itself).

``--verification_splits`` and ``--wrap_tails`` run the rules other than
``chosen`` at each verification split (a threshold per word from its
discovery count, or the even split) and each chance of a block's margin
being passed, side by side. A cell ``prior@name:epsilon`` is the public
prior the plan is chosen on, drawn at that cell's n, L and A (central
partition selection run on it too): where a rule's constants may be
compared without looking at a field population.

  python -m benchmarks.noisy_plan_field --cells=1e6:4,1e6:1,1e5:4,1e5:1
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from absl import app
from absl import flags

from benchmarks import field_cells
from triehh.data import datasets as datasets_lib
from triehh.engines import noisy
from triehh.mechanisms import plan_choice
from triehh.theory import noisy_plan

FLAGS = flags.FLAGS
flags.DEFINE_list("cells", ["1e6:4", "1e6:1", "1e5:4", "1e5:1"],
                  "n:epsilon cells of the English population, or "
                  "population:epsilon (paper-single, paper-oov, s140-multi: "
                  "their own n).")
# The rule and q chosen on the prior (triehh.mechanisms.plan_choice), as
# triehh.discover plans a budgeted target.
CHOSEN = "chosen"
flags.DEFINE_list("rules", [CHOSEN, *noisy_plan.RULES],
                  "The plan's rules to run, each on the same seeds "
                  f"({CHOSEN!r}: rule and q chosen on the public prior).")
flags.DEFINE_integer("runs", 3, "Seeded runs per mechanism and cell.",
                     lower_bound=2)
flags.DEFINE_integer("bytes_per_run", noisy_plan.DEFAULT_BYTES_PER_RUN,
                     "A client's upload budget per run, in bytes.",
                     lower_bound=1)
flags.DEFINE_float("sampling_rate", None, "q: each user's probability of "
                   "taking part in a round; the budget per run is then a "
                   "client's expected bytes. Unset: chosen on the prior "
                   "by the 'chosen' rule, 1 for the others.")
flags.DEFINE_float("dropout", None, "Unset: the server's discrete "
                   "Gaussian. Set: the clients' Skellam shares "
                   "(noise='distributed'), each sampled client failing to "
                   "deliver with this probability, accounted so "
                   "(triehh.theory.noisy_plan.with_distributed).")
flags.DEFINE_list("noise_laws", [noisy_plan.GAUSSIAN],
                  "The server's noise of the rules other than 'chosen', "
                  "each rule run at each law: gaussian, laplace (the "
                  "chosen plan's law is chosen on the prior).")
flags.DEFINE_list("verification_splits", [noisy_plan.WEIGHTED],
                  "The verification round's thresholds of the rules other "
                  "than 'chosen', each run: weighted (one per word, from "
                  "its discovery count), even (false_words / |V| each).")
flags.DEFINE_list("wrap_tails", [str(noisy_plan.WRAP_TAIL)],
                  "The blocks' margins of the rules other than 'chosen', "
                  "each run: the chance a margin is passed per coordinate.")
flags.DEFINE_list("discovery_wrap_tails", [],
                  "The verified rule's discovery rounds' margins (rules "
                  "other than 'chosen'), each run: the chance a margin is "
                  "passed per coordinate; empty: the plan's "
                  "(noisy_plan.DISCOVERY_WRAP_TAIL).")
flags.DEFINE_list("verify_reserves", [],
                  "The verified rule's share of the run's bytes kept for "
                  "its verification round (rules other than 'chosen'), "
                  "each run; empty: the plan's (noisy_plan.VERIFY_RESERVE).")
flags.DEFINE_list("discovery_multipliers", [],
                  "The verified rule's discovery noise over its "
                  "verification's, each run (rules other than 'chosen'); "
                  "empty: the law's constant.")
flags.DEFINE_list("discovery_words", [noisy_plan.LATER_CLASSES],
                  "The verified rule's discovery words (rules other than "
                  "'chosen'), each run: candidate (each at the prefixes' "
                  "rate), block (together at that rate times the round's "
                  "blocks), later-blocks (so after the first round), class, "
                  "later-classes (so each class of their end).")
flags.DEFINE_string("cache_dir", None, "The data sets' cache.")
flags.DEFINE_boolean("frontier_votes", True, "Several words per user: "
                     "each user votes for one of its words on the frontier "
                     "(false: by local frequency over all of its words).")


def _planned(data, plan, seed) -> dict:
  result = noisy.run_planned(data.population, plan, seed,
                             frontier_votes=FLAGS.frontier_votes)
  true = sum(1 for w in result.words if data.truth.get(w, 0) > 0)
  return dict(true=true, false=len(result.words) - true,
              run_bytes=result.expected_upload_bytes,
              round_bytes=max((level.upload_bytes for level in result.levels),
                              default=0),
              chars=[level.chars for level in result.levels],
              rates=[level.sampling_rate for level in result.levels])


def _describe(plan) -> str:
  """R, k_0's bytes, sigma, the multipliers, the prefix rate and epsilon."""
  first = ("share" if plan.first_round_bytes is None
           else f"{plan.first_round_bytes:,} B")
  rule = "verified" if plan.verify else "no verification"
  adapted = ("" if plan.renyi_order is None
             else f" adapted (RDP order {plan.renyi_order})")
  noise = "b" if plan.laplace else "σ"
  return (f"{rule}, R={plan.num_levels}, q={plan.sampling_rate:g}{adapted}, "
          f"first round {first}, {plan.noise_law}, "
          f"{noise}={plan.sigma:.3g}×{plan.noise_multipliers or (1,)}, "
          f"prefix rate {plan.prefix_false_positive_rate:.2g}, "
          f"ε={noisy_plan.epsilon(plan):.3g}"
          + ("" if plan.distributed is None else
             f", Skellam shares, h={plan.distributed.min_clients:,}"))


@dataclasses.dataclass(frozen=True)
class _Variant:
  """One row of a cell: a rule and what it is run with."""

  rule: str
  law: str | None = None
  split: str = noisy_plan.WEIGHTED
  tail: float = noisy_plan.WRAP_TAIL
  multiplier: float | None = None
  words: str = noisy_plan.LATER_CLASSES
  discovery_tail: float | None = None
  reserve: float | None = None

  @property
  def label(self) -> str:
    """The rule, with what differs between the rows of a cell."""
    label = self.rule
    if self.rule == CHOSEN:
      return label
    if len(FLAGS.noise_laws) > 1:
      label += f", {self.law}"
    if len(FLAGS.verification_splits) > 1:
      label += f", {self.split} split"
    if len(FLAGS.wrap_tails) > 1:
      label += f", margins at {self.tail:g}"
    if self.multiplier is not None:
      label += f", discovery ×{self.multiplier:g}"
    if len(FLAGS.discovery_words) > 1:
      label += f", discovery words per {self.words}"
    if len(FLAGS.discovery_wrap_tails) > 1:
      label += f", discovery margins at {self.discovery_tail:g}"
    if len(FLAGS.verify_reserves) > 1:
      label += f", verification reserve {self.reserve:g}"
    return label


def _variants() -> list[_Variant]:
  """Each rule of ``--rules``, the chosen one once and the others at each
  law of ``--noise_laws``, verification split of
  ``--verification_splits``, wrap tail of ``--wrap_tails`` and (the
  verified rule) discovery multiplier of ``--discovery_multipliers``,
  discovery words of ``--discovery_words``, discovery margins of
  ``--discovery_wrap_tails`` and verification reserve of
  ``--verify_reserves``."""
  out = []
  for rule in FLAGS.rules:
    if rule == CHOSEN:
      out.append(_Variant(rule))
      continue
    multipliers = ([float(m) for m in FLAGS.discovery_multipliers]
                   if rule == noisy_plan.VERIFIED else []) or [None]
    out += [_Variant(rule, law, split, float(tail), m, words,
                     None if d is None else float(d),
                     None if v is None else float(v))
            for law in FLAGS.noise_laws
            for split in FLAGS.verification_splits
            for tail in FLAGS.wrap_tails for m in multipliers
            for words in FLAGS.discovery_words
            for d in FLAGS.discovery_wrap_tails or [None]
            for v in FLAGS.verify_reserves or [None]]
  return out


def main(argv):
  del argv
  datasets = datasets_lib.DataCache(FLAGS.cache_dir)
  budget = noisy_plan.UploadBudget(FLAGS.bytes_per_run,
                                   sampling_rate=FLAGS.sampling_rate)
  print("| population, n | ε | rule | runs | central true words | planned "
        "true words | false words | ratio to central | bytes per client "
        "per round (max) | per run (mean) | k@q per round (seed 0) | plan | "
        "plan s |")
  print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
  for cell in FLAGS.cells:
    loaded = field_cells.load(cell, datasets)
    data, n, epsilon = loaded.data, loaded.n, loaded.epsilon
    start = time.perf_counter()
    pop = data.population
    central = [field_cells.central(loaded, s) for s in range(FLAGS.runs)]
    c_mean, c_half = field_cells.interval(r["true"] for r in central)
    for variant in _variants():
      planned = time.perf_counter()
      if variant.rule == CHOSEN:
        plan = plan_choice.choose(n, pop.max_length, pop.alphabet.size,
                                  epsilon, loaded.delta, budget=budget,
                                  one_word=pop.is_single_word,
                                  dropout=FLAGS.dropout)
      else:
        plan = noisy_plan.plan(n, pop.max_length, pop.alphabet.size,
                               epsilon, loaded.delta,
                               budget=dataclasses.replace(
                                   budget, sampling_rate=budget.rate),
                               one_word=pop.is_single_word,
                               rule=variant.rule, noise_law=variant.law,
                               discovery_multiplier=variant.multiplier)
        plan = dataclasses.replace(plan, verification_split=variant.split,
                                   wrap_tail=variant.tail,
                                   discovery_words=variant.words)
        if variant.discovery_tail is not None:
          plan = dataclasses.replace(
              plan, discovery_wrap_tail=variant.discovery_tail)
        if variant.reserve is not None:
          plan = dataclasses.replace(plan, verify_reserve=variant.reserve)
        if FLAGS.dropout is not None:
          plan = noisy_plan.with_distributed(plan, epsilon, FLAGS.dropout)
      planned = time.perf_counter() - planned
      runs = [_planned(data, plan, s) for s in range(FLAGS.runs)]
      mean, half = field_cells.interval(r["true"] for r in runs)
      f_mean, f_half = field_cells.interval(r["false"] for r in runs)
      ratio, r_half = field_cells.ratio(mean, half, c_mean, c_half)
      print(f"| {data.name}, {n:,} | {epsilon:g} | "
            f"{variant.label} | {FLAGS.runs} | "
            f"{c_mean:,.1f} ± {c_half:,.1f} | {mean:,.1f} ± {half:,.1f} | "
            f"{f_mean:.1f} ± {f_half:.1f} | **{ratio:.3f}** ± "
            f"{r_half:.3f} | {max(r['round_bytes'] for r in runs):,} | "
            f"{np.mean([r['run_bytes'] for r in runs]):,.0f} | "
            f"{','.join(f'{k}@{q:.2g}' for k, q in zip(runs[0]['chars'], runs[0]['rates']))} | {_describe(plan)} | "
            f"{planned:.1f} |", flush=True)
    print(f"<!-- {cell}: {time.perf_counter() - start:.0f} s -->", flush=True)


if __name__ == "__main__":
  app.run(main)
