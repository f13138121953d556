"""Where the TFF computations run: TFF's C++ ``worker_binary`` processes.

A :class:`Runtime` is a set of TFF workers (see :mod:`triehh.engines.tff.worker`)
and the TFF execution context that runs computations on them:

* one worker: every call runs on it (a local worker started for the
  process by :func:`local_runtime`, or one given address);
* several workers: TFF's mergeable-computation context
  (``tff.framework.MergeableCompExecutionContext``): each federated call is
  compiled to TFF's ``MergeableCompForm``, the ``CLIENTS``-placed argument is
  split into one consecutive slice per worker, every worker runs the
  computation up to the aggregation on its slice, the partial sums are merged
  and the server update runs on one worker. Sums are exact, so the result
  equals the single-worker run.

Each worker is reached over its own gRPC channel and served by its own
thread, so several workers compute in parallel. Secure aggregation:
computations using ``tff.federated_secure_sum_bitwidth`` run with TFF's test
lowering (``tff.backends.test.replace_secure_intrinsics_with_bodies``), the
only one TFF ships for its C++ runtime: the same sum with the same bit-width
checks, computed in the clear by the worker (there is no cryptographic
protocol in a simulation).

Failures. A worker that cannot be reached within ``connect_timeout`` seconds
when the runtime is created, or whose calls fail (it died, the network
dropped) or take longer than ``rpc_timeout`` seconds, raises
:class:`WorkerError` (a ``ConnectionError``) naming its address; TFF's own
endless retrying of unavailable workers is bypassed, so a run stops within
those bounds; when the runtime started that worker itself and it died, the
error also says how (its exit code or signal, and its last output lines).
Two exceptions, each run again once with a ``RuntimeWarning`` saying why
(the worker returned nothing of the failed attempt, so nothing it drew was
seen): a call whose connection dropped (gRPC's UNAVAILABLE) while the
worker still serves (its channel is ready again within
``connect_timeout``), and a call whose worker, started by this runtime,
crashed (SIGSEGV, SIGBUS, SIGABRT, SIGILL or SIGFPE): a new local worker
takes its place first. TFF 0.87's ``worker_binary``
crashes now and then in ``std::thread::detach`` under
``SequenceExecutor::CreateCall``, the layer every call passes through (a
core dump's backtrace; about 1 call in 50 of 6,000 clients). A computation
that fails on a worker raises :class:`ComputationError` naming it.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import dataclasses
import functools
import gc
import re
import signal
import threading
import warnings
from collections.abc import Mapping, Sequence

import grpc
import tensorflow_federated as tff

from triehh.core import validation
from triehh.engines.tff import worker as worker_lib

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_RPC_TIMEOUT = 300.0

_GRPC_OPTIONS = [
    ("grpc.max_message_length", 2 * 1000 * 1000 * 1000),
    ("grpc.max_receive_message_length", 2 * 1000 * 1000 * 1000),
    ("grpc.max_send_message_length", 2 * 1000 * 1000 * 1000),
]
_ADDRESS = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})$")


class WorkerError(ConnectionError):
  """A TFF worker is unreachable, died or did not answer in time."""

  def __init__(self, address: str, problem: str):
    super().__init__(f"TFF worker {address}: {problem}")
    self.address = address


class ComputationError(RuntimeError):
  """A TFF worker answered, but the computation failed on it."""

  def __init__(self, address: str, problem: str):
    super().__init__(f"TFF worker {address}: computation failed: {problem}")
    self.address = address


# Signals by which a worker that crashed ends: one this runtime started is
# replaced once, and the call that met the crash is run again.
CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT,
                     signal.SIGILL, signal.SIGFPE})

_CONNECTION_CODES = (grpc.StatusCode.UNAVAILABLE,
                     grpc.StatusCode.DEADLINE_EXCEEDED,
                     grpc.StatusCode.CANCELLED)


def parse_workers(workers: str | Sequence[str]) -> list[str]:
  """``"host:port,host:port"`` (or a sequence of them) -> checked addresses."""
  if isinstance(workers, str):
    items = [w.strip() for w in workers.split(",")]
  elif isinstance(workers, (list, tuple)):
    items = [str(w).strip() for w in workers]
  else:
    raise TypeError("workers must be 'host:port,...' or a list of them, got "
                    f"{workers!r:.40}")
  items = [w for w in items if w]
  if not items:
    raise ValueError("no TFF worker address given (expected host:port,...)")
  for item in items:
    match = _ADDRESS.match(item)
    if not match or not 0 < int(match.group(2)) < 65536:
      raise ValueError(f"invalid TFF worker address {item!r}: expected "
                       "host:port with a port in 1..65535")
  if len(set(items)) != len(items):
    raise ValueError(f"a TFF worker is listed twice in {items}")
  return items


class _Deadline(grpc.UnaryUnaryClientInterceptor):
  """Gives every unary gRPC call a deadline."""

  def __init__(self, seconds: float):
    self._seconds = seconds

  def intercept_unary_unary(self, continuation, client_call_details, request):
    if client_call_details.timeout is None:
      client_call_details = client_call_details._replace(timeout=self._seconds)  # pylint: disable=protected-access
    return continuation(client_call_details, request)


def _grpc_call(err: BaseException) -> grpc.Call | None:
  """The gRPC call behind ``err`` (TFF wraps some in RetryableGRPCError)."""
  for cause in (err, err.__cause__, *getattr(err, "args", ())):
    if isinstance(cause, grpc.Call):
      return cause
  return None


def _describe(err: BaseException) -> str:
  cause = _grpc_call(err)
  if cause is not None:
    code = cause.code()
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
      return "no answer within the call deadline (worker hung or too slow)"
    if code == grpc.StatusCode.UNAVAILABLE:
      return f"unavailable (worker died or unreachable): {cause.details()}"
    return f"{code.name}: {cause.details()}"
  if isinstance(err, grpc.RpcError) and not str(err):
    return type(err).__name__
  return str(err)


# Cached for the process, not per context as TFF's own pipeline caches: the
# compiled form depends on the computation alone, and a runtime started
# afresh (other workers, or after a failure) sends the same computations.
@functools.lru_cache(maxsize=256)
def _compile_for_worker(comp):
  comp = tff.backends.test.replace_secure_intrinsics_with_bodies(comp)
  return tff.backends.native.desugar_and_transform_to_native(comp)


def _compile_to_mergeable(comp):
  comp = tff.backends.test.replace_secure_intrinsics_with_bodies(comp)
  return tff.backends.native.compile_to_mergeable_comp_form(comp)


# AsyncExecutionContext.invoke retries unavailable workers forever; its
# undecorated coroutine function makes one attempt.
_INVOKE_ONCE = getattr(tff.framework.AsyncExecutionContext.invoke,
                       "__wrapped__", tff.framework.AsyncExecutionContext.invoke)


class WorkerContext(tff.framework.AsyncContext):
  """An async TFF context running every call on one worker, on its own thread.

  Errors of the worker (and calls over ``rpc_timeout``) raise
  :class:`WorkerError` with its address.
  """

  def __init__(self, address: str, *,
               connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
               rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
               process: worker_lib.WorkerProcess | None = None):
    self._process = process
    self._restarted: list[worker_lib.WorkerProcess] = []
    self._connect_timeout = float(connect_timeout)
    self._rpc_timeout = float(rpc_timeout)
    self._connect(address)
    self._loop = asyncio.new_event_loop()
    self._thread = threading.Thread(target=self._loop.run_forever,
                                    name=f"tff-worker-{address}", daemon=True)
    self._thread.start()
    self.failed = False
    self._closed = False

  def _connect(self, address: str) -> None:
    """Opens the channel to ``address`` and the TFF context over it; the
    context's address once it connected."""
    self._raw_channel = grpc.insecure_channel(address, _GRPC_OPTIONS)
    if not self._ready():
      self._raw_channel.close()
      raise WorkerError(
          address, f"unreachable: no connection within "
          f"{self._connect_timeout:g} s (is a TFF worker, `python -m "
          "triehh.engines.tff.worker`, serving that port?)")
    channel = grpc.intercept_channel(self._raw_channel,
                                     _Deadline(self._rpc_timeout))
    stub = tff.framework.RemoteExecutorGrpcStub(channel)

    def stack_fn(cardinalities):
      if cardinalities.get(tff.CLIENTS) is None:
        cardinalities[tff.CLIENTS] = 0  # the worker needs one
      executor = tff.framework.RemoteExecutor(stub)
      executor.set_cardinalities(cardinalities)
      return executor

    self._context = tff.framework.AsyncExecutionContext(
        executor_fn=tff.framework.ResourceManagingExecutorFactory(stack_fn),
        compiler_fn=_compile_for_worker,
        transform_args=tff.tensorflow.transform_args,
        transform_result=tff.tensorflow.transform_result)
    self.address = address

  def alive(self) -> bool:
    """False if the worker process this runtime started has ended."""
    return self._process is None or self._process.alive()

  async def _invoke_here(self, comp, arg):
    earlier = None  # what ended the first attempt, when it is run again
    while True:
      try:
        return await _INVOKE_ONCE(self._context, comp, arg)
      except (grpc.RpcError, tff.framework.RetryableError) as err:
        call = _grpc_call(err)
        if not (isinstance(err, tff.framework.RetryableError) or call is None
                or call.code() in _CONNECTION_CODES):
          raise ComputationError(self.address, _describe(err)) from err
        problem = self._with_exit(_describe(err))
        where = self.address
        if earlier is None and (self._dropped_but_serving(call)
                                or self._replaced_after_crash()):
          earlier = problem
          again = ("again" if self.address == where
                   else f"again on a new worker, {self.address}")
          warnings.warn(f"TFF worker {where}: {problem}; the call runs "
                        f"{again}", RuntimeWarning, stacklevel=1)
          continue
        self.failed = True
        if earlier is not None:
          problem += f", on a second attempt after: {earlier}"
        raise WorkerError(self.address, problem) from err

  def _with_exit(self, problem: str) -> str:
    """``problem``, and how the worker process ended if this runtime started
    it and it ended (waiting a moment for a dying worker)."""
    report = (self._process.exit_report(wait=2.0)
              if self._process is not None else None)
    return f"{problem}; {report}" if report else problem

  def _replaced_after_crash(self) -> bool:
    """Whether the worker this runtime started crashed (ended by one of
    :data:`CRASHES`) and a new one, started here, now serves in its place.
    TFF's ``worker_binary`` (0.87) rarely crashes in ``std::thread::detach``
    under ``SequenceExecutor::CreateCall``, run for every call."""
    if self._process is None or self._process.exit_signal() not in CRASHES:
      return False
    try:
      new = worker_lib.WorkerProcess()
    except worker_lib.WorkerStartError:
      return False
    self._restarted.append(new)
    self._raw_channel.close()
    self._process = new
    try:
      self._connect(new.address)
    except WorkerError:
      return False
    return True

  def _dropped_but_serving(self, call: grpc.Call | None) -> bool:
    """Whether a call failed because its connection dropped (UNAVAILABLE)
    while the worker still serves: its process (if started here) runs and
    the channel is ready again within ``connect_timeout``. Such a call is
    run again once; the worker returned nothing of the failed attempt."""
    if call is None or call.code() != grpc.StatusCode.UNAVAILABLE:
      return False
    return self.alive() and self._ready()

  def _ready(self) -> bool:
    """Whether the channel connects within ``connect_timeout``."""
    try:
      grpc.channel_ready_future(self._raw_channel).result(
          timeout=self._connect_timeout)
    except grpc.FutureTimeoutError:
      return False
    return True

  def _submit(self, comp, arg) -> concurrent.futures.Future:
    if self._closed:  # its loop is stopped: the call would never run
      raise WorkerError(
          self.address, "closed: this runtime was closed (get_runtime "
          "replaces a runtime whose worker failed); install the one "
          "get_runtime returns now")
    return asyncio.run_coroutine_threadsafe(self._invoke_here(comp, arg),
                                            self._loop)

  def _timed_out(self) -> WorkerError:
    self.failed = True
    return WorkerError(self.address,
                       f"no answer within {self._rpc_timeout:g} s")

  async def invoke(self, comp, arg):
    """Runs ``comp(arg)`` on the worker (``tff.framework.AsyncContext``)."""
    future = self._submit(comp, arg)
    try:
      return await asyncio.wait_for(asyncio.wrap_future(future),
                                    self._rpc_timeout + 5.0)
    except asyncio.TimeoutError:
      future.cancel()
      raise self._timed_out() from None

  def invoke_sync(self, comp, arg):
    """Runs ``comp(arg)`` on the worker and waits for the result."""
    future = self._submit(comp, arg)
    try:
      return future.result(timeout=self._rpc_timeout + 5.0)
    except concurrent.futures.TimeoutError:
      future.cancel()
      raise self._timed_out() from None

  def close(self) -> None:
    """Stops the loop, closes the channel and stops any worker started in
    place of a crashed one."""
    self._closed = True
    if self._loop.is_running():
      self._loop.call_soon_threadsafe(self._loop.stop)
      self._thread.join(timeout=5.0)
    self._raw_channel.close()
    for process in self._restarted:
      process.stop()


class _SingleWorkerContext(tff.framework.SyncContext):
  """A synchronous TFF context over one :class:`WorkerContext`."""

  def __init__(self, worker: WorkerContext):
    self._worker = worker

  def invoke(self, comp, arg):
    return self._worker.invoke_sync(comp, arg)


class Runtime:
  """TFF workers and the execution context that splits clients across them."""

  def __init__(self, addresses: Sequence[str], *,
               connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
               rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
               processes: Sequence[worker_lib.WorkerProcess] = ()):
    if connect_timeout <= 0 or rpc_timeout <= 0:
      raise ValueError("connect_timeout and rpc_timeout must be positive")
    self.addresses = list(addresses)
    self._processes = list(processes)
    started = {p.address: p for p in self._processes}
    self.workers: list[WorkerContext] = []
    try:
      for address in self.addresses:
        self.workers.append(WorkerContext(
            address, connect_timeout=connect_timeout, rpc_timeout=rpc_timeout,
            process=started.get(address)))
    except BaseException:
      self.close()
      raise
    if len(self.workers) == 1:
      self.context = _SingleWorkerContext(self.workers[0])
    else:
      self.context = tff.framework.MergeableCompExecutionContext(
          self.workers, compiler_fn=_compile_to_mergeable)

  @property
  def failed(self) -> bool:
    """Whether a worker failed (the runtime should not be reused)."""
    return any(w.failed or not w.alive() for w in self.workers)

  def install(self):
    """Context manager making this runtime TFF's current context."""
    return tff.framework.get_context_stack().install(self.context)

  def close(self) -> None:
    """Closes the connections and stops the workers this runtime started."""
    for w in self.workers:
      w.close()
    for p in self._processes:
      p.stop()


_RUNTIMES: dict[tuple, Runtime] = {}
_LOCK = threading.Lock()


@dataclasses.dataclass(frozen=True)
class Connection:
  """Where the TFF engines run and how long they wait: their connection
  options (``discover(..., engine="tff", workers=..., rpc_timeout=...)``),
  checked as one before any connection.

  Attributes:
    workers: ``"host:port,..."`` (or a sequence of them) of running TFF
      workers, held as a tuple of checked addresses; None: one local worker
      started for this Python process.
    connect_timeout: seconds to reach a worker.
    rpc_timeout: seconds a worker may take for one call.
  """

  workers: str | Sequence[str] | None = None
  connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
  rpc_timeout: float = DEFAULT_RPC_TIMEOUT

  def __post_init__(self):
    if self.workers is not None:
      object.__setattr__(self, "workers", tuple(parse_workers(self.workers)))
    for name in ("connect_timeout", "rpc_timeout"):
      object.__setattr__(self, name, validation.check_positive(
          f"{name} (seconds)", getattr(self, name)))

  @classmethod
  def of(cls, options: Mapping[str, object], caller: str) -> "Connection":
    """The connection of an engine's keyword ``options`` (its fields), or
    the TypeError Python gives ``caller`` for a keyword it does not take."""
    for name in options:
      if name not in _CONNECTION_FIELDS:
        raise TypeError(f"{caller}() got an unexpected keyword argument "
                        f"{name!r}")
    return cls(**options)

  def runtime(self) -> "Runtime":
    """The (cached) runtime of this connection (:func:`get_runtime`)."""
    return get_runtime(self.workers, connect_timeout=self.connect_timeout,
                       rpc_timeout=self.rpc_timeout)


_CONNECTION_FIELDS = ("workers", "connect_timeout", "rpc_timeout")


def get_runtime(workers: str | Sequence[str] | None = None, *,
                connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                rpc_timeout: float = DEFAULT_RPC_TIMEOUT) -> Runtime:
  """The (cached) runtime for ``workers``; ``None``: one local worker.

  The local worker is started on a free loopback port on first use and
  stopped when Python exits. A runtime whose worker failed is replaced.
  """
  addresses = None if workers is None else tuple(parse_workers(workers))
  connect_timeout = validation.check_positive("connect_timeout (seconds)",
                                              connect_timeout)
  rpc_timeout = validation.check_positive("rpc_timeout (seconds)",
                                          rpc_timeout)
  key = (addresses, connect_timeout, rpc_timeout)
  with _LOCK:
    runtime = _RUNTIMES.get(key)
    if runtime is not None and runtime.failed:
      runtime.close()
      del _RUNTIMES[key]
      runtime = None
    if runtime is None:
      if addresses is None:
        process = worker_lib.WorkerProcess()
        try:
          runtime = Runtime([process.address], processes=[process],
                            connect_timeout=connect_timeout,
                            rpc_timeout=rpc_timeout)
        except BaseException:
          process.stop()
          raise
      else:
        runtime = Runtime(addresses, connect_timeout=connect_timeout,
                          rpc_timeout=rpc_timeout)
      _RUNTIMES[key] = runtime
    return runtime


@atexit.register
def close_all() -> None:
  """Closes every cached runtime (stops the local workers)."""
  with _LOCK:
    for runtime in _RUNTIMES.values():
      runtime.close()
    _RUNTIMES.clear()
  _silence_unused_service_managers()


def _silence_unused_service_managers() -> None:
  """Keeps TFF's never-started local service managers quiet at exit.

  Importing TFF creates a ``ServiceManager`` for its default local context,
  which this project never uses. Its ``__del__`` runs during interpreter
  shutdown, after the ``subprocess`` module is gone, and prints a traceback
  ("'NoneType' object has no attribute 'Popen'") although no process was
  ever started. A manager that started no process has nothing to clean up,
  so its class gets a finaliser that does nothing in that case.
  """
  patched = set()
  for obj in gc.get_objects():
    cls = type(obj)
    if (cls not in patched
        and cls.__qualname__.endswith("<locals>.ServiceManager")
        and cls.__module__.startswith("tensorflow_federated")):
      patched.add(cls)
      original = cls.__del__

      def finalize(self, original=original):
        if getattr(self, "_process", None) is not None:
          original(self)

      cls.__del__ = finalize
