"""Tests of reports.plots on hand-written run records: the CSV beside
each figure holds the means and intervals recomputed here from the
records."""

import collections
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reports import plots
from reports import summary as analysis
from reports.reproduction import figures
from reports.reproduction import style
from triehh.core import population as population_lib

N = 1000


def run(algorithm, seed, epsilon, metrics, **fields):
  """A record of the current layout, as JSON; its config is what it asked
  for (``config``, default: its algorithm and epsilon)."""
  base = {"schema_version": 1, "algorithm": algorithm, "dataset": "d",
          "setting": "single", "n_users": N, "seed": seed, "run": 0,
          "epsilon": epsilon, "delta": 1e-6, "target_epsilon": epsilon,
          "target_delta": 1e-6, "discovered": ["a"], "counts": [5.0],
          "seconds": 0.1, "metrics": metrics}
  if algorithm == "triehh":
    base.update(engine="fast", theta=10, batch_size=100, levels=11,
                max_length=10, rounds=5, num_participants=500)
  elif algorithm == "sfp":
    base.update(top_t=20)
  else:  # iblt: k-anonymity at TrieHH's batch size for epsilon
    base.update(epsilon=None, delta=None, target_epsilon=None,
                target_delta=None, has_guarantee=False, matched_epsilon=epsilon,
                matched_delta=1e-6, k_anonymity=10, batch_size=100,
                max_length=10, capacity=40, rounds=3, num_participants=300)
  base.update(fields)
  base.setdefault("config", {"algorithm": algorithm, "epsilon": epsilon})
  return base


def scores(recall, f1):
  """recall@10, f1@10 and the paper's F1 of a run."""
  return {"recall@10": recall, "f1@10": f1, "f1_paper@10": 2 * recall /
          (recall + 1), "precision": 1.0, "num_discovered": 3.0}


# (algorithm, epsilon) -> runs as (recall@10, f1@10, rounds, users, seconds).
RUNS = {("triehh", 1.0): [(0.6, 0.5, 5, 1000, 0.1), (0.8, 0.7, 6, 1100, 0.2),
                          (0.7, 0.65, 7, 1200, 0.3)],
        ("triehh", 4.0): [(0.9, 0.9, 5, 3000, 0.2), (1.0, 0.95, 5, 3100,
                                                     0.25)],
        ("sfp", 1.0): [(0.05, 0.02, None, None, 2.0), (0.1, 0.06, None, None,
                                                       3.0)],
        ("iblt", 4.0): [(0.5, 0.4, 3, 300, 1.0), (0.3, 0.2, 3, 300, 1.5)]}


def records_file(tmp_path, extra=()):
  rows = []
  for (algorithm, epsilon), runs in RUNS.items():
    for seed, (recall, f1, rounds, users, seconds) in enumerate(runs):
      fields = {"seconds": seconds}
      if rounds is not None:
        fields.update(rounds=rounds, num_participants=users)
      rows.append(run(algorithm, seed, epsilon, scores(recall, f1), **fields))
  path = tmp_path / "results.jsonl"
  path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, *extra]))
  return str(path)


def summarised(path):
  records, _ = analysis.load_runs([path])
  groups = analysis.group_runs(records)
  return groups, analysis.metric_table(groups, 0.95)


def expected(values, proportion=True):
  """Mean and Student-t 95% interval, as scipy computes it."""
  x = np.asarray(values, dtype=float)
  if x.size == 1 or np.all(x == x[0]):
    half = math.nan if x.size == 1 else 0.0
    return x.mean(), x.mean() - half, x.mean() + half
  low, high = stats.t.interval(0.95, x.size - 1, loc=x.mean(),
                               scale=stats.sem(x))
  if proportion:
    return x.mean(), max(low, 0.0), min(high, 1.0)
  return x.mean(), max(low, 0.0), high


def check_rows(csv, key_columns, values_of, proportion=True):
  """Every row of ``csv`` has the mean and interval of its records."""
  for _, row in csv.iterrows():
    values = values_of(*(row[c] for c in key_columns))
    mean, low, high = expected(values, proportion)
    assert row["runs"] == len(values)
    assert row["mean"] == pytest.approx(mean, abs=1e-12)
    if math.isnan(low):
      assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    else:
      assert row["ci_low"] == pytest.approx(low, abs=1e-9)
      assert row["ci_high"] == pytest.approx(high, abs=1e-9)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
  """The figures of RUNS and of a run without guarantee (theta given
  directly, outside Theorem 1): no epsilon, so in the figure against K
  only. Their folder and the lines saying what was drawn."""
  tmp_path = tmp_path_factory.mktemp("records")
  loose = run("triehh", 0, None, scores(0.4, 0.3), has_guarantee=False,
              target_epsilon=None, theta=2,
              config={"algorithm": "triehh", "epsilon": None, "theta": 2})
  groups, table = summarised(records_file(tmp_path, [loose]))
  out = tmp_path / "plots"
  out.mkdir()
  return out, plots.draw(str(out), groups, table, None, 0.95)


def test_figures_hold_the_means_and_intervals_of_the_records(drawn):
  out, lines = drawn
  assert len(lines) == len(plots.FIGURES)
  assert lines[3] == (f"not drawn: {out}/discovery_vs_frequency.png (needs "
                      "the population: --truth_from_dataset)")
  for name in set(plots.FIGURES) - {plots.DISCOVERY}:
    assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any(line.startswith(f"wrote {out}/{name}.png and .csv: ")
               for line in lines)
  assert "1 configuration without epsilon left out" in lines[0]

  metric_index = {"recall": 0, "f1": 1}
  def metric_values(algorithm, epsilon, metric, k):
    assert k == 10
    if metric == "f1_paper":
      return [2 * r[0] / (r[0] + 1) for r in RUNS[algorithm, epsilon]]
    return [r[metric_index[metric]] for r in RUNS[algorithm, epsilon]]

  label = {"triehh": "TrieHH", "sfp": "SFP",
           "iblt": "IBLT (k-anonymity, not DP)"}
  for name, metric in ((plots.RECALL, "recall"), (plots.F1, "f1")):
    csv = pd.read_csv(out / f"{name}.csv")
    assert list(csv.columns) == list(plots.COLUMNS)
    assert sorted(zip(csv["algorithm"], csv["epsilon"])) == sorted(RUNS)
    assert set(csv["metric"]) == {metric} and set(csv["k"]) == {10}
    assert all(label[a] == s for a, s in zip(csv["algorithm"],
                                             csv["series"]))
    check_rows(csv, ("algorithm", "epsilon", "metric", "k"), metric_values)

  by_k = pd.read_csv(out / f"{plots.F1_VS_K}.csv")
  assert collections.Counter(by_k["metric"]) == {"f1": 5, "f1_paper": 5}
  check_rows(by_k[np.isfinite(by_k["epsilon"])],
             ("algorithm", "epsilon", "metric", "k"), metric_values)
  # The paper's F1 of TrieHH at epsilon 4 is near 1: its interval is cut.
  top = by_k[(by_k["metric"] == "f1_paper") & (by_k["epsilon"] == 4.0)
             & (by_k["algorithm"] == "triehh")].iloc[0]
  assert top["ci_high"] == 1.0 and top["mean"] + top["half_width"] > 1
  loose_row = by_k[~np.isfinite(by_k["epsilon"])]
  assert list(loose_row["series"]) == ["TrieHH (theta=2)"] * 2
  assert list(loose_row["mean"]) == [0.3, pytest.approx(0.8 / 1.4)]


def test_cost_figure_shows_what_the_records_hold(drawn):
  out, lines = drawn
  assert lines[4].endswith(
      "against epsilon, rounds (2 series), users sampled (user-rounds) (2 "
      "series), seconds per run (3 series); 1 configuration without "
      "epsilon left out")
  csv = pd.read_csv(out / f"{plots.COST}.csv")
  column = {"rounds": 2, "users_sampled": 3, "seconds": 4}
  have = collections.defaultdict(set)
  for algorithm, metric in zip(csv["algorithm"], csv["metric"]):
    have[metric].add(algorithm)
  # SFP has no rounds nor sampled users.
  assert have == {"rounds": {"triehh", "iblt"},
                  "users_sampled": {"triehh", "iblt"},
                  "seconds": {"triehh", "sfp", "iblt"}}
  check_rows(csv, ("algorithm", "epsilon", "metric"),
             lambda a, e, m: [r[column[m]] for r in RUNS[a, e]],
             proportion=False)
  # The seconds of TrieHH at epsilon 1 reach below 0: cut at 0.
  row = csv[(csv["metric"] == "seconds") & (csv["algorithm"] == "sfp")]
  assert row["ci_low"].item() == 0.0
  assert row["mean"].item() - row["half_width"].item() < 0


def test_one_epsilon_gives_points_with_error_bars(tmp_path):
  rows = [run("triehh", seed, 2.0, scores(r, r)) for seed, r in
          enumerate((0.5, 0.7))]
  path = tmp_path / "r.jsonl"
  path.write_text("".join(json.dumps(r) + "\n" for r in rows))
  groups, table = summarised(str(path))
  lines = plots.draw(str(tmp_path), groups, table, None, 0.95)
  assert sum(line.startswith("wrote") for line in lines) == 4
  assert "1 series at 1 epsilon(s)" in lines[0]
  fig, ax = figures.plt.subplots()
  # A lone point: an error bar from the interval cut to [0, 1].
  figures.band(ax, np.array([2.0]), np.array([0.6]), np.array([0.8]), "C0",
               "x", "-o")
  (segment,) = ax.containers[0].lines[2][0].get_segments()
  np.testing.assert_allclose(segment, [[2.0, 0.0], [2.0, 1.0]])
  # Two points: a band, no error bar.
  figures.band(ax, np.array([1.0, 2.0]), np.array([0.6, 0.7]),
               np.array([0.1, 0.1]), "C1", "y")
  assert len(ax.containers) == 1 and len(ax.collections) == 2
  figures.plt.close(fig)


def test_discovery_figure_holds_the_binned_rates(tmp_path):
  population = population_lib.Population.from_word_frequencies(
      ["aa", "bb", "cc", "dd"], [400, 200, 100, 50], max_length=10)
  truth = {"aa": 400.0, "bb": 200.0, "cc": 100.0, "dd": 50.0}
  found = [["aa", "bb"], ["aa", "cc"], ["aa"]]
  rows = [run("triehh", seed, 2.0, scores(0.5, 0.5), discovered=words,
              reported_counts=[1.0] * len(words), n_users=750)
          for seed, words in enumerate(found)]
  path = tmp_path / "r.jsonl"
  path.write_text("".join(json.dumps(r) + "\n" for r in rows))
  groups, table = summarised(str(path))
  rates, _ = analysis.discovery_table(groups, population, truth, "d",
                                      "single", 4)
  lines = plots.draw(str(tmp_path), groups, table, rates, 0.95)
  assert lines[3].startswith(f"wrote {tmp_path}/discovery_vs_frequency.png")
  csv = pd.read_csv(tmp_path / f"{plots.DISCOVERY}.csv")
  assert list(csv.columns) == list(plots.DISCOVERY_COLUMNS)
  assert set(csv["series"]) == {"TrieHH"} and set(csv["epsilon"]) == {2.0}
  # Each word in its own bin: its share of the three runs.
  shares = {"aa": 1.0, "bb": 1 / 3, "cc": 1 / 3, "dd": 0.0}
  expected_rates = [shares[w] for w in ("dd", "cc", "bb", "aa")]
  np.testing.assert_allclose(csv["rate"], expected_rates)
  assert list(csv["words"]) == [1, 1, 1, 1]
  assert csv["bound_words"].notna().all()
  np.testing.assert_allclose(csv["bound_words"], rates["bound_words"])


def test_series_are_the_configurations_differing_in_epsilon_alone(tmp_path):
  def asked(epsilon, **more):
    return {"algorithm": "triehh", "epsilon": epsilon, "delta": None,
            "data": {"num_users": N}, **more}
  rows = [run("triehh", 0, e, scores(0.5, 0.5), config=asked(e))
          for e in (1.0, 2.0, 8.0)]
  rows.append(run("triehh", 0, 1.0, scores(0.5, 0.5), delta=1e-9,
                  target_delta=1e-9, config=asked(1.0, delta=1e-9)))
  # Asked alike, at the same epsilon: another L (not in this config).
  rows.append(run("triehh", 0, 2.0, scores(0.5, 0.5), max_length=8, levels=9,
                  config=asked(2.0)))
  rows.append(run("sfp", 0, 3.0, scores(0.1, 0.1)))
  path = tmp_path / "r.jsonl"
  path.write_text("".join(json.dumps(r) + "\n" for r in rows))
  groups, _ = summarised(str(path))
  series = plots.series_of(groups)
  got = {s.label: [plots.epsilon_of(groups[i]) for i in s.config_ids]
         for s in series}
  assert got == {
      "TrieHH (delta=auto) [max_length=10 levels=11]": [1.0, 2.0, 8.0],
      "TrieHH (delta=auto) [max_length=8 levels=9]": [2.0],
      "TrieHH (delta=1e-09)": [1.0],
      "SFP": [3.0]}
  colors = plots.epsilon_colors([8.0, 1.0, 3.0, 0.5, math.inf, 2.0])
  assert list(colors) == [0.5, 1.0, 2.0, 3.0, 8.0, math.inf]
  assert colors[math.inf] == "tab:gray"  # no guarantee
  along = [style.color_position(colors[e]) for e in (0.5, 1.0, 2.0, 3.0, 8.0)]
  assert all(a < b for a, b in zip(along, along[1:])), along
