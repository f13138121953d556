"""A package's public names imported on first use (PEP 562).

A package lists each public name with the module that defines it; the
module is imported the first time the name is read, so that importing the
package stays cheap (``triehh`` loads neither numpy nor pandas, and
``triehh.engines.tff`` not TensorFlow, until a name that needs them is
used).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def attribute_functions(package: str, namespace: dict[str, Any],
                        public: Mapping[str, str]
                        ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
  """The ``__getattr__`` and ``__dir__`` of ``package``, whose globals are
  ``namespace`` and whose public names are the keys of ``public`` (each
  mapped to the module that defines it)."""

  def getattr_(name: str) -> Any:
    module = public.get(name)
    if module is None:
      raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value

  def dir_() -> list[str]:
    return sorted(set(namespace) | set(public))

  return getattr_, dir_
