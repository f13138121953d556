"""The noisy trie on Beam: equal in law to the fast engine."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("apache_beam", reason="apache-beam is not installed")

from triehh.beam import noisy_protocol  # pylint: disable=g-import-not-at-top
from triehh.core import alphabet as alphabet_lib  # pylint: disable=g-import-not-at-top
from triehh.core import population as population_lib  # pylint: disable=g-import-not-at-top
from triehh.engines import noisy  # pylint: disable=g-import-not-at-top
from triehh.theory import noisy_plan  # pylint: disable=g-import-not-at-top
from triehh.theory import noisy_trie  # pylint: disable=g-import-not-at-top
from tests.engines import noisy_law  # pylint: disable=g-import-not-at-top
from tests.engines.noisy_law import LAW_PARAMS  # pylint: disable=g-import-not-at-top
from tests.engines.noisy_law import LAW_WORDS  # pylint: disable=g-import-not-at-top

BEAM_RUNS = 1000


def law_rounds(seeds, params=LAW_PARAMS, words=LAW_WORDS, max_length=2):
  return noisy_protocol.NoisyRounds(
      params, alphabet_lib.Alphabet.from_words(words), max_length,
      seeds=tuple(seeds))


@pytest.fixture(scope="module")
def beam_law_runs():
  """BEAM_RUNS seeds side by side in one pipeline."""
  rounds = law_rounds(range(BEAM_RUNS))
  runs = noisy_protocol.run(list(enumerate(LAW_WORDS)), rounds)
  return [runs[seed] for seed in rounds.seeds]


def test_the_rounds_are_equal_in_law_to_the_fast_engine(beam_law_runs):
  noisy_law.assert_equal_in_law(beam_law_runs)


def test_the_law_test_sees_a_threshold_a_third_of_sigma_higher(
    beam_law_runs):
  noisy_law.assert_sees_a_higher_threshold(beam_law_runs)


def test_the_stats_count_what_the_rounds_saw(beam_law_runs):
  for run in beam_law_runs[:100]:
    for r, level in enumerate(run.levels):
      assert level.prefix_length == r
      assert level.num_candidates == level.num_frontier * (3 if r < 2 else 1)
      assert level.num_voted <= level.num_candidates
      assert level.num_released <= level.num_passing
      assert level.expected_false_positives == pytest.approx(
          LAW_PARAMS.false_positive_rate * level.num_candidates)
    # A round after another keeps its passing prefixes as the frontier.
    for before, after in zip(run.levels, run.levels[1:]):
      assert after.num_frontier == before.num_passing - before.num_released
    assert np.all(run.noisy_counts >= LAW_PARAMS.threshold)


# ---- several characters per round, each round its own noise ---------------


def test_two_characters_per_round_are_equal_in_law_to_the_fast_engine():
  words = LAW_WORDS + ["abb"] * 3
  params = noisy_trie.NoisyTrieParams(sigma=1.5, num_levels=2, threshold=2.5,
                                      sampling_rate=0.8, chars_per_level=2)
  rounds = law_rounds(range(BEAM_RUNS), params, words, max_length=3)
  runs = noisy_protocol.run(list(enumerate(words)), rounds)
  beam_runs = [runs[seed] for seed in rounds.seeds]
  pop = population_lib.Population.from_user_words(words, max_length=3)
  noisy_law.assert_same_law(beam_runs, noisy_law.fast_runs(params, pop))

WORDS = ["sun"] * 6 + ["moon"] * 5 + ["mo"] * 4 + ["s"] * 3


def test_quiet_noise_at_two_characters_per_round_finds_every_word():
  params = noisy_trie.NoisyTrieParams(sigma=0.01, num_levels=3,
                                      threshold=0.5, chars_per_level=2)
  rounds = law_rounds((3,), params, WORDS, max_length=4)
  got = noisy_protocol.run(list(enumerate(WORDS)), rounds)[3]
  # By round, each round's by noisy sum.
  assert got.words == ("s", "sun", "mo", "moon")
  np.testing.assert_allclose(got.noisy_counts, [3, 6, 4, 5], atol=0.1)
  assert [level.num_passing for level in got.levels] == [3, 3, 1]
  pop = population_lib.Population.from_user_words(WORDS, max_length=4)
  fast = noisy.run(pop, params, 0)
  assert [level.num_candidates for level in got.levels] == [
      level.num_candidates for level in fast.levels]
  assert set(fast.words) == set(got.words)


def test_each_round_runs_at_its_own_noise_and_threshold():
  loud_last = noisy_trie.NoisyTrieParams(sigma=0.01, num_levels=3,
                                         threshold=0.5,
                                         noise_multipliers=(1.0, 1.0, 1000.0))
  loud_first = noisy_trie.NoisyTrieParams(sigma=0.01, num_levels=3,
                                          threshold=0.5,
                                          noise_multipliers=(1000.0,))
  users = list(enumerate(LAW_WORDS))
  last = noisy_protocol.run(users, law_rounds((0,), loud_last))[0]
  assert set(last.words) == {"a", "b"}  # two letters' "$" comes in round 3
  first = noisy_protocol.run(users, law_rounds((0,), loud_first))[0]
  assert first.words == () and len(first.levels) == 1


def test_a_seed_gives_one_run_and_another_seed_another():
  users = list(enumerate(LAW_WORDS))
  runs = noisy_protocol.run(users, law_rounds((5, 6)))
  again = noisy_protocol.run(users, law_rounds((5,)))[5]
  assert runs[5].words == again.words and runs[5].levels == again.levels
  np.testing.assert_array_equal(runs[5].noisy_counts, again.noisy_counts)
  assert not np.array_equal(runs[5].noisy_counts, runs[6].noisy_counts)


def test_the_guarantee_is_the_fast_engines():
  rounds = law_rounds((0,))
  want = noisy_trie.guarantee(LAW_PARAMS, 1e-6)
  assert noisy_protocol.guarantee(rounds, 1e-6) == want
  assert noisy_protocol.run([(0, "a")], rounds, delta=1e-6)[0].guarantee \
      == want


# ---- bad input ---------------------------------------------------------------


@pytest.mark.parametrize("options, match", [
    (dict(seeds=()), "seeds is empty"),
    (dict(seeds=(1, -2)), "seeds must be non-negative integers, got -2"),
    (dict(max_length=0), "max_length"),
    (dict(params=noisy_trie.NoisyTrieParams(sigma=1.0, num_levels=2,
                                            threshold=5.0)),
     "params account for 2 rounds, but words of up to 2 characters at 1 "
     "per round need 3"),
    (dict(params=object()), "params must be NoisyTrieParams, got object"),
    (dict(params=noisy_plan.plan(1000, 2, 2, 4.0, 1e-6)),
     "params: a plan of the noisy trie for an upload_budget runs on the "
     "fast engine only"),
    (dict(alphabet="ab"), "alphabet must be an Alphabet, got str"),
])
def test_bad_options_are_named(options, match):
  kwargs = dict(params=LAW_PARAMS, alphabet=alphabet_lib.Alphabet.of("ab"),
                max_length=2, seeds=(0,))
  kwargs.update(options)
  with pytest.raises(ValueError, match=match) as raised:
    noisy_protocol.NoisyRounds(**kwargs)
  assert "\n" not in str(raised.value)


@pytest.mark.parametrize("users, match", [
    ([(0, "ab"), (1, "b"), (0, "a")],
     "user 0 has several words; the noisy trie on Beam takes one word per "
     "user"),
    ([(0, "ab"), (1, "bc")],
     "word 'bc' has the character 'c', which is not in the alphabet"),
])
def test_bad_users_are_named_before_the_pipeline(users, match):
  with pytest.raises(ValueError, match=match):
    noisy_protocol.run(users, law_rounds((0,)))


# ---- the "beam" engine of triehh.discover ------------------------------------

_ENGINE_WORDS = (["sun"] * 300 + ["moon"] * 200 + ["star"] * 100
                 + [f"w{i}" for i in range(400)])


def _engine_users():
  import triehh  # pylint: disable=g-import-not-at-top
  return triehh.Population.from_user_words(_ENGINE_WORDS,
                                           alphabet="0123456789amnorstuw")


def test_discover_runs_the_noisy_trie_on_beam_as_the_pipeline_does():
  """engine="beam": one run of the pipeline, its seed drawn from the run's
  generator; the same words, counts and stats as the pipeline's own run of
  that seed; the fast engine's guarantee; which words and passing
  candidates are false read off the users' words."""
  import triehh  # pylint: disable=g-import-not-at-top
  users = _engine_users()
  target = triehh.NoisyTarget(4.0, delta=1e-6, false_positive_rate=0.02)
  result = triehh.discover(users, target, engine="beam", seed=11)
  fast = triehh.discover(users, target, seed=11)
  assert {"sun", "moon", "star"} <= set(result.words)
  assert result.guarantee == fast.guarantee
  seed = int(np.random.default_rng(11).integers(0, 2**62))
  rounds = noisy_protocol.NoisyRounds(result.params, users.alphabet,
                                      users.max_length, seeds=(seed,))
  one = noisy_protocol.run(list(enumerate(_ENGINE_WORDS)), rounds)[seed]
  assert result.words == one.words
  np.testing.assert_array_equal(result.noisy_counts, one.noisy_counts)
  held = {w[:i] for w in (w + "$" for w in set(_ENGINE_WORDS))
          for i in range(len(w) + 1)}
  np.testing.assert_array_equal(
      result.false_words, [w + "$" not in held for w in result.words])
  frontier = [""]
  for level, stats, passing in zip(result.levels, one.levels, one.passing):
    assert level.num_candidates == stats.num_candidates
    assert level.num_phantom == sum(t not in held for t in frontier)
    assert level.num_false_positives == sum(t not in held for t in passing)
    frontier = [t for t in passing if not t.endswith("$")]
  # A false-positive rate of 2 % per candidate: noise-only prefixes pass.
  assert sum(level.num_false_positives for level in result.levels) > 0


@pytest.mark.parametrize("options, match", [
    (dict(noise="distributed"), "beam engine takes no options"),
    (dict(workers="h:1"), "beam engine takes no options"),
])
def test_the_beam_engine_refuses_options_and_several_words(options,
                                                          match):
  import triehh  # pylint: disable=g-import-not-at-top
  with pytest.raises(ValueError, match=match):
    triehh.discover(_engine_users(), triehh.NoisyTarget(4.0, delta=1e-6),
                    engine="beam", seed=0, **options)
  several = population_lib.Population.from_user_words(
      [{"sun": 2, "moon": 1}, "star"], alphabet="amnorstu")
  with pytest.raises(ValueError, match="one word per user"):
    noisy_protocol.run_noisy(several, noisy_trie.NoisyTrieParams(
        sigma=1.0, num_levels=11, threshold=3), 0)
