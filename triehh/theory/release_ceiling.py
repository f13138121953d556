"""The most one secure-sum release can find: the ceiling of the noisy
trie's trust model on a population, for discrete Gaussian or discrete
Laplace noise.

A mechanism that sees only a secure sum of one-hot votes over a public
candidate set, with discrete noise on every candidate (Gaussian of
parameter sigma, or Laplace of scale b: ``noise``) and a budget of
expected released strings nobody holds, is most
favoured by one release over every string of at most L characters: no
trie, no composition, no upload limit. The ``A^l`` strings of l
characters share a part ``b_l`` of the budget, so their threshold is the
least ``tau_l`` whose tail is at most ``b_l / A^l``, and a word of l
characters held by c users is released with probability ``P[c + X >=
tau_l]``. :func:`ceiling` splits the budget by looking at the counts,
exactly: the most any split finds, so at least what a split chosen without
them finds.
"""

from __future__ import annotations

import numpy as np

from triehh.theory import discrete_laplace
from triehh.theory import noise_laws
from triehh.theory import noisy_trie
from triehh.theory.noise_laws import GAUSSIAN
from triehh.theory.noise_laws import LAPLACE

# Thresholds tried above a length's least: past this many sigma (Gaussian)
# or scales (Laplace) its tail, the budget it spends, is below exp(-72) of
# the least's (nothing to free).
_SPAN = {GAUSSIAN: 12, LAPLACE: 72}


def _least(noise: str, scale: float, rate: float) -> int:
  """The least integer threshold whose tail is at most ``rate``."""
  if noise_laws.check(noise) == GAUSSIAN:
    return noisy_trie.threshold_for(scale, rate)
  return discrete_laplace.least_threshold(scale, rate)


def options(counts, num_strings: float, sigma: float, budget: float,
            noise: str = GAUSSIAN) -> list[tuple[float, float]]:
  """A length's ``(budget spent, expected words released)`` at each
  threshold from the least the whole ``budget`` allows up: the ``A^l``
  strings' expected false words and the words' pass probabilities summed;
  ``(0, 0)`` for none (the length released nothing). ``sigma``: the
  Gaussian's parameter, or the Laplace's scale."""
  values, multiplicity = np.unique(np.asarray(counts, dtype=np.int64),
                                   return_counts=True)
  out = [(0.0, 0.0)]
  if not values.size or budget <= 0:
    return out
  least = _least(noise, sigma, min(1.0, budget / num_strings))
  for tau in range(least, least + int(np.ceil(_SPAN[noise] * sigma)) + 2):
    spent = num_strings * noise_laws.tail(noise, sigma, tau)
    tails = [noise_laws.tail(noise, sigma, tau - int(c)) for c in values]
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
            sigma: float, budget: float = 1.0, noise: str = GAUSSIAN
            ) -> tuple[float, float]:
  """The one-release ceiling (module docstring) for word -> users:
  ``(expected words released, false words spent)``, words of 1 to L
  characters over an alphabet of ``num_characters``; ``sigma`` the
  Gaussian's parameter, or the Laplace's scale."""
  by_length = {l: [] for l in range(1, max_length + 1)}
  for word, users in truth.items():
    if 1 <= len(word) <= max_length and users > 0:
      by_length[len(word)].append(users)
  return best_split([options(counts, float(num_characters) ** l, sigma,
                             budget, noise)
                     for l, counts in by_length.items()], budget)
