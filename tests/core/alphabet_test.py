"""Tests of triehh.core.alphabet: bad characters fail naming the argument."""

import re

from absl.testing import parameterized

from triehh.core import alphabet as alphabet_lib

Alphabet = alphabet_lib.Alphabet


class ArgumentsTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("int_end_symbol", lambda: Alphabet(("a", "b"), end_symbol=5),
       "end_symbol must be a one-character string, got 5"),
      ("none_end_symbol", lambda: Alphabet(("a",), end_symbol=None),
       "end_symbol must be a one-character string, got None"),
      ("int_character", lambda: Alphabet(("a", 5)),
       "characters must be one-character strings, got 5"),
      ("bytes_character", lambda: Alphabet((b"a",)),
       "characters must be one-character strings, got b'a'"),
      ("str_characters", lambda: Alphabet("ab"),
       "characters must be a tuple of one-character strings, got str"),
      ("list_characters", lambda: Alphabet(["a", "b"]),
       "characters must be a tuple of one-character strings, got list"),
      ("of_bytes_items", lambda: Alphabet.of([b"a"]),
       "characters must hold strings, got b'a'"),
      ("of_int_items", lambda: Alphabet.of(["a", 5]),
       "characters must hold strings, got 5"),
      ("of_bytes", lambda: Alphabet.of(b"ab"),
       "characters must be a string or an iterable of strings, got b'ab'"),
      ("of_int", lambda: Alphabet.of(5),
       "characters must be a string or an iterable of strings, got 5"),
      ("of_int_end_symbol", lambda: Alphabet.of("ab", end_symbol=5),
       "end_symbol must be a one-character string, got 5"),
  )
  def test_a_non_string_is_a_type_error_naming_it(self, build, message):
    with self.assertRaisesRegex(TypeError, f"^{re.escape(message)}$"):
      build()

  def test_strings_still_make_alphabets(self):
    self.assertEqual(Alphabet.of(["ba", "c"], end_symbol="#").symbols(),
                     ("a", "b", "c", "#"))
    self.assertEqual(Alphabet(("a", "b")).end_code, 2)
    with self.assertRaisesRegex(ValueError, "end_symbol must be one character"):
      Alphabet(("a",), end_symbol="##")
