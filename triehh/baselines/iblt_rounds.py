"""Who takes part in each IBLT round, and the word each sends.

:func:`triehh.baselines.iblt.iblt_discover` runs TFF's IBLT on TrieHH's
sampled users; this module draws them from
``numpy.random.default_rng(seed)`` through :mod:`triehh.engines.sampling`:
the first round's users exactly as TrieHH's first round draws them
(:func:`first_round_users`), then, for several-word populations, one word
rank per sampled user and the word :func:`triehh.engines.sampling.words_of`
picks (Algorithm 3's draw). Later rounds are drawn afresh (``"sampled"``)
or from the users not yet drawn (``"disjoint"``), see
:func:`draw_rounds`. :func:`round_size` is the number of users per round:
given, or TrieHH's batch size for a :class:`triehh.Target` (epsilon, delta).
"""

from __future__ import annotations

import numpy as np

from triehh.core import population as population_lib
from triehh.core import validation
from triehh.engines import sampling
from triehh.engines import vote_counts
from triehh.theory import coverage
from triehh.theory import mechanism
from triehh.theory import policy


def first_round_users(pop: population_lib.Population,
                      rng: np.random.Generator, batch_size: int) -> np.ndarray:
  """TrieHH's first-round users for ``rng`` (:mod:`triehh.engines.sampling`).

  Several-word populations: :func:`triehh.engines.sampling.sample_users`. One-word
  populations: the root's cell counts, then the users inside the cells from
  the stream spawned before the first round, as the TFF engine draws its
  clients.
  """
  if not sampling.draws_cell_counts(pop, None):
    return sampling.sample_users(rng, pop.num_users, batch_size)
  pop.check_user_array("iblt_discover")
  member_rng = rng.spawn(1)[0]
  cells, counts = sampling.round_cell_counts(
      rng, vote_counts.tables_of(pop), 1, np.zeros(1, dtype=np.intp),
      batch_size)
  positions = vote_counts.sample_members(cells, counts, member_rng)
  return vote_counts.users_by_position(pop)[positions]


def draw_rounds(pop: population_lib.Population, batch_size: int,
                rounds: str, num_rounds: int | None, seed: int | None
                ) -> list[tuple[np.ndarray, np.ndarray]]:
  """Per round, its users and the word (vocabulary index) each sends."""
  rng = np.random.default_rng(seed)
  n = pop.num_users
  if num_rounds is None:
    num_rounds = -(-n // batch_size) if rounds == "disjoint" else 1
  users = first_round_users(pop, rng, batch_size)
  remaining = (np.setdiff1d(np.arange(n), users) if rounds == "disjoint"
               else None)
  drawn = []
  for _ in range(num_rounds):
    ranks = sampling.draw_word_ranks(rng, pop, users)
    drawn.append((users, sampling.words_of(pop, users, ranks)))
    if len(drawn) == num_rounds:
      break
    if remaining is None:
      users = sampling.sample_users(rng, n, batch_size)
    elif remaining.size:
      picks = sampling.sample_users(rng, remaining.size,
                                    min(batch_size, remaining.size))
      users = remaining[picks]
      remaining = np.delete(remaining, picks)
    else:
      break
  return drawn


def round_size(pop: population_lib.Population, max_length: int,
               batch) -> tuple[int, str]:
  """The users per round, and where the n it was derived from comes from:
  ``batch`` itself (a whole number, checked against the users; ``"unused"``),
  or TrieHH's batch size on ``pop`` for ``batch``, a fixed-size
  :class:`~triehh.theory.mechanism.Target` or ``Mechanism`` (several words
  per user: per-round composition, as ``discover``)."""
  return round_size_for(pop.num_users, pop.is_single_word, max_length, batch)


def round_size_for(n: int, single_word: bool, max_length: int,
                   batch) -> tuple[int, str]:
  """:func:`round_size` for ``n`` users (one word each, or several)."""
  if isinstance(batch, (mechanism.Target, mechanism.Mechanism)):
    params = policy.resolve(n, max_length, batch, single_word=single_word)
    return params.batch_size, params.n_source
  return (validation.check_int("batch (users per round)", batch, 1, n),
          coverage.N_UNUSED)
