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

Counting: with ``counting=CountingSpec(sigma)`` (a
:class:`~triehh.engines.tff.counting.CountingSpec`: the noise, the TFF DP
aggregator and the clients it expects) the process also has a ``count``
computation, the counting phase of the same pipeline: once the
discovery rounds are done, ``count(state, clients, noise)`` has a fresh
sample of clients count the discovered words of ``state`` (one word each, a
one-hot vector over the words plus "other"): TFF sums the vectors exactly
and the server adds ``noise``, exact discrete Gaussian draws made outside
the TF graph (:meth:`TrieHHProcess.central_noise`), and
:func:`decode_counts` names the noisy counts, integers (see
:mod:`triehh.engines.tff.counting`; the ``"distributed_discrete_gaussian"``
mechanism's ``count(state, clients)`` takes no noise)::

  process = build_triehh_process("mnostu", 4, 2,
                                 counting=CountingSpec(noise_std=3.0))
  ...  # the discovery rounds, as above
  noise = process.central_noise()  # fresh OS entropy; seed=...: simulation
  output = process.count(state, [codes_1, codes_2, ...], noise)
  decode_counts(state, output, "mnostu")  # ({'sun': 41.0, ...}, other)

Privacy: the (epsilon, delta) of the paper's Theorem 1 holds when the
clients of each round are a uniform sample of the population (of the size
or rate that theta was calibrated for, :func:`triehh.calibrate`) and each
casts at most one vote (``max_user_contribution=1``). Choosing the clients
is the caller's loop's job here. The counting round is the discrete
Gaussian mechanism of sensitivity 1 on a Poisson sample of its own; its
(epsilon, delta) composes with the discovery's.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Iterable, Mapping

import numpy as np
import tensorflow_federated as tff

from triehh.core import alphabet as alphabet_lib
from triehh.core import ranking
from triehh.core import validation
from triehh.engines.tff import computations
from triehh.engines.tff import counting as counting_lib

# The vote capacity when neither it nor max_num_prefixes is given.
DEFAULT_VOTE_CAPACITY = 64

AlphabetLike = alphabet_lib.Alphabet | str | Iterable[str]


# The largest tensor dimension and state scalar: TensorFlow sizes are int32.
INT32_MAX = 2**31 - 1


def as_alphabet(alphabet: AlphabetLike) -> alphabet_lib.Alphabet:
  """An :class:`~triehh.core.alphabet.Alphabet`, or the alphabet of the
  given characters (sorted, deduplicated; ``$`` is the end symbol)."""
  if isinstance(alphabet, alphabet_lib.Alphabet):
    return alphabet
  try:
    return alphabet_lib.Alphabet.of(alphabet)
  except TypeError:
    raise TypeError("alphabet must be an Alphabet, or a string or iterable "
                    "of one-character strings, got "
                    f"{reprlib.repr(alphabet)}") from None


def _checked_sizes(num_extensions: int, sizes: dict) -> dict:
  """``sizes`` (the integer arguments of :func:`build_triehh_process`) as
  ints, ``None`` kept where allowed, each in range or an error naming it."""
  optional = ("max_num_prefixes", "vote_capacity", "word_capacity",
              "expected_clients")
  # max_length and word_capacity size a dimension one larger.
  high = dict(max_length=INT32_MAX - 1, word_capacity=INT32_MAX - 1)
  checked = {}
  for name, value in sizes.items():
    if value is None and name in optional:
      checked[name] = None
    else:
      checked[name] = validation.check_int(name, value,
                                           high=high.get(name, INT32_MAX))
  if checked["vote_capacity"] is None:
    checked["vote_capacity"] = (
        DEFAULT_VOTE_CAPACITY if checked["max_num_prefixes"] is None
        else checked["max_num_prefixes"])
    name = "max_num_prefixes (the vote capacity when vote_capacity is None)"
  else:
    name = "vote_capacity"
  most = INT32_MAX // num_extensions
  if checked["vote_capacity"] > most:
    raise ValueError(
        f"{name} must be at most {most}, so that a vote vector of "
        f"{num_extensions} entries per prefix fits int32; got "
        f"{checked['vote_capacity']}")
  return checked


def _check_factory(aggregation_factory) -> None:
  """TypeError unless ``aggregation_factory`` is ``None`` or a factory."""
  if aggregation_factory is not None and not isinstance(
      aggregation_factory, tff.aggregators.UnweightedAggregationFactory):
    raise TypeError("aggregation_factory must be a "
                    "tff.aggregators.UnweightedAggregationFactory or None, "
                    f"got {aggregation_factory!r}")


# Long function: the docstring documents every argument of the public
# constructor.
def build_triehh_process(
    alphabet: AlphabetLike, max_length: int, theta: int, *,
    max_num_prefixes: int | None = None, num_sub_rounds: int = 1,
    vote_capacity: int | None = None,
    client_data: str = computations.DATASET,
    max_user_contribution: int = 1,
    aggregation_factory: tff.aggregators.UnweightedAggregationFactory | None
    = None,
    counting: counting_lib.CountingSpec | None = None,
    word_capacity: int | None = None) -> tff.templates.IterativeProcess:
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
      given, else :data:`DEFAULT_VOTE_CAPACITY`. Its vote vectors,
      ``K * (A + 1)`` entries, must fit int32.
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
    counting: a :class:`~triehh.engines.tff.counting.CountingSpec`; if
      given, the process is a :class:`TrieHHProcess`, whose ``count`` adds
      discrete Gaussian noise of ``sigma = counting.noise_std`` to each
      word's count through ``counting.mechanism``: ``"gaussian"`` (TFF sums
      exactly, the server adds the exact noise it is given,
      :meth:`TrieHHProcess.central_noise`) or
      ``"distributed_discrete_gaussian"`` (clients add discrete Gaussian
      shares, summed securely, split among ``counting.expected_clients``;
      see :mod:`triehh.engines.tff.counting`). ``None``: no counting round.
    word_capacity: words the counting vectors hold (a state with more fails
      ``count``); ``None``: 64.

  Returns:
    The process: ``initialize() -> ServerState`` (the root-only trie),
    ``next(state, clients) -> (ServerState, RoundOutput)`` with ``clients``
    a list of client data; and with ``counting``,
    ``count(state, clients, noise) -> CountOutput`` (``"gaussian"``;
    without ``noise`` for the distributed mechanism) (:class:`TrieHHProcess`).
  """
  alphabet = as_alphabet(alphabet)
  theta = validation.check_int("theta", theta)
  if counting is not None and not isinstance(counting,
                                             counting_lib.CountingSpec):
    raise TypeError("counting must be a triehh.engines.tff.counting."
                    f"CountingSpec or None, got {counting!r:.60}")
  sizes = _checked_sizes(alphabet.num_extensions, dict(
      max_length=max_length, max_num_prefixes=max_num_prefixes,
      num_sub_rounds=num_sub_rounds, vote_capacity=vote_capacity,
      max_user_contribution=max_user_contribution,
      word_capacity=word_capacity,
      expected_clients=None if counting is None
      else counting.expected_clients))
  _check_factory(aggregation_factory)
  characters = "".join(alphabet.characters)
  spec = computations.ProcessSpec(
      num_extensions=alphabet.num_extensions, max_length=sizes["max_length"],
      vote_capacity=sizes["vote_capacity"], client_mode=client_data,
      max_user_contribution=sizes["max_user_contribution"],
      characters=characters if client_data == computations.DATASET else "")
  process = computations.build_process(
      spec, theta=theta, max_num_prefixes=sizes["max_num_prefixes"],
      num_sub_rounds=sizes["num_sub_rounds"],
      aggregation_factory=aggregation_factory)
  if counting is not None and sizes["expected_clients"] is not None:
    counting = dataclasses.replace(
        counting, expected_clients=sizes["expected_clients"])
  return _with_counting(process, spec, counting, sizes["word_capacity"])


def _with_counting(process: tff.templates.IterativeProcess,
                   spec: computations.ProcessSpec,
                   counting: counting_lib.CountingSpec | None,
                   word_capacity: int | None
                   ) -> tff.templates.IterativeProcess:
  """``process``, with its counting round if ``counting`` is given."""
  if counting is None:
    if word_capacity is not None:
      raise ValueError("word_capacity needs counting (the counting round: "
                       "counting=CountingSpec(noise_std))")
    return process
  if word_capacity is None:
    word_capacity = counting_lib.DEFAULT_WORD_CAPACITY
  count = counting_lib.counting_round_computation(
      spec, process.state_type.member, counting, word_capacity)
  return TrieHHProcess(process, count, counting, word_capacity)


class TrieHHProcess(tff.templates.IterativeProcess):
  """The TrieHH process with its counting round, ``count``."""

  def __init__(self, process: tff.templates.IterativeProcess,
               count: tff.Computation,
               counting: counting_lib.CountingSpec | None = None,
               word_capacity: int = counting_lib.DEFAULT_WORD_CAPACITY):
    super().__init__(process.initialize, process.next)
    self._count = count
    self._counting = counting
    self._word_capacity = word_capacity

  @property
  def count(self) -> tff.Computation:
    """``(state, clients, noise) -> CountOutput``: the noisy counts of the
    words of ``state`` (discovery order, then "other") over ``clients``, a
    fresh sample of client data of the process's kind; ``noise`` is
    :meth:`central_noise`'s (``"gaussian"`` only: the distributed
    mechanism's ``count(state, clients)`` takes none)."""
    return self._count

  def central_noise(self, seed=None) -> np.ndarray:
    """The ``"gaussian"`` counting round's noise for ``count(state,
    clients, noise)``: ``int64 [word_capacity + 1]`` exact discrete
    Gaussian draws (:func:`triehh.engines.tff.counting.central_noise`;
    ``seed=None``: fresh OS entropy, one draw per round)."""
    if self._counting is None or (self._counting.mechanism
                                  != counting_lib.GAUSSIAN):
      raise ValueError("central_noise is for counting=CountingSpec(noise_std, "
                       "mechanism='gaussian') only; the distributed "
                       "mechanism's count(state, clients) takes no noise")
    return counting_lib.central_noise(self._counting.noise_std,
                                      self._word_capacity, seed)


def _field(state, name: str) -> np.ndarray:
  """A field of the state as returned by TFF (named tuple or mapping)."""
  value = state[name] if isinstance(state, Mapping) else getattr(state, name)
  return np.asarray(value)


def _checked(codes: np.ndarray, name: str,
             alphabet: alphabet_lib.Alphabet) -> np.ndarray:
  """``codes``, the rows of the state's frontier or heavy hitters, or a
  ValueError if they are not codes of ``alphabet``: frontier codes are
  characters, and each heavy hitter holds one end code (``-1`` pads it)."""
  end = alphabet.end_code
  if name == "frontier":
    fits = bool(((codes >= 0) & (codes < end)).all())
  else:
    fits = bool((codes <= end).all()
                and ((codes == end).sum(axis=1) == 1).all())
  if not fits:
    raise ValueError(
        "alphabet must be the alphabet the process was built with: the "
        f"state's {name} holds codes outside alphabet "
        f"{''.join(alphabet.characters)!r} (characters 0..{end - 1}, end "
        f"symbol {end})")
  return codes


def decode_state(state: computations.ServerState,
                 alphabet: AlphabetLike) -> dict[str, int]:
  """The heavy hitters of ``state``: word -> its votes in the round that
  found it, most voted first, then by word (as ``triehh.discover`` orders
  them)."""
  alphabet = as_alphabet(alphabet)
  counts = _field(state, "heavy_hitter_counts").reshape(-1)
  if not counts.size:
    return {}
  codes = _checked(_field(state, "heavy_hitters").reshape(counts.size, -1),
                   "heavy_hitters", alphabet)
  return ranking.by_count({alphabet.decode_word(row): int(count)
                           for row, count in zip(codes, counts)})


def decode_frontier(state: computations.ServerState,
                    alphabet: AlphabetLike) -> list[str]:
  """The frontier of ``state``: the non-terminated prefixes of the trie's
  deepest level, in lexicographic order (``[""]``, the root, initially)."""
  alphabet = as_alphabet(alphabet)
  return [alphabet.decode(row) for row in _checked(
      _field(state, "frontier"), "frontier", alphabet)]


def decode_counts(state: computations.ServerState,
                  output: counting_lib.CountOutput | np.ndarray,
                  alphabet: AlphabetLike) -> tuple[dict[str, float], float]:
  """``({word: noisy count}, other's noisy count)`` of a counting round over
  ``state``'s words (``output``: what ``count`` returned, or its counts);
  words in discovery order."""
  alphabet = as_alphabet(alphabet)
  if isinstance(output, Mapping) or hasattr(output, "counts"):
    output = _field(output, "counts")
  counts = np.asarray(output, dtype=np.float64).reshape(-1)
  codes = _checked(_field(state, "heavy_hitters"), "heavy_hitters", alphabet)
  if counts.size != codes.shape[0] + 1:
    raise ValueError(f"{counts.size} counts for {codes.shape[0]} words: "
                     "expected one per word and one for other")
  words = {alphabet.decode_word(row): float(c)
           for row, c in zip(codes, counts)}
  return words, float(counts[-1])
