"""Tests of triehh.data.tokenize against its one-text-at-a-time reference."""

import numpy as np
import pyarrow as pa
import pytest

from tests.data import helpers
from triehh.data import readers
from triehh.data import report as report_lib
from triehh.data import settings
from triehh.data import tokenize
from triehh.data import user_texts as user_texts_lib

# Characters the random texts are made of: ASCII of every class, every
# whitespace character of the rule, latin-1 letters and spaces, and (UTF-8
# only) characters beyond latin-1. U+212A is left out on purpose (the
# documented exception).
ASCII_POOL = (list("abcXYZ019'@#$.-!?()*:/\"") + list(tokenize.WHITESPACE)
              + ["\x00", "\x7f"])
LATIN1_POOL = ASCII_POOL + list("\xe9\xc9\xdf\xa0\x85\xa3\xff")
UTF8_POOL = LATIN1_POOL + list("\u0130\u2028\u00ff\U0001F600\u3000")


def random_texts(pool, num_texts, seed):
  rng = np.random.default_rng(seed)
  texts = []
  for _ in range(num_texts):
    size = int(rng.integers(0, 30))
    texts.append("".join(pool[i] for i in rng.integers(0, len(pool), size)))
  return texts


def user_texts(texts, encoding="utf-8", valid=None, chunk=None):
  raw = [t.encode(encoding) for t in texts]
  if chunk:
    chunks = [pa.array(raw[i:i + chunk], pa.binary())
              for i in range(0, len(raw), chunk)]
  else:
    chunks = [pa.array(raw, pa.binary())]
  return user_texts_lib.UserTexts(
      users=pa.chunked_array([pa.array(range(len(raw)))]),
      texts=pa.chunked_array(chunks, pa.binary()), encoding=encoding,
      valid=valid, report=report_lib.LoadReport(source="test"))


def tokens_as_lists(tokens, num_rows):
  out = [[] for _ in range(num_rows)]
  for word, row in zip(tokens.vocabulary[tokens.token_word], tokens.token_row):
    out[row].append(word)
  return out


@pytest.mark.parametrize("encoding,pool", [("utf-8", UTF8_POOL),
                                           ("latin-1", LATIN1_POOL)])
@pytest.mark.parametrize("min_length,strip", [(1, ""), (3, ""), (2, ".!"),
                                              (3, ".")])
@pytest.mark.parametrize("chunk", [None, 7])
def test_matches_reference_on_random_texts(encoding, pool, min_length, strip,
                                           chunk):
  texts = random_texts(pool, 300, seed=min_length * 10 + len(strip))
  tokens = tokenize.tokenize(user_texts(texts, encoding, chunk=chunk),
                             min_length=min_length, strip=strip)
  expected = [tokenize.reference_words(t, min_length=min_length, strip=strip)
              for t in texts]
  assert tokens_as_lists(tokens, len(texts)) == expected
  # Vocabulary: distinct, in order of first appearance.
  flat = [w for ws in expected for w in ws]
  assert list(tokens.vocabulary) == list(dict.fromkeys(flat))


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_non_ascii_allowed_characters(encoding):
  characters = tokenize.DEFAULT_CHARACTERS + "\xe9\xdf\xff"
  # U+0130 is the documented exception of the non-ASCII path.
  pool = ([c for c in UTF8_POOL if c != "\u0130"] if encoding == "utf-8"
          else LATIN1_POOL)
  texts = random_texts(pool, 300, seed=5)
  tokens = tokenize.tokenize(user_texts(texts, encoding, chunk=50),
                             characters=characters, min_length=2)
  expected = [tokenize.reference_words(t, characters=characters, min_length=2)
              for t in texts]
  assert tokens_as_lists(tokens, len(texts)) == expected
  assert any("\xe9" in w for ws in expected for w in ws)


def test_words_never_run_across_rows():
  tokens = tokenize.tokenize(user_texts(["abc", "def", "", "ghi jkl"]))
  assert tokens_as_lists(tokens, 4) == [["abc"], ["def"], [], ["ghi", "jkl"]]


def test_empty_texts_are_counted_and_invalid_rows_ignored():
  texts = ["good words", "", "   \t", "more words", "hidden words", "ab"]
  valid = np.array([True, True, True, True, False, True])
  data = user_texts(texts, valid=valid)
  tokens = tokenize.tokenize(data)
  assert tokens_as_lists(tokens, 6) == [["good", "words"], [], [],
                                        ["more", "words"], [], []]
  # Rows 2 and 3 have no token at all; row 6 has a (short) token.
  assert data.report.skipped == {report_lib.SKIP_EMPTY_TEXT: 2}
  assert data.report.examples[report_lib.SKIP_EMPTY_TEXT] == ["row 2",
                                                              "row 3"]


def test_unknown_error_names_the_word_and_row():
  data = user_texts(["fine words", "a caf\xe9 here"])
  with pytest.raises(ValueError, match=r"row 2: word 'caf\xe9' has character "
                     r"'\xe9' \(U\+00E9\)"):
    tokenize.tokenize(data, unknown="error")
  # Short words are dropped by length before the character check.
  tokens = tokenize.tokenize(user_texts(["ok words \xe9"]), unknown="error")
  assert list(tokens.vocabulary) == ["words"]


def test_bad_options():
  data = user_texts(["x"])
  with pytest.raises(ValueError, match="min_length"):
    tokenize.tokenize(data, min_length=0)
  with pytest.raises(ValueError, match="whitespace"):
    tokenize.tokenize(data, characters="ab ")
  with pytest.raises(ValueError, match="strip characters"):
    tokenize.tokenize(data, strip="\xe9")


def test_default_characters():
  # Printable ASCII (95 characters from space to "~") without space, the 26
  # upper-case letters and "$": 67 characters.
  assert tokenize.DEFAULT_CHARACTERS == (
      "!\"#%&'()*+,-./0123456789:;<=>?@[\\]^_`abcdefghijklmnopqrstuvwxyz"
      "{|}~")


def test_hand_computed_words():
  data = user_texts(["Hello, World!! i'm   @Bob\x1cand CAF\xc9 x",
                     "...the end... \x00odd tab\there"])
  tokens = tokenize.tokenize(data, strip=".")
  assert tokens_as_lists(tokens, 2) == [
      ["hello,", "world!!", "i'm", "@bob", "and"],
      ["the", "end", "tab", "here"]]


@pytest.mark.skipif(helpers.sentiment140_sample_path() is None,
                    reason="the Sentiment140 sample is absent (set "
                    "TRIEHH_SENTIMENT140 or place it at ../shared/data/"
                    "sentiment140_sample.csv.gz beside the repository)")
@pytest.mark.parametrize("setting", ["single", "oov"])
def test_sample_matches_the_reference(setting):
  texts = readers.read(helpers.sentiment140_sample_path(), "sentiment140")
  characters = settings.characters_for(setting)
  strip = settings.strip_for(setting)
  tokens = tokenize.tokenize(texts, characters=characters, strip=strip)
  values = texts.texts.to_pylist()
  expected = [tokenize.reference_words(v.decode("utf-8"),
                                       characters=characters, strip=strip)
              for v in values]
  assert tokens_as_lists(tokens, len(values)) == expected
