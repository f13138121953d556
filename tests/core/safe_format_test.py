"""Tests of triehh.core.safe_format: printed parameters keep the guarantee."""

import decimal

import pytest

from triehh.core import safe_format
from triehh.theory import poisson
from triehh.theory import poisson_calibration


@pytest.mark.parametrize("value", [0.1324, 0.13245678, 0.3710537, 1.0 / 3,
                                   2.5e-7, 0.99999, 12345.678])
def test_rates_round_down_and_scales_up(value):
  down, up = safe_format.rate_down(value), safe_format.scale_up(value)
  assert decimal.Decimal(down) <= decimal.Decimal(value)
  assert decimal.Decimal(up) >= decimal.Decimal(value)
  assert float(down) == pytest.approx(value, rel=1e-3)
  assert float(up) == pytest.approx(value, rel=1e-3)


def test_the_printed_rate_meets_the_target():
  # A rate printed to 4 digits the usual way can round up past the target
  # (q = 0.1324 gave delta 1.0088e-12 > 1e-12); the printed one must not.
  for epsilon in (1.0, 2.0, 4.0):
    cal = poisson_calibration.calibrate(10**6, 11, epsilon, 1e-12)
    printed = float(safe_format.rate_down(cal.rate))
    assert poisson.delta_for_epsilon(printed, cal.theta, 11,
                                     epsilon) <= 1e-12
