"""Tests of the vocabulary's factorisation and encoding."""

from unittest import mock

from absl.testing import parameterized
import numpy as np

from triehh.core import vocabulary as vocabulary_lib


def _by_dict(words):
  """Codes and uniques in order of first appearance, one word at a time."""
  index = {}
  codes = [index.setdefault(w, len(index)) for w in words]
  return codes, list(index)


_WORDS = (
    ("plain", ["b", "a", "b", "c", "a"]),
    ("nul_tells_words_apart", ["a\x00b", "a", "a\x00", "a", "a\x00b"]),
    ("case_is_kept", ["A", "a", "A"]),
    ("unicode", ["日本", "straße", "日本", "σ"]),
    ("numpy_strings", [np.str_("x"), "y", "x"]),
)
# Each way of numbering: Arrow (from any number of values) and the dict
# (below any number).
_WAYS = (("arrow", 0), ("dict", 10**9))


class FactorizeTest(parameterized.TestCase):

  @parameterized.named_parameters(
      (f"{way}_{name}", words, arrow_from)
      for way, arrow_from in _WAYS for name, words in _WORDS)
  def test_strings_in_order_of_first_appearance(self, words, arrow_from):
    with mock.patch.object(vocabulary_lib, "ARROW_FROM_VALUES", arrow_from):
      codes, uniques = vocabulary_lib.factorize_strings(words)
    want_codes, want_uniques = _by_dict(words)
    self.assertEqual(codes.tolist(), want_codes)
    self.assertEqual(codes.dtype, np.int32)
    self.assertEqual(uniques.tolist(), want_uniques)
    self.assertEqual(uniques.dtype, object)

  @parameterized.named_parameters(
      (f"{way}_{name}", values, arrow_from)
      for way, arrow_from in _WAYS
      for name, values in (("bytes", ["a", b"a"]), ("none", ["a", None]),
                           ("number", ["a", 3]), ("mapping", ["a", {"a": 1}]),
                           ("empty", [])))
  def test_anything_but_strings_is_left_to_the_caller(self, values,
                                                      arrow_from):
    with mock.patch.object(vocabulary_lib, "ARROW_FROM_VALUES", arrow_from):
      self.assertIsNone(vocabulary_lib.factorize_strings(values))

  def test_strings_arrow_cannot_hold_are_left_to_the_caller(self):
    with mock.patch.object(vocabulary_lib, "ARROW_FROM_VALUES", 0):
      self.assertIsNone(vocabulary_lib.factorize_strings(["a", "\ud800"]))

  def test_few_values_are_numbered_without_arrow(self):
    # Arrow's first pa.array imports pandas, which a small input never needs.
    words = ["a", "\ud800", "a"]
    with mock.patch("pyarrow.array", side_effect=AssertionError("Arrow")):
      codes, uniques = vocabulary_lib.factorize_strings(words)
    self.assertEqual(codes.tolist(), [0, 1, 0])
    self.assertEqual(uniques.tolist(), ["a", "\ud800"])

  def test_many_values_are_numbered_by_arrow(self):
    words = [f"w{i % 7}" for i in range(vocabulary_lib.ARROW_FROM_VALUES)]
    with mock.patch("pyarrow.array", side_effect=AssertionError("Arrow")):
      with self.assertRaisesRegex(AssertionError, "Arrow"):
        vocabulary_lib.factorize_strings(words)

  def test_users_of_mappings_are_left_to_the_caller_without_arrow(self):
    # Arrow would infer a struct of one field per distinct word first.
    users = [{f"w{i}": 1} for i in range(100)]
    with mock.patch("pyarrow.array", side_effect=AssertionError("Arrow")):
      self.assertIsNone(vocabulary_lib.factorize_strings(users))

  def test_factorize_falls_back_to_a_dict(self):
    words = ["\ud800", "a", "\ud800"]
    codes, uniques = vocabulary_lib.factorize(words)
    self.assertEqual(codes.tolist(), [0, 1, 0])
    self.assertEqual(uniques.tolist(), ["\ud800", "a"])

  def test_random_words_match_a_dict(self):
    rng = np.random.default_rng(0)
    letters = np.array(list("aAb\x00é"), dtype=object)
    words = ["".join(rng.choice(letters, size=rng.integers(1, 4)))
             for _ in range(2000)]
    codes, uniques = vocabulary_lib.factorize(words)
    want_codes, want_uniques = _by_dict(words)
    self.assertEqual(codes.tolist(), want_codes)
    self.assertEqual(uniques.tolist(), want_uniques)


class EncodeTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("lower_already", ["ab", "ba"], ["ab", "ba"], [0, 1]),
      ("merged_by_case", ["ab", "AB", "Ba"], ["ab", "ba"], [0, 0, 1]),
      ("longer_when_lowered", ["\u0130", "i\u0307"], ["i\u0307"], [0, 0]),
      ("final_sigma", ["\u039f\u03a3", "\u03bf\u03c3"],
       ["\u03bf\u03c2", "\u03bf\u03c3"], [0, 1]),
      ("duplicates_given", ["ab", "ab"], ["ab"], [0, 0]),
  )
  def test_words_are_lowered_and_merged(self, words, vocabulary, old_to_new):
    enc = vocabulary_lib.encode(words, 10, None, "$", "error")
    self.assertEqual(enc.vocabulary.tolist(), vocabulary)
    self.assertEqual(enc.old_to_new.tolist(), old_to_new)
    self.assertEqual(enc.word_lengths.tolist(), [len(w) for w in vocabulary])

  def test_codes_follow_the_sorted_alphabet(self):
    enc = vocabulary_lib.encode(["zé", "az", "é"], 2, None, "$", "error")
    self.assertEqual(enc.alphabet.characters, ("a", "z", "é"))
    np.testing.assert_array_equal(enc.codes,
                                  [[1, 2, 3], [0, 1, 3], [2, 3, -1]])

  def test_unknown_characters_drop_their_words(self):
    enc = vocabulary_lib.encode(["ab", "a-", "b", "\U0010ffff"], 3, "ab", "$",
                                "drop")
    self.assertEqual(enc.vocabulary.tolist(), ["ab", "b"])
    np.testing.assert_array_equal(enc.old_to_new, [0, -1, 1, -1])
    with self.assertRaisesRegex(ValueError, r"character '-' \(U\+002D\)"):
      vocabulary_lib.encode(["ab", "a-"], 3, "ab", "$", "error")

  @parameterized.named_parameters(
      ("not_a_string", ["a", b"b"], TypeError, "every word must be a str"),
      ("empty", ["a", "", "b"], ValueError, "empty word at vocabulary index 1"),
  )
  def test_bad_words(self, words, error, message):
    with self.assertRaisesRegex(error, message):
      vocabulary_lib.encode(words, 3, None, "$", "error")

  def test_an_alphabet_beyond_16_bit_codes_is_refused(self):
    # Codes are int16: 32,768 characters would wrap their end code.
    words = [chr(0x4E00 + i) for i in range(20_000)]
    words += [chr(0x20000 + i) for i in range(12_768)]
    with self.assertRaisesRegex(ValueError, "32,768 characters, more than"):
      vocabulary_lib.encode(words, 3, None, "$", "error")
    enc = vocabulary_lib.encode(words[:-1], 3, None, "$", "error")
    self.assertEqual(enc.alphabet.end_code, 32_767)
    self.assertEqual(int(enc.codes.max()), 32_767)
