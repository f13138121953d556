"""Registers the TensorFlow Federated engine as ``engine="tff"``.

Imported lazily by :mod:`triehh.api` (importing it imports TensorFlow and
TensorFlow Federated); the engine itself is :func:`triehh.tff.engine.run`.
"""

from triehh import api
from triehh.tff.engine import run

api.register_engine("tff", run)

__all__ = ["run"]
