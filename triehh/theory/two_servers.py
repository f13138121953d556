"""The two-server walk's accountant, thresholds and plan
(``docs/two-servers.md``).

Against one server and any clients colluding with it, the other server's
noise alone protects: at each step a discrete Laplace (scale ``b_r``) or
discrete Gaussian (``sigma_r``) draw on every candidate's count, the counts
moving by at most m (a user's words) in L1 and L2 norm. So:

* discrete Laplace: pure DP, ``epsilon = sum_r m / b_r``, delta 0
  (:func:`laplace_epsilon`);
* discrete Gaussian: dp_accounting's privacy loss distribution of the
  discrete Gaussian, composed over the steps (:func:`privacy_loss`),
  sigma calibrated to a target (:func:`calibrate_sigma`).

The released counts carry both servers' noise; :func:`sum_tail` is the
exact tail of ``Z_0 + Z_1``, from which :func:`threshold_for` picks the
least threshold a stated false-positive budget allows. :func:`plan` turns
public values (alphabet, L, epsilon, delta, noise, words per user, the
budget, the frontier cap) into a :class:`WalkPlan`.

*Discover, then verify* (``plan(..., verify=True)``): the steps run at
:data:`DISCOVERY_MULTIPLIER` times the verification's noise, every
candidate at the loose live-prefix budget; one more step counts the
discovered words (at most ``verify_cap``) at the run's least noise and
alone releases. Its accountant adds that step to the others (its
candidate set is a function of their output, and a user's keys move its
counts by at most m). Its thresholds (:func:`verified`): one per word
from the word's discovery count, the noisy trie's split of the
false-word budget (:mod:`triehh.theory.verification_thresholds`) over
the law of ``Z_0 + Z_1`` (``verification_split="weighted"``, the
default), or the one threshold for |V| candidates (``"even"``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from triehh.core import prefix_code as code_lib
from triehh.secure import plan as secure_plan
from triehh.theory import noise_laws
from triehh.theory import verification_thresholds
# Discover, then verify: a discovery step's noise over the verification's,
# the noisy trie's constant.
from triehh.theory.noisy_plan import DISCOVERY_MULTIPLIER
from triehh.theory.noisy_plan import EVEN
from triehh.theory.noisy_plan import WEIGHTED
from triehh.theory.noise_laws import GAUSSIAN
from triehh.theory.noise_laws import LAPLACE

NOISES = (LAPLACE, GAUSSIAN)
# A threshold no count reaches: the empty word's class.
NEVER = 2**62
# The servers whose noise draws every released count carries.
SERVERS = 2
ACCOUNTING = ("two servers: the honest server's discrete {noise} noise on "
              "every candidate of every step, composed over {steps} step(s)"
              " ({proof})")


def check_noise(noise: str) -> str:
  """``noise`` if it is one of :data:`NOISES`; ValueError otherwise."""
  if noise not in NOISES:
    raise ValueError(f"noise must be {LAPLACE!r} or {GAUSSIAN!r}, got "
                     f"{noise!r}")
  return noise


def laplace_epsilon(scales, words_per_user: int = 1) -> float:
  """Pure epsilon of discrete Laplace noise of ``scales`` (one per step)
  on counts moving by ``words_per_user`` in L1: ``sum m / b``."""
  return float(sum(words_per_user / b for b in scales))


def privacy_loss(noise: str, scales, words_per_user: int = 1):
  """dp_accounting's privacy loss distribution of the steps, composed."""
  from dp_accounting.pld import privacy_loss_distribution as pld  # pylint: disable=g-import-not-at-top
  check_noise(noise)
  out = None
  for scale in scales:
    if noise == LAPLACE:
      step = pld.from_discrete_laplace_mechanism(
          1.0 / scale, sensitivity=words_per_user)
    else:
      step = pld.from_discrete_gaussian_mechanism(
          scale, sensitivity=words_per_user)
    out = step if out is None else out.compose(step)
  return out


def epsilon_for(noise: str, scales, delta: float,
                words_per_user: int = 1) -> float:
  """The epsilon of the steps at ``delta`` (the Laplace's closed form,
  the Gaussian's PLD)."""
  if check_noise(noise) == LAPLACE:
    return laplace_epsilon(scales, words_per_user)
  return float(privacy_loss(noise, scales, words_per_user)
               .get_epsilon_for_delta(delta))


def calibrate_sigma(epsilon: float, delta: float, num_steps: int,
                    words_per_user: int = 1, tolerance: float = 1e-3,
                    multipliers=None) -> float:
  """The least sigma (to ``tolerance`` relative) for which ``num_steps``
  discrete Gaussian steps, step r at ``multipliers[r]`` times it (None:
  all at sigma), are (epsilon, delta)-DP."""
  scale = (1.0,) * num_steps if multipliers is None else tuple(multipliers)
  if len(scale) != num_steps:
    raise ValueError(f"give one multiplier per step ({num_steps}), got "
                     f"{len(scale)}")

  def ok(sigma):
    return epsilon_for(GAUSSIAN, [sigma * x for x in scale], delta,
                       words_per_user) <= epsilon
  low, high = 0.05, 1.0
  while not ok(high):
    low, high = high, high * 2
    if high > 2**30:
      raise ValueError(f"no sigma gives ({epsilon}, {delta})-DP")
  while high / low > 1 + tolerance:
    mid = math.sqrt(low * high)
    low, high = (low, mid) if ok(mid) else (mid, high)
  return high


def sum_law(noise: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
  """``(z, pmf)``: the law of ``Z_0 + Z_1`` on its support (cut where the
  tail is below 1e-40)."""
  return noise_laws.sum_pmf(check_noise(noise), scale, SERVERS)


def sum_tail(noise: str, scale: float, threshold) -> np.ndarray | float:
  """``P[Z_0 + Z_1 >= threshold]`` for two independent draws of one
  server's noise (``scale``: b, or sigma)."""
  return noise_laws.sum_tail(check_noise(noise), scale, threshold, SERVERS)


def threshold_for(noise: str, scale: float, candidates: float,
                  budget: float) -> int:
  """The least integer T with ``candidates * P[Z_0 + Z_1 >= T] <=
  budget``: noise-only candidates pass ``budget`` times on average."""
  if candidates <= 0:
    return NEVER
  tails, m = noise_laws.sum_tails(check_noise(noise), float(scale), SERVERS)
  ok = np.flatnonzero(candidates * tails <= budget)
  if not ok.size or ok[0] >= tails.size - 1:
    raise ValueError(
        f"no threshold keeps {candidates:.3g} candidates' noise-only passes "
        f"at {budget:.3g}: the noise's tail is computed to 1e-40")
  return int(ok[0]) - m


@dataclasses.dataclass(frozen=True)
class WalkPlan:
  """One run's public plan.

  Attributes:
    characters, max_length: the prefix code's alphabet and L.
    steps: the prefix lengths in bits the walk stops at (the last: bits).
    noise: ``"laplace"`` or ``"gaussian"``.
    scales: per step, one server's noise: b_r (Laplace) or sigma_r.
    thresholds: per step, per t = 0..Δ_r end codes, the integer threshold.
    epsilon, delta: the guarantee against either server with its clients.
    words_per_user: m, the keys a user sends.
    false_words: the budget: expected released words no user holds.
    max_frontier: the live prefixes extended per step, at most.
    verify_scale: the verification step's noise (b or sigma), None: the
      steps release the words themselves.
    verify_cap: the verification's candidates, at most.
    verify_thresholds: ``(threshold, most candidates it serves)`` pairs:
      the verification's threshold for its number of candidates.
    verification_split: ``"weighted"`` (a threshold per word from its
      discovery count, :func:`verified`) or ``"even"`` (the table's).
  """

  characters: tuple[str, ...]
  max_length: int
  steps: tuple[int, ...]
  noise: str
  scales: tuple[float, ...]
  thresholds: tuple[tuple[int, ...], ...]
  epsilon: float
  delta: float
  words_per_user: int
  false_words: float
  max_frontier: int
  verify_scale: float | None = None
  verify_cap: int | None = None
  verify_thresholds: tuple[tuple[int, int], ...] = ()
  verification_split: str = WEIGHTED

  def __post_init__(self):
    if self.verification_split not in (WEIGHTED, EVEN):
      raise ValueError("verification_split must be 'weighted' or 'even', "
                       f"got {self.verification_split!r}")

  @property
  def verifies(self) -> bool:
    return self.verify_scale is not None

  @property
  def engine_thresholds(self) -> tuple[tuple[int, int], ...]:
    """The verification's table the engines apply: none with the weighted
    split (every point's count returned, :func:`verified` cuts)."""
    return () if self.verification_split == WEIGHTED else (
        self.verify_thresholds)

  @property
  def all_scales(self) -> tuple[float, ...]:
    """Every step's noise, the verification's last."""
    return self.scales + ((self.verify_scale,) if self.verifies else ())

  @property
  def code(self) -> code_lib.PrefixCode:
    return code_lib.PrefixCode(self.characters, self.max_length)

  @property
  def bits(self) -> int:
    return self.code.bits

  @property
  def step_chars(self) -> tuple[int, ...]:
    """The steps in characters."""
    return tuple(s // self.code.char_bits for s in self.steps)

  @property
  def accounting(self) -> str:
    proof = ("pure: epsilon = sum m / b" if self.noise == LAPLACE else
             "dp_accounting PLD of the discrete Gaussian")
    out = ACCOUNTING.format(noise=self.noise, steps=len(self.all_scales),
                            proof=proof)
    if self.verifies:
      out += (f"; the last verifies the discovered words, the others at "
              f"{DISCOVERY_MULTIPLIER:g} times its noise")
    return out

  def candidates(self, step: int) -> list[int]:
    """Per t, the candidates of ``step`` bounded by the frontier cap (the
    exact count at the first step)."""
    chars = (0,) + self.step_chars
    sizes = self.code.class_sizes(chars[step], chars[step + 1])
    live = 1 if step == 0 else self.max_frontier
    return [live * s for s in sizes]


def plan(characters, max_length: int, epsilon: float, *,
         delta: float = 0.0, noise: str = LAPLACE,
         chars_per_step: int | None = None, words_per_user: int = 1,
         false_words: float = 1.0, max_frontier: int = 1,
         live_budget: float | None = None, verify: bool = False,
         verify_cap: int | None = None,
         first_chars: int | None = None,
         verification_split: str = WEIGHTED) -> WalkPlan:
  """The plan of ``docs/two-servers.md`` from public values: a first
  step of ``first_chars`` characters (None: ``chars_per_step``), then
  steps of ``chars_per_step`` (None: one step of L), epsilon split
  equally among them (Laplace: ``b = m R / epsilon``; Gaussian: one sigma
  calibrated for R steps at ``delta``), and per step and class of end codes
  the least threshold whose noise-only passes average at most
  ``false_words / L``; a step's live prefixes (not released, extended at
  most ``max_frontier`` of them) at most ``live_budget`` (None: the same
  ``false_words / L``).

  ``verify`` (steps only, with ``live_budget`` and ``verify_cap``):
  discover, then verify (module docstring): one sigma or b for R + 1
  steps, the R discovery steps' :data:`DISCOVERY_MULTIPLIER` times the
  verification's; each discovery step's live prefixes at ``live_budget``
  and its words (candidates of the verification, not released) at
  ``live_budget`` split over its classes of end codes; the verification's
  threshold the least whose noise-only passes over its candidates average
  at most ``false_words`` (``verification_split="even"``), or one per word
  from its discovery count (``"weighted"``, :func:`verified`)."""
  code = code_lib.PrefixCode(tuple(characters), max_length)
  check_noise(noise)
  k = max_length if chars_per_step is None else chars_per_step
  if not isinstance(k, int) or k < 1:
    raise ValueError(f"chars_per_step must be a whole number >= 1, got "
                     f"{chars_per_step!r}")
  steps = tuple(c * code.char_bits
                for c in step_lengths(max_length, k, first_chars))
  num = len(steps)
  if verify:
    return dataclasses.replace(
        _verified_plan(code, steps, epsilon, delta, noise, words_per_user,
                       false_words, max_frontier, live_budget, verify_cap),
        verification_split=verification_split)
  scale, delta = _base_scale(noise, epsilon, delta, (1.0,) * num,
                             words_per_user)
  scales = (scale,) * num
  draft = WalkPlan(tuple(characters), max_length, steps, noise, scales, (),
                   epsilon, delta, words_per_user, false_words, max_frontier)
  budget = false_words / max_length
  live = budget if live_budget is None else max(budget, live_budget)
  thresholds = tuple(
      tuple(threshold_for(noise, scales[r], k_t,
                          live if t == 0 and r < num - 1 else budget)
            for t, k_t in enumerate(draft.candidates(r)))
      for r in range(num))
  return dataclasses.replace(draft, thresholds=thresholds,
                             epsilon=_achieved(draft, epsilon))


def step_lengths(max_length: int, chars_per_step: int,
                 first_chars: int | None = None) -> list[int]:
  """The prefix lengths in characters a walk stops at: ``first_chars``
  (None: ``chars_per_step``), then every ``chars_per_step`` more, the
  last ``max_length``."""
  first = chars_per_step if first_chars is None else first_chars
  if not isinstance(first, int) or first < 1:
    raise ValueError(f"the first step's characters must be a whole number "
                     f">= 1, got {first_chars!r}")
  if first >= max_length:
    return [max_length]
  return list(range(first, max_length, chars_per_step)) + [max_length]


def _base_scale(noise: str, epsilon: float, delta: float, multipliers,
                words_per_user: int) -> tuple[float, float]:
  """(the base b or sigma, the delta stated): steps at ``multipliers``
  times the base, (epsilon, delta)-DP together. Laplace: ``b = m sum_r
  (1 / multiplier_r) / epsilon``, delta 0; Gaussian: calibrated."""
  if noise == LAPLACE:
    return words_per_user * sum(1.0 / x for x in multipliers) / epsilon, 0.0
  if not 0 < delta < 1:
    raise ValueError("the discrete Gaussian needs a delta in (0, 1), got "
                     f"delta={delta!r}")
  return calibrate_sigma(epsilon, delta, len(multipliers), words_per_user,
                         multipliers=multipliers), delta


def _achieved(draft: WalkPlan, epsilon: float) -> float:
  """The epsilon a plan states: the Laplace's exact sum, the Gaussian's
  PLD (at most the target it was calibrated to)."""
  achieved = epsilon_for(draft.noise, draft.all_scales, draft.delta,
                         draft.words_per_user)
  return min(achieved, epsilon) if draft.noise == GAUSSIAN else achieved


def _verified_plan(code, steps, epsilon, delta, noise, words_per_user,
                   false_words, max_frontier, live_budget, verify_cap
                   ) -> WalkPlan:
  """:func:`plan` with ``verify``."""
  num = len(steps)
  if num < 2 or live_budget is None or verify_cap is None:
    raise ValueError("discover-then-verify needs steps (chars_per_step "
                     "below L) and a work bound (max_candidates): its "
                     "discovery passes live_budget noise-only prefixes a step "
                     "(its frontier cap fills), and at most that bound are "
                     "verified")
  m = DISCOVERY_MULTIPLIER
  scale, delta = _base_scale(noise, epsilon, delta, (m,) * num + (1.0,),
                             words_per_user)
  scales = (m * scale,) * num
  draft = WalkPlan(tuple(code.characters), code.max_length, steps, noise,
                   scales, (), epsilon, delta, words_per_user, false_words,
                   max_frontier, scale, int(verify_cap), ())
  thresholds = []
  for r in range(num):
    sizes = draft.candidates(r)
    words = len(sizes) - (1 if r < num - 1 else 0)
    row = []
    for t, k_t in enumerate(sizes):
      live = t == 0 and r < num - 1
      budget = live_budget if live else live_budget / max(words, 1)
      row.append(threshold_for(noise, scales[r], k_t, budget))
    thresholds.append(tuple(row))
  table = verification_table(noise, scale, false_words, int(verify_cap))
  return dataclasses.replace(
      draft, thresholds=tuple(thresholds), verify_thresholds=table,
      epsilon=_achieved(draft, epsilon))


def verification_table(noise: str, scale: float, false_words: float,
                       cap: int) -> tuple[tuple[int, int], ...]:
  """``(T, most candidates)`` pairs, T increasing: T is the least threshold
  whose noise-only passes average at most ``false_words`` over that many
  candidates (the most: ``false_words / P[Z_0 + Z_1 >= T]``), up to
  ``cap`` candidates."""
  table = []
  t = threshold_for(noise, scale, 1, false_words)
  while True:
    tail = float(sum_tail(noise, scale, t))
    most = cap if tail <= 0 else int(min(cap, false_words / tail))
    if most >= 1 and (not table or most > table[-1][1]):
      table.append((t, most))
    if most >= cap:
      return tuple(table)
    t += 1


def verified(plan_: WalkPlan, frontiers) -> list[dict[int, int]]:
  """The walk's output with its verification step cut at each point's own
  threshold (``verification_split="weighted"``): ``frontiers`` as the
  engines return them for :attr:`WalkPlan.engine_thresholds`, the last
  dict every point of V with its noisy count. The thresholds are those of
  :func:`triehh.theory.verification_thresholds.thresholds` from each
  point's discovery count and its step's noise, over the sum of the two
  servers' draws: their tails sum to at most ``false_words``, so the
  points no user holds are released ``false_words`` times a run at most
  on average. A function of the counts both servers reconstruct
  (post-processing). Other plans: ``frontiers`` unchanged."""
  if not plan_.verifies or plan_.verification_split != WEIGHTED:
    return list(frontiers)
  points, counts, found = secure_plan.verification_candidates(
      plan_.code, plan_.steps, frontiers, plan_.verify_cap)
  last = frontiers[-1]
  if len(last) != points.size:
    raise ValueError(f"the verification step returned {len(last)} points "
                     f"of V's {points.size}: run it without thresholds "
                     "(WalkPlan.engine_thresholds)")
  taus = verification_thresholds.thresholds(
      plan_.noise, plan_.verify_scale, counts,
      np.asarray(plan_.scales, dtype=np.float64)[found], plan_.false_words,
      parts=SERVERS)
  noisy = np.array([last[int(p)] for p in points.tolist()], dtype=np.int64)
  kept = noisy >= taus
  return list(frontiers[:-1]) + [dict(zip(points[kept].tolist(),
                                          noisy[kept].tolist()))]
