"""The numbers of the paper's tables and figures, beside the paper's own.

The library behind ``experiments.reproduce_paper``: given the runs of every
cell (TrieHH and SFP, per setting and epsilon), it computes

* recall and the paper's F1 (``2 r / (r + 1)``, :func:`triehh.core.metrics.f1_paper`)
  of the top K words for every K up to ``k_max``, per run, from the run's
  discovered words and the population's ground truth;
* the discovery rate of words per frequency bin (the share of a bin's words a
  run discovered, per run) and Proposition 2's worst-case rate at the runs'
  n, batch size, theta and levels (one-word settings only);
* Table 1 and the data of ``fig-fix-prob`` from :mod:`triehh.theory`;

(``figures`` draws them, ``markdown`` writes REPORT.md).
Means are over runs, with Student-t 95% intervals (shaded in plots, ± in
tables; one run has none).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import special

from triehh.core import metrics
from triehh.theory import privacy
from triehh.theory import utility

CONFIDENCE = 0.95
# Table 1 of the paper: n -> (theta, gamma) at delta <= 1/(300 n), then at
# delta <= 1/n^2; epsilon = 2, L = 10 levels.
PAPER_TABLE1 = {10**4: (10, 1.81, 12, 1.51), 10**5: (11, 5.21, 14, 4.09),
                10**6: (12, 15.10, 15, 12.08), 10**7: (13, 44.09, 17, 33.71)}
TABLE1_EPSILON = 2.0
PAPER_LEVELS = 10
# Table 2 of the paper (OOV, delta = 1/n^2): (algorithm, T, epsilon) ->
# (recall@50, precision).
PAPER_TABLE2 = {("triehh", None, 1.0): (0.65, 1.0),
                ("triehh", None, 4.0): (0.76, 1.0),
                ("sfp", 20, 1.0): (0.17, 0.853), ("sfp", 20, 4.0): (0.19, 0.867),
                ("sfp", 80, 1.0): (0.25, 0.494),
                ("sfp", 80, 4.0): (0.325, 0.456)}
# SFP's local epsilon the paper states: (setting, central epsilon) -> value.
PAPER_LOCAL_EPSILON = {("single", 1.0): 4.29, ("single", 4.0): 4.96,
                       ("oov", 1.0): 5.31, ("oov", 4.0): 5.99}
# The paper's several-words claim (top 200 recalled "with epsilon = 4 and
# delta < 5 x 10^-9") states this bound on delta, not a formula.
PAPER_MULTI_DELTA = 5e-9
# The several-words ablation's accountings besides ours (L·δ₁ for per-round
# redraws): the paper's Corollary 2 (Theorem 1's δ for per-round redraws,
# not covered by its proof), and one draw per run (Theorem 2).
PAPER_ACCOUNTING = "paper"
PER_RUN = "per_run"
# The tails of the semi-synthetic populations, as the report names them.
TAIL_NAMES = {"sample": "the Sentiment140 sample's counts (capped)",
              "zipf": "a Zipf law fitted to the published top 100, "
                      "extrapolated",
              "wordfreq": "wordfreq's English frequencies"}
# The paper-calibrated settings: the paper's published top 100 words and a
# tail built from the sample's word counts.
SEMI_SYNTHETIC = {"single": "single-word", "oov": "OOV"}
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
# OOV words the paper names as discovered ("@dddlovato" in its text is
# "@ddlovato" in its list).
PAPER_NAMED_OOV = ("*hugs*", "*sigh*", ":'(", "@tommcfly", "@ddlovato",
                   "#ff", "#fb", "b/c", "ya'll")


@dataclasses.dataclass
class Series:
  """The runs of one cell with what is needed to score them.

  Attributes:
    algorithm: ``triehh`` or ``sfp``.
    figure: the report's setting name: ``single``, ``oov``, ``multi`` (the
      sample's own users) or ``multi-n`` (resampled to the paper's n).
    epsilon: the central target epsilon.
    top_t: SFP's T (None for TrieHH).
    records: the runs' records, each as one flat dict
      (``triehh.runs.records.RunRecord.flat``: its params beside the
      common fields).
    truth: the population's ground truth (word -> weight).
    n: the number of users.
    data: a description of the data, for the report.
    sampling: ``fixed`` (the paper's m users per round) or ``poisson``
      (beyond the paper, :mod:`reports.reproduction.two_sided`).
    tail: the tail of a one-word population (``sample``, ``zipf``,
      ``wordfreq``; :mod:`triehh.data.paper_populations`).
    variant: the several-words accounting: ``""`` (ours, L·δ₁),
      ``PAPER_ACCOUNTING`` or ``PER_RUN``.
  """

  algorithm: str
  figure: str
  epsilon: float
  top_t: int | None
  records: list[dict]
  truth: Mapping[str, float]
  n: int
  data: str = ""
  sampling: str = "fixed"
  tail: str = "sample"
  variant: str = ""

  @property
  def label(self) -> str:
    name = "TrieHH" if self.algorithm == "triehh" else f"SFP (T={self.top_t})"
    return f"{name}, ε={self.epsilon:g}"

  @property
  def runs(self) -> int:
    return len(self.records)


def mean_ci(values: np.ndarray, confidence: float = CONFIDENCE
            ) -> tuple[np.ndarray, np.ndarray]:
  """Column means of ``values [runs, ...]`` and their t-interval half-widths.

  The half-width is ``t_{(1+c)/2, r-1} s / sqrt(r)`` (``s`` with ddof 1);
  NaN for a single run.
  """
  x = np.asarray(values, dtype=np.float64)
  if x.ndim == 0 or x.shape[0] == 0:
    raise ValueError("mean_ci needs at least one run")
  mean = x.mean(axis=0)
  r = x.shape[0]
  if r == 1:
    return mean, np.full_like(mean, math.nan)
  t = float(special.stdtrit(r - 1, (1 + confidence) / 2))
  return mean, t * x.std(axis=0, ddof=1) / math.sqrt(r)


def recall_curves(series: Series, k_max: int) -> np.ndarray:
  """``[runs, k_max]``: recall of the top K words, K = 1..k_max, per run."""
  top = metrics.top_k(series.truth, k_max)
  ks = np.arange(1, len(top) + 1)
  out = np.zeros((series.runs, len(top)))
  for i, record in enumerate(series.records):
    found = set(record["discovered"])
    hits = np.fromiter((w in found for w in top), dtype=np.float64,
                       count=len(top))
    out[i] = np.cumsum(hits) / ks
  return out


def f1_paper_curves(series: Series, k_max: int) -> np.ndarray:
  """``[runs, k_max]``: the paper's F1 ``2 r / (r + 1)`` of the top K."""
  r = recall_curves(series, k_max)
  return 2 * r / (r + 1)


def metric_of_runs(series: Series, name: str) -> np.ndarray:
  """One recorded metric per run (e.g. ``recall@50``, ``precision``)."""
  return np.array([float(r["metrics"][name]) for r in series.records])


def discovery_by_frequency(series: Series, num_bins: int = 12,
                           min_frequency: float = 1e-5
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                      np.ndarray, np.ndarray]:
  """Per log-spaced frequency bin: its mid frequency, the mean over runs of
  the share of the bin's words discovered, its half-width, the number of
  words and Proposition 2's worst case averaged over the bin's words (each
  at its own count; NaN with several words per user, which have no bound).
  Words longer than the runs' L are left out (not reportable)."""
  max_length = int(series.records[0]["max_length"])
  words = [w for w, v in series.truth.items()
           if len(w) <= max_length and v / series.n >= min_frequency]
  if not words:
    raise ValueError(f"no word of frequency >= {min_frequency}")
  freqs = np.array([series.truth[w] / series.n for w in words])
  edges = np.geomspace(freqs.min(), freqs.max() * 1.0001, num_bins + 1)
  which = np.clip(np.searchsorted(edges, freqs, side="right") - 1, 0,
                  num_bins - 1)
  counts = np.bincount(which, minlength=num_bins)
  shares = np.zeros((series.runs, num_bins))
  for i, record in enumerate(series.records):
    found = set(record["discovered"])
    hit = np.fromiter((w in found for w in words), dtype=np.float64,
                      count=len(words))
    shares[i] = np.bincount(which, weights=hit, minlength=num_bins) / (
        np.maximum(counts, 1))
  mean, half = mean_ci(shares)
  bound = np.full(num_bins, math.nan)
  if series.figure in ("single", "oov"):
    bound = np.bincount(which, weights=proposition2_curve(series, freqs),
                        minlength=num_bins) / np.maximum(counts, 1)
  mids = np.sqrt(edges[:-1] * edges[1:])
  keep = counts > 0
  return mids[keep], mean[keep], half[keep], counts[keep], bound[keep]


def proposition2_curve(series: Series, frequencies: np.ndarray) -> np.ndarray:
  """Proposition 2's worst-case rate at the runs' parameters."""
  record = series.records[0]
  n, m = int(record["n_users"]), int(record["batch_size"])
  theta, levels = int(record["theta"]), int(record["levels"])
  counts = np.floor(np.asarray(frequencies) * n + 1e-9).astype(np.int64)
  return np.asarray(utility.discovery_rate(counts, n, m, theta, levels))


def table1_rows(epsilon: float = TABLE1_EPSILON,
                num_levels: int = PAPER_LEVELS) -> list[dict]:
  """Table 1 by Corollary 1 next to the paper's, one row per n."""
  rows = []
  for n, paper in PAPER_TABLE1.items():
    ours = []
    for delta in (1 / (300 * n), 1 / n**2):
      cal = privacy.calibrate(n, num_levels, epsilon, delta)
      ours += [cal.theta, cal.gamma_unrounded]
    rows.append({"n": n, "paper": paper, "ours": tuple(ours)})
  return rows


def authors_theta(delta: float, start: int = 9) -> int:
  """theta by the search of the authors' released code: the smallest
  ``theta >= start`` (their initial guess, 9) with Theorem 1's
  ``(theta - 3) theta! / (theta - 2) >= 1 / delta``."""
  theta = start
  while (theta - 3) / (theta - 2) * math.factorial(theta) < 1 / delta:
    theta += 1
  return theta


def authors_batch_size(n: int, epsilon: float, theta: int,
                       num_levels: int) -> int:
  """The batch by the formula of the authors' released code:
  ``int(n (e^(eps/L) - 1) / (theta e^(eps/L)))``."""
  growth = math.exp(epsilon / num_levels)
  return int(n * (growth - 1) / (theta * growth))


def fix_prob_data(frequencies: Sequence[float],
                  epsilons: Sequence[float] = (1, 2, 4, 8),
                  num_levels: int = PAPER_LEVELS,
                  probability: float = 0.9) -> dict[float, list[int]]:
  """epsilon -> the minimum n for each frequency (Proposition 2, 1/n^2)."""
  return {e: [utility.min_population(f, e, num_levels=num_levels,
                                     probability=probability)
              for f in frequencies] for e in epsilons}


def fmt(mean: float, half: float, digits: int = 2) -> str:
  """``mean ± half`` (just the mean when there is no interval)."""
  if math.isnan(half):
    return f"{mean:.{digits}f}"
  return f"{mean:.{digits}f} ± {half:.{digits}f}"


def within(paper: float, mean: float, half: float) -> bool:
  """Whether the paper's value lies in our interval (or equals our mean)."""
  if math.isnan(half):
    return math.isclose(paper, mean, abs_tol=1e-9)
  return abs(paper - mean) <= half + 1e-12


def find(series: Sequence[Series], algorithm: str, figure: str,
         epsilon: float, top_t: int | None = None, *,
         tail: str | None = None, variant: str = "") -> Series | None:
  """The series of ``algorithm`` in ``figure`` at ``epsilon`` (and SFP's
  ``top_t``, the ``tail`` if given, the ``variant``) that has runs, or
  ``None``."""
  for s in series:
    if (s.algorithm == algorithm and s.figure == figure
        and math.isclose(s.epsilon, epsilon)
        and (top_t is None or s.top_t == top_t)
        and (tail is None or s.tail == tail) and s.variant == variant
        and s.runs):
      return s
  return None


def stat(values: np.ndarray, digits: int = 2) -> tuple[float, float, str]:
  """The mean of per-run values, its interval's half width and both as
  text (:func:`fmt`)."""
  mean, half = mean_ci(values[:, None] if values.ndim == 1 else values)
  mean, half = float(np.ravel(mean)[0]), float(np.ravel(half)[0])
  return mean, half, fmt(mean, half, digits)


def sci(value: float, digits: int = 3) -> str:
  """``value`` with ``digits`` significant digits as ``5.1·10⁻⁴``."""
  mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
  return f"{mantissa}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def achieved_delta(series: Series) -> float:
  """The largest delta the series' runs record: what their accounting
  gives at the runs' parameters (Theorem 1's at theta for fixed-size
  TrieHH, the accountant's for Poisson, the amplification's for SFP)."""
  return max(float(r["delta"]) for r in series.records)


def target_delta(series: Series) -> float:
  """The delta the series' runs were calibrated for."""
  return max(float(r["target_delta"]) for r in series.records)


def versus_paper_delta(delta: float) -> str:
  """How ``delta`` relates to the paper's several-words bound."""
  where = ("below" if delta < PAPER_MULTI_DELTA else
           "above" if delta > PAPER_MULTI_DELTA else "equal to")
  return f"{where} the paper's {sci(PAPER_MULTI_DELTA, 1)}"


def threshold_share(series: Series) -> str:
  """theta over the batch m of the series' runs, as ``θ/m = 17/33,586 =
  5.1·10⁻⁴``: the share of a round's users a prefix needs."""
  record = series.records[0]
  theta, m = int(record["theta"]), int(record["batch_size"])
  return f"θ/m = {theta}/{m:,} = {sci(theta / m, 2)}"


def data_label(figure: str, tail: str | None = None) -> str:
  """The label of a semi-synthetic setting's population (``""`` for the
  others). ``figure`` may be a report data key ``setting@tail``; a tail
  other than the sample's is named."""
  figure, _, keyed = figure.partition("@")
  tail = tail or keyed or "sample"
  if figure not in SEMI_SYNTHETIC:
    return ""
  named = "" if tail == "sample" else f" ({TAIL_NAMES.get(tail, tail)})"
  return (f"semi-synthetic {SEMI_SYNTHETIC[figure]} population: the "
          f"paper's published top 100 + a tail we built{named}")
