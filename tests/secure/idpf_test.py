"""The incremental DPF: shares add up to the point function at every level,
keys serialise, and one server's keys say nothing of the point."""

from __future__ import annotations

import numpy as np
import pytest
from tests.secure import two_sample
from triehh.secure import idpf

MOD = 2**64


def _point_function(alphas, bits, level, prefixes):
  return (np.asarray(prefixes, np.uint64)[None, :]
          == (np.asarray(alphas, np.uint64)[:, None]
              >> np.uint64(bits - level))).astype(np.uint64)


@pytest.mark.parametrize("bits", [1, 5, 12])
def test_shares_add_up_to_one_on_the_path_and_zero_elsewhere(bits):
  rng = np.random.default_rng(bits)
  alphas = rng.integers(0, 2**bits, size=40, dtype=np.uint64)
  keys = idpf.gen_many(alphas, bits, rng=rng)
  for level in range(1, bits + 1):
    # Every prefix of small levels; the path and random others below.
    if level <= 6:
      prefixes = np.arange(2**level, dtype=np.uint64)
    else:
      prefixes = np.unique(np.concatenate([
          alphas >> np.uint64(bits - level),
          rng.integers(0, 2**level, size=60, dtype=np.uint64)]))
    total = (idpf.eval_prefixes(keys[0], prefixes, level)
             + idpf.eval_prefixes(keys[1], prefixes, level))
    np.testing.assert_array_equal(
        total, _point_function(alphas, bits, level, prefixes))


def test_a_64_bit_point_and_its_neighbours():
  rng = np.random.default_rng(64)
  alpha = 2**64 - 3
  keys = idpf.gen(alpha, 64, rng=rng)
  for prefix, want in ((alpha, 1), (alpha - 1, 0), (alpha + 1, 0)):
    got = sum(idpf.eval(key, prefix, 64) for key in keys) % MOD
    assert got == want
  top = sum(idpf.eval(key, 1, 1) for key in keys) % MOD
  assert top == 1


def test_values_per_level_and_the_payload():
  rng = np.random.default_rng(5)
  bits, d = 6, 4
  alphas = rng.integers(0, 2**bits, size=25, dtype=np.uint64)
  values = [3, -1, 0, 2**63, 7, 1]
  payloads = rng.integers(-2**40, 2**40, size=(25, d)).tolist()
  keys = idpf.gen_many(alphas, bits, values=values, payloads=payloads,
                       rng=rng)
  for level in range(1, bits + 1):
    prefixes = np.arange(2**level, dtype=np.uint64)
    total = (idpf.eval_prefixes(keys[0], prefixes, level)
             + idpf.eval_prefixes(keys[1], prefixes, level))
    want = _point_function(alphas, bits, level, prefixes) * np.uint64(
        values[level - 1] % MOD)
    np.testing.assert_array_equal(total, want)
  leaves = [idpf.Frontier.root(key).expand(bits) for key in keys]
  payload = leaves[0].payload_shares() + leaves[1].payload_shares()
  assert payload.shape == (25, 2**bits, d)
  for client, alpha in enumerate(alphas):
    assert [int(v) for v in payload[client, alpha]] == [
        v % MOD for v in payloads[client]]
    others = np.delete(payload[client], int(alpha), axis=0)
    assert not np.any(others)


def test_walking_a_frontier_equals_evaluating_each_prefix():
  rng = np.random.default_rng(9)
  bits = 10
  alphas = rng.integers(0, 2**bits, size=30, dtype=np.uint64)
  key = idpf.gen_many(alphas, bits, rng=rng)[1]
  frontier = idpf.Frontier.root(key).expand(3)
  kept = frontier.descend([1, 6], 3)
  deeper = kept.expand(4)
  np.testing.assert_array_equal(
      deeper.prefixes, np.concatenate([np.arange(16, 32), np.arange(96, 112)]))
  np.testing.assert_array_equal(
      deeper.shares(), idpf.eval_prefixes(key, deeper.prefixes, 7))
  leaves = deeper.descend([16 * 8 + 5, 111 * 8], bits)
  np.testing.assert_array_equal(
      leaves.shares(), idpf.eval_prefixes(key, [16 * 8 + 5, 111 * 8], bits))


def test_keys_serialise_to_their_stated_size_and_back():
  rng = np.random.default_rng(2)
  keys = idpf.gen_many(rng.integers(0, 2**20, size=7), 20,
                       payloads=rng.integers(0, 9, size=(7, 3)), rng=rng)
  data = keys[1].to_bytes()
  assert len(data) == 7 * idpf.key_bytes(20, 3) == 7 * (24 + 25 * 20 + 24)
  back = idpf.Keys.from_bytes(data)
  assert (back.party, back.bits, back.d, len(back)) == (1, 20, 3, 7)
  for name in ("seed", "seed_cw", "control_cw", "value_cw", "payload_cw"):
    np.testing.assert_array_equal(getattr(back, name), getattr(keys[1], name))
  assert idpf.key_bytes(32) == 824
  one = idpf.Keys.from_bytes(keys[0].select([4]).to_bytes())
  np.testing.assert_array_equal(one.seed_cw[0], keys[0].seed_cw[4])


def test_bad_input_is_named():
  with pytest.raises(ValueError, match="alphas must be below 2\\^bits"):
    idpf.gen(8, 3)
  with pytest.raises(ValueError, match="bits must be in"):
    idpf.gen(0, 65)
  with pytest.raises(ValueError, match="payloads must have one row"):
    idpf.gen_many([1, 2], 3, payloads=[[1, 2]])
  header = bytearray(idpf.gen(1, 3)[0].to_bytes())
  header[4] = 0  # a key of 0 bits
  with pytest.raises(ValueError, match="the bits 1 to 64"):
    idpf.Keys.from_bytes(bytes(header))
  with pytest.raises(ValueError, match="whole number of keys"):
    idpf.Keys.from_bytes(idpf.gen(1, 3)[0].to_bytes() + b"x")
  with pytest.raises(ValueError, match="extending a prefix"):
    idpf.Frontier.root(idpf.gen(1, 3)[0]).expand(1).descend([9], 3)


# The view of one server: its keys for clients of one word against its keys
# for clients of another.

def _key_bits(alpha: int, count: int, seed: int, leak: bool = False
              ) -> np.ndarray:
  """Server 0's keys of ``count`` clients of point ``alpha``, as a
  (count, bits of a key) array of 0/1; ``leak`` appends alpha's top bit
  (a broken key, for the test to reject)."""
  rng = np.random.default_rng(seed)
  keys = idpf.gen_many(np.full(count, alpha), 8, rng=rng)[0]
  raw = np.frombuffer(keys.to_bytes(), np.uint8).reshape(count, -1)
  if leak:
    raw = np.concatenate([raw, np.full((count, 1), alpha >> 7, np.uint8)],
                         axis=1)
  return two_sample.key_bits(raw.tobytes(), raw.shape[1])


def test_one_servers_keys_for_two_points_have_one_law():
  first = _key_bits(0b00000000, 3000, seed=11)
  second = _key_bits(0b11111111, 3000, seed=12)
  assert first.shape[1] == 8 * idpf.key_bytes(8)
  assert two_sample.p_value(first, second) > 1e-3


def test_the_view_test_rejects_keys_that_leak_a_bit_of_the_point():
  first = _key_bits(0b00000000, 3000, seed=11, leak=True)
  second = _key_bits(0b11111111, 3000, seed=12, leak=True)
  assert two_sample.p_value(first, second) < 1e-6
