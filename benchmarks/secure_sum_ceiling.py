"""The most one secure-sum release can find, against central partition
selection: the ceiling of the noisy trie's trust model on a cell
(``--noise``: discrete Gaussian, the default, or discrete Laplace).

A mechanism that only sees a secure sum of one-hot votes over a public
candidate set, with discrete Gaussian noise on every candidate and at most
``--false_words`` expected released strings nobody holds, is most
favoured by a single release over every string of at most L characters:
no trie, no composition, no upload limit (a vector of ``A + A^2 + ... +
A^L`` coordinates, which no client could send). Here:

* sigma: the smallest whose single round meets (epsilon, delta = 1/n^2),
  one vote per user (:func:`triehh.theory.noisy_trie.smallest_sigma`, one
  level, every user: the noisy trie's own discrete-Gaussian accountant);
  with ``--noise=laplace``, the discrete Laplace of scale b = 1/epsilon
  (a vote moves the vector by 1 in L1: pure epsilon, delta 0);
* per length l, the ``A^l`` strings of l characters share a false-word
  budget ``b_l`` (the ``b_l`` sum to ``--false_words``): threshold
  ``tau_l``, the least whose tail (of the noise used) is at most
  ``b_l / A^l`` (:func:`triehh.theory.noisy_trie.threshold_for`);
* a word of l characters held by c users is released with probability
  ``P[c + X >= tau_l]``; the ceiling is the expected number released,
  with the budget split across lengths by looking at the population's
  own counts, exactly (:mod:`triehh.theory.release_ceiling`): at least
  what any split chosen without the data finds.

Printed per cell: sigma, the ceiling's expected true words and its ratio to
central partition selection's true words (truncated geometric, one word
per user, ``--runs`` runs: ``benchmarks.field_cells.central``). One
word per user only (several words: a user's votes are not its words'
counts).

  python -m benchmarks.secure_sum_ceiling --cells=paper-single:4,1e7:8
  python -m benchmarks.secure_sum_ceiling --noise=laplace
"""

from __future__ import annotations

import math

import numpy as np
from absl import app
from absl import flags

from benchmarks import field_cells
from triehh.data import datasets as datasets_lib
from triehh.theory import noisy_trie
from triehh.theory import release_ceiling

FLAGS = flags.FLAGS
flags.DEFINE_list("cells", ["paper-single:4", "paper-single:1", "1e6:4",
                            "1e7:8"],
                  "n:epsilon cells of the English population, or "
                  "population:epsilon (paper-single, paper-oov, "
                  "s140-single: their own n).")
flags.DEFINE_integer("runs", 3, "Runs of central partition selection per "
                     "cell.", lower_bound=1)
flags.DEFINE_float("false_words", 1.0, "Expected released strings nobody "
                   "holds, per run.", lower_bound=0.0)
flags.DEFINE_string("cache_dir", None, "The data sets' cache.")
flags.DEFINE_enum("noise", "gaussian", ["gaussian", "laplace"],
                  "The release's noise: the discrete Gaussian of the least "
                  "sigma meeting (epsilon, delta), or the discrete Laplace "
                  "of scale 1/epsilon (pure epsilon, one vote per user).")


def main(argv):
  del argv
  datasets = datasets_lib.DataCache(FLAGS.cache_dir)
  scale_name = "σ" if FLAGS.noise == "gaussian" else "b"
  print(f"| population, n | ε | {scale_name} (one release, {FLAGS.noise}) | "
        "ceiling, true words | central true words | ceiling / central |")
  print("|---|---|---|---|---|---|")
  for cell in FLAGS.cells:
    loaded = field_cells.load(cell, datasets)
    population = loaded.data.population
    if not population.is_single_word:
      raise app.UsageError(f"{cell}: several words per user; the ceiling "
                           "is for one word per user")
    sigma = (noisy_trie.smallest_sigma(1, loaded.epsilon, loaded.delta)
             if FLAGS.noise == "gaussian" else 1.0 / loaded.epsilon)
    found, _ = release_ceiling.ceiling(
        loaded.data.truth, population.alphabet.size, population.max_length,
        sigma, FLAGS.false_words, noise=FLAGS.noise)
    central = [field_cells.central(loaded, s)["true"]
               for s in range(FLAGS.runs)]
    c_mean, c_half = field_cells.interval(central) if len(central) > 1 \
        else (float(central[0]), math.nan)
    print(f"| {loaded.data.name}, {loaded.n:,} | {loaded.epsilon:g} | "
          f"{sigma:.3g} | {found:,.0f} | {c_mean:,.1f} ± {c_half:,.1f} | "
          f"**{found / c_mean:.3f}** |", flush=True)


if __name__ == "__main__":
  app.run(main)
