"""TFF worker processes: start TFF's C++ ``worker_binary`` bound to loopback.

TensorFlow Federated's own distributed runtime is its C++ ``worker_binary``
(shipped in the ``tensorflow-federated`` wheel at
``tensorflow_federated/data/worker_binary``): it serves TFF computations over
gRPC. The ``tff`` engine runs its computations on such workers, either one it
starts itself for the run (the default) or several already-running ones
(``--tff_workers=host:port,...``), across which the sampled clients of each
round are split.

Starting workers. On each machine that should run clients::

  python -m triehh.engines.tff.worker --port=8000              # 127.0.0.1:8000 only
  python -m triehh.engines.tff.worker --port=8000 --bind=all   # every interface

then run, e.g.::

  python -m experiments.run_triehh --engine=tff \\
      --tff_workers=127.0.0.1:8000,127.0.0.1:8001

Binding. ``worker_binary`` has no option for the listening address: it
always listens on every interface (``[::]``) and serves any computation sent
to it without authentication. This launcher therefore binds it to loopback by
default, by preloading a tiny ``bind()`` wrapper (built once with the system
C compiler, cached under ``$XDG_CACHE_HOME/triehh`` or ``~/.cache/triehh``,
else in the temporary directory)
that turns wildcard addresses into ``127.0.0.1``. Reach a loopback worker at
``127.0.0.1:PORT`` (or ``localhost:PORT``). ``--bind=all`` exposes the worker
on every interface: only do that on a trusted network or behind a firewall,
and prefer an SSH tunnel to a loopback worker otherwise. Without a C compiler
the loopback binding cannot be made and the launcher stops with an error
instead of silently listening everywhere.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from triehh.core import files
from triehh.core import processes

_BIND_CHOICES = ("loopback", "all")

# Preloaded into worker_binary: rewrites wildcard binds to loopback. An IPv6
# dual-stack wildcard becomes the IPv4-mapped loopback address, so the worker
# answers on 127.0.0.1 (and localhost) only.
_LOOPBACK_SHIM_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
  static bind_fn real_bind = NULL;
  if (real_bind == NULL) real_bind = (bind_fn)dlsym(RTLD_NEXT, "bind");
  if (addr != NULL && addr->sa_family == AF_INET &&
      len >= (socklen_t)sizeof(struct sockaddr_in)) {
    struct sockaddr_in a;
    memcpy(&a, addr, sizeof a);
    if (a.sin_addr.s_addr == htonl(INADDR_ANY)) {
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      return real_bind(fd, (const struct sockaddr *)&a, sizeof a);
    }
  } else if (addr != NULL && addr->sa_family == AF_INET6 &&
             len >= (socklen_t)sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 a;
    memcpy(&a, addr, sizeof a);
    if (IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr)) {
      int v6only = 0;
      socklen_t optlen = sizeof v6only;
      getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &optlen);
      if (v6only) {
        a.sin6_addr = in6addr_loopback;
      } else {
        memset(&a.sin6_addr, 0, sizeof a.sin6_addr);
        a.sin6_addr.s6_addr[10] = 0xff;
        a.sin6_addr.s6_addr[11] = 0xff;
        a.sin6_addr.s6_addr[12] = 127;
        a.sin6_addr.s6_addr[15] = 1;
      }
      return real_bind(fd, (const struct sockaddr *)&a, sizeof a);
    }
  }
  return real_bind(fd, addr, len);
}
"""


class WorkerStartError(RuntimeError):
  """A TFF worker could not be started."""


def binary_path() -> str:
  """Path of TFF's ``worker_binary`` (raises if TFF or the binary is missing)."""
  # find_spec locates the package without importing it (and TensorFlow).
  spec = importlib.util.find_spec("tensorflow_federated")
  if spec is None or not spec.submodule_search_locations:
    raise WorkerStartError(
        "tensorflow-federated is not installed; TFF workers need the tff "
        "extra: pip install 'triehh[tff]'")
  path = os.path.join(list(spec.submodule_search_locations)[0], "data",
                      "worker_binary")
  if not os.path.isfile(path):
    raise WorkerStartError(f"TFF's worker_binary was not found at {path}")
  return path


def _cache_dir() -> str:
  """``$XDG_CACHE_HOME/triehh`` (or ``~/.cache/triehh``), else a temp dir."""
  path = files.default_cache_dir()
  try:
    os.makedirs(path, exist_ok=True)
    if os.access(path, os.W_OK):
      return path
  except OSError:
    pass
  path = os.path.join(tempfile.gettempdir(), f"triehh-{os.getuid()}")
  os.makedirs(path, mode=0o700, exist_ok=True)
  if os.stat(path).st_uid != os.getuid():  # the wrapper is preloaded: own it
    raise WorkerStartError(f"{path} belongs to another user; set "
                           "XDG_CACHE_HOME to a directory of yours")
  return path


def loopback_shim() -> str:
  """Builds (once) and returns the path of the loopback ``bind()`` wrapper."""
  digest = hashlib.sha256(_LOOPBACK_SHIM_SOURCE.encode()).hexdigest()[:16]
  target_dir = _cache_dir()
  target = os.path.join(target_dir, f"loopback_bind_{digest}.so")
  if os.path.isfile(target):
    return target
  if os.environ.get("CC"):
    compiler = shutil.which(os.environ["CC"])
    missing = f"the C compiler $CC={os.environ['CC']!r} was not found"
  else:
    compiler = (shutil.which("cc") or shutil.which("gcc")
                or shutil.which("clang"))
    missing = "no C compiler (cc, gcc or clang) was found"
  if compiler is None:
    raise WorkerStartError(
        f"cannot bind the TFF worker to loopback: {missing} to build the "
        "bind() wrapper; install one, or pass --bind=all to listen on every "
        "interface (then firewall the port)")
  with tempfile.TemporaryDirectory(dir=target_dir) as tmp:
    source = os.path.join(tmp, "loopback_bind.c")
    with open(source, "w", encoding="ascii") as f:
      f.write(_LOOPBACK_SHIM_SOURCE)
    built = os.path.join(tmp, "loopback_bind.so")
    proc = subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", built, source, "-ldl"],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
      raise WorkerStartError(
          f"cannot bind the TFF worker to loopback: building the bind() "
          f"wrapper with {compiler} failed:\n{proc.stderr.strip()}\n"
          "Pass --bind=all to listen on every interface instead.")
    os.replace(built, target)  # atomic: concurrent builders are harmless
  return target


def worker_command(port: int, *, max_concurrent_computation_calls: int = -1
                   ) -> list[str]:
  """The ``worker_binary`` command line serving on ``port``."""
  return [binary_path(), f"--port={int(port)}",
          f"--max_concurrent_computation_calls="
          f"{int(max_concurrent_computation_calls)}"]


def worker_environment(bind: str = "loopback") -> dict[str, str]:
  """The environment for ``worker_binary``: the loopback wrapper preloaded,
  and TensorFlow's oneDNN graph rewrite off unless the caller set it.

  oneDNN's layout pass runs whenever the worker prepares a computation's
  graph, and looks every node up in the kernel registry: on the small integer
  and float graphs TrieHH sends, that was 43 % of the worker's CPU, for
  kernels (convolutions, matrix products) these graphs do not use. Sums of
  one-hot votes are exact either way. ``TF_ENABLE_ONEDNN_OPTS=1`` in the
  environment turns it back on.
  """
  if bind not in _BIND_CHOICES:
    raise ValueError(f"bind must be one of {_BIND_CHOICES}, got {bind!r}")
  env = dict(os.environ)
  env.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
  if bind == "loopback":
    preload = [loopback_shim()]
    if env.get("LD_PRELOAD"):
      preload.append(env["LD_PRELOAD"])
    env["LD_PRELOAD"] = " ".join(preload)
  return env


def _probe_addresses(bind: str) -> list[tuple[int, str]]:
  """The (family, host) a worker bound as ``bind`` would listen on."""
  if bind == "loopback":
    return [(socket.AF_INET, "127.0.0.1")]
  if socket.has_ipv6:
    return [(socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")]
  return [(socket.AF_INET, "0.0.0.0")]


def check_port_free(port: int, bind: str = "loopback") -> None:
  """Raises :class:`WorkerStartError` if something listens on ``port``.

  ``worker_binary`` (gRPC) sets ``SO_REUSEPORT``, so a second worker on a
  port another gRPC server holds would start and share the port with it.
  Binding the port first, without ``SO_REUSEPORT``, finds any listener
  (``SO_REUSEADDR`` only lets connections in TIME_WAIT pass).
  """
  if bind not in _BIND_CHOICES:
    raise ValueError(f"bind must be one of {_BIND_CHOICES}, got {bind!r}")
  for family, host in _probe_addresses(bind):
    try:
      probe = socket.socket(family, socket.SOCK_STREAM)
    except OSError:
      continue  # IPv6 disabled on this host: the IPv4 probe decides
    with probe:
      probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
      if family == socket.AF_INET6:
        probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
      try:
        probe.bind((host, port))
      except OSError as err:
        if family == socket.AF_INET6 and err.errno == errno.EADDRNOTAVAIL:
          continue  # likewise
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        raise WorkerStartError(
            f"port {port} is already in use on {shown} ({err.strerror}); "
            "another TFF worker may be serving there: pick another --port"
        ) from None
      return


# Where the workers of this machine's runs claim their ports.
PORT_CLAIMS = "triehh-tff-ports"
_PICKS = 50


def claim_port(port: int | None) -> tuple[int, int | None]:
  """``(port, fd)``: ``port`` (None: an unused one, from portpicker) and the
  fd holding the flock of its claim file, held while a worker serves it.

  ``worker_binary`` (gRPC) sets ``SO_REUSEPORT``: two runs that picked the
  same free port at once would both start, share it, and take each
  other's calls (a worker that ends closes the other run's connections).
  :func:`check_port_free` sees only a worker already listening; the claim
  also orders two runs starting together. A given port claimed by another
  run is refused; picked ports are picked again. A claim folder this
  user cannot write (another user's) claims nothing (fd None)."""
  folder = os.path.join(tempfile.gettempdir(), PORT_CLAIMS)
  for _ in range(_PICKS if port is None else 1):
    if port is None:
      import portpicker  # pylint: disable=g-import-not-at-top
      chosen = portpicker.pick_unused_port()
    else:
      chosen = int(port)
    try:
      os.makedirs(folder, exist_ok=True)
      fd = files.lock(os.path.join(folder, f"{chosen}.lock"))
    except PermissionError:
      return chosen, None
    if fd is not None:
      return chosen, fd
  if port is not None:
    raise WorkerStartError(
        f"port {port} is claimed by another run's TFF worker on this "
        "machine: pick another port")
  raise WorkerStartError(f"no unclaimed port in {_PICKS} picks")


def _signal_name(number: int) -> str:
  """``SIGKILL`` for 9; ``signal 64`` for a number without a name."""
  try:
    return signal.Signals(number).name
  except ValueError:
    return f"signal {number}"


class WorkerProcess:
  """A ``worker_binary`` child process; stopped by :meth:`stop` or on exit.

  The child also receives SIGTERM if this Python process dies (Linux), so no
  worker outlives the run that started it.
  """

  def __init__(self, port: int | None = None, *, bind: str = "loopback",
               log_path: str | None = None, ready_timeout: float = 60.0):
    self.port, self._port_lock = claim_port(port)
    self.address = f"127.0.0.1:{self.port}"
    self._log = None
    try:
      check_port_free(self.port, bind)
      env = worker_environment(bind)
      # The worker's output is kept (in log_path, else in an anonymous
      # temporary file) so that a worker that dies can say why.
      self._log = (open(log_path, "ab+") if log_path  # pylint: disable=consider-using-with
                   else tempfile.TemporaryFile())
      self._process = subprocess.Popen(  # pylint: disable=consider-using-with
          worker_command(self.port), env=env, stdin=subprocess.DEVNULL,
          stdout=self._log, stderr=self._log,
          preexec_fn=processes.before_exec_die_with_parent(signal.SIGTERM))
    except BaseException:
      self._release_port()
      self._close_log()
      raise
    try:
      self.wait_ready(ready_timeout)
    except BaseException:
      self.stop()
      raise

  @property
  def pid(self) -> int:
    return self._process.pid

  def alive(self) -> bool:
    return self._process.poll() is None

  def exit_report(self, wait: float = 0.0) -> str | None:
    """How the worker ended (its exit code or signal, and the last lines it
    printed), waiting up to ``wait`` seconds for it to end; None while it
    runs."""
    try:
      code = self._process.wait(wait)
    except subprocess.TimeoutExpired:
      return None
    if code < 0:
      name = _signal_name(-code)
      report = f"the worker process was killed by {name}"
      if -code == signal.SIGKILL:
        report += " (the system may have run out of memory)"
    else:
      report = f"the worker process exited with code {code}"
    last = self._last_output()
    return f"{report}; its last output: {last}" if last else report

  def exit_signal(self) -> int | None:
    """The signal that ended the worker, None while it runs or if it
    exited by itself."""
    code = self._process.poll()
    return -code if code is not None and code < 0 else None

  def _last_output(self, lines: int = 3, limit: int = 600) -> str:
    """The worker's last ``lines`` non-empty output lines, joined by " | "
    (at most ``limit`` characters, from the end)."""
    if self._log is None or self._log.closed:
      return ""
    fd = self._log.fileno()
    size = os.fstat(fd).st_size
    tail = os.pread(fd, 8192, max(0, size - 8192)).decode(errors="replace")
    kept = [line.strip() for line in tail.splitlines() if line.strip()]
    return " | ".join(kept[-lines:])[-limit:]

  def _close_log(self) -> None:
    if self._log is not None:
      self._log.close()

  def wait_ready(self, timeout: float) -> None:
    """Waits until the worker accepts gRPC connections."""
    import grpc  # pylint: disable=g-import-not-at-top
    deadline = time.monotonic() + timeout
    channel = grpc.insecure_channel(self.address)
    try:
      while True:
        if not self.alive():
          raise WorkerStartError(
              f"TFF worker on port {self.port} ended before serving (port "
              f"in use?): {self.exit_report()}")
        try:
          grpc.channel_ready_future(channel).result(timeout=0.5)
          return
        except grpc.FutureTimeoutError:
          if time.monotonic() > deadline:
            raise WorkerStartError(
                f"TFF worker on port {self.port} did not start serving "
                f"within {timeout:.0f} s") from None
    finally:
      channel.close()

  def stop(self, timeout: float = 10.0) -> None:
    """Stops the worker (SIGTERM, then SIGKILL after ``timeout``) and
    releases its port's claim."""
    if self._process.poll() is None:
      self._process.terminate()
      try:
        self._process.wait(timeout)
      except subprocess.TimeoutExpired:
        self._process.kill()
        self._process.wait()
    self._release_port()
    self._close_log()

  def _release_port(self) -> None:
    """Releases the port's claim (:func:`claim_port`), once."""
    lock, self._port_lock = self._port_lock, None
    if lock is not None:
      os.close(lock)

  def __enter__(self) -> "WorkerProcess":
    return self

  def __exit__(self, *exc) -> None:
    self.stop()

  def __del__(self):
    try:
      self.stop(timeout=2.0)
    except Exception:  # pylint: disable=broad-except
      pass


def main(argv: Sequence[str] | None = None) -> int:
  """``python -m triehh.engines.tff.worker --port=N [--bind=loopback|all]``."""
  import argparse  # pylint: disable=g-import-not-at-top
  parser = argparse.ArgumentParser(
      prog="python -m triehh.engines.tff.worker",
      description="Serve TFF computations with TFF's C++ worker_binary "
                  "(loopback only unless --bind=all).")
  parser.add_argument("--port", type=int, required=True,
                      help="TCP port to serve on")
  parser.add_argument("--bind", choices=_BIND_CHOICES, default="loopback",
                      help="loopback (default): 127.0.0.1 only; all: every "
                           "interface")
  parser.add_argument("--max_concurrent_computation_calls", type=int,
                      default=-1,
                      help="passed to worker_binary (non-positive: no limit)")
  args = parser.parse_args(argv)
  if not 0 < args.port < 65536:
    parser.error(f"--port must be in 1..65535, got {args.port}")
  try:
    command = worker_command(
        args.port,
        max_concurrent_computation_calls=args.max_concurrent_computation_calls)
    check_port_free(args.port, args.bind)
    env = worker_environment(args.bind)
  except WorkerStartError as err:
    print(f"error: {err}", file=sys.stderr)
    return 1
  where = "127.0.0.1" if args.bind == "loopback" else "every interface"
  print(f"serving TFF computations on {where}, port {args.port}",
        file=sys.stderr, flush=True)
  os.execve(command[0], command, env)  # replaces this process
  return 0  # not reached


if __name__ == "__main__":
  sys.exit(main())
