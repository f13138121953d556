"""One server's walk: without noise, the two servers' sums are the true
counts of every candidate; the noise each adds has its law."""

from __future__ import annotations

import collections

import numpy as np
from scipy import stats

from triehh.core import discrete_noise
from triehh.secure import idpf
from triehh.secure import plan as plan_lib
from triehh.secure import server as server_lib


def _servers(hashes, plan, seed=0, payloads=None, payload_sigma=None):
  keys = idpf.gen_many(hashes, plan.bits, payloads=payloads,
                       rng=np.random.default_rng(seed))
  return [server_lib.Server(keys[p], plan, np.random.default_rng(seed + 1 + p),
                            payload_sigma) for p in (0, 1)]


def _true_counts(hashes, bits, level, candidates):
  counts = collections.Counter(int(h) >> (bits - level) for h in hashes)
  return np.array([counts[int(c)] for c in candidates], dtype=np.uint64)


def test_the_sums_of_both_servers_are_the_true_counts_at_every_step():
  rng = np.random.default_rng(4)
  bits = 10
  hashes = rng.choice(rng.integers(0, 2**bits, size=12), size=120)
  plan = plan_lib.WalkPlan(bits, (4, 7, 10), (1.0, 1.0, 1.0), (3, 3, 3))
  servers = _servers(hashes, plan)
  for step, level in enumerate(plan.steps):
    sums = [server.sums() for server in servers]
    np.testing.assert_array_equal(servers[0].candidates,
                                  servers[1].candidates)
    np.testing.assert_array_equal(
        sums[0] + sums[1],
        _true_counts(hashes, bits, level, servers[0].candidates))
    shares = [server.share() for server in servers]
    released = [server.finish(shares[1 - server.party])
                for server in servers]
    assert released[0] == released[1]
    assert servers[0].step == step + 1
  assert servers[0].done


def test_chunks_of_clients_add_up_to_the_whole(monkeypatch):
  rng = np.random.default_rng(5)
  hashes = rng.integers(0, 2**8, size=97)
  plan = plan_lib.WalkPlan(8, (8,), (1.0,), (1,))
  whole = [server.sums() for server in _servers(hashes, plan)]
  monkeypatch.setattr(server_lib, "CHUNK_BYTES", 16 * 256 * 7)  # 7 clients
  chunked = [server.sums() for server in _servers(hashes, plan)]
  for a, b in zip(whole, chunked):
    np.testing.assert_array_equal(a, b)


def test_each_server_adds_discrete_gaussian_noise_of_its_sigma():
  """The share minus the sums is the server's noise: its frequencies match
  the discrete Gaussian's pmf (chi-square), and not one of twice sigma."""
  hashes = np.zeros(10, dtype=np.uint64)
  plan = plan_lib.WalkPlan(12, (12,), (2.0,), (0,), noise="gaussian")
  server = _servers(hashes, plan)[1]
  noise = server_lib.signed(server.share() - server.sums())
  assert noise.size == 2**12

  def p_value(sigma):
    values = np.arange(-8, 9)
    pmf = discrete_noise.discrete_gaussian_pmf(sigma, values)
    expected = np.append(pmf, 1 - pmf.sum()) * noise.size
    clipped = np.clip(noise, -9, 9)
    observed = [np.sum(clipped == v) for v in values]
    observed.append(noise.size - sum(observed))
    return stats.chisquare(observed, expected).pvalue
  assert p_value(2.0) > 1e-3
  assert p_value(4.0) < 1e-6


def test_laplace_noise_and_signed_counts():
  hashes = np.zeros(3, dtype=np.uint64)
  plan = plan_lib.WalkPlan(12, (12,), (3.0,), (0,), noise="laplace")
  server = _servers(hashes, plan)[0]
  noise = server_lib.signed(server.share() - server.sums())
  # The discrete Laplace of scale b has variance 2 e^{-1/b} / (1 - e^{-1/b})^2.
  q = np.exp(-1 / 3.0)
  assert abs(noise.var() / (2 * q / (1 - q)**2) - 1) < 0.1
  assert (noise < 0).any()
  assert server_lib.signed(np.array([2**64 - 1], np.uint64))[0] == -1


def test_the_payload_sums_at_the_released_leaves():
  hashes = np.array([5, 5, 5, 9, 9, 2], dtype=np.uint64)
  payloads = np.arange(12).reshape(6, 2)
  plan = plan_lib.WalkPlan(4, (2, 4), (2.0**-10, 2.0**-10), (2, 2),
                           noise="gaussian")
  servers = _servers(hashes, plan, payloads=payloads, payload_sigma=2.0**-10)
  while not servers[0].done:
    shares = [server.share() for server in servers]
    released = [server.finish(shares[1 - server.party])
                for server in servers]
  assert released[0] == {5: 3, 9: 2}
  shares = [server.payload_share() for server in servers]
  sums = servers[0].finish_payload(shares[1])
  assert sums == {5: [0 + 2 + 4, 1 + 3 + 5], 9: [6 + 8, 7 + 9]}


def test_the_verification_step_sums_the_true_counts_of_the_found_words():
  from triehh.core import prefix_code
  code = prefix_code.PrefixCode(tuple("ab"), 4)
  words = ["ab"] * 6 + ["abab"] * 5 + ["b"] * 4 + ["bbba"] * 2
  plan = plan_lib.WalkPlan(8, (4, 8), (1.0, 1.0), ((-9, -9, -9),) * 2,
                           code=code, verify_sigma=1.0, verify_cap=3,
                           verify_thresholds=((-9, 3),))
  servers = _servers(code.encode(words)[0], plan)
  for _ in plan.steps:  # every candidate kept: discovery passes all
    shares = [server.share() for server in servers]
    for server in servers:
      server.finish(shares[1 - server.party])
  assert servers[0].verifying and not servers[0].done
  sums = [server.sums() for server in servers]
  # The three highest discovery counts among the complete words.
  np.testing.assert_array_equal(servers[0].candidates, servers[1].candidates)
  truth = collections.Counter(words)
  found = code.decode(servers[0].candidates)
  assert len(found) == 3 and set(found) <= set(truth)
  np.testing.assert_array_equal(sums[0] + sums[1],
                                [truth[w] for w in found])
  shares = [server.share() for server in servers]
  released = [server.finish(shares[1 - server.party]) for server in servers]
  assert released[0] == released[1] and len(released[0]) == 3
  assert servers[0].done


def test_a_walk_without_verification_has_no_verification_step():
  plan = plan_lib.WalkPlan(4, (4,), (1.0,), (1,))
  servers = _servers(np.arange(4, dtype=np.uint64), plan)
  shares = [server.share() for server in servers]
  for server in servers:
    server.finish(shares[1 - server.party])
  assert servers[0].done and not servers[0].verifying
