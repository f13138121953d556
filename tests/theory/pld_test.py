"""Tests of triehh.theory.pld: products of losses and infinity masses."""

import math

import numpy as np
import pytest

from triehh.theory import pld
from triehh.theory import poisson


def _loss(lower, probs, infinity, d=0.5):
  return pld.LossDistribution(d, lower, np.asarray(probs, dtype=float),
                              infinity)


def test_product_adds_independent_losses():
  first = _loss(-1, [0.25, 0.75], 0.0)  # losses -0.5, 0
  second = _loss(0, [0.5, 0.5], 0.0)  # losses 0, 0.5
  both = pld.product(first, second)
  assert both.lower == -1
  np.testing.assert_allclose(both.probs, [0.125, 0.5, 0.375])
  np.testing.assert_allclose(both.losses, [-0.5, 0.0, 0.5])


def test_product_infinity_masses_combine_and_never_drop():
  tiny = 1e-20  # 1 - (1 - a)(1 - b) would round to 0
  both = pld.product(_loss(0, [1.0], tiny), _loss(0, [1.0], 0.0))
  assert both.infinity >= tiny
  both = pld.product(_loss(0, [1.0], 0.1), _loss(0, [1.0], 0.2))
  assert both.infinity >= 0.1 + 0.2 - 0.02


def test_product_refuses_different_grids():
  with pytest.raises(ValueError, match="different grids"):
    pld.product(_loss(0, [1.0], 0.0, 0.5), _loss(0, [1.0], 0.0, 0.25))


def test_swap_product_is_symmetric_and_dominates_each_direction():
  one = poisson.level_loss(0.3, 5, 1e-3)
  swapped = pld.swap_product(one)
  for epsilon in (0.0, 0.5, 1.0, 2.0):
    assert swapped.forward.delta(epsilon) == swapped.reverse.delta(epsilon)
    assert swapped.delta(epsilon) >= one.delta(epsilon)


@pytest.mark.parametrize("p", [0.3**7, 1e-12, 0.5**40, 0.123456789])
def test_one_level_keeps_its_infinity_mass(p):
  # At L = 1, -expm1(log1p(-p)) can come out one ulp below p.
  loss = _loss(0, [1.0 - p], p)
  assert loss.composed_infinity(1) == p
  assert loss.compose(1).infinity == p
  for times in (2, 3, 11):
    assert loss.composed_infinity(times) >= -math.expm1(
        times * math.log1p(-p))
    assert loss.composed_infinity(times) >= p


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_convolve_adds_the_nonzero_terms_as_numpy_does(seed):
  rng = np.random.default_rng(seed)
  first = rng.random(3000)
  # Mostly zeros: lone entries, short runs and one long run.
  second = np.zeros(2000)
  second[rng.choice(2000, 60, replace=False)] = rng.random(60)
  second[100:140] = rng.random(40) * 1e-20
  second[500:503] = rng.random(3)
  got = pld.convolve(first, second)
  want = np.convolve(first, second)
  assert got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=1e-12, atol=0.0)
  np.testing.assert_allclose(pld.convolve(second, first), want, rtol=1e-12,
                             atol=0.0)


def test_a_level_composes_as_numpy_convolves_it():
  one = poisson.level_loss(0.37, 21, 1e-3).forward
  assert np.count_nonzero(one.probs) * 4 < one.probs.size  # sparse path
  probs = np.ones(1)
  for _ in range(5):
    probs = np.convolve(probs, one.probs)
  np.testing.assert_allclose(one.compose(5).probs, probs, rtol=1e-12,
                             atol=0.0)


def test_swap_compose_is_the_composed_swap_product():
  one = poisson.level_loss(0.3, 5, 1e-3)
  product = pld.swap_product(one).forward.compose(4)
  factored = pld.swap_compose(one, 4)
  assert factored.lower == product.lower
  np.testing.assert_allclose(factored.probs, product.probs, rtol=1e-12,
                             atol=1e-300)
  assert factored.infinity >= product.infinity * (1 - 1e-15)
  for epsilon in (0.0, 0.5, 1.0, 2.0):
    assert factored.delta(epsilon) == pytest.approx(product.delta(epsilon),
                                                    rel=1e-12)
