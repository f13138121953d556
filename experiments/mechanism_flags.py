"""The flags of every registered mechanism, made from its privacy object.

``triehh-run --mechanism=NAME`` runs any mechanism registered in
:mod:`triehh.mechanisms`. Its flags are not written out anywhere: they are
made from the fields of its privacy object (a frozen dataclass:
``triehh.NoisyTarget``, ``triehh.SFPTarget``, ...) when the command line is
parsed (:func:`generate`), so a field added to the object is a flag at once,
and a mechanism registered in the process before then has its flags too.

* name: the field's (``false_positive_rate`` -> ``--false_positive_rate``);
* type: the annotation's: ``int`` (also ``2e5``), ``float``, ``str``,
  ``bool``, an enum or a ``Literal`` (one of its values), a tuple of
  numbers or strings (a comma separated list); ``X | None`` is optional,
  its default None;
* default: the field's; a field without one must be given;
* help: the field's entry in the Attributes section of the class docstring.

One name, one meaning: a field named as a flag the driver reads already
(TrieHH's ``--epsilon``, ``--delta``, ``--population_size``,
``--allow_no_guarantee``; the shared flags of ``experiments.flags``, SFP's
``--top_t``, ...) reads that flag, and two mechanisms' fields of one name
read one flag. Such a flag not given stands for the field's default; where
the field has none, or the object cannot be built without it, for the
flag's own (the run's ``--epsilon`` of 4: SFP's central epsilon unless
``--epsilon_local`` is given). A field named as one of the run's own flags
(``--seed``, ``--max_length``, a data flag) is not a flag: it keeps its
default.

A field no flag can hold is read as :data:`TRANSLATIONS` says: IBLT's
``batch`` (a whole number or a ``triehh.Target``) is ``--batch_size``, the
users per round, or else the run's ``--epsilon``/``--delta``, a
``triehh.Target`` whose fixed-size TrieHH calibration on the data sizes the
rounds. Any other such field keeps its default, and a mechanism with one
without a default cannot run from the command line (said when it is
chosen).

Each mechanism's flags are listed under a heading of their own in
``--help`` (``experiments.flags.add_section``), and a flag one mechanism
reads given with another is refused naming the mechanisms that read it
(:func:`check_given`). The privacy object is built from the flags
(:func:`privacy_object`), its checks' refusals said in flag terms
(:func:`in_flag_terms`: ``--false_positive_rate``, not
``false_positive_rate``).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from absl import flags

from experiments import flags as shared_flags

FLAGS = flags.FLAGS
# TrieHH keeps the flags it has (experiments.run_triehh); the others' are
# made here.
TRIEHH = "triehh"
# The kinds of flag a field's type can be.
INT, FLOAT, STR, BOOL, CHOICE, LIST = ("int", "float", "str", "bool",
                                       "choice", "list")
_FLAG_KINDS = {flags.IntegerParser: INT, flags.FloatParser: FLOAT,
               flags.BooleanParser: BOOL, flags.EnumParser: CHOICE}


@dataclasses.dataclass(frozen=True)
class Translation:
  """How a field no flag can hold is read from flags.

  Attributes:
    flags: the flags it reads.
    value: ``() -> the field's value``, from those flags (ValueError naming
      them for a combination that gives none).
    help_text: what the help says of it.
    define: makes those of its flags no driver defines (None: the
      driver's).
  """

  flags: tuple[str, ...]
  value: Callable[[], Any]
  help_text: str
  define: Callable[[], None] | None = None


@dataclasses.dataclass(frozen=True)
class Field:
  """A field of a privacy object and the flag that sets it.

  Attributes:
    name: the field's name.
    flag: the flag that sets it; None: none does (it keeps its default).
    kind: the flag's kind (:data:`INT`, ...), or None.
    required: whether the field has no default.
    default: its default (None where it has none).
    shared: whether the flag is one the driver reads anyway, or another
      mechanism's field of the same name (not made for this field).
    translation: how it is read, where no flag can hold it.
    why_not: why no flag sets it (its type, or its name taken by the run).
    convert: the flag's value -> the field's (an enum's member by name);
      None: as it is.
  """

  name: str
  flag: str | None
  kind: str | None
  required: bool
  default: Any = None
  shared: bool = False
  translation: Translation | None = None
  why_not: str = ""
  convert: Callable[[Any], Any] | None = None

  @property
  def flags(self) -> tuple[str, ...]:
    """The flags it reads."""
    if self.translation is not None:
      return self.translation.flags
    return (self.flag,) if self.flag else ()


@dataclasses.dataclass(frozen=True)
class MechanismFlags:
  """The flags of one mechanism.

  Attributes:
    name: the mechanism's registered name.
    kind: its privacy object's type.
    fields: its fields, in the order of the class.
  """

  name: str
  kind: type
  fields: tuple[Field, ...]

  @property
  def section(self) -> str:
    """The heading its flags are listed under in ``--help``."""
    return section_name(self.name)

  def flags(self) -> list[str]:
    """Every flag it reads, in the order of its fields."""
    out: list[str] = []
    for field in self.fields:
      out += [name for name in field.flags if name not in out]
    return out

  def flag_of(self, field: str) -> str | None:
    """The flag said for ``field`` in messages."""
    for f in self.fields:
      if f.name == field:
        return f.flags[0] if f.flags else None
    return None


def section_name(mechanism: str) -> str:
  """The ``--help`` heading of ``mechanism``'s flags."""
  return f"--mechanism={mechanism}"


# ---- fields that no flag can hold -------------------------------------------


def _iblt_batch() -> Any:
  """IBLTTarget.batch from ``--batch_size``, else ``--epsilon``/``--delta``
  as a fixed-size TrieHH target (module docstring)."""
  from triehh.theory import mechanism as privacy_lib  # pylint: disable=g-import-not-at-top
  if shared_flags.given("batch_size"):
    both = [f"--{name}" for name in ("epsilon", "delta")
            if shared_flags.given(name)]
    if both:
      raise ValueError(f"give --batch_size (IBLT's users per round) or "
                       f"--epsilon/--delta (a TrieHH target whose batch "
                       f"sizes the rounds), not both: {' and '.join(both)} "
                       "given with --batch_size")
    return FLAGS.batch_size
  return privacy_lib.Target(FLAGS.epsilon, delta=FLAGS.delta,
                            sampling="fixed")


UPLOAD_BUDGET_BYTES = "upload_budget_bytes"
UPLOAD_SAMPLING_RATE = "upload_sampling_rate"


def _define_upload_budget_bytes() -> None:
  """Makes ``--upload_budget_bytes`` and ``--upload_sampling_rate`` (once:
  a flagsaver may delete them)."""
  if UPLOAD_BUDGET_BYTES not in FLAGS:
    _define(UPLOAD_BUDGET_BYTES, INT, None,
            "A client's upload budget in bytes per run: the noisy trie's "
            "planned rounds within it (NoisyTarget.upload_budget, "
            "docs/noisy-trie.md); 0 or unset: the classic noisy trie.",
            None, None)
  if UPLOAD_SAMPLING_RATE not in FLAGS:
    _define(UPLOAD_SAMPLING_RATE, FLOAT, None,
            "With --upload_budget_bytes: q, each user's probability of "
            "taking part in a planned round (the budget is then a client's "
            "expected bytes); unset: chosen on the public prior.",
            None, None)


def _upload_budget() -> Any:
  """NoisyTarget.upload_budget from ``--upload_budget_bytes``: an
  UploadBudget of that many bytes per run, None for 0 or unset."""
  from triehh.theory import noisy_plan  # pylint: disable=g-import-not-at-top
  value = FLAGS[UPLOAD_BUDGET_BYTES].value
  rate = FLAGS[UPLOAD_SAMPLING_RATE].value
  if value is None or value == 0:
    if rate is not None:
      raise ValueError(f"--{UPLOAD_SAMPLING_RATE} given without "
                       f"--{UPLOAD_BUDGET_BYTES}: it is the planned rounds' "
                       "sampling rate; give a budget too")
    return None
  if value < 0:
    raise ValueError(f"--{UPLOAD_BUDGET_BYTES} must be a number of bytes "
                     f">= 0 (0: no budget), got {value}")
  if rate is not None and not 0 < rate <= 1:
    raise ValueError(f"--{UPLOAD_SAMPLING_RATE} must be in (0, 1], got "
                     f"{rate}")
  return noisy_plan.UploadBudget(bytes_per_run=value, sampling_rate=rate)


# (privacy type's module.qualname, field) -> how the flags give it.
TRANSLATIONS: dict[tuple[str, str], Translation] = {
    ("triehh.theory.mechanism.NoisyTarget", "upload_budget"): Translation(
        (UPLOAD_BUDGET_BYTES, UPLOAD_SAMPLING_RATE), _upload_budget,
        "upload_budget, a client's upload budget: --upload_budget_bytes "
        "bytes per run (the planned noisy trie; 0 or unset: the classic "
        "one), --upload_sampling_rate its q (unset: chosen on the prior)",
        define=_define_upload_budget_bytes),
    ("triehh.baselines.iblt.IBLTTarget", "batch"): Translation(
        ("batch_size", "epsilon", "delta"), _iblt_batch,
        "batch, the users per round: --batch_size, or else TrieHH's "
        "fixed-size batch for --epsilon/--delta on the data (a "
        "triehh.Target with sampling='fixed'; its privacy only sizes the "
        "rounds)"),
}

# (privacy type's module.qualname, field) -> the flag name the other
# drivers already give that idea (one name per idea across drivers): a
# field's flag is its name unless it is here.
FLAG_NAMES: dict[tuple[str, str], str] = {
    ("triehh.baselines.sfp.SFPTarget", "k"): "cms_k",
    ("triehh.baselines.sfp.SFPTarget", "m"): "cms_m",
    ("triehh.baselines.sfp.SFPTarget", "length"): "sfp_length",
    ("triehh.baselines.partition_selection.PartitionSelectionTarget",
     "strategy"): "partition_strategy",
}

# The run's own flags, which no field of a privacy object can be.
RUN_FLAGS = (*shared_flags.DATA_FLAGS, "max_length", "num_runs", "seed",
             "output_dir", "ks", "show", "words_out", "engine", "mechanism")


# ---- reading the types and docstrings ----------------------------------------


def _kind_of(hint: Any) -> tuple[str | None, bool, Callable | None, Any]:
  """``(kind, optional, item parser, choices)`` of a type annotation; kind
  None when no flag can hold it."""
  optional = False
  args = typing.get_args(hint)
  if typing.get_origin(hint) in (typing.Union, types.UnionType):
    rest = [a for a in args if a is not type(None)]
    optional = len(rest) < len(args)
    if len(rest) == 1:
      hint = rest[0]
    elif set(rest) == {int, float}:
      hint = float
    else:
      return None, optional, None, None
  if hint is bool:
    return BOOL, optional, None, None
  if hint is int:
    return INT, optional, None, None
  if hint is float:
    return FLOAT, optional, None, None
  if hint is str:
    return STR, optional, None, None
  if isinstance(hint, type) and issubclass(hint, enum.Enum):
    return CHOICE, optional, None, [m.name for m in hint]
  if typing.get_origin(hint) is typing.Literal:
    values = typing.get_args(hint)
    if all(isinstance(v, str) for v in values):
      return CHOICE, optional, None, list(values)
    return None, optional, None, None
  if typing.get_origin(hint) is tuple:
    items = typing.get_args(hint)
    if len(items) == 2 and items[1] is Ellipsis and items[0] in (int, float,
                                                                  str):
      return LIST, optional, {int: shared_flags.parse_count, float: float,
                              str: str}[items[0]], None
  return None, optional, None, None


def attribute_help(kind: type) -> dict[str, str]:
  """The Attributes section of ``kind``'s docstring: field -> its text, on
  one line (an entry naming several fields, ``k, m: ...``, gives each)."""
  doc = inspect.cleandoc(kind.__doc__ or "")
  lines = doc.splitlines()
  try:
    start = next(i for i, line in enumerate(lines)
                 if line.strip() == "Attributes:")
  except StopIteration:
    return {}
  base = len(lines[start]) - len(lines[start].lstrip())
  entries: list[list[str]] = []
  indent = None
  for line in lines[start + 1:]:
    if not line.strip():
      if entries:
        break
      continue
    depth = len(line) - len(line.lstrip())
    if depth <= base:
      break
    if indent is None:
      indent = depth
    if depth == indent:
      entries.append([line.strip()])
    elif entries:
      entries[-1].append(line.strip())
  out = {}
  for entry in entries:
    text = " ".join(entry)
    found = re.match(r"^(\w+(?:,\s*\w+)*):\s+(.*)$", text)
    if found:
      for name in re.split(r",\s*", found.group(1)):
        out[name] = found.group(2)
  return out


def plain_text(text: str, kind: type) -> str:
  """A docstring's text as a flag's help: reStructuredText roles and
  literals as plain text, and a ``:data:`NAME``` of ``kind``'s module that
  lists names as those names."""
  module = inspect.getmodule(kind)

  def role(found: re.Match) -> str:
    name = found.group(2).lstrip("~").rsplit(".", 1)[-1]
    value = getattr(module, name, None)
    if found.group(1) == "data" and isinstance(value, (tuple, list, dict,
                                                        frozenset)):
      names = [str(v) for v in value]
      if names and all(re.fullmatch(r"[\w.-]+", v) for v in names):
        return f"{', '.join(names[:-1])} or {names[-1]}" if len(
            names) > 1 else names[0]
    return name

  text = re.sub(r":(\w+):`([^`]+)`", role, text)
  return re.sub(r"``([^`]+)``", r"\1", text)


def privacy_type(mechanism) -> type | None:
  """The privacy object the flags build for ``mechanism``: the first of
  its ``privacy_types`` that is a dataclass (None: no flag can)."""
  for kind in mechanism.privacy_types:
    if dataclasses.is_dataclass(kind):
      return kind
  return None


# ---- making the flags ---------------------------------------------------------

# The flags made here so far, by name (a flagsaver deletes them; then they
# are made again).
_MADE: dict[str, flags.Flag] = {}
# Mechanism name -> its flags, as the last generate() made them.
_CURRENT: dict[str, MechanismFlags] = {}


def _flag_kind(flag: flags.Flag) -> str:
  """The kind of an existing flag (:data:`INT`, ...)."""
  for parser, kind in _FLAG_KINDS.items():
    if isinstance(flag.parser, parser):
      return kind
  if isinstance(flag.parser, (flags.ListParser, shared_flags.ValuesParser,
                              ListParser)):
    return LIST
  return STR


class ListParser(flags.ArgumentParser):
  """A comma separated list of one type (a tuple field): each item parsed
  by ``item``; a value may repeat (unlike ``experiments.flags``' lists of
  a grid's values)."""

  syntactic_help = "a comma separated list"

  def __init__(self, item: Callable[[str], Any]):
    super().__init__()
    self.item = item

  def parse(self, argument) -> tuple:
    if isinstance(argument, (list, tuple)):
      texts = [str(a).strip() for a in argument]
    else:
      texts = ([t.strip() for t in argument.split(",")]
               if argument.strip() else [])
    values = []
    for text in texts:
      try:
        values.append(self.item(text))
      except ValueError:
        raise ValueError(f"{text!r} is not "
                         f"{_ITEM_NAMES.get(self.item, 'a valid item')}"
                         ) from None
    return tuple(values)

  def flag_type(self) -> str:
    return "list"


_ITEM_NAMES = {shared_flags.parse_count: "a whole number", float: "a number",
               str: "a string"}


def _define(name: str, kind: str, default: Any, help_text: str,
            item: Callable | None, choices: list[str] | None) -> flags.Flag:
  """Defines the flag ``--name`` of ``kind`` (filed under this module)."""
  module = __name__
  if kind == INT:
    holder = flags.DEFINE(shared_flags.CountParser(None, None), name, default,
                          help_text, serializer=flags.ArgumentSerializer(),
                          module_name=module)
  elif kind == FLOAT:
    holder = flags.DEFINE(flags.FloatParser(), name, default, help_text,
                          serializer=flags.ArgumentSerializer(),
                          module_name=module)
  elif kind == BOOL:
    holder = flags.DEFINE_boolean(name, default, help_text,
                                  module_name=module)
  elif kind == CHOICE:
    holder = flags.DEFINE_enum(name, default, choices, help_text,
                               module_name=module)
  elif kind == LIST:
    holder = flags.DEFINE(ListParser(item), name,
                          None if default is None else list(default),
                          help_text, serializer=flags.CsvListSerializer(","),
                          module_name=module)
  else:
    holder = flags.DEFINE_string(name, default, help_text,
                                 module_name=module)
  flag = FLAGS[holder.name]
  _MADE[name] = flag
  return flag


def _field(mechanism: str, kind: type, field: dataclasses.Field, hint: Any,
           help_texts: Mapping[str, str], driver_flags: set[str],
           ) -> Field:
  """The flag of one field: shared, made, translated or none."""
  required = (field.default is dataclasses.MISSING
              and field.default_factory is dataclasses.MISSING)
  default = (None if required else field.default
             if field.default is not dataclasses.MISSING
             else field.default_factory())
  qualified = f"{kind.__module__}.{kind.__qualname__}"
  translation = TRANSLATIONS.get((qualified, field.name))
  if translation is not None:
    if translation.define is not None:
      translation.define()
    return Field(field.name, None, None, required, default,
                 translation=translation)
  flag_kind, optional, item, choices = _kind_of(hint)
  if field.name in RUN_FLAGS:
    return Field(field.name, None, None, required, default,
                 why_not=f"--{field.name} is the run's own")
  if flag_kind is None:
    return Field(field.name, None, None, required, default,
                 why_not=f"no flag holds a {_type_name(hint)}")
  name = FLAG_NAMES.get((qualified, field.name), field.name)
  convert = hint_enum(hint)
  if name in FLAGS:
    ours = (FLAGS[name] is _MADE.get(name) or name in driver_flags
            or FLAGS.find_module_defining_flag(name, "")
            == shared_flags.__name__)
    existing = _flag_kind(FLAGS[name])
    if not ours:  # another command's flag, in this process
      return Field(name, None, None, required, default,
                   why_not=f"--{name} is another command's")
    if existing != flag_kind and (existing, flag_kind) != (CHOICE, STR):
      return Field(name, None, None, required, default,
                   why_not=f"--{name}, read by another, is a {existing} "
                   f"flag, and the field a {_type_name(hint)}")
    return Field(field.name, name, flag_kind, required, default,
                 shared=True, convert=convert)
  text = plain_text(help_texts.get(field.name)
                    or f"{kind.__name__}.{field.name}.", kind)
  if required:
    text += f" (required with {section_name(mechanism)})"
  flag_default = None if required or (optional and default is None) else (
      default.name if isinstance(default, enum.Enum) else default)
  _define(name, flag_kind, flag_default, text, item, choices)
  return Field(field.name, name, flag_kind, required, default,
               convert=convert)


def hint_enum(hint: Any) -> Callable[[str], Any] | None:
  """For an enum annotation (or an optional one), its member by name."""
  for kind in (hint, *typing.get_args(hint)):
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
      return lambda name, kind=kind: kind[name]
  return None


def _type_name(hint: Any) -> str:
  text = getattr(hint, "__name__", None) or str(hint)
  return re.sub(r"\b(?:[a-z_]+\.)+", "", text)


def generate(module_name: str) -> dict[str, MechanismFlags]:
  """Makes the flags of every registered mechanism but TrieHH and lists
  them in ``module_name``'s help, one heading each; returns them by
  mechanism (module docstring).

  A field no flag can set (module docstring) keeps its default, and the
  help says why.
  """
  from triehh.mechanisms import protocol  # pylint: disable=g-import-not-at-top
  from triehh.mechanisms import registry  # pylint: disable=g-import-not-at-top
  driver_flags = {flag.name for flag in
                  FLAGS.get_key_flags_for_module(shared_flags.key(
                      module_name))}
  shared_flags.clear_sections(module_name)
  _CURRENT.clear()
  for name in registry.names():
    if name == TRIEHH:
      continue
    mechanism = registry.get(name)
    kind = privacy_type(mechanism)
    if kind is None:
      continue
    hints = protocol.privacy_field_types(kind)
    help_texts = attribute_help(kind)
    fields = tuple(_field(name, kind, f, hints[f.name], help_texts,
                          driver_flags)
                   for f in dataclasses.fields(kind) if f.init)
    made = MechanismFlags(name, kind, fields)
    _CURRENT[name] = made
    own = [f for f in made.flags() if f not in driver_flags]
    shared_flags.add_section(module_name, made.section, own,
                             _note(mechanism, made, driver_flags))
  return dict(_CURRENT)


def _note(mechanism, made: MechanismFlags, driver_flags: set[str]) -> str:
  """The lines under a mechanism's heading: what it is, its privacy
  object, the run's flags it reads too, and its fields read otherwise."""
  kind = made.kind
  public = f"triehh.{kind.__name__}"
  import triehh  # pylint: disable=g-import-not-at-top
  if getattr(triehh, kind.__name__, None) is not kind:
    public = f"{kind.__module__}.{kind.__qualname__}"
  parts = [f"{mechanism.summary or made.name}; its privacy object "
           f"{public}"]
  also = [f"--{name}" for name in made.flags() if name in driver_flags]
  if also:
    parts.append(f"also reads {', '.join(also)}")
  for field in made.fields:
    if field.translation is not None:
      parts.append(field.translation.help_text)
    elif field.flag is None:
      keeps = ("cannot run from the command line: it has no default"
               if field.required else "keeps its default")
      parts.append(f"{field.name} is no flag ({field.why_not}): {keeps}")
  engines = _engines(made.name)
  if engines:
    parts.append(f"engines: {', '.join(engines)} (default "
                 f"{mechanism.default_engine})")
  return "; ".join(parts) + "."


def _engines(mechanism: str) -> list[str]:
  from triehh.engines import registry as engines  # pylint: disable=g-import-not-at-top
  return engines.engines_for(mechanism)


def current() -> dict[str, MechanismFlags]:
  """The mechanisms' flags as :func:`generate` last made them."""
  return dict(_CURRENT)


# ---- reading them ------------------------------------------------------------


def owners(triehh_flags: Iterable[str]) -> dict[str, list[str]]:
  """Flag -> the mechanisms that read it, for the flags some mechanisms
  read and others do not: ``triehh_flags`` (TrieHH's) and every
  mechanism's fields' flags."""
  out: dict[str, list[str]] = {name: [TRIEHH] for name in triehh_flags}
  for made in _CURRENT.values():
    for name in made.flags():
      out.setdefault(name, [])
      if made.name not in out[name]:
        out[name].append(made.name)
  return out


def check_given(mechanism: str, triehh_flags: Iterable[str], *,
                instead: Mapping[str, str] | None = None) -> None:
  """Refuses a flag given that ``mechanism`` does not read but another
  does, naming those that read it (and, for a flag of ``instead``, what
  to do instead).

  Raises:
    ValueError: ``--top_t is a field of --mechanism=sfp, not of
      --mechanism=noisy_trie``.
  """
  triehh_flags = tuple(triehh_flags)
  for name, readers in sorted(owners(triehh_flags).items()):
    if (mechanism in readers or name not in FLAGS
        or not shared_flags.given(name)):
      continue
    said = (readers[0] if len(readers) == 1 else
            f"{', '.join(readers[:-1])} and {readers[-1]}")
    fields = [owner for owner in readers if owner in _CURRENT
              and name in _field_flags(_CURRENT[owner])]
    if len(fields) == len(readers):
      text = (f"--{name} is a field of --mechanism={said}, not of "
              f"--mechanism={mechanism}")
    elif readers == [TRIEHH]:
      text = (f"--{name} is a flag of --mechanism={TRIEHH}, not of "
              f"--mechanism={mechanism}")
    else:
      text = (f"--{name} is read by --mechanism={said}, not by "
              f"--mechanism={mechanism}")
    hint = (instead or {}).get(name)
    raise ValueError(f"{text} ({hint})" if hint else text)


def _field_flags(made: MechanismFlags) -> set[str]:
  """The flags named as one of ``made``'s fields."""
  return {f.flag for f in made.fields if f.flag == f.name}


def _values(made: MechanismFlags) -> tuple[dict, dict]:
  """The privacy object's keyword arguments from the flags, and those
  that a shared flag's own default gives where the field's default is
  None (tried first, left out if the object refuses them)."""
  kwargs, fallback = {}, {}
  for field in made.fields:
    if field.translation is not None:
      kwargs[field.name] = field.translation.value()
      continue
    if field.flag is None:
      if field.required:
        raise ValueError(f"--mechanism={made.name} cannot run from the "
                         f"command line: {made.kind.__name__}.{field.name} "
                         f"has no default and no flag ({field.why_not})")
      continue
    value = FLAGS[field.flag].value
    if isinstance(value, list):
      value = tuple(value)
    if field.convert is not None and value is not None:
      value = field.convert(value)
    if shared_flags.given(field.flag):
      kwargs[field.name] = value
    elif field.required:
      if value is None:
        raise ValueError(f"--mechanism={made.name} needs --{field.flag}")
      kwargs[field.name] = value
    elif field.shared and value is not None and value != field.default:
      fallback[field.name] = value
  return kwargs, fallback


def privacy_object(made: MechanismFlags):
  """The privacy object of ``made``'s mechanism, built (and so checked)
  from the flags.

  Raises:
    ValueError: its refusal, in flag terms (:func:`in_flag_terms`).
  """
  try:
    kwargs, fallback = _values(made)
  except ValueError as err:
    raise ValueError(in_flag_terms(str(err), made)) from None
  try:
    return made.kind(**kwargs, **fallback)
  except (ValueError, TypeError) as err:
    first = err
  if fallback:
    try:
      return made.kind(**kwargs)
    except (ValueError, TypeError):
      pass
  raise ValueError(in_flag_terms(str(first), made)) from None


def in_flag_terms(text: str, made: MechanismFlags) -> str:
  """``text`` with ``made``'s fields named as their flags: a field with an
  underscore in its name, and epsilon and delta, wherever they stand; a
  shorter one (``k``, ``length``, ``rounds``, words of prose too) only as
  the subject of a check (``k must``, ``length (``, ``rounds=``)."""
  for field in made.fields:
    flag = made.flag_of(field.name)
    if flag is None:
      continue
    anywhere = "_" in field.name or field.name in ("epsilon", "delta")
    tail = r"\b" if anywhere else r"(?= must\b| \(|=|\[)"
    text = re.sub(rf"(?<![-\w./`'\"]){re.escape(field.name)}{tail}",
                  f"--{flag}", text)
  return text


def engine_options_taken(mechanism: str, engine: str) -> frozenset[str]:
  """The TFF engine options the flags may give ``mechanism`` on
  ``engine`` (its runner's keywords among ``workers``,
  ``connect_timeout`` and ``rpc_timeout``)."""
  from triehh.engines import registry as engines  # pylint: disable=g-import-not-at-top
  if engine != engines.TFF:
    return frozenset()
  return _TFF_TAKES.get(mechanism, frozenset())


# The TFF options each built-in mechanism's TFF runner takes from the flags
# (the noisy trie's: triehh.mechanisms.noisy_trie.TFF_OPTIONS but its
# noise; IBLT's: iblt_discover's workers).
_TFF_TAKES = {
    "noisy_trie": frozenset({"workers", "connect_timeout", "rpc_timeout"}),
    "iblt": frozenset({"workers"}),
}
