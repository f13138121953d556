"""Keywords the baselines took before their parameters were typed.

:func:`~triehh.baselines.partition_selection.select_words`,
:func:`~triehh.baselines.sfp.sfp_discover` and
:func:`~triehh.baselines.iblt.iblt_discover` take their privacy and the
parameters that change their output's law as one object checked when it is
built (a :class:`~triehh.baselines.partition_selection.
PartitionSelectionTarget`, :class:`~triehh.baselines.sfp.SFPTarget`,
:class:`~triehh.baselines.iblt.IBLTTarget`), as :func:`triehh.discover`
takes a :class:`triehh.Target`. A keyword of the untyped call is refused
with a TypeError naming the field that holds it now (:func:`refuse`).
"""

from __future__ import annotations

from collections.abc import Mapping


def refuse(function: str, keywords: Mapping, moved: Mapping[str, str],
           example: str) -> None:
  """A TypeError for the first of ``keywords`` (what landed in the
  function's ``**moved``): a moved one names its new home (``moved``:
  keyword -> where it is now) and ``example``, a call in the typed style;
  any other is an unexpected keyword, as Python says it."""
  for name in keywords:
    if name in moved:
      raise TypeError(f"{function}: {name}= is {moved[name]}, e.g. "
                      f"{example}")
    raise TypeError(f"{function}() got an unexpected keyword argument "
                    f"{name!r}")


def check_target(function: str, target, kind: type, example: str) -> None:
  """A TypeError unless ``target`` is a ``kind``: a missing target, or
  another kind of object, named with ``example``."""
  if isinstance(target, kind):
    return
  got = ("none was given" if target is None
         else f"got {type(target).__name__} {target!r:.60}")
  raise TypeError(f"{function} takes a triehh.{kind.__name__} as its "
                  f"target, {got}: e.g. {example}")
