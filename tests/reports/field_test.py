"""Tests of the field benchmark as a library: a tiny grid (n = 2,000, one
epsilon) run for real, its report's rows and moonshot line, and resuming."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from scipy import stats

from reports.field import mechanisms
from reports.field import report
from reports.field import rows
from reports.field import runs
from reports.field import text as text_lib
from triehh.data import datasets as datasets_lib

N = 2000
SETTINGS = runs.Settings(users=(N,), count_users=(), large_count_users=(),
                         sfp_users=(N,), iblt_users=(), tff_users=(),
                         epsilons=(4.0,),
                         side_epsilons=(4.0,), moonshot_epsilons=(4.0,),
                         num_seeds=2, ps_seeds=2, others=False)
# IBLT and the noisy trie's TFF rows run TensorFlow Federated: tested on
# their own (tff).
RUN = tuple(m for m in mechanisms.MECHANISMS
            if m != mechanisms.IBLT and m not in mechanisms.TFF_NOISY)


@pytest.fixture(name="written", scope="module")
def fixture_written(tmp_path_factory):
  """The tiny grid run and reported once: (directory, plan, report)."""
  out = tmp_path_factory.mktemp("field")
  plan = runs.plan(SETTINGS, datasets_lib.DataCache(None))
  seconds = runs.run(plan, str(out))
  context = report.Context(command="python -m experiments.field",
                           seconds=1.0, mechanism_seconds=seconds,
                           written=runs.runs_left(plan.cells, str(out)))
  path = report.write(str(out), str(out), SETTINGS, plan, context)
  with open(path, encoding="utf-8") as f:
    return out, plan, f.read()


def test_every_mechanism_is_a_cell_with_its_seeds(written):
  out, plan, _ = written
  assert [c.mechanism for c in plan.cells] == list(RUN)
  records = runs.recorded(str(out))
  assert len(records) == 2 * len(RUN)
  for record in records:
    assert record["n"] == N and record["delta"] == pytest.approx(1 / N**2)
    assert record["raw_strings"] == record["mechanism"].startswith("ps-")
    assert 0 <= record["recall@10"] <= 1
    assert record["words"] >= record["false_words"] >= 0
  json.dumps(records)  # plain JSON


def test_report_has_every_row_and_the_moonshot(written):
  out, _, text = written
  for name in RUN:
    line = f"| {N:,} | 4 | {mechanisms.LABELS[name]} |"
    assert sum(row.startswith(line) for row in text.splitlines()) == 1, name
  assert (f"**n = {N:,}, ε = 4, δ = 2.5e-07 (1/n²), one word per user "
          "(English)**, words some user holds over the best partition "
          "selection's: ") in text
  assert "noisy trie, k = 1, α = 1e-5 = **" in text
  assert "; TrieHH Poisson = **" in text
  assert ("Under two non-colluding servers (another trust model, "
          "`docs/two-servers.md`): two servers, one step" in text)
  assert "## Federated against central, every cell" in text
  assert sum(row.startswith(f"| english | {N:,} | 4 | ")
             for row in text.splitlines()) == 1
  assert "## Which to use when" in text and "## Left out" in text
  assert "Sentiment140" in text  # IBLT's rows are pointed to
  for name in (report.FIGURE_EPSILON, report.FIGURE_N):
    assert (out / name).stat().st_size > 0
    assert f"]({name})" in text


def test_the_planned_noisy_trie_records_its_upload_within_the_budget(
    written):
  out, _, text = written
  planned = [r for r in runs.recorded(str(out))
             if r["mechanism"] == mechanisms.NOISY_PLANNED]
  assert [r["seed"] for r in planned] == [0, 1]
  assert [r["calibrated"] for r in planned] == [True, False]
  for record in planned:
    assert 0 < record["bytes_round_max"] <= record["bytes_per_user"]
    assert record["bytes_per_user"] <= mechanisms.PLANNED_BYTES_PER_RUN
    # n declared (the population's): both relations covered.
    assert record["guarantee"].endswith(
        "two-sided, ADD_OR_REMOVE_ONE, REPLACE_SPECIAL")
    assert record["achieved_epsilon"] <= 4.0
  assert f"{mechanisms.LABELS[mechanisms.NOISY_PLANNED]} = **" in text
  assert "upload_budget=triehh.UploadBudget(1_000_000)" in text


def test_guarantee_labels_name_directions_and_adjacencies(written):
  out, _, _ = written
  labels = {r["mechanism"]: r["guarantee"] for r in runs.recorded(str(out))}
  assert "one direction, REPLACE_SPECIAL" in labels[mechanisms.FIXED]
  for name in (mechanisms.POISSON, mechanisms.NOISY_K1):
    assert "two-sided, ADD_OR_REMOVE_ONE" in labels[name]
  # The same relations as TrieHH's at a delta given to it.
  assert labels["ps-truncated_geometric"].endswith(
      "two-sided, ADD_OR_REMOVE_ONE, REPLACE_SPECIAL")
  # Shuffling's bound: replace-one neighbours of a fixed n only.
  assert labels[mechanisms.SFP].endswith("two-sided, REPLACE_ONE")


def test_the_grid_places_the_slow_baselines_and_the_large_counts():
  settings = runs.Settings(users=(N, 2 * N), count_users=(N,),
                           large_count_users=(10 * N,), sfp_users=(2 * N,),
                           iblt_users=(N,), tff_users=(N // 2,),
                           tff_epsilons=(1.0,), epsilons=(1.0, 4.0),
                           side_epsilons=(4.0,), others=False)
  plan = runs.plan(settings, datasets_lib.DataCache(None))
  cells = {(c.population, c.n, c.mechanism, c.epsilon) for c in plan.cells}
  assert ("english", 2 * N, mechanisms.SFP, 4.0) in cells
  assert ("english", N, mechanisms.IBLT, 4.0) in cells
  # Not at the other n, nor off the side epsilons.
  assert ("english", N, mechanisms.SFP, 4.0) not in cells
  assert ("english", N, mechanisms.IBLT, 1.0) not in cells
  # The large word counts: simulated mechanisms and partition selection's
  # best strategy (drawn from its law) at the side epsilons only.
  assert {(c.mechanism, c.epsilon) for c in plan.cells
          if c.n == 10 * N} == {(m, 4.0) for m in mechanisms.SIMULATED
                                + mechanisms.PS[:1]}
  assert {c.epsilon for c in plan.cells
          if c.population == "english-counts" and c.n == N} == {1.0, 4.0}
  # TFF's rows: their own small population, beside the fast noisy trie and
  # the best partition selection strategy, at their epsilons only.
  assert {(c.mechanism, c.epsilon) for c in plan.cells
          if c.n == N // 2} == {
              (m, 1.0) for m in (mechanisms.NOISY_K1, *mechanisms.TFF_NOISY,
                                 mechanisms.PS[0])}
  assert not any(c.mechanism in mechanisms.TFF_NOISY for c in plan.cells
                 if c.n != N // 2)


@pytest.mark.tff
def test_iblt_cell_is_labelled_k_anonymity(tmp_path):
  data = runs.plan(runs.Settings(users=(N,), count_users=(),
                                 large_count_users=(), sfp_users=(),
                                 iblt_users=(N,), tff_users=(),
                                 epsilons=(4.0,),
                                 side_epsilons=(4.0,), others=False),
                   datasets_lib.DataCache(None)).data[("english", N)]
  record = mechanisms.run(mechanisms.IBLT, data, 4.0, 1 / N**2, seed=0)
  assert record["guarantee"] == "k-anonymity 14, not DP"
  assert record["achieved_epsilon"] is None and not record["raw_strings"]
  assert record["rounds"] == 1 and record["bytes_round_max"] > 0
  assert record["words"] >= record["false_words"] == 0


@pytest.mark.tff
@pytest.mark.slow
def test_tff_noisy_cells_run_and_label_their_noise():
  data = runs.plan(runs.Settings(users=(), count_users=(),
                                 large_count_users=(), sfp_users=(),
                                 iblt_users=(), tff_users=(500,),
                                 tff_epsilons=(4.0,), others=False),
                   datasets_lib.DataCache(None)).data[("english", 500)]
  for name, noise in mechanisms.TFF_NOISY.items():
    record = mechanisms.run(name, data, 4.0, 1e-6, seed=0)
    assert record["setting"].endswith(noise) and not record["raw_strings"]
    # The distributed mode's Skellam shares cover REPLACE_SPECIAL only (a
    # client's own share and delivery are seen).
    assert record["guarantee"].endswith(
        "two-sided, REPLACE_SPECIAL" if noise == "distributed"
        else "two-sided, ADD_OR_REMOVE_ONE, REPLACE_SPECIAL")
    assert ("Skellam shares" in record["guarantee_full"]) == (
        noise == "distributed")


def test_a_second_invocation_runs_nothing(written):
  out, plan, _ = written
  assert runs.runs_left(plan.cells, str(out)) == 0
  assert not runs.run(plan, str(out)).get(mechanisms.FIXED)


def _row(mechanism, words, false=(0, 0)):
  cell = runs.Cell("english", N, mechanism, 4.0, (0, 1))
  return rows.Row(cell, tuple({"words": w, "false_words": f, "seed": s}
                              for s, (w, f) in enumerate(zip(words, false))))


def test_moonshot_divides_by_the_best_strategy():
  table = [_row("ps-truncated_geometric", [100, 120]),
           _row("ps-laplace_thresholding", [200, 220]),
           _row("ps-gaussian_thresholding", [50, 70]),
           _row(mechanisms.NOISY_K1, [105, 105]),
           _row(mechanisms.NOISY_K2_X4, [110, 112], false=(3, 5)),
           _row(mechanisms.POISSON, [21, 21]),
           _row(mechanisms.TWO_SERVERS_VERIFIED, [150, 160], false=(1, 1))]
  (shot,) = rows.moonshots(table, "english", (4.0, 1.0))
  assert shot.best.cell.mechanism == "ps-laplace_thresholding"
  assert shot.ratio(shot.noisy[mechanisms.NOISY_K1]) == pytest.approx(0.5)
  # False words are not counted: (111 - 4) / 210.
  assert shot.ratio(shot.noisy[mechanisms.NOISY_K2_X4]) == pytest.approx(
      107 / 210)
  assert shot.ratio(shot.poisson) == pytest.approx(0.1)
  assert mechanisms.NOISY_K2 not in shot.noisy
  assert math.isnan(shot.ratio(None))
  # The two-server walk beside them, with its interval from both rows'.
  assert list(shot.two_servers) == [mechanisms.TWO_SERVERS_VERIFIED]
  verified = shot.two_servers[mechanisms.TWO_SERVERS_VERIFIED]
  assert shot.ratio(verified) == pytest.approx(154 / 210)
  t = stats.t.ppf(0.975, 1)
  relative = math.hypot(t * 5 / 155, t * 10 / 210)  # half / mean, each
  assert shot.half(verified) == pytest.approx(154 / 210 * relative)
  assert math.isnan(shot.half(None))


def test_every_cell_divides_each_mechanism_by_the_best_strategy():
  table = [_row("ps-truncated_geometric", [100, 120]),
           _row("ps-laplace_thresholding", [200, 220]),
           _row(mechanisms.NOISY_PLANNED, [84, 86], false=(1, 1)),
           _row(mechanisms.TWO_SERVERS, [231, 231])]
  (cell,) = rows.every_cell_ratios(table, text_lib.CELL_RATIO_MECHANISMS)
  assert (cell.population, cell.n, cell.epsilon) == ("english", N, 4.0)
  assert cell.central.cell.mechanism == "ps-laplace_thresholding"
  assert cell.ratios == {mechanisms.NOISY_PLANNED: pytest.approx(84 / 210),
                         mechanisms.TWO_SERVERS: pytest.approx(1.1)}
  # The ratio's interval from both rows' relative half-widths: words
  # 84, 86 (85 ± 12.71) over 200, 220 (210 ± 127.06).
  half_85, half_210 = 12.706 * 1.0, 12.706 * 10.0
  assert cell.halves[mechanisms.NOISY_PLANNED] == pytest.approx(
      84 / 210 * math.hypot(half_85 / 85, half_210 / 210), rel=1e-3)
  assert cell.halves[mechanisms.TWO_SERVERS] == pytest.approx(
      1.1 * half_210 / 210, rel=1e-3)
  lines = text_lib.every_cell_section([cell])
  assert any(line.startswith(f"| english | {N:,} | 4 | 210.0 ± ")
             and "| 0.40 ± 0.25 |" in line and "| 1.10 ± 0.67 |" in line
             for line in lines)
  # N < 10^5: no cell is graded against the planned trie's target.
  assert not any("cells with n ≥ 10⁵" in line for line in lines)
  big = dataclasses.replace(cell, n=10**5)
  (summary,) = [line for line in text_lib.every_cell_section([big])
                if "cells with n ≥ 10⁵" in line]
  assert "at 0.45× central or more at 0 of the 1 cells" in summary
  assert "short at english n = 100,000 ε = 4 (0.400)" in summary


def test_several_words_line_names_the_planned_trie():
  def row(mechanism, words, false=(0, 0)):
    cell = runs.Cell("s140-multi", 87_914, mechanism, 4.0, (0, 1))
    return rows.Row(cell, tuple({"words": w, "false_words": f, "seed": s}
                                for s, (w, f) in enumerate(zip(words,
                                                               false))))
  table = [row("ps-truncated_geometric", [1400, 1420]),
           row(mechanisms.POISSON, [170, 178]),
           row(mechanisms.NOISY_K1, [470, 484]),
           row(mechanisms.NOISY_PLANNED, [1450, 1470], false=(1, 1))]
  (line,) = text_lib._multi_line(table, 4.0)  # pylint: disable=protected-access
  assert ("TrieHH Poisson 174 words, the noisy trie 477, the planned noisy "
          "trie (1 MB per client per run) 1,459 true words, partition "
          "selection (truncated geometric, one word counted per user) "
          "1,410") in line
  # pylint: disable-next=protected-access
  assert text_lib._multi_line(table[:1], 4.0) == []


def test_upload_weights_each_round_by_participation():
  assert mechanisms.upload([100.0, 300.0], [0.5, 0.1]) == {
      "bytes_round_max": 300.0, "bytes_per_user": 80.0}


def test_iblt_is_refused_where_corollary_1_has_no_batch():
  data = runs.plan(runs.Settings(users=(N,), count_users=(),
                                 large_count_users=(), sfp_users=(),
                                 iblt_users=(N,), tff_users=(),
                                 epsilons=(1.0,), others=False),
                   datasets_lib.DataCache(None)).data[("english", N)]
  with pytest.raises(mechanisms.Refused, match="too few for Theorem 1"):
    mechanisms.run(mechanisms.IBLT, data, 1.0, 1 / N**2, seed=0)
