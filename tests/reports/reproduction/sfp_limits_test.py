"""Tests of SFP's alphabet ceiling and padded positions in REPORT.md."""

import string

import pytest

from reports.reproduction import sfp_limits
from triehh.baselines import sfp_options
from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib
from triehh.runs.algorithms import sfp as sfp_algorithm

ALPHABET = sfp_options.PAPER_FRAGMENT_ALPHABET
# Ranked by weight: two words outside the authors' alphabet, one longer than
# 10 characters, and words of 3 to 9 characters.
TRUTH = {"dont": 9.0, "@mileycyrus": 8.0, "*sigh*": 7.0, "soooo": 6.0,
         "goodmorning": 5.0, "havent": 4.0, "#fb": 3.0, "b/c": 2.5,
         "yesterdays": 2.0, "tomorrows": 1.0}
LONG = ["strangers", "wonderful"]


def test_a_word_is_buildable_only_within_the_alphabet_and_length():
  assert sfp_limits.can_build("b/c", ALPHABET, 10)
  assert sfp_limits.can_build("ya'll", ALPHABET, 10)
  assert not sfp_limits.can_build("@ddlovato", ALPHABET, 10)
  assert not sfp_limits.can_build("*hugs*", ALPHABET, 10)
  assert not sfp_limits.can_build("goodmorning", ALPHABET, 10)  # 11
  assert sfp_limits.can_build("yesterdays", ALPHABET, 10)  # 10
  assert not sfp_limits.can_build("yesterdays", ALPHABET, 8)


def test_the_ceiling_counts_the_buildable_top_k():
  ceiling = sfp_limits.alphabet_ceiling(TRUTH, ALPHABET, 10, k=5)
  assert ceiling.buildable == ("dont", "soooo")
  assert ceiling.left_out == ("@mileycyrus", "*sigh*", "goodmorning")
  assert (ceiling.k, ceiling.share) == (5, 0.4)
  everything = sfp_limits.alphabet_ceiling(TRUTH, ALPHABET, 10, k=10)
  assert everything.share == pytest.approx(0.7)
  # The 26 letters alone leave out "#fb" and "b/c" too.
  letters = sfp_limits.alphabet_ceiling(TRUTH, "abcdefghijklmnopqrstuvwxyz",
                                        10, k=10)
  assert letters.share == pytest.approx(0.5)


def test_the_alphabet_note_names_the_ceiling_and_what_is_left_out():
  records = [{"fragment_alphabet": ALPHABET, "length": 10}]
  note = sfp_limits.alphabet_note(records, TRUTH, k=5)
  assert note.startswith("alphabet ceiling: 2 of the top 5 words can be "
                         "built at all")
  assert "recall@5 ≤ 0.40" in note
  assert "`@mileycyrus`, `*sigh*`, `goodmorning`)" in note
  # Records that do not name the alphabet (made by hand) get no note.
  assert sfp_limits.alphabet_note([{"discovered": []}], TRUTH) == ""


def test_found_by_length_is_the_share_of_runs_finding_each_length():
  records = [{"discovered": ["dont", "soooo"]},
             {"discovered": ["dont", "havent"]},
             {"discovered": ["dont"]},
             {"discovered": []}]
  rates = sfp_limits.found_by_length(records, ["dont", "soooo", "havent",
                                               "tomorrows"])
  assert rates == {4: (1, 0.75), 5: (1, 0.25), 6: (1, 0.25), 9: (1, 0.0)}


class _OneDataSet:
  """A data cache that holds one population, whatever the options."""

  def __init__(self, population):
    self.dataset = datasets_lib.Dataset(
        population, population.ground_truth(), "hand", "single")
    self.asked = []

  def get(self, options):
    self.asked.append(options)
    return self.dataset


def _config(top_t):
  return sfp_algorithm.sfp_config(
      {"dataset": "hand"}, epsilon=8.0, top_t=top_t, k=64, m=1024,
      fragment_alphabet="paper")


@pytest.fixture(scope="module")
def population():
  # The OOV setting in small: every 2-letter word, each held by fewer users
  # than either 9-letter word, but about 2.6 of them in each of the 256
  # buckets, so that most buckets' `$$` tuple outweighs a long word's
  # fragments from character position 2 on. (6.8 million users: the sketch
  # simulation costs the same at any n, and the long words stand out of
  # the noise.)
  short = [a + b for a in string.ascii_lowercase
           for b in string.ascii_lowercase]
  return population_lib.Population.from_word_frequencies(
      short + LONG, [10_000] * len(short) + [25_000] * len(LONG),
      max_length=10)


@pytest.fixture(scope="module")
def short_words_run(population):
  config = _config(20)
  result = sfp_algorithm.call_sfp(population, config, seed=3)
  record = {"config": config, "seed": 3, "top_t": 20,
            "fragment_alphabet": ALPHABET, "length": 10,
            "discovered": list(result.heavy_hitters)}
  return population, result, record


def test_padded_slots_rerun_the_record_and_count_the_pad_pairs(
    short_words_run):
  population, result, record = short_words_run
  cache = _OneDataSet(population)
  slots = sfp_limits.padded_slots(record, cache)
  assert cache.asked == [{"dataset": "hand"}]
  assert slots == tuple(sum(a == "$$" for _, a, _ in top)
                        for top in result.fragment_tops)
  # Position 0 keeps the long words' first fragments; from position 2 on,
  # `$$` tuples take all 20 slots and the long words are not found.
  assert slots == (0, 20, 20, 20, 20)
  assert {"st", "wo"} <= {a for _, a, _ in result.fragment_tops[0]}
  assert not set(LONG) & set(record["discovered"])


def test_with_a_slot_for_every_bucket_the_long_words_are_found(population):
  # The same data and seed with T above the 256 buckets' `$$` tuples: the
  # long words' fragments are kept and the words found, so the slots were
  # the cause.
  result = sfp_algorithm.call_sfp(population, _config(300), seed=3)
  assert set(LONG) <= set(result.heavy_hitters)
  assert all(sum(a == "$$" for _, a, _ in top) < 256
             for top in result.fragment_tops)


def test_padded_slots_refuse_a_record_the_rerun_does_not_match(
    short_words_run):
  population, _, record = short_words_run
  changed = dict(record, discovered=record["discovered"] + ["wonderful"])
  with pytest.raises(ValueError, match="re-run of seed 3 discovered other"):
    sfp_limits.padded_slots(changed, _OneDataSet(population))
  with pytest.raises(ValueError, match="no configuration to re-run"):
    sfp_limits.padded_slots({"seed": 3, "discovered": []},
                            _OneDataSet(population))


def test_the_padding_note_prints_slots_and_lengths_never_found(
    short_words_run):
  population, _, record = short_words_run
  truth = population.ground_truth()
  note = sfp_limits.padding_note([record], truth, k=len(truth),
                                 cache=_OneDataSet(population))
  assert note.startswith("padded positions: of the T = 20 tuples kept per "
                         "position, the `$$` fragments")
  assert "(0-based character positions; the run of seed 3" in note
  assert "2 characters" in note and "9 characters 0.00 (2 words)" in note
  assert note.endswith("those of 9 characters are found in none of the 1 "
                       "runs")
  # A record that cannot be re-run is said to be, not hidden.
  broken = dict(record, config=None)
  assert sfp_limits.padding_note([broken], truth).startswith(
      "padded positions not measured: the record has no configuration")
