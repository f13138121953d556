"""The planned noisy trie run in TensorFlow Federated: the ``tff`` twin of
:func:`triehh.engines.noisy.run_planned` (central noise, or the clients'
Skellam shares).

The round plan, thresholds, frontier and release are
:func:`~triehh.engines.noisy.run_planned`'s own (server post-processing of
the noisy sums); each round's votes and noise are TFF's: a
:class:`TffVoter` runs one ``next`` of
:func:`triehh.engines.tff.planned_process.build_process` over the round's
public candidate table (the frontier prefixes times their extensions, or
the verification round's discovered words), with one client per
participant (every user at q = 1, else Poisson-sampled,
:func:`triehh.engines.sampling.poisson_users`), and the server adds
the plan's discrete Gaussian or Laplace noise drawn exactly on every
candidate (:func:`triehh.engines.noisy.central_noise`). A several-words
client votes for one of its words that a candidate extends (in a
verification round, among those whose candidate discovery measured
lowest), drawn by local frequency with a rank the driver draws, as the
fast engine draws it.

Equal in law to the fast engine (same votes' law, the same exact noise on
every candidate, the same thresholds), not draw for draw: the fast engine
draws sampling as a binomial per candidate and the passes of candidates
nobody votes for at once (``tests/engines/tff/planned_engine_test.py``).
The driver mirrors each round's votes in numpy (for the round's
statistics, which need the population) and checks TFF's sums against
them. A round of more than :data:`~triehh.engines.tff.planned_process.
MAX_CANDIDATES` candidates is refused.

With Skellam shares (``plan.distributed``), the sampled users who deliver
(each sampled user with probability ``1 - dropout``) are the round's
clients, each adding its own share drawn exactly
(:func:`triehh.engines.tff.noisy_process.client_shares`) inside the secure
sum; the server adds nothing, and the thresholds are the fast engine's
(:func:`triehh.engines.noisy.skellam_thresholds`, at the m delivered). A
round with ``m - 1 < h`` is not released and the run stops, as in
:class:`triehh.engines.noisy.SkellamVoter`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from triehh.core import population as population_lib
from triehh.engines import noisy
from triehh.engines import sampling
from triehh.engines.tff import clients
from triehh.engines.tff import engine as engine_lib
from triehh.engines.tff import noisy_process
from triehh.engines.tff import planned_process
from triehh.engines.tff import runtime as runtime_lib

# A table row no client's codes match (codes are -1 or a symbol).
_NO_ROW = -2


def run_planned(population: population_lib.Population, plan,
                rng: np.random.Generator | int, *,
                workers: str | Sequence[str] | None = None,
                connect_timeout: float = runtime_lib.DEFAULT_CONNECT_TIMEOUT,
                rpc_timeout: float = runtime_lib.DEFAULT_RPC_TIMEOUT
                ) -> noisy.PlannedResult:
  """Runs ``plan`` (:class:`triehh.theory.noisy_plan.NoisyPlan`) on
  ``population`` in TFF (module docstring); ``workers`` and the timeouts:
  where it runs (:func:`triehh.engines.tff.runtime.get_runtime`).

  Raises:
    ValueError: a round of more than ``planned_process.MAX_CANDIDATES``
      candidates; as :func:`triehh.engines.noisy.run_planned`.
    RuntimeError: TFF's sums disagree with the mirrored votes.
  """
  population = engine_lib._with_clients(population)  # pylint: disable=protected-access
  runtime = runtime_lib.get_runtime(workers, connect_timeout=connect_timeout,
                                    rpc_timeout=rpc_timeout)
  with runtime.install():
    return noisy.run_planned(population, plan, rng,
                             voter=TffVoter(population))


class TffVoter:
  """:class:`triehh.engines.noisy.FastVoter`'s two methods, in TFF."""

  def __init__(self, population: population_lib.Population):
    self.codes = engine_lib._codes32(population)  # pylint: disable=protected-access
    self.state = None

  def planned_round(self, population: population_lib.Population, plan,
                    r: int, frontier, ext: noisy.Extensions, p: int,
                    rng: np.random.Generator):
    """As :meth:`triehh.engines.noisy.FastVoter.planned_round`."""
    cand = noisy._word_candidates(population, frontier, ext, p)  # pylint: disable=protected-access
    fpos, e = np.divmod(np.arange(frontier.real.size * ext.size), ext.size)
    table = _padded(np.concatenate(
        [frontier.codes[fpos].astype(np.int32),
         ext.decode(e, population.alphabet.end_code).astype(np.int32)],
        axis=1), population.max_length + 1)
    width = int(ext.offsets[ext.chars])  # word candidates: e < width
    f = frontier.real.size
    drawn = self._round(population, plan, cand, np.zeros(table.shape[0]),
                        table, rng, r)
    if drawn is None:
      return None
    voted, noisy_sums, thresholds = drawn
    window = noisy.round_window(plan, r, frontier)
    if window is not None:  # each block's sums read modulo its modulus
      noisy_sums = noisy.wrapped(noisy_sums, window.low,
                                 window.moduli[fpos])
    cut = np.full(e.size, thresholds(False, f * (ext.size - width)).threshold)
    for start, end in ext.word_groups(plan.words_by_class(r)):
      group = (e >= start) & (e < end)
      cut[group] = thresholds(True, f * (end - start), f).threshold
    passing = np.flatnonzero(noisy_sums >= cut)
    return (voted, passing, noisy_sums[passing],
            noisy.explicit_index(voted.candidates, passing))

  def verification_round(self, population: population_lib.Population, plan,
                         cand: np.ndarray, priority: np.ndarray,
                         codes: list, rng: np.random.Generator,
                         taus: np.ndarray | None = None):
    """As :meth:`triehh.engines.noisy.FastVoter.verification_round`."""
    table = np.full((len(codes), population.max_length + 1), -1, np.int32)
    for row, word in zip(table, codes):
      row[:len(word)] = word
    drawn = self._round(population, plan, cand,
                        np.asarray(priority, dtype=np.float64), table, rng,
                        plan.num_levels - 1)
    if drawn is None:
      return None
    voted, noisy_sums, thresholds = drawn
    threshold = (thresholds(True, max(len(codes), 1)).threshold
                 if taus is None else taus)
    passing = np.flatnonzero(noisy_sums >= threshold)
    return (voted, passing, noisy_sums[passing],
            noisy.explicit_index(voted.candidates, passing))

  # Long function: one round's steps in order (sample, mirror, noise, TFF,
  # check), which share the round's arrays.
  def _round(self, population, plan, cand: np.ndarray, priority: np.ndarray,
             table: np.ndarray, rng: np.random.Generator, r: int):
    """The round's mirrored votes, TFF's noisy sums of every row
    (``priority``: one per row, public) and its ``thresholds(word,
    num_candidates)``; None when a round of Skellam shares is short of its
    clients. The server's noise, or each delivering client's share."""
    num_candidates = table.shape[0]
    if num_candidates > planned_process.MAX_CANDIDATES:
      raise ValueError(
          f"round {r}'s candidate table has {num_candidates:,} rows; the "
          f"TFF engine holds at most {planned_process.MAX_CANDIDATES:,} "
          "(MAX_CANDIDATES): lower the upload budget or use engine='fast'")
    shares, rate = plan.distributed, plan.delivery_rate
    users = (np.arange(population.num_users) if rate >= 1.0
             else sampling.poisson_users(rng, population.num_users, rate))
    if shares is None:
      thresholds = noisy.central_thresholds(plan, r)
    else:  # the sampled users who deliver: every one adds its share
      thresholds = noisy.skellam_thresholds(plan, r, int(users.size))
      if thresholds is None:
        return None
    held, chosen, ranks = _choices(population, cand, priority, users, rng)
    _, explicit, words, _ = noisy._explicit(cand)  # pylint: disable=protected-access
    votes = np.zeros(explicit.size, dtype=np.int64)
    np.add.at(votes, np.searchsorted(explicit, chosen[chosen >= 0]), 1)
    voted = noisy._Voted(explicit, votes, words, clients=int(users.size))  # pylint: disable=protected-access
    capacity = 1 << max(num_candidates - 1, 0).bit_length()
    if not num_candidates:
      return voted, np.zeros(0, dtype=np.int64), thresholds
    full = np.full((capacity, table.shape[1]), _NO_ROW, dtype=np.int32)
    full[:num_candidates] = table
    rows_priority = np.zeros(capacity)
    rows_priority[:num_candidates] = priority
    data = [clients.pack_words(self.codes[words], counts, rank)
            for (words, counts), rank in zip(held, ranks)]
    if shares is None:
      noise = np.zeros(capacity, dtype=np.int64)
      noise[:num_candidates] = noisy.central_noise(plan, r, rng,
                                                   num_candidates)
      if not data:  # no participant this round: the noise alone
        return voted, noise[:num_candidates], thresholds
      added, spec = noise, planned_process.PlannedSpec(
          population.max_length, capacity)
    else:
      added = noisy_process.client_shares(rng, shares.share_means[r],
                                          len(data), capacity,
                                          num_candidates)
      spec = planned_process.PlannedSpec(population.max_length, capacity,
                                         shares.bits)
    process = planned_process.build_process(spec)
    if self.state is None:
      self.state = process.initialize()
    self.state, sums = process.next(
        self.state, full, rows_priority, data,
        added if shares is None else list(added))
    sums = np.asarray(sums, dtype=np.int64)[:num_candidates]
    noise = added if shares is None else added.sum(axis=0)
    _check_votes(sums - noise[:num_candidates], explicit, votes, r)
    return voted, sums, thresholds


def _padded(rows: np.ndarray, width: int) -> np.ndarray:
  """``rows`` padded with -1 (any symbol) to ``width`` columns."""
  out = np.full((rows.shape[0], width), -1, dtype=np.int32)
  out[:, :rows.shape[1]] = rows[:, :width]
  return out


def _choices(population: population_lib.Population, cand: np.ndarray,
             priority: np.ndarray, users: np.ndarray,
             rng: np.random.Generator):
  """Each participant's (words, counts), the candidate it votes for (-1:
  none) and the rank its client gets: one of its words drawn in proportion
  to :func:`triehh.engines.noisy.entry_weights` (one word per user: its
  word, if it has a candidate)."""
  single = population.is_single_word
  if not single:
    weight = noisy.entry_weights(population, cand, priority)
  held, chosen = [], np.full(users.size, -1, dtype=np.int64)
  ranks = np.zeros(users.size, dtype=np.int64)
  for i, user in enumerate(users):
    if single:
      words, counts = population.user_word[user:user + 1], np.ones(1, np.int64)
      weights = (cand[words] >= 0).astype(np.int64)
    else:
      span = slice(population.user_offsets[user],
                   population.user_offsets[user + 1])
      words, counts = population.entry_word[span], population.entry_count[span]
      weights = weight[span]
    held.append((words, counts))
    total = int(weights.sum())
    if total:
      ranks[i] = rng.integers(0, total)
      pick = int(np.searchsorted(np.cumsum(weights), ranks[i], side="right"))
      chosen[i] = cand[words[pick]]
  return held, chosen, ranks


def _check_votes(true_sums: np.ndarray, explicit: np.ndarray,
                 votes: np.ndarray, r: int) -> None:
  """RuntimeError unless TFF's sums (noise taken off) are the mirrored
  votes: ``votes`` on the explicit candidates, zero elsewhere."""
  expected = np.zeros(true_sums.size, dtype=np.int64)
  expected[explicit] = votes
  if not np.array_equal(true_sums, expected):
    bad = np.flatnonzero(true_sums != expected)[:5]
    raise RuntimeError(
        f"round {r}: TFF's vote sums disagree with the mirrored votes at "
        f"candidates {bad.tolist()}: {true_sums[bad].tolist()} against "
        f"{expected[bad].tolist()}")
