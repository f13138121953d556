"""Exact samplers of the discrete Laplace and discrete Gaussian laws.

A floating-point sampler of continuous noise leaks through the low-order
bits of what it releases (Mironov, CCS 2012). These draw integers with
exactly the discrete laws, following Canonne, Kamath and Steinke (2020),
"The Discrete Gaussian for Differential Privacy" (CKS20), Algorithms 1-3,
from uniform integers of a ``numpy.random.Generator`` (``rng.integers``
draws them exactly), with integer arithmetic only. A parameter given as a
float is taken at its exact rational value (``fractions.Fraction``):

- :func:`discrete_laplace`: ``P[X = x]`` proportional to
  ``exp(-|x| / scale)``;
- :func:`discrete_gaussian`: ``P[X = x]`` proportional to
  ``exp(-x^2 / (2 sigma^2))``, ``sigma^2`` the exact square of ``sigma``;
- :func:`bernoulli_exp`: Bernoulli(``exp(-num / den)``) (Algorithm 1);
- :func:`poisson`, :func:`skellam` (``Poisson(mu) - Poisson(mu)``, variance
  ``2 mu``) and :func:`skellam_above` (given ``X >= tau``), for a rational
  mean: a sum of Poisson pieces of mean at most 1/2, each drawn by
  rejection with rational acceptance probabilities (a draw costs about
  ``2 mu`` pieces: 33,000 Skellam draws a second at mu = 50,
  ``benchmarks/discrete_noise_benchmark.py``).

Every step draws for all pending values at once (a rejection redraws the
rejected ones only), so millions of draws take about a second
(``benchmarks/discrete_noise_benchmark.py``). A Bernoulli(x / y) whose y
fits in 64 bits is ``rng.integers(0, y) < x``; the discrete Gaussian's
acceptance, whose rational has a numerator and denominator of about 200
bits for a float sigma, compares a uniform 62-bit integer with the first
62 bits of x / y (Python integers, once per distinct value) and, on a tie
(probability ``2^-62``), the next 62 bits, and so on: exact either way.

The pmfs and tails (:func:`discrete_gaussian_pmf`,
:func:`discrete_gaussian_tail`, :func:`skellam_pmf`, :func:`skellam_tail`)
are in double precision, for thresholds and tests.
"""

from __future__ import annotations

import fractions
import math
from collections.abc import Callable

import numpy as np

# Bits of a uniform integer compared at once with a binary expansion.
_DIGIT_BITS = 62
_DIGIT = 1 << _DIGIT_BITS
# Parameters whose exact rationals the int64 steps can hold.
_MIN_PARAMETER = fractions.Fraction(1, 1024)
_MAX_PARAMETER = fractions.Fraction(2**40)
_MAX_DENOMINATOR = 2**62
# Beyond this K of Algorithm 1 (reached with probability below 1 / 255!),
# den * K could overflow int64: drawn with Python integers instead.
_MAX_INT64_K = 255


def _exact(value: float | int | fractions.Fraction, name: str
           ) -> fractions.Fraction:
  """``value``'s exact rational; ValueError naming ``name`` if outside
  [2^-10, 2^40] (or not a finite number)."""
  try:
    exact = fractions.Fraction(value)
  except (TypeError, ValueError, OverflowError):
    raise ValueError(f"{name} must be a finite number, got {value!r}") from None
  if not _MIN_PARAMETER <= exact <= _MAX_PARAMETER or (
      exact.denominator > _MAX_DENOMINATOR):
    raise ValueError(
        f"{name} must be between 2^-10 and 2^40 (with a denominator of at "
        f"most 2^62), got {value!r}")
  return exact


def _sizes(size: int | tuple[int, ...]) -> tuple[tuple[int, ...], int]:
  shape = (int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size)
  if any(s < 0 for s in shape):
    raise ValueError(f"size must not be negative, got {size!r}")
  return shape, math.prod(shape)


def _bernoulli_ratio(rng: np.random.Generator, num: np.ndarray,
                     den: np.ndarray) -> np.ndarray:
  """Bernoulli(num / den) per element: ``0 <= num <= den``, int64."""
  if not np.size(num):
    return np.zeros(np.shape(num), dtype=bool)
  return rng.integers(0, den, dtype=np.int64) < num


def _below(rng: np.random.Generator, num: np.ndarray, den: int
           ) -> np.ndarray:
  """Bernoulli(num / den) per element, one Python-integer ``den``: a
  uniform integer below ``den`` (int64 while it fits) below ``num``."""
  if den < 2**63:
    return rng.integers(0, den, dtype=np.int64, size=num.size) < num
  return np.array([_bernoulli_big(rng, int(a), den) for a in num], dtype=bool)


def _bernoulli_big(rng: np.random.Generator, num: int, den: int) -> bool:
  """Bernoulli(num / den) for Python integers ``0 <= num <= den``: a
  uniform real below num / den, compared 62 bits at a time."""
  while True:
    num <<= _DIGIT_BITS
    digit, num = divmod(num, den)
    u = int(rng.integers(0, _DIGIT, dtype=np.int64))
    if u != digit:
      return u < digit


def _bernoulli_digits(rng: np.random.Generator, num: list[int], den: int,
                      which: np.ndarray) -> np.ndarray:
  """Bernoulli(num[which[i]] / den) per i, Python integers
  ``0 <= num[j] < den`` of any size: the first 62 bits of each distinct
  ratio against a uniform 62-bit integer, a tie resolved by the next bits."""
  if not which.size:
    return np.zeros(0, dtype=bool)
  table = np.zeros(len(num), dtype=np.int64)
  for j in np.flatnonzero(np.bincount(which, minlength=len(num))).tolist():
    table[j] = (num[j] << _DIGIT_BITS) // den
  digits = table[which]
  u = rng.integers(0, _DIGIT, dtype=np.int64, size=which.size)
  out = u < digits
  for i in np.flatnonzero(u == digits).tolist():  # probability 2^-62 each
    j = int(which[i])
    rest = (num[j] << _DIGIT_BITS) - int(digits[i]) * den
    out[i] = _bernoulli_big(rng, rest, den)
  return out


def _exp_below_one(size: int, draw: Callable[[int, np.ndarray], np.ndarray]
                   ) -> np.ndarray:
  """CKS20 Algorithm 1 for gamma in [0, 1]: K = 1; while
  Bernoulli(gamma / K), K += 1; 1 iff K is odd. ``draw(k, positions)``
  draws Bernoulli(gamma_i / k) at those positions."""
  out = np.zeros(size, dtype=bool)
  active = np.arange(size)
  k = 1
  while active.size:
    more = draw(k, active)
    out[active[~more]] = k % 2 == 1
    active = active[more]
    k += 1
  return out


def _exp_minus_one(rng: np.random.Generator, size: int) -> np.ndarray:
  """``size`` Bernoulli(exp(-1)): Algorithm 1 at gamma = 1, whose
  Bernoulli(1 / K) is a uniform integer below K being 0."""
  return _exp_below_one(
      size, lambda k, at: rng.integers(0, k, size=at.size) == 0)


def _exp_minus_whole(rng: np.random.Generator, whole: np.ndarray
                     ) -> np.ndarray:
  """Bernoulli(exp(-whole)) per element, ``whole`` non-negative int64: the
  product of ``whole`` independent Bernoulli(exp(-1))."""
  out = np.ones(whole.size, dtype=bool)
  left = whole.astype(np.int64, copy=True)
  active = np.flatnonzero(left > 0)
  while active.size:
    out[active] = _exp_minus_one(rng, active.size)
    left[active] -= 1
    active = active[out[active] & (left[active] > 0)]
  return out


def bernoulli_exp(rng: np.random.Generator, num: np.ndarray | int,
                  den: np.ndarray | int) -> np.ndarray:
  """``bool`` Bernoulli(exp(-num / den)) per element (CKS20 Algorithm 1),
  exactly: ``num >= 0`` and ``1 <= den <= 2^55`` integers (broadcast)."""
  num, den = np.broadcast_arrays(np.asarray(num, dtype=np.int64),
                                 np.asarray(den, dtype=np.int64))
  shape = num.shape
  num, den = num.ravel(), den.ravel()
  if num.size and (num.min() < 0 or den.min() < 1 or den.max() > 2**55):
    raise ValueError("bernoulli_exp needs num >= 0 and 1 <= den <= 2^55")
  whole, rem = np.divmod(num, den)
  out = _exp_minus_whole(rng, whole)
  alive = np.flatnonzero(out)
  out[alive] = _exp_below_one(
      alive.size, lambda k, at: _ratio_over_k(rng, rem[alive[at]],
                                              den[alive[at]], k))
  return out.reshape(shape)


def _ratio_over_k(rng: np.random.Generator, num: np.ndarray, den: np.ndarray,
                  k: int) -> np.ndarray:
  """Bernoulli(num / (den * k)), exactly for any k."""
  if k <= _MAX_INT64_K:
    return _bernoulli_ratio(rng, num, den * k)
  return np.array([_bernoulli_big(rng, int(a), int(b) * k)
                   for a, b in zip(num, den)], dtype=bool)


def _geometric_exp_one(rng: np.random.Generator, size: int) -> np.ndarray:
  """``int64`` V with ``P[V = v] = (1 - 1/e) e^-v``: Bernoulli(exp(-1))
  successes before the first failure."""
  v = np.zeros(size, dtype=np.int64)
  active = np.arange(size)
  while active.size:
    active = active[_exp_minus_one(rng, active.size)]
    v[active] += 1
  return v


def _laplace_rational(rng: np.random.Generator, t: int, s: int,
                      size: int) -> np.ndarray:
  """CKS20 Algorithm 2: ``size`` draws of the discrete Laplace law of scale
  t / s (``P[Y = y]`` proportional to ``exp(-|y| s / t)``)."""
  out = np.empty(size, dtype=np.int64)
  pending = np.arange(size)
  while pending.size:
    y = _geometric(rng, t, s, pending.size)
    negative = rng.integers(0, 2, size=y.size).astype(bool)
    ok = ~(negative & (y == 0))
    values = np.where(negative, -y, y)[ok]
    out[pending[:values.size]] = values
    pending = pending[values.size:]
  return out


def discrete_laplace(rng: np.random.Generator,
                     scale: float | fractions.Fraction,
                     size: int | tuple[int, ...]) -> np.ndarray:
  """``int64`` draws with ``P[X = x]`` proportional to ``exp(-|x| / scale)``,
  exactly (CKS20 Algorithm 2); ``scale`` (its exact rational) in
  [2^-10, 2^40]."""
  exact = _exact(scale, "scale")
  shape, n = _sizes(size)
  return _laplace_rational(rng, exact.numerator, exact.denominator,
                           n).reshape(shape)


def discrete_laplace_above(rng: np.random.Generator,
                           scale: float | fractions.Fraction,
                           threshold: int, size: int) -> np.ndarray:
  """``int64`` draws of the discrete Laplace law of ``scale`` conditioned on
  being at least ``threshold``, exactly: ``threshold + G`` at
  ``threshold >= 1`` (the law is geometric there, memoryless: ``P[G = g]``
  proportional to ``exp(-g / scale)``, CKS20 Algorithm 2's magnitude);
  below, draws of the whole law with those under ``threshold`` rejected
  (each kept with probability at least 1/2)."""
  exact = _exact(scale, "scale")
  shape, n = _sizes(size)
  tau = int(threshold)
  if tau >= 1:
    return (tau + _geometric(rng, exact.numerator, exact.denominator, n)
            ).reshape(shape)
  out = np.empty(n, dtype=np.int64)
  pending = np.arange(n)
  while pending.size:
    draws = _laplace_rational(rng, exact.numerator, exact.denominator,
                              pending.size)
    values = draws[draws >= tau]
    out[pending[:values.size]] = values
    pending = pending[values.size:]
  return out.reshape(shape)


def _accept(rng: np.random.Generator, values: np.ndarray,
            gamma_numerator: Callable[[int], int], den: int) -> np.ndarray:
  """Bernoulli(exp(-gamma_numerator(v) / den)) for each v of ``values``
  (non-negative int64), exactly: Python integers once per distinct value,
  Algorithm 1 on its whole and fractional parts."""
  present = np.bincount(values) > 0 if values.size else np.zeros(0, bool)
  distinct = np.flatnonzero(present)
  which = (np.cumsum(present) - 1)[values]
  whole, rem = [], []
  for value in distinct.tolist():
    w, r = divmod(gamma_numerator(value), den)
    whole.append(min(w, 2**62))  # beyond, the loop ends long before (below)
    rem.append(r)
  # A whole part capped at 2^62 changes nothing drawn: the product of
  # Bernoulli(exp(-1)) stops at its first failure, and 2^62 successes in a
  # row have probability exp(-2^62).
  keep = _exp_minus_whole(rng, np.asarray(whole, dtype=np.int64)[which])
  alive = np.flatnonzero(keep)
  keep[alive] = _exp_below_one(
      alive.size,
      lambda k, at: _bernoulli_digits(rng, rem, den * k, which[alive[at]]))
  return keep


def _sigma_squared(sigma: float | fractions.Fraction) -> fractions.Fraction:
  """``sigma``'s exact rational, squared; ValueError naming ``sigma`` if it
  is not a positive finite number at most 2^40."""
  try:
    exact = fractions.Fraction(sigma)
  except (TypeError, ValueError, OverflowError):
    raise ValueError(f"sigma must be a positive finite number, got "
                     f"{sigma!r}") from None
  if not 0 < exact <= _MAX_PARAMETER:
    raise ValueError(f"sigma must be a positive number at most 2^40, got "
                     f"{sigma!r}")
  return exact * exact


# Below this sigma the law puts mass below exp(-2^19) off 0 (far below the
# smallest double): its draws are 0.
_NEGLIGIBLE_SIGMA = _MIN_PARAMETER


def discrete_gaussian(rng: np.random.Generator,
                      sigma: float | fractions.Fraction,
                      size: int | tuple[int, ...]) -> np.ndarray:
  """``int64`` draws with ``P[X = x]`` proportional to
  ``exp(-x^2 / (2 sigma^2))``, exactly (CKS20 Algorithm 3); ``sigma`` (its
  exact rational, squared exactly) positive, at most 2^40 (below 2^-10 the
  draws are 0: the law's mass off 0 is below ``exp(-2^19)``).

  Each candidate Y is a discrete Laplace draw of scale ``t = floor(sigma) +
  1``, kept with probability ``exp(-(|Y| - sigma^2 / t)^2 / (2 sigma^2))``.
  """
  s2 = _sigma_squared(sigma)
  shape, n = _sizes(size)
  if s2 < _NEGLIGIBLE_SIGMA**2:
    return np.zeros(shape, dtype=np.int64)
  a, b = s2.numerator, s2.denominator
  t = math.isqrt(a // b) + 1  # floor(sigma) + 1
  # gamma(y) = (|y| - s2 / t)^2 / (2 s2) = (|y| t b - a)^2 / den
  den = 2 * a * b * t * t
  out = np.empty(n, dtype=np.int64)
  pending = np.arange(n)
  while pending.size:
    y = _laplace_rational(rng, t, 1, pending.size)
    keep = _accept(rng, np.abs(y), lambda v: (v * t * b - a) ** 2, den)
    values = y[keep]
    out[pending[:values.size]] = values
    pending = pending[values.size:]
  return out.reshape(shape)


def discrete_gaussian_above(rng: np.random.Generator,
                            sigma: float | fractions.Fraction,
                            threshold: int, size: int) -> np.ndarray:
  """``int64`` draws of the discrete Gaussian of parameter ``sigma``
  conditioned on being at least ``threshold``, exactly.

  At ``threshold <= sigma``: discrete Gaussian draws, those below rejected
  (each kept with probability above 0.15). Above: ``threshold + G``, G
  geometric of scale ``c >= sigma^2 / threshold`` (``P[G = g]``
  proportional to ``exp(-g / c)``, Algorithm 2 without the sign), kept with
  probability ``exp(-(g^2 + 2 g tau) / (2 sigma^2) + g / c)`` (at most 1;
  the target over the proposal, up to a constant).
  """
  s2 = _sigma_squared(sigma)
  tau = int(threshold)
  shape, n = _sizes(size)
  if s2 < _NEGLIGIBLE_SIGMA**2 and tau > 0:
    raise ValueError(f"threshold={tau} is never reached at sigma={sigma!r}")
  if tau <= 0 or tau * tau <= s2:
    return _above_by_rejection(rng, sigma, tau, n).reshape(shape)
  a, b = s2.numerator, s2.denominator
  # scale c = t / s: sigma^2 / tau rounded up to 1/2^20, exactly >= it
  s = 2**20
  t = -(-(a * s) // (b * tau))
  # gamma(g) = (g^2 + 2 g tau) / (2 s2) - g s / t
  #          = (b t (g^2 + 2 g tau) - 2 a s g) / (2 a t)
  den = 2 * a * t
  out = np.empty(n, dtype=np.int64)
  pending = np.arange(n)
  while pending.size:
    g = _geometric(rng, t, s, pending.size)
    keep = _accept(rng, g,
                   lambda v: b * t * (v * v + 2 * v * tau) - 2 * a * s * v,
                   den)
    values = tau + g[keep]
    out[pending[:values.size]] = values
    pending = pending[values.size:]
  return out.reshape(shape)


def _above_by_rejection(rng: np.random.Generator, sigma, tau: int,
                        n: int) -> np.ndarray:
  out = np.empty(n, dtype=np.int64)
  filled = 0
  while filled < n:
    draws = discrete_gaussian(rng, sigma, max(2 * (n - filled), 16))
    kept = draws[draws >= tau][:n - filled]
    out[filled:filled + kept.size] = kept
    filled += kept.size
  return out


def _geometric(rng: np.random.Generator, t: int, s: int,
               size: int) -> np.ndarray:
  """``int64`` G >= 0 with ``P[G = g]`` proportional to ``exp(-g s / t)``:
  CKS20 Algorithm 2's magnitude (no sign, no rejection at 0)."""
  out = np.empty(size, dtype=np.int64)
  pending = np.arange(size)
  while pending.size:
    n = pending.size
    u = rng.integers(0, t, dtype=np.int64, size=n)
    # Bernoulli(exp(-u / t)), u < t: Algorithm 1's Bernoulli(u / (t K))
    keep = _exp_below_one(n, lambda k, at: _below(rng, u[at], t * k))
    u = u[keep]
    v = _geometric_exp_one(rng, u.size)
    y = _floor_ratio(u, v, t, s)
    out[pending[:y.size]] = y
    pending = pending[y.size:]
  return out


def _floor_ratio(u: np.ndarray, v: np.ndarray, t: int, s: int) -> np.ndarray:
  """``(u + t v) // s``, in Python integers if int64 could overflow."""
  if not v.size or int(v.max()) <= (2**62 // t) - 1:
    return (u + t * v) // s
  return np.array([(int(a) + t * int(c)) // s for a, c in zip(u, v)],
                  dtype=np.int64)


def discrete_gaussian_pmf(sigma: float, values: np.ndarray) -> np.ndarray:
  """``P[X = x]`` of the discrete Gaussian of parameter ``sigma`` at each
  of ``values``, in double precision."""
  x = np.asarray(values, dtype=np.float64)
  return np.exp(-x * x / (2.0 * sigma * sigma)) / _normalizer(sigma)


def _normalizer(sigma: float) -> float:
  """``sum_x exp(-x^2 / (2 sigma^2))`` over the integers, by Poisson
  summation: ``sqrt(2 pi) sigma sum_k exp(-2 pi^2 sigma^2 k^2)`` when that
  converges fast (sigma >= 1), else directly."""
  if sigma >= 1.0:
    k = np.arange(1, 8, dtype=np.float64)
    return math.sqrt(2 * math.pi) * sigma * (
        1.0 + 2.0 * float(np.exp(-2 * math.pi**2 * sigma**2 * k * k).sum()))
  x = np.arange(1, 64, dtype=np.float64)
  return 1.0 + 2.0 * float(np.exp(-x * x / (2 * sigma * sigma)).sum())


def discrete_gaussian_tail(sigma: float, threshold: int) -> float:
  """``P[X >= threshold]`` of the discrete Gaussian of parameter ``sigma``,
  the pmf summed in double precision over ``[threshold, threshold + 38
  sigma]`` (the terms beyond are below ``exp(-722)``, under a double's
  range)."""
  tau = int(threshold)
  if tau <= 0:  # by symmetry, P[X <= tau - 1] = P[X >= 1 - tau]
    return 1.0 - discrete_gaussian_tail(sigma, 1 - tau)
  width = int(math.ceil(38.0 * sigma)) + 2
  total, start, chunk = 0.0, tau, 1 << 20
  while start < tau + width:
    x = np.arange(start, min(start + chunk, tau + width), dtype=np.float64)
    total += float(np.exp(-x * x / (2.0 * sigma * sigma)).sum())
    start += chunk
  return total / _normalizer(sigma)


def discrete_laplace_tail(scale: float, threshold: int) -> float:
  """``P[X >= threshold]`` of the discrete Laplace law ``P[X = x]``
  proportional to ``exp(-|x| / scale)``: ``q^t / (1 + q)`` for ``t >= 1``,
  ``q = exp(-1 / scale)`` (the geometric series in closed form)."""
  q = math.exp(-1.0 / float(scale))
  tau = int(threshold)
  if tau <= 0:  # by symmetry, P[X <= tau - 1] = P[X >= 1 - tau]
    return 1.0 - discrete_laplace_tail(scale, 1 - tau)
  return q**tau / (1.0 + q)


# ---- Poisson and Skellam laws, exactly -------------------------------------

# Means of the Poisson and Skellam samplers: a draw costs about 2 mean
# Poisson(<= 1/2) pieces; denominators beyond 2^60 would leave the int64
# steps (rarer steps, and larger ones, use Python integers).
_MIN_MEAN = fractions.Fraction(1, 2**40)
_MAX_MEAN = fractions.Fraction(2**20)
_MAX_MEAN_DENOMINATOR = 2**60
# Values drawn at once by the pieces' loop (memory: a few int64 arrays).
_PIECE_BATCH = 1 << 22


def _exact_mean(mean: float | int | fractions.Fraction) -> fractions.Fraction:
  """``mean``'s exact rational; ValueError naming ``mean`` if it is not in
  [2^-40, 2^20] with a denominator of at most 2^60."""
  try:
    exact = fractions.Fraction(mean)
  except (TypeError, ValueError, OverflowError):
    raise ValueError(f"mean must be a positive finite number, got "
                     f"{mean!r}") from None
  if not _MIN_MEAN <= exact <= _MAX_MEAN or (
      exact.denominator > _MAX_MEAN_DENOMINATOR):
    raise ValueError(
        f"mean must be between 2^-40 and 2^20 (with a denominator of at "
        f"most 2^60), got {mean!r}")
  return exact


def _poisson_small(rng: np.random.Generator, a: int, b: int,
                   size: int) -> np.ndarray:
  """``size`` Poisson(lambda) draws, ``lambda = a / b <= 1/2``, exactly.

  Proposal K: ``k = 0; while Bernoulli(lambda / (k + 1)): k += 1``, so
  ``q_k = lambda^k / k! (1 - lambda / (k + 1))`` (the terms telescope to
  1). With ``M = e^-lambda / (1 - lambda)``, ``p_k / (M q_k) = (1 - lambda)
  / (1 - lambda / (k + 1)) = (b - a)(k + 1) / ((k + 1) b - a) <= 1``:
  accepted with that probability (always at k = 0; on average ``e^lambda
  (1 - lambda) >= 0.82`` of the proposals).
  """
  out = np.empty(size, dtype=np.int64)
  filled = 0
  while filled < size:
    n = size - filled
    k = np.zeros(n, dtype=np.int64)
    active = np.flatnonzero(_draw_below(rng, a, b, n))
    step = 2
    while active.size:  # Bernoulli(a / (b step)) at the active positions
      k[active] += 1
      active = active[_draw_below(rng, a, b * step, active.size)]
      step += 1
    accept = np.ones(n, dtype=bool)
    for value in np.unique(k[k > 0]).tolist():
      at = np.flatnonzero(k == value)
      j = value + 1
      accept[at] = _draw_below(rng, (b - a) * j, j * b - a, at.size)
    values = k[accept]
    out[filled:filled + values.size] = values
    filled += values.size
  return out


def _draw_below(rng: np.random.Generator, num: int, den: int,
                size: int) -> np.ndarray:
  """``size`` Bernoulli(num / den), Python integers ``0 <= num <= den``:
  a uniform integer below ``den`` (int64 while it fits) below ``num``."""
  if den < 2**63:
    return rng.integers(0, den, dtype=np.int64, size=size) < num
  return np.array([_bernoulli_big(rng, num, den) for _ in range(size)],
                  dtype=bool)


def _pieces(mean: fractions.Fraction) -> list[tuple[int, int, int]]:
  """``mean`` as ``(count, a, b)``: ``count`` pieces of mean ``a / b <=
  1/2`` each (Poisson is closed under sums): 1/2s for the whole part, and
  the rest in one piece, or two if above 1/2."""
  whole = mean.numerator // mean.denominator
  rest = mean - whole
  pieces = [(2 * whole, 1, 2)] if whole else []
  if rest > fractions.Fraction(1, 2):
    rest /= 2
    pieces.append((2, rest.numerator, rest.denominator))
  elif rest:
    pieces.append((1, rest.numerator, rest.denominator))
  return pieces


def _poisson_exact(rng: np.random.Generator, mean: fractions.Fraction,
                   n: int) -> np.ndarray:
  """``n`` Poisson(mean) draws: the sum of the pieces' draws."""
  out = np.zeros(n, dtype=np.int64)
  if not n:
    return out
  for count, a, b in _pieces(mean):
    per_batch = max(1, _PIECE_BATCH // n)
    left = count
    while left:
      now = min(left, per_batch)
      draws = _poisson_small(rng, a, b, n * now)
      out += draws.reshape(n, now).sum(axis=1)
      left -= now
  return out


def poisson(rng: np.random.Generator,
            mean: float | int | fractions.Fraction,
            size: int | tuple[int, ...]) -> np.ndarray:
  """``int64`` Poisson(``mean``) draws, exactly, with integer arithmetic:
  ``mean`` (its exact rational) in [2^-40, 2^20], a denominator of at most
  2^52; the sum of pieces of mean at most 1/2, each drawn by rejection
  (:func:`_poisson_small`). A draw costs about ``2 mean + 2`` pieces."""
  exact = _exact_mean(mean)
  shape, n = _sizes(size)
  return _poisson_exact(rng, exact, n).reshape(shape)


def skellam(rng: np.random.Generator,
            mean: float | int | fractions.Fraction,
            size: int | tuple[int, ...]) -> np.ndarray:
  """``int64`` Skellam(``mean``) draws, ``Poisson(mean) - Poisson(mean)``
  (variance ``2 mean``), exactly (:func:`poisson`). A sum of independent
  Skellam draws is a Skellam draw of the summed means."""
  exact = _exact_mean(mean)
  shape, n = _sizes(size)
  return (_poisson_exact(rng, exact, n)
          - _poisson_exact(rng, exact, n)).reshape(shape)


def _bernoulli_power(rng: np.random.Generator, c: int, d: int,
                     powers: np.ndarray) -> np.ndarray:
  """Bernoulli((d / c)^j) per element j of ``powers`` (``0 < d <= c``):
  j Bernoulli(d / c) in a row, stopping at the first failure."""
  out = np.ones(powers.size, dtype=bool)
  left = powers.astype(np.int64, copy=True)
  active = np.flatnonzero(left > 0)
  while active.size:
    out[active] = rng.integers(0, c, dtype=np.int64, size=active.size) < d
    left[active] -= 1
    active = active[out[active] & (left[active] > 0)]
  return out


# The tilt's grid, theta = c / 2^8, and its largest c (theta < 2^12): any
# theta >= 1 is exact, these keep its means' denominators within 2^60.
_TILT_BITS = 8
_MAX_TILT = 2**20 - 1
_MAX_ABOVE_DENOMINATOR = 2**40


def skellam_above(rng: np.random.Generator,
                  mean: float | int | fractions.Fraction, threshold: int,
                  size: int | tuple[int, ...]) -> np.ndarray:
  """``int64`` Skellam(``mean``) draws conditioned on being at least
  ``threshold``, exactly (``mean``'s denominator at most 2^40).

  At ``threshold <= 0``: Skellam draws, those below rejected (each kept
  with probability at least 1/2). Above, from the tilted law
  ``Poisson(mean theta) - Poisson(mean / theta)``, ``theta = c / 2^8`` in
  [1, 2^12) (about where the tilted mean is ``threshold``): its pmf at x is
  the Skellam pmf times ``K theta^x`` (K constant), so a draw x at least
  ``threshold`` is kept with probability ``theta^-(x - threshold) <= 1``:
  ``x - threshold`` Bernoulli(``2^8 / c``) in a row.
  """
  exact = _exact_mean(mean)
  if exact.denominator > _MAX_ABOVE_DENOMINATOR:
    raise ValueError(f"mean must have a denominator of at most 2^40 here, "
                     f"got {mean!r}")
  tau = int(threshold)
  shape, n = _sizes(size)
  out = np.empty(n, dtype=np.int64)
  pending = np.arange(n)
  if tau <= 0:
    while pending.size:
      x = skellam(rng, exact, max(2 * pending.size, 16))
      kept = x[x >= tau][:pending.size]
      out[pending[:kept.size]] = kept
      pending = pending[kept.size:]
    return out.reshape(shape)
  m = float(exact)
  theta = (tau + math.sqrt(tau * tau + 4.0 * m * m)) / (2.0 * m)
  c = min(max(1 << _TILT_BITS, math.ceil(theta * (1 << _TILT_BITS))),
          _MAX_TILT)
  up = exact * c / (1 << _TILT_BITS)
  down = exact * (1 << _TILT_BITS) / c
  while pending.size:
    x = _poisson_exact(rng, up, pending.size) - _poisson_exact(
        rng, down, pending.size)
    x = x[x >= tau]
    kept = x[_bernoulli_power(rng, c, 1 << _TILT_BITS, x - tau)]
    out[pending[:kept.size]] = kept
    pending = pending[kept.size:]
  return out.reshape(shape)


def skellam_pmf(mean: float, values: np.ndarray) -> np.ndarray:
  """``P[X = x]`` of Skellam(``mean``) at each of ``values``, ``e^(-2
  mean) I_|x|(2 mean)`` (the scaled Bessel function), in double precision."""
  from scipy import special  # pylint: disable=g-import-not-at-top
  x = np.abs(np.asarray(values, dtype=np.float64))
  return special.ive(x, 2.0 * float(mean))


def skellam_tail(mean: float, threshold: int) -> float:
  """``P[X >= threshold]`` of Skellam(``mean``), the pmf summed in double
  precision until its terms fall below 1e-30 of the sum (they decrease
  faster than geometrically past the mean's standard deviation)."""
  tau = int(threshold)
  if tau <= 0:  # by symmetry, P[X <= tau - 1] = P[X >= 1 - tau]
    return 1.0 - skellam_tail(mean, 1 - tau)
  sd = math.sqrt(2.0 * float(mean))
  total, start, chunk = 0.0, tau, max(64, int(8 * sd) + 1)
  while True:
    terms = skellam_pmf(mean, np.arange(start, start + chunk))
    total += float(terms.sum())
    if not total or terms[-1] <= 1e-30 * total:
      return total
    start += chunk
