"""The prefix code: string prefixes are bit prefixes; the valid candidates
counted by class are the ones enumerated."""

import numpy as np
import pytest

from triehh.core import prefix_code

CODE = prefix_code.PrefixCode(("a", "b", "c"), 4)  # 2 bits a character


def test_encode_decode_and_prefixes():
  ids, ok = CODE.encode(["ab", "abca", "", "abcab", "ax"])
  assert ok.tolist() == [True, True, False, False, False]
  assert CODE.decode(ids[:2]) == ["ab", "abca"]
  assert int(ids[0]) == 0b01_10_00_00
  assert CODE.prefixes(ids[:2], 2).tolist() == [0b0110, 0b0110]
  assert CODE.padding(ids[:2]).tolist() == [2, 0]


def test_class_sizes_count_the_enumerated_extensions():
  for start, stop in ((0, 2), (0, 4), (1, 3), (2, 4)):
    prefixes = [1] if start == 1 else ([0b0110] if start == 2 else [0])
    every = CODE.extensions(prefixes, start, stop)
    assert len(set(every.tolist())) == every.size
    padding = CODE.padding(every)
    if start:  # padding of the whole word: ends past the prefix count too
      assert padding.max() <= stop - start
    sizes = CODE.class_sizes(start, stop)
    assert np.bincount(padding, minlength=len(sizes)).tolist() == sizes
    assert CODE.decode(every, stop)[0]  # no empty word


def test_random_extensions_are_valid_and_of_their_class():
  rng = np.random.default_rng(0)
  prefixes = np.full(500, 0b01, dtype=np.uint64)
  for t in range(4):
    out = CODE.random_extensions(rng, prefixes, 1, 4, t)
    assert (CODE.padding(out) == t).all()
    assert set(out.tolist()) <= set(CODE.extensions([1], 1, 4).tolist())
  draws = CODE.random_extensions(rng, prefixes, 1, 4, 0)
  assert len(set(draws.tolist())) == 27  # 3^3, all reached


def test_too_many_bits_is_refused():
  with pytest.raises(ValueError, match="lower max_length"):
    prefix_code.PrefixCode(tuple("abcdefghijklmnopqrstuvwxyz'"), 13)
