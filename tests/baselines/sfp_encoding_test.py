"""Tests of SFP's strings and records: padding, puzzle hash, fragment keys."""

from absl.testing import parameterized
import numpy as np

from triehh.baselines import sfp_encoding


class EncodingTest(parameterized.TestCase):

  def test_words_are_padded_or_truncated(self):
    padded = sfp_encoding.pad_words(["ab", "abcdef", "abcd", ""], 4)
    self.assertEqual(list(padded), ["ab$$", "abcd", "abcd", "$$$$"])
    self.assertEqual(padded.dtype, np.dtype("<U4"))

  def test_a_word_holding_the_padding_symbol_is_refused(self):
    with self.assertRaisesRegex(ValueError, "padding symbol '\\$'"):
      sfp_encoding.pad_words(["ab", "a$"], 4)

  def test_fragment_keys_are_the_bucket_then_the_two_code_points(self):
    padded = sfp_encoding.pad_words(["aé", "b"], 4)
    keys = sfp_encoding.fragment_keys(padded, np.array([7, 255]))
    self.assertEqual(keys.shape, (2, 2, sfp_encoding.KEY_BYTES))
    self.assertEqual(list(keys[0, 0]), [7, 0, 0, ord("a"), 0, 0, ord("é")])
    self.assertEqual(list(keys[0, 1]), [7, 0, 0, ord("$"), 0, 0, ord("$")])
    self.assertEqual(list(keys[1, 0]), [255, 0, 0, ord("b"), 0, 0, ord("$")])
    self.assertEqual(list(sfp_encoding.code_point_bytes(0x1F600)),
                     [0x01, 0xF6, 0x00])

  def test_puzzle_hash_is_in_range_and_depends_on_the_salt(self):
    padded = sfp_encoding.pad_words([f"w{i}" for i in range(200)], 4)
    salt = sfp_encoding.salts(3)[0]
    buckets = sfp_encoding.puzzle_buckets(padded, 16, salt)
    self.assertTrue(((buckets >= 0) & (buckets < 16)).all())
    self.assertEqual(list(buckets),
                     list(sfp_encoding.puzzle_buckets(padded, 16, salt)))
    other = sfp_encoding.puzzle_buckets(padded, 16,
                                        sfp_encoding.salts(4)[0])
    self.assertNotEqual(list(buckets), list(other))

  def test_one_hash_seed_gives_the_salt_and_two_sketch_seeds(self):
    salt, fragment_seed, word_seed = sfp_encoding.salts(2**64 + 5)
    self.assertEqual(salt, (5).to_bytes(8, "little") + b"sfp-puzz")
    self.assertEqual((fragment_seed, word_seed), ([2**64 + 5, 1],
                                                  [2**64 + 5, 2]))

  def test_words_outside_the_alphabet(self):
    padded = sfp_encoding.pad_words(["tea", "café", "naïve"], 6)
    outside, characters = sfp_encoding.outside_alphabet(padded, "acefint$")
    self.assertEqual(list(outside), [False, True, True])
    self.assertEqual(characters, "véï")
