"""TrieHH on Beam: equal in law to the fast engine's Poisson sampling."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("apache_beam", reason="apache-beam is not installed")

from tests import reference  # pylint: disable=g-import-not-at-top
from triehh.beam import protocol  # pylint: disable=g-import-not-at-top
from triehh.core import population as population_lib  # pylint: disable=g-import-not-at-top
from triehh.engines import fast as fast_engine  # pylint: disable=g-import-not-at-top
from triehh.theory import accountants  # pylint: disable=g-import-not-at-top
from triehh.theory import mechanism as mechanism_lib  # pylint: disable=g-import-not-at-top

# 40 users; L = 3 truncates "abcd" (it supports "abc" but is never a word).
WORDS = ["ab"] * 12 + ["ac"] * 9 + ["B"] * 8 + ["abcd"] * 6 + ["bc"] * 5
NUM_RUNS = 400


def _fast_levels(words, theta, rate, max_length, seed):
  pop = population_lib.Population.from_user_words(words,
                                                  max_length=max_length)
  trie = fast_engine.run(pop, theta=theta, batch_size=1, sampling_rate=rate,
                         rng=np.random.default_rng(seed))
  return [level for level in reference.trie_levels(trie) if level]


def test_everyone_sampled_gives_the_fast_engines_trie():
  rounds = protocol.Rounds(theta=3, sampling_rate=1.0, max_length=3,
                           seeds=(5,))
  got = protocol.run(list(enumerate(WORDS)), rounds)[5]
  assert got == _fast_levels(WORDS, 3, 1.0, 3, 0)
  assert protocol.heavy_hitters(got) == {"ab": 12, "ac": 9, "b": 8, "bc": 5}


@pytest.fixture(scope="module")
def both_runs():
  """The discovered levels of NUM_RUNS seeds: Beam's and the fast engine's."""
  rounds = protocol.Rounds(theta=4, sampling_rate=0.5, max_length=3,
                           seeds=tuple(range(NUM_RUNS)))
  beam_runs = protocol.run(list(enumerate(WORDS)), rounds)
  beam_levels = [beam_runs[s] for s in rounds.seeds]
  fast_levels = [_fast_levels(WORDS, 4, 0.5, 3, 1000 + s)
                 for s in range(NUM_RUNS)]
  return beam_levels, fast_levels


def test_discovered_sets_match_the_fast_engine(both_runs):
  found = [[frozenset(protocol.heavy_hitters(t)) for t in runs]
           for runs in both_runs]
  kinds = sorted(set(found[0]) | set(found[1]), key=sorted)
  table = np.array([[runs.count(k) for k in kinds] for runs in found])
  common = table.sum(axis=0) >= 20  # pool the rare sets into one column
  table = np.column_stack([table[:, common], table[:, ~common].sum(axis=1)])
  assert common.sum() >= 4  # several outcomes: the test is informative
  assert stats.chi2_contingency(table).pvalue > 1e-4


def test_first_round_votes_match_the_fast_engine(both_runs):
  # Votes for "a" in round 1: Binomial(27, 1/2) where kept (>= theta).
  for prefix in ("a", "b"):
    samples = [[t[0].get(prefix, 0) for t in runs if t] for runs in both_runs]
    assert stats.ks_2samp(*samples).pvalue > 1e-4, prefix
  law = stats.binom(27, 0.5)
  votes = np.array([t[0].get("a", 0) for t in both_runs[0] if t])
  assert abs(votes.mean() - law.mean()) < 4 * law.std() / np.sqrt(votes.size)


def test_the_keyed_hash_samples_each_user_and_level_independently():
  draws = np.array([[protocol.sampled(7, level, user, 0.3)
                     for level in (1, 2)] for user in range(20000)])
  assert abs(draws.mean() - 0.3) < 4 * np.sqrt(0.21 / draws.size)
  # Independent levels: P(both) = q^2.
  both = draws.all(axis=1).mean()
  assert abs(both - 0.09) < 4 * np.sqrt(0.09 * 0.91 / 20000)
  # Another seed, other coins.
  other = np.array([protocol.sampled(8, 1, u, 0.3) for u in range(20000)])
  assert abs((other & draws[:, 0]).mean() - 0.09) < 4 * np.sqrt(
      0.09 * 0.91 / 20000)


def test_words_become_the_populations_sequences():
  assert protocol.sequence("Abc", 3) == "abc$"
  assert protocol.sequence("abcd", 3) == "abc"


def test_the_guarantee_is_the_poisson_accountants():
  rounds = protocol.Rounds(theta=20, sampling_rate=0.05, max_length=5)
  mechanism = mechanism_lib.Mechanism(theta=20, sampling="poisson",
                                      sampling_rate=0.05)
  got = protocol.guarantee(rounds, 10**6)
  assert got == accountants.POISSON.guarantee(mechanism, 10**6, 5)
  assert got.two_sided and np.isfinite(got.epsilon)


def test_bad_options_are_named():
  with pytest.raises(ValueError, match="sampling_rate"):
    protocol.Rounds(theta=2, sampling_rate=1.5, max_length=3)
  with pytest.raises(ValueError, match="seeds"):
    protocol.Rounds(theta=2, sampling_rate=0.5, max_length=3, seeds=())


@pytest.mark.parametrize("users, match", [
    ([(1, "sun")] * 10, "user 1 has 10 rows"),
    ([(1, "sun"), (2, "sun"), (1, "moon")], "user 1 has 2 rows"),
    ([(1, "su$n")], "holds the end symbol"),
    ([(1, 7)], "a word must be a non-empty string"),
    ([(1, "sun\ud800")], "not valid Unicode"),
    ([((1, 2.5), "sun")], "user ids must be strings, integers or bytes .*, "
     "got float"),
    ([(None, "sun")], "user ids must be strings, integers or bytes"),
])
def test_users_are_checked_one_word_each(users, match):
  # Ten rows of one user voted ten times a round: "sun" was found from a
  # single user; "su$n" gave the word "su", which nobody holds.
  with pytest.raises(Exception, match=match):
    protocol.run(users, protocol.Rounds(theta=5, sampling_rate=1.0,
                                        max_length=4))


@pytest.mark.parametrize("options, match", [
    (dict(end_symbol=""), "end_symbol must be one character"),
    (dict(seeds=("abc",)), "seeds"), (dict(seeds=(1.5,)), "seeds"),
    (dict(seeds=(-1,)), "seeds"), (dict(seeds={1: 2}), "seeds must be a "
                                   "sequence"), (dict(seeds=7), "seeds")])
def test_rounds_check_seeds_and_the_end_symbol(options, match):
  with pytest.raises((TypeError, ValueError), match=match):
    protocol.Rounds(theta=5, sampling_rate=1.0, max_length=4, **options)


def test_numpy_seeds_and_user_ids_run_as_python_ints():
  # Beam's coders encode neither numpy.int64 seeds nor numpy user ids.
  rounds = protocol.Rounds(theta=5, sampling_rate=1.0, max_length=4,
                           seeds=(np.int64(3),))
  assert rounds.seeds == (3,) and type(rounds.seeds[0]) is int
  users = [(np.int64(i), "sun") for i in range(10)]
  plain = [(i, "sun") for i in range(10)]
  assert protocol.run(users, rounds) == protocol.run(plain, rounds)
