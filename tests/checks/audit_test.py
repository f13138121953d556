"""Tests of the empirical privacy audit of Theorem 1."""

import math

import numpy as np
import pytest

from checks import audit as pa
from checks import audit_bounds
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.theory.mechanism import Mechanism
from triehh.theory.mechanism import Target


@pytest.mark.parametrize("variant", pa.VARIANTS)
def test_engine_matches_exact_depth_distribution(variant):
  """The real engine (with the broken variants' schedules) follows the exact
  model: each depth frequency of w's path lies in its 99.9 % interval."""
  setup = pa.make_setup(300, 2, Mechanism(theta=4, batch_size=30),
                        variant=variant)
  k = 35
  exact_d, exact_d_prime = pa._path_distributions(setup, np.array([k]))
  pop, pop_prime = pa.build_populations(setup, k)
  runs = 400
  for population, exact, neighbour in ((pop, exact_d[0], False),
                                       (pop_prime, exact_d_prime[0], True)):
    depths, _ = pa.run_depths(setup, population, runs, seed=7,
                              neighbour=neighbour)
    counts = np.bincount(depths, minlength=setup.levels + 1)
    low, high = audit_bounds.clopper_pearson(counts, runs, 0.001 / (2 * counts.size))
    assert np.all((low <= exact) & (exact <= high)), (variant, counts,
                                                      exact * runs)


PAPER_CELLS = [(10**4, 2.0), (10**4, 4.0), (10**5, 2.0), (10**5, 4.0)]


@pytest.mark.parametrize("n,epsilon", PAPER_CELLS)
@pytest.mark.parametrize("variant", ["correct", "with_replacement"])
def test_exact_loss_within_theorem(n, epsilon, variant):
  setup = pa.make_setup(n, 10, Target(epsilon), variant=variant)
  assert setup.delta <= 1 / n**2
  result = pa.exact_audit(setup)
  assert 0 < result.epsilon <= setup.epsilon
  assert not result.violates


def test_monte_carlo_lower_bound_within_theorem():
  # Small enough that the whole-trie event is audited too.
  setup = pa.make_setup(400, 2, Mechanism(theta=4, batch_size=40))
  result = pa.monte_carlo_audit(setup, num_runs=300, confidence=0.95)
  assert result.setup.sizes[1] <= pa.WHOLE_TRIE_MAX_USERS
  assert result.lower <= setup.epsilon
  assert result.lower <= pa.exact_audit(setup).epsilon
  assert result.lower <= result.epsilon <= result.upper


def test_theta_one_caught_by_monte_carlo():
  setup = pa.make_setup(2500, 1, Mechanism(theta=10, batch_size=50),
                        variant="theta_one")
  exact = pa.exact_audit(setup)
  assert math.isinf(exact.epsilon) and exact.worst.k == 0
  result = pa.monte_carlo_audit(setup, num_runs=2000, populations=[0])
  assert result.violates, result
  assert result.worst.k == 0 and result.worst.direction == "D' vs D"


def test_double_vote_caught_by_exact_path():
  setup = pa.make_setup(1000, 1, Mechanism(theta=12, batch_size=32),
                        variant="double_vote")
  broken = pa.exact_audit(setup)
  assert broken.violates and broken.epsilon > 1.5 * setup.epsilon
  correct = pa.exact_audit(pa.make_setup(
      1000, 1, Mechanism(theta=12, batch_size=32)))
  assert not correct.violates
  # Printed, a result stays short: the audited sizes are left out.
  assert len(correct.populations) > 100 and len(repr(correct)) < 1000


def test_planned_populations_include_threshold_sizes():
  setup = pa.make_setup(10**4, 10, Target(2.0))
  ks = pa.planned_populations(setup, 1000, 0.95)
  assert {0, setup.theta - 1, setup.theta} <= set(ks)


@pytest.mark.parametrize("privacy,kwargs,message", [
    (Mechanism(theta=3, batch_size=10), {}, "theta >= 4"),
    (Mechanism(theta=4, batch_size=10), dict(variant="nope"), "variant"),
    (Mechanism(theta=4, batch_size=10), dict(adjacency="swap"), "adjacency"),
    (Target(4.0, sampling="poisson"), {}, "covers fixed-size batches"),
    (Mechanism(theta=4, sampling_rate=0.1), {}, "not sampling_rate"),
    (Target(4.0, num_sub_rounds=2), {}, "does not model num_sub_rounds=2"),
    (Target(4.0, max_num_prefixes=3), {},
     "does not model max_num_prefixes=3"),
    (Target(4.0, allow_no_guarantee=True), {},
     "does not model allow_no_guarantee=True"),
    (Target(4.0, adjacency="replace_one"), {}, "does not model adjacency"),
])
def test_bad_setup(privacy, kwargs, message):
  with pytest.raises(ValueError, match=message):
    pa.make_setup(10**4, 2, privacy, **kwargs)


def test_a_number_is_the_target_epsilon_and_the_batches_fixed_size():
  assert pa.make_setup(10**4, 10, 4.0) == pa.make_setup(
      10**4, 10, Target(4.0, sampling="fixed"))


def test_replace_adjacency_keeps_size():
  setup = pa.make_setup(400, 2, Mechanism(theta=4, batch_size=40),
                        adjacency="replace")
  assert setup.sizes == (400, 400)
  pop, pop_prime = pa.build_populations(setup, 5)
  assert pop.num_users == pop_prime.num_users == 400


def test_default_adjacency_is_the_papers_replace():
  """By default D' keeps n users (one word replaced), as docs/privacy.md's
  adjacency does; adding a user is the option."""
  setup = pa.make_setup(400, 2, Mechanism(theta=4, batch_size=40))
  assert setup.adjacency == "replace" and setup.sizes == (400, 400)
  exact, _ = pa.audit(10**4, 10, Target(4.0), num_runs=0)
  assert exact.setup.adjacency == "replace"
  added, _ = pa.audit(10**4, 10, Target(4.0), num_runs=0, adjacency="add")
  assert added.setup.sizes == (10**4, 10**4 + 1)
  replaced = pa.exact_audit(pa.make_setup(10**4, 10, Target(4.0),
                                          adjacency="replace"))
  assert exact.epsilon == replaced.epsilon != added.epsilon


@pytest.mark.parametrize("adjacency", pa.ADJACENCIES)
@pytest.mark.parametrize("variant", ["correct", "theta_one"])
def test_unscheduled_variants_run_on_word_counts(variant, adjacency):
  """D and D' are given by word counts, and the engine draws the same
  depths and tries from them as from the users listed one by one."""
  setup = pa.make_setup(300, 2, Mechanism(theta=4, batch_size=30),
                        variant=variant,
                        adjacency=adjacency)
  size_prime = 300 + (adjacency == "add")
  w = pa.TARGET_CHAR * 2
  for k in (0, 35, 299):
    pop, pop_prime = pa.build_populations(setup, k)
    assert not pop.has_user_array and not pop_prime.has_user_array
    assert (pop.num_users, pop_prime.num_users) == (300, size_prime)
    listed = population_lib.Population.from_user_words(
        [w] * k + [pa.OTHER_WORD] * (300 - k), max_length=2)
    listed_prime = population_lib.Population.from_user_words(
        [w] * (k + 1) + [pa.OTHER_WORD] * (size_prime - 1 - k), max_length=2)
    for counted, by_user, neighbour in ((pop, listed, False),
                                        (pop_prime, listed_prime, True)):
      assert counted.ground_truth() == by_user.ground_truth()
      got = pa.run_depths(setup, counted, 30, seed=3, neighbour=neighbour,
                          keep_tries=True)
      want = pa.run_depths(setup, by_user, 30, seed=3, neighbour=neighbour,
                           keep_tries=True)
      assert np.array_equal(got[0], want[0]) and got[1] == want[1]


def test_ten_billion_users_are_audited():
  exact, mc = pa.audit(10**10, 2, Target(2.0), num_runs=2, seed=0)
  assert exact.setup.n == 10**10 and not exact.violates
  assert mc.num_runs == 2 and mc.lower <= exact.setup.epsilon


@pytest.fixture(name="tiny_memory")
def _tiny_memory(monkeypatch):
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**20)  # 1 MiB


def test_listed_populations_that_do_not_fit_are_refused_first(
    tiny_memory, monkeypatch):
  monkeypatch.setattr(pa, "exact_audit", lambda *a, **k: pytest.fail("ran"))
  with pytest.raises(memory.InsufficientMemoryError) as err:
    pa.audit(20_000, 2, Mechanism(theta=4, batch_size=200),
             variant="double_vote",
             num_runs=10)
  assert str(err.value) == (
      "n=20,000 users listed one by one for variant='double_vote' would need "
      "about 1.9 MiB of memory, more than the 1.0 MiB available; use n <= "
      "10,485 or num_runs=0 (the exact path only); the other variants run on "
      "word counts (Population.from_word_frequencies), for any n up to 2^62")
  setup = pa.make_setup(20_000, 2, Mechanism(theta=4, batch_size=200),
                        variant="with_replacement")
  with pytest.raises(memory.InsufficientMemoryError, match="n=20,000 users"):
    pa.build_populations(setup, 5)


def test_runs_that_do_not_fit_are_refused_before_the_exact_path(
    tiny_memory, monkeypatch):
  monkeypatch.setattr(pa, "exact_audit", lambda *a, **k: pytest.fail("ran"))
  with pytest.raises(memory.InsufficientMemoryError, match=(
      r"^num_runs=1,000,000,000 runs would need about 14.9 GiB of memory, "
      r"more than the 1.0 MiB available; use num_runs <= 65,536$")):
    pa.audit(10**4, 10, Target(4.0), num_runs=10**9)
  for bad in (-5, 1, 2.5, True):
    with pytest.raises(ValueError, match="num_runs must be 0 .* or an "
                       "integer >= 2"):
      pa.audit(10**4, 10, Target(4.0), num_runs=bad)


def test_an_exact_scan_that_does_not_fit_is_refused_first(tiny_memory,
                                                          monkeypatch):
  monkeypatch.setattr(pa, "round_pass", lambda *a: pytest.fail("computed"))
  setup = pa.make_setup(10**6, 2, Mechanism(theta=4, batch_size=1000))
  # k = 0 .. 44,000: 36 bytes for each of theta + 120 + 3 (levels) terms.
  with pytest.raises(memory.InsufficientMemoryError, match=(
      r"^the exact laws of 44,001 populations \(k holders of w at "
      r"n=1,000,000, batch_size=1,000\) would need about 191.9 MiB of "
      r"memory, more than the 1.0 MiB available; at most 229 fit, and their "
      r"number grows as n / batch_size: use a larger batch_size or gamma, or "
      r"fewer users$")):
    pa.exact_audit(setup)
