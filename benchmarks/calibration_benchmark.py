"""The time to a first answer: calibrations from a cold cache.

Three measures, against the targets of issue 37 (section 3, "The first
answer", and section 2, counting):

1. The README's library example (its first ``python`` block under
   "## Library", read from README.md) run as a new process with an empty
   cache directory, as a user's first command runs: no calibration stored
   on disk, the package's shipped table (triehh/theory/calibrations.json)
   read and each answer checked by the accountant. The median wall time
   over ``--repeats`` processes (target: at most 1 s at a load below 2;
   the load average is printed beside it), and within it the library's
   imports (timed first) and the example after them.
2. ``discover(users, Target(4), counts=True)`` against ``discover(users,
   Target(4))`` on the README's users, side by side in this process, each
   from cold in-process caches, no calibration store and no shipped table
   (every calibration searched): the medians and their ratio (target:
   counting at most twice discovery).
3. Poisson calibration searched from cold caches (n = 10^4, epsilon = 4,
   delta = 1/n^2) for several L: the seconds per L (calibration time
   bounded in L).

  python -m benchmarks.calibration_benchmark --repeats=5
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

import triehh
from triehh.theory import calibration_store
from triehh.theory import counting
from triehh.theory import crowding
from triehh.theory import dp_events
from triehh.theory import policy
from triehh.theory import poisson
from triehh.theory import poisson_calibration

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 5, "Repeats of each measure.", lower_bound=1)
flags.DEFINE_list("levels", ["5", "11", "21", "34"],
                  "L (trie levels) of the calibration-time measure.")
flags.DEFINE_list("measures", ["readme", "counts", "levels"],
                  "Measures to run: readme, counts, levels.")

# Issue 37, section 3 ("The first answer") and section 2 (counting).
README_TARGET_SECONDS = 1.0
COUNTS_TARGET_RATIO = 2.0
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The README's users (its library example).
USERS = (["sun"] * 3000 + ["moon"] * 2000 + ["star"] * 1000
         + [f"w{i}" for i in range(4000)])


def readme_example() -> str:
  """The first ``python`` block of README.md's "## Library" section."""
  with open(os.path.join(_ROOT, "README.md"), encoding="utf-8") as f:
    text = f.read()
  section = text[text.index("## Library"):]
  found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
  if found is None:
    raise ValueError("README.md's Library section has no python block")
  return found.group(1)


# Run first in the new process: the modules the example's calls import
# (dp_accounting, hence scipy.signal and scipy.stats, among them), timed.
_IMPORTS = ("import time as _time\n_start = _time.perf_counter()\n"
            "import triehh.discovery.discover, triehh.discovery.counts, "
            "triehh.theory.dp_events, triehh.theory.policy\n"
            "_imported = _time.perf_counter()\n")
_SPLIT = ("\nimport sys as _sys\n_sys.stderr.write(f'split {_imported - _start}"
          " {_time.perf_counter() - _imported}\\n')\n")


def readme_seconds(code: str) -> tuple[float, float, float]:
  """Wall time of ``code`` run as a new Python process whose cache
  directory is new and empty (no stored calibration), and within it the
  seconds of the library's imports and of ``code`` after them."""
  with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _IMPORTS + code + _SPLIT],
                          check=True, env=env, cwd=_ROOT, text=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    total = time.perf_counter() - start
  line = [l for l in proc.stderr.splitlines() if l.startswith("split ")][-1]
  imports, work = (float(v) for v in line.split()[1:])
  return total, imports, work


def clear_caches() -> None:
  """Every in-process cache of the calibrations and accountants."""
  for cached in (poisson._level_loss, poisson._run_loss,  # pylint: disable=protected-access
                 poisson_calibration.calibrate,
                 poisson_calibration._search,  # pylint: disable=protected-access
                 counting.gaussian_pld, counting.calibrate_noise,
                 counting.discovery_pld, counting._compose,  # pylint: disable=protected-access
                 counting.calibrate_total, dp_events.level_pld,
                 policy._resolve,  # pylint: disable=protected-access
                 crowding.reverse_lower_bound):
    if hasattr(cached, "cache_clear"):  # older code may not cache it
      cached.cache_clear()


def cold_seconds(function) -> float:
  """Wall time of ``function()`` from cleared caches."""
  clear_caches()
  start = time.perf_counter()
  function()
  return time.perf_counter() - start


def _load() -> str:
  return "load average %.2f, %.2f, %.2f" % os.getloadavg()


def measure_readme() -> None:
  code = readme_example()
  runs = [readme_seconds(code) for _ in range(FLAGS.repeats)]
  total, imports, work = (statistics.median(r[i] for r in runs)
                          for i in range(3))
  print(f"README library example, new process, empty cache: median "
        f"{total:.2f} s over {FLAGS.repeats} (min "
        f"{min(r[0] for r in runs):.2f} s; target "
        f"{README_TARGET_SECONDS:g} s, issue 37 section 3; {_load()}): the "
        f"library's imports {imports:.2f} s, then the example {work:.2f} s")


def measure_counts() -> None:
  target = triehh.Target(4.0)
  population = triehh.Population.from_user_words(USERS).encode()
  discover, counted = [], []
  for seed in range(FLAGS.repeats):  # side by side, alternating
    discover.append(cold_seconds(
        lambda s=seed: triehh.discover(population, target, seed=s)))
    counted.append(cold_seconds(
        lambda s=seed: triehh.discover(population, target, seed=s,
                                       counts=True)))
  d, c = statistics.median(discover), statistics.median(counted)
  print(f"cold caches, README users: discover {d:.3f} s, with counts=True "
        f"{c:.3f} s: {c / d:.2f}x (target at most {COUNTS_TARGET_RATIO:g}x, "
        f"issue 37 section 2; {_load()})")


def measure_levels() -> None:
  for levels in (int(v) for v in FLAGS.levels):
    times = [cold_seconds(lambda l=levels: poisson_calibration.calibrate(
        10_000, l, 4.0, 1e-8)) for _ in range(FLAGS.repeats)]
    print(f"Poisson calibration, cold, n=10^4, epsilon=4, delta=1e-8, "
          f"L={levels}: median {statistics.median(times):.3f} s")


def main(argv):
  del argv
  # This process: never a stored or shipped answer (the README's new
  # process reads the shipped table, as a user's first command does).
  calibration_store.configure(None, table=False)
  measures = {"readme": measure_readme, "counts": measure_counts,
              "levels": measure_levels}
  for name in FLAGS.measures:
    if name not in measures:
      raise app.UsageError(f"--measures: unknown {name!r}; one of "
                           f"{', '.join(measures)}")
    measures[name]()


if __name__ == "__main__":
  app.run(main)
