"""Building a population from a list of words, next to the authors' preparation.

For each n in ``--sizes``: n users, each holding one word of the English
list drawn from a Zipf law (s = 1, seed 0), given as a Python list of n
``str`` objects, one object per user as a tokenizer makes them (``split`` of
the joined text, so no hash is computed yet). Each repeat makes a fresh list
for each contender (outside the timings) and times, in alternating order:

- authors, minimal: what TrieHH needs from the preparation in the paper
  authors' released code (https://github.com/triehh/triehh, preprocess.py):
  each user's word with the end symbol appended (the sequences their run
  samples) and a dict of word -> users (the ground truth);
- authors, as released: the same steps as their ``main`` runs them for users
  who already hold one word: the ground-truth count, the users' words as a
  numpy array, the end symbol appended by index into that array, and a
  second count of the results (``generate_triehh_clients``); no file is
  written;
- ours: :meth:`Population.from_user_words` on the list.

Prints per size the median of each and the ratios authors / ours.

  python -m benchmarks.population_benchmark --sizes=1e6,1e7 --repeats=9
"""

from __future__ import annotations

import collections
import statistics
import time

from absl import app
from absl import flags
import numpy as np

from triehh.core import population as population_lib
from triehh.data import synthetic

FLAGS = flags.FLAGS
flags.DEFINE_list("sizes", ["1e6", "1e7"], "Users n.")
flags.DEFINE_integer("repeats", 9, "Timings of each contender per size.")
flags.DEFINE_float("zipf_exponent", 1.0, "Zipf exponent s of the word law.")


def user_text(num_users: int, exponent: float, seed: int = 0) -> str:
  """The users' words joined by spaces (``split`` gives the list)."""
  words, freqs = synthetic.english_words()
  probs = synthetic.word_probabilities(freqs, "zipf", exponent)
  users = np.random.default_rng(seed).choice(len(words), size=num_users,
                                             p=probs)
  return " ".join(np.asarray(words, dtype=object)[users].tolist())


def authors_minimal(user_words: list[str]):
  """The users' sequences (word and end symbol) and the users per word."""
  sequences = [word + "$" for word in user_words]
  users_per_word = collections.defaultdict(int)
  for sequence in sequences:
    users_per_word[sequence] += 1
  return sequences, dict(users_per_word)


def authors_as_released(user_words: list[str]):
  """The steps of the authors' ``main`` for users holding one word each."""
  top_word_counts = {}
  for word in user_words:
    if word not in top_word_counts:
      top_word_counts[word] = 1
    else:
      top_word_counts[word] += 1
  total = sum(top_word_counts.values())
  frequencies = {w: c * 1.0 / total for w, c in top_word_counts.items()}
  clients = np.array(user_words)
  sequences = [clients[i] + "$" for i in range(len(clients))]
  word_freq = collections.defaultdict(lambda: 0)
  for sequence in sequences:
    word_freq[sequence] += 1
  return sequences, frequencies, dict(word_freq)


def ours(user_words: list[str]) -> population_lib.Population:
  return population_lib.Population.from_user_words(user_words)


CONTENDERS = {"authors, minimal": authors_minimal,
              "authors, as released": authors_as_released,
              "ours (from_user_words)": ours}


def main(argv):
  del argv
  for n in (int(float(v)) for v in FLAGS.sizes):
    text = user_text(n, FLAGS.zipf_exponent)
    pop = ours(text.split())
    print(f"n={n:.0e}: {pop!r}", flush=True)
    times = {name: [] for name in CONTENDERS}
    names = list(CONTENDERS)
    for repeat in range(FLAGS.repeats):
      for name in names[repeat % len(names):] + names[:repeat % len(names)]:
        user_words = text.split()
        start = time.perf_counter()
        CONTENDERS[name](user_words)
        times[name].append(time.perf_counter() - start)
        del user_words
    medians = {name: statistics.median(t) for name, t in times.items()}
    ours_median = medians["ours (from_user_words)"]
    for name, median in medians.items():
      ratio = ("" if name.startswith("ours")
               else f"  ({median / ours_median:.2f}x ours)")
      print(f"  {name:24s} median {median * 1e3:9.1f} ms over "
            f"{FLAGS.repeats}{ratio}", flush=True)


if __name__ == "__main__":
  app.run(main)
