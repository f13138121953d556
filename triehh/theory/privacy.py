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

``L`` counts every symbol a user can be asked to vote on. In this project a
word of at most ``max_length`` characters is followed by the end symbol, so
:func:`triehh.discover` accounts for ``max_length + 1`` levels.

The batch size is an integer: :func:`calibrate` rounds ``gamma * sqrt(n)``
down (a smaller batch only lowers epsilon) and reports the epsilon that the
rounded batch really achieves.
"""

from __future__ import annotations

import dataclasses
import math

from scipy import special

_LAMBERT_CONST = 8.0 / (7.0 * math.sqrt(2.0 * math.pi))


def theorem_delta(theta: int) -> float:
  """delta of Theorem 1 for threshold ``theta`` (computed in log space)."""
  if theta < 4:
    raise ValueError(f"Theorem 1 needs theta >= 4, got theta={theta}")
  return math.exp(math.log(theta - 2) - math.log(theta - 3)
                  - math.lgamma(theta + 1))


def check_conditions(n: int, theta: float, gamma: float) -> None:
  """Raises ``ValueError`` naming the failed condition of Theorem 1."""
  if n < 1:
    raise ValueError(f"n must be a positive number of users, got n={n}")
  root = math.sqrt(n)
  if theta < 4:
    raise ValueError(
        f"Theorem 1 needs theta >= 4, got theta={theta}; use theta=4 or more")
  if theta > root:
    raise ValueError(
        f"Theorem 1 needs theta <= sqrt(n) = {root:.4g}, got theta={theta}; "
        f"use theta <= {math.floor(root)} or at least n = {math.ceil(theta)**2}"
        " users")
  if gamma < 1:
    raise ValueError(
        f"Theorem 1 needs gamma >= 1 (batch size >= sqrt(n) = {root:.4g}), got "
        f"gamma={gamma:.6g}; use gamma >= 1, i.e. a batch of at least "
        f"{math.ceil(root)} users")
  upper = root / (theta + 1)
  if gamma > upper:
    raise ValueError(
        f"Theorem 1 needs gamma <= sqrt(n)/(theta+1) = {upper:.6g}, got "
        f"gamma={gamma:.6g}; use gamma <= {upper:.6g} (a batch of at most "
        f"{math.floor(upper * root)} users)")


def guarantee(n: int, max_length: int, theta: int,
              gamma: float) -> tuple[float, float]:
  """``(epsilon, delta)`` of Theorem 1 for the given parameters.

  Args:
    n: number of users.
    max_length: L, the maximum sequence length (end symbol included).
    theta: the vote threshold.
    gamma: the batch-size factor, ``m = gamma * sqrt(n)``.
  """
  _check_length(max_length)
  check_conditions(n, theta, gamma)
  ratio = math.sqrt(n) / (gamma * theta)
  epsilon = max_length * math.log1p(1.0 / (ratio - 1.0))
  return epsilon, theorem_delta(theta)


@dataclasses.dataclass(frozen=True)
class Calibration:
  """Parameters that achieve a target ``(epsilon, delta)`` by Corollary 1.

  Attributes:
    theta: the vote threshold.
    gamma: the factor Corollary 1 gives (before rounding the batch).
    batch_size: m = floor(gamma * sqrt(n)), users sampled per round.
    epsilon: epsilon that ``batch_size`` achieves by Theorem 1 (<= target).
    delta: delta of Theorem 1 for ``theta`` (<= target).
    target_epsilon, target_delta: what was asked for.
    n, max_length: the population size and L used.
  """

  theta: int
  gamma: float
  batch_size: int
  epsilon: float
  delta: float
  target_epsilon: float
  target_delta: float
  n: int
  max_length: int

  @property
  def effective_gamma(self) -> float:
    """``batch_size / sqrt(n)``, the gamma actually used."""
    return self.batch_size / math.sqrt(self.n)


def lambert_theta(delta: float) -> int:
  """``max(10, ceil(exp(W(C_delta) + 1) - 1/2))`` of Corollary 1."""
  if not 0 < delta < 1:
    raise ValueError(f"delta must be in (0, 1), got delta={delta}")
  c = math.log(_LAMBERT_CONST / delta) / math.e
  w = float(special.lambertw(c, 0).real)
  return max(10, math.ceil(math.exp(w + 1.0) - 0.5))


def calibrate(n: int, max_length: int, epsilon: float, delta: float, *,
              theta_rule: str = "lambert") -> Calibration:
  """theta, gamma and the batch size for ``(epsilon, delta)`` (Corollary 1).

  Args:
    n: number of users.
    max_length: L, the maximum sequence length (end symbol included).
    epsilon: target epsilon (> 0).
    delta: target delta, in (0, 1).
    theta_rule: ``"lambert"`` (the general rule) or ``"log10"``
      (``theta = ceil(log10 n + 6)``, valid for ``n >= 1e4`` and
      ``delta >= 1/(300 n)``).

  Raises:
    ValueError: naming the condition of Theorem 1 or Corollary 1 that fails
      and a value that would satisfy it.
  """
  _check_length(max_length)
  if not epsilon > 0 or not math.isfinite(epsilon):
    raise ValueError(f"epsilon must be a positive number, got {epsilon}")
  if not 0 < delta < 1:
    raise ValueError(f"delta must be in (0, 1), got delta={delta}")
  if n < 1:
    raise ValueError(f"n must be a positive number of users, got n={n}")
  growth = math.exp(epsilon / max_length)
  if theta_rule == "lambert":
    theta = max(lambert_theta(delta), math.ceil(growth - 1.0))
  elif theta_rule == "log10":
    if n < 1e4:
      raise ValueError(
          f"the log10 rule of Corollary 1 needs n >= 10000, got n={n}; use "
          "theta_rule='lambert' or at least 10000 users")
    if delta < 1.0 / (300.0 * n):
      raise ValueError(
          f"the log10 rule guarantees delta = 1/(300 n) = {1/(300*n):.3g}, "
          f"above the target delta={delta:.3g}; use theta_rule='lambert'")
    theta = max(math.ceil(math.log10(n) + 6), math.ceil(growth - 1.0))
  else:
    raise ValueError(f"theta_rule must be 'lambert' or 'log10', got "
                     f"{theta_rule!r}")
  root = math.sqrt(n)
  gamma = (growth - 1.0) * root / (theta * growth)
  batch_size = math.floor(gamma * root)
  if batch_size < root:  # the integer batch must still give gamma >= 1
    need_eps = max_length * math.log(1.0 / (1.0 - theta / root)) if (
        theta < root) else math.inf
    raise ValueError(
        f"Corollary 1 gives gamma={gamma:.4g} (batch size {batch_size}) for "
        f"n={n}, epsilon={epsilon}, L={max_length} (theta={theta}), but "
        "Theorem 1 needs gamma >= 1, a batch of at least sqrt(n) users. Use at "
        f"least n = {_min_users(theta, growth)} users or epsilon >= "
        f"{need_eps:.4g}")
  achieved_gamma = batch_size / root
  check_conditions(n, theta, achieved_gamma)
  achieved_epsilon, achieved_delta = guarantee(n, max_length, theta,
                                               achieved_gamma)
  return Calibration(
      theta=theta, gamma=gamma, batch_size=batch_size,
      epsilon=achieved_epsilon, delta=achieved_delta,
      target_epsilon=float(epsilon), target_delta=float(delta), n=int(n),
      max_length=int(max_length))


def _min_users(theta: int, growth: float) -> int:
  """Smallest n whose calibrated integer batch is at least sqrt(n)."""
  rate = (growth - 1.0) / (growth * theta)  # batch = floor(rate * n)
  n = max(1, math.floor(1.0 / rate**2))
  while math.floor(rate * n) < math.sqrt(n):
    n += 1
  return n


def _check_length(max_length: int) -> None:
  if not isinstance(max_length, int) or max_length < 1:
    raise ValueError(f"max_length (L) must be a positive integer, got "
                     f"{max_length!r}")
