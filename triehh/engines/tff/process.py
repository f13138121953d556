"""TrieHH as a TFF building block: the public constructor and its state.

:func:`build_triehh_process` returns the ``tff.templates.IterativeProcess``
that ``triehh.discover(..., engine="tff")`` runs (the engine calls it too),
for a TFF user's own pipeline: their client data, their aggregation factory,
their training loop. One call of ``next`` is one sub-round of TrieHH; with
``num_sub_rounds=1`` (the default) every call grows the trie by one level::

  process = build_triehh_process("mnostu", max_length=4, theta=2)
  state = process.initialize()
  for _ in range(3):
    state, output = process.next(state, [dataset_1, dataset_2, ...])
  decode_state(state, "mnostu")  # {'sun': 3, ...}: the heavy hitters

State: a :class:`~triehh.engines.tff.computations.ServerState` (the trie as
``int32`` tensors: the frontier prefixes, the heavy hitters found and their
votes, the current level's votes, the round counter, theta, the cap and the
sub-rounds per level, and the aggregation process's state);
:func:`decode_state` and :func:`decode_frontier` turn it into words. Output:
a :class:`~triehh.engines.tff.computations.RoundOutput` (the level's votes,
whether the level is done, the aggregation's measurements).

Privacy: the (epsilon, delta) of the paper's Theorem 1 holds when the
clients of each round are a uniform sample of the population (of the size
or rate that theta was calibrated for, :func:`triehh.calibrate`) and each
casts at most one vote (``max_user_contribution=1``). Choosing the clients
is the caller's loop's job here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import tensorflow_federated as tff

from triehh.core import alphabet as alphabet_lib
from triehh.core import ranking
from triehh.engines.tff import computations

# The vote capacity when neither it nor max_num_prefixes is given.
DEFAULT_VOTE_CAPACITY = 64

AlphabetLike = alphabet_lib.Alphabet | str | Iterable[str]


def as_alphabet(alphabet: AlphabetLike) -> alphabet_lib.Alphabet:
  """An :class:`~triehh.core.alphabet.Alphabet`, or the alphabet of the
  given characters (sorted, deduplicated; ``$`` is the end symbol)."""
  if isinstance(alphabet, alphabet_lib.Alphabet):
    return alphabet
  return alphabet_lib.Alphabet.of(alphabet)


def build_triehh_process(
    alphabet: AlphabetLike, max_length: int, theta: int, *,
    max_num_prefixes: int | None = None, num_sub_rounds: int = 1,
    vote_capacity: int | None = None,
    client_data: str = computations.DATASET,
    max_user_contribution: int = 1,
    aggregation_factory: tff.aggregators.UnweightedAggregationFactory | None
    = None) -> tff.templates.IterativeProcess:
  """The TrieHH ``tff.templates.IterativeProcess``.

  Args:
    alphabet: the characters words are made of (an ``Alphabet``, or a
      string or iterable of characters).
    max_length: L, characters per word kept (longer words are truncated and
      cannot be heavy hitters).
    theta: the vote threshold of a level.
    max_num_prefixes: at most this many non-terminated extensions are kept
      per level (most voted first); ``None``: no cap.
    num_sub_rounds: ``next`` calls per level (their votes add up).
    vote_capacity: frontier prefixes the clients' vote vectors hold; a round
      whose frontier holds more fails. ``None``: ``max_num_prefixes`` if
      given, else :data:`DEFAULT_VOTE_CAPACITY`.
    client_data: what each client's data is: ``"dataset"`` (default), a
      ``tf.data.Dataset`` of the client's words as ``tf.string`` scalars;
      or the tensors of ``"one_word"``, ``"sampled_word"`` or
      ``"top_words"`` (:mod:`triehh.engines.tff.clients`).
    max_user_contribution: a ``"dataset"`` or ``"top_words"`` client votes
      with each of its this many most frequent words (more than 1 is not
      covered by Theorem 1).
    aggregation_factory: sums the clients' ``int32 [K * (A + 1)]`` vote
      vectors; ``None``: ``tff.aggregators.SumFactory()``. For a secure sum,
      ``tff.aggregators.SecureSumFactory(upper_bound_threshold=c,
      lower_bound_threshold=0)`` with ``c = max_user_contribution``, or
      :class:`~triehh.engines.tff.computations.SecureSumBitwidthFactory`.

  Returns:
    The process: ``initialize() -> ServerState`` (the root-only trie),
    ``next(state, clients) -> (ServerState, RoundOutput)`` with ``clients``
    a list of client data.
  """
  alphabet = as_alphabet(alphabet)
  if vote_capacity is None:
    vote_capacity = (DEFAULT_VOTE_CAPACITY if max_num_prefixes is None
                     else max_num_prefixes)
  characters = "".join(alphabet.characters)
  spec = computations.ProcessSpec(
      num_extensions=alphabet.num_extensions, max_length=int(max_length),
      vote_capacity=int(vote_capacity), client_mode=client_data,
      max_user_contribution=int(max_user_contribution),
      characters=characters if client_data == computations.DATASET else "")
  return computations.build_process(
      spec, theta=theta, max_num_prefixes=max_num_prefixes,
      num_sub_rounds=num_sub_rounds, aggregation_factory=aggregation_factory)


def _field(state, name: str) -> np.ndarray:
  """A field of the state as returned by TFF (named tuple or mapping)."""
  value = state[name] if isinstance(state, Mapping) else getattr(state, name)
  return np.asarray(value)


def decode_state(state: computations.ServerState,
                 alphabet: AlphabetLike) -> dict[str, int]:
  """The heavy hitters of ``state``: word -> its votes in the round that
  found it, most voted first, then by word (as ``triehh.discover`` orders
  them)."""
  alphabet = as_alphabet(alphabet)
  counts = _field(state, "heavy_hitter_counts").reshape(-1)
  if not counts.size:
    return {}
  codes = _field(state, "heavy_hitters").reshape(counts.size, -1)
  return ranking.by_count({alphabet.decode_word(row): int(count)
                           for row, count in zip(codes, counts)})


def decode_frontier(state: computations.ServerState,
                    alphabet: AlphabetLike) -> list[str]:
  """The frontier of ``state``: the non-terminated prefixes of the trie's
  deepest level, in lexicographic order (``[""]``, the root, initially)."""
  alphabet = as_alphabet(alphabet)
  return [alphabet.decode(row) for row in _field(state, "frontier")]
