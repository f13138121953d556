"""The public prior the planned noisy trie's free choices are chosen on.

:func:`triehh.theory.noisy_plan.plan` (``rule="prior"``) picks the plan's
free choices (the first round's noise multiplier, its characters and hence
its share of the byte budget, the prefix threshold's share of the
false-positive budget, and the number of rounds R) by simulating the
planned run on a synthetic population drawn from this prior at the
declared n, L and A, and keeping the choices with the most true words
released there. Nothing of the data is read: the prior's parameters are
fixed here, before any measurement, and are not to be changed after one.

The prior (all constants of this module):

* ``PRIOR_VOCABULARY`` = 100,000 generated strings over the A symbols,
  each drawn independently: its length ``1 + Poisson(PRIOR_MEAN_EXTRA)``
  (``PRIOR_MEAN_EXTRA`` = 5, mean length 6), redrawn while longer than L;
  its symbols i.i.d., symbol j (j = 0, ..., A - 1) with probability
  proportional to ``1 / (j + 1)`` (a Zipf law of exponent 1 over the
  alphabet). Strings drawn twice are one string.
* The string of rank i (in the order drawn, before merging) has weight
  ``1 / i**s``, s the plan's ``zipf_exponent`` (1 by default); a string
  drawn twice sums its weights.
* n users, one string each: one multinomial draw of n over the weights.
* Seeds: ``PRIOR_SEED`` = 0 for the strings and the users; the simulated
  runs draw their noise from seeds ``1, ..., PRIOR_RUNS`` (``PRIOR_RUNS``
  = 2), the same seeds for every candidate choice (common random numbers).

The simulation (:func:`true_words`) follows
:func:`triehh.engines.noisy.run_planned` round by round through the plan's
own methods (the blocks' moduli, :func:`~triehh.theory.noisy_plan.
chars_for_round`, the bytes, the two thresholds): the candidates some
string extends get their users plus Gaussian noise (rounded), the others
pass at the prefix rate as prefixes no one holds, which cost bytes and
candidates in later rounds. It counts the released strings some user
holds.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

PRIOR_VOCABULARY = 100_000
PRIOR_MEAN_EXTRA = 5.0
PRIOR_SEED = 0
PRIOR_RUNS = 2


@dataclasses.dataclass(frozen=True)
class PriorPopulation:
  """A population drawn from the prior, as prefix ids per depth.

  Attributes:
    ids: ``ids[d][w]``, the dense id of string w's first d symbols (its
      end symbol and a fixed padding after it count as symbols), d = 0,
      ..., L + 1.
    lengths: each string's length.
    counts: each string's users (only strings with users are kept).
  """

  ids: tuple[np.ndarray, ...]
  lengths: np.ndarray
  counts: np.ndarray


def _strings(rng: np.random.Generator, max_length: int, alphabet_size: int,
             size: int) -> tuple[np.ndarray, np.ndarray]:
  """``size`` strings of the prior: symbols (the end symbol A after the
  string, padding after it) and lengths."""
  lengths = 1 + rng.poisson(PRIOR_MEAN_EXTRA, size)
  while (long := lengths > max_length).any():
    lengths[long] = 1 + rng.poisson(PRIOR_MEAN_EXTRA, int(long.sum()))
  p = 1.0 / np.arange(1, alphabet_size + 1)
  symbols = rng.choice(alphabet_size, size=(size, max_length + 1),
                       p=p / p.sum()).astype(np.int64)
  column = np.arange(max_length + 1)
  symbols[column[None, :] == lengths[:, None]] = alphabet_size
  symbols[column[None, :] > lengths[:, None]] = alphabet_size + 1
  return symbols, lengths


def drawn(population_size: int, max_length: int, alphabet_size: int,
          zipf_exponent: float = 1.0
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """The prior's strings with users at the declared n, L, A (module
  docstring): symbols (the end symbol A after each string, padding
  after it), lengths and users; a string drawn twice appears twice."""
  rng = np.random.default_rng(PRIOR_SEED)
  symbols, lengths = _strings(rng, max_length, alphabet_size,
                              PRIOR_VOCABULARY)
  weights = 1.0 / np.arange(1, PRIOR_VOCABULARY + 1) ** zipf_exponent
  counts = rng.multinomial(population_size, weights / weights.sum())
  keep = counts > 0
  return symbols[keep], lengths[keep], counts[keep]


@functools.lru_cache(maxsize=8)
def population(population_size: int, max_length: int, alphabet_size: int,
               zipf_exponent: float = 1.0) -> PriorPopulation:
  """The prior's population at the declared n, L, A (module docstring)."""
  symbols, lengths, counts = drawn(population_size, max_length,
                                   alphabet_size, zipf_exponent)
  ids = [np.zeros(counts.size, dtype=np.int64)]
  for d in range(max_length + 1):
    key = ids[-1] * (alphabet_size + 2) + symbols[:, d]
    ids.append(np.unique(key, return_inverse=True)[1].astype(np.int64))
  # Strings drawn twice: one string, their users summed.
  full, first = np.unique(ids[-1], return_index=True)
  merged = np.bincount(ids[-1], weights=counts, minlength=full.size)
  return PriorPopulation(
      ids=tuple(level[first] for level in ids), lengths=lengths[first],
      counts=merged.astype(np.int64))


def _round_words(prior: PriorPopulation, alive: np.ndarray, depth: int,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """The explicit candidates of a round reaching ``depth`` symbols from
  the strings ``alive``: their ids, users, and whether each is a word."""
  cand, inverse = np.unique(prior.ids[depth][alive], return_inverse=True)
  users = np.bincount(inverse, weights=prior.counts[alive],
                      minlength=cand.size)
  word = np.zeros(cand.size, dtype=bool)
  word[inverse] = prior.lengths[alive] < depth
  return cand, users, word


# Long function: one simulated run, a round's steps in the order of
# run_planned (caps, characters, votes and noise, release, next frontier).
def true_words(plan, prior: PriorPopulation, seed: int) -> int:
  """The true words one simulated run of ``plan`` (a
  :class:`triehh.theory.noisy_plan.NoisyPlan`, through its methods)
  releases on ``prior`` (module docstring)."""
  rng = np.random.default_rng(seed)
  # The frontier, largest noisy count first: real prefix ids (-1: held by
  # no one) at depth p, and their noisy counts (None: the root).
  real, values = np.zeros(1, dtype=np.int64), [None]
  found, spent, p = 0, 0, 0
  for r in range(plan.num_levels):
    if not real.size:
      break
    moduli = plan.block_moduli(values, r)
    k, kept = plan.chars_for_round(moduli, r, p, spent)
    if not k:
      break
    real, moduli = real[:kept], moduli[:kept]
    spent += plan.round_bytes(moduli, k, p)
    e, w = plan.extensions(k, p)
    mark = np.zeros(prior.ids[p].max() + 1, dtype=bool)
    mark[real[real >= 0]] = True
    alive = np.flatnonzero(mark[prior.ids[p]])
    cand, users, word = _round_words(prior, alive, p + k)
    w_params = plan.params(r, True, kept * w, kept)
    p_params = plan.params(r, False)
    noisy = users + np.rint(rng.normal(0.0, w_params.sigma, cand.size))
    passed = np.where(word, noisy >= w_params.threshold,
                      noisy >= p_params.threshold)
    found += int((passed & word).sum())
    zero = max(kept * (e - w) - int((~word).sum()), 0)
    phantoms = int(rng.binomial(zero, p_params.false_positive_rate))
    nxt = passed & ~word
    overshoot = p_params.threshold + p_params.sigma**2 / max(
        p_params.threshold, 1.0)
    real = np.concatenate([cand[nxt], np.full(phantoms, -1, dtype=np.int64)])
    noisy = np.concatenate([noisy[nxt], np.full(phantoms, overshoot)])
    order = np.argsort(-noisy, kind="stable")
    real, values = real[order], [float(v) for v in noisy[order]]
    p += k
  return found


def expected_true_words(plan, prior: PriorPopulation) -> float:
  """The mean of :func:`true_words` over the seeds 1, ..., PRIOR_RUNS."""
  return float(np.mean([true_words(plan, prior, s)
                        for s in range(1, PRIOR_RUNS + 1)]))
