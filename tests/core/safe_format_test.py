"""Tests of triehh.core.safe_format: printed parameters keep the guarantee."""

import pytest

from triehh.core import safe_format
from triehh.theory import poisson
from triehh.theory import poisson_calibration


@pytest.mark.parametrize("value", [0.1324, 0.13245678, 0.3710537, 1.0 / 3,
                                   2.5e-7, 0.99999, 12345.678])
def test_rates_round_down_and_scales_up(value):
  # What matters is the float a reader gets back from the printed text.
  down, up = safe_format.rate_down(value), safe_format.scale_up(value)
  assert float(down) <= value <= float(up)
  assert float(down) == pytest.approx(value, rel=1e-3)
  assert float(up) == pytest.approx(value, rel=1e-3)


@pytest.mark.parametrize("value", [0.7, 0.1, 0.3, 0.1324, 2.5e-7])
def test_a_short_decimal_prints_as_given(value):
  # 0.7 is a float just below 7/10: rounding its exact value down would
  # print 0.6999, though "0.7" reads back as the very float used.
  assert safe_format.rate_down(value) == f"{value:g}"
  assert safe_format.scale_up(value) == f"{value:g}"


def test_a_long_decimal_rounds_to_the_safe_side():
  assert safe_format.rate_down(0.13245678) == "0.1324"
  assert safe_format.scale_up(0.13245678) == "0.1325"
  assert safe_format.rate_down(0.30000000000000004) == "0.3"
  assert safe_format.scale_up(0.30000000000000004) == "0.3001"


def test_the_printed_rate_meets_the_target():
  # A rate printed to 4 digits the usual way can round up past the target
  # (q = 0.1324 gave delta 1.0088e-12 > 1e-12); the printed one must not.
  for epsilon in (1.0, 2.0, 4.0):
    cal = poisson_calibration.calibrate(10**6, 11, epsilon, 1e-12)
    printed = float(safe_format.rate_down(cal.rate))
    assert poisson.delta_for_epsilon(printed, cal.theta, 11,
                                     epsilon) <= 1e-12
