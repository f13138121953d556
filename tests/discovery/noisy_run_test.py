"""Tests of triehh.discover with a NoisyTarget (the noisy trie)."""

import pytest

import triehh
from triehh.discovery import noisy_run
from triehh.theory import noisy_trie
from triehh.theory.adjacency import Adjacency

_WORDS = ["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000 + [
    f"w{i}" for i in range(4000)]
# The alphabet given (public, fixed with the test): the noisy trie refuses
# one read off the users' words.
_USERS = triehh.Population.from_user_words(
    _WORDS, alphabet="0123456789amnorstuw")


def test_an_alphabet_read_off_the_users_words_is_refused():
  # With it, a character only one user types came out in 33 of 300 runs
  # (noise passing the threshold), and never without that user.
  with pytest.raises(ValueError, match="needs a public alphabet"):
    triehh.discover(_WORDS, triehh.NoisyTarget(4.0), seed=0)
  with pytest.raises(ValueError, match="needs a public alphabet"):
    triehh.discover(triehh.Population.from_user_words(_WORDS),
                    triehh.NoisyTarget(4.0), seed=0)


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
    (dict(workers=["x"]), "the noisy trie's fast engine takes no engine "
     "options, got workers"),
])
def test_what_the_noisy_trie_does_not_run_with_is_refused(options, message):
  with pytest.raises(ValueError, match=message):
    triehh.discover(_USERS, triehh.NoisyTarget(4.0), **options)


def test_a_bad_noisy_target_is_refused_when_built():
  with pytest.raises(ValueError, match="false_positive_rate"):
    triehh.NoisyTarget(4.0, false_positive_rate=0.0)
  with pytest.raises(TypeError, match="chars_per_level"):
    triehh.NoisyTarget(4.0, chars_per_level=1.5)


# The tff engine's runs: tests/engines/tff/noisy_engine_test.py. Its options
# and labels are checked here without TensorFlow.


@pytest.mark.parametrize("engine, options, message", [
    ("tff", dict(noise="laplace"), "noise must be 'central' or "
     "'distributed', got 'laplace'"),
    ("tff", dict(secure_sum=True), "the noisy trie's tff engine takes "
     "connect_timeout, noise, rpc_timeout, workers; got secure_sum"),
    ("toy", {}, "runs in the 'fast' and 'tff' engines only, got "
     "engine='toy'"),
])
def test_engines_and_options_the_noisy_trie_does_not_take_are_refused(
    engine, options, message):
  with pytest.raises(ValueError, match=message) as raised:
    noisy_run._checked_options(engine, options)  # pylint: disable=protected-access
  assert "\n" not in str(raised.value)


def test_the_tff_engine_takes_its_noise_and_where_it_runs():
  assert noisy_run._checked_options("tff", {}) == "central"  # pylint: disable=protected-access
  assert noisy_run._checked_options(  # pylint: disable=protected-access
      "tff", dict(noise="distributed", workers="h:1")) == "distributed"


@pytest.mark.parametrize("target, adjacencies, n_source", [
    (triehh.NoisyTarget(4.0, delta=1e-8), (Adjacency.REPLACE_SPECIAL,),
     "data"),
    (triehh.NoisyTarget(4.0, population_size=100),
     (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_SPECIAL), "declared"),
])
def test_the_distributed_noise_reads_n_for_its_split(target, adjacencies,
                                                    n_source):
  params = noisy_trie.NoisyTrieParams(sigma=3.0, num_levels=4,
                                      threshold=12.0)
  guarantee = noisy_run._labelled(  # pylint: disable=protected-access
      noisy_trie.guarantee(params, 1e-8), target, distributed=True)
  assert guarantee.adjacencies == adjacencies
  assert guarantee.n_source == n_source
  central = noisy_run._labelled(  # pylint: disable=protected-access
      noisy_trie.guarantee(params, 1e-8), target)
  assert central.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                                 Adjacency.REPLACE_SPECIAL)
