"""What the privacy audit (:mod:`checks.audit`) would allocate,
checked before it does.

Three sizes grow with the audited population: the exact path computes the
law of w's path for every number k of holders it scans (about ``n /
batch_size`` of them), the variants that fix each round's users
(``SCHEDULED_VARIANTS``) list ``D`` and ``D'`` user by user, and the
several-words audit (:mod:`checks.audit_several_words`) keeps
arrays per (user, word) entry of the population. The other
variants run on populations given by word counts, whose memory does not
grow with n. Each check refuses, before anything is allocated, with the
estimate and what fits (:func:`triehh.core.memory.check_fits`).
"""

from __future__ import annotations

from typing import Protocol

from triehh.core import memory


class AuditSetup(Protocol):
  """What the checks read of :class:`checks.audit.AuditSetup`."""

  n: int
  batch_size: int
  variant: str

  @property
  def levels(self) -> int: ...

  @property
  def run_theta(self) -> int: ...

  @property
  def sizes(self) -> tuple[int, int]: ...

# Variants whose rounds' users are fixed (listed populations, not counts).
SCHEDULED_VARIANTS = ("with_replacement", "double_vote")
# Peak bytes (measured): listing D and D' per user of D'; the exact laws per
# population scanned and term (theta + 120 tail terms, and the levels).
LISTED_BYTES_PER_USER = 100
SCAN_BYTES_PER_TERM = 36
_TAIL_TERMS = 120


def scan_bytes(setup: AuditSetup, num_populations: int) -> int:
  """Estimated peak memory of the exact laws of ``num_populations`` k."""
  return num_populations * _per_population(setup)


def check_scan_fits(setup: AuditSetup, num_populations: int) -> None:
  """Raises :class:`~triehh.core.memory.InsufficientMemoryError` if the
  exact laws of ``num_populations`` values of k would not fit."""
  per_k = _per_population(setup)
  memory.check_fits(
      f"the exact laws of {num_populations:,} populations (k holders of w "
      f"at n={setup.n:,}, batch_size={setup.batch_size:,})",
      scan_bytes(setup, num_populations), lambda available: "at most "
      f"{memory.most_that_fit(per_k, available):,} fit, and their number "
      "grows as n / batch_size: use a larger batch_size or gamma, or fewer "
      "users")


def check_populations_fit(setup: AuditSetup) -> None:
  """Raises :class:`~triehh.core.memory.InsufficientMemoryError` if ``D``
  and ``D'`` of a scheduled variant, listed user by user, would not fit
  (the other variants run on word counts, for any n)."""
  if setup.variant not in SCHEDULED_VARIANTS:
    return
  memory.check_fits(
      f"n={setup.n:,} users listed one by one for variant={setup.variant!r}",
      setup.sizes[1] * LISTED_BYTES_PER_USER,
      lambda available: "use n <= "
      f"{memory.most_that_fit(LISTED_BYTES_PER_USER, available):,} or "
      "num_runs=0 (the exact path only); the other variants run on word "
      "counts (Population.from_word_frequencies), for any n up to 2^62")


# Bytes per Monte Carlo run: the depth of w's path on each side (int64).
RUN_BYTES = 16


def check_runs_fit(num_runs: int) -> None:
  """Raises :class:`~triehh.core.memory.InsufficientMemoryError` if the
  Monte Carlo path's per-run depths (both sides) would not fit."""
  memory.check_fits(
      f"num_runs={num_runs:,} runs", num_runs * RUN_BYTES,
      lambda available: "use num_runs <= "
      f"{memory.most_that_fit(RUN_BYTES, available):,}")


def _per_population(setup: AuditSetup) -> int:
  return SCAN_BYTES_PER_TERM * (setup.run_theta + _TAIL_TERMS + setup.levels)


# Peak bytes per (user, word) entry of the several-words audit: the entry ->
# user array, the prefix masses of every level and one level's masks and
# gathered entries (57 measured on the Sentiment140 sample's 1.02M entries).
SEVERAL_WORDS_BYTES_PER_ENTRY = 60


class SeveralWordPopulation(Protocol):
  """What :func:`check_several_words_fits` reads of a population."""

  num_users: int
  entry_word: object


def check_several_words_fits(population: SeveralWordPopulation) -> None:
  """Raises :class:`~triehh.core.memory.InsufficientMemoryError` if the
  per-entry arrays of the several-words audit
  (:mod:`checks.audit_several_words`) would not fit."""
  entries = len(population.entry_word)
  memory.check_fits(
      f"the several-words audit of {population.num_users:,} users "
      f"({entries:,} user-word entries)",
      entries * SEVERAL_WORDS_BYTES_PER_ENTRY, lambda available: "at most "
      f"{memory.most_that_fit(SEVERAL_WORDS_BYTES_PER_ENTRY, available):,} "
      "entries fit: resample fewer users")
