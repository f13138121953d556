"""Tests of partition selection's law drawn directly (the fast engine).

The law engine is seeded; the PipelineDP path it is compared with draws
python-dp's unseeded secure noise, so the equal-in-law test is
statistical: a chi-square test at level 1e-6, which the same law fails
about once in a million runs and a wrong epsilon fails every time.
"""

import collections
import importlib
import itertools
import math
import string

import numpy as np
import pytest
from scipy import stats

from triehh.baselines import partition_selection as ps
from triehh.baselines import partition_selection_law as law
from triehh.core.population import Population

STRATEGIES = list(ps.STRATEGIES)
LEVEL = 1e-6  # the chi-square tests' level
EPSILON, DELTA = 1.0, 1e-8
WORDS_PER_COUNT = 400


def _names(count: int) -> list[str]:
  letters = itertools.product(string.ascii_lowercase, repeat=4)
  return ["".join(w) for w in itertools.islice(letters, count)]


def graded_counts(strategy: str) -> list[int]:
  """Four user counts where the strategy keeps a word with probability
  between 0.02 and 0.98 at (EPSILON, DELTA): where a wrong epsilon shows."""
  p = law.keep_probabilities(np.arange(1, 80), EPSILON, DELTA, strategy)
  graded = [n for n, q in zip(range(1, 80), p) if 0.02 < q < 0.98]
  return graded[:: max(1, len(graded) // 4)][:4]


def graded_population(counts: list[int]) -> tuple[Population, dict]:
  """WORDS_PER_COUNT words held by each count of users; word -> count."""
  names = _names(WORDS_PER_COUNT * len(counts))
  users = np.repeat(counts, WORDS_PER_COUNT)
  return (Population.from_word_frequencies(names, users),
          dict(zip(names, users.tolist())))


def kept_per_count(words, holders: dict, counts: list[int]) -> np.ndarray:
  kept = collections.Counter(holders[w] for w in words)
  return np.array([kept[c] for c in counts])


def homogeneity_p(kept_a: np.ndarray, kept_b: np.ndarray) -> float:
  """The p-value of 'the same keep probability at each count' (a 2x2
  chi-square per count, summed; one degree of freedom each)."""
  statistic = 0.0
  for a, b in zip(kept_a, kept_b):
    table = np.array([[a, WORDS_PER_COUNT - a], [b, WORDS_PER_COUNT - b]])
    expected = (table.sum(axis=1, keepdims=True) * table.sum(axis=0)
                / table.sum())
    cells = expected > 0
    statistic += float(((table - expected)[cells]**2 / expected[cells]).sum())
  return float(stats.chi2.sf(statistic, df=len(kept_a)))


@pytest.fixture(scope="module", params=STRATEGIES)
def pipeline_dp_run(request):
  """A PipelineDP selection of the graded population, per strategy."""
  strategy = request.param
  counts = graded_counts(strategy)
  pop, holders = graded_population(counts)
  result = ps.select_words(pop, ps.PartitionSelectionTarget(
      EPSILON, DELTA, strategy=strategy))
  return strategy, counts, pop, holders, kept_per_count(
      result.words, holders, counts)


def test_the_law_equals_pipeline_dps_keep_frequencies(pipeline_dp_run):
  strategy, counts, pop, holders, kept = pipeline_dp_run
  assert len(counts) == 4
  fast = law.select_words_by_law(pop, ps.PartitionSelectionTarget(
      EPSILON, DELTA, strategy=strategy), seed=0)
  assert homogeneity_p(kept, kept_per_count(fast.words, holders,
                                            counts)) > LEVEL


@pytest.mark.parametrize("factor", [0.75, 1.3])
def test_a_wrong_epsilon_fails_the_same_test(pipeline_dp_run, factor):
  strategy, counts, pop, holders, kept = pipeline_dp_run
  wrong = law.select_words_by_law(pop, ps.PartitionSelectionTarget(
      EPSILON * factor, DELTA, strategy=strategy), seed=0)
  assert homogeneity_p(kept, kept_per_count(wrong.words, holders,
                                            counts)) < LEVEL


def truncated_geometric(n: int, epsilon: float, delta: float) -> float:
  """Desfontaines et al.'s optimal keep probability, by its recursion."""
  p = 0.0
  for _ in range(n):
    p = min(math.exp(epsilon) * p + delta,
            1.0 - math.exp(-epsilon) * (1.0 - p - delta), 1.0)
  return p


@pytest.mark.parametrize("k", [1, 2])
def test_keep_probabilities_are_the_documented_formulas(k):
  counts = np.arange(0, 60)
  tg = law.keep_probabilities(counts, EPSILON, DELTA, "truncated_geometric",
                              k)
  # k words per user: each word gets epsilon / k and delta / k.
  expected = [truncated_geometric(int(n), EPSILON / k, DELTA / k)
              for n in counts]
  np.testing.assert_allclose(tg, expected, rtol=1e-6, atol=1e-12)
  # Laplace: b = k / epsilon, threshold 1 + b ln(k / (2 delta)).
  b = k / EPSILON
  threshold = 1.0 + b * math.log(k / (2.0 * DELTA))
  laplace = law.keep_probabilities(counts, EPSILON, DELTA,
                                   "laplace_thresholding", k)
  np.testing.assert_allclose(
      laplace[1:], stats.laplace.sf(threshold - counts[1:], scale=b),
      rtol=1e-6, atol=1e-12)
  assert laplace[0] == 0.0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_keep_probabilities_meet_epsilon_delta_between_neighbours(strategy):
  # One word per user: a user moves one word's count by one; a keep
  # probability p is (eps, delta)-DP when both outcomes stay within
  # e^eps and delta between the counts n and n + 1 (and p(1) <= delta).
  p = law.keep_probabilities(np.arange(0, 200), EPSILON, DELTA, strategy)
  slack = 1e-12
  assert p[0] == 0.0 and p[1] <= DELTA + slack
  e = math.exp(EPSILON)
  assert np.all(p[1:] <= e * p[:-1] + DELTA + slack)
  assert np.all(1.0 - p[:-1] <= e * (1.0 - p[1:]) + DELTA + slack)
  # And the same check fails the law of a 10% larger epsilon.
  q = law.keep_probabilities(np.arange(0, 200), EPSILON * 1.1, DELTA,
                             strategy)
  assert np.any(q[1:] > e * q[:-1] + DELTA + slack)


def test_the_word_choice_and_counts_are_the_pipeline_dp_paths_rows():
  pop = Population.from_user_words(
      [{"x": 1, "y": 2, "z": 3}] * 300 + [{"solo": 1}, {"x": 4}])
  rows = ps.user_word_rows(pop, 2, np.random.default_rng(5))
  counts, num_rows = law.word_counts(pop, 2, np.random.default_rng(5))
  by_word = collections.Counter(word for _, word in rows)
  assert num_rows == len(rows) == 2 * 300 + 2
  assert {str(pop.vocabulary[i]): int(c) for i, c in enumerate(counts)
          if c} == dict(by_word)


def test_a_seed_fixes_the_release_and_the_label_says_simulation():
  pop, _ = graded_population(graded_counts("truncated_geometric"))
  target = ps.PartitionSelectionTarget(EPSILON, DELTA)
  first = law.select_words_by_law(pop, target, seed=3)
  assert first.words == law.select_words_by_law(pop, target, seed=3).words
  assert first.words != law.select_words_by_law(pop, target, seed=4).words
  assert list(first.words) == sorted(first.words)
  reference = ps.select_words(pop, target, seed=3)
  g, r = first.guarantee, reference.guarantee
  assert (g.epsilon, g.delta, g.adjacencies, g.two_sided) == (
      r.epsilon, r.delta, r.adjacencies, r.two_sided)
  assert "simulation" in g.accounting and "simulation" in g.randomness
  assert "seed 3" in g.randomness
  assert first.params.num_rows == reference.params.num_rows
  assert first.params.num_candidates == reference.params.num_candidates


def test_bad_input_is_named():
  pop = Population.from_user_words(["a", "b", "a"])
  with pytest.raises(TypeError, match="target"):
    law.select_words_by_law(pop, None)
  with pytest.raises(ValueError, match="seed"):
    law.select_words_by_law(pop, ps.PartitionSelectionTarget(1.0), seed=-1)
  with pytest.raises(ValueError, match="strategy"):
    law.keep_probabilities(np.arange(3), 1.0, 1e-8, "policy_gaussian")
  with pytest.raises(ValueError, match="counts"):
    law.keep_probabilities(np.array([-1]), 1.0, 1e-8, "truncated_geometric")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("epsilon, delta, k", [(1.0, 1e-8, 1),
                                               (4.0, 1e-12, 1),
                                               (0.5, 1e-6, 3)])
def test_the_strategy_is_the_one_pipeline_dp_builds(strategy, epsilon,
                                                     delta, k):
  pipeline_dp = pytest.importorskip("pipeline_dp")
  partition_selection = importlib.import_module(
      "pipeline_dp.partition_selection")
  member = pipeline_dp.PartitionSelectionStrategy[ps.STRATEGIES[strategy]]
  accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon,
                                                 total_delta=delta)
  spec = accountant.request_budget(member.mechanism_type, name="selection")
  accountant.compute_budgets()
  theirs = partition_selection.create_partition_selection_strategy(
      member, spec.eps, spec.delta, k)
  ours = law.strategy_object(epsilon, delta, strategy, k)
  counts = range(0, 400)
  np.testing.assert_allclose(
      [ours.probability_of_keep(c) for c in counts],
      [theirs.probability_of_keep(c) for c in counts], rtol=1e-12,
      atol=0.0)
