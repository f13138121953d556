"""Tests of triehh.theory.poisson_calibration: the bound on calibration
time."""

import pytest

from triehh.core import progress
from triehh.theory import poisson
from triehh.theory import poisson_calibration


def _composing(*args, **kwargs):
  raise AssertionError(f"composed a privacy loss: {args} {kwargs}")


@pytest.mark.parametrize("num_levels, discretization, took, most", [
    (64, 1e-3, "10.2 s", 63),
    (1001, 1e-3, "41.8 minutes", 63),
    (650, 1e-2, "10.6 s", 632),  # a coarser grid allows more levels
])
def test_a_calibration_too_long_is_refused_at_once(num_levels,
                                                   discretization, took,
                                                   most, monkeypatch):
  # Refused before any search or composition: each would fail the test
  # here (a spy, not a wall-clock bound, which a loaded machine or a
  # garbage collection in a worker holding TensorFlow can exceed).
  for module, name in ((poisson_calibration, "_search"),
                       (poisson, "run_delta"), (poisson, "run_loss")):
    monkeypatch.setattr(module, name, _composing)
  with pytest.raises(ValueError) as refused:
    poisson_calibration.calibrate(10_000, num_levels, 4.0, 1e-8,
                                  discretization=discretization)
  assert str(refused.value) == (
      f"num_levels={num_levels} levels would take about {took} to calibrate "
      f"for Poisson sampling at discretization={discretization:g} (the "
      "accountant composes each level's privacy loss L times, a cost that "
      "grows as L^2), over the 10 s allowed; use "
      f"num_levels <= {most} (words of at most {most - 1} characters: "
      f"max_length <= {most - 1}) or fixed-size batches "
      '(sampling="fixed"), whose calibration composes nothing')


@pytest.mark.parametrize("num_levels, discretization", [
    (11, 1e-3), (63, 1e-3), (632, 1e-2)])
def test_levels_calibrated_in_time_are_not_refused(num_levels,
                                                   discretization):
  poisson_calibration.check_calibration_time(num_levels, discretization)


def test_a_slow_calibration_says_what_it_does(monkeypatch, capsys):
  # Over progress.SLOW_SECONDS (2 s) a search says on stderr what it calibrates,
  # then how long it took; here every search is "slow".
  monkeypatch.setenv(progress.PROGRESS_AFTER_VARIABLE, "0")
  poisson_calibration.calibrate(10_000, 4, 3.3, 1e-7)
  err = capsys.readouterr().err
  said = "triehh: calibrating Poisson sampling for epsilon=3.3, delta=1e-07 "
  assert f"{said}over L=4 levels ...\n" in err
  assert f"{said}over L=4 levels took " in err


def test_a_fast_calibration_says_nothing(monkeypatch, capsys):
  # A minute is far above this search's time at any load.
  monkeypatch.setenv(progress.PROGRESS_AFTER_VARIABLE, "60")
  poisson_calibration.calibrate(10_000, 3, 3.1, 1e-7)
  assert capsys.readouterr().err == ""
