"""Symbol alphabets: how characters of words become integer codes.

A word is a lower-cased character sequence. Its *sequence* is its characters
followed by the end symbol (``$`` by default). Characters are coded by their
position in the sorted alphabet, ``0 .. A-1``; the end symbol is coded ``A``,
so every trie level has ``A + 1`` possible extensions of a prefix.

Characters outside a given alphabet are handled by policy
(see :class:`UnknownCharacterPolicy`): ``"error"`` raises a ``ValueError``
naming the character and the word, ``"drop"`` removes the word's user(s)
from the population (they are counted in ``Population.num_dropped_users``).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable

import numpy as np

DEFAULT_END_SYMBOL = "$"


class UnknownCharacterPolicy(str, enum.Enum):
  """What to do with a word holding a character outside the alphabet."""

  ERROR = "error"
  DROP = "drop"


@dataclasses.dataclass(frozen=True)
class Alphabet:
  """An ordered set of characters plus an end-of-sequence symbol."""

  characters: tuple[str, ...]
  end_symbol: str = DEFAULT_END_SYMBOL

  def __post_init__(self):
    if not isinstance(self.characters, tuple):
      raise TypeError("characters must be a tuple of one-character strings, "
                      f"got {type(self.characters).__name__}")
    if not isinstance(self.end_symbol, str):
      raise TypeError("end_symbol must be a one-character string, got "
                      f"{self.end_symbol!r}")
    if len(self.end_symbol) != 1:
      raise ValueError(
          f"end_symbol must be one character, got {self.end_symbol!r}")
    for c in self.characters:
      if not isinstance(c, str):
        raise TypeError(f"characters must be one-character strings, got {c!r}")
      if len(c) != 1:
        raise ValueError(f"alphabet entries must be single characters, got {c!r}")
    if len(set(self.characters)) != len(self.characters):
      raise ValueError("alphabet characters must be distinct")
    if self.end_symbol in self.characters:
      raise ValueError(
          f"the end symbol {self.end_symbol!r} is also an alphabet character; "
          "choose another end_symbol")
    if not self.characters:
      raise ValueError("the alphabet is empty")
    if list(self.characters) != sorted(self.characters):
      raise ValueError("alphabet characters must be sorted; use Alphabet.of()")

  @classmethod
  def of(cls, characters: Iterable[str],
         end_symbol: str = DEFAULT_END_SYMBOL) -> "Alphabet":
    """Builds an alphabet from any iterable of characters (sorted, deduplicated)."""
    if isinstance(characters, (bytes, bytearray)) or not isinstance(
        characters, Iterable):
      raise TypeError("characters must be a string or an iterable of strings, "
                      f"got {characters!r}")
    chars = set()
    for item in characters:
      if not isinstance(item, str):
        raise TypeError(f"characters must hold strings, got {item!r}")
      chars.update(item)
    return cls(tuple(sorted(chars)), end_symbol)

  @classmethod
  def from_words(cls, words: Iterable[str],
                 end_symbol: str = DEFAULT_END_SYMBOL) -> "Alphabet":
    """The alphabet of every character used by ``words``.

    Raises ``ValueError`` if a word contains the end symbol, since it could
    then not be told apart from a terminated sequence.
    """
    chars: set[str] = set()
    for w in words:
      chars.update(w)
    if end_symbol in chars:
      bad = next(w for w in words if end_symbol in w) if isinstance(
          words, (list, tuple)) else "?"
      raise ValueError(
          f"word {bad!r} contains the end symbol {end_symbol!r}; pick another "
          "end_symbol or clean the data")
    return cls(tuple(sorted(chars)), end_symbol)

  @property
  def size(self) -> int:
    """Number of characters, not counting the end symbol."""
    return len(self.characters)

  @property
  def num_extensions(self) -> int:
    """Extensions per prefix: every character plus the end symbol."""
    return len(self.characters) + 1

  @property
  def end_code(self) -> int:
    return len(self.characters)

  def symbols(self) -> tuple[str, ...]:
    """All symbols in code order: characters then the end symbol."""
    return self.characters + (self.end_symbol,)

  def code_table(self) -> dict[str, int]:
    return {c: i for i, c in enumerate(self.characters)}

  def decode(self, codes: np.ndarray | Iterable[int]) -> str:
    """Turns a code sequence back into a string (end symbol included if coded)."""
    symbols = self.symbols()
    return "".join(symbols[int(c)] for c in codes if int(c) >= 0)

  def decode_word(self, codes: np.ndarray | Iterable[int]) -> str:
    """Like :meth:`decode` but drops a trailing end symbol."""
    text = self.decode(codes)
    return text[:-1] if text.endswith(self.end_symbol) else text
