"""Deny lists: users whose word is denied abstain, or pick another word.

Running TrieHH again with the words already found on a deny list reaches
words the first run missed (Chadha et al., *Differentially Private Heavy
Hitter Detection using Federated Analytics*, 2023). :func:`apply` does it
as a transformation of the population, so every engine runs unchanged:

* A user with one word, on the deny list, **abstains**: it stays in the
  population (n is unchanged), can be sampled, and never votes. Its word
  becomes :data:`ABSTAIN`, the empty sequence (a vocabulary entry with no
  symbol): exactly the "empty word" of the neighbouring population in the
  proof of Theorem 1, so the run's guarantee is the one computed for n.
* A user with several words loses its denied words and picks among the
  others by their local frequencies (Algorithm 3's draw over what is left);
  a user all of whose words are denied abstains.

The transformed population is for running only: its :meth:`ground_truth
<triehh.core.population.Population.ground_truth>` lacks the denied words and
holds the empty word; score results against the original population's.
A deny list that names no word of the population returns the population
itself.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from triehh.core import population as population_lib

ABSTAIN = ""  # the word of an abstaining user: an empty sequence


def _lowered(deny_words) -> set[str]:
  """The denied words, lower-cased; TypeError unless a collection of str,
  naming ``deny_list`` (the argument of discover and its callers)."""
  if isinstance(deny_words, (str, bytes)):
    raise TypeError(f"deny_list must be a collection of words, not a single "
                    f"string: e.g. deny_list=[{deny_words!r:.40}]")
  if not isinstance(deny_words, Iterable):
    raise TypeError("deny_list must be a collection of words, got "
                    f"{deny_words!r:.40}")
  deny = set()
  for word in deny_words:
    if not isinstance(word, str):
      raise TypeError(f"every word of deny_list must be a str, got "
                      f"{word!r:.40}")
    deny.add(word.lower())
  return deny


def apply(population: population_lib.Population,
          deny_words: Iterable[str]) -> population_lib.Population:
  """``population`` with the users of ``deny_words`` abstaining or re-choosing.

  Args:
    population: the users (one word per user, by user or by word
      frequencies, or several words per user).
    deny_words: words to deny (lower-cased, as the population's words are).

  Returns:
    A population with the same users (see the module docstring).

  Raises:
    TypeError: if a denied word is not a ``str``.
  """
  deny = _lowered(deny_words)
  vocabulary = population.vocabulary
  denied = np.fromiter((str(w) in deny for w in vocabulary), dtype=bool,
                       count=vocabulary.size)
  if not denied.any():
    return population
  keep = ~denied
  num_kept = int(keep.sum())
  new_index = np.full(vocabulary.size, -1, dtype=np.int64)
  new_index[keep] = np.arange(num_kept)
  if population.user_word is not None:
    old = population.user_word
    user_word = np.where(denied[old], num_kept, new_index[old])
    return _rebuilt(population, keep, user_word=user_word.astype(np.int32))
  if population.word_users is not None:
    word_users = np.append(population.word_users[keep],
                           population.word_users[denied].sum())
    return _rebuilt(population, keep, word_users=word_users.astype(np.int64))
  num_users = population.num_users
  users = population.entry_users
  kept_entry = keep[population.entry_word]
  left = np.bincount(users[kept_entry], minlength=num_users)
  abstaining = np.flatnonzero(left == 0)
  entry_user = np.concatenate([users[kept_entry], abstaining])
  entry_word = np.concatenate([
      new_index[population.entry_word[kept_entry]],
      np.full(abstaining.size, num_kept, dtype=np.int64)])
  entry_count = np.concatenate([
      population.entry_count[kept_entry],
      np.ones(abstaining.size, dtype=np.int64)])
  order = np.argsort(entry_user, kind="stable")  # a user's entries in order
  user_offsets = np.zeros(num_users + 1, dtype=np.int64)
  user_offsets[1:] = np.cumsum(np.bincount(entry_user, minlength=num_users))
  return _rebuilt(population, keep, with_abstain=abstaining.size > 0,
                  user_offsets=user_offsets,
                  entry_word=entry_word[order].astype(np.int32),
                  entry_count=entry_count[order])


def _rebuilt(population: population_lib.Population, keep: np.ndarray, *,
             with_abstain: bool = True, **users) -> population_lib.Population:
  """The population's kept words (then :data:`ABSTAIN`) and ``users``."""
  vocabulary = population.vocabulary[keep]
  codes = population.codes[keep]
  word_lengths = population.word_lengths[keep]
  if with_abstain:
    vocabulary = np.append(vocabulary, np.array([ABSTAIN], dtype=object))
    codes = np.vstack([codes, np.full((1, codes.shape[1]), -1,
                                      dtype=codes.dtype)])
    word_lengths = np.append(word_lengths, 0).astype(np.int32)
  return population_lib.Population(
      alphabet=population.alphabet, max_length=population.max_length,
      vocabulary=vocabulary.astype(object), codes=codes,
      word_lengths=word_lengths,
      num_dropped_users=population.num_dropped_users,
      alphabet_from_data=population.alphabet_from_data, **users)


def num_abstaining(population: population_lib.Population) -> int:
  """Users whose every word is :data:`ABSTAIN` (they never vote)."""
  hits = np.flatnonzero(population.vocabulary == ABSTAIN)
  if not hits.size:
    return 0
  index = int(hits[0])
  if population.user_word is not None:
    return int((population.user_word == index).sum())
  if population.word_users is not None:
    return int(population.word_users[index])
  return int((population.entry_word == index).sum())

