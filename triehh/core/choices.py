"""The names of a run's choices, shared by every layer.

* Sampling: ``"poisson"`` (every user takes part in a round independently
  with probability ``sampling_rate``; the two-sided accountant of
  :mod:`triehh.theory.poisson`) or ``"fixed"`` (the paper's batch of exactly
  ``m`` users per round; Theorem 1, one direction).
* Word choice, for users with several words: ``"per_round"`` (Algorithm 3:
  a word drawn by local frequency every round) or ``"per_run"`` (drawn once
  before the first round; see :mod:`triehh.discovery.word_choice`).
"""

from __future__ import annotations

from triehh.core import validation

FIXED = "fixed"
POISSON = "poisson"
SAMPLINGS = (POISSON, FIXED)

PER_ROUND = "per_round"
PER_RUN = "per_run"
WORD_CHOICES = (PER_ROUND, PER_RUN)


def check_sampling(sampling: str) -> str:
  """Raises ``ValueError`` unless ``sampling`` is one of :data:`SAMPLINGS`."""
  if sampling not in SAMPLINGS:
    raise ValueError(f"sampling must be one of {', '.join(SAMPLINGS)}, got "
                     f"{sampling!r}")
  return sampling


def check_sampling_rate(rate: float) -> float:
  """``rate`` as a float in (0, 1], else an error naming ``sampling_rate``."""
  return validation.check_rate(
      "sampling_rate", rate, "the probability that a user takes part in a "
      "round")


def check_word_choice(word_choice: str) -> str:
  """``word_choice`` if it is one of :data:`WORD_CHOICES`, else ValueError."""
  if word_choice not in WORD_CHOICES:
    raise ValueError(f"word_choice must be one of {WORD_CHOICES}, got "
                     f"{word_choice!r}")
  return word_choice
