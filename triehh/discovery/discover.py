"""``triehh.discover``: the arguments resolved once, then the run.

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

from triehh.core import alphabet as alphabet_lib
from triehh.core import choices
from triehh.core import population as population_lib
from triehh.core import results
from triehh.core import validation
from triehh.discovery import availability as availability_lib
from triehh.discovery import counts as counts_lib
from triehh.discovery import deny_list as deny_list_lib
from triehh.discovery import passes
from triehh.discovery import run as discovery_run
from triehh.engines import registry
from triehh.theory import counting
from triehh.theory import policy


def _sampling(sampling: str | None, *, num_passes, availability,
              schedule, batch_size, gamma) -> str:
  """The run's sampling. By default Poisson, but fixed-size batches where the
  call names one (``batch_size`` or ``gamma`` with ``theta``, the paper's
  parameters) or uses a feature accounted by Theorem 1 (passes,
  availability) or a fixed schedule."""
  fixed_only = [name for name, value in (("num_passes", num_passes),
                                         ("availability", availability),
                                         ("schedule", schedule))
                if value is not None]
  if sampling is None:
    fixed = fixed_only or batch_size is not None or gamma is not None
    return choices.FIXED if fixed else choices.POISSON
  choices.check_sampling(sampling)
  if sampling == choices.POISSON and fixed_only:
    raise ValueError(f"{fixed_only[0]} runs fixed-size batches "
                     "(sampling='fixed'); Poisson sampling is not available "
                     "with it")
  return sampling


# Long function: its docstring documents its 25 arguments; the body is short.
def discover(user_words, *, epsilon: float | None = None,
             delta: float | None = None,
             max_length: int = population_lib.DEFAULT_MAX_LENGTH,
             seed: int | None = 0, engine: str = registry.FAST,
             theta: int | None = None, gamma: float | None = None,
             batch_size: int | None = None, num_sub_rounds: int = 1,
             max_num_prefixes: int | None = None,
             allow_no_guarantee: bool = False,
             word_choice: str = choices.PER_ROUND,
             schedule: Sequence[np.ndarray] | None = None,
             alphabet=None, unknown: str | None = None,
             end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL,
             deny_list: Iterable[str] | None = None,
             num_passes: int | None = None, composition: str = "best",
             availability=None, calibrate_to: str = "online",
             sampling: str | None = None,
             sampling_rate: float | None = None, counts: bool = False,
             count_share: float | None = None,
             count_sample_rate: float | None = None,
             **engine_options) -> results.DiscoveryResult:
  """Discovers heavy hitters with TrieHH (and, optionally, counts them).

  Args:
    user_words: one entry per user, a ``str`` (the user's word) or a mapping
      word -> count (the user's words), or a :class:`triehh.Population`.
    epsilon, delta: the target privacy (``delta`` defaults to ``1/n^2``);
      theta and the sampling rate come from the two-sided accountant
      (``sampling="poisson"``), theta and the batch size from Corollary 1
      (``sampling="fixed"``). It covers the set of discovered words and
      prefixes, not their vote counts (``result.unprotected``).
    max_length: L, the maximum characters per word (L + 1 trie levels).
    seed: seed of the ``numpy.random.Generator`` (same seed, same result).
    engine: ``"fast"`` (numpy simulation) or ``"tff"`` (TensorFlow
      Federated computations), or any registered engine.
    theta, gamma, batch_size: give theta and one of the others instead of
      ``(epsilon, delta)`` (under Poisson sampling ``batch_size`` is the
      expected batch, or give ``sampling_rate``); the guarantee is then
      computed for them.
    num_sub_rounds: batches per round whose votes are summed.
    max_num_prefixes: keep at most this many unfinished extensions per round
      (finished words are never capped). Outside Theorem 1: needs
      ``allow_no_guarantee``.
    allow_no_guarantee: run parameters outside Theorem 1 anyway (reported
      with ``epsilon = inf``).
    word_choice: for users with several words, ``"per_round"`` (redraw the
      word every round, Algorithm 3; delta is ``L`` times Theorem 1's) or
      ``"per_run"`` (draw it once before the first round, from the first
      stream spawned from the run's generator; Theorem 1's delta). See
      :mod:`triehh.discovery.word_choice`.
    schedule: fixed user indices per round instead of random sampling.
    alphabet, unknown, end_symbol: encoding options when ``user_words`` is
      not a Population (see :mod:`triehh.core.population`).
    deny_list: words whose users abstain, or pick among their other words
      (:mod:`triehh.discovery.deny_list`); n and the guarantee are unchanged.
    num_passes, composition: run that many passes, each denying the words
      found before, within the total ``(epsilon, delta)``; returns a
      :class:`triehh.discovery.passes.PassesResult` (:mod:`triehh.discovery.passes`).
    availability, calibrate_to: a fraction of users online per round, or
      per-user online probabilities; rounds sample from the online users
      and the guarantee is Theorem 1's at the worst round's online count;
      returns a :class:`triehh.discovery.availability.OnlineResult`
      (:mod:`triehh.discovery.availability`).
    sampling: ``"poisson"``: every user takes part in a round independently
      with probability ``sampling_rate``, and the guarantee is proven in
      both directions (:mod:`triehh.theory.poisson`); ``"fixed"``: the
      paper's batch of exactly m users per round, covered by Theorem 1 in
      the direction of its proof only (``docs/privacy.md``). By default
      (``None``): ``"poisson"``, except ``"fixed"`` when ``batch_size`` or
      ``gamma`` is given (the paper's parameters; pass
      ``sampling="poisson"`` to make ``batch_size`` the expected batch), and
      for repeated passes, ``availability`` and fixed schedules, which
      support fixed-size batches only.
    sampling_rate: q for ``sampling="poisson"`` with ``theta``.
    counts: also estimate how many users hold each discovered word, with
      confidence intervals (``result.counts``, ``docs/counts.md``), within
      the same budget: ``(epsilon, delta)`` is then the TOTAL, discovery
      runs at ``1 - count_share`` of it (``result.params``) and counting at
      the rest; ``result.counts`` reports the total (PLD composition,
      :func:`triehh.theory.counting.compose`) and each phase. Needs
      ``epsilon``; not with ``allow_no_guarantee``, ``num_passes``,
      ``availability`` or ``schedule``.
    count_share: the share of epsilon and delta spent on counting, in (0,
      1); default :data:`triehh.discovery.counts.DEFAULT_COUNT_SHARE`.
    count_sample_rate: the probability that a user joins the counting
      sample, in (0, 1]; default
      :data:`triehh.discovery.counts.DEFAULT_COUNT_SAMPLE_RATE`.
    **engine_options: passed to the engine (e.g. TFF workers).

  Returns:
    A :class:`~triehh.core.results.DiscoveryResult`.
  """
  registry.get(engine)  # fails before any work on the input
  max_length = validation.check_int("max_length", max_length)
  if epsilon is not None:
    epsilon = validation.check_positive("epsilon", epsilon)
  counting_request = check_counting(
      counts, count_share, count_sample_rate, epsilon=epsilon,
      allow_no_guarantee=allow_no_guarantee, num_passes=num_passes,
      availability=availability, schedule=schedule)
  encoding = population_lib.encoding_options(alphabet, unknown, end_symbol)
  sampling = _sampling(sampling, num_passes=num_passes,
                       availability=availability, schedule=schedule,
                       batch_size=batch_size, gamma=gamma)
  if sampling == choices.FIXED and sampling_rate is not None:
    raise ValueError("sampling_rate is for sampling='poisson'")
  fixed = {k: v for k, v in dict(
      theta=theta, gamma=gamma, batch_size=batch_size,
      max_num_prefixes=max_num_prefixes, schedule=schedule,
      allow_no_guarantee=allow_no_guarantee or None).items() if v is not None}
  if num_passes is not None:
    if availability is not None:
      raise ValueError("num_passes and availability cannot be combined")
    return passes.discover_passes(
        user_words, num_passes=num_passes, epsilon=epsilon, delta=delta,
        composition=composition, deny_list=deny_list or (),
        max_length=max_length, seed=seed, engine=engine,
        word_choice=word_choice, num_sub_rounds=num_sub_rounds, **encoding,
        **fixed, **engine_options)
  population = population_lib.as_population(user_words, max_length,
                                            **encoding)
  if deny_list is not None:
    population = deny_list_lib.apply(population, deny_list)
  if schedule is not None:
    discovery_run.check_schedule(schedule, population)
  if availability is not None:
    return availability_lib.discover_online(
        population, availability=availability, epsilon=epsilon, delta=delta,
        calibrate_to=calibrate_to, max_length=max_length, seed=seed,
        engine=engine, word_choice=word_choice,
        num_sub_rounds=num_sub_rounds, **fixed, **engine_options)
  run_options = dict(
      seed=seed, engine=engine, theta=theta, gamma=gamma,
      batch_size=batch_size, num_sub_rounds=num_sub_rounds,
      max_num_prefixes=max_num_prefixes,
      allow_no_guarantee=allow_no_guarantee, word_choice=word_choice,
      schedule=schedule, sampling=sampling, sampling_rate=sampling_rate,
      **engine_options)
  if counting_request is None:
    return run_once(population, epsilon=epsilon, delta=delta, **run_options)
  return run_with_counts(population, epsilon=epsilon, delta=delta,
                         count_share=counting_request[0],
                         count_sample_rate=counting_request[1], **run_options)


def run_with_counts(population: population_lib.Population, *,
                    epsilon: float, delta: float | None, count_share: float,
                    count_sample_rate: float, engine: str,
                    **run_options) -> results.DiscoveryResult:
  """One run on a built population that also counts the words it finds
  (``discover(counts=True)``, its arguments checked by
  :func:`check_counting`): the total ``(epsilon, delta)`` split
  (:func:`split_total`), :func:`run_once` at discovery's share, then the
  protected counts (:func:`triehh.discovery.counts.count_discovered`) at
  counting's, attached to the result."""
  declared = run_options.get("population_size")
  total_delta, split = split_total(
      population.num_users if declared is None else declared, epsilon, delta,
      count_share)
  result = run_once(population, epsilon=split.discovery_epsilon,
                    delta=split.discovery_delta, engine=engine,
                    **run_options)
  counts = counts_lib.count_discovered(
      result, population, epsilon=epsilon, delta=total_delta,
      counting_epsilon=split.counting_epsilon,
      counting_delta=split.counting_delta, sample_rate=count_sample_rate,
      engine=engine)
  return dataclasses.replace(result, counts=counts)


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
                   num_passes=None, availability=None, schedule=None,
                   as_flags: bool = False) -> tuple[float, float] | None:
  """``(count_share, count_sample_rate)`` with defaults when counts are
  asked for, else None; a ValueError naming what cannot go with them (the
  checks of :func:`discover`'s counting arguments, which sweep cells and
  the drivers' flags make too). ``as_flags`` names the arguments as the
  drivers' flags (``--counts``, ``--count_share=0.5``)."""
  if not isinstance(counts, bool):
    raise TypeError(f"counts must be True or False, got {counts!r}")

  def given(name: str, value) -> str:
    if not as_flags:
      return f"{name}={value}"
    return f"--{name}" if value is True else f"--{name}={value}"

  flag = "--" if as_flags else ""
  if not counts:
    for name, value in (("count_share", count_share),
                        ("count_sample_rate", count_sample_rate)):
      if value is not None:
        raise ValueError(f"{given(name, value)} is for "
                         f"{given('counts', True)}; pass "
                         f"{given('counts', True)} to count the discovered "
                         "words")
    return None
  if allow_no_guarantee:
    raise ValueError(f"{given('counts', True)} cannot go with "
                     f"{given('allow_no_guarantee', True)}: the counts' "
                     "guarantee is composed with discovery's")
  if epsilon is None:
    raise ValueError(f"{given('counts', True)} needs {flag}epsilon (the total "
                     "budget split between discovery and counting), got "
                     f"{given('epsilon', None)}")
  for name, value in (("num_passes", num_passes),
                      ("availability", availability),
                      ("schedule", schedule)):
    if value is not None:
      raise ValueError(f"counts=True is not supported with {name} (got "
                       f"{name}={value!r}): run one pass, everyone online, "
                       "with random sampling")
  share = counting.check_count_share(
      counts_lib.DEFAULT_COUNT_SHARE if count_share is None else count_share,
      f"{flag}count_share")
  rate = counting.check_sample_rate(
      counts_lib.DEFAULT_COUNT_SAMPLE_RATE if count_sample_rate is None
      else count_sample_rate, f"{flag}count_sample_rate")
  return share, rate


def run_once(population: population_lib.Population, *,
             seed: int | None, engine: str, sampling: str,
             sampling_rate: float | None = None,
             epsilon: float | None = None, delta: float | None = None,
             theta: int | None = None, gamma: float | None = None,
             batch_size: int | None = None, num_sub_rounds: int = 1,
             max_num_prefixes: int | None = None,
             allow_no_guarantee: bool = False,
             word_choice: str = choices.PER_ROUND,
             schedule: Sequence[np.ndarray] | None = None,
             adjacency: str | None = None,
             population_size: int | None = None,
             **engine_options) -> results.DiscoveryResult:
  """One run on a built population: its parameters resolved once
  (:func:`triehh.theory.policy.resolve_params`, for the population's own
  ``max_length``), then :func:`triehh.discovery.run.run`. ``sampling`` is
  explicit here; :func:`discover` chooses it when the caller does not.
  ``adjacency`` and ``population_size`` are the policy's (the relation
  asked for, a declared public n)."""
  params = policy.resolve_params(
      population.num_users, population.max_length, epsilon=epsilon,
      delta=delta, theta=theta, gamma=gamma, batch_size=batch_size,
      num_sub_rounds=num_sub_rounds, max_num_prefixes=max_num_prefixes,
      allow_no_guarantee=allow_no_guarantee, word_choice=word_choice,
      single_word=population.is_single_word, sampling=sampling,
      sampling_rate=sampling_rate, adjacency=adjacency,
      population_size=population_size)
  return discovery_run.run(population, params, seed=seed, engine=engine,
                           schedule=schedule,
                           allow_no_guarantee=allow_no_guarantee,
                           **engine_options)
