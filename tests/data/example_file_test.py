"""The example file shipped in data/ loads through the generic file reader."""

import csv
import os

from triehh import data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "data", "example_users.csv")


def test_example_users_file_in_every_setting():
  with open(EXAMPLE, encoding="utf-8") as f:
    rows = list(csv.DictReader(f))
  users = {r["user"] for r in rows}
  for setting in ("single", "multi"):
    loaded = data.load(data.DataSpec(EXAMPLE, dataset="file", setting=setting))
    assert not any(loaded.report.skipped.values())
    # Users whose every word is shorter than 3 characters have no usable word.
    assert 0 < loaded.population.num_users <= len(users)
    assert loaded.population.num_users >= len(users) - 5
    assert "the" in loaded.truth
