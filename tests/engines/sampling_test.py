"""Tests of triehh.engines.sampling: its draw contract and its word choice."""

import collections
import itertools

import numpy as np
import pytest
from scipy import stats

from triehh.core import population as population_lib
from triehh.engines import sampling
from triehh.engines import vote_counts

USERS = [{"ab": 3, "b": 1}, {"c": 2}, {"ba": 1, "ab": 1, "c": 5}]


@pytest.fixture(name="several")
def several_fixture():
  return population_lib.Population.from_user_words(USERS)


def word_of(pop, user, rank):
  word = sampling.words_of(pop, np.array([user]), np.array([rank]))
  return str(pop.vocabulary[int(word[0])])


@pytest.mark.parametrize("user", range(len(USERS)))
def test_every_rank_enumerated_gives_each_word_its_count(several, user):
  total = sum(USERS[user].values())
  chosen = collections.Counter(word_of(several, user, r) for r in range(total))
  assert chosen == USERS[user]  # probability c_i(w) / c_i = f_i(w)


def test_ranks_pick_words_in_vocabulary_order(several):
  # Vocabulary order is first appearance: ab, b, c, ba. User 2 holds c (5),
  # ba (1), ab (1): ranks 0 -> ab, 1 -> c .. 5 -> c, 6 -> ba.
  assert list(several.vocabulary) == ["ab", "b", "c", "ba"]
  assert [word_of(several, 2, r) for r in range(7)] == (
      ["ab"] + ["c"] * 5 + ["ba"])


def test_words_of_many_users_at_once(several):
  users = np.array([2, 0, 1, 0])
  ranks = np.array([6, 3, 1, 0])
  words = sampling.words_of(several, users, ranks)
  assert [str(several.vocabulary[w]) for w in words] == ["ba", "b", "c", "ab"]


def test_every_rank_of_users_with_many_words():
  # Users with 1 to 12 words (past words_of's short scan), every rank of
  # each, against the word found by walking the user's own counts.
  rng = np.random.default_rng(5)
  vocab = [f"w{i}" for i in range(15)]
  users = [{vocab[j]: int(rng.integers(1, 4))
            for j in rng.choice(15, size=k, replace=False)}
           for k in (1, 12, 2, 7, 5, 12, 3)]
  pop = population_lib.Population.from_user_words(users)
  expected, user_ids, ranks = [], [], []
  for user, held in enumerate(users):
    order = sorted(held, key=lambda w: list(pop.vocabulary).index(w))
    for word in order:
      for _ in range(held[word]):
        expected.append(word)
    user_ids += [user] * sum(held.values())
    ranks += list(range(sum(held.values())))
  words = sampling.words_of(pop, np.array(user_ids), np.array(ranks))
  assert [str(pop.vocabulary[w]) for w in words] == expected


def test_one_word_users_vote_with_their_word():
  pop = population_lib.Population.from_user_words(["x", "y", "x"])
  words = sampling.words_of(pop, np.array([2, 1]), None)
  assert [str(pop.vocabulary[w]) for w in words] == ["x", "y"]


def test_drawn_words_follow_local_frequencies(several):
  # Chi-square of many draws for the same user against f_i(w).
  rng = np.random.default_rng(11)
  draws = 60_000
  users = np.full(draws, 2)
  words = sampling.words_of(several, users,
                            sampling.draw_word_ranks(rng, several, users))
  names = ["ab", "c", "ba"]
  index = {str(w): i for i, w in enumerate(several.vocabulary)}
  observed = [int(np.sum(words == index[w])) for w in names]
  assert sum(observed) == draws
  expected = [draws * USERS[2][w] / 7 for w in names]
  assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_ranks_are_uniform_below_each_total(several):
  rng = np.random.default_rng(12)
  users = np.array([0, 1, 2] * 20_000)
  ranks = sampling.draw_word_ranks(rng, several, users)
  for user, total in ((0, 4), (1, 2), (2, 7)):
    got = ranks[users == user]
    assert got.min() == 0 and got.max() == total - 1
    observed = np.bincount(got, minlength=total)
    assert stats.chisquare(observed).pvalue > 1e-4


def test_draws_follow_the_documented_calls(several):
  # The contract of the module docstring, call for call.
  rng, mirror = np.random.default_rng(5), np.random.default_rng(5)
  users = sampling.sample_users(rng, several.num_users, 2)
  ranks = sampling.draw_word_ranks(rng, several, users)
  want_users = mirror.choice(3, size=2, replace=False, shuffle=False)
  np.testing.assert_array_equal(users, want_users)
  totals = np.array([[4, 2, 7][u] for u in want_users], dtype=np.int64)
  np.testing.assert_array_equal(ranks, mirror.integers(0, totals))
  assert rng.bit_generator.state == mirror.bit_generator.state


def test_one_word_populations_draw_no_ranks():
  pop = population_lib.Population.from_user_words(["x", "y", "x"])
  rng = np.random.default_rng(3)
  before = rng.bit_generator.state
  assert sampling.draw_word_ranks(rng, pop, np.array([0, 1])) is None
  assert rng.bit_generator.state == before


def test_sampled_users_are_distinct_and_uniform():
  rng = np.random.default_rng(4)
  n, m, rounds = 10, 3, 20_000
  seen = np.zeros(n, dtype=np.int64)
  for _ in range(rounds):
    users = sampling.sample_users(rng, n, m)
    assert len(set(users.tolist())) == m
    seen[users] += 1
  assert stats.chisquare(seen).pvalue > 1e-4  # each user: probability m / n


# ---- users (step 1b of the contract) -----------------------------------------


def _linear_probing(rng, n, m):
  """Biased: a value drawn again takes the next free one (mod n)."""
  taken = set()
  for v in rng.integers(0, n, size=m).tolist():
    while v in taken:
      v = (v + 1) % n
    taken.add(v)
  return np.array(sorted(taken))


def _smallest_free_top_up(rng, n, m):
  """Biased: the distinct draws, topped up with the smallest free values."""
  taken = set(rng.integers(0, n, size=m).tolist())
  taken.update(itertools.islice((v for v in range(n) if v not in taken),
                                m - len(taken)))
  return np.array(sorted(taken))


def _assert_uniform_subsets(sampler, draws: int = 12_000) -> None:
  """Subset, inclusion and pair frequencies of ``sampler`` against exact."""
  rng = np.random.default_rng(21)
  n, m = 7, 4  # 35 subsets; the top-up runs most of the time
  subsets = collections.Counter()
  for _ in range(draws):
    users = sampler(rng, n, m)
    assert users.size == m and len(set(users.tolist())) == m
    subsets[tuple(sorted(users.tolist()))] += 1
  assert set(subsets) <= set(itertools.combinations(range(n), m))

  def within(count: int, p: float) -> bool:  # |z| < 4.5
    return abs(count - draws * p) < 4.5 * (draws * p * (1 - p))**0.5

  for user in range(n):
    inclusion = sum(c for s, c in subsets.items() if user in s)
    assert within(inclusion, m / n), f"inclusion of user {user}"
  for pair in itertools.combinations(range(n), 2):
    both = sum(c for s, c in subsets.items() if set(pair) <= set(s))
    assert within(both, m * (m - 1) / (n * (n - 1))), f"pair {pair}"
  every = [subsets[c] for c in itertools.combinations(range(n), m)]
  # Each subset: probability 1 / C(n, m).
  assert stats.chisquare(every).pvalue > 1e-4, "subset frequencies"


def test_sampled_users_are_a_uniform_subset():
  _assert_uniform_subsets(sampling.sample_users)


@pytest.mark.parametrize("biased,caught_by", [
    (_linear_probing, "pair"),  # every user's inclusion is right
    (_smallest_free_top_up, "inclusion of user"),
])
def test_a_biased_sampler_fails_the_uniformity_check(biased, caught_by):
  with pytest.raises(AssertionError, match=caught_by):
    _assert_uniform_subsets(biased)


@pytest.mark.parametrize("batch_size", [0, 11])
def test_bad_batch_size(batch_size):
  with pytest.raises(ValueError, match=r"must be in \[1, n=10\]"):
    sampling.sample_users(np.random.default_rng(0), 10, batch_size)


def test_schedule_gives_the_rounds_users_then_ends():
  schedule = [np.array([3, 1]), np.array([0])]
  rng = np.random.default_rng(0)
  before = rng.bit_generator.state
  np.testing.assert_array_equal(
      sampling.round_users(rng, 5, 2, schedule, 1), [3, 1])
  np.testing.assert_array_equal(
      sampling.round_users(rng, 5, 2, schedule, 2), [0])
  assert sampling.round_users(rng, 5, 2, schedule, 3) is None
  assert rng.bit_generator.state == before


@pytest.mark.parametrize("batch_size,num_sub_rounds,bounds", [
    (10, 3, [(0, 3), (3, 7), (7, 10)]),
    (4, 4, [(0, 1), (1, 2), (2, 3), (3, 4)]),
    (5, 1, [(0, 5)]),
])
def test_sub_round_slices(batch_size, num_sub_rounds, bounds):
  slices = sampling.sub_round_slices(batch_size, num_sub_rounds)
  assert [(s.start, s.stop) for s in slices] == bounds


def test_too_many_sub_rounds():
  with pytest.raises(ValueError, match="num_sub_rounds must be in"):
    sampling.sub_round_slices(3, 4)


# ---- one-word rounds: cell counts (step 1a of the contract) ---------------

# With L = 2, "abc" is truncated to "ab" with no end symbol. Codes: a 0,
# b 1, c 2, $ 3; vote index = frontier prefix * 4 + symbol.
CELL_WORDS = ["ab", "ab", "b", "ba", "c", "abc"]


def _mirror_cell_counts(rng: np.random.Generator, users: list[int],
                        batch_size: int) -> list[int]:
  """Step 1a's draws, spelled out one user at a time."""
  kept = [int(v) for v in rng.binomial(np.array(users, dtype=np.int64),
                                       batch_size / sum(users))]
  surplus = sum(kept) - batch_size
  if surplus:
    pool = list(kept) if surplus > 0 else [u - k for u, k in zip(users, kept)]
    for rank in rng.choice(sum(pool), size=abs(surplus), replace=False,
                           shuffle=False):
      cell = int(np.searchsorted(np.cumsum(pool), rank, side="right"))
      kept[cell] += -1 if surplus > 0 else 1
  return kept


@pytest.mark.parametrize("depth,frontier,vote_index,users,batch_size", [
    # root -> a (ab, ab, abc), b (b, ba), c (c); no empty word; no remainder.
    (1, [0], [0, 1, 2], [3, 2, 1, 0, 0], 4),
    # a -> b (ab, ab, abc); b -> a (ba), b -> $ (b); no word ends at "a" or
    # "b" without a next symbol; remainder: c.
    (2, [0, 1], [1, 4, 7], [3, 1, 1, 0, 0, 1], 3),
    # ab -> $ (ab, ab); ab with no next symbol (abc); remainder: b, ba, c.
    (3, [0], [3], [2, 1, 3], 5),
])
@pytest.mark.parametrize("seed", range(6))
def test_cell_counts_follow_the_documented_calls(depth, frontier, vote_index,
                                                 users, batch_size, seed):
  pop = population_lib.Population.from_user_words(CELL_WORDS, max_length=2)
  rng, mirror = np.random.default_rng(seed), np.random.default_rng(seed)
  cells, counts = sampling.round_cell_counts(
      rng, vote_counts.tables_of(pop), depth, np.array(frontier), batch_size)
  np.testing.assert_array_equal(cells.vote_index, vote_index)
  np.testing.assert_array_equal(cells.users, users)
  want = _mirror_cell_counts(mirror, users, batch_size)
  np.testing.assert_array_equal(counts, want)
  np.testing.assert_array_equal(
      vote_counts.votes_of(cells, counts)[vote_index], want[:len(vote_index)])
  assert rng.bit_generator.state == mirror.bit_generator.state


def test_cell_counts_drop_and_add_users():
  # Both branches of the exact top-up, and none, occur; the mirror's draws
  # stay in step with the engine's on a billion users (no separate path).
  words = ["a", "b", "ca", "cb"]
  pop = population_lib.Population.from_word_frequencies(
      words, [4 * 10**8, 3 * 10**8, 2 * 10**8, 10**8])
  tables = vote_counts.tables_of(pop)
  seen = set()
  for seed in range(40):
    rng, mirror = np.random.default_rng(seed), np.random.default_rng(seed)
    _, counts = sampling.round_cell_counts(rng, tables, 1, np.array([0]),
                                           12_345)
    probe = np.random.default_rng(seed).binomial(
        [4 * 10**8, 3 * 10**8, 3 * 10**8, 0, 0], 12_345 / 10**9)
    seen.add(int(np.sign(probe.sum() - 12_345)))
    want = _mirror_cell_counts(mirror, [4 * 10**8, 3 * 10**8, 3 * 10**8, 0, 0],
                               12_345)
    np.testing.assert_array_equal(counts, want)
    assert rng.bit_generator.state == mirror.bit_generator.state
  assert seen >= {-1, 1}


def test_cell_counts_check_the_batch_size():
  pop = population_lib.Population.from_user_words(CELL_WORDS)
  with pytest.raises(ValueError, match=r"batch size 7 must be in \[1, n=6\]"):
    sampling.round_cell_counts(np.random.default_rng(0),
                               vote_counts.tables_of(pop), 1, np.array([0]), 7)


@pytest.mark.parametrize("users,schedule,expected", [
    (["a", "b"], None, True), (["a", "b"], [np.array([0])], False),
    ([{"a": 1}, "b"], None, False)])
def test_which_rounds_draw_cell_counts(users, schedule, expected):
  pop = population_lib.Population.from_user_words(users)
  assert sampling.draws_cell_counts(pop, schedule) is expected


@pytest.mark.parametrize("rate", [1e-9, 0.02, 0.5, 0.7, 1.0])
def test_an_empty_cell_draws_nothing_from_the_generator(rate):
  # numpy's binomial returns 0 for n = 0 without drawing: one call over all
  # cells is the call over the occupied cells, values and stream alike.
  for seed in range(30):
    shape = np.random.default_rng([seed, 1])
    users = shape.integers(0, 60, size=shape.integers(1, 50))
    users[shape.random(users.size) < 0.5] = 0
    users[shape.random(users.size) < 0.1] = 10**12
    full, occupied = np.random.default_rng(seed), np.random.default_rng(seed)
    counts = full.binomial(users, rate)
    assert not counts[users == 0].any()
    np.testing.assert_array_equal(counts[users > 0],
                                  occupied.binomial(users[users > 0], rate))
    assert full.bit_generator.state == occupied.bit_generator.state


@pytest.mark.parametrize("rate", [None, 0.3])
@pytest.mark.parametrize("seed", range(4))
def test_leaner_round_counts_are_those_of_round_cell_counts(rate, seed):
  # Every round of a run: the same cells, counts and stream.
  # Truncated words ("abcd", "bbbb" at L = 3) end in no-symbol cells.
  words = np.random.default_rng(seed).choice(
      ["a", "ab", "abc", "abd", "abcd", "b", "ba", "bab", "bbbb", "c", "cc",
       "ccc"], 400)
  pop = population_lib.Population.from_user_words(list(words), max_length=3)
  tables = vote_counts.count_tables(pop)
  rng, lean = np.random.default_rng(seed), np.random.default_rng(seed)
  frontier = np.zeros(1, dtype=np.int64)
  for depth in range(1, pop.num_levels + 1):
    cells, counts = sampling.round_cell_counts(
        rng, vote_counts.tables_of(pop), depth, frontier, 60, rate)
    children, bounds, lean_counts = sampling.draw_round_counts(
        lean, tables, depth, frontier, 60, rate)
    np.testing.assert_array_equal(lean_counts, counts)
    np.testing.assert_array_equal(children, cells.child_ids)
    parents = np.searchsorted(bounds, np.arange(children.size), "right")
    np.testing.assert_array_equal(
        parents, cells.vote_index // pop.alphabet.num_extensions)
    assert rng.bit_generator.state == lean.bit_generator.state
    ends = tables.levels[depth - 1].ends[children]
    frontier = children[(counts[:children.size] >= 8) & ~ends]
    if not frontier.size:
      break
  assert depth == pop.num_levels
