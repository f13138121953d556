"""Two servers that do not collude: the cryptography of the two-server
heavy-hitter protocol.

:mod:`~triehh.secure.prg` (a PRG from fixed-key AES-128, the `cryptography`
package's), :mod:`~triehh.secure.idpf` (an incremental distributed point
function over Z_2^64), :mod:`~triehh.secure.hashing` (words to public salted
hashes), :mod:`~triehh.secure.plan` (a walk's public plan),
:mod:`~triehh.secure.server` (one server's sums, noise and reconstruction),
:mod:`~triehh.secure.transport`, :mod:`~triehh.secure.server_process` and
:mod:`~triehh.secure.loopback` (two server processes on 127.0.0.1 sockets)
and :mod:`~triehh.secure.protocol` (``run_walk``: clients' keys and the two
servers walking the tree of the clients' points).

Research prototype: no audited constant-time code. The layer sits right above
:mod:`triehh.core` and imports nothing else of triehh.
"""
