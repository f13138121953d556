"""TrieHH as a mechanism: sampling and a vote threshold, no added noise
(Zhu, Kairouz, McMahan, Sun, Li; AISTATS 2020).

In one place, what makes it up:

* privacy objects: :class:`triehh.theory.mechanism.Target` (calibrate for
  ``(epsilon, delta)``), :class:`~triehh.theory.mechanism.Mechanism` (theta
  and its sampling given), or a number (the target epsilon);
* parameters: :class:`triehh.core.results.RunParams`, calibrated by
  :func:`triehh.theory.policy.resolve` (Poisson: the two-sided accountant,
  :mod:`triehh.theory.poisson`; fixed-size: Theorem 1 and Corollary 1,
  :mod:`triehh.theory.privacy`);
* accountant and DpEvent: :mod:`triehh.theory.dp_events`;
* engines: ``"fast"`` (:mod:`triehh.engines.fast`), ``"tff"``
  (:mod:`triehh.engines.tff`) and any registered engine
  (:func:`triehh.register_engine`); the Beam pipeline is
  :mod:`triehh.beam.protocol`;
* beyond one run: counts of the words found, passes and availability
  (:mod:`triehh.discovery.discover`), the only mechanism that takes them.
"""

from __future__ import annotations

import numpy as np

from triehh.core import population as population_lib
from triehh.core import results
from triehh.discovery import discover as discover_lib
from triehh.discovery import run as discovery_run
from triehh.mechanisms import protocol
from triehh.theory import dp_events
from triehh.theory import mechanism as privacy_lib
from triehh.theory import policy

NAME = "triehh"


class TrieHH(protocol.BaseMechanism):
  """TrieHH (module docstring)."""

  name = NAME
  # A number is the target epsilon (bool is refused by Target's check);
  # numpy's scalars are not subclasses of int, nor float32 of float.
  privacy_types = (privacy_lib.Target, privacy_lib.Mechanism, int, float,
                   np.floating, np.integer)
  summary = ("sampled users vote on the next character; prefixes with at "
             "least theta votes grow the trie (no added noise)")
  extras = frozenset({"counts", "passes", "availability"})

  def calibrate(self, privacy, population_size: int,
                shape: protocol.Shape) -> results.RunParams:
    """theta and the sampling for ``privacy`` at ``population_size``
    (:func:`triehh.theory.policy.resolve`); its sampling is chosen as
    :func:`triehh.discover` chooses it when not named."""
    privacy = privacy_lib.with_sampling(privacy_lib.of(privacy))
    return policy.resolve(population_size, shape.max_length, privacy,
                          single_word=shape.single_word,
                          delta_from_n=(not shape.declared
                                        and getattr(privacy, "delta", 1)
                                        is None))

  def guarantee(self, params: results.RunParams) -> privacy_lib.Guarantee:
    return privacy_lib.Guarantee.of(params)

  def dp_event(self, params: results.RunParams):
    return dp_events.run_event(params)

  def run(self, population: population_lib.Population,
          params: results.RunParams, rng, engine: str,
          **engine_options) -> results.DiscoveryResult:
    return discovery_run.run(population, params, seed=rng, engine=engine,
                             **engine_options)

  def release(self, user_words, privacy, request: protocol.Request):
    """TrieHH's own flow (:func:`triehh.discovery.discover.discover`):
    counts, passes and availability, a schedule, the deny list."""
    return discover_lib.discover(
        user_words, privacy, max_length=request.max_length,
        seed=request.seed, engine=request.engine,
        deny_list=request.deny_list, **request.extras,
        **request.engine_options)


MECHANISM = TrieHH()
