"""Tests of triehh.core.progress: a slow block says so on stderr."""

import time

import pytest

from triehh.core import progress


def test_the_threshold_is_the_environments(monkeypatch):
  monkeypatch.delenv(progress.PROGRESS_AFTER_VARIABLE, raising=False)
  assert progress.slow_seconds() == 2.0
  monkeypatch.setenv(progress.PROGRESS_AFTER_VARIABLE, "inf")
  assert progress.slow_seconds() == float("inf")
  monkeypatch.setenv(progress.PROGRESS_AFTER_VARIABLE, "soon")
  with pytest.raises(ValueError, match="TRIEHH_PROGRESS_AFTER='soon'"):
    progress.slow_seconds()


def test_a_slow_block_says_what_it_does_then_how_long(capsys):
  with progress.said_if_slow("counting sheep", prefix="demo", after=0.0):
    time.sleep(0.01)
  err = capsys.readouterr().err
  assert err.startswith("demo: counting sheep ...\n")
  assert "demo: counting sheep took " in err


def test_a_fast_block_and_an_infinite_threshold_say_nothing(capsys):
  with progress.said_if_slow("counting sheep", after=60.0):
    pass
  with progress.said_if_slow("counting sheep", after=float("inf")):
    time.sleep(0.01)
  assert capsys.readouterr().err == ""
