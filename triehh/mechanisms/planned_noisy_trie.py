"""The noisy trie's planned rounds, as the noisy-trie mechanism runs them
for a :class:`~triehh.theory.mechanism.NoisyTarget` with an
``upload_budget`` (``docs/noisy-trie.md``, "Rounds within an upload
budget").

* parameters: :func:`calibrate`, the plan of
  :func:`triehh.theory.noisy_plan.plan` from the public n (declared, else
  the data's size), L, the alphabet's size, the target and the budget,
  its rule and sampling rate chosen on the public prior
  (:mod:`triehh.mechanisms.plan_choice`): nothing else of the population
  is read;
* accountant: :func:`triehh.theory.noisy_plan.epsilon`'s, R discrete
  Gaussian rounds at the planned sigma_r (:func:`guarantee`,
  :func:`dp_event`: dp_accounting's ``ComposedDpEvent`` of
  :class:`~triehh.theory.dp_events.DiscreteGaussianDpEvent`), or, when
  the prior chose discrete Laplace noise, R pure rounds at the planned
  scales b_r, delta 0 (of
  :class:`~triehh.theory.dp_events.DiscreteLaplaceDpEvent`);
* engine: the fast engine's :func:`triehh.engines.noisy.run_planned` or
  TFF's :func:`triehh.engines.tff.planned_engine.run_planned`, with
  central noise or ``noise="distributed"`` (the clients' Skellam shares,
  :func:`distributed_plan`, accounted as such); the others refuse a
  budgeted target (:func:`check_engine`);
* release: :class:`PlannedNoisyTrieRelease`, with the bytes a client
  uploads in each round and over the run (public: functions of the plan
  and the released counts).

The plan reads n (its first round's bits, hence R and sigma, and every
block's cap), so with n read off the data the guarantee covers neighbours
of the same size only (``REPLACE_SPECIAL``); with a declared n, neighbours
of any size.
"""

from __future__ import annotations

import dataclasses
import time

import dp_accounting
import numpy as np

from triehh.core import population as population_lib
from triehh.core import release
from triehh.engines import noisy as noisy_engine
from triehh.engines import registry as engines
from triehh.mechanisms import plan_choice
from triehh.mechanisms import protocol
from triehh.theory import coverage
from triehh.theory import distributed_noise
from triehh.theory import dp_events
from triehh.theory import limits
from triehh.theory import mechanism as privacy_lib
from triehh.theory import noisy_plan
from triehh.theory import noisy_trie

_PUBLIC_ALPHABET = ("; the alphabet (part of the candidate set) is "
                    "treated as public: fix it before seeing the data")


@dataclasses.dataclass(frozen=True)
class CalibratedPlan(noisy_plan.NoisyPlan):
  """A :class:`~triehh.theory.noisy_plan.NoisyPlan` calibrated for a
  target, with where its n came from (``"declared"`` or ``"data"``) and
  the noise law the target asked for (None: chosen on the prior)."""

  n_source: str = coverage.N_FROM_DATA
  noise_law_asked: str | None = None


def calibrate(privacy: privacy_lib.NoisyTarget, population_size: int,
              shape: protocol.Shape) -> CalibratedPlan:
  """The plan for the target's budget from public values only: n
  (``population_size``: declared, else the data's), L, the alphabet's
  size, whether each user holds one word, epsilon and delta (``1/n^2``
  unless the target gives it): the rule, sampling rate (the budget's q,
  when it gives one) and noise law (the target's, when it gives one)
  chosen on the public prior by :func:`triehh.mechanisms.plan_choice.
  choose`."""
  if shape.alphabet_size is None:
    raise ValueError("the planned noisy trie needs the alphabet's size "
                     "(public) in the shape it is calibrated for")
  delta = (coverage.default_delta(population_size)
           if privacy.delta is None else privacy.delta)
  n_source = (coverage.N_DECLARED if shape.declared
              else coverage.N_FROM_DATA)
  coverage.check_asked(privacy.adjacency, n_source, population_size)
  plan = plan_choice.choose(population_size, shape.max_length,
                            shape.alphabet_size, privacy.epsilon, delta,
                            budget=privacy.upload_budget,
                            one_word=shape.single_word,
                            replace_one=privacy.replace_one,
                            noise_law=privacy.noise_law)
  fields = {f.name: getattr(plan, f.name)
            for f in dataclasses.fields(noisy_plan.NoisyPlan)}
  return CalibratedPlan(**fields, n_source=n_source,
                        noise_law_asked=privacy.noise_law)


# The accountant of a plan with discrete Laplace noise (pure DP, delta 0:
# triehh.theory.discrete_laplace), unsampled or Poisson-sampled.
LAPLACE_ACCOUNTING = ("noisy trie (discrete Laplace, pure, the rounds' "
                      "epsilons added, two-sided)")
LAPLACE_SAMPLED_ACCOUNTING = (
    "noisy trie (discrete Laplace, pure, each round amplified by Poisson "
    "sampling, the rounds' epsilons added, two-sided)")
# The accountant of a plan whose rates adapt to the frontier.
RATES_ADAPTED_ACCOUNTING = ("noisy trie (discrete Gaussian RDP at order "
                            "{order}, rates adapted to the frontier, "
                            "two-sided)")


def as_params(plan: noisy_plan.NoisyPlan) -> noisy_trie.NoisyTrieParams:
  """The plan's rounds as the accountant's parameters: R rounds at sigma
  times the multipliers, each user in each round with the budget's
  probability q (1: every round), at the plan's delta."""
  return noisy_trie.NoisyTrieParams(
      sigma=plan.sigma, num_levels=plan.num_levels,
      false_positive_rate=plan.word_false_positive_rate,
      noise_multipliers=plan.noise_multipliers, delta=plan.delta,
      population_size=plan.population_size,
      sampling_rate=plan.sampling_rate, replace_one=plan.replace_one)


def dp_event(plan: noisy_plan.NoisyPlan):
  """The run's ``DpEvent``: R discrete Gaussian rounds at the planned
  sigma_r (:func:`triehh.theory.noisy_trie.dp_event`); rates adapted, the
  run's Renyi divergence at the plan's order
  (:class:`~triehh.theory.dp_events.RenyiDpEvent`); with Skellam shares,
  R Skellam rounds at the accounted means ``h s_r``; discrete Laplace,
  R :class:`~triehh.theory.dp_events.DiscreteLaplaceDpEvent` at b_r."""
  if plan.laplace:
    return dp_accounting.ComposedDpEvent(
        [dp_events.DiscreteLaplaceDpEvent(b, plan.sampling_rate)
         for b in plan.sigmas])
  if plan.distributed is not None:
    return dp_accounting.ComposedDpEvent(
        [dp_events.SkellamDpEvent(m)
         for m in plan.distributed.accounted_means])
  if plan.renyi_order is not None:
    return dp_events.RenyiDpEvent(plan.renyi_order,
                                  noisy_plan.renyi_divergence(plan),
                                  replace_one=plan.replace_one)
  return noisy_trie.dp_event(as_params(plan))


def guarantee(plan: CalibratedPlan) -> privacy_lib.Guarantee:
  """The accountant's guarantee at the plan's delta, said for where n came
  from and for the budget (Skellam shares: :func:`_distributed`)."""
  if plan.distributed is not None:
    return _distributed(plan)
  if plan.laplace:
    accounted = noisy_trie.stated(
        noisy_plan.epsilon(plan), 0.0,
        LAPLACE_ACCOUNTING if plan.sampling_rate >= 1.0
        else LAPLACE_SAMPLED_ACCOUNTING, replace_one=plan.replace_one)
  elif plan.renyi_order is None:
    accounted = noisy_trie.guarantee(as_params(plan))
  else:  # one RDP order bounds the run, not the planned rounds' PLD
    accounted = noisy_trie.stated(
        noisy_plan.epsilon(plan), plan.delta,
        RATES_ADAPTED_ACCOUNTING.format(order=plan.renyi_order),
        replace_one=plan.replace_one)
  declared = plan.n_source == coverage.N_DECLARED
  neighbours = (
      "for neighbours of any size (the plan reads the declared, public n)"
      if declared else "for neighbours of the same size (the plan's "
      "rounds, noise and block sizes read n off the data)")
  budget = plan.budget
  per_round = ("" if budget.bytes_per_round is None else
               f", at most {budget.bytes_per_round:,} per round")
  if plan.renyi_order is not None:
    per_round += (
        f", in expectation: each user takes part in a round with "
        f"probability q={plan.sampling_rate:g} (Poisson sampling), or a "
        "discovery round whose frontier fits takes a larger rate of "
        f"q x {noisy_plan.RATE_STEP:.3g}^j up to 1 with its sigma raised "
        "so that its Renyi divergence at order "
        f"{plan.renyi_order} is at most the planned round's, chosen from "
        "public values (amplification accounted at that order)")
  elif plan.sampling_rate < 1.0:
    per_round += (f", in expectation: each user takes part in each round "
                  f"with probability q={plan.sampling_rate:g} (Poisson "
                  "sampling, amplification accounted)")
  covers = ("the released words, the published trie and every noisy "
            f"count, {neighbours}; {_rounds(plan)} planned within "
            f"an upload budget of {budget.bytes_per_run:,} bytes per client "
            f"per run{per_round}, each round's characters and kept "
            "prefixes chosen from public values only" + _PUBLIC_ALPHABET)
  public = (noisy_trie.PUBLIC + "; the upload budget and the plan (rounds, "
            "noise, thresholds)" + ("; the declared population size"
                                    if declared else ""))
  return dataclasses.replace(
      accounted, adjacencies=coverage.add_or_remove(
          plan.n_source, replace_one=plan.replace_one),
      n_source=plan.n_source, covers=covers, public=public,
      caveat=limits.delta_above_1_over_n(accounted.delta,
                                         plan.population_size))


def _distributed(plan: CalibratedPlan) -> privacy_lib.Guarantee:
  """A plan with Skellam shares: the shares' accountant
  (:meth:`~triehh.theory.distributed_noise.DistributedNoise.epsilon`,
  ``delta_short`` included) at the plan's delta, for ``REPLACE_SPECIAL``
  (and ``REPLACE_ONE`` when accounted for it; a client's share and its
  delivery are seen), with its assumptions (h, dropout, the modulus)
  said; the server's sampling not amplified."""
  shares = plan.distributed
  covers = ("the released words, the published trie and every noisy count, "
            + distributed_noise.neighbours(shares.replace_one)
            + f"; {_rounds(plan)} planned "
            f"within an upload budget of {plan.budget.bytes_per_run:,} bytes "
            "per client per run"
            + (f", in expectation (each user takes part in each round with "
               f"probability q={plan.sampling_rate:g}, not amplified: the "
               "server sees who delivered)" if plan.sampling_rate < 1.0
               else "")
            + ", each round's characters, kept prefixes and thresholds "
            "chosen from public values only" + _PUBLIC_ALPHABET + "; "
            + shares.describe(modulus=(
                "each block's secure sum modulo 2^b of its public cap and "
                f"{noisy_plan.WRAP_SIGMAS:g} accounted standard deviations "
                "of the shares on either side (wrap-around: utility only)")))
  return privacy_lib.Guarantee(
      epsilon=shares.epsilon(plan.delta), delta=plan.delta,
      adjacencies=distributed_noise.adjacencies(shares.replace_one),
      two_sided=True, n_source=plan.n_source,
      accounting=distributed_noise.accounting(plan.delta - shares.delta_short,
                                              shares.replace_one),
      trust=distributed_noise.TRUST,
      covers=covers,
      public=(noisy_trie.PUBLIC + "; the upload budget and the plan "
              "(rounds, thresholds' rates); n, q, the dropout bound, h, "
              "the share means and the secure sum's modulus"),
      caveat=limits.delta_above_1_over_n(plan.delta, plan.population_size))


def distributed_plan(plan: CalibratedPlan, num_users: int,
                     dropout: float) -> CalibratedPlan:
  """``plan``'s target with the clients' Skellam shares in place of the
  server's noise: the rule and q chosen again on the public prior with
  those shares (:func:`triehh.mechanisms.plan_choice.choose`), the shares
  of :func:`triehh.theory.noisy_plan.with_distributed`. ValueError when
  the plan's n is not the ``num_users`` present (the absent clients'
  shares would be missing)."""
  if plan.population_size != num_users:
    raise ValueError(
        f"distributed noise split among the clients of a declared "
        f"population_size={plan.population_size:,} with {num_users:,} users "
        "present: the shares of the absent clients are missing, so each "
        "round's noise is smaller than accounted; declare the data's own "
        "size, or use noise='central'")
  chosen = plan_choice.choose(
      plan.population_size, plan.max_length, plan.alphabet_size,
      noisy_plan.epsilon(plan), plan.delta, budget=plan.budget,
      one_word=plan.one_word,
      dropout=distributed_noise.check_dropout(dropout),
      replace_one=plan.replace_one, noise_law=plan.noise_law_asked)
  fields = {f.name: getattr(chosen, f.name)
            for f in dataclasses.fields(noisy_plan.NoisyPlan)}
  return CalibratedPlan(**fields, n_source=plan.n_source,
                        noise_law_asked=plan.noise_law_asked)


def _rounds(plan: noisy_plan.NoisyPlan) -> str:
  """The planned rounds in words: R, or R - 1 discovery rounds and one
  verification round."""
  if plan.verify:
    return (f"{plan.discovery_rounds} discovery rounds and one "
            "verification round")
  return f"{plan.num_levels} rounds"


# The engines' options for a planned run: its noise (central, or the
# clients' Skellam shares and their dropout bound), and where TFF runs.
FAST_OPTIONS = frozenset({"noise", "dropout"})
TFF_OPTIONS = FAST_OPTIONS | {"workers", "connect_timeout", "rpc_timeout"}
CENTRAL, DISTRIBUTED = "central", "distributed"
# The engines' runners of a plan, declared to the engine registry (a mode of
# the noisy-trie mechanism, looked up by this name).
PLANNED = "noisy_trie_planned"
engines.serve(engines.FAST, PLANNED, "triehh.engines.noisy:run_planned")
engines.serve(engines.TFF, PLANNED,
              "triehh.engines.tff.planned_engine:run_planned")
engines.serve(engines.BEAM, PLANNED,
              "triehh.beam.planned_protocol:run_planned")


def check_engine(engine: str, engine_options: dict) -> str:
  """The noise mode; ValueError unless ``engine`` runs the planned rounds
  (the fast and TFF engines, options: noise, central or distributed, a
  distributed run's dropout, and where TFF runs; Beam: none, the server's
  noise)."""
  if engine not in engines.engines_for(PLANNED):
    names = engines.engines_for(PLANNED)
    raise ValueError(
        "upload_budget: the planned noisy trie runs on the "
        f"{', '.join(map(repr, names[:-1]))} and {names[-1]!r} engines "
        f"only, not {engine!r}; give no upload_budget to run the classic "
        "noisy trie there")
  allowed = {engines.FAST: FAST_OPTIONS,
             engines.BEAM: frozenset()}.get(engine, TFF_OPTIONS)
  unknown = set(engine_options) - allowed
  if unknown:
    takes = ", ".join(sorted(allowed)) or "no options"
    raise ValueError(f"the planned noisy trie's {engine} engine takes "
                     f"{takes}; got {', '.join(sorted(unknown))}")
  return noise_mode(engine_options)


def noise_mode(engine_options: dict) -> str:
  """The options' noise, central (the default) or distributed; ValueError
  for another, or for a dropout without distributed noise (or outside
  [0, 1))."""
  noise = engine_options.get("noise", CENTRAL)
  if noise not in (CENTRAL, DISTRIBUTED):
    raise ValueError(f"noise must be {CENTRAL!r} or {DISTRIBUTED!r}, got "
                     f"{noise!r}")
  if "dropout" in engine_options:
    if noise != DISTRIBUTED:
      raise ValueError("dropout is for noise='distributed' only")
    distributed_noise.check_dropout(engine_options["dropout"])
  return noise


@dataclasses.dataclass(frozen=True)
class PlannedNoisyTrieRelease:
  """A planned run's :class:`~triehh.core.release.Release`.

  Attributes:
    words: the released words, by round, each round's by noisy sum.
    noisy_counts: ``int64 [len(words)]`` their noisy sums.
    false_words: ``bool [len(words)]`` whether no user holds the word
      (simulation only: not covered, :attr:`unprotected`).
    levels: per round, its
      :class:`~triehh.engines.noisy.PlannedLevel` (statistics, characters,
      prefixes dropped to fit the budget, bytes per client).
    params: the :class:`CalibratedPlan`; guarantee: what it guarantees.
    seconds: wall time of the run.
    notes: one-line statements its public values explain (no word found).
  """

  mechanism = "noisy_trie"

  words: tuple[str, ...]
  noisy_counts: np.ndarray
  false_words: np.ndarray
  levels: tuple[noisy_engine.PlannedLevel, ...]
  params: object = None
  guarantee: object = None
  seconds: float = 0.0
  notes: tuple[str, ...] = ()

  @property
  def num_false_words(self) -> int:
    """Released words no user holds."""
    return int(self.false_words.sum())

  @property
  def per_round(self) -> tuple[release.RoundStats, ...]:
    """Each round's candidates and the prefixes and words it kept."""
    return tuple(release.RoundStats(candidates=level.stats.num_candidates,
                                    kept=level.stats.num_passing)
                 for level in self.levels)

  @property
  def unprotected(self) -> dict[str, tuple[str, ...]]:
    """``{"false_words": ...}``: released words no user holds (simulation
    only: NOT covered by the guarantee)."""
    return {"false_words": tuple(
        w for w, false in zip(self.words, self.false_words) if false)}

  @property
  def chars_per_round(self) -> tuple[int, ...]:
    """k_r, each discovery round's characters (the verification round
    extends nothing)."""
    return tuple(level.chars for level in self.levels
                 if not level.verification)

  @property
  def upload_bytes_per_round(self) -> tuple[int, ...]:
    """The bytes a client uploads in each round (every user takes part in
    every round); public."""
    return tuple(level.upload_bytes for level in self.levels)

  @property
  def upload_bytes(self) -> int:
    """The bytes a client uploads over the run, in expectation (each
    round's vector times its rate q_r; q = 1: every round); public."""
    return round(noisy_engine.expected_bytes(self.levels))

  @property
  def sampling_rates(self) -> tuple[float, ...]:
    """q_r, the rate each round ran at (the plan's q, or larger where the
    rates adapt); public."""
    return tuple(level.sampling_rate for level in self.levels)


def run(population: population_lib.Population, plan: CalibratedPlan, rng,
        engine: str, **engine_options) -> PlannedNoisyTrieRelease:
  """One planned run on the fast engine
  (:func:`triehh.engines.noisy.run_planned`) or in TFF
  (:func:`triehh.engines.tff.planned_engine.run_planned`), with its
  guarantee; ``noise="distributed"``: the clients' Skellam shares
  (:func:`distributed_plan`), with ``dropout``."""
  noise = check_engine(engine, engine_options)
  engine_options.pop("noise", None)
  if noise == DISTRIBUTED:
    plan = distributed_plan(plan, population.num_users, engine_options.pop(
        "dropout", distributed_noise.DEFAULT_DROPOUT))
  accounted = guarantee(plan)  # before the data is read
  start = time.perf_counter()
  result = engines.get(engine).runner(PLANNED)(population, plan, rng,
                                               **engine_options)
  seconds = time.perf_counter() - start
  notes = () if result.words else (
      nothing_found(plan, population.num_users),)
  return PlannedNoisyTrieRelease(
      words=result.words, noisy_counts=result.noisy_counts,
      false_words=result.false_words, levels=result.levels, params=plan,
      guarantee=accounted, seconds=seconds, notes=notes)


def nothing_found(plan: noisy_plan.NoisyPlan, n: int) -> str:
  """Why a planned run on ``n`` users released no word, in one line: a
  word needs a noisy count of at least the prefix threshold in every
  discovery round (each user votes in every round), the largest in the
  first round; more holders than ``n``: none can be expected."""
  first = plan.params(0, False)
  later = plan.params(max(plan.discovery_rounds - 1, 0), False)
  needed = max(first.threshold, later.threshold)
  noise = "Laplace scale" if plan.laplace else "sigma"
  line = (f"no word found: a word needs a noisy count of at least "
          f"{first.threshold:g} in the first round ({noise}={first.sigma:.4g})"
          f" and {later.threshold:g} in the later discovery rounds "
          f"({noise}={later.sigma:.4g}), so about {needed:,.0f} holders among "
          f"the n={n:,} users")
  if needed > n:
    return (line + ": more than there are users, so no word can be "
            "expected; ask for a larger epsilon or upload budget, or run on "
            "more users")
  return line + ": no word reached it in this run"
