"""The noisy trie's round plan: an upload budget, rounds shaped by the
public frontier, and noise and thresholds chosen before the data is read.

The mechanism is :mod:`triehh.theory.noisy_trie`'s (one-hot votes on a
public candidate set, discrete Gaussian noise, a threshold), with three
changes, all functions of public values and earlier releases:

* *Characters per round from the frontier.* Round r extends the F_r
  frontier prefixes (all of p_r symbols) by k_r symbols, k_r the largest
  whose candidate vector fits the round's bytes (:func:`chars_for_round`):
  many characters while the frontier is small, one later. If even one
  character does not fit, the frontier keeps its prefixes of largest noisy
  count that fit (post-processing of released counts).
* *Bytes.* A client uploads one integer per candidate to a secure sum. The
  coordinates of frontier prefix f's block are summed modulo M_f, the
  size of the window ``[-w sigma_r, c_f + w sigma_r]`` its noisy values
  are decoded from (w = ``WRAP_SIGMAS``, the Laplace's ``WRAP_SCALES``:
  each margin passed with probability at most ``WRAP_TAIL``), ``c_f`` a
  public cap on any count below f: n in the first round and for several
  words per user; with one word per user, f's released noisy count plus
  ``WRAP_SIGMAS`` of its round's sigma (a child's count is at most its
  parent's; the noise is added and the value released modulo the same
  M_f, post-processing of the noisy sum, so a wrap-around costs accuracy,
  never privacy). Skellam shares' blocks are summed modulo ``2^b_f``,
  ``b_f = ceil(log2(c_f + 2 w sigma_r + 1))``. A block's E_r coordinates
  are packed into ring elements of at most 64 bits (mixed radix,
  :func:`packed_bits`); a round costs ``ceil(sum_f packed_bits(M_f, E_r)
  / 8)`` bytes (:meth:`NoisyPlan.round_bytes`). Round r may spend the
  run's remaining bytes over its remaining rounds, at most
  ``bytes_per_round``.
* *Fixed rounds and noise.* R and every round's sigma_r are fixed before
  the run (:func:`plan`); only k_r and the kept frontier adapt. A round's
  L2 sensitivity is 1 whatever k_r (one one-hot vote), so the run is the
  adaptive composition of R discrete Gaussian rounds with parameters fixed
  in advance: the accountant of :func:`triehh.theory.noisy_trie.epsilon`,
  unchanged. Running out of symbols or frontier early is post-processing.
* *Two thresholds.* A candidate ending in ``$`` is a released word, the
  others only next round's frontier: words pass at round r's tau_word
  (false-positive rate ``false_words / (R W_r)`` per candidate, W_r the
  round's word candidates, public: at most ``false_words`` false words
  per run in expectation), prefixes at tau_prefix (rate ``PREFIX_SHARE /
  (A + 1)``: ``PREFIX_SHARE A^k / (A + 1)`` false prefixes per frontier
  prefix at k characters in expectation; their share of the next round's
  coordinates is not bounded).

* *Discover, then verify* (``rule="verified"``, the default). The R_d
  rounds above grow the trie at ``DISCOVERY_MULTIPLIER`` times the noise
  (the Laplace's: ``LAPLACE_DISCOVERY_MULTIPLIER``),
  every candidate at the loose rate ``DISCOVERY_PREFIX_SHARE / (A + 1)``
  (after the first round, each class of words, those ending after j of
  the round's characters, together at that rate times the round's
  blocks: ``discovery_words``); the words they pass are not released but
  kept as the
  candidates V of one more round, the verification round, at sigma: each
  user votes for its word if it is in V (several words: one of those in
  V, by local frequency), and a word is released at its own threshold
  (``verification_split="weighted"``, the default with the server's noise
  and one word per user:
  from its discovery count, the thresholds' tails summing to at most
  ``false_words``, :mod:`triehh.theory.verification_thresholds`; ``"even"``,
  several words and Skellam shares: each at rate ``false_words / |V|``).
  V and the
  thresholds are functions of released noisy counts; the round is one more
  one-hot vote: R = R_d + 1 discrete Gaussian rounds with sigmas fixed in
  advance, the same accountant. The discovery rounds leave
  ``VERIFY_RESERVE`` of the run's bytes to it; V's words past what the
  remaining bytes hold are dropped, smallest noisy count first. Words are
  decided once, at the lowest noise, instead of in every round at the
  rounds' common noise; prefixes pass cheaply because a false one costs
  bytes, not a released word.

* *Rates adapted to the frontier* (``adapt_rates``, q < 1 only). The
  plan is calibrated at q by the rounds' Renyi DP and fixes one order
  alpha, the best for its rounds (:func:`renyi_sigma`); round r may then
  run at any rate q' of :func:`rate_menu` (q times powers of sqrt 2, up to
  1) with its sigma raised to the least whose Renyi divergence at alpha is
  at most round r's at (sigma_r, q) (:func:`raised_sigma`). A discovery
  round takes the largest q' at which it keeps every frontier prefix and
  as many characters as at q (public values), so rounds whose frontier
  fits count more users. Whatever the choices, each round is (alpha,
  D_r)-RDP given the rounds before, D_r fixed in advance, so the run is
  (alpha, sum_r D_r)-RDP (adaptive composition, Mironov 2017, Proposition
  1), converted by CKS20 Proposition 12 (:func:`epsilon`).

* *Free choices from a public prior.* The first round's noise multiplier
  m_0, its characters k_0 (and so its bytes), the prefixes' share of the
  false-positive budget and R are the plan's free choices
  (:class:`PlanChoices`). ``rule="fixed"`` takes the constants below
  without a verification round (:func:`fixed_choices`); ``rule="prior"``,
  those with the most true words in a simulated run on a synthetic
  population drawn from the public prior of
  :mod:`triehh.theory.noisy_prior` at the declared n, L and A
  (:func:`prior_choices`); ``rule="verified"`` (the default), the fixed
  rule's rounds then a verification round (:func:`verified_choices`),
  its constants chosen once on that prior. Each is a function of public
  values only, computed before the data is read; the accountant is the
  same. Measured on the field's cells (docs/noisy-trie.md), the verified
  rule releases the most true words.

* *The noise's law* (``noise_law``). The server's discrete Gaussian
  (sigma_r, the accountant above), or its discrete Laplace of scale b_r =
  b m_r (:mod:`triehh.theory.discrete_laplace`): each round pure
  ``1/b_r``-DP (amplified by sampling at q), the rounds' epsilons added,
  delta 0; b the smallest meeting epsilon; thresholds from the Laplace's
  tail; the blocks' margins ``WRAP_SCALES`` scales. The same rounds,
  multipliers and rates otherwise; the fixed and verified rules at one
  rate (no adapted rates, no Skellam shares).
  :mod:`triehh.mechanisms.plan_choice` tries both on the public prior.

Several words per user: each round a participant votes for one of its
words whose prefix is on the frontier (drawn by local frequency among
those), a function of the public frontier and its own words: still zero
or one-hot, the same pair of laws per round (docs/noisy-trie.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from triehh.core import discrete_noise
from triehh.core import validation
from triehh.theory import discrete_gaussian
from triehh.theory import discrete_laplace
from triehh.theory import distributed_noise
from triehh.theory import limits
from triehh.theory import noise_laws
from triehh.theory import noise_search
from triehh.theory import noisy_prior
from triehh.theory import noisy_trie
from triehh.theory import sampled_renyi
from triehh.theory.noise_laws import GAUSSIAN
from triehh.theory.noise_laws import LAPLACE
from triehh.theory.noise_laws import NOISE_LAWS
from triehh.theory.upload_budget import DEFAULT_BYTES_PER_RUN
from triehh.theory.upload_budget import UploadBudget

# The blocks' margins (a one-word prefix's cap above its noisy count, and
# the window its noisy values are decoded from, on either side): each is
# passed with probability at most WRAP_TAIL per coordinate (a plan's
# ``wrap_tail``). A run of 1 MB holds at most 8e6 coordinates, each with
# three margins: fewer than 3e-5 wrap-arounds per run in expectation,
# which the simulation leaves undrawn (a wrap-around costs accuracy, never
# privacy; the discovery rounds' looser margins are drawn:
# DISCOVERY_WRAP_TAIL).
WRAP_TAIL = 1e-12


@functools.lru_cache(maxsize=64)
def wrap_margin(noise_law: str, tail: float) -> float:
  """The margin, in sigmas (or the Laplace's scales), that the noise
  passes with probability at most ``tail``: the discrete Gaussian is
  sigma^2-subgaussian (Canonne, Kamath and Steinke 2020), so P[N >= t
  sigma] <= exp(-t^2 / 2); the discrete Laplace's P[N >= t b] <=
  exp(-t)."""
  validation.check_rate("tail", tail, "a wrap-around's probability")
  log_odds = math.log(1.0 / tail)
  return log_odds if noise_law == LAPLACE else math.sqrt(2.0 * log_odds)


@functools.lru_cache(maxsize=256)
def joint_margin(noise_law: str, parent_scale: float, scale: float,
                 tail: float) -> float:
  """The least t with ``P[N_parent + N >= t] <= tail`` for independent
  draws of the law at the two scales (a child's noisy count is its count
  plus N, at most its parent's true count, the parent's noisy count
  minus N_parent: the same law by symmetry), at most the two
  :func:`wrap_margin` added. The discrete Gaussian: ``wrap_margin`` times
  ``sqrt(a^2 + b^2)`` (a sum of independent subgaussians); the discrete
  Laplace: summed from the two pmfs, each cut where its tail is below
  ``tail / 10^6``, the cut mass added."""
  one = wrap_margin(noise_law, tail)
  separate = one * (parent_scale + scale)
  if noise_law == GAUSSIAN:
    return min(separate, one * math.hypot(parent_scale, scale))
  reach = one + math.log(1e6)
  half_a = math.ceil(reach * parent_scale) + 1
  half_b = math.ceil(reach * scale) + 1
  if half_a + half_b > 50_000:  # a wide law: the margins added
    return separate
  total = np.convolve(
      noise_laws.pmf(LAPLACE, parent_scale, np.arange(-half_a, half_a + 1)),
      noise_laws.pmf(LAPLACE, scale, np.arange(-half_b, half_b + 1)))
  cut = 2.0 * (discrete_noise.discrete_laplace_tail(parent_scale, half_a + 1)
               + discrete_noise.discrete_laplace_tail(scale, half_b + 1))
  tails = np.cumsum(total[::-1])[::-1] + cut  # P[S >= i - half_a - half_b]
  index = int(np.argmax(tails <= tail)) if (tails <= tail).any() else None
  if index is None:
    return separate
  return min(float(index - half_a - half_b), separate)


# In sigmas, 7.43 (also the binomial deviations of a sampled count's cap);
# the Laplace's, in scales, 27.6.
WRAP_SIGMAS = wrap_margin(GAUSSIAN, WRAP_TAIL)
# Discover, then verify: the discovery rounds' margins, where a wrap-around
# costs a prefix or a candidate of V, never a release (the engines draw it:
# triehh.engines.noisy.Window). Chosen on the public prior
# (docs/noisy-trie.md, "Margins where a wrap releases nothing").
DISCOVERY_WRAP_TAIL = 1e-4
WRAP_SCALES = wrap_margin(LAPLACE, WRAP_TAIL)
# The verification round's thresholds: one each from the discovery counts
# (triehh.theory.verification_thresholds), or the even split.
WEIGHTED, EVEN = "weighted", "even"
# A discovery round's word candidates (discover, then verify): each at the
# prefixes' rate ("candidate"); or together at that rate times the round's
# blocks, as many noise-only words as one ``$`` per block would pass
# whatever the round's characters, in every round ("block") or after the
# first, whose one block keeps the rate per candidate ("later-blocks"); or
# so each class of the words ending after j of the round's k characters
# (A^j a block), in every round ("class") or after the first
# ("later-classes"). Chosen on the public prior (docs/noisy-trie.md,
# "Words of L letters").
PER_CANDIDATE, PER_BLOCK, LATER_BLOCKS = "candidate", "block", "later-blocks"
PER_CLASS, LATER_CLASSES = "class", "later-classes"
DISCOVERY_WORDS = (PER_CANDIDATE, PER_BLOCK, LATER_BLOCKS, PER_CLASS,
                   LATER_CLASSES)
# The expected share of the coordinates false prefixes may take.
PREFIX_SHARE = 0.1
# The first round's share of the run's coordinates.
FIRST_ROUND_SHARE = 0.125
# The first round's noise over the others' (its prefixes are shared by many).
FIRST_MULTIPLIER = 2.0
DEFAULT_FALSE_WORDS = 1.0
# Discover, then verify (the default rule): the discovery rounds' noise over
# the verification round's, their candidates' (prefixes' and words') rate
# times A + 1, and the share of the run's bytes kept for the verification
# round. Chosen on the public prior of triehh.theory.noisy_prior before any
# field measurement (docs/noisy-trie.md, "Discover, then verify").
DISCOVERY_MULTIPLIER = 2.0
# The discrete Laplace's (its rounds' epsilons add up, so verification's
# share of the budget is dearer): chosen on the same prior, at the cells'
# declared values, before a field cell was run with it (docs/noisy-trie.md,
# "Thresholds from the discovery counts").
LAPLACE_DISCOVERY_MULTIPLIER = 3.0
DISCOVERY_PREFIX_SHARE = 3.0
# The verification round's bytes: 0.05 until the blocks were packed, then
# 0.02, chosen on the same prior at eleven cells' declared values
# (docs/noisy-trie.md, "Blocks packed, one margin for two noises").
VERIFY_RESERVE = 0.02
# The rules for the plan's free choices: discover then verify with the
# constants above, chosen on the public prior of triehh.theory.noisy_prior,
# or the constants above without a verification round.
VERIFIED, PRIOR, FIXED = "verified", "prior", "fixed"
RULES = (VERIFIED, PRIOR, FIXED)
# The prior rule's choices (docs/noisy-trie.md): the first round's noise
# multiplier, its characters (its vector within this share of the run's
# bytes), the prefixes' share of the false-positive budget; R from 1 to
# L + 1 - k_0.
MULTIPLIER_CHOICES = (1.0, 1.5, 2.0, 3.0, 4.0)
FIRST_ROUND_MAX_SHARE = 0.5
PREFIX_SHARE_CHOICES = (0.01, 0.03, 0.1, 0.3)


def extensions(alphabet_size: int, chars: int, max_length: int,
               prefix_length: int) -> tuple[int, int]:
  """(E, W): the extensions of a prefix of ``prefix_length`` symbols by
  ``chars`` symbols within L characters, and how many of them end in
  ``$`` (the first W)."""
  words = sum(alphabet_size**j for j in range(chars))
  if prefix_length + chars <= max_length:
    return words + alphabet_size**chars, words
  ending = sum(alphabet_size**j
               for j in range(min(chars - 1, max_length - prefix_length) + 1))
  return ending, ending


def bits_for(cap: float) -> int:
  """``ceil(log2(cap + 1))``: the bits of a secure sum of counts at most
  ``cap`` (at least 1)."""
  return max(1, math.ceil(math.log2(max(cap, 0.0) + 1.0)))


# A secure sum's ring element: a block's coordinates, each modulo the
# block's modulus M, are packed d to an element of modulus M^d <= 2^64
# (mixed radix: an element is the sum of its coordinates times powers of
# M). A sum of packed vectors modulo M^d is the packing of the
# coordinates' sums modulo M, each read back as a digit.
PACK_BITS = 64


@functools.lru_cache(maxsize=4096)
def packed_bits(modulus: int, count: int) -> int:
  """Bits of ``count`` coordinates modulo ``modulus`` packed into ring
  elements of at most ``2^PACK_BITS`` (d coordinates an element, the most
  with ``modulus^d <= 2^PACK_BITS``): each element, uniform modulo its
  ``modulus^d`` once masked, takes ``(modulus^d - 1).bit_length()`` bits.
  A power of two ``2^b`` packs to ``count * b`` bits."""
  modulus, count = int(modulus), int(count)
  if modulus < 2:
    raise ValueError(f"a block's modulus must be at least 2, got {modulus}")
  if count <= 0:
    return 0
  per = 1
  while modulus**(per + 1) <= 2**PACK_BITS:
    per += 1
  full, rest = divmod(count, per)
  return (full * (modulus**per - 1).bit_length()
          + ((modulus**rest - 1).bit_length() if rest else 0))


def _packed_total(moduli: np.ndarray, counts: np.ndarray, e: int) -> int:
  """Bits of ``counts[i]`` blocks of modulus ``moduli[i]``, each of ``e``
  coordinates, packed (:func:`packed_bits`)."""
  return sum(c * packed_bits(m, e)
             for m, c in zip(moduli.tolist(), counts.tolist()) if c)


@dataclasses.dataclass(frozen=True)
class NoisyPlan:
  """A planned noisy-trie run (module docstring).

  Attributes:
    sigma: the base noise parameter: the discrete Gaussian's sigma, or the
      discrete Laplace's scale b (``noise_law="laplace"``); round r's is
      ``sigma * noise_multipliers[r]`` (1 past them).
    num_levels: R, the rounds accounted for.
    noise_multipliers: m_r, fixed in advance.
    word_false_positive_rate, prefix_false_positive_rate: the chance a
      candidate with no vote passes, ending in ``$`` or not.
    budget: the upload budget.
    population_size: n, declared and public.
    max_length, alphabet_size: L and A.
    one_word: each user holds one word (the caps of the module docstring).
    delta: the delta the guarantee is stated at.
    distributed: None (central noise: the server adds the discrete
      Gaussian of ``round_sigma``), or the
      :class:`~triehh.theory.distributed_noise.DistributedNoise` of the
      clients' Skellam shares (:func:`with_distributed`): then sigma is
      the accounted shares' standard deviation, for the blocks' moduli, and
      each round's thresholds come from the delivered shares' Skellam law
      (:func:`triehh.theory.distributed_noise.threshold_and_tail`).
    replace_one: the noise calibrated for ``REPLACE_ONE`` too (a vote
      that moves between two candidates: :mod:`triehh.theory.noisy_trie`).
    noise_law: ``"gaussian"`` (the server's discrete Gaussian, or the
      clients' Skellam shares) or ``"laplace"`` (the server's discrete
      Laplace, :mod:`triehh.theory.discrete_laplace`: pure DP, delta 0).
    first_chars: k_0, the most characters the first round takes (R was
      fixed for it; its bytes may allow more); None: as many as fit.
    discovery_wrap_tail: the same chance in the discovery rounds of a plan
      that verifies with the server's noise (None: ``wrap_tail``;
      ``DISCOVERY_WRAP_TAIL``): :meth:`round_wrap`.
    wrap_tail: the chance, per coordinate, that the noise passes one of a
      block's margins (:func:`wrap_margin`, ``WRAP_TAIL``).
    verification_split: ``"weighted"`` (a threshold per word of V from its
      discovery count, with the server's noise and one word per user:
      :mod:`triehh.theory.verification_thresholds`) or ``"even"`` (the
      rate ``false_words / |V|`` for each).
    discovery_words: a discovery round's word candidates each at the
      prefixes' rate (``"candidate"``), or together at that rate times the
      round's blocks in every round (``"block"``) or after the first
      (``"later-blocks"``), or so each class of their end (``"class"``,
      ``"later-classes"``); ``DISCOVERY_WORDS``.
    verify_reserve: the share of the run's bytes the discovery rounds of
      a plan that verifies leave to its verification round
      (``VERIFY_RESERVE``).
  """

  sigma: float
  num_levels: int
  noise_multipliers: tuple[float, ...]
  word_false_positive_rate: float
  prefix_false_positive_rate: float
  budget: UploadBudget
  population_size: int
  max_length: int
  alphabet_size: int
  one_word: bool = True
  delta: float | None = None
  sampling_rate: float = 1.0
  false_words: float = DEFAULT_FALSE_WORDS
  first_round_bytes: int | None = None
  first_chars: int | None = None
  verify: bool = False
  distributed: object = None  # triehh.theory.distributed_noise's, or None
  renyi_order: int | None = None
  parent_rate: float | None = None
  replace_one: bool = False
  noise_law: str = GAUSSIAN
  wrap_tail: float = WRAP_TAIL
  discovery_wrap_tail: float | None = DISCOVERY_WRAP_TAIL
  verification_split: str = WEIGHTED
  discovery_words: str = LATER_CLASSES
  verify_reserve: float = VERIFY_RESERVE

  def __post_init__(self):
    validation.check_rate("wrap_tail", self.wrap_tail,
                          "a wrap-around's probability")
    if self.discovery_wrap_tail is not None:
      validation.check_rate("discovery_wrap_tail", self.discovery_wrap_tail,
                            "a wrap-around's probability")
    if self.verification_split not in (WEIGHTED, EVEN):
      raise ValueError("verification_split must be 'weighted' or 'even', "
                       f"got {self.verification_split!r}")
    validation.check_rate("verify_reserve", self.verify_reserve,
                          "a share of the run's bytes")
    if self.discovery_words not in DISCOVERY_WORDS:
      raise ValueError(f"discovery_words must be one of {DISCOVERY_WORDS}, "
                       f"got {self.discovery_words!r}")

  def rate_options(self, r: int) -> tuple["NoisyPlan", ...]:
    """Round r's plan at each larger rate it may take, largest first
    (module docstring, *Rates adapted*): q' of :func:`rate_menu`, sigma_r
    raised (:func:`raised_sigma`); empty unless the rates adapt, and for
    the verification round."""
    if self.renyi_order is None or self.is_verification(r):
      return ()
    sigma_r = self.round_sigma(r)
    scale = sigma_r / self.sigma
    return tuple(
        dataclasses.replace(self, sampling_rate=rate, renyi_order=None,
                            sigma=raised_sigma(sigma_r, self.sampling_rate,
                                               rate, self.renyi_order,
                                               self.replace_one)
                            / scale)
        for rate in rate_menu(self.sampling_rate))

  @property
  def delivery_rate(self) -> float:
    """The chance a user's vote reaches a round's sum: q, times ``1 -
    dropout`` with Skellam shares (a sampled client may not deliver)."""
    if self.distributed is None:
      return self.sampling_rate
    return self.sampling_rate * (1.0 - self.distributed.dropout)

  @property
  def discovery_rounds(self) -> int:
    """The rounds that grow the trie: all R, or R - 1 before the
    verification round."""
    return self.num_levels - 1 if self.verify else self.num_levels

  def is_verification(self, r: int) -> bool:
    """Whether round r is the verification round (the last of R)."""
    return self.verify and r == self.num_levels - 1

  def round_sigma(self, r: int) -> float:
    """sigma_r, round r's sigma (the Laplace's: its scale b_r)."""
    m = (self.noise_multipliers[r] if r < len(self.noise_multipliers)
         else 1.0)
    return self.sigma * m

  @property
  def laplace(self) -> bool:
    """Whether the server adds discrete Laplace noise."""
    return self.noise_law == LAPLACE

  @property
  def weighted_verification(self) -> bool:
    """Whether the verification round takes a threshold per word from its
    discovery count: the weighted split, with the server's noise and one
    word per user (several words: a user's verification vote goes to its
    word measured lowest, so a word's two counts part ways)."""
    return (self.verification_split == WEIGHTED and self.distributed is None
            and self.one_word)

  @property
  def wrap(self) -> float:
    """The blocks' margin for the noise, in round sigmas (or scales):
    :func:`wrap_margin` at ``wrap_tail``."""
    return wrap_margin(self.noise_law, self.wrap_tail)

  def round_wrap(self, r: int) -> float:
    """Round r's margins in its sigmas (or scales): a discovery round's
    (discover, then verify, the server's noise) at
    ``discovery_wrap_tail`` (None: ``wrap_tail``), where a wrap costs a
    prefix or a candidate of V, never a release, and the engines draw it
    (:class:`triehh.engines.noisy.Window`); the others' at ``wrap_tail``
    (Skellam shares: their wrap-around is bounded, not drawn)."""
    return wrap_margin(self.noise_law, self.round_tail(r))

  def round_tail(self, r: int) -> float:
    """The chance per coordinate that round r's noise passes one of its
    margins (:meth:`round_wrap`)."""
    if (self.verify and r < self.discovery_rounds
        and self.distributed is None
        and self.discovery_wrap_tail is not None):
      return self.discovery_wrap_tail
    return self.wrap_tail

  def window_low(self, r: int) -> int:
    """The least value a count of round r's blocks decodes to: minus its
    lower margin, ``floor(round_wrap(r) sigma_r)``. A block of modulus M
    decodes its secure sum modulo M into ``[low, low + M)``."""
    return -math.floor(self.round_wrap(r) * self.round_sigma(r))

  def params(self, r: int, word: bool, num_candidates: int | None = None,
             num_blocks: int | None = None) -> noisy_trie.NoisyTrieParams:
    """Round r's sigma and threshold for words (or prefixes). Words, given
    the round's ``num_candidates`` ending in ``$`` (public): the rate
    ``word_false_positive_rate / (R * num_candidates)``, so the run
    releases at most ``word_false_positive_rate`` false words in
    expectation (capped at the budget's bound without it).

    Discover then verify: every candidate of a discovery round at the
    prefix rate (its words are the verification's candidates, not
    released; given the round's ``num_blocks``, where ``discovery_words``
    shares that rate by block (:meth:`_per_block`), the ``num_candidates``
    words of a group, all of them or a class, at that rate times
    ``num_blocks / num_candidates``); the verification round's words at
    ``false_words / num_candidates``, its only release."""
    if self.is_verification(r) and num_candidates:
      rate = min(self.false_words / num_candidates, 0.5)
    elif word and num_blocks and num_candidates and self._per_block(r):
      rate = self.prefix_false_positive_rate * min(
          num_blocks / num_candidates, 1.0)
    elif not word or r < self.discovery_rounds and self.verify:
      rate = self.prefix_false_positive_rate
    elif num_candidates:
      rate = min(self.false_words / (self.num_levels * num_candidates), 0.5)
    else:
      rate = self.word_false_positive_rate
    if self.laplace:
      return _laplace_params(self.round_sigma(r), rate)
    return _round_params(self.round_sigma(r), rate)

  def _per_block(self, r: int) -> bool:
    """Whether discovery round r's words (or each class of them,
    :meth:`words_by_class`) share the prefixes' rate times its blocks
    (``discovery_words``)."""
    if not self.verify or r >= self.discovery_rounds:
      return False
    return (self.discovery_words in (PER_BLOCK, PER_CLASS)
            or self.discovery_words in (LATER_BLOCKS, LATER_CLASSES)
            and r > 0)

  def words_by_class(self, r: int) -> bool:
    """Whether round r's words take a threshold per class of their end
    (those ending after j of the round's characters), not one for all."""
    return self._per_block(r) and self.discovery_words in (PER_CLASS,
                                                           LATER_CLASSES)

  @property
  def sigmas(self) -> tuple[float, ...]:
    """sigma_r of the R rounds."""
    return tuple(self.params(r, True).sigma for r in range(self.num_levels))

  @property
  def max_coordinates(self) -> int:
    """The most candidates a run can count: every byte at one bit each."""
    return 8 * self.budget.bytes_per_run

  def cap_modulus(self, noisy_count: float | None, r: int) -> int:
    """M_f of a block of round r whose parent's released noisy count is
    ``noisy_count`` (None: the root, or several words per user): the
    modulus of its secure sum (module docstring, *Bytes*)."""
    return self.block_moduli([noisy_count], r)[0]

  def block_moduli(self, noisy_counts, r: int) -> list[int]:
    """:meth:`cap_modulus` of each of ``noisy_counts`` (a list: None or a
    float each) at round r, in one pass."""
    parent = self.round_sigma(max(r - 1, 0))
    return self._moduli(noisy_counts, [parent] * len(noisy_counts), r)

  def _moduli(self, noisy_counts, parent_sigmas, r: int) -> list[int]:
    """The moduli of round r's sums below each of ``noisy_counts`` (None:
    n), each measured at its ``parent_sigmas``: the window of the noisy
    values, from ``window_low(r)`` to the count's cap plus round r's
    margin (the server's noise), or the power of two holding it (Skellam
    shares). The cap: the parent's count plus ``round_wrap`` of its sigma,
    at most n (several words: n); unsampled, with the server's noise, the
    window's top is instead the parent's count plus the margin of the two
    rounds' noises together (:func:`joint_margin`: a child's noisy count
    passes its parent's by their difference at most)."""
    w = self.round_wrap(r)
    margin = w * self.round_sigma(r)
    n = self.population_size
    counts = np.array([np.nan if c is None else c for c in noisy_counts],
                      dtype=np.float64)
    root = np.isnan(counts) | (not self.one_word)
    if not counts.size:
      return []
    sigmas = np.asarray(parent_sigmas, dtype=np.float64)
    if self.distributed is not None:  # Skellam shares: a power of two
      caps = np.where(root, n, np.minimum(self._caps(counts + w * sigmas), n))
      return [2**bits_for(cap + 2.0 * margin) for cap in caps.tolist()]
    if self.one_word and self._unsampled:  # one margin for the two noises
      unique, inverse = np.unique(sigmas, return_inverse=True)
      joint = np.array([joint_margin(self.noise_law, float(sigma),
                                     self.round_sigma(r), self.round_tail(r))
                        for sigma in unique])[inverse]
      tops = np.minimum(counts + joint, n + margin)
    else:
      tops = np.minimum(self._caps(counts + w * sigmas), n) + margin
    tops = np.where(root, n + margin, tops)
    low = self.window_low(r)
    return np.maximum(np.floor(np.maximum(tops, 0.0)) - low + 1,
                      2).astype(np.int64).tolist()

  @property
  def _unsampled(self) -> bool:
    """Every user counted in this round and in its parents' round."""
    before = (self.sampling_rate if self.parent_rate is None
              else self.parent_rate)
    return self.sampling_rate >= 1.0 and before >= 1.0

  def _caps(self, counts: np.ndarray) -> np.ndarray:
    """A cap on this round's count below each prefix whose count is at most
    ``counts`` in the previous round (sampled at ``parent_rate``, None: at
    q): the count itself when neither round samples; else the holders that
    count suggests times this round's q, plus ``WRAP_SIGMAS`` binomial
    deviations of both samples (a larger count wraps around: accuracy,
    never privacy)."""
    if self._unsampled:
      return counts
    now = self.sampling_rate
    before = now if self.parent_rate is None else self.parent_rate
    users = np.maximum(counts, 1.0) / before  # the holders a count suggests
    spread = users * (before * (1.0 - before) * (now / before)**2
                      + now * (1.0 - now))
    return (users * now
            + wrap_margin(GAUSSIAN, self.wrap_tail) * np.sqrt(spread))

  def verification_moduli(self, noisy_counts, sigmas) -> list[int]:
    """M_w of each word candidate of the verification round: one word per
    user, its discovery noisy count (measured at ``sigmas``, one each),
    capped as a block's below it (:meth:`_moduli`); several words, n."""
    return self._moduli(noisy_counts, list(sigmas), self.num_levels - 1)

  def round_bytes(self, moduli, chars: int, prefix_length: int) -> int:
    """Bytes of a round whose blocks have ``moduli``, each of E
    extensions (``chars`` characters after ``prefix_length``), packed
    (:func:`packed_bits`)."""
    e, _ = extensions(self.alphabet_size, chars, self.max_length,
                      prefix_length)
    unique, counts = np.unique(np.asarray(moduli, dtype=np.int64),
                               return_counts=True)
    return math.ceil(_packed_total(unique, counts, e) / 8)

  def extensions(self, chars: int, prefix_length: int) -> tuple[int, int]:
    """:func:`extensions` at this plan's A and L."""
    return extensions(self.alphabet_size, chars, self.max_length,
                      prefix_length)

  def chars_for_round(self, block_moduli, r: int, prefix_length: int,
                      spent: int) -> tuple[int, int]:
    """:func:`chars_for_round` of this plan."""
    return chars_for_round(self, block_moduli, r, prefix_length, spent)

  def round_allowance(self, r: int, spent: int) -> int:
    """Round r's bytes: the run's remaining over the remaining rounds
    (the first round: ``first_round_bytes`` if set, else at most
    ``FIRST_ROUND_SHARE`` of the run's), capped by ``bytes_per_round``.
    ``spent`` is a client's expected bytes so far; with sampling rate q a
    round's vector may be 1/q times its share (its expected bytes are q
    times its vector's).
    Discover then verify: the discovery rounds leave ``verify_reserve``
    of the run's bytes to the verification round, which may spend all
    that is left."""
    left = max(self.budget.bytes_per_run - spent, 0)
    if self.verify and r < self.discovery_rounds:
      reserve = math.ceil(self.verify_reserve * self.budget.bytes_per_run)
      left = max(left - reserve, 0)
      share = left // max(self.discovery_rounds - r, 1)
    else:
      share = left // max(self.num_levels - r, 1)
    if r == 0 and self.first_round_bytes is not None:
      share = min(self.first_round_bytes, left)
    elif r == 0:
      share = min(share, math.floor(FIRST_ROUND_SHARE
                                    * self.budget.bytes_per_run))
    share = math.floor(share / self.sampling_rate)  # its expected bytes
    if self.budget.bytes_per_round is not None:
      share = min(share, self.budget.bytes_per_round)
    return share


@functools.lru_cache(maxsize=4096)
def _round_params(sigma: float, rate: float) -> noisy_trie.NoisyTrieParams:
  """One round's parameters (its threshold from the rate), remembered."""
  return noisy_trie.NoisyTrieParams(sigma=sigma, num_levels=1,
                                    false_positive_rate=rate)


@dataclasses.dataclass(frozen=True)
class LaplaceRound:
  """One round of discrete Laplace noise: its scale b, its threshold (the
  smallest integer whose tail is at most the rate asked for) and that
  tail, the chance a candidate no one votes for passes."""

  scale: float
  threshold: int
  false_positive_rate: float

  @property
  def sigma(self) -> float:
    """The noise's parameter, named as a Gaussian round's: the scale."""
    return self.scale


@functools.lru_cache(maxsize=4096)
def _laplace_params(scale: float, rate: float) -> LaplaceRound:
  """A Laplace round at ``scale`` whose candidates pass at ``rate``."""
  tau = discrete_laplace.threshold(scale, rate)
  return LaplaceRound(scale, tau,
                      discrete_noise.discrete_laplace_tail(scale, tau))


def chars_for_round(plan: NoisyPlan, block_moduli: list[int] | tuple[int, ...],
                    r: int, prefix_length: int, spent: int
                    ) -> tuple[int, int]:
  """(k_r, kept): the characters of round r and how many frontier prefixes
  (the first ``kept`` of ``block_moduli``, largest noisy count first) it
  extends, from public values only: every prefix at the most characters
  that fit, else the most prefixes that fit at one character, then the
  most characters those prefixes' bytes allow (past L only ``$`` can
  follow, so a prefix one character short of L takes its last character
  and ``$`` for the bytes of one); the first round at most the plan's
  ``first_chars``. k_r = 0: nothing fits or no symbol is left."""
  left_symbols = plan.max_length + 1 - prefix_length
  allowance = plan.round_allowance(r, spent)
  if left_symbols <= 0 or not block_moduli:
    return 0, 0
  unique, inverse = np.unique(np.asarray(block_moduli, dtype=np.int64),
                              return_inverse=True)
  e, _ = plan.extensions(1, prefix_length)
  # The most prefixes, largest noisy count first, whose blocks fit.
  one = np.array([packed_bits(m, e) for m in unique.tolist()], dtype=np.int64)
  kept = int(np.searchsorted(np.cumsum(one[inverse]), 8 * allowance,
                             side="right"))
  if not kept:
    return 0, 0
  counts = np.bincount(inverse[:kept], minlength=unique.size)
  best = 1
  most = (left_symbols if r or plan.first_chars is None
          else min(plan.first_chars, left_symbols))
  for k in range(2, most + 1):
    e, _ = plan.extensions(k, prefix_length)
    if math.ceil(_packed_total(unique, counts, e) / 8) > allowance:
      break
    best = k
  return best, kept


@dataclasses.dataclass(frozen=True)
class PlanChoices:
  """The plan's free choices (docs/noisy-trie.md).

  Attributes:
    first_multiplier: m_0, the first round's sigma over the others'.
    first_chars: k_0, the first round's characters.
    prefix_share: the prefix threshold's rate times A + 1.
    rounds: R.
    sized_first_round: the first round's bytes are exactly its k_0
      vector's (the prior rule); else at most ``FIRST_ROUND_SHARE`` of the
      run's and its even share (the fixed rule).
    verify: the last of the R rounds verifies the words the others
      discovered (the verified rule).
    discovery_multiplier: with ``verify``, every discovery round's sigma
      over the verification round's (the first's times m_0 besides).
  """

  first_multiplier: float
  first_chars: int
  prefix_share: float
  rounds: int
  sized_first_round: bool = False
  verify: bool = False
  discovery_multiplier: float = 1.0


@dataclasses.dataclass(frozen=True)
class _Declared:
  """The public values a plan is computed from."""

  n: int
  max_length: int
  alphabet_size: int
  epsilon: float
  delta: float
  budget: UploadBudget
  zipf_exponent: float
  false_words: float
  one_word: bool
  replace_one: bool = False

  def first_bytes(self, chars: int) -> int:
    """The first round's bytes at ``chars`` characters and n's bits per
    count (the fixed rule's k_0)."""
    e, _ = extensions(self.alphabet_size, chars, self.max_length, 0)
    return math.ceil(e * bits_for(self.n) / 8)

  def first_chars(self, share: float) -> list[int]:
    """The k whose first-round vector (n's bits) fits ``share`` of the
    run's bytes and the per-round cap."""
    cap = share * self.budget.bytes_per_run / self.budget.rate
    if self.budget.bytes_per_round is not None:
      cap = min(cap, self.budget.bytes_per_round)
    return [k for k in range(1, self.max_length + 2)
            if self.first_bytes(k) <= cap]


def plan(population_size: int, max_length: int, alphabet_size: int,
         epsilon: float, delta: float, *,
         budget: UploadBudget = UploadBudget(), zipf_exponent: float = 1.0,
         false_words: float = DEFAULT_FALSE_WORDS,
         one_word: bool = True, rule: str = VERIFIED,
         adapt_rates: bool = False, replace_one: bool = False,
         noise_law: str = GAUSSIAN,
         discovery_multiplier: float | None = None) -> NoisyPlan:
  """The plan for a declared n, L, A, ``(epsilon, delta)`` and the
  budget, before any data is read (module docstring; docs/noisy-trie.md).

  ``rule="verified"`` (the default): discover, then verify
  (:func:`verified_choices`). ``rule="fixed"``: the constants' rule
  without a verification round (:func:`fixed_choices`).
  ``rule="prior"``: the choices with the most true words on the public
  prior of :mod:`triehh.theory.noisy_prior` at these values
  (:func:`prior_choices`). Either way sigma is the smallest base meeting
  the target over the R rounds (:func:`triehh.theory.noisy_trie.
  smallest_sigma`, checked on the accountant's finer grid), words pass at
  ``false_words`` per run in expectation, prefixes at ``prefix_share /
  (A + 1)``. ``adapt_rates`` (with the budget's q < 1): the rounds'
  rates adapt to the frontier, accounted at one Renyi order (module
  docstring). ``replace_one``: sigma meets the target for ``REPLACE_ONE``
  too (adapted rates: at the swap's divergence, every option's too).
  ``noise_law="laplace"``: the server's discrete Laplace, its base scale
  the smallest whose rounds' pure epsilons sum to the target (the fixed
  and verified rules, rates not adapted). ``discovery_multiplier`` (the
  verified rule; None: ``DISCOVERY_MULTIPLIER``, the Laplace's
  ``LAPLACE_DISCOVERY_MULTIPLIER``): the discovery rounds' noise over the
  verification round's.
  """
  n = limits.check_users("population_size", population_size)
  validation.check_int("max_length", max_length)
  validation.check_int("alphabet_size", alphabet_size)
  validation.check_positive("epsilon", epsilon)
  limits.check_delta("delta", delta)
  validation.check_positive("zipf_exponent", zipf_exponent)
  validation.check_positive("false_words", false_words)
  if rule not in RULES:
    raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
  if noise_law not in NOISE_LAWS:
    raise ValueError(f"noise_law must be one of {NOISE_LAWS}, got "
                     f"{noise_law!r}")
  if noise_law == LAPLACE and (rule == PRIOR or adapt_rates):
    raise ValueError("noise_law='laplace' plans the fixed and verified "
                     "rules at one rate: the prior rule's score and "
                     "adapted rates are the discrete Gaussian's")
  declared = _Declared(n, max_length, alphabet_size, float(epsilon),
                       float(delta), budget, float(zipf_exponent),
                       float(false_words), bool(one_word), bool(replace_one))
  choices = _with_multiplier(
      {VERIFIED: verified_choices, FIXED: fixed_choices,
       PRIOR: prior_choices}[rule](declared), noise_law,
      discovery_multiplier)
  return build(declared, choices, adapt_rates=adapt_rates,
               noise_law=noise_law)


def _with_multiplier(choices: PlanChoices, noise_law: str,
                     discovery_multiplier: float | None) -> PlanChoices:
  """The verified rule's ``choices`` at the discovery multiplier asked for
  (None: the law's constant, :func:`plan`); other rules' unchanged, and
  refuse one."""
  if not choices.verify:
    if discovery_multiplier is not None:
      raise ValueError("discovery_multiplier is the verified rule's; the "
                       "other rules have no discovery rounds")
    return choices
  if discovery_multiplier is None:
    discovery_multiplier = (LAPLACE_DISCOVERY_MULTIPLIER
                            if noise_law == LAPLACE
                            else choices.discovery_multiplier)
  m = validation.check_positive("discovery_multiplier", discovery_multiplier)
  return dataclasses.replace(choices, discovery_multiplier=m)


def fixed_choices(declared: _Declared) -> PlanChoices:
  """The fixed rule:

  1. k_0: the most characters whose first-round vector (n's bits per
     coordinate) fits ``FIRST_ROUND_SHARE`` of the run's bytes.
  2. R = L + 1 - k_0: the rounds that reach every length of word if
     every round after the first can afford one character only (the
     worst case): rounds of one character up to L - 1 symbols, then the
     last two symbols in one round, whose A + 1 extensions (a letter and
     ``$``, or ``$``) cost what one character's do. A run whose frontier
     allows more characters stops early.
  3. m_0 = ``FIRST_MULTIPLIER`` when the public prior is a Zipf law of
     exponent ``zipf_exponent >= 1`` (the first round's prefixes are
     shared by its head), else 1.
  4. Prefixes at ``PREFIX_SHARE / (A + 1)``.
  """
  fits = declared.first_chars(FIRST_ROUND_SHARE)
  if not fits:
    budget = declared.budget
    raise ValueError(
        f"an upload budget of {budget.bytes_per_run:,} bytes per run "
        f"(bytes_per_round={budget.bytes_per_round}) cannot hold one "
        f"character's {declared.alphabet_size + 1} counts of "
        f"{bits_for(declared.n)} bits in the first round: raise the budget")
  k0 = max(fits)
  rounds = max(declared.max_length + 1 - k0, 1)
  m0 = (FIRST_MULTIPLIER if declared.zipf_exponent >= 1.0 and rounds > 1
        else 1.0)
  return PlanChoices(m0, k0, PREFIX_SHARE, rounds)


def verified_choices(declared: _Declared) -> PlanChoices:
  """Discover, then verify (docs/noisy-trie.md): the fixed rule's k_0, its
  R_d = L + 1 - k_0 rounds and m_0 for discovery, each discovery round's
  sigma ``DISCOVERY_MULTIPLIER`` times the verification round's, every
  discovery candidate at ``DISCOVERY_PREFIX_SHARE / (A + 1)``; then one
  verification round: R = R_d + 1 rounds accounted."""
  fixed = fixed_choices(declared)
  return dataclasses.replace(
      fixed, rounds=fixed.rounds + 1, prefix_share=DISCOVERY_PREFIX_SHARE,
      verify=True, discovery_multiplier=DISCOVERY_MULTIPLIER)


def _multipliers(choices: PlanChoices) -> tuple[float, ...]:
  """m_r of the rounds (1 past them): the first round's m_0 alone, or,
  discover then verify, every discovery round's multiplier (the first's
  times m_0), the verification round's 1."""
  rounds = choices.rounds
  if choices.verify:
    m = choices.discovery_multiplier
    return ((choices.first_multiplier * m,) + (m,) * (rounds - 2)
            if rounds > 1 else ())
  return ((choices.first_multiplier,)
          if choices.first_multiplier != 1.0 and rounds > 1 else ())


def build(declared: _Declared, choices: PlanChoices,
          sigma: float | None = None, *,
          adapt_rates: bool = False, noise_law: str = GAUSSIAN) -> NoisyPlan:
  """The plan of ``choices``; sigma (None: the smallest meeting the
  target, on the accountant's finer grid). ``adapt_rates`` (q < 1): the
  rates adapt to the frontier, sigma and the order from
  :func:`renyi_sigma` (a sigma given is kept, its best order taken).
  ``noise_law="laplace"``: sigma is the discrete Laplace's base scale
  (:func:`triehh.theory.discrete_laplace.smallest_scale`)."""
  rounds = choices.rounds
  multipliers = _multipliers(choices)
  q = declared.budget.rate
  order = None
  if noise_law == LAPLACE and sigma is None:
    sigma = discrete_laplace.smallest_scale(
        [multipliers[r] if r < len(multipliers) else 1.0
         for r in range(rounds)], declared.epsilon, q, declared.replace_one)
  if adapt_rates and q >= 1.0:
    raise ValueError("adapt_rates needs a sampling rate below 1: at q = 1 "
                     "no round can take a larger one")
  if adapt_rates:
    sigma, order = renyi_sigma(declared.epsilon, declared.delta,
                               multipliers, rounds, q, sigma,
                               replace_one=declared.replace_one)
  elif sigma is None:
    sigma = noisy_trie.smallest_sigma(rounds, declared.epsilon,
                                      declared.delta, sampling_rate=q,
                                      noise_multipliers=multipliers,
                                      replace_one=declared.replace_one)
    while discrete_gaussian.epsilon(
        [sigma * (multipliers[r] if r < len(multipliers) else 1.0)
         for r in range(rounds)], q, declared.delta,
        noisy_trie.DEFAULT_DISCRETIZATION,
        declared.replace_one) > declared.epsilon:
      sigma *= 1.001
  coordinates = 8 * declared.budget.bytes_per_run
  built = NoisyPlan(
      sigma=sigma, num_levels=rounds, noise_multipliers=multipliers,
      word_false_positive_rate=min(declared.false_words / coordinates, 0.5),
      prefix_false_positive_rate=(choices.prefix_share
                                  / (declared.alphabet_size + 1)),
      budget=declared.budget, population_size=declared.n,
      max_length=declared.max_length,
      alphabet_size=declared.alphabet_size, one_word=declared.one_word,
      delta=declared.delta, false_words=declared.false_words,
      first_chars=choices.first_chars,
      verify=choices.verify, sampling_rate=q,
      renyi_order=order, replace_one=declared.replace_one,
      noise_law=noise_law)
  if not choices.sized_first_round:
    return built
  # The prior rule: the first round is its k_0 vector at the root's modulus.
  return dataclasses.replace(built, first_round_bytes=built.round_bytes(
      [built.cap_modulus(None, 0)], choices.first_chars, 0))


# Rates adapted to the frontier: each larger rate is this factor above the
# one below it.
RATE_STEP = math.sqrt(2.0)


def rate_menu(sampling_rate: float) -> tuple[float, ...]:
  """The rates above q a round may take when rates adapt, largest first:
  ``q RATE_STEP^j`` below 1 (j >= 1), and 1; empty at q = 1."""
  q = float(sampling_rate)
  rates, j = [], 1
  while q * RATE_STEP**j < 1.0 - 1e-12:
    rates.append(q * RATE_STEP**j)
    j += 1
  return tuple([1.0] + rates[::-1]) if q < 1.0 else ()


@functools.lru_cache(maxsize=4096)
def raised_sigma(sigma: float, sampling_rate: float, rate: float,
                 order: int, replace_one: bool = False) -> float:
  """The least sigma' (to a relative 1e-6, rounded up) whose round at
  ``rate`` has a Renyi divergence at ``order`` at most that of a round of
  ``sigma`` at ``sampling_rate`` (both directions; ``replace_one``: the
  vote moving between two candidates; the divergence falls as sigma
  grows)."""
  target = sampled_renyi.round_divergence(sigma, sampling_rate, order,
                                          replace_one)

  def meets(s: float) -> bool:
    return sampled_renyi.round_divergence(s, rate, order,
                                          replace_one) <= target

  lo, hi = sigma, sigma
  while not meets(hi):
    lo, hi = hi, hi * 2.0
  if hi == lo:
    return hi
  return noise_search.log_bisect(meets, lo, hi, 1e-6)


def renyi_sigma(epsilon_target: float, delta: float,
                multipliers: tuple[float, ...], rounds: int, q: float,
                sigma: float | None = None, *,
                replace_one: bool = False) -> tuple[float, int]:
  """(sigma, alpha): the smallest base sigma (relative 1e-3, rounded up)
  whose R rounds at q meet ``(epsilon_target, delta)`` by their Renyi DP
  (``replace_one``: the swap's) at the best of
  :data:`triehh.theory.sampled_renyi.ORDERS`, and that order (``sigma``
  given: its best order)."""
  scales = [multipliers[r] if r < len(multipliers) else 1.0
            for r in range(rounds)]

  def curve(s: float) -> np.ndarray:
    return sampled_renyi.renyi_curve([s * m for m in scales], q,
                                     replace_one)

  def meets(s: float) -> bool:
    return sampled_renyi.epsilon_from_curve(curve(s), delta) <= (
        epsilon_target)

  if sigma is None:
    sigma = noise_search.smallest(meets, 1e-3, floor=noisy_trie.LEAST_SIGMA)
  return sigma, sampled_renyi.best_order(curve(sigma), delta)


# The prior rule's passes of coordinate ascent, at most.
PRIOR_PASSES = 3


@functools.lru_cache(maxsize=64)
def prior_choices(declared: _Declared) -> PlanChoices:
  """The prior rule: coordinate ascent over R, m_0, k_0 and the prefix
  share (in that order, from the fixed rule's values with a first round
  sized to its vector; a change kept only if it raises the mean true
  words of :func:`triehh.theory.noisy_prior.expected_true_words`), each
  candidate's sigma from one round's (a Gaussian composition: sigma =
  sigma_1 sqrt(1 / m_0^2 + R - 1)); at most ``PRIOR_PASSES`` passes.
  Remembered by its arguments."""
  prior = noisy_prior.population(declared.n, declared.max_length,
                                 declared.alphabet_size,
                                 declared.zipf_exponent)
  sigma_1 = noisy_trie.smallest_sigma(1, declared.epsilon, declared.delta,
                                      replace_one=declared.replace_one)
  scores = {}

  def score(c: PlanChoices) -> float:
    if c not in scores:
      sigma = sigma_1 * math.sqrt(1.0 / c.first_multiplier**2
                                  + c.rounds - 1)
      scores[c] = noisy_prior.expected_true_words(
          build(declared, c, sigma), prior)
    return scores[c]

  last = declared.max_length + 1
  options = dict(
      rounds=lambda c: range(1, last - c.first_chars + 1),
      first_multiplier=lambda c: MULTIPLIER_CHOICES,
      first_chars=lambda c: declared.first_chars(FIRST_ROUND_MAX_SHARE),
      prefix_share=lambda c: PREFIX_SHARE_CHOICES)
  best = dataclasses.replace(fixed_choices(declared), sized_first_round=True)
  for _ in range(PRIOR_PASSES):
    start = best
    for name, values in options.items():
      for value in values(best):
        c = dataclasses.replace(best, **{name: value})
        c = dataclasses.replace(c, rounds=max(min(
            c.rounds, last - c.first_chars), 1))
        if score(c) > score(best):
          best = c
    if best == start:
      break
  return best


def with_distributed(plan_: NoisyPlan, epsilon_target: float,
                     dropout: float = distributed_noise.DEFAULT_DROPOUT
                     ) -> NoisyPlan:
  """``plan_`` with Skellam shares in place of the server's noise
  (``docs/noisy-trie.md``, "Distributed noise, planned"): the same rounds,
  multipliers and false-positive rates; the shares of
  :func:`triehh.theory.distributed_noise.plan` meeting ``(epsilon_target,
  plan_.delta)`` over the R rounds with the rounds' multipliers, unsampled
  (the server sees who delivered, so sampling is not amplified), h from n,
  q, ``dropout`` and a share of delta. sigma becomes the accounted shares'
  largest base standard deviation, ``max_r sqrt(2 h s_r) / m_r``, for the
  blocks' moduli (utility only). A plan calibrated for ``REPLACE_ONE``
  gets shares accounted for it too. ValueError for a Laplace plan (the
  shares are Skellam, the Gaussian's kin)."""
  if plan_.laplace:
    raise ValueError("distributed noise is Skellam shares: plan it from a "
                     "discrete Gaussian plan, not noise_law='laplace'")
  multipliers = [plan_.round_sigma(r) / plan_.sigma
                 for r in range(plan_.num_levels)]
  shares = distributed_noise.plan(
      plan_.population_size, plan_.sampling_rate, epsilon_target,
      plan_.delta, multipliers, plan_.prefix_false_positive_rate,
      dropout=dropout, replace_one=plan_.replace_one)
  sigma = max(math.sqrt(2.0 * mean) / m
              for mean, m in zip(shares.accounted_means, multipliers))
  return dataclasses.replace(plan_, sigma=sigma, distributed=shares,
                             renyi_order=None)


def renyi_divergence(plan_: NoisyPlan) -> float:
  """The run's Renyi divergence at the plan's order, the bound every run
  meets when rates adapt: the planned rounds' at (sigma_r, q), summed
  (for ``REPLACE_ONE`` with ``plan_.replace_one``)."""
  return sum(sampled_renyi.round_divergence(s, plan_.sampling_rate,
                                            plan_.renyi_order,
                                            plan_.replace_one)
             for s in plan_.sigmas)


def epsilon(plan_: NoisyPlan, delta: float | None = None) -> float:
  """The run's epsilon at ``delta`` (None: the plan's): R discrete Gaussian
  rounds at the planned sigmas (:func:`triehh.theory.noisy_trie.epsilon`'s
  accountant); rates adapted, their Renyi divergence at the plan's order
  (:func:`renyi_divergence`, CKS20 Proposition 12); discrete Laplace,
  the rounds' pure epsilons summed at any delta
  (:func:`triehh.theory.discrete_laplace.epsilon`); with Skellam shares,
  their accountant's
  (:meth:`~triehh.theory.distributed_noise.DistributedNoise.epsilon`,
  ``delta_short`` included)."""
  delta = plan_.delta if delta is None else delta
  if plan_.laplace:  # pure: any delta
    return discrete_laplace.epsilon(plan_.sigmas, plan_.sampling_rate,
                                    plan_.replace_one)
  if plan_.distributed is not None:
    return plan_.distributed.epsilon(delta)
  if plan_.renyi_order is not None:
    limits.check_delta("delta", delta)
    return sampled_renyi.epsilon_at_order(
        plan_.renyi_order, renyi_divergence(plan_), delta)
  return noisy_trie.epsilon(
      noisy_trie.NoisyTrieParams(
          sigma=plan_.sigma, num_levels=plan_.num_levels,
          false_positive_rate=plan_.word_false_positive_rate,
          noise_multipliers=plan_.noise_multipliers,
          sampling_rate=plan_.sampling_rate,
          replace_one=plan_.replace_one), delta)
