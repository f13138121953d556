"""The worked example of the paper's Section 3, with a fixed sampling schedule."""

from triehh.core import population as population_lib

OTHERS = ["apple", "bird", "cat", "dog", "egg", "fig", "goat", "hat", "ink"]
WORDS = ["sun"] * 4 + ["moon"] * 4 + ["star"] * 3 + OTHERS
# Users 0-3 hold "sun", 4-7 "moon", 8-10 "star", 11-19 one word each.
SCHEDULE = [
    [0, 1, 4, 5, 11, 12, 13, 14, 15, 16],  # s: 2, m: 2 -> {m, s}
    [8, 9, 0, 1, 4, 5, 17, 18, 19, 11],    # st, su, mo: 2 each
    [8, 9, 2, 3, 6, 7, 12, 13, 14, 15],    # sta, sun, moo
    [0, 1, 4, 5, 10, 11, 12, 13, 14, 15],  # sun$, moon: 2; star: 1 only
    [4, 6, 0, 8, 11, 12, 13, 14, 15, 16],  # moon$: 2
]


def population():
  return population_lib.Population.from_user_words(WORDS)
