"""Tests of the noisy trie as a mechanism: triehh.discover with a
NoisyTarget."""

import dp_accounting
import pytest

import triehh
from triehh.engines import registry as engines
from triehh.mechanisms import noisy_trie as noisy_mechanism
from triehh.theory import distributed_noise
from triehh.theory import dp_events
from triehh.theory import noisy_trie
from triehh.theory.adjacency import Adjacency
from tests.mechanisms import replace_special

_WORDS = ["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000 + [
    f"w{i}" for i in range(4000)]
# The alphabet given (public, fixed with the test): the noisy trie refuses
# one read off the users' words.
_USERS = triehh.Population.from_user_words(
    _WORDS, alphabet="0123456789amnorstuw")


def test_an_alphabet_read_off_the_users_words_is_refused():
  # With it, a character only one user types came out in 33 of 300 runs
  # (noise passing the threshold), and never without that user.
  with pytest.raises(ValueError, match="needs a public alphabet"):
    triehh.discover(_WORDS, triehh.NoisyTarget(4.0), seed=0)
  with pytest.raises(ValueError, match="needs a public alphabet"):
    triehh.discover(triehh.Population.from_user_words(_WORDS),
                    triehh.NoisyTarget(4.0), seed=0)


def test_the_noisy_trie_finds_the_frequent_words_and_labels_them():
  result = triehh.discover(_USERS, triehh.NoisyTarget(4.0), seed=0)
  assert {"sun", "moon", "star"} <= set(result.words)
  assert result.num_false_words == 0
  guarantee = result.guarantee
  assert guarantee.epsilon <= 4.0 and guarantee.delta == 1e-8
  # delta = 1/n^2 of the population's own size: equal sizes only.
  assert guarantee.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert guarantee.n_source == "data"
  assert "alphabet" in guarantee.covers
  again = triehh.discover(_USERS, triehh.NoisyTarget(4.0), seed=0)
  assert again.words == result.words


@pytest.mark.parametrize("target, n_source", [
    (triehh.NoisyTarget(4.0, population_size=10_000), "declared"),
    (triehh.NoisyTarget(4.0, delta=1e-8), "unused"),
])
def test_parameters_free_of_the_data_cover_add_or_remove(target, n_source):
  guarantee = triehh.discover(_USERS, target, seed=1).guarantee
  assert guarantee.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                                   Adjacency.REPLACE_SPECIAL)
  assert guarantee.n_source == n_source


@pytest.mark.parametrize("options, message", [
    (dict(counts=True), "runs alone"),
    (dict(passes=triehh.Passes(2)), "runs alone"),
    (dict(workers=["x"]), "the noisy trie's fast engine takes noise and "
     "dropout only, got workers"),
])
def test_what_the_noisy_trie_does_not_run_with_is_refused(options, message):
  with pytest.raises(ValueError, match=message):
    triehh.discover(_USERS, triehh.NoisyTarget(4.0), **options)


def test_a_bad_noisy_target_is_refused_when_built():
  with pytest.raises(ValueError, match="false_positive_rate"):
    triehh.NoisyTarget(4.0, false_positive_rate=0.0)
  with pytest.raises(TypeError, match="chars_per_level"):
    triehh.NoisyTarget(4.0, chars_per_level=1.5)


@pytest.mark.parametrize("multipliers", [(1e-300,), (1.0, 1e9)])
def test_round_multipliers_outside_their_range_are_refused_in_one_line(
    multipliers):
  # (1e-300,) ended in a ZeroDivisionError inside the accountant.
  with pytest.raises(ValueError, match=r"noise_multipliers\[\d\]=") as info:
    triehh.discover(_USERS, triehh.NoisyTarget(
        4.0, noise_multipliers=multipliers), seed=0)
  assert "\n" not in str(info.value)
  assert "[0.001, 1000]" in str(info.value)


# The tff engine's runs: tests/engines/tff/noisy_engine_test.py. Its options
# and labels are checked here without TensorFlow.


@pytest.mark.parametrize("engine, options, message", [
    ("tff", dict(noise="laplace"), "noise must be 'central' or "
     "'distributed', got 'laplace'"),
    ("tff", dict(secure_sum=True), "the noisy trie's tff engine takes "
     "connect_timeout, dropout, noise, rpc_timeout, workers; got "
     "secure_sum"),
    ("fast", dict(workers="h:1"), "the noisy trie's fast engine takes "
     "noise and dropout only, got workers"),
    ("fast", dict(dropout=0.2), "dropout is for noise='distributed' only"),
    ("tff", dict(noise="distributed", dropout=1.0), "dropout must be in"),
])
def test_engines_and_options_the_noisy_trie_does_not_take_are_refused(
    engine, options, message):
  with pytest.raises(ValueError, match=message) as raised:
    noisy_mechanism._checked_options(engine, options)  # pylint: disable=protected-access
  assert "\n" not in str(raised.value)


def test_the_tff_engine_takes_its_noise_and_where_it_runs():
  assert noisy_mechanism._checked_options("tff", {}) == "central"  # pylint: disable=protected-access
  assert noisy_mechanism._checked_options(  # pylint: disable=protected-access
      "tff", dict(noise="distributed", workers="h:1")) == "distributed"
  assert noisy_mechanism._checked_options(  # pylint: disable=protected-access
      "fast", dict(noise="distributed", dropout=0.0)) == "distributed"


def test_the_fast_distributed_run_is_labelled_with_its_skellam_shares():
  """The label names the Skellam accountant and its assumptions, covers
  REPLACE_SPECIAL only, and its epsilon is that accountant's at delta."""
  users = triehh.Population.from_user_words(
      [w for w in ("sun", "sea", "son") for _ in range(400)],
      alphabet="aenosu")
  target = triehh.NoisyTarget(4.0, delta=1e-8)
  result = triehh.discover(users, target, seed=0, engine="fast",
                           noise="distributed", dropout=0.05)
  g = result.guarantee
  assert g.accounting == distributed_noise.ACCOUNTING
  assert g.adjacencies == (Adjacency.REPLACE_SPECIAL,)
  assert "accounted as the central Gaussian" not in g.covers
  for said in ("at least h=", "dropout at most 0.05", "delta_short=",
               "secure sum modulo 2^"):
    assert said in g.covers
  assert g.epsilon <= 4.0 and g.delta == 1e-8
  assert "samples in secret" not in g.trust and "secure sum" in g.trust
  assert "the dropout bound, h" in g.public
  assert set(result.words) == {"sun", "sea", "son"}


def test_a_distributed_run_exports_its_skellam_rounds_not_the_gaussian():
  """The run's DpEvent is the Skellam rounds its label accounts for: a
  REPLACE_SPECIAL accountant composing it gives the label's epsilon at
  delta less delta_short (the label's slack), the central discrete
  Gaussian's event a different one, and an ADD_OR_REMOVE_ONE accountant
  refuses it."""
  users = triehh.Population.from_user_words(
      [w for w in ("sun", "sea", "son") for _ in range(400)],
      alphabet="aenosu")
  result = triehh.discover(users, triehh.NoisyTarget(4.0, delta=1e-8),
                           seed=0, engine="fast", noise="distributed",
                           dropout=0.05)
  event = noisy_mechanism.MECHANISM.dp_event(result.params)
  means = result.params.skellam_means
  assert len(means) == result.params.num_levels and min(means) > 0
  short = float(result.guarantee.covers.split("delta_short=")[1].split()[0]
                .rstrip(",;)"))
  label = result.guarantee.epsilon
  assert replace_special.epsilon(event, 1e-8 - short) == pytest.approx(label, rel=1e-6)
  assert replace_special.epsilon(event, 1e-8) <= label
  central = noisy_trie.dp_event(result.params)
  assert abs(replace_special.epsilon(central, 1e-8 - short) - label) > 1e-3
  with pytest.raises(dp_accounting.UnsupportedEventError,
                     match="REPLACE_SPECIAL and REPLACE_ONE only"):
    dp_events.PLDAccountant().compose(event)


@pytest.mark.parametrize("target, adjacencies, n_source", [
    (triehh.NoisyTarget(4.0, delta=1e-8), (Adjacency.REPLACE_SPECIAL,),
     "data"),
    (triehh.NoisyTarget(4.0, population_size=100),
     (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_SPECIAL), "declared"),
])
def test_the_distributed_noise_reads_n_for_its_split(target, adjacencies,
                                                    n_source):
  params = noisy_trie.NoisyTrieParams(sigma=3.0, num_levels=4,
                                      threshold=12.0)
  calibrated = "declared" if target.population_size else "unused"
  guarantee = noisy_mechanism._labelled(  # pylint: disable=protected-access
      noisy_trie.guarantee(params, 1e-8), calibrated,
      delta_from_n=target.delta is None, distributed=True)
  assert guarantee.adjacencies == adjacencies
  assert guarantee.n_source == n_source
  central = noisy_mechanism._labelled(  # pylint: disable=protected-access
      noisy_trie.guarantee(params, 1e-8), calibrated, delta_from_n=False)
  assert central.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE,
                                 Adjacency.REPLACE_SPECIAL)


def test_data_larger_than_the_declared_size_is_refused():
  with pytest.raises(ValueError, match="more than the declared "
                     "population_size=5,000"):
    triehh.discover(_USERS, triehh.NoisyTarget(4.0, population_size=5000))


def test_a_registered_engine_runs_the_noisy_trie_through_the_registry():
  calls = []

  def toy_run(population, params, rng):
    calls.append((population.num_users, params.num_levels))
    return noisy_trie_engine_result()

  engines.register("toy_noisy", None, mechanisms={"noisy_trie": toy_run})
  try:
    result = triehh.discover(_USERS, triehh.NoisyTarget(4.0, delta=1e-8),
                             engine="toy_noisy")
    assert calls == [(10_000, result.params.num_levels)]
    assert result.words == ("toy",)
    assert result.guarantee.epsilon <= 4.0
    # An engine that does not declare a mechanism is refused before any run.
    with pytest.raises(ValueError, match="engine 'toy_noisy' does not run "
                       "the triehh mechanism; it runs noisy_trie"):
      triehh.discover(_USERS, triehh.Target(4.0), engine="toy_noisy")
  finally:
    engines._ENGINES.pop("toy_noisy")  # pylint: disable=protected-access


def noisy_trie_engine_result():
  import numpy as np  # pylint: disable=g-import-not-at-top
  from triehh.engines import noisy  # pylint: disable=g-import-not-at-top
  return noisy.NoisyTrieResult(
      words=("toy",), noisy_counts=np.array([10.0]),
      false_words=np.array([False]), levels=())


def test_a_run_that_releases_no_word_says_the_holders_a_word_needs():
  # tau / q holders: hand-made parameters, then a run that finds nothing.
  params = noisy_trie.NoisyTrieParams(sigma=5.0, num_levels=3, threshold=20,
                                      sampling_rate=0.5)
  few = noisy_mechanism.nothing_found(params, 30)
  assert few.startswith("no word found: a word needs a noisy sum of at "
                        "least tau=20 (noise sigma=5) in every round, so "
                        "about tau/q = 40 holders among the n=30 users "
                        "(q n = 15.0 sampled per round): more than there "
                        "are users")
  enough = noisy_mechanism.nothing_found(params, 100)
  assert enough.endswith("among the n=100 users (q n = 50.0 sampled per "
                         "round): no word reached it in this run")
  # 5 holders of "sun" against a tau of about 20 at epsilon 4.
  sparse = triehh.Population.from_user_words(
      ["sun"] * 5 + [f"w{i}" for i in range(200)],
      alphabet="0123456789amnorstuw")
  result = triehh.discover(sparse, triehh.NoisyTarget(4.0, delta=1e-8),
                           seed=0)
  assert result.words == ()
  assert result.notes == (noisy_mechanism.nothing_found(result.params, 205),)
  needed = result.params.threshold / result.params.sampling_rate
  assert 5 < needed and f"tau/q = {needed:,.0f} holders" in result.notes[0]
  found = triehh.discover(_USERS, triehh.NoisyTarget(4.0), seed=0)
  assert found.words and found.notes == ()


def test_replace_one_asked_is_calibrated_for_and_covered():
  """A vote that moves between two candidates: the noise is calibrated for
  it (more than for adding or removing a user), dp_accounting's PLD
  accountant under REPLACE_ONE reads the label's epsilon from the run's
  event, and the same-size relation holds with delta read off the data."""
  plain = triehh.discover(_USERS, triehh.NoisyTarget(4.0, delta=1e-8),
                          seed=1)
  swap = triehh.discover(_USERS, triehh.NoisyTarget(
      4.0, delta=1e-8, adjacency="REPLACE_ONE"), seed=1)
  g = swap.guarantee
  assert g.adjacencies == (Adjacency.ADD_OR_REMOVE_ONE, Adjacency.REPLACE_ONE,
                           Adjacency.REPLACE_SPECIAL)
  assert g.epsilon <= 4.0 and "replace-one" in g.accounting
  assert swap.params.replace_one and swap.params.sigma > plain.params.sigma
  event = noisy_mechanism.MECHANISM.dp_event(swap.params)
  for relation, expected in ((dp_accounting.NeighboringRelation.REPLACE_ONE,
                              g.epsilon), (None, None)):
    accountant = (dp_events.PLDAccountant(relation, 1e-4) if relation
                  else dp_events.PLDAccountant(value_discretization_interval=
                                               1e-4))
    accountant.compose(event)
    if expected is None:  # adding or removing: less than the label's
      assert accountant.get_epsilon(g.delta) < 0.9 * g.epsilon
    else:
      assert accountant.get_epsilon(g.delta) == pytest.approx(expected,
                                                              rel=1e-3)
  own_n = triehh.discover(_USERS, triehh.NoisyTarget(
      4.0, adjacency="REPLACE_ONE"), seed=1).guarantee
  assert own_n.adjacencies == (Adjacency.REPLACE_ONE,
                               Adjacency.REPLACE_SPECIAL)


def test_adding_or_removing_with_delta_read_off_the_data_is_refused():
  with pytest.raises(ValueError, match="read off the population's own "
                     "size n=10,000"):
    triehh.discover(_USERS, triehh.NoisyTarget(
        4.0, adjacency="ADD_OR_REMOVE_ONE"), seed=0)


def test_skellam_shares_for_replace_one_are_labelled_and_exported():
  """Distributed noise asked to cover REPLACE_ONE: the shares are planned
  for the swap (a larger mean than for REPLACE_SPECIAL alone), the label
  covers both same-client relations, and dp_accounting's PLD accountant
  under REPLACE_ONE reads its epsilon from the run's Skellam rounds."""
  plain = triehh.discover(_USERS, triehh.NoisyTarget(
      4.0, population_size=10_000), seed=0, noise="distributed")
  swap = triehh.discover(_USERS, triehh.NoisyTarget(
      4.0, population_size=10_000, adjacency="REPLACE_ONE"), seed=0,
                         noise="distributed")
  g = swap.guarantee
  assert g.adjacencies == (Adjacency.REPLACE_ONE, Adjacency.REPLACE_SPECIAL)
  assert "replace-one swap" in g.accounting and "or by other words" in (
      g.covers)
  assert g.epsilon <= 4.0
  assert swap.params.skellam_means[0] > plain.params.skellam_means[0]
  accountant = dp_events.PLDAccountant(
      dp_accounting.NeighboringRelation.REPLACE_ONE, 1e-4)
  accountant.compose(noisy_mechanism.MECHANISM.dp_event(swap.params))
  short = g.delta - 1e-8 * distributed_noise.DEFAULT_SHORT_SHARE
  assert accountant.get_epsilon(short) == pytest.approx(g.epsilon,
                                                        rel=1e-3)
