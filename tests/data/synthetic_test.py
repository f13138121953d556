"""Tests of triehh.data.synthetic: English populations and scale-test draws."""

import gzip

import numpy as np
import pytest

from triehh.data import synthetic


def test_draw_user_words_is_seeded_and_follows_weights():
  weights = np.array([6.0, 3.0, 1.0, 0.0])
  a = synthetic.draw_user_words(weights, 200_000, seed=1)
  b = synthetic.draw_user_words(weights, 200_000, seed=1)
  c = synthetic.draw_user_words(weights, 200_000, seed=2)
  assert a.dtype == np.int32 and a.size == 200_000
  assert np.array_equal(a, b) and not np.array_equal(a, c)
  share = np.bincount(a, minlength=4) / a.size
  assert share == pytest.approx([0.6, 0.3, 0.1, 0.0], abs=0.005)
  # Shuffled: not sorted by word.
  assert np.count_nonzero(np.diff(a)) > 50_000


@pytest.mark.parametrize("weights,num_users", [
    ([], 10), ([1.0, -1.0], 10), ([0.0, 0.0], 10), ([np.inf], 10),
    ([1.0], 0)])
def test_draw_user_words_rejects_bad_input(weights, num_users):
  with pytest.raises(ValueError):
    synthetic.draw_user_words(np.array(weights), num_users, seed=0)


def test_read_frequency_table(tmp_path):
  path = tmp_path / "table.tsv.gz"
  with gzip.open(path, "wt", encoding="utf-8") as f:
    f.write("word\tcount\n"          # header
            "# a comment\n"
            "apple\t10\n"
            "pear,5\n"
            "plum   2.5\n"
            "apple\t1\n"             # repeated: adds up
            "nocount\n"              # malformed
            "fig\t-3\n"              # malformed
            "fig\tmany\n"            # malformed
            "us$d\t4\n"              # holds the end symbol
            "\n")
  table = synthetic.read_frequency_table(str(path))
  assert dict(zip(table.words, table.weights)) == {"apple": 11.0,
                                                   "pear": 5.0, "plum": 2.5}
  assert table.skipped_lines == 4


def test_read_frequency_table_failures(tmp_path):
  with pytest.raises(FileNotFoundError, match="none.tsv"):
    synthetic.read_frequency_table(str(tmp_path / "none.tsv"))
  path = tmp_path / "bad.tsv"
  path.write_text("a\t0\nb\tx\n")
  with pytest.raises(ValueError, match="no usable line"):
    synthetic.read_frequency_table(str(path))


def test_population_from_weights_maps_users_to_their_words():
  words = np.array(["The", "cat", "the", "sat", "unused"], dtype=object)
  weights = np.array([1.0, 2.0, 1.0, 4.0, 0.0])
  pop = synthetic.population_from_weights(words, weights, 80_000, seed=4,
                                          max_length=5)
  # "The" and "the" are one word; "unused" has weight 0.
  assert set(pop.vocabulary) == {"the", "cat", "sat"}
  truth = pop.ground_truth()
  assert sum(truth.values()) == 80_000
  for word, share in (("the", 2 / 8), ("cat", 2 / 8), ("sat", 4 / 8)):
    assert truth[word] / 80_000 == pytest.approx(share, abs=0.01)
  assert pop.user_word.dtype == np.int32


def test_population_from_weights_gives_every_user_the_only_word():
  words = np.array(["apple", "pear", "fig"], dtype=object)
  pop = synthetic.population_from_weights(words, np.array([0.0, 5.0, 0.0]),
                                          1000, seed=0)
  assert list(pop.vocabulary[pop.user_word]) == ["pear"] * 1000


def test_scale_population_zipf_over_a_table(tmp_path):
  path = tmp_path / "t.csv"
  path.write_text("b,1\na,3\nc,2\nd,2\n")
  pop = synthetic.scale_population(300_000, table_path=str(path),
                                   zipf_exponent=1.0, seed=0)
  truth = pop.ground_truth()
  # Ranks by weight, ties by word: a, c, d, b -> 1, 1/2, 1/3, 1/4.
  total = 1 + 1 / 2 + 1 / 3 + 1 / 4
  for word, rank in (("a", 1), ("c", 2), ("d", 3), ("b", 4)):
    assert truth[word] / 300_000 == pytest.approx(1 / rank / total,
                                                  abs=0.005)
  by_table = synthetic.scale_population(300_000, table_path=str(path))
  assert by_table.ground_truth()["a"] / 300_000 == pytest.approx(3 / 8,
                                                                 abs=0.005)


def test_scale_population_english_default():
  pop = synthetic.scale_population(50_000, vocabulary_size=2000, seed=3)
  assert pop.num_users == 50_000 and pop.is_single_word
  top = max(pop.ground_truth().items(), key=lambda kv: kv[1])[0]
  assert top == "the"


def test_english_population_is_unchanged():
  pop = synthetic.english_population(20_000, seed=5, vocabulary_size=3000)
  # The first users of this seed, pinned when the draw was written.
  assert list(pop.vocabulary[pop.user_word[:8]]) == [
      "event", "boy", "would", "it", "the", "by", "we", "the"]
  assert pop.ground_truth()["the"] == 1376


def test_english_population_follows_wordfreq():
  import wordfreq  # pylint: disable=g-import-not-at-top
  pop = synthetic.english_population(50_000, seed=1, vocabulary_size=2000)
  assert all(synthetic._WORD.match(w) for w in pop.vocabulary)
  assert pop.num_words <= 2000
  words = wordfreq.top_n_list("en", 4000)
  kept = [w for w in words if synthetic._WORD.match(w) and w.strip("'")]
  total = sum(wordfreq.word_frequency(w, "en") for w in kept[:2000])
  expected = wordfreq.word_frequency("the", "en") / total
  assert pop.ground_truth()["the"] / 50_000 == pytest.approx(expected,
                                                             abs=0.005)
