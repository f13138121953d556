"""Old spellings of the theory's public arguments, kept for one release."""

from __future__ import annotations

from collections.abc import Callable
import functools
import warnings

LEVELS_NOTE = ("it counted trie levels (characters + 1 for the end symbol), "
               "while discover(max_length=k) counts characters and runs k + 1 "
               "levels")


def renamed_keyword(old: str, new: str, note: str = "") -> Callable:
  """Lets ``fn(..., old=x)`` mean ``fn(..., new=x)`` with a DeprecationWarning."""

  def decorate(fn: Callable) -> Callable:

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
      if old in kwargs:
        if new in kwargs:
          raise TypeError(f"{fn.__name__}() got both {new}= and its "
                          f"deprecated spelling {old}=")
        warnings.warn(
            f"{fn.__name__}(): {old}= is deprecated and will be removed in "
            f"the next release; use {new}=" + (f" ({note})" if note else ""),
            DeprecationWarning, stacklevel=2)
        kwargs[new] = kwargs.pop(old)
      return fn(*args, **kwargs)

    return wrapper

  return decorate


def warn_attribute(owner: str, old: str, new: str) -> None:
  """The DeprecationWarning of a renamed attribute ``owner.old``."""
  warnings.warn(f"{owner}.{old} is deprecated and will be removed in the next "
                f"release; use {owner}.{new}", DeprecationWarning, stacklevel=3)
