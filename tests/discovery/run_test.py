"""Tests of one TrieHH run given its parameters (triehh/discovery/run.py):
here, the note a run that finds no word carries."""

import triehh
from triehh.theory import utility

# 100 users: "sun" is held by 30 of them, every other word by one.
USERS = ["sun"] * 30 + [f"w{i}" for i in range(70)]


def test_no_word_found_says_the_holders_a_word_needs_against_n():
  result = triehh.discover(USERS, triehh.Target(4.0), seed=0)
  assert result.words == ()
  theta, q = result.params.theta, result.params.sampling_rate
  assert result.notes == (utility.nothing_found(theta, q * 100, 100),)
  assert (f"a word needs theta={theta} votes in every round, so about "
          f"theta/q = {theta / q:,.0f} holders among the n=100 users"
          in result.notes[0])


def test_more_holders_needed_than_users_says_no_word_can_be_expected():
  result = triehh.discover(
      USERS, triehh.Mechanism(theta=50, sampling_rate=0.3), seed=0)
  assert result.words == ()
  (note,) = result.notes
  assert "theta/q = 167 holders among the n=100 users" in note
  assert "more than there are users, so no word can be expected" in note


def test_a_fixed_batch_counts_its_users_per_round():
  result = triehh.discover(USERS, triehh.Mechanism(
      theta=5, batch_size=20, allow_no_guarantee=True,
      allow_delta_above_1_over_n=True), seed=0)
  assert result.words == ()
  assert result.notes == (utility.nothing_found(5, 20, 100),)


def test_a_run_that_finds_words_has_no_note():
  users = ["sun"] * 3000 + [f"w{i}" for i in range(7000)]
  result = triehh.discover(users, triehh.Target(4.0), seed=0)
  assert result.words == ("sun",)
  assert result.notes == ()


def test_a_schedule_has_no_note():
  # The rounds' users are given: no sampling rate to say a need with.
  schedule = [list(range(5))] * 3
  result = triehh.discover(USERS, triehh.Mechanism(
      theta=5, batch_size=5, allow_no_guarantee=True, schedule=schedule,
      allow_delta_above_1_over_n=True), max_length=2, seed=0)
  assert result.words == () and result.notes == ()
