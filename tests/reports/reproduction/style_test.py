"""Tests of reports.reproduction.style: its rules, and every figure the
project draws kept to them (drawn here from hand-made rows and records,
each figure caught before it is closed)."""

import json
import math

import numpy as np
import pytest

from reports import plots
from reports import summary as analysis
from reports.beyond import counts as beyond_counts
from reports.beyond import figures as beyond_figures
from reports.beyond import runs as beyond_runs
from reports.field import figures as field_figures
from reports.field import mechanisms
from reports.field import populations
from reports.field import rows as field_rows
from reports.field import runs as field_runs
from reports.reproduction import figures
from reports.reproduction import numbers
from reports.reproduction import style

N = 1000


@pytest.fixture(name="drawn")
def _drawn(monkeypatch):
  """The figures saved while the test runs, kept open to be read."""
  kept, close = [], style.plt.close
  monkeypatch.setattr(style.plt, "close", kept.append)
  yield kept
  for fig in kept:
    close(fig)


def test_epsilon_colours_follow_the_colormap_in_order():
  epsilons = [0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0]
  along = [style.color_position(style.epsilon_color(e)) for e in epsilons]
  assert all(a < b for a, b in zip(along, along[1:])), along
  for none in (None, math.inf, math.nan, 0.0):
    assert style.epsilon_color(none) == style.NO_GUARANTEE
  assert math.isnan(style.color_position("tab:green"))  # off the colormap


def test_coinciding_curves_both_show():
  epsilons = [1.0, 4.0, 8.0]
  low, mid, high = (style.epsilon_line(e, epsilons) for e in epsilons)
  # The lower epsilon on top, the higher wider beneath, each its marker.
  assert low["zorder"] > mid["zorder"] > high["zorder"]
  assert low["lw"] < mid["lw"] < high["lw"]
  assert low["ms"] < mid["ms"] < high["ms"]
  assert len({low["marker"], mid["marker"], high["marker"]}) == 3


def test_problems_name_each_broken_rule():
  fig, ax = style.plt.subplots()
  ax.plot([1, 2], [1, 2], color=style.epsilon_color(8.0), label="ε=1")
  ax.plot([1, 2], [2, 1], color=style.epsilon_color(1.0), label="ε=8")
  ax.set_title("words found")
  ax.legend(fontsize=7)
  found = style.problems(fig)
  assert any("inside the axes" in p for p in found)
  assert any("do not say n" in p for p in found)
  style.legend(fig)
  fig.legends[0].get_texts()[0].set_fontsize(7)
  found = style.problems(fig)
  assert any("7 pt" in p for p in found)
  assert any("out of order" in p for p in found)
  style.plt.close(fig)

  fig, ax = style.plt.subplots()
  for e in (1.0, 8.0):
    ax.plot([1, 2], [e, e], label=f"ε={e:g}",
            **style.epsilon_line(e, [1.0, 8.0]))
  style.title(ax, style.about("English", N, delta="1/n²"))
  style.legend(fig)
  assert not style.problems(fig)
  style.plt.close(fig)


def _record(seed, epsilon, achieved, recall):
  return {"schema_version": 1, "algorithm": "triehh", "dataset": "d",
          "setting": "single", "n_users": N, "seed": seed, "run": 0,
          "epsilon": achieved, "delta": 1e-6, "target_epsilon": epsilon,
          "target_delta": 1e-6, "discovered": ["a"], "counts": [5.0],
          "seconds": 0.1, "engine": "fast", "theta": 10, "batch_size": 100,
          "levels": 11, "max_length": 10, "rounds": 5,
          "num_participants": 500,
          "metrics": {"recall@10": recall, "f1@10": recall,
                      "f1_paper@10": 2 * recall / (recall + 1),
                      "precision": 1.0, "num_discovered": 3.0},
          "config": {"algorithm": "triehh", "epsilon": epsilon}}


def _summarised(tmp_path, cells):
  path = tmp_path / "results.jsonl"
  path.write_text("".join(
      json.dumps(_record(seed, e, a, r)) + "\n"
      for e, a, r in cells for seed in range(2)))
  records, _ = analysis.load_runs([str(path)])
  groups = analysis.group_runs(records)
  return groups, analysis.metric_table(groups, 0.95)


# (target, achieved, recall@10): epsilon = 8 achieves what 4 does.
CEILING = [(1.0, 0.9999, 0.5), (4.0, 3.99998, 0.9), (8.0, 4.04, 0.9)]


def test_a_target_above_the_ceiling_says_what_it_achieves(tmp_path):
  groups, _ = _summarised(tmp_path, CEILING)
  by_target = {g.get("epsilon"): g for g in groups}
  assert analysis.ceiling(by_target[8.0]) == pytest.approx(4.04)
  assert analysis.epsilon_text(by_target[8.0]) == (
      "8 (ceiling: achieves 4.04)")
  assert "epsilon=8 (ceiling: achieves 4.04)" in by_target[8.0].label
  # At (or a calibration's rounding below) its target: no ceiling.
  for target in (1.0, 4.0):
    assert analysis.ceiling(by_target[target]) is None
    assert analysis.epsilon_text(by_target[target]) == f"{target:g}"
    assert "ceiling" not in by_target[target].label
  note = analysis.ceiling_note(groups)
  assert note.count("achieves") == 1 and "epsilon=8, achieves 4.04" in note
  assert analysis.ceiling_note([by_target[1.0], by_target[4.0]]) is None


def test_the_summary_figures_keep_the_rules_and_name_the_ceiling(
    tmp_path, drawn):
  groups, table = _summarised(tmp_path, CEILING)
  lines = plots.draw(str(tmp_path), groups, table, None, 0.95)
  assert sum(line.startswith("wrote") for line in lines) == 4, lines
  assert len(drawn) == 4
  for fig in drawn:
    assert not style.problems(fig), style.problems(fig)
    texts = [t.get_text() for box in fig.legends for t in box.get_texts()]
    assert any("ceiling" in t and "4.04" in t for t in texts), texts
    assert not any("ε=1 (ceiling" in t or "ε=4 (ceiling" in t
                   for t in texts), texts


def _field_row(population, n, mechanism, epsilon, words):
  cell = field_runs.Cell(population, n, mechanism, epsilon, (0, 1))
  return field_rows.Row(cell, tuple({"words": w, "false_words": 0, "seed": s}
                                    for s, w in enumerate(words)))


def test_the_field_figures_keep_the_rules(tmp_path, drawn):
  table = [_field_row(populations.ENGLISH, n, name, e, [10 * e * n / 1e3 + i,
                                                        11 * e * n / 1e3])
           for i, name in enumerate(mechanisms.MECHANISMS)
           for n in (10**3, 10**4) for e in (1.0, 4.0)]
  field_figures.words_vs_epsilon(table, 10**4, str(tmp_path / "e.png"))
  field_figures.words_vs_n(table, 4.0, str(tmp_path / "n.png"))
  assert len(drawn) == 2
  for fig in drawn:
    assert not style.problems(fig), style.problems(fig)
  assert "n = 1,000 to 10,000" in drawn[1].axes[0].get_title()


def test_the_beyond_figures_keep_the_rules(tmp_path, drawn):
  scores = [{"recall@10": 0.9, "recall@50": 0.5, "recall@100": 0.3,
             "count_error@10": 1e-3,
             **{f"f1@{k}": 1 / k for k in beyond_runs.F1_KS}}] * 2
  f1_rows = [dict(data="default data", n=N, epsilon=e, algorithm=a,
                  scores=scores)
             for e in (1.0, 4.0) for a in ("TrieHH, θ=14, m=620",
                                           "IBLT, 1 round, k=14")]
  beyond_figures.f1_figure(f1_rows, str(tmp_path / "f1.png"))
  passes = [dict(data="default data (n = 1,000)", n=N, passes=p,
                 scores=scores, error=None) for p in (1, 2)]
  beyond_figures.passes_figure(passes, str(tmp_path / "p.png"), 4.0)
  online = [dict(calibrate_to=c, n=N, fraction=f, scores=scores,
                 epsilons=[4.0, 4.0])
            for c in ("online", "n") for f in (0.5, 1.0)]
  beyond_figures.availability_figure(online, str(tmp_path / "a.png"), 4.0)
  count_rows = [dict(data="default data", n=N, role=role, epsilon=e,
                     share=share, scores=scores)
                for role, share in ((beyond_counts.TRIEHH_COUNTS, 0.1),
                                    (beyond_counts.SFP_COUNTS, None))
                for e in (1.0, 4.0)]
  beyond_figures.counts_figure(count_rows, str(tmp_path / "c.png"), 4.0)
  assert len(drawn) == 4
  for fig in drawn:
    assert not style.problems(fig), style.problems(fig)


def test_the_papers_figures_keep_the_rules(tmp_path, drawn):
  truth = {w: c for w, c in zip("abcdefghij", (400, 200, 100, 80, 60, 40,
                                               30, 20, 10, 5))}
  def series(epsilon, found):
    records = [{"discovered": found[:k], "max_length": 10, "n_users": N,
                "target_delta": 1 / N**2, "batch_size": 100, "theta": 10,
                "levels": 11} for k in (len(found), len(found) - 1)]
    return numbers.Series("triehh", "multi", epsilon, None, records, truth,
                          N)
  chosen = [series(1.0, list("abc")), series(4.0, list("abcdef")),
            series(8.0, list("abcdef"))]
  figures.frequency(str(tmp_path / "f.png"), chosen, "Several words", False)
  figures.top_k(str(tmp_path / "k.png"), chosen, 10, "recall",
                "Recall of the top K")
  figures.fix_prob(str(tmp_path / "x.png"), (1e-3, 1e-2),
                   {1.0: [10**6, 10**5], 4.0: [10**5, 10**4]})
  assert len(drawn) == 3
  for fig in drawn:
    assert not style.problems(fig), style.problems(fig)
  assert "n = 1,000, δ = 1/n²" in drawn[0].axes[0].get_title()
  # epsilon 8 (wider) beneath epsilon 4 where their curves coincide.
  lines = {l.get_label(): l for l in drawn[1].axes[0].get_lines()}
  assert lines["TrieHH, ε=4"].get_zorder() > lines["TrieHH, ε=8"].get_zorder()
  assert lines["TrieHH, ε=4"].get_linewidth() < (
      lines["TrieHH, ε=8"].get_linewidth())
  assert np.allclose(lines["TrieHH, ε=4"].get_ydata(),
                     lines["TrieHH, ε=8"].get_ydata())
