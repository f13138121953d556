"""Several TrieHH passes, each denying the words found before it.

:func:`discover_passes` runs ``P`` passes of :func:`triehh.discover` on the
same users. Pass ``p`` runs with the deny list of every word found by
passes ``0..p-1`` (and an optional initial deny list): users of those
words abstain, or pick among their other words (:mod:`triehh.discovery.deny_list`),
so later passes can reach words the earlier ones missed. The words found
are the union of the passes' words, in pass order.

Privacy. Each pass is a TrieHH run on the same n users, so each is
``(epsilon_p, delta_p)``-DP by Theorem 1 (its own accounting, see
``docs/privacy.md``); the deny list of a pass is a function of the earlier
passes' published words, so the passes compose adaptively. The requested
total ``(epsilon, delta)`` is split before any pass runs:

* ``"basic"``: ``epsilon_p = epsilon / P``, ``delta_p = delta / P``; the
  total is ``(sum epsilon_i, sum delta_i)``.
* ``"advanced"`` (Dwork, Rothblum and Vadhan's advanced composition
  theorem): ``P`` passes of ``(epsilon_p, delta_p)`` are
  ``(sqrt(2 P ln(1/delta')) epsilon_p + P epsilon_p (e^epsilon_p - 1),
  P delta_p + delta')``-DP; ``delta' = delta / 2``, ``delta_p =
  delta / (2 P)``, and ``epsilon_p`` solves the total = ``epsilon``
  (``scipy.optimize.brentq``).
* ``"best"`` (the default): whichever of the two gives the larger
  ``epsilon_p`` (basic on ties). With ``delta = 1/n^2`` that is basic for
  every P up to the tens: advanced composition pays ``sqrt(2P
  ln(1/delta'))``, about 10 sqrt(P) for n = 10^6.

Every pass is calibrated by Corollary 1 for ``(epsilon_p, delta_p)`` and
reports the ``(epsilon_i, delta_i)`` its integer batch achieves (at most
the per-pass target); the total in :attr:`PassesResult.params` is composed
from those. A request whose per-pass share Theorem 1 cannot give for n
(a batch below sqrt(n) users) is refused with a ``ValueError`` naming the
per-pass values, before any pass runs.

Seeds: pass 0 uses ``seed`` (so one pass is :func:`triehh.discover` with
that seed), pass ``p >= 1`` the seed drawn from
``numpy.random.SeedSequence((seed, p))``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable

import numpy as np

from triehh.core import choices
from triehh.core import population as population_lib
from triehh.core import release
from triehh.core import results
from triehh.core import validation
from triehh.discovery import deny_list as deny_list_lib
from triehh.discovery import run as discovery_run
from triehh.discovery import word_choice as word_choice_lib
from triehh.engines import registry
from triehh.theory import mechanism as mechanism_lib
from triehh.theory import policy

BASIC = "basic"
ADVANCED = "advanced"
BEST = "best"
COMPOSITIONS = (BEST, BASIC, ADVANCED)
_CALIBRATED_ONLY = ("theta", "gamma", "batch_size", "max_num_prefixes",
                    "allow_no_guarantee", "schedule")


@dataclasses.dataclass(frozen=True)
class Passes:
  """Repeated passes asked of :func:`triehh.discover` (``passes=``): P
  passes within the total target, each denying the words found before.

  Attributes:
    num_passes: P, at least 1.
    composition: ``"best"``, ``"basic"`` or ``"advanced"`` (module
      docstring).
  """

  num_passes: int
  composition: str = BEST

  def __post_init__(self):
    object.__setattr__(self, "num_passes", validation.check_int(
        "num_passes", self.num_passes))
    if self.composition not in COMPOSITIONS:
      raise ValueError(f"composition must be one of {COMPOSITIONS}, got "
                       f"{self.composition!r}")


def basic_total(epsilon: float, delta: float,
                num_passes: int) -> tuple[float, float]:
  """``(P epsilon, P delta)``: basic composition of ``P`` passes."""
  return num_passes * epsilon, min(1.0, num_passes * delta)


def advanced_total(epsilon: float, delta: float, num_passes: int,
                   delta_prime: float) -> tuple[float, float]:
  """The advanced composition theorem's total for ``P`` passes.

  ``(sqrt(2 P ln(1/delta')) epsilon + P epsilon (e^epsilon - 1),
  P delta + delta')``; the epsilon is ``inf`` when ``e^epsilon`` is beyond
  floating point (``epsilon`` over about 709).
  """
  try:
    growth = math.expm1(epsilon)
  except OverflowError:
    growth = math.inf
  total = (math.sqrt(2.0 * num_passes * math.log(1.0 / delta_prime)) * epsilon
           + num_passes * epsilon * growth)
  return total, min(1.0, num_passes * delta + delta_prime)


@dataclasses.dataclass(frozen=True)
class Budget:
  """How a total ``(epsilon, delta)`` is split over the passes.

  Attributes:
    composition: ``"basic"`` or ``"advanced"``.
    num_passes: P.
    epsilon, delta: the per-pass target.
    delta_prime: advanced composition's delta' (0 for basic).
    total_epsilon, total_delta: the totals the per-pass targets compose to.
  """

  composition: str
  num_passes: int
  epsilon: float
  delta: float
  delta_prime: float
  total_epsilon: float
  total_delta: float


def split_budget(epsilon: float, delta: float, num_passes: int,
                 composition: str = BEST) -> Budget:
  """The per-pass ``(epsilon_p, delta_p)`` for a total (module docstring)."""
  epsilon = validation.check_positive("epsilon", epsilon)
  delta = validation.check_probability("delta", delta)
  num_passes = validation.check_int("num_passes", num_passes)
  if composition not in COMPOSITIONS:
    raise ValueError(f"composition must be one of {COMPOSITIONS}, got "
                     f"{composition!r}")
  basic = Budget(BASIC, num_passes, epsilon / num_passes, delta / num_passes,
                 0.0, *basic_total(epsilon / num_passes, delta / num_passes,
                                   num_passes))
  if composition == BASIC:
    return basic
  delta_prime = delta / 2
  pass_delta = delta / (2 * num_passes)

  def excess(pass_epsilon: float) -> float:
    return advanced_total(pass_epsilon, pass_delta, num_passes,
                          delta_prime)[0] - epsilon

  pass_epsilon = epsilon
  if excess(epsilon) > 0:  # the root, a relative 1e-9 below (rounding)
    from scipy import optimize  # pylint: disable=g-import-not-at-top
    # The root has P x (e^x - 1) < epsilon, so x < max(1, ln(1 + epsilon)):
    # a bracket whose totals stay finite for any finite epsilon.
    high = min(epsilon, max(1.0, math.log1p(epsilon)))
    pass_epsilon = optimize.brentq(excess, 0.0, high, xtol=1e-15,
                                   rtol=1e-13) * (1.0 - 1e-9)
  total = advanced_total(pass_epsilon, pass_delta, num_passes, delta_prime)
  advanced = Budget(ADVANCED, num_passes, float(pass_epsilon), pass_delta,
                    delta_prime, *total)
  if composition == ADVANCED:
    return advanced
  return advanced if advanced.epsilon > basic.epsilon else basic


@dataclasses.dataclass(frozen=True)
class PassesParams:
  """The passes' privacy: the split, and the totals achieved.

  Attributes:
    composition: ``"basic"`` or ``"advanced"`` (the one used).
    num_passes: P.
    target_epsilon, target_delta: the requested total.
    pass_target_epsilon, pass_target_delta: the per-pass target.
    delta_prime: advanced composition's delta' (0 for basic).
    pass_epsilons, pass_deltas: what each pass achieved (Theorem 1 at its
      integer batch; its own accounting).
    epsilon, delta: the total, composed from the achieved per-pass values
      (at most the target).
    guarantee: the above in words.
    covers: which outputs the guarantee covers (the words and prefixes of
      every pass, never their vote counts).
  """

  composition: str
  num_passes: int
  target_epsilon: float
  target_delta: float
  pass_target_epsilon: float
  pass_target_delta: float
  delta_prime: float
  pass_epsilons: tuple[float, ...]
  pass_deltas: tuple[float, ...]
  epsilon: float
  delta: float
  guarantee: str
  covers: str

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)


@dataclasses.dataclass
class PassesResult:
  """The outcome of :func:`discover_passes`.

  Attributes:
    words: the union of the passes' words (covered by ``params``), in pass
      order, then as each pass orders them.
    passes: each pass's :class:`~triehh.core.results.DiscoveryResult` (its own
      ``params`` hold its per-pass guarantee).
    deny_lists: the words denied in each pass (sorted).
    params: the :class:`PassesParams`.
    seed: the seed of the first pass.
    seconds: wall time of the passes.
  """

  mechanism = "triehh"

  words: tuple[str, ...]
  passes: tuple[results.DiscoveryResult, ...]
  deny_lists: tuple[tuple[str, ...], ...]
  params: PassesParams
  seed: int | None
  seconds: float

  @property
  def guarantee(self) -> mechanism_lib.Guarantee:
    """The passes' total guarantee (Theorem 1 per pass, composed)."""
    first = self.passes[0].guarantee if self.passes else None
    adjacencies = first.adjacencies if first is not None else ()
    return mechanism_lib.Guarantee(
        epsilon=self.params.epsilon, delta=self.params.delta,
        adjacencies=adjacencies, two_sided=False,
        accounting=self.params.guarantee, n_source="data",
        covers=self.params.covers,
        public=mechanism_lib.TRIEHH_PUBLIC,
        trust=mechanism_lib.TRIEHH_TRUST,
        randomness=release.randomness(self.seed))

  @property
  def per_round(self) -> tuple:
    """Every pass's rounds, in order."""
    return tuple(r for result in self.passes for r in result.per_round)

  @property
  def unprotected(self) -> tuple[results.Unprotected, ...]:
    """Each pass's vote counts: NOT covered by the guarantee."""
    return tuple(result.unprotected for result in self.passes)

  @property
  def heavy_hitters(self) -> dict[str, int]:
    """Word -> votes in the pass that found it: unprotected vote counts."""
    out: dict[str, int] = {}
    for result in self.passes:
      for word, votes in result.heavy_hitters.items():
        out.setdefault(word, votes)
    return out


def pass_seed(seed: int | None, index: int) -> int | None:
  """The seed of pass ``index`` (module docstring)."""
  if seed is None or index == 0:
    return seed
  return int(np.random.SeedSequence((seed, index)).generate_state(
      1, np.uint64)[0] >> np.uint64(1))


def discover_passes(user_words, privacy, passes: Passes, *,
                    deny_list: Iterable[str] = (),
                    max_length: int = population_lib.DEFAULT_MAX_LENGTH,
                    seed: int | None = None, engine: str = registry.FAST,
                    **engine_options) -> PassesResult:
  """Runs ``passes.num_passes`` TrieHH passes within a total target.

  Args:
    user_words: as for :func:`triehh.discover` (a Population included).
    privacy: the TOTAL target of the passes: a :class:`triehh.Target`
      (``delta`` defaults to ``1/n^2``) or a number, its epsilon. Every pass
      is calibrated from its share (fixed-size batches, Theorem 1), so a
      ``theta``, a Mechanism (``gamma``, ``batch_size``), a prefix cap,
      ``allow_no_guarantee``, a schedule, an adjacency, a declared
      population size and Poisson sampling are refused; its
      ``num_sub_rounds`` and ``word_choice`` are every pass's.
    passes: a :class:`Passes`: P, and how the total is split (module
      docstring).
    deny_list: words denied in every pass (before any is found).
    max_length, seed, engine: as for :func:`triehh.discover` (``seed`` is
      the first pass's).
    **engine_options: passed to the engine (e.g. TFF workers).

  Returns:
    A :class:`PassesResult`.

  Raises:
    ValueError: for a bad argument, or when Theorem 1 cannot give the
      per-pass share for this n (the message names the per-pass values).
  """
  if not isinstance(passes, Passes):
    raise TypeError(f"passes must be a triehh.Passes, got {passes!r:.60}: "
                    "e.g. triehh.Passes(2)")
  target = _total_target(mechanism_lib.of(privacy))
  population = population_lib.as_population(user_words, max_length)
  n = population.num_users
  target_delta = 1.0 / n**2 if target.delta is None else target.delta
  budget = split_budget(target.epsilon, target_delta, passes.num_passes,
                        passes.composition)
  pass_params = _pass_params(population, max_length, budget, target,
                             target_delta=target_delta)
  denied = set(w.lower() for w in _words(deny_list))
  start = time.perf_counter()
  runs, deny_lists, words = _run_passes(population, pass_params, denied,
                                        passes.num_passes, seed, engine,
                                        engine_options)
  seconds = time.perf_counter() - start
  params = _composed(budget, target.epsilon, target_delta,
                     [r.params for r in runs])
  return PassesResult(words=tuple(words), passes=tuple(runs),
                      deny_lists=tuple(deny_lists), params=params, seed=seed,
                      seconds=seconds)


def _total_target(privacy) -> mechanism_lib.Target:
  """``privacy`` as the passes' total :class:`~triehh.theory.mechanism.
  Target`, or a ValueError naming what they cannot take."""
  given = sorted(name for name in _CALIBRATED_ONLY
                 if getattr(privacy, name, None) is not None
                 and getattr(privacy, name) is not False)
  if given:
    raise ValueError(f"discover_passes calibrates every pass from the total "
                     f"(epsilon, delta); {', '.join(given)} cannot be given")
  check_fixed_only(privacy, "passes")
  if not isinstance(privacy, mechanism_lib.Target):
    raise ValueError("discover_passes calibrates every pass from the total "
                     "(epsilon, delta): give a triehh.Target")
  mechanism_lib.default_sampling(privacy.sampling,
                                 fixed_only={"passes": True})
  return privacy


def check_fixed_only(privacy, runs: str) -> None:
  """A ValueError naming the field of ``privacy`` that ``runs`` (passes or
  availability, fixed-size batches under Theorem 1 for ``REPLACE_SPECIAL``,
  n read off the data) cannot take: an adjacency, a declared population
  size."""
  for name in ("adjacency", "population_size"):
    value = getattr(privacy, name)
    if value is not None:
      shown = value.value if name == "adjacency" else value
      raise ValueError(f"{name}={shown!r} is not supported with {runs}, "
                       "which run fixed-size batches covered by Theorem 1 "
                       "for REPLACE_SPECIAL")


def _pass_params(population: population_lib.Population, max_length: int,
                 budget: Budget, target: mechanism_lib.Target, *,
                 target_delta: float) -> results.RunParams:
  """Every pass's parameters: Theorem 1 at the per-pass ``budget``,
  calibrated once (every pass has the same n, budget and kind of users)."""
  n = population.num_users
  try:
    return policy.resolve(
        n, max_length, dataclasses.replace(
            target, epsilon=budget.epsilon, delta=budget.delta,
            sampling=choices.FIXED),
        single_word=population.is_single_word)
  except ValueError as err:
    raise ValueError(
        f"{budget.num_passes} passes within (epsilon={target.epsilon:g}, "
        f"delta={target_delta:.3g}) leave each pass (epsilon="
        f"{budget.epsilon:.4g}, delta={budget.delta:.3g}) by "
        f"{budget.composition} composition, which Theorem 1 cannot give for "
        f"n={n} users: {err}. Use fewer passes or a larger epsilon") from None


def _run_passes(population: population_lib.Population,
                pass_params: results.RunParams, denied: set[str],
                num_passes: int, seed: int | None, engine: str,
                engine_options: dict) -> tuple[list, list, list[str]]:
  """Runs the passes, each with the words found before it denied (added to
  ``denied``): the passes' results, their deny lists and the new words."""
  passes, deny_lists, words = [], [], []
  for index in range(num_passes):
    seed_p = pass_seed(seed, index)
    pop_p = deny_list_lib.apply(population, denied)
    result = discovery_run.run(pop_p, pass_params, seed=seed_p,
                               engine=engine, **engine_options)
    deny_lists.append(tuple(sorted(denied)))
    passes.append(result)
    new = [w for w in result.words if w not in denied]
    words.extend(new)
    denied.update(new)
  return passes, deny_lists, words


def _words(deny_list: Iterable[str]) -> list[str]:
  if isinstance(deny_list, (str, bytes)):
    raise TypeError("deny_list must be a collection of words, not a single "
                    "string")
  return list(deny_list)


def _composed(budget: Budget, epsilon: float, delta: float,
              runs: list[results.RunParams]) -> PassesParams:
  """The total of the achieved per-pass values; ValueError if above target."""
  eps = tuple(float(p.epsilon) for p in runs)
  dlt = tuple(float(p.delta) for p in runs)
  if budget.composition == BASIC:
    total = (sum(eps), min(1.0, sum(dlt)))
    how = (f"basic composition of {budget.num_passes} passes: epsilon = "
           f"sum of the passes' epsilons, delta = sum of their deltas")
  else:
    total = advanced_total(max(eps), max(dlt), budget.num_passes,
                           budget.delta_prime)
    how = (f"advanced composition of {budget.num_passes} passes "
           f"(delta' = {budget.delta_prime:.3g}): epsilon = sqrt(2P "
           "ln(1/delta')) eps_p + P eps_p (e^eps_p - 1), delta = P delta_p + "
           "delta', at the largest achieved eps_p and delta_p")
  if total[0] > epsilon * (1 + 1e-12) or total[1] > delta * (1 + 1e-12):
    raise ValueError(f"the passes compose to (epsilon={total[0]:.6g}, "
                     f"delta={total[1]:.3g}), above the requested "
                     f"({epsilon:g}, {delta:.3g})")
  note = (f"{how}; per pass target (epsilon={budget.epsilon:.6g}, delta="
          f"{budget.delta:.3g}), each pass calibrated by Corollary 1 and "
          "reported by its own accounting; the deny list of a pass depends "
          "only on earlier passes' published words (adaptive composition).")
  return PassesParams(
      composition=budget.composition, num_passes=budget.num_passes,
      target_epsilon=float(epsilon), target_delta=float(delta),
      pass_target_epsilon=budget.epsilon, pass_target_delta=budget.delta,
      delta_prime=budget.delta_prime, pass_epsilons=eps, pass_deltas=dlt,
      epsilon=float(total[0]), delta=float(total[1]), guarantee=note,
      covers=("the set of discovered words and prefixes of every pass, not "
              "their vote counts" + policy.ONE_DIRECTION))
