"""Tests of triehh.engines.tff.noisy_engine: the noisy trie run in TFF,
equal in law to the fast engine (central and distributed noise)."""

import collections
import dataclasses
import fractions

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("tensorflow_federated")

import triehh
from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.engines.tff import noisy_engine
from triehh.engines.tff import noisy_process
from triehh.theory import distributed_noise
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
  users = triehh.Population.from_user_words(
      ["sun"] * 60 + ["moon"] * 45 + ["star"] * 35
      + [f"w{i}" for i in range(20)], alphabet="0123456789amnorstuw",
      max_length=5)
  target = triehh.NoisyTarget(4.0, delta=1e-6)
  result = triehh.discover(users, target, seed=0, max_length=5,
                           engine="tff", noise="distributed", dropout=0.05)
  assert {"sun", "moon", "star"} <= set(result.words)
  guarantee = result.guarantee
  assert guarantee.epsilon <= 4.0 and guarantee.delta == 1e-6
  assert guarantee.accounting == distributed_noise.ACCOUNTING
  assert "accounted as the central Gaussian" not in guarantee.covers
  for said in ("at least h=", "dropout at most 0.05", "delta_short=",
               "secure sum modulo 2^"):
    assert said in guarantee.covers
  assert guarantee.adjacencies == (Adjacency.REPLACE_SPECIAL,)


# ---- distributed noise: equal in law to the fast engine's Skellam law --------

# Every candidate passes (tau = -40): each run releases the 42 words of
# up to 2 letters of {a, ..., f} (37 of them nobody's), and their noisy sums
# carry the noise's law.
LAW_SHARES = distributed_noise.DistributedNoise(
    num_clients=15, sampling_rate=0.8, dropout=0.1, min_clients=5,
    share_means=(fractions.Fraction(1, 2),) * 3, thresholds=(-40,) * 3,
    bits=8, delta_short=1e-3)
DISTRIBUTED_TFF_RUNS = 250
DISTRIBUTED_FAST_RUNS = 2000


def _sums_p_value(runs, other) -> float:
  """Chi-square test that the released noisy sums of ``runs`` and of
  ``other`` follow one law: each word's sums in 5 cells split at the 10th,
  30th, 70th and 90th percentiles of both sets' sums of it (a wider noise
  moves mass to the outer cells)."""
  def sums(rs):
    found = collections.defaultdict(list)
    for r in rs:
      for w, c in zip(r.words, r.noisy_counts):
        found[w].append(int(c))
    return found
  a, b = sums(runs), sums(other)
  rows = ([], [])
  for word in sorted(set(a) & set(b)):
    edges = np.percentile(a[word] + b[word], [10, 30, 70, 90])
    for row, values in zip(rows, (a[word], b[word])):
      row.extend(np.bincount(np.searchsorted(edges, values, side="right"),
                             minlength=5))
  table = np.array(rows)
  assert table.shape[1] >= 20
  return stats.chi2_contingency(table[:, table.sum(axis=0) > 0]).pvalue


def _shares_population():
  return population_lib.Population.from_user_words(
      LAW_WORDS, max_length=2, alphabet="abcdef")


@pytest.fixture(scope="module")
def distributed_law_runs(tff_runtime_module):
  del tff_runtime_module
  pop = _shares_population()
  return [noisy_engine.run(pop, LAW_PARAMS, seed, noise="distributed",
                           distributed=LAW_SHARES)
          for seed in range(DISTRIBUTED_TFF_RUNS)]


def _fast_distributed_runs(shares):
  pop = _shares_population()
  return [noisy.run(pop, LAW_PARAMS, seed, distributed=shares)
          for seed in range(10**6, 10**6 + DISTRIBUTED_FAST_RUNS)]


def test_distributed_noise_is_equal_in_law_to_the_fast_engine(
    distributed_law_runs):
  """Shares drawn per client and summed modulo 2^8 in TFF against the fast
  engine's one Skellam(m s) draw per candidate."""
  fast = _fast_distributed_runs(LAW_SHARES)
  assert _sums_p_value(distributed_law_runs, fast) > noisy_law.FALSE_ALARM
  # a run stops, releasing nothing, when a round has m - 1 < h = 5
  released = [len(r.words) for r in distributed_law_runs]
  assert set(released) <= {0, 42} and released.count(42) >= 0.95 * len(
      released)


def test_the_law_test_sees_a_share_mean_30_percent_off(distributed_law_runs):
  wrong = dataclasses.replace(
      LAW_SHARES, share_means=(fractions.Fraction(83, 128),) * 3)  # x1.3
  fast = _fast_distributed_runs(wrong)
  assert _sums_p_value(distributed_law_runs, fast) < noisy_law.FALSE_ALARM


def test_the_distributed_mode_needs_its_plan():
  pop = law_population()
  with pytest.raises(ValueError, match="runs with its DistributedNoise"):
    noisy_engine.run(pop, LAW_PARAMS, 0, noise="distributed")
  with pytest.raises(ValueError, match="runs with its DistributedNoise"):
    noisy_engine.run(pop, LAW_PARAMS, 0, distributed=LAW_SHARES)


@pytest.mark.parametrize("options, match", [
    (dict(noise="laplace"), "noise must be 'central' or 'distributed', got "
     "'laplace'"),
    (dict(secure_sum=True), "the noisy trie's tff engine takes "
     "connect_timeout, dropout, noise, rpc_timeout, workers; got "
     "secure_sum"),
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
