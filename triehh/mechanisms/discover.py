"""``triehh.discover``: any mechanism, asked for by its privacy object.

One flow for every mechanism: the privacy object names the mechanism
(:func:`triehh.mechanisms.registry.for_privacy`), the engine is looked up
in the engine registry and must serve it
(:meth:`triehh.engines.registry.Engine.runner`), and the mechanism's
``release`` builds the population, calibrates and runs
(:mod:`triehh.mechanisms.protocol`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from triehh.core import population as population_lib
from triehh.core import release as release_lib
from triehh.core import validation
from triehh.engines import registry as engines
from triehh.mechanisms import protocol
from triehh.mechanisms import registry
from triehh.theory import mechanism as mechanism_lib


# Long function: its docstring documents its ten arguments; the body is
# short.
def discover(user_words, privacy=None, *,
             max_length: int = population_lib.DEFAULT_MAX_LENGTH,
             seed: int | None = None, engine: str | None = None,
             deny_list: Iterable[str] | None = None,
             counts=False, passes=None, availability=None,
             **engine_options) -> release_lib.Release:
  """Discovers heavy hitters with the mechanism ``privacy`` asks for.

  Args:
    user_words: one entry per user, a ``str`` (the user's word) or a mapping
      word -> count (the user's words), or a :class:`triehh.Population`
      (build one for another alphabet, unknown-character handling or end
      symbol; the noisy trie needs its alphabet public).
    privacy: the privacy object of a mechanism (:mod:`triehh.mechanisms`):
      :class:`triehh.Target` or :class:`triehh.Mechanism` (TrieHH; a
      number is ``Target(epsilon=number)``), :class:`triehh.NoisyTarget`
      (the noisy trie), :class:`triehh.PartitionSelectionTarget`,
      :class:`triehh.SFPTarget`, :class:`triehh.IBLTTarget`, or one you
      registered. Each is checked when built and carries the run's shape.
    max_length: L, the maximum characters per word.
    seed: None (the default): fresh entropy, numpy's ``SeedSequence()``
      from the operating system (128 bits), kept nowhere, so the
      guarantee, which is over the run's randomness, holds. A whole number
      >= 0 is for simulations that ask for one (same seed, same result):
      whoever knows it can undo the noise, so the run protects nothing
      (``docs/privacy.md``). The result's ``guarantee.randomness`` says
      which (:func:`triehh.core.release.randomness`).
    engine: a registered engine that serves the mechanism
      (:func:`triehh.engine_names`); None: the mechanism's default.
    deny_list: words whose users abstain, or pick among their other words.
    counts, passes, availability: TrieHH only (a
      :class:`triehh.Counting`, :class:`triehh.Passes`,
      :class:`triehh.OnlineUsers`; see
      :func:`triehh.discovery.discover.discover`).
    **engine_options: passed to the engine (e.g. TFF workers).

  Returns:
    A :class:`~triehh.core.release.Release`: the mechanism's own result
    type (TrieHH's :class:`~triehh.core.results.DiscoveryResult`, ...),
    each with ``words``, ``guarantee``, ``params``, ``seconds``,
    ``per_round`` and ``unprotected``.
  """
  check_moved(privacy, engine_options)
  validation.check_seed(seed)
  mechanism = registry.for_privacy(privacy)
  engine = mechanism.default_engine if engine is None else engine
  engines.get(engine).runner(mechanism.name)  # fails before any work
  extras = {name: value for name, value in (
      ("counts", counts), ("passes", passes), ("availability", availability))
            if value is not None and value is not False}
  request = protocol.Request(
      max_length=max_length, seed=seed, engine=engine, deny_list=deny_list,
      extras=extras, engine_options=engine_options)
  return said_randomness(mechanism.release(user_words, privacy, request),
                         seed)


def said_randomness(result, seed: int | None):
  """``result`` with its guarantee saying how the run drew its randomness
  (``randomness``), where its mechanism left that unsaid and the guarantee
  is a field of the result (the noisy trie's, a registered mechanism's)."""
  guarantee = getattr(result, "guarantee", None)
  if (not isinstance(guarantee, mechanism_lib.Guarantee)
      or guarantee.randomness or not dataclasses.is_dataclass(result)
      or "guarantee" not in {f.name for f in dataclasses.fields(result)}):
    return result
  return dataclasses.replace(result, guarantee=dataclasses.replace(
      guarantee, randomness=release_lib.randomness(seed)))


# The keywords discover took before its privacy was typed, and the type
# that holds each now.
_MOVED = {
    **dict.fromkeys(("epsilon", "delta", "theta", "gamma", "batch_size",
                     "sampling_rate", "sampling", "num_sub_rounds",
                     "max_num_prefixes", "word_choice", "allow_no_guarantee",
                     "schedule", "adjacency", "population_size"),
                    "triehh.Target or triehh.Mechanism"),
    "count_share": "triehh.Counting", "count_sample_rate": "triehh.Counting",
    "num_passes": "triehh.Passes", "composition": "triehh.Passes",
    "calibrate_to": "triehh.OnlineUsers",
    **dict.fromkeys(("alphabet", "unknown", "end_symbol"),
                    "triehh.Population (build one and pass it)"),
}


def check_moved(privacy, engine_options: dict) -> None:
  """A TypeError naming the type that holds a keyword of the untyped call,
  or a missing privacy."""
  for name in engine_options:
    if name in _MOVED:
      holder = _MOVED[name].split(" or ")[0].split(" (")[0]
      raise TypeError(
          f"discover: {name}= is a field of {_MOVED[name]}, e.g. "
          f"discover(users, {holder}(...)); see help(triehh.discover)")
  if privacy is None:
    raise TypeError("discover needs its privacy: a triehh.Target (epsilon, "
                    "delta, ...), a triehh.Mechanism (theta and its sampling)"
                    ", another mechanism's privacy object (a triehh."
                    "NoisyTarget, ...) or a number (the target epsilon)")
