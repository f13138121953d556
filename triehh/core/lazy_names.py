"""A package's public names imported on first use (PEP 562).

A package lists each public name with the module that defines it; the
module is imported the first time the name is read, so that importing the
package stays cheap (``triehh`` loads neither numpy nor pandas, and
``triehh.engines.tff`` not TensorFlow, until a name that needs them is
used).

A name whose module needs an extra that is not installed (TensorFlow
Federated's, for ``triehh.engines.tff``) is a one-line
:class:`triehh.core.extras.MissingExtra` naming the extra.

A name that moved out of the package is listed with where it is now: reading
it is an AttributeError that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from triehh.core import extras


def attribute_functions(package: str, namespace: dict[str, Any],
                        public: Mapping[str, str],
                        moved: Mapping[str, str] | None = None
                        ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
  """The ``__getattr__`` and ``__dir__`` of ``package``, whose globals are
  ``namespace`` and whose public names are the keys of ``public`` (each
  mapped to the module that defines it); ``moved`` maps a name that left
  the package to the import that gives it now (not listed by ``__dir__``)."""

  def getattr_(name: str) -> Any:
    module = public.get(name)
    if module is None:
      where = (moved or {}).get(name)
      now = f"; it moved out of {package}: {where}" if where else ""
      raise AttributeError(
          f"module {package!r} has no attribute {name!r}{now}")
    value = getattr(extras.import_module(module, f"{package}.{name}"), name)
    namespace[name] = value
    return value

  def dir_() -> list[str]:
    return sorted(set(namespace) | set(public))

  return getattr_, dir_
