"""The prose of ``FIELD.md``: its introduction, the moonshot, the
guarantees, what is left out and which mechanism to use when, each number
read from the rows (:mod:`reports.field.rows`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from reports.field import mechanisms as mech
from reports.field import populations
from reports.field import rows as rows_lib
from reports.field import runs as runs_lib

_ENGLISH = populations.ENGLISH


def _mechanism_bullets() -> list[str]:
  """Each mechanism and the library call that runs it."""
  return _federated_bullets() + _baseline_bullets()


def _federated_bullets() -> list[str]:
  """TrieHH, the noisy tries and the two servers, and their calls."""
  return [
      "- **TrieHH, fixed-size sampling** (the paper's): `triehh.discover("
      "pop, triehh.Target(ε, δ, sampling=\"fixed\"), seed=s)`.",
      "- **TrieHH, Poisson sampling**: `triehh.discover(pop, "
      "triehh.Target(ε, δ), seed=s)`.",
      "- **Noisy trie** (`docs/noisy-trie.md`): `triehh.discover(pop, "
      "triehh.NoisyTarget(ε, δ, false_positive_rate=α, chars_per_level=k), "
      "seed=s)`, k = 1 with α = 1e-5 and k = 2 with α = 1e-7; with "
      "`noise_multipliers=(4,)` (four times the noise on the first level), "
      "k = 2 with α = 1e-5 and k = 3 with α = 1e-7, settings picked by a "
      "sweep on the English population at n = 10⁶, ε = 4; and k = 1 in "
      "TensorFlow Federated (`engine=\"tff\"`, `noise=\"central\"` or "
      "`\"distributed\"`) on 1,000 users.",
      "- **Noisy trie, planned rounds** (`docs/noisy-trie.md`, \"Rounds "
      "within an upload budget\"): `triehh.discover(pop, "
      "triehh.NoisyTarget(ε, δ, population_size=n, upload_budget="
      "triehh.UploadBudget(1_000_000)), seed=s)`: each round's characters "
      "chosen from the public frontier so that a client uploads at most "
      "1 MB per run, its noise and thresholds planned from (n, L, the "
      "alphabet's size, ε, δ) before the data is read: discover then "
      "verify (discovery rounds at twice the noise pass words and prefixes "
      "loosely, one verification round decides the words) or the fixed "
      "rule, and a sampling rate q (1, 1/2, 1/4, halved while the prior "
      "finds more; 1 MB is then a client's expected bytes; below 1 also "
      "with rates adapted to the frontier) and the server's noise (the "
      "discrete Gaussian, or the discrete Laplace: pure ε, δ = 0, tried at "
      "the rule's best q), chosen by running the "
      "engine on a public prior at the declared n, L and alphabet size; "
      "constants chosen on that prior (`docs/noisy-trie.md` names the five "
      "cells a first prototype was tried on).",
      "- **Two servers** (`docs/two-servers.md`, a research prototype): "
      "`triehh.discover(pop, triehh.TwoServerTarget(ε, δ, "
      "population_size=n, alphabet=...), seed=s)`, the one-step walk on "
      "the fast engine: the law of two non-colluding servers each adding "
      "discrete Laplace noise to every string of up to L letters (no pair "
      "of servers can evaluate that many; `docs/two-servers.md` measures "
      "the plans they can); a client uploads two IDPF keys. And a plan "
      "they can run: `chars_per_step=2, max_candidates=10**7, "
      "verify=True`: a first step as wide as 10^7 candidates allow (4 "
      "characters for English), then steps of 2 under 10^7 candidates a "
      "step, all at twice the noise, then one step verifying the words "
      "found (`docs/two-servers.md`, \"Discover, then verify\").",
  ]


def _baseline_bullets() -> list[str]:
  """Central partition selection, SFP and IBLT, and their calls."""
  return [
      "- **Partition selection** (central, pipeline_dp's law): the library "
      "releases through `triehh.baselines.partition_selection."
      "select_words(pop, triehh.PartitionSelectionTarget(ε, δ, "
      "strategy=..., max_partitions_contributed=1))` (PipelineDP over "
      "python-dp); its rows here were drawn by `triehh.baselines."
      "partition_selection_law.select_words_by_law` with the same target "
      "and seed s, the same law for simulation: each word's users counted "
      "with numpy and the word kept with python-dp's own "
      "`probability_of_keep` of that count (tested equal in law to the "
      "PipelineDP path), milliseconds a run instead of seconds. Strategies "
      "truncated geometric, Laplace thresholding and Gaussian thresholding.",
      "- **SFP** (the paper's local-DP baseline, Apple's sequence fragment "
      "puzzle): `triehh.sfp_discover(pop, triehh.SFPTarget(ε, δ), "
      "seed=s)`, the paper's parameters (k = 2048, m = 1024, T = 20); each "
      "user sends one local report, the central (ε, δ) by amplification by "
      "shuffling.",
      "- **IBLT** (TFF's `tff.analytics.heavy_hitters.iblt`, k-anonymity, "
      "not differential privacy): `triehh.iblt_discover(pop, "
      f"triehh.IBLTTarget({mech.IBLT_K_ANONYMITY}, "
      "batch=triehh.Target(ε, δ)), seed=s)`, "
      "one round of TrieHH's Corollary 1 batch at (ε, δ) through "
      "TensorFlow Federated: its ε only sizes the batch.",
  ]


def introduction(settings: runs_lib.Settings) -> list[str]:
  """What runs, how it is scored, what every column is."""
  return [
      "The mechanisms that find the words many users hold under "
      "differential privacy, on the same populations, each run through the "
      "library's entry point (`reports.field.mechanisms`):", "",
      *_mechanism_bullets(), "",
      "Every cell takes δ = 1/n² of its population's n, given to the "
      "mechanism (n taken as public). The simulated mechanisms run "
      f"{settings.num_seeds} seeds ({settings.seed} on), partition selection "
      f"{settings.ps_seeds} seeds (its law drawn with numpy), SFP and IBLT "
      f"{settings.ps_seeds} seeds. Numbers are means "
      "± 95% Student-t intervals over those runs, "
      "from `results.jsonl` (one JSON line per run).", "",
      "Columns. *words released*: the output's size. *false words*: "
      "released words no user holds (the noisy trie's false positives; "
      "TrieHH and partition selection never release one). *recall@K*: the "
      "share of the population's true top K words (users holding the "
      "word; several words per user: the sum of the users' local "
      "frequencies; words longer than L included, which the tries cannot "
      "release) that were released. *precision*: the share of released "
      "words held by at least one user, over the runs that released any. "
      "*rounds*: TrieHH's trie levels "
      "grown, the noisy trie's rounds run, one central release for "
      "partition selection. *bytes per round (max)*: the largest vector a "
      "client uploads in a round: TrieHH's int32 vote vector over every "
      "extension of the trie's prefixes, padded to a power of two prefixes "
      "(as `BEYOND.md` counts it), the noisy trie's one-hot int32 vector "
      "over its candidate set (4·|C_r|; the planned noisy trie: its "
      "secure-sum blocks, each block's counts modulo its public window's "
      "size, packed into 64-bit ring elements), partition selection's raw "
      "word "
      "(UTF-8 bytes, mean over users), SFP's report (m = 1024 signs and "
      "two bytes of position and row), IBLT's sketch tensors. *bytes per "
      "user per run*: the sum "
      "over rounds of a round's vector times the chance a user takes part "
      "(fixed: m/n; Poisson: q; the noisy trie calibrates to q = 1 here: "
      "every user, every round; the planned noisy trie: the q it chose, "
      "or each round's where its rates adapt). "
      "*ms per run*: the median wall time of a run, the population built "
      "beforehand; the first run of a TrieHH cell calibrates θ and q "
      "(cached after), the first of a noisy trie cell its σ (the later "
      "seeds run on the same parameters), which the median leaves out. "
      "*guarantee*: the achieved (ε, δ), the directions proven and the "
      "neighbouring relations covered (`docs/privacy.md`; SFP's shuffling "
      "bound is for replace-one neighbours of a fixed n); the full labels "
      "are under Guarantees.", ""]


def _words(shot_row: rows_lib.Row | None) -> str:
  return rows_lib.ci(shot_row, "words", 1) if shot_row else "not run"


def _ratio(value: float) -> str:
  return "–" if math.isnan(value) else f"{value:.2f}"


def moonshot_section(shots: Sequence[rows_lib.Moonshot]) -> list[str]:
  """The ratios of words released to the best partition selection's."""
  lines = ["## The moonshot: federated against central", ""]
  if not shots:
    return lines + ["Not measured: it needs partition selection and the "
                    "noisy trie on the English population at the moonshot "
                    "epsilons.", ""]
  for shot in shots:
    strategies = "; ".join(
        f"{mech.LABELS[r.cell.mechanism].split(', ')[1]} "
        f"{_words(r)}" for r in shot.strategies)
    variants = sorted(shot.noisy.items(), key=lambda kv: -shot.ratio(kv[1]))
    two = list(shot.two_servers.items())
    lines += [
        f"**n = {shot.n:,}, ε = {shot.epsilon:g}, δ = {1 / shot.n**2:.3g} "
        f"(1/n²), one word per user (English)**, words some user holds "
        f"over the best partition selection's: {_shot_ratios(shot, variants)}"
        f"; TrieHH Poisson = **{_shot_ratio(shot, shot.poisson)}**."
        + (f" Under two non-colluding servers (another trust model, "
           f"`docs/two-servers.md`): {_shot_ratios(shot, two)}." if two
           else ""), "",
        f"Data used (words released, mean ± 95% CI over the runs of the "
        f"English table's rows at n = {shot.n:,}, ε = {shot.epsilon:g}): "
        f"partition selection {strategies} (best: "
        f"{mech.LABELS[shot.best.cell.mechanism].split(', ')[1]}); "
        f"{_shot_data(variants)}; TrieHH Poisson {_words(shot.poisson)}"
        + (f"; {_shot_data(two)}" if two else "")
        + ". Ratios are of the means, each mechanism's false words taken "
        "off its words, ± the 95% half-width from both rows' relative "
        "half-widths.", ""]
  return lines


# The mechanisms of the every-cell table, in its column order.
CELL_RATIO_MECHANISMS = (mech.NOISY_PLANNED, *mech.NOISY, mech.POISSON,
                         *mech.TWO_SERVER_NAMES)
# The planned trie's target: this ratio at n >= 10^5, epsilon >= 1.
PLANNED_TARGET = 0.45


def _ratio_ci(cell: rows_lib.CellRatios, name: str) -> str:
  return _with_half(cell.ratios.get(name, math.nan),
                    cell.halves.get(name, math.nan))


def _shot_ratio(shot: rows_lib.Moonshot, row) -> str:
  return _with_half(shot.ratio(row), shot.half(row))


def _shot_ratios(shot: rows_lib.Moonshot, named_rows) -> str:
  """``label = **ratio ± half**`` of each ``(mechanism, row)``."""
  return "; ".join(f"{mech.LABELS[name]} = **{_shot_ratio(shot, row)}**"
                   for name, row in named_rows)


def _shot_data(named_rows) -> str:
  """``label words (false words)`` of each ``(mechanism, row)``."""
  return "; ".join(f"{mech.LABELS[name]} {_words(row)} (false "
                   f"{rows_lib.ci(row, 'false_words', 1)})"
                   for name, row in named_rows)


def _with_half(value: float, half: float) -> str:
  """``value ± half`` to two decimals (the value alone without a half)."""
  if math.isnan(value) or math.isnan(half):
    return _ratio(value)
  return f"{value:.2f} ± {half:.2f}"


def every_cell_section(cells: Sequence[rows_lib.CellRatios]) -> list[str]:
  """Each federated mechanism's true words over central partition
  selection's best strategy at every cell where it ran, and where the
  planned trie is short of its target."""
  lines = ["## Federated against central, every cell", ""]
  if not cells:
    return lines + ["Not measured: no cell ran partition selection.", ""]
  names = [n for n in CELL_RATIO_MECHANISMS
           if any(n in c.ratios for c in cells)]
  lines += [
      "True words (released words some user holds) over the true words of "
      "the partition selection strategy that released the most, at every "
      "(population, n, ε) where partition selection ran; ratios of the "
      "means over the rows' seeds, ± the 95% half-width from both rows' "
      "relative half-widths (the rows below give each mean with its "
      "interval). Central releases words of any length, the tries at most "
      "L letters.", "",
      "| population | n | ε | central true words | "
      + " | ".join(mech.LABELS[n] for n in names) + " |",
      "|---|---|---|---|" + "---|" * len(names)]
  for c in cells:
    lines.append(
        f"| {c.population} | {c.n:,} | {c.epsilon:g} | "
        f"{rows_lib.ci(c.central, 'words', 1)} | "
        + " | ".join(_ratio_ci(c, n) for n in names) + " |")
  graded = [c for c in cells if c.n >= 10**5 and c.epsilon >= 1
            and mech.NOISY_PLANNED in c.ratios]
  short = [c for c in graded if c.ratios[mech.NOISY_PLANNED] < PLANNED_TARGET]
  if graded:
    where = "; ".join(
        f"{c.population} n = {c.n:,} ε = {c.epsilon:g} "
        f"({c.ratios[mech.NOISY_PLANNED]:.3f})" for c in short)
    lines += ["", f"{mech.LABELS[mech.NOISY_PLANNED]}: at "
              f"{PLANNED_TARGET:g}× central or more at "
              f"{len(graded) - len(short)} of the {len(graded)} cells with "
              f"n ≥ 10⁵ and ε ≥ 1" + (f"; short at {where}." if short
                                       else ".")]
  return lines + [""]


def guarantees_section(table: Sequence[rows_lib.Row]) -> list[str]:
  """Each mechanism's full guarantee label, at one representative cell."""
  lines = ["## Guarantees", "",
           "Each mechanism's guarantee as the library states it, at the "
           "English population's largest n and the ε nearest 4 it ran "
           "(the other cells differ in ε, δ and n only). TrieHH's covers "
           "the released words and the trie's prefixes, not the vote "
           "counts; the noisy trie's the words, the trie and every noisy "
           "count; partition selection's the released set.", ""]
  for name in mech.MECHANISMS:
    mine = [r for r in table if r.cell.mechanism == name and r.records]
    if not mine:
      continue
    row = min(mine, key=lambda r: (r.cell.population != _ENGLISH,
                                   -r.cell.n, abs(r.cell.epsilon - 4)))
    c = row.cell
    lines.append(f"- {mech.LABELS[name]} ({c.population}, n = {c.n:,}, "
                 f"ε = {c.epsilon:g}): {row.first('guarantee_full')}")
  return lines + [""]


def left_out(notes: Sequence[str]) -> list[str]:
  """What the benchmark does not run, and where those numbers are."""
  lines = [
      "## Left out", "",
      "- **IBLT** past its small populations: about 100 s a run at 10⁵ "
      "users through TensorFlow Federated. Its rows next to TrieHH (ε 1 "
      "and 4, the Sentiment140 sample and 10⁵ English users) are in "
      "`BEYOND.md` (a), its exact counts in `BEYOND.md` (d).",
      "- **SFP** on the paper's populations: its rows are in `REPORT.md` "
      "(the paper's tables, SFP T=20 and T=80) and `BEYOND.md` (d) (its "
      "count-mean-sketch counts)."]
  lines += [f"- {note}" for note in notes]
  return lines + [""]


def _mean(table, population, n, name, epsilon) -> float:
  row = rows_lib.find(table, population, n, name, epsilon)
  return row.mean("words") if row else math.nan


def _n(value: float, digits: int = 0) -> str:
  return "–" if math.isnan(value) else f"{value:,.{digits}f}"


def _times(a: float, b: float) -> str:
  return "–" if math.isnan(a) or math.isnan(b) or b == 0 else f"{a / b:.1f}×"


def _best_ps(table, population, n, epsilon) -> tuple[str, float]:
  found = [(row.mean("words"), row.cell.mechanism) for row in
           rows_lib.central_rows(table, population, n, epsilon)]
  if not found:
    return "–", math.nan
  words, name = max(found)
  return mech.LABELS[name].split(", ")[1], words


def _field_mean(table, population, n, name, epsilon, field) -> float:
  row = rows_lib.find(table, population, n, name, epsilon)
  return row.mean(field) if row else math.nan


# Long function: one paragraph per use case, each reading its numbers.
def which_to_use(table: Sequence[rows_lib.Row],
                 settings: runs_lib.Settings) -> list[str]:
  """Which mechanism to use when, from the measured rows."""
  lines = ["## Which to use when", ""]
  if not settings.users:
    return lines + ["(No English population was run.)", ""]
  big, small = max(settings.users), min(settings.users)
  eps = 4.0 if 4.0 in settings.epsilons else max(settings.epsilons)
  w = lambda name, n=big: _mean(table, _ENGLISH, n, name, eps)  # noqa: E731
  b = lambda name, field: _field_mean(  # noqa: E731
      table, _ENGLISH, big, name, eps, field)
  best_name, best = _best_ps(table, _ENGLISH, big, eps)
  _, best_small = _best_ps(table, _ENGLISH, small, eps)
  where = (f"English population, ε = {eps:g}, δ = 1/n², means of the "
           "table's rows")
  lines += [
      f"Numbers from the {where}.", "",
      "- **A trusted server may hold the users' raw words** (central DP): "
      f"partition selection. At n = {big:,} its best strategy "
      f"({best_name}) released {_n(best)} words, the noisy trie (k = 1) "
      f"{_n(w(mech.NOISY_K1))}, TrieHH Poisson {_n(w(mech.POISSON))}"
      + (f"; at n = {small:,}: {_n(best_small)}, "
         f"{_n(w(mech.NOISY_K1, small))} and {_n(w(mech.POISSON, small))}"
         if small != big else "")
      + ". It runs in one central pass over every user's word.",
      "- **The server must never see a raw word** (the federated "
      "constraint): TrieHH or the noisy trie, whose clients send vote "
      "vectors only. The noisy trie released "
      f"{_times(w(mech.NOISY_K1), w(mech.POISSON))} TrieHH Poisson's words "
      f"at n = {big:,}"
      + (f" ({_times(w(mech.NOISY_K1, small), w(mech.POISSON, small))} at "
         f"n = {small:,})" if small != big else "")
      + ", at a price: every user takes part in every round (q = 1), "
      f"{_n(b(mech.NOISY_K1, 'bytes_per_user'))} bytes per user per run "
      f"against TrieHH Poisson's {_n(b(mech.POISSON, 'bytes_per_user'))} "
      f"(k = 2: {_n(b(mech.NOISY_K2, 'bytes_per_user'))} bytes, rounds of "
      f"up to {_n(b(mech.NOISY_K2, 'bytes_round_max'))} bytes, for "
      f"{_n(w(mech.NOISY_K2))} words). Its Gaussian noise is added to "
      "exact sums by a trusted aggregator, or, with "
      "`noise=\"distributed\"`, as clients' Skellam shares summed "
      "securely modulo 2^b, accounted for that law (its own PLD), for "
      "neighbours that replace a user's words, with a stated minimum of "
      "delivered shares and dropout fraction (`docs/noisy-trie.md`). Its "
      "candidate set is every extension of the published prefixes, so its "
      "alphabet must be public, fixed before the data: the English list's "
      "(a–z and ') and the paper's characters are; the Sentiment140 rows "
      "take the sample's own characters, and their guarantee assumes those "
      "were fixed in advance.",
      "- **TrieHH: Poisson sampling rather than the paper's fixed-size "
      f"batches.** Poisson released {_n(w(mech.POISSON))} words at n = "
      f"{big:,} against fixed's {_n(w(mech.FIXED))}, and its guarantee is "
      "proven in both directions; fixed-size sampling's (Theorem 1) in "
      "one direction only (`docs/privacy.md`). Keep fixed to reproduce "
      "the paper.",
      "- **Precision.** TrieHH and partition selection release only words "
      "some user holds. The noisy trie at α = 1e-5 released "
      f"{_n(b(mech.NOISY_K1, 'false_words'), 1)} false words per run at "
      f"n = {big:,} (k = 2 at α = 1e-7: "
      f"{_n(b(mech.NOISY_K2, 'false_words'), 1)}); α trades them against "
      "the threshold."]
  lines += _first_level_line(table, big, eps, best)
  lines += _planned_line(table, big, eps, best)
  lines += _few_users_line(table, small, eps) if small != big else []
  lines += _saturation_line(table, big)
  lines += _multi_line(table, eps)
  return lines + [""]


def _first_level_line(table: Sequence[rows_lib.Row], n: int, eps: float,
                      best: float) -> list[str]:
  """The noisy tries with a noisier first level: words, false words and
  upload, at the largest English n."""
  parts = []
  for name in (mech.NOISY_K2_X4, mech.NOISY_K3_X4):
    row = rows_lib.find(table, _ENGLISH, n, name, eps)
    if row is None:
      continue
    parts.append(
        f"{mech.LABELS[name].split(', ', 1)[1]}: "
        f"{_n(rows_lib.true_words(row))} true words "
        f"({_ratio(rows_lib.true_words(row) / best)} of partition "
        f"selection's), {_n(row.mean('false_words'), 1)} false words a run, "
        f"rounds of up to {_n(row.mean('bytes_round_max'))} bytes a client")
  if not parts:
    return []
  return [f"- **Closest to central** (n = {n:,}, ε = {eps:g}): the noisy "
          "trie with four times the noise on its first level, "
          + "; ".join(parts) + ". Those settings were picked on this very "
          "cell (`docs/noisy-trie.md`); the rows at other n and ε show how "
          "they carry. Uploads of megabytes a round are the price."]


def _planned_line(table: Sequence[rows_lib.Row], n: int, eps: float,
                  best: float) -> list[str]:
  """The planned noisy trie: words, false words and upload within its
  budget, at the largest English n."""
  row = rows_lib.find(table, _ENGLISH, n, mech.NOISY_PLANNED, eps)
  if row is None:
    return []
  true = rows_lib.true_words(row)
  return [
      f"- **Within an upload budget** (n = {n:,}, ε = {eps:g}): the "
      f"planned noisy trie released {_n(true)} true words "
      f"({_ratio(true / best if best else math.nan)} of partition "
      "selection's) and "
      f"{_n(row.mean('false_words'), 1)} false words a run, a client "
      f"uploading rounds of up to {_n(row.mean('bytes_round_max'))} bytes "
      f"and {_n(row.mean('bytes_per_user'))} bytes over the run (its budget: "
      f"{mech.PLANNED_BYTES_PER_RUN:,}); its rule, rate and noise (the "
      "discrete Gaussian, or the discrete Laplace: pure ε, δ = 0) were "
      "chosen on a public prior, its constants too (`docs/noisy-trie.md` "
      "lists the five field cells a first prototype was tried on)."]


def _few_users_line(table: Sequence[rows_lib.Row], n: int,
                    eps: float) -> list[str]:
  """The smallest English population: what each mechanism released, and
  the epsilons where TrieHH's calibration refused it."""
  w = lambda name: _mean(table, _ENGLISH, n, name, eps)  # noqa: E731
  refused = sorted(r.cell.epsilon for r in table
                   if r.refused and r.cell.population == _ENGLISH
                   and r.cell.n == n and r.cell.mechanism == mech.FIXED)
  said = (f"; TrieHH fixed was refused at ε = "
          f"{', '.join(f'{e:g}' for e in refused)} (Theorem 1 needs more "
          "users)" if refused else "")
  return [
      f"- **Few users** (n = {n:,}, ε = {eps:g}): TrieHH fixed released "
      f"{_n(w(mech.FIXED), 1)} words, TrieHH Poisson {_n(w(mech.POISSON), 1)}"
      f", the noisy trie {_n(w(mech.NOISY_K1), 1)}, partition selection "
      f"{_n(_best_ps(table, _ENGLISH, n, eps)[1], 1)}{said}."]


def _saturation_line(table: Sequence[rows_lib.Row], n: int) -> list[str]:
  """TrieHH Poisson's cells whose calibration left budget unused (achieved
  epsilon below 90% of the target), at the largest English n."""
  short = [r for r in table if r.records and r.cell.population == _ENGLISH
           and r.cell.n == n and r.cell.mechanism == mech.POISSON
           and r.mean("achieved_epsilon") < 0.9 * r.cell.epsilon]
  if not short:
    return []
  cells = "; ".join(
      f"target ε = {r.cell.epsilon:g}: achieved "
      f"{r.mean('achieved_epsilon'):.3g} with {r.first('setting')}, "
      f"{_n(r.mean('words'))} words (noisy trie: "
      f"{_n(_mean(table, _ENGLISH, n, mech.NOISY_K1, r.cell.epsilon))})"
      for r in short)
  return [f"- **Large ε.** TrieHH Poisson stops using the budget at n = "
          f"{n:,}: {cells}. Past that point the noisy trie (or more users) "
          "is what releases more words."]


def _multi_line(table: Sequence[rows_lib.Row], eps: float) -> list[str]:
  """Several words per user (the Sentiment140 sample), when it ran."""
  multi = populations.S140_MULTI
  if rows_lib.find(table, multi, None, mech.POISSON, eps) is None:
    return []
  w = lambda name: _mean(table, multi, None, name, eps)  # noqa: E731
  best_name, best = _best_ps(table, multi, None, eps)
  planned = rows_lib.find(table, multi, None, mech.NOISY_PLANNED, eps)
  within = (f", the planned noisy trie (1 MB per client per run) "
            f"{_n(rows_lib.true_words(planned))} true words"
            if planned is not None else "")
  return [
      "- **Several words per user** (the Sentiment140 sample, ε = "
      f"{eps:g}): TrieHH Poisson {_n(w(mech.POISSON))} words, the noisy "
      f"trie {_n(w(mech.NOISY_K1))}{within}, partition selection "
      f"({best_name}, one word counted per user) {_n(best)}: each user "
      "votes in every round of a trie, once in partition selection."]
