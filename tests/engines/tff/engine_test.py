"""Tests of the tff engine: the same tries as the fast engine."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

pytest.importorskip("tensorflow_federated")

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.engines import fast as fast_engine
from triehh.engines import sampling
from triehh.engines.tff import engine
from triehh.engines.tff import runtime
import triehh
from tests import paper_example
from tests.engines.tff.helpers import POPULATIONS, assert_same_trie

def both(pop, seed, **kwargs):
  tff_trie = engine.run(pop, rng=np.random.default_rng(seed), **kwargs)
  kwargs = {k: v for k, v in kwargs.items()
            if k not in ("secure_sum", "vote_capacity")}
  return tff_trie, fast_engine.run(pop, rng=np.random.default_rng(seed),
                                   **kwargs)


@pytest.mark.parametrize("name,theta,batch_size,sub_rounds,cap,seed", [
    ("one", 3, 150, 1, None, 0),
    ("one", 3, 150, 1, None, 1),
    ("one", 2, 100, 3, 3, 2),
    ("one", 4, 200, 2, 2, 3),
    ("several", 3, 100, 1, None, 0),
    ("several", 3, 100, 1, None, 1),
    ("several", 2, 80, 3, 2, 2),
    ("several", 3, 120, 2, 3, 3),
])
def test_same_trie_as_the_fast_engine(name, theta, batch_size, sub_rounds, cap,
                                      seed):
  got, want = both(POPULATIONS[name], seed, theta=theta, batch_size=batch_size,
                   num_sub_rounds=sub_rounds, max_num_prefixes=cap)
  assert want.depth >= 3 and want.heavy_hitters()  # a non-trivial run
  assert_same_trie(got, want)


@pytest.mark.parametrize("name,rate,sub_rounds,seed", [
    ("one", 0.3, 1, 0), ("one", 0.2, 2, 1), ("several", 0.3, 1, 2),
    ("several", 0.25, 3, 3)])
def test_poisson_sampling_gives_the_same_trie(name, rate, sub_rounds, seed):
  got, want = both(POPULATIONS[name], seed, theta=3, batch_size=1,
                   num_sub_rounds=sub_rounds, sampling_rate=rate)
  assert want.depth >= 3 and want.heavy_hitters()  # a non-trivial run
  assert_same_trie(got, want)


def test_poisson_rounds_with_no_user_and_secure_sum():
  pop = POPULATIONS["one"]
  got, want = both(pop, 7, theta=2, batch_size=1, sampling_rate=1e-6,
                   secure_sum=True)
  assert want.levels[0].num_sampled == 0 and not want.heavy_hitters()
  assert_same_trie(got, want)


@pytest.mark.parametrize("name,seed", [("one", 4), ("several", 5)])
def test_secure_sum_gives_the_same_trie(name, seed):
  got, want = both(POPULATIONS[name], seed, theta=3, batch_size=120,
                   num_sub_rounds=2, secure_sum=True)
  assert_same_trie(got, want)


def test_fixed_vote_capacity_gives_the_same_trie_and_is_checked():
  pop = POPULATIONS["one"]
  got, want = both(pop, 6, theta=3, batch_size=150, vote_capacity=16)
  assert_same_trie(got, want)
  with pytest.raises(ValueError, match="more than vote_capacity=1"):
    engine.run(pop, theta=3, batch_size=150, rng=np.random.default_rng(6),
               vote_capacity=1)


def test_paper_worked_example_through_discover():
  pop = paper_example.population()
  kwargs = dict(privacy=triehh.Mechanism(theta=2, batch_size=10,
                                        allow_no_guarantee=True,
                                        schedule=paper_example.SCHEDULE))
  got = triehh.discover(pop, engine="tff", **kwargs)
  want = triehh.discover(pop, engine="fast", **kwargs)
  assert got.engine == "tff" and got.params == want.params
  assert got.heavy_hitters == {"moon": 2, "sun": 2} == want.heavy_hitters
  assert got.frequent_prefixes == {"sta": 2}
  assert got.votes_per_round == [10, 6, 6, 5, 2] == want.votes_per_round
  assert_same_trie(got.trie, want.trie)


def test_discover_with_a_seed_matches_the_fast_engine():
  assert "tff" in triehh.engine_names()
  pop = POPULATIONS["several"]
  kwargs = dict(privacy=triehh.Mechanism(theta=3, batch_size=100,
                                        allow_no_guarantee=True),
                seed=11, max_length=5)
  got = triehh.discover(pop, engine="tff", **kwargs)
  want = triehh.discover(pop, engine="fast", **kwargs)
  assert got.heavy_hitters == want.heavy_hitters
  assert got.votes_per_round == want.votes_per_round
  assert got.num_participants == want.num_participants


small_words = st.text(alphabet="abc", min_size=1, max_size=4)


@settings(max_examples=8, deadline=None, derandomize=True, database=None)
@given(st.one_of(
    st.lists(small_words, min_size=2, max_size=40),
    st.lists(st.dictionaries(small_words, st.integers(1, 4), min_size=1,
                             max_size=3), min_size=2, max_size=30)),
       st.integers(1, 3), st.one_of(st.none(), st.integers(1, 3)),
       st.integers(0, 2**32 - 1))
def test_random_small_populations_match(users, theta, cap, seed):
  pop = population_lib.Population.from_user_words(users, max_length=3,
                                                   alphabet="abc")
  batch_size = max(1, pop.num_users // 2)
  got, want = both(pop, seed, theta=theta, batch_size=batch_size,
                   max_num_prefixes=cap)
  assert_same_trie(got, want)


# ---- several votes per user (max_user_contribution) ---------------------------


def top_words_reference(pop, *, theta, batch_size, seed, contribution):
  """Each sampled user votes with its ``contribution`` most frequent words."""
  rng = np.random.default_rng(seed)
  trie = trie_lib.Trie(pop.alphabet)
  a1 = pop.alphabet.num_extensions
  for depth in range(1, pop.num_levels + 1):
    if trie.frontier.shape[0] == 0:
      break
    users = sampling.sample_users(rng, pop.num_users, batch_size)
    sampling.draw_word_ranks(rng, pop, users)  # drawn (and unused) as well
    position = {tuple(p): i for i, p in enumerate(trie.frontier.tolist())}
    votes = np.zeros(trie.num_candidates, dtype=np.int64)
    for user in users:
      start, stop = pop.user_offsets[user], pop.user_offsets[user + 1]
      order = np.argsort(-pop.entry_count[start:stop], kind="stable")
      for entry in order[:contribution]:
        codes = pop.codes[pop.entry_word[start + entry]].tolist()
        prefix = tuple(codes[:depth - 1])
        if codes[depth - 1] >= 0 and prefix in position:
          votes[position[prefix] * a1 + codes[depth - 1]] += 1
    level, _ = trie.grow(votes, theta, num_sampled=users.size)
    if not level.grew:
      break
  return trie


@pytest.mark.parametrize("contribution", [1, 3])
def test_top_words_mode_matches_its_reference(contribution):
  pop = POPULATIONS["several"]
  got = engine.run(pop, theta=3, batch_size=100, rng=np.random.default_rng(8),
                   max_user_contribution=contribution)
  want = top_words_reference(pop, theta=3, batch_size=100, seed=8,
                             contribution=contribution)
  assert want.depth >= 3
  assert_same_trie(got, want)


def test_per_run_word_choice_gives_the_fast_engines_trie():
  # The word draw and the TFF client draw come from different spawned streams.
  small = POPULATIONS["several"]
  got, want = (triehh.discover(
      small,
      triehh.Mechanism(theta=3, batch_size=100, word_choice="per_run",
                       allow_no_guarantee=True), seed=9, max_length=5,
      engine=name)
               for name in ("tff", "fast"))
  assert want.words and want.trie.depth >= 3
  assert_same_trie(got.trie, want.trie)


def test_several_votes_per_user_need_allow_no_guarantee():
  users = [{"sun": 2, "moon": 1}] * 15000 + [{"star": 1}] * 5000
  pop = population_lib.Population.from_user_words(users)
  with pytest.raises(ValueError, match="Theorem 1 covers one vote per user"):
    triehh.discover(pop, triehh.Target(4), engine="tff",
                    max_user_contribution=2)
  small = POPULATIONS["several"]
  result = triehh.discover(small,
                           triehh.Mechanism(
                               theta=3, batch_size=100, allow_no_guarantee=True),
                           seed=8, max_length=5, engine="tff",
                           max_user_contribution=3)
  assert result.params.epsilon == float("inf")
  assert result.params.guarantee.startswith("no differential privacy "
                                            "guarantee: Theorem 1 needs theta")
  assert "; and max_user_contribution=3 lets a user" in result.params.guarantee


def test_bad_arguments_are_rejected():
  pop = POPULATIONS["one"]
  rng = np.random.default_rng(0)
  with pytest.raises(ValueError, match="theta"):
    engine.run(pop, theta=0, batch_size=10, rng=rng)
  with pytest.raises(ValueError, match="batch size"):
    engine.run(pop, theta=2, batch_size=pop.num_users + 1, rng=rng)
  with pytest.raises(ValueError, match="max_user_contribution"):
    engine.run(pop, theta=2, batch_size=10, rng=rng, max_user_contribution=0)
  with pytest.raises(ValueError, match="invalid TFF worker address"):
    engine.run(pop, theta=2, batch_size=10, rng=rng, workers="localhost")
  with pytest.raises(ValueError, match=r"rpc_timeout \(seconds\) must be a "
                     "positive finite number"):
    engine.run(pop, theta=2, batch_size=10, rng=rng, rpc_timeout=0)
  # The connection keywords are the engine's only others, as in a signature.
  with pytest.raises(TypeError, match="run\\(\\) got an unexpected keyword "
                     "argument 'worker'"):
    engine.run(pop, theta=2, batch_size=10, rng=rng, worker="h:1")


def test_the_connection_options_are_checked_as_one():
  connection = runtime.Connection("h:1, h:2", connect_timeout=2)
  assert connection == runtime.Connection(["h:1", "h:2"], 2.0)
  assert connection.workers == ("h:1", "h:2")
  assert runtime.Connection().workers is None
  with pytest.raises(TypeError, match="workers must be 'host:port,...'"):
    runtime.Connection(5)


# ---- one-word rounds: cell counts, then the clients inside the cells --------


def test_one_word_rounds_draw_the_same_from_the_run_generator():
  pop = POPULATIONS["one"]
  tff_rng, fast_rng = np.random.default_rng(21), np.random.default_rng(21)
  got = engine.run(pop, theta=3, batch_size=150, rng=tff_rng)
  want = fast_engine.run(pop, theta=3, batch_size=150, rng=fast_rng)
  assert_same_trie(got, want)
  # The clients come from a spawned stream: the run's stream is where the
  # fast engine, which stops at the counts, leaves it.
  assert tff_rng.bit_generator.state == fast_rng.bit_generator.state


def test_clients_of_a_round_are_distinct_users_of_its_cells(monkeypatch):
  pop = POPULATIONS["one"]
  seen = []
  count = engine._ProcessVotes.count  # pylint: disable=protected-access

  def spy(self, trie, users, ranks, batches):
    seen.append(users.copy())
    return count(self, trie, users, ranks, batches)

  monkeypatch.setattr(engine._ProcessVotes, "count", spy)  # pylint: disable=protected-access
  trie = engine.run(pop, theta=3, batch_size=150,
                    rng=np.random.default_rng(2), num_sub_rounds=2)
  assert len(seen) == trie.depth
  for users, level in zip(seen, trie.levels):
    assert users.size == 150 == len(set(users.tolist()))
    assert 0 <= users.min() and users.max() < pop.num_users
    assert level.num_sampled == 150


def test_word_frequencies_are_expanded_or_refused(monkeypatch):
  pop = POPULATIONS["one"]
  by_count = population_lib.Population.from_word_frequencies(
      pop.vocabulary, pop.users_per_word, max_length=pop.max_length)
  got, want = both(by_count, 7, theta=3, batch_size=150, num_sub_rounds=2)
  assert want.heavy_hitters()
  assert_same_trie(got, want)
  monkeypatch.setattr(engine, "MAX_EXPANDED_USERS", pop.num_users - 1)
  with pytest.raises(ValueError, match="needs a per-user array.*given by "
                     "word frequencies.*at most 399 users"):
    engine.run(by_count, theta=3, batch_size=150,
               rng=np.random.default_rng(7))
