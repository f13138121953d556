"""Tests of REPORT.md's ablations: tails, levels, several-words accountings."""

import numpy as np
import pytest

from reports.reproduction import ablations
from reports.reproduction import markdown
from reports.reproduction import numbers
from triehh.core import metrics
from triehh.theory import utility

WORDS = [f"w{i:03d}" for i in range(250)]
TRUTH = {w: float(1000 - i) for i, w in enumerate(WORDS)}
N = 659_775


def _series(figure, epsilon, recall, *, algorithm="triehh", top_t=None,
            tail="sample", variant="", params=None, precision=1.0):
  params = params or {"theta": 17, "batch_size": 33586, "delta": 3e-15,
                      "target_delta": 1 / 6e6**2}
  records = [{"discovered": WORDS[:200 - 10 * run], "max_length": 9,
              "n_users": N, "levels": 10, "sampling": "fixed",
              "sampling_rate": None, "epsilon_local": 5.0,
              "metrics": {"recall@50": recall + 0.01 * run,
                          "precision": precision}, **params}
             for run in range(3)]
  return numbers.Series(algorithm, figure, epsilon, top_t, records, TRUTH,
                        n=N, data=f"data of {figure}", tail=tail,
                        variant=variant)


def test_table2_why_shows_the_number_on_each_tail():
  main = _series("oov", 4.0, 0.20, algorithm="sfp", top_t=80)
  zipf = _series("oov", 4.0, 0.31, algorithm="sfp", top_t=80, tail="zipf")
  word = _series("oov", 4.0, 0.10, algorithm="sfp", top_t=80,
                 tail="wordfreq")
  series = [main, zipf, word]
  why = ablations.table2_why(series, main, 0.33, "recall@50", 2)
  _, _, z = numbers.stat(numbers.metric_of_runs(zipf, "recall@50"))
  _, _, w = numbers.stat(numbers.metric_of_runs(word, "recall@50"))
  assert why == (f"-0.12 recall; tail varied: zipf tail {z}, wordfreq tail "
                 f"{w} (the paper's value is within the interval on the "
                 "zipf tail)")
  # Within the interval: nothing to explain.
  assert ablations.table2_why(series, zipf, 0.32, "recall@50", 2) == ""
  # No run on another tail: a hypothesis.
  assert ablations.table2_why([main], main, 0.33, "recall@50", 2) == (
      "-0.12 recall; hypothesis, not measured: the tail we built (no run "
      "on another tail)")


def test_level_ceiling_counts_the_words_longer_than_l():
  truth = {"abcdefghij": 10.0, "short": 9.0, "abcdefghijk": 8.0, "x": 7.0}
  s = numbers.Series("triehh", "oov", 4.0, None,
                     [{"max_length": 9, "discovered": []}], truth, n=34)
  assert ablations.level_ceiling(s, k=4) == (
      "2 of the top 4 words are longer than L = 9 characters, so "
      "recall@4 ≤ 0.50 at any ε (measured on the published list)")


def test_table2_tails_labels_each_tail():
  series = [_series("oov", 1.0, 0.6), _series("oov", 1.0, 0.7, tail="zipf")]
  lines = []
  ablations.table2_tails(lines, series)
  text = "\n".join(lines)
  assert text.startswith("### Table 2 on 2 tails (ablation of the tail we "
                         "built)")
  rows = [line for line in lines if line.startswith("| TrieHH | 1 |")]
  assert len(rows) == 2
  assert rows[1].startswith("| TrieHH | 1 | a Zipf law fitted to the "
                            "published top 100, extrapolated | 0.65 | ")
  assert rows[1].endswith("a tail we built (a Zipf law fitted to the "
                          "published top 100, extrapolated) |")
  empty = []
  ablations.table2_tails(empty, series[:1])
  assert "Not run (hypothesis, not measured" in "\n".join(empty)


MULTI = {"theta": 13, "batch_size": 16731, "delta": 1.7664948220503826e-09,
         "target_delta": 5e-9}
PAPER = {"theta": 12, "batch_size": 18126, "delta": 2.319639665318678e-08,
         "target_delta": None}
PER_RUN = {"theta": 12, "batch_size": 18126, "delta": 2.319639665318678e-09,
           "target_delta": 5e-9}


def test_several_words_rows_print_theta_m_and_the_achieved_delta():
  series = [_series("multi-n", 4.0, 0.8, params=MULTI),
            _series("multi-n", 4.0, 0.9, params=PAPER,
                    variant=numbers.PAPER_ACCOUNTING),
            _series("multi-n", 4.0, 0.9, params=PER_RUN,
                    variant=numbers.PER_RUN)]
  lines = []
  ablations.several_words(lines, series)
  rows = [line for line in lines if line.startswith("| 659,775 ")]
  assert len(rows) == 3
  w200 = metrics.top_k(TRUTH, 200)[-1]
  votes = [f"{m * TRUTH[w200] / N:.1f}" for m in (16731, 18126, 18126)]
  _, _, recall = numbers.stat(numbers.recall_curves(series[0], 200)[:, -1])
  assert rows[0] == (
      "| 659,775 (resampled) | ours: per-round redraws, δ = L·δ₁ (proven, "
      "one direction) | 13 | 16,731 | 1.77·10⁻⁹, below the paper's 5·10⁻⁹ "
      f"| {recall} | 3 | {votes[0]} vs 13 |")
  assert ("| the paper's accounting, not covered by a proof for per-round "
          "redraws (Corollary 2: θ and m of Corollary 1 at the full δ) | 12 "
          "| 18,126 | 2.32·10⁻⁹ (the paper's δ₁; ours for the same run: "
          "L·δ₁ = 2.32·10⁻⁸), below the paper's 5·10⁻⁹ |") in rows[1]
  assert ("| `word_choice=\"per_run\"` (Theorem 2 with the paper's δ, "
          "proven) | 12 | 18,126 | 2.32·10⁻⁹, below the paper's 5·10⁻⁹ |"
          ) in rows[2]
  text = "\n".join(lines)
  assert ("- Levels: the longest of the top 250 words has 4 characters "
          "against L = 9, so the levels cut none of them") in text
  assert "hypothesis, not measured: no run here has the full data" in text


def test_the_authors_theta_search_and_batch_formula():
  # Theorem 1's delta at theta: (theta - 2) / ((theta - 3) theta!).
  delta = lambda t: (t - 2) / ((t - 3) * float(np.prod(range(1, t + 1))))  # pylint: disable=unnecessary-lambda-assignment
  for theta in (10, 12, 15):
    assert numbers.authors_theta(delta(theta)) == theta
    assert numbers.authors_theta(delta(theta) * 0.999) == theta + 1
  assert numbers.authors_theta(0.5) == 9  # their initial guess
  growth = np.exp(4 / 10)
  assert numbers.authors_batch_size(659_775, 4.0, 12, 10) == int(
      659_775 * (growth - 1) / (12 * growth))


def test_the_caveat_is_proposition_2_at_small_n():
  text = markdown._caveat()  # pylint: disable=protected-access
  n, theta, m = 10**4, 12, 151
  assert f"θ = {theta}, m = {m}" in text
  rates = utility.discovery_rate(np.arange(1, n + 1), n, m, theta, 10)
  for rate in (0.5, 0.9):
    first = int(np.argmax(rates >= rate)) + 1
    assert rates[first - 2] < rate <= rates[first - 1]
    assert f"{rate:g} at a frequency of {first / n:.3f}" in text


def test_provenance_says_what_was_resumed():
  p = markdown.Provenance(wall_seconds=612.4, cpu_self=20.2,
                          cpu_children=900.6, peak_self_mib=500.0,
                          peak_children_mib=1500.4,
                          load_start=(1.0, 0.5, 0.25),
                          load_end=(2.0, 1.5, 1.25), runs_written=10,
                          runs_read=5, cpus=2)
  context = markdown.Context(
      command="c", seconds=p.wall_seconds, runs_written=10, triehh_runs=1,
      sfp_runs=20, multi_runs=1, data_notes={}, provenance=p)
  text = markdown._provenance(context)  # pylint: disable=protected-access
  assert text.startswith(
      "Measured by the invocation that wrote this report, from its start to "
      "the scoring of its runs (drawing the figures and writing this file "
      "come after): wall time 612 s; "
      "CPU time 921 s (20 s this process, 901 s its worker processes); "
      "peak memory 500 MiB (this process), 1500 MiB (largest worker); load "
      "average (1/5/15 min) 1.00/0.50/0.25 at the start, 2.00/1.50/1.25 at "
      "the end, on 2 CPUs")
  assert text.endswith("It wrote 10 runs and read 5 from the records of "
                       "earlier invocations (resumed: their time is not in "
                       "these figures).")
  p.runs_read = 0
  assert "(none resumed from earlier records)" in markdown._provenance(  # pylint: disable=protected-access
      context)


if __name__ == "__main__":
  pytest.main([__file__])
