"""The two-server walk's fast engine: the released frontiers drawn from
their law given the counts alone (``docs/two-servers.md``).

At each step the candidates some key reaches get their true count plus
two independent draws of the servers' noise (the exact samplers of
:mod:`triehh.core.discrete_noise`). The candidates no key reaches are
never listed: in each class of end codes, how many of them pass is one
binomial draw (each passes with ``P[Z_0 + Z_1 >= T]``), which ones is a
uniform draw among them, and their noisy counts are drawn from the law of
``Z_0 + Z_1`` above T (:func:`triehh.theory.two_servers.sum_law`). That
is the same law as evaluating every candidate, at 10^9 users or 10^14
candidates in about a second; a class of at most :data:`ENUMERATE`
candidates is evaluated one by one instead.

:func:`run_walk` is the contract the real protocol
(``triehh.secure.protocol.run_walk``) shares: per step, the dict of the
kept candidates' noisy counts. A verification step (the discovered words'
full points, :func:`triehh.secure.plan.verification_points`) draws every
point explicitly: there are at most ``verify_cap``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from triehh.core import discrete_noise
from triehh.core import prefix_code as code_lib
from triehh.secure import plan as secure_plan
from triehh.theory import two_servers as theory

# Classes of at most this many candidates are evaluated one by one.
ENUMERATE = 1 << 12
# A class whose noise-only passes are at least a quarter of its candidates
# draws them from its listed candidates (rejection would collect coupons),
# if it holds at most this many.
DENSE = 1 << 22


class _Binary:
  """The generic domain (hashes): every extension valid, one class."""

  char_bits = 1

  def class_sizes(self, from_bits, to_bits):
    return [1 << (to_bits - from_bits)]

  def padding(self, ids):
    return np.zeros(np.shape(ids), dtype=np.int64)

  def extensions(self, prefixes, from_bits, to_bits, t=None):
    del t
    d = to_bits - from_bits
    tails = np.arange(1 << d, dtype=np.uint64)
    out = (np.asarray(prefixes, dtype=np.uint64)[:, None] << np.uint64(d)
           ) | tails[None, :]
    return out.reshape(-1)

  def random_extensions(self, rng, prefixes, from_bits, to_bits, t):
    del t
    d = to_bits - from_bits
    tails = rng.integers(0, 1 << d, size=len(prefixes), dtype=np.uint64)
    return (np.asarray(prefixes, dtype=np.uint64) << np.uint64(d)) | tails


def _as_arrays(counts) -> tuple[np.ndarray, np.ndarray]:
  if isinstance(counts, Mapping):
    ids = np.fromiter((int(k) for k in counts), dtype=np.uint64,
                      count=len(counts))
    values = np.fromiter((int(v) for v in counts.values()), dtype=np.int64,
                         count=len(counts))
  else:
    ids, values = counts
    ids = np.asarray(ids, dtype=np.uint64)
    values = np.asarray(values, dtype=np.int64)
  if ids.shape != values.shape or ids.ndim != 1:
    raise ValueError("counts must map ids to counts, or be (ids, counts) "
                     "arrays of one shape")
  if values.size and values.min() < 0:
    raise ValueError("counts must not be negative")
  return ids, values


def _noise(rng, noise: str, scale: float, size: int) -> np.ndarray:
  draw = (discrete_noise.discrete_laplace if noise == theory.LAPLACE else
          discrete_noise.discrete_gaussian)
  return draw(rng, scale, size) + draw(rng, scale, size)


def _thresholds(thresholds, num_classes: int) -> np.ndarray:
  if np.ndim(thresholds) == 0:
    return np.full(num_classes, int(thresholds), dtype=np.int64)
  out = np.asarray(thresholds, dtype=np.int64)
  if out.size != num_classes:
    raise ValueError(f"a step's thresholds must be one integer or one per "
                     f"class of end codes ({num_classes}), got {out.size}")
  return out


def run_walk(counts, bits: int, steps: Sequence[int],
             sigmas: Sequence[float], thresholds, rng, *,
             noise: str = theory.LAPLACE,
             code: code_lib.PrefixCode | None = None,
             max_frontier: int | None = None,
             verify_sigma: float | None = None,
             verify_cap: int | None = None,
             verify_thresholds=()) -> list[dict[int, int]]:
  """The walk's released frontiers, per step ``{candidate: noisy count}``.

  Args:
    counts: id -> keys (users) at it, or ``(ids, counts)`` arrays; ids of
      ``bits`` bits.
    bits: the ids' bits (at most 64).
    steps: increasing prefix lengths in bits, the last ``bits``.
    sigmas: per step, one server's noise: the discrete Laplace's scale, or
      the discrete Gaussian's sigma (``noise``).
    thresholds: per step, an integer, or (with ``code``) one per number of
      trailing end codes t = 0..Δ characters.
    rng: a numpy Generator or a seed.
    noise: ``"laplace"`` or ``"gaussian"``.
    code: the prefix code: only valid candidates are evaluated, and only
      live prefixes (no end code) are extended; None: every extension of
      every kept candidate (hashes).
    max_frontier: extend at most this many live prefixes per step, the
      highest noisy counts (ties: the smaller id).
    verify_sigma, verify_cap, verify_thresholds: a verification step after
      the steps (with ``code``; :class:`triehh.secure.plan.WalkPlan`), its
      kept full points the last dict; None: none.
  """
  rng = np.random.default_rng(rng)
  theory.check_noise(noise)
  ids, values = _as_arrays(counts)
  steps = _checked_steps(bits, steps, sigmas, thresholds, code)
  domain = _Binary() if code is None else code
  unit = domain.char_bits
  frontier = np.zeros(1, dtype=np.uint64)
  before = 0
  out = []
  for r, stop in enumerate(steps):
    kept = _step(rng, domain, ids, values, frontier, before, stop, bits,
                 float(sigmas[r]), noise, thresholds[r], unit)
    out.append(kept)
    keys = np.fromiter(kept, dtype=np.uint64, count=len(kept))
    if code is not None:
      keys = keys[code.padding(keys) == 0] if stop < bits else keys[:0]
    if max_frontier is not None and keys.size > max_frontier:
      scores = np.array([kept[int(k)] for k in keys])
      keys = keys[np.lexsort((keys, -scores))[:max_frontier]]
    frontier = np.sort(keys)
    before = stop
  if verify_sigma is not None:
    out.append(_verify(rng, code, steps, out, ids, values, noise,
                       float(verify_sigma), verify_cap, verify_thresholds))
  return out


def _checked_steps(bits, steps, sigmas, thresholds, code) -> list[int]:
  """``steps`` as integers, once they fit ``bits``, the sigmas, thresholds
  and code; ValueError naming the misfit otherwise."""
  steps = [int(s) for s in steps]
  if (not steps or steps[-1] != bits or bits > 64
      or any(b <= a for a, b in zip([0] + steps, steps))):
    raise ValueError(f"steps must increase to bits={bits} (at most 64), "
                     f"got {steps}")
  if len(sigmas) != len(steps) or len(thresholds) != len(steps):
    raise ValueError("give one sigma and one threshold per step")
  unit = 1 if code is None else code.char_bits
  if code is not None and (code.bits != bits or any(s % unit for s in steps)):
    raise ValueError(f"the code's words are {code.bits} bits, steps "
                     f"multiples of {unit}; got bits={bits}, steps={steps}")
  return steps


def _verify(rng, code, steps, frontiers, ids, values, noise, scale, cap,
            table) -> dict[int, int]:
  """The verification step: the discovered words' full points, each its
  true count plus both servers' noise, kept at the threshold for their
  number."""
  if code is None:
    raise ValueError("a verification step needs a code: its candidates are "
                     "the complete words the steps discover")
  points = secure_plan.verification_points(code, steps, frontiers, cap)
  held, inverse = np.unique(ids, return_inverse=True)
  total = np.bincount(inverse, weights=values, minlength=held.size)
  at = np.minimum(np.searchsorted(held, points), max(held.size - 1, 0))
  true = np.zeros(points.size, dtype=np.int64)
  if held.size:
    found = held[at] == points
    true[found] = total[at[found]].astype(np.int64)
  noisy = true + _noise(rng, noise, scale, points.size)
  kept = noisy >= secure_plan.verification_threshold(table, points.size)
  return dict(zip(points[kept].tolist(), noisy[kept].tolist()))


def _step(rng, domain, ids, values, frontier, before, stop, bits, scale,
          noise, thresholds, unit) -> dict[int, int]:
  """One step: the kept candidates among the extensions of ``frontier``
  (prefixes of ``before`` bits) to ``stop`` bits."""
  sizes = domain.class_sizes(before // unit, stop // unit)
  cut = _thresholds(thresholds, len(sizes))
  parents = ids >> np.uint64(bits - before) if before else np.zeros_like(ids)
  live = np.isin(parents, frontier)
  held, inverse = np.unique(ids[live] >> np.uint64(bits - stop),
                            return_inverse=True)
  true = np.bincount(inverse, weights=values[live],
                     minlength=held.size).astype(np.int64)
  held_class = np.minimum(domain.padding(held), len(sizes) - 1)
  kept = {}
  noisy = true + _noise(rng, noise, scale, held.size)
  passed = noisy >= cut[held_class]
  kept.update(zip(held[passed].tolist(), noisy[passed].tolist()))
  for t, size in enumerate(sizes):
    total = int(size) * int(frontier.size)
    unheld = total - int(np.count_nonzero(held_class == t))
    if unheld <= 0 or cut[t] >= theory.NEVER:
      continue
    if total <= ENUMERATE:
      every = _unheld(domain, frontier, before // unit, stop // unit, t, held)
      draws = _noise(rng, noise, scale, every.size)
      ok = draws >= cut[t]
      kept.update(zip(every[ok].tolist(), draws[ok].tolist()))
      continue
    z, pmf = theory.sum_law(noise, scale)
    tail = pmf[z >= cut[t]]
    if not tail.size or tail.sum() <= 0:
      continue
    how_many = int(rng.binomial(unheld, min(1.0, float(tail.sum()))))
    if not how_many:
      continue
    chosen = _distinct_unheld(rng, domain, frontier, before // unit,
                              stop // unit, t, held, how_many, total)
    counts = rng.choice(z[z >= cut[t]], size=how_many, p=tail / tail.sum())
    kept.update(zip(chosen.tolist(), counts.tolist()))
  return kept


def _unheld(domain, frontier, start, end, t, held) -> np.ndarray:
  """Every class-t extension of ``frontier`` from ``start`` to ``end``
  characters that no key reaches (``held``: those some key reaches)."""
  every = domain.extensions(frontier, start, end, t)
  return every[~np.isin(every, held)]


def _distinct_unheld(rng, domain, frontier, start, end, t, held,
                     how_many, total) -> np.ndarray:
  """``how_many`` distinct uniform class-t extensions of ``frontier`` from
  ``start`` to ``end`` characters that no key reaches, of the class's
  ``total``: drawn without replacement from the class's list when they are
  a quarter of it or more, else by rejection (they are then a small share
  of the class)."""
  if 4 * how_many >= total and total <= DENSE:
    every = _unheld(domain, frontier, start, end, t, held)
    return every[rng.choice(every.size, size=how_many, replace=False)]
  chosen = np.zeros(0, dtype=np.uint64)
  while chosen.size < how_many:
    need = 2 * (how_many - chosen.size) + 8
    parents = frontier[rng.integers(0, frontier.size, size=need)]
    draw = domain.random_extensions(rng, parents, start, end, t)
    draw = draw[~np.isin(draw, held)]
    _, first = np.unique(draw, return_index=True)
    draw = draw[np.sort(first)]
    draw = draw[~np.isin(draw, chosen)]
    chosen = np.concatenate([chosen, draw])[:how_many]
  return chosen
