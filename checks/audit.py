"""An empirical audit of Theorem 1: the privacy loss of one configuration.

Differential privacy compares neighbouring populations. The audit builds the
worst cases that the proof of Theorem 1 points at: a base population ``D``
of ``n`` users in which ``k`` users hold the target word ``w`` (``max_length``
copies of ``"a"``, so ``w`` has ``L = max_length + 1`` levels with the end
symbol) and every other user holds a word with another first character; and
``D'``: by default (``adjacency="replace"``, the paper's adjacency, same
``n``) ``D`` with one of those users holding ``w`` instead (on ``w``'s path
its other word votes as the paper's empty sequence does: never), or with
``adjacency="add"`` ``D`` plus one user holding ``w``. The audited events
are, for every level ``i``, "``p_i(w)`` is in the trie", "``w`` is
discovered", their complements, and the whole output trie. The loss found
is over this family of populations only: a lower bound, not a certificate.

The vote count of ``p_i(w)`` in a round is the number of sampled holders of
``w``, hypergeometric, and ``p_i(w)`` enters the trie iff ``p_{i-1}(w)``
did and that count reaches theta; the other users never vote on ``w``'s
path. So the depth that ``w``'s path reaches has an exact distribution, and
:func:`exact_audit` gives the smallest epsilon with
``P[M(D) in S] <= e^eps P[M(D') in S] + delta`` for every event ``S`` on
that path and both directions (the optimal event of the hockey-stick
divergence), over all ``k``.

:func:`monte_carlo_audit` runs the real fast engine (:func:`triehh.discover`)
many times on ``D`` and ``D'`` and turns Clopper-Pearson intervals on each
event's frequency into a lower bound on epsilon that holds with the stated
confidence simultaneously for all events (Bonferroni):
``eps >= ln((lower(P) - delta) / upper(P'))``. For small populations the
whole-trie event is chosen on one half of the runs and measured on the
other half, so choosing it does not bias the bound. The statistics of both
paths (hypergeometric tails, the hockey-stick divergence, Clopper-Pearson
bounds) are in :mod:`checks.audit_bounds`.

Broken variants (``VARIANTS``) show that the audit detects violations:
``"theta_one"`` (threshold 1), ``"with_replacement"`` (each round samples
users with replacement, a user drawn twice votes twice) and
``"double_vote"`` (the added user votes twice when sampled). They run the
real engine through its ``schedule`` hook; the claimed epsilon stays that of
the correct configuration. The other variants run on populations given by
word counts, for any n; sizes that would not fit in memory are refused
first (:mod:`checks.audit_memory`).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from scipy import stats

from checks import audit_bounds
from checks import audit_memory
from triehh.core import choices
from triehh.core import population as population_lib
from triehh.core import validation
from triehh.discovery import discover as discover_lib
from triehh.theory import mechanism
from triehh.theory import policy

VARIANTS = ("correct", "theta_one", "with_replacement", "double_vote")
SCHEDULED_VARIANTS = audit_memory.SCHEDULED_VARIANTS
ADJACENCIES = ("replace", "add")
TARGET_CHAR = "a"
OTHER_WORD = "b"
# Populations of at most this many users also audit the whole output trie.
WHOLE_TRIE_MAX_USERS = 2000


@dataclasses.dataclass(frozen=True)
class AuditSetup:
  """The configuration audited and its claimed guarantee.

  Attributes:
    n: users in the base population ``D``.
    theta: the vote threshold of the configuration (the claim's theta).
    batch_size: m, users sampled per round.
    max_length: characters of the target word; ``max_length + 1`` levels.
    epsilon, delta: Theorem 1's guarantee for ``(n, theta, m, L + 1)``.
    variant: one of ``VARIANTS``.
    adjacency: ``"replace"`` (``D'`` has ``n`` users) or ``"add"`` (``n + 1``).
  """

  n: int
  theta: int
  batch_size: int
  max_length: int
  epsilon: float
  delta: float
  variant: str = "correct"
  adjacency: str = "replace"

  @property
  def levels(self) -> int:
    return self.max_length + 1

  @property
  def run_theta(self) -> int:
    """The threshold the audited mechanism really uses."""
    return 1 if self.variant == "theta_one" else self.theta

  @property
  def sizes(self) -> tuple[int, int]:
    """Users in ``D`` and in ``D'``."""
    return self.n, self.n + (self.adjacency == "add")


def make_setup(n: int, max_length: int, privacy, *,
               variant: str = "correct", adjacency: str = "replace"
               ) -> AuditSetup:
  """The setup of a Theorem 1 configuration.

  ``privacy``: a :class:`~triehh.theory.mechanism.Mechanism` (theta with
  batch_size or gamma), or a :class:`~triehh.theory.mechanism.Target`
  (``(epsilon, delta)`` calibrated by Corollary 1; ``delta`` defaults to
  ``1/n^2``) or a number, its epsilon: the paper's fixed-size batches, one
  word per user, no prefix cap, schedule or sub-rounds. ``adjacency`` is
  how ``D'`` is built (module docstring). Parameters outside Theorem 1
  raise ``ValueError`` (there is no claim to audit).
  """
  if variant not in VARIANTS:
    raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
  if adjacency not in ADJACENCIES:
    raise ValueError(f"adjacency must be one of {ADJACENCIES}, got "
                     f"{adjacency!r}")
  if not isinstance(n, (int, np.integer)) or n < 2:
    raise ValueError(f"n must be an integer of at least 2 users, got {n!r}")
  if not isinstance(max_length, (int, np.integer)) or max_length < 1:
    raise ValueError(f"max_length must be a positive integer, got "
                     f"{max_length!r}")
  audited = theorem_1_privacy(privacy, "the audit")
  try:
    params = policy.resolve(int(n), int(max_length), audited)
  except ValueError as err:  # no claim to audit: say so, without run advice
    reason = str(err).split(". Pass allow_no_guarantee")[0]
    raise ValueError(f"no Theorem 1 guarantee to audit: {reason}") from None
  return AuditSetup(n=int(n), theta=params.theta,
                    batch_size=params.batch_size, max_length=int(max_length),
                    epsilon=params.epsilon, delta=params.delta,
                    variant=variant, adjacency=adjacency)


# The fields of a Target or Mechanism that an audited configuration leaves
# at their defaults: the audit models one-word users sampled in fixed-size
# batches, one vote count per level.
_UNAUDITED = {"adjacency": None, "population_size": None,
              "num_sub_rounds": 1, "max_num_prefixes": None,
              "allow_no_guarantee": False, "schedule": None}


def theorem_1_privacy(privacy, who: str = "the audit"
                      ) -> mechanism.Target | mechanism.Mechanism:
  """``privacy`` (a Target, a Mechanism or a number, the target epsilon)
  as the fixed-size TrieHH that Theorem 1 covers, or a ValueError naming
  the field ``who`` does not model (Poisson sampling, a sampling rate,
  sub-rounds, a prefix cap, a schedule, ``allow_no_guarantee``, an
  adjacency, a declared n)."""
  privacy = mechanism.of(privacy)
  if privacy.sampling not in (None, choices.FIXED):
    raise ValueError(f"{who} covers fixed-size batches (Theorem 1), got "
                     f"sampling={privacy.sampling!r}")
  if getattr(privacy, "sampling_rate", None) is not None:
    raise ValueError(f"{who} covers fixed-size batches (Theorem 1): give "
                     "batch_size or gamma, not sampling_rate")
  for name, default in _UNAUDITED.items():
    value = getattr(privacy, name)
    if value is not None if default is None else value != default:
      raise ValueError(f"{who} does not model {name}={value!r:.60}: leave it "
                       "at its default")
  if privacy.sampling is None:
    privacy = dataclasses.replace(privacy, sampling=choices.FIXED)
  return privacy


# ---- exact path ------------------------------------------------------------


def round_pass(setup: AuditSetup, k: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """Per-round probabilities that ``w``'s prefix reaches theta votes.

  Args:
    setup: the audited configuration.
    k: other users holding ``w`` (``D'`` also has the target).

  Returns:
    ``(q, 1 - q, q', 1 - q')`` for ``D`` and ``D'``, each complement
    computed directly (no cancellation near 1).
  """
  k = np.asarray(k, dtype=np.int64)
  size, size_prime = setup.sizes
  m, t = setup.batch_size, setup.run_theta
  if setup.variant == "with_replacement":
    dist = stats.binom(m, k / size)
    dist_prime = stats.binom(m, (k + 1) / size_prime)
    return (dist.sf(t - 1), dist.cdf(t - 1), dist_prime.sf(t - 1),
            dist_prime.cdf(t - 1))
  q, r = audit_bounds.hypergeom_tail(size, k, m, t)
  if setup.variant != "double_vote":
    return (q, r) + audit_bounds.hypergeom_tail(size_prime, k + 1, m, t)
  # The target is sampled with probability m / N'; then it adds two votes to
  # those of the others, drawn from the N' - 1 other users.
  chosen = m / size_prime
  q_with, r_with = audit_bounds.hypergeom_tail(size_prime - 1, k, m - 1, t - 2)
  q_without, r_without = audit_bounds.hypergeom_tail(size_prime - 1, k, m, t)
  return (q, r, chosen * q_with + (1 - chosen) * q_without,
          chosen * r_with + (1 - chosen) * r_without)


@dataclasses.dataclass(frozen=True)
class EventBound:
  """The privacy loss that one event shows.

  Attributes:
    event: the event, e.g. ``"p_3(w) in trie"``.
    k: other holders of ``w`` in ``D``.
    direction: ``"D vs D'"`` bounds ``P[M(D) in S]`` by ``P[M(D') in S]``,
      ``"D' vs D"`` the reverse.
    p, p_other: the event's probability (or frequency) on the two sides, in
      the order of ``direction``.
    epsilon: the loss at the audited delta (exact, or the point estimate).
    lower, upper: the Monte Carlo interval of ``epsilon`` (equal to it when
      exact).
  """

  event: str
  k: int
  direction: str
  p: float
  p_other: float
  epsilon: float
  lower: float
  upper: float


@dataclasses.dataclass(frozen=True)
class AuditResult:
  """The audited privacy loss of one setup: a lower bound, not a certificate
  (a loss over the audited family of neighbouring populations only).

  Attributes:
    setup: what was audited, with Theorem 1's epsilon and delta.
    method: ``"exact"`` or ``"monte_carlo"``.
    epsilon: the exact loss over the family, or the Monte Carlo point
      estimate of its worst event.
    lower, upper: the Monte Carlo interval for the worst event (``lower`` is
      the empirical lower bound on epsilon); both equal ``epsilon`` if exact.
    confidence: simultaneous confidence of the Monte Carlo bounds.
    worst: the event that gives ``lower`` (the largest one).
    populations: the values of ``k`` audited.
    num_runs: engine runs per population and side (0 if exact).
    seconds: wall time of the audit.
  """

  setup: AuditSetup
  method: str
  epsilon: float
  lower: float
  upper: float
  confidence: float
  worst: EventBound
  # Thousands of values: left out of the repr, which a user prints.
  populations: tuple[int, ...] = dataclasses.field(repr=False)
  num_runs: int
  seconds: float

  @property
  def violates(self) -> bool:
    """True if the audited lower bound exceeds Theorem 1's epsilon."""
    return self.lower > self.setup.epsilon


def scan_populations(setup: AuditSetup) -> np.ndarray:
  """Values of k to scan: 0 up to where w's prefix passes almost surely."""
  size = setup.sizes[0]
  mean_holders = setup.run_theta + 10 * math.sqrt(setup.run_theta) + 20
  top = min(size, math.ceil(mean_holders * size / setup.batch_size))
  audit_memory.check_scan_fits(setup, top + 1)
  return np.arange(0, top + 1)


def _path_distributions(setup: AuditSetup, k: np.ndarray):
  audit_memory.check_scan_fits(setup, len(k))
  q, r, q_prime, r_prime = round_pass(setup, k)
  return (audit_bounds.depth_distribution(q, r, setup.levels),
          audit_bounds.depth_distribution(q_prime, r_prime, setup.levels))


def exact_audit(setup: AuditSetup,
                populations: np.ndarray | None = None) -> AuditResult:
  """The exact privacy loss on w's path, maximised over k (both directions)."""
  start = time.perf_counter()
  ks = scan_populations(setup) if populations is None else np.asarray(
      populations)
  dist, dist_prime = _path_distributions(setup, ks)
  best = None
  for direction, a, b in (("D vs D'", dist, dist_prime),
                          ("D' vs D", dist_prime, dist)):
    eps = audit_bounds.hockey_epsilon(a, b, setup.delta)
    j = int(np.argmax(eps))
    if best is None or eps[j] > best.epsilon:
      event = audit_bounds.optimal_event(a[j], b[j], eps[j])
      best = EventBound(event=audit_bounds.describe_depths(event, setup.levels),
                        k=int(ks[j]), direction=direction,
                        p=float(a[j][event].sum()),
                        p_other=float(b[j][event].sum()),
                        epsilon=float(eps[j]), lower=float(eps[j]),
                        upper=float(eps[j]))
  return AuditResult(setup=setup, method="exact", epsilon=best.epsilon,
                     lower=best.epsilon, upper=best.epsilon, confidence=1.0,
                     worst=best, populations=tuple(int(k) for k in ks),
                     num_runs=0, seconds=time.perf_counter() - start)


# ---- Monte Carlo path --------------------------------------------------------


def planned_populations(setup: AuditSetup, num_runs: int,
                        confidence: float) -> list[int]:
  """The k values to run: 0, theta - 1, theta and the k whose events the
  Monte Carlo path is expected to resolve best (from the exact probabilities).
  """
  ks = scan_populations(setup)
  dist, dist_prime = _path_distributions(setup, ks)
  events = audit_bounds.path_events(setup.levels)
  alpha = (1 - confidence) / (2 * len(events) * 4)
  expected = np.full(ks.size, -np.inf)
  for name, mask in events:
    del name
    p, p_prime = dist[:, mask].sum(axis=1), dist_prime[:, mask].sum(axis=1)
    for a, b in ((p, p_prime), (p_prime, p)):
      low, _ = audit_bounds.clopper_pearson(np.round(a * num_runs), num_runs,
                                            alpha)
      _, high = audit_bounds.clopper_pearson(np.round(b * num_runs), num_runs,
                                             alpha)
      expected = np.maximum(
          expected, audit_bounds.log_ratio(low - setup.delta, high))
  chosen = [0, setup.theta - 1, setup.theta, int(ks[int(np.argmax(expected))])]
  size = setup.sizes[0]
  return sorted({k for k in chosen if 0 <= k <= size - 1})


def build_populations(setup: AuditSetup, k: int
                      ) -> tuple[population_lib.Population,
                                 population_lib.Population]:
  """``D`` (k holders of w) and ``D'`` (one more holder, the target).

  The variants the engine samples itself get populations given by word
  counts (:meth:`Population.from_word_frequencies`: no per-user array, any
  n); the scheduled variants (``SCHEDULED_VARIANTS``) get them listed user
  by user, with the target the last user of ``D'``. The engine draws the
  same votes from both forms.
  """
  size, size_prime = setup.sizes
  if not 0 <= k <= size - 1:
    raise ValueError(f"k={k} holders of w must be in [0, n - 1 = {size - 1}]")
  w = TARGET_CHAR * setup.max_length
  if setup.variant not in SCHEDULED_VARIANTS:
    make_counted = lambda holders, others: (
        population_lib.Population.from_word_frequencies(
            [w, OTHER_WORD], [holders, others], max_length=setup.max_length))
    return (make_counted(k, size - k),
            make_counted(k + 1, size_prime - 1 - k))
  audit_memory.check_populations_fit(setup)
  base = [w] * k + [OTHER_WORD] * (size - k)
  neighbour = [w] * k + [OTHER_WORD] * (size_prime - 1 - k) + [w]
  make = lambda words: population_lib.Population.from_user_words(
      words, max_length=setup.max_length)
  return make(base), make(neighbour)


def _schedule(setup: AuditSetup, rng: np.random.Generator, size: int,
              target: int | None) -> list[np.ndarray] | None:
  """Fixed rounds for the broken sampling variants (None: the engine samples)."""
  m, levels = setup.batch_size, setup.levels
  if setup.variant == "with_replacement":
    return list(rng.integers(0, size, size=(levels, m)))
  if setup.variant == "double_vote" and target is not None:
    rounds = []
    for _ in range(levels):
      users = rng.choice(size, size=m, replace=False, shuffle=False)
      if target in users:
        users = np.append(users, target)
      rounds.append(users)
    return rounds
  return None


def run_depths(setup: AuditSetup, population: population_lib.Population,
               num_runs: int, seed: int, *, neighbour: bool,
               keep_tries: bool = False) -> tuple[np.ndarray, list]:
  """Runs the fast engine; per run, the depth of w's path (and the trie)."""
  w = TARGET_CHAR * setup.max_length
  target = population.num_users - 1 if neighbour else None
  depths = np.zeros(num_runs, dtype=np.int64)
  tries = []
  for run in range(num_runs):
    run_seed = seed + run
    schedule = _schedule(setup, np.random.default_rng([run_seed, 1]),
                         population.num_users, target)
    result = discover_lib.discover(
        population,
        # The audit's populations are small: it measures the guarantee of
        # parameters whose delta may exceed 1/n, which a release refuses.
        mechanism.Mechanism(theta=setup.run_theta, batch_size=setup.batch_size,
                            allow_no_guarantee=True, schedule=schedule,
                            allow_delta_above_1_over_n=True),
        max_length=setup.max_length, seed=run_seed)
    trie = result.trie
    depth = 0
    while depth < setup.max_length and w[:depth + 1] in trie:
      depth += 1
    if depth == setup.max_length and w in result.heavy_hitters:
      depth += 1
    depths[run] = depth
    if keep_tries:
      tries.append(tuple(tuple(trie.prefixes(d)) for d in
                         range(1, trie.depth + 1))
                   + (tuple(sorted(result.heavy_hitters)),))
  return depths, tries


def monte_carlo_audit(setup: AuditSetup, *, num_runs: int = 2000,
                      confidence: float = 0.95, seed: int = 0,
                      populations: list[int] | None = None) -> AuditResult:
  """An empirical lower bound on epsilon from runs of the fast engine.

  Args:
    setup: the audited configuration.
    num_runs: runs of the engine per population and side.
    confidence: the bound holds with this probability, for all events at
      once (Bonferroni over events, populations and directions).
    seed: seeds ``seed, seed + 1, ...`` (the same on both sides).
    populations: the values of k; default :func:`planned_populations`.
  """
  if not isinstance(num_runs, (int, np.integer)) or num_runs < 2:
    raise ValueError(f"num_runs must be an integer >= 2, got {num_runs!r}")
  audit_memory.check_runs_fit(num_runs)
  validation.check_probability("confidence", confidence)
  start = time.perf_counter()
  ks = (planned_populations(setup, num_runs, confidence)
        if populations is None else list(populations))
  whole = setup.sizes[1] <= WHOLE_TRIE_MAX_USERS
  events = audit_bounds.path_events(setup.levels)
  num_tests = len(ks) * 2 * (len(events) + whole)
  alpha = (1 - confidence) / (2 * num_tests)  # two CP ends per test
  half = num_runs // 2
  bounds: list[EventBound] = []
  for k in ks:
    pop, pop_prime = build_populations(setup, k)
    depth, tries = run_depths(setup, pop, num_runs, seed, neighbour=False,
                              keep_tries=whole)
    depth_prime, tries_prime = run_depths(setup, pop_prime, num_runs, seed,
                                          neighbour=True, keep_tries=whole)
    counted = [(name, np.isin(depth, np.flatnonzero(mask)).sum(),
                np.isin(depth_prime, np.flatnonzero(mask)).sum(), num_runs)
               for name, mask in events]
    if whole:
      counted += _whole_trie_events(tries, tries_prime, half, setup.delta)
    for name, x, x_prime, trials in counted:
      for direction, a, b in (("D vs D'", x, x_prime), ("D' vs D", x_prime, x)):
        if name.startswith("whole trie") and not name.endswith(direction):
          continue
        low_a, high_a = audit_bounds.clopper_pearson(a, trials, alpha)
        low_b, high_b = audit_bounds.clopper_pearson(b, trials, alpha)
        bounds.append(EventBound(
            event=name, k=int(k), direction=direction, p=a / trials,
            p_other=b / trials,
            epsilon=float(audit_bounds.event_epsilon(
                a / trials, b / trials, setup.delta)),
            lower=float(audit_bounds.log_ratio(low_a - setup.delta, high_b)),
            upper=float(audit_bounds.log_ratio(high_a - setup.delta, low_b))))
  worst = max(bounds, key=lambda b: (b.lower, b.epsilon))
  return AuditResult(setup=setup, method="monte_carlo", epsilon=worst.epsilon,
                     lower=worst.lower, upper=worst.upper,
                     confidence=confidence, worst=worst,
                     populations=tuple(int(k) for k in ks),
                     num_runs=num_runs, seconds=time.perf_counter() - start)


def _whole_trie_events(tries: list, tries_prime: list, half: int,
                       delta: float) -> list[tuple[str, int, int, int]]:
  """Whole-trie events: chosen on the first ``half`` runs, counted on the rest.

  Per direction, the event is the set of output tries whose frequency ratio
  on the selection half is largest, grown while it raises the estimate.
  """
  out = []
  for direction, a, b in (("D vs D'", tries, tries_prime),
                          ("D' vs D", tries_prime, tries)):
    sel_a, sel_b = _counts(a[:half]), _counts(b[:half])
    outcomes = sorted(set(sel_a) | set(sel_b),
                      key=lambda o: -(sel_a.get(o, 0) + 0.5) / (
                          sel_b.get(o, 0) + 0.5))
    chosen, best, ca, cb = set(), -math.inf, 0, 0
    for o in outcomes:
      ca, cb = ca + sel_a.get(o, 0), cb + sel_b.get(o, 0)
      value = math.log(max(ca / half - delta, 1e-300) / ((cb + 0.5) / half))
      if value > best:
        best, chosen = value, chosen | {o}
      else:
        break
    rest = len(a) - half
    out.append((f"whole trie, {direction}",
                sum(t in chosen for t in a[half:]),
                sum(t in chosen for t in b[half:]), rest))
  return out


def _counts(items: list) -> dict:
  counts: dict = {}
  for item in items:
    counts[item] = counts.get(item, 0) + 1
  return counts


def audit(n: int, max_length: int, privacy, *, variant: str = "correct",
          adjacency: str = "replace", num_runs: int = 2000,
          confidence: float = 0.95, seed: int = 0
          ) -> tuple[AuditResult, AuditResult]:
  """Audits one configuration: ``(exact result, Monte Carlo result)``.

  ``privacy``: a :class:`triehh.Mechanism` (theta with ``batch_size`` or
  ``gamma``), or a :class:`triehh.Target` (``epsilon``, optionally
  ``delta``, default ``1/n^2``, calibrated by Corollary 1) or a number, its
  epsilon; fixed-size batches (:func:`make_setup`). ``num_runs=0`` skips
  the Monte Carlo path (its result is then ``None``).
  """
  setup = make_setup(n, max_length, privacy, variant=variant,
                     adjacency=adjacency)
  if num_runs != 0:  # refused before the exact path runs
    if (isinstance(num_runs, bool) or not isinstance(num_runs, (int, np.integer))
        or num_runs < 2):
      raise ValueError(f"num_runs must be 0 (the exact path only) or an "
                       f"integer >= 2, got {num_runs!r}")
    audit_memory.check_runs_fit(num_runs)
    audit_memory.check_populations_fit(setup)
  exact = exact_audit(setup)
  if num_runs == 0:
    return exact, None
  return exact, monte_carlo_audit(setup, num_runs=num_runs,
                                  confidence=confidence, seed=seed)
