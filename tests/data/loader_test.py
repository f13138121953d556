"""Tests of triehh.data.loader and triehh.data.cache, end to end."""

import json
import os

import numpy as np
import pytest

from tests.data import helpers
from triehh.core import population as population_lib
from triehh.data import cache
from triehh.data import dictionary
from triehh.data import loader
from triehh.data import report as report_lib

ROWS = [("ann", "The cat and the hat"), ("bob", "cat nap"),
        ("ann", "hat trick"), ("cy", "@tommcfly dont b/c"),
        ("dee", "ok no"), ("bob", "sooo cat")]


def s140_file(tmp_path, name="s140.csv", rows=ROWS, extra=b""):
  data = b"".join(helpers.sentiment140_line(u, t) for u, t in rows) + extra
  return helpers.write(str(tmp_path / name), data)


def spec(path, **kwargs):
  kwargs.setdefault("dataset", "sentiment140")
  return loader.DataSpec(path, **kwargs)


def words_of(pop):
  return sorted(str(pop.vocabulary[w]) for w in pop.user_word)


def test_three_settings_from_one_file(tmp_path):
  path = s140_file(tmp_path, extra=b'"0","9","d","q","zed"\n')
  single = loader.load(spec(path, setting="single"))
  assert single.name == "sentiment140" and single.setting == "single"
  # ann: the x2, hat x2 -> "the" (first); bob: cat x2; cy: @tommcfly.
  assert words_of(single.population) == ["@tommcfly", "cat", "the"]
  assert single.truth == {"the": 1.0, "cat": 1.0, "@tommcfly": 1.0}
  report = single.report
  assert report.rows_read == 7 and report.rows_used == 6
  assert report.skipped == {report_lib.SKIP_COLUMN_COUNT: 1}
  assert report.num_users == 4 and report.users_without_words == 1
  assert "1 wrong column count" in report.summary()

  multi = loader.load(spec(path, setting="multi"))
  freq = multi.frequencies()
  # F(w) = (1/n) sum_i f_i(w), n = 3 users holding words.
  assert multi.population.num_users == 3
  # ann: 7 words (the 2, hat 2, cat 1, ...); bob: 4 (cat 2, nap, sooo).
  assert freq["cat"] == pytest.approx((1 / 7 + 2 / 4) / 3)
  assert freq["the"] == pytest.approx((2 / 7) / 3)
  assert sum(freq.values()) == pytest.approx(1.0)

  dict_path = str(tmp_path / "words.txt")
  with open(dict_path, "w") as f:
    f.write("# a tiny dictionary\nthe\ncat 12\nAND\nhat\nnap\ntrick\n")
  oov = loader.load(spec(path, setting="oov", dictionary_path=dict_path,
                         oov_num_users=5000, seed=3))
  assert set(oov.truth) == {"@tommcfly", "dont", "b/c", "sooo"}
  assert oov.population.num_users == 5000
  assert oov.info["oov_tokens"] == 4


def test_generic_jsonl_file(tmp_path):
  lines = [json.dumps({"uid": u, "msg": t}) for u, t in ROWS]
  path = helpers.write(str(tmp_path / "posts.jsonl.gz"),
                       ("\n".join(lines) + "\n").encode())
  data = loader.load(loader.DataSpec(path, user_column="uid",
                                     text_column="msg", setting="single"))
  assert data.name == "posts.jsonl.gz"
  assert words_of(data.population) == ["@tommcfly", "cat", "the"]


def test_min_and_max_length(tmp_path):
  path = s140_file(tmp_path, rows=[("a", "an an extraordinarily"),
                                   ("b", "an")])
  short = loader.load(spec(path, min_length=2, max_length=5))
  assert words_of(short.population) == ["an", "an"]
  long = loader.load(spec(path, min_length=3, max_length=5))
  pop = long.population
  assert words_of(pop) == ["extraordinarily"]
  assert pop.max_length == 5 and pop.sequence_lengths.tolist() == [5]


def test_unknown_characters_dropped_or_fatal(tmp_path):
  path = s140_file(tmp_path, rows=[("a", "fine words"),
                                   ("b", "na\u00efve words")])
  assert words_of(loader.load(spec(path)).population) == ["fine", "words"]
  with pytest.raises(ValueError, match=r"row 2: word 'na\xefve'"):
    loader.load(spec(path, unknown="error"))
  with pytest.raises(ValueError, match="unknown must be"):
    spec(path, unknown="keep")


def test_nothing_usable_fails_naming_the_file(tmp_path):
  path = s140_file(tmp_path, rows=[("a", "ok no"), ("b", "\u00e9\u00e9\u00e9")])
  with pytest.raises(report_lib.DataError,
                     match=r"no usable word in .*s140\.csv.*2 rows read"):
    loader.load(spec(path))


def test_missing_files_are_named(tmp_path):
  with pytest.raises(FileNotFoundError, match=r"absent\.csv"):
    loader.load(spec(str(tmp_path / "absent.csv")))
  path = s140_file(tmp_path)
  with pytest.raises(FileNotFoundError, match=r"dictionary .*nodict\.txt"):
    loader.load(spec(path, setting="oov",
                     dictionary_path=str(tmp_path / "nodict.txt")))


def test_bad_spec_values():
  with pytest.raises(ValueError, match="unknown dataset"):
    loader.DataSpec("x", dataset="tweets")
  with pytest.raises(ValueError, match="unknown setting"):
    loader.DataSpec("x", setting="double")
  with pytest.raises(ValueError, match="min_length"):
    loader.DataSpec("x", min_length=0)
  with pytest.raises(ValueError, match="oov_num_users"):
    loader.DataSpec("x", setting="oov", oov_num_users=0)


# ---- cache ------------------------------------------------------------------


def assert_same_population(a, b):
  assert a.alphabet == b.alphabet and a.max_length == b.max_length
  assert list(a.vocabulary) == list(b.vocabulary)
  for name in ("codes", "word_lengths", "user_word", "user_offsets",
               "entry_word", "entry_count"):
    x, y = getattr(a, name), getattr(b, name)
    assert (x is None) == (y is None), name
    if x is not None:
      assert x.dtype == y.dtype and np.array_equal(x, y), name
  assert a.num_dropped_users == b.num_dropped_users


@pytest.mark.parametrize("setting", ["single", "multi"])
def test_cache_hit_returns_the_same_population(tmp_path, setting):
  path = s140_file(tmp_path, extra=b'"bad row"\n')
  cache_dir = str(tmp_path / "cache")
  first = loader.load(spec(path, setting=setting), cache_dir)
  assert not first.from_cache and os.path.exists(first.cache_path)
  second = loader.load(spec(path, setting=setting), cache_dir)
  assert second.from_cache and second.cache_path == first.cache_path
  assert_same_population(first.population, second.population)
  assert second.truth == first.truth
  assert second.report == first.report
  assert second.report.skipped == {report_lib.SKIP_COLUMN_COUNT: 1}


def test_cache_misses_when_file_or_options_change(tmp_path):
  path = s140_file(tmp_path)
  cache_dir = str(tmp_path / "cache")
  loader.load(spec(path), cache_dir)
  assert loader.load(spec(path), cache_dir).from_cache
  # Another option: a different entry.
  other = loader.load(spec(path, min_length=2), cache_dir)
  assert not other.from_cache
  # Options that do not matter for the setting do not change the key.
  assert loader.load(spec(path, seed=9), cache_dir).from_cache
  # The file changes (new content, new size and time): a miss, new data.
  s140_file(tmp_path, rows=ROWS + [("fay", "zebra zebra")])
  stat = os.stat(path)
  os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
  fresh = loader.load(spec(path), cache_dir)
  assert not fresh.from_cache and "zebra" in fresh.truth
  assert len(os.listdir(cache_dir)) == 3


def test_oov_cache_key_follows_dictionary_and_seed(tmp_path):
  path = s140_file(tmp_path)
  cache_dir = str(tmp_path / "cache")
  dict_path = str(tmp_path / "d.txt")
  with open(dict_path, "w") as f:
    f.write("the\n")
  base = dict(setting="oov", dictionary_path=dict_path, oov_num_users=100)
  first = loader.load(spec(path, **base), cache_dir)
  assert loader.load(spec(path, **base), cache_dir).from_cache
  assert not loader.load(spec(path, **base, seed=1), cache_dir).from_cache
  with open(dict_path, "w") as f:
    f.write("the\ncat\nhat\n")
  os.utime(dict_path, ns=(0, os.stat(dict_path).st_mtime_ns + 10**9))
  changed = loader.load(spec(path, **base), cache_dir)
  assert not changed.from_cache
  assert "cat" in first.truth and "cat" not in changed.truth


def test_corrupt_cache_entry_is_a_miss(tmp_path):
  path = s140_file(tmp_path)
  cache_dir = str(tmp_path / "cache")
  first = loader.load(spec(path), cache_dir)
  with open(first.cache_path, "wb") as f:
    f.write(b"not an npz file")
  with pytest.warns(UserWarning, match="is damaged"):
    again = loader.load(spec(path), cache_dir)
  assert not again.from_cache
  assert loader.load(spec(path), cache_dir).from_cache


def _truncate(path):
  with open(path, "r+b") as f:
    f.truncate(os.path.getsize(path) // 2)


def _empty(path):
  open(path, "wb").close()


def _flip_a_bit(path):
  """Flips one bit in the middle of the first array's data (CRC error)."""
  with open(path, "r+b") as f:
    data = bytearray(f.read())
    data[len(data) // 3] ^= 0x10
    f.seek(0)
    f.write(data)


@pytest.mark.parametrize("damage", [_truncate, _empty, _flip_a_bit])
def test_damaged_cache_entry_warns_and_is_replaced(tmp_path, damage):
  path = s140_file(tmp_path)
  cache_dir = str(tmp_path / "cache")
  first = loader.load(spec(path), cache_dir)
  damage(first.cache_path)
  with pytest.warns(UserWarning, match=r"cache entry .* is damaged"):
    again = loader.load(spec(path), cache_dir)
  assert not again.from_cache
  assert words_of(again.population) == words_of(first.population)
  fixed = loader.load(spec(path), cache_dir)
  assert fixed.from_cache
  assert words_of(fixed.population) == words_of(first.population)


def test_cache_dir_that_is_a_file_fails_clearly(tmp_path):
  path = s140_file(tmp_path)
  not_dir = tmp_path / "cache"
  not_dir.write_text("")
  with pytest.raises(report_lib.DataError, match="cache directory .* is a "
                     "file"):
    loader.load(spec(path), str(not_dir))


def test_cache_entry_that_is_a_directory_fails_clearly(tmp_path):
  path = s140_file(tmp_path)
  cache_dir = str(tmp_path / "cache")
  key = cache.make_key(loader.cache_description(spec(path)))
  os.makedirs(cache.entry_path(cache_dir, key))
  with pytest.raises(report_lib.DataError, match="cache entry .* is a "
                     "directory"):
    loader.load(spec(path), cache_dir)


def test_unwritable_cache_warns_and_goes_on(tmp_path, monkeypatch):
  path = s140_file(tmp_path)
  cache_dir = str(tmp_path / "cache")
  os.makedirs(cache_dir)

  def refuse(*args, **kwargs):
    raise PermissionError(13, "Permission denied")

  # A read-only directory (root may write anyway, so the refusal is made).
  monkeypatch.setattr(cache.tempfile, "mkstemp", refuse)
  with pytest.warns(UserWarning, match="cannot write to the cache directory "
                    ".*Permission denied.*without caching"):
    data = loader.load(spec(path), cache_dir)
  assert data.cache_path is None and not data.from_cache
  assert words_of(data.population)
  assert os.listdir(cache_dir) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only dirs")
def test_read_only_cache_dir_warns_and_goes_on(tmp_path):
  path = s140_file(tmp_path)
  cache_dir = tmp_path / "cache"
  cache_dir.mkdir()
  cache_dir.chmod(0o555)
  try:
    with pytest.warns(UserWarning, match="without caching"):
      data = loader.load(spec(path), str(cache_dir))
  finally:
    cache_dir.chmod(0o755)
  assert data.cache_path is None


@pytest.mark.parametrize("dir_mode,entry_mode", [
    (0o700, 0o600), (0o750, 0o640), (0o755, 0o644), (0o2770, 0o640)])
def test_entries_are_readable_as_the_directory_allows(tmp_path, dir_mode,
                                                      entry_mode):
  path = s140_file(tmp_path)
  cache_dir = tmp_path / "cache"
  cache_dir.mkdir()
  cache_dir.chmod(dir_mode)
  data = loader.load(spec(path), str(cache_dir))
  assert os.stat(data.cache_path).st_mode & 0o777 == entry_mode


def test_cache_round_trip_of_any_population(tmp_path):
  pop = population_lib.Population.from_user_words(
      [{"na\u00efve": 2, "x y": 1}, "caf\u00e9", {"caf\u00e9": 3}],
      max_length=4)
  cache.save(str(tmp_path), "k", pop, {"note": [1, 2]})
  loaded, meta = cache.load(str(tmp_path), "k")
  assert meta == {"note": [1, 2]}
  assert_same_population(pop, loaded)
  assert np.array_equal(pop.true_weights, loaded.true_weights)
  assert cache.load(str(tmp_path), "other") is None
  # Whether the alphabet was read off the words is kept (the noisy trie
  # refuses such an alphabet), both ways.
  assert loaded.alphabet_from_data
  given = population_lib.Population.from_user_words(
      ["ab"], alphabet="abc", max_length=4)
  cache.save(str(tmp_path), "given", given, {})
  assert not cache.load(str(tmp_path), "given")[0].alphabet_from_data


# ---- dictionaries -----------------------------------------------------------


def test_dictionary_files(tmp_path):
  path = helpers.write(str(tmp_path / "d.txt.gz"),
                       b"# comment\nApple\t10\n\nbanana/S\n")
  assert list(dictionary.load_words(path)) == ["apple", "banana/s"]
  empty = helpers.write(str(tmp_path / "e.txt"), b"# nothing\n\n")
  with pytest.raises(report_lib.DataError, match=r"e\.txt holds no word"):
    dictionary.load_words(empty)


def test_default_dictionary():
  words = dictionary.default_words(1000)
  assert 900 <= len(words) <= 1000
  assert {"the", "and", "people"} <= set(words)
  assert all(w == w.lower() for w in words)
  assert dictionary.default_name(1000).endswith("-en-top1000")


# ---- the real Sentiment140 sample -------------------------------------------


SAMPLE = helpers.sentiment140_sample_path()


@pytest.mark.skipif(SAMPLE is None, reason=(
    "the Sentiment140 sample is absent (set TRIEHH_SENTIMENT140 or put it at "
    "../shared/data/sentiment140_sample.csv.gz)"))
def test_sentiment140_sample_single_word_head():
  data = loader.load(spec(SAMPLE, setting="single"))
  report = data.report
  assert report.rows_read == 111_196 and report.rows_skipped == 0
  assert report.num_users == 87_958
  pop = data.population
  assert pop.num_users + report.users_without_words == 87_958
  ranked = sorted(data.truth.items(), key=lambda kv: (-kv[1], kv[0]))
  assert [w for w, _ in ranked[:10]] == [
      "the", "you", "just", "and", "i'm", "for", "going", "have", "good",
      "watching"]


def test_paper_tokenizer_option_end_to_end(tmp_path):
  rows = [("ann", "Sooo happy!!! http://t.co/x"), ("bob", "sooo, tired..."),
          ("cy", "www.x.com a_b; a_b")]
  path = s140_file(tmp_path, rows=rows)
  simple = loader.load(spec(path))
  paper = loader.load(spec(path, tokenizer="paper"))
  # Default: nothing stripped and links kept ("www.x.com" is cy's first
  # word, each word of cy written once); paper: "a_b" twice for cy.
  assert words_of(simple.population) == ["sooo", "sooo,", "www.x.com"]
  assert words_of(paper.population) == ["a_b", "sooo", "sooo"]
  oov = loader.load(spec(path, tokenizer="paper", setting="oov",
                         oov_num_users=1000, dictionary_path=helpers.write(
                             str(tmp_path / "dict.txt"), b"happy\ntired\n")))
  assert set(oov.population.vocabulary) == {"sooo", "a_b"}
  assert "_" in oov.population.alphabet.characters
  with pytest.raises(ValueError, match="unknown tokenizer"):
    spec(path, tokenizer="fancy")
  cache_dir = str(tmp_path / "cache")
  loader.load(spec(path), cache_dir)
  assert not loader.load(spec(path, tokenizer="paper"), cache_dir).from_cache


@pytest.mark.parametrize("path", [5, None, ["a.csv"]])
def test_a_path_that_is_no_file_path_is_named(path):
  # path=5 was read as file descriptor 5 ("a named pipe (FIFO)").
  with pytest.raises(TypeError, match="path must be a file path"):
    loader.DataSpec(path=path)


def test_a_cache_write_that_fails_leaves_no_stray_traceback(tmp_path,
                                                            monkeypatch):
  # A full disk: the archive must be closed with the failure, not later by
  # the garbage collector (which printed "Exception ignored in ZipFile").
  import gc  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  pop = population_lib.Population.from_user_words(["sun", "moon"],
                                                  max_length=4)
  real, calls = np.lib.format.write_array, []

  def full(*args, **kwargs):
    calls.append(1)
    if len(calls) > 1:
      raise OSError(28, "No space left on device")
    return real(*args, **kwargs)

  unraisable = []
  monkeypatch.setattr(np.lib.format, "write_array", full)
  monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
  with pytest.raises(OSError, match="No space left"):
    cache.save(str(tmp_path), "k", pop, {})
  gc.collect()
  assert not unraisable
  assert not list(tmp_path.iterdir())  # the temporary file is removed
