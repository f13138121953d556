"""Shared fixtures of the TFF tests: the engine's local TFF worker."""

import pytest


@pytest.fixture
def tff_runtime():
  """The engine's cached local runtime (one worker_binary on loopback),
  looked up for each test: ``get_runtime`` starts a new worker when the last
  one failed, so a worker that crashes fails the test it crashed in, not
  every test after it."""
  pytest.importorskip("tensorflow_federated")
  from triehh.engines.tff import runtime  # pylint: disable=g-import-not-at-top
  return runtime.get_runtime()


@pytest.fixture
def tff_context(tff_runtime):
  """Runs the test's TFF computations on the local worker."""
  with tff_runtime.install():
    yield tff_runtime
