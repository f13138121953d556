"""The public plan of one walk down the tree of the clients' points.

``steps`` are increasing prefix lengths in bits (the last is ``bits``); at
step r each server adds its own discrete noise of parameter ``sigmas[r]``
(``noise``: "laplace", the scale b_r, or "gaussian", sigma_r) to its share
of every candidate's count, and a candidate is kept when its reconstructed
noisy count is at least its threshold. The candidates of step r extend the
*live* prefixes kept at step r - 1 (the empty prefix before the first step)
to ``steps[r]`` bits:

- without a ``code`` (points are hashes, ``triehh.secure.hashing``): every
  extension; every kept prefix is live; ``thresholds[r]`` an integer;
- with a ``code`` (a :class:`triehh.core.prefix_code.PrefixCode`: points are
  words, c bits per character, code 0 the end; ``docs/two-servers.md``):
  the valid extensions (``code.extensions``); a kept candidate ending in
  t > 0 end codes is a complete word, not extended; ``thresholds[r]`` an
  integer or one integer per t = 0..(characters the step adds).

At most ``max_frontier`` live prefixes (those of highest noisy count, the
smaller prefix first among equal counts) are extended; None: all.

*Discover, then verify* (``verify_sigma`` set, with a ``code``): the steps
above only discover. Their complete words, with every candidate kept at the
last step, are the verification's candidates V (:func:`verification_points`:
the highest noisy counts first, at most ``verify_cap``); one more step
evaluates every key at V's full points, each server adding its noise of
``verify_sigma``, and keeps the points at or above the threshold
``verify_thresholds`` gives |V| (:func:`verification_threshold`). Only that
step releases words. With no ``verify_thresholds`` the step returns every
point's noisy count, which both servers reconstruct in any case, and the
caller applies a threshold per point (post-processing:
``triehh.theory.two_servers.verified``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

MAX_BITS = 64
# The most bits one step may add (a prefix has 2^that candidates below it).
MAX_STEP_BITS = 20
# The exact samplers' range of sigma and scale.
MIN_SIGMA, MAX_SIGMA = 2.0**-10, 2.0**40
NOISES = ("laplace", "gaussian")


@dataclasses.dataclass(frozen=True)
class WalkPlan:
  """``bits``, ``steps``, ``sigmas``, ``thresholds``, ``noise``, ``code``
  and ``max_frontier`` of one walk (module docstring), checked when built
  (each error names the argument and the fix)."""

  bits: int
  steps: tuple[int, ...]
  sigmas: tuple[float, ...]
  thresholds: tuple[tuple[int, ...], ...]
  noise: str = "laplace"
  code: object = None
  max_frontier: int | None = None
  verify_sigma: float | None = None
  verify_cap: int | None = None
  verify_thresholds: tuple[tuple[int, int], ...] = ()

  def __post_init__(self):
    bits = self.bits
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or (
        not 1 <= bits <= MAX_BITS):
      raise ValueError(f"bits must be an integer in [1, {MAX_BITS}], got "
                       f"{bits!r}")
    steps = _integers("steps", self.steps)
    if not steps or steps[-1] != bits:
      raise ValueError(f"steps must end at bits={bits} (the full point), got "
                       f"{list(steps)}")
    previous = 0
    for r, step in enumerate(steps):
      if not 0 < step - previous <= MAX_STEP_BITS:
        raise ValueError(
            f"steps must increase by 1 to {MAX_STEP_BITS} bits at a time "
            f"(2^bits candidates below each prefix), got steps[{r}]={step} "
            f"after {previous}")
      previous = step
    if self.noise not in NOISES:
      raise ValueError(f"noise must be one of {', '.join(NOISES)}, got "
                       f"{self.noise!r}")
    sigmas = tuple(float(s) for s in _numbers("sigmas", self.sigmas))
    for r, sigma in enumerate(sigmas):
      if not MIN_SIGMA <= sigma <= MAX_SIGMA:
        raise ValueError(f"sigmas[{r}] must be in [2^-10, 2^40], got {sigma}")
    thresholds = tuple(
        _integers(f"thresholds[{r}]", t if _is_sequence(t) else [t])
        for r, t in enumerate(_sequence("thresholds", self.thresholds)))
    if not len(steps) == len(sigmas) == len(thresholds):
      raise ValueError(
          f"steps, sigmas and thresholds must have one entry per step, got "
          f"{len(steps)}, {len(sigmas)} and {len(thresholds)}")
    object.__setattr__(self, "bits", int(bits))
    object.__setattr__(self, "steps", steps)
    object.__setattr__(self, "sigmas", sigmas)
    object.__setattr__(self, "thresholds", thresholds)
    self._check_code()
    if self.max_frontier is not None and (
        isinstance(self.max_frontier, bool) or not isinstance(
            self.max_frontier, (int, np.integer)) or self.max_frontier < 1):
      raise ValueError(f"max_frontier must be None or an integer >= 1, got "
                       f"{self.max_frontier!r}")
    self._check_verify()

  def _check_verify(self) -> None:
    if self.verify_sigma is None:
      if self.verify_cap is not None or self.verify_thresholds:
        raise ValueError("verify_cap and verify_thresholds need verify_sigma"
                         " (the verification step's noise)")
      return
    if self.code is None:
      raise ValueError("a verification step needs a code: its candidates are"
                       " the complete words the steps discover")
    sigma = float(self.verify_sigma)
    if not MIN_SIGMA <= sigma <= MAX_SIGMA:
      raise ValueError(f"verify_sigma must be in [2^-10, 2^40], got {sigma}")
    cap = self.verify_cap
    if isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or (
        cap < 1):
      raise ValueError(f"verify_cap must be an integer >= 1 (the most "
                       f"verification candidates), got {cap!r}")
    table = tuple((int(t), int(size)) for t, size in self.verify_thresholds)
    sizes = [size for _, size in table]
    if table and (sizes[-1] < cap or any(
        b[0] <= a[0] or b[1] < a[1] for a, b in zip(table, table[1:]))):
      raise ValueError(
          "verify_thresholds must be (threshold, most candidates it serves) "
          "pairs, both increasing, the last serving verify_cap="
          f"{cap}, or empty (every point returned); got {table[:4]}")
    object.__setattr__(self, "verify_sigma", sigma)
    object.__setattr__(self, "verify_cap", int(cap))
    object.__setattr__(self, "verify_thresholds", table)

  @property
  def verifies(self) -> bool:
    """Whether a verification step follows the steps (module docstring)."""
    return self.verify_sigma is not None

  @property
  def num_releases(self) -> int:
    """The steps whose kept candidates the servers reconstruct: the steps,
    and the verification step if any."""
    return len(self.steps) + int(self.verifies)

  def _check_code(self) -> None:
    code = self.code
    if code is None:
      for r, per_t in enumerate(self.thresholds):
        if len(per_t) != 1:
          raise ValueError(f"thresholds[{r}] must be one integer without a "
                           "code (there are no end codes)")
      return
    if code.bits != self.bits:
      raise ValueError(f"bits={self.bits} must be code.bits={code.bits}")
    c = code.char_bits
    chars = (0,) + tuple(s // c for s in self.steps)
    for r, step in enumerate(self.steps):
      if step % c:
        raise ValueError(f"steps[{r}]={step} must be a multiple of the "
                         f"code's {c} bits per character")
      if len(self.thresholds[r]) not in (1, chars[r + 1] - chars[r] + 1):
        raise ValueError(
            f"thresholds[{r}] must be one integer or one per t = 0.."
            f"{chars[r + 1] - chars[r]} end codes, got "
            f"{len(self.thresholds[r])}")

  def added_bits(self, step: int) -> int:
    """The bits step ``step`` adds to the prefixes kept before it."""
    return self.steps[step] - (self.steps[step - 1] if step else 0)

  def candidates(self, step: int, live: np.ndarray) -> np.ndarray:
    """The candidates (sorted, uint64) of step ``step`` below the sorted
    ``live`` prefixes of the step before."""
    live = np.asarray(live, dtype=np.uint64)
    if self.code is None:
      return extensions(live, self.added_bits(step))
    c = self.code.char_bits
    before = self.steps[step - 1] // c if step else 0
    return np.asarray(self.code.extensions(live, before, self.steps[step] // c),
                      dtype=np.uint64)

  def thresholds_of(self, step: int, candidates: np.ndarray) -> np.ndarray:
    """Each candidate's threshold (int64) at step ``step``."""
    per_t = np.asarray(self.thresholds[step], dtype=np.int64)
    if per_t.size == 1:
      return np.full(len(candidates), per_t[0], dtype=np.int64)
    return per_t[np.minimum(self.code.padding(candidates), per_t.size - 1)]

  def live(self, step: int, kept: np.ndarray, counts: np.ndarray
           ) -> np.ndarray:
    """The kept candidates (sorted) the next step extends: those without
    end codes, at most ``max_frontier`` of the highest counts."""
    kept = np.asarray(kept, dtype=np.uint64)
    counts = np.asarray(counts, dtype=np.int64)
    if step == len(self.steps) - 1:
      return kept[:0]
    if self.code is not None:
      alive = self.code.padding(kept) == 0
      kept, counts = kept[alive], counts[alive]
    if self.max_frontier is not None and kept.size > self.max_frontier:
      order = np.lexsort((kept, -counts))[:self.max_frontier]
      kept = np.sort(kept[order])
    return kept

  def to_json(self) -> dict:
    """The plan as JSON values (the code as its characters and L)."""
    out = {field.name: getattr(self, field.name)
           for field in dataclasses.fields(self)}
    if self.code is not None:
      out["code"] = {"characters": list(self.code.characters),
                     "max_length": self.code.max_length}
    return out

  @classmethod
  def from_json(cls, values: dict) -> WalkPlan:
    """The plan :meth:`to_json` wrote."""
    values = dict(values)
    if values.get("code") is not None:
      from triehh.core import prefix_code  # pylint: disable=g-import-not-at-top
      values["code"] = prefix_code.PrefixCode(
          tuple(values["code"]["characters"]), values["code"]["max_length"])
    return cls(**values)


def verification_points(code, steps, frontiers, cap: int) -> np.ndarray:
  """The verification's candidates V (sorted, uint64 full points): the
  complete words of the discovery steps' ``frontiers`` (per step,
  ``{candidate: noisy count}``; a kept candidate ending in end codes, and
  every one kept at the last step), each padded to the code's bits; at
  most ``cap``, the highest noisy counts first (the smaller point among
  equal counts)."""
  return verification_candidates(code, steps, frontiers, cap)[0]


def verification_candidates(code, steps, frontiers, cap: int
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """``(points, counts, found)``: :func:`verification_points`, with each
  point's discovery count (int64) and the step that found it (int64)."""
  points, counts, found = [], [], []
  last = len(steps) - 1
  for r, kept in enumerate(frontiers[:len(steps)]):
    keys = np.fromiter(kept, dtype=np.uint64, count=len(kept))
    values = np.fromiter(kept.values(), dtype=np.int64, count=len(kept))
    done = (code.padding(keys) > 0) | (r == last)
    points.append(keys[done] << np.uint64(code.bits - steps[r]))
    counts.append(values[done])
    found.append(np.full(int(np.count_nonzero(done)), r, dtype=np.int64))
  if not points:
    return (np.zeros(0, np.uint64), np.zeros(0, np.int64),
            np.zeros(0, np.int64))
  points, counts = np.concatenate(points), np.concatenate(counts)
  found = np.concatenate(found)
  order = np.lexsort((points, -counts))[:cap]
  order = order[np.argsort(points[order])]
  return points[order], counts[order], found[order]


def verification_threshold(table, size: int) -> int:
  """The least threshold of ``table`` (``(threshold, most candidates it
  serves)`` pairs) serving ``size`` candidates; an empty table keeps every
  point (the smallest int64)."""
  if not table:
    return int(np.iinfo(np.int64).min)
  for threshold, most in table:
    if size <= most:
      return int(threshold)
  raise ValueError(f"no verification threshold serves {size} candidates "
                   f"(the table's last serves {table[-1][1]})")


def extensions(kept: np.ndarray, added_bits: int) -> np.ndarray:
  """Every extension of the sorted prefixes ``kept`` by ``added_bits``
  bits, sorted (uint64)."""
  suffixes = np.arange(2**added_bits, dtype=np.uint64)
  return (np.asarray(kept, dtype=np.uint64)[:, None]
          * np.uint64(2**added_bits) + suffixes).reshape(-1)


def _is_sequence(value) -> bool:
  return hasattr(value, "__len__") and not isinstance(value, (str, bytes))


def _integers(name: str, values) -> tuple[int, ...]:
  out = []
  for r, value in enumerate(_sequence(name, values)):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
      raise TypeError(f"{name}[{r}] must be an integer, got {value!r}")
    out.append(int(value))
  return tuple(out)


def _numbers(name: str, values) -> tuple[float, ...]:
  out = []
  for r, value in enumerate(_sequence(name, values)):
    if isinstance(value, bool) or not isinstance(
        value, (int, float, np.integer, np.floating)) or not math.isfinite(
            value):
      raise TypeError(f"{name}[{r}] must be a finite number, got {value!r}")
    out.append(value)
  return tuple(out)


def _sequence(name: str, values) -> Sequence:
  if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
    raise TypeError(f"{name} must be a sequence with one entry per step, got "
                    f"{values!r}")
  return list(values)
