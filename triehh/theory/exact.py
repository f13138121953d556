"""The exact law of TrieHH's output on tiny populations.

:func:`output_distribution` gives, for a population of a few dozen users,
the probability of every possible output of a TrieHH run: the set of all
discovered prefixes, those ending in the end symbol ``$`` (the words found)
included, as a ``frozenset`` of strings (``{"a", "ab", "ab$"}``). With
:func:`hockey_stick` on two neighbouring populations (:func:`neighbours`) it
gives the exact ``delta(epsilon)`` of a run, to check privacy claims, and it
is the law the engines' empirical frequencies must follow.

The run it follows (the semantics of :mod:`triehh.engines.rounds`):

* A user holds a word (``str``) or several (a mapping word -> positive
  count). Words are lower-cased, as :mod:`triehh.core.population` does. With
  ``max_length`` L, a word of at most L characters is voted on as its
  characters followed by ``$``; a longer word as its first L characters,
  with no end symbol. The empty word ``""`` is the empty sequence: its
  user never votes (:data:`triehh.discovery.deny_list.ABSTAIN`).
* Round ``i`` (``i = 1 .. L + 1``) samples users; a sampled user whose
  sequence has an ``i``-th symbol and whose length-``(i - 1)`` prefix is on
  the frontier (the root in round 1, then the prefixes added by the
  previous round that do not end in ``$``) votes for its length-``i``
  prefix. Every prefix with at least ``theta`` votes joins the trie. The run
  stops when the frontier is empty, when a round adds nothing, or after
  ``L + 1`` rounds.
* Sampling, independent across rounds: ``"fixed"``, a uniform subset of
  exactly ``batch_size`` of the ``n`` users (the paper's; a user that
  cannot vote still takes a place); ``"poisson"``, every user independently
  with probability ``rate``.
* Several words per user: ``"per_round"`` (Algorithm 3), every sampled user
  picks one of its words each round with probability count / total;
  ``"per_run"``, every user picks one word once before the first round and
  the one-word run follows (its law is the mixture over the picks).

How. The law of the rest of a run depends only on the round and the
frontier, so it is computed once per (round, frontier) and mixed over the
laws of the rounds before (a recursion over levels, memoized by trie state).
A round never enumerates subsets of users. The round's *cells* are the
prefixes some user can vote for given the frontier; users are grouped by
*type*, their law over the cells (one cell, or none, for a one-word user),
and only the number of sampled users of each type matters: a uniform
``m``-subset draws ``k_t`` of the ``N_t`` users of type ``t`` in
``prod_t C(N_t, k_t)`` of its ``C(n, m)`` ways (the multivariate
hypergeometric law), Poisson sampling an independent binomial per type.
The ``k_t`` sampled users of a type spread over the cells by the
multinomial law of their picks. The type laws are convolved one after the
other on the vote counts per cell, each capped at ``theta`` (only whether a
cell reaches the threshold matters), and the round's law is that of the
set of cells that reach it. ``"per_run"`` mixes over the multisets of
picks of each type (multinomial laws), not over every user's pick.

Limits. The cost grows with the number of cells a round can have, times
``(theta + 1)`` to the power of that number, times the batch size, so it
is for tiny alphabets and short words: a few dozen users (exactly, in
:class:`fractions.Fraction`; or in float64 with ``exact=False``). The
frontier is never capped (no ``max_num_prefixes``) and rounds have no
sub-rounds. :func:`brute_force_distribution` is a deliberately naive
oracle for the same law that enumerates every sample and every pick, for
``n <= 8``.

Long file: an independent oracle, so it re-implements encoding, sampling
laws, voting and the stopping rule itself and imports nothing of the
engines (only the names of the choices, from triehh.core.choices); its
brute-force twin is here too.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Union

from triehh.core import choices

END_SYMBOL = "$"

EMPTY = "empty"
REMOVE = "remove"
REPLACE = "replace"
ADJACENCIES = (EMPTY, REMOVE)  # the relations that need no other word

# The largest population brute_force_distribution enumerates.
MAX_BRUTE_FORCE_USERS = 8

User = Union[str, Mapping[str, int]]
# An outcome: every discovered prefix, "$" ending the words found.
Outcome = frozenset[str]
# Outcome -> probability: Fraction (exact) or float.
Law = dict[Outcome, Union[Fraction, float]]

# A user's law over its sequences: sorted ((sequence, probability), ...).
_UserType = tuple[tuple[str, Fraction], ...]


# ---- input ---------------------------------------------------------------


def sequence(word: str, max_length: int) -> str:
  """The symbols a word is voted on with: ``word + "$"`` or its truncation.

  ``""`` stays the empty sequence (its user never votes).
  """
  if not word:
    return ""
  if len(word) <= max_length:
    return word + END_SYMBOL
  return word[:max_length]


def _user_words(user: User, index: int) -> dict[str, int]:
  """The user's (lower-cased) words -> counts, validated."""
  if isinstance(user, str):
    entries = {user: 1}
  elif isinstance(user, Mapping):
    if not user:
      raise ValueError(f"user {index} has no words")
    entries = dict(user)
  else:
    raise TypeError(f"user {index}: expected a str or a mapping word -> "
                    f"count, got {type(user).__name__}")
  words: dict[str, int] = collections.defaultdict(int)
  for word, count in entries.items():
    if not isinstance(word, str):
      raise TypeError(f"user {index}: word {word!r} is not a str")
    if END_SYMBOL in word:
      raise ValueError(f"user {index}: word {word!r} contains the end "
                       f"symbol {END_SYMBOL!r}")
    if (isinstance(count, bool) or not isinstance(count, int)
        or count <= 0):
      raise ValueError(f"user {index}: count of {word!r} must be a positive "
                       f"int, got {count!r}")
    words[word.lower()] += count
  return dict(words)


def _checked_users(users: Sequence[User]) -> list[dict[str, int]]:
  if isinstance(users, (str, bytes)) or isinstance(users, Mapping):
    raise TypeError("users must be a sequence with one entry per user")
  checked = [_user_words(u, i) for i, u in enumerate(users)]
  if not checked:
    raise ValueError("users is empty: a population needs users")
  return checked


def _user_type(words: Mapping[str, int], max_length: int) -> _UserType:
  """The user's law over its sequences (words with one sequence merged)."""
  total = sum(words.values())
  law: dict[str, int] = collections.defaultdict(int)
  for word, count in words.items():
    law[sequence(word, max_length)] += count
  return tuple(sorted((s, Fraction(c, total)) for s, c in law.items()))


def _exact_rate(rate) -> Fraction:
  """A rate as a Fraction; a float is read as the decimal it prints as."""
  if isinstance(rate, bool):
    raise TypeError(f"rate must be a number, got {rate!r}")
  if isinstance(rate, float):
    if not math.isfinite(rate):
      raise ValueError(f"rate must be in [0, 1], got {rate!r}")
    return Fraction(repr(rate))
  if isinstance(rate, (int, Fraction)):
    return Fraction(rate)
  raise TypeError(f"rate must be a Fraction, int or float, got {rate!r}")


@dataclasses.dataclass(frozen=True)
class _Run:
  """The parameters of the run, validated."""

  theta: int
  max_length: int
  sampling: str
  batch_size: int | None
  rate: Fraction | None
  word_choice: str

  @classmethod
  def of(cls, num_users: int, *, theta, max_length, sampling, batch_size,
         rate, word_choice) -> "_Run":
    if isinstance(theta, bool) or not isinstance(theta, int) or theta < 1:
      raise ValueError(f"theta must be an int >= 1, got {theta!r}")
    if (isinstance(max_length, bool) or not isinstance(max_length, int)
        or max_length < 1):
      raise ValueError(f"max_length must be an int >= 1, got {max_length!r}")
    choices.check_word_choice(word_choice)
    if sampling == choices.FIXED:
      if rate is not None:
        raise ValueError("rate is for sampling='poisson'")
      if (isinstance(batch_size, bool) or not isinstance(batch_size, int)
          or not 1 <= batch_size <= num_users):
        raise ValueError(f"batch_size must be an int in [1, n={num_users}], "
                         f"got {batch_size!r}")
      return cls(theta, max_length, sampling, batch_size, None, word_choice)
    if sampling == choices.POISSON:
      if batch_size is not None:
        raise ValueError("batch_size is for sampling='fixed'")
      if rate is None:
        raise ValueError("sampling='poisson' needs a rate")
      exact = _exact_rate(rate)
      if not 0 <= exact <= 1:
        raise ValueError(f"rate must be in [0, 1], got {rate!r}")
      return cls(theta, max_length, sampling, None, exact, word_choice)
    raise ValueError(f"sampling must be one of {choices.SAMPLINGS}, got {sampling!r}")

  @property
  def num_levels(self) -> int:
    return self.max_length + 1


# ---- the grouped computation ----------------------------------------------


class _Numbers:
  """Exact (int / Fraction) or float64 arithmetic."""

  def __init__(self, exact: bool):
    self.exact = exact

  def __call__(self, x):
    """``x`` (an int or Fraction) as a number of this arithmetic."""
    if not self.exact:
      return float(x)
    x = Fraction(x)
    return x.numerator if x.denominator == 1 else x

  def result(self, x):
    return Fraction(x) if self.exact else float(x)


class _Solver:
  """The output law of one population (memoized by round and frontier)."""

  def __init__(self, population: Mapping[_UserType, int], run: _Run,
               numbers: _Numbers):
    self.population = dict(population)
    self.n = sum(self.population.values())
    self.run = run
    self.num = numbers
    self._futures: dict[tuple[int, frozenset[str]], dict] = {}
    self._binomials: dict[int, list] = {}

  def law(self) -> dict:
    return self._future(1, frozenset({""}))

  def _future(self, level: int, frontier: frozenset[str]) -> dict:
    """Law of the prefixes added from round ``level`` on."""
    key = (level, frontier)
    if key in self._futures:
      return self._futures[key]
    out: dict = collections.defaultdict(int)
    if not frontier or level > self.run.num_levels:
      out[frozenset()] = self.num(1)
    else:
      cells, types = self._cells(level, frontier)
      for kept_cells, p in self._round_law(types, len(cells)).items():
        kept = frozenset(cells[i] for i in kept_cells)
        if not kept:  # the round adds nothing: the run stops
          out[frozenset()] += p
          continue
        nxt = frozenset(c for c in kept if not c.endswith(END_SYMBOL))
        for more, q in self._future(level + 1, nxt).items():
          out[kept | more] += p * q
    self._futures[key] = dict(out)
    return self._futures[key]

  def _cells(self, level: int, frontier: frozenset[str]
             ) -> tuple[list[str], list[tuple[int, tuple]]]:
    """The round's cells and its users grouped by their law over them.

    Returns the sorted cells and ``(N_t, probabilities per cell)`` per type
    (the rest of a type's probability is "no vote").
    """
    votes_of = []
    cells = set()
    for user_type, count in self.population.items():
      law: dict[str, Fraction] = collections.defaultdict(Fraction)
      for seq, p in user_type:
        if len(seq) >= level and seq[:level - 1] in frontier:
          law[seq[:level]] += p
      cells.update(law)
      votes_of.append((law, count))
    cells = sorted(cells)
    types: dict[tuple, int] = collections.defaultdict(int)
    for law, count in votes_of:
      types[tuple(law.get(c, Fraction(0)) for c in cells)] += count
    return cells, [(count, probs) for probs, count in types.items()]

  def _picks(self, exact_probs: tuple, max_users: int) -> list[dict]:
    """Per k = 0..max_users, the law of k users' capped votes per cell."""
    theta = self.run.theta
    stay = self.num(1 - sum(exact_probs))
    probs = tuple(self.num(p) for p in exact_probs)
    zero = (0,) * len(probs)
    laws = [{zero: self.num(1)}]
    for _ in range(max_users):
      nxt: dict = collections.defaultdict(int)
      for vec, p in laws[-1].items():
        if stay:
          nxt[vec] += p * stay
        for c, pc in enumerate(probs):
          if pc:
            if vec[c] < theta:
              vec_c = vec[:c] + (vec[c] + 1,) + vec[c + 1:]
            else:
              vec_c = vec
            nxt[vec_c] += p * pc
      laws.append(dict(nxt))
    return laws

  def _sample_weights(self, count: int) -> list:
    """Per k, the weight of k of ``count`` users of one type being sampled.

    Fixed: ``C(count, k)`` (divided by ``C(n, m)`` at the end of the
    round). Poisson: the binomial probability.
    """
    if count not in self._binomials:
      if self.run.sampling == choices.FIXED:
        weights = [self.num(math.comb(count, k)) for k in range(count + 1)]
      else:
        q = self.num(self.run.rate)
        r = self.num(1) - q
        weights = [self.num(math.comb(count, k)) * q**k * r**(count - k)
                   for k in range(count + 1)]
      self._binomials[count] = weights
    return self._binomials[count]

  def _round_law(self, types: list[tuple[int, tuple]],
                 num_cells: int) -> dict:
    """Law of the set of cell indices that reach theta in one round."""
    theta = self.run.theta
    fixed = self.run.sampling == choices.FIXED
    m = self.run.batch_size if fixed else 0
    states: dict = {(0, (0,) * num_cells): self.num(1)}  # (sampled, votes)
    remaining = self.n
    for count, probs in types:
      remaining -= count
      weights = self._sample_weights(count)
      picks = self._picks(probs, min(count, m) if fixed else count)
      nxt: dict = collections.defaultdict(int)
      for (j, vec), w in states.items():
        if fixed:  # leave enough users after this type to fill the batch
          ks = range(max(0, m - j - remaining), min(count, m - j) + 1)
        else:
          ks = range(count + 1)
        for k in ks:
          wk = w * weights[k]
          if not wk:
            continue
          jk = j + k if fixed else 0
          for add, p in picks[k].items():
            new = tuple(min(theta, a + b) for a, b in zip(vec, add))
            nxt[(jk, new)] += wk * p
      states = nxt
    law: dict = collections.defaultdict(int)
    for (_, vec), w in states.items():
      law[frozenset(i for i, v in enumerate(vec) if v >= theta)] += w
    if fixed:
      total = math.comb(self.n, m)
      if self.num.exact:
        return {k: Fraction(w, total) for k, w in law.items()}
      return {k: w / total for k, w in law.items()}
    return dict(law)


def _per_run_mixture(population: Mapping[_UserType, int]
                     ) -> dict[tuple, Fraction]:
  """The law of the one-word population after every user's one pick.

  Users of one type pick their sequences by a multinomial law; the result
  is keyed by the one-word population, sorted ``((sequence, users), ...)``.
  """
  mixture: dict[tuple, Fraction] = {(): Fraction(1)}
  for user_type, count in population.items():
    seqs = [s for s, _ in user_type]
    probs = [p for _, p in user_type]
    picks = []
    for split in _compositions(count, len(seqs)):
      p = Fraction(math.factorial(count))
      for c, q in zip(split, probs):
        p = p / math.factorial(c) * q**c
      picks.append((split, p))
    nxt: dict[tuple, Fraction] = collections.defaultdict(Fraction)
    for held, p in mixture.items():
      for split, q in picks:
        merged = collections.Counter(dict(held))
        for s, c in zip(seqs, split):
          if c:
            merged[s] += c
        nxt[tuple(sorted(merged.items()))] += p * q
    mixture = dict(nxt)
  return mixture


def _compositions(total: int, parts: int) -> Iterable[tuple[int, ...]]:
  """Every tuple of ``parts`` non-negative ints summing to ``total``."""
  if parts == 1:
    yield (total,)
    return
  for first in range(total + 1):
    for rest in _compositions(total - first, parts - 1):
      yield (first,) + rest


def output_distribution(users: Sequence[User], *, theta: int, max_length: int,
                        sampling: str = choices.FIXED, batch_size: int | None = None,
                        rate: Fraction | float | None = None,
                        word_choice: str = choices.PER_ROUND,
                        exact: bool = True) -> Law:
  """The exact law of TrieHH's output (see the module docstring).

  Args:
    users: per user, a word or a mapping word -> positive count; ``""`` is
      the empty word (its user never votes).
    theta: the vote threshold.
    max_length: L, characters per word (L + 1 rounds at most).
    sampling: ``"fixed"`` (``batch_size`` users without replacement) or
      ``"poisson"`` (each user with probability ``rate``).
    batch_size: m, for ``"fixed"``.
    rate: for ``"poisson"``: a ``Fraction``, an int, or a float, read as
      the decimal it prints as (``0.1`` is ``1/10``, not its binary value;
      pass a ``Fraction`` to be explicit).
    word_choice: ``"per_round"`` or ``"per_run"`` (several-word users).
    exact: ``Fraction`` probabilities (summing to exactly 1); with
      ``False``, float64 ones (faster, rounded).

  Returns:
    Outcome (``frozenset`` of every discovered prefix, ``"$"`` ending the
    words found) -> probability, for every outcome of positive probability.
  """
  checked = _checked_users(users)
  run = _Run.of(len(checked), theta=theta, max_length=max_length,
                sampling=sampling, batch_size=batch_size, rate=rate,
                word_choice=word_choice)
  numbers = _Numbers(exact)
  population = collections.Counter(_user_type(u, max_length) for u in checked)
  if word_choice == choices.PER_ROUND or all(len(t) == 1 for t in population):
    law = _Solver(population, run, numbers).law()
  else:
    law = collections.defaultdict(int)
    for held, p in _per_run_mixture(population).items():
      one_word = {((s, Fraction(1)),): c for s, c in held}
      weight = numbers(p)
      for outcome, q in _Solver(one_word, run, numbers).law().items():
        law[outcome] += weight * q
  return {o: numbers.result(p) for o, p in law.items() if p}


# ---- the naive oracle -------------------------------------------------------


def brute_force_distribution(users: Sequence[User], *, theta: int,
                             max_length: int, sampling: str,
                             batch_size: int | None = None,
                             rate: Fraction | float | None = None,
                             word_choice: str = choices.PER_ROUND
                             ) -> dict[Outcome, Fraction]:
  """The law of :func:`output_distribution`, by naive enumeration.

  Every round enumerates every sample (each ``batch_size``-subset, or every
  subset with its Poisson probability) and every word pick of the sampled
  users, counts the votes and thresholds them; ``"per_run"`` enumerates
  every user's pick first. Exponential: for ``n <= 8`` users.
  """
  checked = _checked_users(users)
  n = len(checked)
  if n > MAX_BRUTE_FORCE_USERS:
    raise ValueError(f"brute force is for n <= {MAX_BRUTE_FORCE_USERS} "
                     f"users, got {n}")
  run = _Run.of(n, theta=theta, max_length=max_length, sampling=sampling,
                batch_size=batch_size, rate=rate, word_choice=word_choice)
  # Per user, its words as a list of (symbols, probability), one per word.
  options = []
  for words in checked:
    total = sum(words.values())
    options.append([(_naive_symbols(w, max_length), Fraction(c, total))
                    for w, c in words.items()])
  if word_choice == choices.PER_ROUND:
    return _naive_rounds(options, run)
  law: dict = collections.defaultdict(Fraction)
  for picks in itertools.product(*options):
    p = Fraction(1)
    for _, q in picks:
      p *= q
    for outcome, q in _naive_rounds([[(s, Fraction(1))] for s, _ in picks],
                                    run).items():
      law[outcome] += p * q
  return dict(law)


def _naive_symbols(word: str, max_length: int) -> str:
  if word == "":
    return ""
  if len(word) > max_length:
    return word[:max_length]
  return word + END_SYMBOL


def _naive_samples(run: _Run, n: int) -> list[tuple[tuple[int, ...], Fraction]]:
  if run.sampling == choices.FIXED:
    subsets = list(itertools.combinations(range(n), run.batch_size))
    return [(s, Fraction(1, len(subsets))) for s in subsets]
  q = run.rate
  return [(s, q**len(s) * (1 - q)**(n - len(s)))
          for size in range(n + 1)
          for s in itertools.combinations(range(n), size)]


def _naive_rounds(options: list[list[tuple[str, Fraction]]], run: _Run
                  ) -> dict[Outcome, Fraction]:
  samples = _naive_samples(run, len(options))

  @functools.cache
  def grow(found: frozenset[str]) -> dict[Outcome, Fraction]:
    level = 1 + max((len(p) for p in found), default=0)
    if level == 1:
      frontier = {""}
    else:
      frontier = {p for p in found
                  if len(p) == level - 1 and not p.endswith(END_SYMBOL)}
    if not frontier or level > run.max_length + 1:
      return {found: Fraction(1)}
    added: dict = collections.defaultdict(Fraction)
    for sampled, p_sample in samples:
      for picks in itertools.product(*(options[u] for u in sampled)):
        p = p_sample
        votes: collections.Counter = collections.Counter()
        for symbols, q in picks:
          p *= q
          if len(symbols) >= level and symbols[:level - 1] in frontier:
            votes[symbols[:level]] += 1
        added[frozenset(x for x, v in votes.items() if v >= run.theta)] += p
    law: dict = collections.defaultdict(Fraction)
    for new, p in added.items():
      if not new:
        law[found] += p
        continue
      for outcome, q in grow(found | new).items():
        law[outcome] += p * q
    return dict(law)

  return {o: p for o, p in grow(frozenset()).items() if p}


# ---- privacy ----------------------------------------------------------------


def hockey_stick(p: Mapping[Outcome, Fraction | float],
                 q: Mapping[Outcome, Fraction | float],
                 epsilon: float) -> float | Fraction:
  """``sum_o max(0, p(o) - e^epsilon q(o))`` (``q(o) = 0`` if missing).

  The smallest delta with ``P(S) <= e^epsilon Q(S) + delta`` for every set
  of outcomes ``S``. Exact (a ``Fraction``) when ``epsilon == 0`` and every
  probability is a ``Fraction``; a float otherwise.
  """
  exact = epsilon == 0 and all(
      isinstance(v, Fraction) for v in itertools.chain(p.values(), q.values()))
  if exact:
    return sum((max(Fraction(0), v - q.get(o, Fraction(0)))
                for o, v in p.items()), Fraction(0))
  scale = math.exp(epsilon)
  return math.fsum(max(0.0, float(v) - scale * float(q.get(o, 0)))
                   for o, v in p.items())


def divergences(p: Mapping[Outcome, Fraction | float],
                q: Mapping[Outcome, Fraction | float],
                epsilon: float) -> tuple[float | Fraction, float | Fraction]:
  """``(hockey_stick(p, q, epsilon), hockey_stick(q, p, epsilon))``."""
  return hockey_stick(p, q, epsilon), hockey_stick(q, p, epsilon)


def neighbours(users: Sequence[User], index: int,
               adjacency: str = EMPTY,
               replacement: User | None = None) -> list[User]:
  """The neighbouring population that differs in user ``index``.

  ``"empty"`` (the paper's): the user holds the empty word ``""`` (n is
  unchanged); ``"remove"``: the user is removed (n - 1 users);
  ``"replace"``: the user holds ``replacement`` (a word or a mapping word
  -> count) instead (n is unchanged).
  """
  users = list(users)
  if not 0 <= index < len(users):
    raise IndexError(f"user index {index} out of range for {len(users)} users")
  if adjacency == EMPTY:
    return users[:index] + [""] + users[index + 1:]
  if adjacency == REMOVE:
    return users[:index] + users[index + 1:]
  if adjacency == REPLACE:
    if replacement is None:
      raise ValueError("adjacency 'replace' needs the replacement words")
    return users[:index] + [replacement] + users[index + 1:]
  raise ValueError(f"adjacency must be one of {ADJACENCIES + (REPLACE,)}, "
                   f"got {adjacency!r}")


@dataclasses.dataclass(frozen=True)
class NeighbourDelta:
  """The exact delta at some epsilon between the laws on D and D'.

  Attributes:
    epsilon: the epsilon.
    forward: ``hockey_stick(P_D, P_D', epsilon)``.
    reverse: ``hockey_stick(P_D', P_D, epsilon)``.
  """

  epsilon: float
  forward: float | Fraction
  reverse: float | Fraction

  @property
  def delta(self) -> float | Fraction:
    """The larger of the two: the pair's delta at ``epsilon``."""
    return max(self.forward, self.reverse)

  def __iter__(self):
    return iter((self.forward, self.reverse))


def exact_delta(users: Sequence[User], users_prime: Sequence[User],
                epsilon: float, **run) -> NeighbourDelta:
  """Both hockey-stick divergences of the output laws on D and D'.

  ``run`` holds :func:`output_distribution`'s keywords (the same for both).
  Unpacks as ``forward, reverse``.
  """
  p = output_distribution(users, **run)
  q = output_distribution(users_prime, **run)
  forward, reverse = divergences(p, q, epsilon)
  return NeighbourDelta(epsilon=epsilon, forward=forward, reverse=reverse)
