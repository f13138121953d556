"""What happened while reading a data file: rows used and rows skipped.

Malformed rows never stop a load: each is skipped and counted under a
reason (see the ``SKIP_*`` constants), with the first few line numbers kept
as examples. A load fails when nothing usable remains, when the file itself
is missing or unreadable, or when the file is mostly malformed:

* more than ``WARN_MALFORMED_SHARE`` (half) of the rows read malformed
  (``MALFORMED_REASONS``: wrong column count, unbalanced quote, undecodable
  bytes, malformed JSON, non-string text, a line over the bound on one
  line) gives a ``UserWarning`` naming the counts;
* more than ``MAX_MALFORMED_SHARE`` (90 %) raises ``DataError``: such a file
  is almost surely in another format than the one asked for (a JSON Lines or
  Parquet file read as Sentiment140 CSV, a TSV read as CSV). The limit is
  the ``max_malformed_share`` argument of ``readers.read`` and field of
  ``loader.DataSpec``; 1.0 accepts any file.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping

# Reasons a row is skipped.
SKIP_COLUMN_COUNT = "wrong column count"
SKIP_UNDECODABLE = "undecodable bytes"
SKIP_EMPTY_TEXT = "empty text"
SKIP_EMPTY_USER = "empty user"
SKIP_BAD_JSON = "malformed JSON line"
SKIP_BAD_TYPE = "text is not a string"
SKIP_BAD_USER = "user id is an object or a list"
SKIP_UNBALANCED_QUOTE = "unbalanced quote"
# A line over input_files.MAX_LINE_BYTES; its examples name the bound.
SKIP_TOO_LONG = "line too long"

MALFORMED_REASONS = (SKIP_COLUMN_COUNT, SKIP_UNDECODABLE, SKIP_BAD_JSON,
                     SKIP_BAD_TYPE, SKIP_BAD_USER, SKIP_UNBALANCED_QUOTE,
                     SKIP_TOO_LONG)
WARN_MALFORMED_SHARE = 0.5
MAX_MALFORMED_SHARE = 0.9
MAX_EXAMPLES = 5


class DataError(ValueError):
  """A data file cannot be used: missing, unreadable, or nothing usable.

  The message is always one line (line breaks of wrapped library errors
  become spaces).
  """

  def __init__(self, message: str):
    super().__init__(" ".join(str(message).split()))


@dataclasses.dataclass
class LoadReport:
  """Counts of the rows read, used and skipped (by reason) from one source.

  Attributes:
    source: the file that was read (as given).
    rows_read: data rows seen, well-formed or not (headers excluded).
    skipped: reason -> number of rows skipped for it.
    examples: reason -> up to ``MAX_EXAMPLES`` places of skipped rows, such
      as ``"line 7"`` (1-based line of the file), ``"row 3"`` (1-based data
      row as parsed, header excluded), or the start of the offending line
      where the parser gives no number.
    num_users: distinct users among the rows used.
    users_without_words: users left with no word after tokenisation (no
      token long enough, or every token had characters outside the
      alphabet); they are not part of the population.
  """

  source: str = ""
  rows_read: int = 0
  skipped: dict[str, int] = dataclasses.field(default_factory=dict)
  examples: dict[str, list[str]] = dataclasses.field(default_factory=dict)
  num_users: int = 0
  users_without_words: int = 0

  @property
  def rows_skipped(self) -> int:
    return sum(self.skipped.values())

  @property
  def rows_used(self) -> int:
    return self.rows_read - self.rows_skipped

  def skip(self, reason: str, count: int = 1,
           where: Iterable[str] = ()) -> None:
    """Records ``count`` rows skipped for ``reason``, with example places."""
    if count <= 0:
      return
    self.skipped[reason] = self.skipped.get(reason, 0) + int(count)
    examples = self.examples.setdefault(reason, [])
    for place in where:
      if len(examples) >= MAX_EXAMPLES:
        break
      examples.append(str(place))

  @property
  def rows_malformed(self) -> int:
    return sum(self.skipped.get(r, 0) for r in MALFORMED_REASONS)

  def summary(self, users: bool = True) -> str:
    """A one-paragraph human-readable account (``users``: with the count of
    users, which is known once the rows are grouped by user)."""
    text = (f"{self.source}: {self.rows_read:,} rows read, "
            f"{self.rows_used:,} used, {self.rows_skipped:,} skipped")
    if self.skipped:
      parts = []
      for reason, count in sorted(self.skipped.items()):
        places = self.examples.get(reason)
        where = f" (e.g. {', '.join(places)})" if places else ""
        parts.append(f"{count:,} {reason}{where}")
      text += ": " + "; ".join(parts)
    if not users:
      return text + "."
    text += f". {self.num_users:,} users"
    if self.users_without_words:
      text += (f", of whom {self.users_without_words:,} have no usable word "
               "and are left out")
    return text + "."

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)

  @classmethod
  def from_dict(cls, values: Mapping) -> "LoadReport":
    """The report ``to_dict`` gave; ``ValueError`` if a field's type is
    wrong (a report read back from a shared cache is input)."""
    if not isinstance(values, Mapping):
      raise ValueError("a load report must be a mapping")
    report = cls(**{f.name: values[f.name] for f in dataclasses.fields(cls)
                    if f.name in values})
    skipped, examples = report.skipped, report.examples
    if not (isinstance(report.source, str)
            and all(_is_count(c) for c in (report.rows_read, report.num_users,
                                           report.users_without_words))
            and isinstance(skipped, dict)
            and all(isinstance(r, str) and _is_count(c)
                    for r, c in skipped.items())
            and isinstance(examples, dict)
            and all(isinstance(r, str) and isinstance(e, list)
                    and all(isinstance(p, str) for p in e)
                    for r, e in examples.items())):
      raise ValueError("a load report field is of the wrong type")
    return report


def _is_count(value) -> bool:
  return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_malformed(report: LoadReport,
                    max_share: float = MAX_MALFORMED_SHARE,
                    hint: str = "") -> None:
  """Warns when most rows are malformed; raises above ``max_share``.

  See the module docstring; ``hint`` (e.g. what the file looks like) is
  added to the message.
  """
  if not 0 <= max_share <= 1:
    raise ValueError(f"max_malformed_share must be in [0, 1], got "
                     f"{max_share}")
  if not report.rows_read:
    return
  share = report.rows_malformed / report.rows_read
  if share <= min(WARN_MALFORMED_SHARE, max_share):
    return
  message = (f"{report.rows_malformed:,} of {report.rows_read:,} rows "
             f"({share:.1%}) of {report.source} are malformed{hint}")
  if share > max_share:
    raise DataError(f"{message}; refusing a file with more than "
                    f"{max_share:.0%} malformed rows (is it in the format "
                    f"asked for?): {report.summary(users=False)}")
  # The rows are not yet grouped by user: no count of users to give.
  warnings.warn(f"{message}: check the file's format. "
                f"{report.summary(users=False)}", UserWarning, stacklevel=3)
