"""The field benchmarks' cells and their central baseline, without flags.

A cell is ``n:epsilon`` (the English population of ``reports.field``, n
users; past 10^6 as word counts, as in ``FIELD.md``) or
``population:epsilon`` (``paper-single``, ``paper-oov``, ``s140-single``,
``s140-multi``: their own n); delta = 1/n^2 and n public,
as in ``FIELD.md``. The baseline is central partition selection, truncated
geometric, one word per user (the field benchmark's own runner,
``reports.field.mechanisms.run``). Used by ``benchmarks.two_servers_field``
and ``benchmarks.noisy_plan_field``; it defines no command-line flags, so
both can import it.
"""

from __future__ import annotations

import dataclasses

from reports import summary
from reports.field import mechanisms as field_mechanisms
from reports.field import populations
from triehh.data import datasets as datasets_lib
from triehh.mechanisms import plan_choice

PS = "ps-truncated_geometric"
# The English population has a row per user up to this n, word counts past.
ROWS_UP_TO = 10**6


@dataclasses.dataclass(frozen=True)
class Cell:
  """A loaded cell: its population, epsilon and delta = 1/n^2."""

  data: populations.Data
  epsilon: float
  delta: float

  @property
  def n(self) -> int:
    return self.data.n


# A cell ``prior@name:epsilon``: the public prior the planned noisy trie
# chooses its plan on (triehh.mechanisms.plan_choice), drawn at the
# declared n, L and alphabet size of the cell ``name:epsilon``.
PRIOR = "prior@"


def load(cell: str, datasets: datasets_lib.DataCache) -> Cell:
  """The cell ``name:epsilon`` (``name`` a number: the English population
  of that many users; ``prior@name:epsilon``: the public prior at that
  cell's n, L and A)."""
  if cell.startswith(PRIOR):
    return _prior(load(cell[len(PRIOR):], datasets))
  name, eps_text = cell.split(":")
  if name[0].isdigit():
    n = int(float(name))
    # Past a million users, as FIELD.md has it: the same law as word counts.
    data = populations.load(populations.ENGLISH if n <= ROWS_UP_TO
                            else populations.ENGLISH_COUNTS, n, datasets)
  else:
    data = populations.load(name, None, datasets,
                            datasets_lib.sentiment140_sample())
  return Cell(data, float(eps_text), 1.0 / data.n**2)


def _prior(cell: Cell) -> Cell:
  """The public prior drawn at ``cell``'s declared n, L and A, one word
  per user, with its epsilon and delta."""
  pop = cell.data.population
  prior = plan_choice.prior_population(cell.n, pop.max_length,
                                       pop.alphabet.size)
  data = populations.Data(f"prior@{cell.data.name}", prior,
                          prior.ground_truth(),
                          populations.mean_raw_bytes(prior))
  return Cell(data, cell.epsilon, cell.delta)


def interval(values) -> tuple[float, float]:
  """Mean and 95% Student-t half-width."""
  mean, _, half = summary.mean_interval(list(values))
  return float(mean), float(half)


def central(cell: Cell, seed: int) -> dict:
  """One seeded run of central partition selection: its true and false
  words and its guarantee's label."""
  record = field_mechanisms.run(PS, cell.data, cell.epsilon, cell.delta,
                                seed)
  return dict(true=record["words"] - record["false_words"],
              false=record["false_words"], guarantee=record["guarantee"])


def ratio(mean: float, half: float, c_mean: float, c_half: float
          ) -> tuple[float, float]:
  """The ratio of the means and its half-width from both relative
  half-widths."""
  value = mean / c_mean
  return value, value * summary.relative_half_width(mean, half, c_mean,
                                                    c_half)
