"""The mechanisms by name and by the privacy object that asks for each.

:func:`register` adds a mechanism (a
:class:`~triehh.mechanisms.protocol.MechanismType`); :func:`for_privacy`
finds the one a privacy object asks for, by its type (a number is TrieHH's
target epsilon); :func:`get` finds one by name. The built-in mechanisms
are registered when :mod:`triehh.mechanisms` is imported.
"""

from __future__ import annotations

from triehh.mechanisms import protocol

_BY_NAME: dict[str, protocol.MechanismType] = {}
_BY_TYPE: dict[type, protocol.MechanismType] = {}


def register(mechanism: protocol.MechanismType) -> None:
  """Makes ``mechanism`` available by its name and its privacy types
  (replacing any of the same name).

  Raises:
    TypeError: if it lacks a part of the protocol.
    ValueError: if a privacy type already asks for another mechanism.
  """
  missing = [part for part in ("name", "privacy_types", "default_engine",
                               "calibrate", "guarantee", "dp_event", "run",
                               "release")
             if not hasattr(mechanism, part)]
  if missing:
    raise TypeError(f"{mechanism!r} is not a mechanism: it lacks "
                    f"{', '.join(missing)} (triehh.mechanisms.protocol)")
  if not isinstance(mechanism.name, str) or not mechanism.name:
    raise ValueError(f"a mechanism's name must be a non-empty string, got "
                     f"{mechanism.name!r}")
  for kind in mechanism.privacy_types:
    other = _BY_TYPE.get(kind)
    if other is not None and other.name != mechanism.name:
      raise ValueError(f"{kind.__name__} already asks for the {other.name} "
                       "mechanism")
  old = _BY_NAME.pop(mechanism.name, None)
  if old is not None:
    for kind in old.privacy_types:
      _BY_TYPE.pop(kind, None)
  _BY_NAME[mechanism.name] = mechanism
  for kind in mechanism.privacy_types:
    _BY_TYPE[kind] = mechanism


def unregister(name: str) -> None:
  """Removes mechanism ``name`` (a test's own, say)."""
  old = _BY_NAME.pop(name, None)
  if old is not None:
    for kind in old.privacy_types:
      _BY_TYPE.pop(kind, None)


def names() -> list[str]:
  """The registered mechanisms' names, in registration order."""
  return list(_BY_NAME)


def get(name: str) -> protocol.MechanismType:
  """The mechanism called ``name``; ValueError naming the known ones."""
  if name not in _BY_NAME:
    raise ValueError(f"unknown mechanism {name!r}; choose from "
                     f"{', '.join(_BY_NAME)}")
  return _BY_NAME[name]


def for_privacy(privacy) -> protocol.MechanismType:
  """The mechanism ``privacy`` asks for, found by its type (or a base
  type's); TypeError naming the privacy objects there are."""
  for kind in type(privacy).__mro__:
    if kind in _BY_TYPE:
      return _BY_TYPE[kind]
  known = sorted({kind.__name__ for kind in _BY_TYPE
                  if kind.__module__.startswith("triehh")
                  and kind.__name__[0].isupper()})
  raise TypeError(
      "privacy must be a triehh.Target (epsilon, delta, ...), another of "
      f"the mechanisms' privacy objects ({', '.join(known)}) or a number "
      f"(TrieHH's target epsilon), got {privacy!r:.80}")
