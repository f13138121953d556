"""Tests of the comparison beyond the paper as a library: its report from
known records, and its runs' resume (fake runs, so no test runs TrieHH)."""

from __future__ import annotations

import json
import types

import pytest

from reports.beyond import report
from reports.beyond import runs
from triehh.core import population as population_lib
from triehh.runs import records

N = 1000  # users of the default data in these tests


class _Data:
  """A data cache that knows only the number of users (enough to plan (b)
  and (c), whose runs these tests fake)."""

  def get(self, options):
    return types.SimpleNamespace(population=types.SimpleNamespace(
        num_users=options["num_users"]))


def _record(config, seed, recall, **changes):
  """A TrieHH record of ``config`` at ``seed`` whose recall@K is
  ``recall``."""
  fields = dict(
      algorithm="triehh", engine="fast", dataset="default", setting="single",
      n_users=N, run=seed, seed=seed, epsilon=3.99, delta=1e-6,
      target_epsilon=4.0, target_delta=1 / N**2, theta=13, gamma=3.0,
      batch_size=95, max_length=10, levels=11, discovered=["the"],
      reported_counts=[9],
      metrics={f"{m}@{k}": recall for m in ("recall", "f1")
               for k in runs.F1_KS} | {"num_discovered": 10 * recall},
      seconds=0.5, config=dict(config))
  fields.update(changes)
  return records.RunRecord(**fields)


def _settings(**changes):
  values = dict(parts=("passes", "availability"), runs=2, default_users=N,
                pass_counts=(1, 2), fractions=(1.0, 0.5), sample_path=None)
  values.update(changes)
  return runs.Settings(**values)


@pytest.fixture(name="no_figures")
def fixture_no_figures(monkeypatch):
  """Tables only: the figures are the driver test's."""
  def refuse(*args):
    raise ImportError("not drawn in this test")
  monkeypatch.setattr(report, "_figures", refuse)


def _write(tmp_path, settings, parts, outcome=None):
  context = report.Context(command="python -m experiments.beyond",
                           seconds=3.0, outcome=outcome or runs.Outcome())
  path = report.write(str(tmp_path / "report"), str(tmp_path / "out"),
                      settings, parts, context)
  return open(path, encoding="utf-8").read()


def _row(text, start):
  rows = [line for line in text.splitlines() if line.startswith(start)]
  assert len(rows) == 1, (start, rows)
  return [cell.strip() for cell in rows[0].split("|")[1:-1]]


def test_the_tables_are_the_records_numbers(tmp_path, no_figures):
  del no_figures
  settings = _settings()
  parts = runs.plan(settings, _Data())
  writer = records.ResultsWriter(str(tmp_path / "out"))
  for point in parts[0].points:  # (b): 1 and 2 passes
    for seed, recall in zip(point.seeds, (0.5, 0.7)):
      writer.write(_record(point.config, seed, recall / point.config[
          "num_passes"], epsilon=3.998, delta=1.8e-12))
  for point in parts[1].points:  # (c): online, nominal x 1, 0.5
    nominal = point.config["calibrate_to"] == "nominal"
    half = point.config["availability"] == 0.5
    for seed in point.seeds:
      writer.write(_record(
          point.config, seed, 0.9, theta=13, batch_size=95 if half else 190,
          epsilon=None if nominal and half else 3.99,
          online_per_round=[N // 2 if half else N] * 11,
          nominal_epsilon=1.8 if half and not nominal else 3.99))
  text = _write(tmp_path, settings, parts)
  assert "Produced by `python -m experiments.beyond`." in text
  assert "The Sentiment140 sample is absent" in text
  # recall@10 of 0.5 and 0.7: mean 0.60, t(0.975, 1) s / sqrt(2) = 1.27.
  assert _row(text, "| default data (n = 1,000) | 1 |") == [
      "default data (n = 1,000)", "1", "basic", "4.000", "3.998", "1.8e-12",
      "0.60 ± 1.27", "0.60 ± 1.27", "0.60 ± 1.27", "6.0 ± 12.7"]
  assert _row(text, "| default data (n = 1,000) | 2 |")[2:4] == [
      "basic", "2.000"]
  assert "**default data (n = 1,000)**: one pass is best (recall@50 0.600" \
      in text
  assert _row(text, "| online | 0.5 |") == [
      "online", "0.5", "500", "13", "95", "3.990", "1.800", "0.90 ± 0.00",
      "0.90 ± 0.00", "0.90 ± 0.00"]
  assert _row(text, "| nominal | 0.5 |")[5:7] == ["∞ (no guarantee)",
                                                   "3.990"]
  assert "(figure beyond-passes.png not drawn: not drawn in this test)" \
      in text
  assert "Wall time 3 s ((b) 0 s, (c) 0 s)" in text


def test_the_iblt_table_from_its_records(tmp_path, no_figures):
  del no_figures
  data = {"dataset": "default", "setting": "single", "num_users": N,
          "max_length": 10}
  group = ("default data", 1.0)
  points = [runs.Point("iblt", role, "default data", N,
                       {"algorithm": role, "data": data, "epsilon": 1.0},
                       seeds, group)
            for role, seeds in (("iblt", (0,)), ("triehh", (0, 1)),
                                ("tff", (0,)))]
  writer = records.ResultsWriter(str(tmp_path / "out"))
  writer.write(records.RunRecord(
      algorithm="iblt", dataset="default", setting="single", n_users=N,
      run=0, seed=0, epsilon=None, delta=None, target_epsilon=None,
      target_delta=None, k_anonymity=14, batch_size=545, rounds=1,
      num_participants=545, bytes_per_client=30744, num_truncated=2,
      seconds=0.5, seconds_per_client=0.008, discovered=["the"],
      reported_counts=[20],
      metrics=_record({}, 0, 0.1).metrics, config=points[0].config))
  for seed in (0, 1):
    writer.write(_record(points[1].config, seed, 0.2 + 0.2 * seed,
                         epsilon=1.0, delta=1.3e-11, theta=14,
                         batch_size=545, num_participants=2180,
                         vote_bytes_per_round=[512, 1024 * (1 + seed)]))
  writer.write(_record(points[2].config, 0, 0.3, num_participants=2000,
                       seconds=0.5, engine="tff"))
  part = runs.Part("iblt", points)
  text = _write(tmp_path, _settings(parts=("iblt",)), [part])
  assert _row(text, "| default data | 1 | IBLT") == [
      "default data", "1", "IBLT, 1 round, k=14", "545", "8.000", "30,744",
      "2.0", "0.10", "0.10", "0.10", "0.10", "0.10",
      "14-anonymity per round, not DP"]
  # Bytes: the mean over runs of the mean per round, and the largest.
  assert _row(text, "| default data | 1 | TrieHH") == [
      "default data", "1", "TrieHH, θ=14, m=545", "2,180", "0.250",
      "1,024 per round (max 2,048)", "0.0", "0.30 ± 1.27", "0.30 ± 1.27",
      "0.30 ± 1.27", "0.30 ± 1.27", "0.30 ± 1.27",
      "(1.00, 1.3e-11)-DP, one direction"]
  # A refused IBLT leaves out its data and epsilon, with a note.
  refused = runs.Outcome(refused={points[0].key: "too big"})
  text = _write(tmp_path, _settings(parts=("iblt",)), [part], refused)
  assert "- default data, ε=1: IBLT refused: too big" in text
  assert "| default data | 1 |" not in text


def test_missing_tensorflow_federated_is_said(tmp_path, no_figures):
  del no_figures
  outcome = runs.Outcome(missing={"iblt": ImportError("no tff")})
  text = _write(tmp_path, _settings(parts=("iblt",)),
                [runs.Part("iblt", [])], outcome)
  assert "**Not produced in this run** (ImportError: no tff)" in text


@pytest.fixture(name="fake_runs")
def fixture_fake_runs(monkeypatch):
  """Replaces the runs by records made up from their config and seed; the
  (config key, seed) of every run made. 2 passes are refused."""
  made = []

  def fake(config, dataset, seed, run_index):
    del dataset, run_index
    made.append((records.config_key(config), seed))
    if config.get("num_passes") == 2:
      raise ValueError("each pass's share is below Theorem 1's range")
    return _record(config, seed, 0.5, online_per_round=[N] * 11,
                   nominal_epsilon=3.99)

  for role, (_, refusal) in list(runs._RUNS.items()):  # pylint: disable=protected-access
    monkeypatch.setitem(runs._RUNS, role, (fake, refusal))  # pylint: disable=protected-access
  return made


def test_a_second_run_runs_only_what_is_not_recorded(tmp_path, fake_runs):
  settings = _settings()
  datasets = _Data()
  parts = runs.plan(settings, datasets)
  out = str(tmp_path / "out")
  assert runs.runs_left(parts, out) == 2 * 2 + 4 * 2
  first = runs.run(settings, parts, out, datasets)
  assert first.written == 2 + 4 * 2  # 2 passes refused at its first seed
  refused = [p.key for p in parts[0].points
             if p.config["num_passes"] == 2]
  assert list(first.refused) == refused
  lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
  assert len(lines) == first.written
  # Again: every run is recorded but the refused one, which is refused again
  # before running.
  fake_runs.clear()
  again = runs.run(settings, parts, out, datasets)
  assert again.written == 0 and list(again.refused) == refused
  assert fake_runs == [(refused[0], settings.seed)]
  # A run lost (its line removed) is the only one run again.
  path = tmp_path / "out" / "results.jsonl"
  path.write_text("\n".join(lines[:-1]) + "\n")
  fake_runs.clear()
  third = runs.run(settings, parts, out, datasets)
  lost = json.loads(lines[-1])
  assert third.written == 1
  assert fake_runs == [(refused[0], settings.seed),
                       (lost["config_key"], lost["seed"])]


def test_runs_are_keyed_by_config_and_seed(tmp_path, fake_runs):
  del fake_runs
  settings = _settings(parts=("availability",))
  datasets = _Data()
  parts = runs.plan(settings, datasets)
  keys = [p.key for p in parts[0].points]
  assert len(set(keys)) == 4  # calibration x fraction
  runs.run(settings, parts, str(tmp_path / "out"), datasets)
  got, bad = records.read(str(tmp_path / "out" / "results.jsonl"))
  assert not bad
  assert sorted((r.config_key, r.seed) for r in got) == sorted(
      (k, s) for k in keys for s in settings.seeds)
  assert {r.config["availability"] for r in got} == {1.0, 0.5}
  # More seeds: only the new ones are left.
  more = runs.plan(_settings(parts=("availability",), runs=3), datasets)
  assert runs.runs_left(more, str(tmp_path / "out")) == 4


def test_records_keep_beyond_fields_and_others_are_unchanged():
  beyond = _record({"epsilon": 4.0}, 0, 0.5, vote_bytes_per_round=[512],
                   online_per_round=[N] * 11, nominal_epsilon=float("inf"))
  raw = json.loads(beyond.to_json())["params"]
  assert raw["vote_bytes_per_round"] == [512]
  assert raw["online_per_round"] == [N] * 11
  assert raw["nominal_epsilon"] is None  # no guarantee at n
  back = records.RunRecord.from_json(beyond.to_json())
  assert back.params.vote_bytes_per_round == [512]
  plain = json.loads(_record({"epsilon": 4.0}, 0, 0.5).to_json())["params"]
  for name in ("vote_bytes_per_round", "online_per_round",
               "nominal_epsilon"):
    assert name not in plain


def test_unknown_part_is_refused():
  with pytest.raises(ValueError, match="unknown part 'sketch'"):
    runs.Settings(parts=("sketch",))


def test_first_round_capacity_covers_every_seed():
  pop = population_lib.as_population(
      ["the"] * 50 + ["of"] * 30 + ["and"] * 10 + ["to", "a", "in"] * 3 +
      [f"w{i}" for i in range(40)], 10)
  one = [runs.first_round_capacity(pop, 40, [seed], 10) for seed in range(5)]
  assert len(set(one)) > 1  # the seeds draw different users
  assert runs.first_round_capacity(pop, 40, range(5), 10) == max(one)
  # Strings are cut to string_max_bytes: w10..w39 are all "w" at 1 byte.
  assert runs.first_round_capacity(pop, 40, [0], 1) < one[0]


# ---- (d) protected counts ------------------------------------------------------


class _CountData:
  """A data cache of populations given by word frequencies (no user array,
  so no IBLT point)."""

  def get(self, options):
    n = options.get("num_users") or 659_775
    return types.SimpleNamespace(population=types.SimpleNamespace(
        num_users=n, has_user_array=False), truth={})


def _count_settings(**changes):
  counting = dict(runs=2, sfp_runs=1, iblt_runs=1, epsilons=(1.0, 4.0),
                  shares=(0.1, 0.5))
  counting.update(changes)
  return _settings(parts=("counts",),
                   counts=runs.CountSettings(**counting))


def test_counts_points_cross_epsilon_and_split_on_each_data_set():
  from reports.beyond import counts  # pylint: disable=g-import-not-at-top
  settings = _count_settings()
  (part,) = runs.plan(settings, _CountData())
  assert counts.grid(settings) == [(1.0, 0.1), (4.0, 0.1), (4.0, 0.5)]
  by_data = {}
  for point in part.points:
    by_data.setdefault(point.data, []).append(point)
  assert list(by_data) == ["default data", "paper's single-word population"]
  for points in by_data.values():
    triehh = [p for p in points if p.role == counts.TRIEHH_COUNTS]
    sfp = [p for p in points if p.role == counts.SFP_COUNTS]
    assert [(p.config["epsilon"], p.config["count_share"]) for p in triehh
            ] == counts.grid(settings)
    assert all(p.config["counts"] and p.config["sampling"] == "poisson"
               and p.seeds == (0, 1) for p in triehh)
    assert [(p.config["epsilon"], p.seeds) for p in sfp] == [
        (1.0, (0,)), (4.0, (0,))]
  assert by_data["default data"][0].config["data"]["num_users"] == N
  assert by_data["paper's single-word population"][0].config["data"][
      "dataset"] == "paper"
  assert len({p.key for p in part.points}) == len(part.points)
  assert sum("no IBLT row" in note for note in part.notes) == 2
  assert any("Sentiment140 sample is absent" in n for n in part.notes)
  (none,) = runs.plan(_count_settings(sfp_runs=0, iblt_runs=0),
                      _CountData())
  assert {p.role for p in none.points} == {counts.TRIEHH_COUNTS}


def _counted(config, seed, error, coverage):
  return _record(config, seed, 0.5, epsilon=3.99, count_share=config.get(
      "count_share"), count_epsilon=2.5, count_noise_std=2.0,
                 discovery_epsilon=3.5, metrics={
                     "recall@10": 0.5, "recall@50": 0.4, "recall@100": 0.2,
                     **{f"count_error@{k}": error for k in runs.KS},
                     **{f"count_coverage@{k}": coverage for k in runs.KS}})


def test_the_counts_table_is_the_records_numbers(tmp_path, no_figures):
  del no_figures
  from reports.beyond import counts  # pylint: disable=g-import-not-at-top
  settings = _count_settings(epsilons=(4.0,), shares=(0.1,))
  (part,) = runs.plan(settings, _CountData())
  writer = records.ResultsWriter(str(tmp_path / "out"))
  for point in part.points:
    if point.role == counts.TRIEHH_COUNTS:
      for seed, error in zip(point.seeds, (0.01, 0.03)):
        writer.write(_counted(point.config, seed, error, 0.9 + error))
    elif point.data == "default data":  # the paper's SFP is not recorded
      writer.write(_record(point.config, 0, 0.5, algorithm="sfp",
                           engine=None, theta=None, gamma=None, levels=None,
                           batch_size=None, max_length=None, top_t=20,
                           metrics={"recall@10": 0.1, "recall@50": 0.0,
                                    "recall@100": 0.0, "count_error@10": 1.0,
                                    "count_error@50": 1.0,
                                    "count_error@100": 1.0}))
  text = _write(tmp_path, settings, [part])
  assert "## (d) Protected counts of the discovered words" in text
  # Errors 0.01 and 0.03: mean 0.02, half-width t(0.975, 1) 0.01 = 0.127.
  assert _row(text, "| default data | TrieHH + counts |") == [
      "default data", "TrieHH + counts", "3.990", "0.1", "2.500", "2",
      "0.50/0.40/0.20", "0.020 ± 0.127", "0.020 ± 0.127", "0.020 ± 0.127",
      "0.920 ± 0.127", "0.920 ± 0.127", "0.920 ± 0.127"]
  assert _row(text, "| default data | SFP (CMS) |") == [
      "default data", "SFP (CMS)", "4", "–", "–", "–", "0.10/0.00/0.00",
      "1.000", "1.000", "1.000", "–", "–", "–"]
  assert not any(line.startswith("| paper's single-word population | SFP")
                 for line in text.splitlines())
  assert "2 seeds per TrieHH row" in text and "1 seeds per row" in text
  assert "(figure beyond-counts.png not drawn" in text
  assert "(d) 0 s" in text


def test_a_shared_iblt_record_without_count_metrics_is_scored_in_the_row():
  # Part (a)'s IBLT cell can have the counts part's config: its record,
  # read back, has no count metrics, and the row scores its counts, scaled
  # by n over the round's users, against the part's truth.
  from reports.beyond import counts  # pylint: disable=g-import-not-at-top
  config = {"algorithm": "iblt", "epsilon": 4.0, "data": {"num_users": N}}
  point = runs.Point("counts", counts.IBLT_COUNTS, "default data", N, config,
                     (0,))
  part = runs.Part("counts", [point],
                   truths={"default data": {"a": 400, "b": 300, "c": 10}})
  record = _record(config, 0, 0.5, algorithm="iblt", engine=None,
                   theta=None, gamma=None, levels=None,
                   discovered=["a", "b"], reported_counts=[20, 12],
                   n_users=N, num_participants=N // 20)
  assert "count_error@10" not in record.metrics
  rows, _ = counts.counts_rows(part, {(point.key, 0): record}, {})
  (score,) = rows[0]["scores"]
  # a: 20 * 20 = 400 (error 0); b: 240 against 300 (0.2); c missing (1).
  assert score["count_error@10"] == pytest.approx(0.2)
  assert score["count_error@100"] == pytest.approx(0.2)


def test_a_refused_iblt_count_point_is_a_note(tmp_path, monkeypatch):
  from reports.beyond import counts  # pylint: disable=g-import-not-at-top
  made = []

  def fake(config, dataset, seed, run_index):
    del dataset, run_index
    made.append(config["algorithm"])
    if config["algorithm"] == "iblt":
      raise ImportError("no tff")
    return _counted(config, seed, 0.01, 1.0)

  for role, (_, refusal) in counts.RUNS.items():
    monkeypatch.setitem(runs._RUNS, role, (fake, refusal))  # pylint: disable=protected-access
  settings = _count_settings(epsilons=(4.0,), shares=(0.1,))
  point = runs.Point("counts", counts.IBLT_COUNTS, "default data", N,
                     {"algorithm": "iblt", "epsilon": 4.0,
                      "data": {"num_users": N}}, (0,))
  part = runs.Part("counts", [point])
  outcome = runs.run(settings, [part], str(tmp_path / "out"), _CountData())
  assert made == ["iblt"] and outcome.refused == {point.key: "no tff"}
  rows, notes = counts.counts_rows(part, {}, outcome.refused)
  assert not rows and notes == ["default data: iblt refused: no tff"]


def test_the_counts_figure_is_drawn(tmp_path):
  from reports.beyond import counts  # pylint: disable=g-import-not-at-top
  from reports.beyond import figures  # pylint: disable=g-import-not-at-top

  def row(role, epsilon, share, error):
    return dict(data="default data", n=N, role=role, epsilon=epsilon,
                share=share,
                scores=[{"count_error@10": error}, {"count_error@10": error}])

  rows = [row(counts.TRIEHH_COUNTS, e, 0.1, 1e-3 / e) for e in (1.0, 4.0)]
  rows += [row(counts.TRIEHH_COUNTS, 4.0, 0.5, 2e-4),
           row(counts.SFP_COUNTS, 4.0, None, 0.05)]
  path = figures.counts_figure(rows, str(tmp_path / "counts.png"), 4.0)
  with open(path, "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
