"""The run_triehh driver with --engine=tff: same output as the fast engine,
worker errors that end the program cleanly and keep finished runs."""

import dataclasses
import json
import os
import socket
import time

import pytest
from absl.testing import flagsaver

pytest.importorskip("tensorflow_federated")

from experiments import run_triehh
from tests.experiments import drivers
from triehh.engines.tff import runtime

FLAGS = run_triehh.FLAGS
# The TFF worker's time grows with the clients: 2,000 users at epsilon 8
# give rounds of 710 clients and three words found (10,000 users: 3,709
# clients per round, about four times the worker's time for the same checks).
SMALL = dict(num_users=2000, epsilon=8.0)


@pytest.fixture(autouse=True)
def parsed_flags():
  if not FLAGS.is_parsed():
    FLAGS.mark_as_parsed()


def records(path):
  with open(os.path.join(path, "results.jsonl"), encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def test_tff_engine_writes_the_fast_engine_results(tmp_path):
  for engine in ("tff", "fast"):
    # A simulation: both engines from the same seeds.
    with flagsaver.flagsaver(engine=engine, num_runs=2, seed=0,
                             output_dir=str(tmp_path / engine), **SMALL):
      run_triehh.main(["run_triehh"])
  tff_runs, fast_runs = records(tmp_path / "tff"), records(tmp_path / "fast")
  assert [r["engine"] for r in tff_runs] == ["tff", "tff"]
  assert tff_runs[0]["discovered"]  # something was found
  assert [r["params"]["tff_secure_sum"] for r in tff_runs] == [False, False]
  assert [r["params"]["tff_secure_sum"] for r in fast_runs] == [None, None]
  for got, want in zip(tff_runs, fast_runs):
    # The engine and its configuration differ; every result must not.
    for key in ("engine", "seconds", "config_key"):
      del got[key], want[key]
    for key in ("tff_secure_sum", "tff_max_user_contribution",
                "tff_workers"):
      del got["params"][key], want["params"][key]
    for key in ("engine", "tff_secure_sum", "tff_max_user_contribution",
                "tff_workers"):
      got["config"].pop(key, None)
      want["config"].pop(key, None)
    assert got == want


def test_a_failing_later_run_keeps_the_earlier_lines(tmp_path, monkeypatch):
  from triehh.engines.tff import engine as tff_engine  # pylint: disable=g-import-not-at-top
  calls = []

  def flaky(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
      raise runtime.WorkerError("127.0.0.1:9", "unavailable (worker died)")
    return tff_engine.run(*args, **kwargs)

  from triehh.engines import registry  # pylint: disable=g-import-not-at-top
  monkeypatch.setitem(registry._ENGINES, "tff", dataclasses.replace(  # pylint: disable=protected-access
      registry.get("tff"), run=flaky))
  with flagsaver.flagsaver(engine="tff", num_runs=3, output_dir=str(tmp_path),
                           **SMALL):
    with pytest.raises(runtime.WorkerError, match="127.0.0.1:9"):
      run_triehh.main(["run_triehh"])
  kept = records(tmp_path)
  assert [(r["engine"], r["run"]) for r in kept] == [("tff", 0)]


def test_tff_flags_need_the_tff_engine():
  with flagsaver.flagsaver(engine="fast", tff_secure_sum=True):
    with pytest.raises(ValueError, match="--tff_secure_sum"):
      run_triehh.engine_options()
  with flagsaver.flagsaver(engine="tff", tff_workers=["127.0.0.1:5"],
                           tff_secure_sum=True, tff_rpc_timeout=7.0):
    assert run_triehh.engine_options() == {
        "secure_sum": True, "connect_timeout": 10.0, "rpc_timeout": 7.0,
        "workers": ["127.0.0.1:5"]}


def test_unreachable_worker_ends_the_driver_with_its_address(tmp_path):
  # The driver's own flag parsing and error handling, in this process (the
  # process itself is not what is tested; TensorFlow is loaded already).
  # The port stays bound, not listening, so that nothing else takes it.
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    start = time.monotonic()
    code, _, err = drivers.run_in_process(
        run_triehh, "--engine=tff", "--num_users=5000",
        f"--tff_workers=127.0.0.1:{port}", "--tff_connect_timeout=1",
        f"--output_dir={tmp_path}")
  assert time.monotonic() - start < 120
  assert code == 1
  assert f"error: TFF worker 127.0.0.1:{port}: unreachable" in err
  assert err.strip().count("\n") == 0, err  # one line
  assert "Traceback" not in err
