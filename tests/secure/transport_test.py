"""Length-prefixed messages on loopback sockets: round trips, tokens,
bounded waits, one-line errors."""

from __future__ import annotations

import socket
import threading

import pytest

from triehh.secure import transport


def _pair(timeout=2.0):
  a, b = socket.socketpair()
  # Each channel names the other side: a's peer is server 1, b's server 0.
  return (transport.Channel(a, timeout, "server 1"),
          transport.Channel(b, timeout, "server 0"))


def test_a_message_and_its_parts_go_through_and_are_counted():
  left, right = _pair()
  parts = [b"", b"x" * 100_000, bytes(range(256))]
  sender = threading.Thread(target=left.send, args=({"step": 3}, parts))
  sender.start()
  header, got = right.recv()
  sender.join()
  assert header == {"step": 3, "sizes": [0, 100_000, 256]}
  assert got == parts
  assert left.sent == right.received > 100_256


def test_a_silent_peer_is_a_timeout_naming_it():
  left, right = _pair(timeout=0.2)
  with pytest.raises(transport.ProtocolError,
                     match="server 0 sent nothing for 0.2 s"):
    right.recv()
  left.close()
  with pytest.raises(transport.ProtocolError,
                     match="server 0 closed the connection"):
    right.recv()


def test_a_garbled_length_is_refused():
  a, b = socket.socketpair()
  a.sendall((2**40).to_bytes(8, "big"))
  with pytest.raises(transport.ProtocolError, match="a header of"):
    transport.Channel(b, 1.0, "server 1").recv()


def test_listen_accept_and_connect_on_loopback_with_a_token():
  server = transport.listen(2.0)
  host, port = server.getsockname()
  assert host == "127.0.0.1"
  token = transport.new_token()
  got = {}

  def accept():
    got["channel"], got["hello"] = transport.accept(server, token, 2.0,
                                                    "server 1")
  thread = threading.Thread(target=accept)
  thread.start()
  client = transport.connect(port, token, 2.0, "server 0", {"party": 1})
  thread.join()
  assert got["hello"]["party"] == 1
  client.send({"ok": True})
  assert got["channel"].recv()[0]["ok"] is True
  server.close()


def test_a_wrong_token_is_refused():
  server = transport.listen(2.0)
  port = server.getsockname()[1]
  errors = []

  def accept():
    try:
      transport.accept(server, "right", 2.0, "server 1")
    except transport.ProtocolError as error:
      errors.append(str(error))
  thread = threading.Thread(target=accept)
  thread.start()
  transport.connect(port, "wrong", 2.0, "server 0")
  thread.join()
  assert errors == ["a connection claiming to be server 1 sent a wrong token"]
  server.close()


def test_a_port_that_cannot_be_bound_is_one_line(monkeypatch):
  def refuse(*args, **kwargs):
    raise PermissionError(13, "Permission denied")
  monkeypatch.setattr(socket, "create_server", refuse)
  with pytest.raises(transport.ProtocolError,
                     match=r"^cannot bind a port on 127\.0\.0\.1 .*Permission"):
    transport.listen(1.0)
