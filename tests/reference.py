"""A deliberately naive TrieHH (Python sets and dicts) to check the engines.

It follows Algorithms 1-3 of the paper literally, word by word, and is an
independent oracle: it samples users and picks each user's word itself, in
plain Python, making only the generator calls that the contract of
:mod:`triehh.engines.sampling` documents, so the same seed must give the same trie:

* one-word populations, no schedule: it lists the round's cells itself
  (frontier prefix and next symbol, then "no next symbol" per frontier
  prefix, then the rest), counts their users by scanning every user, and
  draws their counts as the contract does: one ``binomial`` call (each user
  kept with probability m / n), then, unless exactly m were kept, one
  ``choice`` of the ranks of the users dropped or added, mapped to their
  cells one by one; a cell's sampled users are its votes;
* otherwise: one ``choice`` of the round's users (:func:`sample_users`),
  then, for several-word users, one ``integers`` of their word ranks.
"""

from __future__ import annotations

import collections

import numpy as np

from triehh.core import trie as trie_lib


def sequence(pop, w: int) -> str:
  """The word's symbol string (end symbol included if it fits L)."""
  return pop.alphabet.decode(pop.codes[w])


def user_counts(pop) -> list[list[tuple[int, int]]]:
  """Per user, its (word index, count) pairs in increasing word index."""
  if pop.is_single_word:
    return [[(int(w), 1)] for w in pop.user_word]
  users = []
  for i in range(pop.num_users):
    start, stop = int(pop.user_offsets[i]), int(pop.user_offsets[i + 1])
    users.append(sorted((int(pop.entry_word[e]), int(pop.entry_count[e]))
                        for e in range(start, stop)))
  return users


def choose_word(counts: list[tuple[int, int]], rank: int) -> int:
  """The word whose cumulative count first exceeds ``rank``."""
  seen = 0
  for word, count in counts:
    seen += count
    if rank < seen:
      return word
  raise ValueError(f"rank {rank} is not below the user's total {seen}")


def sample_users(rng, n: int, m: int) -> list[int]:
  """m distinct users of range(n), in the order drawn (contract step 1b)."""
  return [int(u) for u in rng.choice(n, size=m, replace=False,
                                     shuffle=False)]


def poisson_users(rng, n: int, rate: float) -> list[int]:
  """Each user with probability rate (contract step 1c: a Binomial(n, rate)
  size, then that many distinct users in the order drawn)."""
  size = int(rng.binomial(n, rate))
  return [int(u) for u in rng.choice(n, size=size, replace=False,
                                     shuffle=False)]


def round_words(pop, counts, rng, batch_size, scheduled,
                rate=None) -> list[int]:
  """The words the round's users vote with, in sample order."""
  if scheduled is None and rate is not None:
    users = poisson_users(rng, pop.num_users, rate)
  elif scheduled is None:
    users = sample_users(rng, pop.num_users, batch_size)
  else:
    users = [int(u) for u in scheduled]
  if pop.is_single_word:
    return [counts[u][0][0] for u in users]
  totals = np.array([sum(c for _, c in counts[u]) for u in users],
                    dtype=np.int64)
  ranks = rng.integers(0, totals)
  return [choose_word(counts[u], int(r)) for u, r in zip(users, ranks)]


def round_cell_votes(pop, counts, rng, batch_size, frontier,
                     depth, rate=None) -> collections.Counter:
  """The votes of a round drawn at cell level (contract step 1a)."""
  symbols = pop.alphabet.symbols()  # in code order
  order = lambda p: [symbols.index(c) for c in p]
  frontier = sorted(frontier, key=order)
  seqs = [sequence(pop, c[0][0]) for c in counts]
  cells, users = [], []
  for prefix in frontier:  # vote index order: prefix, then symbol
    for symbol in symbols:
      held = sum(1 for q in seqs if q.startswith(prefix + symbol))
      if held:
        cells.append(prefix + symbol)
        users.append(held)
  no_symbol = [sum(1 for q in seqs if q == prefix) for prefix in frontier]
  rest = len(seqs) - sum(users) - sum(no_symbol)
  everyone = users + no_symbol + [rest]
  if rate is None:
    drawn = draw_cell_counts(everyone, batch_size, rng)
  else:  # contract step 1c: one binomial over the occupied cells
    occupied = [u for u in everyone if u]
    kept = iter(int(k) for k in rng.binomial(
        np.array(occupied, dtype=np.int64), rate))
    drawn = [next(kept) if u else 0 for u in everyone]
  return collections.Counter({p: int(v) for p, v in zip(cells, drawn) if v})


def draw_cell_counts(cell_users: list[int], batch_size: int, rng) -> list[int]:
  """A uniform batch_size-subset's users per cell (contract step 1a)."""
  n = sum(cell_users)
  kept = [int(k) for k in rng.binomial(np.array(cell_users, dtype=np.int64),
                                       batch_size / n)]
  surplus = sum(kept) - batch_size
  if surplus:
    # Drop kept users (surplus > 0) or add users that were not kept.
    pool = list(kept) if surplus > 0 else [u - k for u, k in zip(cell_users, kept)]
    step = -1 if surplus > 0 else 1
    for rank in rng.choice(sum(pool), size=abs(surplus), replace=False,
                           shuffle=False):
      seen = 0
      for cell, size in enumerate(pool):
        seen += size
        if rank < seen:
          kept[cell] += step
          break
  return kept


def run(pop, *, theta, batch_size, rng, max_num_prefixes=None, schedule=None,
        sampling_rate=None):
  """Returns (levels, heavy_hitters): per depth a dict prefix -> votes.

  ``sampling_rate``: Poisson sampling (each user with that probability).
  """
  end = pop.alphabet.end_symbol
  counts = user_counts(pop)
  frontier = {""}
  levels = []
  hitters = {}
  for depth in range(1, pop.num_levels + 1):
    if not frontier:
      break
    if schedule is not None and depth > len(schedule):
      break
    scheduled = None if schedule is None else schedule[depth - 1]
    if pop.is_single_word and scheduled is None:
      candidates = round_cell_votes(pop, counts, rng, batch_size, frontier,
                                    depth, sampling_rate)
    else:
      candidates = collections.Counter()
      for w in round_words(pop, counts, rng, batch_size, scheduled,
                           sampling_rate):
        seq = sequence(pop, w)
        if len(seq) >= depth and seq[:depth - 1] in frontier:
          candidates[seq[:depth]] += 1
    kept = {p: v for p, v in candidates.items() if v >= theta}
    unfinished = {p: v for p, v in kept.items() if not p.endswith(end)}
    if max_num_prefixes is not None and len(unfinished) > max_num_prefixes:
      # The cap applies to unfinished prefixes only (TFF's reference TrieHH).
      symbols = pop.alphabet.symbols()
      key = lambda p: [symbols.index(c) for c in p]
      ranked = sorted(unfinished.items(), key=lambda kv: (-kv[1], key(kv[0])))
      kept = {p: v for p, v in kept.items() if p.endswith(end)}
      kept.update(ranked[:max_num_prefixes])
    levels.append(kept)  # a round that adds nothing is still a round run
    if not kept:
      break
    for p, v in kept.items():
      if p.endswith(end):
        hitters[p[:-1]] = v
    frontier = {p for p in kept if not p.endswith(end)}
  return levels, hitters


def trie_levels(trie: trie_lib.Trie) -> list[dict[str, int]]:
  """A trie's levels in the reference's format."""
  out = []
  for lv in trie.levels:
    d = {trie.alphabet.decode(c): int(v)
         for c, v in zip(lv.prefixes, lv.prefix_votes)}
    d.update({trie.alphabet.decode(c): int(v)
              for c, v in zip(lv.terminated, lv.terminated_votes)})
    out.append(d)
  return out
