"""Tests of the exact privacy audit of several words redrawn every round."""

import dataclasses
import itertools
import math

import numpy as np
import pytest

import triehh
from checks import audit as one_word
from checks import audit_bounds
from checks import audit_several_words as sw
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.discovery import discover as discover_lib

# Tiny bags: user 0 is the differing user; "ab" is the audited word.
BAGS = [{"ab": 1, "ba": 1}, {"ab": 1, "aa": 1}, {"ab": 2, "b": 1},
        {"a": 1, "ab": 1}]


def tiny_setup(n, theta, batch_size, max_length):
  """A setup outside Theorem 1's range (tiny n): its claim is made up."""
  return sw.Setup(n=n, theta=theta, batch_size=batch_size,
                  max_length=max_length, epsilon=1.0, delta=1e-3,
                  accounting="per_round", delta_one=1e-4)


def brute_force_depth_law(bags, user, word, theta, batch_size, levels):
  """The law of the depth of ``word``'s path, enumerating every sample and
  every word draw of every round (the user's bag emptied if ``user`` is
  given), with the trie built by the mechanism's own rules."""
  bags = [({} if i == user else dict(b)) for i, b in enumerate(bags)]
  seq = word + "$"
  subsets = list(itertools.combinations(range(len(bags)), batch_size))
  tries = {frozenset([""]): 1.0}  # the trie so far -> its probability
  for level in range(1, levels + 1):
    after = {}
    for trie, prob in tries.items():
      if not any(len(p) == level - 1 for p in trie):  # stopped
        after[trie] = after.get(trie, 0.0) + prob
        continue
      for subset in subsets:
        choices = [[(w + "$", c / sum(bags[v].values()))
                    for w, c in bags[v].items()] or [("", 1.0)]
                   for v in subset]
        for draw in itertools.product(*choices):
          votes = {}
          for s, _ in draw:
            if len(s) >= level and s[:level - 1] in trie:
              votes[s[:level]] = votes.get(s[:level], 0) + 1
          new = trie | {x for x, v in votes.items() if v >= theta}
          after[new] = after.get(new, 0.0) + prob / len(subsets) * math.prod(
              c for _, c in draw)
    tries = after
  law = np.zeros(levels + 1)
  for trie, prob in tries.items():
    law[max(d for d in range(len(seq) + 1) if seq[:d] in trie)] += prob
  return law


def test_exact_law_equals_brute_force_enumeration():
  setup = tiny_setup(len(BAGS), 2, 2, 2)
  pop = population_lib.Population.from_user_words(BAGS, max_length=2)
  law, law_prime, share = sw.path_laws(sw.PrefixShares(pop), setup, "ab", 0)
  assert share == 0.5
  expected = brute_force_depth_law(BAGS, None, "ab", 2, 2, 3)
  expected_prime = brute_force_depth_law(BAGS, 0, "ab", 2, 2, 3)
  np.testing.assert_allclose(law, expected, rtol=1e-12, atol=1e-15)
  np.testing.assert_allclose(law_prime, expected_prime, rtol=1e-12,
                             atol=1e-15)
  assert not np.allclose(law, law_prime)  # the user matters


def engine_depths(pop, word, setup, runs):
  depths = np.zeros(runs, dtype=int)
  seq = word + "$"
  for seed in range(runs):
    result = discover_lib.discover(
        pop,
        triehh.Mechanism(theta=setup.theta, batch_size=setup.batch_size,
                         sampling="fixed", word_choice="per_round",
                         allow_no_guarantee=True), max_length=setup.max_length,
        seed=seed)
    depth = 0
    while depth < len(word) and seq[:depth + 1] in result.trie:
      depth += 1
    if depth == len(word) and word in result.heavy_hitters:
      depth += 1
    depths[seed] = depth
  return depths


def test_exact_law_matches_the_engine():
  """The real engine's depth frequencies lie in their 99.9 % intervals
  (Bonferroni over depths and sides) around the exact law."""
  rng = np.random.default_rng(3)
  words = ["ab", "abc", "ac", "b", "ba"]
  bags = [{w: int(c) for w, c in zip(words, rng.integers(0, 3, size=5))
           if c} or {"b": 1} for _ in range(60)]
  bags[0] = {"ab": 2, "abc": 1, "b": 1}
  setup = tiny_setup(60, 3, 15, 3)
  pop = population_lib.Population.from_user_words(bags, max_length=3)
  law, law_prime, _ = sw.path_laws(sw.PrefixShares(pop), setup, "ab", 0)
  # D' for the engine: the user's bag on another branch (never votes on
  # "ab"'s path), as the empty bag.
  pop_prime = population_lib.Population.from_user_words(
      [{"zz": 1}] + bags[1:], max_length=3)
  runs = 300
  for population, exact in ((pop, law), (pop_prime, law_prime)):
    counts = np.bincount(engine_depths(population, "ab", setup, runs),
                         minlength=law.size)
    low, high = audit_bounds.clopper_pearson(counts, runs,
                                             0.001 / (4 * counts.size))
    assert np.all((low <= exact) & (exact <= high)), (counts, exact * runs)


@pytest.mark.parametrize("k", [0, 20, 35, 60])
def test_bag_of_one_word_reduces_to_the_one_word_audit(k):
  n, length = 300, 2
  # Theorem 1's delta is 1/12 here: audit at a small delta, as a real one.
  setup1 = dataclasses.replace(one_word.make_setup(
      n, length, triehh.Mechanism(theta=4, batch_size=30)), delta=1e-6)
  w = one_word.TARGET_CHAR * length
  bags = [{w: 1}] * k + [{one_word.OTHER_WORD: 1}] * (n - k - 1) + [{w: 1}]
  pop = population_lib.Population.from_user_words(bags, max_length=length)
  setup = sw.Setup(n=n, theta=4, batch_size=30, max_length=length,
                   epsilon=setup1.epsilon, delta=setup1.delta,
                   accounting="per_round", delta_one=setup1.delta)
  loss = sw.pair_loss(sw.PrefixShares(pop), setup, w, n - 1)
  expected = one_word.exact_audit(setup1, populations=np.array([k]))
  assert max(loss.epsilon.values()) == pytest.approx(expected.epsilon,
                                                     rel=1e-9, abs=1e-12)
  assert (expected.epsilon > 0.01) == (k > 0)
  assert loss.share == 1.0


def test_voter_total_law_is_poisson_binomial():
  shares = np.array([0.5, 0.5, 0.25, 1.0, 1 / 3, 0.25, 0.0])
  offset, pmf = sw.voter_total_law(shares)
  direct = np.ones(1)
  for a in shares:
    direct = np.convolve(direct, [1 - a, a])
  np.testing.assert_allclose(pmf, direct[offset:offset + pmf.size],
                             rtol=1e-12)
  assert direct[:offset].sum() == 0 and pmf.sum() == pytest.approx(1.0)


def test_failure_bound_bounds_the_exact_failure():
  rng = np.random.default_rng(0)
  for holders in (30, 300):
    shares = rng.choice([0.1, 0.25, 0.5, 1.0], size=holders)
    offset, pmf = sw.voter_total_law(shares)
    k = offset + np.arange(pmf.size)
    _, below = audit_bounds.hypergeom_tail(2000, k, 200, 6)
    exact = float(pmf @ below)
    bound = sw.failure_bound(shares, 2000, 200, 6)
    assert exact <= bound <= 1


def test_certified_levels_pass_surely():
  shares = np.full(5000, 0.5)  # 125 expected votes against theta = 6
  setup = tiny_setup(20_000, 6, 1000, 3)
  assert sw.failure_bound(shares, 20_000, 1000, 6) <= sw.CERTIFIED_FAILURE
  assert sw.round_pass(shares, 0.5, setup) == (1.0, 0.0, 1.0, 0.0)


def test_real_setups_calibrate_as_the_library():
  n = 659_775
  target = triehh.Target(4.0, delta=1 / (300 * n))
  ours = sw.make_setup(n, 9, target, accounting="per_round")
  paper = sw.make_setup(n, 9, target, accounting="paper")
  assert (ours.theta, ours.batch_size) == (13, 16_731)
  assert (paper.theta, paper.batch_size) == (12, 18_126)
  assert ours.delta == pytest.approx(ours.levels * ours.delta_one)
  assert paper.delta == paper.delta_one <= 1 / (300 * n)


def test_audit_finds_the_worst_pair():
  rng = np.random.default_rng(1)
  words = ["ab", "abc", "ac", "b", "ba", "bb"]
  bags = [{w: int(c) for w, c in zip(words, rng.integers(0, 3, size=6))
           if c} or {"b": 1} for _ in range(400)]
  pop = population_lib.Population.from_user_words(bags, max_length=3)
  setup = tiny_setup(400, 4, 40, 3)
  result = sw.audit(pop, setup, num_words=3)
  assert len({p.word for p in result.pairs}) == 3
  assert max(result.epsilon.values()) == max(
      max(p.epsilon.values()) for p in result.pairs)
  assert result.worst in result.pairs
  assert all(p.bag in ("own", "{w}") and 0 < p.share <= 1
             for p in result.pairs)
  for word in {p.word for p in result.pairs}:
    mine = [p for p in result.pairs if p.word == word]
    top = mine[0]
    assert [p.bag for p in mine][:2] == ["own", "{w}"]
    assert mine[1].share == 1 and mine[1].user == top.user
    if len(mine) == 3:  # the top holder holds the word alone
      assert top.share == 1 > mine[2].share and mine[2].bag == "own"
    else:  # the top holder's bag holds other words too
      assert len(mine) == 2 and top.share < 1
  several = result.worst_several
  assert several.share < 1 and max(several.epsilon.values()) == max(
      max(p.epsilon.values()) for p in result.pairs if p.share < 1)


def one_line(excinfo):
  message = str(excinfo.value)
  return "\n" not in message and message


@pytest.mark.parametrize("call, needle", [
    (lambda: sw.make_setup(10_000, 9, 4.0, accounting="bogus"),
     "accounting"),
    (lambda: sw.make_setup(1, 9, 4.0), "n must be"),
    (lambda: sw.make_setup(10_000, 9, triehh.Target(0.01)), "no guarantee"),
    (lambda: sw.voter_total_law(np.array([0.5, 1.5])), "shares"),
])
def test_bad_setup_is_one_line_error(call, needle):
  with pytest.raises(ValueError) as excinfo:
    call()
  assert needle in one_line(excinfo)


def test_bad_pairs_are_one_line_errors():
  pop = population_lib.Population.from_user_words(BAGS, max_length=2)
  shares = sw.PrefixShares(pop)
  setup = tiny_setup(len(BAGS), 2, 2, 2)
  for call, needle in (
      (lambda: sw.path_laws(shares, setup, "zz", 0), "'zz' is not"),
      (lambda: sw.path_laws(shares, setup, "ba", 1), "does not hold"),
      (lambda: sw.path_laws(shares, setup, "ab", 9), "user must be"),
      (lambda: sw.path_laws(shares, setup, "ab", 0, "bogus"), "bag must"),
      (lambda: sw.exposed_words(pop, setup, 0), "num_words"),
      (lambda: sw.audit(pop, tiny_setup(7, 2, 2, 2)), "n=7"),
      (lambda: sw.PrefixShares(population_lib.Population.from_user_words(
          ["ab", "b"], max_length=2)), "several-word")):
    with pytest.raises(ValueError) as excinfo:
      call()
    assert needle in one_line(excinfo), excinfo.value


def test_memory_is_checked_before_allocating(monkeypatch):
  bags = [{"ab": 1, "b": 1}] * 2000
  pop = population_lib.Population.from_user_words(bags, max_length=2)
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**16)  # 64 KiB
  with pytest.raises(memory.InsufficientMemoryError) as excinfo:
    sw.PrefixShares(pop)
  assert "4,000 user-word entries" in one_line(excinfo)
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**30)
  assert sw.PrefixShares(pop).entry_user.size == 4000


def test_exposed_words_spread_over_stems():
  # "abc" sits at the threshold with many rare extensions; "bcd" too.
  bags = ([{"abc": 1}] * 30 + [{"abc" + x: 1} for x in "defgh"]
          + [{"bcd": 1}] * 30 + [{"bcd" + x: 1} for x in "efg"]
          + [{"x": 1}] * 332)
  pop = population_lib.Population.from_user_words(bags, max_length=4)
  setup = tiny_setup(400, 4, 40, 4)
  words = sw.exposed_words(pop, setup, 6, per_prefix=2)
  # The two stems themselves (deepest near prefix: their own end), then at
  # most two extensions of each (deepest near prefix: the stem).
  assert words[:2] == ["abc", "bcd"]
  extensions = lambda found, stem: sum(
      len(w) == 4 and w.startswith(stem) for w in found)
  assert extensions(words, "abc") == extensions(words, "bcd") == 2
  more = sw.exposed_words(pop, setup, 6, per_prefix=5)
  assert extensions(more, "abc") >= 3


def test_levels_no_word_reaches_have_no_votes():
  # Every word ("ab$", "b$") ends by level 3 of 6: levels 4 to 6 hold no
  # prefix at all, and the audit runs on the words there are.
  bags = [{"ab": 1, "b": 1}] * 30 + [{"b": 1}] * 10
  pop = population_lib.Population.from_user_words(bags, max_length=5)
  setup = tiny_setup(40, 4, 20, 5)
  votes = sw.prefix_votes(pop, setup)
  assert votes.shape == (2, 6) and not votes[:, 3:].any()
  ab = list(pop.vocabulary).index("ab")
  assert votes[ab, :3] == pytest.approx([20 * 15 / 40, 20 * 15 / 40,
                                         20 * 15 / 40])
  result = sw.audit(pop, setup, num_words=2)
  assert {p.word for p in result.pairs} == {"ab", "b"}
