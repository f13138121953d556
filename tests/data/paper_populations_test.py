"""Tests of the paper-calibrated populations and the word-count table."""

import os

import numpy as np
import pandas as pd
import pytest

from tests.data import helpers
from triehh.data import paper_populations as pp


def test_published_lists_are_the_papers():
  single = pp.published_top100("single")
  oov = pp.published_top100("oov")
  assert len(single) == len(oov) == 100
  # First and last entries as printed in the paper's appendix.
  assert (single.index[0], single.iloc[0]) == ("the", 0.1028)
  assert (single.index[-1], single.iloc[-1]) == ("she", 0.0013)
  assert (oov.index[0], oov.iloc[0]) == ("dont", 0.011741)
  assert (oov.index[-1], oov.iloc[-1]) == ("@kirstiealley", 0.000285)
  with pytest.raises(ValueError, match="publishes no list"):
    pp.published_top100("multi")


def test_largest_remainder_by_hand():
  # 10 * (0.35, 0.35, 0.3) = 3.5, 3.5, 3: floors 3, 3, 3 and one unit left,
  # which goes to the first of the tied largest remainders.
  np.testing.assert_array_equal(pp.largest_remainder([0.35, 0.35, 0.3], 10),
                                [4, 3, 3])
  np.testing.assert_array_equal(pp.largest_remainder([1, 1, 1, 1], 6),
                                [2, 2, 1, 1])
  with pytest.raises(ValueError, match="non-negative"):
    pp.largest_remainder([1, -1], 3)


def test_calibrated_users_head_then_scaled_tail():
  head = pd.Series([0.5, 0.25], index=["aaa", "bbb"])
  # "aaa" is also in the table: it stays in the head only.
  tail = pd.Series([30, 10, 99, 0], index=["ccc", "ddd", "aaa", "eee"])
  words, users = pp.calibrated_users(head, tail, 1000)
  assert list(words) == ["aaa", "bbb", "ccc", "ddd"]
  # The tail holds the remaining 25%: 250 users split 30:10.
  np.testing.assert_array_equal(users, [500, 250, 188, 62])


def test_tail_is_capped_below_the_heads_last_word():
  head = pd.Series([0.6, 0.1], index=["aaa", "bbb"])
  tail = pd.Series([10, 1, 1, 1], index=["ccc", "ddd", "eee", "fff"])
  words, users = pp.calibrated_users(head, tail, 1000)
  # Scaled, ccc would get 300 * 10/13 = 230.8 users, more than bbb's 100:
  # it is capped at 99 and the other 201 users go equally to ddd, eee, fff.
  assert list(words) == ["aaa", "bbb", "ccc", "ddd", "eee", "fff"]
  np.testing.assert_array_equal(users, [600, 100, 99, 67, 67, 67])


def test_capped_shares_refuses_a_mass_the_cap_cannot_hold():
  with pytest.raises(ValueError, match="cannot hold"):
    pp.capped_shares(np.array([1.0, 1.0]), 0.5, 0.2)


def test_calibrated_users_refuses_a_bad_head():
  with pytest.raises(ValueError, match="sum to"):
    pp.calibrated_users(pd.Series([0.7, 0.4], index=["a", "b"]),
                        pd.Series([1], index=["c"]), 10)


def test_shipped_single_population_has_the_published_head():
  data = pp.paper_population("single")
  pop = data.population
  assert pop.num_users == pp.SINGLE_NUM_USERS == 659_775
  assert pop.max_length == 9
  # 0.1028 * 659,775 = 67,824.87 and 0.0013 * 659,775 = 857.7075; rounding
  # keeps each within one user of its exact share.
  assert abs(data.truth["the"] - 67_824.87) < 1
  assert abs(data.truth["she"] - 857.7075) < 1
  assert sum(data.truth.values()) == 659_775
  # The published list stays the top 100.
  head = pp.published_top100("single")
  tail = [v for w, v in data.truth.items() if w not in set(head.index)]
  assert max(tail) < min(data.truth[w] for w in head.index)
  assert data.info["tail_words"] > 1000


def test_shipped_oov_population_has_the_published_head():
  data = pp.paper_population("oov", num_users=1_000_000)
  assert data.population.num_users == 1_000_000
  assert abs(data.truth["dont"] - 11_741) < 1
  assert abs(data.truth["@kirstiealley"] - 285) < 1
  assert "the" not in data.truth  # in-vocabulary words are not in the tail


def _tiny_sentiment140(tmp_path) -> str:
  rows = [("u1", "The dog, the cat!"),
          ("u2", "dog dog xyzzyq http://x.co"),
          ("u3", "Cat dog"),
          ("u4", "xyzzyq!")]
  data = b"".join(helpers.sentiment140_line(u, t, tweet_id=str(i))
                  for i, (u, t) in enumerate(rows))
  return helpers.write(str(tmp_path / "tiny.csv"), data)


def test_word_counts_from_file_by_hand(tmp_path):
  table = pp.word_counts_from_file(_tiny_sentiment140(tmp_path))
  # "the" is written by one user only and is left out (MIN_USERS = 2); u3's
  # tie between cat and dog goes to the word written first (cat).
  expected = pd.DataFrame({
      "word": ["dog", "cat", "xyzzyq"], "users": [3, 2, 2],
      "tokens": [4, 2, 2], "single_users": [1, 1, 1],
      "oov_tokens": [0, 0, 2]})
  pd.testing.assert_frame_equal(table, expected, check_dtype=False)
  table = pp.word_counts_from_file(_tiny_sentiment140(tmp_path), min_users=1)
  assert table["word"].tolist() == ["dog", "cat", "the", "xyzzyq"]


def test_resample_users_keeps_bags_and_is_seeded():
  from triehh.core import population as population_lib  # pylint: disable=g-import-not-at-top
  source = population_lib.Population.from_user_words(
      [{"aaa": 2, "bbb": 1}, {"ccc": 1}, {"aaa": 1, "ddd": 3}])
  bags = {frozenset(b.items()) for b in
          ({"aaa": 2, "bbb": 1}, {"ccc": 1}, {"aaa": 1, "ddd": 3})}
  pop = pp.resample_users(source, 50, seed=3)
  assert pop.num_users == 50
  for i in range(pop.num_users):
    part = slice(pop.user_offsets[i], pop.user_offsets[i + 1])
    bag = {str(pop.vocabulary[w]): int(c) for w, c in
           zip(pop.entry_word[part], pop.entry_count[part])}
    assert frozenset(bag.items()) in bags
  again = pp.resample_users(source, 50, seed=3)
  np.testing.assert_array_equal(pop.entry_count, again.entry_count)
  other = pp.resample_users(source, 50, seed=4)
  assert not np.array_equal(pop.user_offsets, other.user_offsets)


def test_several_words_need_a_file():
  with pytest.raises(ValueError, match="needs a Sentiment140 file"):
    pp.paper_population("multi")
  with pytest.raises(ValueError, match="unknown setting"):
    pp.paper_population("pairs")


def test_options_round_trip():
  options = pp.data_options("oov", num_users=100_000)
  assert options["dataset"] == "paper"
  data = pp.from_options(options)
  assert data.population.num_users == 100_000 and data.setting == "oov"


@pytest.mark.skipif(helpers.sentiment140_sample_path() is None,
                    reason="the Sentiment140 sample is not available")
def test_shipped_table_is_what_the_tool_makes_from_the_sample():
  table = pp.word_counts_from_file(helpers.sentiment140_sample_path())
  shipped = pp.read_word_counts()
  pd.testing.assert_frame_equal(table, shipped, check_dtype=False)
  assert os.path.getsize(pp.WORD_COUNTS_PATH) < 500_000


def test_zipf_fit_recovers_an_exact_law():
  ranks = np.arange(1, 101)
  head = pd.Series(0.02 * ranks**-0.8, index=[f"w{r}" for r in ranks])
  c, s = pp.zipf_fit(head)
  assert c == pytest.approx(0.02) and s == pytest.approx(0.8)


def test_zipf_tail_is_the_law_trimmed_at_the_remaining_mass():
  # Head: f(r) = 0.2 / r for r = 1, 2 (mass 0.3); the law goes on with
  # 0.2/3, 0.2/4, ... and the remaining 0.7 is reached within the names.
  head = pd.Series([0.2, 0.1], index=["a", "b"])
  names = pd.Series(1.0, index=[f"t{i}" for i in range(200)])
  tail, facts = pp.zipf_tail(head, names, pd.Series(dtype=float))
  assert facts["zipf_exponent"] == pytest.approx(1.0)
  assert facts["zipf_scale"] == 1.0
  assert tail.sum() == pytest.approx(0.7)
  ranks = np.arange(3, 3 + len(tail) - 1)
  np.testing.assert_allclose(tail.to_numpy()[:-1], 0.2 / ranks)
  # The smallest k with 0.2 (1/3 + ... + 1/(k+2)) >= 0.7.
  sums = np.cumsum(0.2 / np.arange(3, 203))
  assert len(tail) == int(np.argmax(sums >= 0.7)) + 1
  assert 0 < tail.iloc[-1] <= 0.2 / (len(tail) + 2)


def test_zipf_tail_is_scaled_when_the_names_run_out():
  head = pd.Series([0.2, 0.1], index=["a", "b"])
  # Four names, skipping a head word, a repeat and a zero count.
  first = pd.Series([1, 1, 0], index=["t0", "a", "t9"])
  then = pd.Series([1, 1, 1, 1], index=["t0", "t1", "t2", "t3"])
  tail, facts = pp.zipf_tail(head, first, then)
  assert list(tail.index) == ["t0", "t1", "t2", "t3"]
  law = 0.2 / np.arange(3, 7)
  assert facts["zipf_scale"] == pytest.approx(0.7 / law.sum())
  np.testing.assert_allclose(tail.to_numpy(), law * 0.7 / law.sum())


def test_wordfreq_tail_of_oov_is_outside_the_dictionary():
  from triehh.data import dictionary  # pylint: disable=g-import-not-at-top
  from triehh.data import settings  # pylint: disable=g-import-not-at-top
  tail = pp.wordfreq_tail("oov")
  known = set(dictionary.default_words())
  assert len(tail) > 10_000 and not known & set(tail.index)
  assert all(set(w) <= set(settings.PAPER_CHARACTERS) for w in tail.index)
  assert (tail > 0).all()
  single = pp.wordfreq_tail("single")
  assert "the" in single.index and single["the"] == single.max()


@pytest.mark.parametrize("tail", ["zipf", "wordfreq"])
def test_other_tails_keep_the_published_head(tail):
  data = pp.paper_population("oov", num_users=1_000_000, tail=tail)
  assert data.population.num_users == 1_000_000
  assert abs(data.truth["dont"] - 11_741) < 1
  head = set(pp.published_top100("oov").index)
  rest = [v for w, v in data.truth.items() if w not in head]
  assert max(rest) < min(data.truth[w] for w in head)
  assert data.info["tail_kind"] == tail
  assert data.name == f"paper-calibrated:oov:{tail}-tail"
  sample = pp.paper_population("oov", num_users=1_000_000)
  assert set(data.truth) != set(sample.truth)


def test_the_tail_is_a_data_option_only_when_not_the_default():
  assert "tail" not in pp.data_options("oov")
  options = pp.data_options("oov", num_users=50_000, tail="wordfreq")
  assert options["tail"] == "wordfreq"
  assert pp.from_options(options).info["tail_kind"] == "wordfreq"
  with pytest.raises(ValueError, match="unknown tail 'flat'"):
    pp.data_options("oov", tail="flat")
  with pytest.raises(ValueError, match="one-word settings"):
    pp.paper_population("multi", tail="zipf", data_path="x.csv")


def test_a_table_that_is_not_csv_text_is_named(tmp_path):
  # A binary file ended in a bare "'utf-8' codec can't decode" after 8 s.
  path = tmp_path / "binary.csv"
  path.write_bytes(bytes(range(128, 256)) * 10)
  with pytest.raises(ValueError, match=f"{path}: not a word-count table"):
    pp.read_word_counts(str(path))


def test_too_few_users_for_the_paper_population_names_the_minimum():
  # It said "9120 words capped at 0 cannot hold a mass of 0.501".
  with pytest.raises(ValueError, match=r"^num_users=1,000 is too small for "
                     r"a paper-calibrated population: use num_users >= "
                     r"1,539 "):
    pp.paper_population("single", num_users=1000)
  with pytest.raises(ValueError, match=r"num_users=2 is too small"):
    pp.paper_population("single", num_users=2)
  assert pp.paper_population("single", num_users=1539).population.num_users \
      == 1539


def test_min_num_users_is_where_every_larger_n_fits():
  head_min, mass, words = 0.0013, 0.5012, 9120
  least = pp.min_num_users(head_min, mass, words)
  fits = [words * (np.floor(head_min * n) - 1) / n >= mass
          for n in range(least - 1, least + 20_000)]
  assert not fits[0] and all(fits[1:])
  with pytest.raises(ValueError, match="at any num_users"):
    pp.min_num_users(0.001, 0.9, 100)
