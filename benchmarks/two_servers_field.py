"""The two-server mechanism against central partition selection: true
words released on the field benchmark's English population.

For each (n, epsilon) of ``--cells``, delta = 1/n^2 and n public as in
``FIELD.md``:
``--runs`` seeded runs of each two-server plan (``triehh.discover(pop,
triehh.TwoServerTarget(...), seed=s)``, the fast engine) and of central
partition selection, truncated geometric, one word per user counted
(``reports.field.mechanisms.run("ps-truncated_geometric", ...)``, the
field benchmark's own runner). A true word is a released word some user
holds. Printed: mean ± 95% Student-t half-width of the true words, false
words, the ratio of the means (its interval from both relative
half-widths), the upload per client and the guarantee. No setting is tuned
on the population: the plans are ``docs/two-servers.md``'s rule.

  python -m benchmarks.two_servers_field --cells=1e6:4,1e6:1,1e5:1,1e5:4
"""

from __future__ import annotations

import time

import numpy as np
from absl import app
from absl import flags

import triehh
from benchmarks import field_cells
from reports.field import mechanisms as field_mechanisms
from triehh.data import datasets as datasets_lib

FLAGS = flags.FLAGS
flags.DEFINE_list("cells", ["1e6:4", "1e6:1", "1e5:1", "1e5:4"],
                  "n:epsilon cells of the English population, or "
                  "population:epsilon (s140-multi, s140-single, paper-single: "
                  "their own n).")
flags.DEFINE_integer("runs", 3, "Seeded runs per mechanism and cell.",
                     lower_bound=2)
flags.DEFINE_string("cache_dir", None, "The data sets' cache.")
flags.DEFINE_boolean("variants", True, "Also the walk in steps of 5 "
                     "characters and the discrete Gaussian.")
flags.DEFINE_string("only", None, "Run only the plans whose name contains "
                    "this text (for example 'verify').")
flags.DEFINE_list("verification_splits", ["weighted"],
                  "The verifying plans' thresholds: 'weighted' (per word, "
                  "from its discovery count), 'even' (one for all), or "
                  "both, each a row.")
flags.DEFINE_list("live_passes", None,
                  "The verifying plans' noise-only live prefixes a step "
                  "passes, over its frontier cap (TwoServerTarget."
                  "live_passes), each a row; default: the target's.")
# Under a work bound the first step is as wide as the bound allows from the
# root (4 characters at 10^7, 3 at 10^5, English); "even" plans keep it at
# chars_per_step, as the walk did before that rule.
PLANS = {
    "two servers, discrete Laplace, one step": {},
    "two servers, discrete Laplace, steps of 5 characters": {
        "chars_per_step": 5},
    "two servers, discrete Laplace, steps of 2 characters, 10^7 "
    "candidates a step": {"chars_per_step": 2, "max_candidates": 10**7,
                          "verify": False},
    "two servers, discrete Laplace, steps of 1 character, 10^5 "
    "candidates a step": {"chars_per_step": 1, "max_candidates": 10**5,
                          "verify": False},
    "two servers, discrete Laplace, steps of 2 characters, 10^7 "
    "candidates a step, discover then verify": {
        "chars_per_step": 2, "max_candidates": 10**7, "verify": True},
    "two servers, discrete Laplace, steps of 1 character, 10^5 "
    "candidates a step, discover then verify": {
        "chars_per_step": 1, "max_candidates": 10**5, "verify": True},
    "two servers, discrete Laplace, even steps of 2 characters, 10^7 "
    "candidates a step": {"chars_per_step": 2, "first_step_chars": 2,
                          "max_candidates": 10**7, "verify": False},
    "two servers, discrete Laplace, even steps of 1 character, 10^5 "
    "candidates a step": {"chars_per_step": 1, "first_step_chars": 1,
                          "max_candidates": 10**5, "verify": False},
    "two servers, discrete Laplace, even steps of 2 characters, 10^7 "
    "candidates a step, discover then verify": {
        "chars_per_step": 2, "first_step_chars": 2, "max_candidates": 10**7,
        "verify": True},
    "two servers, discrete Laplace, even steps of 1 character, 10^5 "
    "candidates a step, discover then verify": {
        "chars_per_step": 1, "first_step_chars": 1, "max_candidates": 10**5,
        "verify": True},
    "two servers, discrete Gaussian, one step": {"noise": "gaussian"},
}


def _two_servers(data, epsilon, delta, options, seed) -> dict:
  alphabet = "".join(data.population.alphabet.characters)
  result = triehh.discover(data.population, triehh.TwoServerTarget(
      epsilon, delta=delta, population_size=data.n, alphabet=alphabet,
      **options), max_length=data.population.max_length, seed=seed)
  true = sum(1 for w in result.words if data.truth.get(w, 0) > 0)
  return dict(true=true, false=len(result.words) - true,
              upload=result.params.upload_bytes,
              guarantee=field_mechanisms.label(result.guarantee),
              candidates=sum(r.candidates for r in result.per_round))


def _with_splits(plans: dict, splits, passes=None) -> dict:
  """Each verifying plan once per split of ``splits`` and live passes of
  ``passes`` (None: the target's), its label saying which where there are
  several."""
  out = {}
  for label, options in plans.items():
    if not options.get("verify"):
      out[label] = options
      continue
    for split in splits:
      for share in passes or [None]:
        name = label if len(splits) == 1 else f"{label}, {split} split"
        extra = dict(verification_split=split)
        if share is not None:
          extra["live_passes"] = float(share)
          name += f", live passes {share} x the cap" if len(passes) > 1 else ""
        out[name] = dict(options, **extra)
  return out


def main(argv):
  del argv
  datasets = datasets_lib.DataCache(FLAGS.cache_dir)
  plans = PLANS if FLAGS.variants else dict(list(PLANS.items())[:1])
  if FLAGS.only:
    plans = {k: v for k, v in plans.items() if FLAGS.only in k}
  plans = _with_splits(plans, FLAGS.verification_splits, FLAGS.live_passes)
  print("| population, n | ε | mechanism | runs | true words | false words | ratio to "
        "central | upload per client (bytes) | candidates per run | "
        "guarantee |")
  print("|---|---|---|---|---|---|---|---|---|---|")
  for cell in FLAGS.cells:
    loaded = field_cells.load(cell, datasets)
    data, n, epsilon, delta = (loaded.data, loaded.n, loaded.epsilon,
                               loaded.delta)
    start = time.perf_counter()
    central = [field_cells.central(loaded, s) for s in range(FLAGS.runs)]
    c_mean, c_half = field_cells.interval(r["true"] for r in central)
    print(f"| {data.name}, {n:,} | {epsilon:g} | partition selection, truncated "
          f"geometric (central) | {FLAGS.runs} | {c_mean:,.1f} ± "
          f"{c_half:,.1f} | {np.mean([r['false'] for r in central]):.1f} | "
          f"1 | raw word | – | {central[0]['guarantee']} |", flush=True)
    for label, options in plans.items():
      runs = [_two_servers(data, epsilon, delta, options, s)
              for s in range(FLAGS.runs)]
      mean, half = field_cells.interval(r["true"] for r in runs)
      f_mean, f_half = field_cells.interval(r["false"] for r in runs)
      ratio, r_half = field_cells.ratio(mean, half, c_mean, c_half)
      print(f"| {data.name}, {n:,} | {epsilon:g} | {label} | {FLAGS.runs} | {mean:,.1f}"
            f" ± {half:,.1f} | {f_mean:.1f} ± {f_half:.1f} | **{ratio:.3f}"
            f"** ± {r_half:.3f} | {runs[0]['upload']:,} | "
            f"{runs[0]['candidates']:.3g} | {runs[0]['guarantee']} |",
            flush=True)
    print(f"<!-- {cell}: {time.perf_counter() - start:.0f} s -->", flush=True)


if __name__ == "__main__":
  app.run(main)
