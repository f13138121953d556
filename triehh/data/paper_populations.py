"""Paper-calibrated populations: the paper's published heads, real tails.

The paper's appendix ("Heavy Hitters Lists") publishes the top-100 words of
its single-word and OOV Sentiment140 data with their frequencies
(``data/paper_top100_single.csv``, ``data/paper_top100_oov.csv``). A
paper-calibrated one-word population of ``n`` users is built as follows:

1. **Head.** Each published word ``w`` with frequency ``f`` gets ``f * n``
   users.
2. **Tail.** The rest of a real Sentiment140 word-frequency table: every
   word of the table that is not in the head, its count scaled so that the
   tail holds the remaining mass ``(1 - sum f) * n``, **capped** below the
   head: no tail word may get as many users as the head's least frequent
   word (``floor(f_min * n) - 1`` at most), since the published list is the
   top 100; the mass cut off the capped words goes to the others in
   proportion to their counts, repeatedly, until none exceeds the cap
   (water-filling; the sample's tail is far smaller than the full data's,
   so scaling alone would put 25 single-word and 334 OOV tail words above
   the 100th published frequency). The table is
   ``data/sentiment140_word_counts.csv.gz`` (``tools/make_word_counts.py``
   derives it from the 88k-user Sentiment140 sample under the paper's
   tokenizer; words held by fewer than ``MIN_USERS`` users are not
   shipped), or the same counts computed from a Sentiment140 file given as
   ``data_path``. The single-word setting uses ``single_users`` (users whose
   most frequent word it is), the OOV setting ``oov_tokens`` (token counts
   of words outside the default 50k-word dictionary).
3. **Rounding.** The real numbers of users are rounded by largest
   remainders (floors, then one more user for the largest fractional
   parts, ties by table order) so the population has exactly ``n`` users.
   No random draw: the paper drew its 6M OOV users from the frequencies,
   which gives these counts in expectation.

``n`` is 659,775 for ``single`` (the paper's Sentiment140 population, the
``n`` at which its SFP local epsilons 4.29 / 4.96 come out) and 6,000,000
for ``oov``. Populations are built with the paper's characters
(``settings.PAPER_CHARACTERS``) and ``max_length`` (the paper's 10 levels
are 9 characters and the end symbol: ``PAPER_MAX_LENGTH``).

**Tails** (``tail``, a data option, so each tail has its own records): the
part below the published head is ours, not the paper's, so three are
offered, each placed below the head by steps 2 and 3 (scaled to the
remaining mass, capped below the head, rounded):

* ``"sample"`` (the default): the shipped Sentiment140-sample counts, as
  above.
* ``"zipf"``: a Zipf law ``f(r) = C r^-s`` fitted to the published top 100
  (least squares of ``log f`` on ``log r``, ranks 1-100) and extrapolated
  to ranks 101, 102, ... until it holds the remaining mass, the last rank
  trimmed. The ranks are named by the table's tail words in table order,
  then by ``wordfreq`` words (as in ``"wordfreq"``) not yet used; where
  the names run out first (the OOV law needs about 1.4M ranks), the law's
  values over the named ranks are scaled up to the remaining mass (the
  factor is in ``info["zipf_scale"]``).
* ``"wordfreq"``: English word frequencies of the installed ``wordfreq``
  package (``top_n_list("en", ...)`` with ``word_frequency``): for
  ``single`` every listed word made of the paper's characters, for ``oov``
  those outside the default dictionary (its top ``DEFAULT_SIZE`` words,
  :mod:`triehh.data.dictionary`), i.e. rare English words, not Twitter's
  out-of-vocabulary tokens.

Several words per user (``multi``) has no published list: the population is
the Sentiment140 file's own users under the paper's tokenizer, or, with
``num_users``, that many users drawn with replacement from them (each keeps
its whole bag of words, so ``F(w)`` is preserved in expectation), seeded.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import typing

import numpy as np

if typing.TYPE_CHECKING:
  import pandas as pd

from triehh.core import population as population_lib
from triehh.data import dictionary as dictionary_lib
from triehh.data import loader
from triehh.data import readers
from triehh.data import settings as settings_lib
from triehh.data import tokenize as tokenize_lib

SINGLE_NUM_USERS = 659_775
OOV_NUM_USERS = 6_000_000
PAPER_MAX_LENGTH = 9
MIN_USERS = 2
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "data")
PUBLISHED = {"single": os.path.join(DATA_DIR, "paper_top100_single.csv"),
             "oov": os.path.join(DATA_DIR, "paper_top100_oov.csv")}
WORD_COUNTS_PATH = os.path.join(DATA_DIR, "sentiment140_word_counts.csv.gz")
WORD_COUNT_COLUMNS = ("word", "users", "tokens", "single_users",
                      "oov_tokens")
# The word-count column each one-word setting's tail comes from.
TAIL_COLUMN = {"single": "single_users", "oov": "oov_tokens"}
DEFAULT_NUM_USERS = {"single": SINGLE_NUM_USERS, "oov": OOV_NUM_USERS}
# The tails below the published head (module docstring).
TAILS = ("sample", "zipf", "wordfreq")
DEFAULT_TAIL = "sample"
# The wordfreq list read for the "wordfreq" and "zipf" tails (all of it).
WORDFREQ_LIST_SIZE = 1_000_000


@dataclasses.dataclass
class PaperData:
  """A paper-calibrated population with its ground truth and provenance."""

  population: population_lib.Population
  truth: dict[str, float]
  name: str
  setting: str
  info: dict


def published_top100(setting: str) -> pd.Series:
  """The paper's published top-100 of ``setting``: word -> frequency."""
  import pandas as pd  # pylint: disable=g-import-not-at-top
  if setting not in PUBLISHED:
    raise ValueError(f"the paper publishes no list for setting {setting!r}; "
                     f"use one of {', '.join(PUBLISHED)}")
  table = pd.read_csv(PUBLISHED[setting], keep_default_na=False,
                      dtype={"word": str, "frequency": float})
  return pd.Series(table["frequency"].to_numpy(),
                   index=table["word"].to_numpy(), name="frequency")


def word_counts_from_file(path: str, dataset: str = "sentiment140",
                          min_users: int = MIN_USERS,
                          dictionary_size: int = dictionary_lib.DEFAULT_SIZE
                          ) -> pd.DataFrame:
  """Per-word counts of a text file under the paper's tokenizer.

  Columns (``WORD_COUNT_COLUMNS``): ``users`` (distinct users writing the
  word), ``tokens`` (occurrences), ``single_users`` (users whose most
  frequent word it is: the single-word setting's ground truth),
  ``oov_tokens`` (``tokens`` if the word is outside the default
  ``dictionary_size``-word dictionary, else 0). Only words of at least
  ``min_users`` users are kept; rows are sorted by ``tokens`` (largest
  first), then by word.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top
  if min_users < 1:
    raise ValueError(f"min_users must be >= 1, got {min_users}")
  spec = loader.DataSpec(path, dataset=dataset, setting="single",
                         tokenizer="paper")
  texts = readers.read(path, "sentiment140" if dataset == "sentiment140"
                       else "auto")
  row_user, num_users = loader.user_codes(texts)
  tokens = tokenize_lib.tokenize(
      texts, min_length=spec.min_length, characters=spec.allowed_characters,
      strip=spec.strip_characters, drop_prefixes=spec.drop_prefixes)
  vocabulary = tokens.vocabulary.astype(str)
  size = vocabulary.size
  valid = row_user[tokens.token_row] >= 0
  token_counts = np.bincount(tokens.token_word[valid], minlength=size)
  pair = np.unique(row_user[tokens.token_row][valid].astype(np.int64) * size
                   + tokens.token_word[valid])
  users = np.bincount(pair % size, minlength=size)
  single = settings_lib.single_word(
      tokens, row_user, num_users, characters=spec.allowed_characters,
      max_length=64).population.ground_truth()
  single_users = np.array([single.get(w, 0.0) for w in vocabulary],
                          dtype=np.int64)
  known = pd.Index(vocabulary).isin(dictionary_lib.default_words(
      dictionary_size))
  table = pd.DataFrame({"word": vocabulary, "users": users,
                        "tokens": token_counts, "single_users": single_users,
                        "oov_tokens": np.where(known, 0, token_counts)})
  table = table[table["users"] >= min_users]
  return table.sort_values(["tokens", "word"], ascending=[False, True],
                           kind="mergesort").reset_index(drop=True)


def read_word_counts(path: str = WORD_COUNTS_PATH) -> pd.DataFrame:
  """A word-count table written by ``tools/make_word_counts.py``."""
  import pandas as pd  # pylint: disable=g-import-not-at-top
  try:
    table = pd.read_csv(path, keep_default_na=False, dtype={"word": str})
  except (UnicodeDecodeError, pd.errors.ParserError,
          pd.errors.EmptyDataError) as err:
    reason = str(err).splitlines()[0][:120]
    raise ValueError(f"{path}: not a word-count table (a CSV written by "
                     f"tools/make_word_counts.py): {reason}") from None
  missing = [c for c in WORD_COUNT_COLUMNS if c not in table.columns]
  if missing:
    raise ValueError(f"{path}: not a word-count table, missing columns "
                     f"{', '.join(missing)}")
  return table


def largest_remainder(values: np.ndarray, total: int) -> np.ndarray:
  """Integers summing to ``total``, each the floor or ceiling of its value.

  ``values`` (non-negative) are scaled to sum to ``total`` first; the units
  left after the floors go to the largest fractional parts (ties: first).
  """
  values = np.asarray(values, dtype=np.float64)
  if values.ndim != 1 or not values.size or values.min() < 0:
    raise ValueError("values must be a non-empty 1-D array of non-negative "
                     "numbers")
  if values.sum() <= 0 or total < 0:
    raise ValueError("values must have a positive sum and total be >= 0")
  exact = values * (total / values.sum())
  floors = np.floor(exact).astype(np.int64)
  left = int(total - floors.sum())
  order = np.argsort(-(exact - floors), kind="stable")
  floors[order[:left]] += 1
  return floors


def capped_shares(counts: np.ndarray, total: float, cap: float) -> np.ndarray:
  """``counts`` scaled to sum to ``total`` with no entry above ``cap``.

  Entries above the cap are set to it and the mass they lose is spread over
  the others in proportion to their counts, until none exceeds the cap.

  Raises:
    ValueError: if ``len(counts) * cap < total`` (the cap cannot hold it).
  """
  counts = np.asarray(counts, dtype=np.float64)
  if counts.size * cap < total:
    raise ValueError(f"{counts.size} words capped at {cap:.3g} cannot hold "
                     f"a mass of {total:.3g}")
  capped = np.zeros(counts.size, dtype=bool)
  while True:
    free = total - cap * capped.sum()
    out = np.where(capped, cap, counts * free / counts[~capped].sum())
    over = ~capped & (out > cap)
    if not over.any():
      return out
    capped |= over


def _cap(head_min: float, num_users: int) -> float:
  """The most users a tail word may get, as a share of ``num_users``: one
  fewer than the head's least frequent word."""
  return (math.floor(head_min * num_users) - 1) / num_users


def min_num_users(head_min: float, tail_mass: float, tail_words: int) -> int:
  """The least n from which on ``tail_words`` words, each under the cap
  (``_cap``), hold ``tail_mass``: every n at or above it can be built.

  Raises:
    ValueError: when no n can (the tail words are too few for its mass).
  """
  slope = head_min - tail_mass / tail_words
  if slope <= 0:
    raise ValueError(f"{tail_words:,} tail words cannot hold a mass of "
                     f"{tail_mass:.3g} below a head word of frequency "
                     f"{head_min:.3g} at any num_users")
  # floor(f n) - 1 > f n - 2 >= tail_mass n / tail_words from here on.
  n = math.floor(2 / slope) + 1
  while n > 1 and tail_words * _cap(head_min, n - 1) >= tail_mass:
    n -= 1
  return n


def calibrated_users(head: pd.Series, tail: pd.Series, num_users: int
                     ) -> tuple[np.ndarray, np.ndarray]:
  """Words and users per word: the head's frequencies, the scaled tail.

  Args:
    head: word -> published frequency (sum below 1).
    tail: word -> count in a real table; words of the head are left out.
    num_users: n.

  Returns:
    The words (head first, then the tail in table order) and their users,
    summing to ``num_users``; no tail word has as many users as the head's
    least frequent word (see the module docstring).
  """
  head_mass = float(head.sum())
  if not 0 < head_mass < 1:
    raise ValueError(f"the head's frequencies sum to {head_mass}, not in "
                     "(0, 1)")
  tail = tail[~tail.index.isin(head.index) & (tail.to_numpy() > 0)]
  if not tail.size:
    raise ValueError("the tail table has no word outside the head")
  least = min_num_users(float(head.min()), 1.0 - head_mass, tail.size)
  if num_users < least:
    raise ValueError(
        f"num_users={num_users:,} is too small for a paper-calibrated "
        f"population: use num_users >= {least:,} (below it the "
        f"{tail.size:,} tail words cannot hold the mass left by the "
        "published head with fewer users each than its least frequent "
        "word)")
  cap = _cap(float(head.min()), num_users)
  tail_mass = capped_shares(tail.to_numpy(dtype=np.float64),
                            1.0 - head_mass, cap)
  mass = np.concatenate([head.to_numpy(dtype=np.float64), tail_mass])
  words = np.concatenate([head.index.to_numpy(dtype=object),
                          tail.index.to_numpy(dtype=object)])
  return words, largest_remainder(mass, num_users)


def paper_population(setting: str, *, num_users: int | None = None,
                     max_length: int = PAPER_MAX_LENGTH,
                     data_path: str | None = None,
                     word_counts_path: str | None = None,
                     seed: int = 0, cache_dir: str | None = None,
                     tail: str = DEFAULT_TAIL) -> PaperData:
  """The paper-calibrated population of ``setting`` (module docstring).

  Args:
    setting: ``single``, ``oov`` or ``multi``.
    num_users: n; default 659,775 (single) or 6,000,000 (oov); for
      ``multi``, None keeps the file's own users and a number resamples.
    max_length: L in characters (the paper: 9 plus the end symbol).
    data_path: a Sentiment140 file; one-word settings take their tail from
      it instead of the shipped table; ``multi`` needs it.
    word_counts_path: a word-count table instead of the shipped one.
    seed: seed of the ``multi`` resampling.
    cache_dir: cache of the ``multi`` population read from ``data_path``.
    tail: one of ``TAILS``, the words below the head (one-word settings).

  Raises:
    ValueError: for an unknown setting or tail, a missing ``data_path`` for
      ``multi``, or a population too small.
  """
  settings_lib.check_setting(setting)
  check_tail(tail)
  if setting == "multi" and tail != DEFAULT_TAIL:
    raise ValueError(f"tail={tail!r} is for the one-word settings; multi "
                     "is the Sentiment140 file's users")
  if num_users is not None and num_users < 2:
    raise ValueError(f"num_users must be >= 2, got {num_users}")
  if setting == "multi":
    return _multi(num_users, max_length, data_path, seed, cache_dir)
  n = DEFAULT_NUM_USERS[setting] if num_users is None else num_users
  return _one_word(setting, n, max_length, data_path, word_counts_path, tail)


def _one_word(setting: str, n: int, max_length: int, data_path: str | None,
              word_counts_path: str | None, tail: str) -> PaperData:
  """A one-word population: the published head over ``tail``."""
  import pandas as pd  # pylint: disable=g-import-not-at-top
  if data_path is not None and word_counts_path is not None:
    raise ValueError("give data_path or word_counts_path, not both")
  if data_path is not None:
    table = word_counts_from_file(data_path)
    tail_source = os.path.basename(data_path)
  else:
    path = word_counts_path or WORD_COUNTS_PATH
    table = read_word_counts(path)
    tail_source = os.path.basename(path)
  column = TAIL_COLUMN[setting]
  head = published_top100(setting)
  counts = pd.Series(table[column].to_numpy(), index=table["word"].to_numpy())
  info = {"head": f"paper top-100 ({os.path.basename(PUBLISHED[setting])})",
          "head_mass": float(head.sum()), "tail": f"{tail_source}:{column}"}
  if tail == "wordfreq":
    counts = wordfreq_tail(setting)
    info["tail"] = _WORDFREQ_NAME[setting]
  elif tail == "zipf":
    counts, zipf = zipf_tail(head, counts, wordfreq_tail(setting))
    info.update(zipf)
    scaled = (f", scaled by {zipf['zipf_scale']:.3f} where the names ran "
              "out" if zipf["zipf_scale"] != 1 else "")
    info["tail"] = (f"a Zipf law fitted to the published top 100 (s = "
                    f"{zipf['zipf_exponent']:.3f}{scaled}), ranks named by "
                    f"{tail_source}:{column}, then wordfreq")
  words, users = calibrated_users(head, counts, n)
  keep = users > 0
  words, users = words[keep], users[keep]
  pop = population_lib.Population.from_word_frequencies(
      words, users, max_length=max_length,
      alphabet=settings_lib.PAPER_CHARACTERS, unknown="drop")
  info.update(tail_kind=tail, tail_words=int(len(words) - len(head)),
              dropped_users=int(pop.num_dropped_users))
  name = f"paper-calibrated:{setting}" + (
      "" if tail == DEFAULT_TAIL else f":{tail}-tail")
  return PaperData(pop, pop.ground_truth(), name, setting, info)


_WORDFREQ_NAME = {"single": "wordfreq English frequencies",
                  "oov": "wordfreq English frequencies outside the "
                         "dictionary"}


def check_tail(tail: str) -> str:
  """``tail`` if it is one of ``TAILS``; else a ValueError naming it."""
  if tail not in TAILS:
    raise ValueError(f"unknown tail {tail!r}: use one of {', '.join(TAILS)}")
  return tail


def wordfreq_tail(setting: str) -> pd.Series:
  """The ``"wordfreq"`` tail's table: word -> English frequency.

  Words of ``wordfreq``'s English list (most frequent first), lower-cased,
  made only of the paper's characters; for ``oov`` only those outside the
  default dictionary.
  """
  import wordfreq  # pylint: disable=g-import-not-at-top
  return _wordfreq_tail(setting, wordfreq).copy()


@functools.lru_cache(maxsize=2)
def _wordfreq_tail(setting: str, wordfreq) -> pd.Series:
  import pandas as pd  # pylint: disable=g-import-not-at-top
  allowed = set(settings_lib.PAPER_CHARACTERS)
  # word -> frequency, most frequent first (the list's order).
  table = wordfreq.get_frequency_dict("en")
  words = dict.fromkeys(
      w.lower() for w in wordfreq.top_n_list("en", WORDFREQ_LIST_SIZE)
      if set(w.lower()) <= allowed)
  if setting == "oov":
    known = set(dictionary_lib.default_words())
    words = {w: None for w in words if w not in known}
  freqs = np.array([table.get(w, 0.0) for w in words])
  out = pd.Series(freqs, index=list(words), dtype=np.float64)
  return out[out > 0]


def zipf_fit(head: pd.Series) -> tuple[float, float]:
  """``(C, s)`` of ``f(r) = C r^-s`` fitted to the head (log-log least
  squares over its ranks, most frequent first)."""
  f = np.sort(head.to_numpy(dtype=np.float64))[::-1]
  ranks = np.arange(1, f.size + 1)
  slope, intercept = np.polyfit(np.log(ranks), np.log(f), 1)
  return float(math.exp(intercept)), float(-slope)


def zipf_tail(head: pd.Series, first: pd.Series, then: pd.Series
              ) -> tuple[pd.Series, dict]:
  """The ``"zipf"`` tail's table and its facts (module docstring).

  Args:
    head: the published top 100 (word -> frequency).
    first, then: the tables naming the ranks after the head, in order
      (words of the head, zero counts and repeats skipped).

  Returns:
    word -> the law's frequency at its rank (trimmed at the remaining mass,
    or scaled up to it when the names run out), and the fit's facts.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top
  c, s = zipf_fit(head)
  names = [w for w, v in list(first.items()) + list(then.items()) if v > 0]
  names = [w for w in dict.fromkeys(names) if w not in head.index]
  rest = 1.0 - float(head.sum())
  ranks = np.arange(head.size + 1, head.size + 1 + len(names),
                    dtype=np.float64)
  law = c * ranks**-s
  total = np.cumsum(law)
  k = int(np.searchsorted(total, rest)) + 1
  scale = 1.0
  if k <= law.size:
    law = law[:k].copy()
    law[-1] -= total[k - 1] - rest
  else:
    scale = rest / float(total[-1])
    law = law * scale
  facts = {"zipf_constant": c, "zipf_exponent": s, "zipf_scale": scale,
           "zipf_ranks": int(law.size)}
  return pd.Series(law, index=names[:law.size]), facts


def resample_users(pop: population_lib.Population, num_users: int,
                   seed: int = 0) -> population_lib.Population:
  """``num_users`` users drawn with replacement from a several-word ``pop``.

  Each drawn user keeps its whole bag of words and counts.
  """
  if pop.user_offsets is None:
    raise ValueError("resample_users needs a several-word population")
  if num_users < 1:
    raise ValueError(f"num_users must be >= 1, got {num_users}")
  rng = np.random.default_rng(seed)
  drawn = rng.integers(0, pop.num_users, size=num_users)
  starts = pop.user_offsets[drawn]
  lengths = pop.user_offsets[drawn + 1] - starts
  offsets = np.zeros(num_users + 1, dtype=np.int64)
  np.cumsum(lengths, out=offsets[1:])
  entries = (np.repeat(starts - offsets[:-1], lengths)
             + np.arange(offsets[-1], dtype=np.int64))
  return population_lib.Population.from_word_counts(
      pop.vocabulary, offsets, pop.entry_word[entries],
      pop.entry_count[entries], max_length=pop.max_length,
      alphabet=pop.alphabet)


def _multi(num_users, max_length, data_path, seed, cache_dir) -> PaperData:
  if data_path is None:
    raise ValueError("the several-words setting has no published list: it "
                     "needs a Sentiment140 file (data_path, e.g. the "
                     "88k-user sample)")
  loaded = loader.load(loader.DataSpec(
      data_path, dataset="sentiment140", setting="multi", tokenizer="paper",
      max_length=max_length), cache_dir=cache_dir)
  pop = loaded.population
  info = {"source": os.path.basename(data_path),
          "source_users": int(pop.num_users)}
  name = "sentiment140:multi"
  if num_users is not None:
    pop = resample_users(pop, num_users, seed)
    info.update(resampled=int(num_users), seed=int(seed))
    name = f"sentiment140-resampled:{num_users}"
  return PaperData(pop, pop.ground_truth(), name, "multi", info)


def data_options(setting: str, *, max_length: int = PAPER_MAX_LENGTH,
                 num_users: int | None = None, data_path: str | None = None,
                 word_counts_path: str | None = None, seed: int = 0,
                 tail: str = DEFAULT_TAIL) -> dict:
  """A sweep's data options (a record's ``config["data"]``) for a
  paper-calibrated population; :func:`from_options` builds it. ``tail``
  is a key only when not the default, so the default's options (and
  records) are those written before tails existed."""
  options = {"dataset": "paper", "setting": setting,
             "max_length": max_length, "num_users": num_users}
  if check_tail(tail) != DEFAULT_TAIL:
    options["tail"] = tail
  if data_path is not None:
    options["data_path"] = os.path.abspath(data_path)
  if word_counts_path is not None:
    options["word_counts_path"] = os.path.abspath(word_counts_path)
  if setting == "multi" and num_users is not None:
    options["data_seed"] = seed
  return options


def from_options(options, cache_dir: str | None = None) -> PaperData:
  """The population :func:`data_options` describes."""
  return paper_population(
      options["setting"], num_users=options.get("num_users"),
      max_length=options["max_length"], data_path=options.get("data_path"),
      word_counts_path=options.get("word_counts_path"),
      seed=options.get("data_seed", 0), cache_dir=cache_dir,
      tail=options.get("tail", DEFAULT_TAIL))
