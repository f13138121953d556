"""Tests of triehh.discovery.deny_list on tiny hand-computed populations."""

from __future__ import annotations

import numpy as np
import pytest

from triehh.core import population as population_lib
from triehh.discovery import deny_list
from triehh.discovery import word_choice
import triehh


def _words_by_user(pop: population_lib.Population) -> list:
  """Per user its word (one word) or its {word: count} (several words)."""
  if pop.is_single_word:
    return [str(pop.vocabulary[w]) for w in pop.user_word]
  out = []
  for i in range(pop.num_users):
    lo, hi = pop.user_offsets[i], pop.user_offsets[i + 1]
    out.append({str(pop.vocabulary[w]): int(c) for w, c in
                zip(pop.entry_word[lo:hi], pop.entry_count[lo:hi])})
  return out


def test_one_word_users_of_denied_words_abstain():
  pop = population_lib.Population.from_user_words(
      ["ab", "cd", "ab", "ef"], max_length=3)
  out = deny_list.apply(pop, ["AB"])
  assert out.num_users == 4
  assert _words_by_user(out) == ["", "cd", "", "ef"]
  assert deny_list.num_abstaining(out) == 2
  assert out.ground_truth() == {"cd": 1.0, "ef": 1.0, "": 2.0}


def test_word_frequencies_move_denied_users_to_abstain():
  pop = population_lib.Population.from_word_frequencies(
      ["ab", "cd", "ef"], [5, 3, 2], max_length=3)
  out = deny_list.apply(pop, ["cd", "ef"])
  assert out.num_users == 10
  assert dict(zip(out.vocabulary.tolist(), out.word_users.tolist())) == {
      "ab": 5, "": 5}


def test_several_words_keep_the_others_and_abstain_if_none_left():
  pop = population_lib.Population.from_user_words(
      [{"ab": 3, "cd": 1}, {"ab": 2}, {"cd": 1, "ef": 4}, "ab"],
      max_length=3)
  out = deny_list.apply(pop, ["ab"])
  assert _words_by_user(out) == [{"cd": 1}, {"": 1}, {"cd": 1, "ef": 4},
                                 {"": 1}]
  assert deny_list.num_abstaining(out) == 2
  # Local frequencies over what is left: user 2 picks ef with 4/5.
  np.testing.assert_allclose(out.user_totals, [1, 1, 5, 1])


def test_nothing_denied_returns_the_population():
  pop = population_lib.Population.from_user_words(["ab", "cd"], max_length=3)
  assert deny_list.apply(pop, ["zz"]) is pop


def test_bad_deny_list():
  pop = population_lib.Population.from_user_words(["ab"], max_length=3)
  with pytest.raises(TypeError, match=r"^deny_list must be a collection of "
                     r"words, not a single string: e\.g\. "
                     r"deny_list=\['ab'\]$"):
    deny_list.apply(pop, "ab")
  with pytest.raises(TypeError, match="^every word of deny_list must be a "
                     "str, got 3$"):
    deny_list.apply(pop, [3])


def test_a_string_deny_list_is_named_as_the_callers_argument():
  with pytest.raises(TypeError, match="^deny_list must be") as raised:
    triehh.discover(["ab"] * 10, 4.0, deny_list="ab")
  assert "deny_words" not in str(raised.value)


def test_abstaining_users_are_sampled_but_never_vote():
  # Every user is in the one-round schedule: 3 of 5 vote in round 1.
  pop = population_lib.Population.from_user_words(
      ["ab", "ab", "cd", "cd", "cd"], max_length=2)
  out = deny_list.apply(pop, ["cd"])
  result = triehh.discover(out,
                           triehh.Mechanism(
                               theta=1, batch_size=5, allow_no_guarantee=True,
                               schedule=[np.arange(5)] * 3), max_length=2)
  assert result.words == ("ab",)
  assert result.sampled_per_round == [5, 5, 5]
  assert result.unprotected.votes_per_round == (2, 2, 2)


@pytest.mark.parametrize("counts", [False, True])
def test_denied_word_is_never_found(counts):
  words, users = ["ab", "cd"], [400, 400]
  if counts:
    pop = population_lib.Population.from_word_frequencies(words, users,
                                                          max_length=2)
  else:
    pop = population_lib.Population.from_user_words(
        [w for w, u in zip(words, users) for _ in range(u)], max_length=2)
  # Theorem 1's delta at n = 800 is above 1/n: about deny lists, not that.
  privacy = triehh.Mechanism(theta=5, batch_size=100, allow_no_guarantee=True,
                             allow_delta_above_1_over_n=True)
  assert set(triehh.discover(pop, privacy, max_length=2).words) == {"ab",
                                                                   "cd"}
  out = deny_list.apply(pop, ["ab"])
  for seed in range(3):
    result = triehh.discover(out, privacy, max_length=2, seed=seed)
    assert result.words == ("cd",)
    assert result.sampled_per_round[0] == 100


def test_draw_once_keeps_the_empty_word():
  pop = population_lib.Population.from_user_words(
      [{"ab": 1, "cd": 1}, {"ab": 2}] * 50, max_length=2)
  out = word_choice.draw_once(deny_list.apply(pop, ["ab"]),
                              word_choice.per_run_generator(
                                  np.random.default_rng(0)))
  assert out.is_single_word and out.num_users == 100
  assert _words_by_user(out) == ["cd", ""] * 50


def test_discover_deny_list_argument():
  users = [{"ab": 3, "cd": 1}, {"ab": 1, "ef": 1}] * 2000
  pop = population_lib.Population.from_user_words(users, max_length=2)
  for choice in ("per_round", "per_run"):
    result = triehh.discover(pop, triehh.Target(8.0, word_choice=choice),
                             max_length=2, deny_list=["ab"])
    assert result.words and "ab" not in result.words
    assert set(result.words) <= {"cd", "ef"}
    assert result.params.n == 4000
  ref = triehh.discover(pop, triehh.Target(8.0, word_choice="per_run"),
                        max_length=2)
  same = triehh.discover(pop, triehh.Target(8.0, word_choice="per_run"),
                         max_length=2, deny_list=["zz"])
  assert same.words == ref.words and "ab" in ref.words


def test_a_deny_list_keeps_whether_the_alphabet_was_read_off_the_words():
  words = ["sun"] * 5 + ["moon"] * 3
  for alphabet, from_data in ((None, True), ("mnosu", False)):
    pop = population_lib.Population.from_user_words(words, alphabet=alphabet)
    assert deny_list.apply(pop, ["moon"]).alphabet_from_data is from_data
