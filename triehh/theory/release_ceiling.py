"""The most one secure-sum Gaussian release can find: the ceiling of the
noisy trie's trust model on a population.

A mechanism that sees only a secure sum of one-hot votes over a public
candidate set, with discrete Gaussian noise of parameter sigma on every
candidate and a budget of expected released strings nobody holds, is most
favoured by one release over every string of at most L characters: no
trie, no composition, no upload limit. The ``A^l`` strings of l
characters share a part ``b_l`` of the budget, so their threshold is the
least ``tau_l`` whose tail is at most ``b_l / A^l``
(:func:`triehh.theory.noisy_trie.threshold_for`), and a word of l
characters held by c users is released with probability ``P[c + X >=
tau_l]``. :func:`ceiling` splits the budget by looking at the counts,
exactly: the most any split finds, so at least what a split chosen without
them finds.
"""

from __future__ import annotations

import numpy as np

from triehh.core import discrete_noise
from triehh.theory import noisy_trie


# Thresholds tried above a length's least: past this many sigma its tail,
# the budget it spends, is below exp(-72) of the least's (nothing to free).
_SPAN_SIGMAS = 12


def options(counts, num_strings: float, sigma: float, budget: float
            ) -> list[tuple[float, float]]:
  """A length's ``(budget spent, expected words released)`` at each
  threshold from the least the whole ``budget`` allows up: the ``A^l``
  strings' expected false words and the words' pass probabilities summed;
  ``(0, 0)`` for none (the length released nothing)."""
  values, multiplicity = np.unique(np.asarray(counts, dtype=np.int64),
                                   return_counts=True)
  out = [(0.0, 0.0)]
  if not values.size or budget <= 0:
    return out
  least = noisy_trie.threshold_for(sigma, min(1.0, budget / num_strings))
  for tau in range(least, least + int(np.ceil(_SPAN_SIGMAS * sigma)) + 2):
    spent = num_strings * discrete_noise.discrete_gaussian_tail(sigma, tau)
    tails = [discrete_noise.discrete_gaussian_tail(sigma, tau - int(c))
             for c in values]
    out.append((spent, float(np.dot(tails, multiplicity))))
  return out


def best_split(per_length: list, budget: float) -> tuple[float, float]:
  """The most expected words over one option per length whose spending
  sums to at most ``budget`` (exact: the Pareto front of the partial sums,
  length by length); returns (words, budget spent)."""
  front = [(0.0, 0.0)]
  for choices in per_length:
    merged = sorted((spent + s, found + f) for spent, found in front
                    for s, f in choices if spent + s <= budget)
    front, best = [], -1.0
    for spent, found in merged:  # keep what more budget improves
      if found > best:
        front.append((spent, found))
        best = found
  spent, found = front[-1]
  return found, spent


def ceiling(truth: dict, num_characters: int, max_length: int,
            sigma: float, budget: float = 1.0) -> tuple[float, float]:
  """The one-release ceiling (module docstring) for word -> users:
  ``(expected words released, false words spent)``, words of 1 to L
  characters over an alphabet of ``num_characters``."""
  by_length = {l: [] for l in range(1, max_length + 1)}
  for word, users in truth.items():
    if 1 <= len(word) <= max_length and users > 0:
      by_length[len(word)].append(users)
  return best_split([options(counts, float(num_characters) ** l, sigma,
                             budget)
                     for l, counts in by_length.items()], budget)
