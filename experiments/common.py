"""Flags and helpers shared by the experiment drivers.

Every driver builds a population from the dataset flags, runs its algorithm
``--num_runs`` times and, with ``--output_dir``, appends one JSON object per
run to ``results.jsonl`` as soon as the run ends (so an interrupted sweep
keeps every finished run).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Mapping

from absl import flags

from triehh import metrics
from triehh import population as population_lib
from triehh import synthetic

FLAGS = flags.FLAGS

flags.DEFINE_enum("dataset", "default", ["default"],
                  "Data set: 'default' is a synthetic population drawn from "
                  "the wordfreq English word list (no download).")
flags.DEFINE_integer("num_users", synthetic.DEFAULT_NUM_USERS,
                     "Users in the default synthetic population.")
flags.DEFINE_float("epsilon", 4.0, "Target central epsilon.")
flags.DEFINE_float("delta", None, "Target delta; default 1/n^2.")
flags.DEFINE_integer("max_length", population_lib.DEFAULT_MAX_LENGTH,
                     "L, the maximum characters per word.")
flags.DEFINE_integer("num_runs", 1, "Independent runs (seeds seed, seed+1, ...).")
flags.DEFINE_integer("seed", 0, "Seed of the first run.")
flags.DEFINE_string("output_dir", None,
                    "If set, append one JSON line per run to "
                    "<output_dir>/results.jsonl.")
flags.DEFINE_list("ks", ["10", "50", "100"], "K values for the metrics.")


@dataclasses.dataclass
class Dataset:
  """A population with its ground truth and a description."""

  population: population_lib.Population
  truth: dict[str, float]
  name: str
  setting: str


def load_dataset() -> Dataset:
  """Builds the population the dataset flags describe."""
  if FLAGS.dataset == "default":
    pop = synthetic.english_population(
        FLAGS.num_users, seed=0, max_length=FLAGS.max_length)
    return Dataset(pop, pop.ground_truth(), "default", "single")
  raise ValueError(f"unknown dataset {FLAGS.dataset!r}")


def ks() -> list[int]:
  try:
    values = [int(k) for k in FLAGS.ks]
  except ValueError:
    raise ValueError(f"--ks must be integers, got {FLAGS.ks}") from None
  if not values or min(values) < 1:
    raise ValueError(f"--ks must be positive integers, got {FLAGS.ks}")
  return values


class ResultsWriter:
  """Appends one JSON object per run to ``<output_dir>/results.jsonl``."""

  def __init__(self, output_dir: str | None):
    self.path = None
    if output_dir:
      os.makedirs(output_dir, exist_ok=True)
      self.path = os.path.join(output_dir, "results.jsonl")

  def write(self, record: Mapping) -> None:
    if self.path is None:
      return
    with open(self.path, "a", encoding="utf-8") as f:
      f.write(json.dumps(_jsonable(record), sort_keys=True) + "\n")
      f.flush()
      os.fsync(f.fileno())


def _jsonable(value):
  if isinstance(value, float) and not math.isfinite(value):
    return str(value)
  if isinstance(value, Mapping):
    return {str(k): _jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_jsonable(v) for v in value]
  if hasattr(value, "item"):  # numpy scalars
    return value.item()
  return value


def score(discovered, truth: Mapping[str, float]) -> dict[str, float]:
  return metrics.precision_recall_f1(discovered, truth, ks())


def print_metrics(values: Mapping[str, float]) -> None:
  for k in ks():
    print(f"  K={k:<5d} precision={values[f'precision@{k}']:.3f}  "
          f"recall={values[f'recall@{k}']:.3f}  f1={values[f'f1@{k}']:.3f}")


class Timer:
  def __enter__(self):
    self.start = time.perf_counter()
    return self

  def __exit__(self, *exc):
    self.seconds = time.perf_counter() - self.start
