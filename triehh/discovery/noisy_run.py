"""``triehh.discover`` with a :class:`~triehh.theory.mechanism.NoisyTarget`.

The noisy trie (``docs/noisy-trie.md``): its parameters calibrated for the
target (:func:`triehh.theory.noisy_trie.calibrate`), one run of the fast
simulation (:func:`triehh.engines.noisy.run`), and the guarantee labelled
as every run's is: ``ADD_OR_REMOVE_ONE`` and ``REPLACE_SPECIAL`` when no
parameter depends on |D| (delta given, or a declared population size),
``REPLACE_SPECIAL`` only when delta is ``1/n^2`` of the population's own
size.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from triehh.core import population as population_lib
from triehh.discovery import deny_list as deny_list_lib
from triehh.engines import registry
from triehh.theory import coverage
from triehh.theory import mechanism


def discover_noisy(user_words, target: mechanism.NoisyTarget, *,
                   max_length: int, seed: int | None, engine: str,
                   deny_list: Iterable[str] | None, **engine_options):
  """Calibrates and runs the noisy trie; returns the engine's
  :class:`~triehh.engines.noisy.NoisyTrieResult` with its ``params`` and
  ``guarantee`` (a :class:`~triehh.theory.mechanism.Guarantee`).

  The alphabet is part of the public candidate set: the guarantee holds for
  an alphabet fixed before the data is seen (build the population with
  ``alphabet=``), not one read off the users' words."""
  from triehh.engines import noisy  # pylint: disable=g-import-not-at-top
  from triehh.theory import noisy_trie  # pylint: disable=g-import-not-at-top
  if engine_options:
    raise ValueError("the noisy trie takes no engine options, got "
                     f"{', '.join(sorted(engine_options))}")
  if engine != registry.FAST:
    raise ValueError(f"the noisy trie runs in the {registry.FAST!r} engine "
                     f"only, got engine={engine!r}")
  population = population_lib.as_population(user_words, max_length)
  if deny_list is not None:
    population = deny_list_lib.apply(population, deny_list)
  n = (population.num_users if target.population_size is None
       else target.population_size)
  delta = (coverage.default_delta(n) if target.delta is None
           else target.delta)
  params = noisy_trie.calibrate(
      noisy_trie.rounds_for(population.max_length, target.chars_per_level),
      target.epsilon, delta, false_positive_rate=target.false_positive_rate,
      chars_per_level=target.chars_per_level)
  result = noisy.run(population, params, rng=seed)
  return dataclasses.replace(result, params=params,
                             guarantee=_labelled(noisy_trie.guarantee(
                                 params, delta), target))


_PUBLIC_ALPHABET = ("; the alphabet (part of the candidate set) is "
                    "treated as public: fix it before seeing the data")


def _labelled(guarantee: mechanism.Guarantee,
              target: mechanism.NoisyTarget) -> mechanism.Guarantee:
  """The accountant's guarantee, said for where delta's n came from
  (:func:`triehh.theory.coverage.add_or_remove`)."""
  n_source = coverage.n_source_of(target.population_size is not None,
                                  target.delta is None)
  covers = guarantee.covers
  if n_source == coverage.N_FROM_DATA:
    covers = (covers.split(", for neighbours")[0] + ", for neighbours of "
              "the same size (delta = 1/n^2 read n off the data)")
  return dataclasses.replace(
      guarantee, adjacencies=coverage.add_or_remove(n_source),
      n_source=n_source, covers=covers + _PUBLIC_ALPHABET)
