"""Tests of triehh.synthetic: English populations and scale-test draws."""

import gzip

import numpy as np
import pytest

from triehh import synthetic


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
  drawn = synthetic.draw_user_words(weights, 80_000, seed=4)
  lowered = np.array([w.lower() for w in words], dtype=object)
  assert list(pop.vocabulary[pop.user_word]) == list(lowered[drawn])
  assert set(pop.vocabulary) == {"the", "cat", "sat"}
  truth = pop.ground_truth()
  assert sum(truth.values()) == 80_000
  assert truth["the"] / 80_000 == pytest.approx(0.25, abs=0.01)
  assert pop.user_word.dtype == np.int32


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
  words, freqs = synthetic.english_words(3000)
  rng = np.random.default_rng(5)
  expected = rng.choice(len(words), size=20_000,
                        p=synthetic.word_probabilities(freqs, "wordfreq"))
  assert list(pop.vocabulary[pop.user_word]) == [words[i] for i in expected]
