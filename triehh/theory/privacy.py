"""Differential privacy of TrieHH: Theorem 1 and Corollary 1 of the paper.

Theorem 1 (Zhu et al., AISTATS 2020). If ``4 <= theta <= sqrt(n)`` and
``1 <= gamma <= sqrt(n) / (theta + 1)``, TrieHH with batch size
``m = gamma * sqrt(n)`` on sequences of length at most ``L`` is
``(eps, delta)``-differentially private (user-level) with::

    eps   = L * ln(1 + 1 / (sqrt(n) / (gamma * theta) - 1))
    delta = (theta - 2) / ((theta - 3) * theta!)

Corollary 1 inverts it: for a target ``(eps, delta)``::

    theta = max{10, ceil(exp(W(C) + 1) - 1/2), ceil(exp(eps / L) - 1)}
    C     = ln(8 / (7 sqrt(2 pi)) / delta) / e        (W: Lambert W, branch 0)
    gamma = (exp(eps / L) - 1) sqrt(n) / (theta exp(eps / L))

and, for ``n >= 1e4``, ``theta = ceil(log10(n) + 6)`` gives
``delta <= 1 / (300 n)`` (the ``"log10"`` rule here).

``L`` (``num_levels`` here) counts every symbol a user can be asked to vote
on. In this project a word of at most ``max_length`` characters is followed
by the end symbol, so :func:`triehh.discover` accounts for
``max_length + 1`` levels (:func:`levels_for_length`).

The batch size is an integer: :func:`calibrate` rounds ``gamma * sqrt(n)``
down (a smaller batch only lowers epsilon) and reports the epsilon that the
rounded batch really achieves.
"""

from __future__ import annotations

import dataclasses
import decimal
import math

from scipy import special

from triehh.core import validation
from triehh.theory import _search
from triehh.theory import limits

_LAMBERT_CONST = 8.0 / (7.0 * math.sqrt(2.0 * math.pi))


def theorem_delta(theta: int) -> float:
  """delta of Theorem 1 for threshold ``theta`` (computed in log space)."""
  if theta < 4:
    raise ValueError(f"Theorem 1 needs theta >= 4, got theta={theta}")
  return math.exp(math.log(theta - 2) - math.log(theta - 3)
                  - math.lgamma(theta + 1))


def check_conditions(n: int, theta: float, gamma: float) -> None:
  """Raises ``ValueError`` naming the failed condition of Theorem 1.

  The advice only names values inside the theorem's range
  (``4 <= theta <= sqrt(n)``, ``1 <= gamma <= sqrt(n) / (theta + 1)``, so
  ``theta <= sqrt(n) - 1``); when no theta or gamma in range works for
  ``n`` users, it says so and how many users would do.
  """
  n = limits.check_users("n (number of users)", n)
  if not math.isfinite(validation.check_real("theta", theta)):
    raise ValueError(f"theta must be a finite number, got {theta}")
  _check_ranges(n, theta, validation.check_positive("gamma", gamma))


def _check_ranges(n: int, theta: float, gamma: float) -> None:
  """:func:`check_conditions` on arguments already checked: ``n`` an int
  >= 1, ``theta`` finite, ``gamma`` > 0."""
  root = math.sqrt(n)
  if theta < 4:
    raise ValueError(f"Theorem 1 needs theta >= 4, got theta={theta}; "
                     f"{_theta_advice(n)}")
  if theta > root:
    raise ValueError(
        f"Theorem 1 needs theta <= sqrt(n) = {root:.4g}, got theta={theta}; "
        f"{_theta_advice(n, theta)}")
  upper = root / (theta + 1)
  if upper < 1:  # no gamma in [1, upper]: the gamma condition that fails
    bound = ("gamma >= 1" if gamma < 1 else
             f"gamma <= sqrt(n)/(theta+1) = {upper:.6g}")
    raise ValueError(
        f"Theorem 1 needs {bound}, got gamma={gamma:.6g}; no gamma works at "
        f"theta={theta}, since 1 <= gamma <= sqrt(n)/(theta+1) needs theta "
        f"<= sqrt(n) - 1 = {root - 1:.4g}: {_theta_advice(n, theta)}")
  if gamma < 1:
    raise ValueError(
        f"Theorem 1 needs gamma >= 1 (batch size >= sqrt(n) = {root:.4g}), got "
        f"gamma={gamma:.6g}; use gamma in [1, {upper:.6g}] "
        f"({_batch_range(n, theta)})")
  if gamma > upper:
    raise ValueError(
        f"Theorem 1 needs gamma <= sqrt(n)/(theta+1) = {upper:.6g}, got "
        f"gamma={gamma:.6g}; use gamma in [1, {upper:.6g}] "
        f"({_batch_range(n, theta)})")


def _batch_range(n: int, theta: float) -> str:
  """The whole batch sizes in Theorem 1's range, ``sqrt(n) <= m <=
  n / (theta + 1)``, or that there is none."""
  root = math.isqrt(n)
  low = root if root * root == n else root + 1
  high = (n // (int(theta) + 1) if float(theta).is_integer()
          else math.floor(n / (theta + 1)))
  if low <= high:
    return f"a batch of at least {low} and at most {high} users"
  return (f"no whole batch size lies in [sqrt(n), n/(theta+1)] = "
          f"[{math.sqrt(n):.6g}, {n / (theta + 1):.6g}]; more users widen it")


def _theta_advice(n: int, theta: float | None = None) -> str:
  """Which thetas satisfy Theorem 1 at ``n`` (those with a gamma in range:
  ``4 <= theta <= sqrt(n) - 1``), or that none does and how many users
  would; with ``theta``, also the users that theta needs."""
  largest = math.isqrt(n) - 1
  for_theta = ""
  if theta is not None and theta > 4:
    for_theta = f"at least n = {_users_for_theta(theta)} users for theta={theta}"
  if largest >= 4:
    use = "use theta=4" if largest == 4 else f"use theta in [4, {largest}]"
    return use + (f", or {for_theta}" if for_theta else "")
  return (f"no theta in Theorem 1's range works at n={n}: theta >= 4 and "
          "gamma >= 1 need sqrt(n) >= theta + 1 >= 5, so use at least n = 25 "
          "users" + (f" ({for_theta})" if for_theta else ""))


def _users_for_theta(theta: float) -> int:
  """The fewest users with a gamma in Theorem 1's range at ``theta``:
  ``sqrt(n) >= theta + 1``."""
  if float(theta).is_integer():
    return (int(theta) + 1)**2
  return math.ceil((theta + 1)**2)


def guarantee(n: int, num_levels: int, theta: int,
              gamma: float) -> tuple[float, float]:
  """``(epsilon, delta)`` of Theorem 1 for the given parameters.

  Args:
    n: number of users.
    num_levels: L, the trie levels a user can vote on: a word's characters
      plus the end symbol, so ``discover(max_length=k)`` runs ``k + 1``
      (see :func:`levels_for_length`).
    theta: the vote threshold.
    gamma: the batch-size factor, ``m = gamma * sqrt(n)``.
  """
  num_levels = _check_levels(num_levels)
  validation.check_int("theta", theta)
  check_conditions(n, theta, gamma)
  return _theorem_1(n, num_levels, theta, gamma)


def _theorem_1(n: int, num_levels: int, theta: int,
               gamma: float) -> tuple[float, float]:
  """:func:`guarantee` on arguments inside Theorem 1's conditions."""
  ratio = math.sqrt(n) / (gamma * theta)
  epsilon = num_levels * math.log1p(1.0 / (ratio - 1.0))
  return epsilon, theorem_delta(theta)


def levels_for_length(max_length: int) -> int:
  """Trie levels of words of at most ``max_length`` characters: one more,
  for the end symbol. What :func:`triehh.discover` accounts for."""
  return validation.check_int("max_length (characters)", max_length) + 1


@dataclasses.dataclass(frozen=True)
class Calibration:
  """Parameters that achieve a target ``(epsilon, delta)`` by Corollary 1.

  Attributes:
    theta: the vote threshold.
    gamma_unrounded: the factor Corollary 1 gives, before the batch is
      rounded down to an integer; :attr:`effective_gamma` is the one used.
    batch_size: m = floor(gamma_unrounded * sqrt(n)), users sampled per round.
    epsilon: epsilon that ``batch_size`` achieves by Theorem 1 (<= target).
    delta: delta of Theorem 1 for ``theta`` (<= target).
    target_epsilon, target_delta: what was asked for.
    n: the number of users.
    num_levels: L, the trie levels accounted for.
  """

  theta: int
  gamma_unrounded: float
  batch_size: int
  epsilon: float
  delta: float
  target_epsilon: float
  target_delta: float
  n: int
  num_levels: int

  @property
  def effective_gamma(self) -> float:
    """``batch_size / sqrt(n)``, the gamma actually used."""
    return self.batch_size / math.sqrt(self.n)


def lambert_theta(delta: float) -> int:
  """``max(10, ceil(exp(W(C_delta) + 1) - 1/2))`` of Corollary 1."""
  return _lambert_theta(limits.check_delta("delta", delta))


def _lambert_theta(delta: float) -> int:
  """:func:`lambert_theta` of a ``delta`` already checked
  (:func:`limits.check_delta`)."""
  ratio = _LAMBERT_CONST / delta
  # Below delta ~ 1e-308 the ratio overflows: take the logs apart.
  log_ratio = (math.log(ratio) if math.isfinite(ratio) else
               math.log(_LAMBERT_CONST) - math.log(delta))
  c = log_ratio / math.e
  w = float(special.lambertw(c, 0).real)
  return max(10, math.ceil(math.exp(w + 1.0) - 0.5))


def calibrate(n: int, num_levels: int, epsilon: float, delta: float, *,
              theta_rule: str = "lambert") -> Calibration:
  """theta, gamma and the batch size for ``(epsilon, delta)`` (Corollary 1).

  Args:
    n: number of users.
    num_levels: L, the trie levels a user can vote on: a word's characters
      plus the end symbol, so ``discover(max_length=k)`` runs ``k + 1``
      (see :func:`levels_for_length`).
    epsilon: target epsilon (> 0).
    delta: target delta, in (0, 1).
    theta_rule: ``"lambert"`` (the general rule) or ``"log10"``
      (``theta = ceil(log10 n + 6)``, valid for ``n >= 1e4`` and
      ``delta >= 1/(300 n)``).

  Raises:
    ValueError: naming the condition of Theorem 1 or Corollary 1 that fails
      and a value that would satisfy it (for too few users, how many are
      needed).
  """
  n = limits.check_users("n (number of users)", n)
  num_levels = _check_levels(num_levels)
  epsilon = validation.check_positive("epsilon", epsilon)
  delta = validation.check_real("delta", delta)
  if theta_rule not in ("lambert", "log10"):
    raise ValueError(f"theta_rule must be 'lambert' or 'log10', got "
                     f"{theta_rule!r}")
  setting = f"epsilon={epsilon:g} over L={num_levels} levels"
  _check_reachable(n, num_levels, epsilon, setting)
  growth = math.exp(epsilon / num_levels)
  least_theta = max(10, math.ceil(growth - 1.0))  # whatever delta is
  if not 0 < delta < 1:
    need = _min_users(least_theta, growth, epsilon, num_levels)
    if n < need:  # e.g. delta = 1/n^2 = 1 for n = 1
      raise ValueError(_too_few(n, setting, need, more=" (more for a smaller "
                                "delta)"))
  delta = limits.check_delta("delta", delta)
  theta = _theta(n, delta, theta_rule, least_theta)
  root = math.sqrt(n)
  gamma = _gamma(n, theta, growth)
  batch_size = math.floor(gamma * root)
  if batch_size < root:  # the integer batch must still give gamma >= 1
    need = _min_users(theta, growth, epsilon, num_levels)
    more_epsilon = ""
    if theta < root:
      need_eps = num_levels * -math.log1p(-theta / root)
      more_epsilon = f", or epsilon >= {need_eps:.4g}"
    raise ValueError(_too_few(
        n, f"{setting}, delta={delta:.3g}", need, more_epsilon,
        f" (Corollary 1 gives theta={theta} and gamma={gamma:.4g}, batch size "
        f"{batch_size}; Theorem 1 needs gamma >= 1, a batch of at least "
        f"sqrt(n) = {root:.4g} users)"))
  achieved_gamma = batch_size / root
  _check_ranges(n, theta, achieved_gamma)
  achieved_epsilon, achieved_delta = _theorem_1(n, num_levels, theta,
                                                achieved_gamma)
  return Calibration(
      theta=theta, gamma_unrounded=gamma, batch_size=batch_size,
      epsilon=achieved_epsilon, delta=achieved_delta,
      target_epsilon=epsilon, target_delta=delta, n=n, num_levels=num_levels)


def _check_reachable(n: int, num_levels: int, epsilon: float,
                     setting: str) -> None:
  """Raises ``ValueError`` if ``epsilon`` is more than Theorem 1 ever
  reports for ``n`` users (or ``n`` is too small for any epsilon)."""
  most = num_levels * math.log1p(math.sqrt(n))
  if epsilon > most:  # would need theta >= exp(epsilon / L) - 1 > sqrt(n)
    # theta = 10 = e^(eps/L) - 1 gives the largest batch Corollary 1 allows.
    need = _min_users(10, 11.0, num_levels * math.log(11.0), num_levels)
    if n < need:
      raise ValueError(_too_few(n, f"any epsilon over L={num_levels} levels",
                                need))
    raise ValueError(
        f"{setting} is more than Theorem 1 ever reports for n={n} users "
        f"(epsilon <= L ln(1 + sqrt(n)) = {most:.4g}): ask for epsilon <= "
        f"{most:.4g}, which gives a stronger guarantee")


def _theta(n: int, delta: float, theta_rule: str, least_theta: int) -> int:
  """Corollary 1's theta by ``theta_rule``, at least ``least_theta``."""
  if theta_rule == "lambert":
    return max(_lambert_theta(delta), least_theta)
  if n < 1e4:
    raise ValueError(
        f"the log10 rule of Corollary 1 needs n >= 10000, got n={n}; use "
        "theta_rule='lambert' or at least 10000 users")
  if delta < 1.0 / (300.0 * n):
    raise ValueError(
        f"the log10 rule guarantees delta = 1/(300 n) = {1/(300*n):.3g}, "
        f"above the target delta={delta:.3g}; use theta_rule='lambert'")
  return max(math.ceil(math.log10(n) + 6), least_theta)


def _gamma(n: int, theta: int, growth: float) -> float:
  """Corollary 1's gamma, ``(e^(eps/L) - 1) sqrt(n) / (theta e^(eps/L))``."""
  return (growth - 1.0) * math.sqrt(n) / (theta * growth)


def _batch_is_enough(n: int, theta: int, growth: float) -> bool:
  """Whether calibrate's integer batch at ``n`` users is at least sqrt(n)."""
  root = math.sqrt(n)
  return math.floor(_gamma(n, theta, growth) * root) >= root


def _min_users(theta: int, growth: float, epsilon: float,
               num_levels: int) -> int:
  """Smallest n from which on calibrate's integer batch is >= sqrt(n).

  The batch is about ``rate * n`` with ``rate = (1 - e^(-eps/L)) / theta``.
  Among the n with ``ceil(sqrt(n)) = s`` (the block ``((s-1)^2, s^2]``) the
  batch is enough from some n on; the whole block is enough iff its first n
  is, which fails up to some s and then holds for every larger s. Both
  searches are bisections: a few hundred steps for any input. Beyond 1e200
  users (or when e^(eps/L) rounds to 1), the answer is the estimate
  ``1 / rate^2``, rounded to three significant digits.
  """
  shrink = -math.expm1(-epsilon / num_levels)
  log10_rate = (math.log10(shrink) if shrink > 0 else
                math.log10(epsilon) - math.log10(num_levels)) - math.log10(theta)
  if growth == 1.0 or -2 * log10_rate > 200:
    exponent = math.floor(-2 * log10_rate) - 2
    return math.ceil(10 ** (-2 * log10_rate - exponent)) * 10**exponent

  def enough(n: int) -> bool:
    return _batch_is_enough(n, theta, growth)

  def block_enough(s: int) -> bool:
    return enough((s - 1)**2 + 1)

  hi = 2
  while not block_enough(hi):
    hi *= 2
  first = _search.first_true(block_enough, 1, hi)
  if first == 1:
    return 1
  low, top = (first - 2)**2 + 1, (first - 1)**2  # the block before
  if not enough(top):
    return top + 1
  return _search.first_true(enough, low, top)


def _too_few(n: int, setting: str, need: int, more: str = "",
             detail: str = "") -> str:
  """The message for a population too small for Corollary 1."""
  users = "user is" if n == 1 else "users are"
  return (f"n={n} {users} too few for Theorem 1 at {setting}: it needs at "
          f"least n = {_count(need)} users{more}{detail}")


def _count(n: int) -> str:
  """``n`` in full, or to three digits when it has more than 15."""
  return str(n) if n < 10**15 else f"about {decimal.Decimal(n):.3g}"


def _check_levels(num_levels: int) -> int:
  return validation.check_int("num_levels (L, trie levels)", num_levels)
