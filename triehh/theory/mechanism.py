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
import math
import numbers
from collections.abc import Mapping, Sequence

from triehh.core import choices
from triehh.core import validation
from triehh.theory import limits
from triehh.theory import noise_laws
from triehh.theory.adjacency import Adjacency
from triehh.theory.upload_budget import UploadBudget


def default_sampling(sampling: str | None, *, batch_size=None, gamma=None,
                     fixed_only: dict | None = None) -> str:
  """The run's sampling: the one place that decides its default.

  Poisson sampling, except fixed-size batches where the call names a batch
  (``batch_size`` or ``gamma``: the paper's parameters) or uses something
  only fixed-size batches run (``fixed_only``: name -> value, None when
  unused; passes, availability, a schedule). A ``sampling`` given is
  checked against those.
  """
  used = [name for name, value in (fixed_only or {}).items()
          if value is not None]
  if sampling is None:
    fixed = used or batch_size is not None or gamma is not None
    return choices.FIXED if fixed else choices.POISSON
  choices.check_sampling(sampling)
  if sampling == choices.POISSON and used:
    raise ValueError(f"{used[0]} runs fixed-size batches "
                     "(sampling='fixed'); Poisson sampling is not available "
                     "with it")
  return sampling


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
  allow_delta_above_1_over_n: bool = False

  def _check_shape(self) -> None:
    if self.sampling is not None:
      choices.check_sampling(self.sampling)
    if self.adjacency is not None:
      self._set("adjacency", Adjacency.of(self.adjacency))
    if self.population_size is not None:
      self._set("population_size", limits.check_users(
          "population_size (the declared, public number of users)",
          self.population_size))
    self._set("num_sub_rounds", validation.check_int("num_sub_rounds",
                                                     self.num_sub_rounds))
    if self.max_num_prefixes is not None:
      self._set("max_num_prefixes", validation.check_int(
          "max_num_prefixes", self.max_num_prefixes))
    choices.check_word_choice(self.word_choice)
    if self.schedule is not None:
      validation.check_sequence("schedule", self.schedule)
    if not isinstance(self.allow_no_guarantee, bool):
      raise TypeError("allow_no_guarantee must be True or False, got "
                      f"{self.allow_no_guarantee!r}")
    limits.check_opt_in(self.allow_delta_above_1_over_n)

  def _set(self, name: str, value) -> None:
    object.__setattr__(self, name, value)



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
    allow_delta_above_1_over_n: run a delta above ``1/n`` (n: the
      declared size, else the data's), which protects nobody, instead of
      refusing it; the guarantee then says so.
  """

  epsilon: float
  delta: float | None = None
  theta: int | None = None

  def __post_init__(self):
    self._set("epsilon", validation.check_positive("epsilon", self.epsilon))
    if self.delta is not None:
      self._set("delta", limits.check_delta("delta", self.delta))
    if self.theta is not None:
      self._set("theta", validation.check_int("theta", self.theta))
    self._check_shape()



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
      self._set("delta", limits.check_delta("delta", self.delta))
    self._check_shape()



@dataclasses.dataclass(frozen=True)
class NoisyTarget:
  """``(epsilon, delta)`` for the noisy trie (:mod:`triehh.theory.noisy_trie`,
  ``docs/noisy-trie.md``): Gaussian noise on each level's vote sums over a
  public candidate set, a threshold for a stated false-positive rate per
  candidate.

  Attributes:
    epsilon: the target epsilon (> 0).
    delta: the target delta; None: ``1/n^2`` of the declared
      ``population_size``, else of the population's size (then the
      parameters depend on |D|: ``REPLACE_SPECIAL`` only).
    false_positive_rate: alpha, the chance that a candidate no user votes
      for passes, per candidate and level.
    chars_per_level: k, characters per level (fewer levels, larger
      candidate sets).
    population_size: a declared, public n (None: the population's size).
    noise_multipliers: the first levels' noise over the others' (a level's
      sigma and threshold scaled by it; empty: the same every level),
      fixed before the data is seen; the calibration accounts for it.
    allow_delta_above_1_over_n: run a delta above ``1/n``, which protects
      nobody, instead of refusing it; the guarantee then says so.
    upload_budget: a client's upload budget
      (:class:`triehh.theory.upload_budget.UploadBudget`, bytes per run and
      per round): the planned noisy trie, its rounds shaped by the public
      frontier within the budget, its noise and thresholds chosen from
      n, L, the alphabet and the target before the data is read (the plan
      chooses the characters per level, the noise multipliers and the
      false-positive rates: give none of them with it); None: the classic
      noisy trie.
    adjacency: the neighbouring relation asked for (None: what the
      accountant proves, ADD_OR_REMOVE_ONE and REPLACE_SPECIAL);
      ``REPLACE_ONE`` (one user's word replaced by another) calibrates the
      noise for a vote that moves between two candidates, and then covers
      all three.
    noise_law: the server's noise in planned rounds: ``"gaussian"`` (the
      discrete Gaussian, (epsilon, delta)), ``"laplace"`` (the discrete
      Laplace, pure: (epsilon, 0); with an ``upload_budget`` only), or None
      (the default): the one the public prior finds more words with
      (``docs/noisy-trie.md``, "The noise's law").
  """

  epsilon: float
  delta: float | None = None
  false_positive_rate: float = 1e-5
  chars_per_level: int = 1
  population_size: int | None = None
  noise_multipliers: tuple[float, ...] = ()
  allow_delta_above_1_over_n: bool = False
  upload_budget: UploadBudget | None = None
  adjacency: Adjacency | None = None
  noise_law: str | None = None

  def __post_init__(self):
    object.__setattr__(self, "epsilon",
                       validation.check_positive("epsilon", self.epsilon))
    if self.adjacency is not None:
      object.__setattr__(self, "adjacency", Adjacency.of(self.adjacency))
    if self.delta is not None:
      object.__setattr__(self, "delta", limits.check_delta("delta",
                                                           self.delta))
    object.__setattr__(self, "false_positive_rate",
                       validation.check_probability(
                           "false_positive_rate", self.false_positive_rate,
                           "the chance a candidate with no vote passes"))
    object.__setattr__(self, "chars_per_level", validation.check_int(
        "chars_per_level", self.chars_per_level))
    if self.population_size is not None:
      object.__setattr__(self, "population_size", limits.check_users(
          "population_size (the declared, public number of users)",
          self.population_size))
    object.__setattr__(self, "noise_multipliers",
                       check_noise_multipliers(self.noise_multipliers))
    limits.check_opt_in(self.allow_delta_above_1_over_n)
    self._check_upload_budget()
    self._check_noise_law()

  def _check_noise_law(self) -> None:
    """None, or a law of ``noise_laws.NOISE_LAWS``; the Laplace with a
    budget only (the classic trie's noise is the Gaussian)."""
    law = self.noise_law
    if law is None:
      return
    if law not in noise_laws.NOISE_LAWS:
      raise ValueError(f"noise_law must be one of {noise_laws.NOISE_LAWS} "
                       f"or None, got {law!r:.40}")
    if law == noise_laws.LAPLACE and self.upload_budget is None:
      raise ValueError("noise_law='laplace' is for planned runs: give an "
                       "upload_budget (the classic noisy trie's noise is "
                       "the discrete Gaussian)")

  @property
  def replace_one(self) -> bool:
    """Whether ``REPLACE_ONE`` is asked for (the noise calibrated for it)."""
    return self.adjacency is Adjacency.REPLACE_ONE

  def _check_upload_budget(self) -> None:
    """An UploadBudget or None; with one, none of the settings the plan
    chooses."""
    budget = self.upload_budget
    if budget is None:
      return
    if not isinstance(budget, UploadBudget):
      raise TypeError(
          "upload_budget must be a triehh.UploadBudget (bytes_per_run, "
          f"bytes_per_round) or None, got {budget!r:.60}")
    given = [name for name, value, default in (
        ("chars_per_level", self.chars_per_level, 1),
        ("noise_multipliers", self.noise_multipliers, ()),
        ("false_positive_rate", self.false_positive_rate, 1e-5))
             if value != default]
    if given:
      raise ValueError(
          f"{' and '.join(given)} given with upload_budget: the budget's "
          "plan chooses the characters per round, the noise multipliers "
          "and the false-positive rates; give the budget alone")


def check_noise_multipliers(multipliers, num_levels: int | None = None
                            ) -> tuple[float, ...]:
  """The noise multipliers as a tuple of finite positive floats, at most
  one per round; ValueError naming the bad one."""
  bad = ValueError("noise_multipliers must be a sequence of positive "
                   f"numbers (one per first round), got {multipliers!r:.60}")
  if isinstance(multipliers, (str, bytes, Mapping)):
    raise bad
  try:
    items = list(multipliers)
  except TypeError:  # not iterable, or a 0-d array
    raise bad from None
  out = []
  for i, m in enumerate(items):
    value = validation.check_positive(f"noise_multipliers[{i}]", m)
    if not math.isfinite(value):
      raise ValueError(f"noise_multipliers[{i}] must be finite, got {m}")
    out.append(value)
  if num_levels is not None and len(out) > num_levels:
    raise ValueError(f"noise_multipliers has {len(out)} entries, more than "
                     f"the {num_levels} rounds accounted for")
  return tuple(out)


def with_sampling(privacy: Target | Mechanism,
                  fixed_only: dict | None = None) -> Target | Mechanism:
  """``privacy`` with its sampling named: :func:`default_sampling`'s
  choice where it is not, checked where it is (against its batch size or
  gamma, its schedule and ``fixed_only``)."""
  given = privacy if isinstance(privacy, Mechanism) else None
  sampling = default_sampling(
      privacy.sampling, batch_size=None if given is None else given.batch_size,
      gamma=None if given is None else given.gamma,
      fixed_only={**(fixed_only or {}), "schedule": privacy.schedule})
  if sampling == privacy.sampling:
    return privacy
  return dataclasses.replace(privacy, sampling=sampling)


_SHAPE_OPTIONS = ("sampling", "adjacency", "population_size",
                  "num_sub_rounds", "max_num_prefixes", "word_choice",
                  "allow_no_guarantee", "schedule",
                  "allow_delta_above_1_over_n")


def from_options(options) -> Target | Mechanism:
  """The Target (``epsilon`` given) or Mechanism (``theta`` with its
  sampling) of keyword-style options (a sweep cell's config, a driver's
  flags): ``epsilon``, ``delta``, ``theta``, ``gamma``, ``batch_size``,
  ``sampling_rate`` and the shape's fields, missing ones (or None) at their
  defaults."""
  shape = {name: options[name] for name in _SHAPE_OPTIONS
           if options.get(name) is not None}
  if options.get("epsilon") is not None:
    for name in ("gamma", "batch_size", "sampling_rate"):
      if options.get(name) is not None:
        raise ValueError(f"give either (epsilon, delta) or theta with "
                         f"{name}, not both")
    return Target(options["epsilon"], delta=options.get("delta"),
                  theta=options.get("theta"), **shape)
  if options.get("theta") is None:
    raise ValueError("give epsilon (and optionally delta), or theta with "
                     "sampling_rate, batch_size or gamma")
  return Mechanism(theta=options["theta"], delta=options.get("delta"),
                   **{name: options[name] for name in
                      ("sampling_rate", "batch_size", "gamma")
                      if options.get(name) is not None}, **shape)


def of(privacy) -> Target | Mechanism:
  """``privacy`` as TrieHH's Target or Mechanism: a number is
  ``Target(epsilon=privacy)``; anything else is a TypeError naming what to
  pass."""
  if isinstance(privacy, (Target, Mechanism)):
    return privacy
  if isinstance(privacy, numbers.Real) and not isinstance(privacy, bool):
    return Target(epsilon=privacy if isinstance(privacy, (int, float))
                  else float(privacy))  # numpy's float32, say
  raise TypeError("privacy must be a triehh.Target (epsilon, delta, ...), a "
                  "triehh.Mechanism (theta and its sampling) or a number "
                  f"(the target epsilon), got {privacy!r}")


# What TrieHH's guarantee takes as public, and whom it trusts: the server
# sees each round's vote sums (federated_sum, secure-aggregation compatible)
# and picks the sampled users; the sampling must be secret.
TRIEHH_PUBLIC = "the alphabet, the maximum word length L"
TRIEHH_TRUST = ("the server: it samples the users in secret and sees each "
                "round's vote sums (not who voted, under secure "
                "aggregation)")


@dataclasses.dataclass(frozen=True)
class Guarantee:
  """What a run's privacy guarantee says, typed.

  Attributes:
    epsilon, delta: the guarantee (``inf`` and 1 without one).
    adjacencies: the neighbouring relations it covers (empty without one).
    two_sided: whether both directions are proven (Poisson sampling), or
      only the one Theorem 1's proof covers.
    accounting: the proof it comes from (the run's label).
    n_source: where the n the parameters were derived from comes from:
      ``"declared"`` (public, the caller's), ``"data"`` (|D|: neighbours of
      equal size only) or ``"unused"``.
    covers: in words, which outputs it covers and for which neighbours.
    public: what the guarantee takes as public, fixed before the data is
      seen (the alphabet, a declared population size, a candidate list).
    trust: the trust model: who must be trusted with what for the
      guarantee to hold (the server that sums the votes, a shuffler).
    randomness: how the run drew its randomness, which the guarantee
      assumes secret (:func:`triehh.core.release.randomness`: fresh
      entropy, never recorded, or a simulation's seed); ``""`` where not
      said (a guarantee of parameters alone). Not compared: two runs of
      the same parameters have the same guarantee.
    caveat: what makes the guarantee weak though it holds, said with it
      (:meth:`describe`): a delta above ``1/n``, run only when the privacy
      object opts in (:func:`triehh.theory.limits.delta_above_1_over_n`);
      ``""``: none.
  """

  epsilon: float
  delta: float
  adjacencies: tuple[Adjacency, ...]
  two_sided: bool
  accounting: str
  n_source: str
  covers: str
  public: str = ""
  trust: str = ""
  randomness: str = dataclasses.field(default="", compare=False)
  caveat: str = ""

  @classmethod
  def of(cls, params) -> "Guarantee":
    """The guarantee of a run's :class:`~triehh.core.results.RunParams`."""
    if not hasattr(params, "adjacencies"):
      raise TypeError(
          "Guarantee.of takes a TrieHH run's RunParams (result.params), got "
          f"{type(params).__name__} (a noisy trie's result carries its "
          "guarantee: result.guarantee)")
    return cls(epsilon=params.epsilon, delta=params.delta,
               adjacencies=tuple(Adjacency.of(a)
                                 for a in params.adjacencies),
               two_sided=params.two_sided, accounting=params.accounting,
               n_source=params.n_source, covers=params.covers,
               public=TRIEHH_PUBLIC + (
                   "; the declared population size"
                   if params.n_source == "declared" else ""),
               trust=TRIEHH_TRUST,
               caveat=limits.delta_above_1_over_n(
                   params.delta, params.population_size or params.n)
               if params.has_guarantee else "")

  @property
  def neighboring_relations(self) -> tuple:
    """:attr:`adjacencies` as dp_accounting ``NeighboringRelation``s."""
    return tuple(a.neighboring_relation for a in self.adjacencies)

  def holds_for(self, adjacency) -> bool:
    """Whether neighbours under ``adjacency`` are covered."""
    return Adjacency.of(adjacency) in self.adjacencies

  def describe(self) -> str:
    """One line: ``(3.9995, 1e-08)-DP, both directions, for
    REPLACE_SPECIAL (n read off the data) [Poisson accountant (two-sided)]``."""
    if not self.adjacencies:
      return f"no differential privacy guarantee [{self.accounting}]"
    sides = "both directions" if self.two_sided else "one direction"
    n = {"data": "n read off the data", "declared": "n declared public",
         "unused": "parameters free of n"}.get(self.n_source, "n not recorded")
    names = ", ".join(a.value for a in self.adjacencies)
    caveat = f"; WEAK: {self.caveat}" if self.caveat else ""
    return (f"({self.epsilon:.6g}, {self.delta:.3g})-DP, {sides}, for "
            f"{names} ({n}) [{self.accounting}]{caveat}")

