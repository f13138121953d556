"""Tests of triehh.theory.adjacency."""

import dp_accounting
import pytest

from triehh.theory import adjacency
from triehh.theory.adjacency import Adjacency


@pytest.mark.parametrize("relation", list(dp_accounting.NeighboringRelation))
def test_every_dp_accounting_relation_converts_both_ways(relation):
  ours = Adjacency.of(relation)
  assert ours.value == relation.name
  assert ours.neighboring_relation is relation
  assert Adjacency.of(relation.name.lower()) is ours


def test_an_unknown_relation_is_refused_with_the_choices():
  with pytest.raises(ValueError, match="ADD_OR_REMOVE_ONE, REPLACE_ONE, "
                     "REPLACE_SPECIAL"):
    Adjacency.of("swap")
  with pytest.raises(ValueError, match="adjacency must be"):
    Adjacency.of(3)


def test_names_are_in_enum_order():
  assert adjacency.names(["REPLACE_SPECIAL", Adjacency.ADD_OR_REMOVE_ONE]) == (
      "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL")
