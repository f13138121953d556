"""The exact privacy audit of several words per user, redrawn every round.

Users hold bags of words; in every round each sampled user draws one word
of its bag with probability proportional to its local count
(``word_choice="per_round"``, the paper's Algorithm 3), and votes for the
word's next prefix if the word's current prefix is in the trie. The
library accounts for it by per-round composition, delta = L * delta_1
(``docs/privacy.md``, "Several words per user"); the paper states Theorem
1's delta for it (Corollary 2), which its proof does not cover.

**The family audited.** ``P`` is a several-word population of ``n`` users
(the Sentiment140 sample's users, or a resample of them) and ``u`` one of
its users. ``D`` is ``P`` with ``u``'s bag replaced by a bag ``B`` (by
default ``u``'s own bag, so ``D = P``); ``D'`` is ``P`` with ``u``'s bag
replaced by the empty bag (``u`` stays among the ``n`` users, is sampled as
before and never votes): the adjacency of ``docs/privacy.md``. :func:`audit`
takes the words whose paths sit longest near the threshold
(:func:`exposed_words`) and, per word,
its top holder (with its own bag, and with the word alone) and its top
holder whose bag holds other words too (:func:`top_holders`). The audited
output is, for one word ``w`` of ``B``, the depth that ``w``'s path reaches
in the trie (``p_i(w)`` in the trie for ``i`` up to that depth): a function
of the output trie, so its loss is at most the mechanism's. The loss is
maximised over the pairs ``(u, w)`` audited and both directions. It is a
lower bound over this family of neighbouring populations, not a
certificate.

**Why the law is exact.** In round ``i`` every user ``v`` would vote for
``p_i(w)`` with probability ``a_v``, the share of ``v``'s tokens whose
words have the prefix ``p_i(w)``, independently of the sampling and of the
other rounds (a redraw per round). Drawing these votes for all users and
then sampling ``m`` users uniformly without replacement gives the same law;
so given the total ``K`` of would-be voters (a Poisson-binomial sum over
the ``n`` users), the votes ``p_i(w)`` gets are Hypergeometric(n, K, m),
and ``p_i(w)`` enters the trie iff ``p_{i-1}(w)`` did and the votes reach
theta. Rounds are independent, so the depth of ``w``'s path has the law of
:func:`depth_law`, computed with sums of non-negative terms only (relative
precision kept in the tails). One approximation: a level whose failure
probability a Chernoff bound for sampling without replacement puts below
``CERTIFIED_FAILURE`` (1e-30) in ``D'`` (and so in ``D``, which has one
possible vote more) is taken to pass surely, a change of at most 1e-30 in
any event's probability, far below every delta audited.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from scipy import special

from checks import audit as audit_lib
from checks import audit_bounds
from checks import audit_memory
from triehh.core import choices
from triehh.core import population as population_lib
from triehh.theory import mechanism
from triehh.theory import policy

ACCOUNTINGS = ("per_round", "paper")
ACCOUNTING_LABELS = {
    "per_round": "ours: per-round composition, delta = L * delta_1",
    "paper": ("the paper's accounting (Corollary 2: Theorem 1's delta), not "
              "covered by a proof for per-round redraws")}
CERTIFIED_FAILURE = 1e-30
_TINY = 1e-300  # binomial and convolution terms below this are dropped


@dataclasses.dataclass(frozen=True)
class Setup:
  """The audited configuration and the (epsilon, delta) its accounting claims.

  Attributes:
    n: users in ``D`` and ``D'``.
    theta, batch_size: the threshold and m of the run.
    max_length: characters per word; ``max_length + 1`` levels.
    epsilon, delta: the claimed guarantee.
    accounting: ``"per_round"`` (L * delta_1) or ``"paper"`` (delta_1).
    delta_one: Theorem 1's delta for theta, the paper's delta.
  """

  n: int
  theta: int
  batch_size: int
  max_length: int
  epsilon: float
  delta: float
  accounting: str
  delta_one: float

  @property
  def levels(self) -> int:
    return self.max_length + 1


def make_setup(n: int, max_length: int, privacy, *,
               accounting: str = "per_round") -> Setup:
  """theta and m as the library calibrates them for ``accounting``.

  ``privacy``: a :class:`~triehh.theory.mechanism.Target` (or a number,
  its epsilon) to calibrate theta and m for, or a
  :class:`~triehh.theory.mechanism.Mechanism` giving them (theta with
  ``batch_size``); fixed-size batches, redrawn every round
  (:func:`checks.audit.theorem_1_privacy`). ``"per_round"``
  calibrates as a several-word run with per-round redraws (theta for delta
  / L); ``"paper"`` as one word per user (Theorem 1's delta, what
  Corollary 2 states).
  """
  if accounting not in ACCOUNTINGS:
    raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got "
                     f"{accounting!r}")
  if not isinstance(n, (int, np.integer)) or n < 2:
    raise ValueError(f"n must be an integer of at least 2 users, got {n!r}")
  audited = audit_lib.theorem_1_privacy(privacy, "the several-word audit")
  if audited.word_choice != choices.PER_ROUND:
    raise ValueError("the several-word audit covers words redrawn every "
                     f"round (word_choice='per_round'), got "
                     f"word_choice={audited.word_choice!r}")
  try:
    params = policy.resolve(int(n), int(max_length), audited,
                            single_word=accounting == "paper")
  except ValueError as err:
    reason = str(err).split(". Pass allow_no_guarantee")[0]
    raise ValueError(f"no guarantee to audit: {reason}") from None
  one = policy.resolve(int(n), int(max_length), mechanism.Mechanism(
      theta=params.theta, batch_size=params.batch_size,
      sampling=choices.FIXED))
  return Setup(n=int(n), theta=params.theta, batch_size=params.batch_size,
               max_length=int(max_length), epsilon=params.epsilon,
               delta=params.delta, accounting=accounting,
               delta_one=one.delta)


# ---- the law of one round --------------------------------------------------


def voter_total_law(shares: np.ndarray) -> tuple[int, np.ndarray]:
  """The law of K, the number of successes of Bernoulli(``shares``).

  Returns ``(offset, pmf)`` with ``P[K = offset + j] = pmf[j]``. Equal
  shares are grouped (a binomial each) and the groups convolved directly
  (non-negative sums: no cancellation); terms below 1e-300 are dropped.
  """
  shares = np.asarray(shares, dtype=float)
  if np.any((shares < 0) | (shares > 1)) or not np.all(np.isfinite(shares)):
    raise ValueError("shares must be probabilities in [0, 1]")
  offset = int(np.sum(shares >= 1))
  values, counts = np.unique(shares[(shares > 0) & (shares < 1)],
                             return_counts=True)
  pmf = np.ones(1)
  for a, c in sorted(zip(values, counts), key=lambda vc: vc[1]):
    k = np.arange(c + 1)
    log_b = (special.gammaln(c + 1) - special.gammaln(k + 1)
             - special.gammaln(c - k + 1) + k * math.log(a)
             + (c - k) * math.log1p(-a))
    b = np.exp(log_b)
    keep = np.flatnonzero(b > _TINY)
    pmf = np.convolve(pmf, b[keep[0]:keep[-1] + 1])
    offset += int(keep[0])
    keep = np.flatnonzero(pmf > _TINY)
    pmf = pmf[keep[0]:keep[-1] + 1]
    offset += int(keep[0])
  return offset, pmf


def failure_bound(shares: np.ndarray, n: int, batch_size: int,
                  theta: int) -> float:
  """A Chernoff upper bound on P[fewer than theta votes] in one round.

  Votes are Bernoulli(a_v) of ``batch_size`` users sampled without
  replacement among ``n`` (users not in ``shares`` have a_v = 0). Given the
  sample, E[e^{-lX}] <= exp(-c sum_S a_v), c = 1 - e^{-l}; by Hoeffding's
  comparison of sampling without and with replacement (exp is convex) that
  is at most (mean_v e^{-c a_v})^m. Returns the bound minimised over l.
  """
  values, counts = np.unique(np.asarray(shares, float), return_counts=True)
  lam = np.linspace(0.01, 30.0, 600)[:, None]
  c = -np.expm1(-lam)
  lost = (counts * -np.expm1(-c * values)).sum(axis=1) / n
  log_bound = lam[:, 0] * (theta - 1) + batch_size * np.log1p(-lost)
  return float(math.exp(min(0.0, log_bound.min())))


def round_pass(others: np.ndarray, share_u: float,
               setup: Setup) -> tuple[float, float, float, float]:
  """``(q, 1 - q, q', 1 - q')``: p_i(w) reaches theta votes in ``D``, ``D'``.

  Args:
    others: a_v > 0 of the users other than u (``n - 1`` users in all).
    share_u: u's share on the prefix in ``D`` (in ``D'`` it never votes).
    setup: n, m and theta.
  """
  n, m, t = setup.n, setup.batch_size, setup.theta
  if failure_bound(others, n, m, t) <= CERTIFIED_FAILURE:
    return 1.0, 0.0, 1.0, 0.0
  offset, pmf = voter_total_law(others)
  pmf_u = np.convolve(pmf, [1.0 - share_u, share_u])
  k = offset + np.arange(pmf_u.size)
  above, below = audit_bounds.hypergeom_tail(n, np.minimum(k, n), m, t)
  return (float(pmf_u @ above), float(pmf_u @ below),
          float(pmf @ above[:-1]), float(pmf @ below[:-1]))


def depth_law(q: np.ndarray, r: np.ndarray) -> np.ndarray:
  """P(w's path reaches exactly depth d), d = 0..levels, from each level's
  pass probability ``q[i]`` and ``r[i] = 1 - q[i]`` (independent rounds)."""
  q, r = np.asarray(q, float), np.asarray(r, float)
  reach = np.concatenate([[1.0], np.cumprod(q)])
  return reach * np.concatenate([r, [1.0]])


# ---- one pair (u, w) and the audit -------------------------------------------


@dataclasses.dataclass(frozen=True)
class PairLoss:
  """The exact loss on w's path for one differing user u.

  Attributes:
    word, user: the audited word and differing user (index in ``P``).
    bag: ``"own"`` (u's bag) or ``"{w}"`` (u's bag replaced by w alone).
    share: u's share of w (tokens of w over u's tokens in ``B``).
    expected_votes: m * F(w) / n, w's expected votes at its last level.
    epsilon: the loss at the setup's delta, per direction
      (``"D vs D'"``, ``"D' vs D"``).
    delta_at_epsilon: H_{e^eps}, per direction, at the claimed epsilon.
    event: the worst event (of the larger direction), in words.
  """

  word: str
  user: int
  bag: str
  share: float
  expected_votes: float
  epsilon: dict
  delta_at_epsilon: dict
  event: str


class PrefixShares:
  """Per-user shares of every prefix of a word, read off a population."""

  def __init__(self, population: population_lib.Population):
    population.check_user_array("the several-words audit")
    if population.user_offsets is None:
      raise ValueError("the several-words audit needs a several-word "
                       "population (users holding bags of words)")
    audit_memory.check_several_words_fits(population)
    self.population = population
    self.entry_user = np.repeat(np.arange(population.num_users),
                                np.diff(population.user_offsets))
    self.totals = population.user_totals

  def word_index(self, word: str) -> int:
    found = np.flatnonzero(self.population.vocabulary == word)
    if found.size == 0:
      raise ValueError(f"word {word!r} is not in the population")
    return int(found[0])

  def levels(self, word: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per level of w's sequence: (holder users, their shares), all users."""
    pop = self.population
    out = []
    for level in range(1, int((pop.codes[word] >= 0).sum()) + 1):
      ids = pop.prefix_ids[level]
      in_prefix = ids == ids[word]
      entries = np.flatnonzero(in_prefix[pop.entry_word])
      users, starts = np.unique(self.entry_user[entries], return_index=True)
      counts = np.add.reduceat(pop.entry_count[entries], starts)
      out.append((users, counts / self.totals[users]))
    return out


def path_laws(shares: PrefixShares, setup: Setup, word: str, user: int,
              bag: str = "own") -> tuple[np.ndarray, np.ndarray, float]:
  """The exact laws of the depth ``word``'s path reaches in ``D``, ``D'``.

  ``user`` is the differing user. ``bag="own"``: ``D = P`` (the user keeps
  its bag, which must hold the word); ``bag="word"``: in ``D`` the user's
  bag is the word alone. Returns the two laws (over depths 0..levels of
  the word) and the user's share of the word in ``D``.
  """
  if bag not in ("own", "word"):
    raise ValueError(f"bag must be 'own' or 'word', got {bag!r}")
  num_users = shares.population.num_users
  if not isinstance(user, (int, np.integer)) or not 0 <= user < num_users:
    raise ValueError(f"user must be an index in [0, {num_users}), got "
                     f"{user!r}")
  levels = shares.levels(shares.word_index(word))
  if len(levels) > setup.levels:
    raise ValueError(f"the population has {len(levels)} levels, the setup "
                     f"{setup.levels}")
  q, r, q_prime, r_prime, share = [], [], [], [], 1.0
  for users, level_shares in levels:
    mine = users == user
    share = float(level_shares[mine].sum()) if bag == "own" else 1.0
    if share == 0:
      raise ValueError(f"user {user} does not hold {word!r}")
    pass_d, fail_d, pass_p, fail_p = round_pass(level_shares[~mine], share,
                                                setup)
    q.append(pass_d)
    r.append(fail_d)
    q_prime.append(pass_p)
    r_prime.append(fail_p)
  # share is now the last level's: the share of the word itself.
  return depth_law(q, r), depth_law(q_prime, r_prime), share


def pair_loss(shares: PrefixShares, setup: Setup, word: str, user: int,
              bag: str = "own") -> PairLoss:
  """The exact loss on ``word``'s path with ``user`` as the differing user,
  both directions (``bag`` as in :func:`path_laws`)."""
  law, law_prime, share = path_laws(shares, setup, word, user, bag)
  eps, at_eps, events = {}, {}, {}
  for direction, a, b in (("D vs D'", law, law_prime),
                          ("D' vs D", law_prime, law)):
    eps[direction] = float(audit_bounds.hockey_epsilon(a, b, setup.delta)[0])
    at_eps[direction] = float(np.maximum(
        a - math.exp(setup.epsilon) * b, 0).sum())
    events[direction] = audit_bounds.describe_depths(
        audit_bounds.optimal_event(a, b, eps[direction]), law.size - 1)
  worst = max(eps, key=eps.get)
  weight = shares.population.true_weights[shares.word_index(word)]
  return PairLoss(
      word=word, user=int(user), bag="own" if bag == "own" else "{w}",
      share=share, expected_votes=float(setup.batch_size * weight / setup.n),
      epsilon=eps, delta_at_epsilon=at_eps,
      event=f"{events[worst]} ({worst})")


def prefix_votes(population: population_lib.Population,
                 setup: Setup) -> np.ndarray:
  """``[V, levels]``: expected votes m * F(p_i(w)) / n of every word's
  prefix at each level (0 past the word's sequence)."""
  pop = population
  users = np.repeat(np.arange(pop.num_users), np.diff(pop.user_offsets))
  entry_share = pop.entry_count / pop.user_totals[users]
  out = np.zeros(pop.codes.shape)
  for level in range(1, pop.codes.shape[1] + 1):
    if pop.num_prefixes[level] == 0:  # no word is this long: no votes
      continue
    ids = pop.prefix_ids[level]
    at = ids[pop.entry_word]
    mass = np.bincount(at[at >= 0], weights=entry_share[at >= 0],
                       minlength=pop.num_prefixes[level])
    out[:, level - 1] = np.where(ids >= 0, mass[np.maximum(ids, 0)], 0.0)
  return out * setup.batch_size / setup.n


def exposed_words(population: population_lib.Population, setup: Setup,
                  num_words: int, per_prefix: int = 2) -> list[str]:
  """The ``num_words`` words whose paths sit longest near the threshold.

  A word's score is the number of its levels whose prefix expects between
  theta / 2 and 2 theta votes (:func:`prefix_votes`); ties go to the word
  whose own expected votes (its last level) are nearest theta. At most
  ``per_prefix`` words share their deepest such prefix (so that one
  near-threshold stem and its rare extensions do not fill the list), and
  words that share their whole path (truncated alike) count once.
  """
  if not isinstance(num_words, (int, np.integer)) or num_words < 1:
    raise ValueError(f"num_words must be an integer >= 1, got {num_words!r}")
  votes = prefix_votes(population, setup)
  is_near = (votes >= setup.theta / 2) & (votes <= 2 * setup.theta)
  near = is_near.sum(axis=1)
  seq = (population.codes >= 0).sum(axis=1)
  words = np.arange(seq.size)
  last = votes[words, seq - 1]
  distance = np.abs(np.log(np.maximum(last, 1e-300) / setup.theta))
  order = np.lexsort((distance, -near))
  ids = np.stack(population.prefix_ids)  # [levels + 1, V]
  path = ids[seq, words]
  deepest = np.where(near > 0, is_near.shape[1] - np.argmax(
      is_near[:, ::-1], axis=1), 0)
  stem = ids[deepest, words]
  chosen, seen, stems = [], set(), {}
  for i in order:
    key = (int(deepest[i]), int(stem[i]))
    if (seq[i], path[i]) in seen or (near[i] and stems.get(key, 0)
                                     >= per_prefix):
      continue
    seen.add((seq[i], path[i]))
    stems[key] = stems.get(key, 0) + 1
    chosen.append(str(population.vocabulary[i]))
    if len(chosen) == num_words:
      break
  return chosen


def top_holders(shares: PrefixShares, word: str) -> tuple[int, int | None]:
  """The user with the largest share of ``word``, and the one with the
  largest share below 1 (a bag with other words too; None if no user has
  one). Ties go to the first user."""
  users, level_shares = shares.levels(shares.word_index(word))[-1]
  top = int(users[int(np.argmax(level_shares))])
  below = np.where(level_shares < 1, level_shares, -1.0)
  several = int(users[int(np.argmax(below))]) if below.max() > 0 else None
  return top, several


@dataclasses.dataclass(frozen=True)
class Result:
  """The several-words audit of one setup: a lower bound over the family
  (module docstring), not a certificate.

  Attributes:
    setup: the configuration and its claim.
    pairs: every audited (u, w) with its losses.
    worst: the pair with the largest loss.
    seconds: wall time.
  """

  setup: Setup
  pairs: tuple[PairLoss, ...] = dataclasses.field(repr=False)
  worst: PairLoss
  seconds: float

  @property
  def epsilon(self) -> dict:
    """The largest loss per direction at the setup's delta."""
    return {d: max(p.epsilon[d] for p in self.pairs)
            for d in ("D vs D'", "D' vs D")}

  @property
  def worst_several(self) -> PairLoss | None:
    """The worst pair whose bag in ``D`` holds other words too (share < 1),
    the pairs where the redraw matters; None if there is none."""
    several = [p for p in self.pairs if p.share < 1]
    return max(several, key=lambda p: max(p.epsilon.values()),
               default=None)

  @property
  def delta_at_epsilon(self) -> dict:
    """The largest H_{e^eps} per direction at the claimed epsilon."""
    return {d: max(p.delta_at_epsilon[d] for p in self.pairs)
            for d in ("D vs D'", "D' vs D")}


def audit(population: population_lib.Population, setup: Setup, *,
          num_words: int = 40, words: list[str] | None = None,
          shares: PrefixShares | None = None) -> Result:
  """The exact loss over the most exposed words and their top holders.

  For each word (``words``, or :func:`exposed_words`) three pairs: the user
  with the largest share of it, with its own bag and with its bag replaced
  by the word alone; and the user with the largest share below 1 (whose
  bag holds other words, so that its redraws matter), with its own bag.
  """
  if population.num_users != setup.n:
    raise ValueError(f"the setup is for n={setup.n:,} users, the population "
                     f"has {population.num_users:,}")
  start = time.perf_counter()
  shares = shares or PrefixShares(population)
  chosen = words if words is not None else exposed_words(population, setup,
                                                         num_words)
  pairs = []
  for word in chosen:
    top, several = top_holders(shares, word)
    pairs.append(pair_loss(shares, setup, word, top, "own"))
    pairs.append(pair_loss(shares, setup, word, top, "word"))
    if several is not None and several != top:
      pairs.append(pair_loss(shares, setup, word, several, "own"))
  worst = max(pairs, key=lambda p: max(p.epsilon.values()))
  return Result(setup=setup, pairs=tuple(pairs), worst=worst,
                seconds=time.perf_counter() - start)
