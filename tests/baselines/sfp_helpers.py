"""Populations and options shared by the SFP tests."""

import dataclasses
import math

import numpy as np

import triehh
from triehh.baselines import sfp

SMALL = dict(k=64, m=1024)  # few hash functions keep the decode fast
# Reports without noise (no privacy guarantee): only hash collisions remain.
NO_NOISE = dict(epsilon_local=math.inf, allow_no_guarantee=True)
TOP = {"the": 2000, "and": 1200, "you": 800, "heavy": 600, "hitter": 450,
       "privacy": 350, "federated": 280, "sequence": 220, "a": 180,
       "fragment": 150}
NUM_SINGLETONS = 1000


def singletons(num, seed=0):
  rng = np.random.default_rng(seed)
  letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
  words = set()
  while len(words) < num:
    words.add("".join(rng.choice(letters, size=rng.integers(3, 13))))
  return sorted(words - set(TOP))


def user_words(top=None, num_singletons=NUM_SINGLETONS):
  top = TOP if top is None else top
  words = [w for w, c in top.items() for _ in range(c)]
  words += singletons(num_singletons)
  rng = np.random.default_rng(1)
  return [words[i] for i in rng.permutation(len(words))]


# The alphabet given (public): fragment_alphabet="data" takes it.
POPULATION = triehh.Population.from_user_words(
    user_words(), alphabet="abcdefghijklmnopqrstuvwxyz")


def collision_variance(counts, word):
  """Variance of a noiseless CMS estimate (count_mean_sketch docstring)."""
  k, m = SMALL["k"], SMALL["m"]
  n = sum(counts.values())
  pairs = sum(f * (f - 1) for w, f in counts.items() if w != word)
  return (n - counts[word]) / (m - 1) + pairs / (k * (m - 1))


# SFPTarget's fields; the other options of a run are sfp_discover's.
TARGET_FIELDS = frozenset(f.name for f in dataclasses.fields(sfp.SFPTarget))


def target_and_options(options):
  """``options`` of the untyped call split: an SFPTarget of its fields, and
  the run's keywords."""
  fields = {k: v for k, v in options.items() if k in TARGET_FIELDS}
  rest = {k: v for k, v in options.items() if k not in TARGET_FIELDS}
  return sfp.SFPTarget(**fields), rest


def run_sfp(users, **options):
  """``sfp_discover(users, SFPTarget(<its fields>), <the rest>)``."""
  target, rest = target_and_options(options)
  return triehh.sfp_discover(users, target, **rest)
