"""Tests of the section beyond the paper: its table, measures and markdown."""

import dataclasses
import math

import numpy as np
import pytest

from reports.reproduction import markdown
from reports.reproduction import numbers
from reports.reproduction import two_sided
from triehh.theory import poisson
from triehh.theory import poisson_calibration
from triehh.theory import privacy

# n = 10^4: Theorem 1 cannot be calibrated at epsilon = 1, can at 4.
NS, EPSILONS = (10**4,), (1.0, 4.0)


@pytest.fixture(scope="module")
def rows():
  return two_sided.calibration_rows(NS, EPSILONS)


def test_the_table_rows_are_the_two_calibrations(rows):
  assert [(r.n, r.epsilon) for r in rows] == [(10**4, 1.0), (10**4, 4.0)]
  for row in rows:
    assert row.num_levels == two_sided.TABLE_LEVELS == 11
    assert row.delta == 1e-8
    assert row.poisson == poisson_calibration.calibrate(10**4, 11, row.epsilon, 1e-8)
    assert row.poisson_error == ""
  impossible, ok = rows
  assert impossible.fixed is None
  with pytest.raises(ValueError) as err:
    privacy.calibrate(10**4, 11, 1.0, 1e-8)
  assert impossible.fixed_error == " ".join(str(err.value).split())
  assert "too few for Theorem 1" in impossible.fixed_error
  assert impossible.batch_ratio is None and impossible.threshold_ratio is None
  assert ok.fixed == privacy.calibrate(10**4, 11, 4.0, 1e-8)
  assert ok.fixed_error == ""
  q_n, theta_p = ok.poisson.expected_batch_size, ok.poisson.theta
  m, theta_1 = ok.fixed.batch_size, ok.fixed.theta
  assert ok.batch_ratio == pytest.approx(q_n / m)
  assert ok.threshold_ratio == pytest.approx((q_n / theta_p) / (m / theta_1))
  assert q_n == pytest.approx(ok.poisson.rate * 10**4)


def test_the_poisson_calibrations_meet_their_target(rows):
  for row in rows:
    cal = row.poisson
    assert cal.target_epsilon == row.epsilon and cal.target_delta == row.delta
    # Both directions at the target epsilon, recomputed from (q, theta).
    got = poisson.delta_for_epsilon(cal.rate, cal.theta, 11, row.epsilon)
    assert got <= row.delta * (1 + 1e-9)
    assert cal.epsilon <= row.epsilon
    # ... and the rate is the largest that does (the search's tolerance).
    above = poisson.delta_for_epsilon(cal.rate * 1.01, cal.theta, 11,
                                      row.epsilon)
    assert above > row.delta
    # The atom no epsilon covers is a part of delta.
    per_level = cal.rate**cal.theta
    assert row.atom == pytest.approx(1 - (1 - per_level)**11, rel=1e-12)
    assert row.atom <= row.delta * (1 + 1e-9)
  # What the guarantee buys at n = 10^4, epsilon = 4: a larger batch and a
  # smaller count found.
  assert rows[1].batch_ratio > 1 and rows[1].threshold_ratio > 1


def test_poisson_cells_per_setting():
  eps = [1.0, 2.0, 4.0, 8.0]
  assert two_sided.poisson_epsilons("single", eps) == eps
  assert two_sided.poisson_epsilons("oov", eps) == [1.0, 4.0]
  assert two_sided.poisson_epsilons("multi", eps) == [4.0]
  assert two_sided.poisson_epsilons("multi-n", [1.0, 2.0]) == []
  assert two_sided.paper_value("oov", 1.0) == "0.65"
  assert two_sided.paper_value("oov", 4.0) == "0.76"
  assert two_sided.paper_value("single", 4.0) == "close to 1"
  assert two_sided.paper_value("single", 2.0) == two_sided.NOT_STATED


WORDS = [f"w{i:03d}" for i in range(250)]
TRUTH = {w: float(1000 - i) for i, w in enumerate(WORDS)}


def _series(figure, epsilon, found, sampling="fixed", runs=3, recall=0.5):
  records = []
  for run in range(runs):
    records.append({
        "discovered": WORDS[:found + run], "max_length": 9,
        "n_users": int(sum(TRUTH.values())), "batch_size": 5000,
        "theta": 12 if sampling == "fixed" else 20, "levels": 10,
        "delta": 2e-9 if sampling == "fixed" else 6e-9, "target_delta": 6e-9,
        "metrics": {"recall@50": recall + 0.1 * run, "precision": 1.0},
        "sampling": sampling,
        "sampling_rate": 0.25 if sampling == "poisson" else None})
  return numbers.Series("triehh", figure, epsilon, None, records, TRUTH,
                        n=int(sum(TRUTH.values())), data=f"data of {figure}",
                        sampling=sampling)


def test_measures_are_the_paper_rows_measures():
  single = _series("single", 4.0, 50)
  # F1 (the paper's) of the top 100: recall 0.50, 0.51, 0.52.
  r = np.array([0.50, 0.51, 0.52])
  np.testing.assert_allclose(two_sided.measure(single), 2 * r / (r + 1))
  oov = _series("oov", 1.0, 10, recall=0.3)
  np.testing.assert_allclose(two_sided.measure(oov), [0.3, 0.4, 0.5])
  multi = _series("multi-n", 4.0, 150)
  np.testing.assert_allclose(two_sided.measure(multi),
                             [150 / 200, 151 / 200, 152 / 200])
  assert two_sided.run_parameters(single) == "θ = 12, m = 5,000"
  assert two_sided.run_parameters(_series("single", 4.0, 50, "poisson")) == (
      f"θ = 20, q = 0.25 (≈ {0.25 * single.n:,.0f} users per round)")


def test_the_ceiling_leaves_out_words_longer_than_max_length():
  long_truth = dict(TRUTH)
  for i in range(0, 100, 4):  # 25 of the top 100 get 10 characters
    long_truth[f"w{i:03d}xxxxxx"] = long_truth.pop(WORDS[i])
  s = _series("single", 4.0, 50)
  s.truth = long_truth
  assert two_sided.ceiling(s) == pytest.approx(2 * 0.75 / 1.75)
  s.figure = "oov"  # recall@50: 13 of the top 50 are too long
  assert two_sided.ceiling(s) == pytest.approx(37 / 50)
  s.records[0]["max_length"] = 10
  assert two_sided.ceiling(s) == 1.0


def _context(beyond):
  return markdown.Context(
      command="python -m experiments.reproduce_paper", seconds=1.0,
      runs_written=0, triehh_runs=3, sfp_runs=0, multi_runs=3,
      data_notes={"single": "the single data", "oov": "the oov data"},
      beyond=beyond, table_ns=NS, table_epsilons=EPSILONS)


def test_the_section_leaves_the_papers_report_and_figures_as_they_were(
    tmp_path, rows):
  del rows  # computed once for the module (poisson.calibrate is cached)
  fixed = [_series("single", 1.0, 40), _series("single", 4.0, 90),
           _series("oov", 1.0, 30, recall=0.6),
           _series("oov", 4.0, 60, recall=0.7)]
  beyond = [_series("oov", 4.0, 80, "poisson", recall=0.9),
            _series("single", 4.0, 30, "poisson"),
            _series("oov", 1.0, 70, "poisson", recall=0.2)]
  paper_dir, both_dir = tmp_path / "paper", tmp_path / "both"
  markdown.write(str(paper_dir), fixed, _context(False))
  markdown.write(str(both_dir), beyond[:1] + fixed + beyond[1:],
                 _context(True))
  paper = (paper_dir / "REPORT.md").read_text(encoding="utf-8")
  both = (both_dir / "REPORT.md").read_text(encoding="utf-8")
  title = ("## Beyond the paper: Poisson sampling, a guarantee proven in "
           "both directions")
  assert title not in paper
  start, end = both.index(title), both.index("## Figures")
  assert start < end
  section = both[start:end]
  # Every line of the paper's report, and nothing else, outside the section.
  assert both[:start] + both[end:] == paper
  for name in ("fig-fix-prob", "fig-freq-single", "fig-recall-single",
               "fig-f1-single-oov"):
    assert ((paper_dir / f"{name}.png").read_bytes()
            == (both_dir / f"{name}.png").read_bytes()), name
  # The table: one row per (n, epsilon), the impossible cell said so.
  table = [line for line in section.splitlines()
           if line.startswith("| 10^4 |")]
  assert len(table) == 2
  assert table[0].startswith("| 10^4 | 1 | cannot be calibrated: n=10000 "
                             "users are too few for Theorem 1")
  assert table[0].endswith("| — | — |")
  ok = two_sided.calibration_rows(NS, EPSILONS)[1]
  assert table[1] == (
      f"| 10^4 | 4 | {ok.fixed.theta}, {ok.fixed.batch_size:,} | "
      f"{ok.poisson.theta}, {ok.poisson.rate:.4g}, "
      f"{ok.poisson.expected_batch_size:,.0f} † | {ok.batch_ratio:.1f} | "
      f"{ok.threshold_ratio:.1f} |")
  # The runs: every row labelled, beside the paper's and the fixed value.
  runs = [line for line in section.splitlines()
          if line.startswith(f"| {two_sided.LABEL} |")]
  assert len(runs) == 3
  # Ordered as the report's tables: Table 2 (epsilon 1, 4), then single.
  assert runs[0].startswith(f"| {two_sided.LABEL} | Table 2: TrieHH "
                            "recall@50, OOV, δ = 1/n² | 1 | 0.65 | ")
  # Ceiling: every word of the truth has at most 9 characters.
  # theta, the batch or rate, and the delta each cell's runs achieve.
  assert ("| 0.70 ± 0.25 | 0.30 ± 0.25 | 1.00 | 3, 3 | θ = 12, m = 5,000, "
          "δ = 2.00·10⁻⁹; θ = 20, q = 0.25 (≈ 54,719 users per round), "
          "δ = 6.00·10⁻⁹ | ") in runs[0]
  assert runs[0].endswith("| semi-synthetic OOV population: the paper's "
                          "published top 100 + a tail we built; data of oov |")
  assert "| 4 | 0.76 | 0.80 ± 0.25 | 1.00 ± 0.25 |" in runs[1]
  assert "| 4 | close to 1 |" in runs[2]
  assert ("the Poisson runs' is above in 0 of 3 rows, overlaps it in 2 "
          "(recall@50 oov ε = 1; recall@50 oov ε = 4) and is below it in 1 "
          "(F1@100 single ε = 4). Each Poisson cell has as many runs as the "
          "fixed-size cell beside it.") in section
