"""Two servers that do not collude: the cryptography of the two-server
heavy-hitter protocol.

:mod:`~triehh.secure.prg` (a PRG from fixed-key AES-128, the `cryptography`
package's), :mod:`~triehh.secure.idpf` (an incremental distributed point
function over Z_2^64), :mod:`~triehh.secure.hashing` (words to public salted
hashes) and :mod:`~triehh.secure.protocol` (clients' keys and the two server
processes that walk the tree of hashes over loopback sockets).

Research prototype: no audited constant-time code. The layer sits right above
:mod:`triehh.core` and imports nothing else of triehh.
"""
