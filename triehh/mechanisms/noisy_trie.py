"""The noisy trie as a mechanism: Gaussian noise on each level's vote sums
over a public candidate set (``docs/noisy-trie.md``).

In one place, what makes it up:

* privacy object: :class:`triehh.theory.mechanism.NoisyTarget`;
* parameters and accountant: :class:`triehh.theory.noisy_trie.NoisyTrieParams`,
  :func:`triehh.theory.noisy_trie.calibrate`, ``guarantee`` and
  ``dp_event`` there (dp_accounting's PLD of the subsampled Gaussian);
* engines: ``"fast"`` (:func:`triehh.engines.noisy.run`) and ``"tff"``
  (:func:`triehh.engines.tff.noisy_engine.run`: ``noise="central"`` or
  ``"distributed"``); any engine that declares ``"noisy_trie"`` among its
  mechanisms (:mod:`triehh.engines.registry`) runs it through
  :meth:`~triehh.engines.registry.Engine.runner`; ``"beam"``: the Beam
  pipeline of :mod:`triehh.beam.noisy_protocol` (one word per user,
  central noise, no options).

The guarantee is labelled as every run's is: ``ADD_OR_REMOVE_ONE`` and
``REPLACE_SPECIAL`` when no parameter depends on |D| (delta given, or a
declared population size), ``REPLACE_SPECIAL`` only when delta is ``1/n^2``
of the population's own size; with ``adjacency="REPLACE_ONE"`` the noise is
calibrated for a vote that moves between two candidates
(:mod:`triehh.theory.noisy_trie`), and ``REPLACE_ONE`` is covered too
(neighbours of the same size, so whatever n delta came from). The
distributed noise (``noise="distributed"``, fast and tff engines) is
Skellam shares planned from n (the declared size, if any: it reads n too)
by :func:`triehh.theory.distributed_noise.plan`; its guarantee is that
accountant's, for ``REPLACE_SPECIAL`` only, labelled with its assumptions.
"""

from __future__ import annotations

import dataclasses
import time

import dp_accounting

from triehh.core import population as population_lib
from triehh.engines import noisy as noisy_engine
from triehh.engines import registry as engines
from triehh.mechanisms import planned_noisy_trie as planned
from triehh.mechanisms import protocol
from triehh.theory import coverage
from triehh.theory import distributed_noise
from triehh.theory import dp_events
from triehh.theory import limits
from triehh.theory import mechanism as privacy_lib
from triehh.theory import noisy_trie
from triehh.theory.adjacency import Adjacency

NAME = "noisy_trie"
# The engines' options for the noisy trie, classic or planned: its noise
# (fast and TFF), where TFF runs.
FAST_OPTIONS, TFF_OPTIONS = planned.FAST_OPTIONS, planned.TFF_OPTIONS
CENTRAL, DISTRIBUTED = planned.CENTRAL, planned.DISTRIBUTED
_PUBLIC_ALPHABET = ("; the alphabet (part of the candidate set) is "
                    "treated as public: fix it before seeing the data")


# Whom a distributed run trusts, and for what.
DISTRIBUTED_TRUST = distributed_noise.TRUST


class NoisyTrie(protocol.BaseMechanism):
  """The noisy trie (module docstring)."""

  name = NAME
  privacy_types = (privacy_lib.NoisyTarget,)
  summary = ("noise on each level's vote sums over a public candidate "
             "set (the server's discrete Gaussian or, in planned runs, "
             "Laplace; or the clients' Skellam shares), thresholded for a "
             "false-positive rate")

  def population(self, user_words, request: protocol.Request
                 ) -> population_lib.Population:
    population = population_lib.as_population(user_words,
                                              request.max_length)
    population.check_public_alphabet(
        "the noisy trie", "Build the population with one, e.g. "
        "triehh.Population.from_user_words(words, alphabet=\"abcdefghijklmno"
        "pqrstuvwxyz'\"), and pass it to discover")
    return super().population(population, request)

  def calibrate(self, privacy: privacy_lib.NoisyTarget, population_size: int,
                shape: protocol.Shape) -> noisy_trie.NoisyTrieParams:
    """sigma, tau and q for the target over ``ceil((L + 1) / k)`` rounds;
    delta ``1/n^2`` of ``population_size`` unless the target gives it.
    With an upload budget, the plan (:func:`planned.calibrate`)."""
    if privacy.upload_budget is not None:
      return planned.calibrate(privacy, population_size, shape)
    delta = (coverage.default_delta(population_size)
             if privacy.delta is None else privacy.delta)
    n_source = coverage.n_source_of(shape.declared, privacy.delta is None)
    coverage.check_asked(privacy.adjacency, n_source, population_size)
    params = noisy_trie.calibrate(
        noisy_trie.rounds_for(shape.max_length, privacy.chars_per_level),
        privacy.epsilon, delta,
        false_positive_rate=privacy.false_positive_rate,
        chars_per_level=privacy.chars_per_level,
        noise_multipliers=privacy.noise_multipliers,
        replace_one=privacy.replace_one)
    return dataclasses.replace(params, delta=delta, n_source=n_source,
                               population_size=population_size)

  def guarantee(self, params: noisy_trie.NoisyTrieParams
                ) -> privacy_lib.Guarantee:
    """The accountant's guarantee at the calibrated delta, said for where
    n came from."""
    if isinstance(params, planned.CalibratedPlan):
      return planned.guarantee(params)
    return _labelled(noisy_trie.guarantee(params), params.n_source,
                     delta_from_n=params.n_source == coverage.N_FROM_DATA,
                     n=params.population_size)

  def dp_event(self, params: noisy_trie.NoisyTrieParams):
    """The run's ``DpEvent``: a plan's, the distributed shares' Skellam
    rounds (:class:`DistributedParams`), else the discrete Gaussian's."""
    if isinstance(params, planned.CalibratedPlan):
      return planned.dp_event(params)
    if isinstance(params, DistributedParams):
      return dp_accounting.ComposedDpEvent(
          [dp_events.SkellamDpEvent(m) for m in params.skellam_means])
    return noisy_trie.dp_event(params)

  def run(self, population: population_lib.Population,
          params: noisy_trie.NoisyTrieParams, rng, engine: str,
          **engine_options):
    """One run on ``engine`` (``noise="distributed"``: Skellam shares,
    accounted so); a plan's on the fast or TFF engine (:func:`planned.run`)."""
    if isinstance(params, planned.CalibratedPlan):
      return planned.run(population, params, rng, engine, **engine_options)
    runner = engines.get(engine).runner(NAME)
    distributed = _checked_options(engine, engine_options) == DISTRIBUTED
    accounted = noisy_trie.guarantee(params)  # the accountant, once
    extra = {}
    if distributed:
      n = (population.num_users if params.population_size is None
           else params.population_size)
      if n != population.num_users:
        raise ValueError(
            f"distributed noise split among the clients of a declared "
            f"population_size={n:,} with {population.num_users:,} users "
            "present: the shares of the absent clients are missing, so each "
            "round's noise is smaller than the label's sigma; declare the "
            "data's own size, or use noise='central'")
      extra = dict(distributed=distributed_noise.plan(
          n, params.sampling_rate, accounted.epsilon, accounted.delta,
          [params.multiplier(r) for r in range(params.num_levels)],
          params.false_positive_rate, dropout=engine_options.pop(
              "dropout", distributed_noise.DEFAULT_DROPOUT),
          replace_one=params.replace_one))
    if engine != engines.TFF:
      engine_options.pop("noise", None)
    start = time.perf_counter()
    result = runner(population, params, rng=rng, **engine_options, **extra)
    seconds = time.perf_counter() - start
    guarantee = _labelled(
        accounted, params.n_source,
        delta_from_n=params.n_source == coverage.N_FROM_DATA,
        distributed=distributed, n=params.population_size)
    if distributed:
      guarantee = _distributed(guarantee, extra["distributed"])
    if distributed:
      params = DistributedParams(
          **{f.name: getattr(params, f.name)
             for f in dataclasses.fields(noisy_trie.NoisyTrieParams)},
          skellam_means=extra["distributed"].accounted_means)
    return _with_notes(dataclasses.replace(
        result, params=params, guarantee=guarantee, seconds=seconds),
                       population.num_users)


@dataclasses.dataclass(frozen=True)
class DistributedParams(noisy_trie.NoisyTrieParams):
  """A distributed run's parameters: the calibration's, with the Skellam
  noise its accountant counts each round (``h s_r``, the shares of the h
  clients besides one), so that its ``DpEvent`` is the run's."""

  skellam_means: tuple[float, ...] = ()


@dataclasses.dataclass(frozen=True)
class NoisyTrieRelease(noisy_engine.NoisyTrieResult):
  """A noisy-trie run's :class:`~triehh.engines.noisy.NoisyTrieResult`
  with its notes: one-line statements its public values explain (no word
  found: :func:`nothing_found`); empty when there is nothing to say."""

  notes: tuple[str, ...] = ()


def _with_notes(result, num_users: int):
  """``result`` as a :class:`NoisyTrieRelease`, with a note when it
  released no word."""
  notes = () if result.words else (nothing_found(result.params, num_users),)
  if isinstance(result, NoisyTrieRelease):
    return dataclasses.replace(result, notes=notes)
  fields = {f.name: getattr(result, f.name)
            for f in dataclasses.fields(result)}
  return NoisyTrieRelease(**fields, notes=notes)


def nothing_found(params: noisy_trie.NoisyTrieParams, n: int) -> str:
  """Why a run of ``params`` on ``n`` users released no word, in one line:
  a word's prefix needs a noisy sum of at least tau in every round, which
  its holders give in expectation when about ``tau / q`` of the ``n`` users
  hold it (each takes part with probability q and votes once); more than
  ``n``: no word can be expected at this n."""
  tau, q = params.threshold, params.sampling_rate
  needed = tau / q if q > 0 else float("inf")
  line = (f"no word found: a word needs a noisy sum of at least tau={tau:g} "
          f"(noise sigma={params.sigma:.4g}) in every round, so about "
          f"tau/q = {needed:,.0f} holders among the n={n:,} users "
          f"(q n = {q * n:,.1f} sampled per round)")
  if needed > n:
    return (line + ": more than there are users, so no word can be "
            "expected; ask for a larger epsilon or false_positive_rate, or "
            "run on more users")
  return line + ": no word reached it in this run"


def _checked_options(engine: str, engine_options: dict) -> str:
  """The noise mode; ValueError for an option the engine does not take
  for the noisy trie (the fast engine takes ``noise`` and, distributed,
  ``dropout``)."""
  if engine == engines.BEAM and engine_options:
    raise ValueError("the noisy trie's beam engine takes no options (the "
                     "server's noise only), got "
                     f"{', '.join(sorted(engine_options))}")
  if engine != engines.TFF:
    if engine != engines.FAST and "noise" in engine_options:
      raise ValueError(f"noise= is an option of the {engines.TFF!r} and "
                       f"{engines.FAST!r} engines' noisy trie, not of "
                       f"engine={engine!r}")
    if engine == engines.FAST and set(engine_options) - FAST_OPTIONS:
      raise ValueError("the noisy trie's fast engine takes noise and "
                       "dropout only, got "
                       f"{', '.join(sorted(engine_options))}")
  else:
    unknown = set(engine_options) - TFF_OPTIONS
    if unknown:
      raise ValueError(f"the noisy trie's tff engine takes "
                       f"{', '.join(sorted(TFF_OPTIONS))}; got "
                       f"{', '.join(sorted(unknown))}")
  return planned.noise_mode(engine_options)


def _labelled(guarantee: privacy_lib.Guarantee, n_source: str, *,
              delta_from_n: bool, distributed: bool = False,
              n: int | None = None) -> privacy_lib.Guarantee:
  """The accountant's guarantee, said for where n came from
  (:func:`triehh.theory.coverage.add_or_remove`): delta's, and the
  distributed noise's split among the expected clients; a delta above
  ``1/n`` said as its caveat."""
  if distributed and n_source == coverage.N_UNUSED:
    n_source = coverage.N_FROM_DATA
  covers = guarantee.covers
  if n_source == coverage.N_FROM_DATA:
    reads = " and ".join(
        what for what, read in (("delta = 1/n^2", delta_from_n),
                                ("the noise's split among q n clients",
                                 distributed)) if read)
    covers = (covers.split(", for neighbours")[0] + ", for neighbours of "
              f"the same size ({reads} read n off the data)")
  replace_one = guarantee.holds_for(Adjacency.REPLACE_ONE)
  return dataclasses.replace(
      guarantee, adjacencies=coverage.add_or_remove(
          n_source, replace_one=replace_one),
      n_source=n_source, covers=covers + _PUBLIC_ALPHABET,
      caveat=limits.delta_above_1_over_n(guarantee.delta, n))


def _distributed(guarantee: privacy_lib.Guarantee,
                 plan: distributed_noise.DistributedNoise
                 ) -> privacy_lib.Guarantee:
  """The guarantee of the Skellam shares that ran
  (:mod:`triehh.theory.distributed_noise`): that accountant's epsilon at
  the same delta (``delta_short`` included), for ``REPLACE_SPECIAL`` (and
  ``REPLACE_ONE`` when accounted for it; never adding or removing a
  client: its share and its delivery are seen), with its assumptions
  said."""
  return dataclasses.replace(
      guarantee, epsilon=plan.epsilon(guarantee.delta),
      adjacencies=distributed_noise.adjacencies(plan.replace_one),
      accounting=distributed_noise.accounting(
          guarantee.delta - plan.delta_short, plan.replace_one),
      trust=DISTRIBUTED_TRUST,
      public=(guarantee.public + "; n, q, the dropout bound, h, the share "
              "means and the secure sum's modulus"),
      covers=(guarantee.covers.split(", for neighbours")[0] + ", "
              + distributed_noise.neighbours(plan.replace_one)
              + _PUBLIC_ALPHABET + "; " + plan.describe()))


engines.serve(engines.BEAM, NAME, "triehh.beam.noisy_protocol:run_noisy")
MECHANISM = NoisyTrie()
