"""A run's privacy, typed: a target to calibrate for, or a mechanism given.

:class:`Target` asks for ``(epsilon, delta)`` under an adjacency; the
policy (:mod:`triehh.theory.policy`) calibrates theta and the sampling for
it. :class:`Mechanism` gives theta and the sampling (a Poisson rate, a
batch size, or gamma); the policy computes the guarantee they give. Both
carry the run's shape (how rounds sample, sub-rounds, a prefix cap, how
several-word users choose) and are checked once, when built (OpenDP's way):
a bad value raises at construction, naming the field, and nothing below
checks it again.

``adjacency`` names the neighbouring relation asked for
(:mod:`triehh.theory.adjacency`; None: what the accountant proves, which the
run's label names); ``population_size`` declares a public n to derive the
parameters from, instead of the population's own size (``docs/privacy.md``,
"Which neighbours").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from triehh.core import choices
from triehh.core import validation
from triehh.theory.adjacency import Adjacency


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Shape:
  """What a target and a mechanism share (see the subclasses)."""

  sampling: str | None = None
  adjacency: Adjacency | None = None
  population_size: int | None = None
  num_sub_rounds: int = 1
  max_num_prefixes: int | None = None
  word_choice: str = choices.PER_ROUND
  allow_no_guarantee: bool = False
  schedule: Sequence | None = None

  def _check_shape(self) -> None:
    if self.sampling is not None:
      choices.check_sampling(self.sampling)
    if self.adjacency is not None:
      self._set("adjacency", Adjacency.of(self.adjacency))
    if self.population_size is not None:
      self._set("population_size", validation.check_int(
          "population_size (the declared, public number of users)",
          self.population_size))
    self._set("num_sub_rounds", validation.check_int("num_sub_rounds",
                                                     self.num_sub_rounds))
    if self.max_num_prefixes is not None:
      self._set("max_num_prefixes", validation.check_int(
          "max_num_prefixes", self.max_num_prefixes))
    choices.check_word_choice(self.word_choice)
    if not isinstance(self.allow_no_guarantee, bool):
      raise TypeError("allow_no_guarantee must be True or False, got "
                      f"{self.allow_no_guarantee!r}")

  def _set(self, name: str, value) -> None:
    object.__setattr__(self, name, value)

  def _shape_options(self) -> dict:
    return dict(sampling=self.sampling,
                adjacency=None if self.adjacency is None
                else self.adjacency.value,
                population_size=self.population_size,
                num_sub_rounds=self.num_sub_rounds,
                max_num_prefixes=self.max_num_prefixes,
                word_choice=self.word_choice,
                allow_no_guarantee=self.allow_no_guarantee,
                schedule=self.schedule)


@dataclasses.dataclass(frozen=True)
class Target(_Shape):
  """``(epsilon, delta)`` to calibrate a run for.

  Attributes:
    epsilon: the target epsilon (> 0).
    delta: the target delta, in (0, 1); None: ``1/n^2``, for the declared
      ``population_size`` if any, else for the population's own size
      (then the parameters depend on |D|: ``REPLACE_SPECIAL`` only).
    theta: a vote threshold to keep (the rest is calibrated); None: chosen.
    sampling: ``"poisson"`` (two-sided accountant) or ``"fixed"`` (the
      paper's batch, Theorem 1); None: Poisson, except where the run needs
      fixed-size batches (passes, availability, a schedule).
    adjacency: the relation asked for (None: what the accountant proves).
    population_size: a declared, public n (None: the population's size).
    num_sub_rounds, max_num_prefixes, word_choice, allow_no_guarantee,
      schedule: the run's shape (as :func:`triehh.discover` documents).
  """

  epsilon: float
  delta: float | None = None
  theta: int | None = None

  def __post_init__(self):
    self._set("epsilon", validation.check_positive("epsilon", self.epsilon))
    if self.delta is not None:
      self._set("delta", validation.check_probability("delta", self.delta))
    if self.theta is not None:
      self._set("theta", validation.check_int("theta", self.theta))
    self._check_shape()

  def run_options(self) -> dict:
    """The keyword arguments of the runs below :func:`triehh.discover`."""
    return dict(epsilon=self.epsilon, delta=self.delta, theta=self.theta,
                gamma=None, batch_size=None, sampling_rate=None,
                **self._shape_options())


@dataclasses.dataclass(frozen=True)
class Mechanism(_Shape):
  """TrieHH with theta and its sampling given; the policy computes the
  guarantee they give.

  Attributes:
    theta: the vote threshold.
    sampling_rate: q, each user's probability of taking part in a round
      (Poisson sampling).
    batch_size: m, users per round (the expected number under Poisson
      sampling, ``q = m / n``).
    gamma: ``m = gamma sqrt(n)``.
    delta: the delta epsilon is reported at (None: ``1/n^2``; Poisson).
    Give exactly one of ``sampling_rate``, ``batch_size`` and ``gamma``
    (none with a ``schedule``). The shape fields are :class:`Target`'s.
  """

  theta: int
  sampling_rate: float | None = None
  batch_size: int | None = None
  gamma: float | None = None
  delta: float | None = None

  def __post_init__(self):
    self._set("theta", validation.check_int("theta", self.theta))
    given = [name for name in ("sampling_rate", "batch_size", "gamma")
             if getattr(self, name) is not None]
    if len(given) > 1:
      raise ValueError(f"give one of sampling_rate, batch_size and gamma, "
                       f"not {' and '.join(given)}")
    if not given and self.schedule is None:
      raise ValueError("give one of sampling_rate (Poisson), batch_size or "
                       "gamma with theta")
    if self.sampling_rate is not None:
      self._set("sampling_rate",
                choices.check_sampling_rate(self.sampling_rate))
      if self.sampling == choices.FIXED:
        raise ValueError("sampling_rate is for sampling='poisson'")
    if self.batch_size is not None:
      self._set("batch_size",
                validation.check_int("batch_size", self.batch_size))
    if self.gamma is not None:
      self._set("gamma", validation.check_positive("gamma", self.gamma))
    if self.delta is not None:
      self._set("delta", validation.check_probability("delta", self.delta))
    self._check_shape()

  def run_options(self) -> dict:
    """The keyword arguments of the runs below :func:`triehh.discover`."""
    return dict(epsilon=None, delta=self.delta, theta=self.theta,
                gamma=self.gamma, batch_size=self.batch_size,
                sampling_rate=self.sampling_rate, **self._shape_options())


def of(privacy) -> Target | Mechanism:
  """``privacy`` as a Target or a Mechanism: a number is ``Target(epsilon=
  privacy)``; anything else is a TypeError naming what to pass."""
  if isinstance(privacy, (Target, Mechanism)):
    return privacy
  if isinstance(privacy, (int, float)) and not isinstance(privacy, bool):
    return Target(epsilon=privacy)
  raise TypeError("privacy must be a triehh.Target (epsilon, delta, ...), a "
                  "triehh.Mechanism (theta and its sampling) or a number "
                  f"(the target epsilon), got {privacy!r}")
