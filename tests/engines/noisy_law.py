"""The law check the noisy trie's other engines share with the fast one.

A tiny population whose released words vary from run to run (36 word sets
occur in 4,000 fast runs; candidates nobody votes for pass at alpha = 5 %),
fast-engine runs on it, and a chi-square test that two sets of runs follow
one law in a statistic (the released word set, the passes per round). The
TFF engine's and the Beam pipeline's tests compare their runs with these.
"""

from __future__ import annotations

import collections

import numpy as np
from scipy import stats

from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.theory import noisy_trie

LAW_WORDS = ["ab"] * 5 + ["b"] * 4 + ["ba"] * 3 + ["a"] * 2 + ["bb"]
LAW_PARAMS = noisy_trie.NoisyTrieParams(sigma=1.5, num_levels=3,
                                        threshold=3, sampling_rate=0.8)
# The same parameters with the threshold one higher (the noisy sums are
# integers): the change the law test must see.
HIGHER_PARAMS = noisy_trie.NoisyTrieParams(sigma=1.5, num_levels=3,
                                           threshold=4, sampling_rate=0.8)
FAST_RUNS = 4000
# Both sides are seeded, so each p-value is a fixed number; with equal laws
# a statistic falls below its threshold with this chance (two statistics).
FALSE_ALARM = 1e-3


def law_population():
  return population_lib.Population.from_user_words(LAW_WORDS, max_length=2)


def word_set(result):
  return tuple(sorted(result.words))


def passes_per_round(result):
  return tuple(level.num_passing for level in result.levels)


STATISTICS = (word_set, passes_per_round)


def homogeneity_p_value(a, b, key) -> float:
  """Chi-square test that ``key`` of the runs ``a`` and of ``b`` follow one
  law; outcomes expected fewer than 5 times in ``a`` are pooled."""
  count_a = collections.Counter(map(key, a))
  count_b = collections.Counter(map(key, b))
  share = len(a) / (len(a) + len(b))
  outcomes = sorted(set(count_a) | set(count_b), key=repr)
  big = [o for o in outcomes if (count_a[o] + count_b[o]) * share >= 5]
  rest = [o for o in outcomes if o not in big]
  table = np.array([[c[o] for o in big] + [sum(c[o] for o in rest)]
                    for c in (count_a, count_b)])
  assert table.shape[1] >= 8  # enough outcomes for the test to see a change
  return stats.chi2_contingency(table[:, table.sum(axis=0) > 0]).pvalue


def fast_runs(params, population=None, first_seed=10**6):
  """FAST_RUNS fast-engine runs of ``params`` on ``population`` (None: the
  law population)."""
  pop = law_population() if population is None else population
  return [noisy.run(pop, params, seed)
          for seed in range(first_seed, first_seed + FAST_RUNS)]


def assert_same_law(runs, fast):
  """``runs`` and ``fast`` follow one law in both statistics, and some
  candidates nobody voted for passed in ``runs``."""
  p_values = {key.__name__: homogeneity_p_value(runs, fast, key)
              for key in STATISTICS}
  assert min(p_values.values()) > FALSE_ALARM / len(p_values), p_values
  assert sum(level.num_zero_vote_passing for run in runs
             for level in run.levels) > 10


def assert_equal_in_law(runs):
  """``runs`` (of LAW_PARAMS on the law population) follow the fast
  engine's law in both statistics, and are not trivial: false positives,
  and most runs reach every round."""
  assert_same_law(runs, fast_runs(LAW_PARAMS))
  assert sum(len(run.levels) == 3 for run in runs) > len(runs) / 2


def assert_sees_a_higher_threshold(runs):
  """The law test tells ``runs`` from fast runs at HIGHER_PARAMS."""
  higher = fast_runs(HIGHER_PARAMS)
  for key in STATISTICS:
    assert homogeneity_p_value(runs, higher, key) < FALSE_ALARM / 2
