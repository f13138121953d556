"""Tests of results.jsonl's reader and writer, and of the run record schema
(triehh.runs.schema, whose record this module re-exports)."""

import hashlib
import json
import math
import multiprocessing
import os
import pathlib
import re
import signal
import stat
import threading

import pytest

from triehh.runs import records


def triehh_record(**changes):
  fields = dict(
      algorithm="triehh", engine="fast", dataset="default", setting="single",
      n_users=1000, run=0, seed=3, epsilon=2.5, delta=1e-6,
      target_epsilon=3.0, target_delta=1e-6, theta=12, gamma=3.5,
      batch_size=110, max_length=10, levels=11, num_sub_rounds=1,
      discovered=["the", "of"], reported_counts=[40, 20],
      metrics={"recall@10": 0.2, "num_discovered": 2.0}, seconds=0.01,
      config={"algorithm": "triehh", "epsilon": 3.0,
              "data": {"dataset": "default", "num_users": 1000}})
  fields.update(changes)
  return records.RunRecord(**fields)


def sfp_record(**changes):
  fields = dict(
      algorithm="sfp", dataset="default", setting="single", n_users=1000,
      run=1, seed=4, epsilon=4.0, delta=1e-6, target_epsilon=4.0,
      target_delta=1e-6, epsilon_local=4.5, top_t=20, k=64, m=1024,
      discovered=["the"], reported_counts=[512.0], metrics={"recall@10": 0.1},
      seconds=0.5, config={"algorithm": "sfp", "top_t": 20})
  fields.update(changes)
  return records.RunRecord(**fields)


def iblt_record(**changes):
  fields = dict(
      algorithm="iblt", dataset="default", setting="single", n_users=1000,
      run=0, seed=5, epsilon=None, delta=None, has_guarantee=False,
      target_epsilon=None, target_delta=None, accounting="none",
      privacy="k-anonymity (k=12), not (epsilon, delta)-differential "
      "privacy: ...", matched_epsilon=4.0, matched_delta=1e-6,
      k_anonymity=12, capacity=40, string_max_bytes=10,
      secure_sum_bitwidth=None, round_draw="sampled", repetitions=3,
      sketch_shape=[3, 28, 6], bytes_per_client=4704,
      memory_estimate_bytes=1034880, batch_size=110, max_length=10, rounds=1,
      num_participants=110, distinct_users=110, num_not_decoded=0,
      num_truncated=1, truncated=["http://twi"],
      discovered=["the", "http://twi"], reported_counts=[20, 13],
      metrics={"recall@10": 0.1, "precision": 0.5}, seconds=0.3,
      seconds_per_client=0.3 / 110, round_seconds=[0.3],
      config={"algorithm": "iblt", "epsilon": 4.0, "k_anonymity": None})
  fields.update(changes)
  return records.RunRecord(**fields)


def partition_selection_record(**changes):
  fields = dict(
      algorithm="partition_selection", dataset="default", setting="single",
      n_users=1000, run=0, seed=2, epsilon=4.0, delta=1e-6,
      target_epsilon=4.0, target_delta=1e-6,
      privacy="central: the server sees raw strings",
      accounting="pipeline_dp partition selection (pipeline-dp 0.3.1)",
      covers="the set of released words, both directions",
      adjacency="ADD_OR_REMOVE_ONE", n_source="unused",
      strategy="truncated_geometric", max_partitions_contributed=1,
      num_rows=1000, num_candidates=300, discovered=["a", "the"],
      reported_counts=[], metrics={"recall@10": 0.2}, seconds=0.1,
      config={"algorithm": "partition_selection", "epsilon": 4.0})
  fields.update(changes)
  return records.RunRecord(**fields)


def put(raw, field, value):
  """Sets ``field`` of a record's JSON object ``raw`` where the record holds
  it: at the top, or in its params."""
  if field in records.RunRecord.__dataclass_fields__:
    raw[field] = value
  else:
    raw["params"][field] = value
  return raw


def where(field):
  """How a message names ``field``: ``params.<field>`` for a params field."""
  return (field if field in records.RunRecord.__dataclass_fields__
          else f"params.{field}")


def flat(make, version):
  """The record ``make()`` as a line of version 1 or 2 wrote it: every
  field at the top (version 1: its reported counts as ``counts``)."""
  raw = json.loads(make().to_json())
  raw.update(raw.pop("params"), schema_version=version)
  if version == 1:
    raw["counts"] = raw.pop("reported_counts")
  return raw


def test_json_round_trip_keeps_every_field():
  for record in (triehh_record(), sfp_record(), iblt_record(),
                 partition_selection_record()):
    line = record.to_json()
    assert "\n" not in line
    assert records.RunRecord.from_json(line) == record


# The fields every record holds at the top, whatever its algorithm.
COMMON = {"schema_version", "algorithm", "engine", "dataset", "setting",
          "n_users", "run", "seed", "randomness", "config", "config_key",
          "epsilon",
          "delta", "has_guarantee", "target_epsilon", "target_delta",
          "accounting", "covers", "adjacency", "n_source", "discovered",
          "reported_counts", "metrics", "seconds", "rounds",
          "num_participants", "params"}


def test_json_holds_the_common_fields_and_the_algorithms_own_params():
  raws = [json.loads(make().to_json()) for make in (
      triehh_record, sfp_record, iblt_record, partition_selection_record)]
  for raw in raws:
    assert set(raw) == COMMON and raw["schema_version"] == 3
  triehh_keys, sfp_keys, iblt_keys, ps_keys = (set(r["params"]) for r in raws)
  assert {"theta", "batch_size", "levels", "sampling"} <= triehh_keys
  assert not {"top_t", "epsilon_local", "k"} & triehh_keys
  assert {"top_t", "epsilon_local", "k"} <= sfp_keys
  assert not {"theta"} & sfp_keys
  assert {"k_anonymity", "capacity", "string_max_bytes",
          "secure_sum_bitwidth", "bytes_per_client", "seconds_per_client",
          "num_truncated", "privacy", "matched_epsilon", "batch_size"} <= (
              iblt_keys)
  assert not {"theta", "top_t", "votes_per_round", "epsilon_local"} & (
      iblt_keys)
  assert not {"k_anonymity", "privacy", "bytes_per_client"} & (
      triehh_keys | sfp_keys)
  assert {"strategy", "max_partitions_contributed", "privacy"} <= ps_keys
  # Typed: each algorithm's params record, read back as such.
  assert [type(records.RunRecord.from_dict(r).params) for r in raws] == [
      records.TrieHHParams, records.SFPParams, records.IBLTParams,
      records.PartitionSelectionParams]


def test_a_partition_selection_record_holds_its_guarantee_and_options():
  raw = json.loads(partition_selection_record().to_json())
  assert {"adjacency", "covers", "accounting", "n_source"} <= set(raw)
  assert {"strategy", "max_partitions_contributed", "privacy", "num_rows",
          "num_candidates"} <= set(raw["params"])
  assert not {"theta", "top_t", "k_anonymity", "batch_size",
              "matched_epsilon"} & set(raw["params"])
  assert (raw["epsilon"], raw["delta"], raw["has_guarantee"]) == (
      4.0, 1e-6, True)
  del raw["params"]["max_partitions_contributed"]
  with pytest.raises(records.RecordError,
                     match="params.max_partitions_contributed: missing"):
    records.RunRecord.from_dict(raw)


def test_an_iblt_record_never_claims_an_epsilon():
  # k-anonymity is not (epsilon, delta)-DP, whatever the caller passes.
  record = iblt_record(epsilon=4.0, delta=1e-6, has_guarantee=True)
  raw = json.loads(record.to_json())
  assert (raw["epsilon"], raw["delta"], raw["has_guarantee"]) == (
      None, None, False)
  assert raw["accounting"] == "none"
  assert "not (epsilon, delta)-differential privacy" in raw["params"][
      "privacy"]
  assert records.RunRecord.from_json(record.to_json()) == record


def test_no_guarantee_is_null_with_a_flag_never_a_string():
  record = triehh_record(epsilon=math.inf, delta=1.0, target_epsilon=None)
  raw = json.loads(record.to_json())
  assert raw["epsilon"] is None and raw["delta"] is None
  assert raw["has_guarantee"] is False
  assert "inf" not in record.to_json().lower().replace("info", "")
  assert records.RunRecord.from_json(record.to_json()).has_guarantee is False


def test_config_key_is_the_sha256_of_canonical_json():
  config = {"b": 1, "a": {"y": None, "x": 2.5}}
  text = '{"a":{"x":2.5,"y":null},"b":1}'
  assert records.config_key(config) == (
      hashlib.sha256(text.encode()).hexdigest()[:16])
  record = triehh_record(config=config)
  assert record.config_key == records.config_key(config)
  # The seed and the run index are not part of the key; the config is.
  assert triehh_record(seed=9, run=5).config_key == triehh_record().config_key
  assert triehh_record(config={"epsilon": 1.0}).config_key != (
      triehh_record().config_key)


def test_records_of_earlier_layouts_are_refused():
  # Before schema_version: SFP's T as "threshold", no config, no flag.
  old = flat(sfp_record, 2)
  for key in ("top_t", "config", "config_key", "schema_version",
              "has_guarantee"):
    old.pop(key)
  old["threshold"] = 80
  with pytest.raises(ValueError, match="without schema_version .an earlier "
                     "layout, not read"):
    records.RunRecord.from_dict(old)
  for version in (0, 4, "1", True):
    with pytest.raises(ValueError, match="only 1, 2 and 3 are read"):
      records.RunRecord.from_dict(dict(old, schema_version=version))
  current = json.loads(sfp_record().to_json())
  assert records.RunRecord.from_dict(current) == sfp_record()
  with pytest.raises(ValueError, match="epsilon: must be a number"):
    records.RunRecord.from_dict(dict(current, epsilon="inf"))
  with pytest.raises(ValueError, match="without"):
    records.RunRecord.from_dict({"algorithm": "triehh", "schema_version": 1})
  with pytest.raises(ValueError, match="algorithm"):
    records.RunRecord.from_dict(dict(current, algorithm="other"))


_COUNTED = dict(
    epsilon=3.99, delta=1e-6, target_epsilon=4.0, target_delta=1e-6,
    discovery_epsilon=3.5, discovery_delta=9e-7, count_epsilon=2.7,
    count_delta=1e-7, count_accounting="PLD composition", count_share=0.1,
    count_sample_rate=1.0, count_noise_std=2.1, count_confidence=0.95,
    protected_counts={"the": [41.5, 37.4, 45.6], "of": [19.0, 14.9, 23.1]})


def counted_record():
  return triehh_record(**_COUNTED)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("make", [triehh_record, counted_record, sfp_record,
                                  iblt_record, partition_selection_record])
def test_a_record_of_an_earlier_version_is_upgraded(make, version):
  old = flat(make, version)
  assert "params" not in old and old["schema_version"] == version
  assert ("counts" in old) == (version == 1)
  upgraded = records.schema.upgrade(old)
  assert upgraded == json.loads(make().to_json())
  assert upgraded["config_key"] == old["config_key"]  # what resume keys by
  assert records.RunRecord.from_dict(old) == make()
  assert records.RunRecord.from_dict(upgraded) == make()


def test_the_upgrade_moves_each_algorithms_own_fields_and_no_other():
  old = {"schema_version": 2, "algorithm": "sfp", "top_t": 20, "k": 64,
         "theta": 12, "engine": None, "rounds": None, "config": {"a": 1},
         "config_key": "abc"}
  assert records.schema.upgrade(old) == {
      "schema_version": 3, "algorithm": "sfp", "params": {"top_t": 20,
                                                          "k": 64},
      "theta": 12, "engine": None, "rounds": None, "config": {"a": 1},
      "config_key": "abc"}
  current = json.loads(sfp_record().to_json())
  assert records.schema.upgrade(current) is current  # version 3: as it is
  assert records.schema.upgrade([1]) == [1]


def test_a_version_1_record_without_counts_names_the_new_field():
  old = flat(triehh_record, 2)
  del old["reported_counts"]
  with pytest.raises(ValueError, match="without reported_counts"):
    records.RunRecord.from_dict(dict(old, schema_version=1))


def test_protected_counts_are_written_only_when_set_and_read_back():
  plain = json.loads(triehh_record().to_json())
  assert not {k for k in plain["params"] if k.startswith("count_")
              or k in ("protected_counts", "discovery_epsilon")}
  counted = triehh_record(**_COUNTED)
  raw = json.loads(counted.to_json())
  for name, value in _COUNTED.items():
    assert (raw if name in COMMON else raw["params"])[name] == value, name
  assert records.RunRecord.from_json(counted.to_json()) == counted
  raw["params"]["count_share"] = 1  # an int is read as a float
  assert records.RunRecord.from_dict(raw).params.count_share == 1.0
  raw["params"]["count_noise_std"] = "2"
  with pytest.raises(ValueError,
                     match="params.count_noise_std: must be a number"):
    records.RunRecord.from_dict(raw)


def test_read_reports_a_line_of_an_earlier_layout(tmp_path):
  old = flat(triehh_record, 2)
  del old["schema_version"]
  path = tmp_path / "results.jsonl"
  path.write_text(json.dumps(old) + "\n" + triehh_record().to_json() + "\n")
  got, bad = records.read(str(path))
  assert got == [triehh_record()]
  assert [(b.path, b.line, b.kind) for b in bad] == [(str(path), 1, (
      "run record without schema_version (an earlier layout, not read)"))]


def test_a_record_without_key_or_guarantee_is_completed_on_reading():
  raw = json.loads(triehh_record(config={"x": 1}).to_json())
  raw["config_key"] = ""
  assert records.RunRecord.from_dict(raw).config_key == records.config_key(
      {"x": 1})
  del raw["config_key"]
  assert records.RunRecord.from_dict(raw).config_key == records.config_key(
      {"x": 1})
  # A run without guarantee: epsilon null, whatever else the line says.
  for changes in ({"epsilon": None, "has_guarantee": False},
                  {"has_guarantee": False}):
    record = records.RunRecord.from_dict(dict(raw, **changes))
    assert (record.epsilon, record.delta, record.has_guarantee) == (
        None, None, False)
  # Ints are numbers: read as floats where the schema holds floats.
  record = records.RunRecord.from_dict(dict(raw, epsilon=2, target_epsilon=3))
  assert (record.epsilon, record.target_epsilon) == (2.0, 3.0)
  assert isinstance(record.epsilon, float)


def test_get_goes_by_field_name():
  record = sfp_record()
  assert record.get("top_t") == 20 and record.get("theta") is None
  assert record.get("epsilon_local") == 4.5 == record.params.epsilon_local
  assert record.get("to_dict") is None and record.get("nothing", 7) == 7
  assert record.get("seed") == 4 and record.get("params") is record.params


def test_a_params_field_is_read_and_set_on_the_record():
  record = triehh_record()
  assert record.theta == 12 == record.params.theta
  assert record.top_t is None  # another algorithm's field
  record.theta = 13
  assert record.params.theta == 13
  record.online_per_round = [5, 4]  # written only when set
  assert json.loads(record.to_json())["params"]["online_per_round"] == [5, 4]
  with pytest.raises(AttributeError, match="a triehh record has no field "
                     "'top_t'"):
    record.top_t = 20
  with pytest.raises(AttributeError, match="no field 'nothing'"):
    _ = record.nothing
  with pytest.raises(TypeError, match="'top_t' that a triehh record does "
                     "not hold"):
    triehh_record(top_t=20)
  typed = records.RunRecord(**{
      k: getattr(record, k) for k in COMMON if k != "params"},
      params=records.TrieHHParams(theta=13, batch_size=110))
  assert typed.params == records.TrieHHParams(theta=13, batch_size=110)
  with pytest.raises(TypeError, match="params is a TrieHHParams, got "
                     "SFPParams"):
    records.RunRecord(**{k: getattr(record, k) for k in COMMON
                         if k != "params"}, params=records.SFPParams())


def test_flat_puts_the_params_beside_the_common_fields():
  record = iblt_record()
  flat_view = record.flat()
  assert "params" not in flat_view
  assert flat_view["k_anonymity"] == 12 and flat_view["seed"] == 5
  raw = json.loads(record.to_json())
  assert flat_view == {**raw["params"], **{k: v for k, v in raw.items()
                                           if k != "params"}}


def lines_file(path, lines, end="\n"):
  path.write_text("\n".join(lines) + end)
  return str(path)


def test_read_leaves_out_and_names_every_line_that_is_not_a_record(
    tmp_path):
  good = triehh_record().to_json()
  raw = json.loads(good)
  old = dict(raw)
  del old["schema_version"]
  no_counts = dict(raw)
  del no_counts["reported_counts"]
  no_theta = json.loads(good)
  del no_theta["params"]["theta"]
  rows = [good, "not json", sfp_record().to_json()[:40], "",
          '{"algorithm": "other", "metrics": {}}', "[1, 2]",
          json.dumps(dict(raw, metrics={"recall@10": "high"})),
          json.dumps(no_theta), json.dumps(old),
          json.dumps(dict(raw, schema_version=4)),
          json.dumps(dict(raw, discovered="the")),
          json.dumps(dict(raw, config=[1])), json.dumps(dict(raw, metrics={})),
          json.dumps(no_counts), json.dumps(dict(raw, epsilon="2")),
          json.dumps(dict(raw, n_users=True)), sfp_record().to_json()]
  path = lines_file(tmp_path / "results.jsonl", rows)
  got, bad = records.read(path)
  assert got == [triehh_record(), sfp_record()]
  fields = "run record with missing or bad fields"
  assert [(b.line, b.kind) for b in bad] == [
      (2, "not JSON"), (3, "not JSON"),
      (5, "not a run_triehh/run_sfp record"),
      (6, "not a run_triehh/run_sfp record"), (7, fields), (8, fields),
      (9, "run record without schema_version (an earlier layout, not read)"),
      (10, "run record of schema_version 4 (only 1, 2 and 3 are read)"),
      (11, fields), (12, fields), (13, fields), (14, fields), (15, fields),
      (16, fields)]
  assert [b.message for b in bad][3:] == [
      "a run record is a JSON object, not a list",
      "metrics['recall@10']: must be a number, got 'high'",
      "params.theta: missing (a triehh record holds it)",
      "run record without schema_version (an earlier layout, not read)",
      "run record of schema_version 4 (only 1, 2 and 3 are read)",
      "discovered: must be a list of strings, got 'the'",
      "config: must be a JSON object, got [1]",
      "metrics: must be a non-empty JSON object, got {}",
      "run record without reported_counts",
      "epsilon: must be a number or null, got '2'",
      "n_users: must be a number, got True"]
  assert bad[2].message == (f"algorithm: must be one of "
                            f"{', '.join(records.algorithms())}, got 'other'")
  assert records.algorithms()[:4] == ("triehh", "sfp", "iblt",
                                      "partition_selection")
  assert bad[0].message.startswith("not JSON (Expecting value")
  assert not any(b.unfinished for b in bad)


def test_read_refuses_a_malformed_line_naming_file_line_and_field(tmp_path):
  raw = json.loads(sfp_record().to_json())
  raw["metrics"]["recall@10"] = "high"
  path = lines_file(tmp_path / "results.jsonl",
                    [triehh_record().to_json(), json.dumps(raw)])
  expected = f"{path}:2: metrics['recall@10']: must be a number, got 'high'"
  got, bad = records.read(path)
  assert got == [triehh_record()] and [str(b) for b in bad] == [expected]
  with pytest.raises(records.RecordError) as raised:
    records.read(path, strict=True)
  assert str(raised.value) == expected
  assert raised.value.kind == "run record with missing or bad fields"


def test_an_unfinished_last_line_is_left_out_and_never_an_error(tmp_path):
  first, second = triehh_record().to_json(), sfp_record().to_json()
  path = lines_file(tmp_path / "results.jsonl", [first, second[:57]], end="")
  for strict in (False, True):
    got, bad = records.read(path, strict=strict)
    assert got == [triehh_record()] and len(bad) == 1
    assert (bad[0].line, bad[0].kind, bad[0].unfinished) == (
        2, "not JSON", True)
    assert "the last line, unfinished" in str(bad[0])
  # A whole record still waiting for its newline is read.
  path = lines_file(tmp_path / "whole.jsonl", [first, second], end="")
  assert records.read(path, strict=True) == (
      [triehh_record(), sfp_record()], [])
  # Half a line followed by others is malformed, not unfinished.
  path = lines_file(tmp_path / "torn.jsonl", [second[:57], first])
  with pytest.raises(ValueError, match="torn.jsonl:1: not JSON"):
    records.read(path, strict=True)


def test_read_takes_several_files_in_order(tmp_path):
  a = lines_file(tmp_path / "a.jsonl", [sfp_record().to_json(), "{"])
  b = lines_file(tmp_path / "b.jsonl", ["", triehh_record().to_json()])
  got, bad = records.read([a, b])
  assert got == [sfp_record(), triehh_record()]
  assert [(x.path, x.line) for x in bad] == [(a, 2)]
  with pytest.raises(FileNotFoundError):
    records.read([a, str(tmp_path / "missing.jsonl")])


def test_results_paths_from_files_and_directories(tmp_path):
  with pytest.raises(FileNotFoundError, match="results file not found"):
    records.results_paths([str(tmp_path / "x.jsonl")], [])
  (tmp_path / "empty").mkdir()
  with pytest.raises(FileNotFoundError, match="empty/results.jsonl"):
    records.results_paths([], [str(tmp_path / "empty")])
  with pytest.raises(ValueError, match="results=FILE"):
    records.results_paths([], [])
  path = lines_file(tmp_path / "results.jsonl", [sfp_record().to_json()])
  # A directory stands for its results.jsonl; a file named twice is read
  # once.
  assert records.results_paths([str(tmp_path), path], [str(tmp_path)]) == [
      os.path.join(str(tmp_path), "results.jsonl")]


def test_writer_appends_whole_lines(tmp_path):
  writer = records.ResultsWriter(str(tmp_path / "out"))
  writer.write(triehh_record())
  writer.write(sfp_record())
  text = (tmp_path / "out" / "results.jsonl").read_text()
  assert text.endswith("\n") and text.count("\n") == 2
  got, bad = records.read(writer.path)
  assert got == [triehh_record(), sfp_record()] and bad == []
  assert records.completed(writer.path) == {
      (triehh_record().config_key, 3), (sfp_record().config_key, 4)}
  assert records.completed(str(tmp_path / "none.jsonl")) == set()
  assert records.ResultsWriter(None).path is None


def test_writer_syncs_every_line_or_at_most_every_sync_seconds(
    tmp_path, monkeypatch):
  synced = []
  real_fsync = os.fsync
  monkeypatch.setattr(records.os, "fsync",
                      lambda fd: synced.append(real_fsync(fd)))
  clock = [100.0]
  monkeypatch.setattr(records.time, "monotonic", lambda: clock[0])
  every = records.ResultsWriter(str(tmp_path / "every"))
  for _ in range(3):
    every.write(triehh_record())
  assert len(synced) == 3
  every.close()  # nothing left to sync
  assert len(synced) == 3
  del synced[:]
  with records.ResultsWriter(str(tmp_path / "batched"),
                             sync_seconds=2.0) as writer:
    for _ in range(3):  # within 2 s of the writer's start: none synced yet
      writer.write(triehh_record())
    assert synced == []
    clock[0] += 2.5
    writer.write(triehh_record())  # the last sync is 2.5 s old: synced
    assert len(synced) == 1
    writer.write(triehh_record())
    assert len(synced) == 1
  assert len(synced) == 2  # the end of the block syncs the last line
  got, _ = records.read(writer.path)
  assert len(got) == 5 and writer.written == 5


def test_ctrl_c_after_the_write_still_counts_the_line(tmp_path, monkeypatch):
  # Ctrl-C arriving while the line is synced: the line is in the file, so
  # the count said on interrupt must include it.
  writer = records.ResultsWriter(str(tmp_path / "out"))
  writer.write(triehh_record())

  def interrupted(fd):
    del fd
    raise KeyboardInterrupt

  monkeypatch.setattr(records.os, "fsync", interrupted)
  with pytest.raises(KeyboardInterrupt):
    writer.write(sfp_record())
  lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
  assert writer.written == len(lines) == 2


@pytest.fixture
def python_sigint():
  """SIGINT raises KeyboardInterrupt, as in a terminal, even when the suite
  runs with SIGINT ignored (a background job)."""
  old = signal.signal(signal.SIGINT, signal.default_int_handler)
  yield
  signal.signal(signal.SIGINT, old)


def test_ctrl_c_during_the_write_waits_for_the_whole_line(tmp_path,
                                                          monkeypatch,
                                                          python_sigint):
  del python_sigint
  writer = records.ResultsWriter(str(tmp_path / "out"))
  real_write = os.write

  def write_then_signal(fd, data):
    signal.raise_signal(signal.SIGINT)  # pending until the line is written
    return real_write(fd, data[:10])  # and in pieces

  monkeypatch.setattr(records.os, "write", write_then_signal)
  with pytest.raises(KeyboardInterrupt):
    writer.write(sfp_record())
  monkeypatch.undo()
  assert writer.written == 1
  got, bad = records.read(writer.path)
  assert got == [sfp_record()] and bad == []


def test_ctrl_c_taken_by_another_thread_waits_for_the_line(tmp_path,
                                                          monkeypatch,
                                                          python_sigint):
  # A signal sent to the process may reach any of its threads that does not
  # block it (one started before the write, as libraries start theirs);
  # Python then raises KeyboardInterrupt in the main thread at once. The
  # line must still be written whole, counted and synced.
  del python_sigint
  count = records.LineCount()
  writer = records.ResultsWriter(str(tmp_path / "out"), count=count)
  real_write, synced = os.write, []
  real_fsync = os.fsync
  go = threading.Event()
  sender = threading.Thread(
      target=lambda: go.wait() and os.kill(os.getpid(), signal.SIGINT))
  sender.start()

  def write_after_a_signal(fd, data):
    go.set()
    sender.join()
    return real_write(fd, data)

  monkeypatch.setattr(records.os, "write", write_after_a_signal)
  monkeypatch.setattr(records.os, "fsync",
                      lambda fd: synced.append(real_fsync(fd)))
  with pytest.raises(KeyboardInterrupt):
    writer.write(sfp_record())
  monkeypatch.undo()
  assert writer.written == count.value == 1 and synced
  got, bad = records.read(writer.path)
  assert got == [sfp_record()] and bad == []


_SHARED = []


def _count_with(count):
  _SHARED[:] = [count]


def _append_counted(output_dir_and_seeds):
  output_dir, seeds = output_dir_and_seeds
  writer = records.ResultsWriter(output_dir, count=_SHARED[0])
  for seed in seeds:
    writer.write(triehh_record(seed=seed))


def test_a_line_count_adds_up_the_writers_of_several_processes(tmp_path):
  context = multiprocessing.get_context("fork")
  count = records.LineCount(context)
  with context.Pool(2, initializer=_count_with, initargs=(count,)) as pool:
    pool.map(_append_counted, [(str(tmp_path), range(5)),
                               (str(tmp_path), range(5, 12))])
  here = records.LineCount()
  records.ResultsWriter(str(tmp_path), count=here).write(sfp_record())
  lines = (tmp_path / "results.jsonl").read_text().splitlines()
  assert (count.value, here.value, len(lines)) == (12, 1, 13)


def test_the_write_lock_holds_writers_off(tmp_path):
  writer = records.ResultsWriter(str(tmp_path))
  with records.write_lock(str(tmp_path)):
    appending = threading.Thread(target=writer.write, args=(sfp_record(),))
    appending.start()
    appending.join(0.3)
    assert appending.is_alive() and writer.written == 0
    assert (tmp_path / "results.jsonl").read_text() == ""
  appending.join()
  assert writer.written == 1
  assert records.read(writer.path) == ([sfp_record()], [])
  with records.write_lock(str(tmp_path / "none")):  # no directory: no writer
    pass


def test_an_unfinished_last_line_is_set_aside_not_glued(tmp_path):
  out = tmp_path / "out"
  out.mkdir()
  first = triehh_record().to_json()
  partial = sfp_record().to_json()[:57]
  (out / "results.jsonl").write_text(first + "\n" + partial)
  messages = []
  writer = records.ResultsWriter(str(out), log=messages.append)
  writer.write(sfp_record())
  lines = (out / "results.jsonl").read_text().splitlines()
  assert lines == [first, sfp_record().to_json()]
  side = [p for p in os.listdir(out) if p.startswith("results.jsonl.partial-")]
  assert len(side) == 1
  assert (out / side[0]).read_text() == partial
  assert len(messages) == 1 and side[0] in messages[0]
  # A file holding only a partial line, and repair() on its own.
  (out / "results.jsonl").write_text('{"algo')
  assert records.repair(str(out / "results.jsonl"), log=messages.append)
  assert (out / "results.jsonl").read_text() == ""
  assert records.repair(str(out / "results.jsonl")) is None


def _append_many(path_and_count):
  output_dir, count, worker = path_and_count
  writer = records.ResultsWriter(output_dir)
  for i in range(count):
    # Lines of several kilobytes, so a torn write would show.
    writer.write(triehh_record(seed=worker * 1000 + i,
                               discovered=[f"{j:02d}" + "w" * 48
                                           for j in range(60)]))


def test_concurrent_writers_never_interleave(tmp_path):
  workers, count = 4, 40
  with multiprocessing.get_context("fork").Pool(workers) as pool:
    pool.map(_append_many, [(str(tmp_path), count, w) for w in range(workers)])
  got, bad = records.read(str(tmp_path / "results.jsonl"))
  assert bad == []
  assert sorted(r.seed for r in got) == sorted(
      w * 1000 + i for w in range(workers) for i in range(count))


def test_unusable_output_dirs_are_refused_before_any_work(tmp_path):
  a_file = tmp_path / "file"
  a_file.write_text("x")
  with pytest.raises(ValueError, match="is a file, not a directory"):
    records.ResultsWriter(str(a_file))
  (tmp_path / "d" / "results.jsonl").mkdir(parents=True)
  with pytest.raises(ValueError, match="not a regular file"):
    records.ResultsWriter(str(tmp_path / "d"))
  with pytest.raises(ValueError, match="cannot create"):
    records.ResultsWriter(str(a_file / "below"))


def test_a_full_disk_leaves_no_half_line_and_names_the_file(tmp_path,
                                                            monkeypatch):
  import errno  # pylint: disable=g-import-not-at-top
  writer = records.ResultsWriter(str(tmp_path / "out"))
  writer.write(triehh_record())
  before = (tmp_path / "out" / "results.jsonl").read_bytes()
  real_write = os.write
  calls = []

  def half_then_full(fd, data):
    calls.append(len(data))
    if len(calls) == 1:  # part of the line reaches the file
      return real_write(fd, bytes(data[:10]))
    raise OSError(errno.ENOSPC, "No space left on device")

  monkeypatch.setattr(records.os, "write", half_then_full)
  with pytest.raises(OSError, match="No space left on device.*results.jsonl"):
    writer.write(sfp_record())
  monkeypatch.undo()
  assert (tmp_path / "out" / "results.jsonl").read_bytes() == before
  assert writer.written == 1
  log = []
  records.ResultsWriter(str(tmp_path / "out"), log=log.append).write(
      sfp_record())
  assert log == []  # nothing taken for a killed writer
  got, bad = records.read(writer.path)
  assert got == [triehh_record(), sfp_record()] and bad == []


_NEIGHBOURS = ("adjacency", "n_source", "population_size")


def test_the_neighbour_fields_round_trip():
  record = triehh_record(adjacency="ADD_OR_REMOVE_ONE, REPLACE_SPECIAL",
                         n_source="declared", population_size=5000)
  raw = json.loads(record.to_json())
  assert [raw["adjacency"], raw["n_source"],
          raw["params"]["population_size"]] == [
              "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL", "declared", 5000]
  assert records.RunRecord.from_json(record.to_json()) == record
  for other in (sfp_record(), iblt_record()):
    raw = json.loads(other.to_json())
    assert raw["adjacency"] is None and raw["n_source"] is None
    assert "population_size" not in raw["params"]


def test_a_record_written_before_the_neighbour_fields_reads_as_not_recorded():
  old = flat(triehh_record, 2)
  for name in _NEIGHBOURS:
    del old[name]
  record = records.RunRecord.from_dict(old)
  assert [getattr(record, name) for name in _NEIGHBOURS] == [None] * 3
  assert record.schema_version == records.SCHEMA_VERSION == 3
  assert record.config_key == triehh_record().config_key
  again = json.loads(record.to_json())  # null: not recorded
  assert [again["adjacency"], again["n_source"],
          again["params"]["population_size"]] == [None] * 3
  assert records.RunRecord.from_dict(again) == record


def test_completed_runs_read_only_what_was_appended(tmp_path):
  path = str(tmp_path / "results.jsonl")
  recorded = records.CompletedRuns(path)
  assert recorded.update() == set()  # no file yet
  with records.ResultsWriter(str(tmp_path)) as writer:
    writer.write(triehh_record(seed=1))
  key = triehh_record().config_key
  assert recorded.update() == {(key, 1)}
  with open(path, "ab") as f:  # a foreign line, then an unfinished record
    f.write(b'{"not": "a record"}\n')
    f.write(triehh_record(seed=2).to_json().encode()[:40])
  assert recorded.update() == {(key, 1)}
  with open(path, "ab") as f:  # the unfinished line is finished
    f.write(triehh_record(seed=2).to_json().encode()[40:] + b"\n")
  assert recorded.update() == {(key, 1), (key, 2)}
  assert recorded.update() == records.completed(path)


@pytest.mark.parametrize("change", ["replaced", "cut", "removed"])
def test_completed_runs_read_a_changed_file_again(tmp_path, change):
  path = str(tmp_path / "results.jsonl")
  with records.ResultsWriter(str(tmp_path)) as writer:
    for seed in (1, 2):
      writer.write(triehh_record(seed=seed))
  recorded = records.CompletedRuns(path)
  assert len(recorded.update()) == 2
  if change == "replaced":  # another file, longer than what was read
    other = str(tmp_path / "other.jsonl")
    with open(other, "w", encoding="utf-8") as f:
      for seed in (3, 4, 5):
        f.write(triehh_record(seed=seed).to_json() + "\n")
    os.replace(other, path)
  elif change == "cut":
    with open(path, "r+b") as f:
      f.truncate(len(triehh_record(seed=1).to_json()) + 1)
  else:
    os.remove(path)
  assert recorded.update() == records.completed(path)


@pytest.mark.parametrize("field, value", [
    ("seed", "zero"), ("seed", -5), ("seed", 1e300), ("seed", True),
    ("run", -1), ("run", 2.5), ("config_key", 7)])
def test_a_record_whose_run_or_seed_is_not_a_whole_number_is_refused(field,
                                                                     value):
  # Such lines were counted as runs by summarize while a resumed sweep ran
  # their seeds again: both now skip them, naming the field.
  raw = json.loads(triehh_record(config={"x": 1}).to_json())
  raw[field] = value
  with pytest.raises(records.RecordError, match=field):
    records.RunRecord.from_dict(raw)


def test_a_results_file_that_is_a_directory_or_device_is_named(tmp_path):
  # Both said "results file not found", one with results.jsonl twice.
  (tmp_path / "out" / "results.jsonl").mkdir(parents=True)
  with pytest.raises(IsADirectoryError, match=(
      f"{tmp_path / 'out' / 'results.jsonl'} is a directory, not a results "
      "file")):
    records.results_paths([], [str(tmp_path / "out")])



def test_a_results_file_that_is_a_pipe_or_a_device_is_named_as_such(
    tmp_path):
  # Both said "not a regular file (a device or a pipe)", whichever it was.
  fifo = tmp_path / "fifo.jsonl"
  os.mkfifo(fifo)
  (tmp_path / "to_fifo.jsonl").symlink_to(fifo)
  for given in (fifo, tmp_path / "to_fifo.jsonl"):
    with pytest.raises(ValueError, match=(
        f"^{given} is a named pipe \\(FIFO\\), not a results file$")):
      records.results_paths([str(given)], [])
  assert records.file_kind(str(fifo)) == "a named pipe (FIFO)"
  assert records.file_kind(str(tmp_path / "absent")) is None
  (tmp_path / "to_zero.jsonl").symlink_to("/dev/zero")
  if stat.S_ISCHR(os.stat("/dev/zero").st_mode):
    with pytest.raises(ValueError, match="to_zero.jsonl is a character "
                       "device, not a results file"):
      records.results_paths([str(tmp_path / "to_zero.jsonl")], [])


@pytest.mark.parametrize("last_unfinished", [False, True])
def test_a_line_longer_than_a_record_is_skipped_unread(tmp_path, monkeypatch,
                                                       last_unfinished):
  # A 1.3 GB line was read whole: 3.9 GB of memory to resume a sweep.
  monkeypatch.setattr(records, "MAX_RECORD_BYTES", 4000)
  first, second = (triehh_record(config={"x": i}, seed=i) for i in (1, 2))
  path = tmp_path / "results.jsonl"
  text = (first.to_json() + "\n" + "x" * 10_000 + "\n" + second.to_json()
          + "\n")
  if last_unfinished:
    text += "y" * 10_000
  path.write_text(text)
  got, bad = records.read(str(path))
  assert [r.seed for r in got] == [1, 2]
  assert "more than 4,000 bytes" in bad[0].message and bad[0].line == 2
  assert bad[-1].unfinished == last_unfinished
  done = records.CompletedRuns(str(path)).update()
  assert done == {(first.config_key, 1), (second.config_key, 2)}


def _standard_library_line(record):
  return json.dumps(record.to_dict(), sort_keys=True, allow_nan=False)


def test_a_line_reads_back_as_the_standard_librarys_line():
  # orjson writes the line; it must read back as the encoder of to_dict.
  import numpy as np  # pylint: disable=g-import-not-at-top
  record = triehh_record(
      discovered=["the", "über", "\U0001F600"], reported_counts=[40, 20, 3],
      metrics={"recall@10": np.float64(0.2), "f1@10": math.nan,
               "precision": math.inf, "num_discovered": np.int64(3)},
      seconds=1e-05, gamma=1e16, votes_per_round=[1, 2],
      protected_counts={"über": [3.5, -math.inf, 1e300]},
      config={"algorithm": "triehh", "epsilon": 3.0, "delta": 1e-05,
              "data": {"dataset": "default", "num_users": 1000}})
  line = record.to_json()
  assert json.loads(line) == json.loads(_standard_library_line(record))
  assert list(json.loads(line)) == sorted(json.loads(line))
  finite = triehh_record(discovered=["über"], reported_counts=[np.int64(4)],
                         seconds=1e-05)
  assert records.RunRecord.from_json(finite.to_json()) == finite


@pytest.mark.parametrize("changes", [
    {"config": {"algorithm": "triehh", "data": {1: "a key not a string"}}},
    {"config": {"algorithm": "triehh", "big": 2**70}},
    {"discovered": ["the", "\ud800"], "reported_counts": [40, 1]},
])
def test_what_orjson_refuses_is_written_by_the_standard_library(changes):
  record = triehh_record(**changes)
  assert record.to_json() == _standard_library_line(record)
  assert json.loads(record.to_json())["config_key"] == record.config_key


def test_a_line_nested_too_deeply_is_a_bad_line(tmp_path):
  # '[' * 100000 raised RecursionError out of read(); a config nested
  # deeper than its key can be computed did the same out of from_dict.
  raw = json.loads(triehh_record().to_json())
  raw["config_key"] = ""
  deep = json.dumps(raw).replace('"config": {',
                                 '"config": {"x": ' + "[" * 600 + "]" * 600
                                 + ", ", 1)
  path = lines_file(tmp_path / "results.jsonl", [
      "[" * 100_000, deep, triehh_record().to_json()])
  got, bad = records.read(path)
  assert got == [triehh_record()]
  assert [(b.line, b.kind) for b in bad] == [
      (1, "not JSON"), (2, "run record with missing or bad fields")]
  assert "nested too deeply" in bad[0].message
  assert bad[1].message.startswith("config: nested too deeply")
  assert records.CompletedRuns(path).update() == {
      (triehh_record().config_key, 3)}


@pytest.mark.parametrize("call", [
    lambda path: records.read(path),
    lambda path: records.read([path]),
    lambda path: records.completed(path),
    lambda path: records.CompletedRuns(path),
    lambda path: records.repair(path),
    lambda path: records.ResultsWriter(path),
    lambda path: records.write_lock(path).__enter__(),
])
@pytest.mark.parametrize("given", [b"out/results.jsonl", 5, 2.5])
def test_a_path_that_is_not_a_str_or_path_like_is_refused(call, given):
  # Bytes were iterated, each byte opened as a file descriptor (b"o" is
  # descriptor 111); read(5) failed iterating the int.
  with pytest.raises(TypeError, match=r"^(path|paths|paths \(each\)|"
                     r"output_dir) must be a path \(a str or os.PathLike\)"):
    call(given)


def test_read_refuses_what_is_neither_a_path_nor_paths():
  with pytest.raises(TypeError, match="^paths must be a path .* or an "
                     "iterable of them, got NoneType"):
    records.read(None)


def test_paths_may_be_path_like_and_are_named_as_str(tmp_path):
  path = pathlib.Path(lines_file(tmp_path / "results.jsonl",
                                 [triehh_record().to_json(), "{"]))
  got, bad = records.read(path)
  assert got == [triehh_record()] and bad[0].path == str(path)
  assert records.read(p for p in [path]) == (got, bad)
  assert records.completed(path) == {(triehh_record().config_key, 3)}
  assert records.CompletedRuns(path).path == str(path)
  writer = records.ResultsWriter(tmp_path / "out")
  assert writer.path == str(tmp_path / "out" / "results.jsonl")
  assert records.ResultsWriter(None).path is None
  assert records.ResultsWriter("").path is None


@pytest.mark.parametrize("field", ["epsilon", "n_users", "theta", "seconds",
                                   "target_delta"])
def test_an_int_beyond_a_floats_range_is_a_bad_field(field, tmp_path):
  # epsilon=10**400 raised OverflowError ("int too large to convert to
  # float") out of from_dict and read.
  raw = put(json.loads(triehh_record().to_json()), field, 10**400)
  with pytest.raises(records.RecordError,
                     match=f"^{where(field)}: must be .*within a float's "
                     "range"):
    records.RunRecord.from_dict(raw)
  raw = json.loads(triehh_record().to_json())
  raw["metrics"]["recall@10"] = 10**400
  with pytest.raises(records.RecordError, match=r"metrics\['recall@10'\]"):
    records.RunRecord.from_dict(raw)
  path = lines_file(tmp_path / "r.jsonl", [json.dumps(raw)])
  assert [b.kind for b in records.read(path)[1]] == [
      "run record with missing or bad fields"]


_BAD_VALUES = [
    ("has_guarantee", "yes"), ("has_guarantee", None), ("has_guarantee", 1),
    ("delta", 1.0), ("delta", 1.5), ("delta", -1e-6),
    ("delta", math.nan), ("epsilon", -0.5), ("epsilon", math.inf),
    ("epsilon", math.nan), ("n_users", 0), ("n_users", -3),
    ("n_users", math.nan), ("theta", 0), ("theta", 2.5),
    ("theta", math.inf), ("batch_size", 0), ("batch_size", -110),
    ("levels", 0), ("rounds", -1), ("rounds", "2"), ("seconds", math.nan),
    ("seconds", -0.01), ("seconds", None), ("seconds", "0.1"),
    ("adjacency", 7), ("adjacency", ["ADD_OR_REMOVE_ONE"]),
    ("adjacency", "ADD_ONE"), ("adjacency", "ADD_OR_REMOVE_ONE,"),
    ("adjacency", "add_or_remove_one"), ("engine", 3), ("engine", ["fast"]),
]


def test_a_pure_guarantee_of_delta_zero_reads_back():
  # Discrete Laplace noise is pure DP: delta 0 is a guarantee, not a gap.
  raw = put(json.loads(triehh_record().to_json()), "delta", 0.0)
  assert records.RunRecord.from_dict(raw).delta == 0.0


@pytest.mark.parametrize("field, value", _BAD_VALUES)
def test_a_value_a_field_cannot_hold_is_a_bad_line(field, value, tmp_path):
  raw = put(json.loads(triehh_record().to_json()), field, value)
  with pytest.raises(records.RecordError, match=f"^{where(field)}: must be"):
    records.RunRecord.from_dict(raw)
  path = lines_file(tmp_path / "results.jsonl", [json.dumps(raw)])
  got, bad = records.read(path)
  assert got == [] and bad[0].kind == "run record with missing or bad fields"
  assert bad[0].message.startswith(f"{where(field)}: must be")


@pytest.mark.parametrize("name, value, high", [
    ("f1@10", 1.5, "1"), ("precision@50", -0.1, "1"),
    ("recall@10", math.nan, "1"), ("f1_paper@100", math.inf, "1"),
    ("precision", 2, "1"), ("count_error@10", 1.01, "1"),
    ("count_coverage@10", -1, "1"), ("num_discovered", -1.0, "inf"),
    ("num_discovered", math.inf, "inf")])
def test_a_metric_out_of_its_range_is_a_bad_line(name, value, high,
                                                  tmp_path):
  # The kind summarize counts and warns of (reports.summary).
  raw = json.loads(triehh_record().to_json())
  raw["metrics"][name] = value
  path = lines_file(tmp_path / "results.jsonl", [json.dumps(raw)])
  got, bad = records.read(path)
  assert got == [] and [(b.kind, b.message) for b in bad] == [(
      "metric not finite or out of range",
      f"metrics[{name!r}]: {value!r} is not in [0, {high}]")]


def test_discovered_words_are_each_held_once():
  raw = json.loads(triehh_record().to_json())
  raw["discovered"] = ["the", "of", "the"]
  with pytest.raises(records.RecordError, match="^discovered: must hold "
                     "each word once, got 'the' more than once"):
    records.RunRecord.from_dict(raw)


@pytest.mark.parametrize("changes", [
    # What the project writes, at the edges of the checks above.
    {"has_guarantee": False, "epsilon": None, "delta": None,
     "adjacency": ""},
    {"has_guarantee": False, "epsilon": math.inf, "delta": 1.0},
    {"epsilon": 0.0, "rounds": 0, "seconds": 0.0},
    {"adjacency": "ADD_OR_REMOVE_ONE, REPLACE_SPECIAL", "engine": "tff"},
    {"adjacency": "REPLACE_ONE,REPLACE_SPECIAL", "rounds": None},
    {"adjacency": None, "engine": None, "discovered": [],
     "reported_counts": [],
     "metrics": {"recall@10": 0.0, "f1@10": 1.0, "num_discovered": 0.0,
                 "count_error@10": 1.0, "count_coverage@10": 0.0,
                 "any_other": -3.5}},
])
def test_records_at_the_edges_of_the_checks_are_read(changes):
  raw = json.loads(triehh_record().to_json())
  raw.update(changes)
  record = records.RunRecord.from_dict(raw)
  assert records.RunRecord.from_json(record.to_json()) == record
  raw["params"]["theta"] = 12.0  # a whole number written as a float
  assert records.RunRecord.from_dict(raw).params.theta == 12.0


def test_records_of_the_other_algorithms_are_read_with_their_nulls():
  # iblt: no epsilon; partition_selection: no counts; sfp at inf: null.
  for record in (iblt_record(), partition_selection_record(),
                 sfp_record(epsilon=math.inf, delta=1e-6),
                 iblt_record(has_guarantee=True, epsilon=-1.0, delta=2.0)):
    assert records.RunRecord.from_json(record.to_json()) == record


def test_a_byte_order_mark_before_the_first_line_is_not_part_of_it(
    tmp_path):
  # The first record of a file saved by an editor with a BOM was "not
  # JSON": left out by the reports, and run again by a resumed sweep.
  first, second = triehh_record(seed=1), triehh_record(seed=2)
  path = tmp_path / "results.jsonl"
  path.write_bytes(records.UTF8_BOM + (first.to_json() + "\n"
                                       + second.to_json() + "\n").encode())
  assert records.read(str(path)) == ([first, second], [])
  assert records.read_numbered(str(path)) == ([(1, first), (2, second)], [])
  assert records.completed(str(path)) == {(first.config_key, 1),
                                          (first.config_key, 2)}
  assert records.CompletedRuns(str(path)).update() == records.completed(
      str(path))
  # A mark alone on the first line leaves a blank line; a mark elsewhere
  # is no record.
  path.write_bytes(records.UTF8_BOM + b"\n" + first.to_json().encode()
                   + b"\n" + records.UTF8_BOM + second.to_json().encode()
                   + b"\n")
  got, bad = records.read_numbered(str(path))
  assert got == [(2, first)] and [(b.line, b.kind) for b in bad] == [
      (3, "not JSON")]
  assert records.CompletedRuns(str(path)).update() == {(first.config_key,
                                                         1)}


def _nested(levels):
  value = 1
  for _ in range(levels):
    value = {"x": value}
  return value


@pytest.mark.parametrize("field", ["config", "protected_counts",
                                   "votes_per_round"])
def test_a_field_nested_too_deeply_is_a_bad_line(field, tmp_path):
  # A config 500 levels deep (with its config_key given, so none was
  # computed) was read, then raised RecursionError out of to_dict(): in
  # experiments.summarize, out of a configuration's label.
  raw = put(json.loads(triehh_record().to_json()), field,
            _nested(500) if field != "votes_per_round" else [_nested(40)])
  path = lines_file(tmp_path / "results.jsonl",
                    [json.dumps(raw), triehh_record(seed=4).to_json()])
  got, bad = records.read(path)
  assert got == [triehh_record(seed=4)]
  assert [(b.line, b.kind) for b in bad] == [
      (1, "run record with missing or bad fields")]
  assert bad[0].message == (f"{where(field)}: nested too deeply (more "
                            f"than {records.schema.MAX_NESTING} levels) to "
                            f"be a run's {field}")
  # As deep as allowed: read, and written back.
  put(raw, field, _nested(records.schema.MAX_NESTING))
  if field == "votes_per_round":
    put(raw, field, [_nested(records.schema.MAX_NESTING - 1)])
  record = records.RunRecord.from_dict(raw)
  assert records.RunRecord.from_json(record.to_json()) == record


def test_append_line_sets_a_torn_line_aside_and_json_lines_skips_one(
    tmp_path):
  path = tmp_path / "results.jsonl"
  path.write_text('{"seed": 0}\n{"seed": 1, "wor')
  assert records.json_lines(path) == [{"seed": 0}]
  said = []
  records.append_line(path, '{"seed": 2}', log=said.append)
  assert path.read_text() == '{"seed": 0}\n{"seed": 2}\n'
  assert records.json_lines(path) == [{"seed": 0}, {"seed": 2}]
  side = [p for p in tmp_path.iterdir() if ".partial-" in p.name]
  assert [p.read_text() for p in side] == ['{"seed": 1, "wor']
  assert said == [f"warning: {path} ended in an unfinished line (a writer "
                  f"was killed mid-line); moved it to {side[0]}"]
  with pytest.raises(ValueError, match="must be one line"):
    records.append_line(path, '{"a": 1}\n{"b": 2}')
  assert records.json_lines(tmp_path / "absent.jsonl") == []


def test_json_lines_names_the_file_and_line_of_a_bad_one(tmp_path):
  path = tmp_path / "results.jsonl"
  path.write_text('{"seed": 0}\n\nnot json\n')
  with pytest.raises(ValueError, match=rf"^{path}:3: not a record \("):
    records.json_lines(path)


# ---- a run without a seed: fresh entropy, recorded nowhere -----------------


def test_a_run_without_a_seed_is_recorded_as_fresh_entropy():
  assert triehh_record().randomness == "seed"
  fresh = triehh_record(seed=None)
  assert fresh.randomness == "fresh"
  raw = json.loads(fresh.to_json())
  assert (raw["seed"], raw["randomness"]) == (None, "fresh")
  assert records.RunRecord.from_json(fresh.to_json()) == fresh
  assert fresh.config_key == triehh_record().config_key  # not in the config


@pytest.mark.parametrize("seed, randomness, said", [
    (None, None, 'seed: must be a whole number >= 0 (or null, with '
     'randomness "fresh"), got None'),
    (3, "fresh", 'seed: must be null where randomness is "fresh"'),
    (None, "seed", "seed: must be a whole number >= 0"),
    (-1, "seed", "seed: must be a whole number >= 0"),
    (3, "secret", 'randomness: must be "seed", "fresh" or null'),
])
def test_a_seed_and_its_randomness_must_agree(seed, randomness, said):
  raw = json.loads(triehh_record().to_json())
  raw["seed"] = seed
  if randomness is None:
    del raw["randomness"]
  else:
    raw["randomness"] = randomness
  with pytest.raises(records.RecordError, match=re.escape(said)):
    records.RunRecord.from_dict(raw)


@pytest.mark.parametrize("version", [1, 2])
def test_a_record_written_before_randomness_reads_as_seeded(version):
  raw = flat(triehh_record, version)
  del raw["randomness"]
  got = records.RunRecord.from_dict(raw)
  assert (got.seed, got.randomness) == (3, "seed")
