"""The compiled draws make the same draws as numpy's calls, value for value.

``triehh/engines/_compiled_draws.pyx`` is built when the package is
installed with Cython and a C compiler (``make setup`` does both); where it
is not (Bazel's sandbox runs the sources), these tests skip and the engine
makes the numpy calls. Each test compares the two on the same seed: the
counts and the generator's state after them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from triehh.core import population as population_lib
from triehh.engines import fast as fast_engine
from triehh.engines import thinning
from triehh.engines import vote_counts

compiled = thinning.compiled  # pylint: disable=protected-access
pytestmark = pytest.mark.skipif(
    compiled is None, reason="the package was installed without its "
    "compiled draws (no C compiler or Cython, or a Bazel sandbox)")


def _numpy_counts(rng, users, total, m, p=None):
  kept = rng.binomial(users, m / total if p is None else p)
  thinning.top_up(users, kept, total, m, rng)
  return kept


def _compiled_counts(rng, users, total, m, p=None):
  kept, done = compiled.thinned_counts(rng, users, total,
                                       m / total if p is None else p, m)
  if not done:
    thinning.top_up(users, kept, total, m, rng)
  return kept


def _same(users, m, seed, p=None):
  users = np.asarray(users, dtype=np.int64)
  total = int(users.sum())
  a, b = np.random.default_rng(seed), np.random.default_rng(seed)
  want = _numpy_counts(a, users, total, m, p)
  got = _compiled_counts(b, users, total, m, p)
  np.testing.assert_array_equal(got, want)
  assert a.bit_generator.state == b.bit_generator.state
  return want


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(users=st.lists(st.integers(0, 10**6), min_size=1, max_size=40).filter(
    lambda u: sum(u) > 0), share=st.floats(0.0, 1.0), seed=st.integers(0, 2**32))
def test_the_same_counts_and_stream_as_numpy(users, share, seed):
  m = max(1, min(sum(users), round(share * sum(users))))
  counts = _same(users, m, seed)
  assert counts.sum() == m and (0 <= counts).all()
  assert (counts <= np.asarray(users)).all()


@pytest.mark.parametrize("users, m", [
    ([0, 0, 5, 0], 5),                      # every user: p = 1, no top-up
    ([10**12, 3 * 10**11, 7], 123_456),     # binomials by BTPE, large pools
    ([4 * 10**8, 3 * 10**8, 3 * 10**8, 0, 0], 12_345),  # both top-ups
    ([1], 1),
    ([1] * 64, 32),    # a user per cell: every drawn rank shows in the counts,
    ([1] * 500, 250),  # including those Floyd's algorithm replaces
    ([2**61, 2**61 - 1], 10**6),            # n close to the 2^62 bound
])
def test_edge_cells(users, m):
  signs = set()
  for seed in range(30):
    counts = _same(users, m, seed)
    probe = np.random.default_rng(seed).binomial(
        np.asarray(users, dtype=np.int64), m / sum(users))
    signs.add(int(np.sign(probe.sum() - m)))
  if m == 12_345:
    assert signs >= {-1, 1}  # both branches of the top-up were drawn


def test_choices_other_branch_is_left_to_numpy():
  # A top-up of more than a twentieth of a pool above 10,000 is a tail
  # shuffle in Generator.choice: the compiled call draws the binomials only
  # and numpy tops up (p given apart from m forces the case).
  users = np.array([30_000, 50_000, 20_000], dtype=np.int64)
  kept, done = compiled.thinned_counts(np.random.default_rng(0), users,
                                       100_000, 0.5, 100)
  assert not done and kept.sum() > 10_000
  _same(users, 100, 0, p=0.5)
  _same(users, 90_000, 1, p=0.5)


@pytest.mark.parametrize("users, p", [
    ([0, 5, 40, 10**12, 0, 1], 0.3),  # inversion and BTPE, empty cells
    ([7, 2**62 - 1], 1e-9),
    ([3, 4], 1.0),
    ([3, 4], 0.0),
    ([10**6] * 50, 0.97),             # p above one half: n - Bin(n, 1 - p)
])
def test_binomial_counts_are_numpys(users, p):
  users = np.asarray(users, dtype=np.int64)
  for seed in range(20):
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    np.testing.assert_array_equal(compiled.binomial_counts(b, users, p),
                                  a.binomial(users, p))
    assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("n", [10**3, 10**6])
def test_round_cells_are_numpys(n):
  pop = _zipf(n).encode()
  tables = vote_counts.count_tables(pop)
  rng = np.random.default_rng(3)
  for depth in range(2, len(tables.levels) + 1):
    level = tables.levels[depth - 1]
    parents = tables.levels[depth - 2].users.size
    if not parents:
      continue
    for size in (1, 5, parents):
      frontier = np.sort(rng.choice(parents, size=min(size, parents),
                                    replace=False)).astype(np.int64)
      got = compiled.round_cell_users(level.parents, level.users, frontier,
                                      tables.num_users)
      want = vote_counts._cells(  # pylint: disable=protected-access
          level, tables.positions, tables.num_users, frontier)
      for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_read_only_cells_are_read():
  users = np.array([3, 4, 5], dtype=np.int64)
  users.flags.writeable = False
  _same(users, 6, 0)


def _zipf(n: int):
  rng = np.random.default_rng(7)
  words = sorted({"".join(rng.choice(list("abcdefgh"), size=k))
                  for k in rng.integers(1, 8, size=3000)})
  probs = 1.0 / np.arange(1, len(words) + 1)
  users = rng.multinomial(n, probs / probs.sum())
  return population_lib.Population.from_word_frequencies(words, users)


@pytest.mark.parametrize("n", [10**4, 10**6, 10**9])
@pytest.mark.parametrize("rate", [None, 0.01])
def test_the_engine_grows_the_same_tries(n, rate, monkeypatch):
  pop = _zipf(n).encode()
  tries = []
  for draws in (compiled, None):
    monkeypatch.setattr(thinning, "compiled", draws)
    tries.append([fast_engine.run(pop, theta=12, batch_size=int(n**0.5) * 20,
                                  rng=np.random.default_rng(seed),
                                  num_sub_rounds=2,
                                  sampling_rate=rate).heavy_hitters()
                  for seed in range(20)])
  assert tries[0] == tries[1]
  assert any(tries[0])
