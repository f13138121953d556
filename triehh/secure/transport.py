"""Length-prefixed messages over loopback TCP sockets, with bounded waits.

A message is a small JSON header and binary parts (numpy arrays' bytes,
serialised keys): an 8-byte big-endian header length, the header (its
``"sizes"`` the parts' lengths), then the parts. Nothing is unpickled. A
:class:`Channel` counts the bytes it sends and receives (the protocol's
traffic). Every socket is bound to or connects to 127.0.0.1 only, and every
wait (accept, connect, receive) ends after ``timeout`` seconds with a
:class:`ProtocolError`.

Research prototype: no audited constant-time code, and the loopback
connections are neither encrypted nor authenticated beyond a random token
each side sends first (between two real servers, use TLS).
"""

from __future__ import annotations

import hmac
import json
import secrets
import socket
from collections.abc import Sequence

LOOPBACK = "127.0.0.1"
_LENGTH_BYTES = 8
# The largest header and part a receiver accepts (a wrong length read from
# a broken stream must not allocate terabytes).
MAX_HEADER_BYTES = 2**20
MAX_PART_BYTES = 2**36


class ProtocolError(RuntimeError):
  """A server process or connection of the two-server protocol failed.

  ``frontiers`` holds what the steps done before the failure released (per
  step, ``{candidate: noisy count}``), so that no release is lost.
  """

  def __init__(self, message: str, frontiers: tuple = ()):
    super().__init__(message)
    self.frontiers = tuple(frontiers)


def new_token() -> str:
  """A random token a connecting side sends first (32 hex digits)."""
  return secrets.token_hex(16)


def listen(timeout: float) -> socket.socket:
  """A socket listening on a free port of 127.0.0.1 (the port the
  operating system chose: ``sock.getsockname()[1]``)."""
  try:
    server = socket.create_server((LOOPBACK, 0))
  except OSError as error:
    raise ProtocolError(f"cannot bind a port on {LOOPBACK} ({error}); free a "
                        "port or allow local sockets") from None
  server.settimeout(timeout)
  return server


class Channel:
  """One connection's messages: :meth:`send` and :meth:`recv`, with the
  bytes sent and received so far (``sent``, ``received``)."""

  def __init__(self, sock: socket.socket, timeout: float, peer: str):
    self._sock = sock
    self._sock.settimeout(timeout)
    self.timeout = timeout
    self.peer = peer  # what the other side is, for messages ("server 1")
    self.sent = 0
    self.received = 0

  def send(self, header: dict, parts: Sequence[bytes] = ()) -> None:
    """Sends ``header`` (JSON) and the binary ``parts``."""
    header = dict(header, sizes=[len(part) for part in parts])
    encoded = json.dumps(header).encode("utf-8")
    try:
      self._sock.sendall(len(encoded).to_bytes(_LENGTH_BYTES, "big") + encoded)
      for part in parts:
        self._sock.sendall(part)
    except socket.timeout:
      raise ProtocolError(f"{self.peer} took more than {self.timeout:g} s to "
                          "take a message") from None
    except OSError as error:
      raise ProtocolError(f"the connection to {self.peer} broke ({error})"
                          ) from None
    self.sent += _LENGTH_BYTES + len(encoded) + sum(header["sizes"])

  def recv(self) -> tuple[dict, list[bytes]]:
    """The next message: its header and its parts."""
    length = int.from_bytes(self._exactly(_LENGTH_BYTES), "big")
    if length > MAX_HEADER_BYTES:
      raise ProtocolError(f"{self.peer} sent a header of {length} bytes "
                          f"(at most {MAX_HEADER_BYTES})")
    try:
      header = json.loads(self._exactly(length))
      sizes = [int(size) for size in header.get("sizes", [])]
    except (ValueError, TypeError, AttributeError):
      raise ProtocolError(f"{self.peer} sent a header that is not a JSON "
                          "object with the parts' sizes") from None
    if any(not 0 <= size <= MAX_PART_BYTES for size in sizes):
      raise ProtocolError(f"{self.peer} sent a part size outside [0, "
                          f"{MAX_PART_BYTES}]")
    parts = [self._exactly(size) for size in sizes]
    self.received += _LENGTH_BYTES + length + sum(sizes)
    return header, parts

  def _exactly(self, size: int) -> bytes:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
      try:
        count = self._sock.recv_into(view[got:], size - got)
      except socket.timeout:
        raise ProtocolError(f"{self.peer} sent nothing for {self.timeout:g} s"
                            ) from None
      except OSError as error:
        raise ProtocolError(f"the connection to {self.peer} broke ({error})"
                            ) from None
      if count == 0:
        raise ProtocolError(f"{self.peer} closed the connection")
      got += count
    return bytes(buffer)

  def fileno(self) -> int:
    """The socket's file descriptor (for ``select``)."""
    return self._sock.fileno()

  def close(self) -> None:
    self._sock.close()


def accept(server: socket.socket, token: str, timeout: float,
           peer: str) -> tuple[Channel, dict]:
  """The next connection to ``server`` whose first message carries
  ``token``, and that message's header."""
  try:
    sock, _ = server.accept()
  except socket.timeout:
    raise ProtocolError(f"{peer} did not connect within {timeout:g} s"
                        ) from None
  channel = Channel(sock, timeout, peer)
  header, _ = channel.recv()
  if not hmac.compare_digest(str(header.get("token", "")), token):
    channel.close()
    raise ProtocolError(f"a connection claiming to be {peer} sent a wrong "
                        "token")
  return channel, header


def connect(port: int, token: str, timeout: float, peer: str,
            hello: dict | None = None) -> Channel:
  """A channel to 127.0.0.1:``port``, whose first message is ``token`` (and
  ``hello``)."""
  try:
    sock = socket.create_connection((LOOPBACK, port), timeout=timeout)
  except OSError as error:
    raise ProtocolError(f"cannot connect to {peer} on {LOOPBACK}:{port} "
                        f"({error})") from None
  channel = Channel(sock, timeout, peer)
  channel.send(dict(hello or {}, token=token))
  return channel
