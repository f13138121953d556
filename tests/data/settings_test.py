"""Tests of triehh.data.settings: the paper's three settings."""

import collections

import numpy as np
import pyarrow as pa
import pytest

from triehh.data import report as report_lib
from triehh.data import settings
from triehh.data import tokenize
from triehh.data import user_texts


def prepare(rows, characters=tokenize.DEFAULT_CHARACTERS, strip="",
            drop_prefixes=()):
  """Tokens and per-row users of (user, text) rows."""
  users = [u for u, _ in rows]
  data = user_texts.UserTexts(
      users=pa.chunked_array([pa.array(users)]),
      texts=pa.chunked_array([pa.array([t.encode() for _, t in rows],
                                       pa.binary())]),
      encoding="utf-8", valid=None, report=report_lib.LoadReport())
  names = list(dict.fromkeys(users))
  row_user = np.array([names.index(u) for u in users], dtype=np.int32)
  tokens = tokenize.tokenize(data, characters=characters, strip=strip,
                             drop_prefixes=drop_prefixes)
  return tokens, row_user, len(names)


def counter_choice(rows):
  """Expected single-setting words, by collections.Counter.most_common."""
  words = collections.defaultdict(list)
  for user, text in rows:
    words[user].extend(tokenize.reference_words(text))
  return {u: collections.Counter(ws).most_common(1)[0][0]
          for u, ws in words.items() if ws}


ROWS = [
    ("ann", "zebra apple apple"),      # ann: apple twice
    ("bob", "pear plum"),               # bob: tie, pear first
    ("ann", "zebra"),                   # ann: zebra twice too, written first
    ("cat", "plum pear"),               # cat: tie, plum first
    ("dan", "no ok"),                   # dan: no word of 3+ characters
    ("bob", "plum"),                    # bob: plum now wins (2 vs 1)
    ("eve", "the the the end"),
]


def user_words(pop):
  return [str(pop.vocabulary[w]) for w in pop.user_word]


def test_single_picks_most_frequent_word_first_written_on_ties():
  tokens, row_user, n = prepare(ROWS)
  result = settings.single_word(tokens, row_user, n,
                                characters=tokenize.DEFAULT_CHARACTERS)
  pop = result.population
  # Users in order of their index: ann, bob, cat, (dan has none), eve.
  assert user_words(pop) == ["zebra", "plum", "plum", "the"]
  assert user_words(pop) == list(counter_choice(ROWS).values())
  assert result.users_without_words == 1
  assert pop.ground_truth() == {"zebra": 1.0, "plum": 2.0, "the": 1.0}
  assert pop.alphabet.characters == tuple(tokenize.DEFAULT_CHARACTERS)


def random_rows(seed, num_rows=400, num_users=60, vocab=12):
  rng = np.random.default_rng(seed)
  words = [f"w{i:02d}" for i in range(vocab)]
  rows = []
  for _ in range(num_rows):
    k = int(rng.integers(0, 6))
    rows.append((f"u{int(rng.integers(0, num_users))}",
                 " ".join(words[j] for j in rng.integers(0, vocab, k))))
  return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("packed", [True, False])
def test_single_matches_counter_on_random_users(seed, packed, monkeypatch):
  rows = random_rows(seed)
  if not packed:  # Force the argsort path used when keys exceed 63 bits.
    monkeypatch.setattr(settings, "_bits", lambda n: 30)
  tokens, row_user, n = prepare(rows)
  result = settings.single_word(tokens, row_user, n,
                                characters=tokenize.DEFAULT_CHARACTERS)
  expected = counter_choice(rows)
  order = list(dict.fromkeys(u for u, _ in rows))
  assert user_words(result.population) == [expected[u] for u in order
                                           if u in expected]
  assert result.users_without_words == n - len(expected)


@pytest.mark.parametrize("seed", [0, 3])
def test_multi_ground_truth_is_sum_of_local_frequencies(seed):
  rows = random_rows(seed)
  tokens, row_user, n = prepare(rows)
  result = settings.multi_word(tokens, row_user, n,
                               characters=tokenize.DEFAULT_CHARACTERS)
  pop = result.population
  local = collections.defaultdict(collections.Counter)
  for user, text in rows:
    local[user].update(tokenize.reference_words(text))
  local = {u: c for u, c in local.items() if c}
  assert pop.num_users == len(local)
  assert result.users_without_words == n - len(local)
  expected = collections.Counter()
  for counts in local.values():
    total = sum(counts.values())
    for word, c in counts.items():
      expected[word] += c / total
  truth = pop.ground_truth()
  assert set(truth) == set(expected)
  for word, value in expected.items():
    assert truth[word] == pytest.approx(value, rel=1e-12)
  # F(w) = truth / n sums to one over the words.
  assert sum(truth.values()) / pop.num_users == pytest.approx(1.0)
  # Each user's entries and counts.
  order = list(dict.fromkeys(u for u, _ in rows if u in local))
  for i, user in enumerate(order):
    lo, hi = pop.user_offsets[i], pop.user_offsets[i + 1]
    got = {str(pop.vocabulary[w]): int(c) for w, c in
           zip(pop.entry_word[lo:hi], pop.entry_count[lo:hi])}
    assert got == dict(local[user])


OOV_ROWS = [
    ("a", "dont go to @tommcfly #ff now."),
    ("b", "dont stop b/c p.s. ... :'( x2y @tommcfly"),
    ("c", "Dont $money caf\u00e9 *hugs* (via go"),
]
DICTIONARY = ["go", "to", "now", "stop", "money"]


def test_oov_counts_filter_characters_dictionary_and_periods():
  tokens, _, _ = prepare(OOV_ROWS, characters=settings.OOV_CHARACTERS,
                         strip=settings.OOV_STRIP)
  words, counts = settings.oov_counts(tokens, DICTIONARY)
  assert dict(zip(words, counts.tolist())) == {
      "dont": 3, "@tommcfly": 2, "#ff": 1, "b/c": 1, "p.s": 1, ":'(": 1,
      "*hugs*": 1, "(via": 1}
  # Most frequent first, ties by word.
  assert list(words[:2]) == ["dont", "@tommcfly"]
  assert list(words[2:]) == sorted(words[2:])


def test_oov_population_is_seeded_and_follows_the_counts():
  tokens, _, _ = prepare(OOV_ROWS, characters=settings.OOV_CHARACTERS,
                         strip=settings.OOV_STRIP)
  first = settings.oov(tokens, DICTIONARY, num_users=100_000, seed=7)
  again = settings.oov(tokens, DICTIONARY, num_users=100_000, seed=7)
  other = settings.oov(tokens, DICTIONARY, num_users=100_000, seed=8)
  pop = first.population
  assert pop.num_users == 100_000
  assert np.array_equal(pop.user_word, again.population.user_word)
  assert not np.array_equal(pop.user_word, other.population.user_word)
  truth = pop.ground_truth()
  assert sum(truth.values()) == 100_000
  # 11 OOV tokens: "dont" has probability 3/11, "#ff" 1/11.
  assert truth["dont"] / 100_000 == pytest.approx(3 / 11, abs=0.005)
  assert truth["#ff"] / 100_000 == pytest.approx(1 / 11, abs=0.005)
  assert first.info == {"oov_words": 8, "oov_tokens": 11, "seed": 7}
  assert pop.alphabet.characters == tuple(settings.OOV_CHARACTERS)
  # Users are shuffled, not grouped by word.
  assert np.count_nonzero(np.diff(pop.user_word)) > 50_000


def test_oov_with_nothing_left_fails():
  tokens, _, _ = prepare([("a", "go to")],
                         characters=settings.OOV_CHARACTERS)
  with pytest.raises(ValueError, match="no out-of-vocabulary word"):
    settings.oov(tokens, DICTIONARY, num_users=10)


def test_setting_defaults():
  assert settings.characters_for("oov") == (
      "#'()*-./:@abcdefghijklmnopqrstuvwxyz")
  # Printable ASCII without whitespace, upper-case letters and "$".
  assert settings.characters_for("multi") == (
      "!\"#%&'()*+,-./0123456789:;<=>?@[\\]^_`abcdefghijklmnopqrstuvwxyz"
      "{|}~")
  assert settings.strip_for("oov") == "." and settings.strip_for("single") == ""
  with pytest.raises(ValueError, match="unknown setting"):
    settings.check_setting("pairs")


PAPER_TEXT = ("Check http://t.co/x www.site.com, Awww... I'm sooo happy!!! "
              ":-) r.i.p a_b; don't ok? &amp; ... today!!! (yes) Http://x")


def test_paper_tokenizer_hand_computed():
  characters = settings.characters_for("single", "paper")
  assert characters == "#'()*-./:;@_abcdefghijklmnopqrstuvwxyz"
  assert settings.strip_for("multi", "paper") == ",.;?!"
  assert settings.drop_prefixes_for("paper") == ("http", "www")
  tokens, _, _ = prepare([("a", PAPER_TEXT)], characters=characters,
                         strip=settings.strip_for("single", "paper"),
                         drop_prefixes=settings.drop_prefixes_for("paper"))
  words = list(tokens.vocabulary[tokens.token_word])
  assert words == ["check", "awww", "i'm", "sooo", "happy", ":-)", "r.i.p",
                   "a_b", "don't", "today", "(yes)"]


def test_paper_tokenizer_rules_are_the_same_in_every_setting():
  for setting in settings.SETTINGS:
    assert settings.characters_for(setting, "paper") == (
        settings.PAPER_CHARACTERS)
    assert settings.strip_for(setting, "paper") == settings.PAPER_STRIP
  assert settings.drop_prefixes_for("simple") == ()
  with pytest.raises(ValueError, match="unknown tokenizer 'fancy'"):
    settings.characters_for("single", "fancy")
