"""PipelineDP's partition selection on Beam, beside TrieHH's Beam rounds."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("apache_beam", reason="apache-beam is not installed")

import apache_beam as beam  # pylint: disable=g-import-not-at-top

from tests import reference  # pylint: disable=g-import-not-at-top
from triehh.baselines import partition_selection as ps_lib  # pylint: disable=g-import-not-at-top
from triehh.beam import ingest  # pylint: disable=g-import-not-at-top
from triehh.beam import partition_selection  # pylint: disable=g-import-not-at-top
from triehh.beam import protocol  # pylint: disable=g-import-not-at-top
from triehh.core import population as population_lib  # pylint: disable=g-import-not-at-top
from triehh.data import loader  # pylint: disable=g-import-not-at-top
from triehh.engines import fast as fast_engine  # pylint: disable=g-import-not-at-top

# Two words of hundreds of users, and a hundred words of one user each: at
# epsilon 1 and delta 1e-6 the first are released but for a chance below
# 1e-20, a one-user word with a chance of about delta.
WORDS = ["sun"] * 300 + ["moon"] * 200 + [f"w{i}" for i in range(100)]


def test_beam_backend_releases_what_the_local_backend_releases():
  pop = population_lib.Population.from_user_words(WORDS, max_length=5)
  target = ps_lib.PartitionSelectionTarget(1.0, 1e-6)
  on_beam = partition_selection.select_words(pop, target)
  local = ps_lib.select_words(pop, target)
  assert on_beam.words == local.words == ("moon", "sun")
  assert on_beam.params == local.params
  assert on_beam.guarantee == local.guarantee


def test_bad_options_are_refused_as_on_the_local_backend():
  pop = population_lib.Population.from_user_words(WORDS, max_length=5)
  with pytest.raises(TypeError, match="^select_words: epsilon= is a field "
                     "of triehh.PartitionSelectionTarget"):
    partition_selection.select_words(pop, epsilon=1.0)
  with pytest.raises(ValueError, match="^population_size=10 is smaller"):
    partition_selection.select_words(pop, ps_lib.PartitionSelectionTarget(
        1.0, population_size=10))


def test_rows_without_a_delta_need_a_declared_population_size():
  with pytest.raises(ValueError, match="needs the target's delta, or a "
                     "declared population_size"):
    partition_selection.select([], ps_lib.PartitionSelectionTarget(1.0))


def test_both_run_on_the_same_user_pcollection(tmp_path):
  # Users sharded by file; one pipeline reads them once and runs TrieHH's
  # rounds (everyone sampled) and the partition selection on them.
  rng = np.random.default_rng(4)
  words = list(rng.permutation(WORDS))
  for k in range(2):
    lines = [f"u{i},{w}" for i, w in enumerate(words) if i % 2 == k]
    (tmp_path / f"p-{k}.csv").write_text("user,text\n" + "\n".join(lines)
                                         + "\n")
  spec = loader.DataSpec(path=str(tmp_path / "p-*.csv"), max_length=5)
  paths = sorted(str(p) for p in tmp_path.glob("p-*.csv"))
  rounds = protocol.Rounds(theta=150, sampling_rate=1.0, max_length=5)
  out = tmp_path / "out"
  with beam.Pipeline(options=ingest.options()) as p:
    users = protocol.read_users(p, spec, paths)
    trie = protocol.expand(users, rounds)
    selected, accountant = partition_selection.select(
        users, ps_lib.PartitionSelectionTarget(1.0, 1e-6))
    accountant.compute_budgets()
    for name, pcoll in (("trie", trie), ("words", selected)):
      _ = (pcoll | f"Format{name}" >> beam.Map(json.dumps)
           | f"Write{name}" >> beam.io.WriteToText(
               str(out / name), num_shards=1, shard_name_template=""))
  kept = [tuple(json.loads(line)) for line in (out / "trie").open()]
  levels = protocol.levels_by_seed(kept, rounds)[0]
  pop = population_lib.Population.from_user_words(words, max_length=5)
  fast = fast_engine.run(pop, theta=150, batch_size=1, sampling_rate=1.0,
                         rng=np.random.default_rng(0))
  assert levels == [lv for lv in reference.trie_levels(fast) if lv]
  assert protocol.heavy_hitters(levels) == {"sun": 300, "moon": 200}
  assert sorted(json.loads(line) for line in (out / "words").open()) == [
      "moon", "sun"]
