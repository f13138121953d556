"""Tests of triehh.engines.tff.runtime: several workers, unreachable and failed ones."""

import contextlib
import os
import signal
import socket
import threading
import time

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

from triehh.core import population as population_lib
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


def _one():
  """A TFF computation returning 1."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_federated as tff  # pylint: disable=g-import-not-at-top
  return tff.tensorflow.computation(lambda: tf.constant(1))


@pytest.fixture
def started_runtime():
  """(runtime, worker): a runtime over a worker it was given to stop,
  installed. The runtime is closed under gRPC's connectivity-polling
  thread, hence the thread warning these tests ignore (as
  test_a_closed_runtime_refuses_calls_at_once's)."""
  started = worker.WorkerProcess()
  rt = runtime.Runtime([started.address], processes=[started])
  try:
    with rt.install():
      yield rt, started
  finally:
    rt.close()


@pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_started_worker_that_is_killed_says_how_it_ended(started_runtime):
  rt, doomed = started_runtime
  one = _one()
  assert one() == 1
  os.kill(doomed.pid, signal.SIGKILL)
  with pytest.raises(runtime.WorkerError) as err:
    one()
  assert str(err.value).startswith(f"TFF worker {doomed.address}: ")
  assert ("the worker process was killed by SIGKILL (the system may have "
          "run out of memory)") in str(err.value)
  assert rt.failed


@pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_started_worker_that_crashed_is_replaced_and_the_call_run_again(
    started_runtime):
  rt, crashing = started_runtime
  one = _one()
  assert one() == 1
  os.kill(crashing.pid, signal.SIGSEGV)
  with pytest.warns(RuntimeWarning, match=(
      f"^TFF worker {crashing.address}: unavailable .*; the worker process "
      r"was killed by SIGSEGV; the call runs again on a new worker, "
      r"127\.0\.0\.1:\d+$")) as said:
    assert one() == 1  # on a new worker
  assert rt.workers[0].address != crashing.address
  # The warning said (others, such as a ResourceWarning from a collected
  # event loop, may be recorded beside it).
  rerun = [w for w in said if issubclass(w.category, RuntimeWarning)]
  assert len(rerun) == 1
  assert str(rerun[0].message).endswith(rt.workers[0].address)
  assert crashing.exit_signal() == signal.SIGSEGV
  assert not rt.failed
  assert one() == 1
  # Its replacement crashes too: the error says both crashes.
  context = rt.workers[0]
  connect = context._connect  # pylint: disable=protected-access

  def connect_then_crash(address):
    connect(address)
    os.kill(context._process.pid, signal.SIGSEGV)  # pylint: disable=protected-access

  context._connect = connect_then_crash  # pylint: disable=protected-access
  os.kill(context._process.pid, signal.SIGSEGV)  # pylint: disable=protected-access
  with pytest.warns(RuntimeWarning, match="SIGSEGV; the call runs again"), \
      pytest.raises(runtime.WorkerError) as err:
    one()
  assert str(err.value).count("killed by SIGSEGV") == 2
  assert ", on a second attempt after: " in str(err.value)
  assert rt.failed


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


# Closing the channel under gRPC's connectivity-polling thread (subscribed
# by the channel-ready wait) makes that thread raise "Channel closed" after
# the test: gRPC's own race, reported as a thread warning, not a failure of
# what this test checks.
@pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_closed_runtime_refuses_calls_at_once():
  # get_runtime closes a runtime whose worker failed; a context still
  # installed from it must not wait out the call deadline on each call.
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_federated as tff  # pylint: disable=g-import-not-at-top
  one = tff.tensorflow.computation(lambda: tf.constant(1))
  with worker.WorkerProcess() as alive:
    rt = runtime.Runtime([alive.address], rpc_timeout=30.0)
    with rt.install():
      assert one() == 1
    rt.close()
    start = time.monotonic()
    with rt.install(), pytest.raises(
        runtime.WorkerError, match=f"TFF worker {alive.address}: closed"):
      one()
    assert time.monotonic() - start < 5


class _Http2Frames:
  """Follows the frames of a client's HTTP/2 byte stream, chunk by chunk."""

  PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
  HEADERS = 0x1

  def __init__(self):
    self._skip = len(self.PREFACE)  # bytes left before the next frame
    self._head = b""  # a frame header split across chunks

  def opens_a_call(self, data: bytes) -> bool:
    """Whether ``data``, the stream's next chunk, has a HEADERS frame."""
    found, at = False, 0
    while at < len(data):
      if self._skip:
        step = min(self._skip, len(data) - at)
        self._skip -= step
        at += step
        continue
      need = 9 - len(self._head)
      self._head += data[at:at + need]
      at += need
      if len(self._head) == 9:
        length = int.from_bytes(self._head[:3], "big")
        found = found or self._head[3] == self.HEADERS
        self._skip, self._head = length, b""
    return found


class _DroppingProxy:
  """A TCP proxy on loopback to ``target``; while armed, a client's bytes
  that open a call (an HTTP/2 HEADERS frame) close their connection
  instead: a call dropped after it was sent, which gRPC reports as
  UNAVAILABLE (a drop during the opening handshake it retries itself)."""

  def __init__(self, target: str):
    host, port = target.rsplit(":", 1)
    self._target = (host, int(port))
    self._server = socket.create_server(("127.0.0.1", 0))
    self.address = f"127.0.0.1:{self._server.getsockname()[1]}"
    self.armed = 0  # drops left to make
    self.drops = 0
    self._lock = threading.Lock()
    threading.Thread(target=self._accept, daemon=True).start()

  def _accept(self):
    while True:
      try:
        client, _ = self._server.accept()
      except OSError:
        return  # closed
      upstream = socket.create_connection(self._target)
      threading.Thread(target=self._pump, args=(client, upstream, True),
                       daemon=True).start()
      threading.Thread(target=self._pump, args=(upstream, client, False),
                       daemon=True).start()

  def _pump(self, source, sink, from_client):
    frames = _Http2Frames() if from_client else None
    try:
      while data := source.recv(65536):
        if frames is not None and frames.opens_a_call(data):
          with self._lock:
            drop = self.armed > 0
            if drop:
              self.armed -= 1
              self.drops += 1
          if drop:
            break
        sink.sendall(data)
    except OSError:
      pass
    for end in (source, sink):
      with contextlib.suppress(OSError):
        end.shutdown(socket.SHUT_RDWR)
      end.close()

  def close(self):
    self._server.close()


@pytest.fixture
def proxied_worker():
  with worker.WorkerProcess() as serving:
    proxy = _DroppingProxy(serving.address)
    try:
      yield proxy
    finally:
      proxy.close()


@pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_call_whose_connection_drops_is_run_again_once(proxied_worker):
  one = _one()
  rt = runtime.Runtime([proxied_worker.address], connect_timeout=5.0)
  try:
    with rt.install():
      assert one() == 1
      proxied_worker.armed = 1
      with pytest.warns(RuntimeWarning, match=(
          f"^TFF worker {proxied_worker.address}: unavailable .*; the call "
          "runs again$")):
        assert one() == 1  # the dropped call, run again
      assert proxied_worker.drops == 1 and proxied_worker.armed == 0
      assert not rt.failed
      # Dropped on the retry too (and on gRPC's own retries of calls not
      # yet sent): the error names both attempts.
      proxied_worker.armed = 1000
      with pytest.warns(RuntimeWarning, match="the call runs again$"), \
          pytest.raises(runtime.WorkerError) as err:
        one()
    assert proxied_worker.drops >= 3
    assert str(err.value).startswith(
        f"TFF worker {proxied_worker.address}: unavailable")
    assert ", on a second attempt after: unavailable" in str(err.value)
    assert rt.failed
  finally:
    rt.close()


def test_a_crashed_local_worker_is_replaced_by_the_next_lookup():
  # The C++ worker can die under a run (a segfault of its gRPC server):
  # the engine's next get_runtime starts a new one instead of failing on.
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_federated as tff  # pylint: disable=g-import-not-at-top
  one = tff.tensorflow.computation(lambda: tf.constant(1))
  crashed = runtime.get_runtime()
  local = crashed._processes[0]  # pylint: disable=protected-access
  os.kill(local.pid, signal.SIGKILL)
  deadline = time.monotonic() + 10
  while local.alive() and time.monotonic() < deadline:
    time.sleep(0.05)
  assert crashed.failed
  fresh = runtime.get_runtime()
  assert fresh is not crashed and not fresh.failed
  with fresh.install():
    assert one() == 1
  with crashed.install(), pytest.raises(runtime.WorkerError, match="closed"):
    one()


def test_worker_addresses_are_checked():
  assert runtime.parse_workers("a:1, b.example:65535,[::1]:80") == [
      "a:1", "b.example:65535", "[::1]:80"]
  assert runtime.parse_workers(["h:2"]) == ["h:2"]
  for bad in ("", "host", "host:0", "host:70000", "ho st:1", ":5"):
    with pytest.raises(ValueError):
      runtime.parse_workers(bad)
  with pytest.raises(ValueError, match="listed twice"):
    runtime.parse_workers("h:1,h:1")


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(workers=5), TypeError, "workers must be 'host:port,...'"),
    (dict(workers="localhost:1", connect_timeout=float("nan")), ValueError,
     "connect_timeout \\(seconds\\) must be a positive finite number"),
    (dict(workers="localhost:1", rpc_timeout=-1), ValueError,
     "rpc_timeout \\(seconds\\) must be a positive finite number")])
def test_runtime_options_are_named_before_any_connection(kwargs, error,
                                                         match):
  # workers=5 said "'int' object is not iterable"; a nan timeout was taken.
  with pytest.raises(error, match=match):
    runtime.get_runtime(**kwargs)


def test_secure_sum_must_be_a_bool():
  pop = population_lib.Population.from_user_words(["ab", "ab", "cd"],
                                                  max_length=2)
  with pytest.raises(TypeError, match="secure_sum must be True or False"):
    engine.run(pop, theta=1, batch_size=3, rng=np.random.default_rng(0),
               secure_sum="yes")
