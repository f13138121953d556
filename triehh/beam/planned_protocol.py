"""The planned noisy trie on Apache Beam: each round's votes counted by a
pipeline over the users' ``(user, word)`` rows.

The round plan, noise, thresholds, frontier and release are
:func:`triehh.engines.noisy.run_planned`'s own (server post-processing of
the vote sums, as on the fast and TFF engines); a :class:`BeamVoter`
counts each round's votes in one pipeline:

1. user ``u`` takes part in round r with probability q_r, decided by the
   keyed hash of :func:`triehh.beam.protocol.sampled` on ``(level, u)``
   under the run's seed (level ``r + 1``; the verification round's, the
   plan's R), so each user and round is an independent coin, the same on
   every worker and re-run (everyone at q_r = 1);
2. a discovery round: a taking-part user whose sequence's length-p prefix
   is on the frontier (a side input: prefix -> position f) emits the
   candidate ``f E + e`` of its next k_r symbols (``e``:
   :class:`~triehh.engines.noisy.Extensions`' number, as the fast engine
   numbers it); the verification round: a user whose word (with its
   ``$``) is among the discovered words V emits its index in V;
3. ``CombinePerKey(sum)`` adds the votes; the server (the driver) reads
   the sums of the candidates voted for and draws the discrete Gaussian
   on every candidate exactly as the fast engine does.

One word per user, the server's noise (Skellam shares and several words
per user run on the fast and TFF engines). Equal in law to the fast
engine: at q = 1 both count every user, so a run is the fast engine's draw
for draw; below, each user's coin is independent with probability q, as
the fast engine's Poisson sampling (its per-candidate binomial draws the
same law). Checked in ``tests/beam/planned_protocol_test.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import apache_beam as beam
import numpy as np

from triehh.beam import noisy_protocol
from triehh.beam import protocol
from triehh.core import population as population_lib
from triehh.engines import noisy


class BeamVoter(noisy.FastVoter):
  """:class:`triehh.engines.noisy.FastVoter`'s two methods, the votes
  counted by a Beam pipeline per round (module docstring)."""

  def __init__(self, population: population_lib.Population, seed: int,
               pipeline_opts=None):
    super().__init__(frontier_votes=True)
    if not population.is_single_word:
      raise ValueError("the planned noisy trie on Beam takes one word per "
                       "user; this population has several: use "
                       "engine='fast' or 'tff'")
    # Each user's symbols' codes, its sequence as the pipeline reads it.
    codes = [tuple(noisy_protocol.sequence_codes(
        str(w), population.alphabet, population.max_length)[1])
             for w in population.vocabulary]
    self.rows = [(user, codes[w])
                 for user, w in enumerate(population.user_word)]
    self.seed, self.pipeline_opts = int(seed), pipeline_opts

  def planned_round(self, population: population_lib.Population, plan,
                    r: int, frontier, ext: noisy.Extensions, p: int,
                    rng: np.random.Generator):
    """As :meth:`triehh.engines.noisy.FastVoter.planned_round`."""
    positions = {tuple(int(c) for c in row): f
                 for f, row in enumerate(frontier.codes)}
    end = population.alphabet.end_code

    def vote(codes: tuple) -> int:
      f = positions.get(codes[:p]) if len(codes) > p else None
      if f is None:
        return -1
      e = noisy_protocol.extension(codes, p, ext, end)
      return -1 if e < 0 else f * ext.size + e

    cand = noisy._word_candidates(population, frontier, ext, p)  # pylint: disable=protected-access
    voted = self._voted(population, cand, self._sums(
        vote, r + 1, plan.delivery_rate))
    thresholds = self.thresholds(plan, r, voted, rng)
    return (voted, *noisy._draw_two(voted, frontier.real.size, ext,  # pylint: disable=protected-access
                                    thresholds, rng,
                                    plan.words_by_class(r),
                                    self.window(plan, r, frontier)))

  def verification_round(self, population: population_lib.Population, plan,
                         cand: np.ndarray, priority: np.ndarray,
                         codes: list, rng: np.random.Generator,
                         taus: np.ndarray | None = None):
    """As :meth:`triehh.engines.noisy.FastVoter.verification_round`."""
    del priority  # one word per user: a user's word is its only vote
    # V's words' codes, the padding past their $ left out.
    index = {tuple(int(c) for c in word if c >= 0): i
             for i, word in enumerate(codes)}
    voted = self._voted(population, cand, self._sums(
        lambda word: index.get(word, -1), plan.num_levels,
        plan.delivery_rate))
    kept = len(codes)
    if taus is not None:
      return (voted, *noisy.draw_each(voted.candidates, voted.votes, plan,
                                      taus, rng))
    thresholds = self.thresholds(plan, plan.num_levels - 1, voted, rng)
    return (voted, *noisy.draw_passing(voted.candidates, voted.votes, kept,
                                       thresholds(True, max(kept, 1)), rng))

  def _sums(self, vote: Callable[[tuple], int], level: int,
            rate: float) -> dict[int, int]:
    """One pipeline: candidate -> the votes of the users who take part in
    round ``level`` at ``rate`` (module docstring)."""
    seed = self.seed

    def emit(row):
      user, codes = row
      if rate >= 1.0 or protocol.sampled(seed, level, user, rate):
        candidate = vote(codes)
        if candidate >= 0:
          yield candidate, 1

    def build(p):
      return {"sums": (p | "Users" >> beam.Create(self.rows)
                       | "Vote" >> beam.FlatMap(emit)
                       | "Sum" >> beam.CombinePerKey(sum))}

    return dict(protocol.collected(build, self.pipeline_opts)["sums"])

  @staticmethod
  def _voted(population: population_lib.Population, cand: np.ndarray,
             sums: dict[int, int]):
    """The round's :class:`~triehh.engines.noisy._Voted`: the candidates
    some word makes (``cand``, public to the simulation) with the
    pipeline's sums; RuntimeError for a sum on any other candidate."""
    _, candidates, words, _ = noisy._explicit(cand)  # pylint: disable=protected-access
    stray = set(sums) - set(candidates.tolist())
    if stray:
      raise RuntimeError(f"the pipeline counted votes for candidates no "
                         f"word makes: {sorted(stray)[:5]}")
    votes = np.array([sums.get(int(c), 0) for c in candidates],
                     dtype=np.int64)
    held = int(population.users_per_word[cand >= 0].sum())
    return noisy._Voted(candidates, votes, words,  # pylint: disable=protected-access
                        clients=int(votes.sum()),
                        clients_outside=population.num_users - held)


def run_planned(population: population_lib.Population, plan,
                rng: np.random.Generator | int | None = None, *,
                pipeline_opts=None) -> noisy.PlannedResult:
  """Runs ``plan`` (:class:`triehh.theory.noisy_plan.NoisyPlan`, the
  server's noise) on ``population`` with each round's votes counted on
  Beam (module docstring): the ``"beam"`` engine's planned run. The
  users' sampling hash is keyed by a seed spawned from ``rng`` (its own
  draws, the noise's, are left as the fast engine's)."""
  if plan.distributed is not None:
    raise ValueError("Skellam shares (noise='distributed') run on the "
                     "fast and TFF engines; the planned noisy trie on Beam "
                     "adds the server's noise")
  rng = np.random.default_rng(rng)
  seed = int(rng.spawn(1)[0].integers(0, 2**62))
  return noisy.run_planned(population, plan, rng,
                           voter=BeamVoter(population, seed, pipeline_opts))
