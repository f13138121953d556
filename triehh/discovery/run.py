"""One TrieHH run, given its resolved parameters.

The single place that turns :class:`~triehh.core.results.RunParams` and a
population into a :class:`~triehh.core.results.DiscoveryResult`: it draws each
user's word once under ``word_choice="per_run"`` (:mod:`triehh.discovery.word_choice`),
checks the engine options against the guarantee
(:func:`triehh.theory.policy.check_contribution`), encodes the population, looks the
engine up by name (:mod:`triehh.engines.registry`) and times its run.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np

from triehh.core import choices
from triehh.core import population as population_lib
from triehh.core import release
from triehh.core import results
from triehh.core import validation
from triehh.discovery import word_choice as word_choice_lib
from triehh.engines import registry
from triehh.theory import mechanism
from triehh.theory import policy
from triehh.theory import utility


def run(population: population_lib.Population, params: results.RunParams, *,
        seed: int | None, engine: str = registry.FAST,
        schedule: Sequence[np.ndarray] | None = None,
        allow_no_guarantee: bool = False,
        **engine_options) -> results.DiscoveryResult:
  """Runs TrieHH on ``population`` with ``params``.

  Args:
    population: the users (deny lists already applied).
    params: the run's parameters and guarantee (:mod:`triehh.theory.policy`);
      ``num_sub_rounds``, ``max_num_prefixes`` and ``sampling_rate`` are
      read from them.
    seed: seed of the run's ``numpy.random.Generator`` (None: fresh
      entropy, which the guarantee's ``randomness`` says and nothing keeps).
    engine: a registered engine's name.
    schedule: fixed user indices per round instead of sampling, already
      valid (:func:`triehh.discovery.discover.discover` checks a caller's
      with :func:`check_schedule`; availability builds its own).
    allow_no_guarantee: engine options outside the guarantee (several votes
      per user per round) run without guarantee instead of being refused.
    **engine_options: passed to the engine (e.g. TFF workers).
  """
  runner = registry.get(engine)
  grow = runner.runner(registry.TRIEHH)  # refuses an engine without TrieHH
  rng = np.random.default_rng(seed)
  # One-word populations spawn nothing: the same streams under both choices.
  if (params.word_choice == choices.PER_RUN
      and not population.is_single_word):
    population = word_choice_lib.draw_once(
        population, word_choice_lib.per_run_generator(rng))
  params = policy.check_contribution(params, population, engine_options,
                                     allow_no_guarantee)
  population.encode()
  if runner.prepare is not None:
    runner.prepare(population)
  if params.sampling_rate is not None:  # engines take it for Poisson runs
    engine_options = {**engine_options, "sampling_rate": params.sampling_rate}
  start = time.perf_counter()
  trie = grow(
      population, theta=params.theta, batch_size=params.batch_size, rng=rng,
      num_sub_rounds=params.num_sub_rounds,
      max_num_prefixes=params.max_num_prefixes, schedule=schedule,
      **engine_options)
  seconds = time.perf_counter() - start
  found = trie.heavy_hitters()
  return results.DiscoveryResult(
      heavy_hitters=found, params=params, trie=trie,
      engine=engine, seed=seed, seconds=seconds,
      notes=() if found or schedule is not None else (
          nothing_found(params, population.num_users),),
      guarantee=dataclasses.replace(mechanism.Guarantee.of(params),
                                    randomness=release.randomness(seed)))


def nothing_found(params: results.RunParams, num_users: int) -> str:
  """Why a run of ``params`` on ``num_users`` users found no word
  (:func:`triehh.theory.utility.nothing_found`): the users a round samples
  (``q n`` under Poisson sampling, else the batch) against theta."""
  per_round = (params.sampling_rate * num_users
               if params.sampling_rate is not None
               else min(params.batch_size, num_users))
  return utility.nothing_found(params.theta, per_round, num_users)


def check_schedule(schedule: Sequence[np.ndarray],
                   population: population_lib.Population) -> None:
  """Raises TypeError/ValueError naming ``schedule`` unless it is a sequence
  of rounds, each a 1-D sequence of user indices in ``[0, n)`` (whole
  numbers; a user may appear more than once). The population must list its
  users one by one."""
  validation.check_sequence("schedule", schedule)
  population.check_user_array("a fixed schedule")
  for i, users in enumerate(schedule):
    validation.check_indices(f"schedule[{i}] (the users of round {i + 1})",
                             users, population.num_users)
