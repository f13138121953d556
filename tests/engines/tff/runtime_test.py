"""Tests of triehh.engines.tff.runtime: several workers, unreachable and failed ones."""

import contextlib
import os
import signal
import socket
import time

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

from triehh.engines import fast as fast_engine
from triehh.engines.tff import engine
from triehh.engines.tff import runtime
from triehh.engines.tff import worker
from tests.engines.tff import helpers


@contextlib.contextmanager
def _refusing_address():
  """A loopback address bound here but not listening: connections to it are
  refused, and no other process (another test worker) can take its port
  while the test runs."""
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    yield f"127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture(scope="module")
def two_workers():
  workers = [worker.WorkerProcess(), worker.WorkerProcess()]
  yield workers
  for w in workers:
    w.stop()


def test_two_loopback_workers_give_the_single_process_trie(two_workers):
  addresses = ",".join(w.address for w in two_workers)
  cases = [("one", dict(theta=3, batch_size=150, num_sub_rounds=1), 0),
           ("several", dict(theta=2, batch_size=80, num_sub_rounds=3,
                            max_num_prefixes=2, secure_sum=True), 2)]
  for name, kwargs, seed in cases:
    pop = helpers.POPULATIONS[name]
    split = engine.run(pop, rng=np.random.default_rng(seed), workers=addresses,
                       **kwargs)
    single = engine.run(pop, rng=np.random.default_rng(seed), **kwargs)
    helpers.assert_same_trie(split, single)
    kwargs.pop("secure_sum", None)
    helpers.assert_same_trie(
        split, fast_engine.run(pop, rng=np.random.default_rng(seed), **kwargs))
  rt = runtime.get_runtime(addresses)
  assert len(rt.workers) == 2 and not rt.failed


def test_unreachable_worker_is_named_within_the_connect_timeout():
  pop = helpers.POPULATIONS["one"]
  start = time.monotonic()
  with _refusing_address() as address, pytest.raises(
      runtime.WorkerError, match=f"TFF worker {address}: unreachable") as err:
    engine.run(pop, theta=3, batch_size=50, rng=np.random.default_rng(0),
               workers=address, connect_timeout=1.0)
  assert err.value.address == address
  assert isinstance(err.value, ConnectionError)
  assert time.monotonic() - start < 10


def test_a_worker_that_dies_is_named_and_the_run_stops():
  pop = helpers.POPULATIONS["one"]
  kwargs = dict(theta=3, batch_size=50, connect_timeout=2.0)
  doomed = worker.WorkerProcess()
  healthy = worker.WorkerProcess()
  try:
    addresses = f"{healthy.address},{doomed.address}"
    engine.run(pop, rng=np.random.default_rng(0), workers=addresses, **kwargs)
    doomed.stop()
    start = time.monotonic()
    with pytest.raises(runtime.WorkerError,
                       match=f"TFF worker {doomed.address}: unavailable"):
      engine.run(pop, rng=np.random.default_rng(1), workers=addresses,
                 **kwargs)
    assert time.monotonic() - start < 10
    # The failed runtime is not reused: a new one finds the worker gone.
    with pytest.raises(runtime.WorkerError, match="unreachable"):
      engine.run(pop, rng=np.random.default_rng(1), workers=addresses,
                 **kwargs)
  finally:
    doomed.stop()
    healthy.stop()


def test_a_hung_worker_is_named_after_the_call_deadline():
  pop = helpers.POPULATIONS["one"]
  kwargs = dict(theta=3, batch_size=50, rpc_timeout=2.0)
  with worker.WorkerProcess() as stuck:
    engine.run(pop, rng=np.random.default_rng(0), workers=stuck.address,
               **kwargs)
    os.kill(stuck.pid, signal.SIGSTOP)
    try:
      start = time.monotonic()
      with pytest.raises(runtime.WorkerError,
                         match=f"TFF worker {stuck.address}: no answer"):
        engine.run(pop, rng=np.random.default_rng(1), workers=stuck.address,
                   **kwargs)
      assert time.monotonic() - start < 2.0 + 8
    finally:
      os.kill(stuck.pid, signal.SIGCONT)


def test_worker_addresses_are_checked():
  assert runtime.parse_workers("a:1, b.example:65535,[::1]:80") == [
      "a:1", "b.example:65535", "[::1]:80"]
  assert runtime.parse_workers(["h:2"]) == ["h:2"]
  for bad in ("", "host", "host:0", "host:70000", "ho st:1", ":5"):
    with pytest.raises(ValueError):
      runtime.parse_workers(bad)
  with pytest.raises(ValueError, match="listed twice"):
    runtime.parse_workers("h:1,h:1")
