"""TrieHH as TensorFlow Federated computations (the ``tff`` engine).

Modules: :mod:`triehh.engines.tff.process` (the public constructor
:func:`build_triehh_process` and :func:`decode_state`, TrieHH as a TFF
building block), :mod:`triehh.engines.tff.computations` (the federated
process: server state, server update, aggregation),
:mod:`triehh.engines.tff.clients` (client data and client votes),
:mod:`triehh.engines.tff.engine` (the driver behind ``engine="tff"``),
:mod:`triehh.engines.tff.runtime` (TFF workers and execution contexts) and
:mod:`triehh.engines.tff.worker` (``python -m triehh.engines.tff.worker``
starts a worker on the port it is given); the noisy trie's :mod:`triehh.engines.tff.noisy_process` (its
process, central or distributed noise) and
:mod:`triehh.engines.tff.noisy_engine` (its driver, behind
``triehh.discover(..., triehh.NoisyTarget(...), engine="tff")``). Importing this package does not import TensorFlow; its modules do
(except :mod:`triehh.engines.tff.worker`), and so does the first use of a
name below.
"""

import os
import sys
import typing

from triehh.core import lazy_names

# TensorFlow's C++ logging would otherwise fill a script's or notebook's
# output: INFO and WARNING lines on every run (grappler's "Starting new
# session", TensorRT not found) and, at import, ERROR lines that are no
# error (the cuDNN, cuFFT and cuBLAS factories registered twice). TensorFlow
# reads the level once, when it is imported: so every library module
# that imports TensorFlow or TFF imports this package first, and a script
# that imports this package before TensorFlow prints none of it (the
# drivers' level, experiments/cli.py). A level the user set is kept; once
# TensorFlow is loaded, nothing is changed.
if "tensorflow" not in sys.modules:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

if typing.TYPE_CHECKING:  # the same names, for type checkers and import checks
  from triehh.engines.tff.computations import RoundOutput
  from triehh.engines.tff.computations import SecureSumBitwidthFactory
  from triehh.engines.tff.computations import ServerState
  from triehh.engines.tff.counting import CountingSpec
  from triehh.engines.tff.process import build_triehh_process
  from triehh.engines.tff.process import decode_frontier
  from triehh.engines.tff.process import decode_state

# Each public name and its module, imported on first use (PEP 562).
_PUBLIC = {
    "RoundOutput": "triehh.engines.tff.computations",
    "SecureSumBitwidthFactory": "triehh.engines.tff.computations",
    "ServerState": "triehh.engines.tff.computations",
    "CountingSpec": "triehh.engines.tff.counting",
    "build_triehh_process": "triehh.engines.tff.process",
    "decode_frontier": "triehh.engines.tff.process",
    "decode_state": "triehh.engines.tff.process",
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = lazy_names.attribute_functions(
    __name__, globals(), _PUBLIC)
