"""Tests of the summarize driver on results of run_triehh and run_sfp."""

import collections
import json
import math
import os
import stat
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from absl.testing import flagsaver
from scipy import stats

from experiments import summarize
from experiments import sweep
from reports import plots
from reports import summary as analysis
from tests.experiments import drivers
from triehh.data import synthetic
from triehh.runs import records as records_lib

FLAGS = summarize.FLAGS
NUM_USERS = 30000
MIN_WORDS = 5  # bins with fewer words are too noisy to compare to the bound


@pytest.fixture(autouse=True)
def parsed_flags():
  if not FLAGS.is_parsed():
    FLAGS.mark_as_parsed()


@pytest.fixture(scope="module")
def results_dirs(tmp_path_factory):
  """Three real driver invocations, one directory each, run in this process
  as their entry points would run them; seeded, as simulations are (the
  tests below copy a record and change its seed)."""
  from experiments import run_sfp  # pylint: disable=g-import-not-at-top
  from experiments import run_triehh  # pylint: disable=g-import-not-at-top
  invocations = {
      "triehh": (run_triehh, "--num_runs=3", "--seed=0", "--sampling=fixed"),
      # theta and the batch size given directly (inside Theorem 1) put the
      # bound's rise from 0 to 1 in bins holding dozens of words. Their
      # delta, 0.083, is above 1/n: opted in to, the records are a
      # simulation of the discovery rate, not a guarantee.
      "theta": (run_triehh, "--num_runs=10", "--seed=100", "--theta=4",
                "--batch_size=3000", "--allow_delta_above_1_over_n"),
      # 0.3 s per run with a 64-function sketch; T=80 reports false words.
      "sfp": (run_sfp, "--num_runs=2", "--seed=0", "--cms_k=64", "--top_t=80"),
  }
  dirs = []
  for name, (module, *flags) in invocations.items():
    out = tmp_path_factory.mktemp(name)
    dirs.append(out)
    code, _, err = drivers.run_in_process(
        module, f"--num_users={NUM_USERS}", *flags, f"--output_dir={out}")
    assert code == 0, err
  return dirs


@pytest.fixture(scope="module")
def records(results_dirs):
  lines = []
  for out in results_dirs:
    lines += (out / "results.jsonl").read_text().splitlines()
  return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def results_lines(records):
  return [json.dumps(r) for r in records]


@pytest.fixture(scope="module")
def summary(results_dirs, tmp_path_factory):
  csv_path = tmp_path_factory.mktemp("summary") / "summary.csv"
  code, stdout, err = drivers.run_in_process(
      summarize, f"--output_dir={','.join(map(str, results_dirs))}",
      "--truth_from_dataset", f"--num_users={NUM_USERS}",
      f"--csv_out={csv_path}")
  assert code == 0, err
  return (stdout, pd.read_csv(csv_path),
          pd.read_csv(csv_path.with_name("summary_discovery.csv")))


def config_name(algorithm, theta, top_t):
  """The test's own grouping of its three invocations."""
  if algorithm == "sfp":
    return f"sfp T={int(top_t)}"
  return f"triehh theta={int(theta)}"


def test_run_counts(records, summary):
  stdout, table, _ = summary
  assert len(records) == 15
  expected = collections.Counter(
      config_name(r["algorithm"], r["params"].get("theta"),
                  r["params"].get("top_t"))
      for r in records)
  assert expected == {"triehh theta=13": 3, "triehh theta=4": 10,
                      "sfp T=80": 2}
  assert table["config_id"].nunique() == 3
  for _, rows in table.groupby("config_id"):
    assert rows["runs"].nunique() == 1
    first = rows.iloc[0]
    name = config_name(first["algorithm"], first["theta"], first["top_t"])
    assert first["runs"] == expected[name], name
  assert stdout.count("results.jsonl: ") == 3
  assert "results.jsonl: 10 run records\n" in stdout
  assert stdout.count(": 3 runs\n") == 1 and stdout.count(": 2 runs\n") == 1
  assert stdout.count(": 10 runs") == 2  # metric block and discovery block
  assert "sfp (T=80)" in stdout and "recall@50" in stdout
  # The sketch's k keeps its own column next to the metrics' K.
  sfp = table[table["algorithm"] == "sfp"]
  assert set(sfp["cms_k"]) == {64}
  assert set(table["k"].dropna()) == {10, 50, 100}


def test_means_and_intervals_match_the_records(records, summary):
  _, table, _ = summary
  values = collections.defaultdict(lambda: collections.defaultdict(list))
  for r in records:
    name = config_name(r["algorithm"], r["params"].get("theta"),
                       r["params"].get("top_t"))
    for metric, value in r["metrics"].items():
      values[name][metric].append(value)
  checked = clipped = 0
  for _, rows in table.groupby("config_id"):
    first = rows.iloc[0]
    expected = values[config_name(first["algorithm"], first["theta"],
                                  first["top_t"])]
    names = {m if pd.isna(k) else f"{m}@{int(k)}"
             for m, k in zip(rows["metric"], rows["k"])}
    assert names == set(expected)
    for _, row in rows.iterrows():
      name = row["metric"] if pd.isna(row["k"]) else (
          f"{row['metric']}@{int(row['k'])}")
      x = np.array(expected[name], dtype=float)
      assert row["runs"] == len(x)
      assert row["mean"] == pytest.approx(x.mean(), abs=1e-12)
      sem = stats.sem(x)
      if sem == 0:
        assert row["half_width"] == 0
        continue
      low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sem)
      assert row["half_width"] == pytest.approx((high - low) / 2, abs=1e-9)
      if row["metric"] in analysis.PROPORTIONS:
        # A mean of proportions lies in [0, 1]: so does its interval.
        assert row["clipped"] == (low < 0 or high > 1)
        low, high = max(low, 0.0), min(high, 1.0)
        clipped += row["clipped"]
      else:
        assert not row["clipped"]
      assert row["ci_low"] == pytest.approx(low, abs=1e-9)
      assert row["ci_high"] == pytest.approx(high, abs=1e-9)
      checked += 1
  assert checked > 10  # intervals of positive width were compared
  assert ((table["ci_low"] >= 0) & (table["ci_high"] <= 1))[
      table["metric"] != "num_discovered"].all()
  assert clipped >= 1  # the clipping was exercised


def test_discovery_rate_lies_above_the_bound(records, summary):
  _, _, rates = summary
  assert set(rates["algorithm"]) == {"triehh"}
  pop = synthetic.english_population(NUM_USERS, seed=0)
  truth = {w: c for w, c in pop.ground_truth().items() if len(w) <= 10}
  words = np.array(list(truth))
  counts = np.array([truth[w] for w in words])
  strong = 0
  for config_id, rows in rates.groupby("config_id"):
    theta, m, levels = (int(rows.iloc[0][c])
                        for c in ("theta", "batch_size", "levels"))
    assert levels == 11  # L + 1: the worst case over word lengths
    runs = [set(r["discovered"]) for r in records
            if r["algorithm"] == "triehh" and r["params"]["theta"] == theta]
    assert len(runs) == rows.iloc[0]["runs"]
    found = np.array([sum(w in s for s in runs) / len(runs) for w in words])
    edges = np.append(rows["freq_low"].to_numpy(), rows["freq_high"].iloc[-1])
    bins = np.clip(np.searchsorted(edges, counts / NUM_USERS, side="right")
                   - 1, 0, len(rows) - 1)
    word_bound = stats.hypergeom.sf(theta - 1, NUM_USERS, counts, m) ** levels
    for b, row in enumerate(rows.itertuples()):
      inside = bins == b
      assert row.words == inside.sum()
      mid = math.floor(row.freq_mid * NUM_USERS)
      assert row.bound_mid == pytest.approx(
          stats.hypergeom.sf(theta - 1, NUM_USERS, mid, m) ** levels,
          abs=1e-9)
      if not inside.any():
        continue
      assert row.rate == pytest.approx(found[inside].mean(), abs=1e-12)
      assert row.bound_words == pytest.approx(word_bound[inside].mean(),
                                              abs=1e-9)
      if row.words >= MIN_WORDS:
        # 3 standard deviations of a mean of independent Bernoulli draws.
        tolerance = 1.5 / math.sqrt(len(runs) * row.words)
        assert row.rate >= row.bound_words - tolerance, row
        strong += 0.2 < row.bound_words < 0.99
  assert strong >= 2  # the bound was not only checked where it is 0 or 1


def write_lines(path, lines):
  path.write_text("".join(line + "\n" for line in lines))
  return str(path)


def test_malformed_and_foreign_lines_are_skipped_and_counted(
    results_lines, tmp_path, capsys):
  good = results_lines
  sfp_line = next(l for l in good if '"sfp"' in l)
  bad_metric = json.loads(sfp_line)
  bad_metric["metrics"]["recall@10"] = "high"
  no_theta = json.loads(good[0])
  del no_theta["params"]["theta"]
  path = write_lines(tmp_path / "results.jsonl", good[:4] + [
      "not json", sfp_line[:40], "", '{"algorithm": "other", "metrics": {}}',
      "[1, 2]", json.dumps(bad_metric), json.dumps(no_theta), good[-1]])
  records, reports = analysis.load_runs([path])
  assert len(records) == 5 and reports[0].records == 5
  assert reports[0].num_skipped == 6
  assert reports[0].skipped == {"not JSON": 2,
                                "not a run_triehh/run_sfp record": 2,
                                "run record with missing or bad fields": 2}
  assert reports[0].skipped_lines == [5, 6, 8, 9, 10, 11]
  with flagsaver.flagsaver(results=[path], output_dir=None):
    summarize.main(["summarize"])
  out = capsys.readouterr().out
  assert "5 run records, 6 lines skipped" in out
  assert "skipped 6 lines in total (malformed, foreign, or a record" in out


def test_missing_file_is_a_clear_error(tmp_path):
  missing = tmp_path / "nowhere" / "results.jsonl"
  code, _, err = drivers.run_in_process(summarize, f"--results={missing}")
  assert code == 1
  assert err.strip() == (f"error: --results={missing}: No such file or "
                         "directory")
  (tmp_path / "empty").mkdir()
  with pytest.raises(FileNotFoundError, match="empty/results.jsonl"):
    analysis.results_paths([], [str(tmp_path / "empty")])
  with pytest.raises(ValueError, match="results=FILE"):
    analysis.results_paths([], [])
  code, _, err = drivers.run_in_process(summarize)
  assert (code, err) == (1, "error: give the results to summarise: "
                         "--results=FILE[,FILE] or --output_dir=DIR[,DIR]\n")


def test_run_driver_flags_and_files_without_records(tmp_path):
  path = write_lines(tmp_path / "results.jsonl", ["{}", "# notes"])
  code, out, err = drivers.run_in_process(summarize, f"--results={path}",
                                          "--epsilon=1")
  assert (code, out) == (1, "")
  assert err == ("error: --epsilon is not a flag of this command: a flag of "
                 "the run drivers; the summariser reports every "
                 "configuration in the results\n")
  with flagsaver.flagsaver(results=[path]):
    with pytest.raises(ValueError, match="no run records"):
      summarize.main(["summarize"])


def test_single_run_has_no_interval_and_duplicate_runs_are_dropped(
    results_lines, tmp_path, capsys):
  assert analysis.mean_interval([0.25])[0] == 0.25
  assert all(math.isnan(v) for v in analysis.mean_interval([0.25])[1:])
  mean, std, half = analysis.mean_interval([0.0, 1.0, 2.0], 0.9)
  assert (mean, std) == (1.0, 1.0)
  assert half == pytest.approx(stats.t.ppf(0.95, 2) / math.sqrt(3))
  sfp_lines = [l for l in results_lines if '"sfp"' in l]
  # The same run twice, and a run of another configuration on the same seed.
  other = json.loads(sfp_lines[0])
  other["config"]["data"]["data_seed"] = 5
  other["config_key"] = ""
  path = write_lines(tmp_path / "results.jsonl",
                     sfp_lines[:1] * 3 + [json.dumps(other)])
  with flagsaver.flagsaver(results=[path]):
    summarize.main(["summarize"])
  out = capsys.readouterr().out
  assert "dropped 2 duplicate runs (same config_key and seed" in out
  # Pooled by the displayed configuration, two records share seed 0.
  assert "2 records but 1 distinct seeds" in out


def test_runs_differing_outside_the_display_are_not_pooled(results_lines):
  line = next(l for l in results_lines if '"triehh"' in l)
  other = json.loads(line)
  other["params"].update(max_length=8, levels=9)
  other["seed"] = 7
  groups = analysis.group_runs([records_lib.RunRecord.from_json(line),
                                records_lib.RunRecord.from_dict(other)])
  assert len(groups) == 2
  assert {g.variant for g in groups} == {"max_length=10 levels=11",
                                         "max_length=8 levels=9"}


# ---- --plot_dir ---------------------------------------------------------

SWEEP_USERS = 20000


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
  """A sweep of TrieHH and SFP at epsilon 1 and 4, two runs each, run in
  this process; its output directory."""
  out = tmp_path_factory.mktemp("sweep")
  code, _, err = drivers.run_in_process(
      sweep, "--algorithms=triehh,sfp", "--epsilons=1,4", "--num_runs=2",
      f"--num_users={SWEEP_USERS}", "--cms_k=64", "--noprogress",
      "--cache_dir=", f"--output_dir={out}")
  assert code == 0, err
  return out


def test_plot_dir_draws_the_figures_of_a_sweep(small_sweep, tmp_path):
  plot_dir = tmp_path / "figures"  # made by the driver
  code, out, err = drivers.run_in_process(
      summarize, f"--output_dir={small_sweep}", f"--plot_dir={plot_dir}",
      "--truth_from_dataset", f"--num_users={SWEEP_USERS}", "--cache_dir=")
  assert code == 0, err
  wrote = [line for line in out.splitlines()
           if line.startswith(f"wrote {plot_dir}/")]
  assert len(wrote) == len(plots.FIGURES)
  for name in plots.FIGURES:
    assert (plot_dir / f"{name}.png").stat().st_size > 0
  csv = {name: pd.read_csv(plot_dir / f"{name}.csv")
         for name in plots.FIGURES}
  values = collections.defaultdict(list)
  for line in (small_sweep / "results.jsonl").read_text().splitlines():
    r = json.loads(line)
    for metric, value in r["metrics"].items():
      values[r["algorithm"], r["target_epsilon"], metric].append(value)
  for name, metric in ((plots.RECALL, "recall"), (plots.F1, "f1"),
                       (plots.F1_VS_K, None)):
    table = csv[name]
    assert set(table["series"]) == {"TrieHH", "SFP"}
    assert set(table["epsilon"]) == {1.0, 4.0}
    assert set(table["k"]) == {10, 50, 100}
    assert set(table["metric"]) == ({metric} if metric else
                                    {"f1", "f1_paper"})
    assert len(table) == 2 * 2 * 3 * (1 if metric else 2)
    for _, row in table.iterrows():
      x = values[row["algorithm"], row["epsilon"],
                 f"{row['metric']}@{row['k']}"]
      assert row["runs"] == len(x) == 2
      assert row["mean"] == pytest.approx(np.mean(x), abs=1e-12)
  discovery = csv[plots.DISCOVERY]
  assert set(discovery["algorithm"]) == {"triehh"}
  assert set(discovery["epsilon"]) == {1.0, 4.0}
  assert discovery["bound_words"].notna().any()
  cost = csv[plots.COST]
  assert set(cost[cost["metric"] == "rounds"]["algorithm"]) == {"triehh"}
  assert set(cost[cost["metric"] == "seconds"]["algorithm"]) == {"triehh",
                                                                 "sfp"}


def test_plot_dir_is_checked_before_any_work(small_sweep, tmp_path):
  a_file = tmp_path / "a_file"
  a_file.write_text("")
  taken = tmp_path / "taken"
  (taken / f"{plots.COST}.csv").mkdir(parents=True)
  for plot_dir, reason in (
      (a_file, "Not a directory"),
      (taken, f"{taken}/{plots.COST}.csv: Is a directory")):
    code, out, err = drivers.run_in_process(
        summarize, f"--output_dir={small_sweep}", f"--plot_dir={plot_dir}")
    assert (code, out) == (1, "")
    assert err.strip() == f"error: --plot_dir={plot_dir}: {reason}"


def test_matplotlib_is_imported_only_with_plot_dir(small_sweep, tmp_path):
  code = ("import sys\n"
          "from experiments import summarize\n"
          "from tests.experiments import drivers\n"
          "for flags in ([], ['--plot_dir=' + sys.argv[2]]):\n"
          "  status = drivers.run_in_process(\n"
          "      summarize, '--output_dir=' + sys.argv[1], *flags)[0]\n"
          "  print(status, 'matplotlib' in sys.modules)\n")
  proc = subprocess.run(
      [sys.executable, "-c", code, str(small_sweep), str(tmp_path)],
      cwd=drivers.ROOT, capture_output=True, text=True, timeout=300)
  assert proc.stdout.splitlines() == ["0 False", "0 True"], proc.stderr


def test_truth_from_another_population_says_why(results_dirs):
  # The runs are on NUM_USERS users; without --num_users the default data
  # set is rebuilt at its own size, and the error says the runs differ.
  code, _, err = drivers.run_in_process(
      summarize, f"--output_dir={results_dirs[0]}", "--truth_from_dataset",
      f"--num_users={NUM_USERS + 1}")
  assert code == 1
  assert "no TrieHH runs on the rebuilt population:" in err
  assert f"n={NUM_USERS} (rebuilt: {NUM_USERS + 1})" in err


def test_a_table_k_the_records_lack_says_why_table_2_is_missing(small_sweep):
  # Table 2 was left out with no word.
  code, out, err = drivers.run_in_process(
      summarize, f"--output_dir={small_sweep}", "--table_k=7")
  assert code in (0, None), err
  assert "the paper's Table 2" not in out
  assert "no Table 2: the records hold recall at K in 10, 50, 100, not " \
         "--table_k=7" in err


# ---- hostile input ----------------------------------------------------------


def a_record(seed, **changes):
  """A TrieHH run record's line, made by hand."""
  fields = dict(
      algorithm="triehh", engine="fast", dataset="d", setting="single",
      n_users=1000, run=0, seed=seed, epsilon=1.0, delta=1e-6,
      target_epsilon=1.0, target_delta=1e-6, theta=10, batch_size=100,
      levels=11, max_length=10, discovered=["a"], reported_counts=[5.0],
      metrics={"recall@10": 0.5, "precision": 1.0}, seconds=0.1,
      config={"algorithm": "triehh", "epsilon": 1.0})
  raw = json.loads(records_lib.RunRecord(**fields).to_json())
  raw.update(changes)
  return json.dumps(raw)


def test_an_output_that_is_a_results_file_read_is_refused(tmp_path):
  # --csv_out=<the results file> printed "wrote ...", exited 0 and left the
  # metric table in place of every run.
  runs = tmp_path / "runs"
  runs.mkdir()
  results = runs / "results.jsonl"
  text = a_record(0) + "\n"
  for path in (results, runs / "x_discovery.csv", runs / "f1_vs_k.csv"):
    path.write_text(text)
  (tmp_path / "link.csv").symlink_to(results)
  os.link(results, tmp_path / "hard.csv")
  for flags, out in (
      ((f"--output_dir={runs}", f"--csv_out={results}"), results),
      ((f"--results={runs}", f"--csv_out={tmp_path / 'link.csv'}"),
       tmp_path / "link.csv"),
      ((f"--output_dir={runs}", f"--csv_out={tmp_path / 'hard.csv'}"),
       tmp_path / "hard.csv"),
      ((f"--results={runs / 'x_discovery.csv'}",
        f"--csv_out={runs / 'x.csv'}"), runs / "x_discovery.csv"),
      ((f"--results={runs / 'f1_vs_k.csv'}", f"--plot_dir={runs}"),
       runs / "f1_vs_k.csv")):
    code, stdout, err = drivers.run_in_process(summarize, *flags)
    assert (code, stdout) == (1, ""), err
    out_flag = flags[1].partition("=")[0]
    assert err.startswith(f"error: {flags[1]}: {out} is the results file "
                          f"read from {flags[0].partition('=')[0]}=")
    assert err.endswith(f"would replace its runs: choose another "
                        f"{out_flag}\n") and err.count("\n") == 1
  for path in (results, runs / "x_discovery.csv", runs / "f1_vs_k.csv"):
    assert path.read_text() == text
  assert not list(runs.glob("*.png"))


def test_num_bins_is_bounded(tmp_path):
  # --num_bins=100000000 ran for minutes in gigabytes, printing nothing.
  (tmp_path / "results.jsonl").write_text(a_record(0) + "\n")
  code, _, err = drivers.run_in_process(
      summarize, f"--output_dir={tmp_path}", "--num_bins=1e8")
  assert (code, err) == (1, "error: flag --num_bins=1e8: 100000000 is not "
                          "an integer in the range [1, 10000]\n")
  assert analysis.MAX_BINS == 10_000


def test_a_results_path_that_is_a_pipe_or_device_says_which(tmp_path):
  # Each was "not a regular file (a device or a pipe)".
  fifo = tmp_path / "fifo.jsonl"
  os.mkfifo(fifo)
  (tmp_path / "out").mkdir()
  (tmp_path / "out" / "results.jsonl").symlink_to(fifo)
  (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
  cases = [(f"--results={fifo}", f"{fifo} is a named pipe (FIFO)"),
           (f"--output_dir={tmp_path / 'out'}",
            f"{tmp_path / 'out' / 'results.jsonl'} is a named pipe (FIFO)")]
  if stat.S_ISCHR(os.stat("/dev/zero").st_mode):
    cases.append((f"--results={tmp_path / 'zero.jsonl'}",
                  f"{tmp_path / 'zero.jsonl'} is a character device"))
  for flag, what in cases:
    code, out, err = drivers.run_in_process(summarize, flag)
    assert (code, out) == (1, "")
    assert err == f"error: {flag}: {what}, not a results file\n"


def test_hostile_records_are_skipped_and_the_rest_summarized(tmp_path,
                                                            capsys):
  # A config 500 levels deep raised RecursionError, a K beyond 64 bits
  # OverflowError; a byte order mark lost the first record.
  deep = 1
  for _ in range(500):
    deep = {"x": deep}
  path = tmp_path / "results.jsonl"
  path.write_bytes(records_lib.UTF8_BOM + "".join(line + "\n" for line in (
      a_record(0), a_record(1, config=deep),
      a_record(2, metrics={"recall@99999999999999999999999": 0.5}),
      a_record(3, rounds="x"), a_record(4))).encode())
  with flagsaver.flagsaver(results=[str(path)]):
    summarize.main(["summarize"])
  out, err = capsys.readouterr()
  assert (f"{path}: 2 run records, 3 lines skipped (1 metric not finite or "
          "out of range, 2 run record with missing or bad fields; line 2, "
          "3, 4)") in out
  assert f"warning: {path}:3: metrics['recall@9999" in err
  assert ": 2 runs\n" in out


def test_a_target_epsilon_above_the_ceiling_is_named_by_what_it_achieves(
    tmp_path):
  # TrieHH Poisson at n = 10^5 gives epsilon = 8 the parameters of
  # epsilon = 4: the table said "8" with no word.
  lines = []
  for target, achieved, recall in ((4.0, 3.99998, 0.9), (8.0, 4.04, 0.9)):
    for seed in range(2):
      lines.append(records_lib.RunRecord(
          algorithm="triehh", engine="fast", dataset="d", setting="single",
          n_users=1000, run=0, seed=seed, epsilon=achieved, delta=1e-6,
          target_epsilon=target, target_delta=1e-6, theta=10,
          batch_size=100, levels=11, max_length=10, discovered=["a"],
          reported_counts=[5.0], seconds=0.1,
          metrics={"recall@10": recall, "precision": 1.0},
          config={"algorithm": "triehh", "epsilon": target}).to_json())
  (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
  code, out, err = drivers.run_in_process(
      summarize, f"--output_dir={tmp_path}", "--table_k=10")
  assert code in (0, None), err
  table = out[out.index("the paper's Table 2"):].splitlines()
  rows = [line for line in table if line.strip().startswith("triehh ")]
  assert len(rows) == 2
  assert "8 (ceiling: achieves 4.04)" in rows[1]
  assert "ceiling" not in rows[0] and " 4 " in rows[0]
  assert table[4].strip() == (
      "note: triehh at n=1,000 asked epsilon=8, achieves 4.04: the "
      "mechanism's ceiling there (a larger target does not raise it), so "
      "the row's guarantee is the achieved one.")
  assert out.count("epsilon=8 (ceiling: achieves 4.04)") == 1  # its block
  assert "epsilon=4 (ceiling" not in out


def test_an_unranked_set_is_summarised_without_top_k_precision(tmp_path,
                                                               capsys):
  # Hand-made records: partition selection's (written with the precision@K
  # of an alphabetical cut, 0.0) and TrieHH's.
  from tests.reports import summary_test  # pylint: disable=g-import-not-at-top
  rows = [summary_test.run(
      seed, 0.5, algorithm="partition_selection", engine=None, theta=None,
      batch_size=None, levels=None, max_length=None,
      strategy="truncated_geometric", max_partitions_contributed=1,
      metrics={"precision@10": 0.0, "recall@10": 0.5, "f1@10": 0.0,
               "precision": 1.0, "num_discovered": 3.0})
          for seed in (0, 1)] + [summary_test.run(
              seed, 0.4, metrics={"precision@10": 0.75, "recall@10": 0.4,
                                  "precision": 1.0})
                                 for seed in (0, 1)]
  path = write_lines(tmp_path / "results.jsonl", map(json.dumps, rows))
  with flagsaver.flagsaver(results=[path], output_dir=None):
    summarize.main(["summarize"])
  out = capsys.readouterr().out
  block = out[out.index("partition_selection, d single"):]
  block = block[:block.index("\n\n")] if "\n\n" in block else block
  assert "unranked: no top-K precision (nor F1@K); set precision below" in (
      block)
  row = next(line for line in block.splitlines()
             if line.split()[:1] == ["10"])
  # precision@K and F1@K: "-", not the records' 0.000.
  assert row.split() == ["10", "-", "0.500", "±", "0.000", "-"], block
  assert "  precision: 1.000" in block
  triehh_block = out[out.index("\ntriehh"):]
  triehh_block = triehh_block[:triehh_block.index("\n\n", 1)]
  assert "unranked" not in triehh_block
  assert "0.750" in triehh_block
