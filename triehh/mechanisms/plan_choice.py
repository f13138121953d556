"""The planned noisy trie's rule and sampling rate, chosen on a public
prior by the engine itself, before the data is read (``docs/noisy-trie.md``,
"Choosing the rule and q on the prior").

Under an upload budget two regimes pull apart. Where the noise binds
(counts near the threshold), every user should vote in every round (q = 1)
and words are best decided once, at the lowest noise (discover, then
verify: ``rule="verified"``). Where the bytes bind (a frontier of thousands
of prefixes, each far above the threshold), sampling q < 1 lets a round's
vector grow by 1/q within the same expected bytes per client, and the
rule without a verification round spends less on discovery
(``rule="fixed"``). Which regime a population is in depends on n, L, A,
epsilon and the budget; :func:`choose` reads only those: it runs each
candidate plan with the fast engine on the public prior of
:mod:`triehh.theory.noisy_prior` drawn at the declared n, L and A (one
word per user), and keeps the plan with the most true words over
``PRIOR_SEEDS`` (ties: the first, verified at q = 1). The candidates: each
rule of ``CANDIDATE_RULES`` at each q of ``SAMPLING_RATES``, then at q
halved again and again while the rule's last q found more than every q
before it, down to ``SMALLEST_SAMPLING_RATE`` (at n = 10^9 the frontier
of tens of thousands of prefixes only fits a megabyte per run at q near
1/16; at n = 10^5 halving stops at once). With the server's noise and
no q given, each rule is then tried once more at its best q if that q is
below 1, with its rates adapted to the frontier
(:mod:`triehh.theory.noisy_plan`, *Rates adapted*: a round whose
frontier fits takes a larger rate at a raised sigma, accounted at one
Renyi order), and, with the server's noise, once more at its best q with
discrete Laplace noise in place of the Gaussian (pure DP: at the small
deltas of ``1/n^2`` a few rounds of it cost less noise, over many rounds
the Gaussian's composition wins; ``docs/noisy-trie.md``, "The noise's
law"). Every candidate is accounted as
itself (below delta = 1e-15 a sampled round by its own Renyi divergence:
:mod:`triehh.theory.sampled_renyi`), so the choice, a function of
public values, changes nothing in the guarantee of the plan chosen.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import math
import os

import numpy as np

from triehh.core import population as population_lib
from triehh.engines import noisy as noisy_engine
from triehh.theory import calibration_store
from triehh.theory import noisy_plan
from triehh.theory import noisy_prior
from triehh.theory.upload_budget import SAMPLING_RATES
from triehh.theory.upload_budget import SMALLEST_SAMPLING_RATE
from triehh.theory.upload_budget import UploadBudget

CANDIDATE_RULES = (noisy_plan.VERIFIED, noisy_plan.FIXED)
# The prior's runs: the engine's seeds, the same for every candidate.
PRIOR_SEEDS = (1, 2)
# The prior's symbols: A distinct characters with no case to fold.
_FIRST_SYMBOL = 0x4E00


@functools.lru_cache(maxsize=16)
def prior_population(population_size: int, max_length: int,
                     alphabet_size: int) -> population_lib.Population:
  """The public prior's strings (:func:`triehh.theory.noisy_prior.drawn`)
  as a one-word-per-user population of the engine, over A characters of
  its own."""
  symbols, lengths, counts = noisy_prior.drawn(population_size, max_length,
                                               alphabet_size)
  alphabet = "".join(chr(_FIRST_SYMBOL + j) for j in range(alphabet_size))
  users: dict[str, int] = {}
  for row, length, count in zip(symbols, lengths, counts):
    word = "".join(alphabet[j] for j in row[:length])
    users[word] = users.get(word, 0) + int(count)
  pop = population_lib.Population.from_word_frequencies(
      list(users), list(users.values()), max_length=max_length,
      alphabet=alphabet)
  pop.encode()
  return pop


@dataclasses.dataclass(frozen=True)
class Candidate:
  """One candidate plan and its mean true words on the prior."""

  rule: str
  sampling_rate: float
  true_words: float
  adapted: bool = False
  noise_law: str = noisy_plan.GAUSSIAN


@functools.lru_cache(maxsize=64)
def candidates(population_size: int, max_length: int, alphabet_size: int,
               epsilon: float, delta: float, budget: UploadBudget,
               one_word: bool, dropout: float | None = None,
               replace_one: bool = False, noise_law: str | None = None
               ) -> tuple[tuple[Candidate, noisy_plan.NoisyPlan], ...]:
  """Every candidate plan with its score on the prior, in the order tried
  (for each rule of ``CANDIDATE_RULES``: the rates of ``SAMPLING_RATES``,
  then halved while the last found the most so far, module docstring; or
  the budget's own q alone when it gives one, kept in every round; then,
  without ``dropout`` and a q given, the rule at its best of those q with
  its rates adapted, if that q is below 1, and with the server's noise,
  the rule at that q with discrete Laplace noise). ``dropout`` (None: the
  server's noise): each plan with Skellam shares at that dropout bound
  (:func:`triehh.theory.noisy_plan.with_distributed`), run so on the prior
  (their noise drawn at their variance, :class:`triehh.engines.noisy.
  SkellamVoter` with ``exact=False``: a simulation, not a release).
  ``replace_one``: every plan calibrated for ``REPLACE_ONE`` too.
  ``noise_law`` (None: both, as above): the rates scanned at that law
  alone (the Laplace's not adapted). Remembered by its arguments."""
  prior = prior_population(population_size, max_length, alphabet_size)
  scan = noise_law or noisy_plan.GAUSSIAN
  scored = []
  for rule in CANDIDATE_RULES:

    def scored_at(q: float, rule: str = rule, adapted: bool = False,
                  law: str = scan) -> float:
      plan = _built(population_size, max_length, alphabet_size, epsilon,
                    delta, dataclasses.replace(budget, sampling_rate=q),
                    one_word, rule, dropout, adapted, replace_one, law)
      voter = (None if dropout is None else
               noisy_engine.SkellamVoter(exact=False))
      true = [_true_words(noisy_engine.run_planned(prior, plan, seed,
                                                   voter=voter))
              for seed in PRIOR_SEEDS]
      scored.append((Candidate(rule, q, float(np.mean(true)), adapted,
                               law), plan))
      return scored[-1][0].true_words

    if budget.sampling_rate is not None:
      rates = [budget.sampling_rate]
      found = [scored_at(budget.sampling_rate)]
    else:
      rates = list(SAMPLING_RATES)
      found = [scored_at(q) for q in rates]
      while (found[-1] > max(found[:-1])
             and rates[-1] / 2 >= SMALLEST_SAMPLING_RATE):
        rates.append(rates[-1] / 2)
        found.append(scored_at(rates[-1]))
    best = rates[int(np.argmax(found))]
    if (best < 1.0 and dropout is None and budget.sampling_rate is None
        and scan == noisy_plan.GAUSSIAN):
      scored_at(best, adapted=True)
    if dropout is None and noise_law is None:
      scored_at(best, law=noisy_plan.LAPLACE)
  return tuple(scored)


def choose(population_size: int, max_length: int, alphabet_size: int,
           epsilon: float, delta: float, *,
           budget: UploadBudget = UploadBudget(),
           one_word: bool = True,
           dropout: float | None = None,
           replace_one: bool = False,
           noise_law: str | None = None) -> noisy_plan.NoisyPlan:
  """The candidate plan with the most true words on the prior (module
  docstring), from declared and public values only. The choice (rule and
  q) is remembered on disk (:mod:`triehh.theory.calibration_store`, kind
  ``plan_choice``): a later call with the same arguments and code builds
  that plan (its sigma from the accountant, afresh) without running the
  candidates on the prior again. A stored choice is a hint: one that is
  not a candidate of these arguments is ignored, and a wrong one could
  cost words, never privacy. ``dropout`` (None: the server's noise):
  the plans carry Skellam shares at that dropout bound, chosen so.
  ``replace_one``: calibrated for ``REPLACE_ONE`` too. ``noise_law``
  (None: chosen too): the server's noise asked for; the Laplace with
  ``dropout`` is refused (the shares are Skellam)."""
  if noise_law == noisy_plan.LAPLACE and dropout is not None:
    raise ValueError("noise_law='laplace' is the server's noise; "
                     "noise='distributed' draws the clients' Skellam "
                     "shares instead: ask for one of them")
  arguments = {"population_size": int(population_size),
               "max_length": int(max_length),
               "alphabet_size": int(alphabet_size),
               "epsilon": float(epsilon), "delta": float(delta),
               "bytes_per_run": budget.bytes_per_run,
               "bytes_per_round": budget.bytes_per_round,
               "sampling_rate": budget.sampling_rate,
               "one_word": bool(one_word),
               "dropout": None if dropout is None else float(dropout)}
  if replace_one:
    arguments["replace_one"] = True
  if noise_law is not None:
    arguments["noise_law"] = noise_law
  stored = calibration_store.load(_KIND, arguments, _sources())
  rule, q, adapted, law = _stored_choice(stored, budget, dropout,
                                         noise_law)
  if rule is not None:
    return _built(population_size, max_length, alphabet_size, epsilon, delta,
                  dataclasses.replace(budget, sampling_rate=q), one_word,
                  rule, dropout, adapted, replace_one, law)
  scored = candidates(population_size, max_length, alphabet_size,
                      float(epsilon), float(delta), budget, bool(one_word),
                      None if dropout is None else float(dropout),
                      bool(replace_one), noise_law)
  best = max(range(len(scored)), key=lambda i: (scored[i][0].true_words, -i))
  chosen = scored[best][0]
  calibration_store.save(_KIND, arguments, _sources(), {
      "rule": chosen.rule, "sampling_rate": chosen.sampling_rate,
      "adapted": chosen.adapted, "noise_law": chosen.noise_law})
  return scored[best][1]


_KIND = "plan_choice"


def _built(population_size: int, max_length: int, alphabet_size: int,
           epsilon: float, delta: float, budget: UploadBudget,
           one_word: bool, rule: str, dropout: float | None,
           adapted: bool = False, replace_one: bool = False,
           noise_law: str = noisy_plan.GAUSSIAN) -> noisy_plan.NoisyPlan:
  """The plan of ``rule`` at the budget's q (``adapted``: its rates
  adapted to the frontier; ``replace_one``: calibrated for it;
  ``noise_law``: the server's noise); with ``dropout``, with Skellam
  shares at that bound."""
  plan = noisy_plan.plan(population_size, max_length, alphabet_size,
                         epsilon, delta, budget=budget, one_word=one_word,
                         rule=rule, adapt_rates=adapted,
                         replace_one=replace_one, noise_law=noise_law)
  if dropout is None:
    return plan
  return noisy_plan.with_distributed(plan, epsilon, dropout)


def _stored_choice(stored: dict | None, budget: UploadBudget,
                   dropout: float | None = None,
                   noise_law: str | None = None
                   ) -> tuple[str | None, float, bool, str]:
  """A stored ``(rule, q, adapted, noise_law)`` if it is a candidate for
  ``budget`` (a rule of ``CANDIDATE_RULES``; q the budget's own, or one of
  ``SAMPLING_RATES`` or a power of two down to
  ``SMALLEST_SAMPLING_RATE``; adapted a bool, true only at q < 1 without
  ``dropout`` or a q given; the law Gaussian, or Laplace without
  ``dropout`` and not adapted, and ``noise_law`` when one is asked for);
  else ``(None, 0, False, "gaussian")``."""
  none = None, 0.0, False, noisy_plan.GAUSSIAN
  if stored is None or stored.get("rule") not in CANDIDATE_RULES:
    return none
  q = calibration_store.finite_float(stored.get("sampling_rate"))
  adapted = stored.get("adapted", False)
  law = stored.get("noise_law", noisy_plan.GAUSSIAN)
  if law not in noisy_plan.NOISE_LAWS or law == noisy_plan.LAPLACE and (
      adapted or dropout is not None) or noise_law not in (None, law):
    return none
  if q is None or not isinstance(adapted, bool) or adapted and (
      q >= 1.0 or dropout is not None or budget.sampling_rate is not None):
    return none
  if budget.sampling_rate is not None:
    allowed = q == float(budget.sampling_rate)
  else:
    allowed = q in SAMPLING_RATES or (
        SMALLEST_SAMPLING_RATE <= q < SAMPLING_RATES[-1]
        and math.log2(q).is_integer())
  return (stored["rule"], q, adapted, law) if allowed else none


@functools.lru_cache(maxsize=1)
def _sources() -> tuple[str, ...]:
  """The code the choice depends on (the plan, the prior, the engine and
  what they import of the package's core, engines and theory): every
  source file there, so that a changed file never reads an old choice."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  found = [os.path.abspath(__file__)]
  for folder in ("core", "engines", "theory"):
    for path in sorted(glob.glob(os.path.join(root, folder, "*.py"))
                       + glob.glob(os.path.join(root, folder, "*.pyx"))):
      found.append(path)
  return tuple(found)


def _true_words(result: noisy_engine.PlannedResult) -> int:
  return len(result.words) - result.num_false_words
