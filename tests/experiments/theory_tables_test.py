"""The theory_tables driver: --max_length counts characters, as in every
driver (L + 1 levels with the end symbol). Run in this process."""

import pytest

from experiments import flags as shared_flags
from experiments import theory_tables
from tests.experiments import drivers


@pytest.fixture(autouse=True)
def parsed_flags():
  if not shared_flags.FLAGS.is_parsed():
    shared_flags.FLAGS.mark_as_parsed()


def _rows(*flags):
  code, out, err = drivers.run_in_process(theory_tables, *flags)
  assert code == 0, err
  return out.splitlines()


def test_the_default_agrees_with_min_population_at_11_levels():
  rows = _rows("--populations=1e6", "--frequencies=1e-3", "--epsilons=4")
  assert rows[0] == "Table 1: epsilon = 2.0, L = 10 characters, 11 levels"
  # triehh.calibrate(10**6, 11, epsilon=2, delta=1e-12): theta 15, 11.08.
  assert any(r.split()[:7] == ["1,000,000", "|", "12", "13.8539", "|", "15",
                               "11.0831"] for r in rows), rows
  # triehh.min_population(frequency=1e-3, epsilon=4.0): 1,403,000.
  assert rows[-1].split() == ["1e-03", "|", "1,403,000"]


def test_the_papers_table_1_is_nine_characters():
  rows = _rows("--max_length=9", "--populations=1e4,1e6",
               "--frequencies=1e-2", "--epsilons=4")
  assert rows[0] == "Table 1: epsilon = 2.0, L = 9 characters, 10 levels"
  assert any(r.split()[:5] == ["10,000", "|", "10", "1.8127", "|"]
             for r in rows)
  assert any(r.split()[:5] == ["1,000,000", "|", "12", "15.1058", "|"]
             for r in rows), rows
  assert any(r.strip().startswith("1e-02 |") for r in rows)
