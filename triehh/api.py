"""The public entry point: ``triehh.discover``.

A thin facade: it turns the input into a :class:`~triehh.population.Population`
(:func:`triehh.population.as_population`), the privacy arguments into run
parameters (:mod:`triehh.policy`), draws each user's word once under
``word_choice="per_run"`` (:mod:`triehh.word_choice`), looks the engine up by
name (:mod:`triehh.engines.registry`) and times its run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from triehh import population as population_lib
from triehh import policy
from triehh import results
from triehh import trie as trie_lib
from triehh import word_choice as word_choice_lib
from triehh.engines import registry

# Re-exported for callers of their former location.
as_population = population_lib.as_population
resolve_params = policy.resolve_params


def register_engine(
    name: str, run: Callable[..., trie_lib.Trie],
    prepare: Callable[[population_lib.Population], object] | None = None
) -> None:
  """Makes ``engine=name`` available to :func:`discover`.

  ``run`` has the signature of :func:`triehh.engines.fast.run`; ``prepare``,
  if given, builds what the engine caches per population, before the run's
  clock starts.
  """
  registry.register(name, run, prepare)


def engine_names() -> list[str]:
  """The names :func:`discover` accepts as ``engine`` (none is imported)."""
  return registry.names()


def discover(user_words, *, epsilon: float | None = None,
             delta: float | None = None,
             max_length: int = population_lib.DEFAULT_MAX_LENGTH,
             seed: int | None = 0, engine: str = "fast",
             theta: int | None = None, gamma: float | None = None,
             batch_size: int | None = None, num_sub_rounds: int = 1,
             max_num_prefixes: int | None = None,
             allow_no_guarantee: bool = False,
             word_choice: str = word_choice_lib.PER_ROUND,
             schedule: Sequence[np.ndarray] | None = None,
             alphabet=None, unknown: str | None = None,
             **engine_options) -> results.DiscoveryResult:
  """Discovers heavy hitters with TrieHH.

  Args:
    user_words: one entry per user, a ``str`` (the user's word) or a mapping
      word -> count (the user's words), or a :class:`triehh.Population`.
    epsilon, delta: the target privacy; theta and the batch size come from
      Corollary 1 (``delta`` defaults to ``1/n^2``). It covers the set of
      discovered words and prefixes, not their vote counts
      (``result.unprotected``).
    max_length: L, the maximum characters per word (L + 1 trie levels).
    seed: seed of the ``numpy.random.Generator`` (same seed, same result).
    engine: ``"fast"`` (numpy simulation) or ``"tff"`` (TensorFlow
      Federated computations), or any registered engine.
    theta, gamma, batch_size: give theta and one of the others instead of
      ``(epsilon, delta)``; the guarantee is then computed by Theorem 1.
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
      :mod:`triehh.word_choice`.
    schedule: fixed user indices per round instead of random sampling.
    alphabet, unknown: encoding options when ``user_words`` is not a
      Population (see :mod:`triehh.population`).
    **engine_options: passed to the engine (e.g. TFF workers).

  Returns:
    A :class:`~triehh.results.DiscoveryResult`.
  """
  runner = registry.get(engine)  # fails before any work on the input
  options = {}
  if alphabet is not None:
    options["alphabet"] = alphabet
  if unknown is not None:
    options["unknown"] = unknown
  population = population_lib.as_population(user_words, max_length,
                                            **options)
  params = policy.resolve_params(
      population.num_users, max_length, epsilon=epsilon, delta=delta,
      theta=theta, gamma=gamma, batch_size=batch_size,
      num_sub_rounds=num_sub_rounds, max_num_prefixes=max_num_prefixes,
      allow_no_guarantee=allow_no_guarantee, word_choice=word_choice,
      single_word=population.is_single_word)
  rng = np.random.default_rng(seed)
  # One-word populations spawn nothing: the same streams under both choices.
  if word_choice == word_choice_lib.PER_RUN and not population.is_single_word:
    population = word_choice_lib.draw_once(
        population, word_choice_lib.per_run_generator(rng))
  params = policy.check_contribution(params, population, engine_options,
                                     allow_no_guarantee)
  population.encode()
  if runner.prepare is not None:
    runner.prepare(population)
  start = time.perf_counter()
  trie = runner.run(
      population, theta=params.theta, batch_size=params.batch_size, rng=rng,
      num_sub_rounds=num_sub_rounds, max_num_prefixes=max_num_prefixes,
      schedule=schedule, **engine_options)
  seconds = time.perf_counter() - start
  return results.DiscoveryResult(
      heavy_hitters=trie.heavy_hitters(), params=params, trie=trie,
      engine=engine, seed=seed, seconds=seconds)
