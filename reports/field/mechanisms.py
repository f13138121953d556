"""One run of a mechanism of the field benchmark, scored as a record.

The mechanisms (:data:`MECHANISMS`), each through the library's entry
point at ``(epsilon, delta)``, delta given (``1/n^2`` of the population's n
in the benchmark):

* ``triehh-fixed``: ``discover(pop, Target(eps, delta, sampling="fixed"))``,
  the paper's TrieHH (Theorem 1, one direction).
* ``triehh-poisson``: ``discover(pop, Target(eps, delta))``, TrieHH under
  Poisson sampling (its two-sided accountant).
* ``noisy-k1``, ``noisy-k2``: the noisy trie, ``discover(pop,
  NoisyTarget(eps, delta, false_positive_rate=alpha, chars_per_level=k))``
  with alpha 1e-5 at k = 1 and 1e-7 at k = 2 (``docs/noisy-trie.md``: about
  as many false words, the candidate set being 28 times larger).
* ``noisy-k2-x4``, ``noisy-k3-x4``: the noisy trie with four times the
  noise on its first level (``noise_multipliers=(4,)``), k = 2 at alpha =
  1e-5 and k = 3 at alpha = 1e-7. Their settings were picked by a sweep on
  the English population at n = 10^6, epsilon = 4 (the moonshot's cell):
  a choice made on the data it is measured on, which their rows at the
  other n and epsilon test. Its
  calibration (0.3-3 s, a function of (L, eps, delta, alpha, k) only) is
  done by the first run of a setting; the later seeds run
  :func:`triehh.engines.noisy.run` on the same parameters, which is what
  ``discover`` does after calibrating (the same words for the same seed).
* ``noisy-planned-1mb``: the planned noisy trie, ``discover(pop,
  NoisyTarget(eps, delta, population_size=n,
  upload_budget=UploadBudget(1_000_000)))``: rounds shaped by the public
  frontier within 1 MB per client per run, noise and thresholds planned
  from (n, L, A, eps, delta) before the data is read
  (:mod:`triehh.theory.noisy_plan`), no setting picked on a population.
  Its plan is made by the first run of a cell (n, L and the alphabet
  declared public); the later seeds run it
  (:func:`triehh.mechanisms.planned_noisy_trie.run`). Its bytes are the
  plan's: each round's secure-sum blocks of ``b_f`` bits per candidate,
  every user in every round.
* ``ps-<strategy>``: pipeline_dp's partition selection, one word per
  user counted (``max_partitions_contributed=1``), drawn from its law
  (:func:`triehh.baselines.partition_selection_law.select_words_by_law`:
  python-dp's keep probability of each word's user count, seeded numpy
  draws; tested equal in law to the PipelineDP path,
  :func:`triehh.baselines.partition_selection.select_words`, the
  library's release path, which takes 5-25 s a run at 10^6 users).
* ``noisy-k1-tff-central``, ``noisy-k1-tff-distributed``: the noisy trie
  (k = 1, alpha = 1e-5) in TensorFlow Federated, ``discover(pop,
  NoisyTarget(...), engine="tff", noise=...)``: central Gaussian noise, or
  clients' discrete Gaussian shares summed securely (accounted as the
  central Gaussian, labelled so).
* ``sfp``: Apple's SFP with the paper's parameters
  (:func:`triehh.baselines.sfp.sfp_discover`, top T = 20): local
  differential privacy, the central (eps, delta) by amplification by
  shuffling (replace-one neighbours of a fixed n).
* ``iblt``: TFF's IBLT heavy hitters (:func:`triehh.baselines.iblt.
  iblt_discover`), k-anonymity 14, not differential privacy; one round of
  the Corollary 1 batch at (eps, delta), as ``BEYOND.md`` runs it.

A record (a JSON object): the released words' number, how many no user
holds, recall@K against the population's true top K (:data:`KS`),
precision (the share held by at least one user; None when nothing is
released), rounds, the bytes a
client uploads (:func:`upload`), whether the server sees raw strings, the
wall time, and the guarantee (its short label and its full description).
A run that TrieHH's calibration refuses (:class:`Refused`) is recorded as
such, with the reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from reports.beyond import runs as beyond_runs
from reports.field import populations
from triehh.baselines import iblt
from triehh.baselines import partition_selection
from triehh.baselines import partition_selection_law
from triehh.baselines import sfp
from triehh.core import metrics
from triehh.mechanisms import discover as discover_lib
from triehh.mechanisms import planned_noisy_trie
from triehh.mechanisms import two_servers
from triehh.engines import noisy
from triehh.theory import mechanism
from triehh.theory import noisy_plan
from triehh.theory.adjacency import Adjacency

KS = (10, 100, 1000)
FIXED, POISSON, NOISY_K1, NOISY_K2 = (
    "triehh-fixed", "triehh-poisson", "noisy-k1", "noisy-k2")
NOISY_K2_X4, NOISY_K3_X4 = "noisy-k2-x4", "noisy-k3-x4"
# The planned noisy trie within a client's upload budget per run.
NOISY_PLANNED = "noisy-planned-1mb"
PLANNED_BYTES_PER_RUN = 1_000_000
# Two non-colluding servers (docs/two-servers.md), the one-step walk on the
# fast engine (its law; real servers cannot evaluate its candidates).
TWO_SERVERS = "two-servers"
# The same servers under a work bound they can afford: a first step as wide
# as 10^7 candidates allow, then steps of 2 characters, then a verification
# step. (Its key is new with the wide first step, so that records of the
# even walk before it are not read as its runs.)
TWO_SERVERS_VERIFIED = "two-servers-wide-verified"
# Both, in the moonshot's order: the law, then what servers can run.
TWO_SERVER_NAMES = (TWO_SERVERS, TWO_SERVERS_VERIFIED)
# Its plan (docs/two-servers.md, "Discover, then verify").
VERIFIED_PLAN = dict(chars_per_step=2, max_candidates=10**7, verify=True)
PS = tuple(f"ps-{s}" for s in partition_selection.STRATEGIES)
SFP, IBLT = "sfp", "iblt"
# The paper's baseline and TFF's, slower than the rest: they run on the
# smaller populations only (Settings.sfp_users, iblt_users).
BASELINES = (SFP, IBLT)
TFF_CENTRAL, TFF_DISTRIBUTED = (
    "noisy-k1-tff-central", "noisy-k1-tff-distributed")
# The noisy trie in TensorFlow Federated: seconds to minutes a run, on the
# smallest population only (Settings.tff_users).
TFF_NOISY = {TFF_CENTRAL: "central", TFF_DISTRIBUTED: "distributed"}
MECHANISMS = ((FIXED, POISSON, NOISY_K1, NOISY_K2, NOISY_K2_X4, NOISY_K3_X4,
               NOISY_PLANNED, TWO_SERVERS, TWO_SERVERS_VERIFIED)
              + tuple(TFF_NOISY) + PS
              + BASELINES)
SIMULATED = (FIXED, POISSON, NOISY_K1, NOISY_K2, NOISY_K2_X4, NOISY_K3_X4,
             NOISY_PLANNED, TWO_SERVERS, TWO_SERVERS_VERIFIED)
# IBLT's k: a string is released when at least this many clients of a round
# send it (TFF's tutorial value, BEYOND.md's).
IBLT_K_ANONYMITY = 14
LABELS = {
    FIXED: "TrieHH, fixed-size sampling (paper)",
    POISSON: "TrieHH, Poisson sampling",
    NOISY_K1: "noisy trie, k = 1, α = 1e-5",
    NOISY_K2: "noisy trie, k = 2, α = 1e-7",
    NOISY_K2_X4: "noisy trie, k = 2, α = 1e-5, first level σ×4",
    NOISY_K3_X4: "noisy trie, k = 3, α = 1e-7, first level σ×4",
    NOISY_PLANNED: "noisy trie, planned rounds, 1 MB per client per run",
    TWO_SERVERS: "two servers, one step (fast engine; research prototype)",
    TWO_SERVERS_VERIFIED: ("two servers, widest first step, then steps of 2, "
                           "10^7 candidates a step, then verified (fast "
                           "engine; research prototype)"),
    TFF_CENTRAL: "noisy trie, k = 1, α = 1e-5, TFF, central noise",
    TFF_DISTRIBUTED: "noisy trie, k = 1, α = 1e-5, TFF, distributed noise",
    **{f"ps-{s}": f"partition selection, {s.replace('_', ' ')}"
       for s in partition_selection.STRATEGIES},
    SFP: "SFP (local DP, shuffled; paper's parameters, T = 20)",
    IBLT: f"IBLT, k-anonymity {IBLT_K_ANONYMITY} (not DP)",
}
# (chars per level, false-positive rate, noise multipliers) of the noisy
# tries.
NOISY = {NOISY_K1: (1, 1e-5, ()), NOISY_K2: (2, 1e-7, ()),
         NOISY_K2_X4: (2, 1e-5, (4.0,)), NOISY_K3_X4: (3, 1e-7, (4.0,))}
# Every noisy trie of the fast engine: the settings above and the plan.
NOISY_VARIANTS = tuple(NOISY) + (NOISY_PLANNED,)


class Refused(ValueError):
  """The mechanism has no parameters for this (n, epsilon, delta): TrieHH's
  calibration refuses a population too small for the target."""


# The noisy trie's calibrated runs: (L, its NoisyTarget) -> the result
# of the run that calibrated (its params and guarantee).
_CALIBRATED: dict[tuple, object] = {}


def forget_calibrations() -> None:
  """Forgets the calibrated runs: the next run of each setting calibrates
  (and is recorded ``calibrated``), whichever cells ran before."""
  _CALIBRATED.clear()


def run(name: str, data: populations.Data, epsilon: float, delta: float,
        seed: int) -> dict:
  """One run of mechanism ``name`` on ``data``, as a record."""
  return run_with_words(name, data, epsilon, delta, seed)[0]


def run_with_words(name: str, data: populations.Data, epsilon: float,
                   delta: float, seed: int) -> tuple[dict, list[str]]:
  """:func:`run`'s record and the words the run released."""
  if name not in MECHANISMS:
    raise ValueError(f"unknown mechanism {name!r}: use one of "
                     f"{', '.join(MECHANISMS)}")
  runner: Callable[..., dict] = (
      _triehh if name in (FIXED, POISSON) else
      _two_servers if name in TWO_SERVER_NAMES else
      _noisy_planned if name == NOISY_PLANNED else
      _noisy if name in NOISY else _tff_noisy if name in TFF_NOISY else
      _sfp if name == SFP else
      _iblt if name == IBLT else _partition_selection)
  start = time.perf_counter()
  record = runner(name, data, epsilon, delta, seed)
  seconds = time.perf_counter() - start
  words = record.pop("released")
  scores = metrics.precision_recall_f1(words, data.truth, KS)
  record.update(
      population=data.name, n=data.n, mechanism=name, epsilon=epsilon,
      delta=delta, seed=seed, words=len(words),
      false_words=sum(1 for w in words if data.truth.get(w, 0) <= 0),
      precision=scores["precision"] if words else None, seconds=seconds,
      **{f"recall@{k}": scores[f"recall@{k}"] for k in KS})
  return record, list(words)


def upload(bytes_per_round: list[float], rates: list[float]) -> dict:
  """A client's upload: the largest round's vector and the expected bytes
  per user over the run (each round's vector times the chance a user takes
  part in it)."""
  return {"bytes_round_max": float(max(bytes_per_round, default=0)),
          "bytes_per_user": float(np.dot(bytes_per_round, rates))}


def label(guarantee: mechanism.Guarantee) -> str:
  """``(eps, delta), directions, adjacencies``: the table's short label."""
  if not guarantee.adjacencies:
    return "no DP guarantee"
  sides = "two-sided" if guarantee.two_sided else "one direction"
  names = ", ".join(a.value for a in guarantee.adjacencies)
  return (f"({guarantee.epsilon:.3g}, {guarantee.delta:.2g}), {sides}, "
          f"{names}")


def _guarantee(record: dict, guarantee: mechanism.Guarantee) -> dict:
  record.update(guarantee=label(guarantee),
                guarantee_full=guarantee.describe(),
                achieved_epsilon=guarantee.epsilon)
  return record


def _triehh(name, data, epsilon, delta, seed) -> dict:
  sampling = "fixed" if name == FIXED else "poisson"
  try:
    result = discover_lib.discover(
        data.population, mechanism.Target(epsilon, delta, sampling=sampling),
        max_length=data.population.max_length, seed=seed)
  except ValueError as err:  # calibration: n too small for the target
    raise Refused(str(err)) from err
  p = result.params
  rate = p.batch_size / p.n if name == FIXED else p.sampling_rate
  votes = beyond_runs.vote_bytes(result.trie)
  record = dict(released=result.words, rounds=result.rounds,
                raw_strings=False, calibrated=None,
                setting=f"θ={p.theta}, " + (
                    f"m={p.batch_size:,}" if name == FIXED
                    else f"q={p.sampling_rate:.3g}"),
                **upload(votes, [rate] * len(votes)))
  return _guarantee(record, mechanism.Guarantee.of(p))


def _noisy_target(name: str, epsilon: float, delta: float):
  k, alpha, multipliers = NOISY[name]
  return mechanism.NoisyTarget(epsilon, delta, false_positive_rate=alpha,
                               chars_per_level=k,
                               noise_multipliers=multipliers)


def _noisy_record(result, params, guarantee, *, calibrated: bool | None,
                  noise: str = "") -> dict:
  """A noisy trie run's record: its rounds, setting and upload."""
  p = params
  votes = [4.0 * level.num_candidates for level in result.levels]
  record = dict(released=result.words, rounds=len(result.levels),
                raw_strings=False, calibrated=calibrated,
                setting=(f"σ={p.sigma:.3g}, τ={p.threshold:.3g}, "
                         f"q={p.sampling_rate:g}" + (
                             f" (first level ×{p.noise_multipliers[0]:g})"
                             if p.noise_multipliers else "")
                         + (f", {noise}" if noise else "")),
                **upload(votes, [p.sampling_rate] * len(votes)))
  return _guarantee(record, guarantee)


def _first_or_rerun(key, data, target, seed, rerun):
  """``(first, result)``: a cell's first run of ``target`` (calibrated by
  ``discover``, remembered under ``key``) and this seed's, the first
  itself or ``rerun(first.params)`` on its parameters."""
  first = _CALIBRATED.get(key)
  if first is None:
    first = _CALIBRATED[key] = discover_lib.discover(
        data.population, target, max_length=data.population.max_length,
        seed=seed)
    return first, first
  return first, rerun(first.params)


def _noisy(name, data, epsilon, delta, seed) -> dict:
  target = _noisy_target(name, epsilon, delta)
  first, result = _first_or_rerun(
      (data.population.max_length, target), data, target, seed,
      lambda params: noisy.run(data.population, params, rng=seed))
  return _noisy_record(result, first.params, first.guarantee,
                       calibrated=result is first)


def _noisy_planned(name, data, epsilon, delta, seed) -> dict:
  """The planned noisy trie at 1 MB per client per run, n declared (the
  population's); the plan made by the cell's first run, run by the
  others."""
  del name
  target = mechanism.NoisyTarget(
      epsilon, delta, population_size=data.n,
      upload_budget=noisy_plan.UploadBudget(PLANNED_BYTES_PER_RUN))
  first, result = _first_or_rerun(
      (data.population.max_length, data.population.alphabet.size,
       data.population.is_single_word, target), data, target, seed,
      lambda plan: planned_noisy_trie.run(data.population, plan, seed,
                                          "fast"))
  plan = first.params
  sigmas = plan.sigmas
  record = dict(released=result.words, rounds=len(result.levels),
                raw_strings=False, calibrated=result is first,
                setting=_planned_setting(plan, result),
                **upload([float(b) for b in result.upload_bytes_per_round],
                         list(result.sampling_rates)))
  return _guarantee(record, first.guarantee)


def _planned_setting(plan, result) -> str:
  """A planned run's R, sigmas and characters per round, in a few words."""
  sigmas = plan.sigmas
  chars = ",".join(str(level.chars) for level in result.levels
                   if not level.verification)
  q = f"q={plan.sampling_rate:g}" + (
      "" if plan.renyi_order is None else " adapted (rounds at "
      + ",".join(f"{level.sampling_rate:.2g}" for level in result.levels)
      + f"; RDP order {plan.renyi_order})") + ", "
  noise = "discrete Laplace, b" if plan.laplace else "σ"
  if plan.verify:
    return (f"verified, {q}R={plan.discovery_rounds}+1, {noise}="
            f"{sigmas[-1]:.3g} verifying (discovery "
            f"{sigmas[1] if len(sigmas) > 2 else sigmas[0]:.3g}, first round "
            f"{sigmas[0]:.3g}), k per round {chars}")
  return (f"fixed, {q}R={plan.num_levels}, {noise}={sigmas[-1]:.3g} (first "
          f"round {sigmas[0]:.3g}), k per round {chars}")


def _two_servers(name, data, epsilon, delta, seed) -> dict:
  """The two-server walk, n public, the population's alphabet (each
  population's is public: its list's or its tokenizer's): one step, or
  :data:`VERIFIED_PLAN`."""
  options = VERIFIED_PLAN if name == TWO_SERVERS_VERIFIED else {}
  result = discover_lib.discover(
      data.population, two_servers.TwoServerTarget(
          epsilon, delta=delta, population_size=data.n,
          alphabet="".join(data.population.alphabet.characters),
          **options),
      max_length=data.population.max_length, seed=seed)
  plan = result.params.plan
  key = float(result.params.upload_bytes)
  setting = f"discrete Laplace b={plan.scales[0]:.3g} per server"
  if plan.verifies:
    setting += f" discovering, {plan.verify_scale:.3g} verifying"
  setting += (f", steps of {'/'.join(map(str, plan.step_chars))} "
              f"characters, {plan.bits}-bit IDPF keys")
  record = dict(released=result.words, rounds=len(result.per_round),
                raw_strings=False, calibrated=None, setting=setting,
                **upload([key], [1.0]))
  return _guarantee(record, result.guarantee)


def _partition_selection(name, data, epsilon, delta, seed) -> dict:
  result = partition_selection_law.select_words_by_law(
      data.population, partition_selection.PartitionSelectionTarget(
          epsilon, delta, strategy=name[len("ps-"):],
          max_partitions_contributed=1), seed=seed)
  record = dict(released=result.words, rounds=1, raw_strings=True,
                calibrated=None, setting="max_partitions_contributed=1",
                bytes_round_max=data.raw_bytes,
                bytes_per_user=data.raw_bytes)
  return _guarantee(record, result.guarantee)


def _tff_noisy(name, data, epsilon, delta, seed) -> dict:
  result = discover_lib.discover(
      data.population, _noisy_target(NOISY_K1, epsilon, delta),
      max_length=data.population.max_length, seed=seed, engine="tff",
      noise=TFF_NOISY[name])
  return _noisy_record(result, result.params, result.guarantee,
                       calibrated=None, noise=TFF_NOISY[name])


def _sfp(name, data, epsilon, delta, seed) -> dict:
  del name  # one configuration: the paper's
  result = sfp.sfp_discover(data.population, sfp.SFPTarget(epsilon, delta),
                            seed=seed)
  p = result.params
  # A report: the fragment's position and CMS row (two bytes) and m signs.
  report = p.m / 8 + 2
  record = dict(released=list(result.heavy_hitters), rounds=1,
                raw_strings=False, calibrated=None,
                setting=f"ε₀={p.epsilon_local:.3g}, k={p.k}, m={p.m}, "
                        f"T={p.top_t}",
                bytes_round_max=report, bytes_per_user=report)
  # Amplification by shuffling bounds replace-one neighbours of a fixed n.
  return _guarantee(record, mechanism.Guarantee(
      epsilon=p.epsilon, delta=p.delta,
      adjacencies=(Adjacency.REPLACE_ONE,), two_sided=True,
      accounting=p.guarantee, n_source="declared",
      covers="the released words, from shuffled local reports"))


def _iblt(name, data, epsilon, delta, seed) -> dict:
  del name
  try:
    result = iblt.iblt_discover(
        data.population, iblt.IBLTTarget(
            IBLT_K_ANONYMITY, mechanism.Target(epsilon, delta)),
        seed=seed, max_length=data.population.max_length)
  except ValueError as err:  # Corollary 1's batch: n too small for epsilon
    raise Refused(str(err)) from err
  p = result.params
  record = dict(released=list(result.heavy_hitters), rounds=p.num_rounds,
                raw_strings=False, calibrated=None,
                setting=f"m={p.batch_size:,}, k={p.k_anonymity}",
                **upload([float(p.bytes_per_client)] * p.num_rounds,
                         [p.batch_size / p.n] * p.num_rounds),
                guarantee=f"k-anonymity {p.k_anonymity}, not DP",
                guarantee_full=p.privacy, achieved_epsilon=None)
  return record
