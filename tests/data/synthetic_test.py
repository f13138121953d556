"""Tests of triehh.data.synthetic: English populations and scale-test draws."""

import gzip
import warnings

import numpy as np
import pytest

from triehh.core import memory
from triehh.data import input_files
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
  with pytest.warns(UserWarning, match="4 line\\(s\\) skipped"):
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


@pytest.fixture(name="tiny_memory")
def _tiny_memory(monkeypatch):
  """1 MiB available; no word list is read and nothing drawn before the
  refusal."""
  monkeypatch.setattr(memory, "available_bytes", lambda: 2**20)

  def never(*args, **kwargs):
    raise AssertionError("read or drawn although it does not fit")

  monkeypatch.setattr(synthetic, "english_words", never)
  monkeypatch.setattr(synthetic, "read_frequency_table", never)
  monkeypatch.setattr(np.random, "default_rng", never)


@pytest.mark.parametrize("draw,bytes_each,estimate,fit", [
    (lambda n: synthetic.english_population(n), 38, "36.2 MiB", "27,594"),
    (lambda n: synthetic.scale_population(n, table_path="t.tsv"), 11,
     "10.5 MiB", "95,325"),
    (lambda n: synthetic.population_from_weights(["a"], [1.0], n), 11,
     "10.5 MiB", "95,325"),
    (lambda n: synthetic.draw_user_words(np.ones(3), n, seed=0), 4,
     "3.8 MiB", "262,144"),
])
def test_a_draw_that_does_not_fit_is_refused_first(tiny_memory, draw,
                                                   bytes_each, estimate, fit):
  with pytest.raises(memory.InsufficientMemoryError) as err:
    draw(1_000_000)
  assert str(err.value) == (
      f"num_users=1,000,000 users drawn one by one ({bytes_each} bytes each) "
      f"would need about {estimate} of memory, more than the 1.0 MiB "
      f"available; use num_users <= {fit}, or give the population as word "
      "counts (Population.from_word_frequencies), which holds no per-user "
      "array (up to 2^62 users)")


@pytest.mark.parametrize("num_users,error", [
    (True, TypeError), (1e6, TypeError), (0, ValueError)])
def test_num_users_must_be_a_positive_integer(num_users, error):
  with pytest.raises(error, match="num_users must be"):
    synthetic.english_population(num_users)


def test_english_words_are_wordfreq_s_own_frequencies():
  # english_words reads the frequency table directly for words of letters
  # alone; the floats must be those wordfreq.word_frequency returns.
  import wordfreq  # pylint: disable=g-import-not-at-top
  synthetic.english_words.cache_clear()
  words, freqs = synthetic.english_words(8000)
  want = [wordfreq.word_frequency(w, "en") for w in words]
  assert any("'" in w for w in words)  # both paths are exercised
  assert freqs.tolist() == want


def test_a_frequency_table_that_is_not_a_regular_file_is_refused(tmp_path):
  with pytest.raises(ValueError, match="frequency table /dev/null is a "
                                       "character device"):
    synthetic.read_frequency_table("/dev/null")
  with pytest.raises(ValueError, match="is a directory"):
    synthetic.read_frequency_table(str(tmp_path))


def test_a_frequency_table_line_over_the_bound_is_an_error(tmp_path,
                                                          monkeypatch):
  monkeypatch.setattr(input_files, "MAX_LINE_BYTES", 64)
  path = tmp_path / "table.tsv"
  path.write_text("apple\t10\n" + "x" * 100 + "\t3\n")
  with pytest.raises(ValueError, match=r"line 2 .*table.tsv.* 64 bytes"):
    synthetic.read_frequency_table(str(path))


def test_skipped_table_lines_are_said(tmp_path):
  # nan and inf weights were dropped with no word; the top word vanished.
  path = tmp_path / "table.tsv"
  path.write_text("word\tweight\nthe\tnan\nof\t5\nand\tinf\n")
  with pytest.warns(UserWarning, match="2 line\\(s\\) skipped"):
    table = synthetic.read_frequency_table(str(path))
  assert table.words.tolist() == ["of"] and table.skipped_lines == 2


def test_weights_adding_up_past_the_largest_float_are_refused(tmp_path):
  path = tmp_path / "table.tsv"
  path.write_text("the\t1e308\nthe\t1e308\nof\t2\n")
  with pytest.raises(ValueError, match="the weights of 'the' add up past"):
    synthetic.read_frequency_table(str(path))


@pytest.mark.parametrize("first", ["apple\t0x10", "apple\tnan",
                                   "apple\t10\textra"])
def test_a_first_line_with_a_bad_weight_is_not_taken_as_a_header(
    tmp_path, first):
  # It was dropped as a header, silently: the table lost its first word.
  path = tmp_path / "freq.tsv"
  path.write_text(first + "\nbanana\t20\n")
  if first.endswith("nan"):
    with pytest.warns(UserWarning, match=r"1 line\(s\) skipped .* the first "
                      r"line 1 \(word 'apple', weight 'nan'\)"):
      synthetic.read_frequency_table(str(path))
    return
  said = ("weight '0x10' is not a number" if "0x10" in first
          else "has 3 fields")
  with pytest.raises(ValueError, match=f"freq.tsv line 1 {said}"
                     if "fields" in said else f"freq.tsv line 1: {said}"):
    synthetic.read_frequency_table(str(path))


def test_a_header_is_a_first_line_of_two_words(tmp_path):
  path = tmp_path / "t.tsv"
  path.write_text("# words\nword count\napple 3\n")
  table = synthetic.read_frequency_table(str(path))
  assert table.words.tolist() == ["apple"] and table.skipped_lines == 0
  path.write_text("apple 3\nword count\n")  # not first: skipped, said
  with pytest.warns(UserWarning, match=r"the first line 2 \(word 'word'"):
    assert synthetic.read_frequency_table(str(path)).words.tolist() == [
        "apple"]


def test_a_weight_in_another_notation_is_refused_on_any_line(tmp_path):
  path = tmp_path / "t.tsv"
  path.write_text("apple\t10\npear\t1e\n")
  with pytest.raises(ValueError, match=r"t.tsv line 2: weight '1e' is not "
                                       "a number"):
    synthetic.read_frequency_table(str(path))


@pytest.mark.parametrize("line", ["\t5", ",5", " pear 5"])
def test_an_empty_word_names_the_file_and_line(tmp_path, line):
  # It was "empty word at vocabulary index 0", when the population was built.
  path = tmp_path / "t.tsv"
  path.write_text("apple\t10\n" + line + "\n")
  with pytest.raises(ValueError, match=r"t.tsv line 2 starts with a "
                                       "separator: its word is empty"):
    synthetic.read_frequency_table(str(path))


def test_trailing_spaces_are_no_field(tmp_path):
  path = tmp_path / "t.tsv"
  path.write_text("apple\t10 \r\npear 2\t\n")
  table = synthetic.read_frequency_table(str(path))
  assert dict(zip(table.words, table.weights)) == {"apple": 10.0, "pear": 2.0}


def test_weights_summing_past_the_largest_float_are_drawn_rescaled(
    tmp_path):
  # Their sum was inf: a RuntimeWarning, and every user held the last word.
  path = tmp_path / "t.tsv"
  path.write_text("apple\t1e308\nbanana\t1e308\n")
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    pop = synthetic.scale_population(20_000, table_path=str(path), seed=0)
  truth = pop.ground_truth()
  assert set(truth) == {"apple", "banana"}
  assert truth["apple"] / 20_000 == pytest.approx(0.5, abs=0.02)


def test_ordinary_weights_draw_as_before():
  # The rescaling is only for sums past the largest float: pinned draw.
  weights = np.array([3.0, 1.0, 0.5])
  rng = np.random.default_rng(7)
  want = np.repeat(np.arange(3, dtype=np.int32),
                   rng.multinomial(1000, weights / weights.sum()))
  rng.shuffle(want)
  drawn = synthetic.draw_user_words(weights, 1000, seed=7)
  assert np.array_equal(drawn, want)
