"""Differentially private partition selection of the words users hold.

The field's central baseline for finding the words of a population under
differential privacy: a trusted server sees every user's raw words and
releases those held by enough users, with noise. :func:`select_words` runs
the partition selection of pipeline_dp (OpenMined and Google's
``pipeline-dp``, over Google's C++ library through ``python-dp``), on its
``LocalBackend`` (one process, no Beam or Spark):
``pipeline_dp.DPEngine(NaiveBudgetAccountant(epsilon, delta),
LocalBackend()).select_partitions(...)``, each word a partition and each
user a privacy unit. Its strategies (:data:`STRATEGIES`):

* ``"truncated_geometric"``: the optimal partition selection of Desfontaines
  et al. (PoPETs 2022), a word kept with a probability that grows with its
  user count.
* ``"laplace_thresholding"`` and ``"gaussian_thresholding"``: a word kept
  when its user count plus Laplace (Gaussian) noise passes a threshold.

Users. One word per user: the user's word (``max_partitions_contributed`` is
then best left at 1). Several words per user: the user's distinct words, at
most ``max_partitions_contributed`` of them chosen uniformly at random by a
``numpy.random.Generator(seed)`` (here, so that the choice is reproducible);
pipeline_dp's own contribution bounding still runs on the rows (a no-op on
them) so that the bound is the library's, not only ours. A population given
by word frequencies (:meth:`Population.from_word_frequencies`) gets one row
per user all the same. 10^6 users of the English population take about 5 s
and 0.4 GB at peak besides the population (rows as Python tuples, and
pipeline_dp's grouping of them); 10^5, about 0.6 s.

Privacy. ``(epsilon, delta)``-DP for one user added or removed (adjacency
``ADD_OR_REMOVE_ONE`` of :class:`triehh.theory.adjacency.Adjacency`,
user-level: a user counts towards at most ``max_partitions_contributed``
words), both directions (the definition is symmetric), central: the server
sees raw strings, unlike TrieHH's voting clients. A user whose words become
the empty word gives no row, as a removed user (``REPLACE_SPECIAL``).
``delta`` None is ``1/n^2`` with n read off the data (``params.n_source ==
"data"``): then, as for TrieHH, only neighbours of the same size are
covered (``REPLACE_SPECIAL``; :func:`triehh.theory.coverage.add_or_remove`
gives the relations); with a declared, public ``population_size`` it is
``1/N^2`` of that N and ``ADD_OR_REMOVE_ONE`` is covered again. The
target is a :class:`PartitionSelectionTarget`, checked when built; the
result is a :class:`triehh.core.release.Release` whose ``guarantee`` says
all this. Words are
released whole, with no length cap (TrieHH reports no word longer than L):
a long word held by many users counts for recall here.

Randomness. The noise is python-dp's own secure randomness, which takes no
seed: two runs with the same seed release different sets. ``seed`` only
fixes which words a several-word user contributes.

Output. The released words in alphabetical order (an order that tells
nothing beyond the set), and no counts: releasing counts would cost more
budget. Scored as a ranking (precision@K), a set is cut alphabetically;
recall@K and precision are what compare.

The policy Gaussian of DP set union (Gopi et al., ICML 2020) has no
maintained package on PyPI; Gaussian thresholding with
``max_partitions_contributed`` stands in for it. pipeline_dp 0.3.1 also has
a weighted Gaussian strategy (one of Gopi et al.'s baselines), left out:
its ``LocalBackend`` path builds a selector per word, about 12 minutes for
10^6 users against about 5 s for the others.
"""

from __future__ import annotations

import dataclasses
import math
import functools
import time

import numpy as np

from triehh.baselines import moved
from triehh.core import beam_import
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.core import release
from triehh.core import validation
from triehh.theory import adjacency as adjacency_lib
from triehh.theory import coverage
from triehh.theory import limits
from triehh.theory import mechanism as mechanism_lib

# Strategy name -> pipeline_dp.PartitionSelectionStrategy member name.
STRATEGIES = {"truncated_geometric": "TRUNCATED_GEOMETRIC",
              "laplace_thresholding": "LAPLACE_THRESHOLDING",
              "gaussian_thresholding": "GAUSSIAN_THRESHOLDING"}
DEFAULT_STRATEGY = "truncated_geometric"
COVERS = "the set of released words, both directions"
PRIVACY = "central: the server sees raw strings"
ACCOUNTING = "pipeline_dp partition selection"
# What the guarantee takes as public (Guarantee.public) and whom it trusts
# (Guarantee.trust).
PUBLIC = "the strategy and max_partitions_contributed"
TRUST = ("the server: it sees every user's raw words (central), and adds "
         "the noise")


@dataclasses.dataclass(frozen=True)
class PartitionSelectionTarget:
  """A partition selection's guarantee and parameters, checked when built.

  Each field is checked here, once (a bad value raises naming it); nothing
  below checks it again.

  Attributes:
    epsilon: the guarantee's epsilon (> 0, finite).
    delta: its delta, in (0, 1); None: ``1/N^2`` for the declared
      ``population_size`` N if any, else for the population's own size
      (then n is read off the data and only neighbours of the same size
      are covered, ``n_source == "data"``).
    strategy: a name of :data:`STRATEGIES`.
    max_partitions_contributed: words a user counts towards, at most.
    population_size: a declared, public number of users (at least the
      population's): the default delta is derived from it, and the
      guarantee covers ``ADD_OR_REMOVE_ONE``
      (:func:`triehh.theory.coverage.add_or_remove`).
    allow_delta_above_1_over_n: run a delta above ``1/n``, which protects
      nobody, instead of refusing it; the guarantee then says so.
  """

  epsilon: float
  delta: float | None = None
  _: dataclasses.KW_ONLY
  strategy: str = DEFAULT_STRATEGY
  max_partitions_contributed: int = 1
  population_size: int | None = None
  allow_delta_above_1_over_n: bool = False

  def __post_init__(self):
    put = functools.partial(object.__setattr__, self)
    put("epsilon", validation.check_positive("epsilon", self.epsilon))
    if self.delta is not None:
      put("delta", limits.check_delta("delta", self.delta))
    limits.check_opt_in(self.allow_delta_above_1_over_n)
    validation.check_choice("strategy", self.strategy, STRATEGIES)
    put("max_partitions_contributed", validation.check_int(
        "max_partitions_contributed", self.max_partitions_contributed))
    if self.population_size is not None:
      put("population_size", limits.check_users(
          "population_size (the declared, public number of users)",
          self.population_size))
      if self.delta is None and self.population_size < 2:
        raise ValueError(
            f"population_size={self.population_size} is too few users for "
            "the default delta = 1/n^2 = 1 (no guarantee at all); give "
            "delta, or declare more users")

  @property
  def n_source(self) -> str:
    """Where the n the selection's delta comes from
    (:func:`triehh.theory.coverage.n_source_of`)."""
    return coverage.n_source_of(self.population_size is not None,
                                uses_n=self.delta is None)


# The keywords select_words took before its target was typed.
MOVED = dict.fromkeys(("epsilon", "delta", "strategy",
                        "max_partitions_contributed", "population_size"),
                       "a field of triehh.PartitionSelectionTarget")
EXAMPLE = ("select_words(population, "
            "triehh.PartitionSelectionTarget(epsilon=4.0))")


@dataclasses.dataclass(frozen=True)
class PartitionSelectionParams:
  """The parameters of a partition selection and what it guarantees.

  Attributes:
    epsilon, delta: the (epsilon, delta)-DP guarantee.
    strategy: a name of :data:`STRATEGIES`.
    max_partitions_contributed: words a user counts towards, at most.
    n: number of users.
    num_rows: (user, word) rows given to pipeline_dp.
    num_candidates: distinct words among the rows.
    n_source: ``"data"`` if delta is ``1/n^2`` of this n, else ``"unused"``.
    adjacency: the neighbouring relations covered, :class:`Adjacency`
      names (:func:`triehh.theory.coverage.add_or_remove`).
    covers: what the guarantee covers, and in which direction(s).
    privacy: who sees what.
    accounting: where the guarantee comes from, with pipeline-dp's
      version.
    population_size: the declared, public number of users, or None.
  """

  epsilon: float
  delta: float
  strategy: str
  max_partitions_contributed: int
  n: int
  num_rows: int
  num_candidates: int
  n_source: str
  adjacency: str
  covers: str = COVERS
  privacy: str = PRIVACY
  accounting: str = ACCOUNTING
  population_size: int | None = None

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


def release_guarantee(params: PartitionSelectionParams
                      ) -> mechanism_lib.Guarantee:
  """The :class:`~triehh.theory.mechanism.Guarantee` of a selection with
  ``params``: ``(epsilon, delta)``-DP, both directions, for the relations
  :func:`triehh.theory.coverage.add_or_remove` gives for its n_source."""
  relations = coverage.add_or_remove(params.n_source)
  k = params.max_partitions_contributed
  covers = (
      "the set of released words (no counts are released), a user "
      f"counting towards at most {k} word{'' if k == 1 else 's'}"
      + coverage.BOTH_DIRECTIONS.format("; ".join(
          f"{a.value} ({a.meaning})" for a in relations))
      + _N_NOTES[params.n_source])
  public = PUBLIC + ("; the declared population size"
                     if params.n_source == coverage.N_DECLARED else "")
  return mechanism_lib.Guarantee(
      epsilon=params.epsilon, delta=params.delta, adjacencies=relations,
      two_sided=True, accounting=params.accounting,
      n_source=params.n_source, covers=covers, public=public, trust=TRUST,
      caveat=limits.delta_above_1_over_n(params.delta, (
          getattr(params, "population_size", None)
          or getattr(params, "n", None))))


_N_NOTES = {
    coverage.N_FROM_DATA: (". delta = 1/n^2 with n = |D| read off the data: "
                           "only neighbours of the same size are covered"),
    coverage.N_DECLARED: ". n is the declared, public population size",
    coverage.N_UNUSED: ". No parameter depends on n",
}


# Where a selection's noise comes from: python-dp takes no seed.
UNSEEDED_NOISE = ("PipelineDP's noise from python-dp's secure randomness "
                  "(the operating system's), not reproducible")


def randomness(seed: int | None) -> str:
  """How a selection seeded ``seed`` drew its randomness, in words: the
  seed (or fresh entropy) for the several-word users' word choice only,
  the noise unseeded (the module docstring)."""
  choice = ("fresh entropy (not recorded)" if seed is None
            else f"seed {int(seed)}")
  return f"{choice} for the word choice; {UNSEEDED_NOISE}"


@dataclasses.dataclass(frozen=True)
class PartitionSelectionResult:
  """The outcome of one partition selection.

  Attributes:
    words: the released words, alphabetically.
    params: the :class:`PartitionSelectionParams`.
    seed: the seed of the several-word users' word choice.
    seconds: wall time of the rows and the selection (population building
      excluded).
  """

  mechanism = "partition_selection"  # unannotated: not a field

  words: tuple[str, ...]
  params: PartitionSelectionParams
  seed: int | None
  seconds: float

  @property
  def heavy_hitters(self) -> tuple[str, ...]:
    """The released words (no counts are released): what a run prints and
    scores."""
    return self.words

  @property
  def guarantee(self) -> mechanism_lib.Guarantee:
    """What covers :attr:`words` (:func:`release_guarantee`)."""
    return dataclasses.replace(release_guarantee(self.params),
                               randomness=randomness(self.seed))

  @property
  def notes(self) -> tuple[str, ...]:
    """One-line statements its public values explain: no word released,
    :func:`nothing_found`; empty otherwise."""
    return () if self.words else (nothing_found(self.params),)

  @property
  def per_round(self) -> tuple[release.RoundStats, ...]:
    """One round: the distinct words among the rows, and those kept."""
    return (release.RoundStats(candidates=self.params.num_candidates,
                               kept=len(self.words)),)

  @property
  def unprotected(self) -> dict[str, int]:
    """Counts of the raw rows the guarantee does not cover (simulation
    studies only): ``num_rows`` and ``num_candidates`` (distinct words)."""
    return {"num_rows": self.params.num_rows,
            "num_candidates": self.params.num_candidates}


def holders_needed(epsilon: float, delta: float,
                   max_partitions_contributed: int = 1) -> float:
  """About how many users must hold a word for the selection to keep it
  with probability 1/2: ``1 + ln(1/(2 delta')) / epsilon'`` at the
  budget each word gets (``epsilon' = epsilon / k``, ``delta' = delta /
  k`` for ``k = max_partitions_contributed``). It is where the truncated
  geometric's keep probability (Desfontaines et al., PoPETs 2022), and the
  Laplace threshold's, reach about 1/2 (python-dp's ``should_keep`` at
  epsilon 1, delta 1e-8: about 0.4 of 18 holders kept, 0.97 of 21); the
  Gaussian threshold needs more (0.03 of 21)."""
  k = max_partitions_contributed
  return 1.0 + math.log(k / (2.0 * delta)) * k / epsilon


def nothing_found(params: PartitionSelectionParams) -> str:
  """Why a selection of ``params`` released no word, in one line: the
  holders a word needs (:func:`holders_needed`) against the n users."""
  needed = holders_needed(params.epsilon, params.delta,
                          params.max_partitions_contributed)
  line = (f"no word found: {params.strategy} selection keeps a word with "
          f"probability 1/2 at about 1 + ln(k/(2 delta)) k/epsilon = "
          f"{needed:,.0f} holders (epsilon={params.epsilon:g}, "
          f"delta={params.delta:.3g}, k={params.max_partitions_contributed})"
          f" among the n={params.n:,} users")
  if needed > params.n:
    return (line + ": more than there are users, so no word can be "
            "expected; ask for a larger epsilon, or run on more users")
  return line + ": no word had enough in this run"


def check(population: population_lib.Population,
          target: PartitionSelectionTarget) -> float:
  """``target`` against ``population``; returns delta (the target's, else
  ``1/n^2`` of the declared population size, else of the population's).

  Raises:
    TypeError: for a population or target of another type.
    ValueError: a population of fewer than 2 users (``delta = 1/n^2``
      would be 1, no guarantee), or of more users than the declared
      ``population_size``, or a delta above ``1/n`` not opted in to
      (:func:`triehh.theory.limits.check_delta_for_n`).
  """
  if not isinstance(population, population_lib.Population):
    raise TypeError("population must be a triehh Population, got "
                    f"{type(population).__name__}")
  moved.check_target("check", target, PartitionSelectionTarget,
                     "check(population, triehh.PartitionSelectionTarget("
                     "epsilon=4.0))")
  n = population.num_users
  if n < 2:
    raise ValueError(
        "partition selection needs at least 2 users, got n="
        f"{n} (delta = 1/n^2 would be 1: no guarantee)")
  declared = target.population_size
  if declared is not None and declared < n:
    raise ValueError(
        f"population_size={declared:,} is smaller than the n={n:,} users "
        "the population holds: declare the public number of users (at "
        "least those present), or leave it out")
  if target.delta is not None:
    limits.check_delta_for_n(
        target.delta, n if declared is None else declared,
        allowed=target.allow_delta_above_1_over_n)
    return target.delta
  return 1.0 / (n if declared is None else declared)**2


# Bytes per (user, word) row at the least: the tuple, the user's int and
# the list's slot, and the numpy arrays they are made from.
_BYTES_PER_ROW = 128


def user_word_rows(population: population_lib.Population,
                   max_partitions_contributed: int,
                   rng: np.random.Generator) -> list[tuple[int, str]]:
  """``(user, word)`` rows: each user's distinct words, at most
  ``max_partitions_contributed`` of them (a uniform choice by ``rng`` when
  a user has more)."""
  vocabulary = population.vocabulary
  rows = (population.num_users if population.is_single_word
          else population.entry_word.size)
  memory.check_fits(
      f"{rows:,} (user, word) rows for pipeline_dp", rows * _BYTES_PER_ROW,
      lambda available: (
          "pipeline_dp's local backend takes Python rows; at most about "
          f"{memory.most_that_fit(_BYTES_PER_ROW, available):,} fit"))
  users, words = user_word_indices(population, max_partitions_contributed,
                                   rng)
  return list(zip(users.tolist(), vocabulary[words].tolist()))


def user_word_indices(population: population_lib.Population,
                      max_partitions_contributed: int,
                      rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray]:
  """The rows of :func:`user_word_rows` as two arrays, user and word index
  (into the vocabulary): the same choice for the same ``rng``."""
  if population.is_single_word:
    if population.user_word is not None:
      words = population.user_word
    else:
      words = np.repeat(np.arange(population.num_words),
                        population.word_users)
    return np.arange(words.size), words
  offsets, entry_word = population.user_offsets, population.entry_word
  per_user = np.diff(offsets)
  users = np.repeat(np.arange(per_user.size), per_user)
  keep = np.ones(entry_word.size, dtype=bool)
  if per_user.max() > max_partitions_contributed:
    # A random rank per entry; each user keeps its k lowest ranked words.
    order = np.lexsort((rng.random(entry_word.size), users))
    place = np.arange(order.size) - offsets[users[order]]
    keep[order] = place < max_partitions_contributed
  return users[keep], entry_word[keep]


def select_words(population: population_lib.Population,
                 target: PartitionSelectionTarget | None = None, *,
                 seed: int | None = None,
                 **moved_keywords) -> PartitionSelectionResult:
  """pipeline_dp's DP partition selection of the users' words.

  Args:
    population: the users and their words.
    target: a :class:`PartitionSelectionTarget`: the guarantee (delta None:
      ``1/n^2``), the strategy, the words a user counts towards, a declared
      population size.
    seed: seeds the several-word users' word choice only (the noise is
      python-dp's and is not seeded; see the module docstring).

  Returns:
    A :class:`PartitionSelectionResult` (a :class:`triehh.core.release.
    Release`).

  Raises:
    TypeError: for a keyword of the untyped call (``epsilon=`` ...: a
      field of :class:`PartitionSelectionTarget` now), or a missing target.
    ValueError: what :func:`check` raises.
  """
  moved.refuse("select_words", moved_keywords, MOVED, EXAMPLE)
  seed = validation.check_seed(seed)
  moved.check_target("select_words", target, PartitionSelectionTarget,
                     EXAMPLE)
  pipeline_dp = beam_import.quietly("pipeline_dp")
  delta = check(population, target)
  start = time.perf_counter()
  rows = user_word_rows(population, target.max_partitions_contributed,
                        np.random.default_rng(seed))
  selected, accountant = select_partitions(
      rows, pipeline_dp.LocalBackend(), epsilon=target.epsilon, delta=delta,
      strategy=target.strategy,
      max_partitions_contributed=target.max_partitions_contributed)
  accountant.compute_budgets()  # the lazy pipeline reads its budget now
  words = tuple(sorted(selected))
  seconds = time.perf_counter() - start
  return PartitionSelectionResult(
      words=words, seed=seed, seconds=seconds,
      params=release_params(target, delta=delta, n=population.num_users,
                            rows=rows))


def select_partitions(rows, backend, *, epsilon: float, delta: float,
                      strategy: str, max_partitions_contributed: int):
  """pipeline_dp's selection of the words of ``(user, word)`` rows on
  ``backend`` (``LocalBackend`` or ``BeamBackend``, rows a list or a
  PCollection); returns the lazy selection and its budget accountant,
  whose ``compute_budgets()`` must run before the selection is read."""
  pipeline_dp = beam_import.quietly("pipeline_dp")
  accountant = pipeline_dp.NaiveBudgetAccountant(
      total_epsilon=float(epsilon), total_delta=float(delta))
  engine = pipeline_dp.DPEngine(accountant, backend)
  params = pipeline_dp.SelectPartitionsParams(
      max_partitions_contributed=max_partitions_contributed,
      partition_selection_strategy=pipeline_dp.PartitionSelectionStrategy[
          STRATEGIES[strategy]])
  extractors = pipeline_dp.DataExtractors(
      privacy_id_extractor=lambda row: row[0],
      partition_extractor=lambda row: row[1])
  return engine.select_partitions(rows, params, extractors), accountant


def release_params(target: PartitionSelectionTarget, *, delta: float,
                   n: int, rows) -> PartitionSelectionParams:
  """The parameters of a selection of ``rows`` (its ``(user, word)``
  rows) at ``delta`` (:func:`check`'s), labelled with what they cover."""
  pipeline_dp = beam_import.quietly("pipeline_dp")
  n_source = target.n_source
  return PartitionSelectionParams(
      epsilon=float(target.epsilon), delta=float(delta),
      strategy=target.strategy,
      max_partitions_contributed=target.max_partitions_contributed, n=n,
      num_rows=len(rows), num_candidates=len({word for _, word in rows}),
      n_source=n_source,
      adjacency=adjacency_lib.names(coverage.add_or_remove(n_source)),
      accounting=f"{ACCOUNTING} (pipeline-dp {pipeline_dp.__version__})",
      population_size=target.population_size)
