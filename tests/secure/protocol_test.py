"""The two-server walk's entry point: its arguments, its release, the view
of one server, and its law against the fast engine's."""

from __future__ import annotations

import collections
import functools

import numpy as np
import pytest
from scipy import stats

from tests.secure import two_sample
from triehh.core import prefix_code
from triehh.engines import two_servers as engine
from triehh.secure import hashing
from triehh.secure import idpf
from triehh.secure import protocol
from triehh.secure import server as server_lib


def test_heavy_words_are_found_by_their_salted_hashes():
  salt = b"a public salt"
  words = ["apple"] * 40 + ["pear"] * 25 + ["fig"] * 2 + [
      f"rare{i}" for i in range(30)]
  hashes = hashing.hash_words(words, salt, 20)
  release = protocol.run_walk(hashes, 20, [5, 10, 15, 20], [1.0] * 4,
                              [10] * 4, seed=3, transport="inprocess")
  found = set(release.frontiers[-1])
  assert found == set(hashing.hash_words(["apple", "pear"], salt,
                                         20).tolist())
  assert abs(release.frontiers[-1][int(hashes[0])] - 40) < 15
  cost = release.cost
  assert cost.clients == 97 and cost.key_bytes == idpf.key_bytes(20) == 524
  assert cost.upload_bytes_per_client == 2 * 524
  assert cost.candidates[0] == 32 and len(cost.candidates) == 4
  assert cost.exchanged_bytes == 16 * sum(cost.candidates)
  assert "research prototype" in release.prototype
  assert "do not collude with each other" in release.trust_model


def test_a_seed_gives_one_release_and_no_seed_fresh_ones():
  hashes = np.arange(60) % 3
  args = (hashes, 8, [4, 8], [2.0, 2.0], [5, 5])
  first = protocol.run_walk(*args, seed=9, transport="inprocess")
  again = protocol.run_walk(*args, seed=9, transport="inprocess")
  assert first.frontiers == again.frontiers
  fresh = {tuple(protocol.run_walk(*args, seed=None, transport="inprocess")
                 .frontiers[-1].items()) for _ in range(4)}
  assert len(fresh) > 1


@pytest.mark.parametrize("change, match", [
    (dict(hashes=[16]), r"hashes must be in \[0, 2\^bits\) with bits=4"),
    (dict(hashes=[[1]]), "hashes must be a 1-d array"),
    (dict(hashes=[]), "hashes must hold at least one client's point"),
    (dict(transport="grpc"), "transport must be one of loopback, inprocess"),
    (dict(payloads=[[1]]), "payloads need payload_sigma"),
    (dict(seed=-1), "seed must be None or an integer >= 0"),
    (dict(steps=[2, 3]), "steps must end at bits=4"),
])
def test_bad_arguments_are_one_line_naming_them(change, match):
  args = dict(hashes=[1], bits=4, steps=[2, 4], sigmas=[1.0, 1.0],
              thresholds=[1, 1], seed=0, transport="inprocess")
  args.update(change)
  with pytest.raises(ValueError, match=match):
    protocol.run_walk(**args)


def test_a_refused_step_keeps_the_steps_released_before(monkeypatch):
  monkeypatch.setattr(server_lib, "MAX_CANDIDATES", 100)
  with pytest.raises(protocol.transport.ProtocolError,
                     match=r"^step 1 would evaluate up to 256 candidates "
                     r"\(16 live prefixes\), more than 100: set max_frontier"
                     r", or raise thresholds\[0\] \(after 1 released"):
    protocol.run_walk(np.arange(30) % 5, 8, [4, 8], [1.0, 1.0], [-50, 3],
                      seed=0, transport="inprocess")
  try:
    protocol.run_walk(np.arange(30) % 5, 8, [4, 8], [1.0, 1.0], [-50, 3],
                      seed=0, transport="inprocess")
  except protocol.transport.ProtocolError as error:
    assert [sorted(f) for f in error.frontiers] == [list(range(16))]
    assert error.frontiers[0][0] > 10  # 30 clients under prefix 0


def test_payload_sums_are_released_at_the_last_step():
  hashes = np.array([3] * 30 + [12] * 20, dtype=np.uint64)
  payloads = np.stack([np.arange(50), np.ones(50, dtype=np.int64)], axis=1)
  release = protocol.run_walk(hashes, 4, [4], [1.0], [10], seed=2,
                              payloads=payloads, payload_sigma=1.0,
                              transport="inprocess", noise="gaussian")
  assert set(release.payloads) == {3, 12}
  assert abs(release.payloads[3][0] - sum(range(30))) < 10
  assert abs(release.payloads[12][1] - 20) < 10
  assert release.cost.exchanged_bytes == 16 * (16 + 2 * 2)


def test_one_servers_keys_for_two_words_have_one_law():
  """Server 1's keys of 2,000 clients of "apple" against 2,000 of "zebra"
  (two-sample test on every bit it holds); the test sees a key that
  carries one bit of the hash (one where the two hashes differ)."""
  salt = b"salt"
  first, second = (
      protocol.client_keys(np.repeat(hashing.hash_words([w], salt, 16), 2000),
                           16, rng=np.random.default_rng(seed))[1]
      for w, seed in (("apple", 1), ("zebra", 2)))
  size = idpf.key_bytes(16)
  bits = [two_sample.key_bits(keys.to_bytes(), size)
          for keys in (first, second)]
  assert two_sample.p_value(*bits) > 1e-3
  hashes = [int(h) for h in hashing.hash_words(["apple", "zebra"], salt, 16)]
  differ = hashes[0] ^ hashes[1]
  where = (differ & -differ).bit_length() - 1  # a bit where they differ
  leaked = [np.concatenate([b, np.full((2000, 1), h >> where & 1, np.uint8)],
                           axis=1) for b, h in zip(bits, hashes)]
  assert two_sample.p_value(*leaked) < 1e-6


# Equal in law: the real protocol (its servers' keys, sums and noise)
# against the fast engine, which draws the release from the counts alone.
# Plans: 6-bit hashes, two steps, discrete Gaussian; and the prefix code
# of words of at most 3 characters over "abc", one character per step (or
# two, then one), discrete Laplace, thresholds per trailing end codes, a
# frontier of 2.

_CODE = prefix_code.PrefixCode(tuple("abc"), 3)
_WORDS = ["a"] * 3 + ["ab"] * 4 + ["abc"] * 5 + ["b"] * 2 + ["ca"] * 4
_CASES = {
    "hashes": (np.array([1] * 6 + [2] * 4 + [0b101000] * 3 + [0b111111] * 2,
                        dtype=np.uint64),
               dict(bits=6, steps=[3, 6], sigmas=[1.0, 1.0],
                    thresholds=[4, 4], noise="gaussian")),
    "words": (_CODE.encode(_WORDS)[0],
              dict(bits=6, steps=[2, 4, 6], sigmas=[1.0, 1.0, 1.0],
                   thresholds=[[3, 4], [3, 4], [3, 4]], noise="laplace",
                   code=_CODE, max_frontier=2)),
    # Discover at loose thresholds and twice the noise, then verify the
    # (at most 3) words found, each released at the threshold for V's size.
    # A first step of two characters from the root, then one: the walk's
    # widest-first rule under a work bound (the empty word never passes).
    "wide first": (_CODE.encode(_WORDS)[0],
                   dict(bits=6, steps=[4, 6], sigmas=[1.0, 1.0],
                        thresholds=[[3, 4, 2**62], [3, 4]], noise="laplace",
                        code=_CODE, max_frontier=2)),
    "verified": (_CODE.encode(_WORDS)[0],
                 dict(bits=6, steps=[2, 4, 6], sigmas=[1.6, 1.6, 1.6],
                      thresholds=[[2, 3], [2, 3], [2, 3]], noise="laplace",
                      code=_CODE, max_frontier=2, verify_sigma=0.8,
                      verify_cap=3, verify_thresholds=((3, 1), (4, 3)))),
    # No table: every point of V returned with its noisy count (the
    # weighted split cuts them after, triehh.theory.two_servers.verified).
    "verified, every point": (
        _CODE.encode(_WORDS)[0],
        dict(bits=6, steps=[2, 4, 6], sigmas=[1.6, 1.6, 1.6],
             thresholds=[[2, 3], [2, 3], [2, 3]], noise="laplace",
             code=_CODE, max_frontier=2, verify_sigma=0.8, verify_cap=3,
             verify_thresholds=())),
}
_RUNS = 200
# The verification's noise moves fewer outcomes: more runs to see it.
_RUNS_OF = {"verified": 400, "verified, every point": 400}


def _released(frontiers) -> tuple:
  """A run as one category: the kept candidates of the last step and how
  many the first step kept."""
  return (tuple(sorted(frontiers[-1])), len(frontiers[0]))


def _heavy(frontiers) -> int:
  """The noisy count of the first step's heaviest kept candidate (true count
  10 or 9), in bins of width 2 (-1: none kept)."""
  heavy = max(frontiers[0].values(), default=None)
  return -1 if heavy is None else int(np.digitize(heavy, [6, 8, 10, 12, 14]))


def _last_count(frontiers) -> int:
  """The last dict's noisy count at its smallest point, in bins of width 2
  (-1: none kept)."""
  last = frontiers[-1]
  if not last:
    return -1
  return int(np.digitize(last[min(last)], [-2, 0, 2, 4, 6, 8]))


def _p_value(first: list, second: list) -> float:
  """Chi-square test that two samples of outcomes have one law (outcomes
  seen fewer than 10 times in both together pooled)."""
  counts = [collections.Counter(first), collections.Counter(second)]
  total = counts[0] + counts[1]
  common = sorted((k for k, v in total.items() if v >= 10), key=repr)
  table = [[c[k] for k in common] + [sum(v for k, v in c.items()
                                         if k not in common)]
           for c in counts]
  table = np.array(table)
  table = table[:, table.sum(axis=0) > 0]
  return float(stats.chi2_contingency(table)[1])


@functools.lru_cache(maxsize=None)
def _protocol_runs(case: str) -> list:
  ids, plan = _CASES[case]
  return [protocol.run_walk(ids, seed=seed, transport="inprocess",
                            **plan).frontiers
          for seed in range(_RUNS_OF.get(case, _RUNS))]


def _engine_runs(case: str, seed: int, **changes) -> list:
  ids, plan = _CASES[case]
  plan = dict(plan, **changes)
  counts = dict(collections.Counter(ids.tolist()))
  rng = np.random.default_rng(seed)
  return [engine.run_walk(
      counts, plan["bits"], plan["steps"], plan["sigmas"],
      plan["thresholds"], rng, noise=plan["noise"], code=plan.get("code"),
      max_frontier=plan.get("max_frontier"),
      verify_sigma=plan.get("verify_sigma"),
      verify_cap=plan.get("verify_cap"),
      verify_thresholds=plan.get("verify_thresholds", ()))
          for _ in range(_RUNS_OF.get(case, _RUNS))]


def _p_values(first: list, second: list) -> tuple[float, float, float]:
  """The tests' p-values: the released sets, the heavy noisy count, the
  last step's count at its smallest point."""
  return tuple(_p_value([statistic(f) for f in first],
                        [statistic(f) for f in second])
               for statistic in (_released, _heavy, _last_count))


@pytest.mark.parametrize("case", sorted(_CASES))
def test_the_protocol_and_the_fast_engine_are_equal_in_law(case):
  assert min(_p_values(_protocol_runs(case), _engine_runs(case, 100))) > 1e-3


@pytest.mark.parametrize("case, changes", [
    ("hashes", dict(thresholds=[5, 5])),
    ("hashes", dict(sigmas=[1.6, 1.6])),
    ("words", dict(thresholds=[[4, 5], [4, 5], [4, 5]])),
    ("wide first", dict(thresholds=[[4, 5, 2**62], [4, 5]])),
    ("verified", dict(verify_thresholds=((4, 1), (5, 3)))),
    ("verified", dict(verify_sigma=0.25)),
    ("verified, every point", dict(verify_sigma=0.25)),
])
def test_the_law_test_sees_a_wrong_threshold_or_noise_scale(case, changes):
  assert min(_p_values(_protocol_runs(case),
                       _engine_runs(case, 101, **changes))) < 1e-4
