"""Tests of the one-release ceiling: its options against the discrete
Gaussian's and the discrete Laplace's pmfs summed here, its split against
every combination."""

import itertools
import math

import numpy as np
import pytest

from triehh.core import discrete_noise
from triehh.theory import release_ceiling


def _tail(sigma: float, tau: int) -> float:
  """P[X >= tau] of the discrete Gaussian, its pmf summed over +-60 sigma."""
  x = np.arange(-math.ceil(60 * sigma), math.ceil(60 * sigma) + 1)
  weights = np.exp(-x.astype(float)**2 / (2 * sigma * sigma))
  return float(weights[x >= tau].sum() / weights.sum())


def test_each_option_spends_the_strings_tail_and_finds_the_words_passes():
  sigma, counts, strings = 1.3, [3, 7, 7, 12], 50.0
  options = release_ceiling.options(counts, strings, sigma, budget=1.0)
  assert options[0] == (0.0, 0.0)
  least = min(tau for tau in range(-20, 40)
              if strings * _tail(sigma, tau) <= 1.0)
  for j, (spent, found) in enumerate(options[1:]):
    tau = least + j
    assert spent == pytest.approx(strings * _tail(sigma, tau), rel=1e-9)
    assert found == pytest.approx(
        sum(_tail(sigma, tau - c) for c in counts), rel=1e-9)
  assert options[1][0] <= 1.0 < strings * _tail(sigma, least - 1)


def _laplace_tail(scale: float, tau: int) -> float:
  """P[X >= tau] of the discrete Laplace, its pmf summed over +-200 scale."""
  x = np.arange(-math.ceil(200 * scale), math.ceil(200 * scale) + 1)
  weights = np.exp(-np.abs(x.astype(float)) / scale)
  return float(weights[x >= tau].sum() / weights.sum())


@pytest.mark.parametrize("tau", [-3, 0, 1, 2, 7])
def test_the_discrete_laplace_tail_is_its_pmf_summed(tau):
  assert discrete_noise.discrete_laplace_tail(0.8, tau) == pytest.approx(
      _laplace_tail(0.8, tau), rel=1e-9)


def test_laplace_options_spend_the_laplace_tail():
  scale, counts, strings = 0.5, [2, 4, 4, 9], 300.0
  options = release_ceiling.options(counts, strings, scale, budget=1.0,
                                    noise="laplace")
  least = min(tau for tau in range(-20, 60)
              if strings * _laplace_tail(scale, tau) <= 1.0)
  for j, (spent, found) in enumerate(options[1:]):
    tau = least + j
    assert spent == pytest.approx(strings * _laplace_tail(scale, tau),
                                  rel=1e-9)
    assert found == pytest.approx(
        sum(_laplace_tail(scale, tau - c) for c in counts), rel=1e-9)
  with pytest.raises(ValueError, match="noise must be"):
    release_ceiling.options(counts, strings, scale, 1.0, noise="skellam")


def test_the_split_is_the_best_of_every_combination():
  rng = np.random.default_rng(3)
  per_length = []
  for _ in range(4):
    spent = np.sort(rng.uniform(0, 0.6, 5))[::-1]
    found = np.sort(rng.uniform(0, 50, 5))[::-1]
    per_length.append([(0.0, 0.0)] + list(zip(spent.tolist(),
                                               found.tolist())))
  best = max((sum(f for _, f in combo), sum(s for s, _ in combo))
             for combo in itertools.product(*per_length)
             if sum(s for s, _ in combo) <= 1.0)
  found, spent = release_ceiling.best_split(per_length, 1.0)
  assert found == pytest.approx(best[0], rel=1e-12)
  assert spent <= 1.0


def test_the_ceiling_counts_words_of_one_to_l_characters_held_by_someone():
  truth = {"ab": 40, "abc": 40, "abcd": 40, "a": 0}
  found, spent = release_ceiling.ceiling(truth, 2, 3, 1.0, budget=1.0)
  assert found == pytest.approx(2.0, abs=1e-9)  # "abcd" is longer than L
  assert 0 < spent <= 1.0
  more, _ = release_ceiling.ceiling({"ab": 4, "abc": 4}, 2, 3, 1.0,
                                    budget=1.0)
  less, _ = release_ceiling.ceiling({"ab": 4, "abc": 4}, 2, 3, 1.0,
                                    budget=0.01)
  assert less < more < 2.0
