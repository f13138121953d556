"""Protected counts of published words: the estimator and its intervals.

The counting phase (``docs/counts.md``) releases noisy sums ``S_k`` over the
K published words and "other": the users of slot k sampled with probability
q, plus ``N(0, sigma^2)`` (:mod:`triehh.engines.counting`; its privacy in
:mod:`triehh.theory.counting`). From them:

* the estimated users of slot k: ``N_hat_k = S_k / q`` (unbiased);
* its share of the n users: ``p_hat_k = N_hat_k / n``;
* a confidence interval ``N_hat_k +- (z * sqrt(V_k) + 1 / (2 q))`` with
  ``V_k = c_k (1 - q) / q + sigma^2 / q^2``, the variance of ``N_hat_k``
  from the sampling (binomial) and the noise (at most: the discrete
  Gaussian's variance is below sigma^2), where ``c_k`` is estimated by
  ``N_hat_k`` clipped at 0. A normal approximation with a continuity
  correction: ``S_k`` is an integer (binomial plus discrete Gaussian), so
  the half-step ``1 / (2 q)`` of ``N_hat_k``'s lattice is added; without
  it the coverage at q = 0.1, sigma = 0.5 fell to 0.85 for a nominal 0.9.
  On the lattice the coverage is at least about nominal, not exactly it
  (q = 1, sigma = 2: ``P[|X| <= 3] = 0.93`` for a nominal 0.9).
* Users with several words: the target is the population frequency
  ``c_k = sum_i f_i(w_k)`` (``Population.true_weights``), and each user's
  one draw adds ``sum_i f_i (1 - f_i) <= c_k`` to the variance (times 1/q
  per sampled user, exactly ``V_k + sum_i f_i (1 - f_i)``): the interval
  adds its bound ``c_k``, so it is conservative there.

:func:`count_words` counts a given word list alone. The list must be
public (such as TrieHH's published output): its words are not protected,
only the users' contributions to their counts.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
from collections.abc import Sequence

import numpy as np
from scipy import special

from triehh.core import alphabet as alphabet_lib
from triehh.core import population as population_lib
from triehh.core import results
from triehh.core import validation
from triehh.engines import registry
from triehh.theory import counting as theory
from triehh.theory import coverage
from triehh.theory import limits
from triehh.theory import mechanism

DEFAULT_CONFIDENCE = 0.95
# The defaults of triehh.discover(counts=True), measured (docs/counts.md,
# "Defaults"): at epsilon = 4 on the default data (10^6 users), every user
# in the counting sample (q = 1) gives a median relative error of the top-50
# counts of 3e-4 against 2.5e-2 at q = 0.1 (sampling error dominates the
# noise), and a share of 0.1 for counting discovers more words than 0.25 or
# 0.5 (1305, 1256, 1028 words) at the same count error.
DEFAULT_COUNT_SHARE = 0.1
DEFAULT_COUNT_SAMPLE_RATE = 1.0
# The counting stream: SeedSequence(seed, spawn_key=(_COUNTING_STREAM,)),
# never one of the run generator's spawned children (keys 0, 1, ...).
_COUNTING_STREAM = 0x636F756E


@dataclasses.dataclass(frozen=True)
class Counting:
  """Protected counts asked of :func:`triehh.discover` (``counts=``).

  Attributes:
    share: the share of epsilon and delta spent on counting, in (0, 1)
      (default :data:`DEFAULT_COUNT_SHARE`).
    sample_rate: the probability that a user joins the counting sample, in
      (0, 1] (default :data:`DEFAULT_COUNT_SAMPLE_RATE`).
  """

  share: float = DEFAULT_COUNT_SHARE
  sample_rate: float = DEFAULT_COUNT_SAMPLE_RATE

  def __post_init__(self):
    object.__setattr__(self, "share", theory.check_count_share(self.share))
    object.__setattr__(self, "sample_rate",
                       theory.check_sample_rate(self.sample_rate))


@dataclasses.dataclass(frozen=True)
class CountTarget:
  """``(epsilon, delta)`` for counting a published word list
  (:func:`count_words`): the counting phase alone, Gaussian noise on a
  Poisson sample of the users, both directions.

  Attributes:
    epsilon: the target epsilon (> 0).
    delta: the target delta, in (0, 1); None: ``1/n^2`` of the
      population's size.
    sample_rate: q in (0, 1], the probability that a user joins the
      counting sample.
  """

  epsilon: float
  delta: float | None = None
  sample_rate: float = 1.0

  def __post_init__(self):
    object.__setattr__(self, "epsilon",
                       validation.check_positive("epsilon", self.epsilon))
    if self.delta is not None:
      object.__setattr__(self, "delta",
                         limits.check_delta("delta", self.delta))
    object.__setattr__(self, "sample_rate", theory.check_sample_rate(
        self.sample_rate, "sample_rate"))

  @classmethod
  def of(cls, privacy) -> "CountTarget":
    """``privacy`` as a CountTarget: a number is ``CountTarget(epsilon=
    privacy)``; anything else is a TypeError naming what to pass."""
    if isinstance(privacy, cls):
      return privacy
    if isinstance(privacy, numbers.Real) and not isinstance(privacy, bool):
      return cls(epsilon=privacy)
    raise TypeError("privacy must be a triehh.CountTarget (epsilon, delta, "
                    "sample_rate) or a number (the target epsilon), got "
                    f"{privacy!r:.80}")


@dataclasses.dataclass(frozen=True)
class _Release:
  """The noise, sampling and guarantee of released counts: the fields of
  :class:`triehh.theory.counting.Composition` that a
  :class:`~triehh.core.results.WordCounts` holds (counts of a given list
  have no discovery phase)."""

  noise_std: float
  sample_rate: float
  epsilon: float
  delta: float
  counting_epsilon: float
  counting_delta: float
  accounting: str
  discovery_epsilon: float | None = None
  discovery_delta: float | None = None


def counting_generator(seed: int | None) -> np.random.Generator:
  """The counting phase's generator for a run ``seed``: independent of the
  run's own stream and of the streams it spawns."""
  return np.random.default_rng(
      np.random.SeedSequence(seed, spawn_key=(_COUNTING_STREAM,)))


def estimate(noisy_sums: np.ndarray, sample_rate: float, noise_std: float,
             confidence: float = DEFAULT_CONFIDENCE, *,
             several_words: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """``(estimate, lower, upper)`` of the users per slot (module docstring):
  ``S / q`` and the normal-approximation interval of variance ``c (1 - q)
  / q + sigma^2 / q^2`` (plus ``c`` when users hold ``several_words``),
  ``c`` the estimate clipped at 0, widened by the continuity correction
  ``1 / (2 q)`` (the sums are integers)."""
  return _estimate(noisy_sums, theory.check_sample_rate(sample_rate),
                   noise_std, check_confidence(confidence),
                   several_words=several_words)


def _estimate(noisy_sums: np.ndarray, q: float, noise_std: float,
              confidence: float, *, several_words: bool
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """:func:`estimate` on a checked rate ``q`` and ``confidence``."""
  sums = np.asarray(noisy_sums, dtype=np.float64)
  est = sums / q
  c = np.maximum(est, 0.0)
  variance = c * (1.0 - q) / q + (noise_std / q) ** 2
  if several_words:
    variance = variance + c
  # The continuity correction: half the lattice step of S / q.
  half = (float(special.ndtri(0.5 + confidence / 2.0)) * np.sqrt(variance)
          + 0.5 / q)
  return est, est - half, est + half


def check_confidence(confidence: float) -> float:
  """``confidence`` in (0, 1), else a ValueError naming it."""
  return validation.check_probability("confidence", confidence)


def noisy_sums(population: population_lib.Population, words: Sequence[str],
               sample_rate: float, noise_std: float,
               rng: np.random.Generator,
               engine: str = registry.FAST) -> np.ndarray:
  """The counting phase's K + 1 noisy sums on ``population``: the count of
  ``engine`` (:attr:`triehh.engines.registry.Engine.count`; the fast
  engine's, :func:`triehh.engines.counting.noisy_sums`, for an engine
  without its own)."""
  return np.asarray(registry.get(engine).count(
      population, words, sample_rate, noise_std, rng), dtype=np.float64)


def _word_counts(sums: np.ndarray, words: Sequence[str], release, *, n: int,
                 confidence: float,
                 several_words: bool = False) -> results.WordCounts:
  """The :class:`~triehh.core.results.WordCounts` of released ``sums``
  (``release``: a :class:`_Release` or a :class:`triehh.theory.counting.
  Composition`, its sample rate and ``confidence`` checked by the
  caller)."""
  est, lower, upper = _estimate(sums, release.sample_rate, release.noise_std,
                                confidence, several_words=several_words)

  def floats(values) -> tuple[float, ...]:
    return tuple(float(v) for v in values)

  return results.WordCounts(
      words=tuple(words), estimate=floats(est[:-1]),
      lower=floats(lower[:-1]), upper=floats(upper[:-1]),
      other_estimate=float(est[-1]), other_lower=float(lower[-1]),
      other_upper=float(upper[-1]), noisy_sums=floats(sums), n=int(n),
      confidence=float(confidence), noise_std=float(release.noise_std),
      sample_rate=float(release.sample_rate),
      epsilon=float(release.epsilon), delta=float(release.delta),
      counting_epsilon=float(release.counting_epsilon),
      counting_delta=float(release.counting_delta),
      discovery_epsilon=release.discovery_epsilon,
      discovery_delta=release.discovery_delta,
      accounting=release.accounting)


def check_words(words: Sequence[str],
                population: population_lib.Population) -> tuple[str, ...]:
  """``words`` as a tuple, or a TypeError/ValueError naming ``words``: not
  a non-empty sequence of distinct non-empty strings of at most
  ``max_length`` characters of the population's alphabet."""
  if isinstance(words, (str, bytes)) or not isinstance(words, Sequence):
    raise TypeError(f"words must be a sequence of published words, got "
                    f"{words!r}")
  if not words:
    raise ValueError("words is empty: give the published word list to count")
  allowed = set(population.alphabet.characters)
  seen = set()
  for word in words:
    if not isinstance(word, str) or not word:
      raise ValueError(f"words must hold non-empty strings, got {word!r}")
    if word in seen:
      raise ValueError(f"words holds {word!r} twice: a published list has "
                       "distinct words")
    seen.add(word)
    if len(word) > population.max_length:
      raise ValueError(f"words holds {word!r}, longer than max_length="
                       f"{population.max_length}: TrieHH never publishes it")
    outside = sorted(set(word) - allowed)
    if outside:
      raise ValueError(f"words holds {word!r}, with {''.join(outside)!r} "
                       "outside the alphabet: TrieHH never publishes it")
  return tuple(words)


# The keywords count_words took before its privacy was typed.
_MOVED = ("epsilon", "delta", "sample_rate")


def _refuse_moved(function):
  """``function``, refusing a keyword of the untyped call with a TypeError
  naming the type that holds it now."""

  @functools.wraps(function)
  def checked(*args, **kwargs):
    for name in kwargs:
      if name in _MOVED:
        raise TypeError(
            f"count_words: {name}= is a field of triehh.CountTarget, e.g. "
            "count_words(users, words, triehh.CountTarget(epsilon=1.0)); "
            "see help(triehh.count_words)")
    return function(*args, **kwargs)

  return checked


@_refuse_moved
def count_words(users, words: Sequence[str], privacy, *,
                confidence: float = DEFAULT_CONFIDENCE,
                max_length: int = population_lib.DEFAULT_MAX_LENGTH,
                seed: int | None = None, engine: str = registry.FAST,
                alphabet=None, unknown: str | None = None,
                end_symbol: str = alphabet_lib.DEFAULT_END_SYMBOL
                ) -> results.WordCounts:
  """``(epsilon, delta)``-DP counts of a given PUBLIC word list.

  The list is not protected, only the users' contributions: give a list
  published before (TrieHH's ``result.words``) or fixed independently of
  the users' data; a list drawn from the data without a guarantee voids
  the guarantee. To discover and count within one budget use
  ``triehh.discover(..., counts=True)``.

  Args:
    users: what :func:`triehh.discover` takes (a list of words or
      word -> count mappings, or a :class:`~triehh.core.population.Population`).
    words: the published words (distinct, non-empty, at most
      ``max_length`` characters of the population's alphabet).
    privacy: a :class:`CountTarget`, the counting phase's guarantee (both
      directions; ``delta`` defaults to ``1/n^2``) and its sample rate, or
      a number, its epsilon.
    confidence: the intervals' nominal coverage.
    max_length, seed, engine, alphabet, unknown, end_symbol: as
      :func:`triehh.discover`.
  """
  registry.get(engine)
  validation.check_seed(seed)
  target = CountTarget.of(privacy)
  confidence = check_confidence(confidence)
  population = population_lib.as_population(
      users, max_length, **population_lib.encoding_options(
          alphabet, unknown, end_symbol))
  words = check_words(words, population)
  n = population.num_users
  delta = coverage.default_delta(n) if target.delta is None else target.delta
  sample_rate = target.sample_rate
  sigma = theory.calibrate_noise(target.epsilon, delta, sample_rate)
  sums = noisy_sums(population, words, sample_rate, sigma,
                    counting_generator(seed), engine)
  got = theory.gaussian_epsilon(sigma, sample_rate, delta)
  return _word_counts(
      sums, words, _Release(
          noise_std=sigma, sample_rate=sample_rate, epsilon=got, delta=delta,
          counting_epsilon=got, counting_delta=delta,
          accounting=theory.GAUSSIAN),
      n=n, confidence=confidence,
      several_words=not population.is_single_word)


def count_discovered(result: results.DiscoveryResult,
                     population: population_lib.Population,
                     total: mechanism.Target, split: theory.BudgetSplit, *,
                     sample_rate: float,
                     engine: str = registry.FAST) -> results.WordCounts:
  """Counts of ``result.words`` on the population the run saw, within the
  ``total`` target of both phases (its delta given).

  The noise is the smallest for which discovery (``result.params``)
  followed by counting is ``(total.epsilon, total.delta)``-DP by PLD
  composition (:func:`triehh.theory.counting.calibrate_total`), starting
  from the one calibrated for ``split``'s basic-composition share
  ``(counting_epsilon, counting_delta)``, which always meets it. Drawn
  from :func:`counting_generator` of the run's seed; intervals at
  :data:`DEFAULT_CONFIDENCE`.
  """
  if total.delta is None:
    raise ValueError("count_discovered needs the total delta: the "
                     "default 1/n^2 resolved (split_total)")
  words = result.words
  composed = theory.calibrate_total(result.params, total.epsilon,
                                    total.delta, sample_rate,
                                    split.counting_epsilon,
                                    split.counting_delta)
  sums = noisy_sums(population, words, sample_rate, composed.noise_std,
                    counting_generator(result.seed), engine)
  return _word_counts(sums, words, composed, n=population.num_users,
                      confidence=DEFAULT_CONFIDENCE,
                      several_words=not population.is_single_word)
