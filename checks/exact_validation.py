"""Privacy claims checked against the exact law of TrieHH on tiny populations.

:mod:`triehh.theory.exact` gives the exact output law of a run on a few
dozen users, so the exact ``delta(epsilon)`` of a pair of neighbouring
populations (the hockey-stick divergence, in both directions). This module
draws small populations built to be hard for the accountants and compares:

* :func:`check_poisson`: Poisson sampling (every user takes part in each
  round with probability ``rate``) against
  :func:`triehh.theory.poisson.delta_for_epsilon`, which claims its delta
  for both directions, for add/remove adjacency (``"remove"``), the
  paper's (the user's word replaced by the empty word, ``"empty"``) and,
  when asked (``adjacencies=POISSON_ADJACENCIES``), replace-one
  (``"replace"``: the user's words replaced by the case's
  :attr:`Case.replacement`, against the accountant's ``REPLACE_ONE``
  claim), for any population, one word or several words per user (a pick
  per round or per run), every ``theta >= 1`` and rate in (0, 1). Checked
  on a grid of epsilons (:data:`POISSON_EPSILONS`) and at the accountant's
  own :func:`~triehh.theory.poisson.epsilon_for_delta` for a few deltas
  (:data:`POISSON_DELTAS`), against that delta.
* :func:`check_theorem1`: fixed-size sampling inside Theorem 1's
  conditions (:func:`triehh.theory.privacy.check_conditions`), at Theorem
  1's epsilon, against its delta (``L * delta_1`` for several words per user
  with a pick per round, as ``docs/privacy.md`` accounts for them). Theorem
  1 proves one direction only, ``P[M(D) in S] <= e^eps P[M(D') in S] +
  delta`` with D holding the differing user's word and D' the empty word in
  its place; the reverse divergence is recorded too, to report how often
  and by how much it exceeds delta (it is not claimed, and it does fail:
  :mod:`triehh.theory.crowding`).

Populations (:func:`random_cases`, :func:`case_for`) come in families
(:data:`FAMILIES`): the differing user's word, or a prefix of it, shared by
theta - 2 to theta + 2 others, or by about as many as make the others'
expected votes near theta (``theta / rate`` under Poisson sampling,
``theta * n / m`` for a batch of m), where one vote moves the chance that
a prefix passes the most (:func:`_share`); groups that crowd the
batch (empty words, words on other branches); chains of words of several
lengths sharing prefixes; two groups on two branches; several words per
user with a pick per round or per run; and uniform random words. Alphabets
``"ab"`` and ``"abc"``, ``max_length`` 1 to 3 (L = 2 to 4 levels). A
Poisson case also draws the differing user's replacement for replace-one
adjacency (:func:`_replacement`): another group's word of the population
(near the threshold, as the shares are), a word leaving the user's path at
some character or at the first, a prefix or an extension of the user's
word, a bag of several words; the other group's word in two-group
populations and a bag in the several-words families half the time.

Laws are computed in float64 by default (``exact=False``, about 1e-16
accurate), so a bound counts as met when ``exact <= claimed * (1 +
RELATIVE_TOLERANCE) + ABSOLUTE_TOLERANCE``.

Long file: the adversarial families, the two checks and their records are
one experiment; the families could move to a module of their own.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction

import numpy as np

from triehh.core import choices
from triehh.theory import exact
from triehh.theory import pld
from triehh.theory import poisson
from triehh.theory import privacy
from triehh.theory.adjacency import Adjacency

POISSON = "poisson"
THEOREM1 = "theorem1"
ACCOUNTANTS = (POISSON, THEOREM1)

# Population families (see the module docstring).
THRESHOLD = "threshold"
PREFIX_THRESHOLD = "prefix_threshold"
CROWD = "crowd"
PREFIXES = "prefixes"
TWO_GROUPS = "two_groups"
PER_ROUND = "per_round"
PER_RUN = "per_run"
RANDOM = "random"
FAMILIES = (THRESHOLD, PREFIX_THRESHOLD, CROWD, PREFIXES, TWO_GROUPS,
            PER_ROUND, PER_RUN, RANDOM)

# The adjacencies check_poisson can check ("replace" needs a replacement),
# and the accountant's relation for each.
POISSON_ADJACENCIES = exact.ADJACENCIES + (exact.REPLACE,)
RELATIONS = {
    exact.EMPTY: Adjacency.REPLACE_SPECIAL,
    exact.REMOVE: Adjacency.ADD_OR_REMOVE_ONE,
    exact.REPLACE: Adjacency.REPLACE_ONE,
}

ALPHABETS = ("ab", "abc")
MAX_LENGTHS = (1, 2, 3)

# Epsilons of the Poisson grid, and deltas at whose epsilon_for_delta the
# Poisson accountant is checked too.
POISSON_EPSILONS = (0.0, 0.1, 0.3, 1.0, 2.0)
POISSON_DELTAS = (1e-1, 1e-2, 1e-3)
# Sampling rates and thresholds of the Poisson cases.
POISSON_RATES = (0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.9)
POISSON_THETAS = (1, 2, 2, 3, 3, 4, 5, 6)

# float64 laws: a bound is met when exact <= claimed * (1 + rtol) + atol.
RELATIVE_TOLERANCE = 1e-9
ABSOLUTE_TOLERANCE = 1e-15

# Most users sharing one word in a Poisson case.
MAX_POISSON_SHARE = 40

# Theorem 1's populations: n in [16, MAX_THEOREM1_USERS].
MIN_THEOREM1_USERS = 16
MAX_THEOREM1_USERS = 49


def within(value: float, bound: float) -> bool:
  """Whether ``value <= bound`` up to the float tolerance."""
  return value <= bound * (1.0 + RELATIVE_TOLERANCE) + ABSOLUTE_TOLERANCE


def ratio(value: float, bound: float) -> float:
  """``value / bound``; with ``bound == 0``: 0 if ``value`` is 0 up to the
  tolerance, else infinity."""
  if bound > 0:
    return value / bound
  return 0.0 if within(value, 0.0) else math.inf


# ---- cases -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
  """A population, its differing user and a run.

  Attributes:
    accountant: :data:`POISSON` or :data:`THEOREM1`, the claim to check.
    family: the family it was drawn from (:data:`FAMILIES`).
    users: per user, a word or a mapping word -> count (``""``: empty).
    index: the differing user (present in D; empty, removed or replaced in
      D').
    theta, max_length, sampling, rate, batch_size, word_choice: the run
      (:func:`triehh.theory.exact.output_distribution`'s keywords).
    replacement: the differing user's words in D' under replace-one
      adjacency (a word or a mapping word -> count; ``None``: none drawn).
  """

  accountant: str
  family: str
  users: tuple
  index: int
  theta: int
  max_length: int
  sampling: str
  rate: float | None = None
  batch_size: int | None = None
  word_choice: str = choices.PER_ROUND
  replacement: str | Mapping[str, int] | None = None

  @property
  def n(self) -> int:
    return len(self.users)

  @property
  def num_levels(self) -> int:
    """L = max_length + 1 (the end symbol is a level)."""
    return self.max_length + 1

  @property
  def several_words(self) -> bool:
    """Whether some user holds more than one distinct word."""
    return any(isinstance(u, Mapping) and len(u) > 1 for u in self.users)

  def run(self, exact_numbers: bool = False) -> dict:
    """:func:`~triehh.theory.exact.output_distribution`'s keywords."""
    run = dict(theta=self.theta, max_length=self.max_length,
               sampling=self.sampling, word_choice=self.word_choice,
               exact=exact_numbers)
    if self.sampling == choices.FIXED:
      run["batch_size"] = self.batch_size
    else:
      run["rate"] = self.rate
    return run

  def neighbour(self, adjacency: str) -> list:
    """D': the differing user's word emptied, the user removed, or its
    words replaced by :attr:`replacement`."""
    if adjacency == exact.REPLACE and self.replacement is None:
      raise ValueError("adjacency 'replace' needs a case with a replacement")
    return exact.neighbours(list(self.users), self.index, adjacency,
                            self.replacement)

  def with_index(self, index: int) -> "Case":
    """User ``index`` differing instead. It keeps the replacement unless it
    holds those words already; then it is replaced by the words of the
    case's differing user (a swap of two kinds of users)."""
    replacement = self.replacement
    if (replacement is not None
        and _user_key(replacement) == _user_key(self.users[index])):
      replacement = self.users[self.index]
    return dataclasses.replace(self, index=index, replacement=replacement)

  def differing_indices(self, most: int | None = None) -> list[int]:
    """One user per distinct kind of user that votes (``self.index``
    first): the differing users worth checking (users of one kind give the
    same D')."""
    seen = {_user_key(self.users[self.index])}
    out = [self.index]
    for i, user in enumerate(self.users):
      key = _user_key(user)
      if key in seen or key == (("", 1),):
        continue
      seen.add(key)
      out.append(i)
    return out if most is None else out[:most]

  def describe(self) -> str:
    """The population and run in one line."""
    counts = collections.Counter(_show_user(u) for u in self.users)
    people = ", ".join(f"{c} x {w}" for w, c in sorted(
        counts.items(), key=lambda item: (-item[1], item[0])))
    if self.sampling == choices.FIXED:
      sampling = (f"fixed m={self.batch_size} "
                  f"(gamma={self.batch_size / math.sqrt(self.n):.4g})")
    else:
      sampling = f"poisson q={self.rate:g}"
    choice = (f", word_choice={self.word_choice}" if self.several_words
              else "")
    replaced = ("" if self.replacement is None else
                f" (replaced by {_show_user(self.replacement)})")
    return (f"[{self.family}] n={self.n}: {people}; differing user #"
            f"{self.index} = {_show_user(self.users[self.index])}"
            f"{replaced}; theta={self.theta}, max_length={self.max_length} "
            f"(L={self.num_levels}), {sampling}{choice}")


def _show_user(user) -> str:
  if isinstance(user, str):
    return repr(user)
  return "{" + ", ".join(f"{w!r}: {c}" for w, c in sorted(user.items())) + "}"


def _user_key(user) -> tuple:
  if isinstance(user, str):
    return ((user, 1),)
  if len(user) == 1:
    return ((next(iter(user)), 1),)
  total = math.gcd(*user.values())
  return tuple(sorted((w, c // total) for w, c in user.items()))


def _words(user) -> list[str]:
  """The user's distinct words."""
  return [user] if isinstance(user, str) else sorted(user)


def _word(rng: random.Random, alphabet: str, lo: int, hi: int,
          first: str | None = None) -> str:
  """A word of lo..hi characters (first character ``first`` if given)."""
  length = rng.randint(lo, hi)
  if length == 0:
    return ""
  head = first if first is not None else rng.choice(alphabet)
  return head + "".join(rng.choice(alphabet) for _ in range(length - 1))


def _other_branch(rng: random.Random, alphabet: str, word: str,
                  max_length: int) -> str:
  """A word that leaves ``word``'s path at some character."""
  if not word:
    return _word(rng, alphabet, 1, max_length + 1)
  at = rng.randrange(len(word))
  letter = rng.choice([c for c in alphabet if c != word[at]])
  tail = _word(rng, alphabet, 0, max(0, max_length - at - 1))
  return word[:at] + letter + tail


def _share(rng: random.Random, theta: int, scale: float, most: int) -> int:
  """How many others hold a shared word (at most ``most``).

  Half the time theta - 2 .. theta + 2 (the differing user's vote is
  needed or nearly so); else about ``(theta - 1 + z sqrt(theta)) * scale``
  for z in [-1.5, 3], where the others' expected votes are near theta
  (``scale``: 1 / rate for Poisson sampling, n / m for a batch of m of n):
  there the differing user moves the pass probability the most.
  """
  if rng.random() < 0.5:
    share = theta - 1 + rng.choice((-1, 0, 0, 0, 1, 1, 2, 3))
  else:
    z = rng.uniform(-1.5, 3.0)
    share = round((theta - 1 + z * math.sqrt(theta)) * scale)
  return min(most, max(0, share))


def _several(rng: random.Random, alphabet: str, w: str,
             max_length: int) -> dict[str, int]:
  """A several-word user around ``w``: w with 1-2 other words (a prefix,
  an extension or another branch), counts 1-3."""
  words = {w: rng.randint(1, 3)}
  for _ in range(rng.randint(1, 2)):
    kind = rng.random()
    if kind < 0.35 and len(w) > 1:
      other = w[:rng.randrange(1, len(w))]
    elif kind < 0.55:
      other = w + _word(rng, alphabet, 1, 1)
    else:
      other = _other_branch(rng, alphabet, w, max_length)
    words[other] = words.get(other, 0) + rng.randint(1, 3)
  return words


def _core(family: str, rng: random.Random, theta: int, max_length: int,
          alphabet: str, room: int, scale: float) -> tuple[list, list]:
  """The family's users: (core users, differing user first; filler words).

  ``room`` is a rough budget of users, ``scale`` :func:`_share`'s. The
  filler words are what the rest of a fixed-size population is made of.
  """
  def share() -> int:
    return _share(rng, theta, scale, room)

  w = _word(rng, alphabet, 1, max_length + 1)  # max_length + 1: truncated
  other = _other_branch(rng, alphabet, w, max_length)
  fillers = rng.choice([[""], [""], [other], ["", other],
                        [_other_branch(rng, alphabet, w, max_length), ""]])
  if family == THRESHOLD:
    users = [w] + [w] * share()
    users += [rng.choice(fillers) for _ in range(rng.randint(0, 3))]
  elif family == PREFIX_THRESHOLD:
    if len(w) < 2:
      w = w + _word(rng, alphabet, 1, max_length)
    p = w[:rng.randrange(1, len(w))]
    others = [p if rng.random() < 0.5 else p + _word(rng, alphabet, 1, 1)
              for _ in range(share())]
    users = [w] + others + [w] * rng.randint(0, max(0, theta - 2))
  elif family == CROWD:
    users = [w] + [w] * (theta - 1 + rng.randint(0, 4))
    fillers = rng.choice([[""], [other], ["", other]])
    users += [rng.choice(fillers) for _ in range(rng.randint(1, room))]
  elif family == PREFIXES:
    chain = [w[:i] for i in range(1, len(w) + 1)]
    chain += [c[:-1] + rng.choice(alphabet) for c in chain if len(c) > 1]
    users = []
    for word in chain:
      users += [word] * share()
    users = [rng.choice(chain)] + users
  elif family == TWO_GROUPS:
    a, b = alphabet[0], alphabet[1]
    first = [_word(rng, alphabet, 1, max_length, a) for _ in range(2)]
    second = [_word(rng, alphabet, 1, max_length, b) for _ in range(2)]
    users = ([rng.choice(first) for _ in range(share() + 1)]
             + [rng.choice(second) for _ in range(share())])
    fillers = [rng.choice(first), rng.choice(second)]
  elif family in (PER_ROUND, PER_RUN):
    users, fillers = _several_core(rng, alphabet, w, max_length, share)
  elif family == RANDOM:
    vocabulary = [_word(rng, alphabet, 0, max_length + 1)
                  for _ in range(rng.randint(2, 4))]
    if not vocabulary[0]:
      vocabulary[0] = w
    users = [vocabulary[0]] + [rng.choice(vocabulary)
                               for _ in range(rng.randint(theta, room))]
    fillers = vocabulary[:2]
  else:
    raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
  return users, fillers


def _several_core(rng: random.Random, alphabet: str, w: str, max_length: int,
                  share: Callable[[], int]) -> tuple[list, list]:
  """The several-words families' users: the differing user's words around
  ``w``, each shared by about ``share()`` others; and their fillers."""
  mine = _several(rng, alphabet, w, max_length)
  words = sorted(mine)
  users = [mine]
  for word in words:
    users += [word] * max(0, share() - 1)
  for _ in range(rng.randint(0, 3)):
    users.append(_several(rng, alphabet, rng.choice(words), max_length))
  return users, [rng.choice(words), ""]


def _place(rng: random.Random, users: list) -> tuple[tuple, int]:
  """Shuffles the users; returns them and where the first one went."""
  order = list(range(len(users)))
  rng.shuffle(order)
  return tuple(users[i] for i in order), order.index(0)


def _replacement(rng: random.Random, family: str, users: Sequence, index: int,
                 alphabet: str, max_length: int) -> str | dict[str, int]:
  """Words to replace user ``index``'s with, drawn to be hard for the
  replace-one claim (never the user's own words).

  One of: another group's word of the population (drawn by how many hold
  it, so mostly one near the threshold), a word leaving the path of one of
  the user's words at some character or at the first, a prefix or an
  extension of it, or a bag of several words around one of these. In
  :data:`TWO_GROUPS` the other group's word, and in the several-words
  families a bag, half the time.
  """
  mine = users[index]
  own = _words(mine)
  w = rng.choice(own)
  held = [word for user in users for word in _words(user)
          if word and word not in own]
  other_group = [word for word in held if word[0] != w[:1]]

  def population() -> str:
    return rng.choice(held) if held else _other_branch(rng, alphabet, w,
                                                       max_length)

  def branch() -> str:
    return _other_branch(rng, alphabet, w, max_length)

  def first_letter() -> str:
    return _other_branch(rng, alphabet, w[:1], max_length)

  def prefix() -> str:
    return w[:rng.randrange(1, len(w))] if len(w) > 1 else branch()

  def extension() -> str:
    if len(w) > max_length:  # truncated: a longer word votes the same
      return prefix()
    return w + _word(rng, alphabet, 1, 1)

  def bag() -> dict[str, int]:
    base = rng.choice((population, branch, lambda: w))()
    return _several(rng, alphabet, base or w or alphabet[0], max_length)

  kinds = (population, population, branch, first_letter, prefix, extension,
           bag)
  for _ in range(20):
    if family == TWO_GROUPS and other_group and rng.random() < 0.5:
      out = rng.choice(other_group)
    elif family in (PER_ROUND, PER_RUN) and rng.random() < 0.5:
      out = bag()
    else:
      out = rng.choice(kinds)()
    if _user_key(out) != _user_key(mine):
      return out
  # A word off the path of one of the user's words differs from the user's
  # (a several-word user differs from any one word).
  return _other_branch(rng, alphabet, w, max_length)


def random_poisson_case(rng: random.Random, family: str) -> Case:
  """A Poisson-sampled case of ``family`` (1 to a few hundred users, at
  most :data:`MAX_POISSON_SHARE` holding one word), with the differing
  user's replacement for replace-one adjacency (:func:`_replacement`,
  drawn last: the population is what it was before replacements were
  drawn)."""
  theta = rng.choice(POISSON_THETAS)
  max_length = rng.choice(MAX_LENGTHS)
  alphabet = rng.choice(ALPHABETS)
  rate = rng.choice(POISSON_RATES)
  users, _ = _core(family, rng, theta, max_length, alphabet,
                   room=MAX_POISSON_SHARE, scale=1.0 / rate)
  users, index = _place(rng, users)
  replacement = _replacement(rng, family, users, index, alphabet, max_length)
  return Case(POISSON, family, users, index, theta, max_length,
              choices.POISSON, rate=rate,
              word_choice=PER_RUN if family == PER_RUN else PER_ROUND,
              replacement=replacement)


@functools.cache
def theorem1_settings(max_users: int = MAX_THEOREM1_USERS
                      ) -> tuple[tuple[int, int, int], ...]:
  """Every ``(n, theta, m)`` with ``16 <= n <= max_users`` inside Theorem
  1's conditions (gamma = m / sqrt(n))."""
  out = []
  for n in range(MIN_THEOREM1_USERS, max_users + 1):
    for theta in range(4, math.isqrt(n) + 1):
      for m in range(1, n + 1):
        try:
          privacy.check_conditions(n, theta, m / math.sqrt(n))
        except ValueError:
          continue
        out.append((n, theta, m))
  return tuple(out)


def random_theorem1_case(rng: random.Random, family: str,
                         max_users: int = MAX_THEOREM1_USERS) -> Case:
  """A fixed-size case of ``family`` inside Theorem 1's conditions."""
  settings = theorem1_settings(max_users)
  if not settings:
    raise ValueError(f"no population of at most {max_users} users meets "
                     "Theorem 1's conditions")
  # Every theta about equally often, then n and m.
  theta = rng.choice(sorted({t for _, t, _ in settings}))
  n, theta, m = rng.choice([s for s in settings if s[1] == theta])
  max_length = rng.choice(MAX_LENGTHS)
  alphabet = rng.choice(ALPHABETS)
  for _ in range(100):
    users, fillers = _core(family, rng, theta, max_length, alphabet,
                           room=n - theta, scale=n / m)
    if len(users) <= n:
      break
  else:
    raise AssertionError("no core population fits")  # a bug
  if family == CROWD:
    # Most users hold the differing user's word; m - theta to m - theta + 6
    # users crowd it out (empty words or another branch's word).
    crowd = min(n - theta, max(0, m - theta) + rng.randint(0, 6))
    users = [users[0]] * (n - crowd) + [rng.choice(fillers)
                                        for _ in range(crowd)]
  else:
    users += [rng.choice(fillers) for _ in range(n - len(users))]
  # Keep several-word runs small: at most 6 several-word users besides the
  # differing one (the per-run law mixes over their picks).
  several = [i for i, u in enumerate(users) if isinstance(u, Mapping)]
  for i in several[7:]:
    users[i] = next(iter(users[i]))
  users, index = _place(rng, users)
  return Case(THEOREM1, family, users, index, theta, max_length, choices.FIXED,
              batch_size=m,
              word_choice=PER_RUN if family == PER_RUN else PER_ROUND)


def case_for(seed: int, number: int) -> Case:
  """Case ``number`` of the sequence of ``seed`` (deterministic).

  Even numbers are Poisson cases, odd ones Theorem 1 cases; the families
  take turns.
  """
  rng = random.Random(seed * 1_000_003 + number)
  family = FAMILIES[(number // 2) % len(FAMILIES)]
  if number % 2 == 0:
    return random_poisson_case(rng, family)
  return random_theorem1_case(rng, family)


def random_cases(rng: random.Random, count: int, *,
                 accountants: Sequence[str] = ACCOUNTANTS,
                 families: Sequence[str] = FAMILIES) -> Iterator[Case]:
  """``count`` cases drawn from ``rng``, cycling through the accountants
  and the families."""
  for i in range(count):
    accountant = accountants[i % len(accountants)]
    family = families[(i // len(accountants)) % len(families)]
    if accountant == POISSON:
      yield random_poisson_case(rng, family)
    elif accountant == THEOREM1:
      yield random_theorem1_case(rng, family)
    else:
      raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got "
                       f"{accountant!r}")


# ---- the checks ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Record:
  """One pair of neighbouring populations at one epsilon.

  Attributes:
    accountant: :data:`POISSON` or :data:`THEOREM1`.
    family: the case's family.
    index: the differing user.
    adjacency: ``"empty"``, ``"remove"`` or ``"replace"``.
    epsilon: the epsilon.
    source: where epsilon comes from: ``"grid"``,
      ``"epsilon_for_delta(<delta>)"`` or ``"theorem 1"``.
    forward: exact ``hockey_stick(P_D, P_D', epsilon)``.
    reverse: exact ``hockey_stick(P_D', P_D, epsilon)``.
    claimed: the delta claimed at epsilon.
    claims_reverse: whether the claim covers the reverse direction (the
      Poisson accountant's does, Theorem 1's does not).
    forward_bound, reverse_bound: Poisson only, the accountant's delta of
      each direction separately (its dominating pair's; ``claimed`` is
      their maximum, or the target delta for ``epsilon_for_delta``).
    replacement: ``"replace"`` only, the differing user's words in D'.
    add_remove_claimed: ``"replace"`` only, the add/remove claim's delta at
      the same epsilon (what the pair would be promised without the
      replace-one product), for :attr:`exceeds_add_remove`.
  """

  accountant: str
  family: str
  index: int
  adjacency: str
  epsilon: float
  source: str
  forward: float
  reverse: float
  claimed: float
  claims_reverse: bool
  forward_bound: float | None = None
  reverse_bound: float | None = None
  replacement: str | Mapping[str, int] | None = None
  add_remove_claimed: float | None = None

  @property
  def forward_ratio(self) -> float:
    return ratio(self.forward, self.claimed)

  @property
  def reverse_ratio(self) -> float:
    return ratio(self.reverse, self.claimed)

  @property
  def ratio(self) -> float:
    """exact / claimed over the claimed directions."""
    if self.claims_reverse:
      return max(self.forward_ratio, self.reverse_ratio)
    return self.forward_ratio

  @property
  def violated(self) -> bool:
    """Whether a claimed direction exceeds the claimed delta."""
    if not within(self.forward, self.claimed):
      return True
    return self.claims_reverse and not within(self.reverse, self.claimed)

  @property
  def reverse_exceeds(self) -> bool:
    """Whether the reverse divergence exceeds the delta (claimed or not)."""
    return not within(self.reverse, self.claimed)

  @property
  def add_remove_ratio(self) -> float | None:
    """``"replace"``: the larger exact divergence over the add/remove
    claim at the same epsilon."""
    if self.add_remove_claimed is None:
      return None
    return ratio(max(self.forward, self.reverse), self.add_remove_claimed)

  @property
  def exceeds_add_remove(self) -> bool:
    """``"replace"``: whether a direction exceeds the add/remove claim at
    the same epsilon (the replace-one claim is needed)."""
    if self.add_remove_claimed is None:
      return False
    return not within(max(self.forward, self.reverse),
                      self.add_remove_claimed)

  @property
  def side_ratio(self) -> float | None:
    """Poisson: the larger of exact / the accountant's own bound of the
    same direction (its dominating pair's delta at epsilon)."""
    if self.forward_bound is None or self.reverse_bound is None:
      return None
    return max(ratio(self.forward, self.forward_bound),
               ratio(self.reverse, self.reverse_bound))


def _key(users: Sequence) -> tuple:
  return tuple(sorted(collections.Counter(_user_key(u) for u in users)
                      .items()))


@functools.lru_cache(maxsize=64)
def _law_of(key: tuple, run: tuple) -> dict:
  users = []
  for user, count in key:
    users += [dict(user)] * count
  if not users:  # the one user removed: nothing is ever found
    return {frozenset(): Fraction(1) if dict(run)["exact"] else 1.0}
  return exact.output_distribution(users, **dict(run))


def law(users: Sequence, run: Mapping) -> dict:
  """The output law of ``users`` (memoized by the population's multiset of
  users, so the law of D is computed once for all its neighbours)."""
  return _law_of(_key(users), tuple(sorted(run.items())))


def _pair(case: Case, adjacency: str, exact_numbers: bool):
  run = case.run(exact_numbers)
  return law(case.users, run), law(case.neighbour(adjacency), run)


def _divergences(p, q, epsilon: float) -> tuple[float, float]:
  forward, reverse = exact.divergences(p, q, epsilon)
  return float(forward), float(reverse)


@dataclasses.dataclass(frozen=True)
class PoissonClaims:
  """What the Poisson accountant claims for one ``(rate, theta, L)``.

  The default, :meth:`public`, asks the public functions
  (:func:`~triehh.theory.poisson.delta_for_epsilon`,
  :func:`~triehh.theory.poisson.epsilon_for_delta`) and, for each
  direction's own bound, :func:`~triehh.theory.poisson.run_loss`. Tests
  build wrong ones (:meth:`from_loss`) to see the check fail.
  """

  delta: Callable[[float], float]  # delta(epsilon), both directions
  epsilon: Callable[[float], float]  # epsilon(delta), both directions
  forward: Callable[[float], float]  # the forward direction's delta(eps)
  reverse: Callable[[float], float]

  @classmethod
  def public(cls, rate: float, theta: int, num_levels: int,
             adjacency: Adjacency = Adjacency.ADD_OR_REMOVE_ONE
             ) -> "PoissonClaims":
    """The accountant's claims for neighbours under ``adjacency``."""
    loss = poisson.run_loss(float(rate), int(theta), int(num_levels),
                            adjacency=adjacency)
    return cls(
        delta=lambda e: poisson.delta_for_epsilon(
            rate, theta, num_levels, e, adjacency=adjacency),
        epsilon=lambda d: poisson.epsilon_for_delta(
            rate, theta, num_levels, d, adjacency=adjacency),
        forward=loss.forward.delta, reverse=loss.reverse.delta)

  @classmethod
  def from_loss(cls, loss: pld.TwoSided) -> "PoissonClaims":
    """The claims of a :class:`~triehh.theory.pld.TwoSided` loss."""
    return cls(delta=loss.delta, epsilon=loss.epsilon,
               forward=loss.forward.delta, reverse=loss.reverse.delta)


def _poisson_points(claim: PoissonClaims, epsilons: Sequence[float],
                    deltas: Sequence[float]) -> list[tuple]:
  """``(epsilon, source, claimed delta, forward bound, reverse bound)`` at
  each epsilon and at ``epsilon_for_delta`` of each delta (if finite)."""
  points = [(float(e), "grid", claim.delta(float(e))) for e in epsilons]
  for delta in deltas:
    eps = claim.epsilon(delta)
    if math.isfinite(eps):
      points.append((eps, f"epsilon_for_delta({delta:g})", delta))
  return [(eps, source, claimed, claim.forward(eps), claim.reverse(eps))
          for eps, source, claimed in points]


def check_poisson(case: Case, epsilons: Sequence[float] = POISSON_EPSILONS,
                  deltas: Sequence[float] = POISSON_DELTAS, *,
                  adjacencies: Sequence[str] = exact.ADJACENCIES,
                  exact_numbers: bool = False,
                  claims: Callable[..., PoissonClaims] | None = None
                  ) -> list[Record]:
  """The case's exact divergences against the Poisson accountant.

  For each adjacency (:data:`POISSON_ADJACENCIES`; ``"replace"`` needs the
  case's :attr:`~Case.replacement`), at each epsilon of ``epsilons``
  (claimed: ``delta_for_epsilon`` for the adjacency's relation,
  :data:`RELATIONS`) and at ``epsilon_for_delta(delta)`` for each delta of
  ``deltas`` with a finite epsilon (claimed: that delta). Both directions
  are claimed. ``"replace"`` records also hold the add/remove claim at
  their epsilon (:attr:`Record.exceeds_add_remove`).

  Args:
    claims: ``(rate, theta, num_levels, adjacency) -> PoissonClaims``, with
      ``adjacency`` an :class:`~triehh.theory.adjacency.Adjacency` (default:
      :meth:`PoissonClaims.public`); tests pass a wrong accountant to see
      the check fail.
  """
  if case.sampling != choices.POISSON:
    raise ValueError("check_poisson needs a Poisson-sampled case")
  for adjacency in adjacencies:
    if adjacency not in RELATIONS:
      raise ValueError(f"adjacency must be one of {POISSON_ADJACENCIES}, "
                       f"got {adjacency!r}")
  if exact.REPLACE in adjacencies and case.replacement is None:
    raise ValueError("adjacency 'replace' needs a case with a replacement")
  if claims is None:
    claims = PoissonClaims.public
  run = (case.rate, case.theta, case.num_levels)
  records = []
  for adjacency in adjacencies:
    replace = adjacency == exact.REPLACE
    # The accountant's grid search evaluates losses at k = theta - 2 on
    # branches it then discards: numpy warns of a division by zero there.
    with np.errstate(divide="ignore", invalid="ignore"):
      points = _poisson_points(claims(*run, RELATIONS[adjacency]), epsilons,
                               deltas)
      if replace:
        add_remove = claims(*run, Adjacency.ADD_OR_REMOVE_ONE).delta
        others = [add_remove(point[0]) for point in points]
      else:
        others = [None] * len(points)
    p, q = _pair(case, adjacency, exact_numbers)
    for (eps, source, claimed, forward_bound, reverse_bound), other in zip(
        points, others):
      forward, reverse = _divergences(p, q, eps)
      records.append(Record(
          POISSON, case.family, case.index, adjacency, eps, source, forward,
          reverse, claimed, True, forward_bound, reverse_bound,
          case.replacement if replace else None, other))
  return records


def theorem1_claim(case: Case) -> tuple[float, float]:
  """Theorem 1's ``(epsilon, delta)`` for the case (``delta = min(1, L *
  delta_1)`` for several words per user with a pick per round).

  Raises ``ValueError`` outside Theorem 1's conditions.
  """
  gamma = case.batch_size / math.sqrt(case.n)
  epsilon, delta = privacy.guarantee(case.n, case.num_levels, case.theta,
                                     gamma)
  if case.several_words and case.word_choice == PER_ROUND:
    delta = min(1.0, case.num_levels * delta)
  return epsilon, delta


def check_theorem1(case: Case, epsilons: Sequence[float] | None = None, *,
                   exact_numbers: bool = False) -> list[Record]:
  """The case's exact divergences against Theorem 1 (adjacency "empty").

  ``epsilons`` defaults to Theorem 1's epsilon alone; the claimed delta is
  Theorem 1's at every epsilon given (pass only epsilons >= Theorem 1's: the
  theorem says nothing below it). Only the forward direction is claimed.
  """
  if case.sampling != choices.FIXED:
    raise ValueError("check_theorem1 needs a fixed-size case")
  eps_claim, delta = theorem1_claim(case)
  if epsilons is None:
    epsilons = (eps_claim,)
  for eps in epsilons:
    if eps < eps_claim * (1 - 1e-12):
      raise ValueError(f"epsilon {eps} is below Theorem 1's {eps_claim}")
  p, q = _pair(case, exact.EMPTY, exact_numbers)
  records = []
  for eps in epsilons:
    forward, reverse = _divergences(p, q, eps)
    records.append(Record(THEOREM1, case.family, case.index, exact.EMPTY,
                          float(eps), "theorem 1", forward, reverse, delta,
                          False))
  return records


def check(case: Case, **kwargs) -> list[Record]:
  """:func:`check_poisson` or :func:`check_theorem1`, by the case's
  accountant."""
  if case.accountant == POISSON:
    return check_poisson(case, **kwargs)
  return check_theorem1(case, **kwargs)
