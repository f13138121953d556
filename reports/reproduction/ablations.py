"""REPORT.md's ablations: each difference from the paper, its cause varied.

Where ours differs from the paper beyond the interval, the report does not
assert why: it shows the number as the suspected cause varies, from runs
the reproduction made (``experiments.reproduce_paper`` plans them), or says
"hypothesis, not measured" where no run varied it.

* the one-word populations' **tail** (the part below the published top 100
  that we built: ``sample``, ``zipf``, ``wordfreq``;
  :mod:`triehh.data.paper_populations`), for Table 2 and the single-word
  claims, TrieHH and SFP alike;
* the **levels**: how many of the published top-50 words are longer than the
  runs' L characters, and the recall ceiling that sets;
* for several words: **n** (the sample's users, the 659,775-user resample,
  optionally more) and the **accounting** (ours, L·δ₁ for per-round redraws;
  the paper's Corollary 2; ``word_choice="per_run"``), with θ, m and the
  achieved δ of every row, and facts of the data computed from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reports.reproduction import numbers
from triehh.core import metrics

NOT_MEASURED = "hypothesis, not measured"
# What each tail is, for the table of Table 2 on the tails.
TAIL_TEXT = {
    "sample": "`sample`, the Sentiment140 sample's OOV counts, capped below "
              "the head (the rows above)",
    "zipf": "`zipf`, a Zipf law f(r) = C·r^−s fitted to the published top "
            "100 (log-log least squares) and extrapolated rank by rank "
            "below it, the ranks named by the sample's tail words and then "
            "wordfreq's, scaled up to the remaining mass where the names "
            "run out (the factor is in Data)",
    "wordfreq": "`wordfreq`, wordfreq's English frequencies of the words "
                "outside the 50k-word dictionary (rare English words, not "
                "Twitter's out-of-vocabulary tokens)"}
OTHER_TAILS = ("zipf", "wordfreq")
MULTI_FIGURES = ("multi", "multi-n", "multi-large")
VARIANTS = (("", "ours: per-round redraws, δ = L·δ₁ (proven, one "
                 "direction)"),
            (numbers.PAPER_ACCOUNTING, "the paper's accounting, not covered "
             "by a proof for per-round redraws (Corollary 2: θ and m of "
             "Corollary 1 at the full δ)"),
            (numbers.PER_RUN, "`word_choice=\"per_run\"` (Theorem 2 with the "
             "paper's δ, proven)"))


def _metric(s: numbers.Series, metric: str) -> np.ndarray:
  return numbers.metric_of_runs(s, metric)


def tail_values(series: Sequence[numbers.Series], algorithm: str,
                epsilon: float, top_t: int | None, metric: str,
                figure: str = "oov", digits: int = 2) -> list[str]:
  """``"<tail>: mean ± half"`` of ``metric`` on each other tail that ran."""
  out = []
  for tail in OTHER_TAILS:
    s = numbers.find(series, algorithm, figure, epsilon, top_t, tail=tail)
    if s is not None:
      out.append(f"{tail} tail {numbers.stat(_metric(s, metric), digits)[2]}")
  return out


def table2_why(series: Sequence[numbers.Series], s: numbers.Series,
               paper: float, metric: str, digits: int) -> str:
  """The measured ablation of one Table 2 number, if it differs from the
  paper's beyond the interval (``""`` if not)."""
  mean, half, _ = numbers.stat(_metric(s, metric), digits)
  if numbers.within(paper, mean, half):
    return ""
  name = metric.split("@")[0]
  others = tail_values(series, s.algorithm, s.epsilon, s.top_t, metric,
                       digits=digits)
  if not others:
    return (f"{mean - paper:+.{digits}f} {name}; {NOT_MEASURED}: the tail "
            "we built (no run on another tail)")
  inside = [t for t in OTHER_TAILS if _within_on(series, s, t, paper, metric,
                                                  digits)]
  verdict = (f"the paper's value is within the interval on the "
             f"{' and '.join(inside)} tail" + ("s" if len(inside) > 1 else "")
             if inside else "no tail brings the paper's "
             "value within the interval")
  return (f"{mean - paper:+.{digits}f} {name}; tail varied: "
          + ", ".join(others) + f" ({verdict})")


def _within_on(series, s, tail, paper, metric, digits) -> bool:
  other = numbers.find(series, s.algorithm, s.figure, s.epsilon, s.top_t,
                       tail=tail)
  if other is None:
    return False
  mean, half, _ = numbers.stat(_metric(other, metric), digits)
  return numbers.within(paper, mean, half)


def level_ceiling(s: numbers.Series, k: int = 50) -> str:
  """How many of the top-``k`` words are longer than the runs' L, and the
  recall@k ceiling that sets."""
  max_length = int(s.records[0]["max_length"])
  top = metrics.top_k(s.truth, k)
  longer = [w for w in top if len(w) > max_length]
  return (f"{len(longer)} of the top {len(top)} words are longer than "
          f"L = {max_length} characters, so recall@{k} ≤ "
          f"{1 - len(longer) / len(top):.2f} at any ε (measured on the "
          "published list)")


def table2_tails(lines: list[str], series: Sequence[numbers.Series]) -> None:
  """Table 2's rows on every tail (the ablation of the tail we built)."""
  rows, ran = [], set()
  for (algorithm, t, epsilon), (p_recall, p_prec) in (
      numbers.PAPER_TABLE2.items()):
    for tail in ("sample",) + OTHER_TAILS:
      s = numbers.find(series, algorithm, "oov", epsilon, t, tail=tail)
      if s is None:
        continue
      ran.add(tail)
      name = "TrieHH" if algorithm == "triehh" else f"SFP (T={t})"
      _, _, r_text = numbers.stat(_metric(s, "recall@50"))
      _, _, q_text = numbers.stat(_metric(s, "precision"), 3)
      rows.append(f"| {name} | {epsilon:g} | {numbers.TAIL_NAMES[tail]} | "
                  f"{p_recall} | {r_text} | {p_prec} | {q_text} | {s.runs} "
                  f"| {numbers.data_label('oov', tail)} |")
  if not any(numbers.find(series, a, "oov", e, t, tail=tail)
             for (a, t, e) in numbers.PAPER_TABLE2 for tail in OTHER_TAILS):
    lines += ["### Table 2 on other tails", "", f"Not run ({NOT_MEASURED}: "
              "how much of the rows above depends on the tail we built).",
              ""]
    return
  lines += [f"### Table 2 on {len(ran)} tails (ablation of the tail we "
            "built)", "",
            "The same head (the paper's published OOV top 100, 9.2 % of "
            "users), the rest of the users on the tails we built "
            "(`triehh.data.paper_populations`, option `tail`): "
            + "; ".join(TAIL_TEXT[t] for t in ("sample",) + OTHER_TAILS
                        if t in ran) + ". How far a row "
            "moves across the tails is how much of it depends on the part "
            "we invented. Means ± 95% intervals.", "",
            "| algorithm | ε | tail | paper recall@50 | ours | paper "
            "precision | ours | runs | data |",
            "|---|---|---|---|---|---|---|---|---|"] + rows + [""]


def single_claim_tails(series: Sequence[numbers.Series], algorithm: str,
                       top_t: int | None) -> str:
  """The single-word F1@100 claim at ε = 4 on the other tails."""
  parts = []
  for tail in OTHER_TAILS:
    s = numbers.find(series, algorithm, "single", 4.0, top_t, tail=tail)
    if s is not None:
      curve = numbers.f1_paper_curves(s, 100)
      parts.append(f"{tail} tail {numbers.stat(curve[:, -1])[2]}")
  return ("; on other tails: " + ", ".join(parts)) if parts else ""


def several_words(lines: list[str], series: Sequence[numbers.Series],
                  epsilon: float = 4.0) -> None:
  """The several-words ablation: n and accounting, θ, m, achieved δ."""
  rows = []
  for figure in MULTI_FIGURES:
    for variant, what in VARIANTS:
      s = numbers.find(series, "triehh", figure, epsilon, variant=variant)
      if s is not None:
        rows.append(_multi_row(s, what))
  if not rows:
    return
  lines += ["### Several words, recall of the top 200 at ε = 4: n and the "
            "accounting varied", "",
            "Paper: close to 1 \"with ε = 4 and δ < 5·10⁻⁹\", on Sentiment140 "
            "as is (659,775 users). Each row is a set of runs of this "
            "reproduction; the δ column is what the row's accounting gives "
            "at its θ and m (per-round composition pays L·δ₁; Corollary 2 "
            "and Theorem 2 state Theorem 1's δ₁). Expected votes: m·F(w)/n "
            "for the 200th word w, the mean of its votes in a round, "
            "against θ.", "",
            "| n (data) | accounting | θ | m | δ achieved | recall of the "
            "top 200 | runs | 200th word: expected votes vs θ |",
            "|---|---|---|---|---|---|---|---|"] + rows + [""]
  lines += _multi_facts(series, epsilon) + [""]


def _multi_row(s: numbers.Series, what: str) -> str:
  record = s.records[0]
  theta, m, levels = (int(record["theta"]), int(record["batch_size"]),
                      int(record["levels"]))
  delta = numbers.achieved_delta(s)
  if s.variant == numbers.PAPER_ACCOUNTING:
    shown = (f"{numbers.sci(delta / levels)} (the paper's δ₁; ours for the "
             f"same run: L·δ₁ = {numbers.sci(delta)})")
  else:
    shown = numbers.sci(delta)
  stated = (delta / levels if s.variant == numbers.PAPER_ACCOUNTING
            else delta)
  shown += f", {numbers.versus_paper_delta(stated)}"
  _, _, recall = numbers.stat(numbers.recall_curves(s, 200)[:, -1])
  top = metrics.top_k(s.truth, 200)
  votes = m * s.truth[top[-1]] / s.n if len(top) == 200 else float("nan")
  return (f"| {s.n:,} ({_multi_name(s.figure)}) | {what} | {theta} | {m:,} | "
          f"{shown} | {recall} | {s.runs} | {votes:.1f} vs {theta} |")


def _multi_name(figure: str) -> str:
  return {"multi": "the sample's users", "multi-n": "resampled",
          "multi-large": "resampled"}[figure]


def _multi_facts(series: Sequence[numbers.Series], epsilon: float
                 ) -> list[str]:
  """Facts of the several-words data that bear on the rows above."""
  out = []
  base = [s for s in series if s.figure in MULTI_FIGURES and s.variant == ""
          and s.runs and s.algorithm == "triehh"]
  if not base:
    return out
  s = base[0]
  max_length = int(s.records[0]["max_length"])
  top = metrics.top_k(s.truth, 300)
  longest = max(len(w) for w in top)
  out.append(f"- Levels: the longest of the top {len(top)} words has "
             f"{longest} characters against L = {max_length}, so "
             + ("the levels cut none of them (the recall ceiling is 1.00; "
                "measured on the data)." if longest <= max_length else
                f"{sum(len(w) > max_length for w in top)} are cut."))
  out.append(f"- Bags: whether the full data spreads the top-200 words over "
             "its users' bags differently from the sample (an explanation "
             "an earlier version of this report gave) is a "
             f"{NOT_MEASURED}: no run here has the full data. The resamples "
             "keep each user's bag, so F(w)/n is the sample's in "
             "expectation and the rows differ only in n.")
  recalls = []
  for figure in MULTI_FIGURES:
    r = numbers.find(series, "triehh", figure, epsilon)
    if r is not None:
      recalls.append(f"{numbers.stat(numbers.recall_curves(r, 200)[:, -1])[2]}"
                     f" at n = {r.n:,}")
  if recalls:
    out.append("- n, with our accounting: " + ", ".join(recalls) + ".")
  return out
