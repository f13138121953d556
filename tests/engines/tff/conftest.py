"""Shared fixtures of the TFF tests: one local TFF worker for the session."""

import pytest


@pytest.fixture(scope="session")
def tff_runtime():
  """The engine's cached local runtime (one worker_binary on loopback)."""
  pytest.importorskip("tensorflow_federated")
  from triehh.engines.tff import runtime  # pylint: disable=g-import-not-at-top
  return runtime.get_runtime()


@pytest.fixture
def tff_context(tff_runtime):
  """Runs the test's TFF computations on the local worker."""
  with tff_runtime.install():
    yield tff_runtime
