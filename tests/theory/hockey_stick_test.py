"""Tests of triehh.theory.hockey_stick: delta of two composed PLDs, as
dp_accounting's direct sum gives it, and a full composition's."""

from unittest import mock

from absl.testing import parameterized
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
import numpy as np

from triehh.theory import counting
from triehh.theory import hockey_stick

GRID = 1e-3


def _gaussian(sigma, rate=1.0):
  return pld_lib.from_gaussian_mechanism(
      sigma, sampling_prob=rate, value_discretization_interval=GRID)


def _random(seed, size=400, symmetric=False):
  """A PLD of random dense PMFs (not a mechanism's: any masses will do)."""
  rng = np.random.default_rng(seed)

  def pmf():
    probs = rng.exponential(size=size) * (rng.random(size) < 0.3)
    probs *= (1 - 1e-6) / probs.sum()
    return pld_pmf.DensePLDPmf(GRID, int(rng.integers(-300, 100)), probs,
                               1e-6 * rng.random(), pessimistic_estimate=True)

  if symmetric:
    return pld_lib.PrivacyLossDistribution(pmf())
  return pld_lib.PrivacyLossDistribution(pmf(), pmf())


PAIRS = (
    ("gaussians", lambda: (_gaussian(1.3, 0.3), _gaussian(0.8))),
    ("gaussian_laplace", lambda: (
        _gaussian(2.0), pld_lib.from_laplace_mechanism(
            1.5, value_discretization_interval=GRID))),
    ("random_two_sided", lambda: (_random(0), _random(1))),
    ("random_one_symmetric", lambda: (_random(2, symmetric=True),
                                      _random(3))),
    ("random_symmetric", lambda: (_random(4, symmetric=True),
                                  _random(5, symmetric=True))),
    ("different_sizes", lambda: (_random(6, size=50), _random(7, size=900))),
)
EPSILONS = (0.0, 0.1234, 0.5, 1.0, 2.0, 4.0, 7.5, 40.0)


class ComposedDeltaTest(parameterized.TestCase):

  @parameterized.named_parameters(*PAIRS)
  def test_is_dp_accountings_direct_sum(self, pair):
    first, second = pair()
    for a, b in ((first, second), (second, first)):
      for epsilon in EPSILONS:
        want = a.get_delta_for_epsilon_for_composed_pld(b, epsilon)
        got = hockey_stick.composed_delta(a, b, epsilon)
        self.assertAlmostEqual(got, want, delta=1e-12 * want + 1e-300,
                               msg=f"epsilon={epsilon}")

  @parameterized.named_parameters(*PAIRS)
  def test_is_the_full_compositions(self, pair):
    # An independent sum: the composition formed (no truncation), then its
    # delta; the two differ by the FFT's error, about 1e-15 absolute.
    first, second = pair()
    composed = first.compose(second, tail_mass_truncation=0.0)
    for epsilon in EPSILONS:
      self.assertAlmostEqual(
          hockey_stick.composed_delta(first, second, epsilon),
          composed.get_delta_for_epsilon(epsilon), delta=1e-12)

  def test_epsilon_on_a_grid_point_and_beyond_every_loss(self):
    first, second = _random(8), _random(9)
    for epsilon in (0.0, 7 * GRID, -0.2, 1e3):
      self.assertAlmostEqual(
          hockey_stick.composed_delta(first, second, epsilon),
          first.get_delta_for_epsilon_for_composed_pld(second, epsilon),
          delta=1e-14)

  def test_other_distributions_are_left_to_dp_accounting(self):
    sparse = pld_lib.from_randomized_response(0.1, 4,
                                              value_discretization_interval=GRID)
    dense = _gaussian(1.0)
    with mock.patch.object(
        pld_pmf.SparsePLDPmf, "get_delta_for_epsilon_for_composed_pld",
        autospec=True, return_value=0.25) as called:
      self.assertEqual(hockey_stick.composed_delta(sparse, dense, 1.0), 0.25)
    self.assertTrue(called.called)

  def test_counting_checks_with_it(self):
    # The counting phase's full check sums here, not in dp_accounting's loop.
    with mock.patch.object(hockey_stick, "composed_delta",
                           wraps=hockey_stick.composed_delta) as summed:
      counting._composed_epsilon(_gaussian(1.0), _gaussian(2.0), 1e-6)
    self.assertTrue(summed.called)
