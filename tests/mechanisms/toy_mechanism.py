"""A toy mechanism: a one-shot Gaussian release over a public word list.

Everything a mechanism is, in this one module, and nothing elsewhere:
its privacy object (:class:`ToyTarget`), its parameters (:class:`ToyParams`,
sigma by dp_accounting's calibration of the Gaussian mechanism), its
guarantee and ``GaussianDpEvent``, its run on the fast engine (served
here) and its result (:class:`ToyResult`, a
:class:`~triehh.core.release.Release`). One line registers it
(``registry.register(MECHANISM)``); ``triehh.discover``, sweeps, records,
summaries and plots then take it as they take the built-in ones
(``toy_mechanism_test``).

The release: each public word's users (one word per user), plus
N(0, sigma^2) noise drawn with numpy's generator from the seed; the words
whose noisy count is at least ``threshold_sigmas * sigma`` are released,
the most counted first. A user holds one word, so adding or removing one
changes one count by 1: L2 sensitivity 1.
"""

from __future__ import annotations

import dataclasses
import math
import time

import dp_accounting
from dp_accounting import pld
import numpy as np

from triehh.core import population as population_lib
from triehh.core import release as release_lib
from triehh.engines import registry as engines
from triehh.mechanisms import protocol
from triehh.theory import coverage
from triehh.theory import mechanism as privacy_lib
from triehh.theory.adjacency import Adjacency

NAME = "toy_gaussian"
WORDS = ("the", "of", "and", "to", "a", "in", "is", "you", "that", "it")


@dataclasses.dataclass(frozen=True)
class ToyTarget:
  """The toy's privacy object: (epsilon, delta) and its public words.

  Attributes:
    epsilon: the target epsilon, > 0.
    delta: the target delta in (0, 1); None: 1/n^2 of the data's n.
    words: the public candidate words (fixed before the data is seen).
    threshold_sigmas: a word is released when its noisy count is at least
      this many sigmas.
  """

  epsilon: float
  delta: float | None = None
  words: tuple[str, ...] = WORDS
  threshold_sigmas: float = 3.0

  def __post_init__(self):
    if not (isinstance(self.epsilon, (int, float)) and self.epsilon > 0
            and math.isfinite(self.epsilon)):
      raise ValueError(f"epsilon must be a finite number > 0, got "
                       f"{self.epsilon!r}")
    if self.delta is not None and not 0 < self.delta < 1:
      raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
    if not self.words or len(set(self.words)) < len(self.words):
      raise ValueError("words must be distinct, and at least one")


@dataclasses.dataclass(frozen=True)
class ToyParams:
  """The toy's calibrated parameters."""

  epsilon: float
  delta: float
  sigma: float
  threshold: float
  words: tuple[str, ...]
  n_source: str


@dataclasses.dataclass(frozen=True)
class ToyResult:
  """A toy release: a :class:`~triehh.core.release.Release`."""

  words: tuple[str, ...]
  guarantee: privacy_lib.Guarantee
  params: ToyParams
  seconds: float
  per_round: tuple[release_lib.RoundStats, ...]
  unprotected: dict[str, float] | None = None
  mechanism: str = NAME


def noisy_counts(population: population_lib.Population, params: ToyParams,
                 rng) -> np.ndarray:
  """The fast engine's run of the toy: each public word's users plus
  N(0, sigma^2) noise (numpy's generator from ``rng``)."""
  index = {str(word): i for i, word in enumerate(population.vocabulary)}
  users = population.users_per_word
  counts = np.array([users[index[w]] if w in index else 0
                     for w in params.words], dtype=np.float64)
  return counts + np.random.default_rng(rng).normal(0.0, params.sigma,
                                                    counts.size)


class ToyMechanism(protocol.BaseMechanism):
  """The toy (module docstring)."""

  name = NAME
  privacy_types = (ToyTarget,)
  summary = "one-shot Gaussian counts of public words, thresholded"

  def population(self, user_words, request: protocol.Request
                 ) -> population_lib.Population:
    population = super().population(user_words, request)
    if not population.is_single_word:
      raise ValueError("the toy mechanism takes one word per user")
    return population

  def calibrate(self, privacy: ToyTarget, population_size: int,
                shape: protocol.Shape) -> ToyParams:
    delta = (coverage.default_delta(population_size)
             if privacy.delta is None else privacy.delta)
    sigma = dp_accounting.calibrate_dp_mechanism(
        pld.PLDAccountant, dp_accounting.GaussianDpEvent, privacy.epsilon,
        delta)
    n_source = coverage.n_source_of(shape.declared, privacy.delta is None)
    return ToyParams(privacy.epsilon, delta, sigma,
                     privacy.threshold_sigmas * sigma, privacy.words,
                     n_source)

  def guarantee(self, params: ToyParams) -> privacy_lib.Guarantee:
    adjacencies = ((Adjacency.REPLACE_SPECIAL,)
                   if params.n_source == coverage.N_FROM_DATA else
                   (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_SPECIAL))
    return privacy_lib.Guarantee(
        epsilon=params.epsilon, delta=params.delta, adjacencies=adjacencies,
        two_sided=True, accounting="Gaussian mechanism (dp_accounting PLD)",
        n_source=params.n_source,
        covers="the released words, both directions",
        public="the word list", trust="the server that adds the noise")

  def dp_event(self, params: ToyParams):
    return dp_accounting.GaussianDpEvent(params.sigma)

  def run(self, population: population_lib.Population, params: ToyParams,
          rng, engine: str, **engine_options) -> ToyResult:
    runner = engines.get(engine).runner(NAME)
    start = time.perf_counter()
    noisy = runner(population, params, rng, **engine_options)
    order = np.argsort(-noisy, kind="stable")
    words = tuple(params.words[i] for i in order
                  if noisy[i] >= params.threshold)
    seconds = time.perf_counter() - start
    return ToyResult(
        words=words, guarantee=self.guarantee(params), params=params,
        seconds=seconds,
        per_round=(release_lib.RoundStats(candidates=len(params.words),
                                          kept=len(words)),),
        unprotected={w: float(c) for w, c in zip(params.words, noisy)})


engines.serve(engines.FAST, NAME, noisy_counts)
MECHANISM = ToyMechanism()
