"""An engine registered by name is chosen everywhere an engine is: the facade,
its counting phase, a sweep and the run_triehh driver's --engine flag."""

import json

import numpy as np
import pytest

import triehh
from experiments import run_triehh
from experiments import sweep
from tests.experiments import drivers
from triehh.engines import counting
from triehh.engines import fast
from triehh.engines import registry

TOY = "toy"
WORDS = ["sun"] * 60 + ["moon"] * 40 + ["star"] * 30 + ["rain"] * 3
DRIVER_FLAGS = ("--num_users=3000", "--num_runs=2", "--epsilon=8",
                "--sampling=fixed", "--cache_dir=")


@pytest.fixture
def toy():
  """Registers ``toy``, the fast engine's run counting its calls, with no
  count of its own; yields the calls."""
  calls = []

  def run(population, **kwargs):
    calls.append(population.num_users)
    return fast.run(population, **kwargs)

  registry.register(TOY, run, fast.prepare)
  try:
    yield calls
  finally:
    registry._ENGINES.pop(TOY)  # pylint: disable=protected-access


def test_the_toy_engine_is_listed_with_no_options(toy):
  del toy
  assert TOY in registry.names() and TOY in triehh.engine_names()
  assert registry.options(TOY) == frozenset()
  assert not registry.uses_tensorflow(TOY)
  assert registry.get(TOY).count is counting.noisy_sums
  # The built-in TFF engine's traits are known without importing it.
  assert registry.options(registry.TFF) == registry.TFF_OPTIONS
  assert registry.uses_tensorflow(registry.TFF)
  with pytest.raises(ValueError, match="unknown engine 'nope'"):
    registry.options("nope")


def test_discover_runs_the_toy_engine_as_the_fast_one(toy):
  privacy = triehh.Mechanism(theta=5, batch_size=40, allow_no_guarantee=True)
  result = triehh.discover(WORDS, privacy, engine=TOY, seed=3)
  assert toy == [len(WORDS)]
  assert result.engine == TOY
  assert result.heavy_hitters == triehh.discover(
      WORDS, privacy, engine=registry.FAST, seed=3).heavy_hitters


def test_an_engine_without_count_counts_by_the_fast_law(toy):
  options = dict(privacy=triehh.Target(4.0, delta=1e-6), counts=True, seed=2)
  result = triehh.discover(WORDS * 50, engine=TOY, **options)
  assert len(toy) == 1 and result.counts is not None
  want = triehh.discover(WORDS * 50, engine=registry.FAST, **options)
  assert result.counts == want.counts  # same law, same draws
  given = triehh.count_words(WORDS, ["sun", "moon"], triehh.CountTarget(1.0),
                             seed=4, engine=TOY)
  assert given.noisy_sums == triehh.count_words(
      WORDS, ["sun", "moon"], triehh.CountTarget(1.0), seed=4).noisy_sums


def test_an_engine_counts_with_its_own_count(toy):
  del toy
  seen = []

  def count(population, words, sample_rate, noise_std, rng):
    del rng
    seen.append((population.num_users, tuple(words), sample_rate))
    return np.arange(len(words) + 1, dtype=np.float64) * noise_std

  registry.register(TOY, registry.get(TOY).run, count=count)
  result = triehh.count_words(WORDS, ["sun", "moon"],
                              triehh.CountTarget(1.0, sample_rate=0.5),
                              engine=TOY)
  assert seen == [(len(WORDS), ("sun", "moon"), 0.5)]
  sigma = result.noise_std
  assert result.noisy_sums == (0.0, sigma, 2 * sigma)


def read(path) -> list[dict]:
  return [json.loads(line) for line in
          (path / "results.jsonl").read_text().splitlines()]


def test_a_sweep_runs_the_toy_engine(toy, tmp_path):
  code, _, err = drivers.run_in_process(
      sweep, "--engines=toy", *DRIVER_FLAGS, "--noprogress",
      f"--output_dir={tmp_path}")
  assert code == 0, err
  records = read(tmp_path)
  assert [(r["engine"], r["run"]) for r in records] == [(TOY, 0), (TOY, 1)]
  assert records[0]["config"]["engine"] == TOY
  assert records[0]["params"]["tff_secure_sum"] is None
  assert len(toy) == 2
  # TFF flags apply to no toy cell.
  code, _, err = drivers.run_in_process(
      sweep, "--engines=toy", "--tff_secure_sum", *DRIVER_FLAGS,
      "--noprogress", f"--output_dir={tmp_path / 'refused'}")
  assert code == 1 and "--tff_secure_sum applies to --engines=tff" in err
  code, _, err = drivers.run_in_process(
      sweep, "--engines=fast,nope", *DRIVER_FLAGS, "--noprogress",
      f"--output_dir={tmp_path / 'unknown'}")
  assert code == 1 and "--engines=nope: unknown engine" in err
  assert "toy" in err


def test_run_triehh_takes_the_toy_engine_by_flag(toy, tmp_path):
  code, out, err = drivers.run_in_process(
      run_triehh, "--engine=toy", *DRIVER_FLAGS, f"--output_dir={tmp_path}")
  assert code == 0, err
  assert "toy engine" in out
  records = read(tmp_path)
  assert [r["engine"] for r in records] == [TOY, TOY]
  assert len(toy) == 2
  code, _, err = drivers.run_in_process(
      run_triehh, "--engine=toy", "--tff_rpc_timeout=5", *DRIVER_FLAGS,
      f"--output_dir={tmp_path / 'refused'}")
  assert code == 1 and "--tff_rpc_timeout" in err
  assert len(toy) == 2
