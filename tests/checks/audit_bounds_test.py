"""Tests of the statistics of the privacy audit."""

import math

import numpy as np
import pytest
from scipy import stats

from checks import audit_bounds


def test_hypergeom_tail_matches_scipy():
  holders = np.arange(0, 400)
  for size, batch, votes in ((10000, 138, 12), (500, 100, 4), (60, 59, 3)):
    ks = holders[holders <= size]
    above, below = audit_bounds.hypergeom_tail(size, ks, batch, votes)
    dist = stats.hypergeom(size, ks, batch)
    np.testing.assert_allclose(above, dist.sf(votes - 1), rtol=1e-8,
                               atol=1e-300)
    np.testing.assert_allclose(below, dist.cdf(votes - 1), rtol=1e-8,
                               atol=1e-300)


def test_hockey_epsilon_known_values():
  p = np.array([[0.5, 0.5]])
  p_prime = np.array([[0.25, 0.75]])
  assert audit_bounds.hockey_epsilon(p, p_prime, 0.0)[0] == pytest.approx(math.log(2))
  assert audit_bounds.hockey_epsilon(p, p_prime, 0.1)[0] == pytest.approx(math.log(1.6))
  assert audit_bounds.hockey_epsilon(p, p_prime, 0.3)[0] == 0.0
  assert math.isinf(audit_bounds.hockey_epsilon([[0.2, 0.8]], [[0.0, 1.0]], 0.1)[0])
  assert audit_bounds.hockey_epsilon([[0.2, 0.8]], [[0.0, 1.0]], 0.2)[0] == 0.0


def test_event_epsilon_and_clopper_pearson():
  assert audit_bounds.event_epsilon(0.5, 0.25, 0.0) == pytest.approx(math.log(2))
  assert math.isinf(audit_bounds.event_epsilon(0.5, 0.0, 0.1))
  low, high = audit_bounds.clopper_pearson(np.array([0, 10]), 10, 0.05)
  assert low[0] == 0 and high[1] == 1
  assert high[0] == pytest.approx(1 - 0.05**0.1)
  assert low[1] == pytest.approx(0.05**0.1)
