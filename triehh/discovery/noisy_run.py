"""``triehh.discover`` with a :class:`~triehh.theory.mechanism.NoisyTarget`.

The noisy trie (``docs/noisy-trie.md``): its parameters calibrated for the
target (:func:`triehh.theory.noisy_trie.calibrate`), one run of the fast
simulation (:func:`triehh.engines.noisy.run`) or, with ``engine="tff"``, of
the TensorFlow Federated engine (:func:`triehh.engines.tff.noisy_engine.run`,
``noise="central"`` or ``"distributed"``), and the guarantee labelled as
every run's is: ``ADD_OR_REMOVE_ONE`` and ``REPLACE_SPECIAL`` when no
parameter depends on |D| (delta given, or a declared population size),
``REPLACE_SPECIAL`` only when delta is ``1/n^2`` of the population's own
size. The distributed noise splits its shares among the ``q n`` expected
clients, so it reads n too (the declared size, if any), and its guarantee
is the central Gaussian's accounting, labelled as such.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from triehh.core import population as population_lib
from triehh.discovery import deny_list as deny_list_lib
from triehh.engines import registry
from triehh.theory import coverage
from triehh.theory import mechanism


# The TFF engine's options for the noisy trie: its noise, where it runs.
TFF_OPTIONS = frozenset({"noise", "workers", "connect_timeout",
                         "rpc_timeout"})
CENTRAL, DISTRIBUTED = "central", "distributed"


def discover_noisy(user_words, target: mechanism.NoisyTarget, *,
                   max_length: int, seed: int | None, engine: str,
                   deny_list: Iterable[str] | None, **engine_options):
  """Calibrates and runs the noisy trie; returns the engine's
  :class:`~triehh.engines.noisy.NoisyTrieResult` with its ``params`` and
  ``guarantee`` (a :class:`~triehh.theory.mechanism.Guarantee`).

  ``engine="tff"`` takes ``noise`` (``"central"``, the default, or
  ``"distributed"``) and the TFF engine's ``workers``, ``connect_timeout``
  and ``rpc_timeout``; the fast engine takes no options.

  The alphabet is part of the public candidate set: the guarantee holds for
  an alphabet fixed before the data is seen (build the population with
  ``alphabet=``), not one read off the users' words."""
  from triehh.theory import noisy_trie  # pylint: disable=g-import-not-at-top
  noise = _checked_options(engine, engine_options)
  population = population_lib.as_population(user_words, max_length)
  population.check_public_alphabet(
      "the noisy trie", "Build the population with one, e.g. "
      "triehh.Population.from_user_words(words, alphabet=\"abcdefghijklmno"
      "pqrstuvwxyz'\"), and pass it to discover")
  if deny_list is not None:
    population = deny_list_lib.apply(population, deny_list)
  n = (population.num_users if target.population_size is None
       else target.population_size)
  delta = (coverage.default_delta(n) if target.delta is None
           else target.delta)
  params = noisy_trie.calibrate(
      noisy_trie.rounds_for(population.max_length, target.chars_per_level),
      target.epsilon, delta, false_positive_rate=target.false_positive_rate,
      chars_per_level=target.chars_per_level,
      noise_multipliers=target.noise_multipliers)
  guarantee = noisy_trie.guarantee(params, delta)
  if engine == registry.FAST:
    from triehh.engines import noisy  # pylint: disable=g-import-not-at-top
    result = noisy.run(population, params, rng=seed)
    return dataclasses.replace(result, params=params,
                               guarantee=_labelled(guarantee, target))
  from triehh.engines.tff import noisy_engine  # pylint: disable=g-import-not-at-top
  measurements = []
  result = noisy_engine.run(
      population, params, rng=seed, measurements=measurements,
      expected_clients=(max(1, round(params.sampling_rate * n))
                        if noise == DISTRIBUTED else None),
      **engine_options)
  guarantee = _labelled(guarantee, target, distributed=noise == DISTRIBUTED)
  if noise == DISTRIBUTED:
    guarantee = _distributed(guarantee, params.sigmas, measurements)
  return dataclasses.replace(result, params=params, guarantee=guarantee)


def _checked_options(engine: str, engine_options: dict) -> str:
  """The noise mode; ValueError for an engine or option the noisy trie
  does not run with."""
  if engine == registry.FAST:
    if engine_options:
      raise ValueError("the noisy trie's fast engine takes no engine "
                       f"options, got {', '.join(sorted(engine_options))}")
    return CENTRAL
  if engine != registry.TFF:
    raise ValueError(f"the noisy trie runs in the {registry.FAST!r} and "
                     f"{registry.TFF!r} engines only, got engine={engine!r}")
  unknown = set(engine_options) - TFF_OPTIONS
  if unknown:
    raise ValueError(f"the noisy trie's tff engine takes "
                     f"{', '.join(sorted(TFF_OPTIONS))}; got "
                     f"{', '.join(sorted(unknown))}")
  noise = engine_options.get("noise", CENTRAL)
  if noise not in (CENTRAL, DISTRIBUTED):
    raise ValueError(f"noise must be {CENTRAL!r} or {DISTRIBUTED!r}, got "
                     f"{noise!r}")
  return noise


_PUBLIC_ALPHABET = ("; the alphabet (part of the candidate set) is "
                    "treated as public: fix it before seeing the data")


def _labelled(guarantee: mechanism.Guarantee,
              target: mechanism.NoisyTarget, *,
              distributed: bool = False) -> mechanism.Guarantee:
  """The accountant's guarantee, said for where n came from
  (:func:`triehh.theory.coverage.add_or_remove`): delta's, and the
  distributed noise's split among the expected clients."""
  n_source = coverage.n_source_of(target.population_size is not None,
                                  target.delta is None or distributed)
  covers = guarantee.covers
  if n_source == coverage.N_FROM_DATA:
    reads = " and ".join(
        what for what, read in (("delta = 1/n^2", target.delta is None),
                                ("the noise's split among q n clients",
                                 distributed)) if read)
    covers = (covers.split(", for neighbours")[0] + ", for neighbours of "
              f"the same size ({reads} read n off the data)")
  return dataclasses.replace(
      guarantee, adjacencies=coverage.add_or_remove(n_source),
      n_source=n_source, covers=covers + _PUBLIC_ALPHABET)


DISTRIBUTED_ACCOUNTING = ("; distributed discrete Gaussian accounted as the "
                          "central Gaussian")


def _distributed(guarantee: mechanism.Guarantee, sigmas: tuple[float, ...],
                 measurements: list) -> mechanism.Guarantee:
  """The central Gaussian's guarantee, labelled for the distributed discrete
  Gaussian that ran (:mod:`triehh.engines.tff.noisy_process`): approximately
  that law, with the rounds' effective noise multiplier said."""
  from triehh.engines.tff import noisy_process  # pylint: disable=g-import-not-at-top
  multipliers = [noisy_process.effective_noise_multiplier(m)
                 for m in measurements]
  at = (f"{sigmas[0]:.4g}" if min(sigmas) == max(sigmas) else
        f"{min(sigmas):.4g} to {max(sigmas):.4g} (by round)")
  measured = (f"; the run's rounds had {min(multipliers):.4g} to "
              f"{max(multipliers):.4g} discrete Gaussian noise per unit of "
              "their rounded sensitivity" if multipliers else "")
  return dataclasses.replace(
      guarantee, accounting=guarantee.accounting + DISTRIBUTED_ACCOUNTING,
      covers=(guarantee.covers + f"; accounted at sigma = {at} as if "
              "the noise were N(0, sigma^2) on sums of sensitivity 1: the "
              "clients' discrete Gaussian shares (raised for the rounding's "
              "inflated sensitivity at the expected clients) sum to about "
              f"that law, not exactly it{measured}"))
