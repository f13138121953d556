"""Writes data/sentiment140_word_counts.csv.gz from a Sentiment140 file.

  python tools/make_word_counts.py --data_path=sentiment140_sample.csv.gz \
      --output=data/sentiment140_word_counts.csv.gz

Aggregated counts only (no text): per word of the paper's tokenizer, the
users writing it, its occurrences, the users whose most frequent word it is
and its occurrences if it is outside the default dictionary
(``triehh.data.paper_populations.word_counts_from_file``). Words written by
fewer than ``--min_users`` users are left out.
"""

from __future__ import annotations

import sys

from absl import app
from absl import flags

from triehh.data import paper_populations

FLAGS = flags.FLAGS
flags.DEFINE_string("data_path", None, "A Sentiment140 file (csv, csv.gz or "
                    "zip).", required=True)
flags.DEFINE_string("output", paper_populations.WORD_COUNTS_PATH,
                    "The table to write (csv or csv.gz).")
flags.DEFINE_integer("min_users", paper_populations.MIN_USERS,
                     "Leave out words written by fewer users.",
                     lower_bound=1)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  table = paper_populations.word_counts_from_file(FLAGS.data_path,
                                                  min_users=FLAGS.min_users)
  # mtime=0 keeps the gzip output byte-identical across runs.
  compression = ({"method": "gzip", "mtime": 0}
                 if FLAGS.output.endswith(".gz") else None)
  table.to_csv(FLAGS.output, index=False, compression=compression)
  print(f"{len(table)} words written to {FLAGS.output}", file=sys.stderr)


if __name__ == "__main__":
  app.run(main)
