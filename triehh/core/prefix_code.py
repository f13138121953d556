"""Words as integers whose bit prefixes are their string prefixes.

The two-server walk (``docs/two-servers.md``) runs over the points of an
incremental distributed point function: integers of ``bits`` bits. A
:class:`PrefixCode` gives each character of a public alphabet of ``A``
characters ``c = ceil(log2(A + 1))`` bits, code 0 being the end (padding)
and codes 1..A the characters in order; a word of at most L characters is
its codes, then zeros to L characters. The first ``c P`` bits of a word are
its first P characters, so a prefix of the walk is a string prefix and the
walk needs no inversion.

A candidate of Q characters is *valid* when no character follows an end
code, no code exceeds A, and it is not the empty word. It ends in ``t``
end codes (:meth:`PrefixCode.padding`): ``t = 0`` is a live prefix (or, at
Q = L, a word of L characters), ``t > 0`` a complete word of ``Q - t``
characters.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

import numpy as np

MAX_BITS = 64


@dataclasses.dataclass(frozen=True)
class PrefixCode:
  """The code of words of at most ``max_length`` characters over
  ``characters`` (module docstring).

  Attributes:
    characters: the public alphabet, in code order (code i + 1).
    max_length: L.
  """

  characters: tuple[str, ...]
  max_length: int

  def __post_init__(self):
    object.__setattr__(self, "characters", tuple(self.characters))
    if not self.characters or len(set(self.characters)) < len(
        self.characters):
      raise ValueError("characters must be distinct, and at least one")
    if not isinstance(self.max_length, int) or self.max_length < 1:
      raise ValueError(f"max_length must be a whole number >= 1, got "
                       f"{self.max_length!r}")
    if self.bits > MAX_BITS:
      raise ValueError(
          f"words of max_length={self.max_length} characters over "
          f"{self.num_symbols} characters take {self.bits} bits "
          f"({self.char_bits} per character), more than the {MAX_BITS} an "
          "IDPF point holds: lower max_length or use a smaller alphabet")

  @property
  def num_symbols(self) -> int:
    """A, the characters (the end code not counted)."""
    return len(self.characters)

  @property
  def char_bits(self) -> int:
    """c, bits per character."""
    return max(1, math.ceil(math.log2(self.num_symbols + 1)))

  @property
  def bits(self) -> int:
    """Bits of a word: ``c L``."""
    return self.char_bits * self.max_length

  def encode(self, words: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, ok)``: each word's ``uint64`` id, and whether it has a code
    (at most L characters, all in the alphabet, not empty); ids of the
    others are 0."""
    index = {ch: i + 1 for i, ch in enumerate(self.characters)}
    words = list(words)
    ids = np.zeros(len(words), dtype=np.uint64)
    ok = np.zeros(len(words), dtype=bool)
    c = self.char_bits
    for i, word in enumerate(words):
      if not 0 < len(word) <= self.max_length:
        continue
      value = 0
      for ch in word:
        code = index.get(ch)
        if code is None:
          break
        value = (value << c) | code
      else:
        ids[i] = value << (c * (self.max_length - len(word)))
        ok[i] = True
    return ids, ok

  def decode(self, ids: Iterable[int], chars: int | None = None
             ) -> list[str]:
    """The strings of ``ids`` of ``chars`` characters (default L), end
    codes dropped."""
    chars = self.max_length if chars is None else chars
    c, mask = self.char_bits, (1 << self.char_bits) - 1
    out = []
    for value in ids:
      value = int(value)
      text = []
      for k in range(chars - 1, -1, -1):
        code = (value >> (c * k)) & mask
        if code == 0:
          break
        text.append(self.characters[code - 1])
      out.append("".join(text))
    return out

  def prefixes(self, ids: np.ndarray, chars: int) -> np.ndarray:
    """The first ``chars`` characters of words ``ids`` (of L characters)."""
    shift = np.uint64(self.char_bits * (self.max_length - chars))
    return np.asarray(ids, dtype=np.uint64) >> shift

  def padding(self, ids: np.ndarray) -> np.ndarray:
    """``int64``: the end codes each id (of any length) ends in; 0 for a
    live prefix (an id of 0 counts as all padding: a huge number)."""
    ids = np.asarray(ids, dtype=np.uint64)
    out = np.zeros(ids.shape, dtype=np.int64)
    mask = np.uint64((1 << self.char_bits) - 1)
    rest = ids.copy()
    alive = rest != 0
    out[~alive] = 1 << 30
    while alive.any():
      end = alive & ((rest & mask) == 0)
      out[end] += 1
      rest = rest >> np.uint64(self.char_bits)
      alive = end
    return out

  def class_sizes(self, from_chars: int, to_chars: int) -> np.ndarray:
    """``int64``-safe Python ints per t = 0..Δ: the valid extensions of
    one live prefix of ``from_chars`` characters to ``to_chars`` ending in
    t end codes (Δ = to_chars - from_chars)."""
    delta = to_chars - from_chars
    sizes = [self.num_symbols ** (delta - t) for t in range(delta + 1)]
    if from_chars == 0:
      sizes[delta] = 0  # the empty word
    return sizes

  def extensions(self, prefixes: Sequence[int], from_chars: int,
                 to_chars: int, t: int | None = None) -> np.ndarray:
    """Every valid extension of the live ``prefixes`` (``uint64``), in
    order; with ``t``, those ending in t end codes only: the explicit
    candidate set (for small walks and the protocol)."""
    delta = to_chars - from_chars
    c = self.char_bits
    classes = range(delta + 1) if t is None else [t]
    tails = []
    for pad in classes:
      if pad == delta and not from_chars:
        continue  # the empty word
      body = np.zeros(1, dtype=np.uint64)
      for _ in range(delta - pad):
        codes = np.arange(1, self.num_symbols + 1, dtype=np.uint64)
        body = ((body[:, None] << np.uint64(c)) | codes[None, :]).reshape(-1)
      tails.append(body << np.uint64(c * pad))
    tails = np.sort(np.concatenate(tails)) if tails else np.zeros(
        0, dtype=np.uint64)
    prefixes = np.asarray(prefixes, dtype=np.uint64)
    out = (prefixes[:, None] << np.uint64(c * delta)) | tails[None, :]
    return out.reshape(-1)

  def random_extensions(self, rng: np.random.Generator, prefixes: np.ndarray,
                        from_chars: int, to_chars: int, t: int
                        ) -> np.ndarray:
    """One uniform valid extension ending in ``t`` end codes per prefix of
    ``prefixes`` (live, ``from_chars`` characters)."""
    delta = to_chars - from_chars
    c = self.char_bits
    out = np.asarray(prefixes, dtype=np.uint64).copy()
    for _ in range(delta - t):
      codes = rng.integers(1, self.num_symbols + 1, size=out.size)
      out = (out << np.uint64(c)) | codes.astype(np.uint64)
    return out << np.uint64(c * t)
