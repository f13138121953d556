"""The field benchmark's populations, each with its ground truth.

* ``english``: the default data, one word per user drawn from the wordfreq
  English list (:func:`triehh.data.synthetic.english_population`, seed 0),
  at each n of ``Settings.users``: the main population.
* ``english-counts``: the same law given as word counts (one multinomial
  draw of n users over the list, seed 0,
  :meth:`Population.from_word_frequencies`): O(V) memory, so 10^7 users
  cost a second. Only the simulated mechanisms run on it (partition
  selection would need a row per user).
* ``paper-single``: the paper-calibrated single-word population
  (:mod:`triehh.data.paper_populations`: the paper's published top 100 over
  the Sentiment140 sample's counts, 659,775 users, L = 9, the paper's
  characters).
* ``paper-oov``: the paper-calibrated OOV population (its published OOV top
  100 over the sample's out-of-vocabulary token counts, 6,000,000 users).
* ``s140-single`` and ``s140-multi``: the Sentiment140 sample under the
  paper's tokenizer, one word per user (each user's most frequent word) and
  several words per user; only when the sample is present.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from triehh.core import population as population_lib
from triehh.data import datasets as datasets_lib
from triehh.data import paper_populations
from triehh.data import synthetic

ENGLISH, ENGLISH_COUNTS, PAPER, PAPER_OOV, S140_SINGLE, S140_MULTI = (
    "english", "english-counts", "paper-single", "paper-oov", "s140-single",
    "s140-multi")
LABELS = {
    ENGLISH: "English (wordfreq), one word per user",
    ENGLISH_COUNTS: "English (wordfreq), one word per user, drawn as word "
                    "counts",
    PAPER: "paper's single-word population (published top 100 + "
           "Sentiment140 sample tail)",
    PAPER_OOV: "paper's OOV population (published OOV top 100 + "
               "Sentiment140 sample tail)",
    S140_SINGLE: "Sentiment140 sample (paper's tokenizer), one word per user",
    S140_MULTI: "Sentiment140 sample (paper's tokenizer), several words per "
                "user",
}
PAPER_USERS = paper_populations.SINGLE_NUM_USERS
PAPER_OOV_USERS = paper_populations.OOV_NUM_USERS


@dataclasses.dataclass(frozen=True)
class Data:
  """A population of the benchmark.

  Attributes:
    name: one of the names above.
    population: the users and their words.
    truth: word -> true weight (users holding it; several words: the sum
      of the users' local frequencies), ranked once.
    raw_bytes: the mean UTF-8 bytes of a user's word (weighted by the
      truth): what a user hands a central server per word.
  """

  name: str
  population: population_lib.Population
  truth: dict
  raw_bytes: float

  @property
  def n(self) -> int:
    return self.population.num_users

  @property
  def label(self) -> str:
    return LABELS[self.name]


def word_counts_population(num_users: int, seed: int = 0
                           ) -> population_lib.Population:
  """``english-counts``: n users over the English list, as word counts."""
  words, frequencies = synthetic.english_words()
  probabilities = synthetic.word_probabilities(frequencies, "wordfreq")
  counts = np.random.default_rng(seed).multinomial(num_users, probabilities)
  keep = counts > 0
  return population_lib.Population.from_word_frequencies(
      np.asarray(words, dtype=object)[keep], counts[keep],
      alphabet=synthetic.list_alphabet(words))


def _options(name: str, n: int | None, sample_path: str | None) -> dict:
  if name == ENGLISH:
    return datasets_lib.options("default", "single", {"num_users": n})
  if name in (PAPER, PAPER_OOV):
    return datasets_lib.options("paper", "single" if name == PAPER else "oov",
                                {"num_users": n})
  setting = "single" if name == S140_SINGLE else "multi"
  return datasets_lib.options("sentiment140", setting,
                              {"data_path": sample_path})


def load(name: str, n: int | None, datasets: datasets_lib.DataCache,
         sample_path: str | None = None) -> Data:
  """The population ``name`` (of ``n`` users where it takes n; None: its
  own)."""
  if name == ENGLISH_COUNTS:
    population = word_counts_population(n)
    population.encode()
    truth = datasets_lib.Dataset(population, population.ground_truth(),
                                 name, "single").truth
  else:
    dataset = datasets.get(_options(name, n, sample_path))
    population, truth = dataset.population, dataset.truth
  return Data(name, population, truth, mean_raw_bytes(population))


def mean_raw_bytes(population: population_lib.Population) -> float:
  """The mean UTF-8 bytes of a user's word, weighted by the true weights."""
  sizes = np.array([len(str(w).encode("utf-8"))
                    for w in population.vocabulary], dtype=np.float64)
  weights = population.true_weights
  return float(np.dot(sizes, weights) / weights.sum())
