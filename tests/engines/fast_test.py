"""Tests of the fast engine: the paper's example, properties, Proposition 2."""

import gc
import hashlib
import weakref

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from triehh.core import population as population_lib
from triehh.data import synthetic
from triehh.engines import fast as fast_engine
from triehh.engines import vote_counts
from triehh.theory import utility
import triehh
from tests import paper_example
from tests import reference

def test_paper_worked_example_gives_the_trie_of_section_3():
  result = triehh.discover(paper_example.population(),
                           triehh.Mechanism(
                               theta=2, batch_size=10, allow_no_guarantee=True,
                               schedule=paper_example.SCHEDULE))
  trie = result.trie
  assert trie.prefixes(1) == ["m", "s"]
  assert trie.prefixes(2) == ["mo", "st", "su"]
  assert trie.prefixes(3) == ["moo", "sta", "sun"]
  assert trie.prefixes(4) == ["moon"]
  assert "sun$" in trie and "star" not in trie and "sta" in trie
  assert trie.prefixes(5) == []
  assert "moon$" in trie
  assert result.heavy_hitters == {"moon": 2, "sun": 2}
  assert result.frequent_prefixes == {"sta": 2}
  # After round 5 every discovered prefix is terminated, so the sixth round
  # of the paper's figure, which cannot add anything, is not run.
  assert result.rounds == 5
  assert result.votes_per_round == [10, 6, 6, 5, 2]


# ---- properties against the naive reference ------------------------------

small_words = st.text(alphabet="abc", min_size=1, max_size=5)
single_users = st.lists(small_words, min_size=1, max_size=60)
multi_users = st.lists(
    st.dictionaries(small_words, st.integers(1, 4), min_size=1, max_size=3),
    min_size=1, max_size=40)


@st.composite
def runs(draw, users_strategy):
  users = draw(users_strategy)
  pop = population_lib.Population.from_user_words(
      users, max_length=draw(st.integers(1, 4)))
  n = pop.num_users
  return dict(pop=pop, theta=draw(st.integers(1, 4)),
              batch_size=draw(st.integers(1, n)),
              max_num_prefixes=draw(st.one_of(st.none(), st.integers(1, 3))),
              seed=draw(st.integers(0, 2**32 - 1)))


def _run(args, **extra):
  return fast_engine.run(
      args["pop"], theta=args["theta"], batch_size=args["batch_size"],
      max_num_prefixes=args["max_num_prefixes"],
      rng=np.random.default_rng(args["seed"]), **extra)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(runs(st.one_of(single_users, multi_users)))
def test_engine_equals_the_naive_reference(args):
  trie = _run(args)
  levels, hitters = reference.run(
      args["pop"], theta=args["theta"], batch_size=args["batch_size"],
      max_num_prefixes=args["max_num_prefixes"],
      rng=np.random.default_rng(args["seed"]))
  assert reference.trie_levels(trie) == levels
  assert trie.heavy_hitters() == hitters


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(runs(st.one_of(single_users, multi_users)),
       st.sampled_from([0.05, 0.3, 0.7, 1.0]))
def test_poisson_sampling_equals_the_naive_reference(args, rate):
  trie = _run(args, sampling_rate=rate)
  levels, hitters = reference.run(
      args["pop"], theta=args["theta"], batch_size=args["batch_size"],
      max_num_prefixes=args["max_num_prefixes"],
      rng=np.random.default_rng(args["seed"]), sampling_rate=rate)
  assert reference.trie_levels(trie) == levels
  assert trie.heavy_hitters() == hitters


@pytest.mark.parametrize("single", [True, False])
def test_poisson_rounds_sample_each_user_with_the_rate(single):
  # A round's sampled users: Binomial(n, q) in total, whatever the level
  # (count level for one word, user level for several words).
  words = ([f"w{i % 7}" for i in range(500)] if single else
           [{f"w{i % 7}": 1, "x": 1} for i in range(500)])
  pop = population_lib.Population.from_user_words(words, max_length=3)
  sampled = []
  for seed in range(300):
    trie = fast_engine.run(pop, theta=1, batch_size=1, sampling_rate=0.1,
                           rng=np.random.default_rng(seed))
    sampled.append(trie.levels[0].num_sampled)
  sampled = np.array(sampled)
  # Mean 50, variance 45: a fixed batch or a wrong rate fails.
  assert abs(sampled.mean() - 50) < 4 * np.sqrt(45 / 300)
  assert 30 < sampled.var() < 65


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(runs(st.one_of(single_users, multi_users)))
def test_every_prefix_passed_the_threshold_and_has_its_parent(args):
  trie = _run(args)
  for depth, level in enumerate(reference.trie_levels(trie), start=1):
    for prefix, votes in level.items():
      assert votes >= args["theta"]
      assert len(prefix) == depth
      assert prefix[:-1] in trie
    if args["max_num_prefixes"] is not None:
      end = args["pop"].alphabet.end_symbol
      unfinished = [p for p in level if not p.endswith(end)]
      assert len(unfinished) <= args["max_num_prefixes"]


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(single_users, st.integers(1, 5), st.integers(0, 1000))
def test_full_sample_and_threshold_one_discovers_every_short_word(
    words, max_length, seed):
  pop = population_lib.Population.from_user_words(words, max_length=max_length)
  trie = fast_engine.run(pop, theta=1, batch_size=pop.num_users,
                         rng=np.random.default_rng(seed))
  expected = {w for w in words if len(w) <= max_length}
  assert set(trie.heavy_hitters()) == expected
  counts = {w: words.count(w) for w in expected}
  assert trie.heavy_hitters() == counts


@settings(max_examples=50, deadline=None, derandomize=True, database=None)
@given(runs(st.one_of(single_users, multi_users)), st.integers(2, 4))
def test_same_seed_same_result_and_sub_rounds_change_nothing(args, sub_rounds):
  first, second = _run(args), _run(args)
  assert reference.trie_levels(first) == reference.trie_levels(second)
  for a, b in zip(first.levels, second.levels):
    np.testing.assert_array_equal(a.prefixes, b.prefixes)
  if args["batch_size"] >= sub_rounds:
    split = _run(args, num_sub_rounds=sub_rounds)
    assert reference.trie_levels(split) == reference.trie_levels(first)


@pytest.mark.parametrize("users,tables", [
    (["ab", "b", "ab"] * 20, vote_counts.tables_of),
    ([{"ab": 2}, "b", {"ab": 1, "b": 1}] * 20,
     fast_engine._level_tables),  # pylint: disable=protected-access
], ids=["one_word", "several_words"])
def test_population_is_freed_after_a_run(users, tables):
  pop = population_lib.Population.from_user_words(users)
  result = triehh.discover(pop,
                           triehh.Mechanism(
                               theta=2, batch_size=30, allow_no_guarantee=True),
                           seed=0)
  assert result.heavy_hitters  # the run used the cached tables
  cache = tables.cache
  assert pop in cache
  gc.collect()  # the garbage of earlier tests first, so that only pop goes
  cached = len(cache)
  ref = weakref.ref(pop)
  del pop, result
  gc.collect()
  assert ref() is None
  assert len(cache) == cached - 1  # its tables went with it


def test_different_seeds_differ():
  pop = synthetic.english_population(20000, seed=3)
  a = triehh.discover(pop,
                      triehh.Mechanism(
                          theta=4, batch_size=3000, allow_no_guarantee=True,
                          allow_delta_above_1_over_n=True),
                      seed=1)
  b = triehh.discover(pop,
                      triehh.Mechanism(
                          theta=4, batch_size=3000, allow_no_guarantee=True,
                          allow_delta_above_1_over_n=True),
                      seed=2)
  assert a.heavy_hitters != b.heavy_hitters


# ---- Monte Carlo agreement with Proposition 2 ----------------------------


@pytest.mark.parametrize("n,holders,batch,theta", [
    (400, 40, 100, 8), (1000, 30, 200, 5), (2500, 100, 300, 10)])
def test_discovery_rate_matches_proposition_2(n, holders, batch, theta):
  # "xyz" shares no prefix with the other users' word "q".
  pop = population_lib.Population.from_user_words(
      ["xyz"] * holders + ["q"] * (n - holders))
  runs_ = 3000
  found = 0
  for seed in range(runs_):
    trie = fast_engine.run(pop, theta=theta, batch_size=batch,
                           rng=np.random.default_rng(seed))
    found += "xyz" in trie.heavy_hitters()
  expected = utility.discovery_rate(holders, n, batch, theta, num_levels=4)
  assert 0.05 < expected < 0.95  # the check is informative
  # Two-sided binomial test at level 1e-4: fails only if the rate is wrong.
  p_value = stats.binomtest(found, runs_, expected).pvalue
  assert p_value > 1e-4, (found / runs_, expected)


# ---- count-level rounds: the distribution of user-level sampling ----------

# One-word users: "ab" 60, "ac" 45, "b" 50, "ba" 30, "abcd" 15 (truncated at
# L = 3), "c" 200. A batch of 80 of n = 400.
DIST_WORDS = {"ab": 60, "ac": 45, "b": 50, "ba": 30, "abcd": 15, "c": 200}
DIST_POP = population_lib.Population.from_user_words(
    [w for w, c in DIST_WORDS.items() for _ in range(c)], max_length=3)
DIST_BATCH, DIST_THETA, DIST_RUNS = 80, 9, 3000


def _user_level_run(pop, seed, batch_size, theta):
  """The same run with users sampled one by one (as a fixed schedule)."""
  rng = np.random.default_rng([seed, 1])
  schedule = [rng.choice(pop.num_users, size=batch_size, replace=False)
              for _ in range(pop.num_levels)]
  return fast_engine.run(pop, theta=theta, batch_size=batch_size,
                         rng=np.random.default_rng(seed), schedule=schedule)


def _count_level_run(pop, seed, batch_size, theta):
  return fast_engine.run(pop, theta=theta, batch_size=batch_size,
                         rng=np.random.default_rng(seed))


@pytest.fixture(name="both_levels", scope="module")
def both_levels_fixture():
  return [[run(DIST_POP, seed, DIST_BATCH, DIST_THETA) for seed in
           range(DIST_RUNS)] for run in (_count_level_run, _user_level_run)]


def test_first_round_votes_are_hypergeometric(both_levels):
  # Each first-round cell's votes against the exact law: Hypergeom(n, K, m).
  counted, _ = both_levels
  n = DIST_POP.num_users
  for symbol, holders in (("a", 120), ("b", 80), ("c", 200)):
    votes = np.array([reference.trie_levels(t)[0].get(symbol, 0)
                      if t.depth else 0 for t in counted])
    # Votes below theta are not recorded: compare from theta up, pooled
    # below it (the probability of a vote count under theta, same law).
    law = stats.hypergeom(n, holders, DIST_BATCH)
    edges = np.arange(max(DIST_THETA, int(law.ppf(1e-3))),
                      int(law.ppf(1 - 1e-3)) + 1)
    observed = [np.sum(votes < edges[0])] + [np.sum(votes == k)
                                             for k in edges[:-1]]
    observed.append(np.sum(votes >= edges[-1]))
    expected = [law.cdf(edges[0] - 1)] + [law.pmf(k) for k in edges[:-1]]
    expected.append(law.sf(edges[-1] - 1))
    expected = np.array(expected) * DIST_RUNS
    assert stats.chisquare(observed, expected).pvalue > 1e-4, symbol


def test_recorded_votes_match_the_user_level_sampler(both_levels):
  # Every (depth, prefix) cell's recorded votes, two-sample KS.
  levels = [[reference.trie_levels(t) for t in runs] for runs in both_levels]
  cells = {(d, p) for runs in levels for t in runs
           for d, lv in enumerate(t) for p in lv}
  tested = 0
  for depth, prefix in sorted(cells):
    samples = [[t[depth][prefix] for t in runs
                if len(t) > depth and prefix in t[depth]] for runs in levels]
    if min(len(s) for s in samples) < 200:
      continue
    tested += 1
    assert stats.ks_2samp(*samples).pvalue > 1e-4, (depth, prefix)
    # How often the cell passes the threshold: a 2x2 homogeneity test.
    table = np.array([[len(s), DIST_RUNS - len(s)] for s in samples])
    if table.min() > 0:
      assert stats.chi2_contingency(table).pvalue > 1e-4, (depth, prefix)
  assert tested >= 6


def test_discovered_sets_match_the_user_level_sampler(both_levels):
  found = [[frozenset(t.heavy_hitters()) for t in runs] for runs in both_levels]
  kinds = sorted(set(found[0]) | set(found[1]), key=sorted)
  table = np.array([[runs.count(k) for k in kinds] for runs in found])
  common = table.sum(axis=0) >= 20  # pool the rare sets into one column
  table = np.column_stack([table[:, common], table[:, ~common].sum(axis=1)])
  assert common.sum() >= 4  # several outcomes: the test is informative
  assert stats.chi2_contingency(table).pvalue > 1e-4
  mean_found = [np.mean([len(s) for s in runs]) for runs in found]
  assert abs(mean_found[0] - mean_found[1]) < 0.1 * mean_found[1]


def test_word_frequencies_give_the_trie_of_the_user_array():
  by_user = synthetic.english_population(20000, seed=3)
  by_count = population_lib.Population.from_word_frequencies(
      by_user.vocabulary[::-1], by_user.users_per_word[::-1])
  for seed in range(5):
    a = fast_engine.run(by_user, theta=4, batch_size=3000,
                        rng=np.random.default_rng(seed))
    b = fast_engine.run(by_count, theta=4, batch_size=3000,
                        rng=np.random.default_rng(seed))
    assert a.heavy_hitters() and a.to_dict() == b.to_dict()


def test_a_trillion_users_from_word_frequencies():
  # Above numpy's 10^9 limit the cell counts are drawn by exact thinning.
  pop = population_lib.Population.from_word_frequencies(
      ["the", "then", "cat", "dog", "zebra"],
      [4 * 10**11, 10**11, 3 * 10**11, 2 * 10**11 - 100, 100])
  result = triehh.discover(pop, triehh.Target(4.0, sampling="fixed"), seed=0)
  assert result.params.n == 10**12
  assert set(result.heavy_hitters) == {"the", "then", "cat", "dog"}
  assert result.sampled_per_round == [result.params.batch_size] * result.rounds
  votes = sum(result.heavy_hitters.values())
  assert abs(votes - result.params.batch_size) < 5 * result.params.batch_size**0.5
  # Poisson sampling: each round samples Binomial(n, q) users.
  result = triehh.discover(pop, triehh.Target(4.0), seed=0)
  rate = result.params.sampling_rate
  assert set(result.heavy_hitters) == {"the", "then", "cat", "dog"}
  for sampled in result.sampled_per_round:
    assert abs(sampled - rate * 10**12) < 5 * (rate * 10**12)**0.5


def test_a_schedule_needs_individual_users():
  pop = population_lib.Population.from_word_frequencies(["ab", "b"], [3, 4])
  with pytest.raises(ValueError, match="a fixed schedule needs individual"):
    fast_engine.run(pop, theta=1, batch_size=2, rng=np.random.default_rng(0),
                    schedule=[np.array([0, 1])])


# ---- seed for seed: the runs recorded from the engine ---------------------

# Digests of runs recorded from the engine before its count-level rounds were
# rewritten: per scenario, the first 16 hex digits of a SHA-256 over its
# seeds of every level's arrays (dtypes and shapes too) and counts and the
# generator's state after the run. They hold for the generator streams of
# the numpy they were recorded with (STREAM_DIGEST); numpy may change a
# stream between versions.
STREAM_DIGEST = (
    "c45bf27c2041637d81c60443ab5a54d98df208443c7f749bb250f733b2183789")
RUN_DIGESTS = {
    "huge_counts/fixed": "ba0a299d3baefba4",
    "huge_counts/poisson": "e730094c9abd6976",
    "several_words/fixed": "f43cb18cb53d0aa3",
    "several_words/fixed_capped": "0e7f245414f15890",
    "several_words/poisson": "92cb7cd5f3845c7a",
    "user_array/fixed": "69627b27d13d5fd8",
    "user_array/fixed_all_users": "871b762e6fdf3d13",
    "user_array/fixed_capped": "6ad310b9d2abea7a",
    "user_array/fixed_large": "af6da362084fd69b",
    "user_array/fixed_one_user": "13a828b900c2a44b",
    "user_array/fixed_sub_rounds": "69627b27d13d5fd8",
    "user_array/poisson": "59162c1981f56fcf",
    "user_array/poisson_all_users": "3eafb484da78aa9e",
    "user_array/poisson_capped": "170b9ce4962c4578",
    "user_array/schedule": "434110bb6dc808d7",
    "word_counts/fixed": "09875bb8638a31fc",
    "word_counts/fixed_capped": "ebf626a019406868",
    "word_counts/poisson": "1231617a323059d1",
    "several_words/discover_per_round_fixed": "c589132c5775844c",
    "several_words/discover_per_round_poisson": "50e37d87b8473216",
    "several_words/discover_per_run_fixed": "3f0c8bde954b8ea9",
    "several_words/discover_per_run_poisson": "5f3c7e53b413dd93",
}
IDENTITY_SEEDS = range(40)


def _hashed(digest, *values) -> None:
  for value in values:
    if isinstance(value, np.ndarray):
      digest.update(f"{value.dtype.str}{value.shape}".encode())
      digest.update(np.ascontiguousarray(value).tobytes())
    else:
      digest.update(repr(value).encode())


def _stream_digest() -> str:
  rng = np.random.default_rng(12345)
  digest = hashlib.sha256()
  _hashed(digest, rng.binomial(np.array([0, 5, 40, 10**12]), 0.3),
          rng.choice(10**6, size=60, replace=False, shuffle=False),
          rng.choice(40, size=30, replace=False, shuffle=False),
          rng.integers(0, np.array([3, 10**10])), rng.random(2),
          rng.bit_generator.state)
  return digest.hexdigest()


def _trie_digest(digest, trie) -> None:
  for lv in trie.levels:
    _hashed(digest, lv.depth, lv.prefixes, lv.prefix_votes, lv.parents,
            lv.terminated, lv.terminated_votes, lv.terminated_parents,
            lv.num_candidates, lv.num_sampled, lv.num_votes, lv.num_capped)


def _zipf_words(seed: int, num_words: int = 300
                ) -> tuple[list[str], np.ndarray]:
  """Random words of 1-7 letters of "abcdef" and Zipf probabilities."""
  rng = np.random.default_rng(seed)
  words = sorted({"".join(rng.choice(list("abcdef"), size=rng.integers(1, 8)))
                  for _ in range(num_words)})
  order = rng.permutation(len(words))
  probs = 1.0 / np.arange(1, len(words) + 1)
  return [words[i] for i in order], probs / probs.sum()


def _identity_populations() -> dict[str, population_lib.Population]:
  words, probs = _zipf_words(0)
  rng = np.random.default_rng(1)
  user_word = rng.choice(len(words), size=3000, p=probs)
  several = [{words[w]: int(c) for w, c in zip(
      rng.choice(len(words), size=rng.integers(1, 4), p=probs),
      rng.integers(1, 4, size=3))} for _ in range(400)]
  return {
      "user_array": population_lib.Population.from_word_indices(
          words, user_word, max_length=5),
      "word_counts": population_lib.Population.from_word_frequencies(
          words, rng.multinomial(10**6, probs), max_length=6),
      "huge_counts": population_lib.Population.from_word_frequencies(
          words[:40], rng.multinomial(10**12, probs[:40] / probs[:40].sum())),
      "several_words": population_lib.Population.from_user_words(
          several, max_length=4),
  }


IDENTITY_POPS = _identity_populations()
# name -> (population, keyword arguments of fast_engine.run without rng).
_SCHEDULE_RNG = np.random.default_rng(7)
IDENTITY_RUNS = {
    f"{pop}/{name}": (pop, kwargs) for pop, cases in {
        "user_array": {
            "fixed": dict(theta=6, batch_size=150),
            "fixed_large": dict(theta=3, batch_size=600),
            "fixed_all_users": dict(theta=1, batch_size=3000),
            "fixed_one_user": dict(theta=1, batch_size=1),
            "fixed_sub_rounds": dict(theta=6, batch_size=150,
                                     num_sub_rounds=3),
            "fixed_capped": dict(theta=4, batch_size=150, max_num_prefixes=2),
            "poisson": dict(theta=6, batch_size=1, sampling_rate=0.05),
            "poisson_all_users": dict(theta=2, batch_size=1, sampling_rate=1.0),
            "poisson_capped": dict(theta=3, batch_size=1, sampling_rate=0.05,
                                   max_num_prefixes=3),
            "schedule": dict(theta=3, batch_size=100, schedule=[
                _SCHEDULE_RNG.choice(3000, size=100, replace=False)
                for _ in range(6)]),
        },
        "word_counts": {
            "fixed": dict(theta=12, batch_size=20_000),
            "fixed_capped": dict(theta=12, batch_size=20_000,
                                 max_num_prefixes=5),
            "poisson": dict(theta=12, batch_size=1, sampling_rate=0.02),
        },
        "huge_counts": {
            "fixed": dict(theta=30, batch_size=4000),
            "poisson": dict(theta=30, batch_size=1, sampling_rate=1e-9),
        },
        "several_words": {
            "fixed": dict(theta=4, batch_size=120),
            "fixed_capped": dict(theta=3, batch_size=120, max_num_prefixes=2,
                                 num_sub_rounds=2),
            "poisson": dict(theta=4, batch_size=1, sampling_rate=0.3),
        },
    }.items() for name, kwargs in cases.items()}
# name -> keyword arguments of triehh.discover on the several-word users.
# name -> the mechanism of a discover call (max_length=4).
IDENTITY_DISCOVERIES = {
    f"several_words/discover_{choice}_{sampling}": triehh.Mechanism(
        theta=4, word_choice=choice, sampling=sampling,
        allow_no_guarantee=True,
        **({"batch_size": 120} if sampling == "fixed"
           else {"sampling_rate": 0.3}))
    for choice in ("per_round", "per_run") for sampling in ("fixed", "poisson")}


def run_digest(name: str) -> str:
  """The digest of a scenario's runs over IDENTITY_SEEDS."""
  digest = hashlib.sha256()
  for seed in IDENTITY_SEEDS:
    if name in IDENTITY_RUNS:
      pop, kwargs = IDENTITY_RUNS[name]
      rng = np.random.default_rng(seed)
      _trie_digest(digest, fast_engine.run(IDENTITY_POPS[pop], rng=rng,
                                           **kwargs))
      _hashed(digest, rng.bit_generator.state)
    else:
      result = triehh.discover(IDENTITY_POPS["several_words"],
                               IDENTITY_DISCOVERIES[name], max_length=4,
                               seed=seed)
      _trie_digest(digest, result.trie)
  return digest.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(IDENTITY_RUNS) +
                         sorted(IDENTITY_DISCOVERIES))
def test_runs_are_the_recorded_runs_seed_for_seed(name):
  if _stream_digest() != STREAM_DIGEST:
    pytest.skip("this numpy's generator streams differ from the recorded ones")
  assert run_digest(name) == RUN_DIGESTS[name]
