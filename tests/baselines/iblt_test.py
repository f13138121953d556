"""Tests of the IBLT baseline: exact counts, k-anonymity, TrieHH's users,
truncated outputs, the memory refusal and bad input."""

import collections
import dataclasses
import math

import numpy as np
import pytest

pytest.importorskip("tensorflow_federated")

from triehh.engines import sampling  # pylint: disable=g-import-not-at-top
from triehh.theory import policy  # pylint: disable=g-import-not-at-top
import triehh  # pylint: disable=g-import-not-at-top
from tests import reference  # pylint: disable=g-import-not-at-top
from triehh.baselines import iblt  # pylint: disable=g-import-not-at-top
from triehh.baselines import iblt_rounds  # pylint: disable=g-import-not-at-top
from triehh.core import memory  # pylint: disable=g-import-not-at-top
from triehh.core import release  # pylint: disable=g-import-not-at-top
from triehh.theory.adjacency import Adjacency  # pylint: disable=g-import-not-at-top
from triehh.theory.mechanism import Guarantee  # pylint: disable=g-import-not-at-top

# One capacity for every run below, so one compiled computation per k.
CAPACITY = 64
HEAVY = {"sun": 40, "moon": 25, "star": 12, "comet": 6, "mars": 3}
ONE_WORD = triehh.Population.from_user_words(
    [w for w, c in HEAVY.items() for _ in range(c)]
    + [f"rare{i}" for i in range(30)])
ONE_WORD_SHUFFLED = triehh.Population.from_user_words(
    [ONE_WORD.vocabulary[w] for w in
     np.random.default_rng(3).permutation(ONE_WORD.user_word)])


def several_words(n=60, seed=1):
  rng = np.random.default_rng(seed)
  words = list(HEAVY)
  users = []
  for _ in range(n):
    held = rng.choice(words, size=rng.integers(1, 4), replace=False)
    users.append({str(w): int(rng.integers(1, 5)) for w in held})
  return triehh.Population.from_user_words(users)


SEVERAL_WORDS = several_words()


@pytest.fixture(scope="module", autouse=True)
def tff_runtime():
  """One local TFF worker for every test of the module."""
  from triehh.engines.tff import runtime  # pylint: disable=g-import-not-at-top
  return runtime.get_runtime()


def target(k_anonymity, batch, **fields):
  """An IBLTTarget at the module's one capacity."""
  return iblt.IBLTTarget(k_anonymity, batch, capacity=CAPACITY, **fields)


def expected_counts(pop, batch_size, seed, num_rounds=1):
  """Word -> senders over the rounds, by the reference's own draw
  (several-word populations: TrieHH draws users, then word ranks)."""
  rng = np.random.default_rng(seed)
  counts = reference.user_counts(pop)
  sent = collections.Counter()
  for _ in range(num_rounds):
    words = reference.round_words(pop, counts, rng, batch_size, None)
    sent.update(str(pop.vocabulary[w]) for w in words)
  return sent


def words_of_users(pop, users):
  return collections.Counter(str(pop.vocabulary[pop.user_word[u]])
                             for u in users)


def first_symbol_votes(heavy_hitters):
  votes = collections.Counter()
  for word, count in heavy_hitters.items():
    votes[word[0]] += count
  return dict(votes)


def test_exact_counts_of_the_sampled_users_at_k1():
  result = iblt.iblt_discover(SEVERAL_WORDS, target(1, 50), seed=7)
  assert result.heavy_hitters == dict(expected_counts(SEVERAL_WORDS, 50,
                                                      seed=7))
  assert result.params.num_not_decoded == 0
  assert result.params.users_sampled == 50


def test_secure_sum_gives_the_plain_sum_result():
  plain = iblt.iblt_discover(SEVERAL_WORDS, target(1, 30), seed=9)
  secure = iblt.iblt_discover(
      SEVERAL_WORDS, target(1, 30, secure_sum_bitwidth=8), seed=9)
  assert secure.params.secure_sum_bitwidth == 8
  assert secure.heavy_hitters == plain.heavy_hitters == dict(
      expected_counts(SEVERAL_WORDS, 30, seed=9))


def test_words_below_k_are_not_released():
  result = iblt.iblt_discover(ONE_WORD_SHUFFLED, target(3, 60), seed=2)
  assert len(set(result.round_users[0].tolist())) == 60
  sent = words_of_users(ONE_WORD_SHUFFLED, result.round_users[0])
  assert any(c < 3 for c in sent.values())  # the test has something to cut
  assert result.heavy_hitters == {w: c for w, c in sent.items() if c >= 3}
  assert "k=3" in result.params.privacy
  assert "not (epsilon, delta)-differential privacy" in result.params.privacy


def test_same_seed_same_result_other_seed_other_users():
  first = iblt.iblt_discover(SEVERAL_WORDS, target(1, 30), seed=11)
  again = iblt.iblt_discover(SEVERAL_WORDS, target(1, 30), seed=11)
  other = iblt.iblt_discover(SEVERAL_WORDS, target(1, 30), seed=12)
  assert again.heavy_hitters == first.heavy_hitters
  np.testing.assert_array_equal(again.round_users[0], first.round_users[0])
  assert not np.array_equal(other.round_users[0], first.round_users[0])


@pytest.mark.parametrize("pop", [ONE_WORD_SHUFFLED, SEVERAL_WORDS],
                         ids=["one_word", "several_words"])
def test_first_round_has_triehh_first_round_votes(pop):
  # theta = 1: TrieHH records every first symbol its first round's users
  # vote for; the words IBLT received must give the same votes.
  trie_run = triehh.discover(pop,
                             triehh.Mechanism(
                                 theta=1, batch_size=40,
                                 allow_no_guarantee=True), seed=5)
  result = iblt.iblt_discover(pop, target(1, 40), seed=5)
  assert trie_run.sampled_per_round[0] == result.params.users_sampled == 40
  assert first_symbol_votes(result.heavy_hitters) == (
      reference.trie_levels(trie_run.trie)[0])


def test_several_words_first_round_is_the_documented_draw():
  result = iblt.iblt_discover(SEVERAL_WORDS, target(1, 40), seed=5)
  want = reference.sample_users(np.random.default_rng(5),
                                SEVERAL_WORDS.num_users, 40)
  np.testing.assert_array_equal(result.round_users[0], want)


def test_batch_size_from_epsilon_is_triehh_batch_size():
  pop = triehh.Population.from_user_words(
      [w for w, c in HEAVY.items() for _ in range(c * 40)])
  trie_run = triehh.discover(pop, triehh.Target(4.0, sampling="fixed"), seed=3)
  result = iblt.iblt_discover(pop, target(1, triehh.Target(4.0)), seed=3)
  m = trie_run.params.batch_size
  assert result.params.batch_size == m == result.round_users[0].size
  assert sum(result.heavy_hitters.values()) == m
  votes = first_symbol_votes(result.heavy_hitters)
  recorded = reference.trie_levels(trie_run.trie)[0]
  assert recorded  # theta is low enough for some first symbol
  assert recorded == {s: v for s, v in votes.items() if s in recorded}


def test_sampled_rounds_follow_triehh_rounds():
  result = iblt.iblt_discover(SEVERAL_WORDS, target(1, 20, num_rounds=3),
                              seed=4)
  assert result.params.num_rounds == 3
  assert result.params.users_sampled == 60
  assert result.heavy_hitters == dict(
      expected_counts(SEVERAL_WORDS, 20, seed=4, num_rounds=3))


def test_disjoint_passes_cover_every_user_once():
  result = iblt.iblt_discover(ONE_WORD_SHUFFLED,
                              target(1, 40, rounds="disjoint"), seed=0)
  n = ONE_WORD_SHUFFLED.num_users
  assert result.params.num_rounds == -(-n // 40)
  users = np.concatenate(result.round_users)
  assert sorted(users.tolist()) == list(range(n))
  assert result.params.distinct_users == n
  truth = ONE_WORD_SHUFFLED.ground_truth()
  assert result.heavy_hitters == {w: int(c) for w, c in truth.items()}


def test_truncated_outputs_are_counted():
  users = (["http://twitter.com"] * 4 + ["http://twitpic.com"] * 2
           + ["abcdefghij"] * 3 + ["sun"] * 5)
  result = iblt.iblt_discover(users, target(1, len(users)), max_length=20)
  assert result.heavy_hitters == {"http://twi": 6, "sun": 5, "abcdefghij": 3}
  assert result.params.num_truncated == 1
  assert result.params.truncated == ("http://twi",)
  scores = triehh.precision_recall_f1(result.heavy_hitters,
                                      triehh.Population.from_user_words(
                                          users, max_length=20).ground_truth())
  assert scores["precision"] == pytest.approx(2 / 3)
  # Scored, a truncated output is a false positive whatever it matches.
  assert result.scored() == {"http://twi [truncated]": 6, "sun": 5,
                             "abcdefghij": 3}


def test_batch_size_from_epsilon_is_triehh_batch_size_on_several_words():
  # Several words per user: TrieHH calibrates by per-round composition.
  users = [{"sun": 3, "moon": 1}] * 10000 + [{"star": 2}] * 10000
  pop = triehh.Population.from_user_words(users)
  trie_params = triehh.discover(
      pop, triehh.Target(4.0, sampling="fixed"), seed=0).params
  plan = iblt.plan_run(pop, iblt.IBLTTarget(1, triehh.Target(4.0)), seed=0)
  assert plan.batch_size == trie_params.batch_size
  assert plan.batch_size != policy.resolve(
      pop.num_users, pop.max_length,
      triehh.Target(4.0, sampling="fixed")).batch_size
  assert plan.options["capacity"] == 3 == len(
      {str(w) for w in pop.vocabulary[plan.drawn[0][1]]})


def test_memory_refusal_names_the_estimate():
  per_client = iblt.client_bytes(iblt.sketch_shape(CAPACITY, 10))
  estimate = 50 * per_client * iblt.WORKER_BYTES_PER_SKETCH_BYTE
  with pytest.raises(MemoryError, match=f"about {estimate / 1e9:.3g} GB"):
    iblt.iblt_discover(ONE_WORD, target(1, 50), memory_bytes=int(estimate))
  assert iblt.check_memory(50, per_client,
                           memory_bytes=int(2 * estimate)) == int(estimate)


def test_client_bytes_of_tff_sketch():
  shape = iblt.sketch_shape(1000, 10)
  assert shape[0] == 3 and shape[1] > 1000 / 3
  assert iblt.client_bytes(shape) == 8 * shape[0] * shape[1] * (shape[2] + 1)


@pytest.mark.parametrize("fields, error, match", [
    (dict(k_anonymity=0), ValueError, r"^k_anonymity must be in \[1, "),
    (dict(k_anonymity=1.0), TypeError, "^k_anonymity must be an integer"),
    (dict(batch=0), ValueError, r"^batch \(users per round\) must be >= 1"),
    (dict(batch=10.0), TypeError, "^batch must be the users per round"),
    (dict(batch=True), TypeError, "^batch must be the users per round"),
    (dict(batch=triehh.Target(4.0, sampling="poisson")), ValueError,
     "^batch: IBLT rounds are fixed-size batches"),
    (dict(batch=triehh.Mechanism(theta=2, sampling_rate=0.1)), ValueError,
     "^batch: IBLT rounds are fixed-size batches"),
    (dict(batch=triehh.Mechanism(theta=1, batch_size=3, schedule=[[0]],
                                 allow_no_guarantee=True)), ValueError,
     "^batch: a schedule chooses each round's users"),
    (dict(capacity=0), ValueError, "^capacity must be >= 1"),
    (dict(string_max_bytes=0), ValueError, "^string_max_bytes must be"),
    (dict(secure_sum_bitwidth=63), ValueError,
     r"^secure_sum_bitwidth must be in \[1, 62\]"),
    (dict(num_rounds=0), ValueError, "^num_rounds must be >= 1"),
    (dict(rounds="all"), ValueError, "^rounds must be one of"),
    (dict(repetitions=2), ValueError, "^repetitions must be >= 3"),
])
def test_a_bad_field_is_refused_when_the_target_is_built(fields, error,
                                                         match):
  with pytest.raises(error, match=match):
    iblt.IBLTTarget(**{"k_anonymity": 1, "batch": 10, **fields})


def test_a_target_batch_runs_fixed_size_batches():
  target = iblt.IBLTTarget(np.int64(2), np.int64(10))
  assert (target.k_anonymity, target.batch) == (2, 10)
  assert type(target.batch) is int  # pylint: disable=unidiomatic-typecheck
  assert iblt.IBLTTarget(1, triehh.Target(4.0)).batch == triehh.Target(
      4.0, sampling="fixed")
  with pytest.raises(AttributeError):
    target.batch = 20  # pylint: disable=assigning-non-slot


@pytest.mark.parametrize("target, options, match", [
    (iblt.IBLTTarget(1, 10, capacity=3), {}, "capacity=3 is below"),
    (iblt.IBLTTarget(1, 10**6), {},
     r"^batch \(users per round\) must be in \[1, 116\], got 1000000$"),
    (iblt.IBLTTarget(1, 10), dict(seed=-1), "seed must be >= 0"),
    (iblt.IBLTTarget(1, 10), dict(memory_bytes=-1),
     "memory_bytes must be >= 1"),
    (iblt.IBLTTarget(1, 10), dict(max_memory_fraction=2.0),
     "max_memory_fraction"),
])
@pytest.mark.parametrize("run", [iblt.iblt_discover, iblt.plan_run])
def test_bad_input_is_named(target, options, match, run):
  options = {"seed": 0, **options}  # capacity=3: a drawn round decides
  with pytest.raises(ValueError, match=match):
    run(ONE_WORD, target, **options)


@pytest.mark.parametrize("keyword, home", [
    ("k_anonymity", "a field of triehh.IBLTTarget"),
    ("capacity", "a field of triehh.IBLTTarget"),
    ("string_max_bytes", "a field of triehh.IBLTTarget"),
    ("secure_sum_bitwidth", "a field of triehh.IBLTTarget"),
    ("num_rounds", "a field of triehh.IBLTTarget"),
    ("rounds", "a field of triehh.IBLTTarget"),
    ("repetitions", "a field of triehh.IBLTTarget"),
    ("batch_size", r"triehh.IBLTTarget's batch \(a whole number, or a "
     r"triehh.Target whose calibration gives it\)"),
    ("epsilon", "a field of the triehh.Target given as triehh.IBLTTarget's "
     "batch"),
    ("delta", "a field of the triehh.Target given as triehh.IBLTTarget's "
     "batch"),
])
@pytest.mark.parametrize("run", [iblt.iblt_discover, iblt.plan_run])
def test_an_old_keyword_names_its_new_home(keyword, home, run, no_draw):
  name = run.__name__
  with pytest.raises(TypeError, match=(
      rf"^{name}: {keyword}= is {home}, e.g. {name}\(users, "
      r"triehh.IBLTTarget\(k_anonymity=14, "
      r"batch=triehh.Target\(epsilon=4.0\)\)\)$")):
    run(ONE_WORD, **{keyword: 1})
  with pytest.raises(TypeError, match=f"^{name}: {keyword}="):
    run(ONE_WORD, iblt.IBLTTarget(1, 10), **{keyword: 1})


@pytest.mark.parametrize("run", [iblt.iblt_discover, iblt.plan_run])
def test_a_missing_or_untyped_target_is_refused(run, no_draw):
  name = run.__name__
  with pytest.raises(TypeError, match=f"^{name} takes a triehh.IBLTTarget "
                     "as its target, none was given"):
    run(ONE_WORD)
  with pytest.raises(TypeError, match="got int 14"):
    run(ONE_WORD, 14)
  with pytest.raises(TypeError, match="unexpected keyword argument 'sed'"):
    run(ONE_WORD, iblt.IBLTTarget(1, 10), sed=1)


def test_the_result_is_a_release_without_differential_privacy():
  result = iblt.iblt_discover(SEVERAL_WORDS, target(2, 20, num_rounds=2),
                              seed=3)
  assert isinstance(result, release.Release)
  assert result.mechanism == "iblt"
  assert "mechanism" not in {f.name for f in dataclasses.fields(result)}
  assert result.words == tuple(result.heavy_hitters)
  counts = list(result.heavy_hitters.values())
  assert counts == sorted(counts, reverse=True)  # ranked by count
  g = result.guarantee
  assert isinstance(g, Guarantee)
  assert (g.epsilon, g.delta, g.adjacencies, g.two_sided) == (
      math.inf, 1.0, (), False)
  assert not any(g.holds_for(a) for a in Adjacency)
  assert g.accounting == "k-anonymity (k=2), not differential privacy"
  assert g.covers.startswith("no differential privacy. k-anonymity (k=2): "
                             "every string sent by at least 2 clients of a "
                             "round is released with its exact count")
  assert g.n_source == "unused"  # the batch size was given
  assert g.describe() == ("no differential privacy guarantee [k-anonymity "
                          "(k=2), not differential privacy]")
  assert "decodes" in g.trust
  # One entry per round: the strings it released and its users.
  per_round_sent = [
      collections.Counter(str(SEVERAL_WORDS.vocabulary[w]) for w in words)
      for _, words in iblt_rounds.draw_rounds(SEVERAL_WORDS, 20, "sampled",
                                              2, 3)]
  assert result.per_round == tuple(
      release.RoundStats(candidates=None,
                         kept=sum(c >= 2 for c in sent.values()), sampled=20)
      for sent in per_round_sent)
  assert result.unprotected == {"num_truncated": 0, "truncated": ()}


def test_same_rounds_and_counts_as_the_old_keywords_computed():
  # The untyped call sized the rounds by the policy at (epsilon, delta),
  # fixed-size batches, one word per user, and drew them with draw_rounds:
  # a Target batch gives the same.
  pop = triehh.Population.from_user_words(
      [w for w, c in HEAVY.items() for _ in range(c * 40)])
  m = policy.resolve(pop.num_users, pop.max_length, triehh.Target(
      4.0, 1e-6, sampling="fixed")).batch_size
  result = iblt.iblt_discover(
      pop, target(2, triehh.Target(4.0, 1e-6), num_rounds=2), seed=8)
  drawn = iblt_rounds.draw_rounds(pop, m, "sampled", 2, 8)
  assert result.params.batch_size == m
  for got, (users, _) in zip(result.round_users, drawn):
    np.testing.assert_array_equal(got, users)
  sent = [collections.Counter(str(pop.vocabulary[w]) for w in words)
          for _, words in drawn]
  want = collections.Counter()
  for round_sent in sent:
    want.update({w: c for w, c in round_sent.items() if c >= 2})
  assert result.heavy_hitters == dict(want)
  # Corollary 1's batch size grows with n: read off the data, or declared.
  assert result.params.n_source == result.guarantee.n_source == "data"
  declared = iblt.plan_run(pop, iblt.IBLTTarget(2, triehh.Target(
      4.0, 1e-6, population_size=pop.num_users)), seed=8)
  assert (declared.batch_size, declared.n_source) == (m, "declared")


def test_slow_rounds_say_so_on_stderr(monkeypatch, capsys):
  monkeypatch.setenv("TRIEHH_PROGRESS_AFTER", "0")
  iblt.iblt_discover(ONE_WORD, iblt.IBLTTarget(1, 10, num_rounds=2))
  said = capsys.readouterr().err
  assert "triehh: drawing the users of the IBLT rounds took" in said
  assert "triehh: 2 rounds of TFF's IBLT computation took" in said


# The checks made before any round is drawn or TFF runs.
USERS = triehh.Population.from_user_words(
    ["sun"] * 40 + ["moon"] * 25 + [f"rare{i}" for i in range(35)])


@pytest.fixture
def no_draw(monkeypatch):
  """Fails a test that draws a round (the checks come before)."""
  def draw(*args, **kwargs):
    raise AssertionError("a round was drawn")
  monkeypatch.setattr(iblt_rounds, "draw_rounds", draw)


@pytest.mark.parametrize("k_anonymity, match", [
    (10**30, r"^k_anonymity must be in \[1, 2147483647\], got 10{30}$"),
    (2**31, r"^k_anonymity must be in \[1, 2147483647\]"),
    (11, r"^k_anonymity=11 is above the 10 users of a round \(batch size\): "
         r"no string can be sent by that many of them, so nothing would be "
         r"released; use k_anonymity <= 10$"),
])
def test_a_k_anonymity_no_round_can_reach_is_refused(no_draw, k_anonymity,
                                                     match):
  with pytest.raises(ValueError, match=match):
    iblt.plan_run(USERS, iblt.IBLTTarget(k_anonymity, 10))


def test_rounds_beyond_memory_are_refused_before_the_draw(no_draw,
                                                          monkeypatch):
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**20)
  # 10 users a round: 560 bytes, so 1,872 rounds fit in 1 MiB.
  with pytest.raises(memory.InsufficientMemoryError, match=(
      r"^num_rounds=100,000,000 rounds of 10 users would need about 52\.2 "
      r"GiB of memory, more than the 1\.0 MiB available; use num_rounds <= "
      r"1,872 \(or fewer users per round\)$")):
    iblt.plan_run(USERS, iblt.IBLTTarget(1, 10, num_rounds=10**8))
  # Disjoint rounds stop when every user took part: 10 rounds.
  with pytest.raises(AssertionError, match="a round was drawn"):
    iblt.plan_run(USERS, iblt.IBLTTarget(1, 10, num_rounds=10**8,
                                         rounds="disjoint"))


def test_rounds_bytes():
  assert iblt.rounds_bytes(3, 10) == 3 * (10 * 16 + 400)
