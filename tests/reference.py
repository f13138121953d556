"""A deliberately naive TrieHH (Python sets and dicts) to check the engines.

It follows Algorithms 1-3 of the paper literally, word by word, and draws
randomness through :mod:`triehh.sampling` in the engines' order, so the same
seed must give the same trie.
"""

from __future__ import annotations

import collections

import numpy as np

from triehh import sampling
from triehh import trie as trie_lib


def sequence(pop, w: int) -> str:
  """The word's symbol string (end symbol included if it fits L)."""
  return pop.alphabet.decode(pop.codes[w])


def run(pop, *, theta, batch_size, rng, max_num_prefixes=None, schedule=None):
  """Returns (levels, heavy_hitters): per depth a dict prefix -> votes."""
  end = pop.alphabet.end_symbol
  frontier = {""}
  levels = []
  hitters = {}
  for depth in range(1, pop.num_levels + 1):
    if not frontier:
      break
    if schedule is not None:
      if depth > len(schedule):
        break
      users = np.asarray(schedule[depth - 1])
    else:
      users = sampling.sample_users(rng, pop.num_users, batch_size)
    words = sampling.words_of(pop, users,
                              sampling.draw_word_ranks(rng, pop, users))
    candidates = collections.Counter()
    for w in words:
      seq = sequence(pop, int(w))
      if len(seq) >= depth and seq[:depth - 1] in frontier:
        candidates[seq[:depth]] += 1
    kept = {p: v for p, v in candidates.items() if v >= theta}
    if max_num_prefixes is not None and len(kept) > max_num_prefixes:
      symbols = pop.alphabet.symbols()
      key = lambda p: [symbols.index(c) for c in p]
      ranked = sorted(kept.items(), key=lambda kv: (-kv[1], key(kv[0])))
      kept = dict(ranked[:max_num_prefixes])
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
