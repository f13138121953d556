"""TrieHH as TensorFlow Federated computations (the ``tff`` engine).

Modules: :mod:`triehh.engines.tff.process` (the public constructor
:func:`build_triehh_process` and :func:`decode_state`, TrieHH as a TFF
building block), :mod:`triehh.engines.tff.computations` (the federated
process: server state, server update, aggregation),
:mod:`triehh.engines.tff.clients` (client data and client votes),
:mod:`triehh.engines.tff.engine` (the driver behind ``engine="tff"``),
:mod:`triehh.engines.tff.runtime` (TFF workers and execution contexts) and
:mod:`triehh.engines.tff.worker` (``python -m triehh.engines.tff.worker --port=N`` starts a
worker). Importing this package does not import TensorFlow; its modules do
(except :mod:`triehh.engines.tff.worker`), and so does the first use of a
name below.
"""

import os
import sys
import typing

from triehh.core import lazy_names

# TensorFlow's C++ INFO and WARNING lines (grappler's "Starting new session",
# cuDNN registration) would otherwise fill a script's or notebook's output
# on every run; a level the user set is kept, and nothing changes once
# TensorFlow is imported.
if "tensorflow" not in sys.modules:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

if typing.TYPE_CHECKING:  # the same names, for type checkers and import checks
  from triehh.engines.tff.computations import RoundOutput
  from triehh.engines.tff.computations import SecureSumBitwidthFactory
  from triehh.engines.tff.computations import ServerState
  from triehh.engines.tff.process import build_triehh_process
  from triehh.engines.tff.process import decode_frontier
  from triehh.engines.tff.process import decode_state

# Each public name and its module, imported on first use (PEP 562).
_PUBLIC = {
    "RoundOutput": "triehh.engines.tff.computations",
    "SecureSumBitwidthFactory": "triehh.engines.tff.computations",
    "ServerState": "triehh.engines.tff.computations",
    "build_triehh_process": "triehh.engines.tff.process",
    "decode_frontier": "triehh.engines.tff.process",
    "decode_state": "triehh.engines.tff.process",
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = lazy_names.attribute_functions(
    __name__, globals(), _PUBLIC)
