"""The noisy trie run in TensorFlow Federated: the ``tff`` twin of
:func:`triehh.engines.noisy.run`.

Each round is one ``next`` of :func:`triehh.engines.tff.noisy_process.
build_process`: the clients send one-hot vectors over the round's public
candidate set, the noise is added (``"central"``: by the server, from a seed
the run's generator draws; ``"distributed"``: Skellam shares by the
clients, drawn exactly by the driver and handed to each with its data,
summed securely modulo ``2**bits``) and the server thresholds, grows the
frontier and releases the words ending in ``$``. The driver draws the round's
participants from the run's generator (every user at q = 1, else
:func:`triehh.engines.sampling.poisson_users`) and, for several-word users,
one rank each (:func:`~triehh.engines.sampling.draw_word_ranks`): the
client draws its word with it. The run stops, as the fast engine's, when
the frontier is empty or after R rounds.

Central mode: equal in law to the fast engine (same votes' law, exact
discrete Gaussian noise on every candidate,
:func:`~triehh.engines.tff.noisy_process.central_noise`, the same integer
threshold), not draw for draw (the noise comes from the state's seed, and
the fast engine draws the candidates no user can vote for by a binomial).
Distributed mode (a :class:`triehh.theory.distributed_noise.
DistributedNoise`): each user delivers with probability ``q (1 -
dropout)`` (:func:`~triehh.engines.sampling.poisson_users`); a round with
m delivered clients, ``m - 1 < h``, is not released and the run stops;
else each client adds its ``Skellam(s_r)`` share: the fast engine's law
(:func:`triehh.engines.noisy.run` with ``distributed``), checked by
``tests/engines/tff/noisy_engine_test.py``.

The driver mirrors every round in numpy (the passing candidates' codes, the
next frontier, the released words, the per-round
:class:`~triehh.engines.noisy.LevelStats`, which need the population) and
checks the TFF server state against it. Per round it uses the process whose
client vectors hold the smallest power of two of candidates at least the
round's ``F * E`` (cached); a round of more than
:data:`~triehh.engines.tff.noisy_process.MAX_CANDIDATES` candidates is
refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.engines import sampling
from triehh.engines.tff import clients
from triehh.engines.tff import engine as engine_lib
from triehh.engines.tff import noisy_process
from triehh.engines.tff import runtime as runtime_lib


def run(population: population_lib.Population, params: noisy.NoisyParams,
        rng: np.random.Generator | int, *,
        noise: str = noisy_process.CENTRAL,
        distributed=None,
        workers: str | Sequence[str] | None = None,
        connect_timeout: float = runtime_lib.DEFAULT_CONNECT_TIMEOUT,
        rpc_timeout: float = runtime_lib.DEFAULT_RPC_TIMEOUT,
        measurements: list | None = None) -> noisy.NoisyTrieResult:
  """Runs the noisy trie on ``population`` in TFF.

  Args:
    population: the users; one or several words each.
    params: as in :func:`triehh.engines.noisy.run`.
    rng: the run's generator, or a seed for one.
    noise: ``"central"`` or ``"distributed"``.
    distributed: the distributed mode's
      :class:`~triehh.theory.distributed_noise.DistributedNoise` (required
      by it, refused otherwise).
    workers, connect_timeout, rpc_timeout: where it runs
      (:func:`triehh.engines.tff.runtime.get_runtime`).
    measurements: if a list, each round's aggregation measurements are
      appended to it.

  Raises:
    ValueError: as :func:`triehh.engines.noisy.run`; a bad ``noise``, or
      ``distributed`` missing or given with ``noise="central"``; a round of
      more than ``noisy_process.MAX_CANDIDATES`` candidates.
  """
  rng = np.random.default_rng(rng)
  if (noise == noisy_process.DISTRIBUTED) != (distributed is not None):
    raise ValueError("noise='distributed' runs with its DistributedNoise "
                     "(triehh.theory.distributed_noise.plan), and only it")
  k, max_length = params.chars_per_level, population.max_length
  rounds = noisy.checked_rounds(params, max_length)
  population = engine_lib._with_clients(population)  # pylint: disable=protected-access
  runtime = runtime_lib.get_runtime(workers, connect_timeout=connect_timeout,
                                    rpc_timeout=rpc_timeout)
  state = noisy_process.initial_state(
      max_length, rng.integers(-2**62, 2**62, size=2))
  frontier = noisy._Frontier(np.zeros((1, 0), dtype=np.int16),  # pylint: disable=protected-access
                             np.zeros(1, dtype=np.int64))
  released, levels = [], []
  with runtime.install():
    for r in range(rounds):
      if not frontier.real.size:
        break
      at_round = (params.at_round(r) if distributed is None  # sigma, tau
                  else noisy.SkellamShares.of(params, distributed, r))
      spec = _spec(population, params.at_round(r), noise, distributed, r)
      done = _round(population, at_round, spec, rng, state, frontier,
                    r * k, sum(len(w[0]) for w in released), measurements)
      if done is None:  # fewer than h shares besides one: not released
        break
      state, frontier, words, stats = done
      released.append(words)
      levels.append(stats)
  return _result(released, levels)


def _result(released: list, levels: list) -> noisy.NoisyTrieResult:
  """The run's result from its rounds' (words, noisy sums, false) and
  stats."""
  return noisy.NoisyTrieResult(
      words=tuple(w for words in released for w in words[0]),
      noisy_counts=np.concatenate([w[1] for w in released]) if released
      else np.zeros(0),
      false_words=(np.concatenate([w[2] for w in released]) if released
                   else np.zeros(0, dtype=bool)),
      levels=tuple(levels))


def _spec(population: population_lib.Population, params: noisy.NoisyParams,
          noise: str, distributed, r: int) -> noisy_process.NoisySpec:
  """Round r's process spec (its capacity set per round)."""
  return noisy_process.NoisySpec(
      num_characters=population.alphabet.size,
      max_length=population.max_length, chars_per_level=params.chars_per_level,
      capacity=1, sigma=params.sigma,
      threshold=(params.threshold if distributed is None
                 else distributed.thresholds[r]), noise=noise,
      **({} if distributed is None else {"bits": distributed.bits}),
      client_mode=(clients.ONE_WORD if population.is_single_word
                   else clients.SAMPLED_WORD))


def _round(population: population_lib.Population, params: noisy.NoisyParams,
           spec: noisy_process.NoisySpec, rng: np.random.Generator,
           state: noisy_process.NoisyState, frontier, p: int,
           found_before: int, measurements: list | None):
  """One round in TFF: the new state and frontier, the released (words,
  noisy sums, false) and the round's stats; None if a distributed round is
  short of its clients."""
  ext = noisy.Extensions.of(population.alphabet.size, spec.chars_per_level,
                            population.max_length, p)
  num_candidates = frontier.real.size * ext.size
  _check_candidates(num_candidates, frontier.real.size, ext.size,
                    p // spec.chars_per_level)
  rate = params.sampling_rate
  users = (np.arange(population.num_users) if rate >= 1.0
           else sampling.poisson_users(rng, population.num_users, rate))
  shares = params
  if isinstance(params, noisy.SkellamShares):
    params = params.delivered(users.size)
    if params is None:
      return None
  ranks = sampling.draw_word_ranks(rng, population, users)
  data = engine_lib._client_data(  # pylint: disable=protected-access
      population, engine_lib._codes32(population), users, ranks,  # pylint: disable=protected-access
      spec.client_mode)
  spec = _with_capacity(spec, num_candidates)
  process = noisy_process.build_process(spec)
  if spec.noise == noisy_process.CENTRAL:
    state, output = process.next(state, data, noisy_process.central_noise(
        state, spec.sigma, spec.capacity, num_candidates))
  else:
    state, output = process.next(state, data, list(
        noisy_process.client_shares(
            rng, shares.distributed.share_means[shares.round_index],
            users.size, spec.capacity, num_candidates)))
  state = noisy_process._as(noisy_process.NoisyState, state)  # pylint: disable=protected-access
  output = noisy_process._as(noisy_process.NoisyRoundOutput, output)  # pylint: disable=protected-access
  if measurements is not None:
    measurements.append(output.measurements)
  frontier, released, stats = _mirrored_round(
      population, params, frontier, ext, p, users, ranks,
      _as_integers(output.sums))
  _check_agreement(state, frontier, released, found_before, population)
  return state, frontier, released, stats


def _as_integers(sums) -> np.ndarray:
  """TFF's noisy sums as ``int64`` (integers held exactly in float64)."""
  return np.rint(np.asarray(sums, dtype=np.float64)).astype(np.int64)


def _check_candidates(num_candidates: int, num_frontier: int, size: int,
                      round_index: int) -> None:
  if num_candidates > noisy_process.MAX_CANDIDATES:
    raise ValueError(
        f"round {round_index}'s candidate set has {num_candidates:,} "
        f"candidates ({num_frontier:,} frontier prefixes x {size:,} "
        "extensions); the TFF engine holds at most "
        f"{noisy_process.MAX_CANDIDATES:,} (MAX_CANDIDATES): lower "
        "chars_per_level or false_positive_rate, or use engine='fast'")


def _with_capacity(spec: noisy_process.NoisySpec,
                   num_candidates: int) -> noisy_process.NoisySpec:
  """``spec`` holding the smallest power of two >= ``num_candidates``."""
  capacity = 1 << max(num_candidates - 1, 0).bit_length()
  return dataclasses.replace(spec, capacity=capacity)


def _mirrored_round(population: population_lib.Population,
                    params: noisy.NoisyParams, frontier, ext: noisy.Extensions,
                    p: int, users: np.ndarray, ranks: np.ndarray | None,
                    sums: np.ndarray):
  """The round in numpy from TFF's noisy sums: the next frontier, the
  released (words, noisy sums, false) and the round's stats, as
  :func:`triehh.engines.noisy._round` computes them."""
  # pylint: disable=protected-access
  cand = noisy._word_candidates(population, frontier, ext, p)
  _, explicit, explicit_words, _ = noisy._explicit(cand)
  chosen = cand[sampling.words_of(population, users, ranks)]
  voted = np.unique(chosen[chosen >= 0])
  kept = np.flatnonzero(sums >= params.threshold).astype(np.int64)
  position = noisy.explicit_index(explicit, kept)
  is_explicit = position >= 0
  real_words = np.full(kept.size, -1, dtype=np.int64)
  real_words[is_explicit] = explicit_words[position[is_explicit]]
  fpos, e = np.divmod(kept, ext.size)
  codes = np.concatenate(
      [frontier.codes[fpos], ext.decode(e, population.alphabet.end_code)],
      axis=1)
  ends = ext.ends(e)
  num_candidates = frontier.real.size * ext.size
  stats = noisy.LevelStats(
      prefix_length=p, num_frontier=frontier.real.size,
      num_phantom=int((frontier.real < 0).sum()),
      num_candidates=num_candidates, num_voted=int(voted.size),
      num_passing=int(kept.size), num_released=int(ends.sum()),
      expected_false_positives=params.false_positive_rate * num_candidates,
      num_zero_vote=int(num_candidates - voted.size),
      num_zero_vote_passing=int(kept.size - np.isin(kept, voted).sum()),
      num_false_positives=int((~is_explicit).sum()))
  nxt = noisy._next_frontier(population, codes[~ends], real_words[~ends],
                             p + ext.chars)
  released = noisy._released(population, codes[ends], sums[kept][ends],
                             real_words[ends] < 0)
  return nxt, released, stats


def _check_agreement(state: noisy_process.NoisyState, frontier,
                     released: tuple, found_before: int,
                     population: population_lib.Population) -> None:
  """Raises if the TFF server state differs from the mirrored round."""
  tff_frontier = np.asarray(state.frontier, dtype=np.int64)
  codes = np.asarray(state.words).reshape(-1, population.max_length + 1)
  tff_words = [population.alphabet.decode_word(row)
               for row in codes[found_before:]]
  tff_sums = np.asarray(state.word_sums, dtype=np.float64)[found_before:]
  if not (tff_frontier.shape == frontier.codes.shape
          and np.array_equal(tff_frontier, frontier.codes)
          and tff_words == list(released[0])
          and np.array_equal(tff_sums, released[1])):
    raise RuntimeError(
        "the TFF server state disagrees with the round: frontier "
        f"{tff_frontier.tolist()} vs {frontier.codes.tolist()}, words "
        f"{tff_words} vs {list(released[0])}")
