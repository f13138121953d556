"""SFP's clients: every user's word, position and Count Mean Sketch report.

Step 2 of :func:`triehh.baselines.sfp.sfp_discover`. A user holding ``s``
draws a position ``l`` uniformly from ``{0, 2, ..., length - 2}`` and sends
``l`` and the Count Mean Sketch report
(:mod:`triehh.baselines.count_mean_sketch`) of the record
``h(s) || s[l:l+2]`` (:mod:`triehh.baselines.sfp_encoding`); with a word
budget, also the report of its padded word. A user holding several words
reports one, drawn with probability equal to its local frequency ``f_i(w)``,
as a TrieHH participant votes with one word. The server receives the sums
of the reports, one sketch per position (and the word sketch).

Randomness, from the run's generator, in order: the word of each
several-word user, every user's position, then per position the CMS rows
and noise, then the word sketch's. Users whose word has a character outside
the fragment alphabet still report, and are counted.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from triehh.baselines import count_mean_sketch as cms_lib
from triehh.baselines import sfp_encoding
from triehh.baselines import sfp_options
from triehh.core import population as population_lib
from triehh.engines import sampling


@dataclasses.dataclass
class ClientReports:
  """What the server receives: one sketch per position, and the word sketch."""

  sketches: list[cms_lib.Sketch]
  word_sketch: cms_lib.Sketch | None
  num_outside_alphabet: int
  outside_characters: str


def reported_words(pop: population_lib.Population,
                   rng: np.random.Generator) -> np.ndarray:
  """Step 2a: each user's reported word (vocabulary index); a several-word
  user draws one by its local frequency."""
  if pop.is_single_word:
    if pop.user_word is None:  # users per word: users sorted by word
      return np.repeat(np.arange(pop.num_words, dtype=np.intp),
                       pop.word_users)
    return pop.user_word.astype(np.intp)
  users = np.arange(pop.num_users)
  return sampling.words_of(pop, users,
                           sampling.draw_word_ranks(rng, pop, users))


def client_reports(pop: population_lib.Population,
                   options: sfp_options.Options,
                   frag_cms: cms_lib.CountMeanSketch,
                   word_cms: cms_lib.CountMeanSketch | None,
                   puzzle_salt: bytes,
                   rng: np.random.Generator) -> ClientReports:
  """Step 2: every user picks a word and a position and reports the CMS of
  ``h(s) || s[l:l+2]`` (and of its word); the server sums them per position.

  Raises:
    ValueError: if no user's word can be rebuilt from the fragment
      alphabet, naming the characters outside it.
  """
  padded = sfp_encoding.pad_words(pop.vocabulary, options.length)
  bad_words, outside = sfp_encoding.outside_alphabet(padded, options.omega)
  if bad_words.all():
    raise ValueError(
        f"every word has characters outside the fragment alphabet "
        f"{options.fragment_alphabet!r} (found {outside!r}), so SFP could "
        "rebuild none; pass fragment_alphabet="
        f"'{sfp_options.FRAGMENT_ALPHABET_FROM_DATA}' or one that includes "
        "them")
  keys = sfp_encoding.fragment_keys(
      padded, sfp_encoding.puzzle_buckets(padded, options.num_buckets,
                                          puzzle_salt))
  words = reported_words(pop, rng)
  positions = rng.integers(0, options.num_positions, size=pop.num_users)
  sketches = [frag_cms.collect(keys[words[positions == l], l], rng,
                               simulation=options.simulation,
                               chunk_size=options.chunk_size)
              for l in range(options.num_positions)]
  word_sketch = None
  if word_cms is not None:
    word_keys = cms_lib.digest_keys(list(padded))
    word_sketch = word_cms.collect(word_keys[words], rng,
                                   simulation=options.simulation,
                                   chunk_size=options.chunk_size)
  return ClientReports(sketches, word_sketch,
                       int(bad_words[words].sum()), outside)
