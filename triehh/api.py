"""The public entry point: ``triehh.discover``."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from triehh.engines import fast as fast_engine
from triehh import population as population_lib
from triehh.theory import privacy
from triehh import results

_ENGINES: dict[str, Callable[..., object]] = {"fast": fast_engine.run}
# Per engine, work on the population to do before the timed run.
_PREPARE: dict[str, Callable[[population_lib.Population], object]] = {
    "fast": fast_engine.prepare}

CAP_NOTE = (" Theorem 1 is proved without a prefix cap; with max_num_prefixes "
            "the kept set also depends on vote ranks.")


def register_engine(
    name: str, run: Callable[..., object],
    prepare: Callable[[population_lib.Population], object] | None = None
) -> None:
  """Makes ``engine=name`` available to :func:`discover`.

  ``run`` has the signature of :func:`triehh.fast_engine.run`; ``prepare``,
  if given, builds what the engine caches per population, before the run's
  clock starts.
  """
  _ENGINES[name] = run
  if prepare is not None:
    _PREPARE[name] = prepare


def engine_names() -> list[str]:
  _load_optional_engines()
  return sorted(_ENGINES)


_OPTIONAL_ENGINE_ERRORS: dict[str, ImportError] = {}


def _load_optional_engines() -> None:
  if "tff" not in _ENGINES and "tff" not in _OPTIONAL_ENGINE_ERRORS:
    try:
      from triehh.engines.tff import engine as tff_engine
    except ImportError as err:
      _OPTIONAL_ENGINE_ERRORS["tff"] = err
    else:
      register_engine("tff", tff_engine.run)


# Re-exported for callers of the former location.
as_population = population_lib.as_population


def resolve_params(n: int, max_length: int, *, epsilon: float | None = None,
                   delta: float | None = None, theta: int | None = None,
                   gamma: float | None = None, batch_size: int | None = None,
                   num_sub_rounds: int = 1,
                   max_num_prefixes: int | None = None,
                   allow_no_guarantee: bool = False) -> results.RunParams:
  """Turns either ``(epsilon, delta)`` or ``theta`` with ``gamma``/``batch_size``
  into run parameters with their Theorem 1 guarantee.

  ``delta`` defaults to ``1/n^2``. Parameters outside Theorem 1 raise
  ``ValueError`` unless ``allow_no_guarantee`` (then epsilon is ``inf``).
  """
  levels = max_length + 1
  root = math.sqrt(n)
  if max_num_prefixes is not None and max_num_prefixes < 1:
    raise ValueError(f"max_num_prefixes must be >= 1, got {max_num_prefixes}")
  common = dict(n=n, max_length=max_length, levels=levels,
                num_sub_rounds=num_sub_rounds,
                max_num_prefixes=max_num_prefixes)
  cap_note = CAP_NOTE if max_num_prefixes is not None else ""
  if theta is None:
    if gamma is not None or batch_size is not None:
      raise ValueError("gamma/batch_size need theta too")
    if epsilon is None:
      raise ValueError("give epsilon (and optionally delta), or theta with "
                       "gamma or batch_size")
    target_delta = 1.0 / n**2 if delta is None else delta
    cal = privacy.calibrate(n, levels, epsilon, target_delta)
    return results.RunParams(
        theta=cal.theta, gamma=cal.effective_gamma, batch_size=cal.batch_size,
        epsilon=cal.epsilon, delta=cal.delta, target_epsilon=float(epsilon),
        target_delta=float(target_delta),
        guarantee=(f"Corollary 1 calibration for L={levels} levels; "
                   f"epsilon, delta from Theorem 1 at m={cal.batch_size}."
                   + cap_note), **common)
  if epsilon is not None or delta is not None:
    raise ValueError("give either (epsilon, delta) or theta with gamma/"
                     "batch_size, not both")
  if (gamma is None) == (batch_size is None):
    raise ValueError("with theta, give exactly one of gamma and batch_size")
  if batch_size is None:
    batch_size = math.floor(gamma * root)
  if not 1 <= batch_size <= n:
    raise ValueError(f"batch size {batch_size} must be in [1, n={n}]")
  used_gamma = batch_size / root
  try:
    eps, dlt = privacy.guarantee(n, levels, theta, used_gamma)
    note = f"Theorem 1 for L={levels} levels." + cap_note
  except ValueError as err:
    if not allow_no_guarantee:
      raise ValueError(
          f"{err}. Pass allow_no_guarantee=True (--allow_no_guarantee) to run "
          "without a privacy guarantee") from None
    eps, dlt = math.inf, 1.0
    note = f"no differential privacy guarantee: {err}"
  return results.RunParams(theta=int(theta), gamma=used_gamma,
                           batch_size=int(batch_size), epsilon=eps, delta=dlt,
                           guarantee=note, **common)


def _check_contribution(params: results.RunParams,
                        population: population_lib.Population,
                        engine_options: dict,
                        allow_no_guarantee: bool) -> results.RunParams:
  """Engine option ``max_user_contribution`` > 1 (several-word users) lets a
  user cast that many votes per round: outside Theorem 1."""
  contribution = engine_options.get("max_user_contribution")
  if contribution is None or contribution <= 1 or population.is_single_word:
    return params
  problem = (f"max_user_contribution={contribution} lets a user cast up to "
             f"{contribution} votes per round, and Theorem 1 covers one vote "
             "per user per round")
  if not allow_no_guarantee:
    raise ValueError(f"{problem}. Pass allow_no_guarantee=True to run "
                     "without a privacy guarantee")
  return dataclasses.replace(
      params, epsilon=math.inf, delta=1.0,
      guarantee=f"no differential privacy guarantee: {problem}.")


def discover(user_words, *, epsilon: float | None = None,
             delta: float | None = None,
             max_length: int = population_lib.DEFAULT_MAX_LENGTH,
             seed: int | None = 0, engine: str = "fast",
             theta: int | None = None, gamma: float | None = None,
             batch_size: int | None = None, num_sub_rounds: int = 1,
             max_num_prefixes: int | None = None,
             allow_no_guarantee: bool = False,
             schedule: Sequence[np.ndarray] | None = None,
             alphabet=None, unknown: str | None = None,
             **engine_options) -> results.DiscoveryResult:
  """Discovers heavy hitters with TrieHH.

  Args:
    user_words: one entry per user, a ``str`` (the user's word) or a mapping
      word -> count (the user's words), or a :class:`triehh.Population`.
    epsilon, delta: the target privacy; theta and the batch size come from
      Corollary 1 (``delta`` defaults to ``1/n^2``).
    max_length: L, the maximum characters per word (L + 1 trie levels).
    seed: seed of the ``numpy.random.Generator`` (same seed, same result).
    engine: ``"fast"`` (numpy simulation) or ``"tff"`` (TensorFlow
      Federated computations), or any registered engine.
    theta, gamma, batch_size: give theta and one of the others instead of
      ``(epsilon, delta)``; the guarantee is then computed by Theorem 1.
    num_sub_rounds: batches per round whose votes are summed.
    max_num_prefixes: keep at most this many extensions per round.
    allow_no_guarantee: run parameters outside Theorem 1 anyway.
    schedule: fixed user indices per round instead of random sampling.
    alphabet, unknown: encoding options when ``user_words`` is not a
      Population (see :mod:`triehh.population`).
    **engine_options: passed to the engine (e.g. TFF workers).

  Returns:
    A :class:`~triehh.results.DiscoveryResult`.
  """
  if engine not in _ENGINES:  # import TensorFlow only when asked for
    _load_optional_engines()
  if engine in _OPTIONAL_ENGINE_ERRORS:
    raise ValueError(
        f"engine {engine!r} could not be loaded "
        f"({_OPTIONAL_ENGINE_ERRORS[engine]}); it needs TensorFlow Federated: "
        "install the project's requirements.txt")
  if engine not in _ENGINES:
    raise ValueError(f"unknown engine {engine!r}; available: "
                     f"{sorted(_ENGINES)}")
  options = {}
  if alphabet is not None:
    options["alphabet"] = alphabet
  if unknown is not None:
    options["unknown"] = unknown
  population = population_lib.as_population(user_words, max_length,
                                            **options)
  params = resolve_params(
      population.num_users, max_length, epsilon=epsilon, delta=delta,
      theta=theta, gamma=gamma, batch_size=batch_size,
      num_sub_rounds=num_sub_rounds, max_num_prefixes=max_num_prefixes,
      allow_no_guarantee=allow_no_guarantee)
  params = _check_contribution(params, population, engine_options,
                               allow_no_guarantee)
  population.encode()
  if engine in _PREPARE:
    _PREPARE[engine](population)
  rng = np.random.default_rng(seed)
  start = time.perf_counter()
  trie = _ENGINES[engine](
      population, theta=params.theta, batch_size=params.batch_size, rng=rng,
      num_sub_rounds=num_sub_rounds, max_num_prefixes=max_num_prefixes,
      schedule=schedule, **engine_options)
  seconds = time.perf_counter() - start
  return results.DiscoveryResult(
      heavy_hitters=trie.heavy_hitters(), params=params, trie=trie,
      engine=engine, seed=seed, seconds=seconds)
