"""The checked options of an SFP run that are not about privacy.

:func:`triehh.baselines.sfp.sfp_discover` checks its options against each
other and the population once (``triehh.baselines.sfp``'s option checks) and
hands the result, an :class:`Options`, to the clients
(:mod:`triehh.baselines.sfp_clients`) and the server
(:mod:`triehh.baselines.sfp_decode`). This module also names the options'
special values: the fragment alphabets ``"data"`` and ``"paper"``, and the
stitchings.
"""

from __future__ import annotations

import dataclasses
import string

import numpy as np

from triehh.baselines import sfp_encoding

FRAGMENT_ALPHABET_FROM_DATA = "data"
# The paper authors' SFP: fragments over a-z . # / ' (plus the padding).
PAPER_FRAGMENT_ALPHABET = string.ascii_lowercase + ".#/'"
FRAGMENT_ALPHABET_PAPER = "paper"
# Stitching: "drop" strings with a character after a pad (a string no user
# typed); "paper" keeps the part before the first pad, as the authors' code.
STITCHINGS = ("drop", "paper")


def check_switch(name: str, value) -> bool:
  """``value`` if it is ``True`` or ``False``; a TypeError naming it
  otherwise (``"no"`` or ``0.5`` would otherwise count as ``True``)."""
  if not isinstance(value, (bool, np.bool_)):
    raise TypeError(f"{name} must be True or False, got {value!r}")
  return bool(value)


@dataclasses.dataclass(frozen=True)
class Options:
  """The checked options of a run that are not about privacy."""

  top_t: int
  length: int
  num_buckets: int
  fragment_alphabet: str
  word_budget: float
  simulation: str
  chunk_size: int
  num_threads: int
  check_puzzle_hash: bool
  max_candidates: int
  stitching: str

  @property
  def num_positions(self) -> int:
    return self.length // 2

  @property
  def omega(self) -> str:
    """The characters of candidate fragments, the padding symbol last."""
    return self.fragment_alphabet + sfp_encoding.PAD
