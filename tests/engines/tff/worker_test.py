"""Tests of triehh.engines.tff.worker: starting TFF workers bound to loopback."""

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from triehh.engines.tff import worker

grpc = pytest.importorskip("grpc")
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow_federated") is None,
    reason="tensorflow-federated is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _outside_address() -> str | None:
  """A non-loopback IPv4 address of this host (no packet is sent)."""
  with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    try:
      s.connect(("10.255.255.255", 1))
      address = s.getsockname()[0]
    except OSError:
      return None
  return None if address.startswith("127.") else address


def _accepts(host: str, port: int) -> bool:
  try:
    with socket.create_connection((host, port), timeout=2):
      return True
  except OSError:
    return False


def test_worker_serves_on_loopback_only_unless_asked():
  outside = _outside_address()
  if outside is None:
    pytest.skip("this host has no non-loopback IPv4 address")
  with worker.WorkerProcess() as local:
    assert local.address == f"127.0.0.1:{local.port}"
    assert _accepts("127.0.0.1", local.port)
    assert not _accepts(outside, local.port)
  assert not local.alive()
  with worker.WorkerProcess(bind="all") as everywhere:
    assert _accepts(outside, everywhere.port)


def test_command_line_starts_a_worker_and_rejects_bad_flags():
  port = _free_port()
  proc = subprocess.Popen(
      [sys.executable, "-m", "triehh.engines.tff.worker", f"--port={port}"],
      cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  try:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(channel).result(timeout=60)
    channel.close()
  finally:
    proc.terminate()
    _, err = proc.communicate(timeout=30)
  assert f"serving TFF computations on 127.0.0.1, port {port}" in err
  bad = subprocess.run(
      [sys.executable, "-m", "triehh.engines.tff.worker", "--port=0"], cwd=ROOT,
      capture_output=True, text=True, timeout=60)
  assert bad.returncode == 2 and "--port must be in 1..65535" in bad.stderr
  bad = subprocess.run(
      [sys.executable, "-m", "triehh.engines.tff.worker", "--port=1", "--bind=lan"],
      cwd=ROOT, capture_output=True, text=True, timeout=60)
  assert bad.returncode == 2 and "invalid choice: 'lan'" in bad.stderr


def test_a_worker_that_ends_says_how_with_its_last_output(tmp_path):
  log = tmp_path / "worker.log"
  log.write_text("first line\n\nsecond line\nthird line\nfourth line\n")
  with worker.WorkerProcess(log_path=str(log)) as serving:
    assert serving.exit_report() is None  # still running
    os.kill(serving.pid, signal.SIGTERM)
    report = serving.exit_report(wait=10.0)
  assert report == ("the worker process was killed by SIGTERM; its last "
                    "output: second line | third line | fourth line")
  assert "first line" in log.read_text()  # the log is appended to


def test_a_port_in_use_fails_clearly():
  with socket.socket() as busy:
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(worker.WorkerStartError, match=f"port {port}"):
      worker.WorkerProcess(port, ready_timeout=20)
    assert time.monotonic() - start < 20


def test_without_a_c_compiler_loopback_binding_is_refused(tmp_path,
                                                          monkeypatch):
  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no cached wrapper
  monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
  with pytest.raises(worker.WorkerStartError, match="--bind=all"):
    worker.worker_environment("loopback")
  everywhere = worker.worker_environment("all")  # needs no compiler
  assert everywhere.get("LD_PRELOAD") == os.environ.get("LD_PRELOAD")
  with pytest.raises(ValueError, match="bind must be one of"):
    worker.worker_environment("lan")


def _environment_of(pid: int) -> dict[str, str]:
  with open(f"/proc/{pid}/environ", "rb") as f:
    entries = f.read().split(b"\0")
  return dict(e.decode().split("=", 1) for e in entries if b"=" in e)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_the_worker_runs_without_onednn_unless_the_caller_asks(monkeypatch):
  monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
  with worker.WorkerProcess() as plain:  # loopback: nothing else reaches it
    assert _environment_of(plain.pid)["TF_ENABLE_ONEDNN_OPTS"] == "0"
  monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "1")
  assert worker.worker_environment("all")["TF_ENABLE_ONEDNN_OPTS"] == "1"


def _listener(host: str, *, family=socket.AF_INET, reuse_port=True):
  """A listening socket set up as gRPC sets up its own (SO_REUSEPORT)."""
  sock = socket.socket(family, socket.SOCK_STREAM)
  sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
  if reuse_port:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
  sock.bind((host, 0))
  sock.listen()
  return sock


@pytest.mark.parametrize("bind", ["loopback", "all"])
def test_a_port_shared_by_reuse_port_is_refused_before_starting(bind):
  # Two gRPC servers both set SO_REUSEPORT and would both listen.
  with _listener("127.0.0.1") as busy:
    port = busy.getsockname()[1]
    with pytest.raises(worker.WorkerStartError,
                       match=f"port {port} is already in use"):
      worker.check_port_free(port, bind)
    start = time.monotonic()
    with pytest.raises(worker.WorkerStartError, match=f"port {port}"):
      worker.WorkerProcess(port, bind=bind, ready_timeout=20)
    assert time.monotonic() - start < 5  # refused before worker_binary runs
  _assert_free_unless_taken_since(port, bind)  # free again once closed


def _assert_free_unless_taken_since(port: int, bind: str) -> None:
  """check_port_free passes on a closed port, unless another process (a
  test run beside this one) took the port in between: then a plain bind of
  it must fail too, or the check gave a false alarm."""
  try:
    worker.check_port_free(port, bind)
  except worker.WorkerStartError:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
      try:
        sock.bind(("127.0.0.1", port))
      except OSError:
        return  # really taken since
    raise


def test_a_port_held_on_every_interface_is_in_use_for_loopback_too():
  with _listener("0.0.0.0", reuse_port=False) as busy:
    port = busy.getsockname()[1]
    with pytest.raises(worker.WorkerStartError, match=f"port {port}"):
      worker.check_port_free(port, "loopback")


def test_command_line_refuses_a_port_in_use_in_one_line():
  with _listener("127.0.0.1") as busy:
    port = busy.getsockname()[1]
    proc = subprocess.run(
        [sys.executable, "-m", "triehh.engines.tff.worker", f"--port={port}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
  assert proc.returncode == 1
  lines = proc.stderr.strip().splitlines()
  assert len(lines) == 1, proc.stderr
  assert lines[0].startswith(f"error: port {port} is already in use on "
                             "127.0.0.1"), lines
  assert "serving TFF computations" not in proc.stderr


def test_two_runs_never_claim_one_port(monkeypatch, tmp_path):
  """A claimed port is refused to another claim (another run, or this one
  again) until released; a picked port already claimed is picked again;
  a worker holds its port's claim while it serves and releases it."""
  monkeypatch.setattr(worker.tempfile, "gettempdir", lambda: str(tmp_path))
  port = _free_port()
  claimed, fd = worker.claim_port(port)
  assert claimed == port and fd is not None
  with pytest.raises(worker.WorkerStartError,
                     match=f"port {port} is claimed by another run"):
    worker.claim_port(port)
  other = _free_port()
  picks = iter([port, other])
  import portpicker  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(portpicker, "pick_unused_port", lambda: next(picks))
  chosen, other_fd = worker.claim_port(None)
  assert chosen == other
  os.close(other_fd)
  os.close(fd)
  os.close(worker.claim_port(port)[1])  # released: claimable again
  with worker.WorkerProcess(port) as serving:
    with pytest.raises(worker.WorkerStartError, match="claimed"):
      worker.claim_port(port)
    assert serving.alive()
  os.close(worker.claim_port(port)[1])
