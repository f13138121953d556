"""Tests of triehh.engines.tff.noisy_engine: the noisy trie run in TFF,
equal in law to the fast engine (central noise)."""

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

import triehh
from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.engines.tff import noisy_engine
from triehh.engines.tff import noisy_process
from triehh.theory import noisy_trie
from triehh.theory.adjacency import Adjacency
from tests.engines import noisy_law
from tests.engines.noisy_law import LAW_PARAMS
from tests.engines.noisy_law import LAW_WORDS
from tests.engines.noisy_law import law_population

# ---- equal in law to the fast engine ----------------------------------------

TFF_RUNS = 250


@pytest.fixture(scope="module")
def tff_law_runs(tff_runtime_module):
  del tff_runtime_module  # the engine installs the cached local runtime
  pop = law_population()
  return [noisy_engine.run(pop, LAW_PARAMS, seed) for seed in range(TFF_RUNS)]


def test_central_noise_is_equal_in_law_to_the_fast_engine(tff_law_runs):
  noisy_law.assert_equal_in_law(tff_law_runs)


def test_the_law_test_sees_a_threshold_a_third_of_sigma_higher(
    tff_law_runs):
  noisy_law.assert_sees_a_higher_threshold(tff_law_runs)


def test_a_seed_gives_one_run(tff_runtime_module):
  del tff_runtime_module
  pop = law_population()
  first = noisy_engine.run(pop, LAW_PARAMS, 5)
  again = noisy_engine.run(pop, LAW_PARAMS, 5)
  assert first.words == again.words and first.levels == again.levels
  np.testing.assert_array_equal(first.noisy_counts, again.noisy_counts)


# ---- through triehh.discover --------------------------------------------------

USERS = triehh.Population.from_user_words(  # a given (public) alphabet
    ["sun"] * 300 + ["moon"] * 200 + ["star"] * 150
    + [f"w{i}" for i in range(350)], alphabet="0123456789amnorstuw")


def test_discover_runs_the_central_noise_in_tff_and_labels_it(
    tff_runtime_module):
  del tff_runtime_module
  target = triehh.NoisyTarget(4.0, delta=1e-6)
  result = triehh.discover(USERS, target, seed=0, engine="tff")
  assert {"sun", "moon", "star"} <= set(result.words)
  fast = triehh.discover(USERS, target, seed=0)
  assert result.params == fast.params
  assert result.guarantee == fast.guarantee
  assert result.guarantee.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                                          Adjacency.REPLACE_SPECIAL)


def test_discover_runs_the_distributed_noise_and_labels_its_accounting(
    tff_runtime_module):
  del tff_runtime_module
  # Few clients: each adds its discrete Gaussian share (tens of ms each).
  users = triehh.Population.from_user_words(
      ["sun"] * 60 + ["moon"] * 45 + ["star"] * 35
      + [f"w{i}" for i in range(20)], alphabet="0123456789amnorstuw",
      max_length=5)
  target = triehh.NoisyTarget(4.0, delta=1e-6)
  result = triehh.discover(users, target, seed=0, max_length=5,
                           engine="tff", noise="distributed")
  assert {"sun", "moon", "star"} <= set(result.words)
  guarantee = result.guarantee
  central = triehh.discover(users, target, seed=0, max_length=5).guarantee
  assert guarantee.epsilon == central.epsilon
  assert guarantee.accounting.endswith(
      "distributed discrete Gaussian accounted as the central Gaussian")
  assert "not exactly it" in guarantee.covers
  assert "discrete Gaussian noise per unit" in guarantee.covers
  # The noise is split among q n clients: n is read off the data.
  assert guarantee.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert "the noise's split among q n clients read n off" in guarantee.covers


@pytest.mark.parametrize("options, match", [
    (dict(noise="laplace"), "noise must be 'central' or 'distributed', got "
     "'laplace'"),
    (dict(secure_sum=True), "the noisy trie's tff engine takes "
     "connect_timeout, noise, rpc_timeout, workers; got secure_sum"),
])
def test_discover_refuses_what_the_tff_noisy_trie_does_not_take(options,
                                                                 match):
  with pytest.raises(ValueError, match=match):
    triehh.discover(USERS, triehh.NoisyTarget(4.0), engine="tff", **options)


# ---- several words, refusals ---------------------------------------------------


def test_several_words_per_user_vote_with_one_drawn_word(tff_runtime_module):
  del tff_runtime_module
  users = [{"ab": 5, "b": 1}] * 40 + [{"ba": 1}] * 30 + [{"a": 1}] * 3
  pop = population_lib.Population.from_user_words(users, max_length=2)
  params = noisy_trie.NoisyTrieParams(sigma=1.0, num_levels=3,
                                      threshold=10.0)
  result = noisy_engine.run(pop, params, 3)
  assert set(result.words) == {"ab", "ba"}  # b is drawn 1 time in 6
  assert result.num_false_words == 0


def test_a_candidate_set_beyond_the_bound_is_refused():
  pop = population_lib.Population.from_user_words(
      list("abcdefghijklmnopqrstuvwxyz"), max_length=6)
  params = noisy_trie.NoisyTrieParams(sigma=1.0, num_levels=2,
                                      threshold=5.0, chars_per_level=4)
  with pytest.raises(ValueError, match=r"round 0's candidate set has "
                     r"475,255 candidates \(1 frontier prefixes x 475,255 "
                     r"extensions\); the TFF engine holds at most 65,536 "
                     r"\(MAX_CANDIDATES\)") as raised:
    noisy_engine.run(pop, params, 0)
  assert "\n" not in str(raised.value)
  assert noisy_process.MAX_CANDIDATES == 65_536


def test_too_few_accounted_rounds_are_refused():
  pop = law_population()
  params = noisy_trie.NoisyTrieParams(sigma=1.0, num_levels=2,
                                      threshold=5.0)
  with pytest.raises(ValueError, match="params account for 2 rounds, but "
                     "words of up to 2 characters at 1 per round need 3"):
    noisy_engine.run(pop, params, 0)


def test_each_round_runs_at_its_own_noise_and_threshold(tff_runtime_module):
  del tff_runtime_module
  pop = law_population()
  quiet = noisy_trie.NoisyTrieParams(sigma=0.01, num_levels=3, threshold=0.5)
  # The first round's threshold 1,000 times higher: no single letter has
  # the votes, so nothing is released, in either engine.
  loud_first = noisy_trie.NoisyTrieParams(sigma=0.01, num_levels=3,
                                          threshold=0.5,
                                          noise_multipliers=(1000.0,))
  for engine_run in (noisy_engine.run, noisy.run):
    assert set(engine_run(pop, quiet, 0).words) == set(LAW_WORDS)
    first_loud = engine_run(pop, loud_first, 0)
    assert first_loud.words == () and len(first_loud.levels) == 1
  # The later rounds at the base noise: a loud last round drops only the
  # words of two letters (their "$" comes in round 3).
  loud_last = noisy_trie.NoisyTrieParams(sigma=0.01, num_levels=3,
                                         threshold=0.5,
                                         noise_multipliers=(1.0, 1.0,
                                                            1000.0))
  assert set(noisy_engine.run(pop, loud_last, 0).words) == {"a", "b"}
