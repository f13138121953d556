"""Tests of reports.summary on hand-made run records."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from reports import summary as analysis
from triehh.runs import records


def run(seed, recall, precision=1.0, algorithm="triehh", **fields):
  """A record of the current layout, as JSON; its config is its fields but
  the seed and the results."""
  base = {"schema_version": 2, "algorithm": algorithm, "engine": "fast",
          "dataset": "d", "setting": "single", "n_users": 1000, "theta": 10,
          "batch_size": 100, "levels": 11, "max_length": 10, "seed": seed,
          "run": 0, "epsilon": 1.0, "delta": 1e-6, "target_epsilon": 1.0,
          "target_delta": 1e-6, "discovered": ["a"],
          "reported_counts": [5.0], "seconds": 0.1,
          "metrics": {"recall@10": recall, "precision": precision,
                      "num_discovered": 3.0}}
  if algorithm == "sfp":
    base.update(engine=None, theta=None, batch_size=None, levels=None,
                max_length=None, top_t=20)
  base.update(fields)
  base.setdefault("config", {k: v for k, v in base.items() if k not in (
      "seed", "discovered", "reported_counts", "seconds", "metrics")})
  return base


def record(*args, **fields):
  return records.RunRecord.from_dict(run(*args, **fields))


def write(path, rows):
  path.write_text("".join(
      (r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
  return str(path)


def test_duplicates_share_config_key_and_seed(tmp_path):
  rows = [run(0, 0.5), run(1, 0.7), run(0, 0.5), run(0, 0.9, n_users=2000)]
  got, _ = analysis.load_runs([write(tmp_path / "r.jsonl", rows)])
  kept, dropped = analysis.deduplicate(got)
  assert dropped == 1
  assert [(r.seed, r.n_users) for r in kept] == [
      (0, 1000), (1, 1000), (0, 2000)]
  assert kept[0] is got[0]
  # A record that carries its config is keyed by it.
  assert record(0, 0.5, config={"x": 1}).config_key == records.config_key(
      {"x": 1})


def test_runs_without_guarantee_pool_and_earlier_layouts_are_skipped(
    tmp_path):
  sfp = run(0, 0.1, algorithm="sfp")
  # Before schema_version: SFP's T as "threshold", epsilon as a string.
  old_sfp = dict(sfp, threshold=20)
  for key in ("schema_version", "top_t", "config"):
    old_sfp.pop(key)
  old_theta = run(3, 0.2, epsilon="inf", target_epsilon=None)
  del old_theta["schema_version"]
  no_guarantee = [run(seed, 0.2, epsilon=None, has_guarantee=False,
                      target_epsilon=None) for seed in (1, 2)]
  path = write(tmp_path / "r.jsonl", [old_sfp, sfp, *no_guarantee, old_theta,
                                      dict(sfp, schema_version=4), "{torn"])
  got, reports = analysis.load_runs([path])
  assert reports[0].records == 3 and reports[0].num_skipped == 4
  assert reports[0].skipped == {
      "run record without schema_version (an earlier layout, not read)": 2,
      "run record of schema_version 4 (only 1, 2 and 3 are read)": 1,
      "not JSON": 1}
  assert reports[0].skipped_lines == [1, 5, 6, 7]
  assert reports[0].summary() == (
      f"{path}: 3 run records, 4 lines skipped (1 not JSON, 1 run record of "
      "schema_version 4 (only 1, 2 and 3 are read), 2 run record without "
      "schema_version (an earlier layout, not read); line 1, 5, 6, 7)")
  assert str(reports[0].bad[3]) == (
      f"{path}:7: not JSON (Expecting property name enclosed in double "
      "quotes: line 1 column 2 (char 1))")
  assert got[1].epsilon is None and not got[1].has_guarantee
  assert [analysis.config_of(r)[5] for r in got] == [1.0, math.inf,
                                                     math.inf]
  groups = analysis.group_runs(got)
  # The two runs without guarantee differ only in seed: one configuration.
  assert sorted(len(g.records) for g in groups) == [1, 2]
  assert any("T=20" in g.label for g in groups)


def test_count_shares_are_their_own_groups_with_count_metrics_clipped():
  def counted(seed, share, error):
    return record(seed, 0.5, count_share=share, count_sample_rate=1.0,
                  metrics={"recall@10": 0.5, "count_error@10": error,
                           "count_coverage@10": 1.0})
  rows = [counted(0, 0.1, 0.01), counted(1, 0.1, 0.03),
          counted(0, 0.25, 0.02), record(0, 0.5)]
  groups = analysis.group_runs(rows)
  assert sorted((g.get("count_share") or 0, len(g.records))
                for g in groups) == [(0, 1), (0.1, 2), (0.25, 1)]
  table = analysis.metric_table(groups, 0.95)
  error = table[(table["metric"] == "count_error")
                & (table["count_share"] == 0.1)].iloc[0]
  assert (error["k"], error["runs"], error["mean"]) == (10, 2,
                                                        pytest.approx(0.02))
  assert error["clipped"] and error["ci_low"] == 0.0  # 0.02 - 0.127 < 0


def test_metric_table_uses_the_student_t_interval_clipped_for_proportions():
  recalls = [0.9, 1.0, 1.0]
  precisions = [0.2, 0.4, 0.9]
  groups = analysis.group_runs(
      [record(s, r, p) for s, (r, p) in enumerate(zip(recalls, precisions))])
  table = analysis.metric_table(groups, 0.95)
  for name, values in (("recall", recalls), ("precision", precisions)):
    row = table[table["metric"] == name].iloc[0]
    x = np.array(values)
    low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(),
                                 scale=stats.sem(x))
    assert row["mean"] == pytest.approx(x.mean())
    assert row["half_width"] == pytest.approx((high - low) / 2)
    assert row["ci_low"] == pytest.approx(max(low, 0.0))
    assert row["ci_high"] == pytest.approx(min(high, 1.0))
    assert row["clipped"] == (low < 0 or high > 1)
  assert table[table["metric"] == "recall"]["clipped"].item()
  # num_discovered is a count: never clipped.
  row = table[table["metric"] == "num_discovered"].iloc[0]
  assert not row["clipped"] and row["ci_low"] == row["ci_high"] == 3.0
  assert list(table["metric"]) == ["recall", "precision", "num_discovered"]


def test_results_paths_and_bins(tmp_path):
  # Which files: the one reader's (triehh.runs.records, tested there).
  assert analysis.results_paths is records.results_paths
  with pytest.raises(FileNotFoundError, match="results file not found"):
    analysis.results_paths([str(tmp_path / "x.jsonl")], [])
  edges = analysis.frequency_bins(np.array([1e-4, 0.0, 1e-2]), 2)
  np.testing.assert_allclose(edges, [1e-4, 1e-3, 1e-2])
  with pytest.raises(ValueError, match="num_bins"):
    analysis.frequency_bins(np.array([0.1]), 0)


def iblt_run(seed, recall, k=12, capacity=40, config_capacity=None,
             matched_epsilon=4.0, batch_size=100):
  return {"schema_version": 1, "algorithm": "iblt", "dataset": "d",
          "setting": "single", "n_users": 1000, "seed": seed, "run": 0,
          "counts": [7], "seconds": 0.2, "target_delta": None,
          "epsilon": None, "delta": None, "has_guarantee": False,
          "target_epsilon": None,
          "matched_epsilon": matched_epsilon, "matched_delta": 1e-6,
          "k_anonymity": k, "capacity": capacity, "batch_size": batch_size,
          "max_length": 10, "string_max_bytes": 10, "round_draw": "sampled",
          "repetitions": 3, "discovered": ["a"],
          "config": {"algorithm": "iblt", "capacity": config_capacity,
                     "k_anonymity": k, "epsilon": matched_epsilon},
          "metrics": {"recall@10": recall, "precision": 1.0}}


def test_iblt_runs_are_their_own_rows_without_epsilon(tmp_path):
  rows = [run(0, 0.5), run(0, 0.9, algorithm="sfp"),
          # One cell whose capacity, left to each round, differs by seed.
          iblt_run(0, 0.2, capacity=40), iblt_run(1, 0.4, capacity=44),
          iblt_run(0, 0.6, k=5), iblt_run(0, 0.8, matched_epsilon=1.0,
                                          batch_size=50)]
  got, reports = analysis.load_runs([write(tmp_path / "r.jsonl", rows)])
  assert reports[0].records == 6 and reports[0].num_skipped == 0
  groups = analysis.group_runs(got)
  assert [g.get("algorithm") for g in groups] == [
      "triehh", "sfp", "iblt", "iblt", "iblt"]
  iblt_groups = groups[2:]
  assert all(g.get("epsilon") is None and g.get("delta") is None
             for g in iblt_groups)
  pooled = [g for g in iblt_groups if len(g.records) == 2]
  assert len(pooled) == 1 and pooled[0].get("iblt_capacity") == "auto"
  assert pooled[0].label == (
      "iblt (12-anonymity, not DP), d single, n=1,000, m=100 (TrieHH's at "
      "epsilon=4, delta=1e-06)")
  assert "not DP" in iblt_groups[0].label
  table = analysis.metric_table(groups, 0.95)
  recall = table[(table["metric"] == "recall") & (table["algorithm"] ==
                                                  "iblt")]
  assert sorted(recall["mean"]) == pytest.approx([0.3, 0.6, 0.8])
  assert set(recall["k_anonymity"]) == {5, 12}


def test_runs_are_grouped_as_run_records_by_field():
  runs = [record(0, 0.5), record(1, 0.7),
          record(0, 0.4, epsilon=None, has_guarantee=False,
                 target_epsilon=None),
          record(2, 0.6, top_t=20, algorithm="sfp", epsilon_local=4.5),
          record(3, 0.8, top_t=80, algorithm="sfp", epsilon_local=4.5)]
  assert all(isinstance(r, records.RunRecord) for r in runs)
  groups = analysis.group_runs(runs)
  assert [(g.get("algorithm"), g.get("epsilon"), g.get("top_t"),
           len(g.records)) for g in groups] == [
               ("triehh", 1.0, None, 2), ("triehh", math.inf, None, 1),
               ("sfp", 1.0, 20, 1), ("sfp", 1.0, 80, 1)]
  assert groups[0].records == runs[:2]
  assert groups[1].label.startswith("triehh (fast engine), d single, "
                                    "n=1,000, epsilon=inf")
  assert groups[2].label.endswith("T=20, local epsilon=4.500")
  # The seed is not part of the configuration, and a record read back from
  # its line has the same one.
  assert analysis.config_of(runs[0]) == analysis.config_of(
      records.RunRecord.from_json(runs[1].to_json()))
  table = analysis.metric_table(groups, 0.95)
  recall = table[table["metric"] == "recall"]
  assert list(recall["runs"]) == [2, 1, 1, 1]
  assert list(recall["mean"]) == pytest.approx([0.6, 0.4, 0.6, 0.8])


def test_records_with_metrics_out_of_range_are_skipped_with_their_line(
    tmp_path):
  # Python's json writes NaN and Infinity; a recall of 1e308 or a negative
  # count is no result either. Each is left out, counted, with its line.
  rows = [run(0, 0.5), "", run(1, 1e308), "{torn", run(2, math.nan),
          run(3, 0.7), run(4, 0.6, precision=-0.1),
          dict(run(5, 0.4), metrics={"num_discovered": -1.0}),
          dict(run(6, 0.4), metrics={"num_discovered": 1e6,
                                     "f1_paper@50": 1.5}),
          run(7, 1.0, precision=0.0)]
  path = write(tmp_path / "r.jsonl", rows)
  got, reports = analysis.load_runs([path])
  assert [r.seed for r in got] == [0, 3, 7]
  report = reports[0]
  assert report.records == 3
  assert report.skipped_lines == [3, 4, 5, 7, 8, 9]
  assert report.skipped == {"not JSON": 1, analysis.OUT_OF_RANGE: 5}
  messages = [str(b) for b in report.bad if b.kind == analysis.OUT_OF_RANGE]
  assert messages == [
      f"{path}:3: metrics['recall@10']: 1e+308 is not in [0, 1]",
      f"{path}:5: metrics['recall@10']: nan is not in [0, 1]",
      f"{path}:7: metrics['precision']: -0.1 is not in [0, 1]",
      f"{path}:8: metrics['num_discovered']: -1.0 is not in [0, inf]",
      f"{path}:9: metrics['f1_paper@50']: 1.5 is not in [0, 1]"]
  table = analysis.metric_table(analysis.group_runs(got), 0.95)
  recall = table[table["metric"] == "recall"]
  assert recall["runs"].tolist() == [3]
  assert recall["mean"].iloc[0] == pytest.approx((0.5 + 0.7 + 1.0) / 3)


def test_a_metric_k_beyond_64_bits_is_skipped_with_its_line(tmp_path):
  # recall@99999999999999999999999 raised OverflowError out of the metric
  # table (pandas); a K of other digits ("²") a ValueError of int().
  huge = "recall@99999999999999999999999"
  rows = [run(0, 0.5), dict(run(1, 0.4), metrics={huge: 0.4}),
          dict(run(2, 0.4), metrics={"recall@\u00b2": 0.4}),
          dict(run(3, 0.6), metrics={f"recall@{analysis.MAX_K}": 0.6})]
  path = tmp_path / "r.jsonl"
  # A byte order mark first: the line numbers stay the file's.
  path.write_bytes(records.UTF8_BOM + "".join(
      json.dumps(r) + "\n" for r in rows).encode())
  got, reports = analysis.load_runs([str(path)])
  assert [r.seed for r in got] == [0, 3]
  assert reports[0].skipped == {analysis.OUT_OF_RANGE: 2}
  assert [str(b) for b in reports[0].bad] == [
      f"{path}:2: metrics[{huge!r}]: K must be a whole number (digits 0-9) "
      f"of at most {analysis.MAX_K:,}",
      f"{path}:3: metrics['recall@\u00b2']: K must be a whole number "
      f"(digits 0-9) of at most {analysis.MAX_K:,}"]
  table = analysis.metric_table(analysis.group_runs(got), 0.95)
  assert sorted(table.loc[table["metric"] == "recall", "k"]) == [
      10, analysis.MAX_K]


def test_a_record_with_a_field_of_the_wrong_type_is_skipped_naming_it(
    tmp_path):
  # "rounds": "x" stopped the cost figure with "could not convert string
  # to float: 'x'".
  path = write(tmp_path / "r.jsonl", [run(0, 0.5, rounds="x"), run(1, 0.5)])
  got, reports = analysis.load_runs([path])
  assert [r.seed for r in got] == [1]
  assert [str(b) for b in reports[0].bad] == [
      f"{path}:1: rounds: must be a number >= 0, got 'x'"]


def test_at_most_max_bins_frequency_bins():
  # 10^8 bins ran for minutes in gigabytes, printing nothing.
  frequencies = np.array([1e-4, 1e-2])
  assert len(analysis.frequency_bins(frequencies, analysis.MAX_BINS)) == (
      analysis.MAX_BINS + 1)
  with pytest.raises(ValueError, match=(
      "^--num_bins must be from 1 to 10,000, got 10001$")):
    analysis.frequency_bins(frequencies, analysis.MAX_BINS + 1)


def test_runs_without_a_seed_are_each_their_own_run(tmp_path):
  # Fresh entropy keeps no seed: two runs of one configuration are two
  # runs; only the same line appended twice is dropped.
  fresh = [run(None, recall, randomness="fresh", config={"x": 1})
           for recall in (0.5, 0.7)]
  got, _ = analysis.load_runs([write(tmp_path / "r.jsonl",
                                     fresh + fresh[:1])])
  kept, dropped = analysis.deduplicate(got)
  assert dropped == 1
  assert [r.metrics["recall@10"] for r in kept] == [0.5, 0.7]
  assert {(r.seed, r.randomness) for r in kept} == {(None, "fresh")}


def partition_selection(seed, recall, precision, **metrics):
  """A partition-selection record with its metrics as given."""
  return record(seed, recall, algorithm="partition_selection", engine=None,
                theta=None, batch_size=None, levels=None, max_length=None,
                strategy="truncated_geometric", max_partitions_contributed=1,
                metrics={"recall@10": recall, "precision": precision,
                         "num_discovered": 3.0, **metrics})


def test_an_unranked_set_has_no_top_k_precision_in_the_table():
  # Records written before partition selection dropped them still hold
  # the precision@K of an alphabetical cut: the table leaves it out.
  old = [partition_selection(seed, 0.5, 1.0, **{"precision@10": 0.0,
                                                "f1@10": 0.0,
                                                "f1_paper@10": 2 / 3})
         for seed in (0, 1)]
  ranked = [record(seed, 0.5, metrics={"precision@10": 0.8,
                                       "recall@10": 0.5, "precision": 1.0})
            for seed in (0, 1)]
  groups = analysis.group_runs(old + ranked)
  assert {g.get("algorithm"): analysis.ranked(g) for g in groups} == {
      "partition_selection": False, "triehh": True}
  table = analysis.metric_table(groups, 0.95)
  by_algorithm = {g.get("algorithm"): i for i, g in enumerate(groups)}
  unranked = table[table["config_id"] == by_algorithm["partition_selection"]]
  assert sorted(zip(unranked["metric"], unranked["k"].astype(object).where(
      unranked["k"].notna(), None))) == [
          ("f1_paper", 10), ("num_discovered", None), ("precision", None),
          ("recall", 10)]
  assert unranked[unranked["metric"] == "precision"]["mean"].item() == 1.0
  kept = table[table["config_id"] == by_algorithm["triehh"]]
  at_k = kept[(kept["metric"] == "precision") & kept["k"].notna()]
  assert at_k["mean"].item() == pytest.approx(0.8)
  assert analysis.scored_metrics(ranked[0]) == ranked[0].metrics
