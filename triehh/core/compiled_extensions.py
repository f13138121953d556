"""The package's optional compiled extensions, loaded where they were built.

``setup.py`` builds them when the package is installed with Cython and a C
compiler (``make setup``); elsewhere (no compiler, Bazel's sandbox, which
runs the sources) they are absent and their callers do the same work with
numpy, with the same results.
"""

from __future__ import annotations

import importlib
import types


def load(name: str) -> types.ModuleType | None:
  """The compiled module ``name`` (dotted), or None where it was not built."""
  try:
    return importlib.import_module(name)
  except ImportError:
    return None
