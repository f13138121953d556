"""How close reported counts are to the truth: the metrics of protected
counts (``docs/counts.md``), for TrieHH's counting phase and for any
algorithm's count estimates (SFP's count-mean-sketch, IBLT's exact counts).

For the true top-K words (by ground-truth weight,
``triehh.core.metrics.top_k``):

* ``count_error@K``: the median over the K words of the relative error
  ``min(1, |estimate - truth| / truth)``; a word without an estimate (not
  discovered) counts as 1, the cap, so the error of a run that finds
  nothing is 1.
* ``count_coverage@K``: the share of the discovered top-K words whose
  interval ``[lower, upper]`` holds the truth; absent when no top-K word
  was discovered or the counts have no intervals.

Both are proportions in [0, 1] (``RunRecord.metrics``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from triehh.core import metrics

ERROR = "count_error"
COVERAGE = "count_coverage"


def relative_errors(estimates: Mapping[str, float], truth: Mapping[str, float],
                    words: Sequence[str]) -> np.ndarray:
  """``min(1, |estimate - truth| / truth)`` per word of ``words`` (1 for a
  word without an estimate)."""
  out = np.ones(len(words))
  for i, word in enumerate(words):
    true = float(truth[word])
    if word in estimates and true > 0:
      out[i] = min(1.0, abs(float(estimates[word]) - true) / true)
  return out


def count_metrics(estimates: Mapping[str, float], truth: Mapping[str, float],
                  ks: Sequence[int],
                  intervals: Mapping[str, Sequence[float]] | None = None
                  ) -> dict[str, float]:
  """``count_error@K`` and (with ``intervals``: word -> ``(lower,
  upper)``) ``count_coverage@K`` per K of ``ks`` (module docstring)."""
  out: dict[str, float] = {}
  if not ks:
    return out
  ranked = metrics.top_k(truth, max(ks))
  for k in ks:
    top = ranked[:k]
    if not top:
      continue
    out[f"{ERROR}@{k}"] = float(np.median(relative_errors(estimates, truth,
                                                          top)))
    if intervals is None:
      continue
    found = [w for w in top if w in intervals]
    if found:
      held = [intervals[w][0] <= truth[w] <= intervals[w][1] for w in found]
      out[f"{COVERAGE}@{k}"] = sum(held) / len(found)
  return out


def protected_count_metrics(counts, truth: Mapping[str, float],
                            ks: Sequence[int]) -> dict[str, float]:
  """:func:`count_metrics` of a :class:`~triehh.core.results.WordCounts`
  (its estimates and intervals)."""
  estimates = dict(zip(counts.words, counts.estimate))
  intervals = {w: (lo, up) for w, lo, up in zip(counts.words, counts.lower,
                                                counts.upper)}
  return count_metrics(estimates, truth, ks, intervals)


def ks_of(values: Mapping[str, float]) -> list[int]:
  """The K values of a record's metrics (``recall@K`` keys), ascending."""
  return sorted({int(name.partition("@")[2]) for name in values
                 if name.startswith("recall@")})
