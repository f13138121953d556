"""Utility metrics of a discovered heavy-hitter set against the truth.

Definitions (K ranges over a list such as 10, 50, 100):

* ``top_k(truth, K)``: the K words of largest true weight; ties are broken
  by the word itself, in Unicode order, so the set is deterministic (words
  tied at the K-th weight are cut alphabetically).
* ``recall@K = |D intersect top_K| / K``: share of the true top K found.
* ``precision@K = |D_K intersect top_K| / |D_K|``, where ``D_K`` is the K
  discovered words with the largest reported counts (ties by word), or all
  of them if fewer than K were discovered; 0 if nothing was discovered.
* ``f1@K``: harmonic mean of ``precision@K`` and ``recall@K``.
* ``f1_paper@K = 2 r / (r + 1)`` with ``r = recall@K``: the F1 the paper's
  F1-vs-K figures plot, i.e. with precision taken as 1 for every algorithm
  (the paper's code); it ignores how the discovered words are ranked.
* ``precision``: share of discovered words that any user really holds (the
  paper's "precision" of Table 2: TrieHH scores 1 by construction, a
  sketching method can report strings no one typed).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from triehh.core import ranking
from triehh.core import validation

DEFAULT_KS = (10, 50, 100)


def top_k(truth: Mapping[str, float], k: int) -> list[str]:
  """The ``k`` words of largest weight; ties broken by the word.

  Raises:
    TypeError, ValueError: if a weight is not a number >= 0 (nan included).
  """
  if k < 1:
    raise ValueError(f"k must be >= 1, got {k}")
  if not isinstance(truth, ranking.RankedCounts):  # checks itself, once
    ranking.check_weights("truth", truth)
  return _top(truth, k)


def _top(truth: Mapping[str, float], k: int) -> list[str]:
  """:func:`top_k` of a checked ``truth``."""
  if isinstance(truth, ranking.RankedCounts):
    return truth.top(k)
  return ranking.top_words(truth, k)


def _checked_ks(ks) -> list[int]:
  """``ks`` (any iterable of ints >= 1, read once) as a list."""
  if isinstance(ks, (str, bytes)) or not isinstance(ks, Iterable):
    raise TypeError(f"ks must be an iterable of integers, got "
                    f"{type(ks).__name__} {ks!r:.40}")
  return [validation.check_int("ks (each K)", k, low=1) for k in ks]


def _ranked_head(discovered: Mapping[str, float], k: int) -> list[str]:
  """The first ``k`` words of ``ranking.ranked_words(discovered)``.

  When there are many more words and their counts come in non-increasing
  order (as a run's heavy hitters do), only the words that can be among the
  first ``k`` are sorted: those before the ``k``-th and those tied with
  it.
  """
  counts = list(discovered.values())
  if 0 < 4 * k < len(counts) and all(
      map(operator.ge, counts, itertools.islice(counts, 1, None))):
    end = k
    while end < len(counts) and counts[end] == counts[k - 1]:
      end += 1
    return ranking.ranked_words(
        dict(itertools.islice(discovered.items(), end)))[:k]
  return ranking.ranked_words(discovered)[:k]


def precision_recall_f1(discovered: Mapping[str, float] | Iterable[str],
                        truth: Mapping[str, float],
                        ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
  """``precision@K``, ``recall@K``, ``f1@K``, ``f1_paper@K`` per K, and
  ``precision``.

  Args:
    discovered: word -> reported count (ranks the words for precision@K),
      or the words in rank order.
    truth: word -> true weight (a number >= 0) of every word in the
      population.
    ks: the K values (any iterable of ints >= 1).
  """
  ks = _checked_ks(ks)
  if isinstance(discovered, (str, bytes)):
    raise TypeError("discovered must be a mapping word -> count or a "
                    f"sequence of words, not one string ({discovered!r:.40})")
  if not isinstance(truth, Mapping):
    raise TypeError("truth must be a mapping word -> true weight, got "
                    f"{type(truth).__name__}")
  if not isinstance(truth, ranking.RankedCounts):  # checks itself, once
    ranking.check_weights("truth", truth)
  if isinstance(discovered, Mapping):
    found = set(discovered)
    ranked = _ranked_head(discovered, max(ks, default=0))
  else:
    ranked = list(discovered)
    found = set(ranked)
  truth_ranked = _top(truth, max(ks)) if ks else []
  out: dict[str, float] = {}
  for k in ks:
    top = set(truth_ranked[:k])
    head = ranked[:k]
    recall = len(found & top) / len(top) if top else 0.0
    precision = len(set(head) & top) / len(head) if head else 0.0
    f1 = (2 * precision * recall / (precision + recall)
          if precision + recall > 0 else 0.0)
    out[f"precision@{k}"] = precision
    out[f"recall@{k}"] = recall
    out[f"f1@{k}"] = f1
    out[f"f1_paper@{k}"] = f1_paper(recall)
  out["precision"] = (_num_held(found, truth) / len(found) if found
                      else 0.0)
  out["num_discovered"] = float(len(found))
  return out


# The per-K metrics of a ranking: a set in an order that tells nothing
# (partition selection's, alphabetical) has no top K to score.
RANKING_METRICS = ("precision", "f1")


def set_metrics(values: Mapping[str, float]) -> dict[str, float]:
  """``values`` (:func:`precision_recall_f1`) of an unranked set: without
  ``precision@K`` and ``f1@K``, which would score an arbitrary cut; the
  set's ``precision``, ``recall@K`` and ``f1_paper@K`` (of recall alone)
  stay."""
  return {name: value for name, value in values.items()
          if not ("@" in name and name.partition("@")[0] in RANKING_METRICS)}


def _num_held(words: set[str], truth: Mapping[str, float]) -> int:
  """How many of ``words`` some user holds (a positive true weight)."""
  if isinstance(truth, ranking.RankedCounts):
    return len(words & truth.positive())
  return sum(1 for w in words if truth.get(w, 0) > 0)


def f1_paper(recall: float) -> float:
  """The paper's F1 at K from recall r at K: ``2 r / (r + 1)``."""
  if not 0.0 <= recall <= 1.0:
    raise ValueError(f"recall must be in [0, 1], got {recall}")
  return 2.0 * recall / (recall + 1.0)


def discovery_rates(runs: Sequence[Iterable[str]],
                    words: Sequence[str]) -> np.ndarray:
  """Fraction of ``runs`` (each a set of discovered words) that found each word."""
  if isinstance(runs, (str, bytes)) or not isinstance(runs, Iterable):
    raise TypeError(f"runs must be a sequence of collections of words, got "
                    f"{type(runs).__name__}")
  sets = []
  for run in runs:
    if isinstance(run, (str, bytes)):
      raise TypeError("runs must hold collections of words, not one string "
                      f"({run!r:.40})")
    sets.append(set(run))
  if not sets:
    raise ValueError("need at least one run")
  if isinstance(words, (str, bytes)):
    raise TypeError(f"words must be a sequence of words, not one string "
                    f"({words!r:.40})")
  words = list(words)
  for word in words:
    if not isinstance(word, str):
      raise TypeError(f"words must hold strings, got {word!r:.40}")
  return np.array([sum(w in s for s in sets) / len(sets) for w in words])
