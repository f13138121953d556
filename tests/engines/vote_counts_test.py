"""Tests of count-level sampling: the same distribution as sampling users."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from triehh.core import population as population_lib
from triehh.core import trie as trie_lib
from triehh.data import synthetic
from triehh.engines import fast as fast_engine
from triehh.engines import rounds
from triehh.engines import vote_counts

# A tiny population: 8 users in 4 cells, small enough to enumerate every
# 4-subset (70 of them).
TINY_CELLS = np.array([3, 1, 0, 4])
TINY_BATCH = 4


def _exact_count_pmf(cell_users: np.ndarray, m: int) -> dict[tuple, float]:
  """Count vector -> probability, by enumerating every m-subset of users."""
  cell_of = np.repeat(np.arange(cell_users.size), cell_users)
  subsets = list(itertools.combinations(range(cell_of.size), m))
  pmf = {}
  for subset in subsets:
    key = tuple(np.bincount(cell_of[list(subset)], minlength=cell_users.size))
    pmf[key] = pmf.get(key, 0.0) + 1.0 / len(subsets)
  return pmf


def _chi_square_p(observed: dict, expected_pmf: dict, draws: int) -> float:
  """Goodness-of-fit p-value; an outcome the pmf rules out gives 0."""
  if set(observed) - set(expected_pmf):
    return 0.0
  keys = sorted(expected_pmf)
  obs = np.array([observed.get(k, 0) for k in keys], dtype=float)
  exp = np.array([expected_pmf[k] * draws for k in keys])
  return float(stats.chisquare(obs, exp).pvalue)


def _histogram(rows: np.ndarray) -> dict[tuple, int]:
  keys, counts = np.unique(rows, axis=0, return_counts=True)
  return {tuple(int(v) for v in k): int(c) for k, c in zip(keys, counts)}


@pytest.mark.parametrize("batch_size", [1, 2, 4, 6, 7])
def test_counts_follow_the_enumerated_distribution(batch_size):
  rng = np.random.default_rng(0)
  draws = 8_000
  rows = np.array([vote_counts.sample_cell_counts(TINY_CELLS, batch_size, rng)
                   for _ in range(draws)])
  assert np.all(rows.sum(axis=1) == batch_size)
  pmf = _exact_count_pmf(TINY_CELLS, batch_size)
  assert _chi_square_p(_histogram(rows), pmf, draws) > 1e-3


def test_counts_with_replacement_fail_the_enumeration_check():
  # The check above can fail: multinomial counts (users drawn with
  # replacement) have the right means but not the right distribution.
  rng = np.random.default_rng(0)
  draws = 8_000
  rows = rng.multinomial(TINY_BATCH, TINY_CELLS / TINY_CELLS.sum(), size=draws)
  pmf = _exact_count_pmf(TINY_CELLS, TINY_BATCH)
  assert _chi_square_p(_histogram(rows), pmf, draws) < 1e-6


def test_two_stage_sample_is_a_uniform_subset_of_users():
  # Tiny one-word population: every one of the C(8, 4) = 70 subsets of users
  # must come out equally often.
  pop = population_lib.Population.from_user_words(
      ["ab", "b", "ab", "ba", "a", "ab", "ba", "bb"], max_length=3)
  tables = vote_counts.prefix_users(pop)
  by_position = vote_counts.users_by_position(pop)
  cells = vote_counts.round_cells(tables, 2, np.array([0, 1]))  # "a", "b"
  counts_rng = np.random.default_rng(3)
  member_rng = counts_rng.spawn(1)[0]
  seen = {}
  draws = 3_500  # 50 expected per subset
  for _ in range(draws):
    counts = vote_counts.sample_cell_counts(cells.users, 4, counts_rng)
    users = by_position[vote_counts.sample_members(cells, counts, member_rng)]
    assert users.size == 4 and np.unique(users).size == 4
    key = tuple(sorted(users.tolist()))
    seen[key] = seen.get(key, 0) + 1
  uniform = {s: 1 / 70 for s in itertools.combinations(range(8), 4)}
  assert _chi_square_p(seen, uniform, draws) > 1e-3
  inclusion = np.zeros(8)
  for subset, times in seen.items():
    inclusion[list(subset)] += times / draws
  np.testing.assert_allclose(inclusion, 0.5, atol=0.03)


# ---- a realistic population ----------------------------------------------


@pytest.fixture(scope="module")
def zipf_population() -> population_lib.Population:
  return synthetic.english_population(100_000, seed=0, distribution="zipf",
                                      exponent=1.0)


def _run(pop, tables, theta, round_counts):
  """A run whose rounds count ``round_counts(cells)`` users per cell.

  Returns the trie and the (depth, frontier ids) of every round.
  """
  trie = trie_lib.Trie(pop.alphabet)
  frontier = np.zeros(1, dtype=np.int64)
  rounds = []
  for depth in range(1, pop.num_levels + 1):
    if frontier.size == 0:
      break
    rounds.append((depth, frontier))
    cells = vote_counts.round_cells(tables, depth, frontier)
    votes = vote_counts.votes_of(cells, round_counts(cells))
    level, kept = trie.grow(votes, theta)
    if not level.grew:
      break
    # The kept cells' prefix ids (the round loop's cells.child_ids[at]).
    frontier = cells.child_ids[np.searchsorted(cells.vote_index, kept)]
    # The ids are those of the trie's new frontier prefixes.
    ids = pop.prefix_ids[depth]
    word_of_id = np.zeros(pop.num_prefixes[depth], dtype=np.int64)
    word_of_id[ids[ids >= 0]] = np.flatnonzero(ids >= 0)
    np.testing.assert_array_equal(pop.codes[word_of_id[frontier], :depth],
                                  level.prefixes)
  return trie, rounds


def _frontiers(pop, tables, theta=40):
  """(depth, frontier ids) of the rounds of a run that sees every user."""
  return _run(pop, tables, theta, lambda cells: cells.users)[1]


def test_cells_count_every_user_as_the_user_level_layout(zipf_population):
  pop = zipf_population
  tables = vote_counts.prefix_users(pop)
  by_position = vote_counts.users_by_position(pop)
  a1 = pop.alphabet.num_extensions
  codes = pop.codes[pop.user_word]
  rounds = _frontiers(pop, tables)
  assert len(rounds) >= 4
  for depth, frontier in rounds:
    k = frontier.size
    cells = vote_counts.round_cells(tables, depth, frontier)
    # Users' cells computed from their own words.
    row = np.full(pop.num_users, k)
    on = np.isin(pop.prefix_ids[depth - 1][pop.user_word], frontier)
    row[on] = np.searchsorted(frontier,
                              pop.prefix_ids[depth - 1][pop.user_word][on])
    col = np.where(codes[:, depth - 1] >= 0, codes[:, depth - 1], a1)
    full = np.bincount(row * (a1 + 1) + col,
                       minlength=(k + 1) * (a1 + 1)).reshape(k + 1, a1 + 1)
    c = cells.vote_index.size
    np.testing.assert_array_equal(vote_counts.votes_of(cells, cells.users),
                                  full[:k, :a1].ravel())
    np.testing.assert_array_equal(cells.users[c:c + k], full[:k, a1])
    assert cells.users[-1] == full[k].sum()
    # The members drawn for given counts fall in those cells.
    rng = np.random.default_rng(depth)
    counts = vote_counts.sample_cell_counts(cells.users, 5_000, rng)
    users = by_position[vote_counts.sample_members(cells, counts, rng)]
    assert np.unique(users).size == 5_000
    got = np.bincount(row[users] * (a1 + 1) + col[users],
                      minlength=(k + 1) * (a1 + 1)).reshape(k + 1, a1 + 1)
    np.testing.assert_array_equal(got[:k, :a1].ravel(),
                                  vote_counts.votes_of(cells, counts))
    np.testing.assert_array_equal(got[:k, a1], counts[c:c + k])
    assert got[k].sum() == counts[-1]


def test_votes_match_user_level_sampling_over_many_seeds(zipf_population):
  pop = zipf_population
  tables = vote_counts.prefix_users(pop)
  depth, frontier = _frontiers(pop, tables)[1]  # the second round
  cells = vote_counts.round_cells(tables, depth, frontier)
  n, m, seeds = pop.num_users, 10_000, 3_000
  cell_of_user = np.repeat(np.arange(cells.users.size), cells.users)
  by_position = vote_counts.users_by_position(pop)
  cell_of_user = cell_of_user[np.argsort(by_position)]  # user -> its cell
  counted = np.array([vote_counts.sample_cell_counts(
      cells.users, m, np.random.default_rng(s)) for s in range(seeds)])
  user_level = np.array([np.bincount(
      cell_of_user[np.random.default_rng(10**6 + s).choice(
          n, m, replace=False, shuffle=False)],
      minlength=cells.users.size) for s in range(seeds)])
  big = np.flatnonzero(cells.users >= 200)
  assert big.size >= 20
  for cell in big:
    assert stats.ks_2samp(counted[:, cell], user_level[:, cell]).pvalue > 1e-4
  # Exact hypergeometric moments (the user-level sampler meets them too).
  p = cells.users[big] / n
  mean = m * p
  var = m * p * (1 - p) * (n - m) / (n - 1)
  for sample in (counted, user_level):
    z = (sample[:, big].mean(axis=0) - mean) / np.sqrt(var / seeds)
    assert np.abs(z).max() < 4.5
    ratio = sample[:, big].var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) < 4 * math.sqrt(2 / seeds))
  # Negative correlation of the two largest cells, -sqrt(p1 p2/(q1 q2)).
  top = big[np.argsort(cells.users[big])[-2:]]
  q = cells.users[top] / n
  want = -math.sqrt(q[0] * q[1] / ((1 - q[0]) * (1 - q[1])))
  got = np.corrcoef(counted[:, top[0]], counted[:, top[1]])[0, 1]
  assert abs(got - want) < 4 / math.sqrt(seeds)


def test_runs_discover_what_user_level_runs_discover():
  pop = synthetic.english_population(20_000, seed=1, distribution="zipf",
                                     exponent=1.0)
  tables = vote_counts.prefix_users(pop)
  theta, m, seeds = 10, 2_000, 300
  counted, user_level = [], []
  for seed in range(seeds):
    rng = np.random.default_rng(seed)
    trie, _ = _run(pop, tables, theta, lambda cells: (
        vote_counts.sample_cell_counts(cells.users, m, rng)))
    counted.append(set(trie.heavy_hitters()))
    user_level.append(set(fast_engine.run(
        pop, theta=theta, batch_size=m,
        rng=np.random.default_rng(10**6 + seed)).heavy_hitters()))
  sizes = [np.array([len(found) for found in runs])
           for runs in (counted, user_level)]
  assert stats.ks_2samp(*sizes).pvalue > 1e-3
  words = set().union(*counted, *user_level)
  freq = np.array([[sum(w in found for found in runs) / seeds
                    for w in sorted(words)] for runs in (counted, user_level)])
  pooled = freq.mean(axis=0)
  uncertain = (pooled > 0.05) & (pooled < 0.95)
  assert uncertain.sum() >= 5  # words found in some runs only
  z = (freq[0] - freq[1])[uncertain] / np.sqrt(
      2 * pooled[uncertain] * (1 - pooled[uncertain]) / seeds)
  assert np.abs(z).max() < 4


@pytest.mark.parametrize("m", [6_000, 60, 19_900])
def test_counts_match_numpy_multivariate_hypergeometric(m):
  # numpy's sampler (one univariate draw per cell) is an independent exact
  # reference; n = 20,000 over 30 cells, m from few users to nearly all.
  cell_users = np.random.default_rng(0).multinomial(
      20_000, np.linspace(1, 3, 30) / np.linspace(1, 3, 30).sum())
  seeds = 2_000
  numpy_draws = np.random.default_rng(1).multivariate_hypergeometric(
      cell_users, m, size=seeds, method="marginals")
  drawn = np.array([vote_counts.sample_cell_counts(
      cell_users, m, np.random.default_rng(10**6 + s)) for s in range(seeds)])
  assert np.all(drawn.sum(axis=1) == m)
  assert np.all((drawn >= 0) & (drawn <= cell_users))
  for cell in range(cell_users.size):
    assert stats.ks_2samp(numpy_draws[:, cell], drawn[:, cell]).pvalue > 1e-4
  n = cell_users.sum()
  p = cell_users / n
  var = m * p * (1 - p) * (n - m) / (n - 1)
  ratio = drawn.var(axis=0, ddof=1) / var
  assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(2 / seeds))


def test_counts_with_replacement_fail_the_moment_check():
  # The variance check above can fail: multinomial counts (users drawn with
  # replacement) miss the finite-population factor (n - m) / (n - 1) = 0.7.
  cell_users = np.full(30, 20_000 // 30)
  n, m, seeds = cell_users.sum(), 6_000, 2_000
  rows = np.random.default_rng(0).multinomial(m, cell_users / n, size=seeds)
  p = cell_users / n
  var = m * p * (1 - p) * (n - m) / (n - 1)
  ratio = rows.var(axis=0, ddof=1) / var
  assert np.all(np.abs(ratio - 1) >= 5 * math.sqrt(2 / seeds))


@pytest.mark.parametrize("batch_size", [10**6, 12 * 10**9, 10**12 - 3 * 10**9])
def test_a_trillion_users(batch_size):
  n = 10**12
  cell_users = np.array([n // 2, n // 4, n // 8, n // 16, 3, 0])
  cell_users[-2] += n - cell_users.sum()
  seeds = 100
  rng = np.random.default_rng(5)
  rows = np.array([vote_counts.sample_cell_counts(cell_users, batch_size, rng)
                   for _ in range(seeds)])
  assert np.all(rows.sum(axis=1) == batch_size)
  assert np.all((rows >= 0) & (rows <= cell_users))
  p = cell_users[:4] / n
  var = batch_size * p * (1 - p) * (n - batch_size) / (n - 1)
  z = (rows[:, :4].mean(axis=0) - batch_size * p) / np.sqrt(var / seeds)
  assert np.abs(z).max() < 4.5


def test_explicit_users_per_word_describe_the_same_population():
  pop = population_lib.Population.from_user_words(
      ["sun", "star", "sun", "moon", "sun", "star"], max_length=4)
  counted = vote_counts.prefix_users(pop)
  given = vote_counts.prefix_users(
      pop, users_per_word=np.bincount(pop.user_word) * 10**6)
  assert given.num_users == 6 * 10**6
  for a, b in zip(counted.users, given.users):
    np.testing.assert_array_equal(a * 10**6, b)
  assert counted.users[1].tolist() == [1, 5]  # "m", "s"
  assert counted.users[2].tolist() == [1, 2, 3]  # "mo", "st", "su"
  assert counted.first[2].tolist() == [0, 1, 3]


def test_bad_input_is_named():
  rng = np.random.default_rng(0)
  with pytest.raises(ValueError, match="batch_size"):
    vote_counts.sample_cell_counts(np.array([3, 4]), 8, rng)
  with pytest.raises(ValueError, match="negative"):
    vote_counts.sample_cell_counts(np.array([3, -1]), 1, rng)
  with pytest.raises(TypeError, match="integers"):
    vote_counts.sample_cell_counts(np.array([3.0, 1.0]), 1, rng)
  several = population_lib.Population.from_user_words([{"a": 1, "b": 2}])
  with pytest.raises(ValueError, match="one-word"):
    vote_counts.prefix_users(several)
  pop = population_lib.Population.from_user_words(["a", "b"])
  with pytest.raises(ValueError, match="one count per word"):
    vote_counts.prefix_users(pop, users_per_word=np.array([1, 2, 3]))
  cells = vote_counts.round_cells(vote_counts.prefix_users(pop), 1, [0])
  with pytest.raises(ValueError, match="between 0 and its users"):
    vote_counts.sample_members(cells, cells.users + 1, rng)
  with pytest.raises(ValueError, match="depth"):
    vote_counts.round_cells(vote_counts.prefix_users(pop), 0, [0])


# ---- the count rounds' shorter path: the rounds of the general one --------


class _CellCounts:
  """Votes = drawn cell counts, through the general round of rounds.run."""

  def count(self, trie, users, ranks, batches):
    raise NotImplementedError

  def count_cells(self, trie, cells, counts, batches):
    del trie, batches
    return counts[:cells.vote_index.size]

  def grown(self, trie, level, kept):
    del trie, level, kept


def _assert_same_runs(pop, seed, **options):
  """The shorter path's trie and generator state are the general path's."""
  rngs = [np.random.default_rng(seed) for _ in range(2)]
  tries = [rounds.run(pop, counter, rng=rng, **options) for counter, rng in
           zip((rounds.CountVotes(), _CellCounts()), rngs)]
  assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
  assert tries[0].depth == tries[1].depth
  for short, general in zip(tries[0].levels, tries[1].levels):
    for field in dataclasses.fields(trie_lib.TrieLevel):
      a, b = getattr(short, field.name), getattr(general, field.name)
      if isinstance(b, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, field.name
      np.testing.assert_array_equal(a, b, err_msg=field.name)
  return tries[0]


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(words=st.lists(st.text("abc", min_size=1, max_size=5), min_size=1,
                      max_size=80),
       max_length=st.integers(1, 4), theta=st.integers(1, 4),
       fraction=st.floats(0.01, 1.0), poisson=st.booleans(),
       by_counts=st.booleans(), cap=st.sampled_from([None, 1, 3]),
       seed=st.integers(0, 2**32 - 1))
def test_count_rounds_are_the_general_rounds(words, max_length, theta,
                                             fraction, poisson, by_counts,
                                             cap, seed):
  pop = population_lib.Population.from_user_words(words, max_length=max_length)
  if by_counts:  # the same users, given per word, a million times over
    pop = population_lib.Population.from_word_frequencies(
        pop.vocabulary, pop.users_per_word * 10**6, max_length=max_length)
  batch_size = max(1, round(fraction * pop.num_users))
  _assert_same_runs(pop, seed, theta=theta, batch_size=batch_size,
                    max_num_prefixes=cap,
                    sampling_rate=fraction if poisson else None)


def test_count_rounds_are_the_general_rounds_on_english_words(
    zipf_population):
  found = 0
  for seed in range(20):
    trie = _assert_same_runs(zipf_population, seed, theta=15,
                             batch_size=2_000)
    found += len(trie.heavy_hitters())
    _assert_same_runs(zipf_population, seed, theta=15, batch_size=1,
                      sampling_rate=0.02)
  _assert_same_runs(zipf_population, 0, theta=15, batch_size=2_000,
                    max_num_prefixes=20)
  assert found > 20 * 10  # deep runs, with many finished words
