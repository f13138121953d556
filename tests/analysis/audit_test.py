"""Tests of the empirical privacy audit of Theorem 1."""

import math

import numpy as np
import pytest

from triehh.analysis import audit as pa
from triehh.analysis import audit_bounds


@pytest.mark.parametrize("variant", pa.VARIANTS)
def test_engine_matches_exact_depth_distribution(variant):
  """The real engine (with the broken variants' schedules) follows the exact
  model: each depth frequency of w's path lies in its 99.9 % interval."""
  setup = pa.make_setup(300, 2, theta=4, batch_size=30, variant=variant)
  k = 35
  exact_d, exact_d_prime = pa._path_distributions(setup, np.array([k]))
  pop, pop_prime = pa.build_populations(setup, k)
  runs = 400
  for population, exact, neighbour in ((pop, exact_d[0], False),
                                       (pop_prime, exact_d_prime[0], True)):
    depths, _ = pa.run_depths(setup, population, runs, seed=7,
                              neighbour=neighbour)
    counts = np.bincount(depths, minlength=setup.levels + 1)
    low, high = audit_bounds.clopper_pearson(counts, runs, 0.001 / (2 * counts.size))
    assert np.all((low <= exact) & (exact <= high)), (variant, counts,
                                                      exact * runs)


PAPER_CELLS = [(10**4, 2.0), (10**4, 4.0), (10**5, 2.0), (10**5, 4.0)]


@pytest.mark.parametrize("n,epsilon", PAPER_CELLS)
@pytest.mark.parametrize("variant", ["correct", "with_replacement"])
def test_exact_loss_within_theorem(n, epsilon, variant):
  setup = pa.make_setup(n, 10, epsilon=epsilon, variant=variant)
  assert setup.delta <= 1 / n**2
  result = pa.exact_audit(setup)
  assert 0 < result.epsilon <= setup.epsilon
  assert not result.violates


def test_monte_carlo_lower_bound_within_theorem():
  # Small enough that the whole-trie event is audited too.
  setup = pa.make_setup(400, 2, theta=4, batch_size=40)
  result = pa.monte_carlo_audit(setup, num_runs=300, confidence=0.95)
  assert result.setup.sizes[1] <= pa.WHOLE_TRIE_MAX_USERS
  assert result.lower <= setup.epsilon
  assert result.lower <= pa.exact_audit(setup).epsilon
  assert result.lower <= result.epsilon <= result.upper


def test_theta_one_caught_by_monte_carlo():
  setup = pa.make_setup(2500, 1, theta=10, batch_size=50,
                        variant="theta_one")
  exact = pa.exact_audit(setup)
  assert math.isinf(exact.epsilon) and exact.worst.k == 0
  result = pa.monte_carlo_audit(setup, num_runs=2000, populations=[0])
  assert result.violates, result
  assert result.worst.k == 0 and result.worst.direction == "D' vs D"


def test_double_vote_caught_by_exact_path():
  setup = pa.make_setup(1000, 1, theta=12, batch_size=32,
                        variant="double_vote")
  broken = pa.exact_audit(setup)
  assert broken.violates and broken.epsilon > 1.5 * setup.epsilon
  correct = pa.exact_audit(pa.make_setup(1000, 1, theta=12, batch_size=32))
  assert not correct.violates


def test_planned_populations_include_threshold_sizes():
  setup = pa.make_setup(10**4, 10, epsilon=2.0)
  ks = pa.planned_populations(setup, 1000, 0.95)
  assert {0, setup.theta - 1, setup.theta} <= set(ks)


@pytest.mark.parametrize("kwargs,message", [
    (dict(theta=3, batch_size=10), "theta >= 4"),
    (dict(theta=4, batch_size=10, variant="nope"), "variant"),
    (dict(theta=4, batch_size=10, adjacency="swap"), "adjacency"),
])
def test_bad_setup(kwargs, message):
  with pytest.raises(ValueError, match=message):
    pa.make_setup(100, 2, **kwargs)


def test_replace_adjacency_keeps_size():
  setup = pa.make_setup(400, 2, theta=4, batch_size=40, adjacency="replace")
  assert setup.sizes == (400, 400)
  pop, pop_prime = pa.build_populations(setup, 5)
  assert pop.num_users == pop_prime.num_users == 400
