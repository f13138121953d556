"""The accountants of TrieHH, behind one protocol.

An :class:`Accountant` maps a :class:`~triehh.theory.mechanism.Target` to the
:class:`~triehh.theory.mechanism.Mechanism` that meets it
(:meth:`Accountant.calibrate`), a mechanism to its
:class:`~triehh.theory.mechanism.Guarantee` (:meth:`Accountant.guarantee`),
and a mechanism to its dp_accounting ``DpEvent``
(:meth:`Accountant.dp_event`), all at a population of ``n`` users and
``max_length`` characters per word. Two of them:

* :data:`POISSON`: Poisson sampling, the two-sided numerical accountant
  (:mod:`triehh.theory.poisson`), for ``ADD_OR_REMOVE_ONE`` and
  ``REPLACE_SPECIAL``, and ``REPLACE_ONE`` when the target asks for it.
* :data:`THEOREM_1`: fixed-size batches, Theorem 1 and Corollary 1 of the
  paper (:mod:`triehh.theory.privacy`), for ``REPLACE_SPECIAL`` in one
  direction.

Both go through :func:`triehh.theory.policy.resolve`, the one place
that decides what a run may do and what its label says; this module gives
that decision its types.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from triehh.core import choices
from triehh.core import results
from triehh.theory import policy
from triehh.theory.mechanism import Guarantee
from triehh.theory.mechanism import Mechanism
from triehh.theory.mechanism import Target


class Accountant(Protocol):
  """Calibrates a target, and gives a mechanism's guarantee and event."""

  sampling: str

  def calibrate(self, n: int, max_length: int, target: Target) -> Mechanism:
    """The mechanism (theta and its sampling) that meets ``target``."""

  def guarantee(self, mechanism: Mechanism, n: int,
                max_length: int) -> Guarantee:
    """What ``mechanism`` guarantees on ``n`` users."""

  def dp_event(self, mechanism: Mechanism, n: int, max_length: int):
    """``mechanism`` on ``n`` users as a dp_accounting ``DpEvent``."""


@dataclasses.dataclass(frozen=True)
class _PolicyAccountant:
  """An accountant of one sampling, through the run policy."""

  sampling: str

  def params(self, privacy: Target | Mechanism, n: int,
             max_length: int) -> results.RunParams:
    """The run parameters the policy gives ``privacy`` on ``n`` users."""
    return policy.resolve(n, max_length,
                          dataclasses.replace(privacy, sampling=self.sampling))

  def calibrate(self, n: int, max_length: int, target: Target) -> Mechanism:
    _check_type("target", target, (Target,), "a triehh.Target (epsilon, "
                "delta, ...) to calibrate TrieHH for; another mechanism's "
                "target (a NoisyTarget, ...) is calibrated by triehh.discover")
    p = self.params(target, n, max_length)
    # Poisson: epsilon is reported at the target's delta; None keeps it
    # 1/n^2 of the population's (or the declared) size, as the target had
    # it. Theorem 1 gives its own delta.
    batch = ({"sampling_rate": p.sampling_rate, "delta": target.delta}
             if self.sampling == choices.POISSON
             else {"batch_size": p.batch_size})
    return Mechanism(
        theta=p.theta, sampling=self.sampling,
        adjacency=target.adjacency, population_size=target.population_size,
        num_sub_rounds=target.num_sub_rounds,
        max_num_prefixes=target.max_num_prefixes,
        word_choice=target.word_choice,
        allow_no_guarantee=target.allow_no_guarantee,
        allow_delta_above_1_over_n=target.allow_delta_above_1_over_n,
        **batch)

  def guarantee(self, mechanism: Mechanism, n: int,
                max_length: int) -> Guarantee:
    _check_type("mechanism", mechanism, (Mechanism, Target), _GIVEN)
    return Guarantee.of(self.params(mechanism, n, max_length))

  def dp_event(self, mechanism: Mechanism, n: int, max_length: int):
    _check_type("mechanism", mechanism, (Mechanism, Target), _GIVEN)
    from triehh.theory import dp_events  # pylint: disable=g-import-not-at-top
    return dp_events.run_event(self.params(mechanism, n, max_length))


_GIVEN = ("a triehh.Mechanism (theta and its sampling), e.g. the one "
          "calibrate returns")


def _check_type(name: str, value, kinds: tuple[type, ...],
                takes: str) -> None:
  """A TypeError naming ``name`` and what it takes, unless ``value`` is of
  ``kinds``."""
  if not isinstance(value, kinds):
    raise TypeError(f"{name} must be {takes}; got "
                    f"{type(value).__name__} {value!r:.60}")


POISSON: Accountant = _PolicyAccountant(choices.POISSON)
THEOREM_1: Accountant = _PolicyAccountant(choices.FIXED)


def for_sampling(sampling: str) -> Accountant:
  """The accountant of ``sampling`` (``"poisson"`` or ``"fixed"``)."""
  choices.check_sampling(sampling)
  return POISSON if sampling == choices.POISSON else THEOREM_1
