"""Benchmark of the fast engine on synthetic Zipf populations, by scale.

One-word populations (each user holds one word of the English list, with
probability proportional to rank^-s), at epsilon = 4 and delta = 1/n^2. For
each n in ``--sizes`` it prints the median wall and CPU time of one full
TrieHH run and its peak traced memory, for

* count level: the engine's path (:func:`triehh.engines.fast.run`): each
  round draws the sampled users per cell at once; timed alternating with
  the user-level runs and also alone (runs one after another, whose caches
  the user-level runs do not evict);
* user level: the same engine and population with each round's users drawn
  one by one (``Generator.choice``) and their votes counted (the sampler it
  used before), in the same process, runs alternating (same seeds).

Sizes in ``--count_only_sizes`` are built from per-word user counts
(:meth:`Population.from_word_frequencies`, no per-user array) and run at
count level only. Then the scaling exponent of each, and for several-word
users (``--several_words_sizes``, 1 to 3 words each), per size:

* the whole run with :func:`triehh.engines.sampling.words_of` as it is (a few steps
  through each sampled user's own word counts) next to the search of the
  whole cumulative-count array it replaced, runs alternating (same seeds,
  so the same words: the two runs' heavy hitters are checked equal);
* the user sampler alone (step 1b, one ``Generator.choice``) at the run's
  batch size, next to a sorted exact sampler (draws with replacement,
  sorted, then exact top-ups until m are distinct) and the floor of its
  essential operations (``integers`` of m values, then ``sort``); sorted
  users were 8-13 % slower over a whole run once ``words_of`` stopped
  searching the whole array, so the contract keeps ``choice``;
* the fused per-round table next to the three gathers it replaced.

Before all that, for each n in ``--floor_sizes`` (one-word, count level)
and each sampling of ``--floor_samplings`` (fixed-size batches, the
paper's; Poisson, ``discover``'s default, whose rounds draw the binomial
alone): the engine's median time per run next to its floor,
``rng.binomial`` over the same cells (per round, one call over the occupied
cells that the run drew), and their ratio; and, for scale, every draw of
the contract alone (that binomial, then the top-up's ``choice`` and its
mapping to cells, :func:`triehh.engines.thinning.thinned_counts`: the
compiled draws where the package was built with them) next to the same
draws by numpy's calls (``rng.binomial``, then
:func:`triehh.engines.thinning.top_up`). In the same
process, runs alternating (same seeds, generators made outside the
timings).

  python -m benchmarks.fast_engine_benchmark --sizes=1e6,1e7,1e8 \\
      --count_only_sizes=1e9 --several_words_sizes=1e6,1e7 --repeats=7

  python -m benchmarks.fast_engine_benchmark --floor_sizes=1e6 \\
      --floor_samplings=fixed,poisson --floor_repeats=501 --sizes= \\
      --count_only_sizes= --several_words_sizes=
"""

from __future__ import annotations

from collections.abc import Callable
import math
import statistics
import time
import tracemalloc

from absl import app
from absl import flags
import numpy as np

from triehh.core import choices
from triehh.core import population as population_lib
from triehh.data import synthetic
from triehh.engines import fast as fast_engine
from triehh.engines import rounds
from triehh.engines import sampling
from triehh.engines import thinning
from triehh.engines import vote_counts
from triehh.theory import mechanism
from triehh.theory import policy

FLAGS = flags.FLAGS
flags.DEFINE_list("sizes", ["1e6", "1e7", "1e8"],
                  "One-word population sizes run at both levels.")
flags.DEFINE_list("count_only_sizes", ["1e9"],
                  "Sizes built from word counts, run at count level only.")
flags.DEFINE_list("several_words_sizes", ["1e6", "1e7"],
                  "Users of the several-word populations (empty: skip).")
flags.DEFINE_float("epsilon", 4.0, "Target epsilon.")
flags.DEFINE_float("zipf_exponent", 1.0, "Zipf exponent s of the word law.")
flags.DEFINE_integer("repeats", 7, "Timed runs per size and sampler.")
flags.DEFINE_list("floor_sizes", ["1e6"],
                  "Sizes whose runs are timed next to their binomial floor.")
flags.DEFINE_list("floor_samplings", [choices.FIXED, choices.POISSON],
                  "Samplings timed next to the floor: fixed (the paper's "
                  "batches) and poisson (discover's default).")
flags.DEFINE_integer("floor_repeats", 301,
                     "Runs (seeds) timed next to the floor, per size.")


def floyd_choice(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
  """Step 1b's user sampler: one ``choice``, in its order."""
  return rng.choice(n, size=m, replace=False, shuffle=False)


def sorted_exact(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
  """A uniform m-subset, sorted: the first m distinct values of i.i.d.
  uniform draws (m draws, then top-ups of the missing number)."""
  taken = np.unique(rng.integers(0, n, size=m))
  while taken.size < m:
    taken = np.union1d(taken, rng.integers(0, n, size=m - taken.size))
  return taken


def sort_floor(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
  """The floor: m draws with replacement, sorted (no distinctness)."""
  return np.sort(rng.integers(0, n, size=m))


class _SearchedWords(fast_engine._BincountVotes):  # pylint: disable=protected-access
  """The former word choice: a search of the whole cumulative-count array."""

  def count(self, trie, users, ranks, batches):
    del trie
    pop = self._pop
    cum = pop.cumulative_counts
    starts = pop.user_offsets[users]
    before = np.where(starts > 0, cum[starts - 1], 0)
    words = pop.entry_word[np.searchsorted(cum, before + ranks, side="right")]
    a1 = pop.alphabet.num_extensions
    k = self._frontier_ids.size
    cell = self._word_cell[words]
    counts = np.bincount(cell[batches[0]], minlength=(k + 1) * (a1 + 1))
    for batch in batches[1:]:
      counts += np.bincount(cell[batch], minlength=(k + 1) * (a1 + 1))
    return counts.reshape(k + 1, a1 + 1)[:k, :a1].ravel()


class _DrawnSchedule:
  """A "schedule" that draws each round's users uniformly when asked."""

  def __init__(self, rng: np.random.Generator, n: int, m: int, levels: int,
               sampler: Callable[[np.random.Generator, int, int], np.ndarray]):
    self._rng, self._n, self._m, self._levels = rng, n, m, levels
    self._sampler = sampler

  def __len__(self) -> int:
    return self._levels

  def __getitem__(self, depth: int) -> np.ndarray:
    del depth  # every round draws afresh
    return self._sampler(self._rng, self._n, self._m)


class _ThreeGathers(fast_engine._BincountVotes):  # pylint: disable=protected-access
  """The former several-word vote count: three gathers per sampled user."""

  def count(self, trie, users, ranks, batches):
    del trie
    tables, a1 = self._tables, self._pop.alphabet.num_extensions
    depth = len(self._history)
    pos = self._history[-1]
    words = sampling.words_of(self._pop, users, ranks).astype(np.intp)
    cell = pos[tables.ids[depth - 1][words]] * (a1 + 1) + tables.symbols[
        depth - 1][words]
    k = self._frontier_ids.size
    counts = np.bincount(cell[batches[0]], minlength=(k + 1) * (a1 + 1))
    return counts.reshape(k + 1, a1 + 1)[:k, :a1].ravel()

  def __init__(self, population):
    super().__init__(population)
    self._history = [np.array([0, 1], dtype=np.intp)]

  def grown(self, trie, level, kept):
    super().grown(trie, level, kept)
    if not level.grew or level.depth >= self._pop.codes.shape[1]:
      return  # the run ends (the frontier ids were not advanced)
    pos = np.full(self._pop.num_prefixes[level.depth] + 1,
                  self._frontier_ids.size, dtype=np.intp)
    pos[self._frontier_ids] = np.arange(self._frontier_ids.size)
    self._history.append(pos)


def _timed(run) -> tuple[float, float, object]:
  t0, c0 = time.perf_counter(), time.process_time()
  out = run()
  return time.perf_counter() - t0, time.process_time() - c0, out


def _peak_mib(run) -> float:
  tracemalloc.start()
  run()
  _, peak = tracemalloc.get_traced_memory()
  tracemalloc.stop()
  return peak / 2**20


def _ms(values: list[float]) -> float:
  return statistics.median(values) * 1e3


def zipf_population(n: int, *, per_user: bool) -> population_lib.Population:
  """The Zipf population of n users, with or without a per-user array."""
  words, freqs = synthetic.english_words()
  probs = synthetic.word_probabilities(freqs, "zipf", FLAGS.zipf_exponent)
  users = np.random.default_rng(0).multinomial(n, probs)
  by_count = population_lib.Population.from_word_frequencies(words, users)
  if not per_user:
    return by_count
  user_word = np.repeat(np.arange(by_count.num_words, dtype=np.int32),
                        by_count.users_per_word)
  np.random.default_rng(1).shuffle(user_word)
  return population_lib.Population.from_word_indices(by_count.vocabulary,
                                                     user_word)


def one_word_rows() -> list[tuple[int, float, float | None]]:
  rows = []
  sizes = [(int(float(v)), True) for v in FLAGS.sizes]
  sizes += [(int(float(v)), False) for v in FLAGS.count_only_sizes]
  for n, both in sizes:
    pop = zipf_population(n, per_user=both).encode()
    fast_engine.prepare(pop)
    params = policy.resolve(n, pop.max_length,
                            mechanism.Target(FLAGS.epsilon, sampling="fixed"))
    theta, m = params.theta, params.batch_size

    def count_level(seed):
      return fast_engine.run(pop, theta=theta, batch_size=m,
                             rng=np.random.default_rng(seed))

    def user_level(seed):
      rng = np.random.default_rng(seed)
      return fast_engine.run(
          pop, theta=theta, batch_size=m, rng=rng,
          schedule=_DrawnSchedule(rng, n, m, pop.num_levels, floyd_choice))

    timings = {"count": ([], [], []), "user": ([], [], [])}
    for seed in range(FLAGS.repeats):
      for name, run in (("count", count_level), ("user", user_level)):
        if name == "user" and not both:
          continue
        wall, cpu, trie = _timed(lambda run=run: run(seed))
        timings[name][0].append(wall)
        timings[name][1].append(cpu)
        timings[name][2].append(len(trie.heavy_hitters()))
    # Count-level runs one after another (warm caches): alternating with
    # user-level runs, which sweep n-sized arrays, makes them slower.
    alone = [_timed(lambda seed=seed: count_level(seed))[1]
             for seed in range(FLAGS.repeats, 3 * FLAGS.repeats)]
    line = (f"n={n:.0e} ({'user array' if both else 'word counts'}): "
            f"m={m:,}, theta={theta}; count level: median {_ms(timings['count'][0]):.2f}"
            f" ms wall, {_ms(timings['count'][1]):.2f} ms CPU"
            + (f" (alternating; {_ms(alone):.2f} ms CPU run alone)" if both
               else "") + ", peak "
            f"{_peak_mib(lambda: count_level(0)):.2f} MiB, heavy hitters "
            f"median {statistics.median(timings['count'][2])}")
    if both:
      line += (f"; user level: median {_ms(timings['user'][0]):.2f} ms wall,"
               f" {_ms(timings['user'][1]):.2f} ms CPU, peak "
               f"{_peak_mib(lambda: user_level(0)):.2f} MiB, heavy hitters "
               f"median {statistics.median(timings['user'][2])}; speed-up "
               f"{statistics.median(timings['user'][1]) / statistics.median(timings['count'][1]):.1f}x (CPU)")
    print(line, flush=True)
    rows.append((n, statistics.median(timings["count"][1]),
                 statistics.median(timings["user"][1]) if both else None))
    del pop
  return rows


def print_exponents(rows: list[tuple[int, float, float | None]]) -> None:
  """Least-squares slope of log(CPU time) against log(n), per sampler."""
  for name, column in (("count level", 1), ("user level", 2)):
    points = [(math.log(r[0]), math.log(r[column])) for r in rows
              if r[column] is not None]
    if len(points) >= 2:
      x, y = np.array(points).T
      print(f"scaling exponent ({name}, CPU time ~ n^k over {len(points)} "
            f"sizes): k = {np.polyfit(x, y, 1)[0]:.2f}")


def several_words_population(n: int) -> population_lib.Population:
  """n users holding 1 to 3 Zipf words each, with counts 1 to 4."""
  words, freqs = synthetic.english_words()
  probs = synthetic.word_probabilities(freqs, "zipf", FLAGS.zipf_exponent)
  rng = np.random.default_rng(2)
  per_user = rng.integers(1, 4, size=n)
  offsets = np.zeros(n + 1, dtype=np.int64)
  np.cumsum(per_user, out=offsets[1:])
  entry_word = rng.choice(len(words), size=int(offsets[-1]), p=probs)
  entry_count = rng.integers(1, 5, size=entry_word.size)
  return population_lib.Population.from_word_counts(
      np.asarray(words, dtype=object), offsets, entry_word, entry_count).encode()


def _alternating(runs: dict, repeats: int
                 ) -> dict[str, tuple[list, list, list]]:
  """Wall and CPU seconds and results of each ``runs[name](seed)``, names
  alternating."""
  out = {name: ([], [], []) for name in runs}
  for seed in range(repeats):
    for name, run in runs.items():
      for column, value in zip(out[name], _timed(lambda run=run: run(seed))):
        column.append(value)
  return out


def several_words_rows(n: int) -> None:
  """Several-word users: whole runs by user sampler, the sampler alone, and
  the fused table against the three gathers."""
  pop = several_words_population(n)
  fast_engine.prepare(pop)
  params = policy.resolve(n, pop.max_length,
                          mechanism.Target(FLAGS.epsilon, sampling="fixed"))
  m = params.batch_size
  kwargs = dict(theta=params.theta, batch_size=m)

  whole = _alternating(
      {"scan": lambda seed: fast_engine.run(
          pop, rng=np.random.default_rng(seed), **kwargs),
       "search": lambda seed: rounds.run(
           pop, _SearchedWords(pop), rng=np.random.default_rng(seed),
           **kwargs)}, FLAGS.repeats)
  same = all(a.heavy_hitters() == b.heavy_hitters()
             for a, b in zip(whole["scan"][2], whole["search"][2]))
  cpu = {name: statistics.median(times[1]) for name, times in whole.items()}
  print(f"several words, n={n:.0e} (1-3 words each): m={m:,}; whole run: "
        f"words_of scan median {_ms(whole['scan'][0]):.2f} ms wall, "
        f"{_ms(whole['scan'][1]):.2f} ms CPU; whole-array search "
        f"{_ms(whole['search'][0]):.2f} ms wall, "
        f"{_ms(whole['search'][1]):.2f} ms CPU; speed-up "
        f"{cpu['search'] / cpu['scan']:.2f}x (CPU); same heavy hitters: "
        f"{same}", flush=True)
  samplers = {"step 1b (choice)": sampling.sample_users,
              "sorted exact": sorted_exact,
              "floor (integers + sort)": sort_floor}
  alone = _alternating(
      {name: lambda seed, f=f: f(np.random.default_rng(seed), n, m)
       for name, f in samplers.items()}, max(FLAGS.repeats, 21))
  floor = statistics.median(alone["floor (integers + sort)"][1])
  print(f"  user sampler alone (m={m:,} of n={n:.0e}), median CPU: " +
        "; ".join(f"{name} {_ms(cpu):.3f} ms "
                  f"({statistics.median(cpu) / floor:.2f}x floor)"
                  for name, (_, cpu, _) in alone.items()), flush=True)
  former = _alternating(
      {"fused": lambda seed: rounds.run(
          pop, fast_engine._BincountVotes(pop),  # pylint: disable=protected-access
          rng=np.random.default_rng(seed), **kwargs),
       "three gathers": lambda seed: rounds.run(
           pop, _ThreeGathers(pop), rng=np.random.default_rng(seed),
           **kwargs)}, FLAGS.repeats)
  fused, gathers = former["fused"][:2], former["three gathers"][:2]
  print(f"  fused table median {_ms(fused[0]):.2f} ms wall, "
        f"{_ms(fused[1]):.2f} ms CPU; three gathers {_ms(gathers[0]):.2f} ms "
        f"wall, {_ms(gathers[1]):.2f} ms CPU; speed-up "
        f"{statistics.median(gathers[1]) / statistics.median(fused[1]):.2f}x "
        "(CPU)", flush=True)


def drawn_cells(pop: population_lib.Population, trie) -> list[np.ndarray]:
  """Per round of a finished run, the users of its cells, in cell order
  (the frontier of each round rebuilt from the trie)."""
  tables = vote_counts.tables_of(pop)
  frontier = np.zeros(1, dtype=np.int64)
  out = []
  for depth, level in enumerate(trie.levels, start=1):
    cells = vote_counts.round_cells(tables, depth, frontier)
    out.append(cells.users)
    kept = np.isin(cells.vote_index, level.parents
                   * pop.alphabet.num_extensions + level.prefixes[:, -1])
    frontier = cells.child_ids[kept]
  return out


def _draws(rng: np.random.Generator, rounds_users: list[np.ndarray],
           n: int, m: int) -> None:
  """Every draw of the contract over a run's cells, as the engine makes
  them, and nothing else."""
  for users in rounds_users:
    thinning.thinned_counts(users, n, m, rng)


def _numpy_draws(rng: np.random.Generator, rounds_users: list[np.ndarray],
                 n: int, m: int) -> None:
  """The same draws by numpy's calls."""
  for users in rounds_users:
    kept = rng.binomial(users, m / n)
    thinning.top_up(users, kept, n, m, rng)


def floor_row(n: int, sampling: str = choices.FIXED) -> None:
  """The engine's run next to ``rng.binomial`` over the same cells.

  Fixed-size batches (the paper's) draw a binomial and an exact top-up per
  round; Poisson sampling (``discover``'s default) draws the binomial
  only, at the accountant's rate q.
  """
  pop = zipf_population(n, per_user=False).encode()
  fast_engine.prepare(pop)
  params = policy.resolve(n, pop.max_length,
                          mechanism.Target(FLAGS.epsilon, sampling=sampling))
  theta, m = params.theta, params.batch_size
  rate = params.sampling_rate if sampling == choices.POISSON else None
  p = rate if rate is not None else m / n
  seeds = range(FLAGS.floor_repeats)

  def engine(rng):
    return fast_engine.run(pop, theta=theta, batch_size=m, rng=rng,
                           sampling_rate=rate)

  cells = [drawn_cells(pop, engine(np.random.default_rng(seed)))
           for seed in seeds]
  occupied = [[users[users > 0] for users in run] for run in cells]
  runs = {"engine": lambda rng, seed: engine(rng),
          "floor": lambda rng, seed: [rng.binomial(users, p)
                                      for users in occupied[seed]]}
  if rate is None:
    runs["draws"] = lambda rng, seed: _draws(rng, cells[seed], n, m)
    runs["numpy draws"] = lambda rng, seed: _numpy_draws(rng, cells[seed], n,
                                                         m)
  times = {name: ([], []) for name in runs}
  for seed in seeds:
    for name, run in runs.items():
      rng = np.random.default_rng(seed)
      wall, cpu, _ = _timed(lambda run=run, rng=rng: run(rng, seed))
      times[name][0].append(wall)
      times[name][1].append(cpu)
  wall = {name: _ms(values[0]) for name, values in times.items()}
  cpu = {name: _ms(values[1]) for name, values in times.items()}
  batch = (f"m={m:,}" if rate is None
           else f"Poisson q={rate:.3g} (m={m:,} expected)")
  print(f"n={n:.0e} (word counts), {sampling} sampling, {batch}, "
        f"theta={theta}, "
        f"{statistics.mean(sum(u.size for u in c) for c in occupied):.0f} "
        f"occupied cells per run, {len(seeds)} runs: engine median "
        f"{cpu['engine']:.3f} ms CPU ({wall['engine']:.3f} ms wall); "
        f"binomial floor over the same cells {cpu['floor']:.3f} ms CPU "
        f"({wall['floor']:.3f} ms wall); ratio "
        f"{cpu['engine'] / cpu['floor']:.2f}x CPU "
        f"({wall['engine'] / wall['floor']:.2f}x wall)"
        + ("" if rate is not None else
           f"; every draw of the contract alone {cpu['draws']:.3f} ms CPU "
           f"({cpu['draws'] / cpu['floor']:.2f}x the floor, "
           f"{'compiled' if thinning.compiled is not None else 'numpy'}; "
           "numpy's calls "
           f"{cpu['numpy draws']:.3f} ms, "
           f"{cpu['numpy draws'] / cpu['floor']:.2f}x)"), flush=True)


def main(argv):
  del argv
  synthetic.english_words()  # load the word list outside the timings
  for n in FLAGS.floor_sizes:
    for floor_sampling in FLAGS.floor_samplings:
      floor_row(int(float(n)), floor_sampling)
  print_exponents(one_word_rows())
  for n in FLAGS.several_words_sizes:
    several_words_rows(int(float(n)))


if __name__ == "__main__":
  app.run(main)
