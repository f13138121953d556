"""What every mechanism's run returns: a :class:`Release`.

A release is the words a mechanism publishes and the guarantee that covers
them, with the parameters it ran with, its wall time, per-round statistics
and, kept apart, what the guarantee does not cover. TrieHH
(:class:`~triehh.core.results.DiscoveryResult`), the noisy trie, partition
selection, SFP and IBLT each return their own result type, and each of them
is a :class:`Release` (a structural protocol: ``isinstance(result,
Release)`` holds for every one), so code written against a release runs on
any mechanism; the extra fields of a mechanism's own type (TrieHH's trie,
SFP's fragments) stay where they are. TrieHH, the noisy trie, partition
selection and SFP also carry ``notes``: one-line statements the public
values explain (a run that released no word: the holders a word needs
against n), empty otherwise; not part of the protocol, so read them as
``getattr(result, "notes", ())``.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Protocol, runtime_checkable

# How a run without a seed drew its randomness: numpy's SeedSequence() from
# the operating system (128 bits), kept nowhere.
FRESH_ENTROPY = "fresh entropy (not recorded)"


def randomness(seed) -> str:
  """How a run seeded ``seed`` drew its randomness, in words: fresh entropy
  for None (the guarantee holds: nobody knows the draw), the seed and what
  knowing it means for a whole number (a simulation), ``""`` for anything
  else (a generator the caller holds, who says what it is)."""
  if seed is None:
    return FRESH_ENTROPY
  if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
    return (f"seed {int(seed)} (a simulation: whoever knows the seed can "
            "undo the noise)")
  return ""


@dataclasses.dataclass(frozen=True)
class RoundStats:
  """One round of a run, in the terms every mechanism can fill.

  Attributes:
    candidates: the candidates the round decided on (None where the
      mechanism does not enumerate them).
    kept: the candidates it kept (published prefixes and words).
    sampled: users who took part (None where every user does, or the
      mechanism does not sample by round).
  """

  candidates: int | None
  kept: int
  sampled: int | None = None


@runtime_checkable
class Release(Protocol):
  """A mechanism's published output and its guarantee.

  Attributes:
    mechanism: the name the mechanism is registered under
      (:mod:`triehh.mechanisms`): ``"triehh"``, ``"noisy_trie"``, ...
    words: the released words, ranked where the mechanism ranks them (by a
      protected score), else in an order that depends on the output set
      only.
    guarantee: the :class:`~triehh.theory.mechanism.Guarantee` covering
      :attr:`words` (and what else its ``covers`` names), or one that says
      there is none (IBLT's k-anonymity is no differential privacy).
    params: the mechanism's parameters as the run used them.
    seconds: wall time of the run (building the population excluded).
    per_round: each round's :class:`RoundStats` (one entry for a one-shot
      mechanism).
    unprotected: what the guarantee does not cover (vote counts, which
      words are false): simulation studies only; None where there is
      nothing.
  """

  @property
  def mechanism(self) -> str: ...

  @property
  def words(self) -> tuple[str, ...]: ...

  @property
  def guarantee(self) -> Any: ...

  @property
  def params(self) -> Any: ...

  @property
  def seconds(self) -> float: ...

  @property
  def per_round(self) -> tuple[RoundStats, ...]: ...

  @property
  def unprotected(self) -> Any: ...
