"""Which pairs of neighbouring populations a guarantee is about.

The names are dp_accounting's ``NeighboringRelation`` members, so that a
guarantee reads in the field's terms and converts to them
(:attr:`Adjacency.neighboring_relation`); dp_accounting itself is imported
only when asked for (it takes about a second).

* ``ADD_OR_REMOVE_ONE``: D' is D with one user added or removed. The
  mechanism's parameters must then not depend on the population's size
  unless that size is public (declared by the caller, not read off D).
* ``REPLACE_ONE``: D' is D with one user's words replaced by any other
  words; n is the same.
* ``REPLACE_SPECIAL``: D' is D with one user's words replaced by the empty
  word, whose user never votes (the paper's adjacency); n is the same.
"""

from __future__ import annotations

import enum


class Adjacency(enum.Enum):
  """A neighbouring relation, named as dp_accounting names it."""

  ADD_OR_REMOVE_ONE = "ADD_OR_REMOVE_ONE"
  REPLACE_ONE = "REPLACE_ONE"
  REPLACE_SPECIAL = "REPLACE_SPECIAL"

  @property
  def neighboring_relation(self):
    """The same relation as a ``dp_accounting.NeighboringRelation``."""
    import dp_accounting  # pylint: disable=g-import-not-at-top
    return dp_accounting.NeighboringRelation[self.value]

  @property
  def meaning(self) -> str:
    """What a neighbouring pair is, in words."""
    return _MEANINGS[self]

  @classmethod
  def of(cls, value) -> "Adjacency":
    """``value`` (an Adjacency, its name in any case, or a dp_accounting
    ``NeighboringRelation``) as an Adjacency, else a ValueError naming the
    choices."""
    if isinstance(value, cls):
      return value
    name = getattr(value, "name", value)
    if isinstance(name, str) and name.upper() in cls.__members__:
      return cls[name.upper()]
    raise ValueError(f"adjacency must be one of {', '.join(cls.__members__)}"
                     f" (or a dp_accounting NeighboringRelation), got "
                     f"{value!r}")


_MEANINGS = {
    Adjacency.ADD_OR_REMOVE_ONE: "one user added or removed",
    Adjacency.REPLACE_ONE: "one user's words replaced by any other words",
    Adjacency.REPLACE_SPECIAL: ("one user's words replaced by the empty "
                                "word, the paper's adjacency"),
}


def names(adjacencies) -> str:
  """``"ADD_OR_REMOVE_ONE, REPLACE_SPECIAL"``: the names, in enum order."""
  chosen = {Adjacency.of(a) for a in adjacencies}
  return ", ".join(a.value for a in Adjacency if a in chosen)
