"""How every experiment driver starts, reports errors and stops.

The convention: bad input (a flag, a file, a parameter outside the theory)
prints one line ``error: ...`` on stderr and exits with status 1, never a
traceback; Ctrl-C exits with status 130 after saying how many runs were
kept (finished runs are already in results.jsonl), or with the one line
``interrupted`` before ``main`` runs (while the driver's modules are
imported, see ``experiments/__init__.py``, or its flags parsed); ``--help``
prints the driver's docstring and every flag it reads (its own and the
shared flags it declares, ``experiments.flags``), each with the driver's
default, help and values: the shared flags are read as the running driver
declares them (``experiments.flags.apply_uses``). A flag of another driver
or a shared flag the driver does not read is refused like an unknown one
(every driver's process defines all the shared flags), with the reason the
driver gives where it gives one; a renamed flag is refused naming its new
name (``error: --users is now --num_users``).
An OSError is said as ``error: <path>: <the system's reason>``
(``experiments.paths``), and a warning as one line ``warning: ...``. The
library names its own arguments in its messages (``data_path``); an error
says them as the flags that set them (``experiments.flags.said_as_flags``:
``--data_path``).

This module defines no flags.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import sys
import textwrap
import types
import warnings
from collections.abc import Callable

from absl import app
from absl import flags
from absl import logging

import experiments
from experiments import flags as shared_flags
from experiments import paths

FLAGS = flags.FLAGS

EXIT_ERROR = 1
EXIT_INTERRUPTED = experiments.EXIT_INTERRUPTED
HELP_ARGS = ("--help", "-help", "-h", "-?", "--helpshort", "--help=true",
             "--helpshort=true")
# Exceptions that mean bad input or an unusable environment, not a bug.
INPUT_ERRORS = (ValueError, OSError, ConnectionError, flags.Error,
                app.UsageError)


def command_line(module_name: str) -> str:
  """``python -m <module_name>`` with this process's arguments, quoted as a
  shell would need them: the command a report says it was produced by."""
  return " ".join(["python -m", module_name,
                   *map(shlex.quote, sys.argv[1:])])


def error_line(err: BaseException) -> str:
  """``error: <message>`` on one line; an OSError names its path and the
  system's reason (``experiments.paths.describe``). A message of the
  project's names the library's arguments as the flags that set them
  (``experiments.flags.said_as_flags``: ``data_path`` -> ``--data_path``);
  the system's reason is left as it is."""
  if isinstance(err, OSError) and err.strerror:
    text = paths.describe(err)
  else:
    text = shared_flags.said_as_flags(
        paths.describe(err) if isinstance(err, OSError) else str(err))
  text = " ".join(text.split()) or type(err).__name__
  return f"error: {text}"


def show_warning(message, category, filename, lineno, file=None,
                 line=None) -> None:
  """``warnings.showwarning`` of the drivers: one line ``warning: ...`` on
  stderr, without the source file and line (a UserWarning is the library
  speaking to the user; other categories are named)."""
  del filename, lineno, line
  text = " ".join(str(message).split())
  if not issubclass(category, UserWarning):
    text = f"{category.__name__}: {text}"
  stream = file if file is not None else sys.stderr
  try:
    stream.write(f"warning: {text}\n")
  except (OSError, ValueError):  # stderr closed: the warning is lost
    pass


def help_text(module: types.ModuleType) -> str:
  """The module's docstring and its key flags (own and adopted), as the
  module reads them (:func:`parse_flags` applies its declarations
  first), then each heading of flags it declares
  (``experiments.flags.add_section``) with its note and flags."""
  doc = (module.__doc__ or "").strip()
  flag_help = FLAGS.module_help(module)
  for section, note in shared_flags.sections(module.__name__).items():
    flag_help += "\n" + _section_help(section, note)
  return f"{doc}\n\nFlags:\n{flag_help}\n\n(--helpfull: every flag, " \
         "including absl's)\n"


def _section_help(section: str, note: str) -> str:
  """A heading of flags: its name, its note wrapped beneath (indented as a
  flag's help is, so that no line of it reads as a flag), its flags."""
  lines = textwrap.wrap(note, 80, initial_indent="    ",
                        subsequent_indent="    ", break_on_hyphens=False)
  flag_help = FLAGS.module_help(section).lstrip("\n")
  head, _, rest = flag_help.partition("\n")
  return "\n".join(["", head or f"{section}:", *lines, *([rest] if rest
                                                          else [])])


def parse_flags(argv: list[str], module: types.ModuleType) -> list[str]:
  """Parses ``argv`` as ``module`` reads the shared flags
  (``experiments.flags.apply_uses``), after the flags ``module`` makes
  when the command line is parsed (its ``prepare_flags``, if any:
  triehh-run's mechanisms' flags); ``--help`` prints :func:`help_text` and
  exits 0.

  A flag that cannot be parsed or fails its check, a renamed flag and a
  flag ``module`` does not read exit with one ``error:`` line and status 1.
  """
  shared_flags.apply_uses(module.__name__)
  prepare = getattr(module, "prepare_flags", None)
  if prepare is not None:  # flags made when the command line is parsed
    prepare()
  if any(arg in HELP_ARGS for arg in argv[1:]):
    sys.stdout.write(help_text(module))
    sys.exit(0)
  try:
    check_flag_files(argv[1:])
    check_renamed_flags(argv)
    check_own_flags(argv, module)
    return FLAGS(argv)
  except flags.Error as err:
    print(error_line(flags.Error(_flag_error_text(err))), file=sys.stderr)
    sys.exit(EXIT_ERROR)


# The largest flag file read: a file of flags is a few hundred bytes.
MAX_FLAG_FILE_BYTES = 1 << 20


def check_flag_files(args: list[str], depth: int = 0) -> None:
  """Raises ``flags.Error`` naming a ``--flagfile`` that is not a readable,
  regular file of UTF-8 text of at most ``MAX_FLAG_FILE_BYTES`` (absl
  would read a device or a pipe until memory ends, or wait on it), and the
  flag files it names in turn."""
  paths = []
  for i, arg in enumerate(args):
    name, eq, value = arg.lstrip("-").partition("=")
    if not arg.startswith("-") or name != "flagfile":
      continue
    if eq:
      paths.append(value)
    elif i + 1 < len(args):
      paths.append(args[i + 1])
  for path in paths:
    text = _flag_file_text(path)
    if depth < 10:
      check_flag_files(text.split(), depth + 1)


def _flag_file_text(path: str) -> str:
  where = f"--flagfile={path}"
  try:
    info = os.stat(path)
  except OSError as err:
    reason = (err.strerror or str(err)).lower()
    raise flags.Error(f"{where}: the flag file cannot be read ({reason})"
                      ) from None
  if not stat.S_ISREG(info.st_mode):
    kind = ("a directory" if stat.S_ISDIR(info.st_mode) else
            "a named pipe" if stat.S_ISFIFO(info.st_mode) else
            "a device or socket")
    raise flags.Error(f"{where}: the flag file is {kind}, not a file")
  if info.st_size > MAX_FLAG_FILE_BYTES:
    raise flags.Error(f"{where}: {info.st_size:,} bytes, more than a flag "
                      f"file holds ({MAX_FLAG_FILE_BYTES:,})")
  try:
    with open(path, "rb") as f:
      data = f.read()
  except OSError as err:
    reason = (err.strerror or str(err)).lower()
    raise flags.Error(f"{where}: the flag file cannot be read ({reason})"
                      ) from None
  try:
    return data.decode("utf-8")
  except UnicodeDecodeError as err:
    raise flags.Error(f"{where}: the flag file is not UTF-8 text (byte "
                      f"0x{data[err.start]:02x} at offset {err.start})"
                      ) from None


# absl's words for a flag file it cannot open: "ERROR:: Unable to open
# flagfile: [Errno 2] No such file or directory: 'x'".
_FLAGFILE = re.compile(r"Unable to open flagfile: \[Errno \d+\] ([^:]+): "
                       r"'(.*)'$")


def _flag_error_text(err: flags.Error) -> str:
  """absl's message without its ``ERROR::`` prefix; a flag file that
  cannot be opened named as ``--flagfile=PATH`` with the reason."""
  text = re.sub(r"^ERROR::\s*", "", str(err).strip())
  found = _FLAGFILE.search(text)
  if found:
    return (f"--flagfile={found.group(2)}: the flag file cannot be read "
            f"({found.group(1).lower()})")
  return text


def _flag_name(arg: str) -> str | None:
  """The name of the flag ``arg`` gives (``--name=v``, ``-name``,
  ``--noname``), or None."""
  if not arg.startswith("-") or arg in ("-", "--"):
    return None
  name = arg.lstrip("-").split("=", 1)[0]
  if name in FLAGS:
    return FLAGS[name].name
  if name.startswith("no") and name[2:] in FLAGS and FLAGS[name[2:]].boolean:
    return FLAGS[name[2:]].name
  return None


def _given_names(argv: list[str]):
  """The names of the flags ``argv`` gives (``--name=v``, ``-name``,
  ``--noname``), up to ``--``."""
  for arg in argv[1:]:
    if arg == "--":
      return
    if arg.startswith("-") and arg != "-":
      yield arg.lstrip("-").split("=", 1)[0]


def check_renamed_flags(argv: list[str]) -> None:
  """Refuses a flag given by its old name
  (``experiments.flags.RENAMED``), naming the new one.

  Raises:
    flags.Error: ``--users is now --num_users``.
  """
  for name in _given_names(argv):
    if name in FLAGS:
      continue
    old = name if name in shared_flags.RENAMED else (
        name[2:] if name.startswith("no") and name[2:] in
        shared_flags.RENAMED else None)
    if old is not None:
      raise flags.Error(f"--{old} is now --{shared_flags.RENAMED[old]}")


def check_own_flags(argv: list[str], module: types.ModuleType) -> None:
  """Refuses a project flag on the command line that is not one of
  ``module``'s key flags (its own, the shared ones it declares, those of
  the drivers it adopts, those under its headings of flags:
  ``experiments.flags.add_section``), as absl refuses an unknown one,
  saying why where the driver says (``experiments.flags.refuse``).

  Raises:
    flags.Error: naming the first such flag.
  """
  own = {flag.name for flag in FLAGS.get_key_flags_for_module(module)}
  for section in shared_flags.sections(module.__name__):
    own |= {flag.name for flag in FLAGS.get_key_flags_for_module(section)}
  why = shared_flags.refused(module.__name__)
  for arg in argv[1:]:
    if arg == "--":
      break
    name = _flag_name(arg)
    if name is None or name in own:
      continue
    if name in why:
      raise flags.Error(f"--{name} is not a flag of this command: "
                        f"{why[name]}")
    if FLAGS.find_module_defining_flag(name, "").startswith("experiments."):
      raise flags.Error(f"--{name} is not a flag of this command (--help "
                        "lists its flags)")


def quiet_libraries() -> None:
  """Hides TensorFlow/TFF INFO logs unless ``--verbosity`` >= 0 asks for them.

  Only a ``--verbosity`` (or ``-v``) given on the command line counts: absl
  sets the flag to 0 itself once ``app.run`` starts.
  """
  verbose = ("verbosity" in FLAGS and FLAGS["verbosity"].present
             and FLAGS["verbosity"].value >= 0)
  # 3: TensorFlow's import-time errors too (cuDNN, cuFFT and cuBLAS
  # factories registered twice); set before any driver imports TensorFlow.
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0" if verbose else "3")
  os.environ.setdefault("GRPC_VERBOSITY", "INFO" if verbose else "ERROR")
  if not verbose:
    logging.set_verbosity(logging.WARNING)
    import logging as std_logging  # pylint: disable=g-import-not-at-top
    for name in ("tensorflow", "tensorflow_federated", "jax"):
      std_logging.getLogger(name).setLevel(std_logging.WARNING)


def call_main(main: Callable[[list[str]], object], argv: list[str], *,
              on_interrupt: Callable[[], str] | None = None) -> int:
  """Runs ``main(argv)``: 0, 1 after an ``error:`` line, or 130 on Ctrl-C."""
  try:
    code = main(argv)
  except KeyboardInterrupt:
    note = on_interrupt() if on_interrupt else ""
    print(f"interrupted{': ' + note if note else ''}", file=sys.stderr)
    return EXIT_INTERRUPTED
  except INPUT_ERRORS as err:
    print(error_line(err), file=sys.stderr)
    return EXIT_ERROR
  return int(code or 0)


def run(main: Callable[[list[str]], object], module: types.ModuleType, *,
        on_interrupt: Callable[[], str] | None = None) -> None:
  """The console entry point of a driver: parse flags, run, exit.

  On Ctrl-C the process ends at once (``os._exit``) with status 130 after
  flushing its output, so no pending TensorFlow task or thread prints a
  traceback on the way out.
  """
  warnings.showwarning = show_warning

  def checked(argv):
    quiet_libraries()
    code = call_main(main, argv, on_interrupt=on_interrupt)
    if code == EXIT_INTERRUPTED:
      sys.stdout.flush()
      sys.stderr.flush()
      os._exit(EXIT_INTERRUPTED)  # pylint: disable=protected-access
    return code

  try:
    app.run(checked, flags_parser=lambda argv: parse_flags(argv, module))
  except KeyboardInterrupt:  # during flag parsing
    experiments.exit_interrupted()
