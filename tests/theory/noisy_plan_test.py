"""Tests of triehh.theory.noisy_plan: the round plan, its budget, its
thresholds and its accountant, all computed before any data is read."""

import dataclasses
import functools
import inspect
import math

import dp_accounting
import numpy as np
import pytest
from scipy import special

from triehh.theory import noisy_plan
from triehh.theory import noisy_trie
from triehh.theory import sampled_renyi


@functools.cache
def _cached(**kwargs):
  return noisy_plan.plan(**kwargs)


def _plan(**kwargs):
  """The fixed rule's plan unless ``rule`` is given."""
  args = dict(population_size=10**6, max_length=10, alphabet_size=27,
              epsilon=4.0, delta=1e-12, rule="fixed")
  args.update(kwargs)
  return _cached(**args)


def _prior_plan(**kwargs):
  args = dict(population_size=10**5, epsilon=4.0, delta=1e-10,
              rule="prior")
  args.update(kwargs)
  return _plan(**args)


def _independent_epsilon(sigmas, delta: float) -> float:
  """epsilon at ``delta`` of discrete Gaussian rounds at ``sigmas``,
  composed by dp_accounting's PLD directly (no helper of the project)."""
  pld = None
  for sigma in sigmas:
    one = dp_accounting.pld.privacy_loss_distribution.\
        from_discrete_gaussian_mechanism(sigma, sensitivity=1,
                                         value_discretization_interval=1e-4)
    pld = one if pld is None else pld.compose(one)
  return pld.get_epsilon_for_delta(delta)


def test_the_plan_reads_no_population():
  # Nothing of the data is an argument: only declared, public values.
  names = set(inspect.signature(noisy_plan.plan).parameters)
  assert names == {"population_size", "max_length", "alphabet_size",
                   "epsilon", "delta", "budget", "zipf_exponent",
                   "false_words", "one_word", "rule", "adapt_rates",
                   "replace_one", "noise_law", "discovery_multiplier"}
  assert _plan() == noisy_plan.plan(10**6, 10, 27, 4.0, 1e-12,
                                    rule="fixed")  # them alone
  # The prior rule too: the same declared values, the same plan.
  assert _prior_plan() == noisy_plan.plan(10**5, 10, 27, 4.0, 1e-10,
                                          rule="prior")
  # Discover then verify is the default.
  assert _plan(rule="verified") == noisy_plan.plan(10**6, 10, 27, 4.0,
                                                   1e-12)


def test_the_plan_refuses_a_population_for_its_size():
  class Raising:
    def __getattr__(self, name):
      raise AssertionError(f"the plan read population.{name}")

  with pytest.raises((ValueError, TypeError)):
    _plan(population_size=Raising())


def test_first_round_fits_its_share_and_rounds_cover_every_length():
  plan = _plan()
  # k_0 = 3 at 20 bits: 20,440 counts of 20 bits = 51,100 bytes fit 1/8
  # of 1 MB; k = 4's 551,881 do not.
  assert noisy_plan.bits_for(10**6) == 20
  assert plan.round_bytes([2**20], 3, 0) == 51_100
  assert plan.round_bytes([2**20], 4, 0) > (noisy_plan.FIRST_ROUND_SHARE
                                            * 10**6)
  assert plan.num_levels == 10 + 1 - 3
  # The last two symbols cost one character's extensions.
  assert noisy_plan.extensions(27, 2, 10, 9)[0] == noisy_plan.extensions(
      27, 1, 10, 9)[0] == 28
  assert plan.noise_multipliers == (noisy_plan.FIRST_MULTIPLIER,)


def test_the_accountant_meets_the_target_and_agrees_with_an_independent_pld():
  delta = 1e-6
  plan = _plan(delta=delta, epsilon=2.0)
  eps = noisy_plan.epsilon(plan)
  assert eps <= 2.0
  # The same R discrete Gaussian rounds, composed by dp_accounting's PLD
  # directly (no helper of the project).
  independent = _independent_epsilon(plan.sigmas, delta)
  assert eps == pytest.approx(independent, rel=0.02)
  # ...and the zCDP bound (CKS20) is above both.
  rho = sum(1.0 / (2.0 * s * s) for s in plan.sigmas)
  assert eps <= rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
  # The smallest sigma: 1% less noise misses the target.
  tighter = [s * 0.99 for s in plan.sigmas]
  assert _independent_epsilon(tighter, delta) > 2.0 * 0.995


@pytest.mark.parametrize("frontier, k", [(1, 3), (10, 2), (2000, 1)])
def test_characters_shrink_as_the_frontier_grows(frontier, k):
  plan = _plan()
  moduli = [2**12] * frontier
  chars, kept = noisy_plan.chars_for_round(plan, moduli, 1, 3, 0)
  assert (chars, kept) == (k, frontier)
  allowance = plan.round_allowance(1, 0)
  assert plan.round_bytes(moduli, chars, 3) <= allowance
  assert plan.round_bytes(moduli, chars + 1, 3) > allowance


def test_a_frontier_too_large_keeps_its_first_prefixes_within_budget():
  plan = _plan()
  moduli = [2**12] * 100_000
  chars, kept = noisy_plan.chars_for_round(plan, moduli, 1, 3, 0)
  assert chars == 1 and 0 < kept < 100_000
  allowance = plan.round_allowance(1, 0)
  assert plan.round_bytes(moduli[:kept], 1, 3) <= allowance
  assert plan.round_bytes(moduli[:kept + 1], 1, 3) > allowance
  # A spent budget: nothing more runs.
  assert noisy_plan.chars_for_round(plan, moduli, 1, 3, 10**6) == (0, 0)


def test_a_partial_frontier_one_character_short_of_l_ends_its_words():
  # Prefixes of L - 1 = 9 characters have two symbols left: a letter and
  # "$", whose A + 1 extensions cost what one character's do. A frontier
  # too large for the round keeps its first prefixes and still takes both,
  # so its words of L letters can end (with one, none could).
  plan = _plan()
  allowance = plan.round_allowance(3, 0)
  moduli = [2**12] * 100_000
  chars, kept = noisy_plan.chars_for_round(plan, moduli, 3, 9, 0)
  assert (chars, 0 < kept < len(moduli)) == (2, True)
  assert plan.extensions(2, 9) == plan.extensions(1, 9)[:1] * 2
  assert plan.round_bytes(moduli[:kept], 2, 9) <= allowance
  assert plan.round_bytes(moduli[:kept + 1], 2, 9) > allowance
  # Elsewhere a partial frontier takes one character: two cost more.
  assert noisy_plan.chars_for_round(plan, moduli, 3, 8, 0)[0] == 1
  # And a frontier that fits takes both as before.
  assert noisy_plan.chars_for_round(plan, [2**12] * 10, 3, 9, 0) == (2, 10)


def test_later_discovery_words_share_their_blocks_rate_by_class():
  plan = _plan(rule="verified", noise_law="laplace")
  assert plan.discovery_words == noisy_plan.LATER_CLASSES
  prefix = plan.params(3, False).false_positive_rate
  last = plan.discovery_rounds - 1
  # The last round's 1,000 blocks, each a "$" and 27 words of a letter and
  # "$": each class together at the prefix rate times the blocks (as many
  # noise-only words as its "$"s at the prefix rate).
  assert plan.words_by_class(last) and not plan.words_by_class(0)
  assert plan.params(last, True, 1_000, 1_000) == plan.params(last, False)
  letter = plan.params(last, True, 27_000, 1_000).false_positive_rate
  assert letter * 27_000 <= prefix * 1_000 < 3 * letter * 27_000
  # The first round's one block keeps the rate per candidate.
  assert plan.params(0, True, 757, 1) == plan.params(0, False)
  # "block": all of a round's words share it, in every round; "candidate":
  # none do.
  every = dataclasses.replace(plan, discovery_words=noisy_plan.PER_BLOCK)
  assert not every.words_by_class(last)
  assert every.params(0, True, 757, 1).false_positive_rate < (
      plan.params(0, False).false_positive_rate / 100)
  later = dataclasses.replace(plan, discovery_words=noisy_plan.LATER_BLOCKS)
  assert later.params(0, True, 757, 1) == plan.params(0, False)
  assert later.params(last, True, 28_000, 1_000).false_positive_rate * (
      28_000) <= prefix * 1_000
  each = dataclasses.replace(plan, discovery_words=noisy_plan.PER_CANDIDATE)
  assert each.params(last, True, 28_000, 1_000) == each.params(last, False)
  # The verification round and the fixed rule are unchanged by it.
  r = plan.num_levels - 1
  assert not plan.words_by_class(r)
  assert plan.params(r, True, 5000, 10) == plan.params(r, True, 5000)
  fixed = _plan(noise_law="laplace")
  assert not fixed.words_by_class(2)
  assert fixed.params(2, True, 3300, 100) == fixed.params(2, True, 3300)
  with pytest.raises(ValueError, match="discovery_words"):
    dataclasses.replace(plan, discovery_words="each")


def test_discovery_margins_are_looser_where_a_wrap_releases_nothing():
  plan = _plan(rule="verified", noise_law="laplace")
  assert plan.discovery_wrap_tail == noisy_plan.DISCOVERY_WRAP_TAIL == 1e-4
  last = plan.num_levels - 1
  # Discovery rounds at ln(10^4) scales, the verification at ln(10^12).
  assert plan.round_wrap(2) == pytest.approx(math.log(1e4))
  assert plan.round_wrap(last) == pytest.approx(math.log(1e12))
  b = plan.round_sigma(2)
  assert plan.window_low(2) == -math.floor(math.log(1e4) * b)
  # A block below a count of 10: from -ln(10^4) b to 10 plus the two
  # rounds' noises' margin together, fewer values than at 10^-12.
  strict = dataclasses.replace(plan, discovery_wrap_tail=None)
  assert strict.round_wrap(2) == pytest.approx(math.log(1e12))
  top = 10 + noisy_plan.joint_margin("laplace", plan.round_sigma(1), b, 1e-4)
  assert plan.cap_modulus(10.0, 2) == math.floor(top) - plan.window_low(
      2) + 1
  assert plan.cap_modulus(10.0, 2) < strict.cap_modulus(10.0, 2)
  # The window holds the count's cap and the margins on both sides.
  assert plan.window_low(2) + plan.cap_modulus(10.0, 2) - 1 >= top - 1
  # Rules that release in every round, and Skellam shares, keep 10^-12.
  fixed = _plan(noise_law="laplace")
  assert fixed.round_wrap(2) == pytest.approx(math.log(1e12))
  shares = dataclasses.replace(plan, distributed=object())
  assert shares.round_wrap(2) == pytest.approx(math.log(1e12))
  with pytest.raises(ValueError, match="discovery_wrap_tail"):
    dataclasses.replace(plan, discovery_wrap_tail=0.0)


def test_the_first_round_takes_at_most_the_plans_first_characters():
  # R was fixed for k_0 characters in the first round: a vector that fits
  # more (here a root of one bit a count, far below n's) still takes k_0.
  plan = _plan()
  assert plan.first_chars == 3 and plan.num_levels == 10 + 1 - 3
  assert noisy_plan.chars_for_round(plan, [2], 0, 0, 0) == (3, 1)
  free = dataclasses.replace(plan, first_chars=None)
  assert noisy_plan.chars_for_round(free, [2], 0, 0, 0)[0] > 3
  # Later rounds are not held to it (a block of one bit a count).
  assert noisy_plan.chars_for_round(plan, [2], 1, 3, 0)[0] > 3


def test_the_per_round_cap_binds():
  plan = _plan(budget=noisy_plan.UploadBudget(10**6, bytes_per_round=5000))
  assert plan.round_allowance(3, 0) == 5000
  moduli = [2**20] * 10
  chars, kept = noisy_plan.chars_for_round(plan, moduli, 3, 3, 0)
  assert plan.round_bytes(moduli[:kept], chars, 3) <= 5000


def test_a_budget_too_small_for_one_character_is_one_line():
  with pytest.raises(ValueError, match="raise the budget"):
    _plan(budget=noisy_plan.UploadBudget(100))


def test_word_thresholds_bound_the_expected_false_words():
  plan = _plan()
  # Round r's rate times its word candidates, summed over the R rounds,
  # is the stated false_words whatever the candidates.
  total = 0.0
  for r, num in enumerate([757, 1400, 3300, 3800, 3300, 2600, 1800, 1100,
                           900]):
    params = plan.params(r, True, num)
    assert params.false_positive_rate <= plan.false_words / (
        plan.num_levels * num)
    total += params.false_positive_rate * num
  assert total <= plan.false_words
  # Prefixes: a looser threshold, the same sigma.
  prefix, word = plan.params(2, False), plan.params(2, True, 3300)
  assert prefix.sigma == word.sigma
  assert prefix.threshold < word.threshold
  assert prefix.false_positive_rate <= noisy_plan.PREFIX_SHARE / 28


def _window(low_margin: float, top: float) -> int:
  """The values from -floor(low_margin) to floor(top)."""
  return math.floor(top) + math.floor(low_margin) + 1


def test_one_word_caps_follow_the_parent_count():
  plan = _plan()
  first, later = plan.params(0, False).sigma, plan.params(1, False).sigma
  assert first == 2 * later  # the first round's multiplier
  # n = 10^6 and w sigma of noise on either side, w = 7.43 sigmas (a tail
  # of 1e-12 each).
  w = math.sqrt(2 * math.log(1e12))
  assert noisy_plan.WRAP_SIGMAS == pytest.approx(w)
  assert plan.cap_modulus(None, 0) == _window(w * first,
                                              10**6 + w * first)
  # From -w sigma_1 to 100 + w sqrt(sigma_0^2 + sigma_1^2) (the parent's
  # noise and this round's together): 100 + (1 + sqrt 5) w sigma_1.
  assert plan.cap_modulus(100.0, 1) == _window(
      w * later, 100 + w * math.hypot(first, later))
  # With the margins added (4 w sigma_1): 239 values, 8 bits unpacked.
  assert plan.cap_modulus(100.0, 1) < _window(
      w * later, 100 + w * first + w * later) == 239
  # The margins of a smaller tail: 10 sigmas at exp(-50).
  wider = dataclasses.replace(plan, wrap_tail=math.exp(-50.0))
  assert wider.cap_modulus(100.0, 1) == _window(
      10 * later, 100 + 10 * math.hypot(first, later))
  # Sampled, the cap is the sampled count's and the margins are added.
  half = dataclasses.replace(plan, sampling_rate=0.5)
  assert half.cap_modulus(100.0, 1) == _window(
      w * later, half._caps(np.array([100 + w * first]))[0] + w * later)
  several = _plan(one_word=False)
  assert several.cap_modulus(100.0, 1) == _window(w * later,
                                                  10**6 + w * later)
  # Skellam shares: the power of two holding the same (8 bits here).
  shares = dataclasses.replace(plan, distributed=object())
  assert shares.cap_modulus(100.0, 1) == 2**noisy_plan.bits_for(
      100 + w * first + 2 * w * later) == 2**8


@pytest.mark.parametrize("a, b, tail", [(2.625, 2.625, 1e-4),
                                         (5.25, 2.625, 1e-4),
                                         (2.625, 0.875, 1e-12)])
def test_the_joint_margin_is_the_least_the_summed_laplaces_pass(a, b, tail):
  # P[X + Y >= t] summed here term by term from the two discrete Laplace
  # pmfs (closed-form tails of X, not the library's): the margin is the
  # least integer t at which it is at most the tail, and well inside the
  # two margins added.
  def tail_ge(scale, m):  # P[X >= m], X discrete Laplace of that scale
    p = math.exp(-1.0 / scale)
    return p**m / (1 + p) if m >= 1 else 1 - p**(1 - m) / (1 + p)

  def passes(t):
    p = math.exp(-1.0 / b)
    return sum((1 - p) / (1 + p) * p**abs(y) * tail_ge(a, t - y)
               for y in range(-int(80 * b) - 20, int(80 * b) + 21))

  t = noisy_plan.joint_margin("laplace", a, b, tail)
  assert t == int(t)
  assert passes(int(t)) <= tail < passes(int(t) - 1)
  assert t < noisy_plan.wrap_margin("laplace", tail) * (a + b)
  # The Gaussian's: sqrt(a^2 + b^2) of the subgaussian margin.
  assert noisy_plan.joint_margin("gaussian", 3.0, 4.0, 1e-4) == (
      pytest.approx(5.0 * noisy_plan.wrap_margin("gaussian", 1e-4)))


def test_a_block_packs_its_coordinates_into_ring_elements():
  # A power of two packs to its bits per coordinate.
  assert noisy_plan.packed_bits(2**7, 39) == 39 * 7
  assert noisy_plan.packed_bits(2**20, 1483) == 1483 * 20
  # 35 values: 12 digits an element (35^12 < 2^64 < 35^13), 62 bits each,
  # and the last 3 in 16: 202 bits, against 234 at 6 bits each.
  assert 35**12 < 2**64 < 35**13
  assert noisy_plan.packed_bits(35, 39) == 3 * 62 + 16 == 202
  assert noisy_plan.packed_bits(35, 39) >= 39 * math.log2(35)
  assert noisy_plan.packed_bits(35, 0) == 0
  with pytest.raises(ValueError, match="modulus"):
    noisy_plan.packed_bits(1, 3)
  # Summing packed one-hot vectors modulo 35^12 and reading the digits
  # back gives each coordinate's sum, while every sum is below 35.
  rng = np.random.default_rng(0)
  votes = rng.integers(0, 12, size=34)
  packed = [35**int(j) for j in votes]
  total = sum(packed) % 35**12
  digits = [(total // 35**j) % 35 for j in range(12)]
  assert digits == np.bincount(votes, minlength=12).tolist()
  # A round's bytes: its blocks' packed bits, rounded up once.
  plan = _plan()  # A = 27: 28 extensions of one character
  assert plan.round_bytes([35, 35, 2**7], 1, 3) == math.ceil(
      (2 * noisy_plan.packed_bits(35, 28) + 28 * 7) / 8)


def test_margins_and_verification_split_are_checked_by_name():
  plan = _plan()
  with pytest.raises(ValueError, match="wrap_tail"):
    dataclasses.replace(plan, wrap_tail=0.0)
  with pytest.raises(ValueError, match="verification_split"):
    dataclasses.replace(plan, verification_split="uniform")
  # The Laplace's margin at a tail t is ln(1/t) scales, the Gaussian's
  # sqrt(2 ln(1/t)) sigmas.
  assert noisy_plan.wrap_margin("laplace", 1e-6) == pytest.approx(
      6 * math.log(10))
  assert noisy_plan.wrap_margin("gaussian", math.exp(-8)) == pytest.approx(4)


def test_same_accountant_as_the_noisy_trie():
  plan = _plan(delta=1e-8, epsilon=1.0)
  params = noisy_trie.NoisyTrieParams(
      sigma=plan.sigma, num_levels=plan.num_levels, false_positive_rate=1e-5,
      noise_multipliers=plan.noise_multipliers)
  assert noisy_plan.epsilon(plan) == pytest.approx(
      noisy_trie.epsilon(params, 1e-8), rel=1e-9)


def test_an_unknown_rule_is_named():
  with pytest.raises(ValueError, match="rule must be one of"):
    noisy_plan.plan(10**5, 10, 27, 4.0, 1e-10, rule="tuned")


def test_block_moduli_are_the_caps_of_each_count():
  for one_word in (True, False):
    plan = _plan(one_word=one_word)
    counts = [None, -40.0, 0.0, 3.5, 255.0, 1e5, 999_990.0, 2e6]
    for r in range(plan.num_levels):
      assert plan.block_moduli(counts, r) == [plan.cap_modulus(c, r)
                                              for c in counts]


def test_the_prior_rule_chooses_within_its_options_and_budget():
  plan = _prior_plan()
  declared = noisy_plan._Declared(10**5, 10, 27, 4.0, 1e-10,
                                  noisy_plan.UploadBudget(), 1.0, 1.0, True)
  choices = noisy_plan.prior_choices(declared)
  assert choices.first_multiplier in noisy_plan.MULTIPLIER_CHOICES
  assert choices.prefix_share in noisy_plan.PREFIX_SHARE_CHOICES
  assert 1 <= choices.rounds <= 10 + 1 - choices.first_chars
  assert choices.sized_first_round
  assert plan.num_levels == choices.rounds
  assert plan.noise_multipliers == (
      (choices.first_multiplier,) if choices.first_multiplier != 1.0 else ())
  assert plan.prefix_false_positive_rate == pytest.approx(
      choices.prefix_share / 28)
  # The first round is its k_0 vector at its caps' bits, within half the
  # run's bytes, and the engine's round 0 affords exactly k_0.
  root = plan.cap_modulus(None, 0)
  assert plan.first_round_bytes == plan.round_bytes([root],
                                                    choices.first_chars, 0)
  assert plan.first_round_bytes <= noisy_plan.FIRST_ROUND_MAX_SHARE * 10**6
  assert noisy_plan.chars_for_round(plan, [root], 0, 0, 0) == (
      choices.first_chars, 1)
  # Remembered by its arguments: no second search.
  before = noisy_plan.prior_choices.cache_info().hits
  noisy_plan.prior_choices(declared)
  assert noisy_plan.prior_choices.cache_info().hits == before + 1


def test_the_prior_rule_does_no_worse_than_the_fixed_one_on_its_prior():
  # Coordinate ascent from the fixed rule's values keeps a change only if
  # it raises the prior's true words (at sigma from one round's); at the
  # plans' exact sigmas the fixed rule does not score above the chosen.
  from triehh.theory import noisy_prior  # pylint: disable=g-import-not-at-top
  declared = noisy_plan._Declared(10**5, 10, 27, 1.0, 1e-10,
                                  noisy_plan.UploadBudget(), 1.0, 1.0, True)
  prior = noisy_prior.population(10**5, 10, 27)
  chosen = noisy_prior.expected_true_words(
      noisy_plan.build(declared, noisy_plan.prior_choices(declared)), prior)
  fixed = noisy_prior.expected_true_words(
      noisy_plan.build(declared, noisy_plan.fixed_choices(declared)), prior)
  assert chosen >= fixed > 0


def test_a_prior_plan_meets_its_target_by_an_independent_pld():
  plan = _prior_plan(epsilon=1.0)
  independent = _independent_epsilon(plan.sigmas, 1e-10)
  assert independent <= 1.0 * 1.01
  assert noisy_plan.epsilon(plan) <= 1.0
  assert noisy_plan.epsilon(plan) == pytest.approx(independent, rel=0.02)


# ---- discover, then verify (the default rule) -------------------------------


def test_the_verified_rule_discovers_in_the_fixed_rounds_then_verifies():
  fixed, plan = _plan(), _plan(rule="verified")
  assert plan.verify and not fixed.verify
  assert plan.num_levels == fixed.num_levels + 1
  assert plan.discovery_rounds == fixed.num_levels
  m, m0 = noisy_plan.DISCOVERY_MULTIPLIER, noisy_plan.FIRST_MULTIPLIER
  assert plan.noise_multipliers == (m0 * m,) + (m,) * (fixed.num_levels - 1)
  sigmas = plan.sigmas
  assert sigmas[-1] == plan.sigma and sigmas[1] == pytest.approx(m * plan.sigma)
  # Less noise where words are decided than the fixed rule's every round.
  assert sigmas[-1] < 0.7 * fixed.sigmas[-1]
  # Discovery: words and prefixes at the loose rate, nothing released.
  loose = noisy_plan.DISCOVERY_PREFIX_SHARE / 28
  for r in range(plan.discovery_rounds):
    word, prefix = plan.params(r, True, 5000), plan.params(r, False)
    assert word == prefix  # one threshold: the words are not released
    assert loose / 2 < prefix.false_positive_rate <= loose
  # Verification: false_words over its candidates (at most).
  last = plan.num_levels - 1
  assert (0.2 / 5000 < plan.params(last, True, 5000).false_positive_rate
          <= 1.0 / 5000)
  assert plan.params(last, True, 5000).threshold > plan.params(
      0, True, 5000).threshold / noisy_plan.FIRST_MULTIPLIER / m


def test_the_laplace_verified_rule_has_its_own_discovery_multiplier():
  gaussian = _plan(rule="verified")
  laplace = _plan(rule="verified", noise_law="laplace")
  m, m0 = (noisy_plan.LAPLACE_DISCOVERY_MULTIPLIER,
           noisy_plan.FIRST_MULTIPLIER)
  assert m != noisy_plan.DISCOVERY_MULTIPLIER
  rounds = laplace.num_levels - 1
  assert laplace.noise_multipliers == (m0 * m,) + (m,) * (rounds - 1)
  assert gaussian.noise_multipliers[1] == noisy_plan.DISCOVERY_MULTIPLIER
  asked = _plan(rule="verified", discovery_multiplier=2.5)
  assert asked.noise_multipliers[1] == 2.5
  with pytest.raises(ValueError, match="discovery_multiplier"):
    _plan(rule="verified", discovery_multiplier=-1.0)
  with pytest.raises(ValueError, match="the verified rule's"):
    _plan(rule="fixed", discovery_multiplier=2.5)


@pytest.mark.parametrize("share", [None, 0.01])
def test_the_verified_rule_keeps_its_reserve_for_the_last_round(share):
  plan = _plan(rule="verified")
  assert plan.verify_reserve == noisy_plan.VERIFY_RESERVE
  if share is not None:
    plan = dataclasses.replace(plan, verify_reserve=share)
  reserve = math.ceil(plan.verify_reserve * plan.budget.bytes_per_run)
  spent = 0
  for r in range(plan.discovery_rounds):
    spent += plan.round_allowance(r, spent)  # every round spends it all
  assert plan.budget.bytes_per_run - reserve - 8 <= spent <= (
      plan.budget.bytes_per_run - reserve)
  assert plan.round_allowance(plan.num_levels - 1, spent) == (
      plan.budget.bytes_per_run - spent)
  with pytest.raises(ValueError, match="verify_reserve"):
    dataclasses.replace(plan, verify_reserve=0.0)


def test_the_verified_plan_meets_its_target_by_an_independent_pld():
  plan = _plan(rule="verified", epsilon=1.0, delta=1e-10,
               population_size=10**5)
  assert noisy_plan.epsilon(plan) <= 1.0
  independent = _independent_epsilon(plan.sigmas, 1e-10)
  assert independent == pytest.approx(noisy_plan.epsilon(plan), rel=0.02)
  assert independent <= 1.0 * 1.005


# ---- sampling: the budget in expectation ------------------------------------


def test_sampling_lowers_sigma_and_is_accounted_with_amplification():
  budget = noisy_plan.UploadBudget(10**6, sampling_rate=0.5)
  full = _plan(rule="verified", population_size=10**5, delta=1e-10)
  half = _plan(rule="verified", population_size=10**5, delta=1e-10,
               budget=budget)
  assert half.sampling_rate == 0.5 and full.sampling_rate == 1.0
  assert half.sigma < 0.8 * full.sigma  # amplification by sampling
  eps = noisy_plan.epsilon(half)
  assert eps <= 4.0
  # dp_accounting's PLD of the same rounds, each Poisson-sampled at q.
  pld = None
  for sigma in half.sigmas:
    one = dp_accounting.pld.privacy_loss_distribution.\
        from_discrete_gaussian_mechanism(sigma, sensitivity=1,
                                         value_discretization_interval=1e-3,
                                         sampling_prob=0.5)
    pld = one if pld is None else pld.compose(one)
  assert pld.get_epsilon_for_delta(1e-10) == pytest.approx(eps, rel=0.03)


def test_sampling_lets_a_round_grow_by_one_over_q():
  full = _plan(rule="verified")
  half = _plan(rule="verified",
               budget=noisy_plan.UploadBudget(10**6, sampling_rate=0.5))
  for r, spent in ((1, 60_000), (4, 400_000)):
    assert half.round_allowance(r, spent) in (
        2 * full.round_allowance(r, spent),
        2 * full.round_allowance(r, spent) + 1)
  capped = _plan(rule="verified", budget=noisy_plan.UploadBudget(
      10**6, bytes_per_round=150_000, sampling_rate=0.25))
  assert capped.round_allowance(1, 60_000) == 150_000
  # The first round's characters fit its share of the expected bytes.
  assert half.round_bytes([half.cap_modulus(None, 0)], 3, 0) <= (
      half.round_allowance(0, 0))


# ---- rates adapted to the frontier ---------------------------------------


def _divergence_summed(sigma: float, q: float, order: int) -> float:
  """D_order of the round's pair, the larger direction: M = (1 - q) P + q
  P(. - 1) against P = N_Z(0, sigma^2), summed from the pmfs in log space
  on a wide support (not the library's closed form)."""
  width = int(40 * sigma) + 3 * order + 50
  x = np.arange(-width, width + 2, dtype=np.float64)
  log_p = -x * x / (2 * sigma**2)
  log_p -= special.logsumexp(log_p)
  log_shift = -(x - 1) ** 2 / (2 * sigma**2)
  log_shift -= special.logsumexp(log_shift)
  log_m = (log_shift if q >= 1 else
           np.logaddexp(math.log1p(-q) + log_p, math.log(q) + log_shift))
  return max(special.logsumexp(order * a + (1 - order) * b) / (order - 1)
             for a, b in ((log_m, log_p), (log_p, log_m)))


def test_rates_adapt_on_a_grid_above_q():
  assert noisy_plan.rate_menu(0.25) == pytest.approx(
      (1.0, 2**-0.5, 0.5, 2**-1.5))
  assert noisy_plan.rate_menu(0.6) == pytest.approx((1.0, 0.6 * 2**0.5))
  assert noisy_plan.rate_menu(1.0) == ()


@pytest.mark.parametrize("sigma,q,rate,order", [
    (2.0, 0.25, 0.5, 12), (3.0, 0.25, 1.0, 12), (1.5, 0.125, 2**-1.5, 24),
    (4.0, 0.5, 1.0, 6)])
def test_a_raised_round_is_no_more_divergent_at_the_order(sigma, q, rate,
                                                          order):
  """sigma' at the larger rate has at most the planned round's divergence
  at the order, summed from the pmfs, and is the least such (1 % less
  exceeds it)."""
  raised = noisy_plan.raised_sigma(sigma, q, rate, order)
  planned = _divergence_summed(sigma, q, order)
  assert raised > sigma
  assert _divergence_summed(raised, rate, order) <= planned * (1 + 1e-6)
  assert _divergence_summed(0.99 * raised, rate, order) > planned


def test_an_adapted_plan_is_accounted_at_its_order():
  """The label's epsilon is CKS20 Proposition 12 (written here) at the
  plan's order of the rounds' divergence summed from the pmfs; it meets
  the target and is near it; every rate a round may take is within its
  planned divergence there. Rates cannot adapt at q = 1."""
  delta = 1e-12
  plan = noisy_plan.plan(10**6, 10, 27, 4.0, delta, budget=noisy_plan.UploadBudget(
      sampling_rate=0.25), rule="fixed", adapt_rates=True)
  order = plan.renyi_order
  total = sum(_divergence_summed(s, 0.25, order) for s in plan.sigmas)
  written = total + (math.log(1 / delta) + (order - 1) * math.log1p(
      -1 / order) - math.log(order)) / (order - 1)
  eps = noisy_plan.epsilon(plan)
  assert eps == pytest.approx(written, rel=1e-6)
  assert 3.95 < eps <= 4.0
  for r in range(plan.num_levels):
    options = plan.rate_options(r)
    assert [o.sampling_rate for o in options] == list(
        noisy_plan.rate_menu(0.25))
    for option in options:
      assert _divergence_summed(option.round_sigma(r), option.sampling_rate,
                                order) <= _divergence_summed(
                                    plan.round_sigma(r), 0.25, order) * (
                                        1 + 1e-6)
  with pytest.raises(ValueError, match="sampling rate below 1"):
    noisy_plan.plan(10**6, 10, 27, 4.0, delta, rule="fixed",
                    adapt_rates=True)


def test_replace_one_plans_meet_the_swaps_divergence_and_refuse_shares():
  """REPLACE_ONE: at a fixed rate the plan's epsilon is the swap's, larger
  than adding or removing's at the same sigma; with rates adapted, every
  rate option's swap divergence at the plan's order is at most its
  planned round's (summed from the pmfs in sampled_renyi's tests), and
  the run's epsilon from their sum meets the target. Skellam shares are
  planned for it too."""
  budget = noisy_plan.UploadBudget(100_000, sampling_rate=0.5)
  adapted = noisy_plan.plan(10_000, 6, 10, 4.0, 1e-8, budget=budget,
                            adapt_rates=True, replace_one=True)
  assert adapted.replace_one and adapted.renyi_order is not None
  assert noisy_plan.epsilon(adapted) <= 4.0
  order = adapted.renyi_order
  for r in range(adapted.discovery_rounds):
    planned = sampled_renyi.round_divergence(
        adapted.round_sigma(r), 0.5, order, replace_one=True)
    options = adapted.rate_options(r)
    assert options
    for option in options:
      assert sampled_renyi.round_divergence(
          option.round_sigma(r), option.sampling_rate, order,
          replace_one=True) <= planned * (1 + 1e-9)
  swap = noisy_plan.plan(10_000, 6, 10, 4.0, 1e-8, budget=budget,
                         replace_one=True)
  plain = noisy_plan.plan(10_000, 6, 10, 4.0, 1e-8, budget=budget)
  assert swap.replace_one and swap.sigma > plain.sigma
  assert noisy_plan.epsilon(swap) <= 4.0
  assert dataclasses.replace(swap, replace_one=False).sigma == swap.sigma
  assert noisy_plan.epsilon(dataclasses.replace(
      swap, replace_one=False)) < 0.9 * noisy_plan.epsilon(swap)
  shares = noisy_plan.with_distributed(swap, 4.0)
  assert shares.distributed.replace_one
  assert shares.distributed.epsilon(swap.delta) <= 4.0


# ---- the noise's law: discrete Laplace --------------------------------------


def test_a_laplace_plan_spends_its_epsilon_purely_by_a_closed_form():
  plan = _plan(rule="verified", noise_law="laplace")
  gaussian = _plan(rule="verified")
  assert plan.laplace and not gaussian.laplace
  # The same rounds, the Laplace's discovery multiplier; the scales' pure
  # epsilons add up.
  assert plan.num_levels == gaussian.num_levels
  ratio = (noisy_plan.LAPLACE_DISCOVERY_MULTIPLIER
           / noisy_plan.DISCOVERY_MULTIPLIER)
  assert [s / plan.sigma for s in plan.sigmas] == pytest.approx(
      [s / gaussian.sigma * (ratio if r < plan.num_levels - 1 else 1.0)
       for r, s in enumerate(gaussian.sigmas)])
  closed = sum(1.0 / b for b in plan.sigmas)
  assert noisy_plan.epsilon(plan) == pytest.approx(closed, rel=1e-12)
  assert closed <= 4.0 < sum(1.0 / (0.99 * b) for b in plan.sigmas)
  sampled = _plan(rule="verified", noise_law="laplace",
                  budget=noisy_plan.UploadBudget(sampling_rate=0.5))
  assert noisy_plan.epsilon(sampled) == pytest.approx(sum(
      math.log(1.0 + 0.5 * (math.exp(1.0 / b) - 1.0))
      for b in sampled.sigmas), rel=1e-12)
  assert sampled.sigma < plan.sigma


def test_a_laplace_rounds_threshold_and_margin_are_the_laplaces():
  plan = _plan(rule="verified", noise_law="laplace")
  r = plan.num_levels - 1
  params = plan.params(r, True, 5000)
  b = plan.round_sigma(r)
  p = math.exp(-1.0 / b)

  def tail(t):  # P[X >= t], t >= 1, the geometric series summed here
    return (1.0 - p) / (1.0 + p) * p**t / (1.0 - p)

  rate = plan.false_words / 5000
  assert tail(params.threshold) <= rate < tail(params.threshold - 1)
  assert params.false_positive_rate == pytest.approx(tail(params.threshold))
  # A block holds ln(1e12) = 27.6 scales of noise below (P[N >= 27.6 b]
  # <= 1e-12) and, above its parent's count, the two noises' margin.
  assert noisy_plan.WRAP_SCALES == pytest.approx(math.log(1e12))
  margin = math.log(1e12) * plan.round_sigma(r)
  assert plan.cap_modulus(50.0, r) == _window(
      margin, 50 + noisy_plan.joint_margin(
          "laplace", plan.round_sigma(r - 1), plan.round_sigma(r), 1e-12))


def test_what_laplace_cannot_plan_is_refused_by_name():
  with pytest.raises(ValueError, match="noise_law"):
    _plan(noise_law="cauchy")
  with pytest.raises(ValueError, match="prior"):
    _plan(rule="prior", noise_law="laplace")
  with pytest.raises(ValueError, match="adapted"):
    _plan(noise_law="laplace", adapt_rates=True,
          budget=noisy_plan.UploadBudget(sampling_rate=0.5))
  with pytest.raises(ValueError, match="Skellam"):
    noisy_plan.with_distributed(_plan(noise_law="laplace"), 4.0)
