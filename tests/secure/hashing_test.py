"""Words to salted hashes: the contract's SHA-256 prefix, checked by hand."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from triehh.secure import hashing


def _by_hand(word: str, salt: bytes, bits: int) -> int:
  digest = hashlib.sha256(salt + word.encode("utf-8")).digest()
  return int(bin(int.from_bytes(digest, "big"))[2:].zfill(256)[:bits], 2)


@pytest.mark.parametrize("bits", [1, 7, 20, 32, 63, 64])
def test_a_hash_is_the_first_bits_of_sha256_of_salt_and_word(bits):
  salt = b"\x00\x01public salt"
  words = ["the", "été", "", "a much longer word than the others"]
  got = hashing.hash_words(words, salt, bits)
  assert got.dtype == np.uint64
  assert [int(h) for h in got] == [_by_hand(w, salt, bits) for w in words]
  assert all(int(h) < 2**bits for h in got)


def test_another_salt_gives_other_hashes():
  words = [f"word{i}" for i in range(50)]
  first = hashing.hash_words(words, b"salt one", 32)
  second = hashing.hash_words(words, b"salt two", 32)
  np.testing.assert_array_equal(first, hashing.hash_words(words, b"salt one",
                                                          32))
  assert np.sum(first == second) <= 1


def test_new_salts_are_fresh():
  assert len(hashing.new_salt()) == hashing.SALT_BYTES
  assert hashing.new_salt() != hashing.new_salt()


def test_bad_input_is_named():
  with pytest.raises(ValueError, match="bits must be an integer in"):
    hashing.hash_words(["a"], b"s", 65)
  with pytest.raises(TypeError, match="salt must be bytes"):
    hashing.hash_words(["a"], "salt", 8)
  with pytest.raises(TypeError, match=r"words\[1\] must be a str"):
    hashing.hash_words(["a", 3], b"s", 8)
  with pytest.raises(TypeError, match="pass \\[word\\]"):
    hashing.hash_words("abc", b"s", 8)
