"""Beyond the paper: what Poisson sampling's two-sided guarantee buys.

The numbers of REPORT.md's section beyond the paper. The paper's TrieHH
samples a batch of exactly m users per round and is labelled by Theorem 1,
proven in one direction only (``docs/privacy.md``); with Poisson sampling
every user takes part in a round independently with probability q, and the
accountant of :mod:`triehh.theory.poisson` proves the guarantee in both
directions. This module gives

* :func:`calibration_rows`: both calibrations at the same ``(epsilon,
  delta = 1/n^2)`` and L levels: theta and the batch m of Corollary 1
  against theta and the expected batch ``q n`` of the accountant, with the
  ratios ``q n / m`` and ``(q n / theta_P) / (m / theta_1)``. A word held by
  c users gets ``c m / n`` votes on average in a fixed-size round and
  ``c q`` in a Poisson round, and passes when they reach theta: the counts
  at which that happens on average are ``theta_1 n / m`` and
  ``theta_P / q``, and the second ratio is theirs;
* :func:`measure`: the report's measures (Table 2's recall@50, the top-100
  F1, the top-200 recall) per run of a series, so that Poisson runs can be
  set beside the paper's value and the fixed-size runs', and
  :func:`ceiling`, its largest value at the runs' levels;
* :data:`CELLS`: which settings and epsilons get Poisson cells.

(``two_sided_markdown`` writes the section.)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from reports.reproduction import numbers
from triehh.core import metrics
from triehh.theory import poisson
from triehh.theory import poisson_calibration
from triehh.theory import privacy

TABLE_NS = (10**4, 10**5, 10**6, 10**7, 10**8)
TABLE_EPSILONS = (1.0, 2.0, 4.0, 8.0)
TABLE_LEVELS = 11
LABEL = "beyond the paper (Poisson sampling, two-sided)"
FIXED = "fixed"
POISSON = "poisson"
# Report setting -> the epsilons of its Poisson cells (None: every epsilon
# the reproduction runs), the ones whose measure the report states.
CELLS = {"single": None, "oov": (1.0, 4.0), "multi": (4.0,),
         "multi-n": (4.0,)}
# Report setting -> (measure name, its description, K).
MEASURES = {
    "oov": ("recall@50", "Table 2: TrieHH recall@50, OOV, δ = 1/n²", 50),
    "single": ("F1@100", "F1 of the top 100 words (the paper's 2r/(r + 1)), "
               "single word, δ = 1/n²", 100),
    "multi": ("recall@200", "recall of the top 200 words, several words, "
              "δ = 5·10⁻⁹", 200),
    "multi-n": ("recall@200", "recall of the top 200 words, several words, "
                "δ = 5·10⁻⁹", 200)}
# The paper's value of each measure: (setting, epsilon) -> text.
PAPER_VALUES = {
    ("oov", 1.0): str(numbers.PAPER_TABLE2[("triehh", None, 1.0)][0]),
    ("oov", 4.0): str(numbers.PAPER_TABLE2[("triehh", None, 4.0)][0]),
    ("single", 4.0): "close to 1", ("multi", 4.0): "close to 1",
    ("multi-n", 4.0): "close to 1"}
NOT_STATED = "not stated"


def poisson_epsilons(figure: str, epsilons: Sequence[float]) -> list[float]:
  """The epsilons of ``figure``'s Poisson cells among those run."""
  wanted = CELLS.get(figure, ())
  if wanted is None:
    return list(epsilons)
  return [e for e in epsilons if any(math.isclose(e, w) for w in wanted)]


@dataclasses.dataclass(frozen=True)
class CalibrationRow:
  """Corollary 1 and the Poisson accountant at one ``(n, epsilon, delta)``.

  ``fixed`` / ``poisson`` are None when that calibration is impossible;
  ``fixed_error`` / ``poisson_error`` then say why (the ``ValueError``).
  """

  n: int
  epsilon: float
  delta: float
  num_levels: int
  fixed: privacy.Calibration | None
  fixed_error: str
  poisson: poisson_calibration.PoissonCalibration | None
  poisson_error: str

  @property
  def batch_ratio(self) -> float | None:
    """``q n / m``: users per round, Poisson (expected) over fixed size."""
    if self.fixed is None or self.poisson is None:
      return None
    return self.poisson.expected_batch_size / self.fixed.batch_size

  @property
  def threshold_ratio(self) -> float | None:
    """``(q n / theta_P) / (m / theta_1)``: batch per threshold, the factor
    by which the count whose expected votes reach theta shrinks."""
    if self.fixed is None or self.poisson is None:
      return None
    return ((self.poisson.expected_batch_size / self.poisson.theta)
            / (self.fixed.batch_size / self.fixed.theta))

  @property
  def atom(self) -> float | None:
    """The probability, over the L levels, of the event only the user's
    presence makes possible (it takes part with theta_P - 1 other holders
    of its prefix: ``q^theta`` per level, the dominating pair's atom that
    has no counterpart, see :mod:`triehh.theory.poisson`):
    ``1 - (1 - q^theta)^L``. delta is at least this at every epsilon, so
    when it is close to delta a larger epsilon buys no larger rate."""
    if self.poisson is None:
      return None
    per_level = self.poisson.rate ** self.poisson.theta
    return -math.expm1(self.num_levels * math.log1p(-per_level))


def calibration_rows(ns: Sequence[int] = TABLE_NS,
                     epsilons: Sequence[float] = TABLE_EPSILONS,
                     num_levels: int = TABLE_LEVELS) -> list[CalibrationRow]:
  """Both calibrations at every ``(n, epsilon)``, ``delta = 1/n^2``."""
  rows = []
  for n in ns:
    delta = 1.0 / n**2
    for epsilon in epsilons:
      fixed = fixed_error = two = two_error = None
      try:
        fixed = privacy.calibrate(n, num_levels, float(epsilon), delta)
      except ValueError as err:
        fixed_error = " ".join(str(err).split())
      try:
        two = poisson_calibration.calibrate(n, num_levels, float(epsilon), delta)
      except ValueError as err:
        two_error = " ".join(str(err).split())
      rows.append(CalibrationRow(
          n=n, epsilon=float(epsilon), delta=delta, num_levels=num_levels,
          fixed=fixed, fixed_error=fixed_error or "", poisson=two,
          poisson_error=two_error or ""))
  return rows


def measure(series: numbers.Series) -> np.ndarray:
  """The report's measure of ``series``' setting (:data:`MEASURES`), per
  run, computed as the paper's rows above compute it: Table 2 from the
  recorded ``recall@50``, the others from the discovered words."""
  name, _, k = MEASURES[series.figure]
  if series.figure == "oov":
    return numbers.metric_of_runs(series, name)
  if name.startswith("F1@"):
    return numbers.f1_paper_curves(series, k)[:, -1]
  return numbers.recall_curves(series, k)[:, -1]


def ceiling(series: numbers.Series) -> float:
  """The measure's largest value at the runs' L: a word longer than
  ``max_length`` characters is never found, so recall of the top K is at
  most the share of them of at most ``max_length`` (the F1 follows)."""
  _, _, k = MEASURES[series.figure]
  max_length = int(series.records[0]["max_length"])
  top = metrics.top_k(series.truth, k)
  recall = sum(len(w) <= max_length for w in top) / len(top)
  if series.figure == "single":
    return 2 * recall / (recall + 1)
  return recall


def paper_value(figure: str, epsilon: float) -> str:
  """The paper's value of the measure, or :data:`NOT_STATED`."""
  for (f, e), text in PAPER_VALUES.items():
    if f == figure and math.isclose(e, epsilon):
      return text
  return NOT_STATED


def run_parameters(series: numbers.Series) -> str:
  """theta and the users per round of a series' runs, from its records."""
  record = series.records[0]
  theta = int(record["theta"])
  if record.get("sampling") == POISSON:
    rate = float(record["sampling_rate"])
    return (f"θ = {theta}, q = {rate:.4g} (≈ {rate * series.n:,.0f} users "
            "per round)")
  return f"θ = {theta}, m = {int(record['batch_size']):,}"
