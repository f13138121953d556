"""What bounds SFP's recall in the OOV setting: its alphabet and its padding.

REPORT.md's Table 2 (:mod:`reports.reproduction.markdown`) prints,
beside SFP's rows, two limits that no number of users or privacy budget
moves, measured on the report's own data and runs:

* The alphabet ceiling (:func:`alphabet_ceiling`). SFP
  (:mod:`triehh.baselines.sfp`) stitches words from 2-character fragments
  over its fragment alphabet, padded with ``$`` to ``length`` characters: a
  word with another character (``@``, ``*``, ``(``, ``:`` ...) or longer
  than ``length`` cannot be built at all, so recall@K is at most the share
  of the top K words that can.
* The padded positions (:func:`padded_slots`). A word of at most ``p``
  characters has the fragment ``$$`` at character position ``p`` and after
  it. The decode keeps, per position, the ``T`` tuples (bucket, fragment)
  with the largest estimates over all buckets, and every bucket holding a
  short word has a ``$$`` tuple estimated at the users of all its short
  words: at the later positions these tuples take nearly all ``T`` slots,
  so the fragments of longer words are not kept and those words are not
  found (:func:`found_by_length`). Measured on one recorded run, re-run
  from its record (same data, configuration and seed; the re-run's words
  are checked against the record's).

The paper authors' released code does the same: it pads every word with
``$`` to 10 characters (``truncate_or_extend`` in its ``preprocess.py``),
hashes the padded word to 256 buckets, and keeps per position the ``T``
largest of all ``256 x 31^2`` candidate strings (``np.argsort(...)
[-threshold:]`` in its ``sfp.py``), with no quota per bucket and no special
case for ``$$``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from triehh.baselines import sfp_encoding
from triehh.core import metrics
from triehh.data import datasets as datasets_lib
from triehh.runs.algorithms import sfp as sfp_algorithm

# The fragment of a position past a word's end.
PAD_PAIR = sfp_encoding.PAD * 2
# Table 2's K (recall@50).
TOP_K = 50


def can_build(word: str, alphabet: str, length: int) -> bool:
  """Whether SFP can stitch ``word`` at all: at most ``length`` characters,
  each in its fragment ``alphabet``."""
  return len(word) <= length and all(c in alphabet for c in word)


@dataclasses.dataclass(frozen=True)
class AlphabetCeiling:
  """The top K words split by whether SFP can build them."""

  buildable: tuple[str, ...]
  left_out: tuple[str, ...]

  @property
  def k(self) -> int:
    return len(self.buildable) + len(self.left_out)

  @property
  def share(self) -> float:
    """The recall@K no SFP run can exceed."""
    return len(self.buildable) / self.k if self.k else 0.0


def alphabet_ceiling(truth: Mapping[str, float], alphabet: str, length: int,
                     k: int = TOP_K) -> AlphabetCeiling:
  """Which of the top ``k`` words of ``truth`` SFP can build (``can_build``)."""
  top = metrics.top_k(truth, k)
  return AlphabetCeiling(
      tuple(w for w in top if can_build(w, alphabet, length)),
      tuple(w for w in top if not can_build(w, alphabet, length)))


def found_by_length(records: Sequence[Mapping], words: Sequence[str]
                    ) -> dict[int, tuple[int, float]]:
  """Per word length: how many of ``words`` have it, and the share of
  (run, word) pairs in which the run discovered the word."""
  out = {}
  for length in sorted({len(w) for w in words}):
    group = [w for w in words if len(w) == length]
    hits = sum(w in set(r["discovered"]) for r in records for w in group)
    out[length] = (len(group), hits / (len(group) * len(records))
                   if records else 0.0)
  return out


def padded_slots(record: Mapping,
                 cache: datasets_lib.DataCache | None = None
                 ) -> tuple[int, ...]:
  """Per fragment position, how many of the ``T`` kept tuples are ``$$``,
  in the run ``record`` describes, re-run from it.

  Raises:
    ValueError: if the record has no configuration to re-run, or the
      re-run discovers other words than the record says.
  """
  config = record.get("config")
  if not isinstance(config, Mapping) or "data" not in config:
    raise ValueError("the record has no configuration to re-run")
  dataset = (cache or datasets_lib.DataCache()).get(config["data"])
  result = sfp_algorithm.call_sfp(dataset.population, config,
                                  int(record["seed"]))
  if list(result.heavy_hitters) != list(record["discovered"]):
    raise ValueError(f"the re-run of seed {record['seed']} discovered other "
                     "words than its record")
  return tuple(sum(fragment == PAD_PAIR for _, fragment, _ in top)
               for top in result.fragment_tops)


def alphabet_note(records: Sequence[Mapping], truth: Mapping[str, float],
                  k: int = TOP_K) -> str:
  """The alphabet ceiling of the runs' fragment alphabet and length, in
  words (``""`` if the records do not name them)."""
  if not records or "fragment_alphabet" not in records[0]:
    return ""
  alphabet, length = records[0]["fragment_alphabet"], int(
      records[0]["length"])
  ceiling = alphabet_ceiling(truth, alphabet, length, k)
  shown = ", ".join(f"`{w}`" for w in ceiling.left_out[:4])
  more = len(ceiling.left_out) - min(4, len(ceiling.left_out))
  return (f"alphabet ceiling: {len(ceiling.buildable)} of the top "
          f"{ceiling.k} words can be built at all from fragments over "
          f"`{alphabet}` plus `$` at length {length}, so recall@{k} ≤ "
          f"{ceiling.share:.2f} (not buildable: {shown}"
          + (f" and {more} more" if more > 0 else "") + ")")


def padding_note(records: Sequence[Mapping], truth: Mapping[str, float],
                 k: int = TOP_K,
                 cache: datasets_lib.DataCache | None = None) -> str:
  """The padded positions' cause, measured on the first run re-run and on
  every run's words (``""`` if the records do not name the alphabet)."""
  if not records or "fragment_alphabet" not in records[0]:
    return ""
  first = records[0]
  try:
    slots = padded_slots(first, cache)
  except (ValueError, OSError) as err:
    return f"padded positions not measured: {err}"
  top_t = int(first["top_t"])
  ceiling = alphabet_ceiling(truth, first["fragment_alphabet"],
                             int(first["length"]), k)
  rates = found_by_length(records, ceiling.buildable)
  slots_text = ", ".join(f"{s} at position {2 * l}"
                         for l, s in enumerate(slots) if s)
  found_text = ", ".join(
      f"{n} characters {rate:.2f} ({count} word{'s' * (count != 1)})"
      for n, (count, rate) in rates.items())
  never = [n for n, (_, rate) in rates.items() if rate == 0]
  text = (f"padded positions: of the T = {top_t} tuples kept per position, "
          f"the `$$` fragments (one per bucket holding a shorter word) take "
          f"{slots_text or 'none'} (0-based character positions; the run "
          f"of seed {first['seed']}, re-run "
          "from its record: the same words); share of the runs finding the "
          f"buildable top-{k} words, by length: {found_text}")
  if never:
    text += (f"; those of {', '.join(map(str, never))} characters are found "
             f"in none of the {len(records)} runs")
  return text
