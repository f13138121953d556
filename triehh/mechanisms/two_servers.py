"""Two non-colluding servers as a mechanism: a Poplar-style walk over
incremental distributed point functions, each server noising every count
(``docs/two-servers.md``). A research prototype: no audited constant-time
cryptographic code.

In one place, what makes it up:

* privacy object: :class:`TwoServerTarget`;
* parameters and accountant: :class:`triehh.theory.two_servers.WalkPlan`,
  :func:`triehh.theory.two_servers.plan` (the discrete Laplace's pure
  epsilon, or the discrete Gaussian's PLD; thresholds from the false-word
  budget; with ``verify``, steps that discover at twice the noise and one
  step that verifies the words found and alone releases);
* engines: ``"fast"`` (:func:`triehh.engines.two_servers.run_walk`, the
  released law from the counts) and ``"protocol"``
  (:func:`triehh.secure.protocol.run_walk`: client keys and two server
  processes on loopback, for small n).

The guarantee covers each server's whole view (every candidate's noisy
count at every step) against that server colluding with any clients:
``ADD_OR_REMOVE_ONE`` and ``REPLACE_SPECIAL`` (``REPLACE_SPECIAL`` only
where a parameter read n off the data); ``REPLACE_ONE`` holds at twice
epsilon, and is not listed.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
from typing import Literal

import numpy as np

from triehh.core import population as population_lib
from triehh.core import prefix_code as code_lib
from triehh.core import release as release_lib
from triehh.core import validation
from triehh.engines import registry as engines
from triehh.mechanisms import protocol
from triehh.secure import plan as secure_plan
from triehh.theory import coverage
from triehh.theory import limits
from triehh.theory import mechanism as privacy_lib
from triehh.theory import two_servers as theory

NAME = "two_servers"
PROTOCOL = "protocol"
# Under max_candidates, a discovery step passes this many times its
# frontier cap in noise-only live prefixes on average (extended, never
# released; the cap keeps the highest noisy counts), and as many noise-only
# words (verified, never released by the step). Chosen on the public prior
# (docs/two-servers.md, *Filling the frontier*).
LIVE_PASSES = 1.0
ENGLISH = "'abcdefghijklmnopqrstuvwxyz"
PROTOTYPE = ("research prototype: the protocol has no audited or "
             "constant-time cryptographic code")
TRUST = ("either server may collude with any set of clients; the servers do "
         "not collude with each other; both honest but curious (each adds "
         "its noise); clients honest: no sketching check, so a malicious "
         "client can inflate counts, not learn another client's word")


@dataclasses.dataclass(frozen=True)
class TwoServerTarget:
  """``epsilon`` for the two-server walk (``docs/two-servers.md``).

  Attributes:
    epsilon: the target epsilon (> 0), against either server with any
      clients.
    delta: the target delta of the discrete Gaussian (the discrete Laplace
      is pure: delta 0); None: ``1/n^2`` of the declared population_size,
      else of the data's.
    noise: each server's noise: "laplace" (discrete Laplace) or "gaussian"
      (discrete Gaussian).
    false_words: the expected released words no user holds, per run (split
      equally among the word lengths).
    alphabet: the public characters words are spelled in, fixed before the
      data (a word with another is not sent).
    chars_per_step: characters per step of the walk (None: one step, every
      string of up to L characters a candidate).
    first_step_chars: the first step's characters (None: under
      max_candidates, the most the bound allows from the root, at least
      chars_per_step, below L with verify=True: the root has no frontier,
      and fewer steps compose less noise; without it, chars_per_step).
    max_candidates: the candidates a step may evaluate, the servers' work
      per client (None: unbounded); with steps, the live prefixes a step
      extends are capped to fit it (else at n times words_per_user).
    verify: discover, then verify (steps and max_candidates only): the
      steps at twice the noise find candidates, one more step counts the
      words they found (at most max_candidates) and alone releases. None
      (the default): on wherever the walk has several steps under
      max_candidates; False: the steps release the words themselves.
    verification_split: with verify, each word's threshold from its
      discovery count ("weighted", the default: the false-word budget
      spent where the counts say words are) or one threshold for all
      ("even"); ``docs/two-servers.md``, *Thresholds from the discovery
      counts*.
    live_passes: under max_candidates, the noise-only live prefixes a step
      passes on average, as a multiple of its frontier cap (the cap keeps
      the highest noisy counts); its words alike.
    words_per_user: m, the distinct words a user sends at most.
    max_upload_bytes: the most a client may upload per run (its keys).
    population_size: a declared, public n (None: the population's size).
    allow_delta_above_1_over_n: run a delta above ``1/n``, which protects
      nobody, instead of refusing it (the discrete Gaussian's).
  """

  epsilon: float
  delta: float | None = None
  noise: Literal["laplace", "gaussian"] = "laplace"
  false_words: float = 1.0
  alphabet: str = ENGLISH
  chars_per_step: int | None = None
  first_step_chars: int | None = None
  max_candidates: int | None = None
  verify: bool | None = None
  verification_split: Literal["weighted", "even"] = "weighted"
  live_passes: float = LIVE_PASSES
  words_per_user: int = 1
  max_upload_bytes: int = 10_000
  population_size: int | None = None
  allow_delta_above_1_over_n: bool = False

  def __post_init__(self):
    object.__setattr__(self, "epsilon",
                       validation.check_positive("epsilon", self.epsilon))
    if self.delta is not None:
      object.__setattr__(self, "delta", limits.check_delta("delta",
                                                           self.delta))
    theory.check_noise(self.noise)
    if not (isinstance(self.false_words, (int, float))
            and 0 < self.false_words < math.inf):
      raise ValueError("false_words (expected released words no user holds "
                       f"per run) must be a number > 0, got "
                       f"{self.false_words!r}")
    if not (isinstance(self.live_passes, (int, float))
            and not isinstance(self.live_passes, bool)
            and 0 < self.live_passes < math.inf):
      raise ValueError("live_passes (noise-only live prefixes a step passes,"
                       " over its frontier cap) must be a number > 0, got "
                       f"{self.live_passes!r}")
    if not isinstance(self.alphabet, str) or not self.alphabet or len(
        set(self.alphabet)) < len(self.alphabet):
      raise ValueError("alphabet must be a string of distinct characters, "
                       f"got {self.alphabet!r:.60}")
    for name in ("chars_per_step", "first_step_chars", "max_candidates",
                 "words_per_user", "max_upload_bytes"):
      value = getattr(self, name)
      if value is not None:
        object.__setattr__(self, name, validation.check_int(name, value))
    if self.population_size is not None:
      object.__setattr__(self, "population_size", limits.check_users(
          "population_size (the declared, public number of users)",
          self.population_size))
    limits.check_opt_in(self.allow_delta_above_1_over_n)
    if self.verification_split not in (theory.WEIGHTED, theory.EVEN):
      raise ValueError("verification_split must be 'weighted' or 'even', "
                       f"got {self.verification_split!r}")
    if self.verify is not None and not isinstance(self.verify, bool):
      raise ValueError(f"verify must be True, False or None, got "
                       f"{self.verify!r}")
    if self.verify and (self.chars_per_step is None
                        or self.max_candidates is None):
      raise ValueError(
          "verify=True needs chars_per_step and max_candidates: the walk "
          "discovers in steps under a work bound, then verifies at most "
          "max_candidates words")
    if self.first_step_chars is not None and self.chars_per_step is None:
      raise ValueError("first_step_chars needs chars_per_step: it widens the "
                       "first of the walk's steps")


@dataclasses.dataclass(frozen=True)
class TwoServerParams:
  """A run's public plan, with where its n came from.

  Attributes:
    plan: the walk (:class:`~triehh.theory.two_servers.WalkPlan`).
    n_source: ``"declared"``, ``"data"`` or ``"unused"``.
    population_size: the n the plan was made for.
    upload_bytes: a client's upload per run: its keys, both shares.
  """

  plan: theory.WalkPlan
  n_source: str
  population_size: int
  upload_bytes: int

  @property
  def epsilon(self) -> float:
    return self.plan.epsilon

  @property
  def delta(self) -> float:
    return self.plan.delta


@dataclasses.dataclass(frozen=True)
class TwoServerResult:
  """A run's release: a :class:`~triehh.core.release.Release`.

  Attributes:
    words: released words, by noisy count (largest first, then the word).
    noisy_counts: their noisy counts (covered by the guarantee).
    false_words: whether no user sent the word (simulation only).
    per_round: each step's candidates and kept candidates.
    guarantee, params, seconds: as every release's.
    prototype: what the protocol is not.
  """

  words: tuple[str, ...]
  noisy_counts: np.ndarray
  false_words: np.ndarray
  per_round: tuple[release_lib.RoundStats, ...]
  guarantee: privacy_lib.Guarantee
  params: TwoServerParams
  seconds: float
  prototype: str = PROTOTYPE
  mechanism: str = NAME

  @property
  def num_false_words(self) -> int:
    return int(self.false_words.sum())

  @property
  def unprotected(self) -> dict[str, tuple[str, ...]]:
    """``{"false_words": ...}``: released words no user sent (simulation
    only, not covered by the guarantee)."""
    return {"false_words": tuple(
        w for w, false in zip(self.words, self.false_words) if false)}


def key_bytes(bits: int, steps: int) -> int:
  """One key share's bytes for ``bits`` levels (the IDPF's own size,
  :func:`triehh.secure.idpf.key_bytes`); ``steps`` values are read off
  per level, so the size does not grow with them."""
  del steps
  from triehh.secure import idpf  # pylint: disable=g-import-not-at-top
  return idpf.key_bytes(bits)


def client_counts(population: population_lib.Population,
                  code: code_lib.PrefixCode, words_per_user: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
  """``(ids, keys)``: each sendable word's id and how many users send a key
  for it; a user with more than ``words_per_user`` distinct words sends
  that many, chosen uniformly by the user (``rng``)."""
  ids, ok = code.encode(str(w) for w in population.vocabulary)
  if population.is_single_word:
    keys = population.users_per_word.astype(np.int64)
  else:
    population.check_user_array("the two-server mechanism")
    offsets = population.user_offsets
    sizes = np.diff(offsets)
    users = np.repeat(np.arange(sizes.size), sizes)
    order = np.lexsort((rng.random(users.size), users))
    rank = np.arange(users.size) - offsets[users[order]]
    chosen = population.entry_word[order[rank < words_per_user]]
    keys = np.bincount(chosen, minlength=population.num_words)
  keep = ok & (keys > 0)
  return ids[keep], keys[keep].astype(np.int64)


def fast_frontiers(counts, params: TwoServerParams, rng):
  """The walk on the fast engine."""
  from triehh.engines import two_servers as engine  # pylint: disable=g-import-not-at-top
  plan = params.plan
  return engine.run_walk(counts, plan.bits, plan.steps, plan.scales,
                         plan.thresholds, rng, noise=plan.noise,
                         code=plan.code, max_frontier=_cap(plan),
                         **_verification(plan))


def protocol_frontiers(counts, params: TwoServerParams, seed, **options):
  """The walk on the real protocol: one key per word sent, two server
  processes on loopback (small n: every candidate is evaluated)."""
  from triehh.secure import plan as secure_plan  # pylint: disable=g-import-not-at-top
  from triehh.secure import protocol as secure  # pylint: disable=g-import-not-at-top
  plan = params.plan
  most = secure_plan.MAX_STEP_BITS // plan.code.char_bits
  widest = max(b - a for a, b in zip((0,) + plan.step_chars, plan.step_chars))
  if widest > most:
    raise ValueError(
        f"the protocol engine evaluates every candidate on every key, at "
        f"most {secure_plan.MAX_STEP_BITS} bits ({most} characters) a step; "
        f"this plan adds {widest} characters in a step: give "
        f"chars_per_step={most} or fewer (and max_candidates), or use the "
        "fast engine")
  ids, keys = counts
  walk = secure.run_walk(np.repeat(ids, keys), plan.bits, plan.steps,
                         plan.scales, plan.thresholds, seed, noise=plan.noise,
                         code=plan.code, max_frontier=_cap(plan),
                         **_verification(plan), **options)
  return list(walk.frontiers)


def _verification(plan: theory.WalkPlan) -> dict:
  """The plan's verification step as both engines take it."""
  if not plan.verifies:
    return {}
  return dict(verify_sigma=plan.verify_scale, verify_cap=plan.verify_cap,
              verify_thresholds=plan.engine_thresholds)


def _frontier(privacy: TwoServerTarget, max_length: int, n: int
              ) -> tuple[int | None, int]:
  """(the first step's characters, the live prefixes a step extends at
  most): the frontier is what ``max_candidates`` leaves room for, else
  every key's (n m); 1 for the one-step walk."""
  k = privacy.chars_per_step
  if k is None or k >= max_length:
    if privacy.max_candidates is not None:
      raise ValueError(
          f"max_candidates={privacy.max_candidates:,} bounds each step, but "
          f"the one-step walk evaluates every string of up to {max_length} "
          "characters: give chars_per_step too")
    return None, 1
  if privacy.max_candidates is None:
    return privacy.first_step_chars, n * privacy.words_per_user
  code = code_lib.PrefixCode(tuple(privacy.alphabet), max_length)
  first = _first_step(privacy, code)
  at_root = sum(code.class_sizes(0, first))
  per_prefix = sum(code.class_sizes(k, min(2 * k, max_length)))
  if at_root > privacy.max_candidates or per_prefix > privacy.max_candidates:
    raise ValueError(
        f"a step of {first} (first) or {k} characters evaluates "
        f"{max(at_root, per_prefix):,} candidates, more than "
        f"max_candidates={privacy.max_candidates:,}: lower chars_per_step "
        "or first_step_chars, or raise max_candidates")
  return first, privacy.max_candidates // per_prefix


def _first_step(privacy: TwoServerTarget, code: code_lib.PrefixCode) -> int:
  """The first step's characters under ``max_candidates``: the target's,
  else the most whose candidates fit the bound (at least
  ``chars_per_step``; below L with ``verify=True``, which needs a step to
  discover)."""
  if privacy.first_step_chars is not None:
    return privacy.first_step_chars
  most = code.max_length - 1 if privacy.verify else code.max_length
  first = privacy.chars_per_step
  while first < most and sum(code.class_sizes(
      0, first + 1)) <= privacy.max_candidates:
    first += 1
  return first


def _verifies(privacy: TwoServerTarget, max_length: int,
              first: int | None) -> bool:
  """The target's ``verify``; None: whether the walk has several steps
  under ``max_candidates``."""
  k = privacy.chars_per_step
  several = k is not None and len(theory.step_lengths(max_length, k,
                                                      first)) > 1
  if privacy.verify and not several:
    raise ValueError(
        f"verify=True needs a step to discover before the verification, but "
        f"first_step_chars={first} covers all {max_length} characters: "
        "lower first_step_chars, or set verify=False")
  if privacy.verify is not None:
    return privacy.verify
  return several and privacy.max_candidates is not None


def _cap(plan: theory.WalkPlan) -> int | None:
  return plan.max_frontier if len(plan.steps) > 1 else None


class TwoServers(protocol.BaseMechanism):
  """The two-server walk (module docstring)."""

  name = NAME
  privacy_types = (TwoServerTarget,)
  summary = ("two non-colluding servers walk IDPF shares of the words, each "
             "noising every count (research prototype)")

  def calibrate(self, privacy: TwoServerTarget, population_size: int,
                shape: protocol.Shape) -> TwoServerParams:
    """The plan of ``docs/two-servers.md`` for L = ``shape.max_length``."""
    gaussian = privacy.noise == theory.GAUSSIAN
    delta = 0.0
    if gaussian:
      delta = (coverage.default_delta(population_size)
               if privacy.delta is None else privacy.delta)
    steps = privacy.chars_per_step
    several = steps is not None and steps < shape.max_length
    first, frontier = _frontier(privacy, shape.max_length, population_size)
    plan = theory.plan(tuple(privacy.alphabet), shape.max_length,
                       privacy.epsilon, delta=delta, noise=privacy.noise,
                       chars_per_step=steps,
                       words_per_user=privacy.words_per_user,
                       false_words=privacy.false_words,
                       max_frontier=frontier,
                       live_budget=None if privacy.max_candidates is None
                       else frontier * privacy.live_passes,
                       verify=_verifies(privacy, shape.max_length, first),
                       verify_cap=privacy.max_candidates,
                       first_chars=first,
                       verification_split=privacy.verification_split)
    upload = 2 * privacy.words_per_user * key_bytes(plan.bits,
                                                    len(plan.steps))
    if upload > privacy.max_upload_bytes:
      raise ValueError(
          f"a client would upload {upload:,} bytes ({privacy.words_per_user}"
          f" word(s), two key shares of {plan.bits} bits), more than "
          f"max_upload_bytes={privacy.max_upload_bytes:,}: raise it, or "
          "lower words_per_user or max_length")
    uses_n = (several and privacy.max_candidates is None) or (
        gaussian and privacy.delta is None)
    n_source = coverage.n_source_of(shape.declared, uses_n)
    return TwoServerParams(plan, n_source, population_size, upload)

  def guarantee(self, params: TwoServerParams) -> privacy_lib.Guarantee:
    plan = params.plan
    same_size = (", for neighbours of the same size (n read off the data)"
                 if params.n_source == coverage.N_FROM_DATA else "")
    return privacy_lib.Guarantee(
        epsilon=plan.epsilon, delta=plan.delta,
        adjacencies=coverage.add_or_remove(params.n_source), two_sided=True,
        accounting=plan.accounting, n_source=params.n_source,
        covers=("the released words and noisy counts and each server's "
                "whole view (every candidate's noisy count at every step), "
                "against either server colluding with any clients, both "
                f"directions{same_size}; REPLACE_ONE at twice epsilon; "
                + PROTOTYPE),
        public=(f"the alphabet, L = {plan.max_length}, the plan (steps, "
                "noise, thresholds), the false-word budget" +
                ("; the declared population size"
                 if params.n_source == coverage.N_DECLARED else "")),
        trust=TRUST)

  def dp_event(self, params: TwoServerParams):
    """An ``UnsupportedDpEvent``: dp_accounting has no event of the
    discrete Laplace or Gaussian."""
    del params
    from dp_accounting import dp_event as dp_event_lib  # pylint: disable=g-import-not-at-top
    return dp_event_lib.UnsupportedDpEvent()

  def run(self, population: population_lib.Population,
          params: TwoServerParams, rng, engine: str,
          **engine_options) -> TwoServerResult:
    """One run on ``engine``: the users' keys counted, the walk, the
    complete words released."""
    runner = engines.get(engine).runner(NAME)
    plan = params.plan
    if population.max_length != plan.max_length:
      raise ValueError(f"the plan is for max_length={plan.max_length}, the "
                       f"population's is {population.max_length}")
    if engine != PROTOCOL and engine_options:
      raise ValueError(f"the {NAME} mechanism's {engine!r} engine takes no "
                       f"options, got {', '.join(sorted(engine_options))}")
    seeds = np.random.SeedSequence(
        rng if rng is None or isinstance(rng, numbers.Integral) else
        int(np.random.default_rng(rng).integers(2**63)))
    choice, noise = (np.random.default_rng(s) for s in seeds.spawn(2))
    start = time.perf_counter()
    counts = client_counts(population, plan.code, plan.words_per_user,
                           choice)
    if engine == PROTOCOL:  # its keys and noise from one integer seed
      noise = None if rng is None else int(noise.integers(2**63))
    frontiers = theory.verified(
        plan, runner(counts, params, noise, **engine_options))
    words, noisy, stats = _released(plan, frontiers)
    sent = set(counts[0].tolist())
    false = np.array([i not in sent for i in words[1]], dtype=bool)
    return TwoServerResult(
        words=words[0], noisy_counts=noisy, false_words=false,
        per_round=stats, guarantee=self.guarantee(params), params=params,
        seconds=time.perf_counter() - start)


def _released(plan: theory.WalkPlan, frontiers):
  """The complete words of the walk's output (of its verification step if
  it verifies), ranked; per step stats."""
  code, chars = plan.code, plan.step_chars
  found, stats, live = [], [], 1
  for r, kept in enumerate(frontiers[:len(plan.steps)]):
    keys = np.fromiter(kept, dtype=np.uint64, count=len(kept))
    sizes = code.class_sizes(0 if r == 0 else chars[r - 1], chars[r])
    stats.append(release_lib.RoundStats(candidates=live * int(sum(sizes)),
                                        kept=len(kept)))
    padding = code.padding(keys)
    if not plan.verifies:  # else its words are only the verification's
      done = keys[(padding > 0) | (r == len(plan.steps) - 1)]
      shift = np.uint64(code.char_bits * (plan.max_length - chars[r]))
      found += [(-kept[key], word, int(key) << int(shift))
                for key, word in zip(done.tolist(),
                                     code.decode(done << shift))]
    live = int(np.count_nonzero(padding == 0))
    if len(plan.steps) > 1:
      live = min(live, plan.max_frontier)
  if plan.verifies:  # its kept candidates are full points
    kept = frontiers[-1]
    stats.append(release_lib.RoundStats(
        candidates=int(secure_plan.verification_points(
            code, plan.steps, frontiers, plan.verify_cap).size),
        kept=len(kept)))
    keys = np.fromiter(kept, dtype=np.uint64, count=len(kept))
    found = [(-kept[key], word, key)
             for key, word in zip(keys.tolist(), code.decode(keys))]
  found.sort()
  words = tuple(w for _, w, _ in found)
  ids = [i for _, _, i in found]
  counts = np.array([-c for c, _, _ in found], dtype=np.int64)
  return (words, ids), counts, tuple(stats)


engines.serve(engines.FAST, NAME, fast_frontiers)
engines.serve(PROTOCOL, NAME, protocol_frontiers)
MECHANISM = TwoServers()
