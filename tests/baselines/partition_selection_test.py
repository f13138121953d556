"""Tests of pipeline_dp's partition selection as a baseline.

The noise is python-dp's and takes no seed, so the selection tests are
statistical: they hold with overwhelming probability, not for one seed.
"""

import collections
import dataclasses

import numpy as np
import pytest

from triehh.baselines import partition_selection as ps
from triehh.core import release
from triehh.core.population import Population
from triehh.theory.adjacency import Adjacency
from triehh.theory.mechanism import Guarantee

STRATEGIES = list(ps.STRATEGIES)


def crowd_and_singletons(num_singletons=200, crowd=5000):
  """One word held by ``crowd`` users and ``num_singletons`` words held by
  one user each."""
  words = ["common"] + [f"rare{i}" for i in range(num_singletons)]
  users = [crowd] + [1] * num_singletons
  return Population.from_word_frequencies(words, users)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_crowded_word_is_kept_and_lone_words_are_not(strategy):
  pop = crowd_and_singletons()
  for _ in range(3):
    result = ps.select_words(
        pop, ps.PartitionSelectionTarget(1.0, 1e-8, strategy=strategy))
    # A lone word is released with probability at most delta.
    assert result.words == ("common",)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_released_words_are_held_and_sorted(strategy):
  rng = np.random.default_rng(0)
  words = [f"w{i}" for i in range(300)]
  users = rng.zipf(1.3, size=300).clip(max=2000)
  pop = Population.from_word_frequencies(words, users)
  result = ps.select_words(pop, ps.PartitionSelectionTarget(
      4.0, strategy=strategy))
  assert set(result.words) <= set(words)
  assert list(result.words) == sorted(result.words)
  assert result.heavy_hitters == result.words
  # The words of 2,000 users are released, the words of one user are not.
  held = dict(zip(words, users))
  assert {w for w, u in held.items() if u >= 2000} <= set(result.words)
  assert not {w for w, u in held.items() if u == 1} & set(result.words)


def test_params_label_the_guarantee_in_the_projects_terms():
  pop = Population.from_user_words(["a"] * 50 + ["b"] * 3)
  result = ps.select_words(pop, ps.PartitionSelectionTarget(
      2.0, strategy="gaussian_thresholding", max_partitions_contributed=1))
  p = result.params
  # delta = 1/n^2 of |D|: neighbours of the same size only, as TrieHH's.
  assert Adjacency.of(p.adjacency) is Adjacency.REPLACE_SPECIAL
  assert "both directions" in p.covers
  assert p.privacy == "central: the server sees raw strings"
  assert "pipeline-dp 0.3.1" in p.accounting
  assert (p.epsilon, p.delta, p.n_source) == (2.0, 1 / 53**2, "data")
  assert (p.strategy, p.max_partitions_contributed) == (
      "gaussian_thresholding", 1)
  assert (p.n, p.num_rows, p.num_candidates) == (53, 53, 2)
  assert result.seconds > 0
  given = ps.select_words(pop, ps.PartitionSelectionTarget(2.0, 1e-5))
  assert (given.params.delta, given.params.n_source) == (1e-5, "unused")
  assert given.params.adjacency == "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL"
  assert given.params.to_dict()["strategy"] == ps.DEFAULT_STRATEGY


def several_word_users(num_users=3000):
  return Population.from_user_words(
      [{"x": 1, "y": 2, "z": 3}] * num_users + [{"solo": 1}])


def test_several_words_are_bounded_by_a_seeded_uniform_choice():
  pop = several_word_users()
  rows = ps.user_word_rows(pop, 1, np.random.default_rng(7))
  assert rows == ps.user_word_rows(pop, 1, np.random.default_rng(7))
  assert len(rows) == pop.num_users
  assert len({user for user, _ in rows}) == pop.num_users
  chosen = collections.Counter(word for _, word in rows)
  for word in "xyz":  # each of 3,000 picks a third of the time
    assert abs(chosen[word] - 1000) < 150, chosen
  two = ps.user_word_rows(pop, 2, np.random.default_rng(1))
  per_user = collections.Counter(user for user, _ in two)
  assert max(per_user.values()) == 2 and len(set(two)) == len(two)
  every = ps.user_word_rows(pop, 3, np.random.default_rng(1))
  assert len(every) == 3 * 3000 + 1


def test_several_word_users_count_once_per_kept_word():
  pop = several_word_users()
  result = ps.select_words(pop, ps.PartitionSelectionTarget(
      1.0, 1e-8, max_partitions_contributed=2), seed=3)
  assert result.words == ("x", "y", "z")
  assert result.params.num_rows == 2 * 3000 + 1
  assert result.seed == 3


def test_users_listed_one_by_one_or_counted_give_the_same_rows():
  listed = Population.from_user_words(["b", "a", "b"])
  counted = Population.from_word_frequencies(["a", "b"], [1, 2])
  rng = np.random.default_rng(0)
  assert (sorted(w for _, w in ps.user_word_rows(listed, 1, rng))
          == sorted(w for _, w in ps.user_word_rows(counted, 1, rng))
          == ["a", "b", "b"])


@pytest.mark.parametrize("fields, error, needle", [
    ({"epsilon": 0.0}, ValueError, "^epsilon must be"),
    ({"epsilon": float("inf")}, ValueError, "^epsilon must be"),
    ({"epsilon": 1.0, "delta": 1.0}, ValueError, "^delta must be"),
    ({"epsilon": 1.0, "strategy": "policy_gaussian"}, ValueError,
     "^strategy must be one of"),
    ({"epsilon": 1.0, "max_partitions_contributed": 0}, ValueError,
     "^max_partitions_contributed must be"),
    ({"epsilon": 1.0, "max_partitions_contributed": 1.5}, TypeError,
     "^max_partitions_contributed must be an integer"),
    ({"epsilon": 1.0, "population_size": 0}, ValueError,
     r"^population_size \(the declared, public number of users\) must be"),
    ({"epsilon": 1.0, "population_size": 1}, ValueError,
     r"^population_size=1 is too few users for the default delta"),
    ({"epsilon": 1.0, "delta": 5e-324}, ValueError,
     r"^delta must be at least 2\.2250738585072014e-308, the least normal "
     r"float: a smaller \(subnormal\) delta cannot be accounted"),
    ({"epsilon": 1.0, "delta": 1e-320}, ValueError,
     r"^delta must be at least"),
    ({"epsilon": 1.0, "allow_delta_above_1_over_n": 1}, TypeError,
     r"^allow_delta_above_1_over_n must be True or False"),
])
def test_a_bad_field_is_refused_when_the_target_is_built(fields, error,
                                                         needle):
  with pytest.raises(error, match=needle):
    ps.PartitionSelectionTarget(**fields)


def test_a_target_is_frozen_and_one_declared_user_takes_a_delta():
  target = ps.PartitionSelectionTarget(1.0, 0.5, population_size=1)
  assert (target.delta, target.population_size) == (0.5, 1)
  with pytest.raises(AttributeError):
    target.epsilon = 2.0  # pylint: disable=assigning-non-slot


@pytest.mark.parametrize("seed, error, needle", [
    (-1, ValueError, "seed must be >= 0"),
    (1.5, TypeError, "seed must be an integer"),
])
def test_a_bad_seed_is_named(seed, error, needle):
  pop = Population.from_user_words(["a", "b"])
  with pytest.raises(error, match=needle):
    ps.select_words(pop, ps.PartitionSelectionTarget(1.0), seed=seed)


@pytest.mark.parametrize("keyword", ["epsilon", "delta", "strategy",
                                     "max_partitions_contributed",
                                     "population_size"])
def test_an_old_keyword_names_its_new_home(keyword):
  pop = Population.from_user_words(["a", "b"])
  with pytest.raises(TypeError, match=(
      rf"^select_words: {keyword}= is a field of "
      r"triehh.PartitionSelectionTarget, e.g. select_words\(population, "
      r"triehh.PartitionSelectionTarget\(epsilon=4.0\)\)$")):
    ps.select_words(pop, **{keyword: 1})


def test_a_missing_or_untyped_target_is_refused():
  pop = Population.from_user_words(["a", "b"])
  with pytest.raises(TypeError, match="none was given: e.g. select_words"):
    ps.select_words(pop)
  with pytest.raises(TypeError, match="got float 1.0"):
    ps.select_words(pop, 1.0)
  with pytest.raises(TypeError, match="unexpected keyword argument 'sede'"):
    ps.select_words(pop, ps.PartitionSelectionTarget(1.0), sede=1)


@pytest.mark.parametrize("delta", [None, 1e-6])
def test_one_user_is_refused_naming_the_minimum(delta):
  one = Population.from_user_words(["a"])
  with pytest.raises(ValueError, match=r"^partition selection needs at least "
                     r"2 users, got n=1 \(delta = 1/n\^2 would be 1"):
    ps.check(one, ps.PartitionSelectionTarget(1.0, delta))
  two = Population.from_user_words(["a", "b"])
  assert ps.check(two, ps.PartitionSelectionTarget(1.0)) == 0.25


def test_a_declared_population_size_gives_delta_and_add_or_remove():
  pop = Population.from_user_words(["a"] * 50 + ["b"] * 3)
  declared = ps.PartitionSelectionTarget(2.0, population_size=100)
  assert ps.check(pop, declared) == 1 / 100**2
  result = ps.select_words(pop, declared)
  p, g = result.params, result.guarantee
  assert (p.delta, p.n_source, p.population_size, p.n) == (
      1 / 100**2, "declared", 100, 53)
  # coverage.add_or_remove: n not read off the data, so one user more or
  # less runs the same parameters.
  assert g.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                           Adjacency.REPLACE_SPECIAL)
  assert g.holds_for("ADD_OR_REMOVE_ONE") and g.n_source == "declared"
  assert p.adjacency == "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL"
  assert "declared, public population size" in g.covers
  with pytest.raises(ValueError, match=r"^population_size=52 is smaller "
                     r"than the n=53 users"):
    ps.check(pop, ps.PartitionSelectionTarget(2.0, population_size=52))


def test_n_read_off_the_data_covers_neighbours_of_the_same_size_only():
  pop = Population.from_user_words(["a"] * 50 + ["b"] * 3)
  g = ps.select_words(pop, ps.PartitionSelectionTarget(2.0)).guarantee
  assert (g.epsilon, g.delta, g.n_source) == (2.0, 1 / 53**2, "data")
  assert g.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert not g.holds_for(Adjacency.ADD_OR_REMOVE_ONE)
  assert "only neighbours of the same size" in g.covers


def test_its_randomness_says_the_seed_fixes_the_word_choice_only():
  # python-dp's noise takes no seed: "seed N" alone would promise a
  # repeatable run (a simulation) that a selection is not.
  pop = crowd_and_singletons(num_singletons=20, crowd=500)
  target = ps.PartitionSelectionTarget(1.0, 1e-8)
  seeded = ps.select_words(pop, target, seed=7).guarantee.randomness
  assert seeded == ("seed 7 for the word choice; PipelineDP's noise from "
                    "python-dp's secure randomness (the operating system's), "
                    "not reproducible")
  fresh = ps.select_words(pop, target).guarantee.randomness
  assert fresh.startswith("fresh entropy (not recorded) for the word choice; ")
  assert "simulation" not in seeded + fresh


def test_the_holders_a_word_needs_are_the_keep_probabilitys_half_point():
  # 1 + ln(k / (2 delta)) k / epsilon, by hand.
  assert ps.holders_needed(1.0, 1e-8) == pytest.approx(
      1 + np.log(5e7), rel=1e-12)  # 18.73
  assert ps.holders_needed(2.0, 1e-8, 2) == pytest.approx(
      1 + np.log(1e8), rel=1e-12)  # 19.42
  # python-dp's own selection: below it words are mostly dropped, above it
  # mostly kept (the statistical tests' overwhelming probability).
  below, above = (Population.from_word_frequencies(
      [f"x{i}" for i in range(100)], [users] * 100) for users in (14, 24))
  target = ps.PartitionSelectionTarget(1.0, 1e-8)
  assert len(ps.select_words(below, target).words) < 20
  assert len(ps.select_words(above, target).words) > 80


def test_a_selection_that_releases_nothing_says_why():
  pop = crowd_and_singletons(num_singletons=300, crowd=5)
  result = ps.select_words(pop, ps.PartitionSelectionTarget(1.0, 1e-8),
                           seed=1)
  assert result.words == ()
  assert result.notes == (
      "no word found: truncated_geometric selection keeps a word with "
      "probability 1/2 at about 1 + ln(k/(2 delta)) k/epsilon = 19 holders "
      "(epsilon=1, delta=1e-08, k=1) among the n=305 users: no word had "
      "enough in this run",)
  # One holder each: kept with probability delta, 1e-9.
  tiny = Population.from_word_frequencies(["a", "b"], [1, 1])
  (note,) = ps.select_words(tiny, ps.PartitionSelectionTarget(1.0, 1e-9)
                            ).notes
  assert "= 21 holders" in note and note.endswith(
      "among the n=2 users: more than there are users, so no word can be "
      "expected; ask for a larger epsilon, or run on more users")
  found = crowd_and_singletons(num_singletons=20, crowd=500)
  assert ps.select_words(found, target_of(1.0)).notes == ()


def target_of(epsilon):
  return ps.PartitionSelectionTarget(epsilon, 1e-8)


def test_the_result_is_a_release_with_its_guarantee():
  pop = crowd_and_singletons(num_singletons=20, crowd=500)
  result = ps.select_words(pop, ps.PartitionSelectionTarget(1.0, 1e-8))
  assert isinstance(result, release.Release)
  assert isinstance(result.guarantee, Guarantee)
  assert result.mechanism == "partition_selection"
  assert "mechanism" not in {f.name for f in dataclasses.fields(result)}
  assert result.words == ("common",)  # alphabetical, like every output
  g = result.guarantee
  assert (g.epsilon, g.delta, g.two_sided, g.n_source) == (
      1.0, 1e-8, True, "unused")
  assert g.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                           Adjacency.REPLACE_SPECIAL)
  assert g.accounting == result.params.accounting
  assert "both directions" in g.covers and "no counts" in g.covers
  assert "raw words" in g.trust
  assert g.describe().startswith("(1, 1e-08)-DP, both directions")
  assert result.per_round == (release.RoundStats(candidates=21, kept=1),)
  assert result.unprotected == {"num_rows": 520, "num_candidates": 21}


def test_same_rows_and_labels_as_the_lower_level_functions():
  # The selection's noise takes no seed; what the seed and target fix (the
  # rows, the parameters) is what the old keyword call computed from them.
  pop = several_word_users(300)
  target = ps.PartitionSelectionTarget(1.0, 1e-6,
                                       max_partitions_contributed=2)
  result = ps.select_words(pop, target, seed=11)
  rows = ps.user_word_rows(pop, 2, np.random.default_rng(11))
  assert result.params == ps.PartitionSelectionParams(
      epsilon=1.0, delta=1e-6, strategy=ps.DEFAULT_STRATEGY,
      max_partitions_contributed=2, n=301, num_rows=len(rows),
      num_candidates=len({w for _, w in rows}), n_source="unused",
      adjacency="ADD_OR_REMOVE_ONE, REPLACE_SPECIAL",
      accounting=result.params.accounting)
  assert set(result.words) <= {w for _, w in rows}


def test_a_population_is_required():
  with pytest.raises(TypeError, match="Population"):
    ps.select_words(["a", "b"], ps.PartitionSelectionTarget(1.0))


def test_rows_beyond_memory_are_refused_before_they_are_built(monkeypatch):
  # 10^10 users ended in numpy's "Unable to allocate 74.5 GiB".
  from triehh.core import memory  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(memory, "available_bytes", lambda: 10**6)
  pop = Population.from_word_frequencies(["sun", "moon"], [10**9, 10**9])
  with pytest.raises(MemoryError, match=r"2,000,000,000 \(user, word\) "
                     r"rows for pipeline_dp would need about 238\.4 GiB"):
    ps.user_word_rows(pop, 1, np.random.default_rng(0))


def test_select_words_refuses_a_delta_above_1_over_n_unless_opted_in():
  pop = Population.from_user_words(["ab"] * 300 + ["cd"] * 100)
  with pytest.raises(ValueError, match=r"^delta=0\.01 is above 1/n = 1/400 "
                     r".*allow_delta_above_1_over_n=True"):
    ps.select_words(pop, ps.PartitionSelectionTarget(4.0, 0.01))
  result = ps.select_words(pop, ps.PartitionSelectionTarget(
      4.0, 0.01, allow_delta_above_1_over_n=True))
  assert result.words == ("ab", "cd")
  assert result.guarantee.caveat.startswith(
      "delta=0.01 exceeds 1/n = 1/400 = 0.0025")
  assert ps.select_words(pop, ps.PartitionSelectionTarget(
      4.0, 1 / 400)).guarantee.caveat == ""
