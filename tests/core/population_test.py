"""Tests of population encoding."""

from unittest import mock

from absl.testing import parameterized
import numpy as np
import pytest

from triehh.core import alphabet as alphabet_lib
from triehh.core import memory
from triehh.core import population as population_lib
from triehh.core import vocabulary as vocabulary_lib

Population = population_lib.Population


class EncodingTest(parameterized.TestCase):

  def test_codes_and_end_symbol(self):
    pop = Population.from_user_words(["ab", "Ba", "ab"], max_length=3)
    self.assertEqual(pop.alphabet.characters, ("a", "b"))
    self.assertEqual(list(pop.vocabulary), ["ab", "ba"])
    np.testing.assert_array_equal(pop.codes, [[0, 1, 2, -1], [1, 0, 2, -1]])
    np.testing.assert_array_equal(pop.user_word, [0, 1, 0])
    self.assertEqual(pop.ground_truth(), {"ab": 2.0, "ba": 1.0})

  def test_long_words_are_truncated_without_end_symbol(self):
    pop = Population.from_user_words(["abcdef", "abc"], max_length=3)
    np.testing.assert_array_equal(pop.codes[0], [0, 1, 2, -1])
    np.testing.assert_array_equal(pop.codes[1], [0, 1, 2, 6 - 3])
    np.testing.assert_array_equal(pop.sequence_lengths, [3, 4])
    self.assertEqual(pop.alphabet.characters, ("a", "b", "c"))  # 'def' unused

  def test_given_alphabet_error_names_the_character(self):
    with self.assertRaisesRegex(ValueError, r"word 'a-b' has character '-'"):
      Population.from_user_words(["ab", "a-b"], alphabet="ab")

  def test_characters_beyond_max_length_are_never_checked(self):
    pop = Population.from_user_words(["ab-"], alphabet="ab", max_length=2)
    self.assertEqual(pop.num_users, 1)

  def test_drop_policy_removes_users(self):
    pop = Population.from_user_words(["ab", "a-b", "ba", "a-b"], alphabet="ab",
                                     unknown="drop")
    self.assertEqual(pop.num_users, 2)
    self.assertEqual(pop.num_dropped_users, 2)
    self.assertEqual(pop.ground_truth(), {"ab": 1.0, "ba": 1.0})

  def test_drop_everything_is_an_error(self):
    with self.assertRaisesRegex(ValueError, "no users are left"):
      Population.from_user_words(["xy"], alphabet="ab", unknown="drop")

  @parameterized.named_parameters(
      ("end_symbol", ["a$b"], "end symbol"),
      ("empty_word", ["ab", ""], "empty word"),
      ("empty_user", [{"a": 1}, {}], "user 1 has no words"),
      ("bad_count", [{"a": 0}], "positive integer"),
      ("fraction", [{"a": 1.5}], "positive integer"),
      ("no_users", [], "empty"),
  )
  def test_bad_input(self, users, message):
    with self.assertRaisesRegex(ValueError, message):
      Population.from_user_words(users)

  def test_bad_types(self):
    with self.assertRaises(TypeError):
      Population.from_user_words("just one string")
    with self.assertRaises(TypeError):
      Population.from_user_words([3])
    for not_users in (None, 5):  # named, not Python's "is not iterable"
      with self.assertRaisesRegex(TypeError, "user_words must be a sequence "
                                  f"with one entry per user.*got "
                                  f"{type(not_users).__name__}"):
        Population.from_user_words(not_users)

  def test_custom_end_symbol(self):
    pop = Population.from_user_words(["a$b"], end_symbol="#")
    self.assertEqual(pop.alphabet.symbols(), ("$", "a", "b", "#"))

  def test_nul_end_symbol_is_not_the_arrays_padding(self):
    pop = Population.from_user_words(["you", "me", "you"], end_symbol="\x00",
                                     max_length=4)
    self.assertEqual(pop.alphabet.symbols(), ("e", "m", "o", "u", "y", "\x00"))
    np.testing.assert_array_equal(pop.codes, [[4, 2, 3, 5, -1],
                                              [1, 0, 5, -1, -1]])
    self.assertEqual(pop.ground_truth(), {"you": 2.0, "me": 1.0})
    with self.assertRaisesRegex(ValueError, r"word 'y\\x00u' contains the end"):
      Population.from_user_words(["me", "y\x00u"], end_symbol="\x00")
    with self.assertRaisesRegex(ValueError, r"word 'me\\x00' contains the end"):
      Population.from_user_words([{"me\x00": 1}], end_symbol="\x00")

  @parameterized.named_parameters(
      ("one_word", ["a\x00b", "a", "A", "a\x00"]),
      ("several_words", [{"a\x00b": 1, "a": 2}, "A", "a\x00"]),
  )
  def test_nul_is_a_character_that_tells_words_apart(self, users):
    pop = Population.from_user_words(users, max_length=3)
    self.assertEqual(sorted(pop.vocabulary), ["a", "a\x00", "a\x00b"])
    self.assertEqual(pop.alphabet.characters, ("\x00", "a", "b"))
    end = pop.alphabet.end_code
    rows = {w: list(c) for w, c in zip(pop.vocabulary, pop.codes)}
    self.assertEqual(rows, {"a\x00b": [1, 0, 2, end], "a": [1, end, -1, -1],
                            "a\x00": [1, 0, end, -1]})


class TableInputTest(parameterized.TestCase):

  def test_a_data_frame_is_refused_and_its_column_taken(self):
    import pandas as pd  # pylint: disable=g-import-not-at-top
    frame = pd.DataFrame({"word": ["sun", "sun", "moon"]})
    with self.assertRaisesRegex(TypeError, r"not a table: give one column"):
      population_lib.Population.from_user_words(frame)
    self.assertEqual(population_lib.Population.from_user_words(
        frame["word"]).num_users, 3)


class AlphabetFromDataTest(parameterized.TestCase):
  """Whether a population's alphabet was read off its own words."""

  @parameterized.named_parameters(
      ("user_words", lambda **a: population_lib.Population.from_user_words(
          ["ab", "b"], **a)),
      ("several_words", lambda **a: population_lib.Population.from_user_words(
          [{"ab": 2}, {"b": 1}], **a)),
      ("word_indices", lambda **a: population_lib.Population
       .from_word_indices(["ab", "b"], np.array([0, 1, 1]), **a)),
      ("word_frequencies", lambda **a: population_lib.Population
       .from_word_frequencies(["ab", "b"], [2, 1], **a)),
  )
  def test_set_only_when_no_alphabet_is_given(self, build):
    self.assertTrue(build().alphabet_from_data)
    self.assertFalse(build(alphabet="abc").alphabet_from_data)


class SeveralWordsTest(parameterized.TestCase):

  def test_merges_case_and_computes_population_frequency(self):
    pop = Population.from_user_words([{"The": 1, "the": 2, "cat": 1},
                                      {"cat": 3}])
    self.assertFalse(pop.is_single_word)
    self.assertEqual(pop.num_users, 2)
    np.testing.assert_array_equal(pop.user_totals, [4, 3])
    truth = pop.ground_truth()
    self.assertAlmostEqual(truth["the"], 3 / 4)
    self.assertAlmostEqual(truth["cat"], 1 / 4 + 1)
    self.assertAlmostEqual(sum(truth.values()), pop.num_users)

  def test_mixed_entries(self):
    pop = Population.from_user_words(["dog", {"cat": 2, "dog": 2}])
    self.assertEqual(pop.ground_truth(), {"dog": 1.5, "cat": 0.5})


class WordFrequenciesTest(parameterized.TestCase):

  def test_users_per_word_without_a_user_array(self):
    pop = Population.from_word_frequencies(["Sun", "moon", "sun", "star"],
                                           [3, 2, 4, 0])
    self.assertTrue(pop.is_single_word)
    self.assertFalse(pop.has_user_array)
    self.assertIsNone(pop.user_word)
    self.assertEqual(list(pop.vocabulary), ["sun", "moon"])  # star: no user
    np.testing.assert_array_equal(pop.users_per_word, [7, 2])
    self.assertEqual(pop.num_users, 9)
    self.assertEqual(pop.ground_truth(), {"sun": 7.0, "moon": 2.0})
    self.assertIs(pop.encode(), pop)

  def test_same_encoding_as_one_entry_per_user(self):
    words = ["ab", "ba", "abc", "ab", "c", "ab"]
    by_user = Population.from_user_words(words, max_length=2)
    by_count = Population.from_word_frequencies(
        ["ab", "ba", "abc", "c"], [3, 1, 1, 1], max_length=2)
    self.assertEqual(list(by_count.vocabulary), list(by_user.vocabulary))
    np.testing.assert_array_equal(by_count.codes, by_user.codes)
    np.testing.assert_array_equal(by_count.users_per_word,
                                  by_user.users_per_word)
    self.assertEqual(by_count.ground_truth(), by_user.ground_truth())

  def test_huge_populations_cost_memory_in_words_only(self):
    pop = Population.from_word_frequencies(["a", "b"], [10**12, 3 * 10**11])
    self.assertEqual(pop.num_users, 1_300_000_000_000)
    self.assertEqual(pop.ground_truth(), {"a": 1e12, "b": 3e11})

  def test_drop_policy_counts_the_users_of_dropped_words(self):
    pop = Population.from_word_frequencies(["ab", "a-b", "ba"], [5, 7, 2],
                                           alphabet="ab", unknown="drop")
    self.assertEqual(pop.num_users, 7)
    self.assertEqual(pop.num_dropped_users, 7)

  def test_what_needs_individual_users_says_so(self):
    pop = Population.from_word_frequencies(["ab"], [4])
    with self.assertRaisesRegex(ValueError,
                                "user_totals needs individual users.*"
                                "from_word_frequencies"):
      _ = pop.user_totals

  @parameterized.named_parameters(
      ("shape", ["a", "b"], [1], ValueError, "one count per word"),
      ("negative", ["a", "b"], [1, -2], ValueError, "negative count.*'b'"),
      ("no_users", ["a", "b"], [0, 0], ValueError, "counts no user"),
      ("no_words", [], [], ValueError, "words is empty"),
      ("fraction", ["a"], [1.5], TypeError, "must hold integers"),
      ("too_many", ["a", "b"], [2**61, 2**61], ValueError, "2\\^62"),
      ("string", "ab", [1, 1], TypeError, "single string"),
  )
  def test_bad_input(self, words, users, error, message):
    with self.assertRaisesRegex(error, message):
      Population.from_word_frequencies(words, users)


class PrefixIdsTest(parameterized.TestCase):

  def test_against_brute_force(self):
    rng = np.random.default_rng(7)
    words = ["".join(rng.choice(list("abcd"), size=rng.integers(1, 7)))
             for _ in range(300)]
    pop = Population.from_user_words(words, max_length=4)
    seqs = [pop.alphabet.decode(c) for c in pop.codes]
    for level in range(pop.num_levels + 1):
      ids = pop.prefix_ids[level]
      prefixes = sorted({s[:level] for s in seqs if len(s) >= level},
                        key=lambda p: [pop.alphabet.symbols().index(c) for c in p])
      self.assertEqual(pop.num_prefixes[level], len(prefixes))
      for w, s in enumerate(seqs):
        if len(s) >= level:
          self.assertEqual(prefixes[ids[w]], s[:level])
        else:
          self.assertEqual(ids[w], -1)


class AsPopulationTest(parameterized.TestCase):

  def test_population_is_returned_as_is(self):
    pop = Population.from_user_words(["ab", "b"], max_length=3)
    self.assertIs(population_lib.as_population(pop, 3), pop)

  def test_words_are_encoded_with_options(self):
    pop = population_lib.as_population(["ab", "a-"], 2, alphabet="ab",
                                       unknown="drop")
    self.assertEqual(list(pop.vocabulary), ["ab"])
    self.assertEqual(pop.num_dropped_users, 1)
    self.assertEqual(pop.max_length, 2)

  def test_other_max_length_is_refused(self):
    pop = Population.from_user_words(["ab"], max_length=3)
    with self.assertRaisesRegex(ValueError, "max_length=3 but max_length=4"):
      population_lib.as_population(pop, 4)

  def test_options_with_a_population_are_refused(self):
    pop = Population.from_user_words(["ab"], max_length=3)
    with self.assertRaisesRegex(ValueError, r"\['alphabet'\] only apply"):
      population_lib.as_population(pop, 3, alphabet="ab")


class AlphabetTest(parameterized.TestCase):

  def test_of_and_decode(self):
    a = alphabet_lib.Alphabet.of("cab")
    self.assertEqual(a.characters, ("a", "b", "c"))
    self.assertEqual(a.end_code, 3)
    self.assertEqual(a.decode([2, 0, 3]), "ca$")
    self.assertEqual(a.decode_word([2, 0, 3]), "ca")

  @parameterized.parameters((("a", "$"), "$"), (("ab",), "$"), (("b", "a"), "$"),
                            ((), "$"), (("a",), "##"))
  def test_invalid(self, chars, end):
    with self.assertRaises(ValueError):
      alphabet_lib.Alphabet(chars, end)


class ArgumentsTest(parameterized.TestCase):
  """Bad arguments fail naming them, before any work."""

  @parameterized.named_parameters(
      ("bool_max_length", dict(max_length=True), TypeError,
       "max_length must be an integer, got True"),
      ("float_max_length", dict(max_length=2.0), TypeError,
       "max_length must be an integer, got 2.0"),
      ("none_end_symbol", dict(end_symbol=None), TypeError,
       "end_symbol must be a one-character string, got None"),
      ("long_end_symbol", dict(end_symbol="##"), ValueError,
       "end_symbol must be exactly one character"),
      ("bad_policy", dict(unknown="skip"), ValueError,
       "unknown must be one of 'error', 'drop', got 'skip'"),
      ("bad_alphabet", dict(alphabet=3), TypeError,
       "alphabet must be an Alphabet, a string of characters or None"),
  )
  def test_encoding_options(self, kwargs, error, message):
    with self.assertRaisesRegex(error, message):
      Population.from_user_words(["ab", "cd"], **kwargs)
    with self.assertRaisesRegex(error, message):
      Population.from_word_frequencies(["ab", "cd"], [1, 2], **kwargs)

  def test_a_mapping_is_not_one_entry_per_user(self):
    with self.assertRaisesRegex(TypeError, "user_words must be a sequence "
                                ".*not a mapping.*from_word_frequencies"):
      Population.from_user_words({"sun": 10**30})

  @parameterized.named_parameters(
      ("beyond_int64", {"sun": 10**30}, ValueError,
       r"user_words: user 1: the count of 'sun' must be a positive integer "
       r"below 2\^63, got 10{30}"),
      ("string", {"sun": "3"}, TypeError,
       "user_words: user 1: the count of 'sun' must be a positive integer, "
       "got '3'"),
      ("bool", {"sun": True}, TypeError, "the count of 'sun'"),
      ("nan", {"sun": float("nan")}, ValueError,
       "user_words: user 1: the count of 'sun' must be a positive integer"),
  )
  def test_bad_counts_name_the_user_and_the_word(self, entry, error, message):
    with self.assertRaisesRegex(error, message):
      Population.from_user_words([{"moon": 1}, entry])

  def test_whole_float_counts_still_count(self):
    pop = Population.from_user_words([{"sun": 2.0, "moon": 1}])
    self.assertEqual(pop.ground_truth(), {"sun": 2 / 3, "moon": 1 / 3})

  @parameterized.named_parameters(
      ("beyond_int64", [2**63], "2\\^63 or more"),
      ("fraction", [1.5], "entry_count must hold whole counts, got 1.5"),
      ("total_beyond_int64", [2**62, 2**62], "add up to 2\\^63 or more"),
  )
  def test_csr_counts_are_checked_not_wrapped(self, counts, message):
    with self.assertRaisesRegex(ValueError, message):
      Population.from_word_counts(["a", "b"], [0, len(counts)],
                                  list(range(len(counts))), counts)

  def test_a_lone_surrogate_is_refused_not_published(self):
    # It was found and published, and writing the result then failed.
    with self.assertRaisesRegex(ValueError, "holds a lone surrogate"):
      Population.from_user_words(["\ud800x"] * 3 + ["sun"])
    with self.assertRaisesRegex(ValueError, "holds a lone surrogate"):
      Population.from_word_frequencies(["sun", "a\udfffb"], [5, 5])

  def test_csr_word_indices_are_in_the_vocabulary(self):  # was an IndexError
    with self.assertRaisesRegex(ValueError, r"entry_word .*holds index 2, "
                                r"outside \[0, 2\)"):
      Population.from_word_counts(["a", "b"], [0, 1], [2], [1])

  @parameterized.named_parameters(
      ("fraction_index", dict(entry_word=[0.7, 1]), ValueError,
       "entry_word .*whole-number indices, got 0.7"),
      ("fraction_offset", dict(user_offsets=[0, 1.5, 2]), ValueError,
       "user_offsets must hold whole counts, got 1.5"),
      ("two_d", dict(entry_word=[[0], [1]]), ValueError,
       "entry_word .*1-D sequence"),
      ("huge_offset", dict(user_offsets=[0, 2**70]), ValueError,
       "user_offsets must be in"),
      ("string_vocabulary", dict(vocabulary="sun"), TypeError,
       "vocabulary must be a sequence"))
  def test_csr_arrays_are_checked_not_truncated(self, change, error, match):
    # 0.7 was truncated to 0, 1.5 to 1 and "sun" read as three words.
    args = dict(vocabulary=["sun", "moon"], user_offsets=[0, 1, 2],
                entry_word=[0, 1], entry_count=[1, 1])
    args.update(change)
    with self.assertRaisesRegex(error, match):
      Population.from_word_counts(**args)

  @parameterized.named_parameters(
      ("two_to_63", [2**63]),
      ("uint64", np.array([2**63], dtype=np.uint64)))
  def test_frequencies_of_2_63_or_more_are_too_large(self, users):
    with self.assertRaisesRegex(ValueError, r"2\^63 or more"):
      Population.from_word_frequencies(["sun"], users)

  def test_unsigned_word_indices_are_taken(self):
    pop = Population.from_word_indices(["sun", "moon"],
                                       np.array([0, 1, 1], dtype=np.uint64))
    self.assertEqual(pop.ground_truth(), {"moon": 2, "sun": 1})


class MemoryTest(parameterized.TestCase):
  """Sizes that would not fit are refused before anything is allocated."""

  def setUp(self):
    super().setUp()
    self.available = 2**20  # 1 MiB
    self.enter_context(mock.patch.object(memory, "available_bytes",
                                         lambda: self.available))

  def test_max_length_is_refused_before_encoding(self):
    self.enter_context(mock.patch.object(
        vocabulary_lib, "encode",
        side_effect=AssertionError("encoded although it does not fit")))
    # 3 words of up to 100,000 characters: 3 * 100,002 * 32 bytes.
    with self.assertRaisesRegex(
        memory.InsufficientMemoryError,
        r"^max_length=100,000 characters for each of 3 distinct words would "
        r"need about 9.2 MiB of memory, more than the 1.0 MiB available; use "
        r"max_length <= 10,920 \(the longest word has 4 characters; longer "
        r"words are truncated\)$"):
      Population.from_user_words(["sun", "moon", "star"], max_length=100_000)
    for build in (
        lambda: Population.from_word_frequencies(["sun"], [10**12],
                                                 max_length=10**6),
        lambda: Population.from_user_words([{"sun": 1}], max_length=10**6)):
      with self.assertRaisesRegex(memory.InsufficientMemoryError,
                                  "max_length=1,000,000"):
        build()

  def test_what_fits_is_said_to_fit(self):
    self.available = population_lib.inputs.encoding_bytes(3, 10_920)
    pop = Population.from_user_words(["sun", "moon", "star"],
                                     max_length=10_920)
    self.assertEqual(pop.max_length, 10_920)


def test_entry_users_index_each_entry_by_its_user():
  pop = population_lib.Population.from_user_words(
      [{"ab": 2, "ba": 1}, {"ab": 1}, {"b": 1, "a": 3, "ab": 1}],
      max_length=3, alphabet="ab")
  assert pop.entry_users.tolist() == [0, 0, 1, 2, 2, 2]
  one_word = population_lib.Population.from_word_frequencies(
      ["ab", "ba"], [3, 1], max_length=3, alphabet="ab")
  with pytest.raises(ValueError, match="no \\(user, word\\) entries"):
    one_word.entry_users  # pylint: disable=pointless-statement
