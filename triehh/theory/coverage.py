"""Which neighbouring populations a run's guarantee covers, and its label.

:func:`covered` names the relations (:mod:`triehh.theory.adjacency`) each
accountant proves for a run, given where the n its parameters came from
comes from; :func:`label` writes them into the run's parameters and its
``covers`` text, and refuses a relation asked for that is not covered
(``docs/privacy.md``, "Which neighbours").
"""

from __future__ import annotations

import dataclasses

from triehh.core import choices
from triehh.core import results
from triehh.theory.adjacency import Adjacency

# Where the n the parameters come from (RunParams.n_source).
N_DECLARED = "declared"
N_FROM_DATA = "data"
N_UNUSED = "unused"
COVERS = ("the set of discovered words and prefixes (the output trie), not "
          "their vote counts")
BOTH_DIRECTIONS = "; in both directions, for neighbours under {}"
ONE_DIRECTION = (
    "; in one direction only, the one the paper proves: P[M(D) in S] <= "
    "e^epsilon P[M(D') in S] + delta, with D holding the user's word and D' "
    "the empty word in its place (REPLACE_SPECIAL). The other direction is "
    "not proven and fails for some small populations (docs/privacy.md); use "
    "sampling='poisson' for a guarantee in both directions")


def check_fixed(asked: Adjacency | None) -> None:
  """Fixed-size sampling (Theorem 1) covers ``REPLACE_SPECIAL`` only: a
  ValueError for any other relation asked for."""
  if asked not in (None, Adjacency.REPLACE_SPECIAL):
    special = Adjacency.REPLACE_SPECIAL
    raise ValueError(
        f"fixed-size sampling is covered by Theorem 1 for {special.value} "
        f"only ({special.meaning}), in one direction; {asked.value} needs "
        "sampling='poisson'")


def covered(sampling: str, n_source: str,
            asked: Adjacency | None = None) -> tuple[Adjacency, ...]:
  """The neighbouring relations a guarantee covers.

  Theorem 1 (fixed-size sampling): ``REPLACE_SPECIAL``, one direction.
  The Poisson accountant: ``REPLACE_SPECIAL``, and ``ADD_OR_REMOVE_ONE``
  unless the parameters were derived from |D| (a neighbour with one user
  more or less would have run other parameters); with ``asked``
  ``REPLACE_ONE``, its swap-product accountant, which covers that too.
  """
  if sampling != choices.POISSON:
    return (Adjacency.REPLACE_SPECIAL,)
  return add_or_remove(n_source,
                       replace_one=asked is Adjacency.REPLACE_ONE)


def default_delta(n: int) -> float:
  """``1/n^2``, the default delta; a ValueError where it is 1 (n = 1): no
  guarantee at all."""
  if n < 2:
    raise ValueError(
        f"n={n} user is too few for the default delta = 1/n^2 = 1 (no "
        "guarantee at all); give delta, or more users")
  return 1.0 / n**2


def n_source_of(declared: bool, uses_n: bool) -> str:
  """Where the n the parameters come from: declared (public), read off the
  data (|D|), or not used."""
  if declared:
    return N_DECLARED
  return N_FROM_DATA if uses_n else N_UNUSED


def add_or_remove(n_source: str, *,
                  replace_one: bool = False) -> tuple[Adjacency, ...]:
  """The relations a two-sided add/remove guarantee covers: the empty word
  is an absent user (``REPLACE_SPECIAL``), and ``ADD_OR_REMOVE_ONE`` unless
  the parameters were derived from |D| (a neighbour of another size would
  run other parameters); ``replace_one``: also ``REPLACE_ONE`` (an
  accountant proven for it)."""
  chosen = {Adjacency.REPLACE_SPECIAL}
  if n_source != N_FROM_DATA:
    chosen.add(Adjacency.ADD_OR_REMOVE_ONE)
  if replace_one:
    chosen.add(Adjacency.REPLACE_ONE)
  return tuple(a for a in Adjacency if a in chosen)


def check_asked(asked: Adjacency | None, n_source: str, n: int) -> None:
  """A ValueError when ``ADD_OR_REMOVE_ONE`` is asked for but the
  parameters read n off the data (delta = 1/n^2 of |D|): a neighbour with
  one user more or less would run others. The noisy tries' check; TrieHH's
  is :func:`label`'s."""
  if asked is Adjacency.ADD_OR_REMOVE_ONE and n_source == N_FROM_DATA:
    raise ValueError(
        f"{asked.value} ({asked.meaning}) is not covered: delta = 1/n^2 is "
        f"read off the population's own size n={n:,}, so a neighbour with "
        "one user more or less would run another delta. Declare a public "
        "population size (population_size), or give delta")


def label(params: results.RunParams, n: int, declared: int | None,
          uses_n: bool, asked: Adjacency | None) -> results.RunParams:
  """``params`` at the population's own ``n``, labelled with the relations
  its guarantee covers and where its n came from; a ValueError when
  ``asked`` is not among them."""
  n_source = n_source_of(declared is not None, uses_n)
  relations = covered(params.sampling, n_source, asked)
  if asked is not None and asked not in relations:
    raise ValueError(
        f"{asked.value} ({asked.meaning}) is not covered: the parameters "
        f"were derived from the population's own size n={n} (the default "
        "delta = 1/n^2, or a batch size or gamma), so a neighbour with one "
        "user more or less would run other parameters. Declare a public "
        "population size (population_size), or give delta and the rate "
        "explicitly")
  params = dataclasses.replace(params, n=n, population_size=declared,
                               n_source=n_source)
  if not params.has_guarantee:
    return params
  names = ", ".join(a.value for a in relations)
  if params.sampling == choices.POISSON:
    covers = COVERS + BOTH_DIRECTIONS.format(
        "; ".join(f"{a.value} ({a.meaning})" for a in relations))
  else:
    covers = COVERS + ONE_DIRECTION
  return dataclasses.replace(params, adjacency=names,
                             covers=covers + _n_note(n_source))


def _n_note(n_source: str) -> str:
  """What the label says of n."""
  if n_source == N_FROM_DATA:
    return (". n = |D| is read off the data (the parameters depend on it) "
            "and treated as public: only neighbours of the same size are "
            "covered")
  if n_source == N_DECLARED:
    return ". n is the declared, public population size"
  return ". The parameters do not depend on n"
