"""Flag-configured experiment drivers (one binary per experiment).

Ctrl-C before a driver's ``main`` runs, while its modules are still being
imported (which takes seconds), ends the process with status 130 and the one
line ``interrupted`` on stderr, as a later Ctrl-C does (``experiments.cli``),
and not with a traceback. Every driver is run as ``python -m
experiments.<driver>`` or through a console script importing it, and either
way this package is imported first: importing it sets ``sys.excepthook`` so
that an uncaught ``KeyboardInterrupt`` ends the process so. Any other
exception, and any exception in an interactive session, goes to the previous
hook.
"""

import os
import sys
from typing import NoReturn

EXIT_INTERRUPTED = 130


def exit_interrupted() -> NoReturn:
  """Ends the process at once: ``interrupted`` on stderr, status 130.

  A process started by ``multiprocessing`` (a worker still importing the
  driver) ends without a word: its parent speaks for the command.
  """
  process = sys.modules.get("multiprocessing.process")
  if process is None or process.parent_process() is None:
    for stream, text in ((sys.stdout, ""), (sys.stderr, "interrupted\n")):
      try:
        stream.write(text)
        stream.flush()
      except (AttributeError, OSError, ValueError, RuntimeError):
        pass  # no stream, closed, or interrupted mid-write
  os._exit(EXIT_INTERRUPTED)  # pylint: disable=protected-access


def _excepthook(kind, value, traceback, previous=sys.excepthook) -> None:
  interactive = hasattr(sys, "ps1") or sys.flags.interactive
  if issubclass(kind, KeyboardInterrupt) and not interactive:
    exit_interrupted()
  previous(kind, value, traceback)


if getattr(sys.excepthook, "__module__", None) != __name__:
  sys.excepthook = _excepthook
