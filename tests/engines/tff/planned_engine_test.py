"""Tests of triehh.engines.tff.planned_engine: the planned noisy trie run
in TFF, equal in law to the fast engine's run_planned."""

import dataclasses
import fractions

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

import triehh
from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.engines.tff import planned_engine
from triehh.engines.tff import planned_process
from triehh.theory import distributed_noise
from triehh.theory import noisy_plan
from tests.engines import noisy_law

# A plan on the law population (15 users, "a" and "b", L = 2) whose
# released words vary from run to run: discovery rounds (the first covers
# both characters; candidates nobody votes for pass at a loose prefix
# rate), then a verification round; each user takes part with
# probability 0.8.
LAW_PLAN = noisy_plan.NoisyPlan(
    sigma=1.5, num_levels=3, noise_multipliers=(), verify=True,
    word_false_positive_rate=0.05, prefix_false_positive_rate=0.3,
    budget=noisy_plan.UploadBudget(10**6), population_size=15,
    max_length=2, alphabet_size=2, one_word=True, false_words=1.0,
    sampling_rate=0.8)
TFF_RUNS = 250


def _word_set(result):
  return tuple(sorted(result.words))


def _passes(result):
  return tuple(level.stats.num_passing for level in result.levels)


def _p_values(runs, fast):
  return [noisy_law.homogeneity_p_value(runs, fast, key)
          for key in (_word_set, _passes)]


def _tff(plan, population=None):
  """TFF_RUNS runs of ``plan`` in TFF (seeds 0, 1, ...) on ``population``
  (None: the law population)."""
  if population is None:
    population = noisy_law.law_population()
  return [planned_engine.run_planned(population, plan, seed)
          for seed in range(TFF_RUNS)]


def _fast(plan, population=None):
  """FAST_RUNS fast-engine runs of ``plan`` (seeds 10^6 on) on
  ``population`` (None: the law population)."""
  if population is None:
    population = noisy_law.law_population()
  return [noisy.run_planned(population, plan, seed)
          for seed in range(10**6, 10**6 + noisy_law.FAST_RUNS)]


def _least_p(runs, plan, population=None):
  """The smaller homogeneity p-value of ``runs`` (TFF) against the fast
  engine's runs of ``plan``: above ``FALSE_ALARM / 2``, the same law."""
  return min(_p_values(runs, _fast(plan, population)))


@pytest.fixture(scope="module")
def tff_planned_runs(tff_runtime_module):
  del tff_runtime_module  # the engine installs the cached local runtime
  return _tff(LAW_PLAN)


def test_the_planned_run_is_equal_in_law_to_the_fast_engine(
    tff_planned_runs):
  assert _least_p(tff_planned_runs, LAW_PLAN) > noisy_law.FALSE_ALARM / 2
  # Not trivial: words released and candidates nobody voted for passing,
  # and the verification round reached in most runs.
  assert sum(len(r.words) for r in tff_planned_runs) > TFF_RUNS
  assert sum(level.stats.num_zero_vote_passing for r in tff_planned_runs
             for level in r.levels) > 10
  assert sum(r.levels[-1].verification for r in tff_planned_runs) > (
      TFF_RUNS / 2)


def test_the_law_test_sees_a_looser_word_threshold(tff_planned_runs):
  looser = dataclasses.replace(LAW_PLAN, false_words=4.0)
  assert _least_p(tff_planned_runs, looser) < noisy_law.FALSE_ALARM / 2


def test_a_blocks_sum_is_read_modulo_its_own_as_in_the_fast_engine(
    tff_runtime_module):
  # Declared n = 15 and almost no noise: the first round's block sums
  # modulo 16 (the values 0 to 15), so 32 users of "a" read as 0 and "a"
  # is lost (a wrap-around, accuracy only), while "b"'s 10 pass; both
  # engines read it so. Declared n = 40 (modulo 41): "a" is found.
  del tff_runtime_module
  pop = population_lib.Population.from_user_words(["a"] * 32 + ["b"] * 10,
                                                  max_length=2)
  tight = dataclasses.replace(LAW_PLAN, sigma=0.01, sampling_rate=1.0)
  assert tight.block_moduli([None], 0) == [16] and tight.window_low(0) == 0
  for plan, words in ((tight, ("b",)),
                      (dataclasses.replace(tight, population_size=40),
                       ("a", "b"))):
    assert planned_engine.run_planned(pop, plan, 0).words == words
    assert noisy.run_planned(pop, plan, 0).words == words


def test_a_seed_gives_one_run(tff_runtime_module):
  del tff_runtime_module
  pop = noisy_law.law_population()
  first = planned_engine.run_planned(pop, LAW_PLAN, 3)
  again = planned_engine.run_planned(pop, LAW_PLAN, 3)
  assert first.words == again.words and first.levels == again.levels


# ---- rates adapted to the frontier -----------------------------------------

# The law plan at q = 1/2 with its rates adapted (Renyi order 8) and a
# 10-byte budget: a round may run at 0.71 or 1 with its sigma raised, where
# its candidates still fit; most runs take rates 1/2, 1, 1/2 (the second
# round at 1, its parents' counts measured at 1/2), a few stop after two
# rounds at 1/2. (At 16 bytes the first round runs at 0.71.)
ADAPTED_PLAN = dataclasses.replace(
    LAW_PLAN, sampling_rate=0.5, renyi_order=8,
    budget=noisy_plan.UploadBudget(10),
    # The blocks' moduli of this budget's story: every round's margins at
    # 10^-12.
    discovery_wrap_tail=None)


def _rates(result):
  return tuple(round(level.sampling_rate, 3) for level in result.levels)


@pytest.fixture(scope="module")
def tff_adapted_runs(tff_runtime_module):
  del tff_runtime_module  # the engine installs the cached local runtime
  return _tff(ADAPTED_PLAN)


def test_adapted_rates_are_equal_in_law_to_the_fast_engine(tff_adapted_runs):
  assert _least_p(tff_adapted_runs, ADAPTED_PLAN) > noisy_law.FALSE_ALARM / 2
  # Not trivial: a round at a larger rate than planned, after a round at
  # the planned one, in most runs, and words released.
  assert sum(_rates(r) == (0.5, 1.0, 0.5) for r in tff_adapted_runs) > (
      TFF_RUNS / 2)
  assert sum(len(r.words) for r in tff_adapted_runs) > TFF_RUNS
  # The test sees the rates: every round at q is another law.
  fixed = dataclasses.replace(ADAPTED_PLAN, renyi_order=None)
  assert _least_p(tff_adapted_runs, fixed) < noisy_law.FALSE_ALARM / 2


# ---- Skellam shares ------------------------------------------------------------

# The law plan with the clients' shares: each sampled user delivers with
# probability 0.9; a round's noise is Sk(m / 4) of the m delivered (about
# 10.8: standard deviation about 2.3); a round with m - 1 < 7 (about 1 in
# 20) is not released and stops the run.
SHARES_PLAN = dataclasses.replace(
    LAW_PLAN, sigma=2.3, distributed=distributed_noise.DistributedNoise(
        num_clients=15, sampling_rate=0.8, dropout=0.1, min_clients=7,
        share_means=(fractions.Fraction(1, 4),) * 3, thresholds=(0,) * 3,
        bits=10, delta_short=1e-3))


@pytest.fixture(scope="module")
def tff_shares_runs(tff_runtime_module):
  del tff_runtime_module  # the engine installs the cached local runtime
  return _tff(SHARES_PLAN)


def test_skellam_shares_are_equal_in_law_to_the_fast_engine(tff_shares_runs):
  assert _least_p(tff_shares_runs, SHARES_PLAN) > noisy_law.FALSE_ALARM / 2
  # Not trivial: words released, and rounds short of their shares.
  assert sum(len(r.words) for r in tff_shares_runs) > TFF_RUNS
  assert sum(len(r.levels) < 3 for r in tff_shares_runs) > 3
  # The test sees the shares' law: half their variance, or the server's
  # noise, is another law (the fast engine's dropout: noisy_test.py).
  less = dataclasses.replace(
      SHARES_PLAN, distributed=dataclasses.replace(
          SHARES_PLAN.distributed,
          share_means=(fractions.Fraction(1, 8),) * 3))
  assert _least_p(tff_shares_runs, less) < noisy_law.FALSE_ALARM / 2
  central = dataclasses.replace(SHARES_PLAN, distributed=None)
  assert _least_p(tff_shares_runs, central) < noisy_law.FALSE_ALARM / 2


# ---- discrete Laplace noise -------------------------------------------------

# The law plan with the server's discrete Laplace noise of scale 1.
LAPLACE_PLAN = dataclasses.replace(LAW_PLAN, sigma=1.0,
                                   noise_law=noisy_plan.LAPLACE)


@pytest.fixture(scope="module")
def tff_laplace_runs(tff_runtime_module):
  del tff_runtime_module  # the engine installs the cached local runtime
  return _tff(LAPLACE_PLAN)


def test_laplace_noise_is_equal_in_law_to_the_fast_engine(tff_laplace_runs):
  assert _least_p(tff_laplace_runs, LAPLACE_PLAN) > noisy_law.FALSE_ALARM / 2
  assert sum(len(r.words) for r in tff_laplace_runs) > TFF_RUNS
  # The test sees the law: the Gaussian of the same parameter is another.
  gaussian = dataclasses.replace(LAPLACE_PLAN, noise_law=noisy_plan.GAUSSIAN)
  assert _least_p(tff_laplace_runs, gaussian) < noisy_law.FALSE_ALARM / 2


# ---- several words per user -------------------------------------------------

# 13 users of one to two words each, whose planned votes go to a word whose
# candidate exists (by local frequency), and in the verification round to
# the word discovery measured lowest.
SEVERAL_LAW = population_lib.Population.from_user_words(
    [{"ab": 2, "b": 1}] * 4 + [{"ba": 1, "a": 1}] * 3 + [{"b": 1}] * 3
    + [{"ab": 1}] * 2 + [{"bb": 1, "ab": 1}], max_length=2, alphabet="ab")
SEVERAL_PLAN = dataclasses.replace(LAW_PLAN, population_size=13,
                                   one_word=False)


@pytest.fixture(scope="module")
def tff_several_runs(tff_runtime_module):
  del tff_runtime_module
  return _tff(SEVERAL_PLAN, SEVERAL_LAW)


def test_several_words_are_equal_in_law_to_the_fast_engine(tff_several_runs):
  assert (_least_p(tff_several_runs, SEVERAL_PLAN, SEVERAL_LAW)
          > noisy_law.FALSE_ALARM / 2)
  # Not trivial: words released, and a word threshold for 4 false words a
  # run instead of 1 is another law, which the test sees. (Which word a
  # client votes for: the deterministic tests below.)
  assert sum(len(r.words) for r in tff_several_runs) > TFF_RUNS
  looser = dataclasses.replace(SEVERAL_PLAN, false_words=4.0)
  assert (_least_p(tff_several_runs, looser, SEVERAL_LAW)
          < noisy_law.FALSE_ALARM / 2)


SEVERAL = population_lib.Population.from_user_words(
    [{"zz": 9, "ab": 1}] * 30 + [{"ac": 1}] * 20, max_length=4,
    alphabet="abcz")


def _tiny_plan(rounds=4, verify=False):
  return noisy_plan.NoisyPlan(
      sigma=0.01, num_levels=rounds, noise_multipliers=(), verify=verify,
      word_false_positive_rate=1e-15, prefix_false_positive_rate=1e-15,
      budget=noisy_plan.UploadBudget(10**6), population_size=50,
      max_length=4, alphabet_size=4, one_word=False, false_words=1e-12)


def test_several_words_vote_for_words_on_the_frontier(tff_context):
  del tff_context
  voter = planned_engine.TffVoter(SEVERAL)
  word_a = list(SEVERAL.vocabulary).index("ab")
  frontier = noisy._Frontier(
      SEVERAL.codes[word_a:word_a + 1, :1].astype(np.int16),
      np.array([SEVERAL.prefix_ids[1][word_a]], dtype=np.int64))
  ext = noisy.Extensions.of(SEVERAL.alphabet.size, 1, 4, 1)
  voted, passing, values, _ = voter.planned_round(
      SEVERAL, _tiny_plan(), 0, frontier, ext, 1, np.random.default_rng(0))
  # Every user has a word under "a": all 50 vote, none for "zz".
  assert sorted(voted.votes.tolist()) == [20, 30]
  assert sorted(np.rint(values).tolist()) == [20, 30]
  assert passing.size == 2


@pytest.mark.parametrize("priority,expected", [([5.0, 100.0], [30, 0]),
                                               ([100.0, 5.0], [0, 30])])
def test_verification_votes_go_to_the_word_measured_lowest(
    tff_context, priority, expected):
  del tff_context
  voter = planned_engine.TffVoter(SEVERAL)
  words = ["ab", "zz"]
  ids = [list(SEVERAL.vocabulary).index(w) for w in words]
  cand = np.full(SEVERAL.num_words, -1, dtype=np.int64)
  cand[ids] = [0, 1]
  codes = [SEVERAL.codes[i, :3].astype(np.int16) for i in ids]
  voted, _, values, source = voter.verification_round(
      SEVERAL, _tiny_plan(verify=True), cand, np.array(priority), codes,
      np.random.default_rng(0))
  assert voted.votes.tolist() == expected
  assert np.rint(values[source >= 0]).tolist() == [v for v in expected if v]


def test_a_round_beyond_the_capacity_is_refused(tff_runtime_module,
                                                monkeypatch):
  del tff_runtime_module
  monkeypatch.setattr(planned_process, "MAX_CANDIDATES", 4)
  with pytest.raises(ValueError, match="round 0's candidate table has .* "
                     "rows; the TFF engine holds at most 4"):
    planned_engine.run_planned(SEVERAL, _tiny_plan(), 0)


# ---- through triehh.discover --------------------------------------------------


def test_discover_runs_the_planned_trie_in_tff_and_labels_it(
    tff_runtime_module):
  del tff_runtime_module
  users = triehh.Population.from_user_words(
      ["sun"] * 300 + ["moon"] * 200 + ["star"] * 150
      + [f"w{i}" for i in range(350)], alphabet="0123456789amnorstuw")
  target = triehh.NoisyTarget(
      8.0, delta=1e-6, upload_budget=triehh.UploadBudget(
          bytes_per_run=60_000, sampling_rate=1.0))
  result = triehh.discover(users, target, seed=0, engine="tff")
  assert {"sun", "moon", "star"} <= set(result.words)
  fast = triehh.discover(users, target, seed=0)
  assert result.params == fast.params
  assert result.guarantee == fast.guarantee
  assert result.upload_bytes <= target.upload_budget.bytes_per_run


def test_a_round_without_participants_is_the_noise_alone(tff_runtime_module):
  del tff_runtime_module
  nobody = dataclasses.replace(LAW_PLAN, sampling_rate=1e-9)
  result = planned_engine.run_planned(noisy_law.law_population(), nobody, 0)
  assert result.levels
  assert all(level.stats.num_voted == 0 for level in result.levels)
  assert result.num_false_words == len(result.words)
