"""TrieHH's discovery: the arguments resolved once, then the run.

:func:`triehh.discover` (:mod:`triehh.mechanisms.discover`) runs every
mechanism; for TrieHH's privacy objects it comes here
(:mod:`triehh.mechanisms.triehh_mechanism`).

It turns the input into a :class:`~triehh.core.population.Population`, applies
a deny list, and resolves the privacy arguments into run parameters
(:mod:`triehh.theory.policy`) for :func:`triehh.discovery.run.run`, the one
single run; repeated passes (:mod:`triehh.discovery.passes`) and
availability (:mod:`triehh.discovery.availability`) resolve theirs and call
that run too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np

from triehh.core import choices
from triehh.core import population as population_lib
from triehh.core import results
from triehh.core import validation
from triehh.discovery import availability as availability_lib
from triehh.discovery import counts as counts_lib
from triehh.discovery import deny_list as deny_list_lib
from triehh.discovery import passes as passes_lib
from triehh.discovery import run as discovery_run
from triehh.engines import registry
from triehh.theory import counting
from triehh.theory import limits
from triehh.theory import mechanism
from triehh.theory import policy
from triehh.theory.adjacency import Adjacency


# Long function: its docstring documents its ten arguments; the body is
# short.
def discover(user_words, privacy=None, *,
             max_length: int = population_lib.DEFAULT_MAX_LENGTH,
             seed: int | None = None, engine: str = registry.FAST,
             deny_list: Iterable[str] | None = None,
             counts: bool | counts_lib.Counting = False,
             passes: passes_lib.Passes | None = None,
             availability: availability_lib.OnlineUsers | None = None,
             **engine_options) -> results.DiscoveryResult:
  """Discovers heavy hitters with TrieHH (and, optionally, counts them).

  Args:
    user_words: one entry per user, a ``str`` (the user's word) or a mapping
      word -> count (the user's words), or a :class:`triehh.Population`
      (build one for another alphabet, unknown-character handling or end
      symbol).
    privacy: a :class:`triehh.Target` (``(epsilon, delta)`` to calibrate
      for: theta and the sampling rate from the two-sided accountant under
      Poisson sampling, theta and the batch size from Corollary 1 under
      fixed-size sampling), a :class:`triehh.Mechanism` (theta and its
      sampling given; the guarantee is computed for them), or a number, the
      target epsilon. Either carries the run's shape: sampling, the
      adjacency asked for, a declared population size, sub-rounds, a prefix
      cap, word choice, ``allow_no_guarantee``, a schedule (each round's
      users chosen, for worked examples: no guarantee, so it needs
      ``allow_no_guarantee=True``). The guarantee
      covers the set of discovered words and prefixes, not their vote counts
      (``result.unprotected``), and names its adjacency
      (``result.params.adjacency``, ``docs/privacy.md``).
    max_length: L, the maximum characters per word (L + 1 trie levels).
    seed: None (the default): fresh entropy from the operating system
      (numpy's ``SeedSequence()``, 128 bits), kept nowhere: the guarantee
      is over the run's randomness and assumes it secret. A whole number
      >= 0 seeds the ``numpy.random.Generator`` for a simulation that asks
      for one (same seed, same result): whoever knows it can undo the
      noise, so the run protects nothing (``docs/privacy.md``, "What the
      label does not cover"). ``result.guarantee.randomness`` says which.
    engine: a registered engine's name (:func:`triehh.engine_names`).
    deny_list: words whose users abstain, or pick among their other words
      (:mod:`triehh.discovery.deny_list`); n and the guarantee are unchanged.
    counts: ``True`` or a :class:`triehh.Counting`: also estimate how many
      users hold each discovered word, with confidence intervals
      (``result.counts``, ``docs/counts.md``), within the same budget: the
      target is then the TOTAL, discovery runs at ``1 - share`` of it and
      counting at the rest. Needs a Target.
    passes: a :class:`triehh.Passes`: that many passes, each denying the
      words found before, within the total target; returns a
      :class:`triehh.discovery.passes.PassesResult`.
    availability: a :class:`triehh.OnlineUsers`: rounds sample from the
      users online; returns a
      :class:`triehh.discovery.availability.OnlineResult`.
    **engine_options: passed to the engine (e.g. TFF workers).

  Returns:
    A :class:`~triehh.core.results.DiscoveryResult`.
  """
  validation.check_seed(seed)
  for name, value, kind in (("passes", passes, passes_lib.Passes),
                            ("availability", availability,
                             availability_lib.OnlineUsers)):
    if value is not None and not isinstance(value, kind):
      raise TypeError(f"{name} must be a triehh.{kind.__name__} or None, "
                      f"got {value!r:.60}: e.g. {name}=triehh."
                      f"{kind.__name__}(...)")
  registry.get(engine)  # fails before any work on the input
  privacy = mechanism.of(privacy)
  max_length = validation.check_int("max_length", max_length)
  counting_request = _counting_request(counts, privacy, passes, availability)
  # A replace checks the sampling named against the rest of the privacy.
  privacy = mechanism.with_sampling(privacy, fixed_only={
      "passes": passes, "availability": availability})
  if passes is not None or availability is not None:
    return _repeated(user_words, privacy, passes, availability,
                     max_length=max_length, seed=seed, engine=engine,
                     deny_list=deny_list, **engine_options)
  population = population_lib.as_population(user_words, max_length)
  if deny_list is not None:
    population = deny_list_lib.apply(population, deny_list)
  if privacy.schedule is not None:
    discovery_run.check_schedule(privacy.schedule, population)
  if counting_request is None:
    return run_once(population, privacy, seed=seed, engine=engine,
                    **engine_options)
  return run_with_counts(population, privacy, counting=counting_request,
                         seed=seed, engine=engine, **engine_options)


def _counting_request(counts, privacy, passes,
                      availability) -> counts_lib.Counting | None:
  """The counting asked for (``counts=True`` takes the defaults), checked
  against the rest of the call, or None."""
  if isinstance(counts, counts_lib.Counting):
    request = counts
  elif counts is True:
    request = counts_lib.Counting()
  elif counts is False:
    return None
  else:
    raise TypeError("counts must be True, False or a triehh.Counting, got "
                    f"{counts!r}")
  check_counting(True, request.share, request.sample_rate,
                 epsilon=(privacy.epsilon
                          if isinstance(privacy, mechanism.Target) else None),
                 allow_no_guarantee=privacy.allow_no_guarantee,
                 num_passes=passes, availability=availability,
                 schedule=privacy.schedule, adjacency=privacy.adjacency)
  return request


def _repeated(user_words, privacy, passes, availability, *,
              max_length: int, seed, engine: str, deny_list,
              **engine_options):
  """:func:`discover` with ``passes`` or ``availability``: fixed-size
  batches under Theorem 1 (``REPLACE_SPECIAL``, n read off the data)."""
  if passes is not None and availability is not None:
    raise ValueError("passes and availability cannot be combined")
  population = population_lib.as_population(user_words, max_length)
  check_delta(privacy, population.num_users)
  if passes is not None:
    return passes_lib.discover_passes(
        population, privacy, passes, deny_list=deny_list or (),
        max_length=max_length, seed=seed, engine=engine, **engine_options)
  if deny_list is not None:
    population = deny_list_lib.apply(population, deny_list)
  return availability_lib.discover_online(
      population, privacy, availability, max_length=max_length, seed=seed,
      engine=engine, **engine_options)


def run_with_counts(population: population_lib.Population,
                    privacy: mechanism.Target, *,
                    counting: counts_lib.Counting, seed: int | None,
                    engine: str, **engine_options) -> results.DiscoveryResult:
  """One run on a built population that also counts the words it finds
  (``discover(counts=...)``, checked by :func:`check_counting`): the total
  ``(epsilon, delta)`` of ``privacy`` split (:func:`split_total`),
  :func:`run_once` at discovery's share, then the protected counts
  (:func:`triehh.discovery.counts.count_discovered`) at counting's,
  attached to the result."""
  check_delta(privacy, population.num_users)
  declared = privacy.population_size
  total_delta, split = split_total(
      population.num_users if declared is None else declared,
      privacy.epsilon, privacy.delta, counting.share)
  discovery, delta_from_n = discovery_share(privacy, counting,
                                            population.num_users)
  result = run_once(population, discovery, seed=seed, engine=engine,
                    delta_from_n=delta_from_n, **engine_options)
  counts = counts_lib.count_discovered(
      result, population, dataclasses.replace(privacy, delta=total_delta),
      split, sample_rate=counting.sample_rate, engine=engine)
  return dataclasses.replace(result, counts=counts,
                             guarantee=counted_guarantee(result.guarantee,
                                                         counts))


def discovery_share(privacy: mechanism.Target, counting: counts_lib.Counting,
                    num_users: int) -> tuple[mechanism.Target, bool]:
  """Discovery's share of the total target ``privacy`` when ``counting``
  takes the rest (:func:`split_total`, ``delta = 1/n^2`` of the declared
  population size, else of the ``num_users`` present), and whether its
  delta was derived from |D| (``run_once``'s ``delta_from_n``)."""
  declared = privacy.population_size
  _, split = split_total(num_users if declared is None else declared,
                         privacy.epsilon, privacy.delta, counting.share)
  return (dataclasses.replace(privacy, epsilon=split.discovery_epsilon,
                              delta=split.discovery_delta),
          privacy.delta is None and declared is None)


def counted_guarantee(discovery: mechanism.Guarantee,
                      counts: results.WordCounts) -> mechanism.Guarantee:
  """The guarantee of a run and its counts: the total ``(epsilon, delta)``
  of both phases, for the relations both are proven for (the counting
  phase's Gaussian is accounted for adding or removing a user, not for
  replacing one)."""
  return dataclasses.replace(
      discovery, epsilon=counts.epsilon, delta=counts.delta,
      adjacencies=tuple(a for a in discovery.adjacencies
                        if a is not Adjacency.REPLACE_ONE),
      accounting=f"{discovery.accounting}; counts: {counts.accounting}",
      covers=f"{discovery.covers}; and the counts of the words found")


def split_total(num_users: int, epsilon: float, delta: float | None,
                count_share: float) -> tuple[float, counting.BudgetSplit]:
  """The total delta (``1/n^2`` by default) and the split of the total
  ``(epsilon, delta)`` between discovery and counting, as :func:`discover`
  makes them."""
  total_delta = 1.0 / num_users**2 if delta is None else delta
  split = counting.split_budget(epsilon, total_delta, count_share)  # checks
  return float(total_delta), split


def check_counting(counts: bool, count_share: float | None,
                   count_sample_rate: float | None, *,
                   epsilon: float | None, allow_no_guarantee: bool,
                   num_passes=None, availability=None,
                   schedule=None, adjacency=None
                   ) -> tuple[float, float] | None:
  """``(count_share, count_sample_rate)`` with defaults when counts are
  asked for, else None; a ValueError naming what cannot go with them (the
  checks of :func:`discover`'s counting arguments, which sweep cells and
  the drivers' flags make too, saying them as flags). ``adjacency``: the
  relation asked for; replace-one is refused, the counting phase being
  proven for adding or removing a user only."""
  if not isinstance(counts, bool):
    raise TypeError(f"counts must be True or False, got {counts!r}")
  if not counts:
    for name, value in (("count_share", count_share),
                        ("count_sample_rate", count_sample_rate)):
      if value is not None:
        raise ValueError(f"{name}={value} is for counts=True; pass "
                         "counts=True to count the discovered words")
    return None
  if allow_no_guarantee:
    raise ValueError("counts=True cannot go with allow_no_guarantee=True: "
                     "the counts' guarantee is composed with discovery's")
  if epsilon is None:
    raise ValueError("counts=True needs epsilon (the total budget split "
                     "between discovery and counting), got epsilon=None")
  if adjacency is not None and Adjacency.of(adjacency) is (
      Adjacency.REPLACE_ONE):
    raise ValueError(
        "counts=True cannot go with adjacency='REPLACE_ONE': the counting "
        "phase's Gaussian is proven for adding or removing a user, not for "
        "replacing one's word, so the run could not cover the relation "
        "asked for; ask for ADD_OR_REMOVE_ONE, or count without it")
  for name, value in (("num_passes", num_passes),
                      ("availability", availability),
                      ("schedule", schedule)):
    if value is not None:
      raise ValueError(f"counts=True is not supported with {name} (got "
                       f"{name}={value!r}): run one pass, everyone online, "
                       "with random sampling")
  share = counting.check_count_share(
      counts_lib.DEFAULT_COUNT_SHARE if count_share is None else count_share)
  rate = counting.check_sample_rate(
      counts_lib.DEFAULT_COUNT_SAMPLE_RATE if count_sample_rate is None
      else count_sample_rate)
  return share, rate


def check_delta(privacy: mechanism.Target | mechanism.Mechanism,
                num_users: int, params: results.RunParams | None = None
                ) -> None:
  """Refuses a delta above ``1/n`` (n: the declared population size, else
  ``num_users``), asked for or, with ``params``, the one the run's
  parameters give, unless ``privacy.allow_delta_above_1_over_n``
  (:func:`triehh.theory.limits.check_delta_for_n`)."""
  n = (num_users if privacy.population_size is None
       else privacy.population_size)
  allowed = privacy.allow_delta_above_1_over_n
  limits.check_delta_for_n(privacy.delta, n, allowed=allowed)
  if params is not None and params.has_guarantee:
    given = (f"theta={params.theta} and its sampling as given"
             if isinstance(privacy, mechanism.Mechanism)
             else "the calibrated parameters")
    limits.check_delta_for_n(params.delta, n, allowed=allowed, source=given)


def check_declared_size(privacy: mechanism.Target | mechanism.Mechanism,
                        num_users: int) -> None:
  """Refuses fixed-size batches calibrated for a declared population size
  other than the data's: the batch is sized for the declared n and drawn
  from the users present, so each is sampled more often than the accountant
  assumed, which no proof covers. Poisson sampling's rate does not depend
  on n: a declared size at least the data's is covered."""
  declared = privacy.population_size
  if (declared is None or declared == num_users
      or privacy.sampling != choices.FIXED):
    return
  raise ValueError(
      f"population_size={declared:,} is declared, but the data holds "
      f"{num_users:,} users: fixed-size batches sized for the declared n "
      "and drawn from the users present sample each more often than "
      "accounted, which no proof covers; declare the data's own size, or "
      "use Poisson sampling (its rate does not depend on n)")


def run_once(population: population_lib.Population,
             privacy: mechanism.Target | mechanism.Mechanism, *,
             seed: int | None, engine: str, delta_from_n: bool = False,
             **engine_options) -> results.DiscoveryResult:
  """One run on a built population: its parameters resolved once
  (:func:`triehh.theory.policy.resolve`, for the population's own
  ``max_length``; ``privacy`` names its sampling, which :func:`discover`
  chooses when the caller does not), then :func:`triehh.discovery.run.run`.
  ``delta_from_n``: ``privacy``'s delta was derived from |D| (a share of
  the default ``1/n^2``)."""
  check_declared_size(privacy, population.num_users)
  check_delta(privacy, population.num_users)
  params = policy.resolve(population.num_users, population.max_length,
                          privacy, single_word=population.is_single_word,
                          delta_from_n=delta_from_n)
  check_delta(privacy, population.num_users, params)
  return discovery_run.run(population, params, seed=seed, engine=engine,
                           schedule=privacy.schedule,
                           allow_no_guarantee=privacy.allow_no_guarantee,
                           **engine_options)
