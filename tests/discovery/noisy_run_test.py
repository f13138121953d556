"""Tests of triehh.discover with a NoisyTarget (the noisy trie)."""

import pytest

import triehh
from triehh.theory.adjacency import Adjacency

_USERS = ["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000 + [
    f"w{i}" for i in range(4000)]


def test_the_noisy_trie_finds_the_frequent_words_and_labels_them():
  result = triehh.discover(_USERS, triehh.NoisyTarget(4.0), seed=0)
  assert {"sun", "moon", "star"} <= set(result.words)
  assert result.num_false_words == 0
  guarantee = result.guarantee
  assert guarantee.epsilon <= 4.0 and guarantee.delta == 1e-8
  # delta = 1/n^2 of the population's own size: equal sizes only.
  assert guarantee.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert guarantee.n_source == "data"
  assert "alphabet" in guarantee.covers
  again = triehh.discover(_USERS, triehh.NoisyTarget(4.0), seed=0)
  assert again.words == result.words


@pytest.mark.parametrize("target, n_source", [
    (triehh.NoisyTarget(4.0, population_size=10_000), "declared"),
    (triehh.NoisyTarget(4.0, delta=1e-8), "unused"),
])
def test_parameters_free_of_the_data_cover_add_or_remove(target, n_source):
  guarantee = triehh.discover(_USERS, target, seed=1).guarantee
  assert guarantee.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                                   Adjacency.REPLACE_SPECIAL)
  assert guarantee.n_source == n_source


@pytest.mark.parametrize("options, message", [
    (dict(counts=True), "runs alone"),
    (dict(passes=triehh.Passes(2)), "runs alone"),
    (dict(engine="tff"), "runs in the 'fast' engine only"),
    (dict(workers=["x"]), "takes no engine options"),
])
def test_what_the_noisy_trie_does_not_run_with_is_refused(options, message):
  with pytest.raises(ValueError, match=message):
    triehh.discover(_USERS, triehh.NoisyTarget(4.0), **options)


def test_a_bad_noisy_target_is_refused_when_built():
  with pytest.raises(ValueError, match="false_positive_rate"):
    triehh.NoisyTarget(4.0, false_positive_rate=0.0)
  with pytest.raises(TypeError, match="chars_per_level"):
    triehh.NoisyTarget(4.0, chars_per_level=1.5)
