"""Shared fixtures of the TFF tests: the engine's local TFF worker."""

import pytest


@pytest.fixture(scope="session")
def tff_runtime_module():
  """``triehh.engines.tff.runtime``, imported once per process with
  TensorFlow and TFF (15-30 s): the TFF tests share it, and the local worker
  its ``get_runtime`` caches, so they run in one xdist group."""
  pytest.importorskip("tensorflow_federated")
  from triehh.engines.tff import runtime  # pylint: disable=g-import-not-at-top
  return runtime


@pytest.fixture
def tff_runtime(tff_runtime_module):
  """The engine's cached local runtime (one worker_binary on loopback),
  looked up for each test. A worker that crashes is replaced and the call
  run again (once per call); one that fails otherwise fails the test it
  failed in, not every test after it: ``get_runtime`` starts a new runtime
  when the last one failed."""
  return tff_runtime_module.get_runtime()


@pytest.fixture
def tff_context(tff_runtime):
  """Runs the test's TFF computations on the local worker."""
  with tff_runtime.install():
    yield tff_runtime
